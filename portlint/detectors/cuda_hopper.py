"""Hopper/Blackwell-only features in CUDA sources (PTL301-PTL309).

Each rule reports the PTX asm statements the PTX table routes to it (portlint/cuda/ptx.py)
and the CUDA/CUTLASS/CuTe names that spell the same feature, one finding per line."""

from __future__ import annotations

import re

from portlint.cuda.ptx import report_rule
from portlint.cuda.symbols import NameRule, words
from portlint.registry import detector

_MFMA = (
    "use MFMA instead: hipBLASLt / Composable Kernel for whole GEMMs, rocWMMA (`rocwmma::mma_sync`) "
    "or `__builtin_amdgcn_mfma_f32_32x32x8f16` / `..._16x16x16f16` (bf16, fp8 variants on gfx942) for hand-written tiles; "
    "the warpgroup tiling and fragment layouts must be re-derived for 64-lane wavefronts."
)

_WGMMA = [
    NameRule(re.compile(r"\bSM90_\d+x\d+x\d+_\w+"), "A CuTe SM90 GMMA atom: " + _MFMA),
    NameRule(re.compile(r"\bGMMA::\w+"), "CuTe's GMMA namespace is the wgmma wrapper: " + _MFMA),
    NameRule(
        re.compile(words("warpgroup_arrive", "warpgroup_commit_batch", "warpgroup_wait", "warpgroup_fence_operand")),
        "wgmma fences have no AMD counterpart; with MFMA the compiler orders the accumulator registers itself.",
    ),
    NameRule(re.compile(r"\bKernelTmaWarpSpecialized\w*|\bMainloopSm90\w*|\bCollectiveMma<\s*MainloopSm90"), "A CUTLASS SM90 (TMA + wgmma) schedule: use hipBLASLt or a Composable Kernel GEMM on AMD."),
]


@detector("PTL301", tokens=("wgmma", "SM90_", "GMMA::", "warpgroup_", "KernelTmaWarpSpecialized", "MainloopSm90"))
def wgmma_warpgroup_mma(ctx) -> None:
    report_rule(ctx, "PTL301", _WGMMA, intro="wgmma (Hopper warpgroup MMA) does not exist on AMD: " + _MFMA)


_TMA_ADVICE = (
    "AMD has no tensor memory accelerator: load tiles to LDS with ordinary (vectorised) loads and "
    "double buffering, `__builtin_amdgcn_global_load_lds` on gfx90a+/gfx942 (ROCm 6+), or a Composable Kernel tile loader."
)
_TMA = [
    NameRule(
        re.compile(
            words(
                "CUtensorMap", "CUtensorMap_st", "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide",
                "cuTensorMapReplaceAddress", "PFN_cuTensorMapEncodeTiled", "PFN_cuTensorMapEncodeTiled_v12000",
            )
        ),
        "There are no tensor maps on AMD (HIPIFY: no HIP counterpart). Pass the plain base pointer and strides to the kernel; " + _TMA_ADVICE,
    ),
    NameRule(re.compile(r"\bCU_TENSOR_MAP_\w+"), "Tensor-map descriptor options have no AMD counterpart; " + _TMA_ADVICE),
    NameRule(re.compile(r"\bSM90_TMA_(?:LOAD|STORE|REDUCE_ADD)\w*|\bSM100_TMA_\w+|\bmake_tma_copy\b|\bmake_tma_atom\b|\bmake_tma_copy_\w+"), "A CuTe TMA copy atom: " + _TMA_ADVICE),
    NameRule(re.compile(r"\btma_store_(?:fence|arrive|wait)\b|\btma_descriptor_\w+"), "CuTe's TMA store synchronisation: " + _TMA_ADVICE),
    NameRule(re.compile(r"\bcp_async_bulk_tensor\w*|\bcp_reduce_async_bulk_tensor\w*|\bcp_async_bulk\w*|\bmemcpy_async_tx\b|\bfence_proxy_async\w*"), "A libcu++ bulk-copy (TMA) wrapper: " + _TMA_ADVICE),
]


@detector("PTL302", tokens=("cp.async.bulk", "cp.reduce.async.bulk", "tensormap", "CUtensorMap", "cuTensorMap", "CU_TENSOR_MAP", "TMA", "tma_", "cp_async_bulk", "memcpy_async_tx", "fence_proxy", "fence.proxy"))
def tma_tensor_map(ctx) -> None:
    report_rule(ctx, "PTL302", _TMA, intro="TMA / bulk async copies do not exist on AMD. " + _TMA_ADVICE)


_BARRIER_ADVICE = (
    "AMD has no transaction-count barriers: synchronise the block with `__syncthreads()` after a plain LDS copy, "
    "or build a counter in LDS with `atomicAdd` and spin on it (expert only); library kernels (CK) do this for you."
)
_MBARRIER = [
    NameRule(re.compile(r"\b__nvvm_mbarrier_\w+"), "clang's SM80 mbarrier builtins: " + _BARRIER_ADVICE),
    NameRule(re.compile(r"\bcuda::barrier\b|\bcuda::device::barrier_(?:arrive_tx|expect_tx)\b|\bbarrier_arrive_tx\b|\bbarrier_expect_tx\b|\bcuda::ptx::mbarrier_\w+|\bmbarrier_(?:init|arrive|try_wait|test_wait|expect_tx)\w*"), "A libcu++ (split) barrier: " + _BARRIER_ADVICE),
    NameRule(re.compile(r"\bClusterTransactionBarrier\b|\bClusterBarrier\b"), "A CUTLASS transaction barrier: " + _BARRIER_ADVICE),
]


@detector("PTL303", tokens=("mbarrier", "cuda::barrier", "barrier_arrive_tx", "barrier_expect_tx", "ClusterTransactionBarrier", "ClusterBarrier"))
def mbarrier_transaction_barrier(ctx) -> None:
    report_rule(ctx, "PTL303", _MBARRIER, intro="mbarrier (transaction barriers) do not exist on AMD. " + _BARRIER_ADVICE)


_CLUSTER_ADVICE = (
    "AMD has no thread-block clusters or distributed shared memory: keep the algorithm within one block, or exchange "
    "through global memory with a grid-wide sync (`hipLaunchCooperativeKernel` + `cooperative_groups::this_grid().sync()`). "
    "HIP's cooperative groups have no `cluster_group`."
)
_CLUSTER = [
    NameRule(
        re.compile(
            words(
                "__cluster_dims__", "cudaLaunchAttributeClusterDimension", "cudaLaunchAttributeClusterSchedulingPolicyPreference",
                "cudaFuncAttributeRequiredClusterWidth", "cudaFuncAttributeRequiredClusterHeight", "cudaFuncAttributeRequiredClusterDepth",
                "cudaFuncAttributeNonPortableClusterSizeAllowed", "cudaFuncAttributeClusterSchedulingPolicyPreference",
                "cudaOccupancyMaxActiveClusters", "cudaOccupancyMaxPotentialClusterSize", "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION",
                "CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED", "this_cluster", "cluster_group", "map_shared_rank",
                "block_rank_in_cluster", "cluster_arrive", "cluster_arrive_relaxed", "cluster_wait", "cluster_sync",
                "__cluster_barrier_arrive", "__cluster_barrier_arrive_relaxed", "__cluster_barrier_wait", "__cluster_map_shared_rank",
                "__cluster_query_shared_rank", "__clusterDim", "__clusterIdx", "__clusterGridDimInClusters", "__clusterRelativeBlockIdx",
                "__clusterRelativeBlockRank", "__clusterSizeInBlocks", "cute::cluster_sync",
            )
        ),
        _CLUSTER_ADVICE,
    ),
]


_CLUSTER_VAR = re.compile(r"\b(?:cluster_group|auto)\s*&?\s*(\w+)\s*=\s*(?:\w+::)*this_cluster\s*\(")
_CLUSTER_METHODS = r"(?:sync|block_rank|block_index|dim_blocks|num_blocks|map_shared_rank|barrier_arrive|barrier_wait|query_shared_rank)"


def _cluster_method_rule(ctx) -> list[NameRule]:
    """`cluster.sync()`, `cluster.block_rank()`: methods of a variable bound to this_cluster()."""
    from portlint.cuda.symbols import code_text

    names = sorted(set(_CLUSTER_VAR.findall(ctx.fact(code_text).code)))
    if not names:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*\.\s*" + _CLUSTER_METHODS + r"\b")
    return [NameRule(pattern, "A cluster_group method. " + _CLUSTER_ADVICE)]


@detector("PTL304", tokens=("cluster", "Cluster", "CLUSTER", "mapa", "getctarank", "st.async", "red.async"))
def thread_block_cluster(ctx) -> None:
    report_rule(ctx, "PTL304", _CLUSTER + _cluster_method_rule(ctx), intro="Cluster PTX has no AMD counterpart. " + _CLUSTER_ADVICE)


_NREG_ADVICE = (
    "AMD allocates registers per kernel, not per warpgroup at run time: remove it and tune occupancy with "
    "`__launch_bounds__(threads, min_blocks)` or `__attribute__((amdgpu_waves_per_eu(min, max)))`."
)
_SETMAXNREG = [
    NameRule(re.compile(words("warpgroup_reg_alloc", "warpgroup_reg_dealloc", "__maxnreg__") + r"|\bcuda::ptx::setmaxnreg_\w+|\bsetmaxnreg_(?:inc|dec)\b"), _NREG_ADVICE),
]


@detector("PTL305", tokens=("setmaxnreg", "warpgroup_reg_", "__maxnreg__"))
def register_reallocation_setmaxnreg(ctx) -> None:
    report_rule(ctx, "PTL305", _SETMAXNREG, intro="setmaxnreg has no AMD counterpart. " + _NREG_ADVICE)


_TCGEN05 = [
    NameRule(re.compile(r"\bSM100_(?!TMA_)(?!U\d+x\d+_(?:LD|ST)SM)\w+|\bUMMA::\w+|\bcuda::ptx::tcgen05_\w+|\btcgen05_\w+|\bTmemAllocator\w*|\bKernel\w*Sm100\w*|\bMainloopSm100\w*"), "Blackwell tensor-core (tcgen05 / UMMA / tensor memory) code: " + _MFMA),
]


@detector("PTL306", tokens=("tcgen05", "SM100_", "UMMA::", "TmemAllocator", "Sm100"))
def tcgen05_tensor_memory(ctx) -> None:
    report_rule(ctx, "PTL306", _TCGEN05, intro="tcgen05 (Blackwell tensor memory and MMA) does not exist on AMD: " + _MFMA)


_FP8_ADVICE = (
    "Pick the FP8 format per AMD target: `__hip_fp8_e4m3_fnuz` / `__hip_fp8_e5m2_fnuz` on MI300X (gfx942, FNUZ: no "
    "negative zero, bias 8, max 240) and `__hip_fp8_e4m3` / `__hip_fp8_e5m2` (OCP) on MI355X (gfx950), from "
    "`<hip/hip_fp8.h>` (ROCm 6.2+); derive the max from the type, not 448; re-quantise weights stored in the other "
    "format (same bits are not the same value). A plain hipify rename maps `__nv_fp8_e4m3` to the FNUZ type."
)
_FP8 = [
    NameRule(
        re.compile(
            r"\b__nv_fp8(?:x2|x4)?_(?:e4m3|e5m2|e8m0|storage_t|interpretation_t)\b|\b__nv_fp8x[24]_storage_t\b|\b__NV_E4M3\b|\b__NV_E5M2\b"
            r"|\b__nv_cvt_\w+|\b__nv_fp4(?:x2|x4)?_e2m1\b|\b__nv_fp4x?\d?_storage_t\b|\b__nv_fp6(?:x2|x4)?_\w+|\b__NV_E2M1\b|\b__NV_E2M3\b|\b__NV_E3M2\b"
        ),
        _FP8_ADVICE,
    ),
    NameRule(re.compile(r"\b(?:c10|at)::Float8_e4m3fn\b(?!uz)|\bat::ScalarType::Float8_e4m3fn\b(?!uz)|\btorch::kFloat8_e4m3fn\b(?!uz)|\bat::kFloat8_e4m3fn\b(?!uz)"),
             "PyTorch's OCP e4m3fn type: on MI300X (gfx942) the hardware format is `c10::Float8_e4m3fnuz`; choose the type under `#ifdef USE_ROCM` "
             "(and at run time by `gcnArchName`), as vLLM's `FP8_TYPE` does."),
]


@detector("PTL307", tokens=("fp8", "fp4", "fp6", "__NV_E", "__nv_cvt_", "Float8_e4m3fn", "e4m3", "e5m2", "e2m1"))
def fp8_fp4_format_mismatch(ctx) -> None:
    report_rule(ctx, "PTL307", _FP8, intro="NVIDIA FP8/FP4 conversion PTX. " + _FP8_ADVICE)


_PDL_ADVICE = (
    "HIP has no programmatic dependent launch: drop the call (kernels on one stream already run in order) "
    "and launch with `hipLaunchKernelGGL` / `<<<>>>` without the PDL attribute."
)
_PDL = [
    NameRule(
        re.compile(
            words(
                "cudaGridDependencySynchronize", "cudaTriggerProgrammaticLaunchCompletion",
                "cudaLaunchAttributeProgrammaticStreamSerialization", "cudaLaunchAttributeProgrammaticEvent",
                "cudaLaunchAttributeLaunchCompletionEvent", "programmaticStreamSerializationAllowed",
                "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION", "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT",
            )
            + r"|\bcuda::ptx::griddepcontrol_\w+"
        ),
        _PDL_ADVICE,
    ),
]


_VENDOR_GUARD = re.compile(r"HIP|ROCM|AMD|MUSA")


@detector("PTL308", tokens=("griddepcontrol", "GridDependency", "Programmatic", "PROGRAMMATIC", "programmatic", "LaunchCompletionEvent"))
def programmatic_dependent_launch(ctx) -> None:
    """PDL; a call an AMD build skips under a guard with no alternative is only a note:
    skipping PDL is harmless."""
    from portlint.cuda.guards import guard_map

    guards = ctx.fact(guard_map)

    def targets(line: int):
        guard = guards.dead_for_amd(line)
        if guard is None or guard.has_alternative:
            return None
        # `#if !defined(GGML_USE_HIP) && ...`: the author dropped PDL for AMD on purpose
        return () if _VENDOR_GUARD.search(guard.condition) else {"rocm": "note"}

    report_rule(ctx, "PTL308", _PDL, intro=_PDL_ADVICE, targets=targets)


_MULTICAST = [
    NameRule(
        re.compile(r"\bcuMulticast\w+|\bCUmulticastObjectProp\w*|\bCU_MULTICAST_\w+|\bcuGreenCtx\w+|\bCUgreenCtx\b|\bcuCtxFromGreenCtx\b"
                   r"|\bcuDevSmResourceSplitByCount\b|\bcuDeviceGetDevResource\b|\bcuDevResourceGenerateDesc\b|\bCU_DEV_RESOURCE_TYPE_SM\b|\bCUdevResource\w*"),
        "No HIP counterpart (HIPIFY: unsupported). For NVLink multicast reductions use RCCL collectives; to partition the GPU "
        "use `hipExtStreamCreateWithCUMask` (CU masking) instead of green contexts.",
    ),
]


@detector("PTL309", tokens=("multimem", "Multicast", "MULTICAST", "GreenCtx", "DevResource", "DEV_RESOURCE", "SmResource"))
def multicast_green_context_nvls(ctx) -> None:
    report_rule(ctx, "PTL309", _MULTICAST, intro="multimem (NVLink SHARP multicast) PTX has no AMD counterpart: use RCCL collectives.")


# every name pattern of the family (PTL205 uses them to tell NVIDIA-only code inside a group)
NAME_RULES = [*_WGMMA, *_TMA, *_MBARRIER, *_CLUSTER, *_SETMAXNREG, *_TCGEN05, *_FP8, *_PDL, *_MULTICAST]
