"""Regenerate the rule table in README.md from rules/ (between the rules:start/end markers).

    python scripts/generate_readme_rules.py          # rewrite README.md
    python scripts/generate_readme_rules.py --check  # exit 1 if README.md is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def table() -> str:
    sys.path.insert(0, str(ROOT))
    from portlint.core.catalog import load_rules

    rows = ["| id | name | targets (severity) | confidence | fix | summary |", "|---|---|---|---|---|---|"]
    for r in load_rules().values():
        sev = ", ".join(f"{t} {s.value}" for t, s in r.severity.items())
        name = f"`{r.name}`" + ("" if r.default_enabled else " (opt-in)")
        summary = r.summary.replace("|", "\\|")
        rows.append(f"| [{r.id}](rules/{r.family}/{r.source}) | {name} | {sev} | {r.confidence} | {r.fix} | {summary} |")
    return "\n".join(rows)


def render(readme: str) -> str:
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> int:
    path = ROOT / "README.md"
    current = path.read_text(encoding="utf-8")
    fresh = render(current)
    if "--check" in sys.argv:
        if fresh != current:
            print("README.md rule table is out of date: run python scripts/generate_readme_rules.py")
            return 1
        return 0
    path.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
