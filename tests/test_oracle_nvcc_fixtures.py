"""Every CUDA fixture is real CUDA: it compiles with nvcc -arch=sm_90a -c.

Headers (.cuh/.h) are compiled through the fixtures that include them. Files meant only for
hipcc end in .hip and are left to the hipcc oracle tests."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from oracles import nvcc_compile

# a fixed file whose fixes ported it to HIP (`#include <hiptensor/...>`, renamed types) is AMD
# code now: the hipcc tests compile those, not nvcc
CUDA_FIXTURES = sorted(p for p in FIXTURES.rglob("*.cu")
                       if not (p.name.endswith(".fixed.cu") and "#include <hip" in p.read_text(encoding="utf-8")))


@pytest.mark.oracle
@pytest.mark.parametrize("path", CUDA_FIXTURES, ids=[p.relative_to(FIXTURES).as_posix() for p in CUDA_FIXTURES])
def test_cuda_fixture_compiles_with_nvcc(path):
    ok, output = nvcc_compile(path)
    assert ok, f"{path.name} does not compile with nvcc:\n{output[-3000:]}"
