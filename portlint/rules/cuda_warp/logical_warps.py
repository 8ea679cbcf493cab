"""Consistent 32-lane logical warps: a file whose warp-level data exchange never leaves a
32-lane group computes each 32-lane half of a 64-lane wavefront as one logical warp.

`lane = tid % 32; warp = tid / 32`, butterflies with XOR offsets 16..1, `shfl_down` trees
from 16, shuffles with an explicit width of 32 and `if (lane == 0) smem[warp] = v`: on wave64
lanes 32-63 form a second logical warp with its own `warp` index and its own slot, so the
result is what NVIDIA computes. Lane math and reduction shapes are then not wrong results
(PTL102/PTL103 stay quiet); the 32-bit masks of such code are still reported (PTL104).

The claim fails as soon as one operation of the file (as an AMD build compiles it) reaches
across the 64 lanes: an index shuffle (`__shfl_sync(m, v, 0)` broadcasts lane 0 of the whole
wave) or any shuffle without a known width or offset below 32, a width named by the file's
own 32-valued warp-size constant (reported as PTL101: the hardware warp, not a chosen group), a vote, ballot, match or
`__reduce_*_sync`, a cooperative-groups tile shuffle, `__lane_id()`, or `warpSize` (a lane id
of 0..63 beside 32-lane groups). A file that never splits its threads into 32-lane ids does
not show that its reductions are read per 32-lane group, and is not covered."""

from __future__ import annotations

import re

from portlint.frontends.cuda.guards import guard_map
from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.analyses.cuda.warp_facts import callee_name, strip_parens
from portlint.rules.cuda_warp.analysis import SHFL_SYNC_ARGS, SHUFFLE, Analysis

# calls that combine or read every lane of the hardware wave
_WHOLE_WAVE = re.compile(r"^__(?:ballot|any|all|uni|match_\w+|reduce_\w+|activemask|lane_id)(?:_sync)?$|^__lane_id$")
_MOVES = ("xor", "down", "up")


def consistent_32_lane_groups(a: Analysis) -> bool:
    """Does every warp-level exchange of the file stay inside 32-lane groups (and is there one)?"""
    if "groups32" not in a._logical:
        a._logical["groups32"] = _decide(a)
    return a._logical["groups32"]


def _decide(a: Analysis) -> bool:
    if re.search(r"\bwarpSize\b|\b__AMDGCN_WAVEFRONT_SIZE\b", a.ctx.text):
        return False
    dead = a.ctx.fact(guard_map)
    shuffles = 0
    for call in nodes_of_types(a.root, ("call_expression",)):
        name = callee_name(call) or ""
        if not (SHUFFLE.search(name) or _WHOLE_WAVE.match(name)):
            continue
        if dead.dead_for_amd(call.start_point[0] + 1) is not None:
            continue  # `#if __CUDA_ARCH__ >= 800 __reduce_max_sync(...)`: not what AMD compiles
        if _WHOLE_WAVE.match(name) or not _stays_in_32(a, call, name):
            return False
        shuffles += 1
    return shuffles > 0 and _has_32_lane_ids(a)


def _has_32_lane_ids(a: Analysis) -> bool:
    """Does device code of the file split threads into groups of 32 (`tid % 32`, `tid & 31`,
    `tid / 32`, `tid >> 5`)? A butterfly alone says nothing about which lane reads its result."""
    want = {"%": 32, "&": 31, "/": 32, ">>": 5}
    for be in nodes_of_types(a.root, ("binary_expression",)):
        op = node_text(be.child_by_field_name("operator"))
        if op not in want or not a.is_device(be):
            continue
        v, how = a.value_of(be.child_by_field_name("right"))
        if v == want[op] and how not in ("outside", "local-warp") and a.is_thread(be.child_by_field_name("left"), a.facts_of(be)):
            return True
    return False


def _stays_in_32(a: Analysis, call, name: str) -> bool:
    """A shuffle whose source lane is within the caller's 32-lane group."""
    fn = call.child_by_field_name("function")
    if fn is None or fn.type == "field_expression" or name not in SHFL_SYNC_ARGS:
        return False
    args = call.child_by_field_name("arguments").named_children
    full = SHFL_SYNC_ARGS[name]
    if len(args) >= full:
        if a.names_reported_const(args[full - 1]):
            return False  # the file's own warp size (PTL101), not a chosen group width
        width, _ = a.value_of(args[full - 1])
        return width is not None and 0 < width <= 32 and width & (width - 1) == 0
    if not any(m in name for m in _MOVES):
        return False  # `__shfl_sync(m, v, src)` without a width reads lane src of the whole wave
    off = args[full - 2] if len(args) >= full - 1 else None
    if off is None:
        return False
    v, _ = a.value_of(off)
    if v is not None:
        return 0 <= v < 32
    return _loop_offset_below_32(a, call, off)


def _loop_offset_below_32(a: Analysis, call, off) -> bool:
    """The offset is the variable of an enclosing loop that halves from at most 16
    (`for (o = 16; o > 0; o >>= 1)`) or doubles while below 32 (`for (o = 1; o < 32; o *= 2)`)."""
    off = strip_parens(off)
    if off is None or off.type != "identifier":
        return False
    var = node_text(off)
    loop = enclosing(call, ("for_statement",))
    while loop is not None:
        init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
        start = None
        for d in nodes_of_types(init, ("init_declarator",)) if init is not None else ():
            if node_text(d.child_by_field_name("declarator")) == var:
                start = d.child_by_field_name("value")
        if start is None and init is not None and init.type == "assignment_expression" and node_text(init.child_by_field_name("left")) == var:
            start = init.child_by_field_name("right")
        if start is not None and update is not None:
            step = re.sub(r"\s+", "", node_text(update))
            v, _ = a.value_of(start)
            if step in (f"{var}/=2", f"{var}>>=1", f"{var}={var}/2", f"{var}={var}>>1"):
                return v is not None and 0 < v <= 16
            if step in (f"{var}*=2", f"{var}<<=1", f"{var}={var}*2", f"{var}={var}<<1", f"{var}+={var}") and cond is not None \
                    and cond.type == "binary_expression" and node_text(cond.child_by_field_name("left")).strip() == var:
                bound, _ = a.value_of(cond.child_by_field_name("right"))
                op = node_text(cond.child_by_field_name("operator"))
                return v is not None and v > 0 and bound is not None and ((op == "<" and bound <= 32) or (op == "<=" and bound <= 16))
            return False
        loop = enclosing(loop, ("for_statement",))
    return False


def chosen_group_size(a: Analysis, how: str) -> bool:
    """Is a 32 whose origin is `how` (Analysis.value_of) the size of the file's logical
    warps? A literal or a constant of another name is; a warp-size constant by name (the
    file's own, reported as PTL101, or a header's) states the hardware warp and is reported
    at each use whatever the exchanges look like."""
    return how not in ("outside", "local-warp") and consistent_32_lane_groups(a)
