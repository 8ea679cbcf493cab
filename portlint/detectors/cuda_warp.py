"""Warp size and lane masks: CUDA code that assumes 32-lane warps (PTL101-PTL111).

One analysis per file (`warp_findings`, shared through ctx.fact) finds every candidate and
decides where each is reported, so one mistake is reported once: a warp-named constant of
value 32 defined in this file is reported at its definition (PTL101), not at each use; a
32 that comes from a literal, from a constant with another name, or from a header is
reported where it is used. The detectors of the rules then report their share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from portlint.cuda.constants import Const, constant_map, eval_int, parse_int
from portlint.cuda.guards import guard_map
from portlint.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.cuda.spaces import space_map
from portlint.cuda.warp_facts import (
    BALLOT_CALLS, DATA_NAMES, INT32_TYPES, LANE_NAMES, FactBuilder, FunctionFacts, callee_name, is_thread_builtin,
    mentions_thread, strip_parens,
)
from portlint.model import Edit, Fix, Span
from portlint.registry import detector

# ---- vocabulary ---------------------------------------------------------------------------

WARP_SIZE_NAME = re.compile(
    r"^(?:[A-Za-z0-9]*_)?(?:k_?|c_?)?(?:threads?_?per_?(?:warp|wave)|lanes?_?per_?(?:warp|wave)|num_?lanes|"
    r"(?:warp|wave|wavefront)_?(?:size|sz|threads|lanes|width|len|length)?)$|^ws$", re.I)
LOG_WARP_NAME = re.compile(r"^(?:[A-Za-z0-9]*_)?(?:k_?)?(?:log2?_?(?:warp|wave)(?:_?size)?|(?:warp|wave)_?(?:size_?)?(?:shift|log2?|bits))$", re.I)
LANE_MASK_NAME = re.compile(r"^(?:[A-Za-z0-9]*_)?(?:k_?)?(?:lane_?mask|warp_?mask|lane_?id_?mask)$", re.I)
WARP_COUNT_NAME = re.compile(r"^(?:k_?)?(?:n_?|num_?)?warps(?:_?per_?(?:block|cta|group))?$|^(?:k_?)?(?:n|num)_?warps?$|^(?:k_?)?warp_?count$", re.I)
THREAD_COUNT_NAME = re.compile(r"(thread|block_?size|block_?dim|blocksize|^bs$|cta_?size|threads)", re.I)
SHUFFLE = re.compile(r"shfl|shuffle", re.I)
SHFL_SYNC_ARGS = {"__shfl_sync": 4, "__shfl_up_sync": 4, "__shfl_down_sync": 4, "__shfl_xor_sync": 4,
                  "__shfl": 3, "__shfl_up": 3, "__shfl_down": 3, "__shfl_xor": 3}
MASK_FUNCS = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__all_sync",
              "__any_sync", "__uni_sync", "__match_any_sync", "__match_all_sync", "__syncwarp",
              "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync",
              "__reduce_xor_sync"}
BIT32_INTRINSICS = {"__popc": ("__popcll", "safe"), "__ffs": ("__ffsll", "safe"), "__clz": ("__clzll", "unsafe"),
                    "__brev": ("__brevll", "unsafe"), "__fns": (None, None)}
# CUDA warp builtins and their state on ROCm: (severity, what to use instead)
AVAILABILITY = {
    "__syncwarp": ("warning", "HIP < 6.2 has no `__syncwarp` (ROCm 6.2 needs HIP_ENABLE_WARP_SYNC_BUILTINS; 7.0 has it): AMD lanes run in lockstep, so drop it or use `__builtin_amdgcn_wave_barrier()`"),
    "__activemask": ("warning", "HIP < 6.2 has no `__activemask`; `__ballot(1)` gives the 64-bit active mask"),
    "__match_any_sync": ("warning", "HIP < 6.2 has no `__match_any_sync` (ROCm 7: `__match_any_sync` with a 64-bit mask, or `__match_any`)"),
    "__match_all_sync": ("warning", "HIP < 6.2 has no `__match_all_sync` (ROCm 7: with a 64-bit mask, or `__match_all`)"),
    "__reduce_add_sync": ("warning", "HIP < 7.0 has no `__reduce_add_sync` and ROCm 7 takes only int/unsigned: use a `__shfl_xor` loop from `warpSize / 2`"),
    "__reduce_min_sync": ("warning", "HIP < 7.0 has no `__reduce_min_sync`: use a `__shfl_xor` loop from `warpSize / 2`"),
    "__reduce_max_sync": ("warning", "HIP < 7.0 has no `__reduce_max_sync`: use a `__shfl_xor` loop from `warpSize / 2`"),
    "__reduce_and_sync": ("warning", "HIP < 7.0 has no `__reduce_and_sync`: use `__all`/a `__shfl_xor` loop"),
    "__reduce_or_sync": ("warning", "HIP < 7.0 has no `__reduce_or_sync`: use `__any`/a `__shfl_xor` loop"),
    "__reduce_xor_sync": ("warning", "HIP < 7.0 has no `__reduce_xor_sync`: use a `__shfl_xor` loop"),
    "__uni_sync": ("error", "HIP has no `__uni_sync`: compare `__ballot(p)` with `__ballot(1)`"),
}
CONST_CONTEXT_PARENTS = ("array_declarator", "template_argument_list", "case_statement", "static_assert_declaration", "alignas_qualifier", "bitfield_clause", "enumerator")
FULL32 = 0xFFFFFFFF


@dataclass
class Hit:
    rule: str
    where: object  # node or Span
    fields: dict = field(default_factory=dict)
    fix: Fix | None = None
    suggestion: str | None = None
    confidence: str | None = None
    targets: dict | None = None
    message: str | None = None


# ---- helpers --------------------------------------------------------------------------------

def _literal(node):
    """(value, suffix) of a number literal node (through parentheses), else None."""
    node = strip_parens(node)
    if node is None or node.type != "number_literal":
        return None
    return parse_int(node_text(node))


def _is_warpsize(node) -> bool:
    node = strip_parens(node)
    return node is not None and node.type == "identifier" and node_text(node) == "warpSize"


# an #if that tests an AMD build: `defined(USE_ROCM)`, `GGML_USE_HIP`, `__HIP_PLATFORM_AMD__`, `__gfx942__`
_AMD_TEST = re.compile(r"HIP|ROCM|ROCm|AMD|__gfx|__GFX")
# HIP code in the file itself: HIP's shuffles without `_sync`, HIP headers and runtime calls
_HIP_CODE = re.compile(r"\b__shfl(?:_xor|_up|_down)?\s*\(|<hip/|\bhip[A-Z]\w*\s*\(")

class Analysis:
    def __init__(self, ctx):
        self.ctx = ctx
        self.root = ctx.tree.root_node
        self.spaces = ctx.fact(space_map)
        self.guards = ctx.fact(guard_map)
        self.cmap = ctx.fact(constant_map)
        self.hits: list[Hit] = []
        self.facts: dict[int, FunctionFacts] = {}
        self.warp_consts: dict[str, Const] = {}  # local warp-named definitions reported as PTL101
        self.reported_consts: set[str] = set()  # those of them reported (not logical warps)
        self.const_uses: dict[str, list] = {}  # name -> identifier nodes that use it
        self._reported_nodes: set[tuple[int, int, str]] = set()
        self._logical: dict = {}

    # -- constants --
    def warp_const_kind(self, c: Const) -> str | None:
        """'size' / 'log' / 'mask' when a definition is a warp constant of the 32-lane world."""
        size, log, mask = (p.match(c.name) is not None for p in (WARP_SIZE_NAME, LOG_WARP_NAME, LANE_MASK_NAME))
        if not (size or log or mask):
            return None  # names first: asking for a value may start the libclang pass
        value = self.cmap.value_of(c)
        if value == 32 and size:
            return "size"
        if value == 5 and log:
            return "log"
        if value == 31 and mask:
            return "mask"
        return None

    def value_of(self, node) -> tuple[int | None, str]:
        """Value of an operand and where it comes from: literal | local-warp | const | outside | none."""
        node = strip_parens(node)
        if node is None:
            return None, "none"
        lit = _literal(node)
        if lit is not None:
            return lit[0], "literal"
        if node.type in ("identifier", "qualified_identifier"):
            name = node_text(node).split("::")[-1].strip()
            c = self.cmap.lookup(name)
            if c is None or c.value is None:
                return None, "none"
            if name in self.warp_consts:
                return c.value, "local-warp"
            if c.line == 0:  # a header's: reported at its definition and at each use here
                return c.value, "outside"
            return c.value, "const"
        v = eval_int(node, self.cmap)
        if v is not None and any(node_text(i) in self.warp_consts for i in nodes_of_types(node, ("identifier",))):
            return v, "local-warp"
        if v is not None and any(self.cmap.lookup(node_text(i)) is not None and self.cmap.lookup(node_text(i)).line == 0
                                 for i in nodes_of_types(node, ("identifier",))):
            return v, "outside"
        return v, ("expr" if v is not None else "none")

    # -- functions and facts --
    def function_of(self, node):
        return enclosing(node, ("function_definition", "lambda_expression"))

    def facts_of(self, node) -> FunctionFacts:
        fn = self.function_of(node)
        if fn is None:
            return FunctionFacts()
        while fn.type == "lambda_expression":  # a lambda sees the variables of its function
            outer = enclosing(fn, ("function_definition",))
            if outer is None:
                break
            fn = outer
        key = fn.start_byte
        if key not in self.facts:
            body = fn.child_by_field_name("body") or fn
            self.facts[key] = FactBuilder(body, self.is_lane_expr, self.is_warp_expr).build()
        return self.facts[key]

    def is_thread(self, node, facts: FunctionFacts) -> bool:
        node = strip_parens(node)
        if node is None:
            return False
        if is_thread_builtin(node):
            return True
        if node.type == "identifier":
            return node_text(node) in facts.tid | facts.lane
        if node.type == "binary_expression":
            op = node_text(node.child_by_field_name("operator"))
            if op in ("+", "-"):  # blockIdx.x * blockDim.x + threadIdx.x
                return self.is_thread(node.child_by_field_name("left"), facts) or self.is_thread(node.child_by_field_name("right"), facts)
        if node.type == "cast_expression":
            return self.is_thread(node.child_by_field_name("value"), facts)
        return False

    def is_lane_expr(self, node, facts: FunctionFacts) -> bool:
        node = strip_parens(node)
        if node is None:
            return False
        if node.type == "call_expression" and callee_name(node) in ("__lane_id", "laneid", "lane_id", "get_lane_id"):
            return True
        if node.type == "identifier":
            return node_text(node) in facts.lane
        if node.type == "binary_expression":
            op = node_text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op in ("%", "&") and self.is_thread(left, facts):
                r = strip_parens(right)
                if _is_warpsize(r) or (r is not None and r.type == "binary_expression" and "warpSize" in node_text(r)):
                    return True
                v, _ = self.value_of(right)
                return (op == "%" and v == 32) or (op == "&" and v == 31)
        if node.type == "cast_expression":
            return self.is_lane_expr(node.child_by_field_name("value"), facts)
        return False

    def is_warp_expr(self, node, facts: FunctionFacts) -> bool:
        node = strip_parens(node)
        if node is None or node.type != "binary_expression":
            return False
        op = node_text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if not self.is_thread(left, facts):
            return False
        if op == "/" and (_is_warpsize(right) or self.value_of(right)[0] == 32):
            return True
        return op == ">>" and self.value_of(right)[0] == 5

    def is_device(self, node) -> bool:
        return self.spaces.is_device(node)

    def knows_amd(self) -> bool:
        """Does the file have an AMD path of its own (an #if on a HIP/ROCm/AMD macro, or HIP code:
        `__shfl_xor` without `_sync`, a HIP header, a `hip*` call)? Only then
        is a file-local 32 passed as a shuffle width a deliberate logical warp (ggml's WARP_SIZE
        beside its physical wave size); in a file written for NVIDIA alone the same 32 is the
        hardware warp, whatever its headers do for ROCm."""
        if "amd" not in self._logical:
            from portlint.cuda.includes import file_directives

            self._logical["amd"] = bool(_HIP_CODE.search(self.ctx.text)) or any(
                d.kind.startswith(("if", "elif")) and _AMD_TEST.search(d.rest) for d in self.ctx.fact(file_directives)
            )
        return self._logical["amd"]

    def file_logical32(self) -> bool:
        """Do the file's shuffles pass an explicit width of 32 (and none a different width)?"""
        if "file" not in self._logical:
            widths = set()
            for call in nodes_of_types(self.root, ("call_expression",)):
                if callee_name(call) in SHFL_SYNC_ARGS and _has_width(call, self):
                    arg = call.child_by_field_name("arguments").named_children[-1]
                    widths.add(self.value_of(arg)[0] if arg.type != "identifier" or node_text(arg) not in self.warp_consts else 32)
            self._logical["file"] = widths == {32}
        return self._logical["file"]

    def logical32(self, node) -> bool:
        """Is `node` in a function that works in deliberate 32-lane groups: a shuffle with an
        explicit width of 32, or `cub::WarpReduce<T, 32>`? Then its 32s are the group size."""
        fn = self.function_of(node)
        if fn is None:
            return False
        key = ("l32", fn.start_byte)
        if key not in self._logical:
            text = node_text(fn)
            found = bool(re.search(r"Warp(?:Reduce|Scan|Exchange|Load|Store)\s*<[^<>;]*,\s*(?:32|[A-Za-z_]\w*)\s*[,>]", text)) and bool(
                re.search(r"Warp(?:Reduce|Scan|Exchange|Load|Store)\s*<[^<>;]*,\s*32\s*[,>]", text))
            if not found:
                for call in nodes_of_types(fn, ("call_expression",)):
                    name = callee_name(call)
                    if name in SHFL_SYNC_ARGS and _has_width(call, self):
                        if self.value_of(call.child_by_field_name("arguments").named_children[-1])[0] == 32:
                            found = True
                            break
            self._logical[key] = found
        return self._logical[key]

    # -- reporting --
    def hit(self, rule: str, where, **kw) -> None:
        key = (where.start_byte, where.end_byte, rule) if hasattr(where, "start_byte") else (id(where), 0, rule)
        if key in self._reported_nodes:
            return
        self._reported_nodes.add(key)
        self.hits.append(Hit(rule, where, **kw))

    def replace(self, node, text: str, description: str, applicability: str = "safe") -> Fix:
        return Fix(description, (Edit(self.ctx.node_span(node), text),), applicability)


# ---- PTL101: warp-size constants ---------------------------------------------------------

def _use_context(ident) -> str:
    """How an identifier use is consumed: 'const' (needs a constant expression), 'width'
    (the width argument of a shuffle), 'preproc', or 'runtime'."""
    cur, child = ident.parent, ident
    while cur is not None:
        t = cur.type
        if t in CONST_CONTEXT_PARENTS:
            if t == "array_declarator" and child == cur.child_by_field_name("declarator"):
                return "runtime"
            return "const"
        if t in ("init_declarator", "declaration") and t == "declaration":
            quals = {node_text(c) for c in cur.children if c.type == "type_qualifier"}
            if "constexpr" in quals:
                return "const"
        if t == "argument_list" and cur.parent is not None and cur.parent.type == "call_expression":
            name = callee_name(cur.parent)
            args = cur.named_children
            if name in SHFL_SYNC_ARGS and len(args) == SHFL_SYNC_ARGS[name] and child == args[-1] and strip_parens(child) == ident:
                return "width"
            if name in SHFL_SYNC_ARGS or name in MASK_FUNCS:
                return "runtime"
        if t in ("compound_statement", "translation_unit", "function_definition"):
            return "runtime"
        child, cur = cur, cur.parent
    return "runtime"


def _is_width_default(ident) -> bool:
    p = ident.parent
    if p is not None and p.type == "optional_parameter_declaration" and p.child_by_field_name("default_value") == ident:
        d = p.child_by_field_name("declarator")
        return d is not None and re.fullmatch(r"(?i)width|w|logical_?warp(_?size)?|group_?size", node_text(d)) is not None
    return False


def _collect_uses(a: Analysis, names: set[str]) -> dict[str, list]:
    uses: dict[str, list] = {n: [] for n in names}
    for ident in nodes_of_types(a.root, ("identifier",)):
        name = node_text(ident)
        if name in uses:
            parent = ident.parent
            if parent is not None and parent.type in ("preproc_def", "init_declarator", "enumerator", "optional_parameter_declaration") and parent.child_by_field_name("name" if parent.type in ("preproc_def", "enumerator") else "declarator") == ident:
                continue
            uses[name].append(ident)
    # uses inside macro bodies and #if conditions are text, not tree nodes
    for node in nodes_of_types(a.root, ("preproc_arg",)):
        text = node_text(node)
        for name in names:
            if re.search(rf"\b{re.escape(name)}\b", text):
                uses[name].append(node)
    return uses


def _constants(a: Analysis) -> None:
    for name, defs in a.cmap.local.items():
        for c in defs:
            kind = a.warp_const_kind(c)
            if kind is None or c.node is None:
                continue
            a.warp_consts[name] = c
    if not a.warp_consts:
        return
    uses = _collect_uses(a, set(a.warp_consts))
    for name, c in a.warp_consts.items():
        kind = a.warp_const_kind(c)
        used = uses.get(name, [])
        contexts = []
        host_use = False
        for u in used:
            if u.type == "preproc_arg":
                contexts.append("preproc")
                continue
            contexts.append(_use_context(u))
            if not a.is_device(u):
                host_use = True
        # llama.cpp style logical warps: a constant passed as a shuffle width (or as the default
        # of a template parameter named `width`), or a file whose shuffles pass an explicit
        # width of 32, marks deliberate 32-lane groups
        if (any(x == "width" for x in contexts) or any(_is_width_default(u) for u in used if u.type != "preproc_arg")
                or a.file_logical32()) and a.knows_amd():
            continue
        strong = any(x in ("width", "runtime") for x in contexts) and any(
            a.is_device(u) for u in used if u.type != "preproc_arg")
        fix = None
        what = {"size": "a 32-lane warp size", "log": "log2 of a 32-lane warp (5)", "mask": "a 32-lane lane mask (31)"}[kind]
        value_node = c.node
        if kind == "size":
            new = "warpSize"
        elif kind == "log":
            new = "(__ffs(warpSize) - 1)"
        else:
            new = "(warpSize - 1)"
        const_use = any(x in ("const", "preproc") for x in contexts)
        if c.kind in ("define", "const") and value_node is not None and _literal_or_simple(value_node):
            vspan = _value_span(a.ctx, value_node)
            old = _clean(node_text(value_node))
            if c.kind == "const" and _file_scope(c.decl):
                fix = None  # a namespace-scope const cannot read the device variable warpSize
            elif const_use or host_use:
                fix = Fix(f"replace {old} with {new} (display only: used where a constant expression or host code needs it)",
                          (Edit(vspan, new),), "display-only")
            else:
                fix = Fix(f"replace {old} with {new}", (Edit(vspan, new),), "safe")
        suggestion = (
            "Device code: use `warpSize` (64 on CDNA/gfx9, 32 on RDNA). Where a compile-time value is needed "
            "(array sizes, template arguments; `warpSize` is not constexpr on ROCm 7), select it per target: "
            "`#if defined(__GFX8__) || defined(__GFX9__)` -> 64 else 32, or pass it as a template parameter chosen on the host "
            "from `hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`."
        )
        where = c.node if c.kind == "template-default" else c.decl
        if c.kind == "define":  # the directive without its newline and comment
            where = _define_span(a.ctx, c)
        a.hit("PTL101", where, fields={"name": name, "value": _clean(node_text(c.node)), "what": what},
              fix=fix, suggestion=suggestion, confidence="high" if strong else "medium")
        a.reported_consts.add(name)


def _literal_or_simple(node) -> bool:
    return parse_int(_clean(node_text(node))) is not None


def _clean(text: str) -> str:
    """A macro body without its comments and surrounding blanks."""
    return re.sub(r"/\*.*?\*/|//.*$", "", text, flags=re.S).strip()


def _value_span(ctx, node) -> Span:
    """Span of a definition's value without a trailing comment (macro bodies keep them)."""
    span = ctx.node_span(node)
    text = node_text(node)
    body = _clean(text)
    lead = len(text) - len(text.lstrip())
    if span.start_line == span.end_line or "\n" not in text[: lead + len(body)]:
        return Span(span.start_line, span.start_col + lead, span.start_line, span.start_col + lead + len(body))
    return span


def _define_span(ctx, c: Const) -> Span:
    s, e = ctx.node_span(c.decl), _value_span(ctx, c.node)
    return Span(s.start_line, s.start_col, e.end_line, e.end_col)


def _file_scope(decl) -> bool:
    return decl is not None and enclosing(decl, ("function_definition", "lambda_expression")) is None


def _template_args(a: Analysis) -> None:
    """`tiled_partition<32>`, `thread_block_tile<32>`, and `32` passed to a warp-named
    template parameter of a template defined in this file."""
    params: dict[str, list[str]] = {}
    for tmpl in nodes_of_types(a.root, ("template_declaration",)):
        plist = tmpl.child_by_field_name("parameters")
        inner = [c for c in tmpl.named_children if c.type in ("function_definition", "class_specifier", "struct_specifier", "declaration")]
        if plist is None or not inner:
            continue
        name_node = None
        target = inner[0]
        if target.type == "function_definition":
            d = target.child_by_field_name("declarator")
            while d is not None and d.child_by_field_name("declarator") is not None:
                d = d.child_by_field_name("declarator")
            name_node = d
        else:
            name_node = target.child_by_field_name("name")
        if name_node is None:
            continue
        names = []
        for p in plist.named_children:
            decl = p.child_by_field_name("declarator")
            names.append(node_text(decl) if decl is not None else "")
        params[node_text(name_node).split("::")[-1]] = names
    for targs in nodes_of_types(a.root, ("template_argument_list",)):
        owner = targs.parent
        if owner is None:
            continue
        name_node = owner.child_by_field_name("name")
        tname = node_text(name_node).split("::")[-1] if name_node is not None else ""
        args = [c for c in targs.named_children]
        for i, arg in enumerate(args):
            inner = arg.named_children[0] if arg.type == "type_descriptor" and arg.named_child_count == 1 else arg
            v, how = a.value_of(inner) if inner.type in ("number_literal", "identifier", "parenthesized_expression") else (None, "none")
            if v != 32 or how in ("local-warp",):
                continue
            if tname in ("tiled_partition", "thread_block_tile"):
                continue  # below, from the text (tree-sitter often reads `tile<32> x` as comparisons)
            elif tname in params and i < len(params[tname]) and WARP_SIZE_NAME.match(params[tname][i] or "-"):
                a.hit("PTL101", inner, fields={"name": f"{tname}<...{params[tname][i]}...>", "value": node_text(inner), "what": "a 32-lane warp size"},
                      confidence="medium",
                      suggestion="Pass the device's warp size: a template argument chosen on the host from "
                                 "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)` (64 on CDNA, 32 on RDNA).")


def _tiles(a: Analysis) -> None:
    data = a.ctx.data
    for ident in nodes_of_types(a.root, ("identifier", "type_identifier", "field_identifier")):
        if node_text(ident) not in ("tiled_partition", "thread_block_tile"):
            continue
        m = re.match(rb"\s*<\s*([A-Za-z_]\w*|\d+)\s*>", data[ident.end_byte: ident.end_byte + 80])
        if not m:
            continue
        arg = m.group(1).decode()
        v = parse_int(arg)[0] if arg[0].isdigit() else a.cmap.value(arg)
        if v != 32 or arg in a.warp_consts:
            continue
        line = ident.end_point[0] + 1
        start = a.ctx.byte_col_to_col(line, ident.end_point[1] + m.start(1))
        where = Span(line, start, line, start + len(arg))
        a.hit("PTL101", where, fields={"name": node_text(ident), "value": arg, "what": "a 32-thread tile taken as the warp"},
              confidence="medium", targets={"rocm": "warning"},
              suggestion="A 32-thread tile is legal on HIP, but it is half a wavefront on CDNA: if the tile stands for "
                         "the hardware warp (lane/warp ids, per-warp buffers), use `tiled_partition(block, warpSize)` "
                         "or keep 32 deliberately and size everything per 32-thread tile.")


# ---- PTL102: lane and warp index arithmetic ----------------------------------------------

# names that say "lane" or "warp": what a 32 computed from a thread index is stored in when
# it is a lane or warp id (a tile row/column or a half-block index is stored under other names)
_ID_NAME = re.compile(r"(?i)warp|lane|wave|^wid$|^w_?id$|^laneid$")


def _feeds_shuffle(a: Analysis, node, name: str) -> bool:
    """Is variable `name` passed to a shuffle in the function around `node` (a source lane)?"""
    fn = a.function_of(node)
    if fn is None:
        return False
    for call in nodes_of_types(fn, ("call_expression",)):
        if SHUFFLE.search(callee_name(call) or ""):
            args = call.child_by_field_name("arguments")
            if args is not None and any(node_text(i) == name for i in nodes_of_types(args, ("identifier",))):
                return True
    return False


def _assigned_name(node) -> str | None:
    """The variable an expression (possibly inside more arithmetic) is stored in."""
    p = node.parent
    while p is not None and p.type in ("parenthesized_expression", "cast_expression", "binary_expression"):
        if p.type == "binary_expression" and node_text(p.child_by_field_name("operator")) in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
            return None
        p = p.parent
    if p is None:
        return None
    if p.type == "init_declarator":
        d = p.child_by_field_name("declarator")
        return node_text(d) if d is not None else None
    if p.type == "assignment_expression":
        d = p.child_by_field_name("left")
        return node_text(d) if d is not None else None
    return None


def _index_arith(a: Analysis) -> None:
    for be in nodes_of_types(a.root, ("binary_expression",)):
        op_node = be.child_by_field_name("operator")
        if op_node is None:
            continue
        op = node_text(op_node)
        if op not in ("/", "%", "&", ">>", "*", "==", "!=", "<<"):
            continue
        if not a.is_device(be):
            _host_arith(a, be, op)
            continue
        left, right = be.child_by_field_name("left"), be.child_by_field_name("right")
        facts = a.facts_of(be)
        if op in ("==", "!="):
            for x, y in ((left, right), (right, left)):
                v, how = a.value_of(y)
                if v == 31 and how != "local-warp" and (a.is_lane_expr(x, facts) or LANE_NAMES.match(node_text(strip_parens(x)) or "")):
                    a.hit("PTL102", be, fields={"expr": node_text(be), "meaning": "the last lane of a 32-lane warp"},
                          fix=a.replace(y, "(warpSize - 1)", "compare with warpSize - 1"), confidence="medium")
            continue
        if op == "*":
            for x, y in ((left, right), (right, left)):
                v, how = a.value_of(y)
                xs = strip_parens(x)
                if v == 32 and how != "local-warp" and xs is not None and xs.type == "identifier" and node_text(xs) in facts.warp \
                        and _ID_NAME.search(node_text(xs)):
                    a.hit("PTL102", be, fields={"expr": node_text(be), "meaning": "the first thread of a 32-lane warp"},
                          fix=a.replace(y, "warpSize", "use warpSize") if how == "literal" else None, confidence="medium")
            continue
        if op == "<<":
            continue
        v, how = a.value_of(right)
        if how == "local-warp" and not _names_reported_const(a, right):
            continue  # a logical warp: the constant is the group size
        want = {"/": 32, "%": 32, "&": 31, ">>": 5}[op]
        if v != want:
            continue
        target = _assigned_name(be)
        if target and not _ID_NAME.search(target) and not _feeds_shuffle(a, be, target):
            continue  # `row = tid / 32; col = tid % 32; ip = tid / 32`: a 32-wide data split
        lstrip = strip_parens(left)
        is_blockdim = lstrip is not None and lstrip.type == "field_expression" and node_text(lstrip.child_by_field_name("argument")) == "blockDim"
        if op in ("/", ">>") and is_blockdim:
            meaning = "the number of 32-lane warps per block"
        elif a.is_thread(left, facts):
            meaning = {"/": "a warp id for 32-lane warps", ">>": "a warp id for 32-lane warps", "%": "a lane id for 32-lane warps", "&": "a lane id for 32-lane warps"}[op]
        else:
            continue
        if a.logical32(be):
            continue
        new = {"/": "warpSize", "%": "warpSize", "&": "(warpSize - 1)", ">>": "warpSize"}[op]
        fix = None
        if how == "literal":
            if op == ">>":
                fix = Fix("divide by warpSize", (Edit(a.ctx.node_span(op_node), "/"), Edit(a.ctx.node_span(right), "warpSize")), "safe")
            else:
                fix = a.replace(right, new, f"use {new}")
        if fix is not None and _in_const_context(be):
            fix = Fix(fix.description + " (display only: a constant expression is needed here)", fix.edits, "display-only")
        a.hit("PTL102", be, fields={"expr": node_text(be), "meaning": meaning}, fix=fix,
              confidence="medium", suggestion=_origin_note(a, right, how))
    _strides_and_shared(a)


def _names_reported_const(a: Analysis, node) -> bool:
    """Does `node` name a file-local warp constant reported as PTL101? Its device uses in lane
    and warp-id math are reported too (the fix is at the definition; the uses are where the
    64-lane wave changes the result)."""
    node = strip_parens(node)
    idents = [node] if node is not None and node.type == "identifier" else nodes_of_types(node, ("identifier",)) if node is not None else []
    return any(node_text(i) in a.reported_consts for i in idents)


def _origin_note(a: Analysis, node, how: str) -> str | None:
    if how == "local-warp":
        names = sorted({node_text(i) for i in ([strip_parens(node)] if strip_parens(node).type == "identifier" else nodes_of_types(node, ("identifier",)))} & a.reported_consts)
        lines = [str(a.cmap.lookup(n).line) for n in names if a.cmap.lookup(n) is not None]
        return (f"`{'`, `'.join(names)}` is the file's 32-lane warp size (line {', '.join(lines)}, reported there): "
                "once it follows the wave size this expression is right on AMD too.")
    if how in ("outside",):
        names = [node_text(i) for i in ([strip_parens(node)] if strip_parens(node).type == "identifier" else nodes_of_types(node, ("identifier",)))]
        consts = [a.cmap.lookup(n) for n in names if a.cmap.lookup(n) is not None]
        where = consts[0].origin if consts and consts[0].origin not in ("", "header") else "an included header"
        return f"`{node_text(node)}` comes from {Path(where).name if where != 'an included header' else where} (as an AMD build sees it): make that definition vendor-aware or use `warpSize`."
    if how == "const":
        return f"`{node_text(node)}` is a constant of value 32 defined in this file; here it is used as the warp size."
    return None


def _in_const_context(node) -> bool:
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
        step = update.child_by_field_name("right")
        v, how = a.value_of(step)
        if v == 32 and how != "local-warp":
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
        if how == "local-warp" or not ((op == "/" and v == 32) or (op == ">>" and v == 5)) or a.logical32(arr):
            continue
        a.hit("PTL102", size, fields={"expr": node_text(size), "meaning": "one shared-memory slot per 32-lane warp"},
              targets={"rocm": "warning"}, confidence="medium",
              suggestion="Sized per 32-lane warp this is an upper bound on wave64 (half the slots stay unused): keep the "
                         "allocation, but index it with `threadIdx.x / warpSize` and loop over `blockDim.x / warpSize` "
                         "warps, or size it per target with the `__GFX9__` selector.")


PER_LANE_NAME = re.compile(r"(?i)per_?lane|per_?warp_?thread|elems?_?per_?lane")


def _count_definitions(a: Analysis) -> None:
    """`#define WARPS (NUM_THREADS / 32)`, `constexpr int kNumWarps = kThreads / 32;`,
    `constexpr int kDimsPerLane = HEAD_DIM / 32;`: counts of 32-lane warps (or of values per
    lane of one) fixed at definition."""
    for name, defs in a.cmap.local.items():
        counts = WARP_COUNT_NAME.match(name) is not None
        per_lane = PER_LANE_NAME.search(name) is not None
        if not (counts or per_lane):
            continue
        for c in defs:
            if c.node is None:
                continue
            text = _clean(node_text(c.node))
            m = re.fullmatch(r"\(?\s*([A-Za-z_][\w:]*|\d+)\s*(/|>>)\s*(\d+)\s*\)?", text)
            if not m or (m.group(2) == "/" and m.group(3) != "32") or (m.group(2) == ">>" and m.group(3) != "5"):
                continue
            meaning = "a number of 32-lane warps" if counts else "a count per lane of a 32-lane warp"
            where = _define_span(a.ctx, c) if c.kind == "define" else c.decl
            a.hit("PTL102", where, fields={"expr": f"{name} = {text}", "meaning": meaning}, confidence="medium",
                  suggestion="Divide by the wave size of the target: `warpSize` at run time, or a per-target constant "
                             "(`__GFX9__` -> 64) where a constant expression is needed.")


# ---- PTL103: shuffle reductions that start at 16 -----------------------------------------

def _shuffles_in(node) -> list:
    return [c for c in nodes_of_types(node, ("call_expression",)) if SHUFFLE.search(callee_name(c) or "")]


def _has_width(call, a: Analysis) -> bool:
    """An explicit width argument, or a member shuffle of a cooperative-groups tile
    (`g.shfl_down(v, i)`), whose width is the tile's (PTL101 reports `tiled_partition<32>`)."""
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "field_expression":
        return True
    name = callee_name(call)
    args = call.child_by_field_name("arguments")
    n = len(args.named_children) if args is not None else 0
    if name in SHFL_SYNC_ARGS:
        return n >= SHFL_SYNC_ARGS[name]
    return False


def _reductions(a: Analysis, others: bool) -> None:
    for loop in nodes_of_types(a.root, ("for_statement",)):
        if not a.is_device(loop):
            continue
        init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
        body = loop.child_by_field_name("body")
        if init is None or cond is None or update is None or body is None:
            continue
        shuffles = _shuffles_in(body)
        if not shuffles or any(_has_width(c, a) for c in shuffles):
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
            if ((cop == "<=" and bv == 4) or (cop == "<" and bv == 5)) and bhow != "local-warp":
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
            fix = a.replace(start, "warpSize / 2", "start the butterfly at warpSize / 2",
                            "unsafe" if others else "safe")
            a.hit("PTL103", start, fields={"start": node_text(start), "shape": "halves from 16"}, fix=fix, confidence="high" if how == "literal" else "medium",
                  suggestion=_origin_note(a, start, how) if how in ("outside", "const") else None)
        elif doubles and v == 1 and cond.type == "binary_expression":
            op = node_text(cond.child_by_field_name("operator"))
            bound = cond.child_by_field_name("right")
            bv, bhow = a.value_of(bound)
            if (op == "<" and bv == 32) or (op == "<=" and bv == 16):
                if bhow == "local-warp":
                    continue
                fix = a.replace(bound, "warpSize" if op == "<" else "warpSize / 2", "run the loop up to warpSize",
                                "unsafe" if others else "safe") if bhow == "literal" else None
                a.hit("PTL103", bound, fields={"start": node_text(cond), "shape": "doubles up to 32"}, fix=fix, confidence="high" if bhow == "literal" else "medium")
    # unrolled chains: shuffles with offsets 16, 8, 4, 2, 1 in one function
    chains: dict[int, dict[int, object]] = {}
    for call in nodes_of_types(a.root, ("call_expression",)):
        name = callee_name(call)
        if name not in SHFL_SYNC_ARGS or not any(k in name for k in ("xor", "down", "up")) or not a.is_device(call):
            continue
        if _has_width(call, a) or enclosing(call, ("for_statement",)) is not None and _loop_var_offset(call):
            continue
        args = call.child_by_field_name("arguments").named_children
        off = args[2] if name.endswith("_sync") and len(args) > 2 else (args[1] if len(args) > 1 and not name.endswith("_sync") else None)
        v, how = a.value_of(off) if off is not None else (None, "none")
        fn = a.function_of(call)
        if v in (16, 8, 4, 2, 1) and fn is not None:
            chains.setdefault(fn.start_byte, {}).setdefault(v, off)
    for offs in chains.values():
        if 16 in offs and 8 in offs and 32 not in offs:
            a.hit("PTL103", offs[16], fields={"start": "16", "shape": "is unrolled 16, 8, 4, 2, 1"}, confidence="high",
                  suggestion="Unrolled for 32 lanes: on wave64 add a first step with offset 32 (under "
                             "`#if defined(__GFX9__)`), or write the loop `for (int o = warpSize / 2; o > 0; o >>= 1)`.")


def _loop_var_offset(call) -> bool:
    loop = enclosing(call, ("for_statement",))
    init = loop.child_by_field_name("initializer") if loop is not None else None
    if init is None:
        return False
    names = {node_text(d.child_by_field_name("declarator")) for d in nodes_of_types(init, ("init_declarator",))}
    return any(node_text(i) in names for i in nodes_of_types(call, ("identifier",)))


# ---- PTL104 / PTL105 / PTL106: masks ------------------------------------------------------

def _mask32(a: Analysis, node, facts: FunctionFacts) -> tuple[str, str] | None:
    """(kind, text) when a mask expression has a 32-bit type: literal, cast, 32-bit variable."""
    node = strip_parens(node)
    if node is None:
        return None
    text = node_text(node)
    compact = re.sub(r"\s+", "", text)
    lit = _literal(node)
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
        if name in facts.int32 and name not in facts.ballot:
            return ("variable", name)
    return None


def _masks(a: Analysis) -> None:
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
        facts = a.facts_of(call)
        if name in MASK_FUNCS and name not in shims:
            args = call.child_by_field_name("arguments").named_children
            if args:
                m = _mask32(a, args[0], facts)
                if m is not None:
                    kind, text = m
                    if kind == "local-const":
                        if text in reported_consts:
                            continue
                        reported_consts.add(text)
                        c = a.cmap.lookup(text)
                        a.hit("PTL104", c.decl if c.kind != "define" else _define_span(a.ctx, c), fields={"func": name, "mask": f"`{text}` ({_clean(node_text(c.node))})"},
                              confidence="high", suggestion=_MASK_SUGGESTION)
                    else:
                        a.hit("PTL104", args[0], fields={"func": name, "mask": f"`{text}`"},
                              confidence="high" if kind == "literal" else "medium", suggestion=_MASK_SUGGESTION)
                else:
                    _mask_parameter(a, call, name, args[0], mask_params)
        if name in BALLOT_CALLS:
            _ballot_sink(a, call, facts)
        if name in BIT32_INTRINSICS:
            _bit_intrinsic(a, call, name, facts)
        if name in AVAILABILITY and not a.guards.defines_for_amd(name):
            sev, text = AVAILABILITY[name]
            state = "does not exist in HIP" if sev == "error" else "is undeclared in HIP before ROCm 6.2 (opt-in there, default from 7.0)"
            a.hit("PTL110", call, fields={"func": name, "state": state}, targets={"rocm": sev}, suggestion=text,
                  confidence="high")
    # mask constants inside macro bodies: `#define SHFL(v, o) __shfl_xor_sync(0xffffffff, v, o)`
    for node in nodes_of_types(a.root, ("preproc_function_def", "preproc_def")):
        value = node.child_by_field_name("value")
        if value is None:
            continue
        for m in re.finditer(r"\b(__\w+_sync|__syncwarp)\s*\(\s*(0[xX][fF]{8}[uU]?|~0[uU]?|-1[uU]|uint32_t\s*\(\s*-1\s*\)|\(unsigned\)\s*-1)\s*[,)]", node_text(value)):
            if m.group(1) in MASK_FUNCS and m.group(1) not in shims:
                a.hit("PTL104", node, fields={"func": m.group(1), "mask": f"`{m.group(2)}` (in the macro body)"},
                      confidence="high", suggestion=_MASK_SUGGESTION)
                break
    # `__activemask() == 0xffffffff`
    for be in nodes_of_types(a.root, ("binary_expression",)):
        if node_text(be.child_by_field_name("operator")) not in ("==", "!=") or not a.is_device(be):
            continue
        l, r = strip_parens(be.child_by_field_name("left")), strip_parens(be.child_by_field_name("right"))
        for x, y in ((l, r), (r, l)):
            if x is not None and x.type == "call_expression" and callee_name(x) in BALLOT_CALLS:
                lit = _literal(y)
                if lit is not None and lit[0] == FULL32 and "ll" not in lit[1]:
                    a.hit("PTL104", y, fields={"func": callee_name(x), "mask": f"`{node_text(y)}`"},
                          message=f"`{callee_name(x)}()` compared with the 32-bit `{node_text(y)}`: HIP's mask is 64-bit, so on a full wave64 it is never equal.",
                          confidence="high", suggestion="Compare with the full mask of the running wave: `__ballot(1)` "
                          "(or `~0ull` when the block is a multiple of 64 threads).")
    _masks_passed_to_parameters(a, mask_params)
    _shifts(a)


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
        if default is not None:
            m = _mask32(a, default, FunctionFacts())
            if m is not None:
                a.hit("PTL104", default, fields={"func": func, "mask": f"`{m[1]}` (the default of parameter `{node_text(arg)}`)"},
                      confidence="high", suggestion=_MASK_SUGGESTION)
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
                a.hit("PTL104", args[index], fields={"func": func, "mask": f"`{m[1]}` (passed as parameter `{param}` of `{fname}`)"},
                      confidence="high" if m[0] == "literal" else "medium", suggestion=_MASK_SUGGESTION)


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
        risky = any(i.parent is not None and i.parent.type == "unary_expression" and node_text(i.parent)[:1] in "~-" for i in uses)
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
            return a.is_thread(node.child_by_field_name("left"), facts) and (_is_warpsize(right) or "warpSize" in node_text(right))
        if op in ("+", "-"):
            return False
    if node.type == "identifier":
        return node_text(node) in facts.lane or LANE_NAMES.match(node_text(node)) is not None
    return is_thread_builtin(node) or a.is_lane_expr(node, facts)


def _shifts(a: Analysis) -> None:
    for be in nodes_of_types(a.root, ("binary_expression",)):
        op = node_text(be.child_by_field_name("operator"))
        if op not in ("<<", ">>") or not a.is_device(be):
            continue
        left, right = strip_parens(be.child_by_field_name("left")), be.child_by_field_name("right")
        facts = a.facts_of(be)
        ltext = re.sub(r"\s+", "", node_text(left))
        lit = _literal(left)
        if op == "<<":
            narrow = (lit is not None and "ll" not in lit[1] and lit[0] in (1, FULL32)) or ltext in ("~0u", "~0U", "~0", "-1u")
            if not narrow or not _shift_count_is_lane(a, right, facts):
                continue
            new = "1ull" if (lit is not None and lit[0] == 1) else "~0ull"
            a.hit("PTL106", be, fields={"expr": node_text(be)}, fix=a.replace(left, new, f"shift a 64-bit {new}"), confidence="medium",
                  suggestion="Shift a 64-bit one: `1ull << lane` (lanes 32-63 exist on wave64); keep the mask in `unsigned long long`.")
        else:
            # `0xffffffff >> (32 - n)`: a lane mask built for 32 lanes
            r = strip_parens(right)
            if lit is not None and lit[0] == FULL32 and "ll" not in lit[1] and r is not None and r.type == "binary_expression" \
                    and node_text(r.child_by_field_name("operator")) == "-" and a.value_of(r.child_by_field_name("left"))[0] == 32:
                a.hit("PTL106", be, fields={"expr": node_text(be)}, confidence="medium",
                      suggestion="Build the mask in 64 bits from the wave size: `~0ull >> (64 - n)` (n > 0), with lane counts from `warpSize`.")


# ---- PTL107: warpSize as a constant ----------------------------------------------------

def _warpsize_const(a: Analysis) -> None:
    for ident in nodes_of_types(a.root, ("identifier", "type_identifier")):
        name = node_text(ident)
        if name in ("__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"):
            a.hit("PTL107", ident, fields={"use": f"`{name}`", "place": "code", "reason": _AMDGCN_REASON}, confidence="high", suggestion=_WS_SUGGESTION)
            continue
        if name != "warpSize":
            continue
        ctx_kind = _use_context(ident)
        bracket = ctx_kind != "const" and _in_template_brackets(a.ctx.data, ident)
        if ctx_kind == "const" or bracket:
            where = "a template argument" if bracket else _const_context_name(ident)
            a.hit("PTL107", ident, fields={"use": "`warpSize`", "place": where, "reason": _WS_REASON}, confidence="high", suggestion=_WS_SUGGESTION)
    # `#if` conditions are text
    from portlint.cuda.includes import file_directives
    from portlint.model import Span

    for d in a.ctx.fact(file_directives):
        if d.kind not in ("if", "elif") or not re.search(r"\bwarpSize\b|__AMDGCN_WAVEFRONT_SIZE", d.rest):
            continue
        word = "warpSize" if re.search(r"\bwarpSize\b", d.rest) else re.search(r"__AMDGCN_WAVEFRONT_SIZE\w*", d.rest).group()
        line, col = d.first, -1
        for n in range(d.first, d.last + 1):
            col = a.ctx.line_text(n).find(word)
            if col >= 0:
                line = n
                break
        col = max(col, 0)
        a.hit("PTL107", Span(line, col + 1, line, col + 1 + len(word)), fields={"use": f"`{word}`", "place": "an #if condition", "reason": _WS_REASON if word == "warpSize" else _AMDGCN_REASON},
              confidence="high", suggestion=_WS_SUGGESTION)


def _in_template_brackets(data: bytes, ident) -> bool:
    """`Foo<warpSize>` / `Foo<T, warpSize>` that tree-sitter read as comparisons."""
    line_start = data.rfind(b"\n", 0, ident.start_byte) + 1
    line_end = data.find(b"\n", ident.end_byte)
    before = data[line_start: ident.start_byte].decode("utf-8", "replace")
    after = data[ident.end_byte: line_end if line_end != -1 else len(data)].decode("utf-8", "replace")
    return bool(re.search(r"[A-Za-z_]\w*\s*<\s*(?:[^<>;()]*,\s*)?$", before) and re.match(r"\s*(?:,[^<>;()]*)?>(?![>=])", after))


def _const_context_name(ident) -> str:
    cur = ident.parent
    while cur is not None:
        if cur.type in CONST_CONTEXT_PARENTS:
            return {"array_declarator": "an array bound", "template_argument_list": "a template argument", "case_statement": "a case label",
                    "static_assert_declaration": "a static_assert", "alignas_qualifier": "alignas", "bitfield_clause": "a bit-field width",
                    "enumerator": "an enumerator"}[cur.type]
        if cur.type == "declaration":
            return "a constexpr initialiser"
        cur = cur.parent
    return "a constant expression"


_WS_REASON = "`warpSize` is not a constant expression on ROCm 7 (nor on CUDA)"
_AMDGCN_REASON = "`__AMDGCN_WAVEFRONT_SIZE` is deprecated in ROCm 7 / recent LLVM and going away"
_WS_SUGGESTION = (
    "ROCm 7 made `warpSize` a runtime value (and CUDA never had it constant); `__AMDGCN_WAVEFRONT_SIZE` is deprecated. "
    "For a compile-time wave size use `#if defined(__GFX8__) || defined(__GFX9__)` -> 64 else 32 in device code, or a "
    "template parameter chosen on the host from `hipDeviceAttributeWarpSize`; loop bounds may keep `warpSize`."
)


# ---- PTL108: host code assuming 32-thread warps ------------------------------------------

_NOT_A_WARP_UNIT = re.compile(r"tile|elem|byte|chunk|vec|pack|scale|row|col|bits", re.I)


def _host_arith(a: Analysis, be, op: str) -> None:
    if op not in ("*", "/"):
        return
    left, right = strip_parens(be.child_by_field_name("left")), strip_parens(be.child_by_field_name("right"))
    pairs = ((left, right), (right, left)) if op == "*" else ((left, right),)
    for x, y in pairs:
        v, how = a.value_of(y)
        if v != 32 or how == "local-warp" or x is None:
            continue
        # a 32 whose name says what it counts (MX scaling blocks: `chunkElems`, tiles,
        # bytes) is that unit, not a warp
        if y.type in ("identifier", "qualified_identifier") and _NOT_A_WARP_UNIT.search(node_text(y)):
            continue
        xname = node_text(x)
        if op == "*" and x.type in ("identifier", "field_expression") and WARP_COUNT_NAME.match(xname.split(".")[-1].split("->")[-1]):
            a.hit("PTL108", be, fields={"expr": node_text(be), "meaning": "threads for a number of 32-lane warps"},
                  confidence="medium", suggestion=_HOST_SUGGESTION)
        elif op == "/" and x.type in ("identifier", "field_expression") and THREAD_COUNT_NAME.search(xname.split(".")[-1].split("->")[-1]) \
                and not re.search(r"tile|elem|byte|row|col", xname, re.I):
            a.hit("PTL108", be, fields={"expr": node_text(be), "meaning": "warps per block for 32-lane warps"},
                  confidence="medium", suggestion=_HOST_SUGGESTION)


def _host_macros(a: Analysis) -> None:
    seen_lines: set[int] = set()
    for ident in nodes_of_types(a.root, ("identifier",)):
        if node_text(ident) == "C10_WARP_SIZE" and not a.is_device(ident) and a.spaces.function_at(ident.start_byte) is not None:
            if ident.start_point[0] in seen_lines:
                continue
            seen_lines.add(ident.start_point[0])
            a.hit("PTL108", ident, fields={"expr": "C10_WARP_SIZE", "meaning": "a compile-time warp size in host code"},
                  confidence="medium", suggestion="In host code ask the device: `at::cuda::warp_size()` (PyTorch) or "
                  "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`; a host-side constant cannot know "
                  "whether the GPU runs wave64 (CDNA) or wave32 (RDNA).")


_HOST_SUGGESTION = (
    "Query the warp size once on the host (`cudaDeviceGetAttribute(&ws, cudaDevAttrWarpSize, dev)` -> "
    "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`, `props.warpSize`, `at::cuda::warp_size()`) "
    "and derive block sizes and per-warp counts from it; on CDNA a wave is 64 threads."
)


# ---- PTL109: spin waits that need independent thread scheduling ------------------------

_ELECTION = re.compile(r"(?:==\s*0\b(?!\.)|\b0\s*==)")
_THREADISH = re.compile(r"threadIdx|thread_rank|lane|\btid\b|__lane_id")


def _spin_waits(a: Analysis) -> None:
    for loop in nodes_of_types(a.root, ("while_statement", "do_statement", "for_statement")):
        if not a.is_device(loop):
            continue
        cond = loop.child_by_field_name("condition")
        if cond is None:
            continue
        ctext = node_text(cond)
        if not re.search(r"\batomicCAS\w*\s*\(|\batomicExch\w*\s*\(", ctext):
            continue
        # one elected lane per warp (`if (lane == 0)`) does not contend inside a warp
        guard = enclosing(loop, ("if_statement",))
        elected = False
        while guard is not None:
            gc = guard.child_by_field_name("condition")
            gtext = node_text(gc) if gc is not None else ""
            if _ELECTION.search(gtext) and _THREADISH.search(gtext) and "||" not in gtext:
                elected = True
                break
            guard = enclosing(guard, ("if_statement",))
        if elected:
            continue
        a.hit("PTL109", loop, fields={"what": "A per-thread spin lock"}, confidence="low",
              suggestion="Lanes of one AMD wavefront execute in lockstep: when one lane holds the lock and another "
                         "spins, the holder never reaches its release. Elect one lane per wave (`if (lane == 0)`) to take "
                         "the lock, or use a lock-free atomic update.")


# ---- PTL111: cub warp primitives ---------------------------------------------------------

def _cub(a: Analysis, has_32_assumption: bool) -> None:
    if not has_32_assumption:
        return
    for ident in nodes_of_types(a.root, ("identifier", "type_identifier")):
        name = node_text(ident)
        # CUB_LOG_WARP_THREADS has no hipify counterpart: PTL602 reports it
        if name in ("CUB_PTX_WARP_THREADS", "CUB_WARP_THREADS"):
            a.hit("PTL111", ident, fields={"what": f"`{name}` beside 32-lane arithmetic"}, confidence="medium",
                  suggestion="hipify renames it to `HIPCUB_WARP_THREADS`, the device wavefront (64 on CDNA); the 32s "
                             "elsewhere in this file then disagree with it. Derive every per-warp size from the same constant.")
    if not has_32_assumption:
        return
    for targs in nodes_of_types(a.root, ("template_argument_list",)):
        owner = targs.parent
        if owner is None or owner.type not in ("qualified_identifier", "template_type", "template_function"):
            continue
        text = node_text(owner)
        m = re.match(r"(?:::)?(?:cub|hipcub)::(Warp(?:Reduce|Scan|Exchange|Load|Store))\s*<", text)
        if m is None and owner.parent is not None:
            m = re.match(r"(?:::)?(?:cub|hipcub)::(Warp(?:Reduce|Scan|Exchange|Load|Store))\s*<", node_text(owner.parent))
        if m is None:
            continue
        n_args = len(targs.named_children)
        default_width = n_args == 1 if m.group(1) in ("WarpReduce", "WarpScan") else n_args <= 2
        if default_width:
            a.hit("PTL111", owner, fields={"what": f"`cub::{m.group(1)}` with the default logical width"}, confidence="medium",
                  suggestion="hipCUB's default logical warp is the device wave (64 on CDNA) while this file indexes per-warp "
                             "storage by 32 lanes: pass the width explicitly (`hipcub::WarpReduce<T, 32>` to keep 32-lane groups) "
                             "or size `TempStorage[BLOCK / warp]` and the warp id with the same `HIPCUB_WARP_THREADS`.")


# ---- the file-level analysis -------------------------------------------------------------

def warp_findings(ctx) -> Analysis:
    """ctx.fact(warp_findings): every PTL1xx hit of the file, computed once."""
    a = Analysis(ctx)
    _constants(a)
    _template_args(a)
    _tiles(a)
    _index_arith(a)
    _count_definitions(a)
    lane_hits = any(h.rule in ("PTL101", "PTL102") for h in a.hits)
    _reductions(a, lane_hits)
    _masks(a)
    _warpsize_const(a)
    _host_macros(a)
    _spin_waits(a)
    _cub(a, lane_hits or any(h.rule == "PTL103" for h in a.hits))
    # one finding per line: `constexpr int warps = threads / 32;` at namespace scope is a
    # warp-count definition (PTL102), not also host launch math (PTL108)
    lines102 = {_start_line(h.where) for h in a.hits if h.rule == "PTL102"}
    a.hits = [h for h in a.hits if not (h.rule == "PTL108" and _start_line(h.where) in lines102)]
    return a


def _start_line(where) -> int:
    return where.start_line if isinstance(where, Span) else where.start_point[0] + 1


def _report(ctx, rule: str) -> None:
    for h in ctx.fact(warp_findings).hits:
        if h.rule == rule:
            ctx.report(h.where, fix=h.fix, suggestion=h.suggestion, confidence=h.confidence, targets=h.targets,
                       message=h.message, **h.fields)


@detector("PTL101", tokens=("32", "5", "31", "0x1f", "0x1F"))
def hardcoded_warp_size_constant(ctx) -> None:
    """`#define WARP_SIZE 32`, `constexpr int kWarp = 32`, template defaults, `tiled_partition<32>`."""
    _report(ctx, "PTL101")


@detector("PTL102", tokens=("threadIdx", "lane", "tid", "thread_rank", "blockDim", "warp", "Warp", "WARP"))
def warp_index_arithmetic_literal(ctx) -> None:
    """`tid % 32`, `tid & 31`, `tid >> 5`, `blockDim.x / 32`, `lane == 31`, per-warp shared arrays;
    calls of library helpers that compute a warp index that way (rules/cuda_warp/names.toml)."""
    from portlint.cuda.name_tables import first_per_line

    _report(ctx, "PTL102")
    if "canonical_" in ctx.text:
        for span, name, row in first_per_line(ctx, "PTL102", kinds=("warp-index-helper",)):
            ctx.report(span, expr=name + "()", meaning="a warp index as `threadIdx.x / 32`", suggestion=row.advise(name),
                       confidence="high")


@detector("PTL103", tokens=("shfl", "shuffle", "SHFL", "Shfl"))
def shuffle_reduction_assumes_32_lanes(ctx) -> None:
    """Butterfly and tree reductions whose first offset is 16."""
    _report(ctx, "PTL103")


@detector("PTL104", tokens=("_sync", "__syncwarp", "activemask", "__ballot"))
def lane_mask_32_bit_in_sync_intrinsic(ctx) -> None:
    """32-bit masks passed to `__shfl_*_sync`, `__ballot_sync`, `__syncwarp`; `__activemask() == 0xffffffff`."""
    _report(ctx, "PTL104")


@detector("PTL105", tokens=("ballot", "activemask", "match_"))
def ballot_result_narrowed_to_32_bit(ctx) -> None:
    """Ballot and active masks stored in 32-bit types or fed to `__popc`/`__ffs`/`__clz`/`__brev`."""
    _report(ctx, "PTL105")


@detector("PTL106", tokens=("<<", ">>"))
def lane_mask_shift_overflows_32_bit(ctx) -> None:
    """`1u << lane`, `0xffffffff >> (32 - n)`."""
    _report(ctx, "PTL106")


@detector("PTL107", tokens=("warpSize", "__AMDGCN_WAVEFRONT_SIZE"))
def warpsize_used_as_compile_time_constant(ctx) -> None:
    """`warpSize` in array bounds, template arguments, constexpr, static_assert, #if."""
    _report(ctx, "PTL107")


@detector("PTL108", tokens=("32", "C10_WARP_SIZE", "warp", "Warp", "WARP"))
def host_assumes_32_thread_warps(ctx) -> None:
    """Host launch math with 32 threads per warp."""
    _report(ctx, "PTL108")


@detector("PTL109", tokens=("atomicCAS", "atomicExch"))
def relies_on_independent_thread_scheduling(ctx) -> None:
    """Per-thread spin locks that deadlock without independent thread scheduling (opt-in)."""
    _report(ctx, "PTL109")


@detector("PTL110", tokens=("__syncwarp", "__activemask", "__match_", "__reduce_", "__uni_sync", "cooperative_groups", "cg::"))
def warp_builtin_availability(ctx) -> None:
    """CUDA warp builtins HIP lacks or only has from 6.2/7.0; cooperative-groups APIs HIP's
    cooperative groups do not declare (rules/cuda_warp/names.toml)."""
    from portlint.cuda.name_tables import first_per_line

    if any(t in ctx.text for t in ("__syncwarp", "__activemask", "__match_", "__reduce_", "__uni_sync")):
        _report(ctx, "PTL110")
    if "cooperative_groups" not in ctx.text and "cg::" not in ctx.text:
        return
    for span, name, row in first_per_line(ctx, "PTL110", kinds=("cooperative-groups",)):
        ctx.report(span, func=name, state="does not exist in HIP's cooperative groups", suggestion=row.advise(name),
                   targets={"rocm": "error"}, confidence="high")


@detector("PTL111", tokens=("Warp", "CUB_"))
def cub_warp_primitive_width(ctx) -> None:
    """`cub::WarpReduce<T>` default width beside per-32 indexing; `CUB_PTX_WARP_THREADS`."""
    _report(ctx, "PTL111")
