"""One walk of a Python module, shared by the engine and every analysis of the file.

`ast.walk` is a generator over `ast.iter_child_nodes`, which costs a few microseconds a
node; the engine's dispatch, the import table, the traced-value analysis, the ROCm-reach
analysis and several detectors each used to walk the whole module again. `nodes(module)`
lists the nodes once, in `ast.walk`'s order (breadth first), `parents(module)` maps each
node to its parent and `of_class(module, ast.Call)` lists the nodes of given classes; all
are kept for the module scanned last (a scan handles one file at a time per process), so
a second caller gets the same list."""

from __future__ import annotations

import ast

_AST = ast.AST
_last_module: ast.AST | None = None
_last_nodes: list[ast.AST] = []
_last_parents: dict[ast.AST, ast.AST] | None = None
_last_classes: tuple[dict[type, list[int]], dict[type, list[ast.AST]]] | None = None  # positions, lists by class


def parse(data: bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse` of scanned bytes, the one way portlint parses Python; raises SyntaxError.

    The parser's SyntaxWarnings (`1if x else y`, `1()`) are silenced: Python would print
    them on stderr with the scanned line in them, raw."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(data, filename=filename, type_comments=False)


# fields that hold identifiers, strings, numbers or constants, never a node (the ASDL
# grammar's `identifier`, `string`, `int` and `constant` fields): not read by the walks
_SCALAR_FIELDS = {
    "FunctionDef": {"name", "type_comment"}, "AsyncFunctionDef": {"name", "type_comment"}, "ClassDef": {"name"},
    "For": {"type_comment"}, "AsyncFor": {"type_comment"}, "With": {"type_comment"}, "AsyncWith": {"type_comment"},
    "Assign": {"type_comment"}, "AnnAssign": {"simple"}, "ImportFrom": {"module", "level"},
    "Global": {"names"}, "Nonlocal": {"names"}, "Constant": {"value", "kind"}, "Attribute": {"attr"}, "Name": {"id"},
    "FormattedValue": {"conversion"}, "comprehension": {"is_async"}, "ExceptHandler": {"name"},
    "arg": {"arg", "type_comment"}, "keyword": {"arg"}, "alias": {"name", "asname"}, "MatchSingleton": {"value"},
    "MatchStar": {"name"}, "MatchMapping": {"rest"}, "MatchClass": {"kwd_attrs"}, "MatchAs": {"name"},
    "TypeIgnore": {"lineno", "tag"},
}
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def _node_fields(cls: type) -> tuple[str, ...]:
    """The fields of an `ast` class that can hold child nodes, in `_fields` order."""
    fields = _NODE_FIELDS.get(cls)
    if fields is None:
        scalar = _SCALAR_FIELDS.get(cls.__name__, ()) if cls.__module__ == "ast" else ()
        fields = _NODE_FIELDS[cls] = tuple(f for f in cls._fields if f not in scalar)
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """The direct child nodes, in `ast.iter_child_nodes` order."""
    out = []
    for name in _NODE_FIELDS.get(node.__class__) or _node_fields(node.__class__):
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
    known = _NODE_FIELDS
    i = 0
    while i < len(out):
        node = out[i]
        i += 1
        fields = known.get(node.__class__)
        if fields is None:
            fields = _node_fields(node.__class__)
        for name in fields:
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
    global _last_module, _last_nodes, _last_parents, _last_classes
    _last_module, _last_nodes, _last_parents, _last_classes = module, all_nodes, None, None


def nodes(module: ast.AST) -> list[ast.AST]:
    """Every node under `module` (itself first) in `ast.walk` order. Do not mutate."""
    global _last_module, _last_nodes, _last_parents, _last_classes
    if module is not _last_module:
        _last_module, _last_nodes, _last_parents, _last_classes = module, _walk(module), None, None
    return _last_nodes


def of_class(module: ast.AST, *classes: type) -> list[ast.AST]:
    """The nodes of `nodes(module)` whose class is one of `classes` (exactly: `ast.Call`,
    not a subclass), in `ast.walk` order. One pass files every node's position by class,
    the first time any class is asked for. Do not mutate."""
    global _last_classes
    all_nodes = nodes(module)
    if _last_classes is None:
        table: dict[type, list[int]] = {}
        get = table.get
        for i, cls in enumerate(map(type, all_nodes)):
            bucket = get(cls)
            if bucket is None:
                table[cls] = [i]
            else:
                bucket.append(i)
        _last_classes = (table, {})
    positions, lists = _last_classes
    if len(classes) == 1:
        found = lists.get(classes[0])
        if found is None:
            found = lists[classes[0]] = [all_nodes[i] for i in positions.get(classes[0], ())]
        return found
    return [all_nodes[i] for i in sorted(i for cls in set(classes) for i in positions.get(cls, ()))]


def node_classes(module: ast.AST) -> list[type]:
    """The classes of the nodes under `module` (each once)."""
    of_class(module, ast.Module)  # files the positions by class
    return list(_last_classes[0])


def parents(module: ast.AST) -> dict[ast.AST, ast.AST]:
    """child -> parent for every node under `module`. Do not mutate."""
    global _last_parents
    all_nodes = nodes(module)
    if _last_parents is None:
        table: dict[ast.AST, ast.AST] = {}
        known = _NODE_FIELDS
        for parent in all_nodes:
            fields = known.get(parent.__class__)
            if fields is None:
                fields = _node_fields(parent.__class__)
            for name in fields:
                value = getattr(parent, name, None)
                if value.__class__ is list:
                    for x in value:
                        if isinstance(x, _AST):
                            table[x] = parent
                elif isinstance(value, _AST):
                    table[value] = parent
        _last_parents = table
    return _last_parents
