"""Issue 26, round three: the mechanisms that close the findings of the round-3 attack
(tests/test_attack_round3.py holds the attacker's own tests). Budget tests count work
(expansions, matcher steps) at ten times the attack's sizes; a subprocess timeout is only a
hang guard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_portlint

from portlint.output import escape

ASM = b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def run_bytes(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "portlint", *args], cwd=cwd, capture_output=True, env=env, timeout=timeout)


# --- 1. file names that are not UTF-8: one path-to-text place, one escaper ---------------

def test_1_escape_writes_undecodable_bytes_and_separators_visibly():
    name = os.fsdecode(b"a\xff\x9b.cu")
    assert escape.path_text(name) == "a\\xff\\x9b.cu"
    assert escape.controls(name + "\u2028\u2029") == "a\\xff\\x9b.cu\\u2028\\u2029"
    assert escape.text("\ud800x") == "\\ud800x"  # a lone surrogate that is no byte
    assert escape.path_uri(name) == "a%FF%9B.cu"
    assert escape.json_ready({name: [name, 3, None]}) == {"a\\xff\\x9b.cu": ["a\\xff\\x9b.cu", 3, None]}
    # valid text is left as it is
    assert escape.path_text("ü/ß.cu") == "ü/ß.cu" and escape.controls("tab\tkept") == "tab\tkept"


def _tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "k.cu").write_bytes(ASM)
    (repo / os.fsdecode(b"\xff.cu")).write_bytes(ASM)
    return repo


def test_1_every_format_and_the_cache_take_a_name_that_is_not_utf8(tmp_path):
    """With the cache on (its key hashes the name), every scan format, the report's three
    formats, a baseline made of the JSON and merge-sarif of a SARIF shard."""
    repo = _tree(tmp_path)
    for fmt in ("text", "concise", "json", "sarif", "github", "gitlab", "junit"):
        for _ in range(2):  # cold, then from the cache
            proc = run_bytes("scan", "--no-progress", "--format", fmt, "-o", f"out.{fmt}", ".", cwd=repo)
            assert proc.returncode == 1 and b"internal error" not in proc.stderr, (fmt, proc.stderr)
            assert b"skipped" not in proc.stderr, proc.stderr
        data = (repo / f"out.{fmt}").read_bytes()
        data.decode("utf-8")  # valid UTF-8 throughout
        assert b"\xff" not in data
        assert (b"%FF.cu" if fmt == "sarif" else b"\\xff.cu") in data, (fmt, data[:400])
    doc = json.loads((repo / "out.json").read_text())
    assert sorted(f["path"] for f in doc["findings"]) == ["\\xff.cu", "k.cu"]
    proc = run_bytes("scan", "--no-progress", "--format", "concise", "--baseline", "out.json", ".", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    for fmt in ("html", "markdown", "json"):
        proc = run_bytes("report", "--format", fmt, "-o", f"r.{fmt}", ".", cwd=repo)
        assert proc.returncode == 0, proc.stderr
        assert b"\xff" not in (repo / f"r.{fmt}").read_bytes()
    # a shard that holds a lone surrogate (JSON allows the escape) merges into valid UTF-8
    shard = json.loads((repo / "out.sarif").read_text())
    shard["runs"][0]["results"][0]["message"]["text"] += "\udcff"
    (repo / "s.sarif").write_text(json.dumps(shard))
    proc = run_bytes("merge-sarif", "s.sarif", "-o", "m.sarif", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "\\xff" in json.loads((repo / "m.sarif").read_text())["runs"][0]["results"][0]["message"]["text"]
