"""The command line as users meet it: exit codes, formats, selection, config errors."""

from __future__ import annotations

import json
import os

import pytest
from conftest import FIXTURES, run_portlint

PTX = 'asm volatile("membar.gl;" ::: "memory");'


def write_cuda(path, body=PTX):
    path.write_text(f"__global__ void k(float* x) {{\n  {body}\n  x[0] = 1.0f;\n}}\n", encoding="utf-8")
    return path


def test_exit_1_on_findings_0_on_clean_2_on_missing_path(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    clean = tmp_path / "clean.cu"
    write_cuda(clean, "x[1] = 2.0f;")
    assert run_portlint("scan", str(tmp_path / "bad.cu"), "--no-cache", cwd=tmp_path).returncode == 1
    proc = run_portlint("scan", str(clean), "--no-cache", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["runs"][0]["results"] == []
    missing = run_portlint("scan", str(tmp_path / "nope.cu"), "--no-cache", cwd=tmp_path)
    assert missing.returncode == 2
    assert "nope.cu" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1


def test_exit_zero_and_fail_on(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    assert run_portlint("scan", "bad.cu", "--no-cache", "--exit-zero", cwd=tmp_path).returncode == 0
    # PTL201 is an error: --fail-on error still fails
    assert run_portlint("scan", "bad.cu", "--no-cache", "--fail-on", "error", cwd=tmp_path).returncode == 1


def test_fail_on_threshold_below_severity_passes(tmp_path):
    # an unused suppression is a note: with the default fail-on=warning it does not fail the run
    (tmp_path / "ok.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }  // portlint: ignore[PTL201] -- old\n")
    proc = run_portlint("scan", "ok.cu", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "PTL001" in proc.stdout
    assert run_portlint("scan", "ok.cu", "--no-cache", "--fail-on", "note", cwd=tmp_path).returncode == 1


def test_usage_errors_exit_2(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    for args in (["--select", "XYZ9"], ["--target", "cpu"], ["--format", "xml"], ["--ignore", "PTL999"]):
        proc = run_portlint("scan", "bad.cu", "--no-cache", *args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)


def test_select_ignore_and_target(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    assert run_portlint("scan", "bad.cu", "--no-cache", "--ignore", "PTL2", cwd=tmp_path).returncode == 0
    assert run_portlint("scan", "bad.cu", "--no-cache", "--select", "PTL201", cwd=tmp_path).returncode == 1
    # PTL201 breaks rocm only: asking about tpu alone finds nothing
    assert run_portlint("scan", "bad.cu", "--no-cache", "--target", "tpu", cwd=tmp_path).returncode == 0


def test_text_format_shows_location_source_caret_and_summary(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    out = run_portlint("scan", "bad.cu", "--no-cache", cwd=tmp_path).stdout
    assert "bad.cu:2:3: PTL201 error" in out
    assert "^^^^" in out
    assert "`membar.gl` -> `__threadfence()`" in out
    assert "Found 1 problem in 1 file: 1 error." in out
    assert "By target: rocm 1 (1 error)." in out
    assert "\x1b[" not in out  # not a terminal: no colour


def test_color_always_and_no_color(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    assert "\x1b[" in run_portlint("scan", "bad.cu", "--no-cache", "--color", "always", cwd=tmp_path).stdout
    out = run_portlint("scan", "bad.cu", "--no-cache", "--color", "auto", cwd=tmp_path, env={"NO_COLOR": "1"}).stdout
    assert "\x1b[" not in out


def test_github_annotations(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    out = run_portlint("scan", "bad.cu", "--no-cache", "--format", "github", cwd=tmp_path).stdout
    line = out.strip().splitlines()[0]
    assert line.startswith("::error file=bad.cu,line=2,col=3,endLine=2,endColumn=")
    assert ",title=PTL201::PTL201 " in line


def test_output_file_keeps_stdout_clean(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    proc = run_portlint("scan", "bad.cu", "--no-cache", "--format", "json", "--output", "out/report.json", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads((tmp_path / "out/report.json").read_text())["summary"]["findings"] == 1


def test_rules_and_rule_commands():
    table = run_portlint("rules")
    assert table.returncode == 0
    assert "PTL201" in table.stdout and "inline-ptx-asm" in table.stdout and "rocm:error" in table.stdout
    data = json.loads(run_portlint("rules", "--format", "json").stdout)
    ids = [r["id"] for r in data]
    assert ids == sorted(ids) and "PTL201" in ids
    doc = run_portlint("rule", "PTL201").stdout
    for heading in ("## What it finds", "## Why it breaks, per target", "## Example", "## Portable rewrite"):
        assert heading in doc
    assert run_portlint("rule", "inline-ptx-asm").stdout == doc
    assert run_portlint("rule", "PTL999").returncode == 2


def test_version_and_module_entry_point():
    from portlint import __version__

    proc = run_portlint("--version")
    assert proc.returncode == 0 and __version__ in proc.stdout


def test_scan_fixtures_is_deterministic(tmp_path):
    first = run_portlint("scan", str(FIXTURES), "--no-cache", "--format", "sarif", "--jobs", "1")
    second = run_portlint("scan", str(FIXTURES), "--no-cache", "--format", "sarif", "--jobs", "2")
    assert first.returncode in (0, 1), first.stderr
    assert first.stdout == second.stdout
    third = run_portlint("scan", str(FIXTURES), "--no-cache", "--format", "json")
    fourth = run_portlint("scan", str(FIXTURES), "--no-cache", "--format", "json")
    assert third.stdout == fourth.stdout


def test_diff_and_fix_never_touch_files_without_fixes(tmp_path):
    bad = write_cuda(tmp_path / "bad.cu")
    before = bad.read_bytes()
    proc = run_portlint("scan", "bad.cu", "--no-cache", "--diff", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    run_portlint("scan", "bad.cu", "--no-cache", "--fix", cwd=tmp_path)
    assert bad.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["bad.cu"]


def test_empty_selection_is_a_usage_error(tmp_path):
    write_cuda(tmp_path / "bad.cu")
    for flag in ("--select=", "--select= , "):
        proc = run_portlint("scan", "bad.cu", "--no-cache", "--isolated", flag, cwd=tmp_path)
        assert proc.returncode == 2 and "--select is empty" in proc.stderr, proc.stderr


@pytest.mark.parametrize("flags", [("--select", "all"), ("--select", "ALL"), ("--select", "Hipify,ptl2"), ("--target", "ROCM"), ("--target", "Rocm,TPU")])
def test_presets_ids_and_targets_any_case(tmp_path, flags):
    write_cuda(tmp_path / "bad.cu")
    proc = run_portlint("scan", "bad.cu", "--no-cache", "--isolated", *flags, cwd=tmp_path)
    assert proc.returncode == 1 and "PTL201" in proc.stdout, proc.stderr


def test_text_paths_are_relative_to_the_working_directory(tmp_path):
    (tmp_path / "portlint.toml").write_text("ignore = ['PTL3']\n")
    (tmp_path / "pkg" / "kernels").mkdir(parents=True)
    write_cuda(tmp_path / "pkg" / "kernels" / "bad.cu")
    proc = run_portlint("scan", "kernels", "--no-cache", cwd=tmp_path / "pkg")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("kernels/bad.cu:2:3: PTL201"), proc.stdout
    # the machine formats keep paths relative to the project root (the config's folder)
    doc = json.loads(run_portlint("scan", "kernels", "--no-cache", "--format", "json", cwd=tmp_path / "pkg").stdout)
    assert doc["findings"][0]["path"] == "pkg/kernels/bad.cu"


def test_no_suggestion_prints_a_literal_backslash_n():
    """PTL104's suggestion held `\\n` escapes inside its text; suggestions are real lines."""
    from conftest import scan_paths

    result = scan_paths([FIXTURES / "cuda_warp"], select=("PTL1",))
    suggestions = {f.rule_id: f.suggestion for f in result.findings if f.suggestion}
    assert "PTL104" in suggestions
    assert all("\\n" not in s for s in suggestions.values()), [r for r, s in suggestions.items() if "\\n" in s]


@pytest.mark.parametrize("where", ["portlint.pipeline.engine.scan_files", "portlint.output.formats.text.render_text", "portlint.output.formats.sarif.render_sarif"])
def test_an_internal_error_outside_any_file_is_exit_2_even_with_exit_zero(tmp_path, monkeypatch, where):
    from click.testing import CliRunner

    from portlint.cli import main

    def broken(*args, **kwargs):
        raise KeyError("planted bug")

    monkeypatch.setattr(where, broken)
    write_cuda(tmp_path / "bad.cu")
    monkeypatch.chdir(tmp_path)
    fmt = "sarif" if "sarif" in where else "text"
    out = CliRunner().invoke(main, ["scan", "bad.cu", "--isolated", "--no-cache", "--exit-zero", "--format", fmt])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == ["portlint: error: internal error: KeyError: 'planted bug' (please report it)"]
    # usage errors keep click's own message and exit 2
    usage = CliRunner().invoke(main, ["scan", "--format", "yaml"])
    assert usage.exit_code == 2 and "Invalid value" in usage.output


@pytest.mark.parametrize("where", ["portlint.pipeline.engine._analyse", "portlint.pipeline.engine.scan_one"])
def test_a_file_portlint_failed_on_ends_the_scan_with_exit_2_even_with_exit_zero(tmp_path, monkeypatch, where):
    """A failure inside one file (its analysis, or reading and caching it: an installed
    portlint once missed a data file there) keeps the other files' report and a notice, and
    the scan ends with exit 2: a gate never turns green on a file it did not check."""
    from click.testing import CliRunner

    import portlint.pipeline.engine as engine
    from portlint.cli import main

    real = getattr(engine, where.rsplit(".", 1)[1])

    def broken(sf, *args, **kwargs):
        if sf.real.name == "broken.cu":
            raise FileNotFoundError("planted: a data file is missing")
        return real(sf, *args, **kwargs)

    monkeypatch.setattr(where, broken)
    write_cuda(tmp_path / "bad.cu")
    write_cuda(tmp_path / "broken.cu")
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--exit-zero"], ["--fail-on", "error"]):
        out = CliRunner().invoke(main, ["scan", "bad.cu", "broken.cu", "--isolated", "--no-cache", "--jobs", "1", *extra])
        assert out.exit_code == 2, (extra, out.output)
        assert "bad.cu:2:3: PTL201" in out.output  # the other file's findings stand
        assert "broken.cu" in out.output and "skipped, no findings for it" in out.output
        assert "portlint: error: internal error: 1 file could not be analysed" in out.output
    clean = CliRunner().invoke(main, ["scan", "bad.cu", "--isolated", "--no-cache", "--jobs", "1", "--exit-zero"])
    assert clean.exit_code == 0, clean.output


def test_suggest_on_a_too_deep_file_is_one_line_exit_2(tmp_path):
    (tmp_path / "deep.py").write_text("import triton\nx = " + " + ".join(["'a'"] * 3000) + "\n")
    proc = run_portlint("suggest", "deep.py::k", "--to", "pallas", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "deep.py" in proc.stderr
