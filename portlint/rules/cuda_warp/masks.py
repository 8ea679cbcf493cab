"""PTL104-PTL106: 32-bit lane masks — 32-bit masks passed to `*_sync` intrinsics (literals,
constants, 32-bit variables, through a parameter, a default argument or a macro body),
ballot results narrowed to 32 bits, and lane-mask shifts that overflow at lane 32."""

from __future__ import annotations

import re

from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.analyses.cuda.warp_facts import BALLOT_CALLS, INT32_TYPES, LANE_NAMES, FunctionFacts, callee_name, is_thread_builtin, strip_parens
from portlint.rules.cuda_warp.analysis import FULL32, MASK_FUNCS, Analysis, clean, define_span, is_warpsize, literal
from portlint.core.model import Edit, Fix, Span
from portlint.core.config import version_text
from portlint.rules.cuda_warp import hip_releases

BIT32_INTRINSICS = {"__popc": ("__popcll", "safe"), "__ffs": ("__ffsll", "safe"), "__clz": ("__clzll", "unsafe"),
                    "__brev": ("__brevll", "unsafe"), "__fns": (None, None)}


def _mask32(a: Analysis, node, facts: FunctionFacts) -> tuple[str, str] | None:
    """(kind, text) when a mask expression has a 32-bit type: literal, cast, 32-bit variable."""
    node = strip_parens(node)
    if node is None:
        return None
    text = node_text(node)
    compact = re.sub(r"\s+", "", text)
    lit = literal(node)
    if lit is not None:
        return (None if "ll" in lit[1] else ("literal", text))
    if re.fullmatch(r"~0[uU]?|-1[uU]|~0x0[uU]?|(?:\(unsigned(?:int)?\)|\(uint32_t\)|uint32_t|unsigned|\(int\))\(?-1\)?|static_cast<(?:unsigned(?:int)?|uint32_t|int)>\(-?[0-9xXa-fA-F]+[uU]?\)|(?:uint32_t|unsigned)\(0x[fF]+[uU]?\)|~uint32_t\(0\)|~\(?unsigned(?:int)?\)?0", compact):
        return ("literal", text)
    if node.type == "identifier":
        name = text
        c = a.cmap.lookup(name)
        if c is not None and c.value is not None and c.kind in ("define", "const", "constexpr", "header", "libclang", "enum"):
            raw = node_text(c.node).strip() if c.node is not None else ""
            if c.value <= FULL32 and not re.search(r"ll\b|ULL|LL", raw, re.I):
                if c.line and c.kind in ("define", "const", "constexpr"):
                    return ("local-const", name)
                return ("outside-const", name)
        if name in facts.int32 and name not in facts.ballot and name not in facts.params:
            if _declared_32_bit_here(a, node, name) is False:
                return None  # the declaration in the call's #if branch is 64-bit
            return ("variable", name)
    return None


_CONDITIONALS = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else")


def _branches(node) -> frozenset[int]:
    """The preprocessor branches `node` sits in, as the start bytes of their nodes. The first
    branch of `#if` is the `preproc_if` node itself, whose `#elif`/`#else` alternatives are
    its children: a path that enters an alternative is in that branch, not the first."""
    found, child, cur = set(), node, node.parent
    while cur is not None:
        if cur.type in _CONDITIONALS and child != cur.child_by_field_name("alternative"):
            found.add(cur.start_byte)
        child, cur = cur, cur.parent
    return frozenset(found)


def _declared_32_bit_here(a: Analysis, use, name: str) -> bool | None:
    """Is the last declaration of `name` before `use` in the same function, among those in
    the preprocessor branches `use` is in, a 32-bit integer? None when there is no such
    declaration. `#ifdef USE_ROCM unsigned long long mask ... #else unsigned mask ...`: the
    call in the ROCm branch sees the 64-bit one. A use after `#endif` sees the declaration
    an AMD build compiles."""
    fn = a.function_of(use)
    if fn is None:
        return None
    here = _branches(use)
    decls = []
    for d in nodes_of_types(fn, ("declaration",)):
        if d.start_byte > use.start_byte:
            break
        names = [node_text(x.child_by_field_name("declarator") if x.type == "init_declarator" else x)
                 for x in d.children_by_field_name("declarator")]
        if name in names:
            decls.append(d)
    seen = [d for d in decls if _branches(d) <= here] or \
        [d for d in decls if a.guards.dead_for_amd(d.start_point[0] + 1) is None]
    if not seen:
        return None
    last = seen[-1]
    words = [node_text(c) for c in last.children if c.type in ("sized_type_specifier", "primitive_type", "type_identifier", "qualified_identifier")]
    return INT32_TYPES.match(re.sub(r"\s+", " ", " ".join(words)).strip()) is not None


def masks(a: Analysis) -> None:
    shims = {n for n in MASK_FUNCS if a.guards.defines_for_amd(n)}
    reported_consts: set[str] = set()
    mask_params: dict[tuple[str, int], tuple[str, str]] = {}  # (function, index) -> (parameter, intrinsic)
    for call in nodes_of_types(a.root, ("call_expression",)):
        name = callee_name(call)
        fn_node = call.child_by_field_name("function")
        if fn_node is None or node_text(fn_node) != name:
            continue
        if not a.is_device(call):
            continue
        # the function's facts only for the calls that need them (building them walks the body)
        if name in MASK_FUNCS and name not in shims:
            args = [c for c in call.child_by_field_name("arguments").named_children if c.type != "comment"]
            if args:
                m = _mask32(a, args[0], a.facts_of(call))
                if m is not None:
                    kind, text = m
                    # a mask constant is the root of its uses: reported at its definition
                    # (when in the file) and at each device use, folded into one finding
                    # by root (rules/cuda_warp/PTL104's `fold`, portlint.findings.roots)
                    root = f"mask constant {text}" if kind in ("local-const", "outside-const") else ""
                    if kind == "local-const":
                        c = a.cmap.lookup(text)
                        if text not in reported_consts:
                            reported_consts.add(text)
                            _hit104(a, c.decl if c.kind != "define" else define_span(a.ctx, c), fields={"func": name, "mask": f"`{text}` ({clean(node_text(c.node))})"},
                                  confidence="high", root=root, root_site=True)
                        _hit104(a, _mask_where(a, call, args[0]), fields={"func": name, "mask": f"`{text}` (line {c.line}: {clean(node_text(c.node))})"},
                              confidence="medium", root=root)
                    else:
                        _hit104(a, _mask_where(a, call, args[0]), fields={"func": name, "mask": f"`{text}`"},
                              confidence="high" if kind == "literal" else "medium", root=root)
                else:
                    _mask_parameter(a, call, name, args[0], mask_params)
        if name in BALLOT_CALLS:
            _ballot_sink(a, call, a.facts_of(call))
        if name in BIT32_INTRINSICS:
            _bit_intrinsic(a, call, name, a.facts_of(call))
    # mask constants inside macro bodies: `#define SHFL(v, o) __shfl_xor_sync(0xffffffff, v, o)`
    for node in nodes_of_types(a.root, ("preproc_function_def", "preproc_def")):
        value = node.child_by_field_name("value")
        if value is None:
            continue
        for m in re.finditer(r"\b(__\w+_sync|__syncwarp)\s*\(\s*(0[xX][fF]{8}[uU]?|~0[uU]?|-1[uU]|uint32_t\s*\(\s*-1\s*\)|\(unsigned\)\s*-1)\s*[,)]", node_text(value)):
            if m.group(1) in MASK_FUNCS and m.group(1) not in shims:
                _hit104(a, node, fields={"func": m.group(1), "mask": f"`{m.group(2)}` (in the macro body)"},
                      confidence="high")
                break
    # `__activemask() == 0xffffffff`
    for be in nodes_of_types(a.root, ("binary_expression",)):
        if node_text(be.child_by_field_name("operator")) not in ("==", "!=") or not a.is_device(be):
            continue
        l, r = strip_parens(be.child_by_field_name("left")), strip_parens(be.child_by_field_name("right"))
        for x, y in ((l, r), (r, l)):
            if x is not None and x.type == "call_expression" and callee_name(x) in BALLOT_CALLS:
                lit = literal(y)
                if lit is not None and lit[0] == FULL32 and "ll" not in lit[1]:
                    a.hit("PTL104", y, fields={"func": callee_name(x), "mask": f"`{node_text(y)}`"},
                          message=f"`{callee_name(x)}()` compared with the 32-bit `{node_text(y)}`: HIP's mask is 64-bit, so on a full wave64 it is never equal.",
                          confidence="high", suggestion="Compare with the full mask of the running wave: `__ballot(1)` "
                          "(or `~0ull` when the block is a multiple of 64 threads).")
    _masks_passed_to_parameters(a, mask_params)
    _shifts(a)


def _mask_where(a: Analysis, call, arg):
    """Where a mask argument is reported: the argument, or from the intrinsic's name to the
    argument when the call is split over lines (`__shfl_xor_sync(\n  uint32_t(-1), ...)`)."""
    if arg.start_point[0] == call.start_point[0]:
        return arg
    s, e = a.ctx.node_span(call), a.ctx.node_span(arg)
    return Span(s.start_line, s.start_col, e.end_line, e.end_col)


def _declared_32_bit(p) -> bool:
    """Is parameter `p` declared with a 32-bit integer type (`const unsigned mask`)?"""
    d = p.child_by_field_name("declarator")
    if d is None or d.type != "identifier":
        return False
    words = " ".join(node_text(c) for c in p.children if c.type in ("sized_type_specifier", "primitive_type", "type_identifier", "qualified_identifier"))
    return INT32_TYPES.match(words.strip()) is not None


def _parameters(fn) -> tuple[str, list]:
    """(name, parameter nodes) of a function definition."""
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):
        decl = decl.child_by_field_name("declarator")
    if decl is None or decl.type != "function_declarator":
        return "", []
    name = decl.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters")
    plist = [p for p in params.named_children if p.type in ("parameter_declaration", "optional_parameter_declaration")] if params is not None else []
    return (node_text(name).split("::")[-1] if name is not None else ""), plist


def _parameter_name(p) -> str:
    d = p.child_by_field_name("declarator")
    while d is not None and d.type not in ("identifier",):
        d = d.child_by_field_name("declarator")
    return node_text(d) if d is not None else ""


def _mask_parameter(a: Analysis, call, func: str, arg, mask_params) -> None:
    """A mask that is a parameter of the enclosing function: a 32-bit default value is
    reported where it is written; the function's callers are checked afterwards."""
    arg = strip_parens(arg)
    if arg is None or arg.type != "identifier":
        return
    fn = enclosing(call, ("function_definition",))
    if fn is None:
        return
    fname, params = _parameters(fn)
    for index, p in enumerate(params):
        if _parameter_name(p) != node_text(arg):
            continue
        default = p.child_by_field_name("default_value")
        m = _mask32(a, default, FunctionFacts()) if default is not None else None
        if m is not None:
            _hit104(a, default, fields={"func": func, "mask": f"`{m[1]}` (the default of parameter `{node_text(arg)}`)"},
                  confidence="high")
        elif _declared_32_bit(p):
            # an overload or wrapper whose signature fixes the mask at 32 bits: whatever its
            # callers pass, HIP's `*_sync` receives a 32-bit mask
            ptype = clean(node_text(p))
            _hit104(a, _mask_where(a, call, arg), fields={"func": func, "mask": f"`{node_text(arg)}` (parameter `{ptype}` of `{fname or 'this function'}`)"},
                  confidence="medium")
        if fname:
            mask_params.setdefault((fname, index), (node_text(arg), func))
        return


def _masks_passed_to_parameters(a: Analysis, mask_params) -> None:
    """Calls that pass a 32-bit mask to a parameter a `*_sync` intrinsic uses as its mask:
    reported at the argument, naming the parameter."""
    if not mask_params:
        return
    names = {f for f, _ in mask_params}
    for call in nodes_of_types(a.root, ("call_expression",)):
        fname = callee_name(call)
        if fname not in names or not a.is_device(call):
            continue
        args = call.child_by_field_name("arguments").named_children
        for (f, index), (param, func) in mask_params.items():
            if f != fname or index >= len(args):
                continue
            m = _mask32(a, args[index], a.facts_of(call))
            if m is not None and m[0] != "local-const":
                _hit104(a, args[index], fields={"func": func, "mask": f"`{m[1]}` (passed as parameter `{param}` of `{fname}`)"},
                      confidence="high" if m[0] == "literal" else "medium")


# one line per source line: reporters print a multi-line suggestion as an indented block
_MASK_SUGGESTION = "\n".join((
    "HIP's warp masks are 64-bit (`unsigned long long`) even on wave32. Keep one mask type per platform:",
    "#if defined(__HIP_PLATFORM_AMD__)",
    "  using lane_mask_t = unsigned long long;",
    "#else",
    "  using lane_mask_t = unsigned;",
    "#endif",
    "constexpr lane_mask_t kFullMask = ~lane_mask_t(0);",
    "Or pass `__activemask()`, or call the non-sync HIP shuffle (`__shfl_xor(v, o)`; AMD lanes run in lockstep).",
    "One 64-bit literal for both vendors narrows on CUDA.",
))


# the HIP call without a mask for each `*_sync` intrinsic HIP has had from the start (`__match_*`,
# `__reduce_*` and `__uni_sync` have none before ROCm 6.2: PTL110 says what replaces them)
_MASKLESS = {"__shfl_sync": "__shfl(v, src)", "__shfl_up_sync": "__shfl_up(v, d)", "__shfl_down_sync": "__shfl_down(v, d)",
             "__shfl_xor_sync": "__shfl_xor(v, o)", "__ballot_sync": "__ballot(p)", "__all_sync": "__all(p)",
             "__any_sync": "__any(p)"}


def mask_verdict(func: str, rocm: tuple[int, ...]) -> str:
    """What a 32-bit mask passed to `func` does on the configured ROCm release
    (`[tool.portlint.versions] rocm`), from the release table PTL110 shares (hip_releases:
    HIP's amd_warp_sync_functions.h in ROCm/clr). Wherever HIP declares a `*_sync` form, its
    template has `static_assert(sizeof(MaskT) == 8)`: a 32-bit mask is a compile error, not a
    conversion."""
    shown = version_text(rocm)
    state = hip_releases.state(func, rocm)
    asserted = "static_assert that the mask is 64-bit, so this does not compile"
    if state == "none":
        return f"HIP has no `{func}` in any release (PTL110)"
    if rocm < hip_releases.FIRST:
        if func == "__syncwarp":
            instead = "drop the call (AMD lanes run in lockstep) or use `__builtin_amdgcn_wave_barrier()`"
        elif func in _MASKLESS:
            instead = f"call the HIP form without a mask, `{_MASKLESS[func]}`"
        else:
            instead = "HIP has no maskless form of it either (PTL110)"
        return f"HIP {shown} has no `*_sync` warp intrinsics (undeclared before ROCm 6.2): {instead}"
    if state == "opt-in":
        return (f"HIP {shown} declares the `*_sync` forms only with HIP_ENABLE_WARP_SYNC_BUILTINS, and there "
                f"they {asserted} with the macro or without it")
    if state == "undeclared":
        return f"HIP {shown} does not declare `{func}` (its warp sync header has no such function; PTL110)"
    if state == "declared":
        return "HIP's `*_sync` forms static_assert that the mask is 64-bit (`unsigned long long`), so this does not compile"
    raise AssertionError(f"hip_releases.state gave {state!r}")


def _hit104(a: Analysis, where, **kw) -> None:
    """A PTL104 finding whose verdict and rewrite follow the configured ROCm release."""
    rocm = a.ctx.settings.version("rocm")
    kw["fields"] = {**kw["fields"], "verdict": mask_verdict(kw["fields"]["func"], rocm)}
    a.hit("PTL104", where, suggestion=_MASK_SUGGESTION if rocm >= hip_releases.FIRST else _OLD_HIP_SUGGESTION, **kw)


# HIP before 6.2: no `*_sync` at all, so a 64-bit mask alone does not make the call compile
_OLD_HIP_SUGGESTION = "\n".join((
    "HIP before ROCm 6.2 has no `*_sync` intrinsics: on AMD call the maskless form (AMD lanes run in lockstep):",
    "#if defined(__HIP_PLATFORM_AMD__)",
    "  v += __shfl_xor(v, o);",
    "#else",
    "  v += __shfl_xor_sync(0xffffffffu, v, o);",
    "#endif",
    "`__ballot(1)` gives the 64-bit active mask there. Or build with a release that declares the `*_sync` forms",
    "(6.2-6.4 with HIP_ENABLE_WARP_SYNC_BUILTINS, by default from 7.0; `[tool.portlint.versions] rocm`) and pass a 64-bit mask.",
))


def _reads_as_32_bits(use) -> bool:
    """Does this use of a mask variable keep reading it as 32 bits once it is widened: a
    comparison or bit operation with a 32-bit high pattern (`active == 0xffffffffu`, never
    true on a full wave64)? Then widening the declaration alone compiles and gives a wrong
    answer: the fix is unsafe."""
    parent = use.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return False
    if parent.type == "binary_expression":
        op = parent.child_by_field_name("operator")
        other = [c for c in (parent.child_by_field_name("left"), parent.child_by_field_name("right")) if c is not None and c != use]
        return op is not None and node_text(op) in ("==", "!=", "&", "|", "^", "<", "<=", ">", ">=") and any(_high_32(c) for c in other)
    return False  # `__popc(mask)` is no risk: its own PTL105 fix makes it `__popcll`


def _high_32(node) -> bool:
    """A number literal that is a 32-bit pattern with its top bit set (0xffffffffu,
    0x80000000): what a full or high-lane mask is on 32 lanes, and not on 64."""
    if node.type != "number_literal":
        return False
    try:
        value = int(node_text(node).rstrip("uUlL"), 0)
    except ValueError:
        return False
    return 1 << 31 <= value < 1 << 32


def _ballot_sink(a: Analysis, call, facts: FunctionFacts) -> None:
    parent = call.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return
    cname = callee_name(call)
    if parent.type == "init_declarator":
        decl = parent.parent
        tnode = decl.child_by_field_name("type") if decl is not None else None
        target = parent.child_by_field_name("declarator")
        if tnode is None or target is None or target.type != "identifier":
            return
        words = " ".join(node_text(c) for c in decl.children if c.type in ("sized_type_specifier", "primitive_type", "type_identifier", "qualified_identifier"))
        if not INT32_TYPES.match(words.strip()):
            return
        name = node_text(target)
        uses = [i for i in nodes_of_types(a.function_of(call) or a.root, ("identifier",)) if node_text(i) == name and i != target]
        risky = any(i.parent is not None and i.parent.type == "unary_expression" and node_text(i.parent)[:1] in "~-" for i in uses) \
            or any(_reads_as_32_bits(i) for i in uses)
        fix = Fix(f"declare `{name}` as unsigned long long", (Edit(a.ctx.node_span(tnode), "unsigned long long"),), "unsafe" if risky else "safe")
        if len([c for c in decl.children if c.type == "type_qualifier"]) or len(decl.children_by_field_name("declarator")) > 1:
            fix = None
        a.hit("PTL105", parent, fields={"func": cname, "sink": f"`{words.strip()} {name}`"}, fix=fix, confidence="high",
              suggestion="Keep the mask 64-bit: `unsigned long long` (or `auto`), and use `__popcll`, `__ffsll`, `__clzll` on it.")
    elif parent.type == "assignment_expression":
        target = parent.child_by_field_name("left")
        if target is not None and target.type == "identifier" and node_text(target) in facts.int32:
            a.hit("PTL105", parent, fields={"func": cname, "sink": f"the 32-bit variable `{node_text(target)}`"}, confidence="high",
                  suggestion="Declare the variable `unsigned long long`.")
    elif parent.type == "return_statement":
        fn = a.function_of(call)
        rtype = fn.child_by_field_name("type") if fn is not None and fn.type == "function_definition" else None
        if rtype is not None:
            words = " ".join(node_text(c) for c in fn.children if c.type in ("sized_type_specifier", "primitive_type", "type_identifier"))
            if INT32_TYPES.match(words.strip()):
                a.hit("PTL105", call, fields={"func": cname, "sink": f"a `{words.strip()}` return value"}, confidence="high",
                      fix=Fix("return unsigned long long", (Edit(a.ctx.node_span(rtype), "unsigned long long"),), "unsafe")
                      if rtype.type in ("primitive_type", "sized_type_specifier", "type_identifier") and len([c for c in fn.children if c.type in ("sized_type_specifier", "primitive_type", "type_identifier")]) == 1 else None,
                      suggestion="Return `unsigned long long` from the helper (CUDA's 32-bit value widens without loss).")
    elif parent.type == "cast_expression" or (parent.type == "call_expression" and node_text(parent.child_by_field_name("function")) in ("uint32_t", "unsigned")):
        ttext = node_text(parent.child_by_field_name("type")) if parent.type == "cast_expression" else node_text(parent.child_by_field_name("function"))
        if INT32_TYPES.match(re.sub(r"\s+", " ", ttext or "").strip()):
            a.hit("PTL105", parent, fields={"func": cname, "sink": f"a cast to `{ttext}`"}, confidence="high",
                  suggestion="Keep the mask 64-bit: drop the cast or cast to `unsigned long long`.")


def _bit_intrinsic(a: Analysis, call, name: str, facts: FunctionFacts) -> None:
    args = call.child_by_field_name("arguments").named_children
    if not args:
        return
    arg = strip_parens(args[0])
    source = None
    if arg.type == "call_expression" and callee_name(arg) in BALLOT_CALLS:
        source = callee_name(arg)
    elif arg.type == "identifier" and node_text(arg) in facts.ballot:
        source = f"{callee_name(facts.ballot[node_text(arg)])} (through `{node_text(arg)}`)"
    elif arg.type == "binary_expression" and any(
        (c.type == "call_expression" and callee_name(c) in BALLOT_CALLS) or (c.type == "identifier" and node_text(c) in facts.ballot)
        for c in nodes_of_types(arg, ("call_expression", "identifier"))
    ):
        source = "a ballot mask"
    if source is None:
        return
    wide, applicability = BIT32_INTRINSICS[name]
    fn = call.child_by_field_name("function")
    fix = Fix(f"use {wide}", (Edit(a.ctx.node_span(fn), wide),), applicability) if wide else None
    a.hit("PTL105", call, fields={"func": source, "sink": f"the 32-bit `{name}`"}, fix=fix, confidence="high",
          suggestion=f"Use the 64-bit form `{wide}`." + (" Its result differs from the 32-bit one on CUDA (it counts 64 bits), so adjust the arithmetic around it." if applicability == "unsafe" else "")
          if wide else "HIP has `__fns64(mask, base, offset)` for 64-bit masks.")


def _shift_count_is_lane(a: Analysis, node, facts: FunctionFacts) -> bool:
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "binary_expression":
        op = node_text(node.child_by_field_name("operator"))
        right = node.child_by_field_name("right")
        if op in ("%", "&"):
            v, _ = a.value_of(right)
            if v is not None and v <= 32:
                return False  # `1u << (tid & 31)`: the 31 is PTL102's, the shift is in range
            return a.is_thread(node.child_by_field_name("left"), facts) and (is_warpsize(right) or "warpSize" in node_text(right))
        if op in ("+", "-"):
            return False
    if node.type == "identifier":
        return node_text(node) in facts.lane or LANE_NAMES.match(node_text(node)) is not None
    return is_thread_builtin(node) or a.is_lane_expr(node, facts)


# a 32-bit one spelled as a cast: `(unsigned int)1`, `uint32_t(1)`, `static_cast<unsigned>(1)`
_NARROW_ONE = re.compile(r"\((?:unsigned(?:int)?|uint32_t|std::uint32_t|int)\)1[uU]?|(?:std::)?(?:uint32_t|unsigned)[({]1[uU]?[)}]|"
                         r"static_cast<(?:unsigned(?:int)?|(?:std::)?uint32_t|int)>\(1[uU]?\)")


_VALUE_OPS = frozenset(("==", "!=", "<", ">", "<=", ">=", "&&", "||"))
_ARITH_PARENTS = frozenset(("parenthesized_expression", "binary_expression", "unary_expression"))


def _declared_type(decl) -> str:
    t = decl.child_by_field_name("type") if decl is not None else None
    return re.sub(r"\s+", " ", node_text(t)).strip() if t is not None else ""


def _type_of_name(node, name: str) -> str:
    """The declared type of `name` in the function around `node` (parameters included), "" when
    not found there."""
    fn = enclosing(node, ("function_definition",))
    if fn is None:
        return ""
    for decl in nodes_of_types(fn, ("declaration", "parameter_declaration")):
        for d in nodes_of_types(decl, ("identifier",)):
            if node_text(d) == name and d.parent is not None and d.parent.type in ("init_declarator", "declaration", "parameter_declaration"):
                return _declared_type(decl)
    return ""


def narrow_sink(be):
    """(sink node, its 32-bit type) when the value of the shift `be`, through arithmetic, ends in
    a 32-bit variable, parameter or return value (`unsigned m = (1u << lane) - 1;`, `m |= ...`
    with `unsigned m`, `return 1u << lane;` from an `unsigned` function); None when it is
    consumed as a value (`if (mask & (1u << lane))`) or its type is wide."""
    cur = be
    while cur.parent is not None and cur.parent.type in _ARITH_PARENTS:
        op = cur.parent.child_by_field_name("operator")
        if cur.parent.type == "binary_expression" and op is not None and node_text(op) in _VALUE_OPS:
            return None
        cur = cur.parent
    parent = cur.parent
    if parent is None:
        return None
    if parent.type == "init_declarator":
        decl, kind = parent.parent, "decl"
        typ = _declared_type(decl)
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == cur:
        left = strip_parens(parent.child_by_field_name("left"))
        if left is None or left.type != "identifier":
            return None
        decl, kind, typ = left, "assign", _type_of_name(parent, node_text(left))
    elif parent.type == "return_statement":
        fn = enclosing(parent, ("function_definition",))
        decl, kind, typ = fn, "return", _declared_type(fn)
    else:
        return None
    return (decl, kind, typ) if INT32_TYPES.match(typ) else None


def _shifts(a: Analysis) -> None:
    for be in nodes_of_types(a.root, ("binary_expression",)):
        op = node_text(be.child_by_field_name("operator"))
        if op not in ("<<", ">>") or not a.is_device(be):
            continue
        left, right = strip_parens(be.child_by_field_name("left")), be.child_by_field_name("right")
        ltext = re.sub(r"\s+", "", node_text(left))
        lit = literal(left)
        if op == "<<":
            one = (lit is not None and "ll" not in lit[1] and lit[0] == 1) or _NARROW_ONE.fullmatch(ltext) is not None
            narrow = one or (lit is not None and "ll" not in lit[1] and lit[0] == FULL32) or ltext in ("~0u", "~0U", "~0", "-1u")
            wide_one = lit is not None and "ll" in lit[1].lower() and lit[0] in (1, FULL32) or ltext in ("~0ull", "~0ULL")
            if not (narrow or wide_one) or not _shift_count_is_lane(a, right, a.facts_of(be)):
                continue
            sink = narrow_sink(be)
            where = {"decl": "the declaration", "assign": f"`{node_text(sink[0])}`", "return": "the function's return type"}.get(sink[1]) if sink else ""
            if wide_one:
                if sink is None:
                    continue  # `1ull << lane` kept in 64 bits: the port is done
                a.hit("PTL106", be, fields={"expr": node_text(be)}, confidence="medium",
                      suggestion=f"The 64-bit mask is narrowed to the 32-bit `{sink[2]}` of {where}, which drops lanes 32-63: "
                      "keep it in `unsigned long long` (and what reads it: 64-bit `__popcll`/`__ffsll`).")
                continue
            new = "1ull" if one else "~0ull"
            suggestion = "Shift a 64-bit one: `1ull << lane` (lanes 32-63 exist on wave64); keep the mask in `unsigned long long`."
            if sink is None:
                fix = a.replace(left, new, f"shift a 64-bit {new}")
            else:
                # a 32-bit home for the mask: widening it changes what reads it, so the fix is unsafe
                edits = [Edit(a.ctx.node_span(left), new)]
                if sink[1] == "decl" and len([c for c in sink[0].named_children if c.type == "init_declarator"]) == 1:
                    edits.insert(0, Edit(a.ctx.node_span(sink[0].child_by_field_name("type")), "unsigned long long"))
                fix = Fix(f"shift a 64-bit {new}" + (" in an `unsigned long long`" if len(edits) > 1 else ""), tuple(edits), "unsafe")
                suggestion += (f" The result lands in the 32-bit `{sink[2]}` of {where}: widen it too, and check what reads it "
                               "(a 32-bit parameter, return value or `__popc` narrows it again).")
            a.hit("PTL106", be, fields={"expr": node_text(be)}, fix=fix, confidence="medium", suggestion=suggestion)
        else:
            # `0xffffffff >> (32 - n)`: a lane mask built for 32 lanes
            r = strip_parens(right)
            if lit is not None and lit[0] == FULL32 and "ll" not in lit[1] and r is not None and r.type == "binary_expression" \
                    and node_text(r.child_by_field_name("operator")) == "-" and a.value_of(r.child_by_field_name("left"))[0] == 32:
                a.hit("PTL106", be, fields={"expr": node_text(be)}, confidence="medium",
                      suggestion="Build the mask in 64 bits from the wave size: `~0ull >> (64 - n)` (n > 0), with lane counts from `warpSize`.")
