"""JSON output, schema `portlint-report` version 1 (documented in docs/json-format.md and
described by docs/portlint-report.schema.json). Keys and order are stable; a change that
removes or renames a key bumps `version`."""

from __future__ import annotations

import hashlib
import json

from portlint import __version__

SCHEMA_VERSION = 1


def portlint_fingerprint(f) -> str:
    """A location-independent key: rule, path and the normalised matched text."""
    normalised = " ".join(f.snippet.split())
    return hashlib.sha256(f"{f.rule_id}\0{f.path}\0{normalised}".encode()).hexdigest()[:32]


def portlint_fingerprints(findings) -> dict[int, str]:
    """id(finding) -> its unique `portlint/v1` fingerprint. Findings that share rule, path
    and matched text (the same call twice on one line, a pattern repeated in a file) are
    numbered in report order: the first keeps the plain hash, the k-th gets `:k` appended,
    so GitHub does not merge them into one alert and a line move keeps every value."""
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for f in findings:
        base = portlint_fingerprint(f)
        k = seen[base] = seen.get(base, 0) + 1
        out[id(f)] = base if k == 1 else f"{base}:{k}"
    return out


def finding_json(f, rules, fingerprint: str | None = None) -> dict:
    rule = rules.get(f.rule_id)
    return {
        "rule": f.rule_id,
        "name": rule.name if rule else "",
        "path": f.path,
        "start_line": f.span.start_line,
        "start_column": f.span.start_col,
        "end_line": f.span.end_line,
        "end_column": f.span.end_col,
        "severity": f.severity.value,
        "targets": {t: s.value for t, s in f.targets.items()},
        "confidence": f.confidence,
        "message": f.message,
        "suggestion": f.suggestion,
        "fix": None
        if f.fix is None
        else {
            "applicability": f.fix.applicability,
            "description": f.fix.description,
            "edits": [
                {
                    "start_line": e.span.start_line,
                    "start_column": e.span.start_col,
                    "end_line": e.span.end_line,
                    "end_column": e.span.end_col,
                    "text": e.text,
                }
                for e in f.fix.edits
            ],
        },
        "suppressed": None if not f.suppressed else {"kind": f.suppression_kind or "inSource", "reason": f.suppressed},
        "fingerprints": {"portlint/v1": fingerprint or portlint_fingerprint(f), "primaryLocationLineHash": f.line_hash},
    }


def render_json(result, settings, options) -> str:
    from portlint.rules import load_rules

    rules = load_rules()
    prints = portlint_fingerprints(result.findings)
    findings = [finding_json(f, rules, prints[id(f)]) for f in result.findings if options.get("include_suppressed") or not f.suppressed]
    active = [f for f in result.findings if not f.suppressed]
    doc = {
        "schema": "portlint-report",
        "version": SCHEMA_VERSION,
        "tool": {"name": "portlint", "version": __version__},
        "targets": list(settings.targets),
        "summary": {
            "files_scanned": result.files_scanned,
            "findings": len(active),
            "suppressed": len(result.findings) - len(active),
            "by_severity": {s: sum(1 for f in active if f.severity.value == s) for s in ("error", "warning", "note")},
            "by_target": {t: sum(1 for f in active if t in f.targets) for t in settings.targets},
            "counters": dict(sorted(result.counters.items())),
        },
        "findings": findings,
        "notices": [{"path": n.path, "level": n.level, "message": n.message} for n in result.notices],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
