"""The migration summary: a scan result folded into the numbers a porting plan needs.

Per target: blockers (severity error: will not compile, will not run, or computes a wrong
result), slowdowns (warning: recompiles, host syncs, re-tuning) and notes; what is already
ported (findings a guarded branch already handles) and the mechanical hipify renames; and
the effort, from each rule's `[effort]` level, by rule family, directory and file.

Every renderer (HTML, Markdown, JSON) reads this model and nothing else, so the three show
the same numbers. The model is built only from the ScanResult and the rules: it never reads
the scanned files again."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from portlint.core.model import TARGETS, Severity
from portlint.core.suffixes import CUDA_SOURCES, suffix_of
from portlint.core.config import STACK_TARGET, targets_line
from portlint.findings.severity import configured_levels

SCHEMA = "portlint-migration-report"
SCHEMA_VERSION = 1

# Relative weight of one finding at each effort level (each about five times the one
# before: a rename, an hour or so at the site, days on a kernel). Points, not hours.
EFFORT_POINTS = {"mechanical": 1, "local": 5, "redesign": 25}
LEVELS = tuple(EFFORT_POINTS)
KIND_OF = {Severity.ERROR: "blockers", Severity.WARNING: "slowdowns", Severity.NOTE: "notes"}
KINDS = ("blockers", "slowdowns", "notes")
ALL = "all"  # the scope that counts each finding once, whatever targets it breaks
TARGET_NAMES = {
    "rocm": "AMD Instinct · ROCm/HIP",
    "tpu": "Google TPU · XLA/JAX",
    "trainium": "AWS Trainium · Neuron",
    "gaudi": "Intel Gaudi · HPU",
}
TOP_FILES = 20
# the reason the engine gives a finding in a branch an AMD build skips, with a HIP branch beside it
_PORTED_PREFIX = "not compiled for AMD:"


@dataclass
class Tally:
    """Findings of one group (a target, family, directory, file or rule) in one scope."""

    findings: int = 0
    blockers: int = 0
    slowdowns: int = 0
    notes: int = 0
    mechanical: int = 0
    local: int = 0
    redesign: int = 0
    points: int = 0

    def add(self, kind: str, level: str) -> None:
        self.findings += 1
        setattr(self, kind, getattr(self, kind) + 1)
        setattr(self, level, getattr(self, level) + 1)
        self.points += EFFORT_POINTS[level]

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Item:
    """One finding as the report shows it."""

    path: str
    line: int
    column: int
    rule: str
    name: str
    family: str
    targets: dict[str, str]  # target -> severity
    kind: str  # on its worst target
    effort: str
    points: int
    message: str
    rewrite: str
    fix: str  # "" or "<applicability>: <description>"

    @property
    def directory(self) -> str:
        return posixpath.dirname(self.path) or "."

    def to_json(self) -> dict:
        return {
            "path": self.path, "line": self.line, "column": self.column, "rule": self.rule, "name": self.name,
            "family": self.family, "targets": self.targets, "kind": self.kind, "effort": self.effort,
            "points": self.points, "message": self.message, "rewrite": self.rewrite, "fix": self.fix,
        }


@dataclass
class TargetSummary:
    target: str
    tally: Tally
    diagnostics: int  # portlint's own findings (family "tool"): not porting work
    ported: int  # findings suppressed because a guarded branch already handles the target
    hipify_renames: int
    cuda_files: int  # CUDA sources, whose rules report for rocm only (listed for other targets)

    @property
    def verdict(self) -> str:
        if self.tally.blockers:
            return "blocked"
        if self.tally.slowdowns:
            return "runs, slowly"
        return "ready"

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict, **self.tally.to_json(), "diagnostics": self.diagnostics,
            "already_ported": self.ported, "hipify_renames": self.hipify_renames, "cuda_files": self.cuda_files,
        }


@dataclass
class Group:
    """A family, directory, file or rule with its tally per scope (ALL and each target)."""

    key: str
    by_scope: dict[str, Tally] = field(default_factory=dict)
    files: int = 0  # directories only: files scanned in it

    def tally(self, scope: str) -> Tally:
        return self.by_scope.get(scope) or Tally()

    def to_json(self, key_name: str, scopes: tuple[str, ...]) -> dict:
        out = {key_name: self.key, **self.tally(ALL).to_json()}
        if key_name == "directory":
            out["files_scanned"] = self.files
        out["by_target"] = {t: self.tally(t).to_json() for t in scopes if t != ALL}
        return out


@dataclass
class RuleRow:
    id: str
    name: str
    family: str
    source: str  # rules/<family>/<file>.toml
    summary: str
    effort: str
    effort_why: str
    severity: dict[str, str]
    finds: str
    rewrite: str


@dataclass
class Summary:
    tool_version: str
    paths: tuple[str, ...]
    targets: tuple[str, ...]
    files_scanned: int
    suppressed: int
    items: list[Item]
    by_target: dict[str, TargetSummary]
    families: list[Group]
    directories: list[Group]
    files: list[Group]
    rules: list[Group]
    rule_rows: dict[str, RuleRow]
    notices: int
    # what the verdicts were judged against: "targets: all four (...) — set `targets` to
    # narrow; versions: rocm 7.0, ..." (portlint.core.config.targets_line), the releases and
    # whether the targets were chosen or are the all-four default
    header: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    targets_declared: bool = False
    # findings in test, benchmark, example, conversion and script files (portlint.index.roles):
    # notes, shown apart and never counted as porting work; role -> (findings, files)
    outside_library: dict[str, tuple[int, int]] = field(default_factory=dict)

    def outside_library_line(self) -> str:
        """"12 notes in test and example code (5 files), not blockers." or ""."""
        return outside_library_line(self.outside_library)

    @property
    def scopes(self) -> tuple[str, ...]:
        return (ALL, *self.targets)

    def total(self) -> Tally:
        out = Tally()
        for item in self.items:
            out.add(item.kind, item.effort)
        return out

    def top_files(self, scope: str, n: int = TOP_FILES) -> list[Group]:
        ranked = [g for g in self.files if g.tally(scope).findings]
        ranked.sort(key=lambda g: (-g.tally(scope).points, -g.tally(scope).redesign, -g.tally(scope).blockers, g.key))
        return ranked[:n]

    def ranked(self, groups: list[Group], scope: str) -> list[Group]:
        """Groups with findings in `scope`, most effort first."""
        out = [g for g in groups if g.tally(scope).findings]
        out.sort(key=lambda g: (-g.tally(scope).points, -g.tally(scope).findings, g.key))
        return out

    def to_json(self) -> dict:
        scopes = self.scopes
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "tool": {"name": "portlint", "version": self.tool_version},
            "paths": list(self.paths),
            "targets": list(self.targets),
            "targets_declared": self.targets_declared,
            "versions": dict(self.versions),
            "effort_points": dict(EFFORT_POINTS),
            "files_scanned": self.files_scanned,
            "suppressed": self.suppressed,
            "notices": self.notices,
            "outside_library": {role: {"findings": n, "files": k} for role, (n, k) in self.outside_library.items()},
            "total": self.total().to_json(),
            "by_target": {t: s.to_json() for t, s in self.by_target.items()},
            "by_family": [g.to_json("family", scopes) for g in self.ranked(self.families, ALL)],
            "by_directory": [g.to_json("directory", scopes) for g in self.ranked(self.directories, ALL)],
            "by_file": [g.to_json("path", scopes) for g in self.ranked(self.files, ALL)],
            "top_files": {s: [g.key for g in self.top_files(s)] for s in scopes},
            "rules": [
                {
                    "id": g.key, "name": self.rule_rows[g.key].name, "family": self.rule_rows[g.key].family,
                    "source": self.rule_rows[g.key].source, "effort": self.rule_rows[g.key].effort,
                    "effort_why": self.rule_rows[g.key].effort_why, **g.tally(ALL).to_json(),
                }
                for g in sorted(self.rules, key=lambda g: g.key)
            ],
            "findings": [i.to_json() for i in self.items],
        }


def outside_library_line(counts: dict[str, tuple[int, int]]) -> str:
    """One sentence for the notes of non-library files: role -> (findings, files)."""
    if not counts:
        return ""
    n = sum(c[0] for c in counts.values())
    k = sum(c[1] for c in counts.values())
    roles = sorted(counts, key=lambda r: (-counts[r][0], r))
    named = roles[0] if len(roles) == 1 else ", ".join(roles[:-1]) + " and " + roles[-1]
    return (f"{n} note{'s' if n != 1 else ''} in {named} code ({k} file{'s' if k != 1 else ''}), {'not blockers' if n != 1 else 'not a blocker'} "
            "(`roles` in the config makes a path library code).")


def role_counts(findings) -> dict[str, tuple[int, int]]:
    """role -> (active findings, files) of the findings the role step made notes."""
    found: dict[str, int] = {}
    files: dict[str, set[str]] = {}
    for f in findings:
        if f.role and not f.suppressed:
            found[f.role] = found.get(f.role, 0) + 1
            files.setdefault(f.role, set()).add(f.path)
    return {r: (found[r], len(files[r])) for r in sorted(found)}


def effort_of(finding, rule) -> str:
    """A finding's effort: its rule's level, except that one with a safe fix is mechanical."""
    if finding.fix is not None and finding.fix.applicability == "safe":
        return "mechanical"
    return rule.effort or "local"


def _item(finding, rule) -> Item:
    effort = effort_of(finding, rule)
    fix = f"{finding.fix.applicability}: {finding.fix.description}" if finding.fix is not None else ""
    return Item(
        path=finding.path,
        line=finding.span.start_line,
        column=finding.span.start_col,
        rule=finding.rule_id,
        name=rule.name,
        family=rule.family,
        targets={t: s.value for t, s in finding.targets.items()},
        kind=KIND_OF[finding.severity],
        effort=effort,
        points=EFFORT_POINTS[effort],
        message=finding.message,
        rewrite=finding.suggestion or "",
        fix=fix,
    )


def _add(groups: dict[str, Group], key: str, scope: str, kind: str, level: str) -> None:
    group = groups.setdefault(key, Group(key))
    group.by_scope.setdefault(scope, Tally()).add(kind, level)


def _rule_levels(rule, settings) -> dict[str, str]:
    """A rule's level on each target in scope, with the configured `severity` applied: the
    badges of the report's rule table say what this run judged, not the rule file's defaults."""
    return {t: s.value for t, s in configured_levels(rule, settings).items() if t in settings.targets}


def build_summary(result, settings, scanned_paths: list[str], inputs: tuple[str, ...], tool_version: str) -> Summary:
    """Fold `result` (a ScanResult) into a Summary. `scanned_paths` are the display paths of
    the files discovered (for files per directory and the CUDA file count); `inputs` are the
    paths given on the command line, shown as given."""
    from portlint.core.catalog import load_rules

    rules = load_rules()
    targets = tuple(t for t in TARGETS if t in settings.targets)
    items: list[Item] = []
    diagnostics = dict.fromkeys(targets, 0)
    ported = dict.fromkeys(targets, 0)
    tallies = {t: Tally() for t in targets}
    families: dict[str, Group] = {}
    directories: dict[str, Group] = {}
    files: dict[str, Group] = {}
    by_rule: dict[str, Group] = {}
    suppressed = 0
    for f in result.findings:
        rule = rules.get(f.rule_id)
        if f.suppressed:
            suppressed += 1
            if f.suppressed.startswith(_PORTED_PREFIX) and "rocm" in ported:
                ported["rocm"] += 1
            continue
        if f.role:  # a test, example, benchmark, tool: counted apart (role_counts), not porting work
            continue
        if rule is None or rule.family == "tool":
            for t in f.targets:
                if t in diagnostics:
                    diagnostics[t] += 1
            continue
        item = _item(f, rule)
        items.append(item)
        for scope, kind in [(ALL, item.kind)] + [(t, KIND_OF[s]) for t, s in f.targets.items() if t in tallies]:
            if scope != ALL:
                tallies[scope].add(kind, item.effort)
            _add(families, item.family, scope, kind, item.effort)
            _add(directories, item.directory, scope, kind, item.effort)
            _add(files, item.path, scope, kind, item.effort)
            _add(by_rule, item.rule, scope, kind, item.effort)
    for path in scanned_paths:
        directories.setdefault(posixpath.dirname(path) or ".", Group(posixpath.dirname(path) or ".")).files += 1
    cuda_files = sum(1 for p in scanned_paths if suffix_of(p) in CUDA_SOURCES)
    renames = result.counters.get("mechanical-ports", 0)
    by_target = {
        t: TargetSummary(t, tallies[t], diagnostics[t], ported[t], renames if t == "rocm" else 0, cuda_files)
        for t in targets
    }
    rule_rows = {
        rid: RuleRow(
            id=rid, name=r.name, family=r.family, source=f"rules/{r.family}/{r.source}", summary=r.summary,
            effort=r.effort, effort_why=r.effort_why, severity=_rule_levels(r, settings),
            finds=r.docs_finds.strip(), rewrite=r.docs_rewrite.strip(),
        )
        for rid, r in rules.items()
        if rid in by_rule
    }
    return Summary(
        tool_version=tool_version,
        paths=tuple(inputs),
        targets=targets,
        files_scanned=result.files_scanned,
        suppressed=suppressed,
        items=sorted(items, key=lambda i: (i.path, i.line, i.column, i.rule, i.message)),
        by_target=by_target,
        families=sorted(families.values(), key=lambda g: g.key),
        directories=sorted(directories.values(), key=lambda g: g.key),
        files=sorted(files.values(), key=lambda g: g.key),
        rules=sorted(by_rule.values(), key=lambda g: g.key),
        rule_rows=rule_rows,
        notices=len(result.notices),
        header=targets_line(settings),
        versions={k: v for k, v in settings.versions.items() if STACK_TARGET[k] in settings.targets},
        targets_declared=bool(settings.declared_targets),
        outside_library=role_counts(result.findings),
    )
