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

    return tree_sitter.Parser(cuda_language()).parse(data)


@lru_cache(maxsize=64)
def _query(node_types: tuple[str, ...]):
    import tree_sitter

    pattern = "[" + " ".join(f"({t})" for t in node_types) + "] @n"
    return tree_sitter.Query(cuda_language(), pattern)


def nodes_of_types(root, node_types: tuple[str, ...]) -> list:
    """Every node of the given types under root, in source order: one traversal, in C."""
    if not node_types:
        return []
    import tree_sitter

    captures = tree_sitter.QueryCursor(_query(tuple(sorted(node_types)))).captures(root)
    nodes = captures.get("n", [])
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return nodes


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
