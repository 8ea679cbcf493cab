import torch
import triton
import triton.language as tl
from triton.experimental.gluon.language.nvidia.blackwell import tcgen05_mma  # real: PTL706
from triton.experimental.gluon.language.amd import cdna3  # trap


@triton.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      NUM_SMS: tl.constexpr):
    start = tl.program_id(0)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for tile in tl.range(start, M // BLOCK_M, NUM_SMS, flatten=True, warp_specialize=True):  # real: PTL706
        offs = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        acc += tl.load(a_ptr + offs[:, None])
    for k in tl.range(0, K, BLOCK_K, num_stages=3):  # trap
        acc += 1.0
    tl.store(c_ptr + tl.arange(0, BLOCK_M)[:, None] * N + tl.arange(0, BLOCK_N)[None, :], acc)


def launch(a, b, c, M, N, K):
    grid = (torch.cuda.get_device_properties(0).multi_processor_count,)
    persistent_matmul[grid](a, b, c, M, N, K, 128, 128, 64, 132, num_warps=8, num_ctas=1)  # trap
    persistent_matmul[grid](a, b, c, M, N, K, 128, 128, 64, 132, num_warps=8, maxnreg=168)  # real: PTL706
    persistent_matmul[grid](a, b, c, M, N, K, 128, 128, 64, 132, launch_pdl=True)  # real: PTL706
    extra = {}
    if torch.version.hip is None:
        extra["maxnreg"] = 128
        persistent_matmul[grid](a, b, c, M, N, K, 128, 128, 64, 132, num_ctas=2)  # trap
    return extra


CLUSTER_CONFIGS = [triton.Config({"BLOCK_M": 128}, num_warps=4, num_ctas=2)]  # real: PTL706
