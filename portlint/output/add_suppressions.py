"""`--add-suppressions "reason"`: silence every current finding with an inline comment.

For each line where an active finding starts, the rule ids found there get one directive
`portlint: ignore[IDS] -- reason`, written in the file's comment syntax (`#` for Python,
`//` for CUDA, C++ and PTX) on a new line before it, with the line's indentation and line
ending. Where a new line cannot go:
- the line before already is a directive alone on its line (it covers this line): its ids
  are extended instead, so it keeps covering the code;
- a C-family line continuing a macro (the line before ends with `\\`): an inline
  `/* portlint: ... */` goes at the start of the line's code;
- a Python line inside a multi-line string or after a backslash continuation: the finding
  is left alone and a notice says why.

The edits go through the fix engine (portlint.output.fixes.apply_fixes) as safe fixes, so they get
its guarantees: validated against the scanned bytes, only discovered files inside the scan
root, the re-parse check, atomic replacement. Running it again adds nothing: the findings
are suppressed by then."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import replace

from portlint.core import lines as line_model
from portlint.core.model import Edit, Fix, Notice, Span
from portlint.findings.suppressions import python_view
from portlint.index.context import FileContext
from portlint.pipeline.engine import compiler_view, renumbering

_MARKER = {"python": "#", "cuda": "//", "ptx": "//"}
_BRACKETS = re.compile(r"portlint:[ \t]*ignore\[(?P<ids>[^\]]*)\]")


class ReasonError(ValueError):
    pass


def check_reason(reason: str) -> str:
    """The reason, or ReasonError when it cannot sit in a one-line comment."""
    reason = reason.strip()
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in reason) or "*/" in reason:
        raise ReasonError("--add-suppressions: the reason must be one line of text without control characters or `*/`")
    return reason


def _python_string_lines(text: str) -> set[int]:
    """Lines that start inside a multi-line string token (a comment there would be text)."""
    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline="\n").readline):
            if tok.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside


# C-family tokens that can run over a line end: a comment (a `//` one continued with `\`),
# a raw string, a string or character literal continued with `\`. A line that starts
# inside one cannot take a comment at its start, nor a new line before it.
_C_SPANNING = re.compile(
    r"//(?:[^\n\\]|\\.)*"
    r"|/\*.*?(?:\*/|\Z)"
    r"|R\"([^()\\ \t\n]{0,16})\(.*?(?:\)\1\"|\Z)"
    r"|\"(?:[^\"\\\n]|\\.)*\"?"
    r"|'(?:[^'\\\n]|\\.)*'?",
    re.S,
)


def _c_spanned_lines(text: str) -> set[int]:
    """Lines that start inside a C-family comment or literal begun on an earlier line."""
    inside: set[int] = set()
    line, pos = 1, 0  # lines counted incrementally: one pass over the text
    for m in _C_SPANNING.finditer(text):
        token = m.group(0)
        if "\n" not in token:
            continue
        line += text.count("\n", pos, m.start())
        pos = m.start()
        inside.update(range(line + 1, line + token.count("\n") + 1))
    return inside


def _directive(marker: str, ids: list[str], reason: str) -> str:
    text = f"portlint: ignore[{', '.join(ids)}]" + (f" -- {reason}" if reason else "")
    return f"/* {text} */" if marker == "/*" else f"{marker} {text}"


def file_edits(display: str, data: bytes, language: str, findings, reason: str) -> tuple[list[Edit], list[Notice]]:
    """The edits that suppress `findings` (active findings of one file) in `data`.

    Comments go where the suppression matcher looks: in the lines the file is analysed in.
    For a CUDA file that breaks lines with lone CRs that is the compiler's reading
    (`pipeline.engine.compiler_view`), not the line model's, so the comments are placed in
    that view (a comment on a line of its own there ends with the lone CR the line it
    precedes has) and the edits are given back in the line model's numbering, as findings
    are (`renumbering`); offsets are the same in both. A Python file with lone CRs is
    placed the same way, in Python's lines (`findings.suppressions.python_view`), where its
    suppressions are matched."""
    # a finding folded by root (portlint.findings.roots) is silenced by a comment on its root
    # site; with no root site in the file each folded use needs its own comment
    sites = [m for top in findings for m in ((top,) if top.root_site else (top, *top.related)) if m.path == top.path]
    view = compiler_view(language, data) or python_view(language, data)
    if view is None:
        return _edits(display, data, data, language, [(f.span, f.rule_id) for f in sites], reason, lambda span: span)
    to_view = renumbering(data, FileContext(display, view, language, frozenset(), None))
    back = renumbering(view, FileContext(display, data, language, frozenset(), None))
    edits, notices = _edits(display, view, data, language, [(to_view(f.span), f.rule_id) for f in sites], reason, back)
    return [replace(e, span=back(e.span)) for e in edits], notices


def _ending(view: bytes, data: bytes, starts: list[int], line: int) -> str:
    """The line break that ends `line` (1-based) of `view` in the file's own bytes `data`: a
    lone CR, CRLF or LF; the last line, which has none, takes the one before it."""
    if line >= len(starts):
        return _ending(view, data, starts, line - 1) if line > 1 else "\n"
    at = starts[line] - 1  # the LF that ends it in the view
    if data[at:at + 1] == b"\r":
        return "\r"  # a lone CR, read by the compiler as a line break
    return "\r\n" if view[at - 1:at] == b"\r" else "\n"


def _edits(display: str, view: bytes, data: bytes, language: str, sites, reason: str, shown) -> tuple[list[Edit], list[Notice]]:
    """The edits in the line numbering of `view` (the file's bytes `data` as the analysis
    reads its lines), for `sites`, (span, rule id) pairs in that numbering; `shown` gives a
    span of it in the numbering findings are reported in (for notices)."""
    from portlint.findings.suppressions import parse_suppressions

    text = line_model.decode(view)
    lines = line_model.split_lines(text)
    starts = line_model.line_starts(view)
    by_line: dict[int, list[str]] = {}
    for span, rule_id in sites:
        ids = by_line.setdefault(span.start_line, [])
        if rule_id not in ids:
            ids.append(rule_id)
    sups = parse_suppressions(text, language)
    standalone = {s.line: s for s in sups.items if s.kind == "ignore" and s.standalone}
    in_strings = _python_string_lines(text) if language == "python" else _c_spanned_lines(text)
    marker = _MARKER[language]
    edits: list[Edit] = []
    notices: list[Notice] = []
    for line, ids in sorted(by_line.items()):
        ids = sorted(ids)
        if not 0 < line <= len(lines):
            continue
        code = lines[line - 1]
        before = lines[line - 2] if line > 1 else ""
        indent = code[: len(code) - len(code.lstrip(" \t"))]
        previous = standalone.get(line - 1)
        if previous is not None:
            m = _BRACKETS.search(before, previous.col - 1)
            if m is not None:
                merged = sorted(set(previous.ids) | set(ids))
                start, end = m.start("ids") + 1, m.end("ids") + 1
                edits.append(Edit(Span(line - 1, start, line - 1, end), ", ".join(merged), m.group("ids")))
                continue
        where = shown(Span(line, 1, line, 1)).start_line
        if language == "python" and (line in in_strings or before.rstrip().endswith("\\")):
            notices.append(Notice(display, f"line {where}: no suppression comment added (inside a string or a backslash continuation)", "note"))
            continue
        if language != "python" and line in in_strings:
            notices.append(Notice(display, f"line {where}: no suppression comment added (inside a string or comment continued from the line before)", "note"))
            continue
        if language != "python" and before.rstrip().endswith("\\"):
            col = len(indent) + 1
            edits.append(Edit(Span(line, col, line, col), _directive("/*", ids, reason) + " ", ""))
            continue
        ending = _ending(view, data, starts, line)
        first = 2 if line == 1 and text.startswith("\ufeff") else 1  # after a BOM, which must stay first
        edits.append(Edit(Span(line, first, line, first), f"{indent}{_directive(marker, ids, reason)}{ending}", ""))
    return edits, notices


def suppression_findings(findings, files, settings, reason: str) -> tuple[list, list[Notice]]:
    """Copies of the active `findings` carrying, per file, one safe fix that writes the
    suppression comments (for portlint.output.fixes.apply_fixes)."""
    from portlint.pipeline.engine import read_source
    from portlint.discovery.languages import classify

    by_display = {sf.display: sf for sf in files}
    groups: dict[str, list] = {}
    for f in findings:
        if not f.suppressed and f.path in by_display:
            groups.setdefault(f.path, []).append(f)
    out, notices = [], []
    for display, group in sorted(groups.items()):
        data, _ = read_source(by_display[display], settings)
        if data is None:
            continue
        language = classify(display, data)[0]
        if language not in _MARKER:
            continue
        edits, found = file_edits(display, data, language, group, reason)
        notices.extend(found)
        if edits:
            fix = Fix("add portlint: ignore comments", tuple(edits), "safe")
            out.append(replace(group[0], fix=fix))
    return out, notices
