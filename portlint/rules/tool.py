"""The tool's own rules: suppression hygiene and internal errors (PTL0xx).

The engine calls these itself (phase "post" after inline suppressions are applied, phase
"error" when another detector raises); they do not take part in the syntax walk."""

from __future__ import annotations

from portlint.core.model import Span
from portlint.core.registry import detector
from portlint.core.catalog import load_rules


@detector("PTL001", phase="post")
def unused_suppression(ctx, sups, enabled: set[str]) -> None:
    """A `portlint: ignore[ID]` that silenced nothing, when every rule it names ran here."""
    rules = load_rules()
    for sup in sups.items:
        for ident in sup.ids:
            covered = [rid for rid in rules if rid.startswith(ident)]
            if not covered or ident in sup.used:
                continue
            ran_here = all(rid in enabled and rules[rid].language in (ctx.language, "any") for rid in covered)
            if ran_here:
                ctx.report(Span(sup.line, sup.col, sup.line, sup.end_col), ident=ident)


@detector("PTL002", phase="post")
def unknown_suppression_id(ctx, sups, enabled: set[str]) -> None:
    """A suppression naming an id no rule has, or a malformed `portlint:` directive."""
    rules = load_rules()
    for sup in sups.items:
        for ident in sup.ids:
            if not any(rid.startswith(ident) for rid in rules):
                ctx.report(Span(sup.line, sup.col, sup.line, sup.end_col), ident=ident)
    for line, col, end_col, problem in sups.malformed:
        ctx.report(
            Span(line, col, line, end_col),
            message=f"Malformed portlint directive, which suppresses nothing: {problem}. "
            "Write `portlint: ignore[ID] -- reason` or `portlint: ignore-file[ID]`.",
        )


@detector("PTL003", phase="error")
def internal_error(ctx, rule_id: str, exc: Exception, node) -> None:
    """A detector raised on this file: report it here instead of crashing the scan."""
    span = Span(1, 1, 1, 1)
    if node is not None:
        try:
            span = ctx.node_span(node)
        except Exception:
            pass
    ctx.report(span, rule=rule_id, error=f"{type(exc).__name__}: {exc}")
