"""Kernels the Triton oracle compiles beside the fixtures' own (tests/test_oracle_triton.py):
host kernels that call a fixture's device function passed as a constexpr, and the rule docs'
rewrites written out as kernels. Imported only when triton is installed."""

import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier


@triton.jit
def apply_unary(x_ptr, y_ptr, BLOCK: tl.constexpr, FN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, FN(tl.load(x_ptr + offs)))


@triton.jit
def apply_unary_flag(x_ptr, y_ptr, BLOCK: tl.constexpr, FN: tl.constexpr, FLAG: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, FN(tl.load(x_ptr + offs), FLAG))


@triton.jit
def apply_binary(x_ptr, y_ptr, BLOCK: tl.constexpr, FN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, FN(x, x + 1))


@triton.jit
def apply_dot(a_ptr, c_ptr, BLOCK: tl.constexpr, FN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], FN(a, a))


@triton.jit
def apply_load_fn(x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, FN: tl.constexpr,
                  FLAG: tl.constexpr):
    # a fixture device function FN(ptr, M, K, BLOCK_M, BLOCK_K, FLAG) that loads and returns
    tl.store(y_ptr, FN(x_ptr, M, K, BLOCK_M, BLOCK_K, FLAG))


@triton.jit
def load_through_descriptor(a_desc, c_ptr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # a host-built TensorDescriptor passed to the kernel (PTL705's host form)
    a = a_desc.load([tl.program_id(0) * BLOCK_M, 0])
    offs = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M))[:, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :]
    tl.store(c_ptr + offs, a)


@triton.jit
def masked_tile_copy(a, out, M, K, stride_am, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # PTL705's rewrite: offsets plus masks instead of a descriptor
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    offs = offs_m[:, None] * stride_am + offs_k[None, :]
    mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)
    tl.store(out + offs, tl.load(a + offs, mask=mask, other=0.0), mask=mask)


@triton.jit
def dot_loop(a_ptr, c_ptr, K, BLOCK: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    # PTL706: the same loop with and without warp_specialize
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK, warp_specialize=WARP_SPECIALIZE):
        a = tl.load(a_ptr + k + offs[:, None] * BLOCK + offs[None, :])
        acc = tl.dot(a, a, acc)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


@triton.jit
def quantize_to(x_ptr, y_ptr, n, BLOCK: tl.constexpr, DT: tl.constexpr):
    # PTL708's rewrite: the FP8 dtype as a constexpr chosen per architecture
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x.to(DT), mask=offs < n)


@gluon.jit
def gluon_hopper_mbarrier(x_ptr):
    # PTL706's Gluon NVIDIA modules: a Hopper mbarrier
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.invalidate(bar)


@gluon.jit
def gluon_blocked_copy(x_ptr, y_ptr, LAYOUT: gl.constexpr):
    # PTL704's Gluon form: a 32x32 tile copied through the given BlockedLayout
    offs_m = gl.arange(0, 32, layout=gl.SliceLayout(1, LAYOUT))
    offs_n = gl.arange(0, 32, layout=gl.SliceLayout(0, LAYOUT))
    offs = offs_m[:, None] * 32 + offs_n[None, :]
    gl.store(y_ptr + offs, gl.load(x_ptr + offs))
