"""cuda_async (PTL401-PTL404) proven by the toolchains: the construct fails hipcc for gfx90a,
the rewrites the suggestions name compile (one translation unit)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, scan_paths
from oracles import hipcc_compile

BROKEN = [
    ("PTL401-cp-async", '__global__ void k(const float* g) { __shared__ float t[4]; asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(0), "l"(g)); (void)t; }'),
    ("PTL401-commit-group", '__global__ void k(float* o) { asm volatile("cp.async.commit_group;\\n" ::); o[0] = 1.0f; }'),
    ("PTL401-pipeline-primitives", "#include <cuda_pipeline.h>\n__global__ void k(const float* g) { __shared__ float t[4]; __pipeline_memcpy_async(t, g, 16); __pipeline_commit(); }"),
    (
        "PTL401-cg-memcpy-async",
        "#include <hip/hip_cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
        "__global__ void k(const float* g, float* o) { __shared__ float t[64]; auto b = cg::this_thread_block(); cg::memcpy_async(b, t, g, sizeof(t)); cg::wait(b); o[0] = t[0]; }",
    ),
    ("PTL402-ldmatrix", '__global__ void k(unsigned* o) { unsigned r; asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(0)); o[0] = r; }'),
    ("PTL403-wmma", "#include <mma.h>\n__global__ void k(float* o) { nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc; nvcuda::wmma::fill_fragment(acc, 0.0f); }"),
    (
        "PTL403-mma-sync",
        '__global__ void k(float* c, const unsigned* a) { float d0 = 0, d1 = 0, d2 = 0, d3 = 0; asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a[0]), "r"(a[1]), "r"(a[2])); c[0] = d0 + d1 + d2 + d3; }',
    ),
    ("PTL404-redux", '__global__ void k(unsigned* o) { unsigned s; asm("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(s) : "r"(o[threadIdx.x])); o[0] = s; }'),
    ("PTL404-vote", '__global__ void k(unsigned* o) { unsigned b; asm volatile("vote.sync.ballot.b32 %0, 1, 0xffffffff;" : "=r"(b)); o[0] = b; }'),
]

FIXED = r"""
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float4_v __attribute__((ext_vector_type(4)));

// PTL401: register-staged double buffer instead of cp.async
__global__ void staged(const float4* __restrict__ src, float* out, int stages) {
  __shared__ float4 buf[2][128];
  const int t = threadIdx.x;
  buf[0][t] = src[t];
  __syncthreads();
  float acc = 0.0f;
  for (int s = 0; s < stages; ++s) {
    float4 next = (s + 1 < stages) ? src[(s + 1) * 128 + t] : make_float4(0.f, 0.f, 0.f, 0.f);
    acc += buf[s & 1][t].x + buf[s & 1][t].w;
    __syncthreads();
    buf[(s + 1) & 1][t] = next;
    __syncthreads();
  }
  out[t] = acc;
}

// PTL402 / PTL403: ordinary LDS reads into an MFMA operand, MFMA 16x16x16
__global__ void mfma16(const _Float16* a, const _Float16* b, float* c) {
  __shared__ _Float16 sa[16 * 16], sb[16 * 16];
  sa[threadIdx.x] = a[threadIdx.x];
  sb[threadIdx.x] = b[threadIdx.x];
  __syncthreads();
  half4_t fa, fb;
  for (int i = 0; i < 4; ++i) { fa[i] = sa[(threadIdx.x % 16) * 16 + (threadIdx.x / 16) * 4 + i]; fb[i] = sb[(threadIdx.x / 16) * 4 * 16 + i * 16 + threadIdx.x % 16]; }
  float4_v acc = {0.f, 0.f, 0.f, 0.f};
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(fa, fb, acc, 0, 0, 0);
  c[threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
}

// PTL404: shuffle butterfly over warpSize lanes, 64-bit ballot
__global__ void wave_sum(unsigned* o) {
  unsigned v = o[threadIdx.x];
  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_xor(v, off);
  unsigned long long active = __ballot(1);
  o[threadIdx.x] = v + static_cast<unsigned>(__popcll(active));
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


def test_header_helpers_reported_at_the_asm_not_at_calls():
    header = scan_paths([FIXTURES / "cuda_async" / "cp_async_helpers.cuh"])
    user = scan_paths([FIXTURES / "cuda_async" / "cp_async_gemm.cu"])
    assert sum(f.rule_id == "PTL401" for f in header.findings) == 5
    assert not [f for f in user.findings if f.rule_id.startswith(("PTL2", "PTL3", "PTL4"))]


def test_ported_cp_async_is_suppressed_with_the_guard_reason():
    result = scan_paths([FIXTURES / "cuda_async" / "async_negatives.cu"])
    sup = [f for f in result.findings if f.rule_id == "PTL401"]
    assert sup and all(f.suppressed and "CP_ASYNC_AVAILABLE" in f.suppressed for f in sup)
