"""One walk of a Python module, shared by the engine and every analysis of the file.

`ast.walk` is a generator over `ast.iter_child_nodes`, which costs a few microseconds a
node; the engine's dispatch, the import table, the traced-value analysis, the ROCm-reach
analysis and several detectors each used to walk the whole module again. `nodes(module)`
lists the nodes once, in `ast.walk`'s order (breadth first), and `parents(module)` maps
each node to its parent; both are kept for the module scanned last (a scan handles one
file at a time per process), so a second caller gets the same list."""

from __future__ import annotations

import ast

_AST = ast.AST
_last_module: ast.AST | None = None
_last_nodes: list[ast.AST] = []
_last_parents: dict[ast.AST, ast.AST] | None = None


def parse(data: bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse` of scanned bytes, the one way portlint parses Python; raises SyntaxError.

    The parser's SyntaxWarnings (`1if x else y`, `1()`) are silenced: Python would print
    them on stderr with the scanned line in them, raw."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(data, filename=filename, type_comments=False)


def children(node: ast.AST) -> list[ast.AST]:
    """The direct child nodes, in `ast.iter_child_nodes` order."""
    out = []
    for name in node._fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            for x in value:
                if isinstance(x, _AST):
                    out.append(x)
        elif isinstance(value, _AST):
            out.append(value)
    return out


def _walk(root: ast.AST) -> list[ast.AST]:
    out = [root]
    append = out.append
    i = 0
    while i < len(out):
        node = out[i]
        i += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for x in value:
                    if isinstance(x, _AST):
                        append(x)
            elif isinstance(value, _AST):
                append(value)
    return out


def walk(root: ast.AST) -> list[ast.AST]:
    """Every node under `root` (itself first) in `ast.walk` order, as a new list."""
    return _walk(root)


def adopt(module: ast.AST, all_nodes: list[ast.AST]) -> None:
    """Take `all_nodes` (from `walk(module)`, computed elsewhere) as the module's node list,
    so the next `nodes(module)` does not walk it again."""
    global _last_module, _last_nodes, _last_parents
    _last_module, _last_nodes, _last_parents = module, all_nodes, None


def nodes(module: ast.AST) -> list[ast.AST]:
    """Every node under `module` (itself first) in `ast.walk` order. Do not mutate."""
    global _last_module, _last_nodes, _last_parents
    if module is not _last_module:
        _last_module, _last_nodes, _last_parents = module, _walk(module), None
    return _last_nodes


def parents(module: ast.AST) -> dict[ast.AST, ast.AST]:
    """child -> parent for every node under `module`. Do not mutate."""
    global _last_parents
    all_nodes = nodes(module)
    if _last_parents is None:
        table: dict[ast.AST, ast.AST] = {}
        for parent in all_nodes:
            for name in parent._fields:
                value = getattr(parent, name, None)
                if value.__class__ is list:
                    for x in value:
                        if isinstance(x, _AST):
                            table[x] = parent
                elif isinstance(value, _AST):
                    table[value] = parent
        _last_parents = table
    return _last_parents
