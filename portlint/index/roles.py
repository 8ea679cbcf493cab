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

import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache

from portlint.core.vocabulary import LIBRARY, FileRoles, RoleWords, file_roles
from portlint.index.project import file_model


@dataclass(frozen=True)
class FileRole:
    name: str  # "library", "test", "benchmark", "example", "conversion", "script"
    why: str  # what decided it, for the finding's note ("folder `tests/`", "imports pytest")

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
        if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, bare) or fnmatch.fnmatchcase(path, bare + "/*"):
            return role
    return None


def decide(path: str, language: str, data: bytes, globs: dict[str, str] | None = None) -> FileRole:
    """The role of the file at `path` (relative to the project root, POSIX) holding `data`."""
    if globs:
        named = override(path, globs)
        if named is not None:
            return FileRole(named, "the config's `roles`") if named != LIBRARY else LIBRARY_ROLE
    _, compiled = _compiled()
    lowered = path.lower()
    folders, _, name = lowered.rpartition("/")
    parts = folders.split("/") if folders else []
    for c in compiled:
        hit = next((g for g in c.words.files if fnmatch.fnmatchcase(name, g)), None)
        if hit is not None:
            return FileRole(c.words.name, f"its name matches `{hit}`")
    for c in compiled:
        for part in parts:
            if any(fnmatch.fnmatchcase(part, g) for g in c.words.folders):
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
        if any(fnmatch.fnmatchcase(name, g) for g in c.words.entry_files):
            continue  # named like a training, serving or inference entry point
        if c.parsers is not None and _MAIN.search(data):
            m = c.parsers.search(data)
            if m is not None and not any(w in data for w in c.step_words):
                return FileRole(c.words.name, f"a `__main__` entry point parsing its command line with {m.group().split()[1].decode()}, no step code")
    return LIBRARY_ROLE


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


def _role_fact(ctx) -> FileRole:
    globs = getattr(ctx.settings, "roles", None) or {}
    path = project_path(ctx)
    role = decide(path, ctx.language, ctx.data, globs)
    if globs and role.why != "the config's `roles`" and path != ctx.path:
        named = override(ctx.path, globs)  # the glob may be written against the display path
        if named is not None:
            role = FileRole(named, "the config's `roles`") if named != LIBRARY else LIBRARY_ROLE
    return role
