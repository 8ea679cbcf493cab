"""CUDA-only libraries and features (PTL603-PTL612, PTL614, PTL615): toolchain proof of the
severities, and the fixes and suggestions the rules hand out."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, scan_paths
from oracles import hipcc_compile

from portlint.rules.cuda_libraries import _rocshmem_name

LIB = FIXTURES / "cuda_libraries"


def _findings(name, rule):
    result = scan_paths([LIB / name])
    return [f for f in result.findings if f.rule_id == rule and not f.suppressed]


def _sites(name, rule):
    """Every reported site of `rule`: each finding and the uses folded under it (a rule
    with `fold = "root"`, portlint.findings.roots)."""
    return [m for f in _findings(name, rule) for m in (f, *f.related)]


@pytest.mark.oracle
def test_device_side_launch_is_rejected_by_hipcc():
    """PTL611 is an error: hipcc refuses a kernel launch in device code; the host launch compiles."""
    ok, _ = hipcc_compile("__global__ void child(int* d) { d[0] = 1; }\n"
                          "__global__ void parent(int* d) { child<<<1, 1>>>(d); }\n")
    assert not ok
    ok, out = hipcc_compile("__global__ void child(int* d) { d[0] = 1; }\n"
                            "void host(int* d) { child<<<1, 1>>>(d); }\n")
    assert ok, out


@pytest.mark.oracle
def test_launch_bounds_with_min_blocks_compiles_for_amd():
    """PTL612 is a warning, not an error: the code builds, with a different meaning."""
    ok, out = hipcc_compile("__global__ void __launch_bounds__(256, 2) k(float* x) { x[threadIdx.x] = 0.f; }\n")
    assert ok, out


@pytest.mark.oracle
def test_surface_write_and_system_fence_compile_for_amd():
    """PTL614 is a warning/note: HIP 5.2 declares both; the problem is at run time."""
    ok, out = hipcc_compile("__global__ void w(hipSurfaceObject_t s, volatile int* f) {\n"
                            "  surf2Dwrite(1.0f, s, 0, 0); __threadfence_system(); *f = 1; }\n")
    assert ok, out


@pytest.mark.oracle
@pytest.mark.parametrize("header", ["cuda/atomic", "cuda/std/atomic", "nvtx3/nvToolsExt.h", "cupti.h"])
def test_library_headers_are_missing_under_hipcc(header):
    ok, _ = hipcc_compile(f"#include <{header}>\nint x;\n")
    assert not ok


def test_cudnn_findings_name_the_miopen_twin():
    assert len(_findings("cudnn_setup.cu", "PTL603")) == 1  # the #include, its 11 uses folded under it
    found = _sites("cudnn_setup.cu", "PTL603")
    assert len(found) == 12
    create = [f for f in found if "`cudnnCreate`" in f.message]
    assert create and "miopenCreate" in create[0].message
    assert all(f.fix is None for f in found)
    assert all(f.targets["rocm"].value == "error" for f in found)


def test_cublas_math_mode_is_a_warning_with_a_safe_rename_and_lt_gaps_are_errors():
    found = _findings("cublas_math_and_lt.cu", "PTL604")
    by_name = {f.snippet: f for f in found}
    mode = by_name["cublasSetMathMode"]
    assert mode.targets["rocm"].value == "warning"
    assert mode.fix.applicability == "safe" and mode.fix.edits[0].text == "hipblasSetMathMode"
    gap = by_name["CUBLASLT_EPILOGUE_RELU_AUX_BIAS"]
    assert gap.targets["rocm"].value == "error" and gap.fix is None
    assert "HIPIFY 014177bc" in gap.message


def test_cutensor_renames_are_unsafe_and_multi_gpu_is_an_error():
    found = _sites("cutensor_contract.cu", "PTL605")
    handle = next(f for f in found if f.snippet == "cutensorHandle_t")
    assert handle.fix.applicability == "unsafe" and handle.fix.edits[0].text == "hiptensorHandle_t"
    assert handle.targets["rocm"].value == "warning"
    mg = next(f for f in found if f.snippet == "cutensorMgCreate")
    assert mg.targets["rocm"].value == "error" and mg.fix is None


def test_cutlass_is_reported_once_per_file():
    assert len(_findings("cutlass_namespace_only.cu", "PTL606")) == 1


def test_nvtx_fixes_rename_to_roctx_and_are_unsafe():
    found = _findings("nvtx_ranges.cu", "PTL608")
    fixes = {f.snippet: f.fix for f in found}
    assert fixes["nvtxRangePushA"].edits[0].text == "roctxRangePushA"
    assert fixes["nvtxRangeEnd"].edits[0].text == "roctxRangeStop"
    assert all(fx.applicability == "unsafe" for fx in fixes.values() if fx)


def test_nvshmem_names_map_to_rocshmem_forms():
    assert _rocshmem_name("nvshmem_putmem") == "rocshmem_putmem"
    assert _rocshmem_name("nvshmemx_putmem_block") == "rocshmem_putmem_wg"
    assert _rocshmem_name("nvshmemx_barrier_all_warp") == "rocshmem_barrier_all_wave"
    assert _rocshmem_name("nvshmemx_putmem_on_stream") == "rocshmem_putmem_on_stream"
    found = _findings("nvshmem_put.cu", "PTL615")
    assert any("rocshmem_putmem_wg" in f.message for f in found)


def test_launch_bounds_suggestion_gives_the_amd_formula():
    found = _findings("device_launch_and_bounds.cu", "PTL612")
    assert len(found) == 2
    assert "(2) * (256) / (warpSize * 2)" in found[0].suggestion
