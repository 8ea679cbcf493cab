"""The file-level pipeline of the wave64 family: every PTL1xx hit of a file, computed once
(`ctx.fact(warp_findings)`), and the reporting of one rule's share.

The passes run in a fixed order because later ones read what earlier ones found: the
warp-named constants reported at their definition (PTL101) are not reported again at each
use, and PTL103's fix and PTL111 depend on whether the file already assumes 32 lanes."""

from __future__ import annotations

from portlint.rules.cuda_warp.analysis import Analysis
from portlint.rules.cuda_warp.availability import builtin_availability
from portlint.rules.cuda_warp.cub_widths import cub_widths
from portlint.rules.cuda_warp.host_warps import host_ceil_divs, host_dim3_products, host_macros, host_one_warp_blocks
from portlint.rules.cuda_warp.lane_math import count_definitions, index_arithmetic
from portlint.rules.cuda_warp.logical_warps import default_widths
from portlint.rules.cuda_warp.masks import masks
from portlint.rules.cuda_warp.reductions import reductions
from portlint.rules.cuda_warp.spin_waits import spin_waits
from portlint.rules.cuda_warp.warp_constants import template_arguments, tiles, warp_constants
from portlint.rules.cuda_warp.warpsize_constant import warpsize_constants
from portlint.core.model import Span


def warp_findings(ctx) -> Analysis:
    """ctx.fact(warp_findings): every PTL1xx hit of the file, computed once."""
    a = Analysis(ctx)
    warp_constants(a)
    template_arguments(a)
    tiles(a)
    index_arithmetic(a)
    count_definitions(a)
    # other 32-lane code left after this pass makes a reduction fix unsafe; a PTL101/PTL102
    # hit whose safe fix the same pass applies does not (the fixed file has none left, so a
    # second --fix would otherwise offer the reduction fix: no convergence)
    lane_hits = any(h.rule in ("PTL101", "PTL102") and not (h.fix is not None and h.fix.applicability == "safe") for h in a.hits)
    reductions(a, lane_hits)
    masks(a)
    default_widths(a)
    builtin_availability(a)
    warpsize_constants(a)
    host_macros(a)
    host_one_warp_blocks(a)
    host_dim3_products(a)
    host_ceil_divs(a)
    spin_waits(a)
    cub_widths(a, lane_hits or any(h.rule == "PTL103" for h in a.hits) or a.block_is_warp())
    # one finding per line: `constexpr int warps = threads / 32;` at namespace scope is a
    # warp-count definition (PTL102), not also host launch math (PTL108)
    lines102 = {_start_line(h.where) for h in a.hits if h.rule == "PTL102"}
    a.hits = [h for h in a.hits if not (h.rule == "PTL108" and _start_line(h.where) in lines102)]
    return a


def _start_line(where) -> int:
    return where.start_line if isinstance(where, Span) else where.start_point[0] + 1


def report(ctx, rule: str) -> None:
    """Report the file's hits of one rule."""
    for h in ctx.fact(warp_findings).hits:
        if h.rule == rule:
            ctx.report(h.where, fix=h.fix, suggestion=h.suggestion, confidence=h.confidence, targets=h.targets,
                       message=h.message, **h.fields)
