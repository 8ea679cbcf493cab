"""PTL903, PTL904 and PTL906 shown on CPU torch 2.13 and CPU jax, the builds a TPU VM or a
Neuron host runs beside torch_xla: CUDA configuration read by nothing that runs there.

PTL903: the cuDNN / CUDA-matmul / SDPA switches the rule lists change no result off CUDA, and
cuDNN is not there at all. PTL904: CUDA_VISIBLE_DEVICES and friends do not change which devices
XLA's runtime shows (subprocesses with 4 host devices), while XLA's own setting does.
PTL906: `GradScaler("cuda")` turns itself off without CUDA (the loss is not scaled), and the
numbers say why bf16 needs no loss scaling where fp16 does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest
from conftest import require_module

from portlint.rules.device_strings import CUDA_ENV, SELECTION_ENV

pytestmark = pytest.mark.oracle


def _cpu_torch():
    torch = require_module("torch")
    assert not torch.cuda.is_available(), "the claims are about hosts without CUDA"
    return torch


# ---- PTL903 ------------------------------------------------------------------------------------

def _workload(torch):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
    weight, bias = torch.randn(4, 3, 3, 3, generator=g), torch.randn(4, generator=g)
    img = torch.randn(2, 3, 8, 8, generator=g)
    return (a @ b, torch.nn.functional.conv2d(img, weight, bias))


def test_ptl903_cudnn_and_cuda_matmul_flags_change_nothing_on_cpu():
    torch = _cpu_torch()
    assert torch.backends.cudnn.is_available() is False and torch.backends.cudnn.version() is None
    baseline = _workload(torch)
    cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    saved = (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32, cudnn.enabled, matmul.allow_tf32,
             matmul.allow_fp16_reduced_precision_reduction)
    try:
        cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32, cudnn.enabled = True, True, False, False
        matmul.allow_tf32, matmul.allow_fp16_reduced_precision_reduction = True, False
        with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=False):
            inside = _workload(torch)
        flipped = _workload(torch)
    finally:
        (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32, cudnn.enabled, matmul.allow_tf32,
         matmul.allow_fp16_reduced_precision_reduction) = saved
    for before, a, b in zip(baseline, inside, flipped):
        assert torch.equal(before, a) and torch.equal(before, b)


SDPA_ON_LAZY = """
import json, torch, torch.nn.functional as F, torch._lazy, torch._lazy.ts_backend
torch._lazy.ts_backend.init()
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 2, 16, 8, generator=g) for _ in range(3))
reference = F.scaled_dot_product_attention(q, k, v)
cuda = torch.backends.cuda
for switch in (cuda.enable_flash_sdp, cuda.enable_math_sdp, cuda.enable_mem_efficient_sdp, cuda.enable_cudnn_sdp):
    switch(False)
out = {}
try:
    F.scaled_dot_product_attention(q, k, v)
    out["cpu"] = "ran"
except RuntimeError as e:
    out["cpu"] = str(e)
lazy = torch.device("lazy")
res = F.scaled_dot_product_attention(q.to(lazy), k.to(lazy), v.to(lazy))
torch._lazy.mark_step()
out["lazy_matches"] = bool(torch.allclose(res.cpu(), reference, atol=1e-6))
print(json.dumps(out))
"""


def sdpa_with_every_backend_switched_off() -> dict:
    require_module("torch")
    proc = subprocess.run([sys.executable, "-c", SDPA_ON_LAZY], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_ptl903_sdp_switches_are_not_read_for_a_lazy_xla_style_device():
    """torch's CPU kernels do read the SDPA switches (all off: no kernel left); on the lazy-tensor
    device, the design torch_xla builds on, the same call runs and gives the reference result."""
    out = sdpa_with_every_backend_switched_off()
    assert "No viable backend" in out["cpu"], out
    assert out["lazy_matches"] is True


# ---- PTL904 ------------------------------------------------------------------------------------

DEVICES = "import jax, json; print(json.dumps([len(jax.devices()), jax.devices()[0].platform]))"


def jax_devices_with(env_overrides: dict) -> list:
    """Device count and platform jax reports in a fresh process with 4 host devices."""
    require_module("jax")
    env = {k: v for k, v in os.environ.items() if k not in CUDA_ENV}
    env.update({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=4"})
    env.update(env_overrides)
    proc = subprocess.run([sys.executable, "-c", DEVICES], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("overrides", [
    {"CUDA_VISIBLE_DEVICES": "0"},
    {"CUDA_VISIBLE_DEVICES": ""},
    {"CUDA_VISIBLE_DEVICES": "1,0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"},
    {"NVIDIA_VISIBLE_DEVICES": "none"},
    {"CUDA_LAUNCH_BLOCKING": "1", "CUDA_MODULE_LOADING": "EAGER", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
], ids=["one-gpu", "no-gpu", "order", "nvidia-none", "tuning"])
def test_ptl904_cuda_device_variables_do_not_change_xlas_devices(overrides):
    assert set(overrides) <= CUDA_ENV
    assert jax_devices_with(overrides) == [4, "cpu"]


def test_ptl904_the_runtimes_own_setting_does():
    assert jax_devices_with({"XLA_FLAGS": "--xla_force_host_platform_device_count=1"}) == [1, "cpu"]
    assert {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"} == SELECTION_ENV


# ---- PTL906 ------------------------------------------------------------------------------------

def test_ptl906_grad_scaler_turns_itself_off_without_cuda():
    torch = _cpu_torch()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = torch.amp.GradScaler("cuda")
    assert not scaler.is_enabled()
    assert any("CUDA is not available" in str(w.message) for w in caught)
    loss = torch.tensor(3.0, requires_grad=True)
    assert scaler.scale(loss) is loss  # no loss scaling happens: the fp16 recipe is silently incomplete


def test_ptl906_bf16_keeps_the_range_fp16_loses():
    torch = _cpu_torch()
    small_grad, large_act = torch.tensor([1e-8, 3e-6]), torch.tensor([7.0e4, 1.0e6])
    assert torch.all(small_grad.to(torch.float16)[:1] == 0)            # fp16 flushes small gradients
    assert torch.all(torch.isinf(large_act.to(torch.float16)))          # and overflows past 65504
    assert torch.all(small_grad.to(torch.bfloat16) > 0)                 # bf16 has float32's exponent range
    assert torch.all(torch.isfinite(large_act.to(torch.bfloat16)))
    assert torch.finfo(torch.bfloat16).max == pytest.approx(torch.finfo(torch.float32).max, rel=0.01)


def test_ptl906_rewrite_bf16_autocast_trains_without_a_scaler():
    torch = _cpu_torch()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    losses = []
    for _ in range(5):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(x).float(), y)
        loss.backward()
        assert all(torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0 for p in model.parameters())
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
