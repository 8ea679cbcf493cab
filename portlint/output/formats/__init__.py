"""Reporters render a ScanResult; they never re-run analysis. Each is imported only when
its format is asked for."""

from __future__ import annotations


def render(fmt: str, result, settings, options) -> str:
    if fmt == "text":
        from portlint.output.formats.text import render_text as render_fn
    elif fmt == "concise":
        from portlint.output.formats.concise import render_concise as render_fn
    elif fmt == "json":
        from portlint.output.formats.json_report import render_json as render_fn
    elif fmt == "sarif":
        from portlint.output.formats.sarif import render_sarif as render_fn
    elif fmt == "github":
        from portlint.output.formats.github import render_github as render_fn
    elif fmt == "gitlab":
        from portlint.output.formats.gitlab import render_gitlab as render_fn
    elif fmt == "junit":
        from portlint.output.formats.junit import render_junit as render_fn
    else:  # pragma: no cover - click validates the choice
        raise ValueError(fmt)
    return render_fn(result, settings, options)
