"""The value types every other module speaks: targets, severities, findings and fixes.

Columns are 1-based and count Unicode code points; the SARIF reporter converts them to
UTF-16 code units. An end column points one past the last character of the span."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

TARGETS: tuple[str, ...] = ("rocm", "tpu", "trainium", "gaudi")


class Severity(str, Enum):
    NOTE = "note"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning or note)") from None


_RANK = {Severity.NOTE: 1, Severity.WARNING: 2, Severity.ERROR: 3}

CONFIDENCES = ("high", "medium", "low")
APPLICABILITIES = ("safe", "unsafe", "display-only")


@dataclass(frozen=True, order=True)
class Span:
    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Edit:
    """Replace the text in `span` with `text` (an insertion when the span is empty).

    `old` is the text the span held when the file was scanned (the context fills it in when
    a finding is reported); the fix engine drops an edit whose span no longer holds it."""

    span: Span
    text: str
    old: str | None = None


@dataclass(frozen=True)
class Fix:
    description: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"

    def __post_init__(self) -> None:
        if self.applicability not in APPLICABILITIES:
            raise ValueError(f"bad fix applicability {self.applicability!r}")
        if not self.edits:
            raise ValueError("a fix needs at least one edit")


@dataclass
class Finding:
    rule_id: str
    path: str  # POSIX path as shown to the user (relative to the scan root when possible)
    span: Span
    message: str
    severity: Severity
    targets: dict[str, Severity]  # the targets this finding breaks, with the severity on each
    confidence: str
    fix: Fix | None = None
    suggestion: str | None = None
    suppressed: str | None = None  # reason, when an inline comment, guard or config silences it
    suppression_kind: str = ""  # "inSource" (comment or guard) or "external" (config)
    snippet: str = ""  # the matched source text, used for the portlint fingerprint
    line_hash: str = ""  # GitHub's primaryLocationLineHash of the start line
    # text of the non-ASCII lines the span and fix touch, so reporters can count UTF-16 units
    wide_lines: dict[int, str] = field(default_factory=dict)
    # with --baseline: "unchanged" (in the baseline, left out) or "new"; "" without one
    baseline_state: str = ""
    # where the file's code runs when it is not the library (portlint.index.roles): "test",
    # "benchmark", "example", "conversion", "script"; "" for library code
    role: str = ""
    # one finding per root cause (portlint.findings.roots, for rules whose file says
    # `fold = "root"`): `root` names the construct the finding stems from, the same for all
    # its uses ("cuDNN", "mask constant FULL_MASK"); `root_site` when the finding is that
    # construct itself; `related` the use sites folded under this finding (findings too,
    # each keeping its own message and fix)
    root: str = ""
    root_site: bool = False
    related: list["Finding"] = field(default_factory=list)

    def sort_key(self) -> tuple:
        return (self.path, self.span, self.rule_id, self.message)

    def to_dict(self) -> dict:
        """A plain, JSON-safe form (also used by the cache)."""
        data = {
            "rule_id": self.rule_id,
            "path": self.path,
            "span": [self.span.start_line, self.span.start_col, self.span.end_line, self.span.end_col],
            "message": self.message,
            "severity": self.severity.value,
            "targets": {t: s.value for t, s in self.targets.items()},
            "confidence": self.confidence,
            "suggestion": self.suggestion,
            "suppressed": self.suppressed,
            "suppression_kind": self.suppression_kind,
            "snippet": self.snippet,
            "line_hash": self.line_hash,
            "wide_lines": {str(k): v for k, v in self.wide_lines.items()},
            "role": self.role,
            "fix": None,
        }
        if self.root:
            data["root"] = [self.root, self.root_site]
        if self.related:
            data["related"] = [r.to_dict() for r in self.related]
        if self.fix:
            data["fix"] = {
                "description": self.fix.description,
                "applicability": self.fix.applicability,
                "edits": [[*_span_list(e.span), e.text, e.old] for e in self.fix.edits],
            }
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Finding":
        fix = None
        if data.get("fix"):
            f = data["fix"]
            fix = Fix(
                f["description"],
                tuple(Edit(Span(*e[:4]), e[4], e[5] if len(e) > 5 else None) for e in f["edits"]),
                f["applicability"],
            )
        return cls(
            rule_id=data["rule_id"],
            path=data["path"],
            span=Span(*data["span"]),
            message=data["message"],
            severity=Severity(data["severity"]),
            targets={t: Severity(s) for t, s in data["targets"].items()},
            confidence=data["confidence"],
            fix=fix,
            suggestion=data.get("suggestion"),
            suppressed=data.get("suppressed"),
            suppression_kind=data.get("suppression_kind", ""),
            snippet=data.get("snippet", ""),
            line_hash=data.get("line_hash", ""),
            wide_lines={int(k): v for k, v in data.get("wide_lines", {}).items()},
            role=data.get("role", ""),
            root=data["root"][0] if data.get("root") else "",
            root_site=bool(data["root"][1]) if data.get("root") else False,
            related=[cls.from_dict(r) for r in data.get("related", ())],
        )


def utf16_col(line_text: str | None, col: int) -> int:
    """1-based code-point column -> 1-based UTF-16 code-unit column."""
    if not line_text:
        return col
    prefix = line_text[: col - 1]
    return col + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def _span_list(span: Span) -> list[int]:
    return [span.start_line, span.start_col, span.end_line, span.end_col]


@dataclass
class Notice:
    """A one-line message about a file that could not be (fully) scanned."""

    path: str
    message: str
    level: str = "warning"  # SARIF notification level: error / warning / note

    def sort_key(self) -> tuple:
        return (self.path, self.message)


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    files_scanned: int = 0
    # Named tallies a detector keeps beside its findings, e.g. "mechanical-ports" for CUDA API
    # uses that hipify renames; the text summary prints them.
    counters: dict[str, int] = field(default_factory=dict)


@dataclass
class FileResult:
    """What the scan of one file gives: the unit the cache stores and workers send back."""

    findings: list[Finding] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    # False when the file was not analysed at all (unreadable, too large, binary, or the
    # analysis failed): it does not count as "scanned"
    scanned: bool = True

    def to_dict(self) -> dict:
        return {
            "findings": [f.to_dict() for f in self.findings],
            "notices": [[n.path, n.message, n.level] for n in self.notices],
            "counters": self.counters,
            "scanned": self.scanned,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "FileResult":
        return cls(
            [Finding.from_dict(f) for f in data["findings"]],
            [Notice(*n) for n in data["notices"]],
            dict(data["counters"]),
            bool(data.get("scanned", True)),
        )
