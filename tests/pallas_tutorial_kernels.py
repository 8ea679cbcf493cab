"""Triton kernels shaped like the ones in Triton's tutorials (vector add, fused softmax with a
persistent grid-stride row loop, grouped matmul with pointer increments and a constexpr
activation, layer norm forward with loops over column blocks), written for
tests/test_oracle_pallas.py the way users write them; plus `launch(kernel, arrays)`, which
runs one of them with torch CPU tensors (under TRITON_INTERPRET=1: run_triton_interpreted.py).
"""

import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    start = pid * BLOCK_SIZE
    offsets = start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    out = x + y
    tl.store(out_ptr + offsets, out, mask=mask)


@triton.jit
def persistent_softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                              BLOCK: tl.constexpr, num_stages: tl.constexpr):
    first_row = tl.program_id(0)
    stride = tl.num_programs(0)
    for r in tl.range(first_row, n_rows, stride, num_stages=num_stages):
        row_ptr = in_ptr + r * in_row_stride
        offs = tl.arange(0, BLOCK)
        ptrs = row_ptr + offs
        valid = offs < n_cols
        vals = tl.load(ptrs, mask=valid, other=-float("inf"))
        shifted = vals - tl.max(vals, axis=0)
        e = tl.exp(shifted)
        result = e / tl.sum(e, axis=0)
        dst = out_ptr + r * out_row_stride
        tl.store(dst + offs, result, mask=valid)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                          ACTIVATION: tl.constexpr):
    # one program per output tile, tiles visited in groups of GROUP_M rows of tiles
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % group_rows)
    pid_n = (pid % per_group) // group_rows
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    tl.assume(stride_ak > 0)

    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm[:, None] * stride_am + rk[None, :] * stride_ak)
    b_ptrs = b_ptr + (rk[:, None] * stride_bk + rn[None, :] * stride_bn)

    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    c = acc.to(tl.float16)

    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + stride_cm * cm[:, None] + stride_cn * cn[None, :]
    tl.store(c_ptrs, c, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def tiled_matmul_kernel(x, w, out, M, N, K, sxm, sxk, swk, swn, som, son,
                        TILE_M: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr):
    # two grid axes; the K offsets are recomputed from the loop variable each step
    row_tile = tl.program_id(0)
    col_tile = tl.program_id(1)
    i = row_tile * TILE_M + tl.arange(0, TILE_M)
    j = col_tile * TILE_N + tl.arange(0, TILE_N)
    total = tl.zeros((TILE_M, TILE_N), dtype=tl.float32)
    for k0 in range(0, K, TILE_K):
        kk = k0 + tl.arange(0, TILE_K)
        xt = tl.load(x + i[:, None] * sxm + kk[None, :] * sxk, mask=(i[:, None] < M) & (kk[None, :] < K), other=0.0)
        wt = tl.load(w + kk[:, None] * swk + j[None, :] * swn, mask=(kk[:, None] < K) & (j[None, :] < N), other=0.0)
        total += tl.dot(xt, wt, input_precision="ieee")
    total = total * 0.5
    tl.store(out + i[:, None] * som + j[None, :] * son, total.to(out.dtype.element_ty),
             mask=(i[:, None] < M) & (j[None, :] < N))


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    # mean, one block of columns at a time
    total = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        v = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        total += v
    mean = tl.sum(total, axis=0) / N
    # variance
    sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        v = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, v - mean, 0.0)
        sq += d * d
    var = tl.sum(sq, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # normalise and apply the affine weights
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        v = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (v - mean) * rstd * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def row_running_max_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    """A loop whose trip count is data-dependent (a `while`): no shape portlint translates."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    steps = tl.sum(x > 0, axis=0)
    acc = 0.0
    i = 0
    while i < steps:
        acc += 1.0
        i += 1
    tl.store(y_ptr + row, acc)


def launch(kernel: str, a: dict):
    """Run `kernel` on the torch tensors `a`; return the output tensor(s)."""
    import torch

    if kernel == "vector_add_kernel":
        x, y = a["x"], a["y"]
        out = torch.empty_like(x)
        vector_add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK_SIZE=256)
        return out
    if kernel == "persistent_softmax_kernel":
        x = a["x"]
        out = torch.empty_like(x)
        programs = max(1, x.shape[0] // 2)  # fewer programs than rows: each loops over several
        persistent_softmax_kernel[(programs,)](out, x, x.stride(0), out.stride(0), x.shape[0], x.shape[1],
                                               BLOCK=triton.next_power_of_2(x.shape[1]), num_stages=2)
        return out
    if kernel in ("grouped_matmul_kernel", "tiled_matmul_kernel"):
        x, w = a["a"], a["b"]
        (m, k), n = x.shape, w.shape[1]
        if kernel == "grouped_matmul_kernel":
            out = torch.empty(m, n, dtype=torch.float16)
            grid = (triton.cdiv(m, 16) * triton.cdiv(n, 16),)
            grouped_matmul_kernel[grid](x, w, out, m, n, k, *x.stride(), *w.stride(), *out.stride(),
                                        BM=16, BN=16, BK=16, GROUP_M=2, ACTIVATION="leaky_relu")
        else:
            out = torch.empty(m, n, dtype=torch.float32)
            grid = (triton.cdiv(m, 16), triton.cdiv(n, 32))
            tiled_matmul_kernel[grid](x, w, out, m, n, k, *x.stride(), *w.stride(), *out.stride(),
                                      TILE_M=16, TILE_N=32, TILE_K=16)
        return out
    if kernel == "layer_norm_fwd_kernel":
        x, w, b = a["x"], a["w"], a["b"]
        rows, n = x.shape
        y = torch.empty_like(x)
        mean = torch.empty(rows, dtype=torch.float32)
        rstd = torch.empty(rows, dtype=torch.float32)
        layer_norm_fwd_kernel[(rows,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=32)
        return y, mean, rstd
    raise SystemExit(f"unknown kernel {kernel}")
