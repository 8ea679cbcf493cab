import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P


def _matmul_kernel(x_ref, y_ref, o_ref, acc_ref, *, nsteps, activation):
    @pl.when(pl.program_id(2) == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == nsteps - 1)
    def _done():
        out = acc_ref[...]
        if activation == "relu":  # trap
            out = jnp.maximum(out, 0)
        o_ref[...] = out.astype(o_ref.dtype)


def matmul(x, y, bm=128, bk=128, bn=128, activation=None):
    m, k = x.shape  # trap
    _, n = y.shape
    if k % bk != 0:  # trap
        raise ValueError("k must be a multiple of bk")
    kernel = functools.partial(_matmul_kernel, nsteps=k // bk, activation=activation)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
    )(x, y)


def _softmax_kernel(x_ref, o_ref):
    x = x_ref[...]
    m = x.max(axis=-1, keepdims=True)
    if (m > 1e4).any():  # real: PTL801
        x = x - m
    e = jnp.exp(x - m)
    o_ref[...] = e / e.sum(axis=-1, keepdims=True)


def softmax(x):
    return pl.pallas_call(_softmax_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def _count_kernel(x_ref, o_ref):
    vals = x_ref[...]
    o_ref[0] = vals[vals > 0].shape[0]  # real: PTL804


count_positive = pl.pallas_call(_count_kernel, out_shape=jax.ShapeDtypeStruct((1,), jnp.int32))


def make_sharded_norm(mesh):
    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("data"), out_specs=P("data"))
    def sharded_norm(x):
        local = jnp.sum(x * x)
        total = jax.lax.psum(local, "data")
        if total == 0:  # real: PTL801
            return x
        return x / jnp.sqrt(total)

    return sharded_norm


@jax.jit
def moe_dispatch(tokens, router_logits, capacity):
    expert = router_logits.argmax(-1)
    counts = jnp.bincount(expert, length=router_logits.shape[-1])  # trap
    order = jnp.argsort(expert)
    positions = jnp.nonzero(expert == 0, size=capacity, fill_value=0)[0]  # trap
    overflow = counts.max().item()  # real: PTL803
    return tokens[order], positions, overflow


@jax.jit
def gather_experts(tokens, expert_ids):
    selected = jnp.flatnonzero(expert_ids >= 0)  # real: PTL804
    return tokens[selected]
