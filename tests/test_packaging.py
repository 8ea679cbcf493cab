"""The wheel carries every rule file, so an installed portlint finds its rules from any directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (built,) = out.glob("portlint-*.whl")
    return built


def test_wheel_contains_all_rule_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(["git", "ls-files", "rules"], cwd=REPO, capture_output=True, text=True).stdout.split()
    if not tracked:  # not a git checkout: take the tree as it is
        tracked = [p.relative_to(REPO).as_posix() for p in (REPO / "rules").rglob("*") if p.is_file()]
    wanted = {f"portlint/_rules/{p[len('rules/'):]}" for p in tracked if p.endswith((".toml", ".csv", ".json"))}
    assert wanted and wanted <= names, sorted(wanted - names)[:10]
    assert "portlint/cli.py" in names
    assert {"portlint/rules/cuda_warp/__init__.py", "portlint/rules/cuda_warp/analysis.py"} <= names  # sub-packages listed too
    assert {"portlint/output/report/summary.py", "portlint/output/report/html.py", "portlint/output/report/markdown.py"} <= names
    entry_points = [n for n in names if n.endswith("entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points[0]).decode()
    assert "portlint = portlint.cli:run" in text


def test_installed_wheel_scans_as_the_source_tree_does(wheel, tmp_path):
    """Installed from the wheel (not editable), portlint reads every table it needs from the
    package: a scan of the fixtures gives the same report as the source checkout, and no file
    is skipped because a data file was looked for beside the source tree (the ROCm build
    scope's vocabulary once was, and the pre-commit hook then passed on every file)."""
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    work = tmp_path / "work"
    shutil.copytree(REPO / "fixtures", work / "fixtures")
    outputs = []
    for path in (str(site), str(REPO)):
        env = dict(os.environ, PYTHONPATH=path)
        where = subprocess.run([sys.executable, "-c", "import portlint, sys; sys.stdout.write(portlint.__file__)"],
                               cwd=work, env=env, capture_output=True, text=True, timeout=60)
        assert where.stdout.startswith(path), (path, where.stdout, where.stderr)
        run = subprocess.run([sys.executable, "-m", "portlint", "scan", "fixtures", "--format", "json", "--no-cache", "--no-progress"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 1, run.stderr[-2000:]
        assert "skipped, no findings" not in run.stdout + run.stderr
        report = json.loads(run.stdout)
        outputs.append(sorted((f["path"], f["start_line"], f["rule"], f["message"]) for f in report["findings"]))
    assert outputs[0] and outputs[0] == outputs[1]
