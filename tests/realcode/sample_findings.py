"""Draw a uniform random sample of one rule group's findings from whole-package scans.

Each input is the JSON report of one package scanned whole with default settings
(`python -m portlint scan . --format json --no-cache --exit-zero -o DIR/<pkg>.json`, run
from the package's folder). The findings of the Python families (rule ids PTL8*, PTL9*,
PTL31*, PTL7*, PTL501, PTL504), suppressed ones left out, are pooled over every package
(the notes of test, benchmark, example, script and conversion files -- `role` other than
library, shown apart as "not blockers" -- are counted but drawn only with --include-notes),
sorted into a fixed order, and N of them are drawn with a seeded random.sample, so every
such finding has the same chance whatever package it is in and the same seed gives the
same draw.

`--families cuda` pools the CUDA/C++/build families instead (rule ids PTL0*, PTL1*, PTL2*,
PTL30*, PTL4*, PTL502, PTL503, PTL505, PTL6*); the default, `--families python`, is the group
above. Either way a report's finding is one root cause: the uses a rule folds under it
(`related` in the JSON) are not findings of their own, so a folded group is drawn once, as
its root.

    python tests/realcode/sample_findings.py /work/coord/judge/base -n 60 --seed 2412
    python tests/realcode/sample_findings.py DIR --csv   # package,file,line,rule,message rows
    python tests/realcode/sample_findings.py /work/coord/judgecuda/base --families cuda -n 50 --seed 2525
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path

FAMILIES = ("PTL8", "PTL9", "PTL7")
EXACT = ("PTL310", "PTL501", "PTL504")
# the CUDA/C++/build families: suppression bookkeeping, CMake/setup/Docker, warp width, PTX and
# intrinsics, Hopper/Blackwell features (PTL30x), the C++ capability gate PTL311 (PTL310 is the Python one), async
# copies and MMA, RCCL drift and environment, CUDA libraries and APIs
CUDA_FAMILIES = ("PTL0", "PTL1", "PTL2", "PTL30", "PTL4", "PTL6")
CUDA_EXACT = ("PTL311", "PTL502", "PTL503", "PTL505")
# --families NAME: (rule-id prefixes, exact ids, how the summary line names the group)
GROUPS = {
    "python": (FAMILIES, EXACT, "Python-family"),
    "cuda": (CUDA_FAMILIES, CUDA_EXACT, "CUDA-family"),
}


def python_family(rule: str) -> bool:
    return rule.startswith(FAMILIES) or rule in EXACT


def in_group(rule: str, families: str = "python") -> bool:
    prefixes, exact, _ = GROUPS[families]
    return rule.startswith(prefixes) or rule in exact


def load(reports: Path, include_notes: bool = False, families: str = "python") -> list[dict]:
    """Every unsuppressed finding of the group `families` in the reports in `reports`, in a
    fixed order (library code only unless `include_notes`). A folded finding is one row, its
    root: the uses in its `related` list are not rows."""
    pool = []
    for path in sorted(reports.glob("*.json")):
        package = path.stem
        with open(path, encoding="utf-8") as fh:
            findings = json.load(fh)["findings"]
        for f in findings:
            if f.get("suppressed") or not in_group(f["rule"], families):
                continue
            if not include_notes and f.get("role", "library") != "library":
                continue
            # a report scanned with the package's folder as the project has paths inside it; one
            # scanned from a folder of several packages has paths that start with the package
            file = f["path"].removeprefix(package + "/")
            pool.append({"package": package, "file": file, "line": f["start_line"], "rule": f["rule"],
                         "message": f["message"], "role": f.get("role", "library"),
                         "related": len(f.get("related") or ())})
    pool.sort(key=lambda r: (r["package"], r["file"], r["line"], r["rule"], r["message"]))
    return pool


def draw(pool: list[dict], n: int, seed: int) -> list[dict]:
    if n > len(pool):
        raise SystemExit(f"sample_findings: {n} asked, only {len(pool)} findings")
    return random.Random(seed).sample(pool, n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", type=Path, help="folder of <package>.json reports")
    parser.add_argument("-n", type=int, default=60, help="how many findings to draw")
    parser.add_argument("--seed", type=int, default=2412)
    parser.add_argument("--csv", action="store_true", help="print CSV rows instead of text")
    parser.add_argument("--include-notes", action="store_true", help="also draw the notes of non-library files")
    parser.add_argument("--families", choices=sorted(GROUPS), default="python",
                        help="the rule group to pool (default python; cuda: PTL0-2, PTL30, PTL4, PTL502/503/505, PTL6)")
    args = parser.parse_args(argv)
    everything = load(args.reports, include_notes=True, families=args.families)
    pool = everything if args.include_notes else [r for r in everything if r["role"] == "library"]
    notes = len(everything) - len(pool)
    sample = draw(pool, args.n, args.seed)
    by_package: dict[str, int] = {}
    for r in pool:
        by_package[r["package"]] = by_package.get(r["package"], 0) + 1
    print(f"# {len(pool)} {GROUPS[args.families][2]} findings: "
          + ", ".join(f"{p} {c}" for p, c in sorted(by_package.items()))
          + (f"; {notes} notes in non-library files not drawn" if notes else ""), file=sys.stderr)
    if args.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(["n", "package", "file", "line", "rule", "message"])
        for i, r in enumerate(sample, 1):
            writer.writerow([i, r["package"], r["file"], r["line"], r["rule"], r["message"]])
    else:
        for i, r in enumerate(sample, 1):
            # the folded uses are named outside the default group, whose text stays as it was
            folded = f" (+{r['related']} folded uses)" if r["related"] and args.families != "python" else ""
            print(f"{i:>3} {r['package']} {r['file']}:{r['line']} {r['rule']}{folded}\n    {r['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
