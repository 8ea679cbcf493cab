"""Parallel workers: the report is the same, byte for byte, whatever the worker count and
whether results come from workers, the cache or this process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, run_portlint


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """Every fixture file (findings of every family), plus copies so the pool has work."""
    root = tmp_path_factory.mktemp("parallel")
    (root / "portlint.toml").write_text("")
    for family in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        shutil.copytree(family, root / family.name)
    return root


def scan_json(root: Path, *args: str) -> str:
    out = run_portlint("scan", ".", "--format", "json", "--no-progress", *args, cwd=root)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def test_project_is_big_enough_for_the_pool(project):
    files = [p for p in project.rglob("*") if p.suffix in (".cu", ".cuh", ".py")]
    assert len(files) > 40


def test_report_identical_for_any_worker_count_and_cache(project, tmp_path):
    serial = scan_json(project, "--no-cache", "--jobs", "1")
    assert len(__import__("json").loads(serial)["findings"]) > 20
    two = scan_json(project, "--no-cache", "--jobs", "2")
    three = scan_json(project, "--no-cache", "--jobs", "3")
    default = scan_json(project, "--no-cache")
    cache = tmp_path / "cache"
    cold = scan_json(project, "--cache-dir", str(cache), "--jobs", "2")
    warm = scan_json(project, "--cache-dir", str(cache), "--jobs", "2")
    warm_serial = scan_json(project, "--cache-dir", str(cache), "--jobs", "1")
    assert serial == two == three == default == cold == warm == warm_serial


def test_parallel_text_and_sarif_match_serial(project):
    for fmt in ("text", "sarif"):
        a = run_portlint("scan", ".", "--format", fmt, "--no-cache", "--jobs", "1", "--color", "never", cwd=project)
        b = run_portlint("scan", ".", "--format", fmt, "--no-cache", "--jobs", "2", "--color", "never", cwd=project)
        assert a.returncode == b.returncode
        assert a.stdout == b.stdout


def test_scan_files_orders_results_whatever_the_completion_order(project, monkeypatch):
    """Workers take the largest files first; the merged result is still sorted."""
    from portlint.pipeline import engine
    from portlint.core.config import Settings
    from portlint.discovery.files import discover

    settings = Settings(root=project, jobs=2)
    files, _ = discover([project], settings)
    result = engine.scan_files(files, settings)
    keys = [f.sort_key() for f in result.findings]
    assert keys == sorted(keys)
    assert result.files_scanned == len(files)


def test_a_fresh_worker_takes_the_parents_project_model_instead_of_building_one(tmp_path, monkeypatch):
    """forkserver/spawn workers do not inherit memory: the parent hands its model over, and
    a worker's scan then asks for no build of its own."""
    from portlint.core.config import Settings
    from portlint.index import project as pm
    from portlint.pipeline.workers import _init_worker

    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/helpers.py").write_text("def clip(x, limit):\n    if x > limit:\n        return limit\n    return x\n")
    (root / "pkg/train.py").write_text("import jax\n\nfrom pkg.helpers import clip\n\n\n@jax.jit\ndef step(x):\n    return clip(x, 1.0)\n")
    parent = Settings(root=root, jobs=2)
    built = pm.scan_model(parent, [root / "pkg/helpers.py"])
    seed = pm.model_seed(parent)
    assert seed is not None and seed.trees == {} and seed.reached == built.reached
    import pickle

    seed = pickle.loads(pickle.dumps(seed))  # what the pool sends to a fresh worker
    worker = pickle.loads(pickle.dumps(parent))

    def no_build(*args, **kwargs):
        raise AssertionError("the worker built a project model")

    import gc

    thresholds = gc.get_threshold()
    monkeypatch.setattr(pm.ProjectModel, "for_scan", no_build)
    try:
        _init_worker(worker, model=seed)
    finally:
        gc.set_threshold(*thresholds)
    model = pm.scan_model(worker, [root / "pkg/helpers.py"])
    assert model is seed and set(model.reached_in("pkg/helpers.py")) == {"clip"}
    assert pm.model_error(worker) is None


def test_spawned_workers_report_what_a_serial_scan_reports(tmp_path, monkeypatch):
    from portlint.pipeline import engine, workers
    from portlint.core.config import Settings
    from portlint.discovery.files import discover

    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    for i in range(10):
        (root / f"pkg/h{i}.py").write_text(f"def clip{i}(x, limit):\n    if x > limit:\n        return limit\n    return x\n")
    calls = "\n".join(f"    x = h{i}.clip{i}(x, 1.0)" for i in range(10))
    (root / "pkg/train.py").write_text("import jax\n\nfrom pkg import " + ", ".join(f"h{i}" for i in range(10))
                                       + f"\n\n\n@jax.jit\ndef step(x):\n{calls}\n    return x\n")

    def scan(jobs):
        settings = Settings(root=root, jobs=jobs)
        return engine.scan_files(discover([root], settings)[0], settings)

    serial = scan(1)
    assert sorted((f.path, f.span.start_line) for f in serial.findings) == [(f"pkg/h{i}.py", 2) for i in range(10)]
    monkeypatch.setattr(workers, "_start_method", lambda: "spawn")
    spawned = scan(2)
    assert [f.to_dict() for f in spawned.findings] == [f.to_dict() for f in serial.findings]
