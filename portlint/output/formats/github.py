"""GitHub Actions workflow commands: one `::error file=...::message` line per finding."""

from __future__ import annotations

from portlint.output.escape import controls, path_plain

_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def _escape_data(text: str) -> str:
    # controls first (the one escaper: no ESC/OSC from a file name or message reaches the
    # log raw), then the workflow-command escapes
    return controls(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result, settings, options) -> str:
    out = []
    for f in result.findings:
        if f.suppressed:
            continue
        props = (
            f"file={_escape_prop(path_plain(f.path))},line={f.span.start_line},col={f.span.start_col},"
            f"endLine={f.span.end_line},endColumn={f.span.end_col},title={_escape_prop(f.rule_id)}"
        )
        targets = ", ".join(f.targets)
        out.append(f"::{_LEVEL[f.severity.value]} {props}::{_escape_data(f'{f.rule_id} {f.message} [{targets}]')}")
    return "\n".join(out) + ("\n" if out else "")
