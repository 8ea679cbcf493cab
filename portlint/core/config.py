"""Configuration: `[tool.portlint]` in pyproject.toml or a portlint.toml (same schema).

The nearest file to the first scanned path (or the working directory) wins; `--config`
names one explicitly. Command-line flags override the file. An unknown key or a bad value
is a ConfigError, which the CLI prints as one line and exits 2."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from portlint.core.files import read_text, resolves_inside
from portlint.core.globs import fits
from portlint.core.jsonfile import read_toml
from portlint.core.model import TARGETS, Severity
from portlint.core.vocabulary import file_roles

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules", "__pycache__", "__snapshots__",
    ".portlint_cache", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
)
MAX_FILE_SIZE_LIMIT = 1 << 40  # a larger value overflows the readers (a green scan of nothing)
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024
# Named sets of rules for --select (besides ids and id prefixes).
PRESETS: dict[str, tuple[str, ...]] = {
    "ALL": ("PTL",),
    "hipify": ("PTL601",),
}
# The releases a verdict is judged against when `[tool.portlint.versions]` does not name one:
# the releases portlint's facts were last checked against (the oracles in tests/ and the
# catalog's sources). Rules whose verdict depends on one say so in their docs ("Versions").
DEFAULT_VERSIONS: dict[str, str] = {
    "rocm": "7.0",
    "rccl": "2.21",
    "triton": "3.9",
    "jax": "0.10",
    "neuron": "2.26",
    "gaudi": "1.22",
}
# at most eight digits a part: a release number, not a way to make int() raise in a rule
_VERSION_RE = re.compile(r"\d{1,8}(?:\.\d{1,8}){0,3}")
# what `severity` may set a rule to (per rule, or per rule and target)
SEVERITY_NAMES = ("error", "warning", "note")


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
    # rules added to the selection (`select`'s or the defaults): `extend-select`, --extend-select
    extend_select: tuple[str, ...] = ()
    # the release of each target stack the code must run on (DEFAULT_VERSIONS for any not named)
    versions: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_VERSIONS))
    # rule id -> {target or "*": severity}: `severity = { PTL110 = "note" }` (every target)
    # or `{ PTL055 = { tpu = "note" } }` (one target); applied by portlint.findings.severity
    severity: dict[str, dict[str, Severity]] = field(default_factory=dict)
    # glob -> file role (`roles = { "tools/**" = "library" }`): overrides portlint.index.roles
    roles: dict[str, str] = field(default_factory=dict)

    def key(self) -> str:
        """What in the settings changes findings: part of the cache key."""
        return repr(
            (sorted(self.select) if self.select is not None else None, sorted(self.ignore), self.targets, self.declared_targets,
             sorted((k, v) for k, v in self.per_file_ignores.items()),
             str(self.compile_commands) if self.compile_commands else None, self.include_dirs, self.amd_macros,
             sorted(self.extend_select), sorted(self.versions.items()),
             sorted((rid, sorted((t, s.value) for t, s in by.items())) for rid, by in self.severity.items()),
             sorted(self.roles.items()))
        )

    def version(self, stack: str) -> tuple[int, ...]:
        """The configured release of `stack` (rocm, rccl, triton, jax, neuron, gaudi) as a
        tuple of ints, for comparisons: `settings.version("rocm") >= (7, 0)`."""
        return version_tuple(self.versions.get(stack, DEFAULT_VERSIONS[stack]))


def targets_line(settings: "Settings") -> str:
    """What a summary and a report say first: the targets the scan judged against (and that
    all four are the default, not a choice), and the releases."""
    if settings.targets == TARGETS and not settings.declared_targets:
        head = "targets: all four (" + ", ".join(TARGETS) + ") \u2014 set `targets` (or --target) to narrow"
    else:
        head = "targets: " + ", ".join(settings.targets)
    return head + "; versions: " + versions_text(settings)


# the target each stack's release matters to
STACK_TARGET = {"rocm": "rocm", "rccl": "rocm", "triton": "rocm", "jax": "tpu", "neuron": "trainium", "gaudi": "gaudi"}


def versions_text(settings: "Settings") -> str:
    """The releases of the stacks of the selected targets (`rocm 7.0, rccl 2.21, ...`)."""
    return ", ".join(f"{k} {v}" for k, v in settings.versions.items() if STACK_TARGET[k] in settings.targets)


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def version_text(version: tuple[int, ...]) -> str:
    """A release as messages write it: (6, 4, 3) -> "6.4.3" (the inverse of version_tuple)."""
    return ".".join(map(str, version))


_KEYS = {
    "select", "ignore", "targets", "exclude", "per-file-ignores", "fail-on", "max-file-size",
    "respect-gitignore", "include-dirs", "amd-macros", "docs-url", "extend-select", "extend-ignore",
    "versions", "severity", "roles",
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


def expand_selector(sel: str) -> tuple[str, ...]:
    """The rule ids one selector names, in id order (empty when it names none). A selector is,
    case-insensitively: a preset (`ALL`, `hipify`), a rule id or id prefix (`PTL110`, `PTL1`),
    a glob over ids or names (`PTL1*`, `*-ptx-*`), a rule name (`inline-ptx-asm`) or a
    family (`cuda_warp`, the folder under rules/)."""
    from portlint.core.catalog import load_rules

    rules = load_rules()
    presets = _presets()
    low = sel.lower()
    if low in presets:
        prefixes = presets[low]
        return tuple(rid for rid in rules if rid.startswith(prefixes))
    if any(c in sel for c in "*?["):
        return tuple(rid for rid, r in rules.items() if fits(rid, sel.upper()) or fits(r.name, low))
    by_prefix = tuple(rid for rid in rules if rid.startswith(sel.upper()))
    if by_prefix and sel.upper().startswith("PTL"):
        return by_prefix
    return tuple(rid for rid, r in rules.items() if r.name == low or r.family == low)


def validate_rule_selectors(selectors: tuple[str, ...], key: str, where: str, *, allow_empty: bool = True) -> tuple[str, ...]:
    """The rule ids that rule ids, id prefixes, presets, globs, rule names and families name
    (`ptl1`, `all`, `HIPIFY`, `PTL1*`, `inline-ptx-asm`, `cuda_warp`), each of which must
    name some rule. An empty `select` would silently turn every rule off, so it is an error
    where `allow_empty` is false."""
    if not selectors and not allow_empty:
        raise ConfigError(f"{where}: {key} is empty, which would turn every rule off (name rule ids or prefixes, or ALL)")
    out: list[str] = []
    for sel in selectors:
        ids = expand_selector(sel)
        if not ids:
            raise ConfigError(f"{where}: {key}: {sel!r} matches no rule: not an id, prefix, glob, rule name, family or preset (see `portlint rules`)")
        out.extend(i for i in ids if i not in out)
    return tuple(out)


def parse_versions(table, where: str) -> dict[str, str]:
    """`[tool.portlint.versions]` (or `rocm:6.2,jax:0.4` on the command line): the defaults,
    with the named stacks replaced. A version is digits and dots (`7`, `6.2`, `2.21.5`)."""
    if isinstance(table, str):
        pairs = {}
        for item in (x.strip() for x in table.split(",") if x.strip()):
            name, sep, value = item.partition(":") if ":" in item else item.partition("=")
            if not sep:
                raise ConfigError(f"{where}: versions: {item!r} is not STACK:VERSION (e.g. rocm:6.2)")
            pairs[name.strip()] = value.strip()
        table = pairs
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: versions must be a table (rocm = \"6.2\"), not {_type_name(table)}")
    out = dict(DEFAULT_VERSIONS)
    for name, value in table.items():
        if name not in DEFAULT_VERSIONS:
            raise ConfigError(f"{where}: versions: unknown stack {name!r} (known: {', '.join(DEFAULT_VERSIONS)})")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ConfigError(f"{where}: versions.{name} must be a string (write {name} = \"{value}\")")
        if not isinstance(value, str) or not _VERSION_RE.fullmatch(value.strip()):
            raise ConfigError(f"{where}: versions.{name}: {value!r} is not a release number like \"6.2\"")
        out[name] = value.strip()
    return out


def parse_severity(table, where: str) -> dict[str, dict[str, Severity]]:
    """`severity = { PTL110 = "note", "inline-ptx-asm" = { rocm = "error" } }`: each key a rule
    selector (as for select), each value a severity for every target the rule reports or a
    table of target = severity."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: severity must be a table of rule = \"error\" | \"warning\" | \"note\", not {_type_name(table)}")

    def level(value, at: str) -> Severity:
        if not isinstance(value, str) or value.lower() not in SEVERITY_NAMES:
            raise ConfigError(f"{where}: severity.{at}: {value!r} is not one of {', '.join(SEVERITY_NAMES)}")
        return Severity.parse(value.lower())

    out: dict[str, dict[str, Severity]] = {}
    for sel, value in table.items():
        ids = validate_rule_selectors((sel,), "severity", where)
        if isinstance(value, dict):
            bad = [t for t in value if t not in TARGETS]
            if bad:
                raise ConfigError(f"{where}: severity.{sel}: unknown target {bad[0]!r} (expected {', '.join(TARGETS)})")
            by = {t: level(v, f"{sel}.{t}") for t, v in value.items()}
        else:
            by = {"*": level(value, sel)}
        for rid in ids:
            out.setdefault(rid, {}).update(by)
    return out


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
    """Nearest portlint.toml, or pyproject.toml holding [tool.portlint], at or above start.
    A found file that is a symlink to a place outside its own folder is refused (a usage
    error naming it): configuration committed to a tree is read from that tree, never from
    wherever a link points (`--config` names a file on purpose and is read as named)."""
    cur = start if start.is_dir() else start.parent
    cur = cur.resolve()

    def confined(candidate: Path) -> Path:
        if not resolves_inside(candidate, directory):
            raise ConfigError(f"{candidate} is a symlink to {os.path.realpath(candidate)}, outside {directory}: "
                              "not read (name it with --config to use it, or --isolated to use none)")
        return candidate

    for directory in (cur, *cur.parents):
        candidate = directory / "portlint.toml"
        if candidate.is_file():
            return confined(candidate)
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            import tomllib

            confined(candidate)  # before reading a byte of it

            try:
                text = read_text(candidate, OSError, limit=16 * 1024 * 1024)  # bounded, regular files only
                if "portlint" not in text:
                    continue  # cannot hold [tool.portlint]; not ours to parse
                data = tomllib.loads(text)
            except (OSError, UnicodeDecodeError):
                continue
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{candidate}: invalid TOML: {exc}") from None
            except RecursionError:
                raise ConfigError(f"{candidate}: invalid TOML: nested too deeply") from None
            except ValueError as exc:  # an integer past Python's digit limit
                raise ConfigError(f"{candidate}: invalid TOML: {str(exc)[:120]}") from None
            tool = data.get("tool")
            if isinstance(tool, dict) and "portlint" in tool:
                return candidate
            if "tool" in data and not isinstance(tool, dict):
                raise ConfigError(f"{candidate}: tool must be a table, not {_type_name(tool)}")
    return None


def _confined(paths: tuple[str, ...], key: str, config: Path, root: Path) -> tuple[str, ...]:
    """`paths` (relative to the config's folder) when each resolves inside it: a
    configuration file read from a scanned tree may point only into that tree (no `/etc`,
    no `../outside`, no symlink out), so it cannot make portlint read elsewhere."""
    real_root = os.path.realpath(root)
    for p in paths:
        real = os.path.realpath(os.path.join(real_root, p))
        if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
            raise ConfigError(f"{config}: {key}: {p!r} resolves outside the project ({real_root}); "
                              "configuration may only name folders inside its own tree")
    return paths


def load_config(path: Path, settings: Settings) -> Settings:
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"{path}: config file not found")
    # the one bounded reader: a regular file, up to a size, nesting and integers bounded
    data = read_toml(path, ConfigError)
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
    if "extend-select" in table:
        settings.extend_select = validate_rule_selectors(_string_list(table["extend-select"], "extend-select", path), "extend-select", where)
    if "extend-ignore" in table:
        more = validate_rule_selectors(_string_list(table["extend-ignore"], "extend-ignore", path), "extend-ignore", where)
        settings.ignore = settings.ignore + tuple(i for i in more if i not in settings.ignore)
    if "versions" in table:
        if not isinstance(table["versions"], dict):
            raise ConfigError(f"{where}: versions must be a table ([tool.portlint.versions] rocm = \"6.2\"), not {_type_name(table['versions'])}")
        settings.versions = parse_versions(table["versions"], where)
    if "severity" in table:
        settings.severity = parse_severity(table["severity"], where)
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
        if size > MAX_FILE_SIZE_LIMIT:
            raise ConfigError(f"{path}: max-file-size must be at most {MAX_FILE_SIZE_LIMIT} bytes (1 TiB)")
        settings.max_file_size = size
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise ConfigError(f"{path}: respect-gitignore must be true or false")
        settings.respect_gitignore = table["respect-gitignore"]
    if "include-dirs" in table:
        settings.include_dirs = _confined(_string_list(table["include-dirs"], "include-dirs", path), "include-dirs", path, settings.root)
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
