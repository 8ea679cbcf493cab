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
    from portlint import engine
    from portlint.config import Settings
    from portlint.discovery import discover

    settings = Settings(root=project, jobs=2)
    files, _ = discover([project], settings)
    result = engine.scan_files(files, settings)
    keys = [f.sort_key() for f in result.findings]
    assert keys == sorted(keys)
    assert result.files_scanned == len(files)
