"""Integer constants of a CUDA file, as an AMD build sees them.

`constant_map(ctx)` collects `#define NAME <int>`, `constexpr`/`const` integer variables,
enumerators and template-parameter defaults of the file (tree-sitter), the `#define`s of
the headers it reaches through the scan's include graph (as the guard map evaluates them for
AMD), and, when the libclang pass runs, every macro and integer constant it resolved across
the include graph under AMD defines. Definitions in a branch an AMD build skips are ignored when a live one
exists, so `#ifdef USE_ROCM / #define WARP_SIZE 64 / #else / #define WARP_SIZE 32` resolves
to 64."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from portlint.frontends.cuda.cexpr import eval_node, parse_int
from portlint.frontends.cuda.cexpr import eval_text as cexpr_eval_text
from portlint.frontends.cuda.parse import node_text, nodes_of_types

__all__ = ["Const", "ConstantMap", "constant_map", "eval_int", "eval_text", "parse_int"]

_INTEGRAL = re.compile(r"\b(int|unsigned|signed|short|long|size_t|u?int(8|16|32|64)_t|uint|char|auto|bool|index_t|int_t)\b")


@dataclass
class Const:
    name: str
    value: int | None  # None: defined, value unknown
    kind: str  # define | constexpr | const | enum | template-default | function | header | libclang
    line: int = 0  # 0 for definitions outside the file
    node: object = None  # the tree-sitter node of the value (local definitions)
    decl: object = None  # the whole definition node
    live: bool = True  # compiled by an AMD build
    origin: str = ""  # header path for outside definitions


# Names that look like constants (WARP_SIZE, kWarpSize, cfg::kLanes): only a miss on one of
# these is worth starting libclang for; a local variable such as `n` never is.
_CONSTANT_NAME = re.compile(r"^(?:\w+::)*(?:[A-Z][A-Z0-9_]*|k[A-Z]\w*)$")


@dataclass
class ConstantMap:
    local: dict[str, list[Const]] = field(default_factory=dict)
    outside: dict[str, Const] = field(default_factory=dict)
    # called once, on the first miss of a constant-looking name: name -> (value, origin) from
    # the libclang pass. Deferred because the pass costs 0.2-0.4 s a file and most files
    # never look up a constant they do not define themselves.
    deferred: Callable[[], dict[str, tuple[int, str]]] | None = None
    # While the file's own definitions are first evaluated, a miss does not start the pass:
    # it is only noted here, and the pass runs when a detector asks for one of the local
    # values that stayed unknown (most files never do).
    _quiet: bool = False
    _missed: bool = False

    def lookup(self, name: str) -> Const | None:
        """The definition an AMD build uses: a live local one, else one from the headers."""
        defs = self.local.get(name)
        if defs:
            live = [d for d in defs if d.live]
            if live:
                if any(d.value is None for d in live):
                    self._settle()
                values = {d.value for d in live}
                return live[-1] if len(values) == 1 else Const(name, None, live[-1].kind, live[-1].line)
        found = self.outside.get(name)
        if (found is None or found.value is None) and self.deferred is not None and _CONSTANT_NAME.match(name):
            if self._quiet:
                self._missed = True
            else:
                self._load_deferred()
                found = self.outside.get(name)
        return found

    def value_of(self, c: Const) -> int | None:
        """The value of one local definition, starting the deferred pass if it is needed."""
        if c.value is None:
            self._settle()
        return c.value

    def _settle(self) -> None:
        if self._missed and not self._quiet and self.deferred is not None:
            self._load_deferred()

    def _load_deferred(self) -> None:
        load, self.deferred = self.deferred, None
        for name, (v, origin) in load().items():
            if name not in self.outside or self.outside[name].value is None:
                self.outside[name] = Const(name, v, "libclang", 0, live=True, origin=origin)
        if self._missed:
            self._evaluate_locals()

    def _evaluate_locals(self) -> None:
        """Values of the local definitions, in two rounds so constants defined from other
        constants resolve (a definition already valued keeps its value)."""
        for _ in range(2):
            for defs in self.local.values():
                for d in defs:
                    if d.value is None and d.node is not None:
                        d.value = eval_text(node_text(d.node), self) if d.kind == "define" else eval_int(d.node, self)

    def value(self, name: str) -> int | None:
        c = self.lookup(name)
        return c.value if c is not None else None


def eval_int(node, cmap: ConstantMap) -> int | None:
    """Value of a small integer expression node of literals and the map's constants, or None."""
    return eval_node(node, cmap.value)


def eval_text(text: str, cmap: ConstantMap) -> int | None:
    """Value of a macro body such as `32`, `(32)`, `(1 << 5)`, `WARP_SIZE / 2`."""
    return cexpr_eval_text(text, cmap.value)


def constant_function(fn) -> tuple[str, object] | None:
    """(name, returned expression) of `constexpr int WarpThreads() { return 32; }`: a
    constexpr function without parameters whose body is one return statement."""
    if not any(c.type == "type_qualifier" and node_text(c) == "constexpr" for c in fn.children):
        return None
    decl, body = fn.child_by_field_name("declarator"), fn.child_by_field_name("body")
    if decl is None or decl.type != "function_declarator" or body is None:
        return None
    name, params = decl.child_by_field_name("declarator"), decl.child_by_field_name("parameters")
    if name is None or name.type != "identifier" or params is None or params.named_child_count != 0:
        return None
    stmts = body.named_children
    if len(stmts) != 1 or stmts[0].type != "return_statement" or stmts[0].named_child_count != 1:
        return None
    return node_text(name), stmts[0].named_children[0]


# `constexpr std::int32_t WarpThreads() { return 32; }` and `static constexpr auto kWarp = 32;`
# in a header: read from the text (the headers are not parsed), valued only when every
# definition of the name across the reached headers agrees
_HEADER_FUNCTION = re.compile(r"\bconstexpr\s+(?:[\w:]+\s+)*?(?:[\w:]+)\s+([A-Za-z_]\w*)\s*\(\s*\)\s*(?:const\s*)?(?:noexcept\s*)?"
                              r"\{\s*return\s+([^;{}]{1,60});\s*\}")
_HEADER_VARIABLE = re.compile(r"\bconstexpr\s+(?:(?:static|inline|const|unsigned|signed|int|long|short|auto|size_t|(?:std::)?u?int(?:8|16|32|64)_t)\s+)+"
                              r"([A-Za-z_]\w*)\s*(?:=\s*([^;{}()]{1,60}|\([^;{}]{1,60}\))|\{\s*([^;{}]{1,60})\s*\})\s*;")


_SCOPE_OPENER = re.compile(r"\b(?:namespace|struct|class|union|enum)\b|extern\s*\"C\"")


def _body_depths(text: str) -> tuple[list[int], list[int]]:
    """(positions of braces, number of enclosing function or statement bodies just after each):
    a brace opens a scope when the text since the previous `;`, `{` or `}` names a namespace,
    class, struct, union, enum or `extern "C"`; any other brace opens a body."""
    positions, depths, stack = [], [], []
    last = 0
    for m in re.finditer(r"[{};]", text):
        ch = m.group()
        if ch == "{":
            stack.append(_SCOPE_OPENER.search(text, last, m.start()) is None)
        elif ch == "}" and stack:
            stack.pop()
        last = m.end()
        if ch != ";":
            positions.append(m.start())
            depths.append(sum(stack))
    return positions, depths


def _header_definitions(text: str) -> list[tuple[str, str, str]]:
    """(name, kind, value text) of the constexpr functions and integer variables a header
    defines at namespace or class scope (a function's local constexpr is its own)."""
    from bisect import bisect_right

    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    positions, depths = _body_depths(text)

    def at_scope(pos: int) -> bool:
        i = bisect_right(positions, pos) - 1
        return i < 0 or depths[i] == 0

    found = [(m.group(1), "function", m.group(2)) for m in _HEADER_FUNCTION.finditer(text) if at_scope(m.start())]
    found += [(m.group(1), "header", m.group(2) or m.group(3)) for m in _HEADER_VARIABLE.finditer(text) if at_scope(m.start())]
    return found


def header_constexprs(ctx) -> dict[str, tuple[int, str, str]]:
    """name -> (value, kind, header) for the constexpr functions and integer variables of the
    project headers the file reaches (each header read once per scan)."""
    from portlint.frontends.cuda.includes import file_reach, file_session, graph_of

    reach = ctx.fact(file_reach)
    if reach is None or not reach.headers:
        return {}
    graph = graph_of(ctx)
    memo = file_session(ctx).fact("header-constexprs", dict)
    defs: dict[str, list[tuple[str, str, str]]] = {}
    for header in graph.project_headers(reach):
        if header not in memo:
            h = graph.header(header)
            memo[header] = _header_definitions(h.text) if h is not None and "constexpr" in h.text else []
        for name, kind, value in memo[header]:
            defs.setdefault(name, []).append((kind, value, header))
    known: dict[str, int] = {}
    out: dict[str, tuple[int, str, str]] = {}
    for _ in range(2):  # constants defined from other constants
        for name, entries in defs.items():
            if name in out:
                continue
            values = {cexpr_eval_text(v, known.get) for _, v, _ in entries}
            if len(values) == 1 and None not in values and len({k for k, _, _ in entries}) == 1:
                value = values.pop()
                known[name] = value
                out[name] = (value, entries[0][0], entries[0][2])
    return out


def _is_const_decl(decl) -> str | None:
    kinds = {node_text(c) for c in decl.children if c.type == "type_qualifier"}
    if "constexpr" in kinds:
        return "constexpr"
    if "const" in kinds:
        type_node = decl.child_by_field_name("type")
        if type_node is not None and _INTEGRAL.search(node_text(type_node)):
            return "const"
    return None


def constant_map(ctx) -> ConstantMap:
    """ctx.fact(constant_map)."""
    from portlint.frontends.cuda.guards import guard_map

    guards = ctx.fact(guard_map)
    cmap = ConstantMap()

    def dead(line: int) -> bool:
        return guards.dead_for_amd(line) is not None

    root = ctx.tree.root_node
    pending_defines = []
    for node in nodes_of_types(root, ("preproc_def", "declaration", "enumerator", "optional_parameter_declaration", "field_declaration", "function_definition")):
        line = node.start_point[0] + 1
        if node.type == "function_definition":
            found = constant_function(node)
            if found is not None:
                cmap.local.setdefault(found[0], []).append(Const(found[0], None, "function", line, found[1], node, not dead(line)))
        elif node.type == "preproc_def":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None:
                pending_defines.append((node_text(name), value, node, line))
        elif node.type in ("declaration", "field_declaration"):
            kind = _is_const_decl(node)
            if kind is None:
                continue
            for d in node.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
                    if target is not None and target.type in ("identifier", "field_identifier") and value is not None:
                        cmap.local.setdefault(node_text(target), []).append(Const(node_text(target), None, kind, line, value, node, not dead(line)))
            # field_declaration: `static constexpr int kWarp = 32;` has a default_value field
            if node.type == "field_declaration":
                target, value = node.child_by_field_name("declarator"), node.child_by_field_name("default_value")
                if target is not None and value is not None and target.type == "field_identifier":
                    cmap.local.setdefault(node_text(target), []).append(Const(node_text(target), None, kind, line, value, node, not dead(line)))
        elif node.type == "enumerator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None:
                cmap.local.setdefault(node_text(name), []).append(Const(node_text(name), None, "enum", line, value, node, not dead(line)))
        else:  # template parameter default
            name, value = node.child_by_field_name("declarator"), node.child_by_field_name("default_value")
            if name is not None and value is not None and node.parent is not None and node.parent.type == "template_parameter_list":
                cmap.local.setdefault(node_text(name), []).append(Const(node_text(name), None, "template-default", line, value, node, not dead(line)))
    # outside definitions first, so local bodies that use header macros resolve
    real = getattr(ctx, "real_path", None)
    for name, v in guards.header_values().items():
        cmap.outside[name] = Const(name, v, "header", 0, live=True, origin="header")
    for name, (v, kind, origin) in header_constexprs(ctx).items():
        if name not in cmap.outside:
            cmap.outside[name] = Const(name, v, kind, 0, live=True, origin=origin)
    from portlint.frontends.cuda.libclang_pass import libclang_constants

    cmap.deferred = lambda: libclang_constants(ctx)
    for name, value, node, line in pending_defines:
        cmap.local.setdefault(name, []).append(Const(name, None, "define", line, value, node, not dead(line)))
    cmap._quiet = True
    cmap._evaluate_locals()
    cmap._quiet = False
    del real
    return cmap
