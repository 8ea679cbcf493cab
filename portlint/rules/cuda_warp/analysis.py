"""The shared analysis of the wave64 family (PTL101-PTL111): the vocabulary of warp names and
intrinsics, one `Analysis` per file (values of operands, per-function thread/lane/warp facts,
logical 32-lane groups, where the file has an AMD path) and the helpers several rules use.
Each rule module adds its hits to the Analysis; `findings.warp_findings` runs them in order."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from portlint.analyses.cuda.constants import Const, constant_map, eval_int, parse_int
from portlint.frontends.cuda.guards import guard_map
from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.frontends.cuda.spaces import space_map
from portlint.analyses.cuda.warp_facts import BALLOT_CALLS, FactBuilder, FunctionFacts, callee_name, is_thread_builtin, strip_parens
from portlint.core.model import Edit, Fix, Span

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
    root: str = ""  # the construct the hit stems from (portlint.findings.roots folds by it)
    root_site: bool = False  # the hit is at that construct (the `#define` of a mask constant)


# ---- helpers --------------------------------------------------------------------------------

def literal(node):
    """(value, suffix) of a number literal node (through parentheses), else None."""
    node = strip_parens(node)
    if node is None or node.type != "number_literal":
        return None
    return parse_int(node_text(node))


def cast_operand(node):
    """The operand of `static_cast<T>(x)` or a functional cast `T(x)` to an integer type."""
    if node is None or node.type != "call_expression":
        return None
    fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    if fn is None or args is None or args.named_child_count != 1:
        return None
    text = node_text(fn)
    if re.fullmatch(r"static_cast\s*<[^<>]*>|(?:std::)?u?int(?:32|64)_t|unsigned|int|size_t", text):
        return args.named_children[0]
    return None


def constant_function_called(node) -> str | None:
    """`WarpThreads` for a call without arguments, `dh::WarpThreads()` (a constexpr
    function of the constant map may return a constant)."""
    args = node.child_by_field_name("arguments")
    if args is None or args.named_child_count != 0:
        return None
    name = callee_name(node)
    return name or None


def is_warpsize(node) -> bool:
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
        lit = literal(node)
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
        if node.type == "call_expression":
            name = constant_function_called(node)
            c = self.cmap.lookup(name) if name else None
            if c is None or c.value is None or c.kind != "function":
                return None, "none"
            if name in self.warp_consts:
                return c.value, "local-warp"
            return c.value, "outside" if c.line == 0 else "const"
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
            # the whole definition: parameters (`int tid`) and a constructor's member
            # initialisers (`offset(base + tid % 32)`) are the function's too
            self.facts[key] = FactBuilder(fn, self.is_lane_expr, self.is_warp_expr).build()
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
        inner = cast_operand(node)
        if inner is not None:
            return self.is_thread(inner, facts)
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
                if is_warpsize(r) or (r is not None and r.type == "binary_expression" and "warpSize" in node_text(r)):
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
        if op == "/" and (is_warpsize(right) or self.value_of(right)[0] == 32):
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
            from portlint.frontends.cuda.includes import file_directives

            self._logical["amd"] = bool(_HIP_CODE.search(self.ctx.text)) or any(
                d.kind.startswith(("if", "elif")) and _AMD_TEST.search(d.rest) for d in self.ctx.fact(file_directives)
            )
        return self._logical["amd"]

    def file_logical32(self) -> bool:
        """Do the file's shuffles pass an explicit width of 32 (and none a different width)?"""
        if "file" not in self._logical:
            widths = set()
            for call in nodes_of_types(self.root, ("call_expression",)):
                if callee_name(call) in SHFL_SYNC_ARGS and has_width(call, self):
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
                    if name in SHFL_SYNC_ARGS and has_width(call, self):
                        width = call.child_by_field_name("arguments").named_children[-1]
                        if self.value_of(width)[0] == 32 and not self.names_reported_const(width):
                            found = True
                            break
            self._logical[key] = found
        return self._logical[key]

    def names_reported_const(self, node) -> bool:
        """Does `node` name a file-local warp constant reported as PTL101 (the file's own
        32-lane warp size, not a deliberate group width)?"""
        node = strip_parens(node)
        idents = [node] if node is not None and node.type == "identifier" else nodes_of_types(node, ("identifier",)) if node is not None else []
        return any(node_text(i) in self.reported_consts for i in idents)

    def uses_warp_primitives(self) -> bool:
        """Does the file use a warp-level primitive (a shuffle, vote, ballot, `*_sync` warp
        intrinsic, lane id, cub warp primitive, cooperative-groups tile)? Without one, a
        count of 32-thread groups is a logical grouping (load tiling through shared memory)."""
        if "prims" not in self._logical:
            found = bool(re.search(r"\bWarp(?:Reduce|Scan|Exchange|Load|Store)\s*<|\btiled_partition\b|\bthread_block_tile\b", self.ctx.text))
            if not found:
                for call in nodes_of_types(self.root, ("call_expression",)):
                    name = callee_name(call)
                    if SHUFFLE.search(name) or name in MASK_FUNCS or name in BALLOT_CALLS or name in ("__lane_id", "__activemask"):
                        found = True
                        break
            self._logical["prims"] = found
        return self._logical["prims"]

    def block_is_warp(self) -> bool:
        """Does the file assert that a block is one 32-thread warp
        (`static_assert(kBlockSize == 32, ...)` on a thread-count name)?"""
        if "block" not in self._logical:
            found = False
            for sa in nodes_of_types(self.root, ("static_assert_declaration",)):
                cond = sa.child_by_field_name("condition")
                text = node_text(cond) if cond is not None else ""
                for m in re.finditer(r"\b([A-Za-z_]\w*)\s*==\s*32\b|\b32\s*==\s*([A-Za-z_]\w*)\b", text):
                    if THREAD_COUNT_NAME.search(m.group(1) or m.group(2)):
                        found = True
            self._logical["block"] = found
        return self._logical["block"]

    # -- reporting --
    def hit(self, rule: str, where, **kw) -> None:
        key = (where.start_byte, where.end_byte, rule) if hasattr(where, "start_byte") else (id(where), 0, rule)
        if key in self._reported_nodes:
            return
        self._reported_nodes.add(key)
        self.hits.append(Hit(rule, where, **kw))

    def replace(self, node, text: str, description: str, applicability: str = "safe") -> Fix:
        return Fix(description, (Edit(self.ctx.node_span(node), text),), applicability)


# ---- helpers several rules share ---------------------------------------------------------

def use_context(ident) -> str:
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


def clean(text: str) -> str:
    """A macro body without its comments and surrounding blanks."""
    return re.sub(r"/\*.*?\*/|//.*$", "", text, flags=re.S).strip()


def value_span(ctx, node) -> Span:
    """Span of a definition's value without a trailing comment (macro bodies keep them)."""
    span = ctx.node_span(node)
    text = node_text(node)
    body = clean(text)
    lead = len(text) - len(text.lstrip())
    if span.start_line == span.end_line or "\n" not in text[: lead + len(body)]:
        return Span(span.start_line, span.start_col + lead, span.start_line, span.start_col + lead + len(body))
    return span


def define_span(ctx, c: Const) -> Span:
    s, e = ctx.node_span(c.decl), value_span(ctx, c.node)
    return Span(s.start_line, s.start_col, e.end_line, e.end_col)


def has_width(call, a: Analysis) -> bool:
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


def origin_note(a: Analysis, node, how: str) -> str | None:
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
