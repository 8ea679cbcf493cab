"""File roles: where a file's code runs -- library (the code that ships and runs on the
target), test, benchmark, example, conversion (checkpoint conversion, ONNX/TensorRT export)
or script (a command-line tool).

Decided once per file, from the path relative to the project root (folders and file name)
and, for Python, from the source: top-level imports of test frameworks or export
toolchains, export calls, and a `__main__` entry point that parses a command line and runs
no step code. The words are data (rules/vocabulary/file_roles.toml, `core.vocabulary`);
`[tool.portlint] roles = { GLOB = ROLE }` overrides them, first match winning.

The findings stage (portlint/findings/roles.py) turns the findings of a non-library file
into notes."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from portlint.core import session
from portlint.core.globs import covers, fits
from portlint.core.files import NotRead, read_limited, resolves_inside
from portlint.core.vocabulary import LIBRARY, FileRoles, RoleWords, file_roles
from portlint.index.build_scope import root_for
from portlint.index.project import file_model


@dataclass(frozen=True)
class FileRole:
    name: str  # "library", "test", "benchmark", "example", "conversion", "script"
    why: str  # what decided it, for the finding's note ("folder `tests/`", "imports pytest")
    # its findings are notes in every language, CUDA too: the tests of a bundled project that
    # the package's build never configures (`bundled_project`)
    never_built: bool = False

    @property
    def library(self) -> bool:
        return self.name == LIBRARY


LIBRARY_ROLE = FileRole(LIBRARY, "")

_MAIN = re.compile(rb"^if\s+__name__\s*==\s*(?:'__main__'|\"__main__\")\s*:", re.M)


@dataclass(frozen=True)
class _Compiled:
    """One role's source markers as byte patterns."""

    words: RoleWords
    imports: re.Pattern | None  # a top-level `import X` / `from X import` (column 0)
    calls: tuple[bytes, ...]
    parsers: re.Pattern | None  # an import of a command-line parser, at any depth
    step_words: tuple[bytes, ...]


def _import_pattern(names: tuple[str, ...], top_level: bool) -> re.Pattern | None:
    if not names:
        return None
    alts = b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))
    indent = b"" if top_level else rb"[ \t]*"
    return re.compile(rb"^" + indent + rb"(?:import|from)[ \t]+(?:" + alts + rb")(?![\w])", re.M)


@lru_cache(maxsize=1)
def _compiled() -> tuple[FileRoles, tuple[_Compiled, ...]]:
    vocab = file_roles()
    out = tuple(
        _Compiled(r, _import_pattern(r.imports, True), tuple(c.encode() + b"(" for c in r.calls),
                  _import_pattern(r.parsers, False), tuple(w.encode() for w in r.step_words))
        for r in vocab.roles
    )
    return vocab, out


def override(path: str, globs: dict[str, str]) -> str | None:
    """The role the config's `roles` gives `path` (relative, POSIX), None when no glob
    matches. A glob matches the path itself or, ending in `/**` or naming a folder, the
    files below it."""
    for glob, role in globs.items():
        bare = glob.rstrip("/")
        if bare.endswith("/**"):
            bare = bare[:-3]
        if covers(path, glob) or fits(path, bare):
            return role
    return None


def _library_root(folder: str, names: tuple[str, ...], tree: str | None) -> bool:
    """Is the folder a bundled library's own root: does it hold a license file (a regular
    file, not a link), or the library's header tree under its own name (`cutlass/include/
    cutlass/`, `thrust/thrust/`)? Only a folder inside `tree`, the resolved scan root the
    file was found under, is listed: one outside it (`cutlass/` for `portlint scan
    cutlass/sub`, whatever the working directory) is not the scanned tree's and is never
    read, and with no tree known nothing is."""
    if tree is None or not resolves_inside(folder, tree):
        return False
    own = os.path.basename(folder).lower()
    try:
        with os.scandir(folder) as entries:
            listed = list(entries)
    except OSError:
        return False
    if any(e.is_file(follow_symlinks=False) and any(fits(e.name.lower(), g) for g in names) for e in listed):
        return True
    for e in listed:
        if not e.is_dir(follow_symlinks=False):
            continue
        if e.name.lower() == own:
            return True
        if e.name.lower() == "include":
            try:
                with os.scandir(e.path) as inner:
                    if any(i.is_dir(follow_symlinks=False) and i.name.lower() == own for i in inner):
                        return True
            except OSError:
                pass
    return False


def _vendored(parts: list[str], real: Path | None, words: RoleWords, library_root) -> FileRole | None:
    """Vendored code: a folder of the path named like a vendor folder, or named after a
    bundled library and laid out as that library's own root (`_library_root`, read from
    `real`, the file's path on disk, whose ancestors are those folders)."""
    for part in parts:
        if any(fits(part, g) for g in words.folders):
            return FileRole(words.name, f"it is under `{part}/`")
    if real is None or not words.libraries:
        return None
    for k, part in enumerate(parts):
        if part not in words.libraries:
            continue
        up = len(parts) - k  # real.parents[up - 1] is the folder of parts[k]
        if up - 1 < len(real.parents):
            folder = real.parents[up - 1]
            if folder.name.lower() == part and library_root(str(folder), words.license_files):
                return FileRole(words.name, f"`{part}/` is a bundled copy of that library (its own license or header tree)")
    return None


_SUBPROJECT = re.compile(rb"\b(?:add_subdirectory|ExternalProject_Add|FetchContent_Declare|FetchContent_Populate)\s*\(([^)]*)\)",
                         re.I)


def _cmake_files(folder: Path) -> list[Path]:
    """The CMake files of one folder that can add a subproject: its CMakeLists.txt and the
    `.cmake` modules beside it and in its `cmake/` folder."""
    out = [folder / "CMakeLists.txt"]
    for where in (folder, folder / "cmake"):
        try:
            with os.scandir(where) as entries:
                out += sorted(Path(e.path) for e in entries
                              if e.name.endswith(".cmake") and e.is_file(follow_symlinks=False))
        except OSError:
            pass
    return out


def _adds(files: list[Path], name: str) -> bool:
    """Does one of these CMake files add a subproject whose path has a folder `name`
    (`add_subdirectory(${SRC}/name)`, `ExternalProject_Add(x SOURCE_DIR .../name)`)? A path
    built from variables alone may be that folder: it counts as adding it."""
    for f in files:
        try:
            data = read_limited(f)
        except (OSError, NotRead):
            continue
        for m in _SUBPROJECT.finditer(data):
            args = m.group(1).decode("utf-8", "replace")
            for word in re.split(r"[\s\"']+", args):
                if not word:
                    continue
                if name in re.split(r"[/\\]", word.lower()):
                    return True
                if re.fullmatch(r"\$\{\w+\}", word) and m.group().lower().startswith(b"add_subdirectory"):
                    return True  # add_subdirectory(${DIR}): any folder
    return False


def bundled_project(real: Path, depth: int, tree: str | None, license_names: tuple[str, ...]) -> str | None:
    """The folder (its name) of a bundled project the file sits in, when the package's build
    never configures that project: a folder below the project root with its own license file
    and its own CMakeLists.txt, inside the tree of another CMake project (a CMakeLists.txt in a
    folder above it, up to the project root), where no CMake file of the folders between adds
    it as a subproject. `depth` is how many folders lie between the project root and the file.
    Only folders inside `tree` are read."""
    if tree is None:
        return None
    folders = [real.parents[j] for j in range(min(depth, len(real.parents) - 1) + 1)]  # innermost first; last: root
    for j, folder in enumerate(folders[:-1]):
        if not resolves_inside(str(folder), tree) or not (folder / "CMakeLists.txt").is_file():
            continue
        try:
            with os.scandir(folder) as entries:
                licensed = any(e.is_file(follow_symlinks=False) and any(fits(e.name.lower(), g) for g in license_names)
                               for e in entries)
        except OSError:
            continue
        if not licensed:
            continue
        above = folders[j + 1:]
        outer = next((k for k, f in enumerate(above) if resolves_inside(str(f), tree) and (f / "CMakeLists.txt").is_file()),
                     None)
        if outer is None:
            return None  # the outermost CMake project: the package's own
        files = [c for f in above[:outer + 1] if resolves_inside(str(f), tree) for c in _cmake_files(f)]
        if not _adds(files, folder.name.lower()):
            return folder.name
    return None


def decide(path: str, language: str, data: bytes, globs: dict[str, str] | None = None, real: Path | None = None,
           library_root=None) -> FileRole:
    """The role of the file at `path` (relative to the project root, POSIX) holding `data`;
    `real`, its path on disk, lets vendored libraries be told by their license files
    (`library_root(folder, license names)` answers for a folder: a scan passes one that asks
    each folder of its tree once per scan; without one, no folder is listed)."""
    if library_root is None:
        real = None
    if globs:
        named = override(path, globs)
        if named is not None:
            return FileRole(named, "the config's `roles`") if named != LIBRARY else LIBRARY_ROLE
    _, compiled = _compiled()
    lowered = path.lower()
    folders, _, name = lowered.rpartition("/")
    parts = folders.split("/") if folders else []
    for c in compiled:
        if c.words.by_folders_only:
            vendored = _vendored(parts, real, c.words, library_root)
            if vendored is not None:
                return vendored
    for c in compiled:
        if c.words.by_folders_only:
            continue  # vendored code is told by its folders alone (above)
        hit = next((g for g in c.words.files if fits(name, g)), None)
        if hit is not None:
            return FileRole(c.words.name, f"its name matches `{hit}`")
    for c in compiled:
        if c.words.by_folders_only:
            continue
        for part in parts:
            if any(fits(part, g) for g in c.words.folders):
                return FileRole(c.words.name, f"it is under `{part}/`")
    if language != "python":
        return LIBRARY_ROLE
    for c in compiled:
        if c.imports is not None:
            m = c.imports.search(data)
            if m is not None:
                return FileRole(c.words.name, f"it imports {m.group().split()[1].decode()}")
        hit = next((w for w in c.calls if w in data), None)
        if hit is not None:
            return FileRole(c.words.name, f"it calls {hit[:-1].decode()}")
    for c in compiled:
        if any(fits(name, g) for g in c.words.entry_files):
            continue  # named like a training, serving or inference entry point
        if c.parsers is not None and _MAIN.search(data):
            m = c.parsers.search(data)
            if m is not None and not any(w in data for w in c.step_words):
                return FileRole(c.words.name, f"a `__main__` entry point parsing its command line with {m.group().split()[1].decode()}, no step code")
    return LIBRARY_ROLE


def _below_root(real: Path, root) -> str | None:
    """`real` relative to the project root (POSIX), or None when it is not below it."""
    if root is None:
        return None
    try:
        return real.relative_to(Path(root)).as_posix()
    except ValueError:
        try:
            return real.resolve().relative_to(Path(root).resolve()).as_posix()
        except (ValueError, OSError):
            return None


def project_path(ctx) -> str:
    """The file's path relative to its project root (the Python project model's, when it
    holds the file), else its display path."""
    if ctx.language != "python":  # the model holds Python files only (and is not built for others)
        return ctx.path
    _, rel = file_model(ctx)
    return rel if rel is not None else ctx.path


def role_of(ctx) -> FileRole:
    """The role of the file a FileContext holds (computed once per file)."""
    return ctx.fact(_role_fact)


def path_role(settings, real: Path, display: str, tree: str | None) -> FileRole:
    """The role of a non-Python file, from its path below the project root alone (folders
    above the root are not the project's: a tree under `third_party/`, or beside a license
    file, is not vendored code of its own, however its path is written on the command line);
    `tree` is the resolved scan root it was found under (SourceFile.root), the only folders
    whose layout is read. The scan cache's key asks it too, since a license file or header
    tree beside the file's folders (vendored code) changes the role without the file
    changing."""
    below = _below_root(real, root_for(settings, real, tree))
    return _decided(below if below is not None else display, display, "cuda", b"", settings, real, tree)


def _decided(path: str, display: str, language: str, data: bytes, settings, real: Path | None, tree: str | None) -> FileRole:
    """`decide` with the config's `roles` globs, which may be written against the display
    path, and a folder's layout read once per scan (a license file added while `--watch` or
    the server runs is seen by the next scan), for folders inside `tree` only."""
    globs = getattr(settings, "roles", None) or {}
    facts = session.current(settings)

    def library_root(folder: str, names: tuple[str, ...]) -> bool:
        return facts.fact(("library-root", folder, names, tree), lambda: _library_root(folder, names, tree))

    role = decide(path, language, data, globs, real, library_root)
    if role.name == "test" and role.why != "the config's `roles`" and language != "python" and real is not None:
        vocab = file_roles()
        vendored = next((r for r in vocab.roles if r.by_folders_only), None)
        names = vendored.license_files if vendored is not None else ()
        depth = path.count("/")
        bundled = facts.fact(("bundled-project", str(real.parent), depth, names, tree),
                             lambda: bundled_project(real, depth, tree, names))
        if bundled is not None:
            role = FileRole(role.name, f"{role.why}, in `{bundled}/`, a bundled project (its own license and CMake "
                                       "project) that no CMake file of the package adds, so its build never compiles it",
                            never_built=True)
    if globs and role.why != "the config's `roles`" and path != display:
        named = override(display, globs)
        if named is not None:
            role = FileRole(named, "the config's `roles`") if named != LIBRARY else LIBRARY_ROLE
    return role


def _role_fact(ctx) -> FileRole:
    real = getattr(ctx, "real_path", None)
    tree = getattr(ctx, "scan_root", None)
    if ctx.language != "python" and real is not None:
        return path_role(ctx.settings, Path(real), ctx.path, tree)
    return _decided(project_path(ctx), ctx.path, ctx.language, ctx.data, ctx.settings,
                    Path(real) if real is not None else None, tree)


# the role of the lines of a library module's `if __name__ == "__main__":` block
MAIN_BLOCK_ROLE = FileRole("script", "inside the module's `if __name__ == \"__main__\":` block, which runs only when the file is run by hand")


def main_block(ctx) -> tuple[int, int] | None:
    """(first, last line) of the top-level `if __name__ == "__main__":` block of a Python
    library module that is not named like an entry point users run on the target (a
    training, serving or inference script): the block is the module's usage example or
    self-test (`trl/generation/vllm_client.py` starts a client on "cuda" there), not code
    the library runs. None when there is none."""
    if ctx.language != "python" or getattr(ctx, "module", None) is None:
        return None
    vocab, compiled = _compiled()
    name = project_path(ctx).lower().rpartition("/")[2]
    if any(fits(name, g) for c in compiled for g in c.words.entry_files):
        return None
    for stmt in ctx.module.body:
        if isinstance(stmt, ast.If) and _is_main_test(stmt.test) and not stmt.orelse:
            return stmt.lineno, stmt.end_lineno or stmt.lineno
    return None


def _is_main_test(test: ast.AST) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and \
        any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
