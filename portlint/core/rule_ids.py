"""Who owns which rule id: the per-family id ranges (`rules/id-ranges.toml`) and the ids
that were retired and may never be used again (`rules/retired-ids.toml`).

`rules.py` checks every rule against both at load; `scripts/new_rule.py` asks
`next_free_id` for a new rule's id."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

RANGES_FILE = "id-ranges.toml"
RETIRED_FILE = "retired-ids.toml"
_RANGE_RE = re.compile(r"^PTL(\d{3})(?:-PTL(\d{3}))?$")


class IdTableError(Exception):
    """The id table itself is malformed (rules.py turns it into a RuleError)."""


@dataclass(frozen=True)
class IdTable:
    ranges: dict[str, tuple[tuple[int, int], ...]]  # family -> inclusive (low, high) ranges, in file order
    retired: dict[str, str]  # id -> "name: why"

    def family_of(self, rule_id: str) -> str | None:
        number = int(rule_id[3:])
        for family, spans in self.ranges.items():
            if any(lo <= number <= hi for lo, hi in spans):
                return family
        return None

    def next_free_id(self, family: str, taken: set[str]) -> str:
        """The lowest id in the family's last (newest) range that no rule holds and that was
        never retired. The earlier ranges hold the ids the family had before the table."""
        if family not in self.ranges:
            raise IdTableError(f"family {family!r} has no id range in rules/{RANGES_FILE}")
        lo, hi = self.ranges[family][-1]
        for number in range(lo, hi + 1):
            rid = f"PTL{number:03d}"
            if rid not in taken and rid not in self.retired:
                return rid
        raise IdTableError(f"family {family!r}: its id range PTL{lo:03d}-PTL{hi:03d} is full; add a range in rules/{RANGES_FILE}")


def table_files(root: Path) -> list[Path]:
    return [root / RANGES_FILE, root / RETIRED_FILE]


def _parse_range(text: object, where: str) -> tuple[int, int]:
    m = _RANGE_RE.match(text) if isinstance(text, str) else None
    if not m:
        raise IdTableError(f"{where}: {text!r} is not PTLnnn or PTLnnn-PTLmmm")
    lo = int(m.group(1))
    hi = int(m.group(2) or m.group(1))
    if hi < lo:
        raise IdTableError(f"{where}: range {text} runs backwards")
    return lo, hi


def load_id_table(root: Path) -> IdTable:
    import tomllib

    try:
        ranges_raw = tomllib.loads((root / RANGES_FILE).read_text(encoding="utf-8"))
        retired_raw = tomllib.loads((root / RETIRED_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise IdTableError(f"rules/{RANGES_FILE} or rules/{RETIRED_FILE}: {exc}") from None
    families = ranges_raw.get("families")
    if not isinstance(families, dict) or not families:
        raise IdTableError(f"rules/{RANGES_FILE}: needs a [families] table")
    ranges: dict[str, tuple[tuple[int, int], ...]] = {}
    owner: dict[int, str] = {}
    for family, spans in families.items():
        where = f"rules/{RANGES_FILE}: {family}"
        if not isinstance(spans, list) or not spans:
            raise IdTableError(f"{where}: must be a non-empty list of ranges")
        parsed = tuple(_parse_range(s, where) for s in spans)
        for lo, hi in parsed:
            for number in range(lo, hi + 1):
                if number in owner:
                    raise IdTableError(f"{where}: PTL{number:03d} already belongs to {owner[number]}")
                owner[number] = family
        ranges[family] = parsed
    retired: dict[str, str] = {}
    rows = retired_raw.get("retired", [])
    if not isinstance(rows, list):
        raise IdTableError(f"rules/{RETIRED_FILE}: 'retired' must be a list of tables")
    for row in rows:
        if not isinstance(row, dict) or set(row) != {"id", "name", "why"} or not all(isinstance(v, str) and v for v in row.values()):
            raise IdTableError(f"rules/{RETIRED_FILE}: each row needs exactly id, name and why: {row!r}")
        if not _RANGE_RE.match(row["id"]) or "-" in row["id"]:
            raise IdTableError(f"rules/{RETIRED_FILE}: {row['id']!r} is not an id")
        if row["id"] in retired:
            raise IdTableError(f"rules/{RETIRED_FILE}: {row['id']} is listed twice")
        retired[row["id"]] = f"{row['name']}: {row['why']}"
    return IdTable(ranges=ranges, retired=retired)


def check_rule_ids(table: IdTable, rules: dict) -> list[str]:
    """Problems with the rules' ids against the table: a retired id in use, an id outside
    its family's ranges, a family without ranges."""
    problems = []
    for rid, rule in sorted(rules.items()):
        if rid in table.retired:
            problems.append(f"{rule.source}: {rid} is retired ({table.retired[rid]}) and may not be reused; run scripts/new_rule.py for a fresh id")
            continue
        if rule.family not in table.ranges:
            problems.append(f"{rule.source}: family {rule.family!r} has no id range in rules/{RANGES_FILE}")
            continue
        owner = table.family_of(rid)
        if owner != rule.family:
            where = f"the range of {owner}" if owner else "no family's range"
            problems.append(f"{rule.source}: {rid} lies in {where}, not in {rule.family}'s ({RANGES_FILE})")
    return problems
