"""Recall and false-alarm rate of the PTX / Hopper / async-copy families on a labelled corpus
written independently of the fixtures (tests/corpus/cuda_isa/, see its README).

A `// real: PTLnnn` line counts as found when a finding of that rule starts there (or of
PTL602, which reports the HIPIFY-table names these rules defer to it). A `// trap` line is a
false alarm when any unsuppressed PTL2xx/PTL3xx/PTL4xx finding starts there. Thresholds from
the issue: recall >= 85 %, false alarms <= 15 % of the traps.

Run `python tests/test_cuda_isa_eval.py` for the per-line detail."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import REPO, scan_paths  # noqa: E402

CORPUS = REPO / "tests" / "corpus" / "cuda_isa"
LABEL = re.compile(r"//\s*(?:real:\s*(?P<rule>PTL\d{3})|(?P<trap>trap)\b)")
FAMILY = re.compile(r"^PTL(2\d\d|30\d|4\d\d)$")  # PTL310 is the Python capability-gate rule
DEFERRED_TO = "PTL602"


def _files():
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".cu", ".cuh", ".h"))


def evaluate():
    rows = []  # (file, line, label, reported rules, verdict)
    totals = {"real": 0, "found": 0, "traps": 0, "false_alarms": 0, "findings": 0, "unlabelled": 0}
    for path in _files():
        labels = {}
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            m = LABEL.search(line)
            if m:
                labels[n] = m.group("rule") or "trap"
        result = scan_paths([path])
        by_line: dict[int, set[str]] = {}
        for f in result.findings:
            if f.suppressed or not (FAMILY.match(f.rule_id) or f.rule_id == DEFERRED_TO):
                continue
            by_line.setdefault(f.span.start_line, set()).add(f.rule_id)
            if FAMILY.match(f.rule_id):
                totals["findings"] += 1
                if f.span.start_line not in labels:
                    totals["unlabelled"] += 1
                    rows.append((path.name, f.span.start_line, "-", {f.rule_id}, "UNLABELLED"))
        for n, label in sorted(labels.items()):
            got = by_line.get(n, set())
            mine = {r for r in got if FAMILY.match(r)}
            if label == "trap":
                totals["traps"] += 1
                alarm = bool(mine)
                totals["false_alarms"] += alarm
                rows.append((path.name, n, label, mine, "FALSE ALARM" if alarm else "quiet"))
            else:
                totals["real"] += 1
                hit = label in got or DEFERRED_TO in got
                totals["found"] += hit
                rows.append((path.name, n, label, got, "found" if hit else "MISSED"))
    return totals, rows


def test_recall_and_false_alarm_rate_meet_the_issue_thresholds():
    totals, rows = evaluate()
    assert totals["real"] >= 80 and totals["traps"] >= 60, totals  # the corpus is not trivially small
    recall = totals["found"] / totals["real"]
    trap_rate = totals["false_alarms"] / totals["traps"]
    detail = "\n".join(f"  {f}:{n} {label} -> {sorted(got)} {verdict}" for f, n, label, got, verdict in rows if verdict not in ("found", "quiet"))
    assert recall >= 0.85, f"recall {recall:.1%} ({totals})\n{detail}"
    assert trap_rate <= 0.15, f"false alarms {trap_rate:.1%} of traps ({totals})\n{detail}"


if __name__ == "__main__":
    totals, rows = evaluate()
    for f, n, label, got, verdict in rows:
        if verdict not in ("found", "quiet") or "-v" in sys.argv:
            print(f"{f}:{n}: {label} -> {sorted(got)} {verdict}")
    precision = (totals["findings"] - totals["false_alarms"] - totals["unlabelled"]) / max(1, totals["findings"])
    print(
        f"real sites {totals['real']}, found {totals['found']} (recall {totals['found'] / max(1, totals['real']):.1%}); "
        f"traps {totals['traps']}, false alarms {totals['false_alarms']} ({totals['false_alarms'] / max(1, totals['traps']):.1%}); "
        f"family findings {totals['findings']}, unlabelled {totals['unlabelled']}, precision {precision:.1%}"
    )
