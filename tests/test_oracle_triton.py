"""Triton's compiler (3.x, no GPU) as the oracle for every Triton rule (PTL701-PTL710).

Every flagged construct in fixtures/triton/ is compiled for AMD gfx942 (MI300X) and gfx90a
(MI250X), both 64-lane CDNA GPUs, and for NVIDIA sm_90; the test shows that it fails on AMD,
or is ignored there, or (where the compiled kernel shows no failure) what the metadata and
assembly say is really at stake. Every near-miss and every rewrite the rule docs offer
compiles for all three targets (or, for code on the AMD side of a vendor guard, for AMD).

The fixtures' kernels are executed by the test (our own files; see triton_oracle.load_kernels);
portlint itself only parses them."""

from __future__ import annotations

import functools
import re

import pytest
from conftest import FIXTURES, require_module, scan_paths
from triton_oracle import (ALL_TARGETS, AMD_TARGETS, GFX90A, GFX942, MAX_THREADS_PER_WORKGROUP, SM90,
                           compile_kernel, load_functions, load_kernels)

pytestmark = pytest.mark.oracle

TRITON = FIXTURES / "triton"
AMD_IDS = [t[1] for t in AMD_TARGETS]


@functools.lru_cache(None)
def fixture(name: str) -> dict:
    require_module("triton")
    return load_kernels(TRITON / name)


def signature(fn, default_ptr: str = "*fp32", **types) -> dict:
    """Triton types for every parameter: constexprs by annotation, `*_ptr`/src/dst pointers,
    other parameters i32, unless given."""
    out = {}
    for p in fn.params:
        if p.is_constexpr:
            out[p.name] = "constexpr"
        elif p.name in types:
            out[p.name] = types[p.name]
        elif p.name.endswith("_ptr") or p.name in ("src", "dst"):
            out[p.name] = default_ptr
        else:
            out[p.name] = "i32"
    return out


@functools.lru_cache(None)
def helpers() -> dict:
    """Host kernels that call a fixture's @triton.jit device function (passed as a constexpr)."""
    require_module("triton")
    import triton_oracle_kernels

    return vars(triton_oracle_kernels)


def compile_all(fn, sig, constexprs=None, targets=ALL_TARGETS, **options) -> dict:
    return {t: compile_kernel(fn, sig, constexprs, t, **options) for t in targets}


def findings(name: str, rule: str) -> list:
    return [f for f in scan_paths([TRITON / name]).findings if f.rule_id == rule]


def amdgcn_body(compiled) -> list[str]:
    """Instruction lines of the AMDGCN listing (no directives, labels or comments)."""
    return [line.strip() for line in compiled.asm["amdgcn"].splitlines()
            if line.startswith("\t") and not line.lstrip().startswith((".", ";"))]


# ---------------------------------------------------------------- PTL701 inline PTX

PTX_UNARY = ["tanh_approx", "fast_rcp", "prmt_block"]


@pytest.mark.parametrize("name", PTX_UNARY + ["pack_bf16"])
def test_ptl701_inline_ptx_fails_for_amd_and_compiles_for_nvidia(name):
    ns = fixture("ptx_and_libdevice.py")
    h = helpers()
    if name == "pack_bf16":
        host, sig = h["apply_binary"], signature(h["apply_binary"], x_ptr="*i16", y_ptr="*u32")
    else:
        host, sig = h["apply_unary"], signature(h["apply_unary"], default_ptr="*i32" if name == "prmt_block" else "*fp32")
    results = compile_all(host, sig, {"BLOCK": 256, "FN": ns[name]})
    assert results[SM90].ok, str(results[SM90])
    for target in AMD_TARGETS:
        r = results[target]
        assert not r.ok, f"{name}: the AMD backend accepted PTX: {r}"
        # the assembler's or the register allocator's diagnosis, not some unrelated error
        assert re.search(r"invalid instruction|unknown directive|allocate output register for constraint|unknown asm constraint", r.diagnostics), r.diagnostics
    flagged = {f.span.start_line for f in findings("ptx_and_libdevice.py", "PTL701")}
    assert len(flagged) == 4


def test_ptl701_near_misses_compile_for_amd():
    ns = fixture("guarded_negative.py")
    h = helpers()
    # the PTX branch pruned by a constexpr the host sets only on NVIDIA
    off = compile_all(h["apply_unary_flag"], signature(h["apply_unary_flag"]), {"BLOCK": 256, "FN": ns["fast_tanh"], "FLAG": False})
    assert all(r.ok for r in off.values()), [str(r) for r in off.values()]
    on = compile_all(h["apply_unary_flag"], signature(h["apply_unary_flag"]), {"BLOCK": 256, "FN": ns["fast_tanh"], "FLAG": True})
    assert on[SM90].ok and not any(on[t].ok for t in AMD_TARGETS), "the guard is what keeps the PTX away from AMD"
    # an AMDGCN string with `v` constraints is assembled for AMD
    for target in AMD_TARGETS:
        r = compile_kernel(h["apply_unary"], signature(h["apply_unary"]), {"BLOCK": 256, "FN": ns["amd_exp2"]}, target)
        assert r.ok and any(line.startswith("v_exp_f32") for line in amdgcn_body(r)), str(r)
    # the Blackwell-only workaround is rejected for AMD; its portable twin compiles everywhere
    dot_sig = signature(h["apply_dot"], default_ptr="*fp16")
    assert not compile_kernel(h["apply_dot"], dot_sig, {"BLOCK": 32, "FN": ns["safe_dot__if"]}, GFX942).ok
    assert all(r.ok for r in compile_all(h["apply_dot"], dot_sig, {"BLOCK": 32, "FN": ns["safe_dot__else"]}).values())
    pdl = ns["pdl_kernel"]
    assert all(r.ok for r in compile_all(pdl, signature(pdl), {"USE_PDL": False}).values())
    assert not compile_kernel(pdl, signature(pdl), {"USE_PDL": True}, GFX942).ok


# ---------------------------------------------------------------- PTL702 CUDA libdevice

@pytest.mark.parametrize("name, expected", [
    ("gelu_kernel", r"Implicit conversion of CUDA __nv_\w+ device function has been dropped"),
    ("timed_kernel", r"allocate output register for constraint"),   # globaltimer is a PTX asm
])
def test_ptl702_cuda_libdevice_fails_for_amd(name, expected):
    fn = fixture("ptx_and_libdevice.py")[name]
    results = compile_all(fn, signature(fn, out_ptr="*i64"), {"BLOCK": 256} if name == "gelu_kernel" else {})
    assert results[SM90].ok, str(results[SM90])
    for target in AMD_TARGETS:
        assert not results[target].ok and re.search(expected, results[target].diagnostics), str(results[target])


def test_ptl701_ptl702_rewrite_neutral_libdevice_compiles_everywhere():
    """The rewrite of both rules: `from triton.language.extra import libdevice`."""
    ns = fixture("portable_negative.py")
    h = helpers()
    results = compile_all(h["apply_unary"], signature(h["apply_unary"]), {"BLOCK": 256, "FN": ns["gelu"]})
    assert all(r.ok for r in results.values()), [str(r) for r in results.values()]
    # and it calls the backend's own library: ROCm's __ocml_* on AMD, __nv_* on NVIDIA
    for target in AMD_TARGETS:
        assert "__ocml_tanh_f32" in results[target].asm["llir"] and "__nv_" not in results[target].asm["llir"]
    assert "__nv_tanhf" in results[SM90].asm["ttgir"]


# ---------------------------------------------------------------- PTL703 num_warps at 64 lanes

def _max_flat_workgroup_size(compiled) -> int:
    sizes = re.findall(r"\.max_flat_workgroup_size:\s*(\d+)", compiled.asm["amdgcn"])
    assert sizes, "no kernel metadata in the AMDGCN listing"
    return int(sizes[0])


# fixture -> the kernel its num_warps values launch (warps_indirect.py has configs only)
PTL703_FILES = {"launch_and_configs.py": "launch_and_configs.py", "warps_indirect.py": "launch_and_configs.py",
                "newer_syntax_kernels.py": "newer_syntax_kernels.py"}


@pytest.mark.parametrize("name", sorted(PTL703_FILES))
def test_ptl703_flagged_num_warps_exceed_the_workgroup_limit_in_the_compiled_kernel(name):
    copy = fixture(PTL703_FILES[name])["copy_kernel"]
    flagged = set()
    for f in findings(name, "PTL703"):
        m = re.match(r"num_warps=(\d+) is (\d+) threads", f.message)
        assert m, f.message
        flagged.add((int(m.group(1)), int(m.group(2))))
    assert flagged and {w for w, _ in flagged} <= {32, 64}
    block = "BLOCK_SIZE" if "BLOCK_SIZE" in [p.name for p in copy.params] else "BLOCK"
    for warps, threads in sorted(flagged):
        for target in AMD_TARGETS:
            r = compile_kernel(copy, signature(copy), {block: 4096}, target, num_warps=warps)
            assert r.ok and r.warp_size == 64, str(r)
            # Triton launches num_warps x warp_size threads; the code object accepts at most 1024
            assert r.threads_per_workgroup == threads > MAX_THREADS_PER_WORKGROUP
            assert _max_flat_workgroup_size(r) <= MAX_THREADS_PER_WORKGROUP < r.threads_per_workgroup
    nvidia = compile_kernel(copy, signature(copy), {block: 4096}, SM90, num_warps=32)
    assert nvidia.threads_per_workgroup == MAX_THREADS_PER_WORKGROUP, str(nvidia)


def test_ptl703_near_miss_and_rewrite_fit_the_workgroup():
    copy = fixture("launch_and_configs.py")["copy_kernel"]
    for target in ALL_TARGETS:
        # the rewrite: min(32, 1024 // warp_size) warps, from the target's own warp size
        warps = min(32, MAX_THREADS_PER_WORKGROUP // target[2])
        r = compile_kernel(copy, signature(copy), {"BLOCK_SIZE": 4096}, target, num_warps=warps)
        assert r.ok and r.threads_per_workgroup == MAX_THREADS_PER_WORKGROUP, str(r)
        if target[0] == "hip":
            assert warps == 16 and _max_flat_workgroup_size(r) >= r.threads_per_workgroup


# ---------------------------------------------------------------- PTL704 32-lane host math

def test_ptl704_compiled_kernels_run_64_lanes_per_warp_on_cdna():
    """`32 * num_warps` (flagged in launch_and_configs.py) counts half the threads on CDNA."""
    assert findings("launch_and_configs.py", "PTL704")
    copy = fixture("launch_and_configs.py")["copy_kernel"]
    for num_warps in (4, 8):
        results = compile_all(copy, signature(copy), {"BLOCK_SIZE": 1024}, num_warps=num_warps)
        assert results[SM90].threads_per_workgroup == 32 * num_warps
        for target in AMD_TARGETS:
            assert results[target].warp_size == 64
            assert results[target].threads_per_workgroup == 2 * (32 * num_warps)


def test_ptl704_gluon_layout_with_32_threads_per_warp_fails_for_amd():
    """The fixture's `gl.BlockedLayout([1, 4], [4, 8], ...)` (4 x 8 = 32 lanes): sm_90 accepts it,
    AMD rejects it ("Layout has 32 threads per warp, but the module specifies 64"); the rewrite,
    threads_per_warp from the target's warp size, compiles for AMD."""
    from triton.experimental.gluon import language as gl

    layout = load_functions(TRITON / "launch_and_configs.py", {"gluon_layout"})["gluon_layout"](gl)
    copy = helpers()["gluon_blocked_copy"]
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "LAYOUT": "constexpr"}
    results = compile_all(copy, sig, {"LAYOUT": layout})
    assert results[SM90].ok, str(results[SM90])
    for target in AMD_TARGETS:
        r = results[target]
        assert not r.ok and "Layout has 32 threads per warp, but the module specifies 64" in r.diagnostics, str(r)
        wave = gl.BlockedLayout([1, 4], [8, target[2] // 8], [4, 1], [1, 0])
        assert compile_kernel(copy, sig, {"LAYOUT": wave}, target).ok


# ---------------------------------------------------------------- PTL705 TMA descriptors

def test_ptl705_tma_descriptors_compile_for_amd_as_plain_loads():
    """Triton 3.9 accepts tensor descriptors on AMD and lowers them to ordinary global loads:
    what is lost is the TMA copy engine (speed), not correctness."""
    assert findings("hopper_features.py", "PTL705")
    copy = fixture("hopper_features.py")["device_desc_copy"]
    results = compile_all(copy, signature(copy, src="*fp16", dst="*fp16"), {"BLOCK_M": 64, "BLOCK_N": 64})
    assert all(r.ok for r in results.values()), [str(r) for r in results.values()]
    assert "cp.async.bulk.tensor" in results[SM90].asm["ptx"]
    for target in AMD_TARGETS:
        body = amdgcn_body(results[target])
        assert any(line.startswith(("global_load", "buffer_load")) for line in body)
        assert not any("tensor_load_to_lds" in line for line in body)
    # host-built descriptors (TensorDescriptor.from_tensor) as kernel arguments: same story
    h = helpers()
    host = h["load_through_descriptor"]
    hres = compile_all(host, signature(host, a_desc="tensordesc<fp16[128,64]>", c_ptr="*fp16"), {"BLOCK_M": 128, "BLOCK_K": 64})
    assert all(r.ok for r in hres.values()), [str(r) for r in hres.values()]
    assert "cp.async.bulk.tensor" in hres[SM90].asm["ptx"]
    assert not any("tensor_load_to_lds" in line for line in amdgcn_body(hres[GFX942]))


def test_ptl705_rewrite_masked_offsets_and_guarded_descriptor_compile_everywhere():
    h = helpers()
    blk = h["masked_tile_copy"]
    results = compile_all(blk, signature(blk, a="*fp16", out="*fp16"), {"BLOCK_M": 64, "BLOCK_K": 64})
    assert all(r.ok for r in results.values()), [str(r) for r in results.values()]
    # the older rewrite, tl.make_block_ptr, is gone from Triton 3.9 (the docs no longer offer it)
    tl = require_module("triton.language")
    import triton

    @triton.jit
    def block_ptr_load(a, M, K, BLOCK: tl.constexpr):
        p = tl.make_block_ptr(a, shape=(M, K), strides=(K, 1), offsets=(0, 0), block_shape=(BLOCK, BLOCK), order=(1, 0))
        tl.store(a + tl.arange(0, BLOCK), tl.sum(tl.load(p, boundary_check=(0, 1)), axis=1))

    gone = compile_kernel(block_ptr_load, signature(block_ptr_load, a="*fp16"), {"BLOCK": 32}, GFX942)
    assert not gone.ok and "Block pointers have been removed" in gone.diagnostics
    # the guarded descriptor (USE_TMA_LOAD set by the host only where TMA exists)
    maybe = fixture("guarded_negative.py")["maybe_tma"]
    host = h["apply_load_fn"]
    r = compile_all(host, signature(host, x_ptr="*fp16", y_ptr="*fp16"), {"BLOCK_M": 64, "BLOCK_K": 64, "FN": maybe, "FLAG": False})
    assert all(c.ok for c in r.values()), [str(c) for c in r.values()]


# ---------------------------------------------------------------- PTL706 NVIDIA scheduling knobs

def test_ptl706_num_ctas_is_rejected_and_gluon_nvidia_fails_for_amd():
    copy = fixture("launch_and_configs.py")["copy_kernel"]
    results = compile_all(copy, signature(copy), {"BLOCK_SIZE": 1024}, num_ctas=2)
    assert results[SM90].ok and results[SM90].metadata["num_ctas"] == 2
    for target in AMD_TARGETS:
        assert not results[target].ok and "num_ctas > 1 not supported" in results[target].diagnostics
    # Gluon's NVIDIA Hopper module (mbarrier): lowers for sm_90, not for AMD
    bar = helpers()["gluon_hopper_mbarrier"]
    gres = compile_all(bar, {"x_ptr": "*fp32"})
    assert gres[SM90].ok, str(gres[SM90])
    assert not any(gres[t].ok for t in AMD_TARGETS)


def test_ptl706_maxnreg_launch_pdl_and_warp_specialize_are_ignored_for_amd():
    copy = fixture("launch_and_configs.py")["copy_kernel"]
    sig = signature(copy)
    plain = compile_all(copy, sig, {"BLOCK_SIZE": 1024})
    knobs = compile_all(copy, sig, {"BLOCK_SIZE": 1024}, maxnreg=128, launch_pdl=True)
    assert knobs[SM90].metadata["maxnreg"] == 128 and ".maxnreg 128" in knobs[SM90].asm["ptx"]
    assert knobs[SM90].metadata["launch_pdl"] is True
    for target in AMD_TARGETS:
        assert knobs[target].ok
        assert "maxnreg" not in knobs[target].metadata and "launch_pdl" not in knobs[target].metadata
        assert amdgcn_body(knobs[target]) == amdgcn_body(plain[target]), "the knobs changed AMD code"
    ws = helpers()["dot_loop"]
    wsig = signature(ws, a_ptr="*fp16")
    for target in AMD_TARGETS:
        on = compile_kernel(ws, wsig, {"BLOCK": 64, "WARP_SPECIALIZE": True}, target)
        off = compile_kernel(ws, wsig, {"BLOCK": 64, "WARP_SPECIALIZE": False}, target)
        assert on.ok and off.ok and amdgcn_body(on) == amdgcn_body(off), "warp_specialize changed AMD code"
    assert len(findings("hopper_features.py", "PTL706")) == 5


def test_ptl706_near_miss_and_rewrite_options_compile():
    soft = fixture("portable_negative.py")["softmax_kernel"]
    sig = signature(soft)
    # near-miss: num_ctas=1, maxnreg=None, num_warps=16 (portable_negative.launch)
    results = compile_all(soft, sig, {"BLOCK_SIZE": 1024}, num_warps=16, num_ctas=1, maxnreg=None)
    assert all(r.ok and r.threads_per_workgroup <= MAX_THREADS_PER_WORKGROUP for r in results.values())
    # rewrite: AMD's own knobs on AMD, maxnreg on NVIDIA
    mm = fixture("launch_and_configs.py")["matmul_kernel"]
    msig = signature(mm, a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16")
    blocks = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    for target in AMD_TARGETS:
        r = compile_kernel(mm, msig, blocks, target, num_warps=8, num_stages=2, waves_per_eu=2, matrix_instr_nonkdim=16)
        assert r.ok and r.metadata["waves_per_eu"] == 2, str(r)
    assert compile_kernel(mm, msig, blocks, SM90, num_warps=8, num_stages=2, maxnreg=128).ok


# ---------------------------------------------------------------- PTL707 tl.dot precision

def test_ptl707_tf32x3_fails_for_amd():
    tma = fixture("hopper_features.py")["tma_matmul"]
    sig = signature(tma, a_desc="tensordesc<fp16[128,64]>", b_desc="tensordesc<fp16[64,128]>")
    results = compile_all(tma, sig, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8)
    assert results[SM90].ok, str(results[SM90])
    for target in AMD_TARGETS:
        assert not results[target].ok and "Got tf32x3" in results[target].diagnostics, str(results[target])


def test_ptl707_tf32_fails_on_gfx90a_and_allow_tf32_is_silently_ieee_there():
    dot = fixture("guarded_negative.py")["dot_kernel"]
    sig = signature(dot)
    tf32 = compile_all(dot, sig, {"BLOCK": 32, "PREC": "tf32"})
    assert tf32[SM90].ok and tf32[GFX942].ok
    assert not tf32[GFX90A].ok and "Got tf32" in tf32[GFX90A].diagnostics
    allow = fixture("hopper_features.py")["tf32_matmul"]
    results = compile_all(allow, signature(allow), {"BLOCK": 32})
    assert all(r.ok for r in results.values())
    precision = {t: "inputPrecision = tf32" in r.asm["ttir"] for t, r in results.items()}
    assert precision == {GFX942: True, GFX90A: False, SM90: True}, precision


def test_ptl707_near_misses_and_rewrite_compile_everywhere():
    tiled = fixture("portable_negative.py")["tiled_dot"]
    assert all(r.ok for r in compile_all(tiled, signature(tiled), {"BLOCK": 32}).values())
    # rewrite: the precision as a constexpr chosen on the host
    dot = fixture("guarded_negative.py")["dot_kernel"]
    for target in ALL_TARGETS:
        prec = "tf32x3" if target[0] == "cuda" else "ieee"
        assert compile_kernel(dot, signature(dot), {"BLOCK": 32, "PREC": prec}, target).ok


# ---------------------------------------------------------------- PTL708 FP8 dtypes

def test_ptl708_float8e4b15_fails_for_amd():
    legacy = fixture("hopper_features.py")["legacy_fp8"]
    results = compile_all(legacy, signature(legacy), {"BLOCK": 256})
    assert results[SM90].ok
    for target in AMD_TARGETS:
        assert not results[target].ok and "doesn't provide conversion" in results[target].diagnostics


def test_ptl708_ocp_fp8_compiles_for_mi300_but_emulated():
    """float8e4nv on gfx942: accepted, but converted in software (no v_cvt_pk_fp8 instruction,
    several times the code of the native FNUZ format): speed, plus the format question below."""
    q = fixture("hopper_features.py")["quantize_kernel"]
    ocp = compile_all(q, signature(q, y_ptr="*fp8e4nv"), {"BLOCK": 256})
    assert all(r.ok for r in ocp.values())
    assert "cvt.rn.satfinite.e4m3x2.f32" in ocp[SM90].asm["ptx"]
    h = helpers()["quantize_to"]
    tl = require_module("triton.language")
    fnuz = compile_kernel(h, signature(h, y_ptr="*fp8e4b8"), {"BLOCK": 256, "DT": tl.float8e4b8}, GFX942)
    native = [line for line in amdgcn_body(fnuz) if line.startswith("v_cvt_pk_fp8_f32")]
    assert native, "gfx942 converts FNUZ e4m3 with a native instruction"
    assert not any(line.startswith("v_cvt_pk_fp8") for line in amdgcn_body(ocp[GFX942]))
    assert len(amdgcn_body(ocp[GFX942])) > 2 * len(amdgcn_body(fnuz))


def test_ptl708_the_two_e4m3_formats_read_the_same_bits_differently():
    torch = require_module("torch")
    x = torch.tensor([1.0, 2.0, 240.0])
    bits = x.to(torch.float8_e4m3fn).view(torch.uint8)
    assert torch.equal(bits.view(torch.float8_e4m3fnuz).float(), x / 2)   # bias 8 vs 7
    assert torch.finfo(torch.float8_e4m3fn).max == 448.0 and torch.finfo(torch.float8_e4m3fnuz).max == 240.0


def test_ptl708_near_miss_and_rewrite_compile():
    e5 = fixture("portable_negative.py")["fp8_e5"]
    assert all(r.ok for r in compile_all(e5, signature(e5), {"BLOCK": 256}).values())
    tl = require_module("triton.language")
    h = helpers()["quantize_to"]
    for target, dtype, name in ((GFX942, tl.float8e4b8, "fp8e4b8"), (GFX90A, tl.float8e4b8, "fp8e4b8"), (SM90, tl.float8e4nv, "fp8e4nv")):
        assert compile_kernel(h, signature(h, y_ptr="*" + name), {"BLOCK": 256, "DT": dtype}, target).ok


# ---------------------------------------------------------------- PTL709 configs tuned for NVIDIA

FIXTURE_MATMUL_CONFIGS = [  # launch_and_configs.py, the flagged list (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps)
    (128, 256, 64, 3, 8),
    (256, 128, 64, 4, 8),
    (128, 128, 128, 3, 32),
]
AMD_LDS_BYTES = 64 * 1024  # gfx90a and gfx942


def test_ptl709_flagged_configs_compile_for_amd_within_its_lds():
    """The rule's estimate says each config needs more than 64 KiB; Triton 3.9's AMD backend
    compiles every one of them within 32 KiB (its pipeliner stages differently), so the list
    does not run out of LDS: what the NVIDIA tuning costs on AMD is speed."""
    assert len(findings("launch_and_configs.py", "PTL709")) == 2
    mm = fixture("launch_and_configs.py")["matmul_kernel"]
    sig = signature(mm, a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16")
    for bm, bn, bk, stages, warps in FIXTURE_MATMUL_CONFIGS:
        blocks = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}
        results = compile_all(mm, sig, blocks, num_stages=stages, num_warps=warps)
        estimate = (stages - 1) * (bm * bk + bk * bn) * 2
        for target in AMD_TARGETS:
            r = results[target]
            assert r.ok and r.num_stages == stages, str(r)
            assert r.shared <= AMD_LDS_BYTES < estimate, (str(r), estimate)
            assert results[SM90].shared > r.shared, (str(results[SM90]), str(r))


def test_ptl709_rewrite_config_compiles_for_amd():
    mm = fixture("launch_and_configs.py")["matmul_kernel"]
    sig = signature(mm, a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16")
    for target in AMD_TARGETS:
        r = compile_kernel(mm, sig, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, target,
                           num_stages=2, num_warps=8, waves_per_eu=2, matrix_instr_nonkdim=16)
        assert r.ok and r.shared <= AMD_LDS_BYTES, str(r)


# ---------------------------------------------------------------- PTL710 no TPU/Trainium backend

def test_ptl710_triton_has_gpu_backends_only():
    triton = require_module("triton")
    from triton.backends import backends
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    assert set(backends) == {"amd", "nvidia"}
    ns = fixture("kernel_for_tpu.py")
    add = ns["add_kernel"]
    sig = signature(add)
    assert all(r.ok for r in compile_all(add, sig, {"BLOCK_SIZE": 1024}).values())
    with pytest.raises(RuntimeError, match=r"0 compatible backends for target \(tpu\)"):
        triton.compile(ASTSource(add, sig, {"BLOCK_SIZE": 1024}), target=GPUTarget("tpu", "v5e", 128))


# ---------------------------------------------------------------- every near-miss kernel compiles

NEAR_MISSES = [
    # (fixture, kernel, pointer types, constexprs, options)
    ("portable_negative.py", "softmax_kernel", {}, {"BLOCK_SIZE": 1024}, {"num_warps": 16}),
    ("portable_negative.py", "tiled_dot", {}, {"BLOCK": 32}, {}),
    ("portable_negative.py", "split_bf16_dot", {}, {"BLOCK": 32}, {}),
    ("portable_negative.py", "fp8_e5", {}, {"BLOCK": 256}, {}),
    ("portable_negative.py", "small_fallback", {}, {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, {"num_stages": 4, "num_warps": 8}),
    ("portable_negative.py", "small_fallback", {}, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, {"num_stages": 2, "num_warps": 4}),
    ("guarded_negative.py", "dot_kernel", {}, {"BLOCK": 32, "PREC": "ieee"}, {}),
    ("guarded_negative.py", "pdl_kernel", {}, {"USE_PDL": False}, {}),
    ("kernel_for_tpu.py", "add_kernel", {}, {"BLOCK_SIZE": 1024}, {}),
    ("kernel_for_tpu.py", "scaled_relu_kernel", {"scale": "fp32"}, {"BLOCK": 1024}, {"num_warps": 4}),
    ("newer_syntax_kernels.py", "copy_kernel", {}, {"BLOCK": 64}, {"num_warps": 8}),
    ("launch_and_configs.py", "sweep_kernel", {}, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, {"num_warps": 16, "num_stages": 4}),
    # the PTL710 matmuls; with ACT="relu" each compiles its device function "relu_or_not too
    ("grouped_matmul_for_tpu.py", "mm_kernel", {}, {"BM": 32, "BN": 32, "BK": 32, "GROUP": 4, "ACT": "relu"}, {}),
    ("grouped_matmul_bad_order_for_tpu.py", "mm_kernel", {}, {"BM": 32, "BN": 32, "BK": 32, "GROUP": 4, "ACT": "relu"}, {}),
]


@pytest.mark.parametrize("name, kernel, types, constexprs, options", NEAR_MISSES,
                         ids=[f"{n}::{k}" for n, k, *_ in NEAR_MISSES])
def test_near_miss_kernels_compile_for_every_target(name, kernel, types, constexprs, options):
    fn = fixture(name)[kernel]
    results = compile_all(fn, signature(fn, **types), constexprs, **options)
    assert all(r.ok for r in results.values()), [str(r) for r in results.values() if not r.ok]
    assert all(r.threads_per_workgroup <= MAX_THREADS_PER_WORKGROUP for r in results.values())


def test_every_fixture_kernel_is_compiled_by_this_oracle():
    """A new @triton.jit kernel in fixtures/triton/ must get an oracle case here."""
    import ast
    import inspect

    from triton_oracle import _parse_top_level

    source = inspect.getsource(inspect.getmodule(test_every_fixture_kernel_is_compiled_by_this_oracle))
    for path in sorted(TRITON.glob("*.py")):
        tree = _parse_top_level(path)  # newer-syntax files: the statements this Python reads
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
                assert f'"{node.name}' in source, f"{path.name}::{node.name} has no oracle case"
