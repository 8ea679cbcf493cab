"""Issue 26, "trust, round two": one test per numbered attack (each failed before the fix),
plus the mechanisms underneath (one writer, one reader, bounded work per input)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_portlint

ASM = '__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(a checkout with one finding, a victim file outside it)."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "k.cu").write_text(ASM)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    return repo, victim


# --- 1. reports never write through a committed symlink -------------------------------

@pytest.mark.parametrize("command", [
    ["scan", "src/", "--format", "sarif", "-o", "portlint.sarif", "--exit-zero", "--no-cache"],
    ["report", "src/", "-o", "portlint.sarif", "--no-cache"],
])
def test_1_report_output_refuses_a_committed_symlink(tmp_path, command):
    repo, victim = tree(tmp_path)
    (repo / "portlint.sarif").symlink_to("../victim")
    proc = run_portlint(*command, cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert "symlink" in proc.stderr and proc.stderr.count("\n") == 1
    assert victim.read_text() == "precious\n"
    assert (repo / "portlint.sarif").is_symlink()


def test_1_merge_sarif_output_refuses_a_symlink_and_a_symlinked_folder(tmp_path):
    repo, victim = tree(tmp_path)
    shard = repo / "a.sarif"
    assert run_portlint("scan", "src/", "--format", "sarif", "-o", "a.sarif", "--exit-zero", "--no-cache", cwd=repo).returncode == 0
    (repo / "all.sarif").symlink_to("../victim")
    proc = run_portlint("merge-sarif", str(shard), "-o", "all.sarif", cwd=repo)
    assert proc.returncode == 2 and "symlink" in proc.stderr
    assert victim.read_text() == "precious\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "out").symlink_to("../outside")
    proc = run_portlint("merge-sarif", str(shard), "-o", "out/sub/all.sarif", cwd=repo)
    assert proc.returncode == 2 and "outside" in proc.stderr
    assert list(outside.iterdir()) == []


def test_1_writer_is_atomic_keeps_the_mode_and_refuses_read_only(tmp_path):
    from portlint.core.files import WriteRefused, write_file

    target = tmp_path / "r.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_file(target, b"new")
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["r.txt"]  # no temporary file left behind
    os.chmod(target, 0o440)
    with pytest.raises(WriteRefused, match="read-only"):
        write_file(target, b"again")
    assert target.read_bytes() == b"new"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(WriteRefused, match="regular"):
        write_file(fifo, b"x")


def test_17_output_onto_a_scanned_source_is_refused(tmp_path):
    repo, _ = tree(tmp_path)
    before = (repo / "src" / "k.cu").read_text()
    proc = run_portlint("scan", "src/", "--output", "src/k.cu", "--no-cache", cwd=repo)
    assert proc.returncode == 2 and "this scan read" in proc.stderr
    assert (repo / "src" / "k.cu").read_text() == before


# --- 3. a baseline or shard that is /dev/zero or a FIFO --------------------------------

@pytest.mark.parametrize("kind", ["zero", "fifo"])
def test_3_baseline_and_shards_that_are_special_files_are_refused(tmp_path, kind):
    repo, _ = tree(tmp_path)
    special = repo / "base.json"
    if kind == "zero":
        special.symlink_to("/dev/zero")
    else:
        os.mkfifo(special)
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", "src/", "--no-cache", "--baseline", "base.json"],
                          cwd=repo, capture_output=True, text=True, timeout=60, env={**os.environ})
    assert proc.returncode == 2 and "not a regular file" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "portlint", "merge-sarif", "base.json"],
                          cwd=repo, capture_output=True, text=True, timeout=60, env={**os.environ})
    assert proc.returncode == 2 and "not a regular file" in proc.stderr


# --- 12. merge-sarif on wrong types ---------------------------------------------------

def _shard(repo: Path, name: str = "a.sarif") -> dict:
    assert run_portlint("scan", "src/", "--format", "sarif", "-o", name, "--exit-zero", "--no-cache", cwd=repo).returncode == 0
    return json.loads((repo / name).read_text())


@pytest.mark.parametrize("mutate", [
    lambda d: d["runs"][0].__setitem__("results", "abc"),
    lambda d: d["runs"][0].__setitem__("tool", "portlint"),
    lambda d: d["runs"][0]["tool"].__setitem__("driver", []),
    lambda d: d["runs"][0]["results"][0].__setitem__("locations", 7),
    lambda d: d["runs"][0]["results"][0].__setitem__("ruleId", 3),
    lambda d: d["runs"][0].__setitem__("invocations", [5]),
    lambda d: d["runs"][0]["tool"]["driver"].__setitem__("rules", [{"id": []}]),
])
def test_12_merge_sarif_wrong_types_are_a_usage_error(tmp_path, mutate):
    repo, _ = tree(tmp_path)
    doc = _shard(repo)
    mutate(doc)
    (repo / "bad.sarif").write_text(json.dumps(doc))
    proc = run_portlint("merge-sarif", "bad.sarif", cwd=repo)
    assert proc.returncode == 2, proc.stdout
    assert "internal error" not in proc.stderr and "bad.sarif" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_12_merge_sarif_same_shard_twice_is_not_doubled(tmp_path):
    repo, _ = tree(tmp_path)
    doc = _shard(repo)
    proc = run_portlint("merge-sarif", "a.sarif", "a.sarif", cwd=repo)
    if proc.returncode == 0:
        assert len(json.loads(proc.stdout)["runs"][0]["results"]) == len(doc["runs"][0]["results"])
    else:
        assert proc.returncode == 2 and "twice" in proc.stderr


# --- 17. deep or huge-integer baseline JSON -------------------------------------------

@pytest.mark.parametrize("body", [
    "[" * 100000 + "]" * 100000,
    '{"schema": "portlint-report", "findings": [], "n": ' + "9" * 5000 + "}",
    '{"schema": "portlint-report", "findings": [{"path": "a", "fingerprints": {"portlint/v1": 5}}]}',
    '{"schema": "portlint-report", "findings": [{"path": "a", "fingerprints": {"portlint/v1": "x", "primaryLocationLineHash": []}}]}',
])
def test_17_hostile_baseline_json_is_a_usage_error(tmp_path, body):
    repo, _ = tree(tmp_path)
    (repo / "base.json").write_text(body)
    proc = run_portlint("scan", "src/", "--no-cache", "--baseline", "base.json", cwd=repo)
    assert proc.returncode == 2
    assert "internal error" not in proc.stderr and "base.json" in proc.stderr


def run_bounded(code: str, timeout: float) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with this worktree first on the path; a budget
    overrun is a TimeoutExpired, i.e. a failure, not a flaky timing comparison."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc


# --- 2. a new file named `Dockerfile.x blob` under --diff-base ------------------------

def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True, capture_output=True)


def test_2_diff_base_with_a_file_named_like_a_cat_file_header(tmp_path):
    repo, _ = tree(tmp_path)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    (repo / "src" / "Dockerfile.x blob").write_text("FROM nvidia/cuda:12.4.0-devel-ubuntu22.04\n")
    (repo / "src" / "new blob 12.cu").write_text(ASM)
    proc = run_portlint("scan", ".", "--no-cache", "--diff-base", "HEAD", cwd=repo)
    assert "internal error" not in proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert "new blob 12.cu:2:3" in proc.stdout  # a new file: every line is changed
    assert "src/k.cu" not in proc.stdout  # unchanged since the base


def test_2_cat_file_headers_are_read_from_their_end():
    from portlint.findings.changed_lines import _parse_batch

    out = b"HEAD:Dockerfile.x blob missing\n" + b"0123abcd blob 3\nabc\n" + b"HEAD:a b 7 missing\n"
    assert _parse_batch(out, 3) == [None, b"abc", None]
    assert _parse_batch(b"", 2) == [None, None]


# --- 7. --diff-base on reshuffled brace lines -----------------------------------------

def test_7_changed_lines_are_near_linear_on_repeated_lines():
    # the 20 KB file of brace lines, at 10x: 200 KB, reshuffled
    run_bounded(
        "import random\n"
        "from portlint.findings.changed_lines import _changed_against\n"
        "rng = random.Random(26)\n"
        "lines = [rng.choice(['{', '}', '  }', '{ {']) for _ in range(100_000)]\n"
        "old = '\\n'.join(lines).encode()\n"
        "rng.shuffle(lines)\n"
        "new = '\\n'.join(lines).encode()\n"
        "changed = _changed_against(old, new)\n"
        "assert changed and max(changed) <= len(lines)\n"
        "small_old = b'a\\nb\\nc\\nd\\n'\n"
        "assert _changed_against(small_old, b'a\\nB\\nc\\nd\\ne\\n') == {2, 5}\n",
        timeout=60,
    )


def test_7_large_diff_still_finds_exact_changes_around_unique_lines():
    from portlint.findings.changed_lines import _changed_against

    old = [f"line {i}" for i in range(6000)]
    new = list(old)
    new[100] = "changed 100"
    new.insert(5000, "inserted")
    changed = _changed_against("\n".join(old).encode(), "\n".join(new).encode())
    assert changed == {101, 5001}


# --- 8. an exponential .gitignore line ------------------------------------------------

def test_8_gitignore_glob_cost_is_bounded(tmp_path):
    # the 51-byte line at 10x (`*a` x 250, then b) and its 25x one, and a folder
    # whose name is as long as a file system allows
    repo = tmp_path / "repo"
    deep = repo / ("a" * 250) / ("a" * 250)
    deep.mkdir(parents=True)
    (deep / "k.cu").write_text(ASM)
    (repo / ".gitignore").write_text("*a" * 250 + "b\n" + "*a" * 25 + "b\n" + "*.o\n" + "/".join(["**"] * 40) + "/x\n")
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", ".", "--no-cache"], cwd=repo, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1 and "k.cu:2:3" in proc.stdout
    assert ".gitignore: 3 pattern(s)" in proc.stderr


def test_8_the_patterns_kept_still_apply(tmp_path):
    (tmp_path / "keep.cu").write_text(ASM)
    (tmp_path / "gen_x_y.cu").write_text(ASM)
    (tmp_path / ".gitignore").write_text("gen_*_*.cu\n")
    proc = run_portlint("scan", ".", "--no-cache", cwd=tmp_path)
    assert "keep.cu" in proc.stdout and "gen_x_y" not in proc.stdout


# --- 6. bound_before once per `if` in a huge jitted function --------------------------

def test_6_bound_before_walks_a_function_once():
    # 10x the 2,000 ifs; before, each query walked the whole function again
    # (20,000 walks of ~400,000 nodes). Counting the walks makes the budget exact.
    run_bounded(
        "import ast\n"
        "import portlint.rewrites.python as rw\n"
        "walks = []\n"
        "real_walk = rw.walk\n"
        "rw.walk = lambda node: (walks.append(1), real_walk(node))[1]\n"
        "body = ''.join(f'    if x > {i}:\\n        v{i} = y + {i}\\n    else:\\n        y = y - 1\\n' for i in range(20000))\n"
        "fn = ast.parse('def f(x, y):\\n' + body + '    return y\\n').body[0]\n"
        "ifs = [n for n in fn.body if isinstance(n, ast.If)]\n"
        "for k, node in enumerate(ifs):\n"
        "    bound = rw.bound_before(fn, node.lineno)\n"
        "    assert 'x' in bound and 'y' in bound and (f'v{k}' not in bound) and (k == 0 or f'v{k-1}' in bound)\n"
        "    assert len(bound) == 2 + k\n"
        "assert len(walks) == 1, len(walks)\n"
        "assert set(rw.bound_before(fn, ifs[3].lineno)) == {'x', 'y', 'v0', 'v1', 'v2'}\n",
        timeout=120,
    )


# --- 9. deeply nested if() in CMakeLists.txt ------------------------------------------

def test_9_deeply_nested_cmake_keeps_its_findings(tmp_path):
    depth = 5000  # 10x the 500
    text = ("cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX CUDA)\n"
            + "if(A)\n" * depth + "message(STATUS deep)\n" + "endif()\n" * depth)
    (tmp_path / "CMakeLists.txt").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", ".", "--no-cache", "--format", "concise"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "PTL003" not in proc.stdout, proc.stdout
    assert "CMakeLists.txt:2:" in proc.stdout and "PTL050" in proc.stdout


# --- 14. editor server: hostile URIs and a change to a document never opened ----------

def test_14_uris_that_name_no_local_file_are_not_analysed():
    pytest.importorskip("pygls")
    from portlint.server.server import fs_path

    assert fs_path("file://host/share/x.cu") is None
    assert fs_path("file:////host/share/x.cu") is None
    assert fs_path("file:///tmp/b%00c.cu") is None
    assert fs_path("untitled:Untitled-1") is None
    assert fs_path("file:///tmp/a%20b.cu") == Path("/tmp/a b.cu")
    assert fs_path("file://localhost/tmp/k.cu") == Path("/tmp/k.cu")


def test_14_server_survives_hostile_uris_and_unknown_changes(tmp_path):
    pytest.importorskip("pytest_lsp")
    from lsprotocol import types
    from test_lsp_server import KERNEL, Session, run

    async def scenario():
        async with Session(tmp_path) as s:
            messages: list[str] = []

            @s.client.feature(types.WINDOW_SHOW_MESSAGE)
            def _shown(params):
                messages.append(params.message)

            s.open("file://host/share/x.cu", KERNEL)
            s.open("file:///" + str(tmp_path).lstrip("/") + "/b%00c.cu", KERNEL)
            s.replace_all((tmp_path / "never_opened.cu").as_uri(), KERNEL, 2)
            good = (tmp_path / "k.cu").as_uri()
            s.open(good, KERNEL)
            published = await s.next_diagnostics(good)
            assert published.diagnostics  # the server is alive and analysing
            assert not any("PTL003" in str(d.code) for d in published.diagnostics)
            assert not messages, messages
            return published

    run(scenario())


# --- 13. --shard with a superscript digit or a 5,000-digit N --------------------------

@pytest.mark.parametrize("spec", ["²/3", "1/" + "9" * 5000, "1/٣", "0/0", "1/2/3", " /2"])
def test_13_shard_spec_is_a_usage_error(tmp_path, spec):
    repo, _ = tree(tmp_path)
    proc = run_portlint("scan", "src/", "--no-cache", "--shard", spec, cwd=repo)
    assert proc.returncode == 2 and "--shard" in proc.stderr and "internal error" not in proc.stderr


def test_13_shard_spec_parsing():
    from portlint.discovery.shard import ShardError, parse_shard

    assert parse_shard("2/4") == (2, 4) and parse_shard(" 1 / 1 ") == (1, 1)
    with pytest.raises(ShardError):
        parse_shard("²/3")


# --- 4. --add-suppressions after a string continued with a backslash ------------------

@pytest.mark.parametrize("text", [
    'const char* s = "abc\\\n"; __global__ void k() { asm volatile("membar.gl;"); }\n',
    'const char* s = R"(abc\n)"; __global__ void k() { asm volatile("membar.gl;"); }\n',
    '/* a\n*/ __global__ void k() { asm volatile("membar.gl;"); }\n',
])
def test_4_add_suppressions_never_writes_inside_a_literal_or_comment(tmp_path, text):
    (tmp_path / "s.cu").write_text(text)
    for _ in range(2):  # and a second run adds nothing either
        proc = run_portlint("scan", "s.cu", "--no-cache", "--add-suppressions", "reviewed", cwd=tmp_path)
        assert "no suppression comment added" in proc.stderr, proc.stderr
        assert (tmp_path / "s.cu").read_text() == text


def test_4_macro_continuations_still_get_an_inline_comment(tmp_path):
    text = '#define X(a) \\\n  asm volatile("membar.gl;")\n__global__ void k() { X(1); }\n'
    (tmp_path / "m.cu").write_text(text)
    proc = run_portlint("scan", "m.cu", "--no-cache", "--add-suppressions", "ok", cwd=tmp_path)
    assert "added suppression comments in 1 file" in proc.stderr
    assert proc.returncode == 0, proc.stdout


# --- 16. BOM files, read-only files -------------------------------------------------

BOM = b"\xef\xbb\xbf"


def test_16_a_bom_does_not_hide_a_python_file(tmp_path):
    (tmp_path / "a.py").write_bytes(BOM + b"import torch\ntorch.cuda.synchronize()\n")
    proc = run_portlint("scan", "a.py", "--no-cache", "--target", "tpu", "--format", "concise", cwd=tmp_path)
    assert "a.py:2:1: PTL902" in proc.stdout


def test_16_a_finding_on_line_1_of_a_bom_file_can_be_suppressed(tmp_path):
    target = tmp_path / "l1.py"
    target.write_bytes(BOM + b"import torch; torch.cuda.synchronize()\n")
    proc = run_portlint("scan", "l1.py", "--no-cache", "--target", "tpu", "--add-suppressions", "ok", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = target.read_bytes()
    assert data.startswith(BOM + b"# portlint: ignore[PTL902] -- ok\n")
    again = run_portlint("scan", "l1.py", "--no-cache", "--target", "tpu", "--add-suppressions", "ok", cwd=tmp_path)
    assert again.returncode == 0 and target.read_bytes() == data


def test_16_read_only_files_are_not_rewritten(tmp_path):
    # write_file refuses a read-only file by its mode bits, so this holds for root (CI) too
    target = tmp_path / "k.cu"
    target.write_text(ASM)
    os.chmod(target, 0o444)
    proc = run_portlint("scan", "k.cu", "--no-cache", "--add-suppressions", "ok", cwd=tmp_path)
    assert "read-only" in proc.stderr and target.read_text() == ASM


def test_16_read_only_refused_by_mode_even_for_root(tmp_path):
    from portlint.core.config import Settings
    from portlint.discovery.files import discover
    from portlint.output.add_suppressions import suppression_findings
    from portlint.output.fixes import apply_fixes
    from portlint.pipeline.engine import scan_files

    target = tmp_path / "k.cu"
    target.write_text(ASM)
    os.chmod(target, 0o444)
    settings = Settings(root=tmp_path, jobs=1, cache_dir=None)
    files, _ = discover([tmp_path], settings)
    result = scan_files(files, settings)
    to_fix, _ = suppression_findings(result.findings, files, settings, "ok")
    run = apply_fixes(to_fix, settings, files, write=True)
    assert run.changed == 0 and any("read-only" in n.message for n in run.notices)
    assert target.read_text() == ASM


# --- 5. the project root never climbs out of what was scanned -------------------------

def test_5_package_at_the_top_of_the_scanned_tree_does_not_pull_in_its_siblings(tmp_path):
    from portlint.core.config import Settings
    from portlint.index.project import project_root

    outside = tmp_path / "sibling.py"
    outside.write_text("import torch\n")
    scanned = tmp_path / "tree"
    (scanned / "sub").mkdir(parents=True)
    (scanned / "__init__.py").write_text("")
    (scanned / "sub" / "__init__.py").write_text("")
    (scanned / "sub" / "m.py").write_text("import torch\n")
    settings = Settings(root=scanned)
    assert project_root(settings, [scanned / "sub" / "m.py"]) == scanned.resolve()
    # named from outside the working directory: the folder holding the files is the limit
    assert project_root(Settings(root=tmp_path / "elsewhere"), [scanned / "sub" / "m.py"]) == (scanned / "sub").resolve()


def test_5_cache_of_a_scanned_tree_does_not_name_files_outside_it(tmp_path):
    scanned = tmp_path / "tree"
    scanned.mkdir()
    (scanned / "__init__.py").write_text("")
    (scanned / "m.py").write_text("import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n")
    (tmp_path / "secret_sibling.py").write_text("import jax\nTOKEN = 1\n")
    proc = run_portlint("scan", ".", "--target", "tpu", cwd=scanned)
    assert proc.returncode in (0, 1), proc.stderr
    cached = b"".join(p.read_bytes() for p in (scanned / ".portlint_cache").rglob("*") if p.is_file())
    assert b"secret_sibling" not in cached


# --- 15. in-tree include-dirs pointing out of the tree --------------------------------

@pytest.mark.parametrize("entry", ["/etc", "/", "../outside", "inc/../../outside", "link"])
def test_15_in_tree_include_dirs_are_confined_to_the_tree(tmp_path, entry):
    repo, _ = tree(tmp_path)
    (tmp_path / "outside").mkdir()
    (repo / "link").symlink_to("../outside")
    (repo / "portlint.toml").write_text(f'include-dirs = ["inc", {json.dumps(entry)}]\n')
    proc = run_portlint("scan", "src/", "--no-cache", cwd=repo)
    assert proc.returncode == 2 and "include-dirs" in proc.stderr and "outside the project" in proc.stderr


def test_15_include_dirs_inside_the_tree_still_work(tmp_path):
    from portlint.core.config import Settings, load_config

    (tmp_path / "inc").mkdir()
    (tmp_path / "portlint.toml").write_text('include-dirs = ["inc", "./inc/../inc"]\n')
    assert load_config(tmp_path / "portlint.toml", Settings()).include_dirs == ("inc", "./inc/../inc")


# --- 17. stdin names that pick no language, an unparsable pyproject.toml -------------

@pytest.mark.parametrize("name", ["", "README", "notes.txt"])
def test_17_stdin_filename_that_names_no_scanned_language_is_a_usage_error(tmp_path, name):
    proc = run_portlint("scan", "-", "--stdin-filename", name, "--no-cache", cwd=tmp_path, input=ASM)
    assert proc.returncode == 2 and "--stdin-filename" in proc.stderr


def test_17_stdin_with_a_real_name_still_scans(tmp_path):
    proc = run_portlint("scan", "-", "--stdin-filename", "k.cu", "--no-cache", cwd=tmp_path, input=ASM)
    assert proc.returncode == 1 and "k.cu:2:3" in proc.stdout


def test_17_unparsable_pyproject_gets_a_notice(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["flash-attn==2.3"\n')
    proc = run_portlint("scan", "pyproject.toml", "--no-cache", cwd=tmp_path)
    assert "pyproject.toml: not valid TOML" in proc.stderr


def test_17_config_that_is_a_special_file_or_too_deep_is_a_usage_error(tmp_path):
    repo, _ = tree(tmp_path)
    (repo / "portlint.toml").symlink_to("/dev/zero")
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", "src/", "--no-cache"], cwd=repo, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1 and "internal error" not in proc.stderr  # not a config file: not read at all
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", "src/", "--no-cache", "--config", "portlint.toml"], cwd=repo,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and "not a regular file" in proc.stderr
    (repo / "portlint.toml").unlink()
    (repo / "portlint.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    proc = run_portlint("scan", "src/", "--no-cache", cwd=repo)
    assert proc.returncode == 2 and "internal error" not in proc.stderr


# --- 10, 11. escape sequences and backticks from names and contents ------------------

EVIL = "k\x1b]0;owned\x07\x1b[2J`[Approved](x.invalid)`"


def _evil_tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / f"{EVIL}.py").write_text("import torch\nx = torch.zeros(3).cuda()  # \x1b[31mred\x1b]8;;x\x07\n")
    return repo


def _assert_no_raw_controls(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text, repr(text[:400])


def test_10_github_format_and_diff_escape_controls(tmp_path):
    repo = _evil_tree(tmp_path)
    proc = run_portlint("scan", ".", "--no-cache", "--format", "github", "--target", "tpu", cwd=repo)
    assert proc.stdout.startswith("::") and "\\x1b" in proc.stdout
    _assert_no_raw_controls(proc.stdout)
    _assert_no_raw_controls(proc.stderr)
    proc = run_portlint("scan", ".", "--no-cache", "--diff", "--unsafe-fixes", "--target", "tpu", cwd=repo)
    assert "@@" in proc.stdout, proc.stdout + proc.stderr
    _assert_no_raw_controls(proc.stdout)


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_10_11_reports_escape_controls_and_backticks(tmp_path, fmt):
    repo = _evil_tree(tmp_path)
    proc = run_portlint("report", f"{EVIL}.py", "--no-cache", "--format", fmt, "--target", "tpu", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    _assert_no_raw_controls(proc.stdout)
    _assert_no_raw_controls(proc.stderr)
    if fmt == "markdown":
        from portlint.output.escape import split_code_spans

        row = next(line for line in proc.stdout.splitlines() if "Approved" in line)
        # the name is one code span: no part of it is Markdown text that could render a link
        outside = "".join(p for is_code, p in split_code_spans(row) if not is_code)
        assert "Approved" not in outside and "](" not in outside


def test_11_code_span_holds_any_backticks():
    from portlint.output.escape import code_span, split_code_spans

    for name in ["a`b", "``", "`x`", "a```b`", "` lead", "trail `"]:
        span = code_span(name)
        assert split_code_spans(span) == [(True, span)]
        assert span.strip("`").strip(" ") == name.strip(" ") or name.strip("`") == ""


def test_12_merge_sarif_notifications_are_deduplicated_in_linear_time(tmp_path):
    repo, _ = tree(tmp_path)
    doc = _shard(repo)
    notes = [{"level": "note", "message": {"text": f"n{i}"}} for i in range(40_000)]
    doc["runs"][0]["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": notes + notes[:10]}]
    (repo / "big.sarif").write_text(json.dumps(doc))
    out = run_bounded(
        "import json, sys\nfrom pathlib import Path\nfrom portlint.output.merge_sarif import merge_files\n"
        f"log = json.loads(merge_files([Path({str(repo / 'big.sarif')!r})]))\n"
        "print(len(log['runs'][0]['invocations'][0]['toolExecutionNotifications']))\n",
        timeout=60,
    )
    assert out.stdout.strip() == "40000"


# ---- round 3 (an attack pass after this round): config values that broke the scan -----------

@pytest.mark.parametrize("body", ["x = " + "[" * 5000 + "]" * 5000, "x = " + "9" * 5000], ids=["nested", "huge-int"])
def test_r3_a_hostile_pyproject_is_a_config_error_naming_the_file(tmp_path, body):
    (tmp_path / "k.cu").write_text(ASM)
    (tmp_path / "pyproject.toml").write_text("# portlint\n" + body + "\n")
    proc = run_portlint("scan", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "pyproject.toml: invalid TOML" in proc.stderr and "internal error" not in proc.stderr


def test_r3_a_huge_max_file_size_is_refused_not_a_green_scan_of_nothing(tmp_path):
    (tmp_path / "k.cu").write_text(ASM)
    (tmp_path / "pyproject.toml").write_text("[tool.portlint]\nmax-file-size = 9223372036854775807\n")
    proc = run_portlint("scan", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2 and "max-file-size must be at most" in proc.stderr, proc.stdout + proc.stderr
