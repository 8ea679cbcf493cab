"""Flash-attention style forward with NVIDIA-era tuning."""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

HAS_DESC = hasattr(tl, "make_tensor_descriptor")  # trap


def _configs():
    return [  # real: PTL709
        triton.Config({"BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": 128}, num_stages=s, num_warps=w)
        for BM in [128, 256]
        for BN in [128]
        for s in [3, 4]
        for w in [8]
    ]


ATTN_CONFIGS = [  # real: PTL709
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64}, num_stages=3, num_warps=8),
]

SMALL_CONFIGS = [  # trap
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_stages=2, num_warps=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_stages=3, num_warps=8),
]


@triton.autotune(configs=ATTN_CONFIGS, key=["N_CTX"])
@triton.jit
def _attn_fwd(Q, K, V, O, sm_scale, N_CTX, stride_qm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    q_ptr = tl.make_block_ptr(Q, (N_CTX, BLOCK_K), (stride_qm, 1), (start_m * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))  # trap
    q = tl.load(q_ptr, boundary_check=(0,))
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + (start_n + tl.arange(0, BLOCK_N))[None, :] * stride_qm + offs_k[:, None])
        s = tl.dot(q, k, input_precision="tf32") * sm_scale  # real: PTL707
        p = tl.exp(s - tl.max(s, axis=1)[:, None])
        v = tl.load(V + (start_n + tl.arange(0, BLOCK_N))[:, None] * stride_qm + offs_k[None, :])
        acc += tl.dot(p.to(v.dtype), v)  # trap
    tl.store(O + offs_m[:, None] * stride_qm + offs_k[None, :], acc.to(O.dtype.element_ty))


@triton.jit
def _attn_fwd_fp8(Q, K, O, N, BLOCK: tl.constexpr, PRECISION: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q = tl.load(Q + offs[:, None] * BLOCK + offs[None, :]).to(tl.float8e4nv)  # real: PTL708
    k = tl.load(K + offs[:, None] * BLOCK + offs[None, :]).to(tl.float8e5)  # trap
    s = tl.dot(q, k, input_precision=PRECISION)  # trap
    tl.store(O + offs[:, None] * BLOCK + offs[None, :], s)


@triton.jit
def _tma_epilogue(desc_o, acc, off_m, off_n):
    desc_o.store([off_m, off_n], acc)


def attention_tma(q, k, v):
    o = torch.empty_like(q)
    dq = TensorDescriptor.from_tensor(q, block_shape=[128, 64])  # real: PTL705
    dk = TensorDescriptor.from_tensor(k, block_shape=[128, 64])
    return dq, dk, o
