"""Hopper/Blackwell-only features in CUDA sources (PTL301-PTL309).

Each rule reports the PTX asm statements the PTX table routes to it (portlint/frontends/ptx.py)
and the CUDA/CUTLASS/CuTe names that spell the same feature, listed in
rules/cuda_hopper/names*.toml (hand-written and derived from public headers), one finding
per line."""

from __future__ import annotations

import re

from portlint.frontends.ptx import report_rule
from portlint.frontends.cuda.symbols import NameRule
from portlint.core.registry import detector


def _advice(key: str) -> str:
    from portlint.frontends.cuda.name_tables import shared_advice

    return shared_advice("cuda_hopper", key)


@detector("PTL301", tokens=("wgmma", "SM90_", "GMMA", "Gmma", "warpgroup_", "WarpSpecialized", "MainloopSm90", "Sm90"))
def wgmma_warpgroup_mma(ctx) -> None:
    report_rule(ctx, "PTL301", intro="wgmma (Hopper warpgroup MMA) does not exist on AMD: " + _advice("mfma"))


@detector("PTL302", tokens=("cp.async.bulk", "cp.reduce.async.bulk", "tensormap", "CUtensorMap", "cuTensorMap", "CU_TENSOR_MAP", "TMA", "tma_", "Tma", "cp_async_bulk", "cp_reduce_async_bulk", "memcpy_async_tx", "fence_proxy", "fence.proxy", "fence_view", "SM90_", "Sm120", "EntryPoint", "GetProcAddress"))
def tma_tensor_map(ctx) -> None:
    report_rule(ctx, "PTL302", intro="TMA / bulk async copies do not exist on AMD. " + _advice("tma"))


@detector("PTL303", tokens=("mbarrier", "cuda::barrier", "barrier_arrive_tx", "barrier_expect_tx", "ClusterTransactionBarrier", "ClusterBarrier", "barrier", "Barrier", "PipelineAsync", "PipelineTransaction"))
def mbarrier_transaction_barrier(ctx) -> None:
    report_rule(ctx, "PTL303", intro="mbarrier (transaction barriers) do not exist on AMD. " + _advice("barrier"))


_CLUSTER_VAR = re.compile(r"\b(?:cluster_group|auto)\s*&?\s*(\w+)\s*=\s*(?:\w+::)*this_cluster\s*\(")
_CLUSTER_METHODS = r"(?:sync|block_rank|block_index|dim_blocks|num_blocks|map_shared_rank|barrier_arrive|barrier_wait|query_shared_rank)"


def _cluster_method_rule(ctx) -> list[NameRule]:
    """`cluster.sync()`, `cluster.block_rank()`: methods of a variable bound to this_cluster()."""
    from portlint.frontends.cuda.symbols import code_text

    names = sorted(set(_CLUSTER_VAR.findall(ctx.fact(code_text).code)))
    if not names:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*\.\s*" + _CLUSTER_METHODS + r"\b")
    return [NameRule(pattern, "A cluster_group method. " + _advice("cluster"))]


@detector("PTL304", tokens=("cluster", "Cluster", "CLUSTER", "map_shared_rank", "elect_one", "ElectOne", "set_block_rank", "store_shared_remote", "mapa", "getctarank", "st.async", "red.async"))
def thread_block_cluster(ctx) -> None:
    report_rule(ctx, "PTL304", intro="Cluster PTX has no AMD counterpart. " + _advice("cluster"), extra=_cluster_method_rule(ctx))


@detector("PTL305", tokens=("setmaxnreg", "warpgroup_reg_", "__maxnreg__"))
def register_reallocation_setmaxnreg(ctx) -> None:
    report_rule(ctx, "PTL305", intro="setmaxnreg has no AMD counterpart. " + _advice("nreg"))


@detector("PTL306", tokens=("tcgen05", "SM100_", "SM103", "UMMA", "umma_", "Umma", "CLC", "utccp", "TMEM", "tmem", "Tmem", "Sm100", "Sm10", "1Sm", "2Sm"))
def tcgen05_tensor_memory(ctx) -> None:
    report_rule(ctx, "PTL306", intro="tcgen05 (Blackwell tensor memory and MMA) does not exist on AMD: " + _advice("mfma"))


@detector("PTL307", tokens=("fp8", "fp4", "fp6", "__NV_E", "__nv_cvt_", "Float8_e4m3fn", "e4m3", "e5m2", "e2m1"))
def fp8_fp4_format_mismatch(ctx) -> None:
    report_rule(ctx, "PTL307", intro="NVIDIA FP8/FP4 conversion PTX. " + _advice("fp8"))


@detector("PTL308", tokens=("griddepcontrol", "GridDependency", "Programmatic", "PROGRAMMATIC", "programmatic", "LaunchCompletionEvent"))
def programmatic_dependent_launch(ctx) -> None:
    """PDL. Where an AMD build skips a PDL call, the engine's guard pass says why: an optional
    hint (rules/optional-hints.toml) where AMD compiles nothing in its place, excluded on
    purpose where the guard names the vendor."""
    report_rule(ctx, "PTL308", intro=_advice("pdl"))


@detector("PTL309", tokens=("multimem", "multicast", "Multicast", "EntryPoint", "GetProcAddress", "MULTICAST", "GreenCtx", "greenCtx", "DevResource", "devResource", "DEV_RESOURCE", "SmResource"))
def multicast_green_context_nvls(ctx) -> None:
    report_rule(ctx, "PTL309", intro="multimem (NVLink SHARP multicast) PTX has no AMD counterpart: use RCCL collectives.")
