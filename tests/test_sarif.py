"""SARIF that GitHub code scanning accepts as-is, validated against the 2.1.0 schema and
GitHub's extra rules, for clean, dirty, suppressed, fixed and categorised runs."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, run_portlint
from sarif_checks import validate

from portlint.findings.fingerprint import line_hashes


def sarif(*args, cwd=None):
    proc = run_portlint("scan", *args, "--no-cache", "--format", "sarif", cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_fingerprint_golden_values_from_github():
    assert line_hashes("") == ["c129715d7a2bc9a3:1"]
    assert line_hashes(" a\nb\n  \t\tc\n d") == ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]
    lorem = line_hashes("Lorem ipsum dolor sit amet.\n" * 10)
    assert lorem[:6] == [f"a7f2ff13bc495cf2:{i}" for i in range(1, 7)]


def test_crlf_and_lf_hash_alike():
    assert line_hashes("a\r\nb\r\n") == line_hashes("a\nb\n")


def test_fixtures_sarif_validates():
    log = sarif(str(FIXTURES))
    assert validate(log) == []
    run = log["runs"][0]
    assert run["results"], "the fixtures hold findings"
    assert "automationDetails" not in run
    assert all("suppressions" not in r for r in run["results"])


def test_clean_run_has_empty_results_and_validates(tmp_path):
    (tmp_path / "ok.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    log = sarif("ok.cu", cwd=tmp_path)
    assert log["runs"][0]["results"] == []
    assert validate(log) == []


def test_suppressed_results_only_on_request(tmp_path):
    (tmp_path / "a.cu").write_text(
        "__global__ void k(float* x) {\n"
        '  asm volatile("membar.gl;");  // portlint: ignore[PTL201] -- measured, NVIDIA only\n'
        '  asm volatile("membar.cta;");\n'
        "}\n"
    )
    default = sarif("a.cu", cwd=tmp_path)
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in default["runs"][0]["results"]] == [3]
    full = sarif("a.cu", "--sarif-include-suppressed", cwd=tmp_path)
    results = full["runs"][0]["results"]
    assert len(results) == 2 and validate(full) == []
    suppressed = [r for r in results if r["suppressions"]]
    assert suppressed[0]["suppressions"][0]["kind"] == "inSource"
    assert "measured, NVIDIA only" in suppressed[0]["suppressions"][0]["justification"]


def test_category_sets_automation_details(tmp_path):
    (tmp_path / "ok.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    log = sarif("ok.cu", "--sarif-category", "portlint/frontends/cuda", cwd=tmp_path)
    assert log["runs"][0]["automationDetails"] == {"id": "portlint/frontends/cuda/"}
    assert validate(log) == []


def test_result_fields(tmp_path):
    src = "__global__ void k(float* x) {\n  asm volatile(\"membar.gl;\");\n}\n"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a b.cu").write_text(src)
    (tmp_path / "pyproject.toml").write_text("[tool.portlint]\n")
    log = sarif("sub", cwd=tmp_path)
    run = log["runs"][0]
    (res,) = run["results"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "sub/a%20b.cu", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 2, "startColumn": 3, "endLine": 2, "endColumn": 29}
    assert res["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(src)[1]
    assert res["level"] == "error"
    assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "PTL201"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert "timestamp" not in json.dumps(log).lower().replace("timestamps", "")


def test_utf16_columns_for_astral_characters(tmp_path):
    # the emoji before the asm takes two UTF-16 code units but one code point
    (tmp_path / "u.cu").write_text('__global__ void k(float* x) {\n  /*\U0001F600*/ asm volatile("membar.gl;");\n}\n', encoding="utf-8")
    log = sarif("u.cu", cwd=tmp_path)
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == 2 + len("/*") + 2 + len("*/ ") + 1


def test_notifications_for_bad_files(tmp_path):
    (tmp_path / "bin.cu").write_bytes(b"\x00\x01\x02 binary")
    (tmp_path / "ok.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    log = sarif(".", cwd=tmp_path)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any("bin.cu" in n["message"]["text"] and "binary" in n["message"]["text"] for n in notes)
    assert validate(log) == []


@pytest.mark.parametrize("builder", ["fix"])
def test_fixes_are_real_replacements(builder, tmp_path):
    """A finding with a fix serialises a non-empty artifactChanges; one without has no fixes key."""
    from portlint.core.config import Settings
    from portlint.core.model import Edit, Finding, Fix, ScanResult, Severity, Span
    from portlint.output.formats.sarif import build_sarif

    f = Finding("PTL201", "a.cu", Span(1, 1, 1, 3), "m", Severity.ERROR, {"rocm": Severity.ERROR}, "high",
                fix=Fix("rename", (Edit(Span(1, 1, 1, 3), "xy"),), "safe"), line_hash="0:1")
    g = Finding("PTL201", "a.cu", Span(2, 1, 2, 3), "m", Severity.WARNING, {"rocm": Severity.WARNING}, "high", line_hash="1:1")
    log = build_sarif(ScanResult(findings=[f, g], files_scanned=1), Settings(root=tmp_path), {})
    r1, r2 = log["runs"][0]["results"]
    change = r1["fixes"][0]["artifactChanges"][0]
    assert change["replacements"][0]["insertedContent"]["text"] == "xy"
    assert "fixes" not in r2
    assert r2["level"] == "warning"  # explicit, although sarif-om's default is also "warning"
    assert validate(log) == []


def test_fast_line_hashes_agree_with_the_rolling_reference():
    """The window-slicing implementation gives GitHub's rolling-hash values on varied text."""
    import random

    from portlint.findings.fingerprint import _line_hashes_rolling

    rng = random.Random(7)
    alphabet = ["a", "b", " ", "\t", "\n", "\r\n", "\r", "é", "{", "}", "x" * 120, "\n\n"]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        assert line_hashes(text) == _line_hashes_rolling(text), repr(text)
        wanted = {1, 3}
        partial = line_hashes(text, wanted)
        full = _line_hashes_rolling(text)
        assert [partial[i - 1] for i in wanted if i <= len(full)] == [full[i - 1] for i in wanted if i <= len(full)]


def _finding(line, severity, rule="PTL201", snippet="x", path="a.cu", suppressed=None):
    from portlint.core.model import Finding, Severity, Span

    sev = Severity(severity)
    return Finding(rule, path, Span(line, 1, line, 2), "m", sev, {"rocm": sev}, "high", snippet=snippet,
                   line_hash=f"{line:x}:1", suppressed=suppressed)


def test_results_are_capped_at_githubs_limit_keeping_the_most_severe(tmp_path):
    from portlint.core.config import Settings
    from portlint.core.model import ScanResult
    from portlint.output.formats.sarif import MAX_RESULTS, build_sarif

    assert MAX_RESULTS == 25_000
    severities = ["note", "warning", "error"]
    findings = [_finding(i + 1, severities[i % 3], snippet=str(i)) for i in range(30_000)]
    log = build_sarif(ScanResult(findings=findings, files_scanned=1), Settings(root=tmp_path), {})
    results = log["runs"][0]["results"]
    assert len(results) == 25_000
    levels = [r["level"] for r in results]
    assert levels.count("error") == 10_000 and levels.count("warning") == 10_000 and levels.count("note") == 5_000
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    assert lines == sorted(lines)  # report order is kept
    kept_notes = [ln for ln, lv in zip(lines, levels) if lv == "note"]
    assert kept_notes == [3 * i + 1 for i in range(5_000)]  # deterministic: the first notes in report order
    (note,) = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "5000" in note["message"]["text"] and "--select" in note["message"]["text"]
    from sarif_checks import github_problems

    assert github_problems(log) == []  # (the schema check of 25,000 results takes seconds; the shapes are checked above)


def test_cli_says_on_stderr_how_many_results_were_dropped(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import portlint.output.formats.sarif as sarif_module
    from portlint.cli import main

    monkeypatch.setattr(sarif_module, "MAX_RESULTS", 3)
    (tmp_path / "a.cu").write_text("__global__ void k(float* x) {\n" + '  asm volatile("membar.gl;");\n' * 5 + "}\n")
    monkeypatch.chdir(tmp_path)
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click 8.2 keeps the streams apart by default
        runner = CliRunner()
    out = runner.invoke(main, ["scan", "a.cu", "--isolated", "--no-cache", "--format", "sarif", "-j", "1"])
    assert out.exit_code == 1, out.stderr
    assert len(json.loads(out.stdout)["runs"][0]["results"]) == 3
    (line,) = [ln for ln in out.stderr.splitlines() if "left out" in ln]
    assert "2 least severe" in line and "--select" in line and "paths" in line


def test_identical_findings_on_one_line_get_distinct_fingerprints(tmp_path):
    (tmp_path / "a.cu").write_text(
        '__global__ void k(float* x) {\n  asm volatile("membar.gl;"); asm volatile("membar.gl;");\n'
        '  asm volatile("membar.gl;");\n}\n'
    )
    log = sarif("a.cu", cwd=tmp_path)
    results = log["runs"][0]["results"]
    assert len(results) == 3
    prints = [r["partialFingerprints"]["portlint/v1"] for r in results]
    assert len(set(prints)) == 3
    assert prints[1] == prints[0] + ":2" and prints[2] == prints[0] + ":3"
    assert validate(log) == []
    assert sarif("a.cu", cwd=tmp_path) == log  # stable from run to run
    # the JSON report carries the same values
    doc = json.loads(run_portlint("scan", "a.cu", "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    assert [f["fingerprints"]["portlint/v1"] for f in doc["findings"]] == prints


def test_file_outside_the_root_has_an_absolute_file_uri_and_no_base(tmp_path):
    (tmp_path / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "k.cu").write_text('__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n')
    (tmp_path / "elsewhere" / "bin.cu").write_bytes(b"\x00binary")
    (tmp_path / "project" / "in.cu").write_text('__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n')
    log = sarif("in.cu", "../elsewhere", "--isolated", cwd=tmp_path / "project")
    assert validate(log) == []
    run = log["runs"][0]
    arts = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]}
    outside = (tmp_path / "elsewhere" / "k.cu").resolve().as_uri()
    assert arts[outside] == {"uri": outside}
    assert arts["in.cu"] == {"uri": "in.cu", "uriBaseId": "%SRCROOT%"}
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": (tmp_path / "elsewhere" / "bin.cu").resolve().as_uri()}


def test_message_carries_the_code_a_suggestion_introduces(tmp_path):
    """A suggestion whose sentence ends in `:` introduces code: the SARIF message keeps it
    (it was cut at the first newline, leaving "Keep one mask type per platform:")."""
    (tmp_path / "k.cu").write_text(
        "#define FULL_MASK 0xffffffff\n"
        "__global__ void k(float* o, float v) {\n"
        "  o[threadIdx.x] = __shfl_down_sync(FULL_MASK, v, 1);\n"
        "}\n")
    log = sarif("k.cu", "--select", "PTL104", cwd=tmp_path)
    assert validate(log) == []
    texts = [r["message"]["text"] for r in log["runs"][0]["results"]]
    assert texts and all("per platform:\n#if defined(__HIP_PLATFORM_AMD__)" in t and "kFullMask" in t for t in texts), texts


def test_a_long_suggestion_keeps_its_first_paragraph(tmp_path):
    """A kernel skeleton is not pasted into the message: its first paragraph, and where the
    rest is."""
    from types import SimpleNamespace

    from portlint.output.formats.sarif import _message_text

    long = "Port it as below:\n" + "\n".join(f"line {i}" for i in range(40))
    text = _message_text(SimpleNamespace(message="m.", related=(), suggestion="Intro sentence.\n\n" + long))
    assert text.startswith("m. Suggestion: Intro sentence.\n(") and "more lines: the JSON report's `suggestion`" in text
    short = _message_text(SimpleNamespace(message="m.", related=(), suggestion="Do this:\n  x = 1;\n"))
    assert short == "m. Suggestion: Do this:\n  x = 1;"
