"""`--statistics`: how many active findings each rule has, instead of the findings.

Sorted as ruff sorts its statistics: most findings first, then by rule id. Text is one
row per rule (count, id, `[*]` when every one of them has a safe fix, name); with
`--format json`, a list of {"code", "name", "count", "fixable"}."""

from __future__ import annotations

import json
from collections import Counter


def rule_counts(result) -> list[tuple[str, str, int, bool]]:
    from portlint.core.catalog import load_rules

    rules = load_rules()
    active = [f for f in result.findings if not f.suppressed]
    counts = Counter(f.rule_id for f in active)
    fixable = Counter(f.rule_id for f in active if f.fix is not None and f.fix.applicability == "safe")
    rows = [(rid, rules[rid].name if rid in rules else "", n, fixable[rid] == n) for rid, n in counts.items()]
    return sorted(rows, key=lambda row: (-row[2], row[0]))


def render_statistics(result, fmt: str) -> str:
    rows = rule_counts(result)
    if fmt == "json":
        doc = [{"code": rid, "name": name, "count": n, "fixable": fix} for rid, name, n, fix in rows]
        return json.dumps(doc, indent=2) + "\n"
    if not rows:
        return ""
    width = len(str(rows[0][2]))
    return "".join(f"{n:>{width}}\t{rid}\t{'[*] ' if fix else ''}{name}\n" for rid, name, n, fix in rows)
