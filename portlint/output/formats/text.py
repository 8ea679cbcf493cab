"""Human-readable output: `path:line:col: ID severity message`, the source line with a caret
span, the suggested rewrite, and a summary per severity and per target.

Paths are shown relative to the working directory (absolute when the file lies outside it),
as ruff shows them. Everything that comes from the scanned tree (source lines, snippets in
messages, file names) goes through `escape_controls`, so a hostile file cannot send
terminal escape sequences to the reader's terminal. Notices are not repeated here: the
command line prints them once, on stderr."""

from __future__ import annotations

from portlint.core import lines as line_model

import os
import re
from pathlib import Path

from portlint.core.config import targets_line
from portlint.core.files import read_limited
from portlint.core.model import TARGETS, Severity
from portlint.core.rule_links import absolute_rule_url, rule_url
from portlint.findings.roots import more_uses
from portlint.findings.selection import selection_note
from portlint.output.escape import controls
from portlint.output.report.summary import outside_library_line, role_counts


def _docs_pointer(rule_id: str, docs_url: str | None) -> str:
    """Where a reader finds the rule's page: the configured docs-url; else the absolute link of
    the Documentation URL in portlint's own metadata, when the package declares one; else the
    command that prints the page from the installed package. Never the relative
    docs/rules/PTLnnn.md, which exists in portlint's repository, not in the scanned one."""
    if docs_url:
        return rule_url(rule_id, docs_url)
    return absolute_rule_url(rule_id) or f"`portlint rule {rule_id}`"


def escape_controls(text: str) -> str:
    """`text` with control characters written visibly (the one escaper, portlint.output.escape)."""
    return controls(text)


def shown_path(path: str, root: Path, cwd: str | None = None) -> str:
    """A finding's path (relative to the settings root) as the user should see it: relative
    to the working directory when the file is below it, else absolute."""
    cwd = cwd or os.getcwd()
    absolute = os.path.normpath(os.path.join(str(root), path))
    prefix = cwd.rstrip(os.sep) + os.sep
    if absolute.startswith(prefix):
        return absolute[len(prefix):].replace(os.sep, "/")
    return absolute.replace(os.sep, "/")

_COLORS = {"error": "\033[31;1m", "warning": "\033[33;1m", "note": "\033[36m", "bold": "\033[1m", "dim": "\033[2m", "reset": "\033[0m"}


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_COLORS[style]}{text}{_COLORS['reset']}" if color else text


def render_text(result, settings, options) -> str:
    color = options.get("color", False)
    show_source = options.get("show_source", True)
    out: list[str] = []
    sources = _SourceCache(settings.root) if show_source else None
    active = [f for f in result.findings if not f.suppressed]
    cwd = os.getcwd()
    for f in active:
        sev = f.severity.value
        where = escape_controls(shown_path(f.path, settings.root, cwd))
        head = f"{_paint(f'{where}:{f.span.start_line}:{f.span.start_col}:', 'bold', color)} {_paint(f.rule_id, 'bold', color)} {_paint(sev, sev, color)} {escape_controls(f.message)}"
        out.append(head)
        targets = ", ".join(f"{t} {s.value}" for t, s in f.targets.items())
        out.append(_paint(f"  targets: {targets}; confidence: {f.confidence}; docs: {_docs_pointer(f.rule_id, settings.docs_url)}", "dim", color))
        if sources is not None:
            text = sources.line(f.path, f.span.start_line)
            if text is not None:
                # caret columns count the escaped text, so the carets stay under the span
                expanded = escape_controls(text).expandtabs(4)
                prefix = escape_controls(text[: f.span.start_col - 1]).expandtabs(4)
                end = f.span.end_col if f.span.end_line == f.span.start_line else len(text) + 1
                width = max(1, len(escape_controls(text[: end - 1]).expandtabs(4)) - len(prefix))
                out.append(f"  {f.span.start_line:>5} | {expanded}")
                out.append(f"        | {' ' * len(prefix)}{_paint('^' * width, sev, color)}")
        if f.related:
            out.append("  " + related_line(f, settings.root, cwd))
        if f.fix is not None:
            out.append(f"  fix ({f.fix.applicability}): {escape_controls(f.fix.description)}")
        if f.suggestion:
            lines = f.suggestion.rstrip().split("\n")
            out.append("  suggestion: " + escape_controls(lines[0]))
            out.extend("    " + escape_controls(ln) for ln in lines[1:])
        out.append("")
    if options.get("run_header"):
        out.extend(run_header_lines(settings, color))
    out.extend(summary_lines(result, active, color))
    return "\n".join(out) + "\n"


_RELATED_SHOWN = 12  # use sites listed by position; the count covers them all


def related_line(f, root: Path, cwd: str) -> str:
    """`and 17 more uses: 20:5, 31:9, ...` for a finding with folded use sites
    (portlint.findings.roots); a use in another file is named `path:line:col`, a finding of
    another rule is followed by its id."""
    shown = []
    for r in f.related[:_RELATED_SHOWN]:
        where = "" if r.path == f.path else escape_controls(shown_path(r.path, root, cwd)) + ":"
        rule = f" {r.rule_id}" if r.rule_id != f.rule_id else ""  # another rule's finding (PTL057 folds them)
        shown.append(f"{where}{r.span.start_line}:{r.span.start_col}{rule}")
    rest = ", ..." if len(f.related) > _RELATED_SHOWN else ""
    fixes = sum(1 for r in f.related if r.fix is not None)
    fixed = f" ({fixes} with a fix of their own)" if fixes else ""
    return f"{more_uses(f)}{fixed}: {', '.join(shown)}{rest}"


def run_header_lines(settings, color: bool) -> list[str]:
    """The summary's first lines on the command line: the targets (all four unless narrowed,
    said so) and releases judged against, and a warning when `select` left out every default
    rule (`--select hipify` alone)."""
    out = [_paint(targets_line(settings), "dim", color)]
    note = selection_note(settings)
    if note:
        out.append(_paint(note, "warning", color))
    return out


def summary_lines(result, active, color: bool) -> list[str]:
    files = result.files_scanned
    # findings in tests, examples, benchmarks, tools and conversion scripts are notes, counted
    # apart (portlint.findings.roles): the problems are those of the library code
    library = [f for f in active if not f.role]
    where = "" if len(library) == len(active) else " of library code"
    if not library:
        line = f"No portability problems found in {files} file{'s' if files != 1 else ''}{where}."
    else:
        by_sev = {s: 0 for s in ("error", "warning", "note")}
        for f in library:
            by_sev[f.severity.value] += 1
        parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in by_sev.items() if n]
        line = f"Found {len(library)} problem{'s' if len(library) != 1 else ''}{where} in {files} file{'s' if files != 1 else ''}: {', '.join(parts)}."
    lines = [_paint(line, "bold", color)]
    if library:
        per_target = []
        for t in TARGETS:
            hits = [f for f in library if t in f.targets]
            if hits:
                errors = sum(1 for f in hits if f.targets[t] is Severity.ERROR)
                per_target.append(f"{t} {len(hits)} ({errors} error{'s' if errors != 1 else ''})")
        lines.append("By target: " + ", ".join(per_target) + ".")
    if len(library) != len(active):
        lines.append(outside_library_line(role_counts(active)))
    suppressed = sum(1 for f in result.findings if f.suppressed and f.baseline_state != "unchanged")
    if suppressed:
        lines.append(f"{suppressed} finding{'s' if suppressed != 1 else ''} suppressed (inline comments or guarded branches already ported).")
    lines.extend(narrowing_lines(result.counters))
    mech = result.counters.get("mechanical-ports", 0)
    if mech:
        lines.append(f"{mech} CUDA API use{'s' if mech != 1 else ''} port mechanically (hipify renames, rule PTL601, off by default): "
                     "list them with --extend-select hipify, apply them with --fix --select hipify.")
    fixable = sum(1 for f in active if f.fix is not None and f.fix.applicability == "safe")
    if fixable:
        lines.append(f"{fixable} finding{'s' if fixable != 1 else ''} with a safe fix (apply with --fix).")
    return lines


def narrowing_lines(counters: dict[str, int]) -> list[str]:
    """What --baseline and --diff-base left out (their counters are set only when given)."""
    out = []
    if "baselined" in counters:
        n, stale = counters["baselined"], counters.get("baseline-stale", 0)
        line = f"{n} finding{'s' if n != 1 else ''} in the baseline left out"
        if stale:
            line += f"; {stale} baseline entr{'ies' if stale != 1 else 'y'} no longer found (fixed since: refresh the baseline)"
        out.append(line + ".")
    if "outside-diff" in counters:
        n = counters["outside-diff"]
        out.append(f"{n} finding{'s' if n != 1 else ''} on lines unchanged since the diff base not shown.")
    return out


class _SourceCache:
    """Reads each reported file once, for the source excerpt (display only), through the
    one reader (`core.files.read_limited`: bounded in size, never a FIFO or a device), so a
    file that cannot be read shows no excerpt. The scan's own bytes are not kept for this:
    a cached result has none, and holding every reported file's bytes costs memory."""

    def __init__(self, root):
        self.root = root
        self._files: dict[str, list[str] | None] = {}

    def line(self, path: str, line: int) -> str | None:
        if path not in self._files:
            p = Path(path)
            if not p.is_absolute():
                p = self.root / p
            try:
                self._files[path] = line_model.split_lines(line_model.decode(read_limited(p)))
            except OSError:  # NotRead included
                self._files[path] = None
        lines = self._files[path]
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1]
