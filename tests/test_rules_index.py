"""rules/index.json: the pre-parsed rules that start-up reads instead of 79 TOML files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from portlint.core import catalog as rules

ROOT = Path(__file__).resolve().parent.parent


def test_index_is_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_rule_index.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_index_gives_the_same_rules_as_the_toml_files():
    root = rules.rules_root()
    files = rules._rule_files(root)
    from_index = rules._from_index(root, rules._files_digest(root, files))
    assert from_index is not None, "index.json was not used"
    parsed = rules._parse_all(root, files)
    assert from_index == parsed
    assert list(from_index) == sorted(from_index)
    # dict order is part of the output (README table, SARIF): targets stay in canonical order
    for rid, rule in from_index.items():
        assert list(rule.severity) == list(parsed[rid].severity), rid
        assert list(rule.docs_why) == list(parsed[rid].docs_why), rid


def test_an_edited_rule_file_is_parsed_not_taken_from_the_index(tmp_path):
    copy = tmp_path / "rules"
    shutil.copytree(rules.rules_root(), copy)
    target = next(copy.glob("cuda_warp/PTL101-*.toml"))
    text = target.read_text(encoding="utf-8")
    old_summary = rules.load_rules()["PTL101"].summary
    target.write_text(text.replace(old_summary, "An edited summary."), encoding="utf-8")
    files = rules._rule_files(copy)
    assert rules._from_index(copy, rules._files_digest(copy, files)) is None
    assert rules._parse_all(copy, files)["PTL101"].summary == "An edited summary."


def test_a_corrupt_index_is_ignored(tmp_path):
    copy = tmp_path / "rules"
    shutil.copytree(rules.rules_root(), copy)
    (copy / rules.INDEX_FILE).write_text("{not json", encoding="utf-8")
    files = rules._rule_files(copy)
    assert rules._from_index(copy, rules._files_digest(copy, files)) is None
