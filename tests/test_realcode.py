"""Recall and trap rate on the labelled real-code sets (tests/realcode/*/)."""

from __future__ import annotations

import pytest

import realcode

SETS = sorted(p.name for p in realcode.SETS.iterdir() if (p / "set.toml").is_file()) if realcode.SETS.is_dir() else []


@pytest.mark.parametrize("name", SETS)
def test_labels_are_well_formed(name):
    labels = realcode.load_labels(name)
    settings = realcode.load_settings(name)
    assert len(labels) >= settings["min_labels"], f"{name}: {len(labels)} labels, the set promises {settings['min_labels']}"
    packages = {l.package for l in labels}
    assert len(packages) >= settings["min_packages"], f"{name}: labels from {len(packages)} packages"
    quiet = sum(l.expect == "quiet" for l in labels)
    assert 0.3 <= quiet / len(labels) <= 0.7, f"{name}: {quiet} of {len(labels)} labels are traps"


@pytest.mark.oracle  # fetches and scans the sets' sdists: minutes, not in the fast tier
@pytest.mark.parametrize("name", SETS)
def test_recall_and_trap_rate(name):
    settings = realcode.load_settings(name)
    out = realcode.evaluate(name)
    report = realcode.describe(name, out)
    print(report)
    assert out.recall >= settings["recall_min"], report
    assert out.trap_rate <= settings["trap_rate_max"], report
