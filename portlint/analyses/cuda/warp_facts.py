"""Per-function facts the wave64 rules (PTL1xx) share: which variables hold a thread index,
a lane id, a warp id, a ballot mask, or a 32-bit integer.

The facts are name- and flow-based within one function: a variable initialised or assigned
from `threadIdx.x`, `__lane_id()`, `thread_rank()` or another thread-index variable is a
thread index; one computed as `tid % 32`, `tid & 31`, `tid % warpSize` is a lane id; one
computed as `tid / 32`, `tid >> 5` is a warp id. Conventional names (`tid`, `lane`,
`lane_id`, `warp_id`, `wid`) count too."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from portlint.frontends.cuda.parse import node_text, nodes_of_types

TID_NAMES = re.compile(r"^(tid|tidx|ltid|local_tid|thread_?id|threadid|thread_?idx|thread_?index|lid|tx|t_?id|thread|thr)$", re.I)
LANE_NAMES = re.compile(r"^(k?lane(_?id|_?idx|_?index|_?no)?|laneid|lane_in_warp|thread_in_warp|warp_?lane|tid_in_warp|lane_?ix)$", re.I)
WARP_ID_NAMES = re.compile(r"^(warp(_?id|_?idx|_?index|_?no|_?num)?|wid|w_?id|warpid|warp_?rank)$", re.I)
# a variable named like a data coordinate is a data index even when computed from threadIdx
DATA_NAMES = re.compile(r"(row|col|^[a-z]$|^[a-z]\d$|elem|pixel|offset|^pos|^idx$|^index$|addr|ptr|^i\d|^j\d|^k\d)", re.I)
INT32_TYPES = re.compile(r"^(unsigned|unsigned int|int|signed|signed int|uint32_t|int32_t|uint|unsigned int32_t|std::uint32_t|std::int32_t|u32|uint32|lane_mask_t32)$")
BALLOT_CALLS = {"__ballot", "__ballot_sync", "__activemask", "__match_any", "__match_any_sync", "__match_all_sync", "__match_all"}


@dataclass
class FunctionFacts:
    tid: set[str] = field(default_factory=set)
    lane: set[str] = field(default_factory=set)
    warp: set[str] = field(default_factory=set)
    int32: set[str] = field(default_factory=set)  # declared with a 32-bit integer type
    int32_decl: dict[str, object] = field(default_factory=dict)  # name -> its type node
    ballot: dict[str, object] = field(default_factory=dict)  # name -> the ballot call it holds
    params: set[str] = field(default_factory=set)  # the function's parameters


def callee_name(call) -> str:
    fn = call.child_by_field_name("function")
    if fn is None:
        return ""
    text = node_text(fn)
    text = text.split("<", 1)[0]
    return re.split(r"::|\.|->", text)[-1].strip()


def strip_parens(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def is_thread_builtin(node) -> bool:
    """`threadIdx.x` (any dimension), `__lane_id()`, `g.thread_rank()`."""
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "field_expression":
        arg = node.child_by_field_name("argument")
        return arg is not None and node_text(arg) == "threadIdx"
    if node.type == "call_expression":
        return callee_name(node) in ("__lane_id", "thread_rank", "laneid", "lane_id", "get_lane_id")
    return False


def _assignments(body):
    """(target name, value node, declared type node or None, declaration node) in order."""
    for node in nodes_of_types(body, ("init_declarator", "assignment_expression", "parameter_declaration", "declaration")):
        if node.type == "init_declarator":
            target, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            decl = node.parent
            tnode = decl.child_by_field_name("type") if decl is not None else None
            if target is not None and target.type == "identifier":
                yield node_text(target), value, tnode, decl
        elif node.type == "assignment_expression":
            target, value = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = node.child_by_field_name("operator")
            if target is not None and target.type == "identifier" and op is not None and node_text(op) == "=":
                yield node_text(target), value, None, None
        elif node.type == "parameter_declaration":
            target, tnode = node.child_by_field_name("declarator"), node.child_by_field_name("type")
            if target is not None and target.type == "identifier":
                yield node_text(target), None, tnode, node
        else:  # a declaration without initialiser: `unsigned mask;`
            tnode = node.child_by_field_name("type")
            for d in node.children_by_field_name("declarator"):
                if d.type == "identifier":
                    yield node_text(d), None, tnode, node


def _type_text(decl, tnode) -> str:
    if tnode is None:
        return ""
    words = [node_text(c) for c in decl.children if c.type in ("sized_type_specifier", "primitive_type", "type_identifier", "qualified_identifier")] if decl is not None else []
    text = " ".join(words) if words else node_text(tnode)
    return re.sub(r"\s+", " ", text.replace("const ", "")).strip()


class FactBuilder:
    """Builds FunctionFacts for one function (a fixed point over its parameters and
    assignments)."""

    def __init__(self, body, is_lane_expr, is_warp_expr):
        self.body = body
        self.is_lane_expr = is_lane_expr
        self.is_warp_expr = is_warp_expr

    def build(self) -> FunctionFacts:
        facts = FunctionFacts()
        assigns = list(_assignments(self.body))
        for name, value, tnode, decl in assigns:
            if decl is not None and decl.type == "parameter_declaration":
                facts.params.add(name)
            if tnode is not None and INT32_TYPES.match(_type_text(decl, tnode)) and not _is_pointer(decl, name):
                facts.int32.add(name)
                facts.int32_decl.setdefault(name, tnode)
            if TID_NAMES.match(name):
                facts.tid.add(name)
            if LANE_NAMES.match(name):
                facts.lane.add(name)
            if WARP_ID_NAMES.match(name):
                facts.warp.add(name)
        named = set(facts.tid | facts.lane | facts.warp)
        values: dict[str, list] = {}
        for name, value, _t, _d in assigns:
            if value is not None:
                values.setdefault(name, []).append(strip_parens(value))
        for name, vs in values.items():
            for v in vs:
                if v.type == "call_expression" and callee_name(v) in BALLOT_CALLS:
                    facts.ballot.setdefault(name, v)
        for _ in range(3):
            before = (len(facts.tid), len(facts.lane), len(facts.warp))
            for name, vs in values.items():
                # a variable also assigned data (`i0 = 0`, a load) is not a thread index, and
                # data-like names (`row`, `col`, single letters) never are
                if name in named or DATA_NAMES.search(name):
                    continue
                if all(self.is_lane_expr(v, facts) for v in vs):
                    facts.lane.add(name)
                    facts.tid.add(name)
                elif all(self.is_warp_expr(v, facts) for v in vs):
                    facts.warp.add(name)
                elif all(mentions_thread(v, facts) for v in vs):
                    facts.tid.add(name)
            if before == (len(facts.tid), len(facts.lane), len(facts.warp)):
                break
        return facts


def _is_pointer(decl, name: str) -> bool:
    if decl is None:
        return False
    for d in decl.children_by_field_name("declarator"):
        if d.type in ("pointer_declarator", "reference_declarator", "array_declarator") or (
            d.type == "init_declarator" and d.child_by_field_name("declarator") is not None
            and d.child_by_field_name("declarator").type in ("pointer_declarator", "reference_declarator", "array_declarator")
        ):
            if name in node_text(d):
                return True
    return False


_OPAQUE = ("subscript_expression", "call_expression", "pointer_expression", "conditional_expression")


def mentions_thread(node, facts: FunctionFacts) -> bool:
    """Is the expression index arithmetic on a thread index (threadIdx.*, a thread call, a
    thread variable)? A value loaded from memory (`x[threadIdx.x]`, `*p`) or returned by a
    call is data, even when the address depends on the thread."""
    if node is None:
        return False
    if is_thread_builtin(node):
        return True
    if node.type == "identifier":
        return node_text(node) in facts.tid | facts.lane
    if node.type in _OPAQUE:
        return False
    if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) in ("<<", ">>"):
        return mentions_thread(node.child_by_field_name("left"), facts)  # a shift count is not the value
    return any(mentions_thread(c, facts) for c in node.named_children)
