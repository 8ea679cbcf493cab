"""Independent evaluation of the XLA-family rules on tests/corpus/xla/.

The corpus is written in the style of open-source JAX/Flax/Equinox/Haiku/Pallas code and
torch_xla, Neuron, Gaudi and plain GPU training scripts, separately from the fixtures.
Lines are labelled `# real: PTL8xx` (a hazard portlint should report there, with that id)
or `# trap` (a look-alike that is fine). Measured:

- recall = real labels reported with their id on their line / real labels   (>= 85 %)
- false-alarm rate = (trap lines with any PTL8xx finding + PTL8xx findings on unlabelled
  lines) / (trap lines + unlabelled findings)                                  (<= 15 %)

Run `pytest tests/test_xla_eval.py -s` to print the numbers and each miss."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO, scan_paths

CORPUS = REPO / "tests" / "corpus" / "xla"
REAL = re.compile(r"#\s*real:\s*(PTL8\d\d(?:\s*,\s*PTL8\d\d)*)")
TRAP = re.compile(r"#\s*trap\b")


def labels(path: Path):
    real, traps = {}, set()
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        m = REAL.search(line)
        if m:
            real[number] = {i.strip() for i in m.group(1).split(",")}
        elif TRAP.search(line):
            traps.add(number)
    return real, traps


def evaluate():
    files = sorted(CORPUS.glob("*.py"))
    result = scan_paths(files, root=REPO)
    found: dict[tuple[str, int], set[str]] = {}
    for f in result.findings:
        if f.rule_id.startswith("PTL8") and not f.suppressed:
            found.setdefault((Path(f.path).name, f.span.start_line), set()).add(f.rule_id)
    hits = misses = trap_hits = traps_total = 0
    missed, false_alarms = [], []
    for path in files:
        real, traps = labels(path)
        for line, ids in real.items():
            got = found.get((path.name, line), set())
            for rid in ids:
                if rid in got:
                    hits += 1
                else:
                    misses += 1
                    missed.append(f"{path.name}:{line} {rid}")
        for line in traps:
            traps_total += 1
            if found.get((path.name, line)):
                trap_hits += 1
                false_alarms.append(f"{path.name}:{line} trap flagged {sorted(found[(path.name, line)])}")
        for (name, line), ids in found.items():
            if name == path.name and line not in real and line not in traps:
                false_alarms.append(f"{name}:{line} unlabelled {sorted(ids)}")
    unlabelled = sum(1 for a in false_alarms if "unlabelled" in a)
    recall = hits / (hits + misses)
    fa_rate = (trap_hits + unlabelled) / (traps_total + unlabelled)
    return {
        "files": len(files), "real": hits + misses, "hits": hits, "traps": traps_total,
        "trap_hits": trap_hits, "unlabelled": unlabelled, "recall": recall,
        "false_alarm_rate": fa_rate, "missed": missed, "false_alarms": false_alarms,
    }


def test_corpus_is_substantial_and_covers_both_worlds():
    stats = evaluate()
    assert stats["files"] >= 8 and stats["real"] >= 40 and stats["traps"] >= 40, stats
    names = {p.name for p in CORPUS.glob("*.py")}
    assert any("jax" in n for n in names) and any("gaudi" in n for n in names) and any("gpu" in n for n in names)


def test_recall_and_false_alarm_rate():
    stats = evaluate()
    print(
        f"\nXLA corpus: {stats['files']} files, {stats['real']} real hazards, {stats['traps']} traps\n"
        f"recall {stats['hits']}/{stats['real']} = {stats['recall']:.1%}; "
        f"false alarms {stats['trap_hits']} traps + {stats['unlabelled']} unlabelled = {stats['false_alarm_rate']:.1%}"
    )
    for line in stats["missed"] + stats["false_alarms"]:
        print("  ", line)
    assert stats["recall"] >= 0.85, stats["missed"]
    assert stats["false_alarm_rate"] <= 0.15, stats["false_alarms"]
