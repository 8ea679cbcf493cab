"""`--format concise`: one line per finding (`path:line:col: ID severity message`), no
source excerpt, then the summary."""

from __future__ import annotations

import os

from portlint.findings.roots import more_uses
from portlint.output.formats.text import escape_controls, run_header_lines, shown_path, summary_lines


def render_concise(result, settings, options) -> str:
    cwd = os.getcwd()
    active = [f for f in result.findings if not f.suppressed]
    out = [
        f"{escape_controls(shown_path(f.path, settings.root, cwd))}:{f.span.start_line}:{f.span.start_col}: "
        f"{f.rule_id} {f.severity.value} {escape_controls(' '.join(f.message.split()))}"
        + (f" ({more_uses(f)})" if f.related else "")
        for f in active
    ]
    if out:
        out.append("")
    # the same summary as the text format: the targets and releases judged against first
    out.extend(run_header_lines(settings, options.get("color", False)))
    out.extend(summary_lines(result, active, options.get("color", False)))
    return "\n".join(out) + "\n"
