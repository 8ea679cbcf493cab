"""One finding per root cause (portlint/findings/roots.py): the uses of one `#include` or
mask `#define` folded into one finding, in every output, the baseline, --fix and the cache."""

from __future__ import annotations

import json

import jsonschema
from conftest import FIXTURES, REPO, run_portlint, scan_paths
from realcode import reported_sites, score, Label
from sarif_checks import validate

from portlint.core.catalog import load_rules
from portlint.core.model import FileResult
from portlint.findings.roots import folding_rules

ROOTS = FIXTURES / "cuda_warp" / "mask_define_roots.cu"

_KERNEL = """#define FULL_MASK 0xffffffff
{before}
__device__ float warp_sum(float v) {{
  v += __shfl_xor_sync(FULL_MASK, v, 16);
  v += __shfl_xor_sync(FULL_MASK, v, 8);
  return v;
}}
{after}
"""
_MORE = """__device__ float more_{n}(float v) {{
  v += __shfl_down_sync(FULL_MASK, v, 1);
  return __shfl_sync(FULL_MASK, v, 0);
}}
"""


def _json(*args, cwd=None) -> dict:
    proc = run_portlint("scan", *args, "--no-cache", "--format", "json", cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _schema() -> dict:
    return json.loads((REPO / "docs" / "portlint-report.schema.json").read_text())


def test_folding_is_rule_data():
    rules = load_rules()
    assert folding_rules() == {rid for rid, r in rules.items() if r.fold == "root"}
    assert {"PTL104", "PTL603", "PTL605"} <= folding_rules()
    assert "PTL201" not in folding_rules()


def test_sarif_has_one_result_with_related_locations():
    proc = run_portlint("scan", str(ROOTS), "--no-cache", "--format", "sarif", "--select", "PTL104")
    log = json.loads(proc.stdout)
    assert validate(log) == []
    results = log["runs"][0]["results"]
    assert len(results) == 1
    res = results[0]
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 4  # the #define
    related = res["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [7, 8, 9, 10, 11, 16, 17]
    assert [r["id"] for r in related] == list(range(1, 8))
    assert all("FULL_MASK" in r["message"]["text"] for r in related)
    assert "and 7 more uses" in res["message"]["text"]


def test_json_related_list_matches_schema_and_counts_root_once():
    doc = _json(str(ROOTS), "--select", "PTL104")
    jsonschema.Draft7Validator(_schema()).validate(doc)
    assert doc["summary"]["findings"] == 1
    (f,) = doc["findings"]
    assert f["start_line"] == 4 and len(f["related"]) == 7
    assert {r["start_line"] for r in f["related"]} == {7, 8, 9, 10, 11, 16, 17}
    assert all(r["fix"] is None and r["message"] for r in f["related"])


def test_text_and_concise_say_how_many_more_uses():
    text = run_portlint("scan", str(ROOTS), "--no-cache", "--select", "PTL104").stdout
    assert "and 7 more uses: 7:24, 8:24, 9:24, 10:24, 11:24, 16:66, 17:22" in text
    assert "Found 1 problem" in text
    concise = run_portlint("scan", str(ROOTS), "--no-cache", "--select", "PTL104", "--format", "concise").stdout
    lines = [ln for ln in concise.splitlines() if "PTL104" in ln]
    assert len(lines) == 1 and lines[0].endswith("(and 7 more uses)")


def test_near_miss_independent_sites_stay_apart():
    doc = _json(str(FIXTURES / "cuda_warp" / "mask_define_roots_negative.cu"), "--select", "PTL104")
    got = sorted((f["start_line"], len(f["related"])) for f in doc["findings"])
    assert got == [(6, 0), (7, 0), (11, 1), (12, 1)]


def test_root_fingerprint_stable_when_uses_are_added(tmp_path):
    (tmp_path / "k.cu").write_text(_KERNEL.format(before="", after=""))
    first = _json("k.cu", "--select", "PTL104", cwd=tmp_path)["findings"]
    (tmp_path / "k.cu").write_text(_KERNEL.format(before=_MORE.format(n=1), after=_MORE.format(n=2) + _MORE.format(n=3)))
    second = _json("k.cu", "--select", "PTL104", cwd=tmp_path)["findings"]
    assert len(first) == len(second) == 1
    assert len(first[0]["related"]) == 2 and len(second[0]["related"]) == 8
    assert first[0]["fingerprints"]["portlint/v1"] == second[0]["fingerprints"]["portlint/v1"]
    # a baseline written before the new uses matches the root, moved or not, and no more:
    # the grown group is new with the four uses the baseline did not have (round 4's D)
    (tmp_path / "k.cu").write_text(_KERNEL.format(before="", after=""))
    base = run_portlint("scan", "k.cu", "--no-cache", "--format", "json", "--select", "PTL104", cwd=tmp_path).stdout
    (tmp_path / "base.json").write_text(base)
    (tmp_path / "k.cu").write_text(_KERNEL.format(before="\n\n", after=""))
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "json", "--select", "PTL104", "--baseline", "base.json", cwd=tmp_path)
    assert json.loads(proc.stdout)["summary"]["findings"] == 0, proc.stdout
    (tmp_path / "k.cu").write_text(_KERNEL.format(before=_MORE.format(n=1), after=_MORE.format(n=2)))
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "json", "--select", "PTL104", "--baseline", "base.json", cwd=tmp_path)
    [grown] = json.loads(proc.stdout)["findings"]
    assert len(grown["related"]) == 4 and grown["fingerprints"]["portlint/v1"] == first[0]["fingerprints"]["portlint/v1"]


def test_rootless_fingerprint_stable_when_a_use_comes_first(tmp_path):
    """cuDNN reached through a header: the group's finding is the first use, keyed by the root."""
    (tmp_path / "dnn.h").write_text("typedef struct cudnnContext* cudnnHandle_t;\nint cudnnCreate(cudnnHandle_t*);\n")
    body = '#include "dnn.h"\n{extra}void f(cudnnHandle_t* h) {{ cudnnCreate(h); }}\n'
    (tmp_path / "a.cu").write_text(body.format(extra=""))
    first = _json("a.cu", "--select", "PTL603", cwd=tmp_path)["findings"]
    (tmp_path / "a.cu").write_text(body.format(extra="void g(cudnnHandle_t h);\n"))
    second = _json("a.cu", "--select", "PTL603", cwd=tmp_path)["findings"]
    assert len(first) == len(second) == 1
    # the first use moved from `f`'s parameter to the new declaration of `g`, on line 2 both times
    assert first[0]["message"] == second[0]["message"] and first[0]["start_line"] == second[0]["start_line"] == 2
    assert len(first[0]["related"]) == 1 and len(second[0]["related"]) == 2
    assert first[0]["fingerprints"]["portlint/v1"] == second[0]["fingerprints"]["portlint/v1"]


def test_comment_on_root_suppresses_group_and_on_use_only_that_use():
    result = scan_paths([ROOTS], select=("PTL104",))
    active = [f for f in result.findings if not f.suppressed]
    suppressed = [f for f in result.findings if f.suppressed]
    assert len(active) == 1 and len(active[0].related) == 7
    assert [(f.span.start_line, len(f.related)) for f in suppressed] == [(22, 0)]
    neg = scan_paths([FIXTURES / "cuda_warp" / "mask_define_roots_negative.cu"], select=("PTL104",))
    (quiet,) = [f for f in neg.findings if f.suppressed]
    assert quiet.span.start_line == 21 and len(quiet.related) == 2
    assert all(r.suppressed == quiet.suppressed for r in quiet.related)


def test_fix_applies_every_folded_use_and_converges(tmp_path):
    """PTL605 keeps each use's rename: one --fix pass applies the root's and the uses'
    fixes, and a second pass changes nothing."""
    src = (FIXTURES / "cuda_libraries" / "cutensor_contract.cu").read_text()
    (tmp_path / "stubs").mkdir()
    (tmp_path / "stubs" / "cutensor_stub.inl").write_text((FIXTURES / "cuda_libraries" / "stubs" / "cutensor_stub.inl").read_text())
    (tmp_path / "c.cu").write_text(src)
    first = run_portlint("scan", "c.cu", "--no-cache", "--select", "PTL605", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert first.returncode in (0, 1), first.stderr
    fixed = (tmp_path / "c.cu").read_text()
    assert fixed == (FIXTURES / "cuda_libraries" / "cutensor_contract.fixed.cu").read_text()
    second = run_portlint("scan", "c.cu", "--no-cache", "--select", "PTL605", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert (tmp_path / "c.cu").read_text() == fixed, second.stdout
    doc = _json("c.cu", "--select", "PTL605", cwd=tmp_path)
    assert not [f for f in doc["findings"] if f["fix"] or any(r["fix"] for r in f["related"])]


def test_folded_finding_round_trips_through_the_cache(tmp_path):
    result = scan_paths([ROOTS], select=("PTL104",))
    back = FileResult.from_dict(json.loads(json.dumps(FileResult(result.findings).to_dict())))
    assert [(f.span, f.root, f.root_site, [r.span for r in f.related]) for f in back.findings] == \
        [(f.span, f.root, f.root_site, [r.span for r in f.related]) for f in result.findings]
    cache = tmp_path / "cache"
    runs = [run_portlint("scan", str(ROOTS), "--cache-dir", str(cache), "--format", "json", "--select", "PTL104").stdout for _ in range(2)]
    assert json.loads(runs[0])["findings"] == json.loads(runs[1])["findings"]
    assert len(json.loads(runs[1])["findings"][0]["related"]) == 7


def test_migration_report_counts_the_root_once():
    from portlint import __version__
    from portlint.core.config import Settings
    from portlint.output.report.summary import build_summary

    result = scan_paths([ROOTS], select=("PTL104",))
    summary = build_summary(result, Settings(root=REPO), [str(ROOTS.relative_to(REPO))], (str(ROOTS),), __version__)
    assert [(i.rule, i.line) for i in summary.items] == [("PTL104", 4)]


def test_scorer_counts_a_folded_use_as_found():
    finding = {"rule": "PTL104", "path": "p-1/a.cu", "start_line": 4, "suppressed": None,
               "related": [{"path": "p-1/a.cu", "start_line": 9}]}
    found = {}
    for path, line, rule in reported_sites(finding):
        found.setdefault(("p-1", "inferred", path.removeprefix("p-1/"), line), []).append(rule)
    flag = Label("p-1", "a.cu", 9, "flag", ("PTL104",), "inferred", "a use of the mask define", 2)
    trap = Label("p-1", "a.cu", 12, "quiet", ("PTL104",), "inferred", "not a use", 3)
    out = score([flag, trap], found)
    assert out.hits == 1 and out.trap_hits == 0
    assert reported_sites({**finding, "suppressed": {"kind": "inSource", "reason": "x"}}) == []


def test_diff_base_keeps_a_group_whose_new_use_is_on_a_changed_line(tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})

    (tmp_path / "k.cu").write_text(_KERNEL.format(before="", after=""))
    git("init", "-q")
    git("add", "k.cu")
    git("commit", "-qm", "base")
    unchanged = _json("k.cu", "--select", "PTL104", "--diff-base", "HEAD", cwd=tmp_path)
    assert unchanged["findings"] == []  # root and uses all on unchanged lines
    (tmp_path / "k.cu").write_text(_KERNEL.format(before="", after=_MORE.format(n=1)))
    doc = _json("k.cu", "--select", "PTL104", "--diff-base", "HEAD", cwd=tmp_path)
    assert [(f["start_line"], len(f["related"])) for f in doc["findings"]] == [(1, 4)]


def test_add_suppressions_silences_folded_groups_in_one_pass(tmp_path):
    """One comment at a root silences its group; a group with no root site in the file
    (cuDNN through a header) gets a comment at each use, so the rescan is clean."""
    (tmp_path / "dnn.h").write_text("typedef struct cudnnContext* cudnnHandle_t;\nint cudnnCreate(cudnnHandle_t*);\n")
    (tmp_path / "a.cu").write_text('#include "dnn.h"\nvoid f(cudnnHandle_t* h) {\n  cudnnCreate(h);\n}\n')
    (tmp_path / "k.cu").write_text(_KERNEL.format(before="", after=""))
    proc = run_portlint("scan", "a.cu", "k.cu", "--no-cache", "--select", "PTL603,PTL104", "--add-suppressions", "CUDA-only for now", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert (tmp_path / "k.cu").read_text().count("portlint: ignore[PTL104]") == 1
    assert (tmp_path / "a.cu").read_text().count("portlint: ignore[PTL603]") == 2
    doc = _json("a.cu", "k.cu", "--select", "PTL603,PTL104", cwd=tmp_path)
    assert doc["summary"]["findings"] == 0, doc["findings"]


def test_related_columns_count_utf16_units_on_wide_lines(tmp_path):
    (tmp_path / "k.cu").write_text(
        "#define FULL_MASK 0xffffffff\n"
        "__device__ float f(float v) {\n"
        "  /* \U0001F600 */ v += __shfl_xor_sync(FULL_MASK, v, 1);\n"
        "  return v;\n}\n", encoding="utf-8")
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "sarif", "--select", "PTL104", cwd=tmp_path)
    log = json.loads(proc.stdout)
    assert validate(log) == []
    (res,) = log["runs"][0]["results"]
    region = res["relatedLocations"][0]["physicalLocation"]["region"]
    line = "  /* \U0001F600 */ v += __shfl_xor_sync(FULL_MASK, v, 1);"
    assert region["startColumn"] == line.index("FULL_MASK") + 1 + 1  # the emoji is two UTF-16 units
