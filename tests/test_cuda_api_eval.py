"""Recall and false-alarm rate of the CUDA API, library and collectives rules on the
labelled corpus in tests/corpus/cuda_api/ (independently written host code; see its README).

- recall: of the lines labelled `real: PTLxxx`, the share where a default scan reports
  each named rule (>= 85 %);
- false alarms: of the lines labelled `trap` (portable look-alikes), the share where any
  PTL5xx/PTL6xx rule reports something (<= 15 %)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO, scan_paths

CORPUS = REPO / "tests" / "corpus" / "cuda_api"
REAL = re.compile(r"(?://|#)\s*real:\s*(PTL\d{3}(?:\s*,\s*PTL\d{3})*)")
TRAP = re.compile(r"(?://|#)\s*trap\b")
FAMILIES = ("PTL5", "PTL6")


def _labels():
    real, traps = {}, set()
    for path in sorted(CORPUS.iterdir()):
        if path.suffix not in (".cu", ".cpp", ".py", ".h", ".cuh"):
            continue
        rel = path.relative_to(CORPUS).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            m = REAL.search(line)
            if m:
                real[(rel, n)] = {i.strip() for i in m.group(1).split(",")}
            elif TRAP.search(line):
                traps.add((rel, n))
    return real, traps


def evaluate():
    real, traps = _labels()
    result = scan_paths([CORPUS], root=CORPUS)
    found: dict[tuple[str, int], set[str]] = {}
    for f in result.findings:
        if f.suppressed or not f.rule_id.startswith(FAMILIES):
            continue
        found.setdefault((f.path, f.span.start_line), set()).add(f.rule_id)
        for use in f.related:  # a use folded under its root (one finding per root cause) is reported there too
            found.setdefault((use.path, use.span.start_line), set()).add(f.rule_id)
    expected = sum(len(ids) for ids in real.values())
    hits = sum(len(ids & found.get(key, set())) for key, ids in real.items())
    false_alarms = sorted(key for key in traps if key in found)
    unlabelled = sorted(key for key in found if key not in real and key not in traps)
    misses = sorted((key, ids - found.get(key, set())) for key, ids in real.items() if ids - found.get(key, set()))
    return {
        "recall": hits / expected,
        "false_alarm_rate": len(false_alarms) / len(traps),
        "expected": expected,
        "traps": len(traps),
        "misses": misses,
        "false_alarms": false_alarms,
        "unlabelled": unlabelled,
    }


def test_corpus_is_labelled():
    real, traps = _labels()
    assert len(real) >= 40 and len(traps) >= 60


def test_recall_and_false_alarm_rate_meet_the_bar():
    m = evaluate()
    report = (
        f"recall {m['recall']:.1%} of {m['expected']} real problems; false alarms "
        f"{m['false_alarm_rate']:.1%} of {m['traps']} traps\n misses: {m['misses']}\n"
        f" false alarms: {m['false_alarms']}\n unlabelled findings: {m['unlabelled']}"
    )
    assert m["recall"] >= 0.85, report
    assert m["false_alarm_rate"] <= 0.15, report


if __name__ == "__main__":  # python tests/test_cuda_api_eval.py: print the numbers
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    res = evaluate()
    print(f"recall {res['recall']:.1%} ({res['expected']} real), false alarms {res['false_alarm_rate']:.1%} ({res['traps']} traps)")
    for key in ("misses", "false_alarms", "unlabelled"):
        print(key, res[key])
