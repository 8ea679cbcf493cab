"""Binds each rule file to exactly one detector.

A detector is a function registered with `@detector("PTL201", nodes=(...))` in the module
`portlint.rules.<family>`, where <family> is the folder of its rule file under `rules/`.
Families are imported only when a scan needs them, which keeps start-up light."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from portlint.core.catalog import Rule, RuleError, load_rules


@dataclass(frozen=True)
class Detector:
    rule_id: str
    family: str
    func: Callable
    # Syntax node types (tree-sitter type names for CUDA, `ast` class names for Python) the
    # detector is called with; None means once per file with the root.
    nodes: tuple[str, ...] | None
    # Exact pre-filter: the detector can only fire when one of these byte strings occurs in
    # the file. None means always run.
    tokens: tuple[bytes, ...] | None
    # "walk": called during the parse walk. "post": called by the engine after suppressions
    # are applied (the tool's own rules about suppressions). "error": called when another
    # detector raises.
    phase: str = "walk"


_DETECTORS: dict[str, Detector] = {}
_LOADED: dict[str, list[Detector]] = {}


def detector(
    rule_id: str,
    *,
    nodes: tuple[str, ...] | None = None,
    tokens: tuple[str, ...] | None = None,
    phase: str = "walk",
):
    """Register the decorated function as the detector of `rule_id`."""

    def register(func: Callable) -> Callable:
        family = func.__module__.rsplit(".", 1)[-1]
        if rule_id in _DETECTORS:
            raise RuleError(f"{rule_id} has two detectors: {_DETECTORS[rule_id].func.__qualname__} and {func.__qualname__}")
        _DETECTORS[rule_id] = Detector(
            rule_id=rule_id,
            family=family,
            func=func,
            nodes=tuple(nodes) if nodes is not None else None,
            tokens=tuple(t.encode() for t in tokens) if tokens is not None else None,
            phase=phase,
        )
        return func

    return register


def detector_name(rule: Rule) -> str:
    """The function name a rule's detector must have: its rule name, `-` written `_`."""
    return rule.name.replace("-", "_")


def families() -> list[str]:
    return sorted({rule.family for rule in load_rules().values()})


def load_family(family: str) -> list[Detector]:
    """Import a family's detectors and check that they pair one-to-one with its rule files."""
    if family in _LOADED:
        return _LOADED[family]
    try:
        importlib.import_module(f"portlint.rules.{family}")
    except ModuleNotFoundError as exc:
        if exc.name == f"portlint.rules.{family}":
            raise RuleError(f"rules/{family}/ has no detector module portlint/rules/{family}.py") from None
        raise
    rules = {rid: r for rid, r in load_rules().items() if r.family == family}
    found = {rid: d for rid, d in _DETECTORS.items() if d.family == family}
    missing = sorted(set(rules) - set(found))
    orphans = sorted(set(found) - set(rules))
    if missing:
        raise RuleError(f"rules without a detector in portlint/rules/{family}.py: {', '.join(missing)}")
    if orphans:
        raise RuleError(f"detectors in portlint/rules/{family}.py without a rule file in rules/{family}/: {', '.join(orphans)}")
    misnamed = [f"{rid} ({d.func.__name__} for {rules[rid].name})" for rid, d in sorted(found.items()) if d.func.__name__ != detector_name(rules[rid])]
    if misnamed:
        raise RuleError(f"detectors in portlint/rules/{family}.py must be named after their rule (kebab-case name with '_'): {', '.join(misnamed)}")
    _LOADED[family] = [found[rid] for rid in sorted(found)]
    return _LOADED[family]


def detectors_for(rule_ids: set[str]) -> list[Detector]:
    rules = load_rules()
    out: list[Detector] = []
    for family in sorted({rules[rid].family for rid in rule_ids}):
        out.extend(d for d in load_family(family) if d.rule_id in rule_ids)
    return out

