"""cuda_hopper (PTL301-PTL309) proven by the toolchains.

Each NVIDIA-only construct, in its HIP form, fails `HIP_PLATFORM=amd hipcc
--offload-arch=gfx90a -c`; the rewrites the suggestions name compile (one translation unit
for all of them, to keep the suite fast). Only compile / no-compile is asserted."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES, REPO, scan_paths
from oracles import hipcc_compile

BROKEN = [
    ("PTL301-wgmma", '__global__ void k(float* o) { asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory"); o[0] = 1.0f; }'),
    ("PTL302-tensor-map", "__global__ void k(const __grid_constant__ CUtensorMap m, float* o) { o[0] = 1.0f; }"),
    (
        "PTL302-bulk-copy",
        '__global__ void k(float* o) { __shared__ float t[64]; asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];" :: "r"(0), "l"(o), "r"(0) : "memory"); o[0] = t[0]; }',
    ),
    ("PTL303-mbarrier", '__global__ void k(unsigned* o) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(o[0]), "r"(1)); }'),
    ("PTL304-cluster-dims", "__global__ void __cluster_dims__(2, 1, 1) k(float* o) { o[0] = 1.0f; }"),
    (
        "PTL304-this-cluster",
        "#include <hip/hip_cooperative_groups.h>\n__global__ void k(float* o) { auto c = cooperative_groups::this_cluster(); c.sync(); o[0] = 1.0f; }",
    ),
    ("PTL305-setmaxnreg", '__global__ void k(float* o) { asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\\n" ::: "memory"); o[0] = 1.0f; }'),
    ("PTL306-tcgen05", '__global__ void k(unsigned* o) { asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"(o[0])); }'),
    ("PTL307-nv-fp8", "__global__ void k(const float* x, __nv_fp8_e4m3* q) { q[0] = __nv_fp8_e4m3(x[0]); }"),
    ("PTL307-cuda-fp8-header", "#include <cuda_fp8.h>\n__global__ void k(float* o) { o[0] = 1.0f; }"),
    ("PTL307-cvt-e4m3", '__global__ void k(const float* x, unsigned short* q) { unsigned short r; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(r) : "f"(x[0]), "f"(x[1])); q[0] = r; }'),
    ("PTL308-grid-dependency", "__global__ void k(const float* i, float* o) { cudaGridDependencySynchronize(); o[0] = i[0]; }"),
    ("PTL308-griddepcontrol", '__global__ void k(float* o) { o[0] = 1.0f; asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }'),
    ("PTL309-multicast", "void f(unsigned long long* h, const void* prop) { cuMulticastCreate(h, prop); }"),
    ("PTL309-multimem", '__global__ void k(float* o) { float v; asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];" : "=f"(v) : "l"(o)); o[0] = v; }'),
]

# The rewrites the suggestions name, in one translation unit.
FIXED = r"""
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float16_t_v __attribute__((ext_vector_type(16)));
#include <hip/hip_cooperative_groups.h>

// PTL301 / PTL306: MFMA instead of wgmma / tcgen05
__global__ void mfma_tile(const half4_t* a, const half4_t* b, float* out) {
  float16_t_v acc = {};
  acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[threadIdx.x], b[threadIdx.x], acc, 0, 0, 0);
  out[threadIdx.x] = acc[0];
}

// PTL302 / PTL303: plain pointer, tile loaded with ordinary loads, block barrier
__global__ void tile_load(const float* __restrict__ a, int lda, float* out) {
  __shared__ float tile[64 * 64];
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) tile[i] = a[(i / 64) * lda + i % 64];
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}

// PTL304: exchange through global memory with a grid-wide barrier
__global__ void pair_reduce(float* partial, float* out) {
  namespace cg = cooperative_groups;
  if (threadIdx.x == 0) partial[blockIdx.x] = 1.0f;
  cg::this_grid().sync();
  if (threadIdx.x == 0) out[blockIdx.x] = partial[blockIdx.x] + partial[blockIdx.x ^ 1];
}

// PTL305: compile-time occupancy instead of setmaxnreg
__global__ void __launch_bounds__(256) __attribute__((amdgpu_waves_per_eu(1, 2))) occupancy(float* o) { o[threadIdx.x] = 0.0f; }

// PTL308: no PDL, stream order
__global__ void consumer(const float* in, float* out) { out[threadIdx.x] = 2.0f * in[threadIdx.x]; }

// PTL309: partition by CU mask instead of green contexts
hipError_t partitioned_stream(hipStream_t* s) {
  unsigned mask[2] = {0xffffu, 0u};
  return hipExtStreamCreateWithCUMask(s, 2, mask);
}
"""


@pytest.mark.oracle
@pytest.mark.parametrize("case, source", BROKEN, ids=[c[0] for c in BROKEN])
def test_construct_fails_for_amd(case, source):
    ok, _ = hipcc_compile(source)
    assert not ok, f"{case}: hipcc accepted the NVIDIA-only form for gfx90a"


@pytest.mark.oracle
def test_suggested_rewrites_compile_for_amd():
    ok, out = hipcc_compile(FIXED)
    assert ok, out


def _fp8_rewrite_block() -> str:
    """The ```cuda block of PTL307's documented rewrite, as the docs print it."""
    from portlint.core.catalog import load_rules

    text = load_rules()["PTL307"].docs_rewrite
    block = re.search(r"```cuda\n(.*?)```", text, re.S)
    assert block, "PTL307's rewrite has no cuda block"
    return block.group(1)


# The rewrite in a translation unit: the real <hip/hip_fp8.h> where HIP has it (ROCm 6.2+),
# else tests/data/hip_fp8_api.h (its documented API, declarations only). The kernel uses the
# type the way a port would; the static_asserts state which format each target must get.
FP8_USE = r"""
#include <type_traits>
#if defined(__HIP_DEVICE_COMPILE__) && (defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__))
static_assert(std::is_same<fp8_t, __hip_fp8_e4m3_fnuz>::value, "MI300 family must get FNUZ");
#else
static_assert(std::is_same<fp8_t, __hip_fp8_e4m3>::value, "other AMD targets get OCP");
#endif
static_assert(sizeof(fp8_t) == 1, "one byte per value");
__global__ void quantize(const float* x, fp8_t* q, float* back) {
  fp8_t v(x[threadIdx.x]);
  q[threadIdx.x] = v;
  back[threadIdx.x] = static_cast<float>(v);
}
"""
FP8_HEADER = """#if __has_include(<hip/hip_fp8.h>)
#include <hip/hip_fp8.h>
#else
#include "hip_fp8_api.h"
#endif
"""


@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["gfx90a", "gfx940"])
def test_fp8_rewrite_type_checks_and_picks_the_format_per_target(arch):
    """hipcc -fsyntax-only, host and device passes: the rewrite's names, its #if chain and a
    kernel using the chosen type are accepted, and gfx940 (MI300) gets FNUZ, gfx90a OCP."""
    source = FP8_HEADER + _fp8_rewrite_block() + FP8_USE
    ok, out = hipcc_compile(source, extra=("-fsyntax-only", "-I", str(REPO / "tests" / "data")), arch=arch)
    assert ok, out
    # and the check can fail: the OCP type where FNUZ is required is rejected
    swapped = source.replace("using fp8_t = __hip_fp8_e4m3_fnuz;", "using fp8_t = __hip_fp8_e4m3;")
    ok, out = hipcc_compile(swapped, extra=("-fsyntax-only", "-I", str(REPO / "tests" / "data")), arch="gfx940")
    assert not ok and "MI300 family must get FNUZ" in out


@pytest.mark.oracle
def test_fp8_conversion_hardware_exists_on_mi300_only():
    """What the FNUZ branch stands on: the packed FP8 conversion instruction (FNUZ on gfx94x)
    is a gfx940 instruction; gfx90a has no FP8 hardware."""
    kernel = "__global__ void k(const float* x, int* q) { q[0] = __builtin_amdgcn_cvt_pk_fp8_f32(x[0], x[1], 0, false); }"
    ok, out = hipcc_compile(kernel, arch="gfx940")
    assert ok, out
    ok, out = hipcc_compile(kernel, arch="gfx90a")
    assert not ok and "fp8-insts" in out


def test_guarded_pdl_is_a_suppressed_optional_hint():
    """PDL under an arch gate with no #else: AMD simply does not overlap the launches, which
    is harmless (rules/optional-hints.toml), so the finding is suppressed with that reason;
    unguarded PDL stays an error."""
    result = scan_paths([FIXTURES / "cuda_hopper" / "cluster_pdl.cu"])
    pdl = {f.span.start_line: f for f in result.findings if f.rule_id == "PTL308"}
    guarded = [f for f in pdl.values() if "Trigger" in f.snippet]
    assert guarded and "optional hint" in (guarded[0].suppressed or "")
    assert any(f.targets["rocm"].value == "error" and not f.suppressed for f in pdl.values() if "Trigger" not in f.snippet)


def test_one_finding_per_asm_statement_from_the_specific_rule():
    result = scan_paths([FIXTURES / "cuda_hopper" / "wgmma_pipeline.cu"])
    lines = [(f.span.start_line, f.rule_id) for f in result.findings]
    assert len(lines) == len(set(ln for ln, _ in lines)), "two findings on one line"
    wgmma = [f for f in result.findings if f.rule_id == "PTL301"]
    assert wgmma and all("MFMA" in f.suggestion or "mfma" in f.suggestion for f in wgmma)
    assert not any(f.rule_id == "PTL201" and "wgmma" in f.snippet for f in result.findings)
