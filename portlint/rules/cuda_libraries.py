"""CUDA-only libraries and CUDA features HIP lacks (PTL603-PTL612, PTL614, PTL615).

Library names come from two places: the HIPIFY map (cuDNN, cuBLASLt, cuSPARSELt, cuTENSOR,
CUDA graphs: rows whose owner is one of these rules, see portlint.analyses.cuda.hipify.owner_of) and
name prefixes for libraries HIPIFY has no table for (NVTX, NVML, CUPTI, NVSHMEM, CUTLASS,
libcu++). Everything is matched as identifiers in the syntax tree or as #include paths."""

from __future__ import annotations

import re

from portlint.analyses.cuda.hipify import (
    amd_excluded, api_uses, identifier_uses, in_amd_branch, includes, is_call, leading_qualifiers, load_table, pick_row,
    report, word_regex,
)
from portlint.frontends.cuda.guards import default_off_guard, hip_written
from portlint.frontends.cuda.parse import node_text
from portlint.frontends.cuda.spaces import space_map
from portlint.core.model import Edit, Fix, Span
from portlint.core.registry import detector


def _span(ctx, start: int, end: int) -> Span:
    l1, c1 = ctx.offset_to_pos(start)
    l2, c2 = ctx.offset_to_pos(end)
    return Span(l1, c1, l2, c2)


def _leftmost_namespaces(ctx, names: set[str]):
    """namespace_identifier nodes named in `names` that start a qualified name (`x::...`)."""
    quals = ctx.fact(leading_qualifiers)
    found = [ns for name in names for ns in quals.get(name, ())]
    return sorted(found, key=lambda n: n.start_byte)


def _qualified_tail(ns) -> list[str]:
    """The names after `ns::` in a qualified chain: `cuda::std::atomic` -> ["std", "atomic"]."""
    out = []
    node = ns.parent
    while node is not None and node.type == "qualified_identifier":
        name = node.child_by_field_name("name")
        if name is None:
            break
        if name.type == "qualified_identifier":
            scope = name.child_by_field_name("scope")
            if scope is not None:
                out.append(node_text(scope).split("<")[0])
            node = name
            continue
        out.append(node_text(name).split("<")[0])
        break
    return out


def _rooted(finding, root: str, site: bool = False) -> None:
    """Name the construct a finding stems from (portlint.findings.roots folds the uses of
    one root into one finding for the rules whose file says `fold = "root"`)."""
    if finding is not None:
        finding.root, finding.root_site = root, site


# ---- PTL603 cuDNN -------------------------------------------------------------------------

@detector("PTL603", tokens=("cudnn", "CUDNN"))
def cudnn_to_miopen(ctx) -> None:
    # the root is the library: its `#include` is the root site, every cuDNN name a use
    for path, header in ctx.fact(includes):
        if header == "cudnn.h" or header.startswith(("cudnn_", "cudnn/")):
            _rooted(report(ctx, path, name=header, twin="MIOpen: include <miopen/miopen.h>"), "cuDNN", site=True)
    for use in ctx.fact(api_uses):
        row = pick_row(use, "PTL603")
        if row is None:
            continue
        if row.miopen:
            twin = f"MIOpen twin: `{row.miopen}`"
        else:
            twin = "no MIOpen twin in the table"
        _rooted(report(ctx, _span(ctx, use.start, use.end), name=use.name, twin=twin), "cuDNN")
    for ns in _leftmost_namespaces(ctx, {"cudnn_frontend"}):
        _rooted(report(ctx, ns, name="cudnn_frontend::", twin="graph API: use MIOpen's fusion API, Composable Kernel or framework ops"), "cuDNN")


# ---- PTL604 cuBLASLt and cuBLAS math modes -------------------------------------------------

@detector("PTL604", tokens=("cublasLt", "CUBLASLT", "MATH", "TENSOR_OP", "MathMode"))
def cublaslt_cublas_semantics(ctx) -> None:
    version = load_table().version
    for use in ctx.fact(api_uses):
        row = pick_row(use, "PTL604")
        if row is None:
            continue
        span = _span(ctx, use.start, use.end)
        if row.hip:
            report(
                ctx,
                span,
                message=f"`{use.name}` selects TF32/tensor-op math: `{row.hip}` exists in hipBLAS (HIP {row.hip_added or '?'}+) but AMD GPUs do not compute it the same way",
                targets={"rocm": "warning"},
                fix=Fix(f"rename `{use.name}` to `{row.hip}`", (Edit(span, row.hip),), "safe"),
                suggestion="Check the precision the GEMMs need: on AMD the math mode is ignored or maps to different instructions (llama.cpp turns cublasSetMathMode into a no-op on HIP).",
            )
        else:
            tensor_op = "HIPBLAS_GEMM_DEFAULT (AMD has no tensor-op algorithm choice). " if use.name.startswith("CUBLAS_GEMM_") else ""
            report(
                ctx,
                span,
                message=f"`{use.name}` ({row.library}) has no hipBLASLt/hipBLAS equivalent in {version}",
                targets={"rocm": "error"},
                suggestion=tensor_op + (f"rocBLAS has `{row.roc}`. " if row.roc else "")
                + "Use the hipBLASLt names the table maps (hipblasLtMatmul, HIPBLASLT_MATMUL_DESC_*), plain hipBLAS/rocBLAS GEMMs, or keep this path CUDA-only.",
            )


# ---- PTL605 cuSPARSELt / cuTENSOR ----------------------------------------------------------

_PTL605_HEADERS = {"cusparseLt.h": "hipsparselt/hipsparselt.h", "cutensor.h": "hiptensor/hiptensor.hpp"}
_PTL605_LIBRARY = {"cusparseLt.h": "cuSPARSELt", "cutensor.h": "cuTENSOR"}


@detector("PTL605", tokens=("cusparseLt", "CUSPARSELT", "cutensor", "CUTENSOR"))
def cusparselt_cutensor(ctx) -> None:
    version = load_table().version
    for path, header in ctx.fact(includes):
        hip = _PTL605_HEADERS.get(header)
        if hip:
            text = node_text(path)
            # the root of the library's renamable uses (folded under it, each keeping its fix)
            _rooted(report(
                ctx,
                path,
                message=f"`{header}`: the HIP twin <{hip}> ships only with recent ROCm (hipSPARSELt/hipTENSOR)",
                targets={"rocm": "warning"},
                fix=Fix(f"include <{hip}>", (Edit(ctx.node_span(path), text[0] + hip + text[-1]),), "unsafe"),
            ), f"{_PTL605_LIBRARY[header]} with a HIP twin", site=True)
    for use in ctx.fact(api_uses):
        row = pick_row(use, "PTL605")
        if row is None:
            continue
        span = _span(ctx, use.start, use.end)
        lib = "hipSPARSELt" if row.library == "cuSPARSELt" else "hipTENSOR"
        if row.hip:
            since = f"HIP {row.hip_added}+" if row.hip_added else "recent ROCm"
            _rooted(report(
                ctx,
                span,
                message=f"`{use.name}` ({row.library}) is `{row.hip}` in {lib}, which needs {since}; check the ROCm you deploy",
                targets={"rocm": "warning"},
                fix=Fix(f"rename `{use.name}` to `{row.hip}`", (Edit(span, row.hip),), "unsafe"),
            ), f"{row.library} with a HIP twin")
        else:
            report(
                ctx,
                span,
                message=f"`{use.name}` ({row.library}) has no {lib} equivalent in {version}",
                targets={"rocm": "error"},
                suggestion="Restructure around the operations hipTENSOR provides (single-GPU contraction, reduction, permutation) or keep this path CUDA-only.",
            )


# ---- PTL606 CUTLASS / CuTe -----------------------------------------------------------------

@detector("PTL606", tokens=("cutlass", "cute"))
def cutlass_cute(ctx) -> None:
    # once per file: a CUTLASS kernel header includes dozens of CUTLASS headers
    found = [(path, header) for path, header in ctx.fact(includes) if header.startswith(("cutlass/", "cute/"))]
    found = [(p, h) for p, h in found if not amd_excluded(ctx, p.start_point[0] + 1)]
    if found:
        more = f" and {len(found) - 1} more CUTLASS/CuTe include{'s' if len(found) > 2 else ''}" if len(found) > 1 else ""
        report(ctx, found[0][0], what=f"#include <{found[0][1]}>{more}")
        return
    uses = _leftmost_namespaces(ctx, {"cutlass", "cute"})
    if uses:  # a file that only uses the namespaces (the include is elsewhere): once
        report(ctx, uses[0], what=f"`{node_text(uses[0])}::` (first use in this file)")


# ---- PTL607 Thrust CUDA backend, libcu++ ---------------------------------------------------

_LIBCUDACXX_MEMBERS = {
    "std", "atomic", "atomic_ref", "atomic_flag", "barrier", "pipeline", "memcpy_async",
    "aligned_size_t", "annotated_ptr", "access_property", "thread_scope", "thread_scope_system",
    "thread_scope_device", "thread_scope_block", "thread_scope_thread", "memory_order",
    "memory_order_relaxed", "memory_order_acquire", "memory_order_release", "memory_order_acq_rel",
    "memory_order_seq_cst", "proclaim_return_type", "ceil_div", "stream_ref",
    "latch", "binary_semaphore", "counting_semaphore", "discard_memory", "apply_access_property",
}
_LIBCUDACXX_HEADERS = ("cuda/std/", "cuda/atomic", "cuda/annotated_ptr", "cuda/memory_resource", "cuda/stream_ref",
                       "cuda/latch", "cuda/semaphore", "cuda/functional", "cuda/cmath", "cuda/memory", "cuda/iterator")
_THRUST_CUDA = {"cuda", "cuda_cub", "cuda_category"}
# AMD's port of libcu++ keeps its headers and names (ROCm/libhipcxx: include/cuda/std/...), as a
# separate package a ROCm install does not bring
_LIBHIPCXX = ("Build against libhipcxx, AMD's port of libcu++ (ROCm/libhipcxx, a separate package), which keeps the "
              "`<cuda/std/...>` headers and the `cuda::` names.")
# libcu++'s asynchronous-copy pipeline (`cuda::pipeline`, `cuda::memcpy_async`, ...) is also
# PTL401's, which supersedes PTL607 (rules/cuda_async/PTL401-*.toml): one finding per construct.


@detector("PTL607", tokens=("cuda::", "cuda/", "cuda_cub", "system::cuda", "cuda_category"))
def thrust_cub_libcudacxx(ctx) -> None:
    for path, header in ctx.fact(includes):
        if header.startswith(_LIBCUDACXX_HEADERS):
            report(ctx, path, message=f"<{header}> is libcu++, which a ROCm install does not ship", targets={"rocm": "warning"},
                       suggestion=_LIBHIPCXX + " Or use std:: (<atomic>, <cmath>, ...), HIP's __hip_atomic_* builtins or rocPRIM/hipCUB.")
    for ns in _leftmost_namespaces(ctx, {"cuda", "thrust"}):
        tail = _qualified_tail(ns)
        if node_text(ns) == "thrust":
            # thrust::cuda::par, thrust::cuda_cub::..., thrust::system::cuda::...
            if tail and (tail[0] in _THRUST_CUDA or (len(tail) > 1 and tail[0] == "system" and tail[1] == "cuda")):
                where = ns.parent
                report(ctx, where, message=f"`thrust::{'::'.join(tail[:2] if tail[0] == 'system' else tail[:1])}` names Thrust's CUDA backend: rocThrust's is `thrust::hip`",
                           targets={"rocm": "note"},
                           suggestion="Report the error through the HIP runtime (`hipGetErrorString`) or rocThrust's `thrust::hip` error category."
                           if tail[0] == "cuda_category" else
                           "Write `thrust::hip::par` (rocThrust) or plain `thrust::device` so both backends build.")
            continue
        if tail and tail[0] == "ptx":
            report(ctx, ns.parent, message=f"`cuda::ptx::{tail[1] if len(tail) > 1 else ''}` is libcu++'s inline-PTX wrapper: it does not build for AMD".replace("::`", "`"),
                   targets={"rocm": "error"},
                   suggestion="Each `cuda::ptx::` function is one PTX instruction: write the HIP form (`__lane_id()` for "
                   "`get_sreg_laneid`, `__builtin_amdgcn_*` or plain C++ for the rest), or keep it under `#ifndef __HIP_PLATFORM_AMD__`.")
            continue
        if tail and tail[0] in _LIBCUDACXX_MEMBERS:
            report(ctx, ns.parent, message=f"`cuda::{tail[0]}` is libcu++, which a ROCm install does not ship", targets={"rocm": "warning"},
                       suggestion=_LIBHIPCXX + " Or use std:: (std::atomic, std::atomic_ref), HIP's __hip_atomic_* builtins with a memory scope, or rocPRIM/hipCUB.")


# ---- PTL608 NVTX ---------------------------------------------------------------------------

_NVTX_TO_ROCTX = {
    "nvtxRangePushA": "roctxRangePushA", "nvtxRangePush": "roctxRangePushA", "nvtxRangePop": "roctxRangePop",
    "nvtxMarkA": "roctxMarkA", "nvtxMark": "roctxMarkA", "nvtxRangeStartA": "roctxRangeStartA",
    "nvtxRangeStart": "roctxRangeStartA", "nvtxRangeEnd": "roctxRangeStop",
}
_NVTX_HEADERS = {"nvToolsExt.h", "nvtx3/nvToolsExt.h", "nvtx3/nvtx3.hpp", "nvToolsExtCuda.h", "nvtx3/nvToolsExtCuda.h", "nvToolsExtCudaRt.h", "nvtx3/nvToolsExtCudaRt.h"}
_NVTX_RE = word_regex(("nvtx",))


@detector("PTL608", tokens=("nvtx", "nvToolsExt"))
def nvtx_markers(ctx) -> None:
    def opt_in(node_or_span) -> bool:
        # profiling markers behind an opt-in switch with another branch (`#if defined(X_USE_NVTX)`
        # ... `#else` a no-op): a build with no -D compiles the other branch, the port loses nothing
        line = node_or_span.start_line if isinstance(node_or_span, Span) else node_or_span.start_point[0] + 1
        return default_off_guard(ctx, line) is not None

    for path, header in ctx.fact(includes):
        if header in _NVTX_HEADERS and not opt_in(path):
            text = node_text(path)
            report(ctx, path, name=header, twin="roctracer/roctx.h",
                       fix=Fix("include <roctracer/roctx.h>", (Edit(ctx.node_span(path), text[0] + "roctracer/roctx.h" + text[-1]),), "unsafe"))
    for use in identifier_uses(ctx, _NVTX_RE, lambda w: w[4:5].isupper()):
        if not is_call(use):
            continue
        roctx = _NVTX_TO_ROCTX.get(use.name)
        span = _span(ctx, use.start, use.end)
        if opt_in(span):
            continue
        if roctx:
            report(ctx, span, name=use.name, twin=roctx, fix=Fix(f"rename `{use.name}` to `{roctx}`", (Edit(span, roctx),), "unsafe"))
        else:
            report(ctx, span, name=use.name, twin="roctxRangePushA/roctxRangePop (no domain or attribute API)")
    for ns in _leftmost_namespaces(ctx, {"nvtx3"}):
        if opt_in(ns):
            continue
        report(ctx, ns.parent, name=node_text(ns.parent).split("<")[0].split("(")[0], twin="roctxRangePushA/roctxRangePop in an RAII helper")


# ---- PTL609 NVML / CUPTI -------------------------------------------------------------------

_NVML_RE = word_regex(("nvml", "cupti"))
_NVML_HEADERS = {"nvml.h": "rocm_smi/rocm_smi.h (or amd_smi/amdsmi.h)", "cupti.h": "rocprofiler-sdk"}


@detector("PTL609", tokens=("nvml", "cupti"))
def nvidia_management_and_profiling_tools(ctx) -> None:
    for path, header in ctx.fact(includes):
        if header in _NVML_HEADERS or header.startswith("cupti_"):
            report(ctx, path, name=header, twin=_NVML_HEADERS.get(header, "rocprofiler-sdk"))
    for use in identifier_uses(ctx, _NVML_RE, lambda w: len(w) > 5 and (w[4] if w.startswith("nvml") else w[5:6]).isupper()):
        if is_call(use):
            twin = "rocm_smi (rsmi_*) or amd-smi (amdsmi_*)" if use.name.startswith("nvml") else "rocprofiler-sdk / roctracer"
            report(ctx, _span(ctx, use.start, use.end), name=use.name, twin=twin)


# ---- PTL610 CUDA graph features HIP lacks --------------------------------------------------

@detector("PTL610", tokens=("Graph", "GRAPH", "CaptureInfo_v3", "CaptureToGraph"))
def cuda_graphs(ctx) -> None:
    version = load_table().version
    for use in ctx.fact(api_uses):
        row = pick_row(use, "PTL610")
        if row is not None:
            report(ctx, _span(ctx, use.start, use.end), name=use.name, version=version)


# ---- PTL611 dynamic parallelism ------------------------------------------------------------

_DEVICE_LAUNCH_APIS = {"cudaLaunchDevice", "cudaGetParameterBuffer", "cudaGetParameterBufferV2", "cudaDeviceSynchronize", "cudaLaunchKernel"}


_DEVICE_LAUNCH_RE = word_regex(tuple(_DEVICE_LAUNCH_APIS))


def _launch_calls(ctx):
    """Calls that launch work: `k<<<...>>>(...)` (found from the `<<<` tokens) and the
    device-runtime launch APIs, as (call node, description)."""
    root = ctx.tree.root_node
    data = ctx.data
    out = []
    pos = data.find(b"<<<")
    while pos != -1:
        node = root.descendant_for_byte_range(pos, pos + 3)
        while node is not None and node.type != "kernel_call_syntax":
            node = node.parent
        call = node.parent if node is not None else None
        if call is not None and call.type == "call_expression":
            fn = call.child_by_field_name("function")
            out.append((call, f"kernel launch `{node_text(fn) if fn is not None else '?'}<<<...>>>`"))
        pos = data.find(b"<<<", pos + 3)
    for use in identifier_uses(ctx, _DEVICE_LAUNCH_RE, _DEVICE_LAUNCH_APIS.__contains__):
        if use.in_macro or not is_call(use):
            continue
        call = use.node.parent
        if call is not None and call.type == "qualified_identifier":
            call = call.parent
        out.append((call, f"`{use.name}`"))
    return out


@detector("PTL611", tokens=("<<<", "cudaLaunchDevice", "cudaGetParameterBuffer", "cudaDeviceSynchronize", "cudaLaunchKernel"))
def dynamic_parallelism(ctx) -> None:
    launches = _launch_calls(ctx)
    for call, what in launches:
        if _in_device_code(ctx, call):
            report(ctx, call, what=what)


_QUALIFIER_MACRO = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")


def _in_device_code(ctx, node) -> bool:
    """Inside a __global__/__device__ function. The enclosing function's header decides
    when it spells the qualifiers out; a header with a macro that may hide them asks the
    execution-space analysis."""
    fn = node.parent
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    if fn is None:
        return False
    body = fn.child_by_field_name("body")
    header = ctx.data[fn.start_byte : body.start_byte if body is not None else fn.end_byte].decode("utf-8", "replace")
    if "__global__" in header or "__device__" in header:
        return True
    maybe_hidden = body is None or _QUALIFIER_MACRO.search(header) is not None
    # a `[] __device__ (...)` lambda inside a host function
    maybe_lambda = body is not None and b"__device__" in ctx.data[body.start_byte : node.start_byte]
    if maybe_hidden or maybe_lambda:
        return ctx.fact(space_map).is_device(node)
    return False


# ---- PTL612 __launch_bounds__ second argument ---------------------------------------------

@detector("PTL612", nodes=("launch_bounds",), tokens=("__launch_bounds__",))
def launch_bounds_second_argument(node, ctx) -> None:
    args = [c for c in node.named_children if c.type != "comment"]
    if len(args) < 2:
        return
    max_threads, min_blocks = node_text(args[0]), node_text(args[1])
    if min_blocks.strip() in ("1", "1u", "1U") and len(args) == 2:
        return  # one block per SM / one wave per EU: no constraint under either reading
    if in_amd_branch(ctx, node.start_point[0] + 1) or ctx.path.endswith(".hip") or ctx.fact(hip_written) is not None:
        return  # written for AMD (HIP code: nvcc's build reads HIP's headers): the second argument already means waves per EU
    extra = " and a third (max cluster size), which HIP has no use for" if len(args) > 2 else ""
    report(
        ctx,
        node,
        max_threads=max_threads,
        min_blocks=min_blocks,
        extra=extra,
        suggestion=(
            f"HIP reads the second argument as minimum waves per execution unit. For the same occupancy write "
            f"`__launch_bounds__({max_threads}, ({min_blocks}) * ({max_threads}) / (warpSize * 2))` under "
            "`#ifdef __HIP_PLATFORM_AMD__` (CU mode, CDNA), or drop the second argument."
        ),
    )


# ---- PTL614 surfaces, __threadfence_system -------------------------------------------------

_SURFACE_CALL = re.compile(r"^surf(1D|2D|3D|Cubemap)(Layered)?(read|write)$")
_SURFACE_RE = word_regex(("surf", "__threadfence_system"))


@detector("PTL614", tokens=("surf", "__threadfence_system"))
def texture_surface_and_system_fences(ctx) -> None:
    for use in identifier_uses(ctx, _SURFACE_RE, lambda w: w == "__threadfence_system" or bool(_SURFACE_CALL.match(w))):
        if not is_call(use):
            continue
        span = _span(ctx, use.start, use.end)
        if use.name == "__threadfence_system":
            report(ctx, span, targets={"rocm": "note"},
                       message="`__threadfence_system()` orders writes for the host only on fine-grained (coherent) memory on AMD",
                       suggestion="Allocate host-visible flags with hipHostMalloc(..., hipHostMallocCoherent) or hipExtMallocWithFlags(..., hipDeviceMallocFinegrained).")
        else:
            report(ctx, span, targets={"rocm": "warning"},
                       message=f"surface function `{use.name}`: it compiles under HIP, but Instinct (CDNA) GPUs have no image support, so surface objects cannot be created there",
                       suggestion="Use a plain buffer with computed addresses instead of the surface object, or check hipDeviceAttributeImageSupport and keep a buffer path.")


# ---- PTL615 NVSHMEM ------------------------------------------------------------------------

_NVSHMEM_RE = word_regex(("nvshmem",))


def _rocshmem_name(name: str) -> str:
    base = name.replace("nvshmemx_", "rocshmem_").replace("nvshmem_", "rocshmem_")
    return re.sub(r"_block$", "_wg", re.sub(r"_warp$", "_wave", base))


@detector("PTL615", tokens=("nvshmem",))
def nvshmem(ctx) -> None:
    for path, header in ctx.fact(includes):
        if header in ("nvshmem.h", "nvshmemx.h") or header.startswith(("nvshmem/", "nvshmem_")):
            report(ctx, path, name=header, twin="rocSHMEM: include <rocshmem/rocshmem.hpp>")
    from portlint.frontends.cuda.name_tables import entries_for

    no_twin = {n: row for row in entries_for("PTL615", ("no-twin",)) for n in row.names}
    internal = entries_for("PTL615", ("internal",))
    internal_lines: set[int] = set()
    for use in identifier_uses(ctx, _NVSHMEM_RE, lambda w: w.startswith(("nvshmem_", "nvshmemx_", "nvshmemi_"))):
        span = _span(ctx, use.start, use.end)
        if use.name.startswith("nvshmemi_"):
            # NVSHMEM's internals (IBGDA state, transport tables): any use, once per line
            if internal and span.start_line not in internal_lines:
                internal_lines.add(span.start_line)
                report(ctx, span, name=use.name, twin=internal[0].advise(use.name))
        elif is_call(use):
            row = no_twin.get(use.name)
            twin = (f"no `{_rocshmem_name(use.name)}` in rocSHMEM: {row.advise(use.name)}" if row is not None
                    else f"rocSHMEM's `{_rocshmem_name(use.name)}` (check the per-call semantics)")
            report(ctx, span, name=use.name, twin=twin)
