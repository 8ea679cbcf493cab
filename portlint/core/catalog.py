"""Rule definitions as data: one TOML file per rule under `rules/<family>/`.

This module only reads and validates those files; `registry.py` binds them to detectors.
The files ship inside the wheel as the package `portlint._rules`; in a source checkout they
are read from the repository's `rules/` folder."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from portlint.core.model import APPLICABILITIES, CONFIDENCES, TARGETS, Severity

ID_RE = re.compile(r"^PTL\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
FOLDS = ("root",)  # the values of a rule's `fold` key
LANGUAGES = ("cuda", "python", "ptx", "build", "any")
DOC_HEADINGS = ("finds", "why", "example", "rewrite")
# How much work a finding of the rule is to port, from least to most (see docs/report.md).
EFFORT_LEVELS = ("mechanical", "local", "redesign")


class RuleError(Exception):
    """A rule file is malformed, or rules and detectors do not pair up."""


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    family: str  # the detector module under portlint.rules
    language: str
    summary: str
    message: str  # str.format template; detectors fill the named fields
    severity: dict[str, Severity]  # per target; a target absent here is not affected
    confidence: str
    fix: str  # "none" or an applicability
    default_enabled: bool
    references: tuple[str, ...]
    docs_finds: str
    docs_why: dict[str, str]
    docs_example: str
    docs_rewrite: str
    tags: tuple[str, ...] = field(default=())
    source: str = ""
    # rules whose finding on the same construct this rule's finding replaces (one finding
    # per construct: the more specific rule speaks); applied by portlint.findings.precedence
    supersedes: tuple[str, ...] = field(default=())
    proof: str = ""  # which toolchain check proves the claim (toolchain: tests/file.py::test), or "unproven: why"
    effort: str = ""  # one of EFFORT_LEVELS; "" only for the tool's own rules
    effort_why: str = ""
    # "root": the rule's findings that stem from one root construct (the `#include` of a
    # CUDA-only header, the `#define` of a 32-bit mask) are folded into one finding at the
    # root with the use sites as related locations (portlint.findings.roots); "" reports each
    fold: str = ""

    @property
    def default_level(self) -> Severity:
        return max(self.severity.values(), key=lambda s: s.rank)

    def format_message(self, **fields: object) -> str:
        try:
            return self.message.format(**fields)
        except (KeyError, IndexError) as exc:
            raise RuleError(f"{self.id}: message template needs field {exc}") from None

    def markdown_doc(self) -> str:
        """The rule's documentation, under the fixed headings."""
        lines = [f"# {self.id} `{self.name}`", "", self.summary, ""]
        sev = ", ".join(f"{t}: {s.value}" for t, s in self.severity.items())
        lines += [
            f"Targets: {sev}. Confidence: {self.confidence}. Fix: {self.fix}."
            + ("" if self.default_enabled else " Off by default: enable it with --select."),
            "",
            "## What it finds",
            "",
            self.docs_finds.strip(),
            "",
            "## Why it breaks, per target",
            "",
        ]
        for target, why in self.docs_why.items():
            lines.append(f"- **{target}**: {why.strip()}")
        lines += ["", "## Example", "", self.docs_example.strip(), "", "## Portable rewrite", "", self.docs_rewrite.strip()]
        if self.references:
            lines += ["", "## References", ""] + [f"- {r}" for r in self.references]
        if self.proof:
            lines += ["", "## Proof", "", self.proof]
        if self.effort:
            lines += ["", "## Effort to port", "", f"{self.effort}: {self.effort_why}"]
        return "\n".join(lines) + "\n"


def rules_root() -> Path:
    """Where the rule files are: inside the installed package, else the source tree."""
    packaged = Path(__file__).resolve().parent.parent / "_rules"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parent.parent.parent / "rules"
    if source.is_dir():
        return source
    raise RuleError("cannot find the rule definitions (portlint/_rules or rules/)")


def _require(data: dict, key: str, kind: type, where: str):
    if key not in data:
        raise RuleError(f"{where}: missing key {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise RuleError(f"{where}: {key!r} must be {kind.__name__}")
    return value


def parse_rule(path: Path, raw: bytes | None = None) -> Rule:
    import tomllib

    where = str(path)
    try:
        text = (path.read_bytes() if raw is None else raw).decode("utf-8")
        data = tomllib.loads(text.replace("\r\n", "\n").replace("\r", "\n"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RuleError(f"{where}: {exc}") from None
    known = {
        "id", "name", "family", "language", "summary", "message", "severity", "confidence",
        "fix", "default_enabled", "references", "docs", "tags", "supersedes", "effort",
    }
    known |= {"proof", "fold"}
    extra = set(data) - known
    if extra:
        raise RuleError(f"{where}: unknown keys {sorted(extra)}")
    rid = _require(data, "id", str, where)
    if not ID_RE.match(rid):
        raise RuleError(f"{where}: id {rid!r} is not PTL followed by three digits")
    name = _require(data, "name", str, where)
    if not NAME_RE.match(name):
        raise RuleError(f"{where}: name {name!r} is not kebab-case")
    if not path.stem.startswith(rid):
        raise RuleError(f"{where}: file name must start with the rule id {rid}")
    language = _require(data, "language", str, where)
    if language not in LANGUAGES:
        raise RuleError(f"{where}: language must be one of {LANGUAGES}")
    sev_raw = _require(data, "severity", dict, where)
    if not sev_raw:
        raise RuleError(f"{where}: severity must name at least one target")
    severity = {}
    for target in TARGETS:  # keep the canonical target order
        if target in sev_raw:
            try:
                severity[target] = Severity.parse(sev_raw[target])
            except ValueError as exc:
                raise RuleError(f"{where}: {exc}") from None
    if set(sev_raw) - set(TARGETS):
        raise RuleError(f"{where}: unknown targets {sorted(set(sev_raw) - set(TARGETS))}")
    confidence = _require(data, "confidence", str, where)
    if confidence not in CONFIDENCES:
        raise RuleError(f"{where}: confidence must be one of {CONFIDENCES}")
    fix = _require(data, "fix", str, where)
    if fix != "none" and fix not in APPLICABILITIES:
        raise RuleError(f"{where}: fix must be 'none' or one of {APPLICABILITIES}")
    docs = _require(data, "docs", dict, where)
    for heading in DOC_HEADINGS:
        if heading not in docs or not docs[heading]:
            raise RuleError(f"{where}: docs.{heading} is missing or empty")
    why = docs["why"]
    if not isinstance(why, dict) or set(why) != set(severity):
        raise RuleError(f"{where}: docs.why must explain each target in severity: {sorted(severity)}")
    supersedes = data.get("supersedes", [])
    if not isinstance(supersedes, list) or not all(isinstance(s, str) and ID_RE.match(s) for s in supersedes):
        raise RuleError(f"{where}: supersedes must be a list of rule ids")
    if rid in supersedes or len(set(supersedes)) != len(supersedes):
        raise RuleError(f"{where}: supersedes must not name the rule itself or repeat an id")
    fold = data.get("fold", "")
    if fold != "" and fold not in FOLDS:
        raise RuleError(f"{where}: fold must be one of {FOLDS} (or absent)")
    proof = data.get("proof", "")
    if not isinstance(proof, str):
        raise RuleError(f"{where}: proof must be a string")
    if not proof.strip() and data.get("family") != "tool":
        raise RuleError(f"{where}: proof is missing: name the toolchain check (`toolchain: tests/test_x.py::test_y`) or say `unproven: why`")
    summary = _require(data, "summary", str, where).strip()
    message = _require(data, "message", str, where).strip()
    if not summary or not message:
        raise RuleError(f"{where}: summary and message must not be empty")
    family = _require(data, "family", str, where)
    effort, effort_why = _parse_effort(data, family, where)
    return Rule(
        id=rid,
        name=name,
        family=family,
        language=language,
        summary=summary,
        message=message,
        severity=severity,
        confidence=confidence,
        fix=fix,
        default_enabled=bool(data.get("default_enabled", True)),
        references=tuple(data.get("references", ())),
        docs_finds=docs["finds"],
        docs_why={t: why[t] for t in severity},
        docs_example=docs["example"],
        docs_rewrite=docs["rewrite"],
        tags=tuple(data.get("tags", ())),
        source=path.name,
        supersedes=tuple(sorted(supersedes)),
        proof=proof.strip(),
        effort=effort,
        effort_why=effort_why,
        fold=fold,
    )


def _parse_effort(data: dict, family: str, where: str) -> tuple[str, str]:
    """The `[effort]` table: `level` (mechanical, local or redesign) and `why`, a short
    rationale. Every rule needs one except the tool's own diagnostics (family "tool")."""
    if "effort" not in data:
        if family == "tool":
            return "", ""
        raise RuleError(f"{where}: missing table [effort] (level = one of {EFFORT_LEVELS}, why = ...)")
    table = data["effort"]
    if not isinstance(table, dict):
        raise RuleError(f"{where}: 'effort' must be a table")
    extra = set(table) - {"level", "why"}
    if extra:
        raise RuleError(f"{where}: unknown keys in [effort]: {sorted(extra)}")
    level = _require(table, "level", str, f"{where}: [effort]")
    if level not in EFFORT_LEVELS:
        raise RuleError(f"{where}: effort.level must be one of {EFFORT_LEVELS}, not {level!r}")
    why = " ".join(_require(table, "why", str, f"{where}: [effort]").split())
    if not why:
        raise RuleError(f"{where}: effort.why must give a rationale")
    return level, why


INDEX_FILE = "index.json"
_INDEX_FORMAT = 1


def _rule_files(root: Path) -> list[tuple[Path, bytes]]:
    return [(path, path.read_bytes()) for path in sorted(root.glob("*/PTL*.toml"))]


def _files_digest(root: Path, files: list[tuple[Path, bytes]]) -> str:
    """A digest of the rule files and of the id table they are checked against (an edit to
    either makes the index stale)."""
    import hashlib

    from portlint.core.rule_ids import table_files

    digest = hashlib.sha256()
    extra = [(path, path.read_bytes() if path.is_file() else b"") for path in table_files(root)]
    for path, data in files + extra:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _parse_all(root: Path, files: list[tuple[Path, bytes]]) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    names: dict[str, str] = {}
    for path, data in files:
        rule = parse_rule(path, data)
        if rule.family != path.parent.name:
            raise RuleError(f"{path}: family {rule.family!r} must match its folder {path.parent.name!r}")
        if rule.id in rules:
            raise RuleError(f"{path}: duplicate rule id {rule.id}")
        if rule.name in names:
            raise RuleError(f"{path}: name {rule.name!r} is already used by {names[rule.name]}")
        rules[rule.id] = rule
        names[rule.name] = rule.id
    if not rules:
        raise RuleError(f"no rule files under {root}")
    _check_ids(root, rules)
    _check_supersedes(rules)
    return dict(sorted(rules.items()))


def _check_ids(root: Path, rules: dict[str, Rule]) -> None:
    """Every id lies in its family's range and none is a retired one (rules/id-ranges.toml,
    rules/retired-ids.toml; see portlint/core/rule_ids.py)."""
    from portlint.core.rule_ids import IdTableError, check_rule_ids, load_id_table

    try:
        problems = check_rule_ids(load_id_table(root), rules)
    except IdTableError as exc:
        raise RuleError(str(exc)) from None
    if problems:
        raise RuleError("; ".join(problems))


def _check_supersedes(rules: dict[str, Rule]) -> None:
    """Every id a rule supersedes exists, and precedence has no cycle (a cycle would let
    two rules each drop the other's finding, leaving none)."""
    for rule in rules.values():
        unknown = [s for s in rule.supersedes if s not in rules]
        if unknown:
            raise RuleError(f"{rule.source}: supersedes unknown rules {unknown}")
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(rid: str, path: list[str]) -> None:
        if state.get(rid) == 2:
            return
        if state.get(rid) == 1:
            raise RuleError(f"supersedes forms a cycle: {' -> '.join(path + [rid])}")
        state[rid] = 1
        for nxt in rules[rid].supersedes:
            visit(nxt, path + [rid])
        state[rid] = 2

    for rid in sorted(rules):
        visit(rid, [])


def _rule_fields() -> list[str]:
    from dataclasses import fields

    return [f.name for f in fields(Rule)]


def build_index() -> str:
    """The text of rules/index.json: every rule as parsed and validated from its TOML file,
    with a digest of those files. `scripts/generate_rule_index.py` writes it."""
    import json

    root = rules_root()
    files = _rule_files(root)
    rules = _parse_all(root, files)
    body = {
        "format": _INDEX_FORMAT,
        "fields": _rule_fields(),
        "sha256": _files_digest(root, files),
        "rules": {
            rid: {**{k: getattr(r, k) for k in _rule_fields()}, "severity": {t: s.value for t, s in r.severity.items()}}
            for rid, r in rules.items()
        },
    }
    # not sort_keys: the order of severity and docs.why is the canonical target order
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def _from_index(root: Path, digest: str) -> dict[str, Rule] | None:
    """The rules from index.json when it was built from exactly these rule files by a
    portlint with the same Rule fields; None otherwise (the TOML files are parsed then)."""
    import json

    try:
        index = json.loads((root / INDEX_FILE).read_text(encoding="utf-8"))
        if index.get("format") != _INDEX_FORMAT or index.get("sha256") != digest or index.get("fields") != _rule_fields():
            return None
        rules = {}
        for rid, d in index["rules"].items():
            d = dict(d)
            d["severity"] = {t: Severity(v) for t, v in d["severity"].items()}
            d["references"] = tuple(d["references"])
            d["tags"] = tuple(d["tags"])
            d["supersedes"] = tuple(d["supersedes"])
            rules[rid] = Rule(**d)
        return dict(sorted(rules.items()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


@lru_cache(maxsize=1)
def load_rules() -> dict[str, Rule]:
    """Every rule, keyed by id, in id order. Fails loudly on a malformed or duplicate file.

    Parsing 79 TOML files is a sizeable share of a one-file scan, so the rules also ship
    pre-parsed in rules/index.json; it is used only when its digest matches the rule files
    read now, so an edited rule file is always parsed afresh."""
    root = rules_root()
    files = _rule_files(root)
    return _from_index(root, _files_digest(root, files)) or _parse_all(root, files)


def rules_fingerprint() -> str:
    """A hash of every rule file's bytes: part of the cache key."""
    import hashlib

    digest = hashlib.sha256()
    root = rules_root()
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in (".toml", ".csv", ".json"):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()
