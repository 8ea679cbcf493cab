"""The wheel carries every rule file, so an installed portlint finds its rules from any directory."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from conftest import REPO


def test_wheel_contains_all_rule_data(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("portlint-*.whl")
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
