"""One finding per construct: when two rules report the same construct, the rule that
`supersedes` the other (a key of its rule file) keeps it.

The relation is data in `rules/*/PTL*.toml` and transitive (A over B over C means A over C).
`drop_superseded` is the one filter the engine applies to a file's findings; `winner` answers
the same question for a table row that several rules could own (portlint.analyses.cuda.hipify)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _closure() -> dict[str, frozenset[str]]:
    """rule id -> every rule it supersedes, directly or through another rule."""
    from portlint.core.catalog import load_rules

    rules = load_rules()
    out: dict[str, frozenset[str]] = {}

    def below(rid: str) -> frozenset[str]:
        if rid not in out:
            direct = rules[rid].supersedes if rid in rules else ()
            out[rid] = frozenset(direct).union(*(below(d) for d in direct))
        return out[rid]

    for rid in rules:
        below(rid)
    return {rid: s for rid, s in out.items() if s}


def supersedes(a: str, b: str) -> bool:
    """True when rule `a`'s finding replaces rule `b`'s on the same construct."""
    return b in _closure().get(a, ())


def winner(candidates) -> str | None:
    """The candidate no other candidate supersedes (the first such in id order), or None
    when there are no candidates."""
    ids = sorted(set(candidates))
    for rid in ids:
        if not any(supersedes(other, rid) for other in ids if other != rid):
            return rid
    return ids[0] if ids else None


def drop_superseded(findings: list) -> list:
    """The findings without those another finding supersedes on the same construct: same
    file, overlapping line ranges (the CUDA detectors report one finding per line)."""
    closure = _closure()
    strong = [f for f in findings if f.rule_id in closure]
    if not strong:
        return findings

    def replaced(f) -> bool:
        return any(
            f.rule_id in closure[s.rule_id]
            and s.path == f.path
            and s.span.start_line <= f.span.end_line
            and f.span.start_line <= s.span.end_line
            for s in strong
        )

    return [f for f in findings if not replaced(f)]
