import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

THREADS_PER_WARP = 32  # real: PTL704
TILE = 32  # trap


def launch_geometry(n, num_warps=4):
    threads = num_warps * 32  # real: PTL704
    blocks = triton.cdiv(n, threads)
    return blocks, threads


def launch_geometry_portable(n, num_warps=4):
    warp_size = triton.runtime.driver.active.get_current_target().warp_size  # trap
    threads = num_warps * warp_size  # trap
    return triton.cdiv(n, threads), threads


def device_warp(device):
    return torch.cuda.get_device_properties(device).warp_size  # trap


def padded(n):
    return (n + 31) // 32 * 32  # trap


@gluon.jit
def copy_kernel(src, dst, N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout(size_per_thread=[4], threads_per_warp=[32], warps_per_cta=[4], order=[0])  # real: PTL704
    offs = gl.arange(0, N, layout=layout)
    gl.store(dst + offs, gl.load(src + offs))


@gluon.jit
def copy_2d(src, dst, M: gl.constexpr, N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])  # real: PTL704
    offs_m = gl.arange(0, M, layout=gl.SliceLayout(1, layout))
    offs_n = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    offs = offs_m[:, None] * N + offs_n[None, :]
    gl.store(dst + offs, gl.load(src + offs))


def pick_num_warps(block):
    if block >= 65536:
        return 32  # real: PTL703
    return 8


def sweep():
    return [dict(num_warps=w) for w in (2, 4, 8, 16, 32)]  # real: PTL703


def bench_grid():
    out = []
    for num_warps in [4, 8, 16, 32]:  # real: PTL703
        out.append(num_warps)
    return out


LAUNCH_DEFAULTS = {"num_warps": 32, "num_stages": 1}  # real: PTL703
