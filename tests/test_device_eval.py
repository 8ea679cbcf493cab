"""Recall and false-alarm rate of the device/backend families on a labelled corpus.

tests/corpus/device/ holds training code written apart from the fixtures, in other styles
(see its README). `# real: IDS` marks a hazard that must be reported on that line, `# trap`
a look-alike that must not be. The issue's bar: recall >= 85 %, false alarms <= 15 %."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import scan_paths

CORPUS = Path(__file__).resolve().parent / "corpus" / "device"
FAMILIES = ("PTL501", "PTL504", "PTL90")
REAL = re.compile(r"#\s*real:\s*(PTL\d{3}(?:\s*,\s*PTL\d{3})*)")
TRAP = re.compile(r"#\s*trap\b")


def _labels():
    reals, traps = set(), set()
    for path in sorted(CORPUS.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            m = REAL.search(line)
            if m:
                reals.update((path.name, number, rid.strip()) for rid in m.group(1).split(","))
            elif TRAP.search(line):
                traps.add((path.name, number))
    return reals, traps


def evaluate():
    reals, traps = _labels()
    result = scan_paths([CORPUS], select=FAMILIES)
    found = {(Path(f.path).name, f.span.start_line, f.rule_id) for f in result.findings if not f.suppressed}
    hit_lines = {(name, line) for name, line, _ in found}
    real_lines = {(name, line) for name, line, _ in reals}
    missed = sorted(reals - found)
    alarmed = sorted(traps & hit_lines)
    stray = sorted(f for f in found if (f[0], f[1]) not in real_lines and (f[0], f[1]) not in traps)
    wrong_rule = sorted(f for f in found if (f[0], f[1]) in real_lines and f not in reals)
    recall = (len(reals) - len(missed)) / len(reals)
    false_alarms = len(alarmed) + len(stray) + len(wrong_rule)
    false_alarm_rate = false_alarms / (len(traps) + len(stray) + len(wrong_rule))
    return {
        "reals": len(reals), "traps": len(traps), "recall": recall, "false_alarm_rate": false_alarm_rate,
        "missed": missed, "alarmed": alarmed, "stray": stray, "wrong_rule": wrong_rule,
        "files": len(list(CORPUS.glob("*.py"))),
    }


def test_corpus_is_big_enough_to_mean_something():
    reals, traps = _labels()
    assert len(reals) >= 30 and len(traps) >= 30, (len(reals), len(traps))
    rules = {rid for _, _, rid in reals}
    assert {"PTL501", "PTL504", "PTL901", "PTL902", "PTL903", "PTL904", "PTL905", "PTL906"} <= rules, rules


def test_recall_and_false_alarm_rate_meet_the_bar():
    r = evaluate()
    print(f"\ndevice corpus: {r['files']} files, {r['reals']} real hazards, {r['traps']} traps; "
          f"recall {r['recall']:.1%}, false-alarm rate {r['false_alarm_rate']:.1%}")
    detail = f"missed {r['missed']}\nalarmed traps {r['alarmed']}\nunlabelled findings {r['stray']}\nwrong rule {r['wrong_rule']}"
    assert r["recall"] >= 0.85, detail
    assert r["false_alarm_rate"] <= 0.15, detail
