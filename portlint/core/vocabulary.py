"""Vocabulary tables under rules/vocabulary/: words, globs and markers the analyses read as
data. Each table is read and checked once per process.

`file_roles()`: rules/vocabulary/file_roles.toml, what makes a file a test, a benchmark, an
example, a conversion tool or a script (portlint/index/roles.py decides a file's role from
it; portlint/findings/roles.py turns the findings of non-library files into notes)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from portlint.core.catalog import RuleError, rules_root

FILE_ROLES = "vocabulary/file_roles.toml"
LIBRARY = "library"


@dataclass(frozen=True)
class RoleWords:
    """The markers of one role: globs on the file name and on folder names, top-level
    imports, dotted calls; for scripts, the command-line parsers and the step words."""

    name: str
    why: str
    files: tuple[str, ...]
    folders: tuple[str, ...]
    imports: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    parsers: tuple[str, ...] = ()
    step_words: tuple[str, ...] = ()
    entry_files: tuple[str, ...] = ()
    # for vendored code: folder names of bundled third-party libraries, which count only where
    # the folder holds one of `license_files` (its own project root)
    libraries: tuple[str, ...] = ()
    license_files: tuple[str, ...] = ()

    @property
    def by_folders_only(self) -> bool:
        """The vendored role: told by its folders (and their layout), never by a file's name
        or source, and tried before every other role."""
        return bool(self.libraries or self.license_files)


@dataclass(frozen=True)
class FileRoles:
    roles: tuple[RoleWords, ...]  # in the order they are tried
    keep_severity_languages: frozenset[str]
    keep_severity_families: frozenset[str]
    # roles whose findings are notes in every language, those of keep_severity_languages too
    every_language: frozenset[str] = frozenset()

    @property
    def names(self) -> tuple[str, ...]:
        """Every role a file can have, library first."""
        return (LIBRARY, *(r.name for r in self.roles))

    def role(self, name: str) -> RoleWords | None:
        return next((r for r in self.roles if r.name == name), None)


_ROLE_KEYS = {"why", "files", "folders", "imports", "calls", "parsers", "step_words", "entry_files", "libraries", "license_files"}


def _strings(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RuleError(f"{where} must be an array of non-empty strings")
    return tuple(value)


@lru_cache(maxsize=1)
def file_roles() -> FileRoles:
    path = rules_root() / FILE_ROLES
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RuleError(f"{path}: {exc}") from None
    order = _strings(data.get("order"), f"{path}: order")
    roles = []
    for name in order:
        table = data.get(name)
        if not isinstance(table, dict):
            raise RuleError(f"{path}: role {name!r} of `order` has no [{name}] table")
        extra = set(table) - _ROLE_KEYS
        if extra:
            raise RuleError(f"{path}: [{name}] has unknown keys {sorted(extra)}")
        if not isinstance(table.get("why"), str) or not table["why"]:
            raise RuleError(f"{path}: [{name}] needs a `why`")
        fields = {k: _strings(table.get(k, []), f"{path}: {name}.{k}") for k in _ROLE_KEYS - {"why"}}
        for glob in fields["files"] + fields["folders"] + fields["entry_files"] + fields["libraries"] + fields["license_files"]:
            if glob != glob.lower():
                raise RuleError(f"{path}: {name}: glob {glob!r} must be lower case (paths are matched lower-cased)")
        for dotted in fields["imports"] + fields["parsers"] + fields["calls"]:
            if not re.fullmatch(r"[A-Za-z_]\w*(?:\.\w+)*", dotted):
                raise RuleError(f"{path}: {name}: {dotted!r} is not a dotted name")
        roles.append(RoleWords(name, table["why"], **fields))
    tables = {k for k, v in data.items() if isinstance(v, dict)}
    if tables - set(order):
        raise RuleError(f"{path}: role tables not in `order`: {sorted(tables - set(order))}")
    return FileRoles(
        tuple(roles),
        frozenset(_strings(data.get("keep_severity_languages", []), f"{path}: keep_severity_languages")),
        frozenset(_strings(data.get("keep_severity_families", []), f"{path}: keep_severity_families")),
        frozenset(_strings(data.get("every_language", []), f"{path}: every_language")),
    )
