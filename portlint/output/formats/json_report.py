"""JSON output, schema `portlint-report` version 1 (documented in docs/json-format.md and
described by docs/portlint-report.schema.json). Keys and order are stable; a change that
removes or renames a key bumps `version`."""

from __future__ import annotations

import json

from portlint import __version__
from portlint.core.config import STACK_TARGET
from portlint.findings.fingerprint import portlint_fingerprint, portlint_fingerprints, use_fingerprint
from portlint.core.names import KEY_ESCAPE
from portlint.output.escape import json_ready, path_key


SCHEMA_VERSION = 1


def _fix_json(fix) -> dict | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "description": fix.description,
        "edits": [
            {
                "start_line": e.span.start_line,
                "start_column": e.span.start_col,
                "end_line": e.span.end_line,
                "end_column": e.span.end_col,
                "text": e.text,
            }
            for e in fix.edits
        ],
    }


def related_json(r) -> dict:
    """A use site folded under a finding (portlint.findings.roots): its rule (another rule's
    finding when a file outside the ROCm build folds them, PTL057), where, what, its fix."""
    return {
        "rule": r.rule_id,
        "path": path_key(r.path),
        "start_line": r.span.start_line,
        "start_column": r.span.start_col,
        "end_line": r.span.end_line,
        "end_column": r.span.end_col,
        "message": r.message,
        "fix": _fix_json(r.fix),
        # the use's own key (no line in it): a baseline counts the uses of each root by it
        "fingerprint": use_fingerprint(r),
    }


def finding_json(f, rules, fingerprint: str | None = None) -> dict:
    rule = rules.get(f.rule_id)
    return {
        "rule": f.rule_id,
        "name": rule.name if rule else "",
        "path": path_key(f.path),
        "start_line": f.span.start_line,
        "start_column": f.span.start_col,
        "end_line": f.span.end_line,
        "end_column": f.span.end_col,
        "severity": f.severity.value,
        "targets": {t: s.value for t, s in f.targets.items()},
        "confidence": f.confidence,
        "role": f.role or "library",
        "message": f.message,
        "suggestion": f.suggestion,
        "fix": _fix_json(f.fix),
        "related": [related_json(r) for r in f.related],
        "suppressed": None if not f.suppressed else {"kind": f.suppression_kind or "inSource", "reason": f.suppressed},
        "fingerprints": {"portlint/v1": fingerprint or portlint_fingerprint(f), "primaryLocationLineHash": f.line_hash},
    }


def render_json(result, settings, options) -> str:
    from portlint.core.catalog import load_rules

    rules = load_rules()
    prints = portlint_fingerprints(result.findings)
    findings = [finding_json(f, rules, prints[id(f)]) for f in result.findings if options.get("include_suppressed") or not f.suppressed]
    active = [f for f in result.findings if not f.suppressed]
    doc = {
        "schema": "portlint-report",
        "version": SCHEMA_VERSION,
        "tool": {"name": "portlint", "version": __version__},
        # in every `path` below a byte that is not UTF-8 is written %NN and a `%` as %25
        "path_escape": KEY_ESCAPE,
        "targets": list(settings.targets),
        # the releases the verdicts rest on ([tool.portlint.versions]), for the targets judged
        "versions": {k: v for k, v in settings.versions.items() if STACK_TARGET[k] in settings.targets},
        "summary": {
            "files_scanned": result.files_scanned,
            "findings": len(active),
            "suppressed": len(result.findings) - len(active),
            "by_severity": {s: sum(1 for f in active if f.severity.value == s) for s in ("error", "warning", "note")},
            "by_target": {t: sum(1 for f in active if t in f.targets) for t in settings.targets},
            "counters": dict(sorted(result.counters.items())),
            "outside_library": sum(1 for f in active if f.role),
        },
        "findings": findings,
        "notices": [{"path": path_key(n.path), "level": n.level, "message": n.message} for n in result.notices],
    }
    # paths through path_key (one to one); any other string's non-UTF-8 bytes written \xNN
    return json.dumps(json_ready(doc), indent=2, ensure_ascii=False, sort_keys=False) + "\n"
