"""Recall and false-alarm rate of the wave64 family (PTL1xx) on tests/corpus/cuda_warp/.

The corpus is CUDA written apart from the fixtures, in the styles of real projects (see its
README); `// real: PTL1xx` marks a site that does not port to 64-lane wavefronts, `// trap`
a portable look-alike. The issue's bar: at least 85 % of the real sites found, at most 15 % of
the traps reported.

- recall: a real line counts as found when a default scan reports a PTL1xx finding on it
  (`exact_recall`, also printed, requires the labelled rule id itself);
- false alarms: trap lines with any active PTL1xx finding;
- stray findings (on lines with neither label) are listed so they can be reviewed.

Run `python -m pytest tests/test_cuda_warp_eval.py -q -s` to see the numbers."""

from __future__ import annotations

import re
from collections import defaultdict

from conftest import REPO, scan_paths

CORPUS = REPO / "tests" / "corpus" / "cuda_warp"
REAL = re.compile(r"//\s*real:\s*(PTL1\d\d(?:\s*,\s*PTL1\d\d)*)")
TRAP = re.compile(r"//\s*trap\b")


def _labels():
    real: dict[tuple[str, int], set[str]] = {}
    traps: set[tuple[str, int]] = set()
    for path in sorted(CORPUS.glob("*.cu")):
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            m = REAL.search(line)
            if m:
                real[(path.name, n)] = {i.strip() for i in m.group(1).split(",")}
            elif TRAP.search(line):
                traps.add((path.name, n))
    return real, traps


def measure():
    real, traps = _labels()
    result = scan_paths([CORPUS], root=CORPUS)
    got: dict[tuple[str, int], set[str]] = defaultdict(set)
    for f in result.findings:
        if f.rule_id.startswith("PTL1") and not f.suppressed:
            got[(f.path.split("/")[-1], f.span.start_line)].add(f.rule_id)
    found = [k for k in real if got.get(k)]
    exact = sum(len(ids & got.get(k, set())) for k, ids in real.items())
    total_ids = sum(len(ids) for ids in real.values())
    alarms = [k for k in traps if got.get(k)]
    stray = sorted((k, sorted(v)) for k, v in got.items() if k not in real and k not in traps)
    missed = sorted((k, sorted(real[k])) for k in real if not got.get(k))
    return {
        "real": len(real), "found": len(found), "recall": len(found) / len(real),
        "exact_recall": exact / total_ids, "traps": len(traps), "alarms": sorted(alarms),
        "false_alarm_rate": len(alarms) / len(traps), "stray": stray, "missed": missed,
    }


def test_corpus_is_labelled_on_both_sides():
    real, traps = _labels()
    assert len(real) >= 25 and len(traps) >= 25, (len(real), len(traps))


def test_wave64_recall_and_false_alarms_meet_the_bar():
    m = measure()
    print(
        f"\ncuda_warp corpus: recall {m['found']}/{m['real']} = {m['recall']:.0%} "
        f"(exact rule id {m['exact_recall']:.0%}); false alarms {len(m['alarms'])}/{m['traps']} = "
        f"{m['false_alarm_rate']:.0%}\n missed: {m['missed']}\n alarms: {m['alarms']}\n stray: {m['stray']}"
    )
    assert m["recall"] >= 0.85, m["missed"]
    assert m["false_alarm_rate"] <= 0.15, m["alarms"]
