"""One evaluator of Python runtime guards (portlint.analyses.python.guards) answers both questions the
families ask: on which targets can this node run (PTL5xx/PTL9xx), and does any ROCm run reach
it (PTL310, PTL70x). Vendor tests narrow only ROCm; device tests narrow every platform."""

from __future__ import annotations

import ast
import textwrap

from portlint.analyses.python.guards import ALL, GAUDI, NVIDIA, OTHER, ROCM, TPU, TRAINIUM, Guards


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


OPTION_LEGS = textwrap.dedent('''
    def forward(self, x, mask):
        if not is_xla_tensor(x):
            a = "not-xla-tensor"
        if is_xla_tensor(x) or mask.any():
            b = "short-circuit"
        if self._attn_implementation == "flash_attention_2":
            c = "flash"
        if self._attn_implementation != "flash_attention_2":
            d = "not-flash"
        if self.is_fsdp:
            e = "fsdp"
        if args.use_apex:
            f = "apex"
        def agg(t):
            return "nested-guarded"
        def plain(t):
            return "nested-free"
        should = self.is_fsdp and other
        fn = agg if should else None
        return plain(x)
''')


def test_tensor_tests_attention_backends_options_and_nested_helpers():
    module = ast.parse(OPTION_LEGS)
    guards = Guards(module)
    plats = lambda text: guards.platforms(_find(module, text))  # noqa: E731
    xla = frozenset({TPU, TRAINIUM})
    any_call = next(n for n in ast.walk(module) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "any")
    assert not plats("not-xla-tensor") & xla and not guards.platforms(any_call) & xla
    assert plats("short-circuit") == ALL  # the body runs everywhere; only `mask.any()` is kept off XLA
    # a backend compared equal exists only on GPUs (and NPU/XPU); unequal says nothing
    assert plats("flash") == frozenset({NVIDIA, ROCM, OTHER}) and plats("not-flash") == ALL
    # torch.distributed FSDP is not torch_xla's sharding; Apex needs a CUDA device
    assert not plats("fsdp") & xla and GAUDI in plats("fsdp")
    assert plats("apex") == frozenset({NVIDIA, ROCM})
    # a nested helper used only behind a guard runs only where the guard lets it
    assert plats("nested-guarded") == plats("fsdp") and plats("nested-free") == ALL
