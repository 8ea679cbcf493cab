"""Round five attack pass: the surfaces added since round four (PTL057's build scope, the
vendored file role, lone-CR CUDA files, the rewritten directive reader). Each test is one
finding, written so that it fails on the code as attacked and passes once the finding is
fixed; the severity is in each docstring, rated as docs/threat-model.md does. Run with
`python -m pytest tests/attacks/open_round5.py -p no:cacheprovider` (not collected by default)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO
from conftest import run_portlint_bytes as run  # the real command line, streams kept as bytes

PTX = b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def scan_within(seconds: float, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    try:
        return run("scan", "--no-progress", "--no-cache", "-j", "1", *args, cwd=cwd, timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`portlint scan {' '.join(args)}` gave no answer within {seconds:.0f} s")


# --- D2 (medium). A license file beside the scanned path decides the role -----------------------

def test_d_a_license_file_outside_the_scanned_tree_is_not_read(tmp_path):
    """Promise: portlint never reads outside the scanned tree. `_library_root` runs
    os.scandir on the folder of the path named like a bundled library (cutlass/, cub/,
    ...), whichever side of the scan root it is: `portlint scan cutlass/sub` lists
    `cutlass/` (outside the tree named) and a `LICENSE.txt` there makes the scanned kernel
    vendored, its PTL201 error a note, exit 0. Without that file the same scan gives the
    error and exit 1 (checked by hand, both ways). Severity medium: what is read is a
    folder listing next to the tree, but it decides the exit code."""
    sub = tmp_path / "cutlass" / "sub"
    sub.mkdir(parents=True)
    (sub / "k.cu").write_bytes(PTX)
    before = run("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "concise", "cutlass/sub", cwd=tmp_path)
    assert before.returncode == 1 and b"PTL201 error" in before.stdout, before.stdout
    (tmp_path / "cutlass" / "LICENSE.txt").write_text("BSD\n")
    after = run("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "concise", "cutlass/sub", cwd=tmp_path)
    assert after.stdout == before.stdout and after.returncode == before.returncode, after.stdout


# --- E (medium). --add-suppressions on a lone-CR file writes a suppression that does not apply --

LONE_CR_KERNEL = b'// a\r// b\r__global__ void k(float* x) {\r  asm volatile("membar.gl;");\r}\r'


def test_e_add_suppressions_on_a_lone_cr_file_converges(tmp_path):
    """Promise: a write converges in one pass and changes only what it means to. A CUDA
    file that breaks lines with lone CRs is analysed as the compiler reads it (each CR a
    line), and suppressions are matched in that numbering, but `--add-suppressions` writes
    the comment at the finding's position given back in the line model's numbering (line 1:
    the file has no LF), i.e. above the whole file. The rescan then reports the PTL201 error
    again, now beside a new `PTL001 Unused suppression` note, exit 1: the file was changed
    and nothing was suppressed. Checked by hand: after `--add-suppressions` the file starts
    `// portlint: ignore[PTL201] -- k.cu\\n// a\\r...` and a plain scan still gives the error."""
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n')
    (tmp_path / "k.cu").write_bytes(LONE_CR_KERNEL)
    run("scan", "--no-progress", "--no-cache", "--add-suppressions", "k.cu", cwd=tmp_path)
    again = run("scan", "--no-progress", "--no-cache", "--format", "json", "k.cu", cwd=tmp_path)
    live = [f for f in json.loads(again.stdout)["findings"] if not f.get("suppressed")]
    assert not [f for f in live if f["rule"] in ("PTL201", "PTL001")], live
    assert again.returncode == 0, again.stdout


# --- I (low). A UTF-8 name with a `%` is annotated on another file in GitHub and GitLab ------

def _github_property(value: str) -> str:
    """What GitHub Actions reads from a workflow command's property value (its own escapes)."""
    for escaped, char in (("%2C", ","), ("%3A", ":"), ("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        value = value.replace(escaped, char)
    return value


def test_i_github_annotation_names_the_file_with_a_percent(tmp_path):
    """Promise: output names the file (one to one). Round four made JSON, GitLab and GitHub
    paths percent-encoded (`%` as `%25`) and declared it in the JSON report's `path_escape`,
    but GitHub Actions and GitLab know nothing of that declaration: the github format then
    applies the workflow command's own escape on top, so `a%b.cu` is written
    `file=a%2525b.cu`, which GitHub reads as `a%25b.cu` (GitLab's code quality `location.path`
    is `a%25b.cu` too). The annotation lands on no file, or on a real `a%25b.cu` when the pull
    request adds one (its findings shown on the innocent file beside the one that has them).
    Checked on the command line: `--format github` printed `::error file=a%2525b%2Cc%3Ad.cu`
    for `a%b,c:d.cu`. A name that is UTF-8 should reach GitHub as itself."""
    (tmp_path / "a%b.cu").write_bytes(PTX)
    proc = run("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "github", ".", cwd=tmp_path)
    files = {_github_property(line.split(b"file=", 1)[1].split(b",", 1)[0].decode())
             for line in proc.stdout.splitlines() if line.startswith(b"::") and b"file=" in line}
    assert files == {"a%b.cu"}, files
