"""Warp size and lane masks: CUDA code that assumes 32-lane warps (PTL101-PTL111).

One analysis per file (`findings.warp_findings`, shared through ctx.fact) finds every
candidate and decides where each is reported, so one mistake is reported once: a warp-named
constant of value 32 defined in this file is reported at its definition (PTL101), not at each
use; a 32 that comes from a literal, from a constant with another name, or from a header is
reported where it is used. The detectors below report each rule's share.

Modules: `analysis` (vocabulary, the per-file Analysis, shared helpers), one module per rule
or tight group of rules (`warp_constants` PTL101, `lane_math` PTL102, `reductions` PTL103,
`masks` PTL104-106, `warpsize_constant` PTL107, `host_warps` PTL108, `spin_waits` PTL109,
`availability` PTL110, `cub_widths` PTL111, `logical_warps` PTL112) and `findings`, the pipeline that runs them."""

from __future__ import annotations

from portlint.rules.cuda_warp.findings import report, warp_findings
from portlint.core.registry import detector

__all__ = ["warp_findings"]


@detector("PTL101", tokens=("32", "5", "31", "0x1f", "0x1F"))
def hardcoded_warp_size_constant(ctx) -> None:
    """`#define WARP_SIZE 32`, `constexpr int kWarp = 32`, template defaults, `tiled_partition<32>`."""
    report(ctx, "PTL101")


@detector("PTL102", tokens=("threadIdx", "lane", "tid", "thread_rank", "blockDim", "warp", "Warp", "WARP"))
def warp_index_arithmetic_literal(ctx) -> None:
    """`tid % 32`, `tid & 31`, `tid >> 5`, `blockDim.x / 32`, `lane == 31`, per-warp shared arrays;
    calls of library helpers that compute a warp index that way (rules/cuda_warp/names.toml)."""
    from portlint.frontends.cuda.name_tables import first_per_line

    report(ctx, "PTL102")
    if "canonical_" in ctx.text:
        for span, name, row in first_per_line(ctx, "PTL102", kinds=("warp-index-helper",)):
            ctx.report(span, expr=name + "()", meaning="a warp index as `threadIdx.x / 32`", suggestion=row.advise(name),
                       confidence="high")


@detector("PTL103", tokens=("shfl", "shuffle", "SHFL", "Shfl"))
def shuffle_reduction_assumes_32_lanes(ctx) -> None:
    """Butterfly and tree reductions whose first offset is 16."""
    report(ctx, "PTL103")


@detector("PTL104", tokens=("_sync", "__syncwarp", "activemask", "__ballot"))
def lane_mask_32_bit_in_sync_intrinsic(ctx) -> None:
    """32-bit masks passed to `__shfl_*_sync`, `__ballot_sync`, `__syncwarp`; `__activemask() == 0xffffffff`."""
    report(ctx, "PTL104")


@detector("PTL105", tokens=("ballot", "activemask", "match_"))
def ballot_result_narrowed_to_32_bit(ctx) -> None:
    """Ballot and active masks stored in 32-bit types or fed to `__popc`/`__ffs`/`__clz`/`__brev`."""
    report(ctx, "PTL105")


@detector("PTL106", tokens=("<<", ">>"))
def lane_mask_shift_overflows_32_bit(ctx) -> None:
    """`1u << lane`, `0xffffffff >> (32 - n)`."""
    report(ctx, "PTL106")


@detector("PTL107", tokens=("warpSize", "__AMDGCN_WAVEFRONT_SIZE"))
def warpsize_used_as_compile_time_constant(ctx) -> None:
    """`warpSize` in array bounds, template arguments, constexpr, static_assert, #if."""
    report(ctx, "PTL107")


@detector("PTL108", tokens=("32", "C10_WARP_SIZE", "warp", "Warp", "WARP"))
def host_assumes_32_thread_warps(ctx) -> None:
    """Host launch math with 32 threads per warp."""
    report(ctx, "PTL108")


@detector("PTL109", tokens=("atomicCAS", "atomicExch"))
def relies_on_independent_thread_scheduling(ctx) -> None:
    """Per-thread spin locks that deadlock without independent thread scheduling (opt-in)."""
    report(ctx, "PTL109")


@detector("PTL110", tokens=("__syncwarp", "__activemask", "__match_", "__reduce_", "__uni_sync", "cooperative_groups", "cg::"))
def warp_builtin_availability(ctx) -> None:
    """CUDA warp builtins HIP lacks or only has from 6.2/7.0; cooperative-groups APIs HIP's
    cooperative groups do not declare (rules/cuda_warp/names.toml)."""
    from portlint.frontends.cuda.name_tables import first_per_line

    if any(t in ctx.text for t in ("__syncwarp", "__activemask", "__match_", "__reduce_", "__uni_sync")):
        report(ctx, "PTL110")
    if "cooperative_groups" not in ctx.text and "cg::" not in ctx.text:
        return
    for span, name, row in first_per_line(ctx, "PTL110", kinds=("cooperative-groups",)):
        ctx.report(span, func=name, state="does not exist in HIP's cooperative groups", suggestion=row.advise(name),
                   targets={"rocm": "error"}, confidence="high")


@detector("PTL111", tokens=("Warp", "CUB_"))
def cub_warp_primitive_width(ctx) -> None:
    """`cub::WarpReduce<T>` default width beside per-32 indexing; `CUB_PTX_WARP_THREADS`."""
    report(ctx, "PTL111")


@detector("PTL112", tokens=("shfl", "SHFL"))
def shuffle_default_width_in_32_lane_group(ctx) -> None:
    """`__shfl_sync(m, v, src)` without a width in code that works in 32-lane groups."""
    report(ctx, "PTL112")
