"""Regenerate rules/index.json, the pre-parsed copy of the rule files that start-up reads.

    python scripts/generate_rule_index.py          # rewrite rules/index.json
    python scripts/generate_rule_index.py --check  # exit 1 if it is out of date

portlint never trusts a stale index (it checks a digest of the rule files and parses the
TOML when they differ), so forgetting this only costs start-up time; a test catches it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from portlint.core.catalog import INDEX_FILE, build_index, rules_root

    path = rules_root() / INDEX_FILE
    fresh = build_index()
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if "--check" in sys.argv:
        if fresh != current:
            print(f"{path} is out of date: run python scripts/generate_rule_index.py", file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        path.write_text(fresh, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
