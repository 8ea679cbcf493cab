"""Issue 26, round five: the attacker's tests of the items closed (tests/attacks/open_round5.py
holds the ones still open; docs/threat-model.md, "Round five"), each as the attacker wrote
it, with the near misses that must keep working beside them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
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


# --- A (high). A glob in setup.py or CMakeLists.txt stalls the scan -----------------------------

_STARS = "*a" * 6 + "*b.cu"
_GLOB_BUILDS = {
    "setup.py": ("import glob\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
                 f'if not IS_ROCM:\n    setup(ext_modules=[CUDAExtension("x", glob.glob("{_STARS}"))])\n'),
    "CMakeLists.txt": ('project(x LANGUAGES CXX)\nif(USE_ROCM)\n  enable_language(HIP)\nelse()\n'
                       f'  file(GLOB SRCS "{_STARS}")\n  add_library(x ${{SRCS}})\nendif()\n'),
}


@pytest.mark.parametrize("build", sorted(_GLOB_BUILDS))
def test_a_build_file_globs_are_matched_in_bounded_time(tmp_path, build):
    """Promise: every algorithm is near-linear or capped with a notice. PTL057's build scope
    (index/build_scope.py `matching`) turns a build file's glob into a Python regex, one
    `[^/]*` per `*`, and runs it over every file name of the project; a pattern of k stars
    against a long name that almost matches backtracks O(len**k). A pull request adds
    `glob.glob("*a*a*a*a*a*a*b.cu")` to setup.py (or `file(GLOB ...)` to CMakeLists.txt) and
    one file named `aaaa...a.cu` (200 a's): `--target rocm` (PTL057 on) never finishes.
    Measured on `matching` alone: 3 stars 0.19 s, 4 stars 4.8 s, 5 stars 166 s; the 14-star
    setup.py did not answer within 60 s on the command line. (`**/` repeated in a recursive
    glob is the same: 6 groups over a 60-folder path 1.2 s, x10 per group.) The gitignore
    matcher already drops such patterns with a notice (round two); the build scope should
    match globs without backtracking or refuse them (listing unknown, so in scope)."""
    (tmp_path / "k.cu").write_bytes(PTX)
    (tmp_path / ("a" * 200 + ".cu")).write_bytes(PTX)
    (tmp_path / build).write_text(_GLOB_BUILDS[build])
    proc = scan_within(60, "--target", "rocm", "--format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["findings"]



# --- B (high). setup.py lists that double per line ---------------------------------------------

def _doubling_setup(k: int) -> bytes:
    return ("s = ['k.cu']\n" + "s = s + s\n" * k
            + "if not IS_ROCM:\n    CUDAExtension('x', sources=s)\n").encode()


def test_b_setup_py_source_lists_cannot_double_per_line():
    """Promise: work near-linear in the input or capped with a notice. The setup.py reader
    (index/build_scope.py `_SetupReader.value`) evaluates `a + b` of two lists by
    concatenation and keeps one listing per item, so `s = s + s` written k times holds 2**k
    items: k=18 took 0.96 s and 262,144 listings, k=20 4.3 s and 1,048,576 listings, every
    line doubling time and memory (k=30 is a billion tuples: the CI runner runs out of
    memory; strings double the same way, `s = s + s` on a str). A 25-line setup.py in a pull
    request stalls every `--target rocm` scan. Checked through the module API (`read_setup`):
    a 21-line file must be read within 3 s and hold at most 100,000 listings (a fix can cap
    the list and call it unreadable)."""
    sys.path.insert(0, str(REPO))
    from portlint.index.build_scope import read_setup

    start = time.monotonic()
    reader = read_setup(_doubling_setup(21), "", ["k.cu"], "setup.py")
    elapsed = time.monotonic() - start
    assert reader is None or len(reader.listings) <= 100_000, len(reader.listings)
    assert elapsed < 10, elapsed


def test_b_setup_py_source_lists_cannot_double_on_the_command_line(tmp_path):
    """The same through the real command line: with a 22-line setup.py beside one CUDA file
    `scan --target rocm -j 1 .` took 6.9 s and 875 MB (peak RSS, /usr/bin/time -v); each
    added line doubles both. A 23-line one must be scanned within 5 s (a capped reader
    answers in well under a second)."""
    (tmp_path / "k.cu").write_bytes(PTX)
    (tmp_path / "setup.py").write_bytes(_doubling_setup(23))
    start = time.monotonic()
    proc = scan_within(120, "--target", "rocm", "--format", "json", ".", cwd=tmp_path)
    elapsed = time.monotonic() - start
    assert proc.returncode in (0, 1), proc.stderr
    assert elapsed < 30, elapsed



# --- C (medium). Merging an if/else of long source lists is quadratic -------------------------

def test_c_merging_branch_lists_is_near_linear():
    """Promise: near-linear work. After an `if`/`else` the reader merges each list variable
    of the two legs (`_merge`: `x + [i for i in y if i not in x]`), a membership test in a
    list for every item: O(n*m). Two legs of 4,000 sources each took 0.50 s (2,000: 0.14 s),
    so a 600 KB setup.py with 25,000 per leg takes ~20 s, and each further `if` that
    re-merges the variable pays it again. Checked through `read_setup`: 20,000 items per leg
    (each leg's list written out literally, 480 KB) within 3 s (a linear merge takes well
    under one)."""
    sys.path.insert(0, str(REPO))
    from portlint.index.build_scope import read_setup

    n = 20_000
    a = ",".join(f"'a{i}.cu'" for i in range(n))
    b = ",".join(f"'b{i}.cu'" for i in range(n))
    src = f"if IS_ROCM:\n    s = [{a}]\nelse:\n    s = [{b}]\nCUDAExtension('x', sources=s)\n".encode()
    start = time.monotonic()
    read_setup(src, "", ["a0.cu"], "setup.py")
    elapsed = time.monotonic() - start
    assert elapsed < 10, elapsed



# --- D (high). The vendored role is read from folders outside the scanned tree ----------------

def test_d_folders_above_the_scanned_tree_do_not_make_it_vendored(tmp_path):
    """Promise: nothing outside the tree decides a finding, and output is deterministic (the
    same tree gives the same result wherever it is checked out). roles.py `_vendored` matches
    every folder of the file's *display* path against the vendor folder names; a tree named
    on the command line by its absolute path (`portlint scan $CI_PROJECT_DIR`, an editor's
    workspace) has the folders above it in that path. A checkout under `.../third_party/proj`
    (or `external/`, `vendor/`: a GitLab group so named gives `/builds/external/proj`) turns
    every error of the tree into a note and the exit code from 1 into 0; scanned as `.` from
    inside, the same tree reports the error and exits 1. Checked by hand in /tmp: the
    absolute-path scan printed `PTL201 note` and exit 0, the relative one `PTL201 error`,
    exit 1."""
    tree = tmp_path / "third_party" / "proj"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "k.cu").write_bytes(PTX)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    inside = run("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "concise", ".", cwd=tree)
    assert inside.returncode == 1 and b"PTL201 error" in inside.stdout, inside.stdout
    outside = run("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "concise", str(tree), cwd=elsewhere)
    assert b"PTL201 error" in outside.stdout, outside.stdout
    assert outside.returncode == 1, outside.stdout



# --- near misses of A, B and D: what the bounds and the root must not change -------------------

def test_a_the_linear_glob_matcher_names_what_glob_names():
    from portlint.core.globs import matching

    files = ["src/x/y.cu", "src/y.cu", "y.cu", "src/a.cu", "src/b.cu", "src/!.cu", "k1.cu", "k2.cu", "kx.cu", "src/x/.cu"]
    assert matching(files, "src/**/*.cu", True) == ["src/x/y.cu", "src/y.cu", "src/a.cu", "src/b.cu", "src/!.cu", "src/x/.cu"]
    assert matching(files, "src/**/*.cu", False) == ["src/x/y.cu", "src/x/.cu"]  # `**` is `*` outside a recursive glob
    assert matching(files, "src/*.cu", False) == ["src/y.cu", "src/a.cu", "src/b.cu", "src/!.cu"]
    assert matching(files, "src/*.cu", False, star_crosses=True) == ["src/x/y.cu", "src/y.cu", "src/a.cu", "src/b.cu", "src/!.cu", "src/x/.cu"]
    assert matching(files, "src/[!a].cu", False) == ["src/y.cu", "src/b.cu", "src/!.cu"]
    assert matching(files, "k[0-9].cu", False) == ["k1.cu", "k2.cu"]
    assert matching(files, "k?.cu", False) == ["k1.cu", "k2.cu", "kx.cu"]


def test_b_a_setup_py_list_within_the_bound_is_still_read():
    from portlint.index.build_scope import read_setup

    text = "srcs = ['a0.cu']\n" + "".join(f"srcs = srcs + ['a{k}.cu']\n" for k in range(1, 300))
    text += "from torch.utils.cpp_extension import CUDAExtension\nif not IS_ROCM:\n    CUDAExtension('m', sources=srcs)\n"
    files = [f"a{k}.cu" for k in range(300)]
    reader = read_setup(text.encode(), "", files, "setup.py")
    assert sorted(listing.rel for listing in reader.listings) == sorted(files)


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

    import portlint.index.build_scope as build_scope

    n = 4000  # judged per command: ~76 s here; per leg: 0.4 s
    src = "".join(f"if(USE_ROCM{i} OR X)\n  set(S a{i}.cu)\n" for i in range(n)) + "endif()\n" * n
    readings = []
    real = build_scope._CMakeReader._condition

    def counted(self, text, has_amd_leg):
        readings.append(text)
        return real(self, text, has_amd_leg)

    build_scope._CMakeReader._condition = counted
    try:
        start = time.monotonic()
        _CMakeReader(src.encode(), "", ["a0.cu"], "CMakeLists.txt")
        elapsed = time.monotonic() - start
    finally:
        build_scope._CMakeReader._condition = real
    assert len(readings) <= n, len(readings)  # each condition read once
    assert elapsed < 10, elapsed


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

    text = 'R"a(\n' * 200_000 + "#if 0\n#endif\n"  # one search per opening: minutes; one in all: 0.4 s
    start = time.monotonic()
    got = directives(text)
    elapsed = time.monotonic() - start
    assert [d.kind for d in got] == ["if", "endif"], got
    assert elapsed < 10, elapsed


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

    n = 12_000  # the sweep version: ~40 s here; the worklist: 0.06 s
    names = [f"h{i:05d}.h" for i in range(n)]
    files = {"setup.py": b"if not IS_ROCM:\n    CUDAExtension('x', sources=['k.cu'])\n",
             "k.cu": f'#include "{names[-1]}"\n'.encode(), names[0]: b"\n"}
    for i in range(1, n):
        files[names[i]] = f'#include "{names[i - 1]}"\n'.encode()
    start = time.monotonic()
    scope = build_scope(Path("/nonexistent"), sorted(files), files.get)
    elapsed = time.monotonic() - start
    assert len(scope.outside) == n + 1
    assert elapsed < 10, elapsed


# --- D2 (medium). A license file beside the scanned path decides the role ---------------------

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


# --- near misses of D2, E and I: what stays as it was -------------------------------------------

def test_d_a_license_file_inside_the_scanned_tree_still_makes_it_vendored(tmp_path):
    """The library's folder is inside the scan root (`.`), or inside the project a marker
    declares (a configuration file above it; named alone, a file's tree is that project):
    its license file is read and the kernel is vendored, a note. (Named by itself with no
    marker, `cutlass` is its own project, as `cd cutlass && portlint scan .` reads it:
    tests/test_trust_roots.py.)"""
    sub = tmp_path / "cutlass" / "sub"
    sub.mkdir(parents=True)
    (sub / "k.cu").write_bytes(PTX)
    (tmp_path / "cutlass" / "LICENSE.txt").write_text("BSD\n")
    proc = run("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "concise", ".", cwd=tmp_path)
    assert proc.returncode == 0 and b"PTL201 note" in proc.stdout, proc.stdout
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n')
    for named, cwd in (("cutlass", tmp_path), (".", tmp_path), ("cutlass/sub/k.cu", tmp_path), (str(sub / "k.cu"), sub)):
        proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", named, cwd=cwd)
        assert proc.returncode == 0 and b"PTL201 note" in proc.stdout, (named, cwd, proc.stdout)
    piped = run("scan", "--no-progress", "--format", "concise", "-", "--stdin-filename",
                "cutlass/sub/k.cu", cwd=tmp_path, stdin=PTX)
    assert piped.returncode == 0 and b"PTL201 note" in piped.stdout, piped.stdout


def test_d_the_tree_is_the_scan_root_whatever_the_working_directory(tmp_path):
    """`cutlass/sub` named by its absolute path from another folder, or piped as `k.cu` from
    inside it: `cutlass/` is outside the tree both times, so its license file decides nothing."""
    sub = tmp_path / "cutlass" / "sub"
    sub.mkdir(parents=True)
    (sub / "k.cu").write_bytes(PTX)
    (tmp_path / "cutlass" / "LICENSE.txt").write_text("BSD\n")
    (tmp_path / "elsewhere").mkdir()
    for named, cwd in ((str(sub), tmp_path / "elsewhere"), ("k.cu", sub)):
        proc = run("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "concise", named, cwd=cwd)
        assert proc.returncode == 1 and b"PTL201 error" in proc.stdout, (named, cwd, proc.stdout)
    piped = run("scan", "--no-progress", "--target", "rocm", "--format", "concise", "-", "--stdin-filename", "k.cu",
                cwd=sub, stdin=PTX)
    assert piped.returncode == 1 and b"PTL201 error" in piped.stdout, piped.stdout


def test_d_a_folder_outside_the_tree_is_never_listed(tmp_path, monkeypatch):
    """The reader itself: a folder outside the tree (or with no tree known) is answered
    without being opened; one inside it is listed."""
    import portlint.index.roles as roles

    (tmp_path / "cutlass" / "sub").mkdir(parents=True)
    (tmp_path / "cutlass" / "LICENSE.txt").write_text("BSD\n")
    listed: list[str] = []
    real_scandir = roles.os.scandir
    monkeypatch.setattr(roles.os, "scandir", lambda p: listed.append(str(p)) or real_scandir(p))
    folder, names = str(tmp_path / "cutlass"), ("license*",)
    assert roles._library_root(folder, names, str(tmp_path / "cutlass" / "sub")) is False
    assert roles._library_root(folder, names, None) is False
    assert listed == []
    assert roles._library_root(folder, names, str(tmp_path)) is True
    assert roles._library_root(folder, names, folder) is True
    assert listed == [folder, folder]


def test_e_suppression_lands_on_the_compilers_line_with_the_files_own_line_break(tmp_path):
    """The comment goes on a line of its own before the PTX line as the compiler counts
    lines, indented like it and ended with a lone CR like every other line; nothing else
    changes, and a second pass has nothing to add."""
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n')
    (tmp_path / "k.cu").write_bytes(LONE_CR_KERNEL)
    run("scan", "--no-progress", "--no-cache", "--add-suppressions", "ported later", "k.cu", cwd=tmp_path)
    want = LONE_CR_KERNEL.replace(b"\r  asm", b"\r  // portlint: ignore[PTL201] -- ported later\r  asm")
    assert (tmp_path / "k.cu").read_bytes() == want
    again = run("scan", "--no-progress", "--no-cache", "--add-suppressions", "ported later", "k.cu", cwd=tmp_path)
    assert (tmp_path / "k.cu").read_bytes() == want and again.returncode == 0, again.stdout


def test_e_mixed_line_breaks_each_keep_their_own(tmp_path):
    """A file with LF, CRLF and lone-CR lines: each comment ends like the line it goes before."""
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n')
    src = (b'__global__ void a(float* x) {\n  asm volatile("membar.gl;");\n}\n'
           b'__global__ void b(float* x) {\r\n  asm volatile("membar.gl;");\r\n}\r\n'
           b'__global__ void c(float* x) {\r  asm volatile("membar.gl;");\r}\r')
    (tmp_path / "k.cu").write_bytes(src)
    run("scan", "--no-progress", "--no-cache", "--add-suppressions", "x", "k.cu", cwd=tmp_path)
    got = (tmp_path / "k.cu").read_bytes()
    comment = b"  // portlint: ignore[PTL201] -- x"
    assert got.count(comment + b"\n  asm") == 1 and got.count(comment + b"\r\n  asm") == 1, got
    assert got.count(comment + b"\r  asm") == 1 and got.count(comment) == 3, got
    proc = run("scan", "--no-progress", "--no-cache", "--format", "json", "k.cu", cwd=tmp_path)
    assert proc.returncode == 0 and not [f for f in json.loads(proc.stdout)["findings"] if not f.get("suppressed")]


def test_e_a_fix_is_re_parsed_as_the_compiler_reads_the_file():
    """The fix engine's re-parse check reads a lone-CR file in the compiler's lines too: an
    edit that breaks the code after `// c\r` is a regression, though tree-sitter alone reads
    the whole file as one comment."""
    from portlint.output.fixes import parse_regression

    before = b"// c\rint a;\r"
    assert parse_regression("cuda", before, b"// c\rint a(;\r") is not None
    assert parse_regression("cuda", before, b"// c\rint b;\r") is None


def test_i_gitlab_and_github_name_a_utf8_file_as_itself(tmp_path):
    """GitLab's `location.path` is the name itself; GitHub's `file=` is the name under the
    workflow command's own escapes, once (`%` `%25`, `,` `%2C`, `:` `%3A`); the JSON report
    keeps its declared percent spelling for the same file."""
    (tmp_path / "a%b,c:d.cu").write_bytes(PTX)
    args = ("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format")
    gitlab = json.loads(run(*args, "gitlab", ".", cwd=tmp_path).stdout)
    assert [f["location"]["path"] for f in gitlab] == ["a%b,c:d.cu"]
    github = run(*args, "github", ".", cwd=tmp_path).stdout
    assert b"::error file=a%25b%2Cc%3Ad.cu,line=2," in github, github
    doc = json.loads(run(*args, "json", ".", cwd=tmp_path).stdout)
    assert [f["path"] for f in doc["findings"]] == ["a%25b,c:d.cu"] and doc["path_escape"] == "percent"


def test_i_a_name_that_is_not_utf8_is_percent_written_once(tmp_path):
    """A byte that is not UTF-8 cannot be written as itself: GitLab gets `%FF`, GitHub
    `%25FF` (which it reads as `%FF`), never the backslash spelling of the file beside it."""
    (tmp_path / os.fsdecode(b"c\xff.cu")).write_bytes(PTX)
    args = ("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format")
    assert [f["location"]["path"] for f in json.loads(run(*args, "gitlab", ".", cwd=tmp_path).stdout)] == ["c%FF.cu"]
    github = run(*args, "github", ".", cwd=tmp_path).stdout
    assert {_github_property(line.split(b"file=", 1)[1].split(b",", 1)[0].decode())
            for line in github.splitlines() if b"file=" in line} == {"c%FF.cu"}, github


# --- L (low). A suppression on one line of a lone-CR Python file silences the lines after it ----

def test_l_a_suppression_in_a_lone_cr_python_file_covers_its_own_line_only(tmp_path):
    """Promise: a suppression silences the line it is on (a trailing comment) and nothing
    else. Python ends a line at a lone CR (its tokenizer, `ast` and the interpreter), and a
    `#` comment ends there too, so in `...devices('gpu')  # portlint: ignore[PTL901] -- this
    one only\\r...\\rdef g():\\r    return jax.devices('gpu')\\r` the comment is on line 5 and
    the second call on line 9. Suppressions are matched in the line model's numbering, where
    the whole file is line 1 (no LF), so the comment silences the second call too: 'No
    portability problems found', 2 findings suppressed; the same file with LF line breaks
    reports line 9 (checked by hand, both ways). `--add-suppressions` on such a file writes
    its comment above line 1, before the whole file, and with an LF where the file has lone
    CRs. Found while fixing E (the CUDA side, whose suppressions are matched in the
    compiler's lines). Severity low: the file must be written with lone CRs, and a suppression is an
    in-tree comment a reviewer sees, but it hides findings on lines it is not on."""
    (tmp_path / "m.py").write_bytes(
        b"import jax\r\r\rdef f():\r    return jax.devices('gpu')  # portlint: ignore[PTL901] -- this one only\r"
        b"\r\rdef g():\r    return jax.devices('gpu')\r")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "json", "m.py", cwd=tmp_path)
    live = [f for f in json.loads(proc.stdout)["findings"] if not f.get("suppressed")]
    assert [f["rule"] for f in live] == ["PTL901"], live
    assert proc.returncode == 1, proc.stdout


# --- near misses of L: what the comment still covers ------------------------------------------

LONE_CR_PY = (b"import jax\r\r\rdef f():\r    return jax.devices('gpu')  # portlint: ignore[PTL901] -- this one only\r"
              b"\r\rdef g():\r    return jax.devices('gpu')\r")


def test_l_the_comment_still_silences_its_own_line(tmp_path):
    """The trailing comment silences the call on its own line (Python's line 5), and the
    finding it silenced names it at its place in the line model's numbering (line 1, the
    file has no LF); the live finding is reported where the line model puts it too."""
    (tmp_path / "m.py").write_bytes(LONE_CR_PY)
    doc = json.loads(run("scan", "--no-progress", "--no-cache", "--format", "json", "--sarif-include-suppressed",
                         "m.py", cwd=tmp_path).stdout)
    assert sorted((bool(f["suppressed"]), f["rule"]) for f in doc["findings"]) == [(False, "PTL901"), (True, "PTL901")], doc
    silenced = next(f for f in doc["findings"] if f["suppressed"])
    reason = silenced["suppressed"]["reason"]
    assert reason == "suppressed by comment on line 1: this one only", reason
    live = next(f for f in doc["findings"] if not f["suppressed"])
    text = LONE_CR_PY.decode()
    first = text.index("'gpu'") + 1  # the columns of the two `'gpu'` arguments
    second = text.index("'gpu'", first) + 1
    assert (silenced["start_line"], silenced["start_column"]) == (1, first), silenced
    assert (live["start_line"], live["start_column"]) == (1, second), live


def test_l_a_comment_alone_on_its_python_line_covers_the_next_one_only(tmp_path):
    """A comment alone on a Python line (lone-CR ended) covers the line after it, as with LF
    line breaks, and nothing further; the same file with LFs gives the same findings."""
    src = (b"import jax\r\r\rdef f():\r    # portlint: ignore[PTL901] -- next line\r    return jax.devices('gpu')\r"
           b"\r\rdef g():\r    return jax.devices('gpu')\r")
    for name, data in (("cr.py", src), ("lf.py", src.replace(b"\r", b"\n"))):
        (tmp_path / name).write_bytes(data)
    doc = json.loads(run("scan", "--no-progress", "--no-cache", "--format", "json", "--sarif-include-suppressed", ".",
                         cwd=tmp_path).stdout)
    states = {name: sorted(bool(f["suppressed"]) for f in doc["findings"] if f["path"] == name and f["rule"] == "PTL901")
              for name in ("cr.py", "lf.py")}
    assert states == {"cr.py": [False, True], "lf.py": [False, True]}, doc["findings"]


def test_l_unused_and_malformed_directives_are_placed_in_the_line_models_numbering(tmp_path):
    """PTL001 (a suppression that silenced nothing) and PTL002 (a malformed directive) of a
    lone-CR Python file point at the comment itself: line 1 of the line model, at the
    column where `portlint:` starts."""
    src = b"import jax\rx = 1  # portlint: ignore[PTL901] -- nothing here\ry = 2  # portlint: ignore[ptl901]\r"
    (tmp_path / "m.py").write_bytes(src)
    doc = json.loads(run("scan", "--no-progress", "--no-cache", "--format", "json", "m.py", cwd=tmp_path).stdout)
    text = src.decode()
    got = sorted((f["rule"], f["start_line"], f["start_column"]) for f in doc["findings"])
    first = text.index("portlint:") + 1
    second = text.index("portlint:", first) + 1
    assert got == [("PTL001", 1, first), ("PTL002", 1, second)], doc["findings"]


def test_l_add_suppressions_writes_in_pythons_lines_with_a_lone_cr(tmp_path):
    """`--add-suppressions` puts each comment on a line of its own before the call as Python
    counts lines, indented like it and ended with a lone CR like the file's lines; the
    rescan has nothing left, and a second pass changes nothing."""
    src = b"import jax\r\r\rdef f():\r    return jax.devices('gpu')\r\r\rdef g():\r    return jax.devices('gpu')\r"
    (tmp_path / "m.py").write_bytes(src)
    run("scan", "--no-progress", "--no-cache", "--add-suppressions", "later", "m.py", cwd=tmp_path)
    want = src.replace(b"\r    return", b"\r    # portlint: ignore[PTL901] -- later\r    return")
    assert (tmp_path / "m.py").read_bytes() == want
    again = run("scan", "--no-progress", "--no-cache", "--add-suppressions", "later", "m.py", cwd=tmp_path)
    assert (tmp_path / "m.py").read_bytes() == want and again.returncode == 0, again.stdout
