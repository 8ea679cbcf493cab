"""tree-sitter-cuda parsing and the one-walk dispatch used by the engine."""

from __future__ import annotations

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


@lru_cache(maxsize=64)
def _query(node_types: tuple[str, ...]):
    import tree_sitter

    pattern = "[" + " ".join(f"({t})" for t in node_types) + "] @n"
    return tree_sitter.Query(cuda_language(), pattern)


def _captures(root, node_types: tuple[str, ...]) -> list:
    import tree_sitter

    nodes = tree_sitter.QueryCursor(_query(node_types)).captures(root).get("n", [])
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return nodes


class _TreeIndex:
    """The nodes of every type asked for at the root of one tree, from a single query.

    Running a query costs a walk of the whole tree in C whatever the types; the analyses ask
    the root for some twenty different type sets per file. The index runs one query for the
    union of every type set asked for so far in this process (the union settles after the
    first file) and answers each root-level call by filtering that list, so a file's tree
    is walked once instead of once per call. Answers are the same nodes in the same order
    as a query of their own."""

    def __init__(self, tree):
        self.tree = tree  # held so the root's id cannot be reused while the index lives
        self.covered: frozenset[str] = frozenset()
        self.by_type: dict[str, list[tuple[int, object]]] = {}

    def nodes(self, root, node_types: tuple[str, ...]) -> list:
        if not self.covered.issuperset(node_types):
            _ROOT_TYPES.update(node_types)
            self.covered = frozenset(_ROOT_TYPES)
            self.by_type = {}
            for i, node in enumerate(_captures(root, tuple(sorted(self.covered)))):
                self.by_type.setdefault(node.type, []).append((i, node))
        if len(node_types) == 1:
            return [n for _, n in self.by_type.get(node_types[0], ())]
        picked = [item for t in set(node_types) for item in self.by_type.get(t, ())]
        picked.sort(key=lambda item: item[0])
        return [n for _, n in picked]


_ROOT_TYPES: set[str] = set()
_INDEXES: dict[int, _TreeIndex] = {}  # root node id -> index; a handful of live trees at most


def _remember(tree) -> None:
    if len(_INDEXES) >= 4:
        _INDEXES.clear()
    _INDEXES[tree.root_node.id] = _TreeIndex(tree)


def nodes_of_types(root, node_types: tuple[str, ...]) -> list:
    """Every node of the given types under root (root included), in source order."""
    if not node_types:
        return []
    if root.parent is None:
        index = _INDEXES.get(root.id)
        if index is not None:
            return index.nodes(root, tuple(node_types))
    return _captures(root, tuple(sorted(node_types)))


def node_text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def enclosing(node, types: tuple[str, ...] | set[str]):
    """Nearest ancestor of one of `types`, or None."""
    cur = node.parent
    while cur is not None:
        if cur.type in types:
            return cur
        cur = cur.parent
    return None
