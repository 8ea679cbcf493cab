"""tree-sitter-cuda parsing and the one-walk dispatch used by the engine."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache


@lru_cache(maxsize=1)
def cuda_language():
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Language(tree_sitter_cuda.language())


def parse_cuda(data: bytes):
    import tree_sitter

    tree = tree_sitter.Parser(cuda_language()).parse(data)
    _remember(tree)
    return tree


# Braces nested deeper than this are read as if they were not there. tree-sitter-cuda reads
# `{{...}}` both as blocks and as initializer lists; past some 500 levels it gives up on the
# whole function, and every finding in it was lost without a word (1,000 nested `{}` before
# an inline `asm` hid the asm). 200 levels is far beyond real code.
MAX_BRACE_DEPTH = 200
_SKIP = re.compile(rb'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_BRACE_OR_SKIP = re.compile(rb'[{}]|' + _SKIP.pattern, re.S)


def flatten_deep_braces(data: bytes, limit: int = MAX_BRACE_DEPTH) -> tuple[bytes, int]:
    """`data` with each `{`/`}` (outside comments, strings and character literals) deeper
    than `limit` levels replaced by `;` (an empty statement: a space leaves `{{` followed by
    a long blank run, which tree-sitter-cuda cannot recover from), and how many were: byte
    offsets, lines and columns stay those of the file. One pass, linear."""
    if data.count(b"{") <= limit:
        return data, 0
    out = bytearray(data)
    depth = blanked = 0
    for m in _BRACE_OR_SKIP.finditer(data):
        tok = m.group()
        if tok == b"{":
            depth += 1
            if depth > limit:
                out[m.start()] = 0x3B
                blanked += 1
        elif tok == b"}":
            if depth > limit:
                out[m.start()] = 0x3B
                blanked += 1
            depth = max(0, depth - 1)
    return (bytes(out), blanked) if blanked else (data, 0)


def _walk(root, wanted) -> list:
    """Nodes under `root` (itself included) whose type is in `wanted`, in source order:
    one pre-order walk with a tree cursor. (A tree-sitter query does the same walk in C
    but costs ~25 ms to compile and more to hand its captures back; the cursor walk is
    faster on a 2,000-line file and costs nothing up front.)"""
    out = []
    cursor = root.walk()
    while True:
        node = cursor.node
        if node.type in wanted:
            out.append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out


# The node types the CUDA analyses ask of a whole file or of a subtree (measured on the bench
# corpus and the CUDA-only tree: a subtree asking for a type missing here is walked on its own). The
# index of a tree collects them all in one walk; a type asked for that is missing here joins the
# set for the rest of the process, so the list is a head start, not a limit.
_INDEXED: set[str] = {
    "array_declarator", "assignment_expression", "binary_expression", "call_expression", "declaration",
    "do_statement", "enumerator", "field_declaration", "field_identifier", "for_statement", "function_definition",
    "gnu_asm_expression", "identifier", "init_declarator", "lambda_expression", "launch_bounds",
    "namespace_identifier", "optional_parameter_declaration", "parameter_declaration", "preproc_arg", "preproc_def",
    "preproc_function_def", "preproc_include", "template_argument_list", "template_declaration", "type_identifier",
    "while_statement",
}


class _TreeIndex:
    """The nodes of many types in one tree, from a single walk.

    The analyses ask some twenty type sets of the root and thousands of a function body or
    an expression; walking the tree for each was the largest cost of a CUDA scan. The index
    walks once for all the types in `_INDEXED` and answers each call by slicing its lists
    (by byte range for a subtree). Answers are the same nodes in the same order as a walk of
    their own."""

    def __init__(self, tree):
        self.tree = tree  # held so the root's id cannot be reused while the index lives
        self.covered: frozenset[str] = frozenset()
        self.by_type: dict[str, list[tuple[int, object]]] = {}
        self.starts: dict[str, list[int]] = {}

    def _build(self, node_types: tuple[str, ...]) -> None:
        _INDEXED.update(node_types)
        self.covered = frozenset(_INDEXED)
        self.by_type, self.starts = {}, {}
        for i, node in enumerate(_walk(self.tree.root_node, self.covered)):
            self.by_type.setdefault(node.type, []).append((i, node))

    def _items(self, sub, node_type: str) -> list[tuple[int, object]]:
        entries = self.by_type.get(node_type)
        if not entries or sub is None:
            return entries or []
        starts = self.starts.get(node_type)
        if starts is None:
            starts = self.starts[node_type] = [n.start_byte for _, n in entries]
        s, e = sub.start_byte, sub.end_byte
        out = []
        for item in entries[bisect_left(starts, s):bisect_right(starts, e)]:
            n = item[1]
            ns, ne = n.start_byte, n.end_byte
            if ne > e:
                continue
            # a node with the subtree's own range may be an ancestor, and a zero-width node
            # on its edge a neighbour: only those need the walk up
            if (ns == ne or (ns == s and ne == e)) and not _inside(n, sub):
                continue
            out.append(item)
        return out

    def nodes(self, sub, node_types: tuple[str, ...]) -> list:
        """Nodes of `node_types` in the whole tree (sub=None) or under `sub` (itself included)."""
        if not self.covered.issuperset(node_types):
            self._build(node_types)
        if len(node_types) == 1:
            return [n for _, n in self._items(sub, node_types[0])]
        picked = [item for t in set(node_types) for item in self._items(sub, t)]
        picked.sort(key=lambda item: item[0])
        return [n for _, n in picked]


def _inside(node, sub) -> bool:
    s, e = sub.start_byte, sub.end_byte
    cur = node
    while cur is not None and s <= cur.start_byte and cur.end_byte <= e:
        if cur == sub:
            return True
        cur = cur.parent
    return False


_INDEXES: dict[int, _TreeIndex] = {}  # root node id -> index; a handful of live trees at most


def _remember(tree) -> None:
    if len(_INDEXES) >= 4:
        _INDEXES.clear()
    _INDEXES[tree.root_node.id] = _TreeIndex(tree)


def nodes_of_types(root, node_types: tuple[str, ...]) -> list:
    """Every node of the given types under root (root included), in source order."""
    if not node_types:
        return []
    node_types = tuple(node_types)
    top, sub = root, None
    if root.parent is not None:
        sub = root
        while top.parent is not None:
            top = top.parent
    index = _INDEXES.get(top.id)
    if index is not None and (sub is None or index.covered.issuperset(node_types)):
        return index.nodes(sub, node_types)
    return _walk(root, set(node_types))


def node_text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "?": "?",
                   "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{1,8})|([0-7]{1,3})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))", re.S)


def _unescape(text: str) -> str | None:
    """One C escape sequence's character, or None for one this reader does not know."""
    m = _ESCAPE.fullmatch(text)
    if m is None:
        return None
    hexa, octal, u4, u8, simple = m.groups()
    if simple is not None:
        return _SIMPLE_ESCAPES.get(simple)
    code = int(hexa or u4 or u8, 16) if octal is None else int(octal, 8)
    return chr(code) if code <= 0x10FFFF else None


def c_string_value(node) -> str | None:
    """The value of a C/C++ string the compiler sees: a literal with any encoding prefix
    (`u8"..."`, `L"..."`) and its escapes decoded, a raw string, adjacent literals joined
    (`"nccl" "Comm"`), or one in parentheses. None for anything else (a macro, a call, an
    escape this reader does not know)."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "concatenated_string":
        parts = [c_string_value(c) for c in node.named_children]
        return None if not parts or any(p is None for p in parts) else "".join(parts)
    if node.type == "raw_string_literal":
        return "".join(node_text(c) for c in node.named_children if c.type == "raw_string_content")
    if node.type != "string_literal":
        return None
    out = []
    for c in node.named_children:
        if c.type == "string_content":
            out.append(node_text(c))
        elif c.type == "escape_sequence":
            ch = _unescape(node_text(c))
            if ch is None:
                return None
            out.append(ch)
        else:
            return None
    return "".join(out)


def enclosing(node, types: tuple[str, ...] | set[str]):
    """Nearest ancestor of one of `types`, or None."""
    cur = node.parent
    while cur is not None:
        if cur.type in types:
            return cur
        cur = cur.parent
    return None
