"""Configuration: `[tool.portlint]` in pyproject.toml or a portlint.toml (same schema).

The nearest file to the first scanned path (or the working directory) wins; `--config`
names one explicitly. Command-line flags override the file. An unknown key or a bad value
is a ConfigError, which the CLI prints as one line and exits 2."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from portlint.core.model import TARGETS, Severity
from portlint.core.vocabulary import file_roles

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules", "__pycache__", "__snapshots__",
    ".portlint_cache", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
)
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024
# Named sets of rules for --select (besides ids and id prefixes).
PRESETS: dict[str, tuple[str, ...]] = {
    "ALL": ("PTL",),
    "hipify": ("PTL601",),
}


class ConfigError(Exception):
    pass


@dataclass
class Settings:
    root: Path = field(default_factory=Path.cwd)  # paths in reports are relative to this
    config_file: Path | None = None
    select: tuple[str, ...] | None = None  # None: every rule enabled by default
    ignore: tuple[str, ...] = ()
    targets: tuple[str, ...] = TARGETS
    # True when the targets were named (`--target`, `targets` in the config): the code will
    # run there, so every torch/JAX file is in scope for them; False: scope is inferred
    # per package (portlint.index.project)
    declared_targets: bool = False
    exclude: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fail_on: Severity = Severity.WARNING
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    respect_gitignore: bool = True
    force_exclude: bool = False
    follow_symlinks: bool = False  # scan through symlinks that lead out of the scanned tree
    jobs: int = 0  # 0: all cores
    cache_dir: Path | None = None  # None: no cache
    compile_commands: Path | None = None
    # folders searched for `#include <...>` and, after the including file's folder, `"..."`
    # (relative to the config file's folder)
    include_dirs: tuple[str, ...] = ()
    # project macros that select the AMD build (`"!NAME"`: never infer NAME as one)
    amd_macros: tuple[str, ...] = ()
    # where the rule pages are published (portlint.core.rule_links): a template with {id} or a
    # base URL; None: the repository-relative docs/rules/PTLnnn.md. Reports only, not findings.
    docs_url: str | None = None
    # glob -> file role (`roles = { "tools/**" = "library" }`): overrides portlint.index.roles
    roles: dict[str, str] = field(default_factory=dict)

    def key(self) -> str:
        """What in the settings changes findings: part of the cache key."""
        return repr(
            (sorted(self.select) if self.select is not None else None, sorted(self.ignore), self.targets, self.declared_targets,
             sorted((k, v) for k, v in self.per_file_ignores.items()),
             str(self.compile_commands) if self.compile_commands else None, self.include_dirs, self.amd_macros,
             sorted(self.roles.items()))
        )


_KEYS = {
    "select", "ignore", "targets", "exclude", "per-file-ignores", "fail-on", "max-file-size",
    "respect-gitignore", "include-dirs", "amd-macros", "docs-url", "roles",
}


def _type_name(value) -> str:
    """How TOML would spell the type of `value`, for an error message."""
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}
    return next((n for t, n in names.items() if isinstance(value, t)), type(value).__name__)


def _string_list(value, key: str, where: Path) -> tuple[str, ...]:
    if not isinstance(value, list):
        hint = f" (write {key} = [{value!r}])" if isinstance(value, str) else ""
        raise ConfigError(f"{where}: {key} must be an array of strings, not {_type_name(value)}{hint}")
    bad = [v for v in value if not isinstance(v, str) or not v]
    if bad:
        what = "an empty string" if bad[0] == "" else _type_name(bad[0])
        raise ConfigError(f"{where}: {key} must be an array of non-empty strings; it holds {what}")
    return tuple(value)


def _presets() -> dict[str, tuple[str, ...]]:
    return {name.lower(): ids for name, ids in PRESETS.items()}


def validate_rule_selectors(selectors: tuple[str, ...], key: str, where: str, *, allow_empty: bool = True) -> tuple[str, ...]:
    """Rule ids, id prefixes and presets, matched case-insensitively (`ptl1`, `all`,
    `HIPIFY`), each of which must match some rule. An empty `select` would silently turn
    every rule off, so it is an error where `allow_empty` is false."""
    from portlint.core.catalog import load_rules

    if not selectors and not allow_empty:
        raise ConfigError(f"{where}: {key} is empty, which would turn every rule off (name rule ids or prefixes, or ALL)")
    ids = load_rules()
    presets = _presets()
    out = []
    for sel in selectors:
        if sel.lower() in presets:
            out.extend(presets[sel.lower()])
            continue
        s = sel.upper()
        if not any(rid.startswith(s) for rid in ids):
            raise ConfigError(f"{where}: {key}: {sel!r} matches no rule id (see `portlint rules`)")
        out.append(s)
    return tuple(out)


def parse_targets(values, where: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [v.strip() for v in values.split(",") if v.strip()]
    if not isinstance(values, (list, tuple)) or not values:
        raise ConfigError(f"{where}: targets must name at least one of {', '.join(TARGETS)}")
    bad = [v for v in values if not isinstance(v, str) or v.strip().lower() not in TARGETS]
    if bad:
        raise ConfigError(f"{where}: unknown target {bad[0]!r} (expected {', '.join(TARGETS)})")
    wanted = {v.strip().lower() for v in values}
    return tuple(t for t in TARGETS if t in wanted)


def find_config(start: Path) -> Path | None:
    """Nearest portlint.toml, or pyproject.toml holding [tool.portlint], at or above start."""
    cur = start if start.is_dir() else start.parent
    cur = cur.resolve()
    for directory in (cur, *cur.parents):
        candidate = directory / "portlint.toml"
        if candidate.is_file():
            return candidate
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            import tomllib

            try:
                text = candidate.read_text(encoding="utf-8")
                if "portlint" not in text:
                    continue  # cannot hold [tool.portlint]; not ours to parse
                data = tomllib.loads(text)
            except (OSError, UnicodeDecodeError):
                continue
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{candidate}: invalid TOML: {exc}") from None
            tool = data.get("tool")
            if isinstance(tool, dict) and "portlint" in tool:
                return candidate
            if "tool" in data and not isinstance(tool, dict):
                raise ConfigError(f"{candidate}: tool must be a table, not {_type_name(tool)}")
    return None


def load_config(path: Path, settings: Settings) -> Settings:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool must be a table, not {_type_name(tool)}")
    if path.name == "pyproject.toml":
        table = tool.get("portlint", {})
    else:
        table = tool.get("portlint", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.portlint must be a table, not {_type_name(table)}")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    settings.config_file = path
    settings.root = path.parent.resolve()
    where = str(path)
    if "select" in table:
        settings.select = validate_rule_selectors(_string_list(table["select"], "select", path), "select", where, allow_empty=False)
    if "ignore" in table:
        settings.ignore = validate_rule_selectors(_string_list(table["ignore"], "ignore", path), "ignore", where)
    if "targets" in table:
        settings.targets = parse_targets(_string_list(table["targets"], "targets", path), where)
        settings.declared_targets = True
    if "exclude" in table:
        settings.exclude = _string_list(table["exclude"], "exclude", path)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{path}: per-file-ignores must be a table of glob = [ids]")
        settings.per_file_ignores = {
            glob: validate_rule_selectors(_string_list(ids, f"per-file-ignores.{glob}", path), f"per-file-ignores.{glob}", where)
            for glob, ids in pfi.items()
        }
    if "fail-on" in table:
        if not isinstance(table["fail-on"], str):
            raise ConfigError(f"{path}: fail-on must be a string (error, warning or note), not {_type_name(table['fail-on'])}")
        try:
            settings.fail_on = Severity.parse(table["fail-on"].lower())
        except ValueError as exc:
            raise ConfigError(f"{path}: fail-on: {exc}") from None
    if "max-file-size" in table:
        size = table["max-file-size"]
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ConfigError(f"{path}: max-file-size must be a positive integer (bytes)")
        settings.max_file_size = size
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise ConfigError(f"{path}: respect-gitignore must be true or false")
        settings.respect_gitignore = table["respect-gitignore"]
    if "include-dirs" in table:
        settings.include_dirs = _string_list(table["include-dirs"], "include-dirs", path)
    if "amd-macros" in table:
        macros = _string_list(table["amd-macros"], "amd-macros", path)
        bad = [m for m in macros if not re.fullmatch(r"!?[A-Za-z_]\w*", m)]
        if bad:
            raise ConfigError(f"{path}: amd-macros: {bad[0]!r} is not a macro name (or !NAME)")
        settings.amd_macros = macros
    if "roles" in table:
        settings.roles = _roles(table["roles"], path)
    if "docs-url" in table:
        from portlint.core.rule_links import validate_docs_url

        url = table["docs-url"]
        if not isinstance(url, str):
            raise ConfigError(f"{path}: docs-url must be a string, not {_type_name(url)}")
        problem = validate_docs_url(url)
        if problem:
            raise ConfigError(f"{path}: docs-url {problem}")
        settings.docs_url = url
    return settings


def _roles(value, path: Path) -> dict[str, str]:
    """`roles = { GLOB = ROLE }`: each role one of rules/vocabulary/file_roles.toml's."""
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: roles must be a table of glob = role, not {_type_name(value)}")
    names = file_roles().names
    for glob, role in value.items():
        if not glob:
            raise ConfigError(f"{path}: roles: a glob is empty")
        if not isinstance(role, str) or role.lower() not in names:
            raise ConfigError(f"{path}: roles.{glob}: {role!r} is not a role (expected {', '.join(names)})")
    return {glob: role.lower() for glob, role in value.items()}


def git_root(start: Path) -> Path | None:
    cur = (start if start.is_dir() else start.parent).resolve()
    for directory in (cur, *cur.parents):
        if (directory / ".git").exists():
            return directory
    return None


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1
