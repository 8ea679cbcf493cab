"""PTL103: shuffle reductions and scans shaped for 32 lanes — butterflies that start at 16,
doubling loops up to 32, `1 << 0 .. 1 << 4` offsets, unrolled 16, 8, 4, 2, 1 chains."""

from __future__ import annotations

import re

from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.analyses.cuda.warp_facts import callee_name, strip_parens
from portlint.rules.cuda_warp.analysis import SHFL_SYNC_ARGS, SHUFFLE, Analysis, has_width, origin_note
from portlint.rules.cuda_warp.logical_warps import chosen_group_size


_SHUFFLE_BYTES = re.compile(SHUFFLE.pattern.encode(), re.I)


def _shuffles_in(node) -> list:
    return [c for c in nodes_of_types(node, ("call_expression",)) if SHUFFLE.search(callee_name(c) or "")]


def reductions(a: Analysis, others: bool) -> None:
    if a.ctx.data.isascii() and not _SHUFFLE_BYTES.search(a.ctx.data):
        return  # every shape here needs a shuffle call, whose name is in the bytes (ASCII: no Unicode case folds)
    for loop in nodes_of_types(a.root, ("for_statement",)):
        if not a.is_device(loop):
            continue
        init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
        body = loop.child_by_field_name("body")
        if init is None or cond is None or update is None or body is None:
            continue
        shuffles = _shuffles_in(body)
        if not shuffles or any(has_width(c, a) for c in shuffles):
            continue
        var, start = None, None
        if init.type == "declaration":
            ds = nodes_of_types(init, ("init_declarator",))
            if ds:
                var, start = node_text(ds[0].child_by_field_name("declarator")), ds[0].child_by_field_name("value")
        elif init.type == "assignment_expression":
            var, start = node_text(init.child_by_field_name("left")), init.child_by_field_name("right")
        if var is None or start is None:
            continue
        utext = re.sub(r"\s+", "", node_text(update))
        halves = utext in (f"{var}/=2", f"{var}>>=1", f"{var}={var}/2", f"{var}={var}>>1")
        doubles = utext in (f"{var}*=2", f"{var}<<=1", f"{var}={var}*2", f"{var}={var}<<1", f"{var}+={var}")
        v, how = a.value_of(start)
        increments = utext in (f"++{var}", f"{var}++", f"{var}+=1", f"{var}={var}+1")
        if increments and v == 0 and cond.type == "binary_expression" and re.search(rf"\b1[uU]?\s*<<\s*{re.escape(var)}\b", node_text(body)):
            cop = node_text(cond.child_by_field_name("operator"))
            bv, bhow = a.value_of(cond.child_by_field_name("right"))
            if ((cop == "<=" and bv == 4) or (cop == "<" and bv == 5)) and bhow != "local-warp" and not chosen_group_size(a, bhow):
                a.hit("PTL103", cond, fields={"start": node_text(cond), "shape": "runs offsets 1 << 0 .. 1 << 4 (1 to 16)"}, confidence="high",
                      suggestion="Run log2(warpSize) steps: `for (int l = 0; (1 << l) < warpSize; ++l)`, and take the "
                                 "source lane modulo warpSize.")
                continue
        if halves and v == 16:
            if how == "expr":
                # `WARP_SIZE / 2` with a local warp constant: PTL101 reports the constant
                if any(node_text(i) in a.warp_consts for i in nodes_of_types(start, ("identifier",))):
                    continue
            elif how == "local-warp":
                continue
            if chosen_group_size(a, how):
                continue  # each 32-lane half of a 64-lane wave reduces its own logical warp
            fix = a.replace(start, "warpSize / 2", "start the butterfly at warpSize / 2",
                            "unsafe" if others else "safe")
            a.hit("PTL103", start, fields={"start": node_text(start), "shape": "halves from 16"}, fix=fix, confidence="high" if how == "literal" else "medium",
                  suggestion=origin_note(a, start, how) if how in ("outside", "const") else None)
        elif doubles and v == 1 and cond.type == "binary_expression":
            op = node_text(cond.child_by_field_name("operator"))
            bound = cond.child_by_field_name("right")
            bv, bhow = a.value_of(bound)
            if (op == "<" and bv == 32) or (op == "<=" and bv == 16):
                if bhow == "local-warp" or chosen_group_size(a, bhow) or _segmented_up_scan(a, loop, body, shuffles, var):
                    continue
                fix = a.replace(bound, "warpSize" if op == "<" else "warpSize / 2", "run the loop up to warpSize",
                                "unsafe" if others else "safe") if bhow == "literal" else None
                a.hit("PTL103", bound, fields={"start": node_text(cond), "shape": "doubles up to 32"}, fix=fix, confidence="high" if bhow == "literal" else "medium")
        elif doubles and v is None and how == "none" and cond.type == "binary_expression" and "xor" in " ".join(callee_name(c) or "" for c in shuffles).lower():
            # `for (x = kThreadsPerRow; x < 32; x *= 2) __shfl_xor_sync(m, v, x)`: a butterfly from a
            # start the file does not fix, still ending where a 32-lane warp ends
            op = node_text(cond.child_by_field_name("operator"))
            bv, bhow = a.value_of(cond.child_by_field_name("right"))
            if op == "<" and bv == 32 and bhow != "local-warp" and not chosen_group_size(a, bhow) and \
                    node_text(cond.child_by_field_name("left")).strip() == var:
                a.hit("PTL103", cond.child_by_field_name("right"), fields={"start": node_text(cond), "shape": "doubles up to 32"},
                      confidence="medium", suggestion="The XOR offsets stop below 32, where a 32-lane warp ends: on wave64 run "
                      "them up to `warpSize` (offset 32 joins the two halves), or pass width 32 if each 32 lanes are meant as "
                      "their own group.")
    # unrolled chains: shuffles with offsets 16, 8, 4, 2, 1 in one function
    chains: dict[int, dict[int, object]] = {}
    for call in nodes_of_types(a.root, ("call_expression",)):
        name = callee_name(call)
        if name not in SHFL_SYNC_ARGS or not any(k in name for k in ("xor", "down", "up")) or not a.is_device(call):
            continue
        if has_width(call, a) or enclosing(call, ("for_statement",)) is not None and _loop_var_offset(call):
            continue
        args = call.child_by_field_name("arguments").named_children
        off = args[2] if name.endswith("_sync") and len(args) > 2 else (args[1] if len(args) > 1 and not name.endswith("_sync") else None)
        v, how = a.value_of(off) if off is not None else (None, "none")
        fn = a.function_of(call)
        if v in (16, 8, 4, 2, 1) and fn is not None:
            chains.setdefault(fn.start_byte, {}).setdefault(v, off)
    for offs in chains.values():
        if 16 in offs and 8 in offs and 32 not in offs and not chosen_group_size(a, "literal"):
            a.hit("PTL103", offs[16], fields={"start": "16", "shape": "is unrolled 16, 8, 4, 2, 1"}, confidence="high",
                  suggestion="Unrolled for 32 lanes: on wave64 add a first step with offset 32 (under "
                             "`#if defined(__GFX9__)`), or write the loop `for (int o = warpSize / 2; o > 0; o >>= 1)`.")


def _segmented_up_scan(a: Analysis, loop, body, shuffles, var: str) -> bool:
    """An up-shuffle scan over deliberate 32-lane segments: every shuffle moves values up and
    each is used only under `lane >= i`, where `lane` is the thread index `& 31` / `% 32`.
    On a 64-lane wave lane 33 reads lane 31 at i = 2, and its segment lane (1) rejects it:
    the wave runs as two correct 32-lane scans."""
    if not all("up" in (callee_name(c) or "").lower() for c in shuffles):
        return False
    facts = a.facts_of(loop)
    segment_lanes = {name for name in facts.lane if _lane_of_32(a, loop, name)}
    if not segment_lanes:
        return False
    for be in nodes_of_types(body, ("binary_expression",)):
        op = node_text(be.child_by_field_name("operator"))
        left, right = (node_text(be.child_by_field_name(f)).strip() for f in ("left", "right"))
        if (op == ">=" and left in segment_lanes and right == var) or (op == "<=" and left == var and right in segment_lanes):
            return True
    return False


def _lane_of_32(a: Analysis, node, name: str) -> bool:
    """Is `name` defined in the function around `node` as a thread index `& 31` or `% 32`
    (a literal 32-lane segment, not `% warpSize`)?"""
    fn = a.function_of(node)
    for d in nodes_of_types(fn, ("init_declarator",)) if fn is not None else ():
        target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
        value = strip_parens(value)
        if target is None or node_text(target) != name or value is None or value.type != "binary_expression":
            continue
        op = node_text(value.child_by_field_name("operator"))
        v, how = a.value_of(value.child_by_field_name("right"))
        if how in ("literal", "expr") and ((op == "&" and v == 31) or (op == "%" and v == 32)):
            return True
    return False


def _loop_var_offset(call) -> bool:
    loop = enclosing(call, ("for_statement",))
    init = loop.child_by_field_name("initializer") if loop is not None else None
    if init is None:
        return False
    names = {node_text(d.child_by_field_name("declarator")) for d in nodes_of_types(init, ("init_declarator",))}
    return any(node_text(i) in names for i in nodes_of_types(call, ("identifier",)))
