"""Issue 26, round six: the attacker's tests (a pull request's tree is hostile), each with the
near misses that must keep working beside it (docs/threat-model.md, "Round six").

A. The include search was the one reader whose root came from the working directory or the
   config file's folder (`include_roots`), and whose candidates were never bounded at all:
   `#include "../../outside.h"`, a deep `../` chain, or a header that is a symlink out read
   files outside the scanned tree (their constants changed the findings, libclang read them
   too). Now every header read lies inside the file's project root (discovery/roots.py) or a
   folder the user named (`--compile-commands`, confined `include-dirs`)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_portlint_bytes as run
from test_trust_roots import audited

# threadIdx.x % kGroupLanes is a PTL102 when a header gives kGroupLanes the value 32
LANES_H = b"#pragma once\nconstexpr int kGroupLanes = 32;\n"
KERNEL = '#include "{inc}"\n__global__ void k(float* y) {{ int lane = threadIdx.x % kGroupLanes; y[lane] = 1.f; }}\n'


def _json(proc) -> dict:
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _rules(proc) -> list[str]:
    return sorted(f["rule"] for f in _json(proc)["findings"])


def _notices(proc) -> str:
    return " | ".join(n["message"] for n in _json(proc).get("notices", []))


def _tree(tmp_path: Path, inc: str, sub: str = "sub") -> tuple[Path, Path]:
    parent = tmp_path / "parent"
    tree = parent / "tree"
    (tree / sub).mkdir(parents=True)
    (parent / "outside.h").write_bytes(LANES_H)
    (tree / sub / "k.cu").write_text(KERNEL.format(inc=inc))
    return parent, tree


SCAN = ("scan", "--no-progress", "--no-cache", "--format", "json", "--select", "PTL1")


def _outside_reads(outside: list[str], name: str = "outside.h") -> list[str]:
    return [line for line in outside if name in line]


@pytest.mark.parametrize("cwd", ["/", "parent"])
def test_a_relative_include_out_of_the_tree_is_not_read(tmp_path, cwd):
    """`#include "../../outside.h"` from tree/sub/k.cu: parent/outside.h is outside the
    tree named; it is not opened, its constant makes no finding, and a notice says why."""
    parent, tree = _tree(tmp_path, "../../outside.h")
    proc, outside = audited(tree, *SCAN, str(tree), cwd="/" if cwd == "/" else parent, tmp_path=tmp_path)
    assert _outside_reads(outside) == [], outside
    assert _rules(proc) == [], proc.stdout
    assert "leads outside the project root" in _notices(proc)


def test_a_a_deep_relative_include_does_not_reach_any_file(tmp_path):
    """A chain of `../` long enough to reach `/` then back down to any file."""
    parent, tree = _tree(tmp_path, "../" * 40 + str(tmp_path / "parent" / "outside.h").lstrip("/"))
    proc, outside = audited(tree, *SCAN, str(tree), cwd=parent, tmp_path=tmp_path)
    assert _outside_reads(outside) == [], outside
    assert _rules(proc) == [], proc.stdout


@pytest.mark.parametrize("spelling", ['"{abs}"', "<{abs}>", "<../../outside.h>"])
def test_a_absolute_and_angle_includes_out_of_the_tree_are_not_read(tmp_path, spelling):
    parent = tmp_path / "parent"
    parent.mkdir()
    inc = spelling.format(abs=parent / "outside.h")
    parent, tree = _tree(tmp_path, "X")
    (tree / "sub" / "k.cu").write_text(KERNEL.replace('"{inc}"', "{inc}").format(inc=inc))
    proc, outside = audited(tree, *SCAN, str(tree), cwd=parent, tmp_path=tmp_path)
    assert _outside_reads(outside) == [], outside
    assert _rules(proc) == [], proc.stdout


def test_a_a_header_symlinked_out_of_the_tree_is_not_read(tmp_path):
    parent, tree = _tree(tmp_path, "lanes.h")
    (tree / "sub" / "lanes.h").symlink_to(parent / "outside.h")
    proc, outside = audited(tree, *SCAN, str(tree), cwd="/", tmp_path=tmp_path)
    assert _outside_reads(outside) == [], outside
    assert _rules(proc) == [], proc.stdout
    assert "leads outside the project root" in _notices(proc)


def test_a_a_folder_symlinked_out_of_the_tree_is_not_read_through(tmp_path):
    parent, tree = _tree(tmp_path, "inc/outside.h")
    (tree / "sub" / "inc").symlink_to(parent)
    proc, outside = audited(tree, *SCAN, str(tree), cwd="/", tmp_path=tmp_path)
    assert _outside_reads(outside) == [], outside
    assert _rules(proc) == [], proc.stdout


def test_a_the_working_directory_does_not_widen_the_include_roots(tmp_path):
    """`cd parent && portlint scan tree`: `#include "lib/lanes.h"` of tree/a/b/k.cu was
    looked for in every ancestor up to the working directory, so parent/lib/lanes.h, outside
    the tree, was read (its constant made a PTL102)."""
    parent, tree = _tree(tmp_path, "lib/lanes.h", sub="a/b")
    (parent / "lib").mkdir()
    (parent / "lib" / "lanes.h").write_bytes(LANES_H)
    proc, outside = audited(tree, *SCAN, "tree", cwd=parent, tmp_path=tmp_path)
    assert _outside_reads(outside, "lanes.h") == [], outside
    assert _rules(proc) == [], proc.stdout


def test_a_libclang_does_not_read_a_header_out_of_the_tree(tmp_path):
    """libclang reads headers itself (the audit hook cannot see it): a constant only it can
    value, from a header out of the tree, makes no finding."""
    parent = tmp_path / "parent"
    tree = parent / "tree"
    tree.mkdir(parents=True)
    (parent / "lanes.h").write_text("#pragma once\n#define LANES 32\n")
    (tree / "cfg.h").write_text('#pragma once\n#include "../lanes.h"\nconstexpr int kGroupLanes = LANES;\n')
    (tree / "k.cu").write_text(KERNEL.format(inc="cfg.h"))
    proc = run(*SCAN, "tree", cwd=parent)
    assert _rules(proc) == [], proc.stdout
    # near miss: the same header inside the tree is valued by libclang as before
    (tree / "lanes.h").write_text("#pragma once\n#define LANES 32\n")
    (tree / "cfg.h").write_text('#pragma once\n#include "lanes.h"\nconstexpr int kGroupLanes = LANES;\n')
    assert _rules(run(*SCAN, "tree", cwd=parent)) == ["PTL102"]


# near misses: what the project and the user name is still read

def test_a_a_relative_include_inside_the_tree_is_read(tmp_path):
    parent, tree = _tree(tmp_path, "../common.h")
    (tree / "common.h").write_bytes(LANES_H)
    for cwd in ("/", parent):
        proc = run(*SCAN, str(tree), cwd=Path(cwd))
        assert _rules(proc) == ["PTL102"], proc.stdout
        assert "outside" not in _notices(proc)


def test_a_a_bundled_library_root_inside_the_tree_is_still_searched(tmp_path):
    parent, tree = _tree(tmp_path, "lib/lanes.h", sub="a/b")
    (tree / "lib").mkdir()
    (tree / "lib" / "lanes.h").write_bytes(LANES_H)
    assert _rules(run(*SCAN, "tree", cwd=parent)) == ["PTL102"]
    assert _rules(run(*SCAN, str(tree / "a" / "b" / "k.cu"), cwd=Path("/"))) == []  # its own folder is its tree


def test_a_a_compile_command_folder_outside_the_tree_is_the_users_and_is_read(tmp_path):
    parent, tree = _tree(tmp_path, "outside.h")
    db = tmp_path / "compile_commands.json"
    db.write_text(json.dumps([{"directory": str(tree / "sub"), "file": "k.cu",
                               "arguments": ["nvcc", f"-I{parent}", "-c", "k.cu"]}]))
    proc = run(*SCAN, "--compile-commands", str(db), str(tree), cwd=Path("/"))
    assert _rules(proc) == ["PTL102"], proc.stdout
    assert "outside" not in _notices(proc)


# --- B. A file whose worker process dies was hidden as exit 0 --------------------------------
# Commit 632c79d made a file portlint failed on end the scan with exit 2. A file that kills
# the process analysing it (the OOM killer on a file built to blow up a parser's memory, a
# crash in native parser code) got an error notice but no `files-failed` count: the gate
# turned green on a file nobody checked. `os._exit` in the worker stands for the crash.

_DYING = r'''
import os, sys
import portlint.pipeline.engine as engine
real = engine._scan_isolated
def dying(sf, *a, **k):
    if sf.real.name == "die.cu":
        os._exit(9)
    return real(sf, *a, **k)
engine._scan_isolated = dying
sys.argv = ["portlint", *sys.argv[1:]]
from portlint.cli import main
main()
'''


def test_b_a_file_that_kills_its_worker_ends_the_scan_with_exit_2(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(15):
        (tree / f"f{i}.cu").write_text(f"__global__ void k{i}(float* x) {{ x[0] = 1.f; }}\n")
    (tree / "die.cu").write_text('__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n')
    script = tmp_path / "dying.py"
    script.write_text(_DYING)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(script), "scan", "--no-progress", "--no-cache", "-j", "2", "--exit-zero", "."],
                          cwd=tree, env=env, capture_output=True, timeout=300)
    assert b"die.cu: the process analysing this file died" in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert b"could not be analysed, the report is incomplete" in proc.stderr
