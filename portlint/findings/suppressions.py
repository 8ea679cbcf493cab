"""Inline suppressions: `// portlint: ignore[PTL201] -- reason` and `# portlint: ...`.

- `ignore[IDS]` silences findings of those rules (ids or prefixes, comma-separated) on any
  line of the flagged construct; a comment alone on its line also covers the line after
  it (the comment on the line before, where formatters put it).
- `ignore-file[IDS]` silences them anywhere in the file.
- Directives are read from comments only (see comments.py): the same text in a string
  literal does nothing.
- A directive is `portlint:` at the start of a comment (or after a `#`, `//` or `/*`
  inside one, as in `# noqa: E501  # portlint: ignore[...]`). One that is not exactly
  `portlint: VERB[ID, ...]`, optionally followed by ` -- reason`, silences nothing and is
  reported (PTL002) with what is wrong: wrong case (`PORTLINT:`, `Ignore`, `ptl201`),
  unknown verbs, missing or empty brackets, ids that are not `PTL` + digits, text after
  the `]` that is not a reason.
A bare `noqa` or `NOLINT` is never honoured: those belong to other tools.

Comments are read, and findings matched to them, in the lines the file's findings are
found in. A Python file that breaks lines with a lone CR is one line to the line model but
many to Python's tokenizer and `ast` (`core.lines.CrLines`): its comments are read in
Python's lines (`python_view`), a finding's span is matched in them too, and a comment's
position is given back in the line model's numbering, as findings are reported. A CUDA
file with lone CRs is analysed in the compiler's view already (`pipeline.engine.compiler_view`),
so its context's lines are the ones to read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from portlint.core import lines as line_model
from portlint.core.comments import Comment, comments
from portlint.core.model import Span

VERBS = ("ignore", "ignore-file")
# where a directive may start inside a comment, and its head in any case or spacing
_HEAD = re.compile(r"(?:^|#|//|/\*)[ \t]*(?P<head>portlint[ \t]*:|portlint(?=[ \t]+ignore))", re.I)
_VERB = re.compile(r"[ \t]*(?P<verb>[A-Za-z][A-Za-z_-]*)")
_ID = re.compile(r"PTL\d{0,3}")
# any mention of portlint: a file without one has no directives (checked before lexing)
_MENTION = re.compile("portlint", re.I)


@dataclass
class Suppression:
    line: int
    col: int
    end_col: int
    kind: str  # "ignore" or "ignore-file"
    ids: tuple[str, ...]
    reason: str
    standalone: bool = False  # the comment is alone on its line: it also covers the next line
    used: set[str] = field(default_factory=set)
    read_line: int = 0  # its line in the numbering it was read and is matched in (0: `line`)

    @property
    def at(self) -> int:
        return self.read_line or self.line

    def matches(self, rule_id: str) -> list[str]:
        return [ident for ident in self.ids if rule_id.startswith(ident)]


@dataclass
class SuppressionSet:
    items: list[Suppression]
    malformed: list[tuple[int, int, int, str]]  # (line, col, end_col, what is wrong)
    # a finding's span -> its (first, last) line in the numbering the comments were read in
    lines_of: Callable[[Span], tuple[int, int]] = lambda span: (span.start_line, span.end_line)

    def __post_init__(self) -> None:
        self._by_line: dict[int, list[Suppression]] = {}
        self._file_level = [sup for sup in self.items if sup.kind == "ignore-file"]
        for sup in self.items:
            self._by_line.setdefault(sup.at, []).append(sup)

    def covering(self, rule_id: str, span: Span) -> Suppression | None:
        """The suppression that silences a finding of `rule_id` at `span` (reported in the
        line model's numbering), or None."""
        return self.apply(rule_id, *self.lines_of(span))

    def apply(self, rule_id: str, start_line: int, end_line: int) -> Suppression | None:
        """As `covering`, for a span's lines in the numbering the comments were read in."""
        for sup in self._candidates(start_line, end_line):
            if (
                sup.kind == "ignore-file"
                or start_line <= sup.at <= end_line
                or (sup.standalone and sup.at == start_line - 1)
            ):
                idents = sup.matches(rule_id)
                if idents:
                    sup.used.update(idents)
                    return sup
        return None

    def _candidates(self, start_line: int, end_line: int) -> list[Suppression]:
        """The suppressions that may cover a span, in file order (the first match wins)."""
        if end_line - start_line > len(self._by_line):
            return self.items
        found = list(self._file_level)
        for line in range(start_line - 1, end_line + 1):
            found.extend(self._by_line.get(line, ()))
        return sorted(found, key=lambda s: (s.at, s.col))


def mentions_portlint(text: str) -> bool:
    return _MENTION.search(text) is not None


def python_view(language: str, data: bytes) -> bytes | None:
    """A Python file's bytes with its lines broken where Python's tokenizer breaks them, when
    that is not where the line model does (a lone CR: `core.lines.CrLines`, one byte for
    one), else None. Its suppression comments are read, matched and placed in these lines,
    the ones `ast` numbers the nodes of its findings in."""
    if language == "python" and line_model.has_lone_cr(data):
        return line_model.lone_cr_as_lf(data)
    return None


def file_suppressions(ctx) -> SuppressionSet:
    """The suppressions of the file of `ctx` (a FileContext), positioned as its findings
    are reported and matched in the lines its findings were found in (`python_view`)."""
    if python_view(ctx.language, ctx.data) is None:
        return parse_suppressions(ctx.text, ctx.language)
    cr = line_model.CrLines(ctx.data)
    read = parse_suppressions(line_model.decode(cr.view), ctx.language)
    model = line_model.ByteMap(ctx.data)

    def shown(line: int, col: int) -> tuple[int, int]:
        offset = cr.char_offset(line, col)
        return ctx.offset_to_pos(offset) if offset is not None else (line, col)

    def lines_of(span: Span) -> tuple[int, int]:
        def line(n: int, col: int) -> int:
            offset = model.byte_offset(n, col)
            if offset is None:  # no such column: the line's start
                offset = model.byte_offset(n, 1)
            return cr.line_at(offset) if offset is not None else n
        return line(span.start_line, span.start_col), line(span.end_line, span.end_col)

    items = []
    for sup in read.items:
        # a comment ends at a lone CR: it lies on one line of the line model as well
        (line, col), (_, end_col) = shown(sup.line, sup.col), shown(sup.line, sup.end_col)
        items.append(Suppression(line, col, end_col, sup.kind, sup.ids, sup.reason, sup.standalone, read_line=sup.line))
    malformed = [(*shown(line, col), shown(line, end_col)[1], problem) for line, col, end_col, problem in read.malformed]
    return SuppressionSet(items, malformed, lines_of)


def parse_suppressions(text: str, language: str) -> SuppressionSet:
    """The suppressions of `text`, positioned in its own lines (LF-ended)."""
    items: list[Suppression] = []
    malformed: list[tuple[int, int, int, str]] = []
    if not mentions_portlint(text):
        return SuppressionSet(items, malformed)
    for comment in comments(text, language):
        if not mentions_portlint(comment.text):
            continue
        m = _HEAD.search(comment.text)
        if m is None:
            continue  # prose that mentions portlint
        line, col = _position(comment, m.start("head"))
        end_col = col + len(comment.text.split("\n")[0][m.start("head"):].rstrip())
        sup, problem = _parse_directive(comment.text, m)
        if problem is not None:
            malformed.append((line, col, end_col, problem))
            continue
        kind, ids, reason = sup
        items.append(Suppression(line, col, end_col, kind, ids, reason, standalone=comment.standalone))
    return SuppressionSet(items, malformed)


def _position(comment: Comment, offset: int) -> tuple[int, int]:
    """(line, col) of `offset` into a comment (block comments span lines)."""
    before = comment.text[:offset]
    newlines = before.count("\n")
    if not newlines:
        return comment.line, comment.col + offset
    return comment.line + newlines, offset - before.rfind("\n")


def _parse_directive(text: str, head: re.Match) -> tuple[tuple[str, tuple[str, ...], str] | None, str | None]:
    """((kind, ids, reason), None) for a well-formed directive, else (None, what is wrong)."""
    written = head.group("head")
    if written != "portlint:":
        return None, f"`{written}` must be written `portlint:` (lower case, no space before the colon)"
    rest = text[head.end():].rstrip()
    if rest.endswith("*/") and "/*" in text[: head.start("head")]:
        rest = rest[:-2].rstrip()  # the end of the block comment holding the directive
    v = _VERB.match(rest)
    if v is None:
        return None, "`portlint:` is not followed by `ignore[...]` or `ignore-file[...]`"
    verb = v.group("verb")
    if verb not in VERBS:
        if verb.lower() in VERBS:
            return None, f"the verb `{verb}` must be written in lower case: `{verb.lower()}`"
        return None, f"unknown verb `{verb}` (expected `ignore[...]` or `ignore-file[...]`)"
    after = rest[v.end():]
    if not after.startswith("["):
        return None, f"`{verb}` must be followed directly by `[` and the rule ids, as in `{verb}[PTL201]`"
    close = after.find("]")
    if close == -1:
        return None, "the `[` of the rule ids is never closed"
    inside = after[1:close]
    if not inside.strip():
        return None, "empty brackets: name at least one rule id or prefix, as in `[PTL201]`"
    ids = [i.strip() for i in inside.split(",")]
    for ident in ids:
        if not ident:
            return None, f"empty rule id in `[{inside}]` (a stray comma)"
        if not _ID.fullmatch(ident):
            if _ID.fullmatch(ident.upper()):
                return None, f"rule id `{ident}` must be written in upper case: `{ident.upper()}`"
            return None, f"`{ident}` is not a portlint rule id or prefix (`PTL` and up to three digits)"
    tail = after[close + 1:]
    reason = ""
    if tail.strip():
        r = re.match(r"[ \t]*--(?P<reason>.*)$", tail, re.S)
        if r is None:
            return None, f"unexpected text after `]`: `{' '.join(tail.split())[:60]}` (a reason goes after ` -- `)"
        reason = " ".join(r.group("reason").split())
    return (verb, tuple(ids), reason), None
