"""The one place where the configuration changes a finding's severity: `severity` in
`[tool.portlint]` (per rule, or per rule and target). The engine applies it to each file's
findings after the targets the user did not ask about are dropped, so the exit code, every
output format and the cache see the configured levels."""

from __future__ import annotations

from portlint.core.config import Settings


def apply_severities(findings: list, settings: Settings) -> None:
    """Set each finding's per-target levels from `settings.severity` (a per-target entry wins
    over the rule's `*` entry), then its overall severity to the worst of them."""
    table = settings.severity
    if not table:
        return
    for f in findings:
        by = table.get(f.rule_id)
        if not by:
            continue
        changed = False
        for target in list(f.targets):
            level = by.get(target, by.get("*"))
            if level is not None and f.targets[target] is not level:
                f.targets[target] = level
                changed = True
        if changed:
            f.severity = max(f.targets.values(), key=lambda s: s.rank)


def configured_levels(rule, settings: Settings) -> dict:
    """The rule's level on each of its targets with the configured severities applied (a
    per-target entry over the rule's `*` entry over the rule's own level)."""
    by = settings.severity.get(rule.id, {})
    return {t: by.get(t, by.get("*", s)) for t, s in rule.severity.items()}


def configured_level(rule, settings: Settings):
    """The rule's default level with the configured severities applied (SARIF's
    defaultConfiguration), or the rule's own when none is configured."""
    if not settings.severity.get(rule.id):
        return rule.default_level
    return max(configured_levels(rule, settings).values(), key=lambda s: s.rank)
