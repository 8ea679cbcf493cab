"""Bad input gets a one-line notice naming the file, and the scan goes on."""

from __future__ import annotations

import os

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
    import portlint.engine as engine

    (tmp_path / "secret.cu").write_text(BAD_ASM)
    (tmp_path / "open.cu").write_text(BAD_ASM)
    real_open = engine.open_source

    def guarded_open(path):
        if str(path).endswith("secret.cu"):
            raise PermissionError(13, "Permission denied")
        return real_open(path)

    monkeypatch.setattr(engine, "open_source", guarded_open)
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
    from portlint import registry
    from portlint.registry import load_family

    load_family("cuda_ptx")
    det = registry._DETECTORS["PTL201"]

    def boom(*args):
        raise RuntimeError("synthetic failure")

    monkeypatch.setitem(registry._DETECTORS, "PTL201", det.__class__(**{**det.__dict__, "func": boom}))
    monkeypatch.setitem(registry._LOADED, "cuda_ptx", [registry._DETECTORS["PTL201"]])
    import portlint.engine as engine

    monkeypatch.setattr(engine, "_PLAN", None)
    (tmp_path / "a.cu").write_text(BAD_ASM)
    (tmp_path / "b.cu").write_text(BAD_ASM)
    result = scan_paths([tmp_path], root=tmp_path)
    internal = [f for f in result.findings if f.rule_id == "PTL003"]
    assert len(internal) == 2 and "synthetic failure" in internal[0].message
    monkeypatch.setattr(engine, "_PLAN", None)


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
