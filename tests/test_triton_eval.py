"""Recall and false-alarm rate of the Triton rules (PTL7xx) and PTL310 on the labelled corpus
under tests/corpus/triton/ (see its README). Run with `-s` to see the numbers."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from conftest import scan_paths

CORPUS = Path(__file__).resolve().parent / "corpus" / "triton"
LABEL = re.compile(r"#\s*(?:real:\s*(?P<ids>PTL\d{3}(?:\s*,\s*PTL\d{3})*)|(?P<trap>trap)\b)")
FAMILY = ("PTL7", "PTL310")
MIN_RECALL = 0.85
MAX_FALSE_ALARMS = 0.15


def _labels():
    reals: Counter = Counter()  # (file, line, rule)
    traps: set = set()  # (file, line)
    for path in sorted(CORPUS.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            m = LABEL.search(line)
            if not m:
                continue
            if m.group("trap"):
                traps.add((path.name, number))
            else:
                for rid in m.group("ids").split(","):
                    reals[(path.name, number, rid.strip())] += 1
    return reals, traps


def evaluate():
    reals, traps = _labels()
    result = scan_paths([CORPUS], select=FAMILY)
    assert not [n for n in result.notices if n.level == "error"], result.notices
    got = Counter(
        (Path(f.path).name, f.span.start_line, f.rule_id)
        for f in result.findings
        if not f.suppressed and f.rule_id.startswith(FAMILY)
    )
    hits = sum(min(n, got[k]) for k, n in reals.items())
    recall = hits / sum(reals.values())
    labelled_real_lines = {(f, ln) for f, ln, _ in reals}
    fired_traps = {(f, ln) for f, ln, _ in got if (f, ln) in traps}
    unlabelled = [k for k in got if (k[0], k[1]) not in traps and (k[0], k[1]) not in labelled_real_lines]
    wrong_rule = [k for k in got if (k[0], k[1]) in labelled_real_lines and k not in reals]
    alarms = len(fired_traps) + len(unlabelled) + len(wrong_rule)
    false_alarm_rate = alarms / (len(traps) + len(unlabelled) + len(wrong_rule))
    missed = sorted(k for k, n in reals.items() if got[k] < n)
    return {
        "reals": sum(reals.values()),
        "traps": len(traps),
        "recall": recall,
        "false_alarm_rate": false_alarm_rate,
        "missed": missed,
        "fired_traps": sorted(fired_traps),
        "unlabelled": sorted(unlabelled),
        "wrong_rule": sorted(wrong_rule),
    }


def test_corpus_is_big_enough_to_mean_something():
    reals, traps = _labels()
    assert sum(reals.values()) >= 30 and len(traps) >= 30
    assert {rid for _, _, rid in reals} >= {f"PTL70{i}" for i in range(1, 10)} | {"PTL710", "PTL310"}


def test_recall_and_false_alarm_rate():
    r = evaluate()
    print(
        f"\ntriton corpus: {r['reals']} real, {r['traps']} traps; recall {r['recall']:.1%}, "
        f"false alarms {r['false_alarm_rate']:.1%}; missed {r['missed']}; fired traps {r['fired_traps']}; "
        f"unlabelled {r['unlabelled']}; wrong rule {r['wrong_rule']}"
    )
    assert r["recall"] >= MIN_RECALL, r
    assert r["false_alarm_rate"] <= MAX_FALSE_ALARMS, r
