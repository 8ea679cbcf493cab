"""Every fixture file against the expectations written in it, exhaustively: a finding the
fixture does not expect fails as surely as a missing one."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import FIXTURES, REPO, scan_paths
from fixture_expectations import fixture_files, read_expectations

from portlint.config import PRESETS, parse_targets

FILES = fixture_files(FIXTURES)


def _scan_fixture(path):
    exp = read_expectations(path)
    overrides = {}
    if "select" in exp.options:
        sel = []
        for s in exp.options["select"].split(","):
            sel.extend(PRESETS.get(s, (s,)))
        overrides["select"] = tuple(sel)
    if "targets" in exp.options:
        overrides["targets"] = parse_targets(exp.options["targets"], "fixture")
    if "declared" in exp.options:  # the targets are declared (as --target does): scope by target
        overrides["declared_targets"] = True
    return exp, scan_paths([path], **overrides)


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_fixture_findings_match_expectations(path):
    exp, result = _scan_fixture(path)
    assert not [n for n in result.notices if n.level == "error"], result.notices
    got = Counter((f.span.start_line, f.rule_id) for f in result.findings if not f.suppressed)
    got_suppressed = Counter((f.span.start_line, f.rule_id) for f in result.findings if f.suppressed)
    missing = exp.active - got
    unexpected = got - exp.active
    detail = "\n".join(
        f"  line {f.span.start_line}: {f.rule_id} {f.message}" for f in result.findings if not f.suppressed
    )
    assert not missing and not unexpected, (
        f"{path.relative_to(REPO)}\n missing: {sorted(missing.elements())}\n unexpected: {sorted(unexpected.elements())}\n reported:\n{detail}"
    )
    missing_suppressed = exp.suppressed - got_suppressed
    assert not missing_suppressed, f"expected suppressed findings not seen: {sorted(missing_suppressed.elements())}"
    assert not [f for f in result.findings if f.rule_id == "PTL003"], "a detector crashed"


def test_every_rule_has_positive_and_negative_fixtures():
    """Each rule is expected somewhere, and its family has a file where it must stay quiet."""
    from portlint.rules import load_rules

    expected_rules = Counter()
    families_with_negatives = set()
    for path in FILES:
        exp = read_expectations(path)
        for (_, rid), n in exp.active.items():
            expected_rules[rid] += n
        family = path.relative_to(FIXTURES).parts[0]
        if "negative" in path.name or "nearmiss" in path.name or "near_miss" in path.name:
            families_with_negatives.add(family)
    rules = load_rules()
    without_positive = [rid for rid, r in rules.items() if r.family != "tool" and rid not in expected_rules]
    assert not without_positive, f"rules with no positive fixture: {without_positive}"
    families = {r.family for r in rules.values() if r.family != "tool"}
    assert families <= families_with_negatives, f"families with no *negative* fixture: {sorted(families - families_with_negatives)}"


@pytest.mark.parametrize("path", [p for p in FILES if p.with_name(p.name.replace(p.suffix, ".fixed" + p.suffix)).exists()], ids=str)
def test_fixes_produce_the_fixed_file(path):
    from portlint.fixes import fixed_text

    exp, result = _scan_fixture(path)
    fixed_path = path.with_name(path.name.replace(path.suffix, ".fixed" + path.suffix))
    new, count = fixed_text(path.read_text(encoding="utf-8"), result.findings, include_unsafe=True)
    assert count > 0
    assert new == fixed_path.read_text(encoding="utf-8")
