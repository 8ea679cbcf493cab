"""`portlint report`: the migration report. `summary` folds a scan into the numbers a
porting plan needs; `html`, `markdown` and the JSON form below only render that Summary."""

from __future__ import annotations

import json

from portlint.output.escape import json_ready

def render_report(fmt: str, summary) -> str:
    if fmt == "html":
        from portlint.output.report.html import render_html

        return render_html(summary)
    if fmt == "markdown":
        from portlint.output.report.markdown import render_markdown

        return render_markdown(summary)
    if fmt == "json":
        return json.dumps(json_ready(summary.to_json()), indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown report format {fmt!r}")
