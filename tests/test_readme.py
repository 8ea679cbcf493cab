"""The README starts with the two commands, and its rule table matches rules/."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_readme_rule_table_is_current():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "generate_readme_rules.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_readme_opens_with_install_scan_and_test_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert "pip install" in block[0] and "portlint scan fixtures/" in block[0]
    assert "pip install" in block[1] and "[test" in block[1] and "pytest tests" in block[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest tests" in ci
