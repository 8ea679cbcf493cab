"""Judged false findings stay gone (tests/realcode/<set>/judged.csv, for the python and cuda sets).

Each row of judged.csv is one finding of a whole-package scan (default settings, no --select;
no --target for the python set, `--target rocm` for the cuda set) read by hand and given a
verdict. A FALSE row is a finding judged not to be a porting problem; once judged, it must not
come back: every package with a FALSE row is scanned again through the real command line, and
the test fails, naming each one, when a library finding with the row's (package, file, rule)
starts on the row's line. The python packages are scanned whole, as they were judged; a cuda
package is scanned over the judged files only, from its own folder (its project root), since a
whole scan of cupy or flash-attn takes minutes.

FALSE rows the analysis does not fix yet are listed in judged_open.txt (`package/file:line RULE`,
one a line, with a `#` reason): those must still come back (a fixed one must leave the list),
every other FALSE row must not. The list only shrinks.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import realcode

# set -> (the scan mode the verdicts were made in, whether the package is scanned whole)
SETS = {"python": ("inferred", True), "cuda": ("rocm", False)}
COLUMNS = ["package", "file", "line", "rule", "verdict", "why", "sample"]
VERDICTS = ("TRUE", "FALSE", "DEBATABLE")


def _judged(set_name: str) -> Path:
    return realcode.set_dir(set_name) / "judged.csv"


def _open(set_name: str) -> Path:
    return realcode.set_dir(set_name) / "judged_open.txt"


def load_judged(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS, f"judged.csv header is {reader.fieldnames}"
        rows = []
        for number, row in enumerate(reader, start=2):
            row["row"] = number
            rows.append(row)
    return rows


def _false_packages() -> list[tuple[str, str]]:
    out = set()
    for set_name in SETS:
        if _judged(set_name).is_file():
            out |= {(set_name, r["package"]) for r in load_judged(_judged(set_name)) if r["verdict"] == "FALSE"}
    return sorted(out)


@pytest.mark.parametrize("set_name", sorted(SETS))
def test_judged_rows_are_well_formed(set_name):
    rows = load_judged(_judged(set_name))
    assert rows, "judged.csv has no rows"
    seen = set()
    for row in rows:
        where = f"judged.csv:{row['row']}"
        assert row["verdict"] in VERDICTS, f"{where}: verdict {row['verdict']!r}"
        assert row["line"].isdigit() and int(row["line"]) >= 1, f"{where}: line {row['line']!r}"
        assert row["rule"].startswith("PTL"), f"{where}: rule {row['rule']!r}"
        assert row["why"].strip(), f"{where}: a verdict says why"
        assert row["sample"].strip(), f"{where}: which sample the row was drawn in"
        key = (row["package"], row["file"], row["line"], row["rule"], row["sample"])
        assert key not in seen, f"{where}: the same finding judged twice in one sample"
        seen.add(key)


def _key(package: str, file: str, line, rule: str) -> str:
    return f"{package}/{file}:{line} {rule}"


def load_open(set_name: str) -> set[str]:
    if not _open(set_name).is_file():
        return set()
    keys = set()
    for raw in _open(set_name).read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            keys.add(line)
    return keys


@pytest.mark.parametrize("set_name", sorted(SETS))
def test_open_list_names_only_false_rows(set_name):
    false = {_key(r["package"], r["file"], r["line"], r["rule"]) for r in load_judged(_judged(set_name)) if r["verdict"] == "FALSE"}
    stray = sorted(load_open(set_name) - false)
    assert not stray, f"judged_open.txt names findings that are not FALSE rows of judged.csv: {stray}"


@pytest.mark.oracle  # scans whole sdists: minutes, not in the fast tier
@pytest.mark.parametrize(("set_name", "package"), _false_packages())
def test_false_findings_do_not_return(set_name, package):
    tree = realcode.fetch_trees(set_name) / package
    assert tree.is_dir(), f"no tree {package} in {set_name}/packages.toml's fetch"
    false_rows = [r for r in load_judged(_judged(set_name)) if r["package"] == package and r["verdict"] == "FALSE"]
    for row in false_rows:
        assert (tree / row["file"]).is_file(), f"judged.csv:{row['row']}: no file {package}/{row['file']}"
    # default settings, as the verdicts were made (realcode.scan adds no --select; no --target
    # in the inferred mode)
    mode, whole = SETS[set_name]
    paths = (".",) if whole else tuple(sorted({r["file"] for r in false_rows}))
    found: dict[tuple[str, str, int], list[dict]] = {}
    for f in realcode.scan(tree, mode, paths=paths):
        # a note of a test, example or script file (role other than library) is shown apart
        # as "not a blocker" (portlint.findings.roles): that is not the finding judged false
        if f.get("suppressed") or f.get("role", "library") != "library":
            continue
        # paths are relative to the package: its folder is the project (realcode.fetch_trees)
        found.setdefault((f["path"], f["rule"], f["start_line"]), []).append(f)
    still_open = load_open(set_name)
    back, fixed = [], []
    for row in false_rows:
        key = _key(package, row["file"], row["line"], row["rule"])
        returned = found.get((row["file"], row["rule"], int(row["line"])), [])
        if key in still_open:
            if not returned:
                fixed.append(f"  {key}: no longer reported -- remove it from judged_open.txt")
            continue
        for f in returned:
            back.append(f"  judged.csv:{row['row']} {package}/{row['file']}:{row['line']} {row['rule']} "
                        f"came back: {f['message']}\n    judged FALSE because: {row['why']}")
    problems = []
    if back:
        problems.append(f"{len(back)} of {len(false_rows)} findings judged FALSE in {package} came back:\n" + "\n".join(back))
    if fixed:
        problems.append("fixed, still listed as open:\n" + "\n".join(fixed))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
