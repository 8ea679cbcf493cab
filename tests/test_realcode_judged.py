"""Judged false findings stay gone (tests/realcode/python/judged.csv).

Each row of judged.csv is one finding of a whole-package scan (default settings, no --target,
no --select) read by hand and given a verdict. A FALSE row is a finding judged not to be a
porting problem; once judged, it must not come back: every package with a FALSE row is
scanned whole again through the real command line, and the test fails, naming each one,
when a finding with the row's (package, file, rule) starts on the row's line.

FALSE rows the analysis does not fix yet are listed in judged_open.txt (`package/file:line RULE`,
one a line, with a `#` reason): those must still come back (a fixed one must leave the list),
every other FALSE row must not. The list only shrinks.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import realcode

SET = "python"
JUDGED = realcode.set_dir(SET) / "judged.csv"
OPEN = realcode.set_dir(SET) / "judged_open.txt"
COLUMNS = ["package", "file", "line", "rule", "verdict", "why", "sample"]
VERDICTS = ("TRUE", "FALSE", "DEBATABLE")


def load_judged(path: Path = JUDGED) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS, f"judged.csv header is {reader.fieldnames}"
        rows = []
        for number, row in enumerate(reader, start=2):
            row["row"] = number
            rows.append(row)
    return rows


def _false_packages() -> list[str]:
    if not JUDGED.is_file():
        return []
    return sorted({r["package"] for r in load_judged() if r["verdict"] == "FALSE"})


def test_judged_rows_are_well_formed():
    rows = load_judged()
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


def load_open() -> set[str]:
    if not OPEN.is_file():
        return set()
    keys = set()
    for raw in OPEN.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            keys.add(line)
    return keys


def test_open_list_names_only_false_rows():
    false = {_key(r["package"], r["file"], r["line"], r["rule"]) for r in load_judged() if r["verdict"] == "FALSE"}
    stray = sorted(load_open() - false)
    assert not stray, f"judged_open.txt names findings that are not FALSE rows of judged.csv: {stray}"


@pytest.fixture(scope="module")
def trees() -> Path:
    return realcode.fetch_trees(SET)


@pytest.mark.oracle  # scans whole sdists: minutes, not in the fast tier
@pytest.mark.parametrize("package", _false_packages())
def test_false_findings_do_not_return(package, trees):
    tree = trees / package
    assert tree.is_dir(), f"no tree {package} in {SET}/packages.toml's fetch"
    false_rows = [r for r in load_judged() if r["package"] == package and r["verdict"] == "FALSE"]
    for row in false_rows:
        assert (tree / row["file"]).is_file(), f"judged.csv:{row['row']}: no file {package}/{row['file']}"
    # the whole package, default settings, as the verdicts were made (realcode.scan adds no
    # --target in the inferred mode and no --select)
    found: dict[tuple[str, str, int], list[dict]] = {}
    for f in realcode.scan(tree, "inferred"):
        # a note of a test, example or script file (role other than library) is shown apart
        # as "not a blocker" (portlint.findings.roles): that is not the finding judged false
        if f.get("suppressed") or f.get("role", "library") != "library":
            continue
        # paths are relative to the package: its folder is the project (realcode.fetch_trees)
        found.setdefault((f["path"], f["rule"], f["start_line"]), []).append(f)
    still_open = load_open()
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
