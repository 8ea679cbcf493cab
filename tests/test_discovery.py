"""Which files a scan reads: .gitignore, default excludes, languages, explicit files."""

from __future__ import annotations

from pathlib import Path

from portlint.core.config import Settings
from portlint.discovery.files import discover
from portlint.discovery.languages import classify


def names(tmp_path, *paths, **kw):
    settings = Settings(root=tmp_path, **kw)
    files, notices = discover([Path(p) for p in paths] or [tmp_path], settings)
    return [f.display for f in files], notices


def test_gitignore_nested_and_negation(tmp_path):
    (tmp_path / ".gitignore").write_text("build/\n*.gen.cu\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x.cu").write_text("")
    (tmp_path / "a.gen.cu").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("*.cuh\n!keep.cuh\n")
    (tmp_path / "sub" / "drop.cuh").write_text("")
    (tmp_path / "sub" / "keep.cuh").write_text("")
    (tmp_path / "sub" / "k.cu").write_text("")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "m.py").write_text("")
    (tmp_path / "README.md").write_text("")
    got, _ = names(tmp_path, tmp_path)
    assert got == ["sub/k.cu", "sub/keep.cuh"]
    got, _ = names(tmp_path, tmp_path, respect_gitignore=False)
    assert "build/x.cu" in got and "a.gen.cu" in got and "node_modules/m.py" not in got


def test_sorted_and_deduplicated(tmp_path):
    for n in ("b.py", "a.cu", "c.cuh"):
        (tmp_path / n).write_text("")
    got, _ = names(tmp_path, tmp_path / "b.py", tmp_path, tmp_path / "a.cu")
    assert got == ["a.cu", "b.py", "c.cuh"]


def test_language_by_extension_then_content():
    assert classify("k.cu", b"")[0] == "cuda"
    assert classify("k.hip", b"")[0] == "cuda"
    assert classify("util.cpp", b"int main() { return 0; }")[0] is None
    assert classify("ops.cpp", b"__global__ void k() {}")[0] == "cuda"
    assert classify("ops.h", b'#include <cuda_runtime.h>\n')[0] == "cuda"
    lang, tags = classify("m.py", b"import jax.numpy as jnp\nfrom torch_xla.core import xla_model as xm\n")
    assert lang == "python" and {"jax", "torch_xla"} <= tags
    assert "triton" in classify("k.py", b"import triton\nimport triton.language as tl\n")[1]
    assert "gaudi" in classify("g.py", b"import habana_frameworks.torch.core as htcore\n")[1]
    assert classify("notes.txt", b"__global__")[0] is None
    assert classify("kernel.ptx", b".version 8.0")[0] == "ptx"


def test_overlapping_named_folders_are_not_a_symlink_loop(tmp_path):
    """`portlint scan . sub` (or `sub .`) scans each file once and reports no symlink loop."""
    from portlint.core.config import Settings
    from portlint.discovery.files import discover

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "b.cu").write_text("__global__ void k() {}\n")
    settings = Settings(root=tmp_path)
    for order in ([tmp_path, tmp_path / "sub"], [tmp_path / "sub", tmp_path]):
        files, notices = discover(order, settings)
        assert [f.display for f in files] == ["b.cu", "sub/a.cu"]
        assert notices == []
