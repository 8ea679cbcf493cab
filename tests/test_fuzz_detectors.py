"""Fuzzing every detector: generated Python and mutated CUDA fixtures through the engine.

The engine turns any failure into a PTL003 finding or an error notice (see
test_bad_input.py), so "no exception escapes" is checked one level deeper: no input here
may make a detector or the engine fail at all (no PTL003, no "while analysing" notice),
every finding's span lies inside the file, and the reporters render the result. Inputs
are seeded and derandomized, so a failure reproduces; the budgets keep the module under
a minute on one core."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO
from fixture_expectations import read_expectations

from portlint.core.config import Settings
from portlint.discovery.files import SourceFile
from portlint.pipeline.engine import scan_source
from portlint.core.model import ScanResult

hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st  # noqa: E402

SETTINGS = Settings(root=REPO, select=("PTL",), jobs=1)  # every rule, the opt-in ones too
C_FAMILY = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".ptx")
CUDA_FIXTURES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in C_FAMILY)
PY_FIXTURES = sorted(FIXTURES.rglob("*.py"))

# pieces that stress what detectors look at: preprocessor structure, literals and comments
# that hide code, unbalanced brackets, the warp-size idioms and API calls the rules match
_CUDA_PIECES = [
    b"{", b"}", b"(", b")", b";", b"<", b">", b"::", b"...", b"[[", b"]]", b"\n", b"\r", b"\f", b"\xff", b"\\\n",
    b"#if 1\n", b"#else\n", b"#endif\n", b"#ifdef __HIP_PLATFORM_AMD__\n", b"#if __CUDA_ARCH__ >= 900\n",
    b"#define W 32\n", b'#include "', b'"', b"'", b'R"(', b')"', b"/*", b"*/", b"//",
    b"__shfl_sync(0xffffffff, v, 16)", b'asm volatile("', b"threadIdx.x % 32", b"warpSize", b"0xffffffff",
    b"__global__ ", b"__device__ ", b"template <int N>", b"operator", b"<<<1, 32>>>", b"cudaMalloc(",
    b"// portlint: ignore[PTL1]\n", b"// PORTLINT: ignore[", b"__ballot_sync(", b"cooperative_groups::",
]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """1-8 edits: insert a piece, delete a run, overwrite a byte, swap, repeat or copy lines."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not out:
            out += rng.choice(_CUDA_PIECES)
            continue
        i = rng.randrange(len(out) + 1)
        op = rng.randrange(6)
        if op == 0:
            out[i:i] = rng.choice(_CUDA_PIECES)
        elif op == 1:
            del out[i : i + rng.randint(1, 200)]
        elif op == 2 and i < len(out):
            out[i] = rng.randrange(1, 256)
        elif op in (3, 4):
            lines = bytes(out).split(b"\n")
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            if op == 3:
                lines[a], lines[b] = lines[b], lines[a]
            else:
                lines[a:a] = [lines[a]] * rng.randint(1, 3)
            out = bytearray(b"\n".join(lines))
        else:
            j, k = i + rng.randint(1, 80), rng.randrange(len(out) + 1)
            out[k:k] = out[i:j]
    return bytes(out)


def _problems(path: Path, data: bytes) -> list[str]:
    """What went wrong scanning `data` as if it were the file at `path` (empty: nothing)."""
    sf = SourceFile(path, path.relative_to(REPO).as_posix())
    result = scan_source(sf, data, SETTINGS)
    problems = [f"{path.name}: {f.message}" for f in result.findings if f.rule_id == "PTL003"]
    problems += [f"{path.name}: {n.message}" for n in result.notices if "while analysing" in n.message]
    lines = data.count(b"\n") + 1
    for f in result.findings:
        s = f.span
        if not (1 <= s.start_line <= s.end_line <= lines and s.start_col >= 1 and s.end_col >= 1
                and (s.start_line, s.start_col) <= (s.end_line, s.end_col)):
            problems.append(f"{path.name}: {f.rule_id} span {s} outside a {lines}-line file")
    from portlint.output.formats import render

    scan = ScanResult(findings=result.findings, notices=result.notices, files_scanned=1)
    for fmt in ("text", "sarif"):
        render(fmt, scan, SETTINGS, {"show_source": False})
    return problems


@pytest.mark.parametrize("seed", range(4))
def test_mutated_cuda_fixtures_never_break_a_detector(seed):
    rng = random.Random(seed)
    problems: list[str] = []
    for _ in range(150):
        path = rng.choice(CUDA_FIXTURES)
        problems += _problems(path, _mutate(path.read_bytes(), rng))
    assert problems == []


def test_mutated_python_fixtures_never_break_a_detector():
    """Line and byte edits of the Python fixtures: mostly syntax errors (the notice path),
    some still valid and odd."""
    rng = random.Random(17)
    problems: list[str] = []
    for _ in range(300):
        path = rng.choice(PY_FIXTURES)
        problems += _problems(path, _mutate(path.read_bytes(), rng))
    assert problems == []


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@hsettings(max_examples=180, deadline=None, derandomize=True, database=None,
           suppress_health_check=list(HealthCheck))
@given(st.sampled_from(PY_FIXTURES), hypothesmith.from_grammar(), st.integers(min_value=0))
def test_generated_python_inside_fixtures_never_breaks_a_detector(path, code, where):
    """A hypothesmith module spliced into a Python fixture at a line boundary: the
    fixture's imports and API calls make the detectors run, the generated code gives them
    syntax they were not written for."""
    lines = path.read_bytes().split(b"\n")
    k = where % (len(lines) + 1)
    data = b"\n".join([*lines[:k], code.encode("utf-8", "surrogatepass"), *lines[k:]])
    assert _problems(path, data) == []


def _positive(paths):
    """The first ten fixtures that expect a finding under default options."""
    out = []
    for p in paths:
        exp = read_expectations(p)
        if exp.active and not exp.options:
            out.append(p)
        if len(out) == 10:
            break
    return out


def test_the_fuzzers_reach_the_detectors():
    """A guard against a fuzzer that tests nothing: the unmutated fixtures it draws from
    that expect findings do give findings, each of them (a fixture whose findings become
    script notes or need options is not counted, so adding one cannot trip the guard)."""
    for paths in (CUDA_FIXTURES, PY_FIXTURES):
        picked = _positive(paths)
        assert len(picked) == 10
        for p in picked:
            result = scan_source(SourceFile(p, p.relative_to(REPO).as_posix()), p.read_bytes(), SETTINGS)
            assert result.findings, f"{p.name}: no finding from a fixture that expects some"
