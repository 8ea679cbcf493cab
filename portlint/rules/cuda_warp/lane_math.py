"""PTL102: lane and warp index arithmetic for 32-lane warps — `tid % 32`, `tid & 31`, `tid >> 5`,
`blockDim.x / 32`, `lane == 31`, warp-strided loops, per-warp shared arrays and warp-count
definitions. Host expressions found on the way go to PTL108 (host_warps)."""

from __future__ import annotations

import re

from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.analyses.cuda.warp_facts import BALLOT_CALLS, DATA_NAMES, LANE_NAMES, callee_name, is_thread_builtin, strip_parens
from portlint.rules.cuda_warp.analysis import (
    CONST_CONTEXT_PARENTS, MASK_FUNCS, SHFL_SYNC_ARGS, SHUFFLE, THREAD_COUNT_NAME, WARP_COUNT_NAME, WARP_SIZE_NAME, Analysis, clean, define_span, origin_note,
)
from portlint.rules.cuda_warp.host_warps import _NOT_A_WARP_UNIT, host_arith
from portlint.rules.cuda_warp.logical_warps import CASTS, chosen_group_size, crosses_32_lanes
from portlint.core.model import Edit, Fix


# names that say "lane" or "warp": what a 32 computed from a thread index is stored in when
# it is a lane or warp id (a tile row/column or a half-block index is stored under other names)
_ID_NAME = re.compile(r"(?i)warp|lane|wave|^wid$|^w_?id$|^laneid$")


_COMPARISONS = ("<", ">", "<=", ">=", "==", "!=")
_ARG_EXPRESSIONS = ("parenthesized_expression", "cast_expression", "binary_expression", "unary_expression", "conditional_expression")


def _warp_use(a: Analysis, node, name: str) -> str | None:
    """What makes variable `name` (defined at `node`) a lane or warp value by what it does in
    its function, whatever it is called: it is passed to a shuffle, vote, ballot or `*_sync`
    intrinsic; it is a shift count (`1u << lane`, a lane mask); it is the whole index of a
    one-dimensional `__shared__` array (`partial[w]`: one slot per warp); or it is compared
    with a lane id (`lane < nw`). None when no use says so (a data coordinate: `row = tid / 32`
    read only as `x[row * n + col]`)."""
    fn = a.function_of(node)
    if fn is None:
        return None
    # a data coordinate by name (`row`, `col`, `i0`) counts as lane math only when it reaches
    # a warp intrinsic: `1u << col` is a column bitmask, `smem[row]` one slot per data row
    # (a single letter says nothing: `w`, `k`)
    data = len(name) > 1 and DATA_NAMES.search(name) is not None
    shared = _shared_1d_arrays(a)
    facts = None
    for ident in nodes_of_types(fn, ("identifier",)):
        if node_text(ident) != name or ident.start_byte <= node.end_byte and ident.end_byte >= node.start_byte:
            continue
        up = ident.parent  # inside an argument of a warp intrinsic (`__shfl_sync(m, v, src + 1)`)
        while up is not None and up.type in _ARG_EXPRESSIONS:
            up = up.parent
        if up is not None and up.type == "argument_list" and up.parent is not None and up.parent.type == "call_expression":
            callee = callee_name(up.parent) or ""
            if SHUFFLE.search(callee) or callee in MASK_FUNCS or callee in BALLOT_CALLS:
                return f"it is passed to `{callee}`"
        child, p = ident, ident.parent
        while p is not None and p.type in ("parenthesized_expression", "cast_expression"):
            child, p = p, p.parent
        if p is None:
            continue
        if data:
            continue
        if p.type == "binary_expression":
            op = node_text(p.child_by_field_name("operator"))
            if op in ("<<", ">>") and child == p.child_by_field_name("right"):
                return f"it is a shift count (`{node_text(p)}`): a lane mask"
            if op in _COMPARISONS:
                other = p.child_by_field_name("right" if child == p.child_by_field_name("left") else "left")
                facts = facts or a.facts_of(node)
                o = strip_parens(other)
                if o is not None and (a.is_lane_expr(o, facts) or (o.type == "identifier" and LANE_NAMES.match(node_text(o)))):
                    return f"it is compared with a lane id (`{node_text(p)}`)"
        if p.type == "subscript_argument_list" and p.named_child_count == 1:
            sub = p.parent
            arr = strip_parens(sub.child_by_field_name("argument")) if sub is not None else None
            if arr is not None and arr.type == "identifier" and node_text(arr) in shared and (
                    sub.parent is None or sub.parent.type != "subscript_expression"):
                return f"it indexes the per-warp `__shared__` array `{node_text(arr)}`"
        if p.type == "subscript_expression" and child == p.child_by_field_name("index"):
            arr = strip_parens(p.child_by_field_name("argument"))
            if arr is not None and arr.type == "identifier" and node_text(arr) in shared and (
                    p.parent is None or p.parent.type != "subscript_expression"):
                return f"it indexes the per-warp `__shared__` array `{node_text(arr)}`"
    return None


def _shared_1d_arrays(a: Analysis) -> set[str]:
    """Names of the file's one-dimensional `__shared__` arrays (`__shared__ float partial[32]`);
    a two-dimensional tile (`tile[32][33]`) holds data, not one slot per warp."""
    return {name for name, (_, rank) in _shared_declarations(a).items() if rank == 1}


def _assigned_name(node) -> tuple[str | None, bool]:
    """The variable an expression (possibly inside more arithmetic) is stored in, and whether
    the expression is nested in more arithmetic (`a_sh_rd = s * ((tid % 32) % 16)`) rather
    than the whole value (`row = tid / 32`)."""
    p, nested = node.parent, False
    while p is not None and p.type in ("parenthesized_expression", "cast_expression", "binary_expression"):
        if p.type == "binary_expression":
            if node_text(p.child_by_field_name("operator")) in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return None, False
            nested = True
        p = p.parent
    if p is None:
        return None, nested
    if p.type == "init_declarator":
        d = p.child_by_field_name("declarator")
        return (node_text(d) if d is not None else None), nested
    if p.type == "assignment_expression":
        d = p.child_by_field_name("left")
        return (node_text(d) if d is not None else None), nested
    if p.type == "field_declaration":  # a default member initializer: `int lane = threadIdx.x % 32;`
        d = p.child_by_field_name("declarator")
        return (node_text(d) if d is not None else None), nested
    return None, nested


def _data_split(a: Analysis, be, right, how: str) -> bool:
    """`row = tid / 32; col = tid % 32`: a 32-wide split of the data, not a lane or warp id.
    The split is read from the name the value is stored in; it does not apply when the
    divisor is a warp-size constant by name (`li = tx % kWarpSize`), nor to lane math nested
    in a longer index expression stored under a name that is not a data coordinate
    (`a_sh_rd = stride * ((threadIdx.x % 32) % 16)`, an MMA fragment layout)."""
    target, nested = _assigned_name(be)
    if not target or _ID_NAME.search(target) or _warp_use(a, be, target):
        return False
    if how == "local-warp" or _warp_named(right):
        return False
    if nested and not DATA_NAMES.search(target):
        return False
    if not nested and node_text(be.child_by_field_name("operator")) in ("/", ">>") and _index_broadcast(a, be):
        return False  # each 32-thread row exchanges values by lane index: the row is a warp
    return True


def _index_broadcast(a: Analysis, node):
    """An index shuffle without a width in the function around `node` (`__shfl_sync(m, v, i)`,
    a project's `SHFL_SYNC(m, v, i)`): the 32 threads of a data row that read each other by
    lane index are a warp to the hardware, and on wave64 the read spans two rows."""
    fn = a.function_of(node)
    if fn is None:
        return None
    for call in nodes_of_types(fn, ("call_expression",)):
        name = callee_name(call) or ""
        fnode = call.child_by_field_name("function")
        if not SHUFFLE.search(name) or re.search(r"(?i)xor|up|down|bfly", name) or fnode is None or fnode.type == "field_expression":
            continue
        args = call.child_by_field_name("arguments")
        n = len(args.named_children) if args is not None else 0
        if name in SHFL_SYNC_ARGS and n < SHFL_SYNC_ARGS[name] or name not in SHFL_SYNC_ARGS and n == 3:
            return call
    return None


def _use_note(a: Analysis, be) -> str | None:
    """Why a value stored under a name that does not say lane or warp is one (`w`, `nw`)."""
    target, _ = _assigned_name(be)
    if not target or _ID_NAME.search(target):
        return None
    why = _warp_use(a, be, target)
    return f"`{target}` is lane or warp math by what it does: {why}." if why else None


def _row_broadcast_note(a: Analysis, be) -> str | None:
    """Why a data row of 32 threads (`row = tid >> 5`) is reported: its lanes read each other
    by index through a shuffle with the default width."""
    target, nested = _assigned_name(be)
    if not target or _ID_NAME.search(target) or nested:
        return None
    call = _index_broadcast(a, be)
    if call is None:
        return None
    return (f"Each 32 threads of `{target}` read each other by lane index (`{node_text(call)}`, line "
            f"{call.start_point[0] + 1}); on wave64 that shuffle's default width is 64, so the upper half-wave reads "
            "the other row. Pass width 32 to the shuffle to keep 32-thread rows, or make the rows wave-sized "
            "together with their lane ids.")


def _warp_named(node) -> bool:
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "call_expression":
        node = node.child_by_field_name("function")
    return node is not None and node.type in ("identifier", "qualified_identifier") and \
        WARP_SIZE_NAME.match(node_text(node).split("::")[-1].strip()) is not None


def index_arithmetic(a: Analysis) -> None:
    last_lane: list = []  # (hit, lane operand) of `lane == 31`
    _index_arithmetic(a, last_lane)
    _strides_and_shared(a)
    _rows_keep_together(a)
    _last_lane_fixes(a, last_lane)


def _rows_keep_together(a: Analysis) -> None:
    """In a function whose 32-thread data rows exchange values by lane index (an unsafe row
    fix), the lane ids and strides of the same rows cannot change alone: `lane = tid & 63`
    beside `row = tid >> 5` gives two threads each column. Their fixes become unsafe too."""
    rows = {a.function_of(h.where).start_byte for h in a.hits if h.rule == "PTL102" and h.fix is not None
            and "per 32-thread row" in h.fix.description and hasattr(h.where, "start_byte") and a.function_of(h.where) is not None}
    if not rows:
        return
    for h in a.hits:
        if h.rule != "PTL102" or h.fix is None or h.fix.applicability != "safe" or not hasattr(h.where, "start_byte"):
            continue
        fn = a.function_of(h.where)
        if fn is not None and fn.start_byte in rows:
            h.fix = Fix(h.fix.description + " (unsafe: the 32-thread rows of this function change with it)", h.fix.edits, "unsafe")


def _definitions(x) -> list | None:
    """The values assigned to identifier `x` in its function (None: a parameter or a name
    defined outside, whose value the fix cannot see)."""
    fn = enclosing(x, ("function_definition",))
    if fn is None:
        return None
    return _assigned_values(fn, node_text(x)) or None


def _assigned_values(fn, name: str) -> list:
    """The values `name` is initialised with or assigned in function `fn`, in source order."""
    values = []
    for d in nodes_of_types(fn, ("init_declarator", "assignment_expression")):
        left = d.child_by_field_name("declarator" if d.type == "init_declarator" else "left")
        if left is not None and node_text(left).strip() == name:
            value = d.child_by_field_name("value" if d.type == "init_declarator" else "right")
            if value is not None:
                values.append(value)
    return values


def _last_lane_fixes(a: Analysis, last_lane: list) -> None:
    """`lane == 31` -> `lane == (warpSize - 1)` is safe only when `lane` itself counts lanes
    of the whole wave after the same pass: its definition reads warpSize, or holds a
    `% 32` / `& 31` whose safe fix turns it into one. A lane of a logical 32-thread row (or a
    parameter) keeps counting to 31, so the rewritten test is never true on wave64: unsafe."""
    pending = {id(h) for h, _ in last_lane}
    fixed = {(h.where.start_byte, h.where.end_byte) for h in a.hits
             if h.rule == "PTL102" and h.fix is not None and h.fix.applicability == "safe" and hasattr(h.where, "start_byte")
             and id(h) not in pending}

    def wave_wide(value) -> bool:
        if "warpSize" in node_text(value):
            return True
        return any((n.start_byte, n.end_byte) in fixed for n in nodes_of_types(value, ("binary_expression",))) or \
            (value.start_byte, value.end_byte) in fixed

    for hit, x in last_lane:
        xs = strip_parens(x)
        if xs is None or hit.fix is None:
            continue
        if xs.type == "identifier":
            values = _definitions(xs)
            safe = values is not None and all(wave_wide(v) for v in values)
        else:
            safe = wave_wide(xs)
        if not safe:
            hit.fix = Fix(hit.fix.description + " (unsafe: the lane may count a 32-thread row, not the wave)", hit.fix.edits, "unsafe")
            hit.suggestion = ("On wave64 the last lane is warpSize - 1 = 63, but this lane value may stop at 31 (a parameter, "
                              "or a 32-thread row of the data): change its definition to `% warpSize` as well, or keep 31 "
                              "where each 32-thread row is its own group.")


def _index_arithmetic(a: Analysis, last_lane: list) -> None:
    for be in nodes_of_types(a.root, ("binary_expression",)):
        op_node = be.child_by_field_name("operator")
        if op_node is None:
            continue
        op = node_text(op_node)
        if op not in ("/", "%", "&", ">>", "*", "==", "!=", "<<"):
            continue
        if not a.is_device(be) and not _member_thread_initializer(be):
            if _device_template_default(a, be):
                _template_default_count(a, be, op)
            else:
                host_arith(a, be, op)
            continue
        left, right = be.child_by_field_name("left"), be.child_by_field_name("right")
        # the function's facts are built only for an operand with the warp value (most
        # binary expressions of a file have none, and building them is a walk of the body)
        if op in ("==", "!="):
            for x, y in ((left, right), (right, left)):
                v, how = a.value_of(y)
                if v == 31 and how != "local-warp" and not chosen_group_size(a, how) and not _of_logical_split(a, x) and \
                        (a.is_lane_expr(x, a.facts_of(be)) or LANE_NAMES.match(node_text(strip_parens(x)) or "")):
                    a.hit("PTL102", be, fields={"expr": node_text(be), "meaning": "the last lane of a 32-lane warp"},
                          fix=a.replace(y, "(warpSize - 1)", "compare with warpSize - 1"), confidence="medium")
                    last_lane.append((a.hits[-1], x))
            continue
        if op == "*":
            for x, y in ((left, right), (right, left)):
                v, how = a.value_of(y)
                xs = strip_parens(x)
                if v == 32 and how != "local-warp" and not chosen_group_size(a, how) and xs is not None and xs.type == "identifier" and node_text(xs) in a.facts_of(be).warp \
                        and _ID_NAME.search(node_text(xs)) and not _of_logical_split(a, xs):
                    a.hit("PTL102", be, fields={"expr": node_text(be), "meaning": "the first thread of a 32-lane warp"},
                          fix=a.replace(y, "warpSize", "use warpSize") if how == "literal" else None, confidence="medium")
            continue
        if op == "<<":
            continue
        v, how = a.value_of(right)
        if how == "local-warp" and not a.names_reported_const(right):
            continue  # a logical warp: the constant is the group size
        want = {"/": 32, "%": 32, "&": 31, ">>": 5}[op]
        if v != want:
            continue
        if _data_split(a, be, right, how):
            continue  # `row = tid / 32; col = tid % 32; ip = tid / 32`: a 32-wide data split
        lstrip = strip_parens(left)
        is_blockdim = lstrip is not None and lstrip.type == "field_expression" and node_text(lstrip.child_by_field_name("argument")) == "blockDim"
        if op in ("/", ">>") and is_blockdim:
            meaning = "the number of 32-lane warps per block"
        elif a.is_thread(left, a.facts_of(be)):
            meaning = {"/": "a warp id for 32-lane warps", ">>": "a warp id for 32-lane warps", "%": "a lane id for 32-lane warps", "&": "a lane id for 32-lane warps"}[op]
        else:
            continue
        if a.logical32(be) or chosen_group_size(a, how):
            continue  # a group of 32 lanes chosen by the code, right on each half of a 64-lane wave
        if op in ("/", ">>") and how not in ("outside", "local-warp") and not _warp_named(right) and wave_wide_use(a, be) is None:
            _logical_splits(a).add((be.start_byte, be.end_byte))
            continue  # a logical 32-thread work group (its id or count): it feeds no warp-level operation
        if in_wave64_arm(be):
            continue  # `warp_size == 32 ? ... : tid / (BN / 2)`: written for the 64-lane wave
        new = {"/": "warpSize", "%": "warpSize", "&": "(warpSize - 1)", ">>": "warpSize"}[op]
        fix = None
        if how == "literal":
            if op == ">>":
                fix = Fix("divide by warpSize", (Edit(a.ctx.node_span(op_node), "/"), Edit(a.ctx.node_span(right), "warpSize")), "safe")
            else:
                fix = a.replace(right, new, f"use {new}")
        if fix is not None and in_const_context(be):
            fix = Fix(fix.description + " (display only: a constant expression is needed here)", fix.edits, "display-only")
        elif fix is not None and _member_thread_initializer(be):
            fix = Fix(fix.description + " (unsafe: the class may lay its data out per 32 lanes)", fix.edits, "unsafe")
        note = origin_note(a, right, how) or _use_note(a, be)
        row_note = None if note else _row_broadcast_note(a, be)
        if row_note and fix is not None:
            fix = Fix(fix.description + " (unsafe: the data layout is per 32-thread row)", fix.edits, "unsafe")
        a.hit("PTL102", be, fields={"expr": node_text(be), "meaning": meaning}, fix=fix,
              confidence="medium", suggestion=note or row_note)


def _member_thread_initializer(be) -> bool:
    """`struct WarpTensor { int lane = threadIdx.x % 32; };`: a default member initializer
    that reads `threadIdx` runs in device code (the only place threadIdx exists), whatever
    the space map says of the class body."""
    decl = enclosing(be, ("field_declaration", "function_definition", "compound_statement"))
    return decl is not None and decl.type == "field_declaration" and is_thread_builtin(be.child_by_field_name("left"))


def _device_template_default(a: Analysis, be) -> bool:
    """Is `be` in the template parameter list of a kernel or device function
    (`template <int kThreads, int kWarps = kThreads / 32> __global__ void k()`)? Its value is
    a constant of device code, not host launch math."""
    plist = enclosing(be, ("template_parameter_list",))
    tmpl = plist.parent if plist is not None else None
    if tmpl is None or tmpl.type != "template_declaration":
        return False
    fn = next((c for c in tmpl.named_children if c.type == "function_definition"), None)
    body = fn.child_by_field_name("body") if fn is not None else None
    return body is not None and a.is_device(body)


def _template_default_count(a: Analysis, be, op: str) -> None:
    """`int kWarps = kThreads / 32` as the default of a device template's parameter: a count
    of 32-lane warps fixed where the template is declared (PTL102, not PTL108's host math)."""
    left, right = be.child_by_field_name("left"), be.child_by_field_name("right")
    v, how = a.value_of(right)
    if not ((op == "/" and v == 32) or (op == ">>" and v == 5)) or how == "local-warp" or chosen_group_size(a, how):
        return
    rs = strip_parens(right)
    if rs is not None and rs.type in ("identifier", "qualified_identifier") and _NOT_A_WARP_UNIT.search(node_text(rs)):
        return  # `kThreads / kTileElems`: a count of 32-element tiles
    ls = strip_parens(left)
    if ls is None or ls.type not in ("identifier", "qualified_identifier") or not THREAD_COUNT_NAME.search(node_text(ls)):
        return
    param = enclosing(be, ("optional_parameter_declaration",))
    pname = param.child_by_field_name("declarator") if param is not None else None
    if pname is not None and (WARP_COUNT_NAME.match(node_text(pname)) or PER_LANE_NAME.search(node_text(pname))):
        return  # a warp-count name: count_definitions reports it at the same place
    a.hit("PTL102", be, fields={"expr": node_text(be), "meaning": "a number of 32-lane warps (a template default)"},
          confidence="medium", suggestion="Divide by the wave size of the target: a per-target constant (`__GFX9__` -> 64) "
                                          "where a constant expression is needed, or pass the count from the host.")


_WAVE_SIZE_TEST = re.compile(r"(?i)warp|wave")


def in_wave64_arm(node) -> bool:
    """Is `node` in the arm of a `?:` or `if` that runs when a wave-size value is 64
    (`warp_size == 32 ? a : b` -> b, `warp_size == 64 ? a : b` -> a, and `!=` the other way)?"""
    child, cur = node, node.parent
    while cur is not None and cur.type not in ("function_definition", "translation_unit"):
        if cur.type in ("conditional_expression", "if_statement"):
            cond = strip_parens(cur.child_by_field_name("condition"))
            if cond is not None and cond.type == "condition_clause":
                cond = strip_parens(cond.child_by_field_name("value") or cond.named_children[-1])
            arm = _wave64_arm(cond)
            if arm is not None and child == cur.child_by_field_name(arm):
                return True
        child, cur = cur, cur.parent
    return False


def _wave64_arm(cond) -> str | None:
    """'consequence' or 'alternative': the arm a wave size of 64 takes under `cond`."""
    if cond is None or cond.type != "binary_expression":
        return None
    op = node_text(cond.child_by_field_name("operator"))
    if op not in ("==", "!="):
        return None
    for x, y in ((cond.child_by_field_name("left"), cond.child_by_field_name("right")),
                 (cond.child_by_field_name("right"), cond.child_by_field_name("left"))):
        xs = strip_parens(x)
        name = node_text(xs.child_by_field_name("function") if xs is not None and xs.type == "call_expression" else xs) if xs is not None else ""
        ys = strip_parens(y)
        if not _WAVE_SIZE_TEST.search(name or "") or ys is None or ys.type != "number_literal":
            continue
        size = node_text(ys).rstrip("uUlL")
        if size not in ("32", "64"):
            return None
        takes_consequence = (size == "64") == (op == "==")
        return "consequence" if takes_consequence else "alternative"
    return None


def in_const_context(node) -> bool:
    cur = node.parent
    while cur is not None and cur.type not in ("compound_statement", "translation_unit"):
        if cur.type in CONST_CONTEXT_PARENTS:
            return True
        cur = cur.parent
    return False


def _strides_and_shared(a: Analysis) -> None:
    # `for (int i = lane; i < n; i += 32)`: a warp-strided loop
    for loop in nodes_of_types(a.root, ("for_statement",)):
        if not a.is_device(loop):
            continue
        init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
        if init is None or update is None or update.type != "assignment_expression" or node_text(update.child_by_field_name("operator")) != "+=":
            continue
        facts = a.facts_of(loop)
        inits = [d.child_by_field_name("value") for d in nodes_of_types(init, ("init_declarator",))] or (
            [init.child_by_field_name("right")] if init.type == "assignment_expression" else [])
        if not any(v is not None and a.is_lane_expr(v, facts) for v in inits):
            continue
        if any(v is not None and _of_logical_split(a, v) for v in inits):
            continue  # the lanes of a logical 32-thread group step by the group
        step = update.child_by_field_name("right")
        v, how = a.value_of(step)
        if v == 32 and how != "local-warp" and not chosen_group_size(a, how):
            a.hit("PTL102", step, fields={"expr": node_text(update), "meaning": "a stride of one 32-lane warp"},
                  fix=a.replace(step, "warpSize", "stride by warpSize") if how == "literal" else None, confidence="medium")
    # `__shared__ T partial[BLOCK / 32]`: one slot per 32-lane warp
    for arr in nodes_of_types(a.root, ("array_declarator",)):
        decl = enclosing(arr, ("declaration",))
        if decl is None or "__shared__" not in {node_text(c) for c in decl.children}:
            continue
        size = strip_parens(arr.child_by_field_name("size"))
        if size is None or size.type != "binary_expression":
            continue
        op = node_text(size.child_by_field_name("operator"))
        v, how = a.value_of(size.child_by_field_name("right"))
        if how == "local-warp" or not ((op == "/" and v == 32) or (op == ">>" and v == 5)) or a.logical32(arr) or chosen_group_size(a, how):
            continue
        a.hit("PTL102", size, fields={"expr": node_text(size), "meaning": "one shared-memory slot per 32-lane warp"},
              targets={"rocm": "warning"}, confidence="medium",
              suggestion="Sized per 32-lane warp this is an upper bound on wave64 (half the slots stay unused): keep the "
                         "allocation, but index it with `threadIdx.x / warpSize` and loop over `blockDim.x / warpSize` "
                         "warps, or size it per target with the `__GFX9__` selector.")


PER_LANE_NAME = re.compile(r"(?i)per_?lane|per_?warp_?thread|elems?_?per_?lane")


def count_definitions(a: Analysis) -> None:
    """`#define WARPS (NUM_THREADS / 32)`, `constexpr int kNumWarps = kThreads / 32;`,
    `constexpr int kDimsPerLane = HEAD_DIM / 32;`: counts of 32-lane warps (or of values per
    lane of one) fixed at definition. In a file with no warp-level primitive and no lane or
    warp-id math such a count only tiles work in 32-thread groups (through shared memory),
    which a 64-lane wave runs unchanged."""
    if not a.uses_warp_primitives() and not any(h.rule == "PTL102" for h in a.hits):
        return
    for name, defs in a.cmap.local.items():
        counts = WARP_COUNT_NAME.match(name) is not None
        per_lane = PER_LANE_NAME.search(name) is not None
        if not (counts or per_lane):
            continue
        for c in defs:
            if c.node is None:
                continue
            text = clean(node_text(c.node))
            m = re.fullmatch(r"\(?\s*([A-Za-z_][\w:]*|\d+)\s*(/|>>)\s*(\d+)\s*\)?", text)
            if not m or (m.group(2) == "/" and m.group(3) != "32") or (m.group(2) == ">>" and m.group(3) != "5"):
                continue
            meaning = "a number of 32-lane warps" if counts else "a count per lane of a 32-lane warp"
            where = define_span(a.ctx, c) if c.kind == "define" else c.decl
            a.hit("PTL102", where, fields={"expr": f"{name} = {text}", "meaning": meaning}, confidence="medium",
                  suggestion="Divide by the wave size of the target: `warpSize` at run time, or a per-target constant "
                             "(`__GFX9__` -> 64) where a constant expression is needed.")


# ---- what a lane / warp value feeds ------------------------------------------------------

_ARITH = ("+", "-", "*", "/", "%", "&", "|", "^", ">>", "<<")
_PURE_CALLS = ("min", "max", "std::min", "std::max", "abs", "__mul24", "__umul24", "umin", "umax")


def wave_wide_use(a: Analysis, be) -> str | None:
    """What makes the 32-lane value `be` (`tid / 32`, `tid % 32`, `blockDim.x / 32`) matter to a
    64-lane wave, following it through the local variables it is stored in; None when it only
    splits the block into logical 32-thread work groups, which run unchanged on wave64: its
    uses address memory (`x[w * n + lane]`, `p + tok * stride`), index shared storage that no
    cross-group warp operation writes, or test conditions of code whose warp operations stay
    inside 32 lanes (shuffles of width <= 32 or offsets below 32).

    Reported (the reason is returned): the value reaches a shuffle, vote, ballot, `*_sync` or
    mask intrinsic that is not confined to 32 lanes, a shift count (a lane mask), a per-warp
    `__shared__` slot written with the result of a warp-level operation (or of a call whose
    body is not in the file), a condition in a function that has such an operation, or it
    escapes where the analysis cannot follow: an argument of another function, a template
    argument, a return value, a class member."""
    fn = a.function_of(be)
    if fn is None:
        return "it is not inside a function"
    layout = _fragment_layout(a, fn)
    if layout:
        return layout
    pointers = _pointer_names(fn)
    done: set[str] = set()
    todo: list = [be]
    control = None
    while todo:
        start = todo.pop()
        if isinstance(start, _Name):
            name = start.name
            starts = [i for i in nodes_of_types(fn, ("identifier",)) if node_text(i) == name and not _is_declarator(i)]
        else:
            starts = [start]
        for s in starts:
            kind, what = _consumer(a, s, pointers)
            if kind == "follow":
                if what not in done:
                    done.add(what)
                    todo.append(_Name(what))
            elif kind == "control":
                control = control or what
            elif kind == "report":
                return what
    if control is not None:
        found = crosses_32_lanes(a, fn)
        if found:
            return f"it decides which threads run `{_short(found)}` ({control})"
    return None


# tensor-core fragments (PTX `mma`/`ldmatrix`, WMMA, CuTe and CUTLASS layouts): which elements
# a thread holds is fixed by its lane in the hardware warp
_MMA_FILE = re.compile(r"\bldmatrix\b|\bmma\.sync\b|\bwgmma\b|\bwmma::|\bmma_sync\b|[<\"](?:cute|cutlass)/|<mma\.h>")


def _fragment_layout(a: Analysis, fn) -> str | None:
    """Is the value's function laid out for tensor-core fragments: the file holds MMA or
    ldmatrix code or builds on CuTe/CUTLASS, or the function splits a lane into quads
    (`lane / 4`, `lane % 4`: the group and thread-in-group of an MMA fragment)? Then the
    32-lane ids are the hardware warp's, whatever the local uses look like."""
    if "mma_file" not in a._logical:
        a._logical["mma_file"] = _MMA_FILE.search(a.ctx.text) is not None
    if a._logical["mma_file"]:
        return "the file works with tensor-core fragments, whose layout is per hardware warp"
    facts = a.facts_of(fn)
    for q in nodes_of_types(fn, ("binary_expression",)):
        op = node_text(q.child_by_field_name("operator"))
        if op not in ("/", "%", ">>", "&"):
            continue
        v, _ = a.value_of(q.child_by_field_name("right"))
        if v != {"/": 4, "%": 4, ">>": 2, "&": 3}[op]:
            continue
        left = strip_parens(q.child_by_field_name("left"))
        if left is not None and (a.is_lane_expr(left, facts) or left.type == "identifier" and
                                 (node_text(left) in facts.lane or LANE_NAMES.match(node_text(left)) or "lane" in node_text(left).lower()
                                  or node_text(left) in _lane_like(a, fn))):
            return f"its lanes are split into quads (`{_short(node_text(q))}`): a tensor-core fragment layout"
    return None


def _lane_like(a: Analysis, fn) -> set[str]:
    """Variables of `fn` defined as a literal 32-lane split (`th_id = threadIdx.x % 32`)."""
    names = set()
    for d in nodes_of_types(fn, ("init_declarator",)):
        v, left = strip_parens(d.child_by_field_name("value")), d.child_by_field_name("declarator")
        if v is not None and left is not None and left.type == "identifier" and v.type == "binary_expression" \
                and a.is_lane_expr(v, a.facts_of(fn)):
            names.add(node_text(left))
    return names


class _Name:
    """A local variable to follow (its uses are found by name in the function)."""
    type = "identifier"

    def __init__(self, name: str):
        self.name = name


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _is_declarator(ident) -> bool:
    p = ident.parent
    return p is not None and p.type in ("init_declarator", "parameter_declaration", "declaration", "optional_parameter_declaration") and \
        p.child_by_field_name("declarator") == ident


def _pointer_names(fn) -> set[str]:
    """Variables of the function declared as pointers or arrays (parameters and locals)."""
    names = set()
    for d in nodes_of_types(fn, ("pointer_declarator", "array_declarator")):
        inner = d.child_by_field_name("declarator")
        while inner is not None and inner.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
            inner = inner.child_by_field_name("declarator") if inner.type != "reference_declarator" else (inner.named_children[0] if inner.named_children else None)
        if inner is not None and inner.type == "identifier":
            names.add(node_text(inner))
    return names


def _consumer(a: Analysis, node, pointers: set[str]) -> tuple[str, str | None]:
    """Where one use of the value goes: ('follow', name) a local variable it is stored in,
    ('control', text) a condition, ('report', why) a wave-wide or unknown use, ('data', None)
    memory addressing or a stored data value."""
    child, p = node, node.parent
    address = False
    while p is not None:
        t = p.type
        if t in ("parenthesized_expression", "cast_expression", "comma_expression"):
            pass
        elif t == "binary_expression":
            op = node_text(p.child_by_field_name("operator"))
            if op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return "control", node_text(p)
            if op == "<<" and child == p.child_by_field_name("right"):
                return "report", f"it is a shift count (`{_short(node_text(p))}`): a lane mask"
            if op in ("+", "-"):
                other = p.child_by_field_name("right" if child == p.child_by_field_name("left") else "left")
                if any(node_text(i) in pointers for i in nodes_of_types(other, ("identifier",))):
                    address = True
        elif t == "unary_expression":
            if node_text(p.child_by_field_name("operator")) == "!":
                return "control", node_text(p)
        elif t == "conditional_expression":
            if child == p.child_by_field_name("condition"):
                return "control", node_text(p)
        elif t in ("condition_clause", "if_statement", "while_statement", "do_statement", "switch_statement"):
            return "control", node_text(child)
        elif t == "for_statement":
            return ("control", node_text(child)) if child == p.child_by_field_name("condition") else ("data", None)
        elif t == "subscript_argument_list" or (t == "subscript_expression" and child == p.child_by_field_name("index")):
            sub = p.parent if t == "subscript_argument_list" else p
            return _subscript_use(a, sub)
        elif t == "subscript_expression" or t == "pointer_expression" or t == "field_expression":
            return "data", None  # the value is an address being read or written
        elif t == "argument_list":
            call = p.parent
            if call is None or call.type != "call_expression":
                return "report", f"it is passed on (`{_short(node_text(p))}`)"
            name = callee_name(call) or ""
            fname = node_text(call.child_by_field_name("function")).split("<", 1)[0].strip()
            if SHUFFLE.search(name) or name in MASK_FUNCS or name in BALLOT_CALLS or name == "__syncwarp":
                if SHUFFLE.search(name) and crosses_32_lanes(a, call) is None:
                    return "data", None  # an exchange inside a 32-lane group
                return "report", f"it is passed to `{name}`"
            if name in CASTS or fname in _PURE_CALLS or name in _PURE_CALLS:
                child, p = call, call.parent
                continue
            if address:
                return "data", None  # an address handed to a load or store
            return "report", f"it is passed to `{name or node_text(call.child_by_field_name('function'))}`"
        elif t == "init_declarator":
            if child != p.child_by_field_name("value"):
                return "data", None
            d = p.child_by_field_name("declarator")
            if address or d is None or d.type != "identifier":
                return "data", None  # a pointer (or array) initialised with an address
            return "follow", node_text(d)
        elif t == "assignment_expression":
            if child == p.child_by_field_name("left"):
                return "data", None
            left = strip_parens(p.child_by_field_name("left"))
            if left is not None and left.type == "identifier":
                return ("data", None) if address or node_text(left) in pointers else ("follow", node_text(left))
            if left is not None and left.type == "field_expression":
                return "report", f"it is stored in `{_short(node_text(left))}`"
            return "data", None  # stored to memory: `out[i] = w`
        elif t in ("expression_statement", "update_expression"):
            return "data", None
        elif t in ("template_argument_list", "return_statement", "field_declaration", "initializer_list", "lambda_capture_specifier"):
            return "report", f"it escapes (`{_short(node_text(p))}`)"
        else:
            return "report", f"it is used in `{_short(node_text(p))}`"
        child, p = p, p.parent
    return "data", None


def _subscript_use(a: Analysis, sub) -> tuple[str, str | None]:
    """The value is (part of) an index: of memory (data), or of a `__shared__` array that a
    warp-level result is written to (one slot per hardware warp)."""
    arr = strip_parens(sub.child_by_field_name("argument")) if sub is not None else None
    while arr is not None and arr.type == "subscript_expression":
        arr = strip_parens(arr.child_by_field_name("argument"))
    shared = _shared_arrays(a)
    if arr is None or arr.type != "identifier" or node_text(arr) not in shared:
        return "data", None
    if _WARP_STORAGE.search(shared[node_text(arr)]):
        return "report", f"it picks the warp primitive's storage `{_short(node_text(sub))}`"
    outer = sub
    while outer.parent is not None and outer.parent.type in ("subscript_expression", "parenthesized_expression"):
        outer = outer.parent
    p = outer.parent
    if p is None or p.type != "assignment_expression" or p.child_by_field_name("left") != outer:
        return "data", None  # read back: the slots are read by whoever wrote them
    value = p.child_by_field_name("right")
    found = _written_crosses(a, value)
    if found:
        return "report", f"it indexes the per-warp `__shared__` array `{node_text(arr)}` written with `{_short(found)}`"
    return "data", None


def _written_crosses(a: Analysis, value) -> str | None:
    """Is a value stored to shared memory the result of a warp-level operation that is not
    confined to 32 lanes (directly, through the local variables it is computed from, or from a
    call the file cannot see into)?"""
    fn = a.function_of(value)
    seen: set[str] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        found = crosses_32_lanes(a, v, unknown_calls=True)
        if found:
            return found
        for ident in nodes_of_types(v, ("identifier",)):
            name = node_text(ident)
            if name in seen or fn is None:
                continue
            seen.add(name)
            todo.extend(_assigned_values(fn, name))
    return None


_WARP_STORAGE = re.compile(r"TempStorage|\bWarp(?:Reduce|Scan|Exchange|Load|Store)\b")


def _shared_arrays(a: Analysis) -> dict[str, str]:
    """Every `__shared__` array of the file (any rank): name -> the text of its declaration."""
    return {name: text for name, (text, _) in _shared_declarations(a).items()}


def _shared_declarations(a: Analysis) -> dict[str, tuple[str, int]]:
    """Every `__shared__` declaration of the file: name -> (the text of its declaration, its
    rank: 0 for a scalar), read once per file."""
    if "shared_decls" not in a._logical:
        found: dict[str, tuple[str, int]] = {}
        if "__shared__" in a.ctx.text:
            for decl in nodes_of_types(a.root, ("declaration",)):
                if "__shared__" not in {node_text(c) for c in decl.children}:
                    continue
                for d in decl.children_by_field_name("declarator"):
                    d = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                    rank = 0
                    while d is not None and d.type == "array_declarator":
                        d, rank = d.child_by_field_name("declarator"), rank + 1
                    if d is not None and d.type == "identifier":
                        found[node_text(d)] = (node_text(decl), rank)
        a._logical["shared_decls"] = found
    return a._logical["shared_decls"]


def _logical_splits(a: Analysis) -> set:
    """(start, end) of the 32-lane splits found to be logical work groups (wave_wide_use)."""
    return a._logical.setdefault("logical_splits", set())


def _of_logical_split(a: Analysis, x) -> bool:
    """Is `x` a lane variable every definition of which is a split into logical 32-thread
    groups (quiet by what it feeds)? Its `== 31` and its loop stride of 32 are the group's too."""
    xs = strip_parens(x)
    splits = _logical_splits(a)
    if xs is not None and (xs.start_byte, xs.end_byte) in splits:
        return True
    if xs is None or xs.type != "identifier":
        return False
    values = _definitions(xs)
    return bool(values) and all((strip_parens(v).start_byte, strip_parens(v).end_byte) in splits for v in values)

