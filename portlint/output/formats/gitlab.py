"""GitLab code quality report (the `codequality` artifact of a CI job): a JSON array with
one object per active finding.

The fields GitLab reads, as its documentation gives them: `description`, `check_name`,
`fingerprint` (unique per finding, so the merge request widget can tell new from fixed),
`severity` (info, minor, major, critical or blocker) and `location` with a repository-relative
`path` and `lines.begin`. portlint adds `categories` and `location.lines.end`, which the
format allows. tests/data/gitlab-codequality.schema.json holds these facts as a JSON schema."""

from __future__ import annotations

import json

from portlint.findings.fingerprint import portlint_fingerprints
from portlint.output.escape import json_ready, path_plain

# portlint's severity -> GitLab's
SEVERITY = {"error": "critical", "warning": "major", "note": "info"}


def build_gitlab(result) -> list[dict]:
    prints = portlint_fingerprints(result.findings)
    out = []
    for f in result.findings:
        if f.suppressed:
            continue
        targets = ", ".join(f"{t} {s.value}" for t, s in f.targets.items())
        out.append({
            "type": "issue",
            "description": f"{f.rule_id} {f.message} [{targets}]",
            "check_name": f.rule_id,
            "fingerprint": prints[id(f)],
            "severity": SEVERITY[f.severity.value],
            "categories": ["Compatibility"],
            "location": {"path": path_plain(f.path), "lines": {"begin": f.span.start_line, "end": max(f.span.end_line, f.span.start_line)}},
        })
    return out


def render_gitlab(result, settings, options) -> str:
    return json.dumps(json_ready(build_gitlab(result)), indent=2, ensure_ascii=False) + "\n"
