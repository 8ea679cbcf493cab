"""PTL901-PTL906 and the Python guard analysis.

The oracle tests run the flagged spellings on the CPU-only torch 2.13 build, which is what
a TPU VM or a Neuron host runs under torch_xla: the calls PTL901/PTL902 call errors raise
there, the ones PTL902 calls warnings return nothing useful, and the rewrites work."""

from __future__ import annotations

import ast
import textwrap

import pytest
from conftest import require_module, scan_paths

from portlint.analyses.python.guards import ALL, CUDA_LIKE, GAUDI, ROCM, TPU, TRAINIUM, XLA, Guards, condition


# ---- oracles: what the flagged code does without CUDA ---------------------------------------

def _torch_without_cuda():
    torch = require_module("torch")
    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA; the claims are about hosts without it")
    return torch


@pytest.mark.oracle
@pytest.mark.parametrize(
    "spelling",
    [
        lambda t: t.zeros(2, device="cuda"),
        lambda t: t.zeros(2, device=t.device("cuda", 0)),
        lambda t: t.zeros(2).cuda(),
        lambda t: t.zeros(2).to("cuda:0"),
        lambda t: t.nn.Linear(2, 2).cuda(),
        lambda t: t.set_default_tensor_type("torch.cuda.FloatTensor"),
        lambda t: t.cuda.FloatTensor(4),
    ],
    ids=["device-kwarg", "torch.device", "tensor.cuda", "to-cuda-0", "module.cuda", "default-tensor-type", "cuda-tensor-type"],
)
def test_ptl901_cuda_devices_raise_without_cuda(spelling):
    torch = _torch_without_cuda()
    with pytest.raises((AssertionError, RuntimeError, TypeError)):
        spelling(torch)


@pytest.mark.oracle
def test_ptl901_rewrite_runs_on_the_host_device():
    torch = _torch_without_cuda()
    device = torch.device("cpu")  # stands in for the device variable the rewrite introduces
    x = torch.zeros(2).to(device)
    assert x.device.type == "cpu"


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(["synchronize", "current_device", "get_device_name", "mem_get_info",
                                         "set_device", "reset_peak_memory_stats", "Stream", "Event", "device"]))
def test_ptl902_error_calls_raise_without_cuda(name):
    torch = _torch_without_cuda()
    from portlint.rules.device_strings import RAISING

    assert name in RAISING
    args = (0,) if name in ("set_device", "device") else ()
    with pytest.raises((AssertionError, RuntimeError, AttributeError)):
        result = getattr(torch.cuda, name)(*args)
        if hasattr(result, "__enter__"):  # torch.cuda.device(i) raises when entered
            with result:
                pass


@pytest.mark.oracle
def test_ptl902_warning_calls_silently_report_nothing():
    torch = _torch_without_cuda()
    from portlint.rules.device_strings import HOUSEKEEPING, QUIET

    assert torch.cuda.device_count() == 0
    assert torch.cuda.memory_allocated() == 0 and torch.cuda.max_memory_allocated() == 0
    assert torch.cuda.is_bf16_supported() is False
    assert {"device_count", "memory_allocated", "max_memory_allocated", "is_bf16_supported"} <= QUIET
    # housekeeping that PTL902 leaves alone really is harmless there
    torch.cuda.empty_cache()
    torch.cuda.manual_seed_all(0)
    assert torch.cuda.get_rng_state_all() == []
    assert {"empty_cache", "manual_seed_all", "get_rng_state_all"} <= HOUSEKEEPING


@pytest.mark.oracle
def test_ptl905_probe_is_false_so_the_ternary_picks_the_cpu():
    torch = _torch_without_cuda()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert device == "cpu"


@pytest.mark.oracle
def test_ptl902_cuda_amp_autocast_is_disabled_without_cuda():
    torch = _torch_without_cuda()
    with pytest.warns(UserWarning):
        ctx = torch.cuda.amp.autocast()
    with ctx:
        y = torch.ones(2, 2) @ torch.ones(2, 2)
    assert y.dtype == torch.float32  # nothing was autocast: the region ran in full precision


# ---- the guard analysis -----------------------------------------------------------------------

def _cond(src: str):
    return condition(ast.parse(src, mode="eval").body)


@pytest.mark.parametrize(
    "src, true_on",
    [
        ("torch.cuda.is_available()", CUDA_LIKE),
        ("not torch.cuda.is_available()", ALL - CUDA_LIKE),
        ("torch.version.hip", frozenset({ROCM})),
        ("torch.version.hip is None", ALL - {ROCM}),
        ("device.type == 'hpu'", frozenset({GAUDI})),
        ("x.device.type != 'cuda'", ALL - CUDA_LIKE),
        ("xm.xla_device_hw(dev) == 'TPU'", frozenset({TPU})),
        ("current_platform.is_rocm()", frozenset({ROCM})),
        ("is_torch_xla_available()", XLA),
        ("is_torch_xla_available(check_is_gpu=True)", CUDA_LIKE),
        ("is_npu_available()", frozenset({"other"})),
        ("args.n_gpu > 0", CUDA_LIKE),
        ("torch.cuda.device_count() == 0", ALL - CUDA_LIKE),
        ("'cuda' in str(device)", CUDA_LIKE),
        ("device.type in ('xla', 'hpu')", XLA | {GAUDI}),
        ("state.distributed_type == DistributedType.XLA", XLA),
        ("use_cuda and torch.cuda.device_count() > 1", CUDA_LIKE),
        ("args.no_cuda", ALL - CUDA_LIKE),
    ],
)
def test_condition_reads_device_tests(src, true_on):
    cond = _cond(src)
    assert cond is not None and cond.when_true == true_on, cond


@pytest.mark.parametrize("src", ["x > 0", "args.lr == 0.1", "mode == 'train'", "cuda_kernel", "len(devices) > 1"])
def test_condition_ignores_other_tests(src):
    assert _cond(src) is None


def _guards(src: str):
    module = ast.parse(textwrap.dedent(src))
    marks = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("mark_"):
            marks[node.func.id] = node
    return Guards(module), marks


def test_guards_branches_early_exits_ternaries_decorators_aliases():
    g, m = _guards(
        """
        def f(device):
            if device.type == "hpu":
                mark_hpu()
                return
            mark_not_hpu()
            if torch.cuda.is_available():
                mark_cuda()
            else:
                mark_no_cuda()
            x = mark_t() if is_torch_xla_available() else mark_f()
            ok = use_cuda and mark_and()

        @unittest.skipUnless(torch.cuda.is_available(), "gpu")
        def test_gpu():
            mark_skip()

        idx = d.index if d.type == "cuda" else None
        if idx is not None:
            mark_alias()

        def g():
            if not torch.cuda.is_available():
                raise SystemExit("gpu needed")
            mark_required()
        """
    )
    assert g.platforms(m["mark_hpu"]) == {GAUDI}
    assert GAUDI not in g.platforms(m["mark_not_hpu"])
    assert g.platforms(m["mark_cuda"]) == CUDA_LIKE
    assert g.platforms(m["mark_no_cuda"]) == ALL - CUDA_LIKE - {GAUDI}
    assert g.platforms(m["mark_t"]) == XLA
    assert not g.platforms(m["mark_f"]) & XLA
    assert g.platforms(m["mark_and"]) <= CUDA_LIKE
    assert g.platforms(m["mark_skip"]) == CUDA_LIKE
    assert g.platforms(m["mark_alias"]) == CUDA_LIKE
    assert g.platforms(m["mark_required"]) == CUDA_LIKE
    assert g.platforms(m["mark_required"], requirements=False) == ALL
    assert "torch.cuda.is_available()" in g.reason(m["mark_cuda"], {TPU})


# ---- fixes and scope --------------------------------------------------------------------------

def _scan_text(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan_paths([path], root=tmp_path, select=("PTL90",))


def test_the_same_code_is_quiet_without_another_target_and_reported_with_one(tmp_path):
    body = """
    import torch
    model = torch.nn.Linear(2, 2).cuda()
    torch.cuda.synchronize()
    """
    assert not _scan_text(tmp_path, "gpu.py", body).findings
    found = _scan_text(tmp_path, "xla.py", "import torch_xla\n" + textwrap.dedent(body)).findings
    assert sorted(f.rule_id for f in found) == ["PTL901", "PTL902"]
    assert all(set(f.targets) == {TPU, TRAINIUM} for f in found)


def test_fix_uses_the_device_the_file_already_uses(tmp_path):
    from portlint.output.fixes import fixed_text

    src = """
    import torch
    import torch_xla.core.xla_model as xm
    device = xm.xla_device()
    w = torch.zeros(3, device=torch.device("cuda"))
    b = torch.ones(3).cuda()
    """
    result = _scan_text(tmp_path, "t.py", src)
    assert all(f.fix and f.fix.applicability == "unsafe" for f in result.findings)
    new, n = fixed_text(textwrap.dedent(src), result.findings, include_unsafe=True)
    assert n == 2
    assert "device=xm.xla_device()" in new and ".to(xm.xla_device())" in new and "cuda" not in new
    ast.parse(new)


def test_no_automatic_fix_when_the_file_targets_xla_and_gaudi(tmp_path):
    src = """
    import torch
    import torch_xla
    import habana_frameworks.torch.core as htcore
    x = torch.zeros(1).cuda()
    """
    (f,) = _scan_text(tmp_path, "both.py", src).findings
    assert f.fix is None and set(f.targets) == {TPU, TRAINIUM, GAUDI}
