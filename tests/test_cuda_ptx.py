"""PTL201 proven by the toolchains: inline PTX fails hipcc for gfx90a; its HIP rewrite compiles."""

from __future__ import annotations

import pytest
from oracles import hipcc_compile

PTX_KERNEL = r"""
__global__ void k(unsigned* out) {
  unsigned id;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  out[threadIdx.x] = id;
}
"""
HIP_KERNEL = r"""
__global__ void k(unsigned* out) {
  out[threadIdx.x] = __lane_id();
}
"""
HOST_ASM = r"""
#include <cstdint>
static uint64_t tsc() { uint32_t lo, hi; asm volatile("rdtsc" : "=a"(lo), "=d"(hi)); return ((uint64_t)hi << 32) | lo; }
__global__ void k(unsigned* out) { out[0] = 1; }
uint64_t host_entry() { return tsc(); }
"""


@pytest.mark.oracle
def test_inline_ptx_fails_for_amd_and_rewrite_compiles():
    ok, _ = hipcc_compile(PTX_KERNEL)
    assert not ok, "hipcc accepted inline PTX for gfx90a"
    ok, out = hipcc_compile(HIP_KERNEL)
    assert ok, out


@pytest.mark.oracle
def test_host_side_asm_compiles_for_amd():
    """The trap PTL201 stays quiet on: x86 asm in host code is fine under hipcc."""
    ok, out = hipcc_compile(HOST_ASM)
    assert ok, out
