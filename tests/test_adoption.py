"""Adopting portlint on a legacy tree, end to end through the real command line (issue 11):
--baseline, --diff-base, --statistics, --format concise, --add-suppressions, stdin,
--shard and merge-sarif."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, run_portlint

KERNEL = """#include <cuda_runtime.h>
__global__ void k(unsigned *out) {
    unsigned m = __ballot_sync(0xffffffff, 1);
    out[0] = m;
}
"""
STEP = """import torch

def step(x):
    return x.cuda()
"""
BALLOT = "    unsigned {name} = __ballot_sync(0xffffffff, 1);\n"


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def _project(tmp_path: Path, git: bool = True) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "k.cu").write_text(KERNEL)
    (root / "src" / "step.py").write_text(STEP)
    if git:
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "start")
    return root


def _scan(root: Path, *args: str, input: str | None = None):
    return run_portlint("scan", *args, "--no-cache", "--target", "rocm,tpu", cwd=root, input=input)


def _findings(proc) -> list[dict]:
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"]


def _where(findings) -> list[tuple[str, str, int]]:
    return [(f["path"], f["rule"], f["start_line"]) for f in findings]


# ---- --baseline ------------------------------------------------------------------------

def test_baseline_leaves_out_known_findings_across_line_moves_and_counts_repeats(tmp_path):
    root = _project(tmp_path, git=False)
    base = _scan(root, "--format", "json", "-o", "base.json", "--exit-zero")
    assert base.returncode == 0, base.stderr
    known = json.loads((root / "base.json").read_text())["findings"]
    assert {f["rule"] for f in known} == {"PTL104", "PTL105", "PTL901"}
    # lines move (two new lines on top) and a second identical ballot appears
    kernel = root / "src" / "k.cu"
    text = "// header comment\n\n" + KERNEL.replace("    out[0] = m;\n", "    out[0] = m;\n" + BALLOT.format(name="m2") + "    out[1] = m2;\n")
    kernel.write_text(text)
    proc = _scan(root, "--baseline", "base.json", "--format", "json")
    assert proc.returncode == 1
    assert _where(_findings(proc)) == [("src/k.cu", "PTL105", 7), ("src/k.cu", "PTL104", 7)]
    assert json.loads(proc.stdout)["summary"]["counters"]["baselined"] == 3
    text_out = _scan(root, "--baseline", "base.json")
    assert "3 findings in the baseline left out." in text_out.stdout
    # a third construct identical to one in the baseline, in the same file, is new too
    kernel.write_text(text.replace("    out[1] = m2;\n", "    out[1] = m2;\n" + BALLOT.format(name="m") + "    out[2] = m;\n"))
    again = _findings(_scan(root, "--baseline", "base.json", "--format", "json"))
    assert [f["start_line"] for f in again if f["rule"] == "PTL104"] == [7, 9]


def test_of_identical_constructs_the_one_with_new_surroundings_is_the_new_one(tmp_path):
    root = _project(tmp_path, git=False)
    kernel = root / "src" / "k.cu"
    body = ["__global__ void k(unsigned long long *out) {", "    out[0] = __ballot_sync(0xffffffff, 1);", "    out[1] = 7;",
            "    out[2] = __ballot_sync(0xffffffff, 1);", "    out[3] = 9;", "}", ""]
    kernel.write_text("\n".join(body))
    _scan(root, "--format", "json", "-o", "base.json", "--exit-zero")
    body.insert(3, "    out[9] = __ballot_sync(0xffffffff, 1);")  # between the two known ones
    kernel.write_text("\n".join(body))
    found = _findings(_scan(root, "--baseline", "base.json", "--format", "json"))
    assert _where(found) == [("src/k.cu", "PTL104", 4)]


def test_baseline_counts_stale_entries_and_the_baseline_alone_is_clean(tmp_path):
    root = _project(tmp_path, git=False)
    _scan(root, "--format", "json", "-o", "base.json", "--exit-zero")
    same = _scan(root, "--baseline", "base.json")
    assert same.returncode == 0, same.stdout
    assert "No portability problems found" in same.stdout
    (root / "src" / "step.py").write_text(STEP.replace("x.cuda()", "x.to(x.device)"))
    fixed = _scan(root, "--baseline", "base.json")
    assert fixed.returncode == 0
    assert "2 findings in the baseline left out; 1 baseline entry no longer found (fixed since: refresh the baseline)." in fixed.stdout
    # scanning one file: the other file's entries are not stale, they were not looked at
    one = _scan(root, "src/k.cu", "--baseline", "base.json")
    assert "no longer found" not in one.stdout


def test_baseline_state_in_sarif(tmp_path):
    root = _project(tmp_path, git=False)
    _scan(root, "--format", "json", "-o", "base.json", "--exit-zero")
    (root / "src" / "k.cu").write_text(KERNEL.replace("    out[0] = m;\n", "    out[0] = m;\n" + BALLOT.format(name="n") + "    out[1] = n;\n"))
    proc = _scan(root, "--baseline", "base.json", "--format", "sarif", "--sarif-include-suppressed")
    results = json.loads(proc.stdout)["runs"][0]["results"]
    states = [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"], r["baselineState"]) for r in results]
    assert ("PTL104", 3, "unchanged") in states and ("PTL104", 5, "new") in states and ("PTL901", 4, "unchanged") in states
    for r in results:  # baselined results are suppressed (GitHub closes them), new ones open
        assert bool(r["suppressions"]) == (r["baselineState"] == "unchanged")
    plain = json.loads(_scan(root, "--baseline", "base.json", "--format", "sarif").stdout)["runs"][0]["results"]
    assert {r["baselineState"] for r in plain} == {"new"}
    no_baseline = json.loads(_scan(root, "--format", "sarif").stdout)["runs"][0]["results"]
    assert all("baselineState" not in r for r in no_baseline)


@pytest.mark.parametrize("content, says", [("{", "is not JSON"), ('{"runs": []}', "not a portlint `--format json` report")])
def test_a_bad_baseline_is_a_usage_error(tmp_path, content, says):
    root = _project(tmp_path, git=False)
    (root / "bad.json").write_text(content)
    proc = _scan(root, "--baseline", "bad.json")
    assert proc.returncode == 2
    assert says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    missing = _scan(root, "--baseline", "nope.json")
    assert missing.returncode == 2 and "cannot read the baseline" in missing.stderr


# ---- --diff-base -----------------------------------------------------------------------

def test_diff_base_reports_only_findings_on_changed_lines(tmp_path):
    root = _project(tmp_path)
    _git(root, "checkout", "-q", "-b", "feature")
    kernel = root / "src" / "k.cu"
    kernel.write_text("// moved down\n" + KERNEL.replace("    out[0] = m;\n", "    out[0] = m;\n" + BALLOT.format(name="n") + "    out[1] = n;\n"))
    _git(root, "commit", "-q", "-am", "one more ballot")
    proc = _scan(root, "--diff-base", "main", "--format", "json")
    assert _where(_findings(proc)) == [("src/k.cu", "PTL105", 6), ("src/k.cu", "PTL104", 6)]
    assert json.loads(proc.stdout)["summary"]["counters"]["outside-diff"] == 3
    # pre-commit: HEAD, with unstaged work and an untracked file (every line of it is new)
    (root / "src" / "step.py").write_text(STEP + "\ndef more(y):\n    return y.cuda()\n")
    (root / "src" / "new.cu").write_text(KERNEL)
    pre = _findings(_scan(root, "--diff-base", "HEAD", "--format", "json"))
    assert _where(pre) == [("src/new.cu", "PTL105", 3), ("src/new.cu", "PTL104", 3), ("src/step.py", "PTL901", 7)]
    text = _scan(root, "--diff-base", "HEAD")
    assert "findings on lines unchanged since the diff base not shown." in text.stdout
    # an editor's buffer is compared as it is, not as the file on disk
    buffer = kernel.read_text().replace("    out[1] = n;\n", "    out[1] = n;\n" + BALLOT.format(name="p"))
    piped = _findings(_scan(root, "-", "--stdin-filename", "src/k.cu", "--diff-base", "HEAD", "--format", "json", input=buffer))
    assert _where(piped) == [("src/k.cu", "PTL105", 8), ("src/k.cu", "PTL104", 8)]


def test_diff_base_outside_a_repository_or_with_a_bad_ref_is_one_line_exit_2(tmp_path):
    root = _project(tmp_path, git=False)
    proc = _scan(root, "--diff-base", "HEAD")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"portlint: error: --diff-base needs a git repository, and {root} is not inside one"]
    repo = _project(tmp_path / "r")
    for ref in ("no-such-branch", "--output=/tmp/x"):
        bad = _scan(repo, f"--diff-base={ref}")
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert "--diff-base" in bad.stderr


def test_diff_base_never_runs_commands_the_scanned_repository_configures(tmp_path):
    """A cloned tree's .git/config and .gitattributes are data: an external diff, a textconv,
    a clean filter, an fsmonitor hook and a pager named there must not run."""
    root = _project(tmp_path)
    marker = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    hook.chmod(0o755)
    for key in ("diff.external", "core.fsmonitor", "core.pager", "filter.evil.clean", "filter.evil.smudge", "diff.evil.textconv"):
        _git(root, "config", key, str(hook))
    (root / ".gitattributes").write_text("*.cu filter=evil diff=evil\n")
    (root / "src" / "k.cu").write_text(KERNEL + "// edited\n")
    proc = _scan(root, "--diff-base", "HEAD", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert not marker.exists(), marker.read_text()


# ---- --statistics and --format concise -----------------------------------------------

def test_statistics_count_per_rule_most_first(tmp_path):
    root = _project(tmp_path, git=False)
    (root / "src" / "k2.cu").write_text(KERNEL.replace("unsigned m", "unsigned long long m"))
    proc = _scan(root, "--statistics")
    assert proc.returncode == 1
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    assert rows == [["2", "PTL104", "lane-mask-32-bit-in-sync-intrinsic"],
                    ["1", "PTL105", "[*] ballot-result-narrowed-to-32-bit"],
                    ["1", "PTL901", rows[2][2]]]
    assert rows[2][2].endswith(_rule_name("PTL901"))
    as_json = json.loads(_scan(root, "--statistics", "--format", "json").stdout)
    assert [(r["code"], r["count"], r["fixable"]) for r in as_json] == [("PTL104", 2, False), ("PTL105", 1, True), ("PTL901", 1, False)]
    clean = _scan(root, "--statistics", "--select", "PTL2")
    assert clean.returncode == 0 and clean.stdout == ""


def _rule_name(rule_id: str) -> str:
    rules = json.loads(run_portlint("rules", "--format", "json").stdout)
    return next(r["name"] for r in rules if r["id"] == rule_id)


def test_concise_is_one_line_per_finding(tmp_path):
    root = _project(tmp_path, git=False)
    full = _findings(_scan(root, "--format", "json"))
    proc = _scan(root, "--format", "concise")
    assert proc.returncode == 1
    body = proc.stdout.split("\n\n")[0].splitlines()
    assert body == [f"{f['path']}:{f['start_line']}:{f['start_column']}: {f['rule']} {f['severity']} {f['message']}" for f in full]
    assert "Found 3 problems in 2 files" in proc.stdout
    assert "|" not in proc.stdout  # no source excerpt


# ---- --add-suppressions --------------------------------------------------------------

def test_add_suppressions_writes_comments_in_each_language_and_is_idempotent(tmp_path):
    root = _project(tmp_path, git=False)
    (root / "src" / "k.cu").write_text(KERNEL.replace("    unsigned m", "\tunsigned m"))
    proc = _scan(root, "--add-suppressions", "ported later, see PORT-12")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "added suppression comments in 2 files; rescanning" in proc.stderr
    assert "No portability problems found" in proc.stdout
    kernel = (root / "src" / "k.cu").read_text()
    assert "\t// portlint: ignore[PTL104, PTL105] -- ported later, see PORT-12\n\tunsigned m = __ballot_sync" in kernel
    step = (root / "src" / "step.py").read_text()
    assert step == STEP.replace("    return x.cuda()", "    # portlint: ignore[PTL901] -- ported later, see PORT-12\n    return x.cuda()")
    again = _scan(root, "--add-suppressions", "ported later, see PORT-12")
    assert again.returncode == 0 and "added suppression" not in again.stderr
    assert (root / "src" / "k.cu").read_text() == kernel and (root / "src" / "step.py").read_text() == step
    assert _scan(root).returncode == 0


def test_add_suppressions_extends_a_directive_above_and_keeps_macros_whole(tmp_path):
    root = _project(tmp_path, git=False)
    (root / "src" / "step.py").unlink()
    (root / "src" / "k.cu").write_text(
        "#include <cuda_runtime.h>\n"
        "#define BALLOT(v) \\\n"
        "    __ballot_sync(0xffffffff, v)\n"
        "__global__ void k(unsigned long long *out) {\n"
        "    // portlint: ignore[PTL105] -- narrowing is reviewed\n"
        "    unsigned m = __ballot_sync(0xffffffff, 1);\n"
        "    out[0] = m;\n"
        "}\n"
    )
    before = _findings(_scan(root, "--format", "json"))
    assert {(f["rule"], f["start_line"]) for f in before} == {("PTL104", 2), ("PTL104", 6)}  # a macro at its #define
    crlf = root / "src" / "w.cu"
    crlf.write_bytes(KERNEL.replace("\n", "\r\n").encode())
    diff = _scan(root, "--add-suppressions", "x", "--diff")
    assert diff.returncode == 1 and "+++ b/src/w.cu" in diff.stdout and "+++ b/src/k.cu" in diff.stdout
    assert crlf.read_bytes() == KERNEL.replace("\n", "\r\n").encode()  # --diff changes nothing
    proc = _scan(root, "--add-suppressions", "x")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (root / "src" / "k.cu").read_text()
    assert "// portlint: ignore[PTL104] -- x\n#define BALLOT(v)" in text
    assert "    // portlint: ignore[PTL104, PTL105] -- narrowing is reviewed\n    unsigned m" in text
    assert b"    // portlint: ignore[PTL104, PTL105] -- x\r\n    unsigned m" in crlf.read_bytes()
    nvcc = subprocess.run(["nvcc", "-arch=sm_90a", "-c", "-x", "cu", str(root / "src" / "k.cu"), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True) if _has("nvcc") else None
    assert nvcc is None or nvcc.returncode == 0, nvcc.stderr


def test_a_finding_on_a_continued_line_gets_an_inline_block_comment():
    """A new line inside a backslash-continued macro would end it: the comment goes inline.
    In Python, a comment line after a backslash or inside a string is not placed at all."""
    from portlint.output.add_suppressions import file_edits
    from portlint.output.fixes import apply_edits
    from portlint.core.model import Finding, Severity, Span

    text = "#define CALL(v) \\\n    f(v); \\\n    g(v)\n"
    f = Finding("PTL104", "a.cu", Span(3, 5, 3, 9), "m", Severity.ERROR, {"rocm": Severity.ERROR}, "high")
    edits, notices = file_edits("a.cu", text.encode(), "cuda", [f], "why")
    assert not notices
    assert apply_edits(text, edits) == "#define CALL(v) \\\n    f(v); \\\n    /* portlint: ignore[PTL104] -- why */ g(v)\n"
    py = "x = 1 + \\\n    y.cuda()\ns = '''\n  z.cuda()\n'''\n"
    pf = [Finding("PTL901", "a.py", Span(line, 3, line, 11), "m", Severity.ERROR, {"tpu": Severity.ERROR}, "high") for line in (2, 4)]
    edits, notices = file_edits("a.py", py.encode(), "python", pf, "why")
    assert edits == [] and [n.message.split(":")[0] for n in notices] == ["line 2", "line 4"]


def _has(tool: str) -> bool:
    import shutil

    return shutil.which(tool) is not None


def test_add_suppressions_rejects_a_reason_that_cannot_be_a_comment(tmp_path):
    root = _project(tmp_path, git=False)
    for reason in ("two\nlines", "ends */ here"):
        proc = _scan(root, "--add-suppressions", reason)
        assert proc.returncode == 2 and "--add-suppressions" in proc.stderr
    assert (root / "src" / "k.cu").read_text() == KERNEL


# ---- stdin ---------------------------------------------------------------------------

def test_stdin_is_reported_under_the_given_path_with_its_config(tmp_path):
    root = _project(tmp_path, git=False)
    sub = root / "sub"
    sub.mkdir()
    (sub / "portlint.toml").write_text('ignore = ["PTL105"]\n')
    proc = _scan(root, "-", "--stdin-filename", "sub/editing.cu", "--format", "json", input=KERNEL)
    found = _findings(proc)
    assert _where(found) == [("editing.cu", "PTL104", 3)]  # the config's folder is the root
    top = _findings(_scan(root, "-", "--stdin-filename", "src/unsaved.cu", "--format", "json", input=KERNEL))
    assert _where(top) == [("src/unsaved.cu", "PTL105", 3), ("src/unsaved.cu", "PTL104", 3)]
    py = _findings(_scan(root, "-", "--stdin-filename", "src/step.py", "--format", "json", input=STEP + "y = 1\n"))
    assert _where(py) == [("src/step.py", "PTL901", 4)]


@pytest.mark.parametrize("args, says", [
    (("-",), "needs --stdin-filename"),
    (("src", "-", "--stdin-filename", "a.cu"), "cannot be combined"),
    (("src", "--stdin-filename", "a.cu"), "only for scanning stdin"),
    (("-", "--stdin-filename", "a.cu", "--fix"), "do not apply to stdin"),
    (("src", "--add-suppressions", "r", "--fix"), "both edit the files"),
])
def test_stdin_usage_errors(tmp_path, args, says):
    root = _project(tmp_path, git=False)
    proc = _scan(root, *args, input=KERNEL)
    assert proc.returncode == 2 and says in proc.stderr


# ---- --shard and merge-sarif ---------------------------------------------------------

def test_shards_merged_equal_one_full_scan_byte_for_byte(tmp_path):
    common = ("--format", "sarif", "--no-cache", "--exit-zero", "--sarif-category", "portlint")
    full = run_portlint("scan", "fixtures", *common, "-o", str(tmp_path / "full.sarif"))
    assert full.returncode == 0, full.stderr
    parts = []
    for i in (1, 2, 3):
        out = tmp_path / f"shard{i}.sarif"
        proc = run_portlint("scan", "fixtures", *common, "--shard", f"{i}/3", "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        parts.append(out)
    counts = [len(json.loads(p.read_text())["runs"][0]["results"]) for p in parts]
    assert all(counts) and sum(counts) == len(json.loads((tmp_path / "full.sarif").read_text())["runs"][0]["results"])
    merged = run_portlint("merge-sarif", *map(str, reversed(parts)), "-o", str(tmp_path / "all.sarif"))
    assert merged.returncode == 0, merged.stderr
    assert (tmp_path / "all.sarif").read_bytes() == (tmp_path / "full.sarif").read_bytes()


def test_shard_split_is_stable_and_moves_only_an_added_file(tmp_path):
    from portlint.discovery.shard import shard_of

    names = sorted(p.relative_to(FIXTURES.parent).as_posix() for p in FIXTURES.rglob("*") if p.is_file())
    before = {n: shard_of(n, 4) for n in names}
    after = {n: shard_of(n, 4) for n in names + ["fixtures/new_file.cu"]}
    assert all(after[n] == before[n] for n in names)
    assert set(before.values()) == {1, 2, 3, 4}
    assert shard_of("fixtures/cuda_warp/a.cu", 4) == shard_of("fixtures/cuda_warp/a.cu", 4)


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_bad_shard_is_a_usage_error(spec):
    proc = run_portlint("scan", "fixtures/cuda_warp", "--shard", spec, "--no-cache")
    assert proc.returncode == 2 and "--shard" in proc.stderr


def test_merge_sarif_refuses_what_is_not_portlint_shards(tmp_path):
    (tmp_path / "other.sarif").write_text(json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ruff"}}, "results": []}]}))
    proc = run_portlint("merge-sarif", str(tmp_path / "other.sarif"))
    assert proc.returncode == 2 and "not written by portlint" in proc.stderr
    a = tmp_path / "a.sarif"
    b = tmp_path / "b.sarif"
    run_portlint("scan", "fixtures/cuda_warp", "--format", "sarif", "--no-cache", "--exit-zero", "--sarif-category", "one", "-o", str(a))
    run_portlint("scan", "fixtures/cuda_warp", "--format", "sarif", "--no-cache", "--exit-zero", "--sarif-category", "two", "-o", str(b))
    mixed = run_portlint("merge-sarif", str(a), str(b))
    assert mixed.returncode == 2 and "automationDetails" in mixed.stderr
