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
from portlint.core.model import Edit, Fix, Span

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
    declared = declared_32_lane_groups(a)
    tiles = _tile_variables(a) if declared else set()
    shuffles, widthless = 0, []
    for call in nodes_of_types(a.root, ("call_expression",)):
        name = callee_name(call) or ""
        if not (SHUFFLE.search(name) or _WHOLE_WAVE.match(name)):
            continue
        if dead.dead_for_amd(call.start_point[0] + 1) is not None:
            continue  # `#if __CUDA_ARCH__ >= 800 __reduce_max_sync(...)`: not what AMD compiles
        if _WHOLE_WAVE.match(name):
            return False
        if not _stays_in_32(a, call, name, tiles):
            if not (declared and _width_would_keep(a, call, name)):
                return False
            widthless.append(call)  # inside the group once it passes width 32 (PTL112)
        shuffles += 1
    a._logical["widthless"] = widthless
    return shuffles > 0 and (declared is not None or _has_32_lane_ids(a) and _exchanges_see_lane_ids(a))


def _exchanges_see_lane_ids(a: Analysis) -> bool:
    """Does every function that exchanges values compute 32-lane ids itself, call a function
    that does, or is it called by one (a `group_sum` helper of a kernel that splits its threads
    by 32)? A reduction in one kernel says nothing about `tid & 31` in another: the file-wide
    reading made both silent when they sat in unrelated kernels."""
    with_ids: set[int] = set()
    id_texts: list[str] = []
    names_with_ids: set[str] = set()
    for be in _lane_id_splits(a):
        fn = enclosing(be, ("function_definition",))
        if fn is None:
            return True  # ids outside any function (a macro, a member initializer): the file's own
        if fn.start_byte not in with_ids:
            id_texts.append(node_text(fn))
        with_ids.add(fn.start_byte)
        declarator = fn.child_by_field_name("declarator")
        name = _function_name(declarator)
        if name:
            names_with_ids.add(name)
    calls_id_helper = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names_with_ids))) + r")\s*[(<]") if names_with_ids else None
    for call in nodes_of_types(a.root, ("call_expression",)):
        name = callee_name(call) or ""
        if not SHUFFLE.search(name):
            continue
        fn = enclosing(call, ("function_definition",))
        if fn is None or fn.start_byte in with_ids:
            continue
        if calls_id_helper is not None and calls_id_helper.search(node_text(fn)):
            continue
        name = _function_name(fn.child_by_field_name("declarator"))
        called = re.compile(r"\b" + re.escape(name) + r"\s*[(<]") if name else None
        if called is None or not any(called.search(t) for t in id_texts):
            return False
    return True


def _function_name(declarator) -> str:
    """The plain name of a function definition's declarator (`lane_id` of
    `__device__ int lane_id()`, of `T* ns::lane_id(int)`), or ''."""
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator", "function_declarator"):
        inner = declarator.child_by_field_name("declarator")
        if declarator.type == "function_declarator":
            text = node_text(inner) if inner is not None else ""
            return text.split("::")[-1].strip() if re.fullmatch(r"[\w:~]+", text or "") else ""
        declarator = inner
    return ""


_TILE32 = re.compile(r"\b(?:thread_block_tile|tiled_partition)\s*<\s*([A-Za-z_]\w*|\d+)\s*>")
_DIM3_ROWS = re.compile(r"\bdim3\s*(?:[A-Za-z_]\w*\s*)?[({]\s*([A-Za-z_]\w*|\d+)[uU]?\s*,")


def declared_32_lane_groups(a: Analysis) -> str | None:
    """How the file itself says it works in 32-thread groups of its own, or None:
    'tile' for a cooperative-groups tile of 32 (`cg::tiled_partition<32>(block)`,
    `cg::thread_block_tile<32>`), 'rows' for blocks of 32-thread rows (`dim3 block(32, 8)`
    beside device code that reads `threadIdx.y`). Such a group is the code's own unit on every
    vendor; a 64-lane wave holds two of them."""
    if "declared" not in a._logical:
        found = None
        text = a.ctx.text
        if any(_value32(a, m.group(1)) for m in _TILE32.finditer(text)):
            found = "tile"
        elif "threadIdx.y" in text and any(_value32(a, m.group(1)) for m in _DIM3_ROWS.finditer(text)):
            found = "rows"
        a._logical["declared"] = found
    return a._logical["declared"]


def _value32(a: Analysis, arg: str) -> bool:
    return (int(arg) if arg.isdigit() else a.cmap.value(arg)) == 32


def _tile_variables(a: Analysis) -> set[str]:
    """Variables that hold a 32-thread tile: `auto t = cg::tiled_partition<32>(block)`,
    `cg::thread_block_tile<32> t = ...`, a parameter `const cg::thread_block_tile<32>& t`."""
    names = set()
    text = a.ctx.text
    for m in re.finditer(r"\b(?:auto|(?:\w+::)*thread_block_tile\s*<\s*(\w+)\s*>)\s*(?:const\s*)?&?\s*([A-Za-z_]\w*)\s*(=\s*(?:\w+::)*tiled_partition\s*<\s*(\w+)\s*>)?", text):
        size = m.group(4) or m.group(1)
        if size and _value32(a, size) and (m.group(1) or m.group(3)):
            names.add(m.group(2))
    return names


def _width_would_keep(a: Analysis, call, name: str) -> bool:
    """A raw shuffle with the default width (warpSize: 64 on CDNA) that an explicit width of
    32 would keep inside the caller's 32-lane group: `__shfl_sync(m, v, src)` reads lane `src`
    of the whole wave, `__shfl_xor_sync(m, v, x)` with an `x` not known to be below 32 may
    cross into the other half."""
    fn = call.child_by_field_name("function")
    if fn is None or fn.type == "field_expression" or name not in SHFL_SYNC_ARGS:
        return False
    args = call.child_by_field_name("arguments").named_children
    return len(args) == SHFL_SYNC_ARGS[name] - 1


def widthless_shuffles(a: Analysis) -> list:
    """The default-width shuffles of a file of consistent declared 32-lane groups (PTL112)."""
    return a._logical.get("widthless", []) if consistent_32_lane_groups(a) else []


def _lane_id_splits(a: Analysis):
    """The device expressions that split threads into groups of 32 (`tid % 32`, `tid & 31`,
    `tid / 32`, `tid >> 5`), in source order."""
    want = {"%": 32, "&": 31, "/": 32, ">>": 5}
    for be in nodes_of_types(a.root, ("binary_expression",)):
        op = node_text(be.child_by_field_name("operator"))
        if op not in want or not a.is_device(be):
            continue
        v, how = a.value_of(be.child_by_field_name("right"))
        if v == want[op] and how not in ("outside", "local-warp") and a.is_thread(be.child_by_field_name("left"), a.facts_of(be)):
            yield be


def _has_32_lane_ids(a: Analysis) -> bool:
    """Does device code of the file split threads into groups of 32? A butterfly alone says
    nothing about which lane reads its result."""
    return next(_lane_id_splits(a), None) is not None


def _stays_in_32(a: Analysis, call, name: str, tiles: set[str] = frozenset()) -> bool:
    """A shuffle whose source lane is within the caller's 32-lane group (a member shuffle of
    a variable holding a 32-thread tile has the tile's width)."""
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "field_expression":
        obj = strip_parens(fn.child_by_field_name("argument"))
        return obj is not None and node_text(obj) in tiles
    if fn is None or name not in SHFL_SYNC_ARGS:
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


_WIDTH_NOTE = ("This shuffle also needs `width` 32 (PTL112): with a 64-bit mask alone it compiles on ROCm and "
               "reads across the two 32-lane groups of the wave.")


def default_widths(a: Analysis) -> None:
    """PTL112: a shuffle with the default width in a file that works in its own 32-lane
    groups (a cooperative-groups tile of 32, 32-thread rows, or lane ids and exchanges that
    all stay in 32 lanes). The default width is warpSize, 64 on CDNA: `__shfl_sync(m, v, 0)`
    hands lanes 32-63 lane 0's value, the other group's. Passing 32 gives NVIDIA's result on
    both vendors (warpSize is 32 there), so the fix is safe. The mask fix of PTL104 alone
    would turn the compile error into this wrong result: its suggestion says so."""
    calls = widthless_shuffles(a)
    if not calls:
        return
    how = {"tile": "a cooperative-groups tile of 32 threads", "rows": "blocks of 32-thread rows (`dim3(32, ...)`)"}.get(
        declared_32_lane_groups(a) or "", "32-lane groups")
    spans = []
    for call in calls:
        name = callee_name(call)
        args = call.child_by_field_name("arguments")
        last = args.named_children[-1]
        end = a.ctx.node_span(last)
        insert = Span(end.end_line, end.end_col, end.end_line, end.end_col)
        fix = Fix("pass width 32", (Edit(insert, ", 32"),), "safe")
        kind = "lane `" + node_text(args.named_children[-1]) + "` of the whole wave" if "xor" not in name and "up" not in name and "down" not in name \
            else "lanes across the 32-lane boundary"
        a.hit("PTL112", call, fields={"func": name, "groups": how, "reads": kind}, fix=fix, confidence="high",
              suggestion=f"Pass the group width: `{name}({', '.join(node_text(x) for x in args.named_children)}, 32)`. "
                         "On NVIDIA this is the same call (warpSize is 32); on AMD it keeps the exchange inside the caller's 32 lanes.")
        spans.append(a.ctx.node_span(call))
    for h in a.hits:
        if h.rule != "PTL104":
            continue
        where = h.where if isinstance(h.where, Span) else a.ctx.node_span(h.where)
        if any(_inside(where, s) for s in spans):
            h.suggestion = (h.suggestion + "\n" if h.suggestion else "") + _WIDTH_NOTE
            if h.fix is not None and h.fix.applicability == "safe":
                h.fix = Fix(h.fix.description + " (unsafe: the shuffle's width must change with it)", h.fix.edits, "unsafe")


def _inside(inner: Span, outer: Span) -> bool:
    return (outer.start_line, outer.start_col) <= (inner.start_line, inner.start_col) and \
        (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)


# cooperative-groups and cub constructs that work on the hardware warp (or a tile of it)
_WARP_LIBRARY = re.compile(r"\bWarp(?:Reduce|Scan|Exchange|Load|Store)\b|\btiled_partition\b|\bthread_block_tile\b|\bcoalesced_threads\b")
# conversions, not calls of another function: the value passes through them
CASTS = ("static_cast", "reinterpret_cast", "const_cast")


def crosses_32_lanes(a: Analysis, node, unknown_calls: bool = False) -> str | None:
    """Does the code under `node` (and the functions of this file it calls) hold a warp-level
    operation that is not confined to a 32-lane group on wave64: a shuffle with the default
    width or a width/offset beyond 32 lanes, a vote, ballot, match, `__reduce_*_sync`,
    `__activemask` outside a shuffle's mask, `__syncwarp`, a cooperative-groups tile or a cub
    warp primitive? Returns the construct's text (or None). With `unknown_calls`, a call of a
    function the file does not define counts too (its body cannot be seen)."""
    return _crosses(a, node, unknown_calls, set())


def _crosses(a: Analysis, node, unknown_calls: bool, seen: set) -> str | None:
    if node is None:
        return None
    m = _WARP_LIBRARY.search(node_text(node))
    if m:
        return m.group(0)
    dead = a.ctx.fact(guard_map)
    for call in nodes_of_types(node, ("call_expression",)):
        name = callee_name(call) or ""
        if dead.dead_for_amd(call.start_point[0] + 1) is not None:
            continue
        if SHUFFLE.search(name):
            if not (_stays_in_32(a, call, name) or _macro_width_32(a, call, name)):
                return node_text(call)
            continue
        if name == "__activemask" and _is_shuffle_mask(call):
            continue  # the lanes taking part in a shuffle that stays in its group
        if _WHOLE_WAVE.match(name) or name == "__syncwarp":
            return node_text(call)
        if name in CASTS:
            continue
        bodies = _defined_functions(a).get(name)
        if bodies is None:
            if unknown_calls:
                return node_text(call)
            continue
        if name in seen:
            continue
        seen.add(name)
        for body in bodies:
            found = _crosses(a, body, unknown_calls, seen)
            if found:
                return found
    return None


def _macro_width_32(a: Analysis, call, name: str) -> bool:
    """A project's shuffle wrapper that names its width (`SHFL_XOR_SYNC_WIDTH(v, m, 8)`) with a
    last argument that is a power of two of at most 32: it stays in that group."""
    if name in SHFL_SYNC_ARGS or "width" not in name.lower():
        return False
    args = call.child_by_field_name("arguments")
    if args is None or not args.named_children or a.names_reported_const(args.named_children[-1]):
        return False
    width, _ = a.value_of(args.named_children[-1])
    return width is not None and 0 < width <= 32 and width & (width - 1) == 0


def _is_shuffle_mask(call) -> bool:
    p = call.parent
    return p is not None and p.type == "argument_list" and p.named_children[:1] == [call] and \
        p.parent is not None and SHUFFLE.search(callee_name(p.parent) or "") is not None


def _defined_functions(a: Analysis) -> dict:
    """name -> the bodies of the functions this file defines under that name."""
    if "defined_fns" not in a._logical:
        found: dict = {}
        for fn in nodes_of_types(a.root, ("function_definition",)):
            name = _function_name(fn.child_by_field_name("declarator"))
            body = fn.child_by_field_name("body")
            if name and body is not None:
                found.setdefault(name, []).append(body)
        a._logical["defined_fns"] = found
    return a._logical["defined_fns"]
