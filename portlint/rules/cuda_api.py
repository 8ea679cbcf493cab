"""CUDA runtime/driver/library API names and headers against the HIPIFY map (PTL601, PTL602,
PTL613).

PTL601 (opt-in) renames what hipify renames; PTL602 reports names HIP lacks and, because it
is on by default, keeps the count of mechanical renames that the text summary prints;
PTL613 reports headers that have no HIP counterpart."""

from __future__ import annotations

import re

from portlint.frontends.cuda.guards import guard_map
from portlint.frontends.cuda.includes import file_directives
from portlint.frontends.cuda.symbols import code_text
from portlint.analyses.cuda.hipify import amd_excluded, api_uses, includes, leading_qualifiers, load_table, pick_row, report
from portlint.frontends.cuda.parse import node_text
from portlint.core.model import Edit, Fix, Span
from portlint.core.registry import detector
from portlint.core.suffixes import NVCC_SOURCES, suffix_of

# CUDA header -> HIP header (hipify's header table, PyTorch's cuda_to_hip_mappings).
HEADER_RENAMES = {
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_runtime_api.h": "hip/hip_runtime_api.h",
    "cuda.h": "hip/hip_runtime.h",
    "device_launch_parameters.h": "hip/hip_runtime.h",
    "device_functions.h": "hip/device_functions.h",
    "driver_types.h": "hip/driver_types.h",
    "vector_types.h": "hip/hip_vector_types.h",
    "library_types.h": "hip/library_types.h",
    "texture_types.h": "hip/texture_types.h",
    "surface_types.h": "hip/surface_types.h",
    "cuda_texture_types.h": "hip/hip_texture_types.h",
    "cuda_fp16.h": "hip/hip_fp16.h",
    "cuda_bf16.h": "hip/hip_bf16.h",
    "cuComplex.h": "hip/hip_complex.h",
    "cooperative_groups.h": "hip/hip_cooperative_groups.h",
    # hipProfilerStart/Stop are declared in hip_runtime_api.h; hip/hip_profile.h holds only
    # the HIP_SCOPED_MARKER macros
    "cuda_profiler_api.h": "hip/hip_runtime_api.h",
    "cudaProfiler.h": "hip/hip_runtime_api.h",
    # hip/channel_descriptor.h needs the runtime header before it; hip_runtime.h includes it
    "channel_descriptor.h": "hip/hip_runtime.h",
    "math_functions.h": "hip/math_functions.h",
    "nvrtc.h": "hip/hiprtc.h",
    "curand.h": "hiprand/hiprand.h",
    "curand_kernel.h": "hiprand/hiprand_kernel.h",
    "cublas.h": "hipblas/hipblas.h",
    "cublas_v2.h": "hipblas/hipblas.h",
    "cublas_api.h": "hipblas/hipblas.h",
    "cublasLt.h": "hipblaslt/hipblaslt.h",
    "cufft.h": "hipfft/hipfft.h",
    "cufftXt.h": "hipfft/hipfftXt.h",
    "cusparse.h": "hipsparse/hipsparse.h",
    "cusparse_v2.h": "hipsparse/hipsparse.h",
    "cusolverDn.h": "hipsolver/hipsolver.h",
    "cusolverSp.h": "hipsolver/hipsolver.h",
    "cusolverRf.h": "hipsolver/hipsolver.h",
    "cusolver_common.h": "hipsolver/hipsolver.h",
    "nccl.h": "rccl/rccl.h",
    "cub/cub.cuh": "hipcub/hipcub.hpp",
}
# HIP headers newer than some ROCm releases: said in the message.
HEADER_SINCE = {"hip/hip_bf16.h": "ROCm 5.7+; older HIP has hip/hip_bfloat16.h"}

# CUDA headers with no HIP counterpart: header -> closest alternative ("" when none).
CUDA_ONLY_HEADERS = {
    "mma.h": "rocWMMA (`rocwmma/rocwmma.hpp`) or Composable Kernel",
    "cuda_pipeline.h": "plain global->shared copies plus __syncthreads()",
    "cuda_pipeline_primitives.h": "plain global->shared copies plus __syncthreads()",
    "cuda_pipeline_helpers.h": "plain global->shared copies plus __syncthreads()",
    "cuda_awbarrier.h": "__syncthreads() or cooperative-groups barriers",
    "cuda_awbarrier_primitives.h": "__syncthreads() or cooperative-groups barriers",
    "cuda_awbarrier_helpers.h": "__syncthreads() or cooperative-groups barriers",
    "cuda/barrier": "__syncthreads() or cooperative-groups barriers",
    "cuda/pipeline": "plain global->shared copies plus __syncthreads()",
    "cuda/ptx": "HIP intrinsics / __builtin_amdgcn_* (no PTX on AMD)",
    "cuda_fp8.h": "`hip/hip_fp8.h` (ROCm 6.x+; OCP vs FNUZ formats differ by GPU)",
    "cuda_fp6.h": "",
    "cuda_fp4.h": "`hip/hip_fp4.h` (ROCm 7.x)",
    "cooperative_groups/memcpy_async.h": "plain copies plus a group sync",
    "cooperative_groups/scan.h": "hipCUB block/warp scan",
    "cooperative_groups/reduce.h": "hipCUB block/warp reduce",
    "cudaTypedefs.h": "",
    "cudaEGL.h": "",
    "cuda_egl_interop.h": "",
    "cudaVDPAU.h": "",
    "cuda_vdpau_interop.h": "",
    "sm_32_intrinsics.h": "HIP's device functions (`hip/hip_runtime.h`)",
    "sm_60_atomic_functions.h": "HIP's atomics (`hip/hip_runtime.h`)",
    "crt/host_defines.h": "`hip/hip_runtime.h`",
    "math_constants.h": "`hip/hip_math_constants.h` on ROCm 5.3+ (absent from older HIP), or define the constants the file uses",
    "texture_fetch_functions.h": "`hip/hip_runtime.h`, which declares HIP's texture fetch functions (tex1Dfetch, tex2D, ...)",
    "texture_indirect_functions.h": "`hip/hip_runtime.h`, which declares HIP's texture object functions",
    "surface_functions.h": "`hip/hip_runtime.h`, which declares HIP's surface functions",
    "nvfunctional": "a template parameter or a function pointer (HIP has no `nvstd::function`)",
    "cusolverMg.h": "no multi-GPU cuSOLVER in ROCm: distribute the factorisation yourself (rocSOLVER/hipSOLVER per GPU)",
}
# cuRAND's device sub-headers (curand_normal.h, curand_philox4x32_x.h, ...): hipRAND has no
# such files; its device API is all in hiprand/hiprand_kernel.h
CURAND_SUBHEADER_ALTERNATIVE = "`hiprand/hiprand_kernel.h`, which holds all of hipRAND's device generators and distributions"

# Renames whose HIP twin takes other arguments: not mechanical, so the fix is unsafe.
UNSAFE_RENAMES = {
    "cuOccupancyMaxPotentialBlockSize": "HIP's hipModuleOccupancyMaxPotentialBlockSize has no blockSizeToDynamicSMemSize callback parameter: drop the callback (pass the dynamic shared memory size) by hand",
    "cuOccupancyMaxPotentialBlockSizeWithFlags": "HIP's hipModuleOccupancyMaxPotentialBlockSizeWithFlags has no blockSizeToDynamicSMemSize callback parameter: drop the callback (pass the dynamic shared memory size) by hand",
}
# Legacy cuBLAS (cublas.h, no handle: `cublasSscal(n, a, x, incx)`): hipBLAS has only the
# handle API, so a renamed call does not compile.
LEGACY_CUBLAS = "legacy cuBLAS (cublas.h) calls take no handle; hipBLAS has only the cublas_v2-style API with a hipblasHandle_t first argument: port to cublas_v2.h first"


def curand_subheader(header: str) -> bool:
    """cuRAND's device sub-headers, which HIP does not ship (curand.h and curand_kernel.h are renamed)."""
    return header.startswith("curand_") and header.endswith(".h") and header not in HEADER_RENAMES


def _legacy_cublas(ctx) -> bool:
    """ctx.fact(_legacy_cublas): the file includes cublas.h and not cublas_v2.h (the v1 API)."""
    headers = {h for _p, h in ctx.fact(includes)}
    return "cublas.h" in headers and "cublas_v2.h" not in headers

# APIs whose symbol argument hipify wraps in HIP_SYMBOL(), and where that argument is.
SYMBOL_ARG = {
    "cudaMemcpyToSymbol": 0, "cudaMemcpyToSymbolAsync": 0, "cudaMemcpyFromSymbol": 1,
    "cudaMemcpyFromSymbolAsync": 1, "cudaGetSymbolAddress": 1, "cudaGetSymbolSize": 1,
}
# APIs whose kernel argument HIP takes as `const void*`: hipify casts it.
KERNEL_ARG = {
    "cudaFuncSetAttribute": 0, "cudaFuncGetAttributes": 1, "cudaLaunchKernel": 0,
    "cudaLaunchCooperativeKernel": 0, "cudaFuncSetCacheConfig": 0, "cudaFuncSetSharedMemConfig": 0,
}

# Closest alternatives for names HIP lacks (catalog §6 PL602).
ALTERNATIVES = {
    "cudaStreamSetAttribute": "drop the L2 access-policy window on AMD (no persisting-L2 control); keep it under `#ifndef __HIP_PLATFORM_AMD__`",
    "cudaStreamGetAttribute": "drop the L2 access-policy window on AMD (no persisting-L2 control)",
    "cudaStreamAttrValue": "drop the L2 access-policy window on AMD (no persisting-L2 control)",
    "cudaLimitPersistingL2CacheSize": "no persisting-L2 limit on AMD: drop the call",
    "cudaCtxResetPersistingL2Cache": "no persisting-L2 cache on AMD: drop the call",
    "cudaLaunchKernelExC": "hipLaunchKernel / <<<...>>> (launch attributes and clusters have no HIP form)",
    "cudaLaunchKernelEx": "<<<...>>> or hipLaunchKernel (launch attributes and clusters have no HIP form)",
    "cuLaunchKernelEx": "hipModuleLaunchKernel (launch attributes and clusters have no HIP form)",
    "cudaLaunchAttributeClusterDimension": "no thread-block clusters on AMD: launch a plain grid",
    "cudaOccupancyMaxActiveClusters": "no thread-block clusters on AMD: use hipOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxPotentialClusterSize": "no thread-block clusters on AMD",
    "cuFuncSetAttribute": "hipFuncSetAttribute on the runtime side",
    "cuTensorMapEncodeTiled": "no TMA on AMD: load tiles with ordinary (buffer) loads into LDS",
    "cuTensorMapEncodeIm2col": "no TMA on AMD: load tiles with ordinary (buffer) loads into LDS",
    "cudaGetDriverEntryPointByVersion": "hipGetProcAddress (ROCm 6.2+)",
    "cudaGetDriverEntryPoint": "hipGetProcAddress (ROCm 6.2+)",
    "cudaStreamGetId": "keep your own stream ids",
    "cudaEventRecordWithFlags": "hipEventRecord",
    "cudaFuncGetName": "keep the kernel name yourself",
    "cudaInitDevice": "hipSetDevice",
    "cudaMemcpy3DPeer": "hipMemcpy3D after enabling peer access",
    "cuMemcpyPeer": "hipMemcpyPeer",
    "nvrtcGetLTOIR": "hiprtcGetBitcode",
    "nvrtcGetNVVM": "hiprtcGetBitcode",
    "nvrtcGetCUBIN": "hiprtcGetCode",
    "nvrtcGetCUBINSize": "hiprtcGetCodeSize",
}


def _span(ctx, start: int, end: int) -> Span:
    l1, c1 = ctx.offset_to_pos(start)
    l2, c2 = ctx.offset_to_pos(end)
    return Span(l1, c1, l2, c2)


def _dead_for_amd(ctx, line: int) -> bool:
    """Not compiled for AMD, by a guard with a HIP branch beside it or one naming HIP/ROCm."""
    guard = ctx.fact(guard_map).dead_for_amd(line)
    return guard is not None and (guard.has_alternative or amd_excluded(ctx, line))


def _call_args(use):
    """The argument nodes when `use` is the callee of a call expression."""
    node = use.node
    parent = node.parent
    if parent is not None and parent.type == "qualified_identifier":
        node, parent = parent, parent.parent
    if parent is None or parent.type != "call_expression" or parent.child_by_field_name("function") != node:
        return None
    args = parent.child_by_field_name("arguments")
    if args is None:
        return None
    return [c for c in args.named_children if c.type != "comment"]


def _wrap(ctx, arg, before: str, after: str) -> tuple[Edit, Edit]:
    start = ctx.node_span(arg)
    return (
        Edit(Span(start.start_line, start.start_col, start.start_line, start.start_col), before),
        Edit(Span(start.end_line, start.end_col, start.end_line, start.end_col), after),
    )


def rename_edits(ctx, use, hip: str) -> tuple[Edit, ...]:
    """The rename, plus the argument wrapping hipify does for symbol and kernel APIs."""
    edits = [Edit(_span(ctx, use.start, use.end), hip)]
    if use.in_macro:
        return tuple(edits)
    args = _call_args(use)
    if args:
        idx = SYMBOL_ARG.get(use.name)
        if idx is not None and idx < len(args) and not node_text(args[idx]).startswith("HIP_SYMBOL"):
            edits.extend(_wrap(ctx, args[idx], "HIP_SYMBOL(", ")"))
        idx = KERNEL_ARG.get(use.name)
        if idx is not None and idx < len(args):
            text = node_text(args[idx])
            if "cast<" not in text and "void*" not in text.replace(" ", "") and args[idx].type in ("identifier", "qualified_identifier", "template_function", "pointer_expression"):
                edits.extend(_wrap(ctx, args[idx], "reinterpret_cast<const void*>(", ")"))
    return tuple(edits)


def _cub_namespace_uses(ctx) -> list:
    """`cub::` qualifiers (hipify renames the namespace to `hipcub::`)."""
    return ctx.fact(leading_qualifiers).get("cub", [])


# ---- the runtime header nvcc includes implicitly --------------------------------------------

# nvcc includes cuda_runtime.h in every .cu translation unit (and so in the .cuh headers those
# include); hipcc includes no runtime header. These names need it under hipcc (an undeclared
# identifier otherwise); a `<<<...>>>` launch too. `__global__`/`__device__` do not.
_NEEDS_RUNTIME = re.compile(
    r"\b(?:threadIdx|blockIdx|blockDim|gridDim|warpSize|dim3|__syncthreads\w*|__syncwarp|__threadfence\w*"
    r"|atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)\w*|__shfl\w*|__ballot\w*|__any_sync|__all_sync|__activemask"
    r"|__popc\w*|__clz\w*|__ffs\w*|__ldg|__fdividef|__expf|__logf|__sinf|__cosf|__powf|__saturatef|__float2int_\w+"
    r"|__int_as_float|__float_as_int|__uint_as_float|__float_as_uint|__umulhi|__mulhi|__brev|__byte_perm|clock64"
    r"|make_(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]"
    r"|(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4])\b|<<<"
)
# headers that bring HIP's runtime after the renames (or already are it)
_INSERTED = "#include <hip/hip_runtime.h>"
_RUNTIME_HIP = frozenset({"hip/hip_runtime.h", "hipcub/hipcub.hpp", "hiprand/hiprand_kernel.h", "hip/hip_cooperative_groups.h"})


def _brings_runtime(header: str) -> bool:
    """After the renames, the #include brings HIP's runtime header (or the file is HIP or
    PyTorch extension code already, whose headers bring it)."""
    hip = HEADER_RENAMES.get(header) or ("hipcub/hipcub.hpp" if header.startswith("cub/") else header)
    return hip in _RUNTIME_HIP or header.startswith(("hip/", "hipcub/", "torch/", "ATen/", "c10/"))


def _implicit_runtime_use(ctx):
    """(line, column) of the first use of a name the implicit runtime header declares, in a
    .cu/.cuh file that includes no header HIP's runtime comes from; None otherwise."""
    if suffix_of(ctx.path) not in NVCC_SOURCES:
        return None
    if any(_brings_runtime(header) for _path, header in ctx.fact(includes)):
        return None
    code = ctx.fact(code_text).code
    m = _NEEDS_RUNTIME.search(code)
    return ctx.offset_to_pos(len(ctx.text[:m.start()].encode("utf-8", errors="surrogateescape"))) if m else None


def _runtime_insertion(ctx) -> Edit:
    at = _insertion_line(ctx)
    return Edit(Span(at, 1, at, 1), "#include <hip/hip_runtime.h>\n")


def _needs_inserted_runtime(ctx) -> bool:
    """A .cu/.cuh file that includes no header HIP's runtime comes from and uses a CUDA API
    name or a name of the runtime header nvcc includes implicitly (ctx.fact)."""
    if suffix_of(ctx.path) not in NVCC_SOURCES:
        return False
    if any(_brings_runtime(header) for _path, header in ctx.fact(includes)):
        return False
    return _implicit_runtime_use(ctx) is not None or any(pick_row(use, "PTL601") is not None for use in ctx.fact(api_uses))


def _insertion_line(ctx) -> int:
    """Where the runtime include goes: before the file's first #include outside any #if group
    (after a `#pragma once` or license comment), else line 1."""
    depth = 0
    for d in ctx.fact(file_directives):
        if d.kind in ("if", "ifdef", "ifndef"):
            depth += 1
        elif d.kind == "endif":
            depth = max(0, depth - 1)
        elif d.kind == "include" and depth == 0:
            return d.first
    return 1


def _report_implicit_runtime(ctx) -> None:
    """The file uses only names of the implicit runtime header (no CUDA API name whose rename
    could carry the insertion): report the first such use, with the insertion as its fix."""
    where = _implicit_runtime_use(ctx)
    if where is None:
        return
    line, col = where
    name = re.match(r"\w+|<<<", ctx.line_text(line)[col - 1:])
    report(
        ctx,
        Span(line, col, line, col + (len(name.group(0)) if name else 1)),
        name="cuda_runtime.h",
        hip="hip/hip_runtime.h",
        detail="nvcc includes it implicitly in every .cu file, hipcc does not: the fix adds the #include",
        fix=Fix(f"add `{_INSERTED}` (nvcc's implicit runtime header)", (_runtime_insertion(ctx),), "safe"),
        in_version_gates=True,
    )


# ---- PTL601 -------------------------------------------------------------------------------

@detector("PTL601")
def cuda_api_with_hip_equivalent(ctx) -> None:
    """Every CUDA name, header and `cub::` qualifier that hipify renames, with the rename. In a
    .cu file that relies on the runtime header nvcc includes implicitly, the first rename also
    inserts `#include <hip/hip_runtime.h>` (or a finding of its own does, when no rename can)."""
    insert = _needs_inserted_runtime(ctx)
    for use in ctx.fact(api_uses):
        row = pick_row(use, "PTL601")
        if row is None:
            continue
        extra = f"; deprecated in HIP {row.hip_deprecated}" if row.hip_deprecated else ""
        edits = rename_edits(ctx, use, row.hip)
        what = f"rename `{use.name}` to `{row.hip}`"
        unsafe = UNSAFE_RENAMES.get(use.name)
        if unsafe is None and row.library == "cuBLAS" and use.name.startswith("cublas") and ctx.fact(_legacy_cublas):
            unsafe = LEGACY_CUBLAS
        if unsafe is not None:
            report(ctx, _span(ctx, use.start, use.end), name=use.name, hip=row.hip,
                   detail=f"{row.library}; not a mechanical rename", suggestion=unsafe[0].upper() + unsafe[1:] + ".",
                   fix=Fix(what, edits, "unsafe"), in_version_gates=True)
            continue
        if insert and not amd_excluded(ctx, ctx.offset_to_pos(use.start)[0], True):
            edits += (_runtime_insertion(ctx),)
            what += f" and add `{_INSERTED}` (nvcc includes its runtime header implicitly, hipcc does not)"
            insert = False
        report(
            ctx,
            _span(ctx, use.start, use.end),
            name=use.name,
            hip=row.hip,
            detail=f"{row.library}" + (f", HIP {row.hip_added}+" if row.hip_added else "") + extra,
            fix=Fix(what, edits, "safe"),
            in_version_gates=True,
        )
    if insert:
        _report_implicit_runtime(ctx)
    for path, header in ctx.fact(includes):
        hip = HEADER_RENAMES.get(header)
        if hip is None and header.startswith("cub/"):
            hip = "hipcub/hipcub.hpp"
        if hip is None:
            continue
        since = HEADER_SINCE.get(hip)
        text = node_text(path)
        new = text[0] + hip + text[-1]
        legacy = header == "cublas.h" and ctx.fact(_legacy_cublas)
        report(
            ctx,
            path,
            name=header,
            hip=hip,
            detail="header" + (f"; {since}" if since else "") + ("; the legacy API, not a mechanical rename" if legacy else ""),
            fix=Fix(f"include <{hip}>", (Edit(ctx.node_span(path), new),), "unsafe" if legacy else "safe"),
            suggestion=(LEGACY_CUBLAS[0].upper() + LEGACY_CUBLAS[1:] + ".") if legacy else None,
            in_version_gates=True,
        )
    for ns in _cub_namespace_uses(ctx):
        report(ctx, ns, name="cub::", hip="hipcub::", detail="CUB namespace",
                   fix=Fix("rename the namespace to `hipcub`", (Edit(ctx.node_span(ns), "hipcub"),), "safe"),
               in_version_gates=True)


# ---- PTL602 -------------------------------------------------------------------------------

def _count_mechanical(ctx) -> None:
    """Count the uses PTL601 would list, leaving out code an AMD build does not compile."""
    if b"#if" in ctx.data:
        def live(line: int) -> bool:
            # as PTL601 lists them: a CUDA version gate's group counts as compiled (renamed so
            # the code is ready when the gate is fixed)
            guard = ctx.fact(guard_map).dead_for_amd(line)
            if guard is not None and guard.version_gate:
                return True
            return not _dead_for_amd(ctx, line)
    else:  # no conditional code: everything is compiled
        def live(line: int) -> bool:
            return True

    n = sum(1 for use in ctx.fact(api_uses) if pick_row(use, "PTL601") is not None and live(ctx.offset_to_pos(use.start)[0]))
    n += sum(1 for path, header in ctx.fact(includes)
             if (header in HEADER_RENAMES or header.startswith("cub/")) and live(path.start_point[0] + 1))
    n += sum(1 for ns in _cub_namespace_uses(ctx) if live(ns.start_point[0] + 1))
    if _needs_inserted_runtime(ctx) and _implicit_runtime_use(ctx) is not None and not any(
            pick_row(use, "PTL601") is not None and use.name not in UNSAFE_RENAMES
            and not amd_excluded(ctx, ctx.offset_to_pos(use.start)[0], True) for use in ctx.fact(api_uses)):
        n += 1  # the runtime header's insertion, listed as a finding of its own (no rename carries it)
    if n:
        ctx.count("mechanical-ports", n)


@detector("PTL602")
def cuda_api_without_hip_equivalent(ctx) -> None:
    """CUDA names the HIPIFY table gives no HIP twin; also counts the mechanical renames."""
    _count_mechanical(ctx)
    version = load_table().version
    for use in ctx.fact(api_uses):
        row = pick_row(use, "PTL602")
        if row is None:
            continue
        alt = ALTERNATIVES.get(use.name)
        if not alt and row.roc:
            alt = f"`{row.roc}` in the ROC library (rocBLAS/rocSPARSE/rocSOLVER/rocRAND/rocFFT)"
        report(
            ctx,
            _span(ctx, use.start, use.end),
            name=use.name,
            library=row.library,
            version=version,
            suggestion=(f"Closest alternative: {alt}." if alt else "No HIP counterpart: keep this path under `#ifndef __HIP_PLATFORM_AMD__` with a HIP branch beside it.")
            + f" Verdict from {version}; newer HIP releases may have added it.",
        )


# ---- PTL613 -------------------------------------------------------------------------------

@detector("PTL613", nodes=("preproc_include",), tokens=("include",))
def cuda_only_headers(node, ctx) -> None:
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return
    header = node_text(path)[1:-1].strip()
    if header in CUDA_ONLY_HEADERS:
        alt = CUDA_ONLY_HEADERS[header]
    elif curand_subheader(header):
        alt = CURAND_SUBHEADER_ALTERNATIVE
    else:
        return
    report(
        ctx,
        path,
        header=header,
        suggestion=f"Closest alternative: {alt}." if alt else "No HIP counterpart: include it only in the CUDA build (`#ifndef __HIP_PLATFORM_AMD__`).",
    )
