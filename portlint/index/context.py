"""FileContext: everything a detector may ask about the file it is looking at.

One context per file. The parse (tree-sitter for CUDA/C++, `ast` for Python) happens once,
lazily; analyses shared by several detectors (guards, execution spaces, traced regions)
are memoised with `ctx.fact(fn)`."""

from __future__ import annotations

import ast
from bisect import bisect_right
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable

from portlint.core import lines as line_model
from portlint.core.model import Finding, Fix, Severity, Span, TARGETS
from portlint.frontends.python.astindex import MAX_EXPRESSION_NESTING, adopt, cut_lines, parse_for_scan

if TYPE_CHECKING:
    from portlint.core.config import Settings
    from portlint.core.catalog import Rule


class FileContext:
    def __init__(self, display_path: str, data: bytes, language: str, tags: frozenset[str], settings: "Settings"):
        self.path = display_path
        self.data = data
        self.text = line_model.decode(data)
        self.language = language
        self.tags = tags
        self.settings = settings
        self.findings: list[Finding] = []
        self.counters: dict[str, int] = {}
        self._facts: dict[Callable, Any] = {}
        self._ascii = data.isascii()
        self.rule: "Rule | None" = None  # the rule of the detector now running (set by the engine)
        self.notices: list[tuple[str, str]] = []  # (message, level) one-line notices about this file
        self.session: Any = None  # the ScanSession of the scan this file belongs to (set by the engine)

    # ---- text and positions -------------------------------------------------------------
    @cached_property
    def lines(self) -> list[str]:
        """Lines as portlint.core.lines splits them: at LF or CRLF only (as tree-sitter and GitHub
        count them), without the terminator."""
        return line_model.split_lines(self.text)

    @cached_property
    def _line_starts(self) -> list[int]:
        return line_model.line_starts(self.data)

    @cached_property
    def _byte_map(self) -> line_model.ByteMap:
        return line_model.ByteMap(self.data)

    @cached_property
    def _cr_lines(self) -> line_model.CrLines | None:
        """Python's own line numbering when it differs from ours (a lone CR, which Python's
        tokenizer counts as a line break), else None."""
        return line_model.CrLines(self.data) if line_model.has_lone_cr(self.data) else None

    def line_text(self, line: int) -> str:
        """1-based line, without its newline ("" past the end)."""
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def byte_col_to_col(self, line: int, byte_col: int) -> int:
        """0-based byte column on a 1-based line -> 1-based code-point column."""
        if self._ascii:
            return byte_col + 1
        start = self._line_starts[line - 1] if line - 1 < len(self._line_starts) else len(self.data)
        return len(line_model.decode(self.data[start : start + byte_col])) + 1

    def offset_to_pos(self, offset: int) -> tuple[int, int]:
        """Byte offset -> (1-based line, 1-based column)."""
        line = bisect_right(self._line_starts, offset)
        return line, self.byte_col_to_col(line, offset - self._line_starts[line - 1])

    def node_span(self, node: Any) -> Span:
        """Span of a tree-sitter node or an `ast` node."""
        if isinstance(node, Span):
            return node
        if isinstance(node, ast.AST):
            end_line = getattr(node, "end_lineno", None) or node.lineno
            end_byte = getattr(node, "end_col_offset", None)
            if end_byte is None:
                end_byte = node.col_offset
            cr = self._cr_lines
            if cr is not None:  # ast counted a lone CR as a line break
                start = self.offset_to_pos(cr.offset(node.lineno, node.col_offset))
                end = self.offset_to_pos(cr.offset(end_line, end_byte))
                return Span(*start, *end)
            return Span(
                node.lineno,
                self.byte_col_to_col(node.lineno, node.col_offset),
                end_line,
                self.byte_col_to_col(end_line, end_byte),
            )
        (sr, sc), (er, ec) = node.start_point, node.end_point
        return Span(sr + 1, self.byte_col_to_col(sr + 1, sc), er + 1, self.byte_col_to_col(er + 1, ec))

    def span_text(self, span: Span) -> str:
        if span.start_line == span.end_line:
            return self.line_text(span.start_line)[span.start_col - 1 : span.end_col - 1]
        parts = [self.line_text(span.start_line)[span.start_col - 1 :]]
        parts += [self.line_text(n) for n in range(span.start_line + 1, span.end_line)]
        parts.append(self.line_text(span.end_line)[: span.end_col - 1])
        return "\n".join(parts)

    # ---- parses ---------------------------------------------------------------------------
    @cached_property
    def tree(self):
        """tree-sitter tree of a CUDA/C++ file (error-tolerant: never raises on bad syntax)."""
        from portlint.frontends.cuda.parse import MAX_BRACE_DEPTH, flatten_deep_braces, parse_cuda

        data, blanked = flatten_deep_braces(self.data)
        if blanked:
            # the analyses read the deeper levels as one block (positions unchanged); a fix
            # built from that text could drop a brace, so none is offered for this file
            self._flattened = True
            self.notice(f"braces nested more than {MAX_BRACE_DEPTH} deep: the deeper levels are analysed as one block "
                        "and no fixes are offered", "warning")
        return parse_cuda(data)

    @cached_property
    def module(self) -> ast.Module:
        """`ast` of a Python file; raises SyntaxError (the engine turns it into a notice)."""
        module, all_nodes = parse_for_scan(self.data, self.path)
        adopt(module, all_nodes)
        self.note_cut_expressions(module)
        return module

    def note_cut_expressions(self, module: ast.Module) -> None:
        """The notice for expressions too deep to analyse (`astindex.parse_for_scan`)."""
        cut = cut_lines(module)
        if cut:
            self._flattened = True  # a fix built from the cut tree could hold the placeholder: none is offered
            where = ", ".join(map(str, cut[:5])) + (f" and {len(cut) - 5} more" if len(cut) > 5 else "")
            self.notice(f"expressions nested more than {MAX_EXPRESSION_NESTING} deep (line {where}): the deeper levels "
                        "were not analysed and no fixes are offered", "warning")

    def fact(self, compute: Callable[["FileContext"], Any]) -> Any:
        """Compute an analysis once per file and share it between detectors."""
        if compute not in self._facts:
            self._facts[compute] = compute(self)
        return self._facts[compute]

    def notice(self, message: str, level: str = "note") -> None:
        """A one-line notice about this file (e.g. an optional pass that could not run)."""
        if (message, level) not in self.notices:
            self.notices.append((message, level))

    def count(self, counter: str, n: int = 1) -> None:
        self.counters[counter] = self.counters.get(counter, 0) + n

    # ---- reporting ------------------------------------------------------------------------
    def _anchored(self, fix: Fix) -> Fix | None:
        """`fix` with each edit's `old` set to the text its span holds now, so the fix engine
        can tell the span still holds it; None when a span is not a position in this file."""
        import dataclasses

        if getattr(self, "_flattened", False):
            return None  # see `tree`
        if self.language == "python" and self._cr_lines is not None:
            # detectors build some edit spans from ast's (line, byte) pairs, which count a
            # lone CR as a line break: no fix is offered rather than one that lands elsewhere
            self.notice("the file breaks lines with a lone CR, which Python counts as a line break: fixes are not offered")
            return None
        edits = []
        for e in fix.edits:
            start = self._byte_map.byte_offset(e.span.start_line, e.span.start_col)
            end = self._byte_map.byte_offset(e.span.end_line, e.span.end_col)
            if start is None or end is None or end < start:
                self.notice(f"internal: a fix of {self.rule.id if self.rule else '?'} points outside the file; fix dropped")
                return None
            edits.append(dataclasses.replace(e, old=line_model.decode(self.data[start:end])))
        return dataclasses.replace(fix, edits=tuple(edits))

    def report(
        self,
        where: Any,
        *,
        message: str | None = None,
        fix: Fix | None = None,
        suggestion: str | None = None,
        targets: dict[str, str] | tuple[str, ...] | None = None,
        confidence: str | None = None,
        suppressed: str | None = None,
        **fields: object,
    ) -> Finding:
        """Report a finding of the running detector's rule at `where` (node or Span).

        `message` overrides the rule's template; otherwise the template is filled with
        `fields`. `targets` narrows the rule's targets (a tuple) or overrides severities per
        target (a dict)."""
        rule = self.rule
        assert rule is not None, "report() called outside a detector"
        span = self.node_span(where)
        if fix is not None:
            fix = self._anchored(fix)
        if targets is None:
            sev = dict(rule.severity)
        elif isinstance(targets, dict):
            sev = {t: Severity.parse(targets[t]) if isinstance(targets[t], str) else targets[t] for t in TARGETS if t in targets}
        else:
            sev = {t: rule.severity[t] for t in TARGETS if t in targets and t in rule.severity}
        finding = Finding(
            rule_id=rule.id,
            path=self.path,
            span=span,
            message=message if message is not None else rule.format_message(**fields),
            severity=max(sev.values(), key=lambda s: s.rank) if sev else rule.default_level,
            targets=sev,
            confidence=confidence or rule.confidence,
            fix=fix,
            suggestion=suggestion,
            suppressed=suppressed,
            suppression_kind="inSource" if suppressed else "",
            snippet=self.span_text(span)[:200],
        )
        self.findings.append(finding)
        return finding
