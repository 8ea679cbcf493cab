"""One way to read a file (portlint/core/files.py, `read_limited`): what it refuses, that no
other module reads a scanned file around it, and that a C/CUDA file the scan reads and the
header pass reaches is read once."""

from __future__ import annotations

import ast
import collections
import os
import threading
from pathlib import Path

import pytest

from conftest import around_owner, scan_paths
from portlint.core import files
from portlint.core.files import NotRead, read_bytes, read_limited

# modules that read with open / Path.read_bytes / Path.read_text, and why that is no scanned file
OWN_DATA = {
    "portlint/analyses/cuda/hipify.py": "the rename tables under rules/",
    "portlint/core/cache.py": "portlint's own source (the code fingerprint) and its entries (O_NOFOLLOW, in the cache folder)",
    "portlint/core/catalog.py": "the rule TOML under rules/",
    "portlint/core/rule_ids.py": "the id ranges under rules/",
    "portlint/core/vocabulary.py": "the vocabulary under rules/",
    "portlint/frontends/buildfiles/tables.py": "the build tables under rules/",
    "portlint/frontends/cuda/name_tables.py": "the name tables under rules/",
    "portlint/frontends/cuda/optional_hints.py": "the hint tables under rules/",
    "portlint/frontends/python/returns.py": "the vocabulary under rules/",
    "portlint/index/build_scope.py": "the build vocabulary under rules/",
}


def _bare_reads(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            out.append(f"{node.lineno}: open(")
        elif isinstance(f, ast.Attribute) and f.attr in ("read_bytes", "read_text"):
            out.append(f"{node.lineno}: .{f.attr}(")
        elif isinstance(f, ast.Attribute) and f.attr == "open" and isinstance(f.value, ast.Name) and f.value.id == "os":
            flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
            if "WRONLY" not in flags and "devnull" not in ast.unparse(node.args[0]):
                out.append(f"{node.lineno}: os.open(")
    return out


def test_no_module_reads_a_file_around_core_files():
    found, stale = around_owner(_bare_reads, OWN_DATA, ("portlint/core/files.py",))
    assert found == {}, f"read through portlint.core.files.read_limited / read_bytes instead: {found}"
    assert stale == [], f"no longer reads for itself, remove from OWN_DATA: {stale}"


def test_reads_a_regular_file_up_to_the_limit(tmp_path):
    f = tmp_path / "a.cu"
    f.write_bytes(b"x" * 10)
    assert read_limited(f, 10) == b"x" * 10
    with pytest.raises(NotRead) as exc:
        read_limited(f, 9)
    assert exc.value.why == "too-large" and exc.value.size == 10


def test_refuses_a_folder_a_fifo_and_a_device(tmp_path):
    with pytest.raises(NotRead) as exc:
        read_limited(tmp_path)
    assert exc.value.why == "directory"
    fifo = tmp_path / "pipe.cu"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(pytest.raises(NotRead, read_limited, fifo)), daemon=True)
    t.start()
    t.join(10)
    assert done and done[0].value.why == "not-regular"  # refused, and the open never blocked
    (tmp_path / "zero.h").symlink_to("/dev/zero")
    with pytest.raises(NotRead) as exc:
        read_limited(tmp_path / "zero.h")
    assert exc.value.why == "not-regular"


def test_a_file_that_grows_past_the_limit_is_refused(tmp_path, monkeypatch):
    f = tmp_path / "a.cu"
    f.write_bytes(b"x" * 100)
    real_fstat = os.fstat

    def small(fd):  # the size it claims when opened; 100 bytes are there to read
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 5, st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(files.os, "fstat", small)
    with pytest.raises(NotRead) as exc:
        read_limited(f, 50)
    assert exc.value.why == "grew"


def test_read_bytes_names_the_file_in_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"^cannot read baseline .*missing\.json: No such file"):
        read_bytes(tmp_path / "missing.json", ValueError, "baseline")
    (tmp_path / "big").write_bytes(b"12345")
    with pytest.raises(ValueError, match=r"big is larger than 4 bytes$"):
        read_bytes(tmp_path / "big", ValueError, limit=4)
    with pytest.raises(ValueError, match=r"not a regular file$"):
        read_bytes(tmp_path, ValueError)


def count_opens(monkeypatch, name) -> collections.Counter:
    """How often each file (by `name(path)`) is opened through core.files from now on."""
    opened: collections.Counter = collections.Counter()
    real_open = files.open_for_reading

    def counting(path):
        opened[name(path)] += 1
        return real_open(path)

    monkeypatch.setattr(files, "open_for_reading", counting)
    return opened


@pytest.mark.parametrize("with_cache", [False, True])
def test_a_header_the_scan_reads_is_read_once(tmp_path, monkeypatch, with_cache):
    """`z.cuh` is reached from `a.cu` before the scan comes to it; `a.cuh` is scanned before
    `b.cu` reaches it: each file is opened once either way."""
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "a.cu").write_text('#include "z.cuh"\n__global__ void k() { asm("mov.u32 %0, %%laneid;" : "=r"(x)); }\n')
    (tree / "z.cuh").write_text("#pragma once\n#define WIDTH 32\n")
    (tree / "a.cuh").write_text("#pragma once\n#define V 1\n")
    (tree / "b.cu").write_text('#include "a.cuh"\n__global__ void k2() {}\n')
    opened = count_opens(monkeypatch, lambda path: os.path.basename(str(path)))
    extra = {"cache_dir": tmp_path / "cache"} if with_cache else {}
    result = scan_paths([tree], root=tree, **extra)
    assert result.files_scanned == 4
    assert [f.path for f in result.findings] == ["a.cu"]
    assert dict(opened) == {"a.cu": 1, "z.cuh": 1, "a.cuh": 1, "b.cu": 1}


def test_the_build_scope_sweep_reuses_reads_and_keeps_none(tmp_path, monkeypatch):
    """The sweep (`keep=False`) takes a file the scan's graph holds, and holds nothing it
    reads itself: every worker that builds a build scope sweeps the whole project."""
    from portlint.core.config import Settings
    from portlint.frontends.cuda.includes import IncludeGraph

    (tmp_path / "k.cuh").write_text("#define W 32\n")
    opened = count_opens(monkeypatch, lambda path: os.path.basename(str(path)))
    graph = IncludeGraph(Settings(root=tmp_path))
    path = str(tmp_path / "k.cuh")
    assert graph.read(path, keep=False) == graph.read(path, keep=False) == b"#define W 32\n"
    assert opened["k.cuh"] == 2 and graph.header(path) is not None and opened["k.cuh"] == 3
    graph.read(path, keep=False)
    graph.read(path)
    assert opened["k.cuh"] == 3


def test_a_file_is_read_by_the_sweep_and_the_scan_at_most(tmp_path, monkeypatch):
    """A package whose setup.py builds `b.cu` for CUDA only: the build scope's include sweep
    reads the C/CUDA files the scan has not read yet, and the scan reads each once at the most
    (a header the walks reach and the scan reads is one read, not two)."""
    from test_build_scope import SETUP, KERNELS

    tree = tmp_path / "pkg"
    for rel, text in {"setup.py": SETUP, **KERNELS}.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    (tree / "csrc/cuda/b.cu").write_text('__global__ void k() { asm("mov.u32 %0, %%laneid;" : "=r"(x)); }\n')
    (tree / "portlint.toml").write_text("")
    opened = count_opens(monkeypatch, lambda path: Path(path).relative_to(tree).as_posix())
    result = scan_paths([tree], root=tree, config_file=tree / "portlint.toml", targets=("rocm",))
    assert ("csrc/cuda/b.cu", "PTL057") in {(f.path, f.rule_id) for f in result.findings}  # the scope was built
    counts = {rel: opened[rel] for rel in KERNELS}
    # the files the scan read before the scope was built are not read again by its sweep
    assert set(counts.values()) == {1, 2}, counts


def test_a_read_after_the_scan_sees_the_file_as_it_is_now(tmp_path):
    """--add-suppressions reads the files again after the scan: the bytes on disk, not the
    scan's shared read (which the scan itself keeps using)."""
    from portlint.core.config import Settings
    from portlint.discovery.files import SourceFile
    from portlint.pipeline.engine import read_source, scan_files

    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    settings = Settings(root=tmp_path, jobs=1)
    sf = SourceFile(tmp_path / "k.cu", "k.cu", str(tmp_path))
    scan_files([sf], settings)
    (tmp_path / "k.cu").write_text("__global__ void k2() {}\n")
    assert read_source(sf, settings, once=True)[0] == b"__global__ void k() {}\n"
    assert read_source(sf, settings)[0] == b"__global__ void k2() {}\n"
