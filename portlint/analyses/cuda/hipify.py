"""The HIPIFY map as data, and where a CUDA source uses the names in it.

`rules/cuda_api/hipify-map.csv` is the source (one row per (CUDA name, library), with the
HIP twin or none); `scripts/generate_hipify_tables.py` derives
`rules/cuda_api/hipify-table.json` from it, which is all a scan loads (once, lazily).
Which rule reports a row is data too: the claims in `rules/cuda_api/hipify-owners.toml`,
resolved by the rules' `supersedes` keys (`owner_of`), so that every (name, library) row
belongs to exactly one rule and no identifier is reported twice.

`api_uses(ctx)` (a per-file fact) finds the uses: identifiers in the syntax tree — calls,
types, enum values, macro bodies — never inside strings or comments, never a prefix of a
longer name, never the name a `#define` gives (a vendor shim), never the name the project's
own definition gives a name HIP lacks (a function with a body, a typedef, an enum value: a
shim's stand-in), nor its uses in the file or in files that reach a header that knows the AMD
build and defines it there, never a feature test in an `#if`/`#ifdef` condition, never a
struct field name."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from portlint.core.catalog import rules_root
from portlint.frontends.cuda.guards import GuardMap
from portlint.frontends.cuda.includes import file_reach, graph_of
from portlint.frontends.cuda.platform_macros import names_vendor
from portlint.frontends.cuda.preprocessor import AMD_BY_VENDOR
from portlint.frontends.cuda.symbols import _NOISE, _blank

TABLE_FILE = "cuda_api/hipify-table.json"

OWNERS_FILE = "cuda_api/hipify-owners.toml"


@dataclass(frozen=True)
class Claim:
    """Rows of the HIPIFY map one rule wants (rules/cuda_api/hipify-owners.toml)."""

    rule: str
    libraries: frozenset[str]
    name: re.Pattern | None = None
    supported: bool | None = None
    renamed: bool | None = None

    def takes(self, name: str, library: str, supported: bool, hip: str) -> bool:
        return (
            library in self.libraries
            and (self.name is None or self.name.match(name) is not None)
            and (self.supported is None or self.supported == supported)
            and (self.renamed is None or self.renamed == (supported and hip != name))
        )


@lru_cache(maxsize=1)
def owner_claims() -> tuple[frozenset[str], frozenset[str], tuple[Claim, ...]]:
    """(names never reported, the mechanically renamed libraries, the claims)."""
    import tomllib

    data = tomllib.loads((rules_root() / OWNERS_FILE).read_text(encoding="utf-8"))
    mechanical = frozenset(data["mechanical"])
    claims = []
    for c in data["claim"]:
        libs = mechanical if c["libraries"] == "mechanical" else frozenset(c["libraries"])
        claims.append(Claim(c["rule"], libs, re.compile(c["name"]) if "name" in c else None, c.get("supported"), c.get("renamed")))
    return frozenset(data["never"]), mechanical, tuple(claims)


def generic_names() -> frozenset[str]:
    """Names in the table that are too generic to be CUDA's in arbitrary C++: never reported."""
    return owner_claims()[0]


def owner_of(name: str, library: str, supported: bool, hip: str) -> str | None:
    """The rule that reports a use of this row, or None when no rule does: among the rules
    whose claim takes the row, the one the others do not supersede."""
    from portlint.findings.precedence import winner

    never, _, claims = owner_claims()
    if name in never:
        return None
    return winner(c.rule for c in claims if c.takes(name, library, supported, hip))


@dataclass(frozen=True)
class Row:
    name: str
    library: str
    hip: str  # "" when HIPIFY names no HIP identifier
    owner: str
    hip_added: str  # HIP version that added the twin ("" when unknown)
    miopen: str  # MIOpen twin (cuDNN rows)
    roc: str  # rocBLAS/rocSPARSE/... twin
    hip_deprecated: str
    section: str

    @property
    def supported(self) -> bool:
        return bool(self.hip)


@dataclass(frozen=True)
class Table:
    version: str  # e.g. "HIPIFY 014177bc (2024-10-24)"
    rows: Mapping[str, tuple[Row, ...]]
    prefix_re: re.Pattern

    def lookup(self, name: str, library: str | None = None) -> tuple[Row, ...]:
        rows = self.rows.get(name, ())
        if library is not None:
            rows = tuple(r for r in rows if r.library == library)
        return rows


def table_path() -> Path:
    return rules_root() / TABLE_FILE


class _Rows(Mapping):
    """name -> rows of the table, built on first access: a file uses a few dozen of the
    8,000 names, and making every Row up front cost more than the rest of a small scan."""

    def __init__(self, fields: list[str], raw: dict[str, list[list[str]]]):
        self._fields = fields
        self._raw = raw
        self._built: dict[str, tuple[Row, ...]] = {}

    def __getitem__(self, name: str) -> tuple[Row, ...]:
        rows = self._built.get(name)
        if rows is None:
            entries = self._raw[name]  # KeyError for a name not in the table
            rows = self._built[name] = tuple(Row(name=name, **dict(zip(self._fields, e))) for e in entries)
        return rows

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def __iter__(self):
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


@lru_cache(maxsize=1)
def load_table() -> Table:
    data = json.loads(table_path().read_text(encoding="utf-8"))
    rows = _Rows(data["fields"], data["names"])
    # candidates are found with one regex over the file: an alternation of the names'
    # leading three characters (each is checked against the dict afterwards)
    heads = sorted({n[:3] for n in rows}, key=lambda s: (-len(s), s))
    prefix_re = word_regex(tuple(heads))
    return Table(data["version"], rows, prefix_re)


# ---- uses in a file -----------------------------------------------------------------------

_SKIP_LEAVES = {"string_literal", "string_content", "raw_string_literal", "char_literal", "comment", "system_lib_string", "escape_sequence"}
_IDENT_TYPES = {"identifier", "type_identifier", "namespace_identifier"}
_CONDITION_PARENTS = {"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_defined", "preproc_elifdef"}


@dataclass(frozen=True)
class Use:
    name: str
    start: int  # byte offsets in the file
    end: int
    node: object  # the tree-sitter node holding the name (identifier, or a macro body)
    in_macro: bool  # inside a #define body


def _condition_lines(ctx) -> frozenset[int]:
    """ctx.fact(_condition_lines): the lines of the file's #if/#elif/#ifdef conditions (where
    error recovery may have hidden the condition from the tree, e.g. around
    `__has_include(<curand.h>)`)."""
    from portlint.frontends.cuda.includes import file_directives

    kinds = ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef")
    return frozenset(n for d in ctx.fact(file_directives) if d.kind in kinds for n in range(d.first, d.last + 1))


def _in_condition(node) -> bool:
    """Inside the condition of an #if/#elif/#ifdef (a feature test, not a use)."""
    cur = node
    while cur is not None:
        parent = cur.parent
        if parent is None:
            return False
        if parent.type == "preproc_defined":
            return True
        if parent.type in _CONDITION_PARENTS:
            cond = parent.child_by_field_name("condition") or parent.child_by_field_name("name")
            return cond is not None and cond.start_byte <= node.start_byte and node.end_byte <= cond.end_byte
        if parent.type in ("translation_unit", "compound_statement", "function_definition"):
            return False
        cur = parent
    return False


# Strings, character literals and comments, as a lexer skips them: a word inside one is no use.
_LEX_SKIP = re.compile(rb"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/", re.S)
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


def _skipped_spans(ctx) -> tuple[list[int], list[int]]:
    """ctx.fact(_skipped_spans): the starts and ends of the file's strings, character
    literals and comments, in order (one lexer pass, shared by every identifier_uses call)."""
    starts, ends = [], []
    for m in _LEX_SKIP.finditer(ctx.data):
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


def _inside_span(spans: tuple[list[int], list[int]], offset: int) -> bool:
    starts, ends = spans
    i = bisect_right(starts, offset) - 1
    return i >= 0 and offset < ends[i]


def _prefix_trie(prefixes: list[bytes]) -> bytes:
    """A regex matching any of `prefixes`, as a trie (`c(?:u(?:b|da)|...)`): the regex
    engine tries a few branches per position instead of every prefix in turn."""
    trie: dict = {}
    for p in prefixes:
        node = trie
        for byte in p:
            node = node.setdefault(byte, {})
        node[None] = {}

    def emit(node: dict) -> bytes:
        branches = [re.escape(bytes([b])) + emit(node[b]) for b in sorted(k for k in node if k is not None)]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        return b"(?:" + body + b")?" if None in node else body

    return emit(trie)


@lru_cache(maxsize=32)
def word_regex(prefixes: tuple[str, ...]) -> re.Pattern:
    """Candidate words: a run of word characters starting with one of `prefixes` (ASCII
    word characters only). identifier_uses keeps those that start a word and lie outside
    strings and comments, which is what a lexer scanning the file would find."""
    return re.compile(rb"(?:" + _prefix_trie(sorted({p.encode() for p in prefixes})) + rb")\w*")


# namespaces whose members hipify renames (CUB, Thrust, libcu++, WMMA, cooperative groups)
_CUDA_SCOPES = frozenset({"cub", "thrust", "cuda", "nvcuda", "wmma", "cooperative_groups", "cg", "std"})
_C_API_PREFIXES = ("cuda", "cu", "CU", "nvrtc", "nvml")


def _project_qualified(node, word: str) -> bool:
    """A C API name (`cudaMalloc`, `cuMemAlloc`, `CUresult`) that is the name of a
    qualified identifier under a namespace of the project (`my::cudaMalloc`): the C API
    lives in the global namespace, so this is another function (`::cudaMalloc` is CUDA's)."""
    parent = node.parent
    if parent is not None and parent.type == "function_declarator" and parent.child_by_field_name("declarator") == node \
            and word.startswith(_C_API_PREFIXES):
        # its definition or declaration inside such a namespace: `namespace my { int cudaMalloc(...) }`
        outer = parent.parent
        while outer is not None and outer.type != "namespace_definition":
            outer = outer.parent
        name = outer.child_by_field_name("name") if outer is not None else None
        return name is not None and name.text.decode("utf-8", "replace") not in _CUDA_SCOPES
    if parent is None or parent.type != "qualified_identifier" or parent.child_by_field_name("name") != node:
        return False
    scope = parent.child_by_field_name("scope")
    if scope is None or scope.type != "namespace_identifier" or not word.startswith(_C_API_PREFIXES):
        return False
    return scope.text.decode("utf-8", "replace") not in _CUDA_SCOPES


def identifier_uses(ctx, pattern: re.Pattern, accept=None) -> list[Use]:
    """Identifiers matched by `pattern` (see word_regex) that are real uses in the syntax
    tree: whole words, not in strings or comments (as the file's lexer sees them,
    `_skipped_spans`), not a #define's own name (the names a file #defines are
    dropped everywhere in it), not an #if/#ifdef feature test, not a struct field name.
    `accept(word)` filters the words before the tree is consulted."""
    data = ctx.data
    root = ctx.tree.root_node
    defined: set[str] = set()
    found: list[Use] = []
    conditions = ctx.fact(_condition_lines) if b"#" in data else frozenset()
    skipped = None
    for m in pattern.finditer(data):
        start, end = m.span()
        if start and data[start - 1] in _WORD_BYTES:
            continue  # the tail of a longer word
        word = m.group().decode("ascii", errors="replace")
        if accept is not None and not accept(word):
            continue
        if skipped is None:
            skipped = ctx.fact(_skipped_spans)
        if _inside_span(skipped, start):
            continue
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.type in _SKIP_LEAVES:
            continue
        parent = node.parent
        if node.type == "preproc_arg":
            # a macro body: a use unless the directive is #undef/#pragma/#error and friends
            if parent is None or parent.type not in ("preproc_def", "preproc_function_def"):
                continue
            found.append(Use(word, start, end, node, True))
            continue
        if node.type not in _IDENT_TYPES or node.start_byte != start or node.end_byte != end:
            continue
        if parent is not None and parent.type in ("preproc_def", "preproc_function_def") and parent.child_by_field_name("name") == node:
            defined.add(word)  # a shim: `#define cudaMalloc hipMalloc`
            continue
        if _defines(node) and not _renamed(word):
            # the project's own definition of a name HIP lacks (a HIP shim's `cusolverStatus_t
            # cusolverDnXgeev(...) { return ...; }`, a stub's enum): not a use, nor are its
            # uses in the file, which name that definition. A name hipify renames is renamed
            # in a definition too (a stand-in for the toolkit's header keeps matching its uses)
            defined.add(word)
            continue
        if _in_condition(node) or (conditions and ctx.offset_to_pos(start)[0] in conditions):
            continue
        if _project_qualified(node, word):
            continue  # `my::cudaMalloc`: a project's own function, not CUDA's C API
        found.append(Use(word, start, end, node, False))
    if found:
        wanted = {u.name for u in found} - defined
        defined |= _shims_from_headers(ctx, wanted) | _defined_in_shim_headers(ctx, wanted)
    if defined:
        found = [u for u in found if u.name not in defined]
    return found


def _renamed(word: str) -> bool:
    """PTL601 renames `word` (hipify maps it to a HIP twin)."""
    return any(row.owner == "PTL601" for row in load_table().rows.get(word, ()))


_SPECIFIERS = ("enum_specifier", "struct_specifier", "union_specifier", "class_specifier")
_WRAPPING = ("pointer_declarator", "reference_declarator", "array_declarator")


def _defines(node) -> bool:
    """`node` is the name a definition gives: a function definition's declarator (with a
    body), an enumerator, a typedef's name, the tag of an enum/struct/union/class with a
    body. A declaration without a body (`cudaError_t cudaFree(void *);`) still names the
    library's function."""
    parent = node.parent
    if parent is None:
        return False
    kind = parent.type
    if kind == "enumerator":
        return parent.child_by_field_name("name") == node
    inner = node  # `typedef void *cutensorHandle_t;`: the name inside a pointer declarator
    while parent is not None and parent.type in _WRAPPING and parent.child_by_field_name("declarator") == inner:
        inner, parent = parent, parent.parent
    if parent is None:
        return False
    kind = parent.type
    if kind == "type_definition":
        return any(d == inner for d in parent.children_by_field_name("declarator"))
    if kind == "init_declarator" and parent.child_by_field_name("declarator") == inner:
        # `const cutensorComputeDescriptor_t CUTENSOR_COMPUTE_DESC_TF32 = NULL;`: a constant
        # the project defines
        return parent.child_by_field_name("value") is not None
    if kind in _SPECIFIERS:
        return parent.child_by_field_name("name") == node and parent.child_by_field_name("body") is not None
    if kind == "function_declarator" and parent.child_by_field_name("declarator") == node:
        outer = parent.parent
        while outer is not None and outer.type in ("pointer_declarator", "reference_declarator"):
            outer = outer.parent
        return outer is not None and outer.type == "function_definition"
    return False


# definitions in a header's text (comments and literals blanked): a function with a body, a
# typedef's name, an enum/struct/union/class tag with a body, the enumerators of an enum body
_DEF_FUNCTION = re.compile(r"([A-Za-z_]\w*)\s*\((?:[^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*)\)\s*(?:const\s*)?(?:noexcept\s*)?\{")
_DEF_TYPEDEF = re.compile(r"\btypedef\b[^;{}]*?([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?;")
_DEF_BODY_NAME = re.compile(r"\}\s*([A-Za-z_]\w*)\s*;")
_DEF_TAG = re.compile(r"\b(?:enum|struct|union|class)\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*)\s*(?::[^{;]*)?\{")
_DEF_ENUM_BODY = re.compile(r"\benum\b[^{;]*\{([^{}]*)\}")
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "return", "sizeof", "catch", "defined"})


def _header_definitions(text: str) -> frozenset[str]:
    """The names a header defines for an AMD build: its definitions (above) outside the
    #if legs an AMD build skips by a condition that names the vendor."""
    code = _NOISE.sub(_blank, text)
    dead = GuardMap(text, platform=AMD_BY_VENDOR).dead_for_amd if "#if" in text else None
    found: list[tuple[int, str]] = []
    for pattern in (_DEF_FUNCTION, _DEF_TYPEDEF, _DEF_BODY_NAME, _DEF_TAG):
        found.extend((m.start(1), m.group(1)) for m in pattern.finditer(code))
    for m in _DEF_ENUM_BODY.finditer(code):
        offset = m.start(1)
        for part in m.group(1).split(","):
            name = re.match(r"\s*([A-Za-z_]\w*)", part)
            if name:
                found.append((offset + name.start(1), name.group(1)))
            offset += len(part) + 1
    if dead is None:
        return frozenset(n for _, n in found if n not in _NOT_NAMES)
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return frozenset(n for at, n in found if n not in _NOT_NAMES and dead(bisect_right(starts, at)) is None)


def _defined_in_shim_headers(ctx, names: set[str]) -> set[str]:
    """Which of `names` a project header the file reaches defines for an AMD build, in a
    header that knows that build (it names AMD's stack: cupy's hip/cupy_hip_common.h
    `typedef enum libraryPropertyType_t {...} libraryPropertyType;`): the port made, its
    uses name the project's definition. A library header that only implements a CUDA
    name (a vendored CuTe) does not count. Each header is read once per scan."""
    if not names:
        return set()
    reach = ctx.fact(file_reach)
    if reach is None or not reach.headers:
        return set()
    defined = graph_of(ctx).names_in_headers(
        reach, "api-definitions", lambda h: _header_definitions(h.text) if h is not None and names_vendor(h.text) else frozenset())
    return names & defined


def _shims_from_headers(ctx, names: set[str]) -> set[str]:
    """Which of `names` a header the file reaches (the scan's include graph) #defines for an
    AMD build (llama.cpp's vendors/hip.h: `#define cublasSetMathMode(h, m) ...`)."""
    from portlint.frontends.cuda.guards import header_defines

    macros = header_defines(ctx)
    return {n for n in names if n in macros and macros[n] is not False}


def api_uses(ctx) -> list[Use]:
    """ctx.fact(api_uses): every use of a name in the table, in file order."""
    table = load_table()
    return identifier_uses(ctx, table.prefix_re, table.rows.__contains__)


def is_call(use: Use) -> bool:
    """`use` is the callee of a call expression (also `ns::name(...)`)."""
    node = use.node
    if use.in_macro:
        rest = node.text[use.start - node.start_byte + len(use.name):].lstrip()
        return rest.startswith(b"(")
    parent = node.parent
    if parent is not None and parent.type == "qualified_identifier":
        node, parent = parent, parent.parent
    return parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == node


def rows_for(use: Use) -> tuple[Row, ...]:
    return load_table().rows.get(use.name, ())


def pick_row(use: Use, owner: str) -> Row | None:
    """The row of `use` that `owner` reports (names in two libraries share a verdict)."""
    for row in rows_for(use):
        if row.owner == owner:
            return row
    return None


# ---- code an AMD build leaves out on purpose ----------------------------------------------

def amd_excluded(ctx, line: int, in_version_gates: bool = False) -> bool:
    """`line` sits in a branch an AMD build skips (`#ifndef __HIP_PLATFORM_AMD__ ... #endif`,
    `#ifndef USE_ROCM`, `#if CUDART_VERSION >= 12050`, `#if __CUDA_ARCH__ >= 900`) with no
    branch beside it: the code cannot break an AMD build. (With a HIP branch beside it the
    engine already marks the finding suppressed; this covers the one-sided form.)"""
    if ctx.language != "cuda":
        return False
    from portlint.frontends.cuda.guards import guard_map

    guard = ctx.fact(guard_map).dead_for_amd(line)
    if guard is not None and in_version_gates and guard.version_gate:
        return False  # `#if CUDART_VERSION >= 12000`: AMD skips it only until the gate is fixed
    return guard is not None and not guard.has_alternative


def report(ctx, where, *, in_version_gates: bool = False, **kwargs):
    """ctx.report, unless the line is one an AMD build leaves out on purpose. With
    `in_version_gates` (renames), lines a CUDA version gate keeps from AMD count as compiled."""
    span = ctx.node_span(where)
    if amd_excluded(ctx, span.start_line, in_version_gates):
        return None
    return ctx.report(span, **kwargs)


def amd_only_lines(ctx) -> list[bool]:
    """ctx.fact(amd_only_lines): per 1-based line, whether it sits in a branch only AMD
    builds take (`#ifdef __HIP_PLATFORM_AMD__`, `#if defined(USE_ROCM)`, the `#else` of
    `#ifndef USE_ROCM`, a project's `#ifdef FOO_WITH_HIP`): a line an sm_90 build leaves
    out and an AMD build does not. Read from the directive lines (the preprocessor model),
    so it holds where error recovery breaks the syntax tree."""
    from portlint.frontends.cuda.guards import amd_only_guard, guard_map

    return [False] + [amd_only_guard(ctx, n) is not None for n in range(1, ctx.fact(guard_map).n_lines + 1)]


def in_amd_branch(ctx, line: int) -> bool:
    """Inside a branch only AMD builds take: code written for AMD on purpose."""
    flags = ctx.fact(amd_only_lines)
    return flags[line] if 0 < line < len(flags) else False


def node_text_of(node) -> str:
    return node.text.decode("utf-8", errors="replace")


# ---- shared per-file facts: includes and namespace qualifiers -------------------------------

def includes(ctx) -> list[tuple[object, str]]:
    """ctx.fact(includes): (path node, header) for every #include <...> / "..." in the file."""
    if b"include" not in ctx.data:
        return []
    from portlint.frontends.cuda.parse import nodes_of_types

    out = []
    for inc in nodes_of_types(ctx.tree.root_node, ("preproc_include",)):
        path = inc.child_by_field_name("path")
        if path is not None and path.type in ("system_lib_string", "string_literal"):
            out.append((path, node_text_of(path)[1:-1].strip()))
    return out


def leading_qualifiers(ctx) -> dict[str, list]:
    """ctx.fact(leading_qualifiers): namespace name -> the namespace_identifier nodes that
    start a qualified name (`cub::X`, `cuda::std::Y`; not `a::cuda::Y`, not `namespace cuda {`)."""
    if b"::" not in ctx.data:
        return {}
    from portlint.frontends.cuda.parse import nodes_of_types

    out: dict[str, list] = {}
    for ns in nodes_of_types(ctx.tree.root_node, ("namespace_identifier",)):
        parent = ns.parent
        if parent is None or parent.type != "qualified_identifier":
            continue
        grand = parent.parent
        if (grand is not None and grand.type == "qualified_identifier" and grand.child_by_field_name("name") == parent
                and grand.child_by_field_name("scope") is not None):
            continue  # `a::cub::X`; `::cub::X` (the global scope, no scope node) still starts with cub
        out.setdefault(node_text_of(ns), []).append(ns)
    return out
