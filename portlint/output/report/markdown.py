"""The migration summary as GitHub-flavoured Markdown, for $GITHUB_STEP_SUMMARY and
pull-request comments: tables only, no HTML. The per-finding list stays in the HTML and
JSON forms (a comment has a size limit; a summary should be read in a minute)."""

from __future__ import annotations

import re

from portlint.output.escape import code_span, controls, split_code_spans
from portlint.output.report.summary import ALL, EFFORT_POINTS, LEVELS, TARGET_NAMES, TOP_FILES, Summary

MAX_DIRECTORIES = 25
VERDICT = {"blocked": "**blocked**", "runs, slowly": "runs, slowly", "ready": "ready"}


def _cell(text: object) -> str:
    """One table cell: pipes escaped everywhere, and `<` outside code spans, so that
    GitHub shows it as text and never as a tag. Code spans are found by CommonMark's rule
    (portlint.output.escape), so a name written with `code_span` stays one span."""
    parts = split_code_spans(controls(str(text).replace("\n", " ")))
    return "".join(p if is_code else p.replace("<", "\\<") for is_code, p in parts).replace("|", "\\|")


def _table(header: list[str], rows: list[list[object]], text_columns: int = 1) -> list[str]:
    """A table whose first `text_columns` columns are text and the rest numbers."""
    align = ["---" if i < text_columns else "---:" for i in range(len(header))]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _levels(t) -> str:
    return " / ".join(str(getattr(t, lv)) for lv in reversed(LEVELS))


def _escape_line(text: str) -> str:
    """The header line in Markdown emphasis: its own underscores and asterisks escaped."""
    return text.replace("\\", "\\\\").replace("_", "\\_").replace("*", "\\*")


def render_markdown(summary: Summary) -> str:
    total = summary.total()
    scale = ", ".join(f"{lv} {EFFORT_POINTS[lv]}" for lv in LEVELS)
    lines = [
        "## portlint migration report",
        "",
        f"{code_span(', '.join(summary.paths))}: {_plural(summary.files_scanned, 'file')} scanned, {_plural(total.findings, 'finding')}, "
        f"**{total.points} effort points** ({total.redesign} need a redesign), {summary.suppressed} suppressed. "
        f"Points per finding: {scale}.",
        *(["", summary.outside_library_line()] if summary.outside_library else []),
        "",
        f"_{_escape_line(summary.header)}_" if summary.header else "",
        "",
        "### Readiness by target",
        "",
    ]
    rows = []
    for s in summary.by_target.values():
        t = s.tally
        ported = f"{s.ported} guarded, {s.hipify_renames} hipify renames" if s.target == "rocm" else "—"
        rows.append([f"**{s.target}** ({TARGET_NAMES.get(s.target, '')})", VERDICT[s.verdict], t.blockers, t.slowdowns,
                     t.notes, t.points, _levels(t), ported])
    lines += _table(["target", "verdict", "blockers", "slowdowns", "notes", "effort points",
                     "redesign / local / mechanical", "already ported"], rows, text_columns=2)
    cuda = next((s.cuda_files for s in summary.by_target.values()), 0)
    if cuda and any(t != "rocm" for t in summary.targets):
        lines += ["", f"{_plural(cuda, 'CUDA source file')} {'is' if cuda == 1 else 'are'} assessed for rocm only: on TPU, Trainium and Gaudi the "
                      "device code needs a rewrite."]
    lines += ["", "### Where the work is: by rule family", ""]
    targets = list(summary.targets)
    fam_rows = [
        [g.key, *[g.tally(t).findings for t in targets], g.tally(ALL).findings, _levels(g.tally(ALL)), g.tally(ALL).points]
        for g in summary.ranked(summary.families, ALL)
    ]
    lines += _table(["family", *[f"{t} findings" for t in targets], "findings", "redesign / local / mechanical", "points"], fam_rows)
    dirs = summary.ranked(summary.directories, ALL)
    lines += ["", f"### By directory{' (top ' + str(MAX_DIRECTORIES) + ')' if len(dirs) > MAX_DIRECTORIES else ''}", ""]
    dir_rows = [
        [code_span(f"{g.key}/"), g.files, g.tally(ALL).findings, g.tally(ALL).blockers, _levels(g.tally(ALL)), g.tally(ALL).points]
        for g in dirs[:MAX_DIRECTORIES]
    ]
    lines += _table(["directory", "files", "findings", "blockers", "redesign / local / mechanical", "points"], dir_rows)
    top = summary.top_files(ALL)
    lines += ["", f"### Top {min(TOP_FILES, len(top))} files by effort", ""]
    file_rows = [
        [i, code_span(g.key), g.tally(ALL).findings, g.tally(ALL).blockers, _levels(g.tally(ALL)), g.tally(ALL).points]
        for i, g in enumerate(top, start=1)
    ]
    lines += _table(["#", "file", "findings", "blockers", "redesign / local / mechanical", "points"], file_rows, text_columns=2)
    lines += ["", "### Rules that fired, most effort first", ""]
    rule_rows = []
    for g in summary.ranked(summary.rules, ALL):
        r = summary.rule_rows[g.key]
        rule_rows.append([f"{r.id} {code_span(r.name)}", r.effort, r.effort_why, g.tally(ALL).findings, g.tally(ALL).points])
    lines += _table(["rule", "effort", "why", "findings", "points"], rule_rows, text_columns=3)
    lines += ["", "Full list of findings with their rewrites: `portlint report PATHS -o report.html`; "
                  "a rule's documentation: `portlint rule ID`.", ""]
    return "\n".join(lines)
