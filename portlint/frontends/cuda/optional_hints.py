"""Optional hints: constructs whose absence on AMD is correct by itself (rules/optional-hints.toml).

PDL's `griddepcontrol`, `setmaxnreg`, an empty cp.async commit, an async-proxy fence, a
prefetch: dropping one changes no result. Where an AMD build skips such a line, nothing is
missing there; the engine suppresses the finding with the table's reason (`hint_for`), and
the arch-stub logic of PTL205 may ask the same table whether a gated body holds only hints."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from portlint.core.catalog import RuleError, rules_root

TABLE = "optional-hints.toml"


@dataclass(frozen=True)
class Hint:
    rules: tuple[str, ...]
    pattern: re.Pattern
    why: str


@lru_cache(maxsize=1)
def load_hints() -> tuple[Hint, ...]:
    path = rules_root() / TABLE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RuleError(f"{path}: {exc}") from exc
    out = []
    for number, row in enumerate(data.get("hint", []), start=1):
        if set(row) != {"rules", "pattern", "why"}:
            raise RuleError(f"{path}: hint {number} needs exactly rules, pattern and why, has {sorted(row)}")
        try:
            pattern = re.compile(row["pattern"])
        except re.error as exc:
            raise RuleError(f"{path}: hint {number}: bad pattern: {exc}") from exc
        out.append(Hint(tuple(row["rules"]), pattern, str(row["why"])))
    return tuple(out)


def hint_for(rule_id: str, text: str) -> Hint | None:
    """The optional hint a finding of `rule_id` over source `text` is, or None."""
    for hint in load_hints():
        if rule_id in hint.rules and hint.pattern.search(text):
            return hint
    return None



def any_hint(text: str) -> Hint | None:
    """The optional hint `text` holds, whichever rule reports it, or None."""
    return next((hint for hint in load_hints() if hint.pattern.search(text)), None)


AMD_ONLY_TABLE = "amd-only-code.toml"


@lru_cache(maxsize=1)
def amd_only_quiet() -> tuple[frozenset[str], str]:
    """(rule ids, why) of rules/amd-only-code.toml: findings quiet in code only AMD compiles."""
    path = rules_root() / AMD_ONLY_TABLE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RuleError(f"{path}: {exc}") from exc
    if set(data) != {"rules", "why"}:
        raise RuleError(f"{path}: needs exactly rules and why, has {sorted(data)}")
    return frozenset(data["rules"]), str(data["why"])
