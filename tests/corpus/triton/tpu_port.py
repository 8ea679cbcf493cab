"""A model file that runs on TPU through JAX, with a Triton fast path kept from the GPU port."""
import jax
import jax.numpy as jnp
import triton
import triton.language as tl


@triton.jit
def fused_bias_gelu(x_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):  # real: PTL710
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    b = tl.load(b_ptr + offs, mask=offs < n)
    h = x + b
    y = 0.5 * h * (1.0 + tl.math.tanh(0.79788456 * (h + 0.044715 * h * h * h)))
    tl.store(y_ptr + offs, y, mask=offs < n)


@triton.jit
def row_max(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):  # real: PTL710
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols)
    tl.store(out_ptr + row, tl.max(x, axis=0))


def bias_gelu_reference(x, b):  # trap
    h = x + b
    return jax.nn.gelu(h, approximate=True)


@jax.jit
def forward(x, b):  # trap
    return bias_gelu_reference(x, b) * jnp.float32(1.0)
