"""[tool.portlint] / portlint.toml: schema, errors (one line, exit 2), precedence."""

from __future__ import annotations

import pytest
from conftest import run_portlint

BAD_ASM = '__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def project(tmp_path, config: str, name="pyproject.toml"):
    (tmp_path / name).write_text(config)
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "k.cu").write_text(BAD_ASM)
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "t.cu").write_text(BAD_ASM)
    return tmp_path


@pytest.mark.parametrize(
    "config, needle",
    [
        ("[tool.portlint]\nselekt = ['PTL2']\n", "unknown key 'selekt'"),
        ("[tool.portlint]\ntargets = ['cpu']\n", "unknown target 'cpu'"),
        ("[tool.portlint]\nfail-on = 'fatal'\n", "fail-on"),
        ("[tool.portlint]\nselect = ['NOPE']\n", "matches no rule"),
        ("[tool.portlint]\nmax-file-size = -3\n", "max-file-size"),
        ("[tool.portlint]\nper-file-ignores = ['x']\n", "per-file-ignores"),
        ("[tool.portlint\n", "invalid TOML"),
    ],
)
def test_bad_config_is_one_line_exit_2(tmp_path, config, needle):
    project(tmp_path, config)
    proc = run_portlint("scan", "src", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "pyproject.toml" in lines[0], proc.stderr


def test_portlint_toml_same_schema_and_nearest_wins(tmp_path):
    project(tmp_path, "[tool.portlint]\nignore = ['PTL201']\n")
    (tmp_path / "src" / "portlint.toml").write_text("select = ['PTL2']\n")
    # src/ has a nearer portlint.toml, which does not ignore PTL201; tests/ uses the root's
    assert run_portlint("scan", ".", "--no-cache", cwd=tmp_path / "src").returncode == 1
    assert run_portlint("scan", "src", "--no-cache", cwd=tmp_path).returncode == 1
    assert run_portlint("scan", "tests", "--no-cache", cwd=tmp_path).returncode == 0
    assert run_portlint("scan", "tests", "--no-cache", "--isolated", cwd=tmp_path).returncode == 1


def test_exclude_per_file_ignores_and_fail_on(tmp_path):
    project(tmp_path, "[tool.portlint]\nexclude = ['tests/']\n")
    out = run_portlint("scan", ".", "--no-cache", cwd=tmp_path).stdout
    assert "src/k.cu" in out and "tests/t.cu" not in out
    project(tmp_path, "[tool.portlint]\nper-file-ignores = { 'tests/*' = ['PTL2'] }\n")
    out = run_portlint("scan", ".", "--no-cache", cwd=tmp_path).stdout
    assert "src/k.cu" in out and "tests/t.cu" not in out
    project(tmp_path, "[tool.portlint]\ntargets = ['tpu']\n")
    assert run_portlint("scan", ".", "--no-cache", cwd=tmp_path).returncode == 0


def test_explicit_file_is_scanned_unless_force_exclude(tmp_path):
    project(tmp_path, "[tool.portlint]\nexclude = ['tests/']\n")
    assert run_portlint("scan", "tests/t.cu", "--no-cache", cwd=tmp_path).returncode == 1
    assert run_portlint("scan", "tests/t.cu", "--no-cache", "--force-exclude", cwd=tmp_path).returncode == 0


def test_config_flag_and_missing_config(tmp_path):
    project(tmp_path, "[tool.portlint]\n")
    (tmp_path / "other.toml").write_text("ignore = ['PTL201']\n")
    assert run_portlint("scan", "src", "--no-cache", "--config", "other.toml", cwd=tmp_path).returncode == 0
    proc = run_portlint("scan", "src", "--no-cache", "--config", "absent.toml", cwd=tmp_path)
    assert proc.returncode == 2 and "absent.toml" in proc.stderr


@pytest.mark.parametrize(
    "config, needle",
    [
        ("[tool.portlint]\nselect = 'PTL1'\n", "select must be an array"),
        ("[tool.portlint]\nignore = 5\n", "ignore must be an array"),
        ("[tool.portlint]\nexclude = [3]\n", "exclude must be an array of non-empty strings"),
        ("[tool.portlint]\ntargets = 'rocm'\n", "targets must be an array"),
        ("[tool.portlint]\nfail-on = 2\n", "fail-on must be a string"),
        ("[tool.portlint]\nper-file-ignores = { 'a/*' = 'PTL2' }\n", "per-file-ignores.a/* must be an array"),
        ("[tool.portlint]\nselect = []\n", "select is empty"),
        ("tool = 5\n[x]\nportlint = 1\n", "tool must be a table"),
        ("[tool]\nportlint = 3\n", "tool.portlint must be a table"),
    ],
)
def test_wrong_type_is_one_line_naming_file_and_key(tmp_path, config, needle):
    project(tmp_path, config)
    proc = run_portlint("scan", "src", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "pyproject.toml" in lines[0], proc.stderr


def test_wrong_type_in_portlint_toml(tmp_path):
    project(tmp_path, "tool = 5\n", name="portlint.toml")
    proc = run_portlint("scan", "src", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"portlint: error: {tmp_path / 'portlint.toml'}: tool must be a table, not an integer"


def test_ids_presets_and_targets_are_case_insensitive_in_config(tmp_path):
    project(tmp_path, "[tool.portlint]\nselect = ['all']\ntargets = ['ROCM']\nignore = ['ptl3']\n")
    proc = run_portlint("scan", "src", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1 and "PTL201" in proc.stdout, proc.stderr
