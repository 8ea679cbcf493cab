"""PTL806 and PTL810 shown by torch 2.13 on CPU.

PTL806: torch's own lazy-tensor backend (`torch._lazy`, the TorchScript backend on CPU; torch_xla
and Gaudi's lazy mode are built the same way: ops are recorded into a graph that runs when the
step is marked) shows the training loop the rule flags: without a step boundary the weight's
pending graph grows by the same amount every iteration and nothing is compiled or run; with
`mark_step()` each iteration compiles, the graph is cut back to device data, and later
iterations reuse the cached compile. Run in a subprocess: the lazy backend is process-global.

PTL810: the torch.compile modes the rule flags are inductor option sets whose CUDA parts
(`triton.cudagraphs`) inductor itself skips for a non-CUDA device, the `cudagraphs` backend does
the same, and inductor has no code generator at all for the xla, hpu or lazy devices."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import require_module

pytestmark = pytest.mark.oracle

LAZY_LOOP = textwrap.dedent("""
    import json, sys
    import torch, torch._lazy, torch._lazy.ts_backend, torch._lazy.metrics as metrics
    torch._lazy.ts_backend.init()
    device = torch.device("lazy")

    def train(steps, boundary):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        metrics.reset()
        sizes = []
        for _ in range(steps):
            x = torch.randn(8, 4).to(device)
            loss = model(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if boundary:
                torch._lazy.mark_step()
            sizes.append(len(torch._C._lazy._get_tensors_text([model.weight]).splitlines()))
        counters = {k: metrics.counter_value(k) or 0 for k in ("MarkStep", "UncachedCompile", "CachedCompile")}
        return {"graph_lines": sizes, "counters": counters, "weight": model.weight.cpu().tolist()}

    print(json.dumps({"without": train(5, False), "with": train(5, True)}))
""")


def run_lazy_training_loops() -> dict:
    require_module("torch")
    proc = subprocess.run([sys.executable, "-c", LAZY_LOOP], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_ptl806_lazy_graph_grows_without_a_step_boundary_and_is_cut_with_one():
    runs = run_lazy_training_loops()
    without, with_ = runs["without"], runs["with"]
    grow = without["graph_lines"]
    steps = [b - a for a, b in zip(grow, grow[1:])]
    assert all(s > 0 for s in steps) and len(set(steps)) == 1, f"pending graph per iteration: {grow}"
    assert without["counters"] == {"MarkStep": 0, "UncachedCompile": 0, "CachedCompile": 0}
    assert len(set(with_["graph_lines"])) == 1 and with_["graph_lines"][0] < grow[0]
    counters = with_["counters"]
    assert counters["MarkStep"] == 5 and counters["CachedCompile"] >= 1
    assert counters["UncachedCompile"] + counters["CachedCompile"] == 5
    # the boundary changes when the graph runs, not what it computes
    torch = require_module("torch")
    assert torch.allclose(torch.tensor(without["weight"]), torch.tensor(with_["weight"]), atol=1e-6)


def test_ptl810_flagged_modes_are_cudagraph_or_autotune_option_sets():
    require_module("torch")
    from torch._inductor import list_mode_options

    assert list_mode_options("default") == {}
    assert list_mode_options("reduce-overhead") == {"triton.cudagraphs": True}
    assert list_mode_options("max-autotune")["triton.cudagraphs"] is True
    assert list_mode_options("max-autotune-no-cudagraphs")["max_autotune"] is True


def test_ptl810_inductor_has_no_code_generator_for_xla_hpu_or_lazy():
    require_module("torch")
    from torch._inductor.codegen.common import get_scheduling_for_device, init_backend_registration

    init_backend_registration()
    assert get_scheduling_for_device("cpu") is not None and get_scheduling_for_device("cuda") is not None
    for device in ("xla", "hpu", "lazy"):
        assert get_scheduling_for_device(device) is None, device


def test_ptl810_cudagraphs_backend_skips_a_non_cuda_graph():
    torch = require_module("torch")
    from torch._dynamo.utils import counters

    def f(x):
        return torch.sin(x) * 2 + 1

    torch._dynamo.reset()
    counters.clear()
    x = torch.randn(8)
    out = torch.compile(f, backend="cudagraphs")(x)
    assert torch.allclose(out, f(x))
    assert counters["inductor"]["cudagraph_skips"] == 1, dict(counters["inductor"])
    torch._dynamo.reset()


def test_ptl810_reduce_overhead_mode_skips_its_cuda_graphs_off_cuda():
    """The flagged mode itself, compiled by inductor for a CPU tensor: the result is right and
    the one thing the mode adds (CUDA graphs) is skipped."""
    torch = require_module("torch")
    from torch._dynamo.utils import counters

    def f(x):
        return torch.cos(x) * 3 - 1

    torch._dynamo.reset()
    counters.clear()
    x = torch.randn(8)
    out = torch.compile(f, mode="reduce-overhead")(x)
    assert torch.allclose(out, f(x))
    assert counters["inductor"]["cudagraph_skips"] == 1, dict(counters["inductor"])
    torch._dynamo.reset()
