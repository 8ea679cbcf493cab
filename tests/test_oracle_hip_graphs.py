"""PTL610 with hipcc as the oracle: the CUDA graph features portlint flags have no HIP
declaration. Each flagged name in fixtures/cuda_libraries/graph_conditional.cu, spelled the way
HIPIFY would spell it (cuda... -> hip...), is an undeclared identifier in the HIP headers
hipcc compiles against (Debian's HIP 5.2 here: a newer HIP may have added some); the graph
calls HIP does have are declared (the control that shows the probe can tell them apart)."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES, scan_paths
from oracles import hipcc_compile

pytestmark = pytest.mark.oracle

FIXTURE = FIXTURES / "cuda_libraries" / "graph_conditional.cu"
DECLARED_IN_HIP = ["hipGraphLaunch", "hipGraphInstantiate", "hipStreamBeginCapture", "hipGraphExec_t"]


def _probe(name: str) -> str:
    """hipcc's diagnostics for a use of `name` that is wrong whatever `name` is (assigning it
    to a struct), so the only question is whether the name is declared at all."""
    ok, out = hipcc_compile(f"struct Probe {{}};\nvoid probe() {{ Probe p = {name}; (void)p; }}\n")
    assert not ok, f"{name}: the probe compiled"
    return out


def _undeclared(name: str, out: str) -> bool:
    return bool(re.search(rf"(undeclared identifier|unknown type name) '{re.escape(name)}'", out))


def test_flagged_graph_features_are_undeclared_in_hip():
    flagged = sorted({re.search(r"`(\w+)`", f.message).group(1)
                      for f in scan_paths([FIXTURE]).findings if f.rule_id == "PTL610"})
    assert len(flagged) >= 4, flagged
    for cuda_name in flagged:
        hip_name = "hip" + cuda_name[len("cuda"):]
        out = _probe(hip_name)
        assert _undeclared(hip_name, out), f"{hip_name} is declared in HIP:\n{out}"
    for hip_name in DECLARED_IN_HIP:
        out = _probe(hip_name)
        assert not _undeclared(hip_name, out), f"control {hip_name} is not declared:\n{out}"
