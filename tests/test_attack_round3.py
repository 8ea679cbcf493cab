"""Round three attack pass (issue 26's "fresh attack pass by a reviewer who did not write
the fixes"): each test is one finding of medium severity or above, written so that it
fails on the code as attacked and passes once the finding is fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_portlint_bytes as run

ASM = b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "k.cu").write_bytes(ASM)
    return repo


# --- A. a file name that is not UTF-8 ---------------------------------------------------

@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_a_non_utf8_file_name_does_not_kill_machine_readable_output(tmp_path, fmt):
    """One file named with a byte that is not UTF-8 (`\\xff.cu`, legal on Linux, committable
    to git) made every json/sarif/github scan an internal error (UnicodeEncodeError on a
    surrogate, exit 2, no report): a pull request could switch off the CI upload. The scan
    should go on: the other file's finding reported, exit 1."""
    repo = checkout(tmp_path)
    (repo / os.fsdecode(b"\xff.cu")).write_bytes(ASM)
    proc = run("scan", "--no-progress", "--no-cache", "--format", fmt, ".", cwd=repo)
    assert b"internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert b"k.cu" in proc.stdout
    if fmt in ("json", "sarif"):
        json.loads(proc.stdout)
    # and written to a file (`-o`, how CI uploads it)
    proc = run("scan", "--no-progress", "--no-cache", "--format", fmt, "-o", f"out.{fmt}", ".", cwd=repo)
    assert b"internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert b"k.cu" in (repo / f"out.{fmt}").read_bytes()


def test_a_non_utf8_file_name_does_not_kill_the_report(tmp_path):
    repo = checkout(tmp_path)
    (repo / os.fsdecode(b"\xff.cu")).write_bytes(ASM)
    proc = run("report", "--no-cache", "-o", "r.md", ".", cwd=repo)
    assert b"internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert b"k.cu" in (repo / "r.md").read_bytes()


@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_a_raw_c1_bytes_of_a_non_utf8_name_are_escaped(tmp_path, fmt):
    """0x9b is CSI and 0x9d OSC in an 8-bit terminal. The escaper writes C1 controls visibly
    when they are characters (U+009B), but a name holding the raw bytes (decoded by the
    filesystem codec to lone surrogates) reaches the output byte for byte."""
    repo = checkout(tmp_path)
    (repo / os.fsdecode(b"x\x9b2J\x9d0;title\x07.cu")).write_bytes(ASM)
    proc = run("scan", "--no-progress", "--no-cache", "--format", fmt, ".", cwd=repo)
    assert b"\x9b" not in proc.stdout and b"\x9d" not in proc.stdout, proc.stdout[:300]
    assert b"\x9b" not in proc.stderr and b"\x9d" not in proc.stderr


# --- B. a pyproject.toml in the tree that is not a bounded TOML document --------------------

@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a=" * 3000 + "1" + "}" * 3000, "9" * 5000])
def test_b_hostile_pyproject_found_while_looking_for_config_is_not_an_internal_error(tmp_path, value):
    """config.find_config parses a pyproject.toml that mentions portlint with a bare
    tomllib.loads, outside the bounded reader: deep nesting (RecursionError) or a
    5,000-digit integer (ValueError) is 'internal error ... please report it'. It should be
    the one-line usage error the bounded reader gives (or a notice and the scan goes on),
    naming the file."""
    repo = checkout(tmp_path)
    (repo / "pyproject.toml").write_text("# portlint\nx = " + value + "\n")
    proc = run("scan", "--no-progress", "--no-cache", ".", cwd=repo)
    assert b"internal error" not in proc.stderr, proc.stderr
    assert b"pyproject.toml" in proc.stderr


# --- C. a configuration value beyond what the reader can use ----------------------------------

@pytest.mark.parametrize("size", ["99999999999999999999999999", "9223372036854775807"])
def test_c_huge_max_file_size_is_a_configuration_error_not_a_silent_empty_scan(tmp_path, size):
    """`max-file-size = 9223372036854775807` passes validation, then every file fails with
    OverflowError ('skipped, no findings for it') and the scan ends 'No portability
    problems found in 0 files', exit 0: a pull request turns the gate green without
    touching a rule. A value the reader cannot use should be a configuration error (exit 2)
    or be capped, and the finding in k.cu reported."""
    repo = checkout(tmp_path)
    (repo / "pyproject.toml").write_text(f"[tool.portlint]\nmax-file-size = {size}\n")
    proc = run("scan", "--no-progress", "--no-cache", ".", cwd=repo)
    assert b"OverflowError" not in proc.stderr, proc.stderr
    assert proc.returncode != 0, (proc.stdout, proc.stderr)
    if proc.returncode == 1:
        assert b"PTL201" in proc.stdout


# --- D. in-tree files read through a symlink that leads out of the tree -----------------------

def _outside(tmp_path: Path, name: str, data: str) -> Path:
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    (out / name).write_text(data)
    return out / name


def test_d_gitignore_symlinked_out_of_the_tree_is_not_read(tmp_path):
    """A committed `.gitignore -> ../outside/secret` is opened and its lines used as
    patterns: a file outside the tree is read, and which in-tree files disappear from the
    report tells the pull request's author whether a guessed line is in it. The walk
    skips a source symlinked out of the tree with a notice; a .gitignore should be treated
    the same way (not read, a notice)."""
    repo = checkout(tmp_path)
    secret = _outside(tmp_path, "secret", "k.cu\n")
    (repo / ".gitignore").symlink_to(os.path.relpath(secret, repo))
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert b"k.cu:2:3: PTL201" in proc.stdout, (proc.stdout, proc.stderr)


@pytest.mark.parametrize("name", ["portlint.toml", "pyproject.toml"])
def test_d_config_symlinked_out_of_the_tree_is_not_applied(tmp_path, name):
    """A committed `portlint.toml -> ../outside/x.toml` is read and applied: configuration
    from outside the scanned tree (the threat model: in-tree configuration 'cannot make
    portlint ... read outside the tree'). It should be refused (usage error or a notice and
    no settings from it)."""
    repo = checkout(tmp_path)
    body = '[tool.portlint]\nignore = ["PTL2"]\n'
    target = _outside(tmp_path, "x.toml", body)
    (repo / name).symlink_to(os.path.relpath(target, repo))
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert proc.returncode == 2 or b"k.cu:2:3: PTL201" in proc.stdout, (proc.returncode, proc.stdout, proc.stderr)


def test_d_dependency_file_symlinked_out_is_not_read_by_the_project_model(tmp_path):
    """Discovery skips `requirements.txt -> ../outside/...` ('symlink to outside the scanned
    tree, skipped'), but the Python project model then opens it anyway (index/project.py
    _dependency_tags: Path.is_file / read_text follow the link) and the scope tags it
    names change which files are in scope for TPU. Here the outside file says torch_xla,
    which puts the torch file in scope and adds PTL901 findings that the tree alone does
    not have."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text("import torch\nx = torch.randn(3).cuda()\n")
    plain = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    target = _outside(tmp_path, "reqs.txt", "torch_xla\n")
    (repo / "requirements.txt").symlink_to(os.path.relpath(target, repo))
    linked = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert linked.stdout == plain.stdout, (plain.stdout, linked.stdout)


# --- E. bounded work: ifs that rebind a traced name in a jitted function ----------------------

def test_e_ifs_rebinding_a_traced_name_are_not_quadratic(tmp_path):
    """`if x > i: x = x + 1` repeated in one `@jax.jit` function: every `if` walks every
    node of the region (rules/xla_tracing.py host_rebound, and
    traced_values._rebound_static scans every assignment of the name), so the cost is
    quadratic: measured in an empty folder 2,000 ifs 9 s, 6,000 ifs 91 s (startup is
    about 4 s), so 12,000 ifs (a 330 KB file, under the 4 MB size limit) take about six
    minutes. Issue 26's test_6 (20,000 ifs) does not rebind the name, so it misses this.
    12,000 ifs must finish inside the budget (linear work is some seconds)."""
    n = 12000
    body = "".join(f"    if x > {i}: x = x + 1\n" for i in range(n))
    (tmp_path / "j.py").write_text("import jax\n@jax.jit\ndef f(x):\n" + body + "    return x\n")
    try:
        proc = run("scan", "--no-progress", "--no-cache", "--target", "tpu", "--format", "concise", "-j", "1", "j.py",
                   cwd=tmp_path, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{n} ifs rebinding a traced name: no answer within 120 s")
    assert proc.returncode in (0, 1), proc.stderr


# --- F. CUDA: macros whose values the guard evaluator expands ---------------------------------

KERNEL = '__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def test_f_doubling_macros_do_not_hang_the_guard_evaluator(tmp_path):
    """`#define A1 (A0+A0)` ... `#define A39 (A38+A38)` then `#if A39`: a 1 KB file. The
    guard evaluator (frontends/cuda/guards.py _macro_state/_body_value, through
    preprocessor.integer_value) expands each macro afresh, so the work is 2**depth:
    16 levels 1.8 s, 18 levels 7.8 s, 20 levels 15.5 s, 40 levels > 100 s (never ends).
    Values should be memoised or the expansion capped with a notice; the PTL201 in the
    kernel must still be reported."""
    defines = "#define A0 1\n" + "".join(f"#define A{i} (A{i-1}+A{i-1})\n" for i in range(1, 40))
    (tmp_path / "h.cu").write_text(KERNEL + defines + "#if A39\nint z;\n#endif\n")
    try:
        proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "-j", "1", "h.cu", cwd=tmp_path, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("40 doubling #defines: no answer within 90 s")
    assert b"h.cu:2:3: PTL201" in proc.stdout, (proc.stdout, proc.stderr)


def test_f_a_long_macro_chain_keeps_the_real_finding(tmp_path):
    """`#define A1 A0` ... `#define A2999 A2998`, `#if A2999`: the evaluator recurses once per
    link and hits the recursion limit; four rules (PTL101, PTL108, PTL201, PTL204) end in
    PTL003 'internal error' and the real PTL201 of the kernel is lost. Like the CMake
    nesting of issue 26 (item 9), the chain should be walked without recursion or capped
    with a notice, and the file keep its finding."""
    defines = "#define A0 1\n" + "".join(f"#define A{i} A{i-1}\n" for i in range(1, 3000))
    (tmp_path / "h.cu").write_text(KERNEL + defines + "#if A2999\nint z;\n#endif\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "-j", "1", "h.cu", cwd=tmp_path)
    assert b"PTL003" not in proc.stdout, proc.stdout
    assert b"h.cu:2:3: PTL201" in proc.stdout, (proc.stdout, proc.stderr)


# --- G. CUDA: nesting that hides a kernel's findings ------------------------------------------

@pytest.mark.parametrize("n", [1000, 50000])
def test_g_deep_braces_in_a_kernel_do_not_hide_its_findings_silently(tmp_path, n):
    """1,000 nested `{}` (2 KB) inside a kernel before an inline PTX `asm`: the PTL201 is
    gone, with no notice and exit 0 ('No portability problems found in 1 file'). At 500
    levels it is found. A pull request can hide any CUDA finding this way. The finding
    should stay, or the file get a notice that it was not fully analysed (and not a clean
    exit)."""
    src = "__global__ void k(float* x) {\n" + "{" * n + "}" * n + '\n  asm volatile("membar.gl;");\n}\n'
    (tmp_path / "a.cu").write_text(src)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "a.cu", cwd=tmp_path)
    assert b"a.cu:3:3: PTL201" in proc.stdout or (proc.returncode != 0 and b"a.cu" in proc.stderr), (proc.stdout, proc.stderr)


# --- H. .gitignore patterns inside the cost bound that still backtrack for minutes ------------

def test_h_gitignore_pattern_within_the_star_bound_does_not_hang_the_walk(tmp_path):
    """`**/*a*a/**/*a*a/**/*a*ac` (26 bytes) has 2 `*` per component and 3 `**`, so
    bounded_patterns keeps it, but its regex backtracks polynomially in the path length
    with degree ~ the total number of stars: one match of a 30-folder path of 40-letter
    names (1,230 characters) takes minutes; measured per match 0.16 s at 5 folders, 1.9 s
    at 10, 5.7 s at 15, 15.6 s at 20, and the walk matches every folder on the way down.
    The scan of this tree did not finish in 60 s. The bound should limit the total cost
    (all stars of a pattern together, or the path length), or matching should not
    backtrack; the kernel at the bottom must be scanned."""
    repo = tmp_path / "repo"
    deep = repo.joinpath(*(["a" * 40] * 30))
    deep.mkdir(parents=True)
    (deep / "k.cu").write_bytes(ASM)
    (repo / ".gitignore").write_text("**/*a*a/**/*a*a/**/*a*ac\n")
    try:
        proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a kept .gitignore pattern: no answer within 60 s")
    assert b"k.cu:2:3: PTL201" in proc.stdout, (proc.stdout[-300:], proc.stderr)
