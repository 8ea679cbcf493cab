"""tests/realcode/sample_findings.py: the sampler of judged findings (issue 25).

The script is run through its command line on small hand-written reports, in the JSON shape
`portlint scan --format json` writes: which findings each `--families` group pools, that a
folded finding (a root with its uses as `related` locations) is one row, and that the
default group is still the Python one."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parent / "realcode" / "sample_findings.py"


def _finding(rule: str, path: str, line: int, role: str = "library", related: int = 0, suppressed=None) -> dict:
    return {
        "rule": rule, "path": path, "start_line": line, "message": f"{rule} at {line}", "role": role,
        "related": [{"path": path, "start_line": line + 10 + i, "message": "a use"} for i in range(related)],
        "suppressed": suppressed,
    }


def _reports(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    base.mkdir()
    a = [
        _finding("PTL101", "csrc/reduce.cu", 5),
        _finding("PTL603", "csrc/conv.cu", 1, related=7),  # the cuDNN include, 7 uses folded under it
        _finding("PTL201", "csrc/asm.cuh", 9),
        _finding("PTL305", "csrc/hopper.cu", 3),
        _finding("PTL402", "csrc/mma.cu", 12),
        _finding("PTL502", "csrc/comm.cu", 2),
        _finding("PTL503", "csrc/comm.cu", 4),
        _finding("PTL505", "setup.py", 30),
        _finding("PTL051", "CMakeLists.txt", 8),
        _finding("PTL001", "csrc/reduce.cu", 2),
        _finding("PTL311", "csrc/gate.cpp", 6),  # the C++ capability gate
        # not the CUDA group: the Python capability gate, Python NCCL rules, Triton, torch
        _finding("PTL310", "pkg/gate.py", 3),
        _finding("PTL501", "pkg/dist.py", 4),
        _finding("PTL504", "pkg/dist.py", 9),
        _finding("PTL703", "pkg/kern.py", 11),
        _finding("PTL901", "pkg/dev.py", 1),
        # left out of every pool drawn from by default: a test file's note, a suppressed one
        _finding("PTL102", "tests/test_reduce.cu", 7, role="test"),
        _finding("PTL104", "csrc/reduce.cu", 40, suppressed={"kind": "inSource", "reason": "checked"}),
    ]
    (base / "pkg-1.0.json").write_text(json.dumps({"findings": a}), encoding="utf-8")
    return base


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True)


def _drawn(out: str) -> list[tuple[str, str, str]]:
    rows = list(csv.DictReader(io.StringIO(out)))
    return sorted((r["file"], r["line"], r["rule"]) for r in rows)


def test_cuda_group_pools_the_cpp_and_build_families_only(tmp_path):
    base = _reports(tmp_path)
    done = _run(str(base), "--families", "cuda", "-n", "11", "--seed", "1", "--csv")
    assert _drawn(done.stdout) == sorted([("csrc/gate.cpp", "6", "PTL311"),
        ("csrc/reduce.cu", "5", "PTL101"), ("csrc/conv.cu", "1", "PTL603"), ("csrc/asm.cuh", "9", "PTL201"),
        ("csrc/hopper.cu", "3", "PTL305"), ("csrc/mma.cu", "12", "PTL402"), ("csrc/comm.cu", "2", "PTL502"),
        ("csrc/comm.cu", "4", "PTL503"), ("setup.py", "30", "PTL505"), ("CMakeLists.txt", "8", "PTL051"),
        ("csrc/reduce.cu", "2", "PTL001"),
    ])
    # the folded cuDNN group is one finding of the pool of 11, not 8 of 18; the test file's
    # note is counted apart, the suppressed one not at all
    assert done.stderr.startswith("# 11 CUDA-family findings: pkg-1.0 11; 1 notes in non-library files not drawn")
    # one more than the pool holds is refused: nothing else is in it
    refused = subprocess.run([sys.executable, str(SCRIPT), str(base), "--families", "cuda", "-n", "12"],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "only 11 findings" in refused.stderr


def test_cuda_group_names_folded_uses_in_the_text_draw(tmp_path):
    done = _run(str(_reports(tmp_path)), "--families", "cuda", "-n", "10", "--seed", "1")
    assert "csrc/conv.cu:1 PTL603 (+7 folded uses)" in done.stdout
    assert "csrc/reduce.cu:5 PTL101\n" in done.stdout


def test_cuda_group_draws_notes_only_when_asked(tmp_path):
    done = _run(str(_reports(tmp_path)), "--families", "cuda", "-n", "12", "--seed", "1", "--csv", "--include-notes")
    assert ("tests/test_reduce.cu", "7", "PTL102") in _drawn(done.stdout)


def test_default_group_is_still_python(tmp_path):
    base = _reports(tmp_path)
    default = _run(str(base), "-n", "5", "--seed", "1", "--csv")
    named = _run(str(base), "--families", "python", "-n", "5", "--seed", "1", "--csv")
    assert default.stdout == named.stdout and default.stderr == named.stderr
    assert _drawn(default.stdout) == sorted([
        ("pkg/gate.py", "3", "PTL310"), ("pkg/dist.py", "4", "PTL501"),
        ("pkg/dist.py", "9", "PTL504"), ("pkg/kern.py", "11", "PTL703"), ("pkg/dev.py", "1", "PTL901"),
    ])
    assert default.stderr.startswith("# 5 Python-family findings: pkg-1.0 5\n")
    # the default text draw is unchanged: no folded-use counts
    assert "folded" not in _run(str(base), "-n", "5", "--seed", "1").stdout


def test_same_seed_same_draw(tmp_path):
    base = _reports(tmp_path)
    first = _run(str(base), "--families", "cuda", "-n", "4", "--seed", "2525", "--csv").stdout
    again = _run(str(base), "--families", "cuda", "-n", "4", "--seed", "2525", "--csv").stdout
    assert first == again
