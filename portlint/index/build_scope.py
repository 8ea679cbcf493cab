"""Build scope: the CUDA sources a package's own ROCm build never compiles.

A fact of the project index, built once per scan over the project root's build files
(`setup.py` read with `ast`, never run; `CMakeLists.txt` with tree-sitter-cmake) and kept in
the scan's session. Every source a build file lists is recorded with the branch it is listed
in, and each branch is judged for a ROCm build from the tests around it
(rules/vocabulary/build_scope.toml): taken (True), not taken (False) or unknown (None).

A file is "not in the ROCm build" only with positive evidence:
- a build file lists it, and every listing of it in every build file of the project sits in a
  branch a ROCm build does not take (the test names AMD's stack: `if not IS_ROCM:`,
  `if(VLLM_GPU_LANG STREQUAL "CUDA")` beside a HIP leg);
- no build file whose folder holds it has a source list it cannot read in a branch a ROCm
  build may take (a `sources=` built by a function, a glob of a variable): that build may
  list the file, so it stays in scope;
- or it is a header (not listed) that only such files include, by name, anywhere in the
  project; a generator script the build runs only where a ROCm build does not go (a `.py`
  path named only in such a branch) counts as such a file, for the `#include` lines it writes
  into the sources it generates.
A CMake project that declares CUDA a language where it always runs and never enables HIP
(`project(x LANGUAGES CXX CUDA)`) does not configure without nvcc: nothing it lists is in a
ROCm build, when the package has a ROCm route somewhere (a build file, or its Python code,
tests for AMD's stack).
Unknown is in scope; a package whose build has no ROCm branch is entirely in scope."""

from __future__ import annotations

import ast
import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from portlint.core import session
from portlint.core.globs import fits, matching
from portlint.core.files import read_limited
from portlint.discovery.files import discover
from portlint.discovery.roots import project_root as project_root_of
from portlint.frontends.buildfiles.cmake import branch_commands, needs_nvcc
from portlint.frontends.cuda.includes import read_once

_VOCAB = Path(__file__).resolve().parent.parent.parent / "rules" / "vocabulary" / "build_scope.toml"


@lru_cache(maxsize=1)
def vocabulary() -> dict:
    with open(_VOCAB, "rb") as fh:
        return tomllib.load(fh)


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", name) if w]


def names_amd(name: str) -> bool:
    vendor = set(vocabulary()["vendor_words"])
    return any(w in vendor for w in _words(name))


@dataclass(frozen=True)
class Verdict:
    """Why a file is not in the ROCm build: where it is listed (or, for a header, which
    file includes it)."""
    build: str  # the build file (relative to the project root)
    line: int  # the line that lists it there
    via: str = ""  # for a header: the CUDA-only file (or generator script) that includes it
    nvcc: bool = False  # the build file is a CMake project that does not configure without nvcc
    unused: bool = False  # a file in that project's folder that nothing in the project includes

    def where(self) -> str:
        if self.unused:
            return (f"it lies in the folder of {self.build}, a CMake project that declares CUDA and never HIP "
                    f"({self.build}:{self.line}), which does not configure without nvcc, and no other file includes it")
        if self.via.lower().endswith(tuple(vocabulary()["sources"]["generator_endings"])):
            return (f"included only by the sources {self.via} generates, which {self.build}:{self.line} "
                    "runs only where a ROCm build does not go")
        if self.via:
            return f"included only by sources the ROCm build skips, such as {self.via} ({self.build}:{self.line})"
        if self.nvcc:
            return (f"{self.build}:{self.line} lists it in a CMake project that declares CUDA and never HIP, "
                    "which does not configure without nvcc")
        return f"{self.build}:{self.line} lists it only where a ROCm build does not go"


@dataclass
class _Listing:
    rel: str  # the source, relative to the project root
    reach: bool | None  # does a ROCm build take the branch that lists it
    build: str
    line: int


@dataclass
class BuildScope:
    outside: dict[str, Verdict] = field(default_factory=dict)  # rel -> why not in the ROCm build

    def verdict(self, rel: str | None) -> Verdict | None:
        return self.outside.get(rel) if rel else None


# ---- three-valued logic ----------------------------------------------------------------------

def _and(a, b):
    if a is False or b is False:
        return False
    if a is True and b is True:
        return True
    return None


def _or(a, b):
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


def _not(a):
    return None if a is None else not a


def _value_test(value: str, has_amd_leg: bool):
    """A vendor-selection variable compared equal to `value`, in a ROCm build."""
    v = value.strip().strip("\"'").lower()
    if v in vocabulary()["rocm_values"]:
        return True
    if has_amd_leg and v in vocabulary()["cuda_values"]:
        return False
    return None


# ---- setup.py --------------------------------------------------------------------------------

_ROOT = "\0root"  # the folder of the setup.py (this_dir = os.path.dirname(__file__))


# bounds on what one setup.py value may grow to (a real source list holds hundreds of files): past
# them the value is unread, which keeps every file it could name in scope
MAX_SOURCES = 10_000
MAX_PATH_CHARS = 4_096


def _grown(old, new):
    """`old + new` for two source lists within MAX_SOURCES, else None (unread). A new list: the
    environments of the two legs of an `if` share the lists they held before it."""
    if isinstance(old, list) and isinstance(new, list) and len(old) + len(new) <= MAX_SOURCES:
        return old + new
    return None


class _SetupReader:
    """The source lists of one setup.py, each item with the ROCm reach of where it was added."""

    def __init__(self, tree: ast.Module, folder: str, files: list[str], build: str):
        self.folder = folder  # POSIX folder of the setup.py relative to the project root ("" at the top)
        self.files = files
        self.build = build
        self.env: dict[str, list | str | None] = {}
        self.listings: list[_Listing] = []
        self.open = False  # a source list it cannot read, in a branch a ROCm build may take
        self.amd_test = False  # some test names AMD's stack
        self.nvcc_only = False  # (a CMake project's fact)
        self.nvcc_line = 1
        self.generators: list[_Listing] = []  # (a CMake file's fact)
        self.calls = set(vocabulary()["python"]["extension_calls"])
        self.names = dict(vocabulary().get("python_names", {}))
        self._body(tree.body, True)

    # -- tests
    def test(self, node):
        if isinstance(node, ast.BoolOp):
            out = True if isinstance(node.op, ast.And) else False
            for v in node.values:
                out = _and(out, self.test(v)) if isinstance(node.op, ast.And) else _or(out, self.test(v))
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _not(self.test(node.operand))
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, op, right = node.left, node.ops[0], node.comparators[0]
            if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
                known = self._named(left)
                if known is None:
                    return None
                is_none = known == "none"
                return is_none if isinstance(op, ast.Is) else not is_none
            if isinstance(op, (ast.Eq, ast.NotEq)):
                const = right if isinstance(right, ast.Constant) else left if isinstance(left, ast.Constant) else None
                if const is not None and isinstance(const.value, str):
                    self.amd_test = self.amd_test or names_amd(const.value)
                    got = _value_test(const.value, True)
                    return got if isinstance(op, ast.Eq) else _not(got)
            return None
        if isinstance(node, ast.Call):
            return self.test(node.func) if not node.args else None
        known = self._named(node)
        if known is None:
            return None
        return known == "true"

    def _named(self, node) -> str | None:
        """"true" / "none" for a name whose ROCm value is known, else None."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        if dotted in self.names:
            self.amd_test = self.amd_test or names_amd(dotted)
            return self.names[dotted]
        last = dotted.rpartition(".")[2]
        if names_amd(last):
            self.amd_test = True
            return "true"
        return None

    # -- values: a list of (path, reach) items, a str, or None when not readable
    def value(self, node, reach):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                else:
                    got = self.value(v.value, reach) if isinstance(v, ast.FormattedValue) else None
                    if not isinstance(got, str):
                        return None
                    parts.append(got)
            return "".join(parts)
        if isinstance(node, (ast.List, ast.Tuple)):
            out = []
            for elt in node.elts:
                got = self.value(elt, reach)
                if got is None:
                    return None
                out.extend([(got, reach)] if isinstance(got, str) else got)
                if len(out) > MAX_SOURCES:
                    return None
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self.value(node.left, reach), self.value(node.right, reach)
            if isinstance(a, str) and isinstance(b, str):
                return a + b if len(a) + len(b) <= MAX_PATH_CHARS else None
            if isinstance(a, list) and isinstance(b, list):
                # `s = s + s` doubles a list per line: past the bound the list is unread (so
                # its files stay in scope), never built
                return a + b if len(a) + len(b) <= MAX_SOURCES else None
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(a) / "b"
            a, b = self.value(node.left, reach), self.value(node.right, reach)
            return _join(a, b) if isinstance(a, str) and isinstance(b, str) else None
        if isinstance(node, ast.Name):
            return self.env.get(node.id)  # lists are never changed in place: shared, not copied
        if isinstance(node, ast.Call):
            name = _dotted(node.func) or ""
            last = name.rpartition(".")[2]
            args = [self.value(a, reach) for a in node.args]
            if last == "join" and name.startswith(("os.path", "osp", "path")) and args and all(isinstance(a, str) for a in args):
                out = args[0]
                for a in args[1:]:
                    out = _join(out, a)
                return out
            if last in ("dirname", "abspath", "realpath") and node.args and _mentions_file(node.args[0]):
                return _ROOT
            if last in ("Path", "PurePath") and len(args) == 1 and isinstance(args[0], str):
                return args[0]
            if last in ("glob", "iglob") and args and isinstance(args[0], str):
                return [(p, reach) for p in self.glob(args[0], any(k.arg == "recursive" for k in node.keywords))]
            if last in ("sorted", "list") and len(args) == 1 and isinstance(args[0], list):
                return args[0]
            return None
        if isinstance(node, ast.Attribute) and node.attr in ("parent",) and _mentions_file(node.value):
            return _ROOT
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            gen = node.generators[0]
            items = self.value(gen.iter, reach)
            if not isinstance(gen.target, ast.Name) or not isinstance(items, list) or gen.ifs:
                return None
            saved = self.env.get(gen.target.id)
            out = []
            for path, r in items:
                self.env[gen.target.id] = path
                got = self.value(node.elt, _and(reach, r))
                if got is None:
                    out = None
                    break
                out.extend([(got, _and(reach, r))] if isinstance(got, str) else got)
                if len(out) > MAX_SOURCES:
                    out = None
                    break
            self.env[gen.target.id] = saved
            return out
        return None

    def glob(self, pattern: str, recursive: bool) -> list[str]:
        rel = self._rel(pattern)
        if rel is None:
            return []
        return matching(self.files, rel, recursive)

    def _rel(self, path: str) -> str | None:
        """A listed path relative to the project root (paths are relative to the setup.py's folder)."""
        if path.startswith(_ROOT):
            path = path[len(_ROOT):].lstrip("/")
        elif os.path.isabs(path):
            return None
        joined = os.path.normpath(os.path.join(self.folder, path)).replace(os.sep, "/")
        return None if joined.startswith("..") else joined

    # -- statements
    def _body(self, body, reach) -> None:
        for stmt in body:
            self._stmt(stmt, reach)

    def _stmt(self, stmt, reach) -> None:
        if isinstance(stmt, ast.If):
            t = self.test(stmt.test)
            before = dict(self.env)
            self._body(stmt.body, _and(reach, t))
            after_body = self.env
            self.env = dict(before)
            self._body(stmt.orelse, _and(reach, _not(t)))
            self.env = _merge(after_body, self.env)
            return
        if isinstance(stmt, ast.Assign):
            got = self.value(stmt.value, reach)
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.env[target.id] = got
            self._calls(stmt.value, reach)
            return
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            self.env[stmt.target.id] = self.value(stmt.value, reach)
            self._calls(stmt.value, reach)
            return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and isinstance(stmt.op, ast.Add):
            old, new = self.env.get(stmt.target.id), self.value(stmt.value, reach)
            self.env[stmt.target.id] = _grown(old, new)
            self._calls(stmt.value, reach)
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            f = call.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.attr in ("extend", "append", "insert"):
                old = self.env.get(f.value.id)
                arg = self.value(call.args[-1], reach) if call.args else None
                if isinstance(old, list):  # a list grown by a value it cannot read is unreadable
                    if f.attr == "extend" and isinstance(arg, list):
                        self.env[f.value.id] = _grown(old, arg)
                    elif f.attr in ("append", "insert") and isinstance(arg, str):
                        self.env[f.value.id] = _grown(old, [(arg, reach)])
                    else:
                        self.env[f.value.id] = None
            self._calls(call, reach)
            return
        if isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef)):
            # a loop's or function's names are not followed: lists built there are unreadable
            for name in _assigned(stmt):
                self.env[name] = None
            for field_name in ("body", "orelse", "finalbody"):
                self._body(getattr(stmt, field_name, []) or [], reach)
            for handler in getattr(stmt, "handlers", []) or []:
                self._body(handler.body, reach)
            for name in _assigned(stmt):
                self.env[name] = None
            return
        for node in ast.iter_child_nodes(stmt):
            if isinstance(node, ast.expr):
                self._calls(node, reach)

    def _calls(self, expr, reach) -> None:
        """The extension constructions in an expression: their sources become listings."""
        for node in ast.walk(expr):
            if not isinstance(node, ast.Call):
                continue
            name = (_dotted(node.func) or "").rpartition(".")[2]
            if name not in self.calls:
                continue
            src = next((k.value for k in node.keywords if k.arg == "sources"), None)
            if src is None and len(node.args) >= 2:
                src = node.args[1]
            if src is None:
                continue
            got = self.value(src, reach)
            if not isinstance(got, list):
                if reach is not False:
                    self.open = True
                continue
            for path, r in got:
                rel = self._rel(path)
                if rel is not None:
                    self.listings.append(_Listing(rel, _and(reach, r), self.build, node.lineno))


def _merge(a: dict, b: dict) -> dict:
    out = {}
    for k in set(a) | set(b):
        x, y = a.get(k), b.get(k)
        if k not in a or k not in b:
            out[k] = x if k in a else y
        elif isinstance(x, list) and isinstance(y, list):
            if x is y:
                out[k] = x
            else:
                try:
                    seen = set(x)
                    out[k] = x + [i for i in y if i not in seen]  # one pass each, not len(x) per item
                except TypeError:  # an unhashable reach: compare as before
                    out[k] = x + [i for i in y if i not in x]
        elif x == y:
            out[k] = x
        else:
            out[k] = None
    return out


def _assigned(stmt) -> set[str]:
    out = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


def _join(a: str, b: str) -> str:
    if b.startswith("/"):
        return b
    return b if not a else a.rstrip("/") + "/" + b


def _mentions_file(node) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node))


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def read_setup(data: bytes, folder: str, files: list[str], build: str) -> _SetupReader | None:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _SetupReader(tree, folder, files, build)


# ---- CMake -----------------------------------------------------------------------------------

class _CMakeReader:
    def __init__(self, data: bytes, folder: str, files: list[str], build: str):
        self.folder, self.files, self.build = folder, files, build
        self.listings: list[_Listing] = []
        self.generators: list[_Listing] = []  # generator scripts named, with the reach of where
        self.open = False
        self._conditions: dict[tuple[str, bool], object] = {}
        text = data.decode("utf-8", "replace")
        self.amd_test = False
        has_amd_leg = bool(re.search(r"enable_language\s*\(\s*HIP\b|\bproject\s*\([^)]*\bHIP\b|\bHIP\b|\bROCM\b", text, re.I))
        endings = tuple(vocabulary()["sources"]["endings"])
        generator_endings = tuple(vocabulary()["sources"]["generator_endings"])
        dirs = vocabulary()["cmake"]["dir_variables"]
        commands = list(branch_commands(data))
        # a project that does not configure without nvcc: no branch of it is in a ROCm build
        # (and names AMD's stack in no command or condition: comments aside, it never thinks of ROCm)
        self.nvcc_only = needs_nvcc((name, args, bool(heads)) for name, args, _, heads in commands) and not any(
            names_amd(text) for _, args, _, heads in commands
            for text in (*args, *(c for leg in heads for c in (leg.own or "", *leg.earlier))))
        self.nvcc_line = next((line for name, _, line, _ in commands if name == "project"), 1)
        reaches: dict[object, object] = {}  # Leg -> the ROCm reach of a command in it

        def reach_of(leg):
            # each leg is judged once, from the reach of the leg around it: n nested if()s
            # cost n condition readings, not one per level per command
            chain = []
            while leg is not None and leg not in reaches:
                chain.append(leg)
                leg = leg.parent
            got = True if leg is None else reaches[leg]
            for one in reversed(chain):
                for cond in one.earlier:
                    got = _and(got, _not(self.condition(cond, has_amd_leg)))
                if one.own is not None:
                    got = _and(got, self.condition(one.own, has_amd_leg))
                reaches[one] = got
            return got

        for name, args, line, heads in commands:
            reach = False if self.nvcc_only else reach_of(heads[-1]) if heads else True
            is_glob = name == "file" and args and args[0].upper() in ("GLOB", "GLOB_RECURSE")
            for arg in args[1:] if is_glob else args:
                for item in arg.split(";"):
                    item = item.strip()
                    for d in dirs:
                        item = item.replace("${" + d + "}/", "").replace("${" + d + "}", "")
                    if is_glob:
                        if item.upper() in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS", "LIST_DIRECTORIES", "RELATIVE", "TRUE", "FALSE") or item == args[1]:
                            continue
                        if "${" in item:
                            if reach is not False:
                                self.open = True
                            continue
                        rel = self._rel(item)
                        for f in matching(self.files, rel, args[0].upper() == "GLOB_RECURSE", args[0].upper() == "GLOB_RECURSE") if rel is not None else ():
                            self.listings.append(_Listing(f, reach, build, line))
                        continue
                    if item.lower().endswith(generator_endings) and "${" not in item and "$<" not in item:
                        rel = self._rel(item)
                        if rel is not None:
                            self.generators.append(_Listing(rel, reach, build, line))
                        continue
                    if not item.lower().endswith(endings):
                        continue
                    if "${" in item or "$<" in item:
                        if reach is False:
                            continue  # not evidence of a CUDA-only listing; nor of a ROCm one
                        pattern = self._rel(re.sub(r"\$[{<][^}>]*[}>]", "*", item))
                        for f in self.files if pattern is not None else ():
                            if fits(f, pattern) or fits(f, "*/" + pattern.rpartition("/")[2]):
                                self.listings.append(_Listing(f, None, build, line))
                        continue
                    rel = self._rel(item)
                    if rel is not None:
                        self.listings.append(_Listing(rel, reach, build, line))

    def _rel(self, path: str) -> str | None:
        if os.path.isabs(path):
            return None
        joined = os.path.normpath(os.path.join(self.folder, path)).replace(os.sep, "/")
        return None if joined.startswith("..") else joined

    def condition(self, text: str, has_amd_leg: bool):
        """What a CMake condition says for a ROCm build (True / False / None), read once per
        text (an elseif chain names every earlier condition again in each later leg)."""
        key = (text, has_amd_leg)
        if key not in self._conditions:
            self._conditions[key] = self._condition(text, has_amd_leg)
        return self._conditions[key]

    def _condition(self, text: str, has_amd_leg: bool):
        tokens = [t for t in re.findall(r'"[^"]*"|\(|\)|[^\s()]+', text)]
        if any(names_amd(t.strip('"${}')) for t in tokens):
            self.amd_test = True
        pos = 0

        def atom():
            nonlocal pos
            if pos >= len(tokens):
                return None
            tok = tokens[pos]
            if tok == "(":
                pos += 1
                got = disjunction()
                if pos < len(tokens) and tokens[pos] == ")":
                    pos += 1
                return got
            if tok.upper() == "NOT":
                pos += 1
                return _not(atom())
            if tok.upper() in ("DEFINED", "EXISTS", "TARGET", "COMMAND", "POLICY", "IS_DIRECTORY"):
                pos += 2
                name = tokens[pos - 1] if pos - 1 < len(tokens) else ""
                return True if tok.upper() == "DEFINED" and names_amd(name.strip('"${}')) else None
            pos += 1
            if pos < len(tokens) and tokens[pos].upper() in ("STREQUAL", "EQUAL", "MATCHES", "VERSION_LESS", "VERSION_GREATER",
                                                              "VERSION_EQUAL", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL",
                                                              "LESS", "GREATER", "STRLESS", "STRGREATER", "IN_LIST"):
                op = tokens[pos].upper()
                right = tokens[pos + 1] if pos + 1 < len(tokens) else ""
                pos += 2
                if op != "STREQUAL":
                    return None
                left_literal, right_literal = tok.startswith('"') and "${" not in tok, right.startswith('"') and "${" not in right
                value = right if right_literal or not left_literal else tok
                return _value_test(value, has_amd_leg)
            name = tok.strip('"').strip("${}")
            return True if names_amd(name) else None

        def conjunction():
            nonlocal pos
            out = atom()
            while pos < len(tokens) and tokens[pos].upper() == "AND":
                pos += 1
                out = _and(out, atom())
            return out

        def disjunction():
            nonlocal pos
            out = conjunction()
            while pos < len(tokens) and tokens[pos].upper() == "OR":
                pos += 1
                out = _or(out, conjunction())
            return out

        got = disjunction()
        return got if pos >= len(tokens) else None


# ---- the project's scope ---------------------------------------------------------------------

_INCLUDE = re.compile(rb'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
_C_FILES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl", ".hip")
CUDA_SUFFIXES = frozenset(_C_FILES)
_HEADER_FILES = (".cuh", ".h", ".hpp", ".hxx", ".inl")


def build_scope(root: Path, files: list[str], read) -> BuildScope:
    """The scope of the project at `root`, whose files (POSIX, relative) are `files`;
    `read(rel)` gives a file's bytes (or None)."""
    readers = []
    for rel in files:
        name = rel.rpartition("/")[2]
        folder = rel.rpartition("/")[0]
        if name not in ("setup.py", "CMakeLists.txt"):
            continue
        data = read(rel)
        if data is None:
            continue
        try:
            reader = read_setup(data, folder, files, rel) if name == "setup.py" else _CMakeReader(data, folder, files, rel)
        except (RecursionError, ValueError):
            reader = None
        if reader is None:
            # a build file that cannot be read may list anything under its folder
            readers.append(_Unreadable(folder, rel))
            continue
        readers.append(reader)
    existing = set(files)
    by_file: dict[str, list[_Listing]] = {}
    for reader in readers:
        for listing in reader.listings:
            if listing.rel in existing:
                by_file.setdefault(listing.rel, []).append(listing)
    open_folders = [r.folder for r in readers if r.open]
    amd_builds = {r.build for r in readers if r.amd_test}
    nvcc_builds = {r.build for r in readers if r.nvcc_only}
    if nvcc_builds and (amd_builds or _python_tests_amd(files, read)):
        # the package has a ROCm route, and these projects are not on it
        amd_builds |= nvcc_builds
    out = BuildScope()
    for rel, listings in by_file.items():
        if any(l.reach is not False for l in listings):
            continue
        if any(l.build not in amd_builds for l in listings):
            continue
        if any(not f or rel.startswith(f + "/") for f in open_folders):
            continue
        first = min(listings, key=lambda l: (l.build, l.line))
        out.outside[rel] = Verdict(first.build, first.line, nvcc=first.build in nvcc_builds)
    # generator scripts a build file runs: the `#include`s they write are includes of the
    # sources they generate; one named only where a ROCm build does not go generates none of it
    generators: dict[str, list[_Listing]] = {}
    for reader in readers:
        for g in getattr(reader, "generators", ()):
            if g.rel in existing:
                generators.setdefault(g.rel, []).append(g)
    skipped = {}
    for rel, named in generators.items():
        if all(g.reach is False and g.build in amd_builds for g in named):
            first = min(named, key=lambda g: (g.build, g.line))
            skipped[rel] = Verdict(first.build, first.line)
    # the folders of the projects that do not configure without nvcc, on a package's ROCm route
    # (that compile files of their folder: a project listing nothing here claims nothing)
    nvcc_folders = {r.folder: Verdict(r.build, r.nvcc_line, nvcc=True, unused=True)
                    for r in readers if r.nvcc_only and r.build in amd_builds
                    and any(l.rel in existing for l in r.listings)}
    if out.outside or skipped or nvcc_folders:
        _headers(out, files, by_file, open_folders, read, sorted(generators), skipped, nvcc_folders)
    return out


def _python_tests_amd(files: list[str], read) -> bool:
    """Some Python file of the project tests for AMD's stack (`if torch.version.hip:`,
    `assert not is_rocm()`, `x if IS_HIP else y`): the package has a ROCm route. Read only
    when a CMake project of it does not configure without nvcc."""
    words = "|".join(re.escape(w) for w in sorted(vocabulary()["vendor_words"]))
    hint = re.compile(rf"(?i)(?<![A-Za-z0-9])({words})(?![A-Za-z0-9])".encode())
    for rel in files:
        if not rel.endswith(".py"):
            continue
        data = read(rel)
        if not data or not hint.search(data.replace(b"_", b" ")):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            test = node.test if isinstance(node, (ast.If, ast.IfExp, ast.Assert, ast.While)) else None
            if test is None:
                continue
            for part in ast.walk(test):
                dotted = _dotted(part) if isinstance(part, (ast.Name, ast.Attribute)) else None
                if dotted and names_amd(dotted):
                    return True
    return False


@dataclass
class _Unreadable:
    folder: str
    build: str
    listings: tuple = ()
    open: bool = True
    amd_test: bool = False
    nvcc_only: bool = False


def _headers(out: BuildScope, files: list[str], listed: dict, open_folders: list[str], read,
             generators: list[str] = (), skipped: dict | None = None, nvcc_folders: dict | None = None) -> None:
    """Headers (never listed) that only files outside the ROCm build include: outside too.
    An include resolves beside the including file, else to every file of the project whose
    path ends with it (any file that may include the header counts). A generator script's
    `#include` lines resolve to both (it may write its sources anywhere); one in `skipped`
    counts as a file outside. A header that nothing in the project includes, in the folder of a
    CMake project that does not configure without nvcc and compiles files there
    (`nvcc_folders`), belongs to that project (the sources it generates include it): outside."""
    skipped = skipped or {}
    nvcc_folders = nvcc_folders or {}
    existing = set(files)
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(f.rpartition("/")[2], []).append(f)
    includers: dict[str, set[str]] = {}  # header -> the files that may include it
    scripts = set(generators)
    for rel in files:
        if not rel.lower().endswith(_C_FILES) and rel not in scripts:
            continue
        data = read(rel)
        if not data or b"include" not in data:
            continue
        here = rel.rpartition("/")[0]
        for m in _INCLUDE.finditer(data):
            written = m.group(1).decode("utf-8", "replace")
            beside = os.path.normpath(os.path.join(here, written)).replace(os.sep, "/")
            tail = "/" + written.lstrip("./")
            if beside in existing and rel not in scripts:
                targets = [beside]
            else:  # found through an include path: every file whose path ends so
                targets = [f for f in by_name.get(written.rpartition("/")[2], ()) if ("/" + f).endswith(tail)]
            for t in targets:
                includers.setdefault(t, set()).add(rel)
    candidates = [f for f in files if f.lower().endswith(_C_FILES) and f not in listed
                  and not any(not o or f.startswith(o + "/") for o in open_folders)]
    for header in candidates:
        if header in out.outside or not header.lower().endswith(_HEADER_FILES) or includers.get(header, set()) - {header}:
            continue
        owner = max((d for d in nvcc_folders if not d or header.startswith(d + "/")), key=len, default=None)
        if owner is not None:
            out.outside[header] = nvcc_folders[owner]
    # a worklist, not sweeps until nothing changes: each header waits for the count of its
    # includers not yet outside to reach zero, so a chain of n headers costs n steps
    waiting: dict[str, int] = {}
    users_of: dict[str, set[str]] = {}
    included_by: dict[str, list[str]] = {}  # file -> the candidate headers it may include
    ready = []
    for header in candidates:
        if header in out.outside:
            continue
        users = includers.get(header, set()) - {header}
        if not users:
            continue
        users_of[header] = users
        waiting[header] = sum(1 for u in users if u not in out.outside and u not in skipped)
        for u in users:
            included_by.setdefault(u, []).append(header)
        if waiting[header] == 0:
            ready.append(header)
    while ready:
        header = ready.pop()
        if header in out.outside:
            continue
        via = min(users_of[header])
        v = out.outside.get(via) or skipped[via]
        out.outside[header] = Verdict(v.build, v.line, v.via or via)
        for h in included_by.get(header, ()):
            if h in waiting and h not in out.outside:
                waiting[h] -= 1
                if waiting[h] == 0:
                    ready.append(h)


def root_for(settings, real: Path, tree: str | None) -> Path:
    """The root of the project `real` belongs to (`discovery.roots.project_root`: the config
    file's folder or the git root when it holds the file, else `tree`, the scan root it was
    found under, when that holds it, else its own folder): a build file lists sources from
    the folders below it, so the file's own folder alone would never see its setup.py, and
    nothing above the tree is walked. It depends on the file's folder and tree only and is
    found once per folder per scan (the cache key and the role of every CUDA file ask it;
    each answer climbs the folders above)."""
    folder = os.path.dirname(os.path.abspath(real))
    return session.current(settings).fact(("root-for", folder, tree), lambda: project_root_of(settings, real, tree))


def scan_build_scope(settings, real: Path, tree: str | None) -> tuple[BuildScope | None, str | None]:
    """(the scan's build scope of the project `real` (found in `tree`) belongs to, its path there)."""
    root = root_for(settings, real, tree)

    def make() -> BuildScope:
        found, _ = discover([root], settings)
        prefix = str(root) + os.sep
        files = []
        for sf in found:
            path = os.path.abspath(sf.real)
            if path.startswith(prefix):
                files.append(path[len(prefix):].replace(os.sep, "/"))
        # build files are discovered as files of their own; a setup.py too
        files = sorted(set(files))

        def read(rel: str) -> bytes | None:
            # the one bounded reader of tree data: regular files only, no more than the scan's
            # size limit (a FIFO or a 10 GB setup.py swapped in after discovery is unread); a
            # C/C++/CUDA file the scan has read already is not read again
            try:
                if rel.lower().endswith(_C_FILES):
                    return read_once(settings, root / rel, keep=False)
                return read_limited(root / rel, settings.max_file_size)
            except OSError:
                return None

        return build_scope(root, files, read)

    scope = session.current(settings).fact(("build-scope", str(root)), make)
    path = os.path.abspath(real)
    prefix = str(root) + os.sep
    rel = path[len(prefix):].replace(os.sep, "/") if path.startswith(prefix) else None
    return scope, rel


def file_verdict(ctx) -> Verdict | None:
    """`ctx.fact(file_verdict)`: why the CUDA file is not in its package's ROCm build, or None."""
    real = getattr(ctx, "real_path", None)
    if real is None or getattr(ctx, "session", None) is None:
        return None
    scope, rel = scan_build_scope(ctx.settings, Path(real), getattr(ctx, "scan_root", None))
    return scope.verdict(rel) if scope is not None else None
