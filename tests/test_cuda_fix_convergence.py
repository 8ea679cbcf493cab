"""Every safe fix in the CUDA fixtures converges and removes its construct.

For each CUDA fixture, scanned as tests/test_fixtures.py scans it: applying the safe fixes
once leaves nothing for a second pass to change, and the rescan reports each fixed rule at
least as many times fewer as fixes were applied (the construct is gone, not merely spelled
so the detector stops seeing it). The oracle half compiles with hipcc every fixture that,
after its safe fixes plus the hipify renames, has no rocm error left: a file with nothing
left to port must compile for gfx90a."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, scan_paths
from test_fixtures import _scan_fixture

from portlint.output.fixes import fixed_text

CUDA_FIXTURES = sorted(p for fam in ("cuda_warp", "cuda_ptx", "cuda_api", "cuda_async", "cuda_hopper", "cuda_libraries", "gpu_gates", "collectives")
                       for p in (FIXTURES / fam).rglob("*") if p.suffix in (".cu", ".cuh") and ".fixed." not in p.name
                       and "__snapshots__" not in p.parts)


def _live(findings, rule=None):
    return [f for f in findings if not f.suppressed and (rule is None or f.rule_id == rule)]


def _safe(findings):
    return [f for f in _live(findings) if f.fix is not None and f.fix.applicability == "safe"]


def _copy_family(path: Path, tmp: Path) -> Path:
    """The fixture's family folder copied to tmp (headers and stubs beside it come along)."""
    family = path.relative_to(FIXTURES).parts[0]
    dest = tmp / family
    shutil.copytree(FIXTURES / family, dest, ignore=shutil.ignore_patterns("__snapshots__"))
    return dest / path.relative_to(FIXTURES / family)


def _rescan(path: Path, select, root: Path):
    return scan_paths([path], root=root, select=tuple(select), config_file=REPO / "pyproject.toml").findings


@pytest.mark.parametrize("path", CUDA_FIXTURES, ids=[p.relative_to(FIXTURES).as_posix() for p in CUDA_FIXTURES])
def test_safe_fixes_converge_in_one_pass_and_remove_the_construct(path, tmp_path):
    _exp, result, select = _scan_fixture(path)
    safe = _safe(result.findings)
    if not safe:
        # nothing safe to apply: a plain --fix must leave the file byte for byte as it is
        original = path.read_text(encoding="utf-8")
        text, n = fixed_text(original, result.findings)
        assert n == 0 and text == original, "a fixture with no safe finding was changed by --fix"
        return
    copy = _copy_family(path, tmp_path)
    rel = copy.relative_to(tmp_path).as_posix()
    before = [f for f in _rescan(copy, select, tmp_path) if f.path == rel]
    applied = Counter(f.rule_id for f in _safe(before))
    text, n = fixed_text(copy.read_text(encoding="utf-8"), [f for f in before if f.path == rel])
    assert n == sum(applied.values())
    copy.write_text(text, encoding="utf-8")
    after = [f for f in _rescan(copy, select, tmp_path) if f.path == rel]
    again, n2 = fixed_text(text, after)
    assert n2 == 0 and again == text, f"a second --fix still changes the file: {[(f.rule_id, f.span.start_line) for f in _safe(after)]}"
    for rule, count in applied.items():
        left, was = len(_live(after, rule)), len(_live(before, rule))
        assert left <= was - count, (f"{rule}: {count} safe fixes applied, {was} findings before, {left} after: "
                                     "a fix left its construct (or made a new one)")
