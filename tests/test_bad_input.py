"""Bad input gets a one-line notice naming the file, and the scan goes on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_portlint, scan_paths

BAD_ASM = '__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def test_binary_non_utf8_huge_and_syntax_errors_do_not_stop_the_scan(tmp_path):
    (tmp_path / "good.cu").write_text(BAD_ASM)
    (tmp_path / "binary.cu").write_bytes(b"\x7fELF\x00\x00\x01")
    (tmp_path / "latin1.cu").write_bytes(b"// caf\xe9\n" + BAD_ASM.encode())
    (tmp_path / "huge.cu").write_text(BAD_ASM + "// pad\n" * 2000)
    (tmp_path / "broken.py").write_text("import jax\ndef f(:\n")
    proc = run_portlint("scan", ".", "--no-cache", "--max-file-size", "5000", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert any("binary.cu" in ln and "binary" in ln for ln in lines)
    assert any("latin1.cu" in ln and "UTF-8" in ln for ln in lines)
    assert any("huge.cu" in ln and "limit" in ln for ln in lines)
    assert any("broken.py" in ln and "syntax error" in ln for ln in lines)
    assert "good.cu:2:3: PTL201" in proc.stdout
    assert "latin1.cu:3:3: PTL201" in proc.stdout  # decoded with replacement and still scanned


def test_unreadable_file(tmp_path, monkeypatch):
    """A file that cannot be opened (permissions; simulated, since tests may run as root)."""
    import portlint.core.files as files

    (tmp_path / "secret.cu").write_text(BAD_ASM)
    (tmp_path / "open.cu").write_text(BAD_ASM)
    real_open = files.open_for_reading

    def guarded_open(path):
        if str(path).endswith("secret.cu"):
            raise PermissionError(13, "Permission denied")
        return real_open(path)

    monkeypatch.setattr(files, "open_for_reading", guarded_open)
    result = scan_paths([tmp_path], root=tmp_path)
    (notice,) = [n for n in result.notices if n.path == "secret.cu"]
    assert "Permission denied" in notice.message and notice.level == "error"
    assert [f.path for f in result.findings] == ["open.cu"]


def test_unreadable_directory_as_non_root_or_missing(tmp_path):
    proc = run_portlint("scan", "missing_dir", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2 and "missing_dir" in proc.stderr


def test_symlink_loop_and_broken_link(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_text(BAD_ASM)
    os.symlink("..", tmp_path / "src" / "loop")
    os.symlink("nowhere.cu", tmp_path / "src" / "dangling.cu")
    os.symlink("self.cu", tmp_path / "self.cu")
    proc = run_portlint("scan", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.count("PTL201 error") == 1
    assert "dangling.cu" in proc.stderr and "broken symlink" in proc.stderr
    assert "self.cu" in proc.stderr


def test_detector_crash_becomes_internal_error_finding(tmp_path, monkeypatch):
    from portlint.core import registry
    from portlint.core.registry import load_family

    load_family("cuda_ptx")
    det = registry._DETECTORS["PTL201"]

    def boom(*args):
        raise RuntimeError("synthetic failure")

    monkeypatch.setitem(registry._DETECTORS, "PTL201", det.__class__(**{**det.__dict__, "func": boom}))
    monkeypatch.setitem(registry._LOADED, "cuda_ptx", [registry._DETECTORS["PTL201"]])
    import portlint.findings.selection as selection

    monkeypatch.setattr(selection, "_PLAN", None)
    (tmp_path / "a.cu").write_text(BAD_ASM)
    (tmp_path / "b.cu").write_text(BAD_ASM)
    result = scan_paths([tmp_path], root=tmp_path)
    internal = [f for f in result.findings if f.rule_id == "PTL003"]
    assert len(internal) == 2 and "synthetic failure" in internal[0].message
    monkeypatch.setattr(selection, "_PLAN", None)


def test_portlint_never_imports_scanned_python(tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "evil.py").write_text(f"import jax\nopen({str(marker)!r}, 'w').write('x')\n")
    run_portlint("scan", ".", "--no-cache", cwd=tmp_path)
    assert not marker.exists()


def _run_limited(args, cwd, timeout=60):
    """The command line with a 1 GB address-space limit and a timeout, so a scan that would
    block on a FIFO or read /dev/zero without end fails the test instead of the machine."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run([sys.executable, "-m", "portlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit)


def test_fifo_and_device_named_on_the_command_line_are_skipped(tmp_path):
    (tmp_path / "good.cu").write_text(BAD_ASM)
    os.mkfifo(tmp_path / "pipe.cu")
    proc = _run_limited(["scan", "pipe.cu", "/dev/zero", "good.cu", "--no-cache"], tmp_path)
    assert proc.returncode == 1, proc.stderr  # good.cu's finding; nothing else went wrong
    lines = proc.stderr.strip().splitlines()
    assert any("pipe.cu" in ln and "FIFO" in ln for ln in lines), lines
    assert any("/dev/zero" in ln and "device" in ln for ln in lines), lines
    assert "good.cu:2:3: PTL201" in proc.stdout


def test_size_limit_holds_for_a_file_that_reports_size_zero(tmp_path):
    """/proc files are regular files that stat as 0 bytes, like /dev/zero-ish sources: the
    limit must be enforced on what is read, not on what stat says."""
    maps = "/proc/self/maps"
    assert os.stat(maps).st_size == 0
    proc = _run_limited(["scan", maps, "--no-cache", "--max-file-size", "100"], tmp_path)
    assert "over the 100-byte limit" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr

def _deep_python_files(folder):
    """The three shapes that broke out of the engine: RecursionError (a long concatenation,
    a deep attribute chain) and MemoryError (100,000 unary minuses) from Python's parser."""
    (folder / "concat.py").write_text("import torch\nx = " + " + ".join(["'a'"] * 3000) + "\n")
    (folder / "attrs.py").write_text("import torch\nx = a" + ".b" * 100_000 + "\n")
    (folder / "minus.py").write_text("import torch\nx = " + "-" * 100_000 + "1\n")
    return ("concat.py", "attrs.py", "minus.py")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_deep_python_expressions_are_a_notice_and_the_scan_goes_on(tmp_path, jobs):
    names = _deep_python_files(tmp_path)
    for i in range(8):  # enough files that -j 2 really uses worker processes
        (tmp_path / f"good{i}.cu").write_text(BAD_ASM)
    proc = run_portlint("scan", ".", "--no-cache", "--isolated", "-j", jobs, "--exit-zero", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for name in names:
        (line,) = [ln for ln in proc.stderr.splitlines() if name in ln]
        assert "too deeply nested" in line
    assert proc.stdout.count("PTL201 error") == 8
    # without --exit-zero the exit code is the findings' (1), never a crash's
    assert run_portlint("scan", ".", "--no-cache", "--isolated", "-j", jobs, cwd=tmp_path).returncode == 1
    (tmp_path / "only").mkdir()
    _deep_python_files(tmp_path / "only")
    assert run_portlint("scan", "only", "--no-cache", "--isolated", "-j", jobs, cwd=tmp_path).returncode == 0


def test_failure_outside_any_detector_is_a_notice_for_that_file(tmp_path, monkeypatch):
    """A crash in post-processing (not in a detector) loses that file's findings only."""
    import portlint.pipeline.engine as engine

    real = engine.apply_findings_stage

    def fragile(ctx, plan, result):
        if ctx.path == "bad.cu":
            raise RecursionError("maximum recursion depth exceeded")
        return real(ctx, plan, result)

    monkeypatch.setattr(engine, "apply_findings_stage", fragile)
    (tmp_path / "bad.cu").write_text(BAD_ASM)
    (tmp_path / "good.cu").write_text(BAD_ASM)
    result = scan_paths([tmp_path], root=tmp_path)
    assert [f.path for f in result.findings] == ["good.cu"]
    (notice,) = [n for n in result.notices if n.path == "bad.cu"]
    assert notice.level == "error" and "RecursionError" in notice.message
    assert result.files_scanned == 1


def test_a_skipped_file_is_not_counted_as_scanned(tmp_path):
    (tmp_path / "huge.cu").write_text(BAD_ASM + "// pad\n" * 2000)
    (tmp_path / "binary.cu").write_bytes(b"\x7fELF\x00\x00\x01")
    proc = run_portlint("scan", ".", "--no-cache", "--isolated", "--max-file-size", "5000", cwd=tmp_path)
    assert "No portability problems found in 0 files." in proc.stdout
    (tmp_path / "small.cu").write_text("int x;\n")
    proc = run_portlint("scan", ".", "--no-cache", "--isolated", "--max-file-size", "5000", cwd=tmp_path)
    assert "No portability problems found in 1 file." in proc.stdout


def test_terminal_escapes_in_source_are_shown_escaped(tmp_path):
    hostile = '__global__ void k(float* x) {\n  asm volatile("membar.gl;"); // \x1b]0;owned\x07\x1b[2J\u202e\n}\n'
    (tmp_path / "k.cu").write_text(hostile)
    proc = run_portlint("scan", ".", "--no-cache", "--isolated", "--color", "always", cwd=tmp_path)
    assert "PTL201" in proc.stdout
    assert "\x07" not in proc.stdout and "\u202e" not in proc.stdout and "\x1b]" not in proc.stdout
    assert "\x1b[2J" not in proc.stdout
    assert "\\x1b]0;owned\\x07\\x1b[2J\\u202e" in proc.stdout
    # the caret still sits under `asm`
    lines = run_portlint("scan", ".", "--no-cache", "--isolated", "--color", "never", cwd=tmp_path).stdout.splitlines()
    (src,) = [i for i, ln in enumerate(lines) if "| " in ln and "asm volatile" in ln]
    assert lines[src].index("asm") == lines[src + 1].index("^")


def test_notices_are_printed_once_on_stderr(tmp_path):
    (tmp_path / "broken.py").write_text("import jax\ndef f(:\n")
    proc = run_portlint("scan", ".", "--no-cache", "--isolated", cwd=tmp_path)
    assert proc.stderr.count("syntax error") == 1
    assert "syntax error" not in proc.stdout


def test_python_parser_warnings_do_not_echo_source_on_stderr(tmp_path):
    """ast.parse prints SyntaxWarnings (with the scanned line in them, raw) unless silenced."""
    (tmp_path / "w.py").write_text('import jax\nx = 1if True else 2  # \x1b[2J\ny = 1()\njax.devices("gpu")\n')
    proc = run_portlint("scan", "w.py", "--no-cache", "--isolated", cwd=tmp_path)
    assert proc.returncode == 1 and "PTL901" in proc.stdout
    assert "SyntaxWarning" not in proc.stderr and "\x1b[2J" not in proc.stderr, proc.stderr


def test_file_names_with_escapes_are_shown_escaped(tmp_path):
    (tmp_path / "k\x1b[2J.cu").write_text(BAD_ASM)
    (tmp_path / "b\x1b]0;x\x07.cu").write_bytes(b"\x00binary")
    proc = run_portlint("scan", ".", "--no-cache", "--isolated", cwd=tmp_path)
    assert "k\\x1b[2J.cu:2:3: PTL201" in proc.stdout
    assert "b\\x1b]0;x\\x07.cu" in proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr


_KILLER = r'''
import os, signal, sys
from pathlib import Path
from portlint.core import registry
from portlint.core.config import Settings
from portlint.discovery.files import discover
from portlint.pipeline.engine import scan_files

registry.load_family("cuda_ptx")
real = registry._DETECTORS["PTL201"]

def killer(*args):
    if b"KILL-THE-WORKER" in args[-1].data:  # args[-1] is the FileContext
        os.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does
    return real.func(*args)

planted = real.__class__(**{**real.__dict__, "func": killer})
registry._DETECTORS["PTL201"] = planted
registry._LOADED["cuda_ptx"] = [planted]
root = Path(sys.argv[1])
settings = Settings(root=root, jobs=2)
files, _ = discover([root], settings)
result = scan_files(files, settings)
print(sorted({f.path for f in result.findings}))
print([(n.path, n.message) for n in result.notices])
print(result.files_scanned)
'''


def test_a_worker_process_that_dies_costs_only_its_file(tmp_path):
    """multiprocessing.Pool waited forever for a killed worker's file; the scan now retries
    the files that were in progress alone and gives the one that kills again a notice."""
    import subprocess
    import sys

    for i in range(12):
        (tmp_path / f"good{i:02}.cu").write_text(BAD_ASM)
    (tmp_path / "deadly.cu").write_text(BAD_ASM.replace("{\n", "{  // KILL-THE-WORKER\n", 1))
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(tmp_path)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert proc.returncode == 0, proc.stderr
    import ast

    paths, notices, scanned = (ast.literal_eval(line) for line in proc.stdout.strip().splitlines())
    assert paths == [f"good{i:02}.cu" for i in range(12)]
    (notice,) = notices
    assert notice[0] == "deadly.cu" and "died" in notice[1]
    assert scanned == 12


def test_a_worker_that_dies_while_the_python_model_is_built_costs_only_its_file(tmp_path):
    """With Python files in the scan, the CUDA files start in workers forked before the
    project model is built (workers.EarlyStart); a death there loses no other file either."""
    import subprocess
    import sys

    for i in range(12):
        (tmp_path / f"good{i:02}.cu").write_text(BAD_ASM)
    (tmp_path / "deadly.cu").write_text(BAD_ASM.replace("{\n", "{  // KILL-THE-WORKER\n", 1) + "\n" * 400)  # largest: taken first
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/train.py").write_text("import jax\n\n\n@jax.jit\ndef step(x):\n    if x > 0:\n        return x\n    return -x\n")
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(tmp_path)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert proc.returncode == 0, proc.stderr
    import ast

    paths, notices, scanned = (ast.literal_eval(line) for line in proc.stdout.strip().splitlines())
    assert paths == [f"good{i:02}.cu" for i in range(12)] + ["pkg/train.py"]
    (notice,) = notices
    assert notice[0] == "deadly.cu" and "died" in notice[1]
    assert scanned == 14


@pytest.mark.parametrize("with_cache", [False, True])
def test_failure_while_reading_is_a_notice_for_that_file(tmp_path, monkeypatch, with_cache):
    import portlint.pipeline.engine as engine

    real = engine.read_source

    def fragile(sf, settings, **how):
        if sf.display == "bad.cu":
            raise MemoryError()
        return real(sf, settings, **how)

    monkeypatch.setattr(engine, "read_source", fragile)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.cu").write_text(BAD_ASM)
    (tmp_path / "src" / "good.cu").write_text(BAD_ASM)
    extra = {"cache_dir": tmp_path / "cache"} if with_cache else {}
    result = scan_paths([tmp_path / "src"], root=tmp_path / "src", **extra)
    assert [f.path for f in result.findings] == ["good.cu"]
    (notice,) = [n for n in result.notices if n.path == "bad.cu"]
    assert notice.level == "error" and "MemoryError while reading or caching" in notice.message
    assert result.files_scanned == 1


def test_the_pool_after_the_early_workers_forks_again():
    """A joined executor thread stays listed in /proc/self/task for a moment; the pool that
    follows EarlyStart saw it, picked forkserver, and its fresh workers lost what the parent
    had loaded (CI, on a loaded machine). After the early pool, the process forks again."""
    import subprocess
    import sys

    code = (
        "from concurrent.futures import ProcessPoolExecutor\n"
        "import multiprocessing, os\n"
        "from portlint.pipeline import workers\n"
        "for _ in range(20):\n"
        "    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('fork'))\n"
        "    pool.submit(os.getpid).result()\n"
        "    pool.shutdown(wait=True)\n"
        "    workers._settle_threads(1)\n"
        "    assert workers._start_method() == 'fork', os.listdir('/proc/self/task')\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_every_pool_of_ours_leaves_the_process_forkable(tmp_path):
    """Not only EarlyStart's pool: a library caller (or `--watch`) scanning twice in one
    process gets a forked pool each time, because the Python-file pool also waits for its
    threads to leave."""
    import subprocess
    import sys

    src = tmp_path / "src"
    src.mkdir()
    for k in range(20):
        (src / f"m{k}.py").write_text("import torch\nx = torch.zeros(3, device='cuda')\n")
        (src / f"k{k}.cu").write_text(BAD_ASM)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from portlint.core.config import Settings\n"
        "from portlint.discovery.files import discover\n"
        "from portlint.pipeline import engine, workers\n"
        "src = Path(sys.argv[1])\n"
        "pools = []\n"
        "real = workers.scan_parallel\n"
        "workers.scan_parallel = lambda *a, **k: (pools.append(1), real(*a, **k))[1]\n"
        "for _ in range(3):\n"
        "    settings = Settings(root=src, jobs=2)\n"
        "    files, _ = discover([src], settings)\n"
        "    result = engine.scan_files(files, settings)\n"
        "    assert len([f for f in result.findings if f.rule_id == 'PTL201']) == 20, result.findings\n"
        "    assert workers._start_method() == 'fork', workers._os_threads()\n"
        "assert len(pools) == 3, pools\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_settling_does_not_wait_for_threads_that_were_there_before():
    """A caller's own long-lived threads (XLA's pools, a server's worker) are counted before
    the pool starts, so the wait after it ends at once."""
    import threading
    import time

    from portlint.pipeline import workers

    gate = threading.Event()
    t = threading.Thread(target=gate.wait, daemon=True)
    t.start()
    try:
        before = workers._os_threads()
        assert before >= 2
        start = time.monotonic()
        workers._settle_threads(before)
        assert time.monotonic() - start < 0.5
    finally:
        gate.set()
        t.join()
