import torch
import triton
import triton.language as tl
from triton.language import inline_asm_elementwise as asm_ew

_CVT_BF16X2 = "cvt.rn.bf16x2.f32 $0, $2, $1;"
_AMD_RCP = "v_rcp_f32 $0, $1"
IS_ROCM = torch.version.hip is not None


@triton.jit
def pack2(lo, hi):
    return tl.inline_asm_elementwise(_CVT_BF16X2, "=r,f,f", [lo, hi], dtype=tl.uint32, is_pure=True, pack=1)  # real: PTL701


@triton.jit
def ex2_fast(x):
    return asm_ew("ex2.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)  # real: PTL701


@triton.jit
def lop3(a, b, c):
    return tl.inline_asm_elementwise(  # real: PTL701
        "lop3.b32 $0, $1, $2, $3, 0xEA;",
        "=r,r,r,r",
        [a, b, c],
        dtype=tl.int32,
        is_pure=True,
        pack=1,
    )


@triton.jit
def rcp_amd(x):
    return tl.inline_asm_elementwise(_AMD_RCP, "=v,v", [x], dtype=tl.float32, is_pure=True, pack=1)  # trap


@triton.jit
def rcp(x, IS_HIP: tl.constexpr):
    if IS_HIP:
        return 1.0 / x
    else:
        return tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)  # trap


@triton.jit
def sigmoid_fast(x):
    return tl.sigmoid(x)  # trap


@triton.jit
def smid_probe(out):
    sm = tl.extra.cuda.smid()  # real: PTL702
    tl.store(out, sm)


def description():
    # documentation strings mention PTX; they are not asm
    return "uses tanh.approx.f32 on NVIDIA"  # trap
