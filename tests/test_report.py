"""`portlint report`: the migration report of the bundled fixtures, in its three formats,
checked against `portlint scan --format json` of the same tree and against the rule files."""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO, run_portlint
from htmltree import parse_html

from portlint.output.report.summary import EFFORT_POINTS
from portlint.core.catalog import load_rules

TARGETS = ("rocm", "tpu", "trainium", "gaudi")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """Each report format of fixtures/, and the scan JSON of the same tree (suppressed included)."""
    out = {}
    for fmt in ("html", "markdown", "json"):
        proc = run_portlint("report", "fixtures/", "--format", fmt, "--no-cache", "-j", "1")
        assert proc.returncode == 0, proc.stderr
        out[fmt] = proc.stdout
    scan = run_portlint("scan", "fixtures/", "--format", "json", "--no-cache", "--exit-zero", "--sarif-include-suppressed")
    assert scan.returncode == 0, scan.stderr
    out["scan"] = json.loads(scan.stdout)
    out["report"] = json.loads(out["json"])
    return out


def _expected_effort(finding: dict) -> str:
    """A finding's effort, worked out here from the rule file: safe fix -> mechanical."""
    if finding["fix"] and finding["fix"]["applicability"] == "safe":
        return "mechanical"
    return load_rules()[finding["rule"]].effort


def test_per_target_numbers_match_the_scan(outputs):
    scan, report = outputs["scan"], outputs["report"]
    every = [f for f in scan["findings"] if not f["suppressed"]]
    # the notes of test, example, benchmark, conversion and script files are counted apart
    active = [f for f in every if f["role"] == "library"]
    apart = sum(c["findings"] for c in report["outside_library"].values())
    assert apart == len(every) - len(active) == scan["summary"]["outside_library"]
    assert report["files_scanned"] == scan["summary"]["files_scanned"] > 100
    assert report["total"]["findings"] == len(active) == scan["summary"]["findings"] - apart
    assert report["suppressed"] == scan["summary"]["suppressed"]
    for t in TARGETS:
        row = report["by_target"][t]
        on_t = [f for f in active if t in f["targets"]]
        assert row["blockers"] + row["slowdowns"] + row["notes"] + row["diagnostics"] == sum(1 for f in every if t in f["targets"]) - sum(1 for f in every if t in f["targets"] and f["role"] != "library")
        assert row["blockers"] == sum(1 for f in on_t if f["targets"][t] == "error")
        assert row["slowdowns"] == sum(1 for f in on_t if f["targets"][t] == "warning")
        points = sum(EFFORT_POINTS[_expected_effort(f)] for f in on_t)
        assert row["points"] == points, t
        assert row["verdict"] == ("blocked" if row["blockers"] else "runs, slowly" if row["slowdowns"] else "ready")
    # already ported: the findings the engine suppressed because an AMD build skips them beside a HIP branch
    guarded = [f for f in scan["findings"] if f["suppressed"] and f["suppressed"]["reason"].startswith("not compiled for AMD")]
    assert report["by_target"]["rocm"]["already_ported"] == len(guarded) > 0
    assert report["by_target"]["rocm"]["hipify_renames"] == scan["summary"]["counters"]["mechanical-ports"] > 0
    assert report["total"]["points"] == sum(EFFORT_POINTS[_expected_effort(f)] for f in active)


def test_breakdowns_add_up_and_rank_by_effort(outputs):
    report = outputs["report"]
    total = report["total"]
    for key in ("by_family", "by_directory", "by_file"):
        rows = report[key]
        assert sum(r["findings"] for r in rows) == total["findings"], key
        assert sum(r["points"] for r in rows) == total["points"], key
        assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True), key
    by_file = {r["path"]: r for r in report["by_file"]}
    for scope, top in report["top_files"].items():
        assert len(top) == min(20, sum(1 for r in by_file.values() if scope == "all" or r["by_target"][scope]["findings"]))
        pts = [by_file[p]["points"] if scope == "all" else by_file[p]["by_target"][scope]["points"] for p in top]
        assert pts == sorted(pts, reverse=True), scope
    files_with_findings = {f["path"] for f in report["findings"]}
    assert set(by_file) == files_with_findings
    for f in report["findings"]:
        assert f["points"] == EFFORT_POINTS[f["effort"]]


def test_the_rule_table_lists_each_rule_that_fired_with_its_effort(outputs):
    report = outputs["report"]
    fired = {f["rule"] for f in report["findings"]}
    assert [r["id"] for r in report["rules"]] == sorted(fired)
    rules = load_rules()
    for row in report["rules"]:
        rule = rules[row["id"]]
        assert (row["effort"], row["effort_why"]) == (rule.effort, rule.effort_why)
        assert (REPO / row["source"]).is_file()


def test_the_html_shows_the_json_numbers(outputs):
    page = parse_html(outputs["html"])
    report = outputs["report"]
    cards = page.find_all("article", cls="card")
    assert [c.attrs["data-target"] for c in cards] == list(TARGETS)
    for card in cards:
        row = report["by_target"][card.attrs["data-target"]]
        shown = {div.attrs["class"][2:]: int(div.find_all("b")[0].text()) for div in card.find_all("div") if div.attrs.get("class", "").startswith("k-")}
        assert shown == {k: row[k] for k in ("blockers", "slowdowns", "notes")}
        effort = card.find_all("div", cls="effort-line")[0].text()
        assert effort.startswith(f"{row['points']} effort points")
        assert card.attrs["data-verdict"] == row["verdict"]
    # the chart that compares targets labels each bar with the JSON's points
    (compare,) = [svg for svg in page.find_all("svg") if svg.attrs.get("aria-label") == "effort points by target and level"]
    assert [t.text() for t in compare.find_all("text", cls="val")] == [
        f"{r['points']} pts · {r['redesign']} redesign" for r in report["by_target"].values()
    ]
    rows = page.find_all("tr", cls="finding")
    assert len(rows) == report["total"]["findings"]
    assert [(r.attrs["data-rule"], int(r.attrs["data-line"]), r.attrs["data-effort"]) for r in rows] == [
        (f["rule"], f["line"], f["effort"]) for f in sorted(report["findings"], key=lambda f: (f["path"].rpartition("/")[0], f["path"], f["line"], f["column"], f["rule"], f["message"]))
    ]
    # the top-20 table of each tab lists the JSON's top files, in order
    for scope, top in report["top_files"].items():
        shown = [tr.attrs["data-file"] for tr in page.find_all("tr", attr="data-scope") if tr.attrs["data-scope"] == scope]
        assert shown == top, scope


def test_the_page_is_self_contained(outputs):
    html = outputs["html"]
    assert "<script" not in html.lower()
    assert "<link" not in html.lower() and "@import" not in html and "url(" not in html
    assert not re.search(r"\ssrc=", html)
    # the only absolute URL is the SVG namespace name, which nothing fetches
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in html  # and the browser is told to load nothing


def test_markdown_is_tables_without_html(outputs):
    md = outputs["markdown"]
    outside_code = re.sub(r"`[^`]*`", "", md)
    assert not re.search(r"(?<!\\)<[A-Za-z/!]", outside_code), "markdown output must not contain HTML"
    report = outputs["report"]
    lines = md.splitlines()
    for t in TARGETS:
        row = next(line for line in lines if line.startswith(f"| **{t}**"))
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        r = report["by_target"][t]
        assert cells[2:6] == [str(r["blockers"]), str(r["slowdowns"]), str(r["notes"]), str(r["points"])]
    # every table row has as many cells as its header
    table: list[str] = []
    for line in lines + [""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            widths = {len(re.split(r"(?<!\\)\|", row)) for row in table}
            assert len(widths) == 1, table[0]
            assert re.fullmatch(r"\|( ---:? \|)+", table[1])
            table = []


@pytest.mark.parametrize("fmt", ["html", "markdown", "json"])
def test_the_same_input_gives_the_same_bytes(outputs, fmt, tmp_path):
    """Twice more: once filling a fresh cache with two workers, once reading it back."""
    cache = tmp_path / "cache"
    for _ in range(2):
        out = tmp_path / f"r.{fmt}"
        proc = run_portlint("report", "fixtures/", "--format", fmt, "-o", str(out), "--cache-dir", str(cache), "-j", "2")
        assert proc.returncode == 0, proc.stderr
        assert out.read_text(encoding="utf-8") == outputs[fmt]


def test_targets_and_selection_are_those_of_scan(tmp_path):
    proc = run_portlint("report", "fixtures/cuda_warp", "--format", "json", "--no-cache", "--target", "rocm", "--select", "PTL10")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert list(report["by_target"]) == ["rocm"]
    assert {f["rule"][:5] for f in report["findings"]} == {"PTL10"}
    assert run_portlint("report", "fixtures/", "--select", "NOPE").returncode == 2
    assert run_portlint("report", str(tmp_path / "missing")).returncode == 2


def test_an_empty_tree_gives_a_ready_report(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    proc = run_portlint("report", str(tmp_path), "--format", "json", "--no-cache", "--isolated")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["total"]["findings"] == 0
    assert {t: r["verdict"] for t, r in report["by_target"].items()} == dict.fromkeys(TARGETS, "ready")
    html = run_portlint("report", str(tmp_path), "--no-cache", "--isolated")
    assert html.returncode == 0 and "No findings" in html.stdout


def test_hipify_renames_are_mechanical_findings_when_selected():
    proc = run_portlint("report", "fixtures/cuda_api", "--format", "json", "--no-cache", "--select", "hipify,PTL602")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    renames = [f for f in report["findings"] if f["rule"] == "PTL601"]
    assert renames and {f["effort"] for f in renames} == {"mechanical"}
    assert report["by_target"]["rocm"]["mechanical"] >= len(renames)
    # the counter counts the same uses the listed findings show
    assert report["by_target"]["rocm"]["hipify_renames"] == len(renames)


def test_the_json_form_matches_its_schema(outputs):
    import jsonschema

    schema = json.loads((REPO / "docs" / "portlint-migration-report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.validate(outputs["report"], schema)
    broken = json.loads(outputs["json"])
    broken["findings"][0]["effort"] = "easy"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
