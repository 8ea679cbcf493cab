"""One evaluator of Python runtime guards (portlint.python.guards) answers both questions the
families ask: on which targets can this node run (PTL5xx/PTL9xx), and does any ROCm run reach
it (PTL310, PTL70x). Vendor tests narrow only ROCm; device tests narrow every platform."""

from __future__ import annotations

import ast
import textwrap

from portlint.python.guards import ALL, GAUDI, NVIDIA, ROCM, TPU, Guards


def _find(module, text):
    for node in ast.walk(module):
        if isinstance(node, ast.Constant) and node.value == text:
            return node
    raise AssertionError(text)


SOURCE = textwrap.dedent('''
    import torch, triton
    def is_hip():
        return triton.runtime.driver.active.get_current_target().backend == "hip"
    while not is_hip():
        x = "in-while"
    cfgs = ["in-comp" for w in (4, 8) if torch.version.hip is None]
    ok = "gate" >= "x" and torch.version.hip is None
    def get_cuda_configs():
        return "twin"
    def get_hip_configs():
        return "amd-twin"
    if backend == "cuda":
        y = "backend-cuda"
    if device.type == "hpu":
        z = "hpu-only"
    w = "free"
''')


def test_rocm_reach_and_target_reach_from_one_map():
    module = ast.parse(SOURCE)
    guards = Guards(module)
    for text in ("in-while", "in-comp", "gate", "twin", "backend-cuda", "hpu-only"):
        assert guards.dead_for_amd(_find(module, text)) is not None, text
    for text in ("amd-twin", "free"):
        assert guards.dead_for_amd(_find(module, text)) is None, text
    # a vendor test says nothing about TPU or Gaudi
    assert TPU in guards.platforms(_find(module, "in-while")) and GAUDI in guards.platforms(_find(module, "twin"))
    # device and vendor test together: `backend == "cuda"` is NVIDIA only
    assert guards.platforms(_find(module, "backend-cuda")) == frozenset({NVIDIA})
    # a device test narrows every platform
    assert guards.platforms(_find(module, "hpu-only")) == frozenset({GAUDI})
    assert guards.platforms(_find(module, "free")) == ALL and ROCM in ALL
