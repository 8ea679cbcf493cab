"""One walk of a Python module, shared by the engine and every analysis of the file.

`ast.walk` is a generator over `ast.iter_child_nodes`, which costs a few microseconds a
node; the engine's dispatch, the import table, the traced-value analysis, the ROCm-reach
analysis and several detectors each used to walk the whole module again. `nodes(module)`
lists the nodes once, in `ast.walk`'s order (breadth first), `parents(module)` maps each
node to its parent and `of_class(module, ast.Call)` lists the nodes of given classes; all
are kept for the last few modules asked about (a scan handles one file at a time per
process, and reads a few others' traced maps on the way), so a second caller gets the
same list."""

from __future__ import annotations

import ast
from itertools import islice

_AST = ast.AST


def parse(data: bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse` of scanned bytes, the one way portlint parses Python; raises SyntaxError.

    The parser's SyntaxWarnings (`1if x else y`, `1()`) are silenced: Python would print
    them on stderr with the scanned line in them, raw."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(data, filename=filename, type_comments=False)


# Expressions nested deeper than this (a 500-term `x + x + ...` is 500 levels of BinOp) are
# cut where they pass it: the rules' recursive walks spend a few Python frames a level, and
# beyond a few hundred levels they end in RecursionError, losing the whole file's findings.
MAX_EXPRESSION_NESTING = 150
ELIDED = "__portlint_elided__"


def parse_for_scan(data: bytes, filename: str = "<unknown>") -> tuple[ast.Module, list[ast.AST]]:
    """`parse`, then every expression nested more than MAX_EXPRESSION_NESTING levels below
    the module replaced by a placeholder name (`ELIDED`), and the module's walk (`walk`).
    The lines where expressions were cut are in `cut_lines(module)` (none for ordinary
    code, which pays one pass over integers for the check)."""
    module = parse(data, filename)
    found = _walk(module)
    up = found.up
    depth = [0] * len(found)
    deepest = 0
    for k, parent in enumerate(up, 1):
        d = depth[k] = depth[parent] + 1
        if d > deepest:
            deepest = d
    if deepest <= MAX_EXPRESSION_NESTING:
        return module, found
    cut = [False] * len(found)
    lines: set[int] = set()
    for k, parent in enumerate(up, 1):
        if cut[parent]:
            cut[k] = True
            continue
        node = found[k]
        if depth[k] > MAX_EXPRESSION_NESTING and isinstance(node, ast.expr):
            cut[k] = True
            _replace_child(found[parent], node)
            lines.add(getattr(node, "lineno", 1))
    module._portlint_cut = sorted(lines)  # type: ignore[attr-defined]
    return module, _walk(module)


def cut_lines(module: ast.AST) -> list[int]:
    """The lines `parse_for_scan` cut too-deep expressions on."""
    return getattr(module, "_portlint_cut", [])


def _replace_child(parent: ast.AST, child: ast.expr) -> None:
    stand_in = ast.copy_location(ast.Name(id=ELIDED, ctx=getattr(child, "ctx", None) or ast.Load()), child)
    for name in _NODE_FIELDS.get(parent.__class__) or _node_fields(parent.__class__):
        value = getattr(parent, name, None)
        if value is child:
            setattr(parent, name, stand_in)
            return
        if value.__class__ is list:
            for i, x in enumerate(value):
                if x is child:
                    value[i] = stand_in
                    return


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


class _WalkNodes(list):
    """The nodes of a walk with, in `up`, the position of each node's parent: `up[k]` is
    where the parent of node `k + 1` is (the root has none)."""

    __slots__ = ("up",)


def _walk(root: ast.AST, by_class: dict[type, list[int]] | None = None) -> _WalkNodes:
    """Every node under `root` (itself first) in `ast.walk` order, noting each node's parent
    position as it goes, so `parents` is a zip of two lists instead of a second pass over
    every field of every node; with `by_class`, also filing each node's position by its
    class (the table `of_class` reads) on the way."""
    out = [root]
    up: list[int] = []
    append = out.append
    up_append = up.append
    known = _NODE_FIELDS
    file_position = by_class.get if by_class is not None else None
    i = 0
    while i < len(out):
        node = out[i]
        here = i
        i += 1
        cls = node.__class__
        if file_position is not None:
            bucket = file_position(cls)
            if bucket is None:
                by_class[cls] = [here]
            else:
                bucket.append(here)
        fields = known.get(cls)
        if fields is None:
            fields = _node_fields(cls)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for x in value:
                    if isinstance(x, _AST):
                        append(x)
                        up_append(here)
            elif isinstance(value, _AST):
                append(value)
                up_append(here)
    found = _WalkNodes(out)
    found.up = up
    return found


def walk(root: ast.AST) -> list[ast.AST]:
    """Every node under `root` (itself first) in `ast.walk` order, as a new list (with the
    parent positions `parents` reads)."""
    return _walk(root)


class _Index:
    """What is kept of one module: its nodes, and when first asked for, its parent table and
    its node positions by class."""

    __slots__ = ("module", "nodes", "parents", "classes")

    def __init__(self, module: ast.AST, all_nodes: list[ast.AST]):
        self.module = module
        self.nodes = all_nodes
        self.parents: dict[ast.AST, ast.AST] | None = None
        self.classes: tuple[dict[type, list[int]], dict[type, list[ast.AST]]] | None = None  # positions, lists by class


# the modules asked about last, the latest first: the file scanned now and the files whose
# traced maps it reads (`project.foreign_traced_map`, built in the middle of the scan of a
# file), so coming back to the scanned file after building another's map does not walk it again
_KEEP = 3
_recent: list[_Index] = []


def _remember(module: ast.AST, all_nodes: list[ast.AST]) -> _Index:
    entry = _Index(module, all_nodes)
    for i, old in enumerate(_recent):
        if old.module is module:
            del _recent[i]
            break
    _recent.insert(0, entry)
    del _recent[_KEEP:]
    return entry


def _index(module: ast.AST) -> _Index:
    for entry in _recent:
        if entry.module is module:
            return entry
    if module.__class__ is not ast.Module:
        return _remember(module, walk(module))
    # a module walked here is one being scanned: its nodes by class are asked for next
    by_class: dict[type, list[int]] = {}
    entry = _remember(module, _walk(module, by_class))
    entry.classes = (by_class, {})
    return entry


def adopt(module: ast.AST, all_nodes: list[ast.AST]) -> None:
    """Take `all_nodes` (from `walk(module)`, computed elsewhere) as the module's node list,
    so the next `nodes(module)` does not walk it again."""
    _remember(module, all_nodes)


def nodes(module: ast.AST) -> list[ast.AST]:
    """Every node under `module` (itself first) in `ast.walk` order. Do not mutate."""
    return _index(module).nodes


def _classes(entry: _Index) -> tuple[dict[type, list[int]], dict[type, list[ast.AST]]]:
    if entry.classes is None:
        table: dict[type, list[int]] = {}
        get = table.get
        for i, cls in enumerate(map(type, entry.nodes)):
            bucket = get(cls)
            if bucket is None:
                table[cls] = [i]
            else:
                bucket.append(i)
        entry.classes = (table, {})
    return entry.classes


def of_class(module: ast.AST, *classes: type) -> list[ast.AST]:
    """The nodes of `nodes(module)` whose class is one of `classes` (exactly: `ast.Call`,
    not a subclass), in `ast.walk` order. One pass files every node's position by class,
    the first time any class is asked for. Do not mutate."""
    entry = _index(module)
    positions, lists = _classes(entry)
    all_nodes = entry.nodes
    if len(classes) == 1:
        found = lists.get(classes[0])
        if found is None:
            found = lists[classes[0]] = list(map(all_nodes.__getitem__, positions.get(classes[0], ())))
        return found
    merged: list[int] = []
    for cls in set(classes):
        merged.extend(positions.get(cls, ()))
    merged.sort()  # positions are distinct: walk order
    return list(map(all_nodes.__getitem__, merged))


def node_classes(module: ast.AST) -> list[type]:
    """The classes of the nodes under `module` (each once)."""
    return list(_classes(_index(module))[0])


def parents(module: ast.AST) -> dict[ast.AST, ast.AST]:
    """child -> parent for every node under `module`. Do not mutate."""
    entry = _index(module)
    if entry.parents is None:
        entry.parents = _parent_table(entry.module, entry.nodes)
    return entry.parents


def _parent_table(module: ast.AST, all_nodes: list[ast.AST]) -> dict[ast.AST, ast.AST]:
    """child -> parent, from the parent positions a walk notes (`_walk`); a
    node list adopted without them is walked again, in the same order, to note them. The
    children of each node, nodes in walk order, are the walk list from its second entry on."""
    up = getattr(all_nodes, "up", None)
    if up is None:
        all_nodes = _walk(module)
        up = all_nodes.up
    return dict(zip(islice(all_nodes, 1, None), map(all_nodes.__getitem__, up)))
