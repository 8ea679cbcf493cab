"""Round five attack pass: the surfaces added since round four (PTL057's build scope, the
vendored file role, lone-CR CUDA files, the rewritten directive reader). Each test is one
finding, written so that it fails on the code as attacked and passes once the finding is
fixed; the severity is in each docstring, rated as docs/threat-model.md does. Run with
`python -m pytest tests/attacks/open_round5.py -p no:cacheprovider` (not collected by default)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

PTX = b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def run(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real command line, streams kept as bytes."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "portlint", *args], cwd=cwd, capture_output=True,
                          env=env, timeout=timeout)


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



# --- F (medium). Unterminated raw strings make the directive reader quadratic ------------------

def test_f_directive_reader_is_near_linear_on_unterminated_raw_strings():
    """Promise: near-linear work. The rewritten directive reader (frontends/cuda/
    preprocessor.py `directives`) looks for the end of each raw string with
    `s.find(')' + delim + '"')` to the end of the text; an unterminated `R"a(` is then read
    as an ordinary string and the scan goes on from just after it, so n lines of `R"a(` cost
    n searches to the end of the file: O(n**2). 10,000 lines took 0.20 s, 20,000 0.64 s,
    40,000 2.7 s (x4 per doubling); a file under the 4 MB default `max-file-size` (800,000
    such lines) would take ~20 minutes. On the command line a 500 KB file of 100,000 such
    lines before a kernel took 4 min 43 s (`scan --target rocm -j 1`, one file). Checked
    through the module API: 80,000 lines (400 KB) within 2 s (took 12.3 s here; one pass is a
    few tens of milliseconds)."""
    sys.path.insert(0, str(REPO))
    from portlint.frontends.cuda.preprocessor import directives

    text = 'R"a(\n' * 80_000 + "#if 0\n#endif\n"
    start = time.monotonic()
    got = directives(text)
    elapsed = time.monotonic() - start
    assert [d.kind for d in got] == ["if", "endif"], got
    assert elapsed < 2, elapsed



# --- G (low). A chain of headers makes the header pass of the build scope quadratic -----------

def test_g_header_chain_is_resolved_in_near_linear_time():
    """Promise: near-linear work. `_headers` (index/build_scope.py) marks a header outside
    the ROCm build when every file including it is; it loops over all candidate headers
    `while changed`, each pass adding what it can, so a chain k.cu -> h3999.h -> h3998.h ->
    ... -> h0000.h (each header included by the one after it in sorted order) gains one
    header per pass: O(n**2) passes-by-headers. 500 headers took 0.10 s, 1,000 0.39 s, 2,000
    1.6 s (x4 per doubling); 20,000 one-line headers in a pull request take minutes. Checked
    through `build_scope` with the files in memory: 4,000 headers within 2 s (a worklist
    from each newly outside file to its includes is linear). Low: it needs thousands of
    files in the tree."""
    sys.path.insert(0, str(REPO))
    from portlint.index.build_scope import build_scope

    n = 4000
    names = [f"h{i:04d}.h" for i in range(n)]
    files = {"setup.py": b"if not IS_ROCM:\n    CUDAExtension('x', sources=['k.cu'])\n",
             "k.cu": f'#include "{names[-1]}"\n'.encode(), names[0]: b"\n"}
    for i in range(1, n):
        files[names[i]] = f'#include "{names[i - 1]}"\n'.encode()
    start = time.monotonic()
    scope = build_scope(Path("/nonexistent"), sorted(files), files.get)
    elapsed = time.monotonic() - start
    assert len(scope.outside) == n + 1
    assert elapsed < 2, elapsed



# --- H (low). The static cap of a loop rewrite trusts a `min` the module redefines -----------

_SHADOWED_MIN = """import jax
import jax.numpy as jnp


def min(a, b):
    return a + b


@jax.jit
def f(x, n):
    s = x
    for i in range(min(n, 8)):
        s = s * 2.0
    return s
"""


def test_h_loop_cap_is_read_only_from_the_builtin_min(tmp_path):
    """Promise: `--fix` changes only what it means to (a rewrite keeps what the code
    computes). `rewrites/python.py` `_range_cap` takes `range(min(n, 8))` as "at most 8
    trips" by the callee's spelling alone (`ast.unparse(func) == "min"`); a module that
    defines its own `min` (here `a + b`: n + 8 trips) gets the applied, unsafe fix
    `jax.lax.fori_loop(0, 8, ...)` with trips at or past n masked, i.e. min(n, 8) trips: the
    fixed code doubles `s` a different number of times. Checked on the JSON report: PTL802's
    fix says "loop over the static range to the cap 8" and its text ends with
    `jax.lax.fori_loop(0, 8, _loop_body_12, _carry_12)`. A `min` (or `range`) bound in the
    module or function is not the builtin: no capped rewrite (at most a display-only one)."""
    (tmp_path / "m.py").write_text(_SHADOWED_MIN)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "json", "m.py", cwd=tmp_path)
    fixes = [f["fix"] for f in json.loads(proc.stdout)["findings"] if f.get("fix")]
    capped = [fx for fx in fixes if fx["applicability"] != "display-only"
              and "fori_loop(0, 8" in "".join(e["text"] for e in fx["edits"])]
    assert not capped, capped



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



# --- J (medium). The cache key misses the license file that makes a folder vendored ----------

def test_j_cached_result_follows_the_vendored_role(tmp_path):
    """Promise: output is deterministic (a cached scan says what a fresh one says). Whether
    `cutlass/k.cu` is vendored depends on `cutlass/LICENSE.txt` (`roles._library_root`), but a
    CUDA file's cache key holds only its bytes, path and build-scope verdict
    (`engine._cross_file_digest`): scanned once with the license there (PTL201 a note), then
    with it removed, the cached note is shown again, exit 0, while `--no-cache` gives the
    error, exit 1 (checked by hand, both runs). A CI cache restored from main keeps every
    unchanged file of a folder that stopped being a library copy quiet."""
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n')
    (tmp_path / "cutlass").mkdir()
    (tmp_path / "cutlass" / "k.cu").write_bytes(PTX)
    (tmp_path / "cutlass" / "LICENSE.txt").write_text("BSD\n")
    cache = tmp_path / "cache"
    first = run("scan", "--no-progress", "--cache-dir", str(cache), "--format", "concise", ".", cwd=tmp_path)
    assert b"PTL201 note" in first.stdout, first.stdout
    (tmp_path / "cutlass" / "LICENSE.txt").unlink()
    cached = run("scan", "--no-progress", "--cache-dir", str(cache), "--format", "concise", ".", cwd=tmp_path)
    fresh = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=tmp_path)
    assert b"PTL201 error" in fresh.stdout, fresh.stdout
    assert (cached.stdout, cached.returncode) == (fresh.stdout, fresh.returncode), cached.stdout



# --- K (medium). Nested CMake if()s are re-judged for every command inside them ----------------

def test_k_nested_cmake_conditions_are_judged_once_each():
    """Promise: near-linear work. `_CMakeReader` (index/build_scope.py) judges, for every
    command, every condition of every enclosing `if()` again (`self.condition`, a regex
    tokenisation and a parse each): n nested `if(USE_ROCMi OR X)` each holding a `set()`
    cost O(n**2) condition parses. 250 levels took 0.32 s, 500 1.5 s, 1,000 5.5 s (x4 per
    doubling; `branch_commands` itself walks 2,000 levels in 0.11 s), and round two's
    5,000-level CMakeLists.txt would take minutes once PTL057 runs (`--target rocm`).
    Checked through the module API: 2,000 levels (74 KB) within 3 s (took 19.4 s here)."""
    sys.path.insert(0, str(REPO))
    from portlint.index.build_scope import _CMakeReader

    n = 2000
    src = "".join(f"if(USE_ROCM{i} OR X)\n  set(S a{i}.cu)\n" for i in range(n)) + "endif()\n" * n
    start = time.monotonic()
    _CMakeReader(src.encode(), "", ["a0.cu"], "CMakeLists.txt")
    elapsed = time.monotonic() - start
    assert elapsed < 3, elapsed
