import math

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra.libdevice import rsqrt  # trap
except ModuleNotFoundError:
    from triton.language.extra.cuda.libdevice import rsqrt  # trap

from triton.language.extra.cuda.libdevice import tanh as _nv_tanh  # real: PTL702

MAX_FUSED_SIZE = 65536


def is_hip() -> bool:
    return torch.version.hip is not None


def calculate_settings(n):
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError("row too wide")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32  # real: PTL703
    elif BLOCK_SIZE >= 8192:
        num_warps = 16  # trap
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


def calculate_settings_rocm_aware(n):
    BLOCK_SIZE = triton.next_power_of_2(n)
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32 if not is_hip() else 16  # trap
    return BLOCK_SIZE, num_warps


@triton.jit
def _rms_norm_fwd(Y, X, W, RSTD, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0)
    var = tl.sum(x * x, axis=0) / n_cols
    rstd = rsqrt(var + eps)
    tl.store(RSTD + row, rstd)
    tl.store(Y + row * stride + cols, x * rstd * w, mask=mask)


@triton.jit
def _gelu_tanh_fwd(A, C, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    a = tl.load(A + row * stride + cols, mask=cols < n_cols, other=0).to(tl.float32)
    k = math.sqrt(2 / math.pi)
    c = 0.5 * a * (1 + _nv_tanh(k * (a + 0.044715 * a * a * a)))
    tl.store(C + row * stride + cols, c, mask=cols < n_cols)


@triton.jit
def _softplus(x):
    return tl.where(x > 20.0, x, tl.math.log(1 + tl.math.exp(x)))  # trap


def rms_norm(x, w, eps=1e-6):
    shape = x.shape
    x = x.view(-1, shape[-1])
    n_rows, n_cols = x.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    y = torch.empty_like(x)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    _rms_norm_fwd[(n_rows,)](y, x, w, rstd, x.stride(0), n_cols, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)  # trap
    return y.view(*shape)


def xpu_args(x):
    kernel_args = {"num_warps": 8}
    if x.device.type == "xpu":
        kernel_args.update({"num_warps": 32})  # trap
    return kernel_args
