"""The content-hash cache: hits, invalidation (file, header, rules, code, config), corrupt
and misplaced entries, unwritable cache directories, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from portlint.pipeline import engine
from portlint.core.cache import Cache
from portlint.core.config import Settings
from portlint.discovery.files import discover

KERNEL = """\
#include "defs.h"
__global__ void k(unsigned* out) {
  unsigned v;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));
  out[threadIdx.x] = v;
}
"""


def make_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "portlint.toml").write_text("")
    (root / "kernel.cu").write_text(KERNEL)
    (root / "defs.h").write_text("#define BLOCK 128\n")
    (root / "model.py").write_text('import torch\nx = torch.zeros(3, device="cuda")\n')
    return root


ALL = ["defs.h", "kernel.cu", "model.py"]  # defs.h is read too (then found to hold no CUDA)


def settings_for(root: Path, **overrides) -> Settings:
    s = Settings(root=root, cache_dir=root / ".portlint_cache", jobs=1)
    for k, v in overrides.items():
        setattr(s, k, v)
    return s


class Counter:
    """Wraps engine.scan_source to count the files that were really analysed."""

    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        real = engine.scan_source

        def counting(sf, data, settings):
            self.paths.append(sf.display)
            return real(sf, data, settings)

        monkeypatch.setattr(engine, "scan_source", counting)


def scan(root: Path, settings: Settings):
    files, _ = discover([root], settings)
    return engine.scan_files(files, settings)


def findings(result) -> list[dict]:
    return [f.to_dict() for f in result.findings]


def entries(root: Path) -> list[Path]:
    """The per-file result entries (the Python project model keeps its own under project/)."""
    cache = root / ".portlint_cache"
    return sorted(p for p in cache.rglob("*.json") if p.relative_to(cache).parts[0] != "project")


def test_second_scan_is_served_from_the_cache(tmp_path, monkeypatch):
    root = make_project(tmp_path)
    counter = Counter(monkeypatch)
    first = scan(root, settings_for(root))
    assert sorted(counter.paths) == ALL
    assert first.findings, "the project is meant to have findings"
    counter.paths.clear()
    second = scan(root, settings_for(root))
    assert counter.paths == []
    assert findings(second) == findings(first)
    assert (root / ".portlint_cache" / ".gitignore").read_text().strip().endswith("*")


def test_changed_file_only_rescans_that_file(tmp_path, monkeypatch):
    root = make_project(tmp_path)
    counter = Counter(monkeypatch)
    scan(root, settings_for(root))
    counter.paths.clear()
    (root / "model.py").write_text('import torch\ny = torch.ones(2, device="cuda")\n')
    result = scan(root, settings_for(root))
    assert counter.paths == ["model.py"]
    assert findings(result) == findings(scan(root, settings_for(root, cache_dir=None)))


def test_changed_header_invalidates_the_file_that_includes_it(tmp_path, monkeypatch):
    root = make_project(tmp_path)
    counter = Counter(monkeypatch)
    scan(root, settings_for(root))
    counter.paths.clear()
    (root / "defs.h").write_text("#define BLOCK 256\n")
    scan(root, settings_for(root))
    assert sorted(counter.paths) == ["defs.h", "kernel.cu"]


def test_rule_file_change_invalidates(tmp_path, monkeypatch):
    root = make_project(tmp_path)
    counter = Counter(monkeypatch)
    scan(root, settings_for(root))
    counter.paths.clear()
    import portlint.core.catalog

    real = portlint.core.catalog.rules_fingerprint()
    monkeypatch.setattr(portlint.core.catalog, "rules_fingerprint", lambda: real + "-edited")
    scan(root, settings_for(root))
    assert sorted(counter.paths) == ALL


def test_rule_fingerprint_follows_rule_file_bytes(tmp_path, monkeypatch):
    import portlint.core.catalog

    src = portlint.core.catalog.rules_root()
    copy = tmp_path / "rules"
    import shutil

    shutil.copytree(src, copy)
    monkeypatch.setattr(portlint.core.catalog, "rules_root", lambda: copy)
    before = portlint.core.catalog.rules_fingerprint()
    rule = sorted(copy.glob("*/PTL*.toml"))[0]
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert portlint.core.catalog.rules_fingerprint() != before


def test_detector_code_change_invalidates(tmp_path, monkeypatch):
    root = make_project(tmp_path)
    counter = Counter(monkeypatch)
    scan(root, settings_for(root))
    counter.paths.clear()
    import portlint.core.cache

    monkeypatch.setattr(portlint.core.cache, "code_fingerprint", lambda: "other code")
    scan(root, settings_for(root))
    assert sorted(counter.paths) == ALL


def test_code_fingerprint_covers_every_stage():
    """The code hash reads every stage's modules, not only the cache's own package: a
    changed detector (portlint/rules), engine (portlint/pipeline) or analysis must miss."""
    import portlint
    import portlint.core.cache

    package = Path(portlint.__file__).resolve().parent
    hashed = {p.relative_to(package).as_posix() for p in portlint.core.cache.fingerprinted_files()}
    stages = {p.relative_to(package).parts[0] for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert stages <= {name.split("/")[0] for name in hashed}, stages - {name.split("/")[0] for name in hashed}
    for module in ("pipeline/engine.py", "rules/cuda_ptx.py", "core/cache.py", "frontends/cuda/include/portlint_cuda_builtins.h"):
        assert module in hashed, module


@pytest.mark.parametrize(
    "change",
    [
        {"targets": ("rocm",)},
        {"ignore": ("PTL201",)},
        {"select": ("PTL2",)},
        {"per_file_ignores": {"model.py": ("PTL9",)}},
    ],
)
def test_config_change_invalidates(tmp_path, monkeypatch, change):
    root = make_project(tmp_path)
    counter = Counter(monkeypatch)
    scan(root, settings_for(root))
    counter.paths.clear()
    fresh = scan(root, settings_for(root, **change))
    assert sorted(counter.paths) == ALL
    counter.paths.clear()
    no_cache = scan(root, settings_for(root, cache_dir=None, **change))
    assert findings(fresh) == findings(no_cache)


def test_corrupt_entry_is_ignored_and_rewritten(tmp_path, monkeypatch):
    root = make_project(tmp_path)
    first = scan(root, settings_for(root))
    counter = Counter(monkeypatch)
    for entry in entries(root):
        data = entry.read_bytes()
        # keep the JSON valid but change a finding: only the checksum can tell
        entry.write_bytes(data.replace(b'"line_hash"', b'"line_hasX"', 1) if b'"line_hash"' in data else data[: len(data) // 2])
    again = scan(root, settings_for(root))
    assert sorted(counter.paths) == ALL
    assert findings(again) == findings(first)
    counter.paths.clear()
    scan(root, settings_for(root))
    assert counter.paths == [], "rewritten entries are valid again"


@pytest.mark.parametrize("garbage", [b"", b"\n", b"not json at all", b"0" * 64 + b"\n{}", b"\xff\xfe\x00binary"])
def test_garbage_entries_are_misses(tmp_path, garbage):
    root = make_project(tmp_path)
    cache = Cache(root / ".portlint_cache", settings_for(root))
    key = cache.key("x.cu", b"data")
    path = cache._path(key)
    path.parent.mkdir(parents=True)
    path.write_bytes(garbage)
    assert cache.get(key, "x.cu") is None


def test_entry_under_another_key_is_not_trusted(tmp_path):
    root = make_project(tmp_path)
    settings = settings_for(root)
    scan(root, settings)
    cache = Cache(settings.cache_dir, settings)
    real_key = cache.key("kernel.cu", (root / "kernel.cu").read_bytes(), root / "kernel.cu")
    assert cache.get(real_key, "kernel.cu") is not None
    other = cache.key("kernel.cu", b"something else", root / "kernel.cu")
    cache._path(other).parent.mkdir(parents=True, exist_ok=True)
    cache._path(other).write_bytes(cache._path(real_key).read_bytes())
    assert cache.get(other, "kernel.cu") is None


def test_cache_dir_that_cannot_be_created_does_not_crash(tmp_path):
    root = make_project(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    settings = settings_for(root, cache_dir=blocker / "cache")
    result = scan(root, settings)
    assert findings(result) == findings(scan(root, settings_for(root, cache_dir=None)))


def test_read_only_cache_dir_does_not_crash(tmp_path, monkeypatch):
    root = make_project(tmp_path)
    settings = settings_for(root)
    expected = findings(scan(root, settings_for(root, cache_dir=None)))
    # root ignores permission bits, so make every write fail the way a read-only mount does
    import portlint.core.cache

    def refuse(path, data, *_, **__):
        raise PermissionError(30, "Read-only file system", str(path))

    monkeypatch.setattr(portlint.core.cache, "_atomic_write", refuse)
    assert findings(scan(root, settings)) == expected
    assert entries(root) == []


def test_parallel_workers_fill_the_cache_consistently(tmp_path):
    root = make_project(tmp_path)
    for i in range(24):
        (root / f"k{i}.cu").write_text(KERNEL.replace("k(", f"k{i}("))
    parallel = scan(root, settings_for(root, jobs=2))
    n = len(entries(root))
    assert n == 27  # every file, including defs.h (analysed as nothing, but cached)
    warm = scan(root, settings_for(root, jobs=2))
    serial = scan(root, settings_for(root, cache_dir=None, jobs=1))
    assert findings(parallel) == findings(warm) == findings(serial)


def _hammer(args):
    directory, settings, worker = args
    from portlint.core.model import FileResult

    cache = Cache(Path(directory), settings)
    bad = 0
    for i in range(200):
        key = cache.key("same.cu", b"same bytes")
        cache.put(key, FileResult(counters={"writer": worker, "round": i}))
        got = cache.get(key, "same.cu")
        if got is None or set(got.counters) != {"writer", "round"}:
            bad += 1
    return bad


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path):
    settings = Settings(root=tmp_path)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        bad = pool.map(_hammer, [(str(tmp_path / "c"), settings, w) for w in range(4)])
    assert bad == [0, 0, 0, 0]
    leftovers = [p for p in (tmp_path / "c").rglob(".tmp*")]
    assert leftovers == []


def test_cli_no_cache_and_cache_dir(tmp_path):
    from conftest import run_portlint

    root = make_project(tmp_path)
    out = run_portlint("scan", ".", "--format", "json", "--no-cache", cwd=root)
    assert out.returncode == 1, out.stderr
    assert not (root / ".portlint_cache").exists()
    where = tmp_path / "elsewhere"
    warm1 = run_portlint("scan", ".", "--format", "json", "--cache-dir", str(where), cwd=root)
    warm2 = run_portlint("scan", ".", "--format", "json", "--cache-dir", str(where), cwd=root)
    assert list(where.rglob("*.json"))
    assert not (root / ".portlint_cache").exists()
    assert out.stdout == warm1.stdout == warm2.stdout
    assert json.loads(out.stdout)["findings"]


def _include_path_project(tmp_path: Path, half: int) -> tuple[Path, Path, Path]:
    """src/k.cu includes <lanes.h>, found only through -I ../inc of its compile command."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "inc").mkdir()
    (root / "portlint.toml").write_text("")
    header = root / "inc" / "lanes.h"
    header.write_text(f"#pragma once\n#define HALF {half}\n")
    src = root / "src" / "k.cu"
    src.write_text("#include <lanes.h>\n__global__ void k(float* y) {\n  y[threadIdx.x / (2 * HALF)] = 1.f;\n}\n")
    db = root / "compile_commands.json"
    db.write_text(json.dumps([{"directory": str(root / "src"), "command": f"nvcc -I../inc -c {src}", "file": str(src)}]))
    return root, header, db


def test_header_reached_only_through_an_include_path_invalidates(tmp_path):
    """Stale-result bug 7a: the cache key followed includes next to the file only, so with
    --compile-commands a header found through -I could change and a warm cache still
    answered with the old finding."""
    root, header, db = _include_path_project(tmp_path, 16)
    src = root / "src" / "k.cu"

    def rules():
        return [(f.span.start_line, f.rule_id) for f in scan(src, settings_for(root, compile_commands=db)).findings]

    assert rules() == [(3, "PTL102")]  # 2 * 16 = 32: a warp id on a 64-lane wavefront
    header.write_text("#pragma once\n#define HALF 32\n")  # 2 * 32 = 64: a wavefront, not a warp
    assert rules() == []
    assert rules() == scan(src, settings_for(root, compile_commands=db, cache_dir=None)).findings == []


def test_include_dirs_config_key_is_followed_by_the_key_too(tmp_path):
    root, header, _ = _include_path_project(tmp_path, 16)
    src = root / "src" / "k.cu"

    def rules():
        return [(f.span.start_line, f.rule_id) for f in scan(src, settings_for(root, include_dirs=(str(root / "inc"),))).findings]

    assert rules() == [(3, "PTL102")]
    header.write_text("#pragma once\n#define HALF 32\n")
    assert rules() == []


def test_emptied_shim_header_is_read_again_by_the_next_scan(tmp_path):
    """Stale-result bug 7b: in one long-lived process, a HIP shim header that defines
    `__trap` made its uses the project's own; after the shim was emptied, a second scan
    still remembered its names (symbols._HEADER_NAMES outlived the scan)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "portlint.toml").write_text("")
    shim = root / "shim.h"
    shim.write_text("#pragma once\n#define __trap() abort()\n")
    src = root / "k.cu"
    src.write_text('#include "shim.h"\n__global__ void k() {\n  __trap();\n}\n')
    settings = settings_for(root, cache_dir=None)
    assert [f.rule_id for f in scan(src, settings).findings] == []
    shim.write_text("#pragma once\n")
    assert [(f.span.start_line, f.rule_id) for f in scan(src, settings).findings] == [(3, "PTL204")]


def test_parallel_scan_keys_and_workers_see_one_include_graph(tmp_path):
    """Keys are computed in the parent, files analysed in workers (forked or fresh): both
    follow -I headers, so an edited header is seen with --jobs 2 as with --jobs 1."""
    root, header, db = _include_path_project(tmp_path, 16)
    src = root / "src"
    body = (src / "k.cu").read_text()
    entries_ = []
    for i in range(12):
        f = src / f"k{i}.cu"
        f.write_text(body)
        entries_.append({"directory": str(src), "command": f"nvcc -I../inc -c {f}", "file": str(f)})
    db.write_text(json.dumps(entries_))

    def rules():
        res = scan(src, settings_for(root, compile_commands=db, jobs=2))
        return sorted((f.path, f.span.start_line, f.rule_id) for f in res.findings)

    assert rules() == [(f"src/k{i}.cu", 3, "PTL102") for i in sorted(range(12), key=str)]
    header.write_text("#pragma once\n#define HALF 32\n")
    assert rules() == []


def test_include_dirs_are_relative_to_the_config_file(tmp_path):
    from portlint.core.config import load_config

    root, header, _ = _include_path_project(tmp_path, 16)
    (root / "portlint.toml").write_text('include-dirs = ["inc"]\n')
    settings = load_config(root / "portlint.toml", settings_for(root, cache_dir=None))
    res = scan(root / "src" / "k.cu", settings)
    assert [(f.span.start_line, f.rule_id) for f in res.findings] == [(3, "PTL102")]
