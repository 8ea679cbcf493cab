"""Rule selection: which rules a scan runs (select / extend-select / ignore / targets) and, per language,
which detectors, with their byte pre-filters. The engine asks `plan(settings)` once per
process and settings; the SARIF reporter lists `enabled_rules(settings)`."""

from __future__ import annotations

from portlint.core.config import Settings
from portlint.discovery.prefilter import TokenMatcher
from portlint.core.registry import Detector, detectors_for
from portlint.core.catalog import load_rules

TOOL_UNUSED = "PTL001"
TOOL_UNKNOWN = "PTL002"
TOOL_INTERNAL = "PTL003"


def selection_note(settings: Settings) -> str | None:
    """A line saying that `select` left out every rule on by default (None when it did not):
    `--select hipify` runs PTL601 alone, which a user meaning "also" would not notice."""
    if settings.select is None:
        return None
    rules = load_rules()
    defaults = {rid for rid, r in rules.items() if r.default_enabled and r.family != "tool"}
    chosen = enabled_rules(settings)
    if chosen & defaults:
        return None
    shown = ", ".join(sorted(chosen - {TOOL_INTERNAL})[:6]) or "none"
    return (f"rules: only {shown} selected: --select / `select` replace the default rules; "
            "--extend-select / `extend-select` add to them")


def enabled_rules(settings: Settings) -> set[str]:
    rules = load_rules()
    if settings.select is None:
        chosen = {rid for rid, r in rules.items() if r.default_enabled}
    else:
        chosen = {rid for rid in rules if any(rid.startswith(s) for s in settings.select)}
    # extend-select adds to the selection (the defaults, or `select`), as ruff's does
    chosen |= {rid for rid in rules if any(rid.startswith(s) for s in settings.extend_select)}
    chosen = {rid for rid in chosen if not any(rid.startswith(s) for s in settings.ignore)}
    chosen.add(TOOL_INTERNAL)
    # a rule none of whose targets is selected cannot report anything
    return {rid for rid in chosen if set(rules[rid].severity) & set(settings.targets)}


class Plan:
    """Per-process: which detectors run for which language, and their dispatch tables."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.rules = load_rules()
        self.enabled = enabled_rules(settings)
        # the tool's own rules (family "tool") are called by the engine, not by the walk
        self.detectable = {rid for rid in self.enabled if self.rules[rid].family != "tool"}
        self._by_language: dict[str, list[Detector]] = {}
        self._tokens: dict[str, TokenMatcher] = {}

    def detectors(self, language: str) -> list[Detector]:
        """The detectors for one language, importing their families on first use (a scan of
        CUDA files never imports the Python families, and the other way round)."""
        if language not in self._by_language:
            ids = {rid for rid in self.detectable if self.rules[rid].language in (language, "any")}
            self._by_language[language] = detectors_for(ids)
            self._tokens[language] = TokenMatcher(tuple(sorted({t for d in self._by_language[language] for t in d.tokens or ()})))
        return self._by_language[language]

    def detectors_for_file(self, language: str, data: bytes, added_tags: frozenset[str] = frozenset()) -> list[Detector]:
        """The detectors whose pre-filter passes on `data`: the distinct tokens present are
        found once per file (detectors share many; portlint/discovery/prefilter.py), then every detector
        checks its own. Tags the project model gave the file (its scope) count as the words
        that stand for them."""
        detectors = self.detectors(language)
        present = self._tokens[language].present(data)
        if added_tags:
            from portlint.index.project import TAG_TOKENS

            present |= {w for tag in added_tags for w in TAG_TOKENS.get(tag, ())}
        return [d for d in detectors if d.tokens is None or not present.isdisjoint(d.tokens)]


_PLAN: Plan | None = None


def plan(settings: Settings) -> Plan:
    global _PLAN
    if _PLAN is None or _PLAN.settings is not settings:
        _PLAN = Plan(settings)
    return _PLAN
