"""Inline suppressions: `// portlint: ignore[PTL201] -- reason` and `# portlint: ...`.

- `ignore[IDS]` silences findings of those rules (ids or prefixes, comma-separated) on any
  line of the flagged construct; a comment alone on its line also covers the line after
  it (the comment on the line before, where formatters put it).
- `ignore-file[IDS]` silences them anywhere in the file.
A bare `noqa` or `NOLINT` is never honoured: those belong to other tools."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DIRECTIVE = re.compile(
    r"(?://|#|/\*)\s*portlint:\s*(?P<kind>ignore-file|ignore)\[(?P<ids>[^\]]*)\]"
    r"(?:\s*--\s*(?P<reason>.*?))?\s*(?:\*/)?\s*$"
)
_MALFORMED = re.compile(r"(?://|#|/\*)\s*portlint:\s*(?!ignore-file\[|ignore\[)(\S+)")


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

    def matches(self, rule_id: str) -> list[str]:
        return [ident for ident in self.ids if rule_id.startswith(ident)]


@dataclass
class SuppressionSet:
    items: list[Suppression]
    malformed: list[tuple[int, int, int, str]]  # (line, col, end_col, text)

    def apply(self, rule_id: str, start_line: int, end_line: int) -> Suppression | None:
        for sup in self.items:
            if (
                sup.kind == "ignore-file"
                or start_line <= sup.line <= end_line
                or (sup.standalone and sup.line == start_line - 1)
            ):
                idents = sup.matches(rule_id)
                if idents:
                    sup.used.update(idents)
                    return sup
        return None


def parse_suppressions(lines: list[str]) -> SuppressionSet:
    items: list[Suppression] = []
    malformed: list[tuple[int, int, int, str]] = []
    for number, line in enumerate(lines, start=1):
        if "portlint:" not in line:
            continue
        m = _DIRECTIVE.search(line)
        if m:
            ids = tuple(i.strip().upper() for i in m.group("ids").split(",") if i.strip())
            items.append(
                Suppression(
                    number, m.start() + 1, len(line.rstrip()) + 1, m.group("kind"), ids,
                    (m.group("reason") or "").strip(), standalone=not line[: m.start()].strip(),
                )
            )
            continue
        bad = _MALFORMED.search(line)
        if bad:
            malformed.append((number, bad.start() + 1, len(line.rstrip()) + 1, bad.group(1)))
    return SuppressionSet(items, malformed)
