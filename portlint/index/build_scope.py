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
A Python module that compiles an extension when it runs (a JIT build: `cpp_extension.load`,
a lazy `...Extension(sources=...)`, read with `ast`, never run) lists its sources too: in a
branch a ROCm build does not take when the module refuses ROCm (a raise, or a refusal
returned, in a leg a ROCm build takes) and names AMD's stack nowhere else; elsewhere in one
it may take. A header each `#include` of which sits in an #if leg an AMD build skips by a
condition that names the vendor (`#ifndef USE_ROCM`) is outside whatever the build lists.
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
from portlint.core.catalog import rules_root
from portlint.core.globs import fits, matching
from portlint.core.files import read_limited
from portlint.core.suffixes import C_FAMILY, C_HEADERS
from portlint.discovery.files import discover
from portlint.discovery.roots import project_root as project_root_of
from portlint.frontends.buildfiles.cmake import branch_commands, needs_nvcc
from portlint.frontends.cuda.guards import GuardMap
from portlint.frontends.cuda.includes import read_once
from portlint.frontends.cuda.preprocessor import AMD_BY_VENDOR, ExpressionTooDeep

@lru_cache(maxsize=1)
def vocabulary() -> dict:
    """rules/vocabulary/build_scope.toml, found where the rule files are (the wheel's
    portlint/_rules or the source tree's rules/)."""
    with open(rules_root() / "vocabulary" / "build_scope.toml", "rb") as fh:
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
    refusal: str = ""  # the build is a Python module's JIT build, and this line refuses ROCm there
    guard: str = ""  # build:line is an #include inside this condition, which AMD builds skip

    def where(self) -> str:
        if self.unused:
            return (f"it lies in the folder of {self.build}, a CMake project that declares CUDA and never HIP "
                    f"({self.build}:{self.line}), which does not configure without nvcc, and no other file includes it")
        if self.via.lower().endswith(tuple(vocabulary()["sources"]["generator_endings"])):
            return (f"included only by the sources {self.via} generates, which {self.build}:{self.line} "
                    "runs only where a ROCm build does not go")
        if self.via:
            return f"included only by sources the ROCm build skips, such as {self.via} ({self.build}:{self.line})"
        if self.guard:
            return (f"every #include of it is one an AMD build skips, such as {self.build}:{self.line} "
                    f"inside `{self.guard}`")
        if self.refusal:
            return (f"the JIT build at {self.build}:{self.line} compiles it, in a module that refuses ROCm "
                    f"({self.refusal}) and has no ROCm leg")
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


class _PyTests:
    """What a Python test says for a ROCm build (True / False / None), from the vocabulary's
    names; `amd_test` records that some test read names AMD's stack."""

    def __init__(self, cuda_values: bool = True):
        self.amd_test = False
        self.names = dict(vocabulary().get("python_names", {}))
        # `x == "cuda"` is false in a ROCm build: a build file's vendor switch; in a module
        # that runs (`device.type != "cuda"`) the value is PyTorch's device type, true on ROCm too
        self.cuda_values = cuda_values

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
                    got = _value_test(const.value, self.cuda_values)
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


class _SetupReader(_PyTests):
    """The source lists of one setup.py, each item with the ROCm reach of where it was added."""

    jit = False

    def __init__(self, tree: ast.Module, folder: str, files: list[str], build: str):
        super().__init__()
        self.folder = folder  # POSIX folder of the setup.py relative to the project root ("" at the top)
        self.files = files
        self.build = build
        self.env: dict[str, list | str | None] = {}
        self.listings: list[_Listing] = []
        self.open = False  # a source list it cannot read, in a branch a ROCm build may take
        self.nvcc_only = False  # (a CMake project's fact)
        self.nvcc_line = 1
        self.generators: list[_Listing] = []  # (a CMake file's fact)
        self.calls = set(vocabulary()["python"]["extension_calls"])
        self._body(tree.body, True)

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


# ---- JIT builds: Python modules that compile an extension when they run -------------------------

class _Loc(str):
    """A path relative to the project root that a module computes from its own `__file__`."""


class _Callable:
    """A function (or lambda) of the module, named as a value (`sources=_marlin_sources`)."""

    def __init__(self, node):
        self.node = node


class _Either(tuple):
    """One of these project paths (a function that returns one or another: a source file
    found in either of two folders); a list that holds it lists each."""


_MORE = object()  # a list item it cannot read


def _up(path, n: int):
    if isinstance(path, _Either):
        return _either(_up(p, n) for p in path)
    if not isinstance(path, _Loc):
        return None
    for _ in range(n):
        if path == "":
            return None  # above the project root
        path = path.rpartition("/")[0]
    return _Loc(path)


def _either(paths):
    got = tuple(paths)
    return _Either(got) if got and all(isinstance(p, _Loc) for p in got) and len(got) <= 16 else None


def _under(path, *parts):
    """`path / part / ...` for a project path and strings; None above the root or unread."""
    if isinstance(path, _Either):
        return _either(_under(p, *parts) for p in path)
    if not isinstance(path, _Loc) or not all(isinstance(p, str) for p in parts):
        return None
    if any(p.startswith("/") for p in parts):
        return None
    joined = "/".join(x for x in (path, *parts) if x)
    normal = os.path.normpath(joined).replace(os.sep, "/") if joined else ""
    if normal == ".":
        normal = ""
    return None if normal.startswith("..") or len(normal) > MAX_PATH_CHARS else _Loc(normal)


def _refuses(leg: list) -> bool:
    """A leg that refuses: it ends in a raise, or in a return of a refusal (False, a message),
    after nothing but calls (a log line). A leg that only warns goes on: not a refusal."""
    if not leg or not all(isinstance(s, (ast.Expr, ast.Pass)) for s in leg[:-1]):
        return False
    last = leg[-1]
    if isinstance(last, ast.Raise):
        return True
    if isinstance(last, ast.Return) and last.value is not None:
        v = last.value
        if isinstance(v, ast.Constant):
            return v.value is False or (isinstance(v.value, str) and bool(v.value.strip()))
        return isinstance(v, ast.JoinedStr)
    return False


class _JitReader(_PyTests):
    """The JIT builds of one Python module (read with `ast`, never run): the calls that compile
    an extension from a `sources` list when the module runs (`torch.utils.cpp_extension.load`,
    a `...Extension(sources=...)` object the package builds lazily), the files each lists (a
    list, a function or lambda of the module that returns one, paths computed from the
    module's own `__file__`), and whether the module refuses ROCm.

    A module refuses ROCm when it has a refusal (a leg a ROCm build takes that raises or
    returns a refusal: `if IS_ROCM: return "... not supported on ROCm"`, `assert not IS_ROCM`)
    and names AMD's stack nowhere else: no other leg runs on ROCm, no ROCm flag or path is
    built. Its JIT builds are then not in a ROCm build (reach False); any other module's
    builds may run there (reach None)."""

    jit = True
    MAX_DEPTH = 12  # calls followed through the module's functions

    def __init__(self, tree: ast.Module, build: str, files: list[str]):
        super().__init__(cuda_values=False)
        self.build = build
        self.folder = ""  # an unread JIT list may name any file of the project
        self.files = files
        self.listings: list[_Listing] = []
        self.open = False
        self.nvcc_only = False
        self.nvcc_line = 1
        self.generators: list[_Listing] = []
        self.functions: dict[str, ast.AST] = {}
        self.globals: dict[str, ast.AST] = {}
        stored: dict[str, int] = {}
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
                stored[stmt.name] = stored.get(stmt.name, 0) + 1
                continue
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    self.globals[targets[0].id] = stmt.value
            for name in _assigned(stmt):
                stored[name] = stored.get(name, 0) + 1
        # a module name bound more than once (or in a block) has no one value
        for name, count in stored.items():
            if count > 1:
                self.functions.pop(name, None)
                self.globals.pop(name, None)
        self._memo: dict = {}
        self._busy: set = set()
        self.depth = 0
        self.refusal = self._refusal(tree)
        self.amd_test = self.refusal > 0
        self._builds(tree)

    # -- does the module refuse ROCm (the line of its first refusal, else 0)
    def _refusal(self, tree) -> int:
        covered: set[int] = set()
        lines = []
        for node in ast.walk(tree):
            if isinstance(node, ast.If):
                t = self.test(node.test)
                leg = node.body if t is True else node.orelse if t is False else None
                if leg is not None and _refuses(leg):
                    lines.append(node.lineno)
                    for part in (node.test, *leg):
                        covered.update(id(n) for n in ast.walk(part))
            elif isinstance(node, ast.Assert) and self.test(node.test) is False:
                lines.append(node.lineno)
                covered.update(id(n) for n in ast.walk(node))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                # the flag's own definition (`IS_ROCM = torch.version.hip is not None`) is no leg
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if all(isinstance(t, ast.Name) and names_amd(t.id) for t in targets):
                    for part in (*targets, node.value):
                        covered.update(id(n) for n in ast.walk(part))
        if not lines:
            return 0
        for node in ast.walk(tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in covered:
                dotted = _dotted(node)
                if dotted and names_amd(dotted):
                    return 0  # a ROCm leg, flag or path of its own: the module runs there
        return min(lines)

    # -- the JIT builds
    def _builds(self, tree) -> None:
        enclosing: dict[int, ast.AST] = {}
        for fn in self.functions.values():
            for n in ast.walk(fn):
                enclosing.setdefault(id(n), fn)
        reach = False if self.refusal else None
        for node, src in _jit_calls(tree):
            fn = enclosing.get(id(node))
            env = self._run(fn, {})[1] if fn is not None else {}
            got = self.val(src, env)
            if isinstance(got, _Callable):
                got = self.call(got, [], {})
            if not isinstance(got, list):
                self.open = self.open or reach is not False
                continue
            for item in got:
                if isinstance(item, _Loc):
                    self.listings.append(_Listing(item, reach, self.build, node.lineno))
                elif reach is False:
                    continue
                elif isinstance(item, str) and item and not item.startswith("/") and ".." not in item.split("/"):
                    # relative to the working folder, wherever that is: any file whose path ends so
                    tail = "/" + item.lstrip("./")
                    for f in self.files:
                        if ("/" + f).endswith(tail):
                            self.listings.append(_Listing(f, None, self.build, node.lineno))
                else:
                    self.open = True  # a source it cannot read

    # -- values: _Loc (a project path), str, int, list (items of any of these, _MORE), _Callable, None
    def val(self, node, env):
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, (str, int)) and not isinstance(node.value, bool) else None
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return _Loc(self.build)
            if node.id in env:
                return env[node.id]
            if node.id in self.functions:
                return _Callable(self.functions[node.id])
            if node.id in self.globals and node.id not in self._busy:
                key = ("global", node.id)
                if key not in self._memo:
                    self._busy.add(node.id)
                    try:
                        self._memo[key] = self.val(self.globals[node.id], {})
                    finally:
                        self._busy.discard(node.id)
                return self._memo[key]
            return None
        if isinstance(node, ast.Lambda):
            return _Callable(node)
        if isinstance(node, ast.Attribute):
            if node.attr == "parent":
                return _up(self.val(node.value, env), 1)
            return None
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
                base, index = self.val(node.value.value, env), self.val(node.slice, env)
                if isinstance(index, int) and 0 <= index < 64:
                    return _up(base, index + 1)
            return None
        if isinstance(node, ast.BinOp):
            a, b = self.val(node.left, env), self.val(node.right, env)
            if isinstance(node.op, ast.Div):
                return _under(a, b)
            if isinstance(node.op, ast.Add):
                if isinstance(a, list) and isinstance(b, list):
                    return a + b if len(a) + len(b) <= MAX_SOURCES else None
                if isinstance(a, str) and isinstance(b, str) and len(a) + len(b) <= MAX_PATH_CHARS:
                    return _under(_Loc(""), a + b) if isinstance(a, _Loc) else a + b
            return None
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                got = self.val(v.value, env) if isinstance(v, ast.FormattedValue) else v.value
                if not isinstance(got, str):
                    return None
                parts.append(got)
            text = "".join(parts)
            if len(text) > MAX_PATH_CHARS:
                return None
            return _under(_Loc(""), text) if parts and isinstance(parts[0], _Loc) else text
        if isinstance(node, (ast.List, ast.Tuple)):
            out = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    got = self.val(elt.value, env)
                    out.extend(got if isinstance(got, list) else [_MORE])
                else:
                    got = self.val(elt, env)
                    out.extend(got if isinstance(got, _Either) else [_MORE if got is None else got])
                if len(out) > MAX_SOURCES:
                    return None
            return out
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            gen = node.generators[0] if len(node.generators) == 1 else None
            if gen is None or gen.ifs or not isinstance(gen.target, ast.Name):
                return [_MORE]
            items = self.val(gen.iter, env)
            if not isinstance(items, list):
                return [_MORE]
            out = []
            for item in items:
                got = self.val(node.elt, {**env, gen.target.id: item}) if item is not _MORE else None
                out.extend(got if isinstance(got, _Either) else [_MORE if got is None else got])
            return out
        if isinstance(node, ast.Call):
            return self._call_value(node, env)
        return None

    def _call_value(self, node, env):
        args = [self.val(a, env) if not isinstance(a, ast.Starred) else None for a in node.args]
        kwargs = {k.arg: self.val(k.value, env) for k in node.keywords if k.arg}
        f = node.func
        if isinstance(f, ast.Attribute):
            dotted = _dotted(f) or ""
            if dotted in ("os.path.join", "posixpath.join", "osp.join") and args:
                return _under(args[0], *args[1:]) if isinstance(args[0], _Loc) else None
            if dotted in ("os.path.dirname", "osp.dirname") and len(args) == 1:
                return _up(args[0], 1)
            if dotted in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "osp.abspath", "osp.realpath", "os.fspath") and len(args) == 1:
                return args[0] if isinstance(args[0], (_Loc, _Either)) else None
            if dotted in ("glob.glob", "glob.iglob") and args and isinstance(args[0], _Loc):
                return list(map(_Loc, matching(self.files, args[0], any(k.arg == "recursive" for k in node.keywords))))
            obj = self.val(f.value, env)
            if isinstance(obj, _Either) and f.attr in ("resolve", "absolute", "expanduser", "joinpath") :
                return obj if f.attr != "joinpath" else _under(obj, *args)
            if isinstance(obj, _Loc):
                if f.attr in ("resolve", "absolute", "expanduser") and not args:
                    return obj
                if f.attr == "joinpath":
                    return _under(obj, *args)
                if f.attr in ("glob", "rglob") and len(args) == 1 and isinstance(args[0], str):
                    pattern = _under(obj, ("**/" if f.attr == "rglob" else "") + args[0])
                    return list(map(_Loc, matching(self.files, pattern, True))) if pattern is not None else None
            return None
        name = f.id if isinstance(f, ast.Name) else None
        if name in ("str", "Path", "PurePath", "PosixPath") and len(args) == 1 and not kwargs:
            return args[0] if isinstance(args[0], (str, _Either)) else None
        if name in ("Path", "PurePath") and len(args) > 1:
            return _under(args[0], *args[1:])
        if name in ("sorted", "list", "tuple") and len(args) == 1 and not kwargs:
            return args[0] if isinstance(args[0], list) else [_MORE] if args[0] is None else None
        target = self.val(f, env) if name is not None else None
        if isinstance(target, _Callable):
            return self.call(target, args, kwargs)
        return None

    def call(self, target: _Callable, args: list, kwargs: dict):
        """The value a module function (or lambda) returns for these arguments, else None."""
        fn = target.node
        try:
            key = (id(fn), tuple(args), tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._memo:
            return self._memo[key]
        if self.depth >= self.MAX_DEPTH or fn in self._busy:
            return None
        self.depth += 1
        self._busy.add(fn)
        try:
            if isinstance(fn, ast.Lambda):
                params = {a.arg: None for a in fn.args.args}
                for a, v in zip(fn.args.args, args):
                    params[a.arg] = v
                got = self.val(fn.body, params)
            else:
                got = self._run(fn, self._bind(fn, args, kwargs))[0]
        finally:
            self.depth -= 1
            self._busy.discard(fn)
        if key is not None:
            self._memo[key] = got
        return got

    @staticmethod
    def _bind(fn, args, kwargs) -> dict:
        a = fn.args
        params = [p.arg for p in (*a.posonlyargs, *a.args)]
        env = {p: None for p in (*params, *(k.arg for k in a.kwonlyargs))}
        for p, v in zip(params, args):
            env[p] = v
        for k, v in kwargs.items():
            if k in env:
                env[k] = v
        return env

    def _run(self, fn, env: dict):
        """(what the function returns, its names at the end): its top-level statements run in
        order; a name bound or grown inside a block (an if, a loop, a try) has no one value."""
        env = dict(env)
        nested = set()
        for stmt in fn.body:
            if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
                nested |= _assigned(stmt) | _grown_names(stmt)
        returns = []
        for stmt in fn.body:
            if isinstance(stmt, ast.Assign):
                got = self.val(stmt.value, env)
                for t in stmt.targets:
                    for name in _assigned(t):
                        env[name] = got if isinstance(t, ast.Name) and name not in nested else None
                continue
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                env[stmt.target.id] = self.val(stmt.value, env) if stmt.value is not None and stmt.target.id not in nested else None
                continue
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                old, new = env.get(stmt.target.id), self.val(stmt.value, env)
                env[stmt.target.id] = (old + new if isinstance(old, list) and isinstance(new, list) and not nested & {stmt.target.id}
                                       and len(old) + len(new) <= MAX_SOURCES else None)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                    and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.attr in ("append", "extend", "insert"):
                name, how = stmt.value.func.value.id, stmt.value.func.attr
                old = env.get(name)
                arg = self.val(stmt.value.args[-1], env) if stmt.value.args else None
                if isinstance(old, list) and name not in nested and len(old) < MAX_SOURCES:
                    env[name] = old + (arg if how == "extend" and isinstance(arg, list) else [_MORE] if how == "extend" or arg is None else [arg])
                else:
                    env[name] = None
                continue
            if isinstance(stmt, ast.Return):
                returns.append(self.val(stmt.value, env) if stmt.value is not None else None)
                break
            if isinstance(stmt, ast.Raise):
                break
            for ret in _returns(stmt):
                returns.append(self.val(ret.value, env) if ret.value is not None else None)
            for name in _assigned(stmt) | _grown_names(stmt):
                env[name] = None
        if not returns:
            return None, env
        if all(isinstance(r, list) for r in returns):
            out = []
            for r in returns:
                out.extend(i for i in r if i not in out) if len(out) + len(r) <= MAX_SOURCES else out.append(_MORE)
            return out, env
        first = returns[0]
        if all(r == first and type(r) is type(first) for r in returns):
            return first, env
        # a project path or another (found in one folder, else in the other): either
        return _either(p for r in returns for p in (r if isinstance(r, _Either) else (r,))), env


def _returns(stmt):
    """The return statements inside a block, not inside a function or class it defines."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            yield node
            continue
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.append(child)


def _grown_names(stmt) -> set[str]:
    """Names a block grows in place (`x.append(...)`, `x.extend(...)`)."""
    return {n.func.value.id for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.attr in ("append", "extend", "insert", "remove", "pop", "clear")}


def _jit_calls(tree) -> list:
    """(call, its sources expression) for each JIT build call of a module."""
    voc = vocabulary()["python"]
    calls = set(voc["extension_calls"]) - set(voc.get("jit_load_calls", ()))
    suffixes = tuple(voc.get("jit_call_suffixes", ()))
    loads = set(voc.get("jit_load_calls", ()))
    modules = tuple(voc.get("jit_modules", ()))
    imported = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in modules:
            imported |= {a.asname or a.name for a in node.names if a.name in loads}
        elif isinstance(node, ast.Call):
            found.append(node)
    out = []
    for node in found:
        dotted = _dotted(node.func) or ""
        last = dotted.rpartition(".")[2]
        is_load = last in loads and (dotted in imported or dotted.rpartition(".")[0].endswith(modules))
        keyword = next((k.value for k in node.keywords if k.arg == "sources"), None)
        if is_load or last in calls:
            src = keyword if keyword is not None else node.args[1] if len(node.args) >= 2 else None
        elif last.endswith(suffixes):
            src = keyword
        else:
            continue
        if src is not None:
            out.append((node, src))
    return out


@lru_cache(maxsize=1)
def _jit_hints() -> tuple[bytes, ...]:
    """Bytes one of which a module with a JIT build holds (the call's name and its paren, or
    the module `load` comes from): the rest are not parsed."""
    voc = vocabulary()["python"]
    names = (set(voc["extension_calls"]) - set(voc.get("jit_load_calls", ()))) | set(voc.get("jit_call_suffixes", ()))
    hints = {(n + "(").encode() for n in names} | {m.rpartition(".")[2].encode() for m in voc.get("jit_modules", ())}
    return tuple(sorted(h for h in hints if not any(o != h and o in h for o in hints)))  # "Extension(" covers "CUDAExtension("


def read_jit(data: bytes, build: str, files: list[str]) -> _JitReader | None:
    """The JIT builds of a Python module, or None when it has none (or does not parse)."""
    if not any(hint in data for hint in _jit_hints()):
        return None
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not _jit_calls(tree):
        return None
    reader = _JitReader(tree, build, files)
    return reader if reader.listings or reader.open else None


# ---- CMake -----------------------------------------------------------------------------------

class _CMakeReader:
    jit = False

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
_C_FILES = tuple(sorted(C_FAMILY))  # for str.endswith
CUDA_SUFFIXES = C_FAMILY
_HEADER_FILES = tuple(sorted(C_HEADERS))


def build_scope(root: Path, files: list[str], read) -> BuildScope:
    """The scope of the project at `root`, whose files (POSIX, relative) are `files`;
    `read(rel)` gives a file's bytes (or None)."""
    readers = []
    for rel in files:
        name = rel.rpartition("/")[2]
        folder = rel.rpartition("/")[0]
        if name != "setup.py" and name.endswith(".py"):
            data = read(rel)
            try:
                jit = read_jit(data, rel, files) if data else None
            except (RecursionError, ValueError):
                jit = None  # a module it cannot follow: its builds are not evidence either way
                readers.append(_Unreadable("", rel, jit=True))
            if jit is not None:
                readers.append(jit)
            continue
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
    # an unread source list of a build file opens its folder; one of a JIT build that may run
    # on ROCm opens every file the package's JIT builds list (they are read from anywhere), not
    # the files its build files list only where a ROCm build does not go
    open_folders = [r.folder for r in readers if r.open and not r.jit]
    jit_open = any(r.open for r in readers if r.jit)
    jit_builds = {r.build for r in readers if r.jit}
    amd_builds = {r.build for r in readers if r.amd_test}
    nvcc_builds = {r.build for r in readers if r.nvcc_only}
    python_amd: list[bool] = []  # asked at most once: it reads and parses the Python files

    def python_tests_amd() -> bool:
        if not python_amd:
            python_amd.append(_python_tests_amd(files, read))
        return python_amd[0]

    if nvcc_builds and (amd_builds or python_tests_amd()):
        # the package has a ROCm route, and these projects are not on it
        amd_builds |= nvcc_builds
    refusals = {r.build: r.refusal for r in readers if r.jit and getattr(r, "refusal", 0)}
    out = BuildScope()
    for rel, listings in by_file.items():
        if any(l.reach is not False for l in listings):
            continue
        if any(l.build not in amd_builds for l in listings):
            continue
        if any(not f or rel.startswith(f + "/") for f in open_folders):
            continue
        if jit_open and all(l.build in jit_builds for l in listings):
            continue
        first = min(listings, key=lambda l: (l.build, l.line))
        refusal = refusals.get(first.build, 0)
        out.outside[rel] = Verdict(first.build, first.line, nvcc=first.build in nvcc_builds,
                                   refusal=f"{first.build}:{refusal}" if refusal else "")
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
    # a header included only where AMD builds do not go is outside with no build file listing
    # it, in a package with a ROCm route (a build file or its Python code tests for AMD's stack)
    if out.outside or skipped or nvcc_folders or amd_builds or python_tests_amd():
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
    jit: bool = False


_VENDOR_HINT = tuple(sorted(m.encode() for m in AMD_BY_VENDOR.defined if not m.startswith("__clang")))


def _vendor_skips(data: bytes):
    """`line -> Guard or None`: the #if legs of a file that an AMD build skips because a
    condition names the vendor (`#ifndef USE_ROCM`, `#if !defined(__HIP_PLATFORM_AMD__)`;
    preprocessor.AMD_BY_VENDOR: arch and version macros stay unknown), or None when the file
    names no AMD macro. Project macros it does not define are unknown: such a leg is kept."""
    if not any(name in data for name in _VENDOR_HINT):
        return None
    try:
        return GuardMap(data.decode("utf-8", "replace"), platform=AMD_BY_VENDOR).dead_for_amd
    except (RecursionError, ValueError, ExpressionTooDeep):
        return None


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
    # header -> (includer, line, condition) of an #include an AMD build skips by a condition
    # that names the vendor (`#ifndef USE_ROCM`): not an include of the ROCm build
    excluded: dict[str, tuple[str, int, str]] = {}
    scripts = set(generators)
    for rel in files:
        if not rel.lower().endswith(_C_FILES) and rel not in scripts:
            continue
        data = read(rel)
        if not data or b"include" not in data:
            continue
        here = rel.rpartition("/")[0]
        skips = _vendor_skips(data) if rel not in scripts else None
        for m in _INCLUDE.finditer(data):
            written = m.group(1).decode("utf-8", "replace")
            beside = os.path.normpath(os.path.join(here, written)).replace(os.sep, "/")
            tail = "/" + written.lstrip("./")
            if beside in existing and rel not in scripts:
                targets = [beside]
            else:  # found through an include path: every file whose path ends so
                targets = [f for f in by_name.get(written.rpartition("/")[2], ()) if ("/" + f).endswith(tail)]
            line = data.count(b"\n", 0, m.start(1)) + 1
            guard = skips(line) if skips is not None else None
            for t in targets:
                if guard is not None:
                    excluded.setdefault(t, (rel, line, guard.condition))
                else:
                    includers.setdefault(t, set()).add(rel)
    candidates = [f for f in files if f.lower().endswith(_C_FILES) and f not in listed
                  and not any(not o or f.startswith(o + "/") for o in open_folders)]
    for header in candidates:
        if header in out.outside or not header.lower().endswith(_HEADER_FILES) or includers.get(header, set()) - {header}:
            continue
        if header in excluded:
            continue  # included, where an AMD build does not go: below
        owner = max((d for d in nvcc_folders if not d or header.startswith(d + "/")), key=len, default=None)
        if owner is not None:
            out.outside[header] = nvcc_folders[owner]
    # every #include of it is one an AMD build skips (`#ifndef USE_ROCM`): no HIP compile
    # reads it, whatever the build lists
    for header in candidates:
        if header not in out.outside and header in excluded and not includers.get(header, set()) - {header}:
            rel, line, condition = excluded[header]
            out.outside[header] = Verdict(rel, line, guard=condition)
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
