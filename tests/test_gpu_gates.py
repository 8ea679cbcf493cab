"""PTL310 against torch itself: the fixture's gates are executed with torch reporting what it
reports on an MI300X ((9, 4), gfx942, torch.version.hip set). Every reported gate opens (or
falls through to the NVIDIA branch) there; every near-miss picks the AMD-safe side."""

from __future__ import annotations

import sys
import types

import pytest
from conftest import FIXTURES, require_module, scan_paths

POSITIVE = FIXTURES / "gpu_gates" / "capability_gates.py"
NEGATIVE = FIXTURES / "gpu_gates" / "capability_gates_negative.py"


def _amd_torch(monkeypatch, capability=(9, 4), arch="gfx942"):
    torch = require_module("torch")
    props = types.SimpleNamespace(major=capability[0], minor=capability[1], gcnArchName=arch)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: capability)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *a, **k: props)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.version, "hip", "6.2.41133")
    monkeypatch.setattr(torch.version, "cuda", None)
    # vLLM's ROCm platform: capabilities are the GFX numbers, is_cuda() is False
    cap_int = capability[0] * 10 + capability[1]
    platform = types.SimpleNamespace(
        has_device_capability=lambda n: cap_int >= (n if isinstance(n, int) else n[0] * 10 + n[1]),
        is_cuda=lambda: False,
    )
    vllm = types.ModuleType("vllm")
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = platform
    monkeypatch.setitem(sys.modules, "vllm", vllm)
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    # Triton's target on ROCm names the GFX architecture
    target = types.SimpleNamespace(backend="hip", arch=arch, warp_size=64)
    driver = types.SimpleNamespace(active=types.SimpleNamespace(get_current_target=lambda: target))
    triton = types.ModuleType("triton")
    triton.runtime = types.SimpleNamespace(driver=driver)
    monkeypatch.setitem(sys.modules, "triton", triton)
    return torch


def _load(path):
    namespace: dict = {"__name__": path.stem}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace


@pytest.mark.oracle
def test_reported_gates_open_on_mi300x(monkeypatch):
    torch = _amd_torch(monkeypatch)
    ns = _load(POSITIVE)
    assert ns["use_flash_attention_3"]() is True
    assert ns["fp8_supported"](0) is True
    assert ns["pick_kernel"]() == "wgmma"
    assert ns["only_h100"](0) is True
    assert ns["machete_ok"]() is True
    assert ns["legacy_path"](torch.ones(2)).dtype == torch.float8_e4m3fn  # the Hopper branch ran
    assert ns["Runner"]().persistent() is True
    assert ns["TORCH_INDUCTOR_FLAGS"]["triton.enable_persistent_tma_matmul"] is True
    with pytest.raises(TypeError):
        ns["triton_arch_gate"]()  # 'gfx942' >= 90
    assert ns["cc_inline"]() is True
    assert ns["cc_swapped"]() is True
    assert ns["float8_dtype"]() == torch.float8_e4m3fn  # the OCP FP8 type MI300X does not use
    assert ns["use_wgmma"]() is True
    assert ns["use_tma"]() is True


@pytest.mark.oracle
def test_exact_sm90_gate_passes_on_mi210(monkeypatch):
    _amd_torch(monkeypatch, capability=(9, 0), arch="gfx90a")
    assert _load(POSITIVE)["sm90_only"](0) == "cutile"


@pytest.mark.oracle
def test_near_misses_stay_on_the_amd_side(monkeypatch):
    _amd_torch(monkeypatch)
    ns = _load(NEGATIVE)
    assert ns["hopper_checked"]() is False
    assert ns["hopper_via_cuda_version"]() is False
    assert ns["hopper_platform"]() is False
    assert ns["check_tma_support"]() is False
    assert ns["dispatch"]() == "ck"
    assert ns["blackwell_exact"]() is False
    assert ns["mi300"](0) is True
    assert ns["wgmma_checked"]() is False


def test_every_positive_gate_is_reported_once():
    result = scan_paths([POSITIVE])
    lines = sorted(f.span.start_line for f in result.findings if f.rule_id == "PTL310")
    assert len(lines) == len(set(lines)) == 16
    msg = next(f.message for f in result.findings if f.rule_id == "PTL310")
    assert "MI300X (9, 4)" in msg


# ---- PTL311: the C++ gates ----------------------------------------------------------------

CPP_POSITIVE = FIXTURES / "gpu_gates" / "capability_gates.cu"
CPP_NEGATIVE = FIXTURES / "gpu_gates" / "capability_gates_negative.cu"


@pytest.mark.parametrize(
    ("condition", "misfires"),
    [
        ("M >= 9", True),
        ("M * 10 + m >= 90 and M * 10 + m < 100", True),
        ("M == 8", True),  # AMD takes the else, which is the Hopper side
        ("M == 9 and u0", True),  # a free operand does not hide the gate
        ("M >= 7", False),  # true on Ampere, Hopper and AMD alike
        ("M >= 10", False),  # Blackwell only: no Instinct GPU reports 10
        ("M < 5", False),
        ("u0 > 3", False),  # no capability in it
    ],
)
def test_cpp_gate_evaluation(condition, misfires):
    from portlint.analyses.cuda.capability_gates import misfire

    assert (misfire(condition) is not None) == misfires


def test_cpp_gate_translation_never_runs_code():
    """Anything but names, numbers and operators is refused before evaluation."""
    from portlint.analyses.cuda.capability_gates import _Facts, misfire, translate

    facts = _Facts("cudaDeviceProp prop;")
    assert translate("prop.major >= 9 && __import__(os).system(x)", facts, 100) is not None
    assert misfire(translate("prop.major >= 9 ? 1 : 0", facts, 100) or "") is None
    assert misfire("__import__('os').system('true') or M >= 9") is None


def test_every_cpp_positive_is_reported_and_no_near_miss():
    result = scan_paths([CPP_POSITIVE, CPP_NEGATIVE], select=("PTL311",))
    by_file = {}
    for f in result.findings:
        by_file.setdefault(f.path.rsplit("/", 1)[-1], []).append(f)
    # 5 gates in conditions, a helper's `return prop.major >= 9;` and a test read through a
    # helper that returns the capability value
    assert len(by_file.get("capability_gates.cu", [])) == 7
    assert "capability_gates_negative.cu" not in by_file
    assert all("MI300X (9.4)" in f.message for f in by_file["capability_gates.cu"])


@pytest.mark.oracle
def test_cpp_gate_survives_the_port():
    """The hipified gate compiles for gfx90a: nothing at build time catches it, and at run time
    hipDeviceProp_t::major is 9 on MI300X."""
    from oracles import hipcc_compile

    src = (
        "__global__ void hopper(float* o) { o[0] = 2.0f; }\n__global__ void other(float* o) { o[0] = 1.0f; }\n"
        "void launch(float* o, int dev) {\n  hipDeviceProp_t prop;\n  (void)hipGetDeviceProperties(&prop, dev);\n"
        "  if (prop.major >= 9) hipLaunchKernelGGL(hopper, 1, 64, 0, 0, o); else hipLaunchKernelGGL(other, 1, 64, 0, 0, o);\n}\n"
    )
    ok, out = hipcc_compile(src)
    assert ok, out


@pytest.mark.parametrize(
    ("code", "condition"),
    [
        ("void f() {", "at::cuda::getCurrentDeviceProperties()->major >= 9"),
        ("void f(CUdevice d) { int cc; cuDeviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);", "cc >= 9"),
        ("void f(int d) { hipDeviceProp_t p; hipGetDeviceProperties(&p, d); int sm = p.major * 10 + p.minor;", "sm >= 90 && sm < 100"),
    ],
)
def test_cpp_capability_sources(code, condition):
    """PyTorch's device-properties accessor, the driver attribute and hipified properties
    are capability sources too."""
    from portlint.analyses.cuda.capability_gates import _Facts, misfire, translate

    text = code + "\n  if (" + condition + ") {}\n}\n"
    py = translate(condition, _Facts(text), text.index("if ("))
    assert py is not None and misfire(py) is not None, py
