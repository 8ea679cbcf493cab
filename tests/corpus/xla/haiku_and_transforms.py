import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np


class GatedResidual(hk.Module):
    def __init__(self, width, use_gate=True, name=None):
        super().__init__(name=name)
        self.width = width
        self.use_gate = use_gate

    def __call__(self, x, is_training: bool):
        h = hk.Linear(self.width)(x)
        if self.use_gate:  # trap
            h = h * jax.nn.sigmoid(hk.Linear(self.width)(x))
        if is_training:  # trap
            h = hk.dropout(hk.next_rng_key(), 0.1, h)
        gate = jnp.mean(h)
        return x + h if gate > 0 else x  # real: PTL801


def forward(x, is_training):
    return GatedResidual(64)(x, is_training)


model = hk.transform(forward)


@jax.jit
def per_example_norms(grads):
    norms = jax.tree_util.tree_map(lambda g: jnp.linalg.norm(g.reshape(g.shape[0], -1), axis=-1), grads)
    flat = jnp.stack(jax.tree_util.tree_leaves(norms))
    return np.array(flat)  # real: PTL803


def clip_per_example(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g**2) for g in jax.tree_util.tree_leaves(grads)))
    if norm > max_norm:  # real: PTL801
        grads = jax.tree_util.tree_map(lambda g: g * max_norm / norm, grads)
    return grads


batched_clip = jax.vmap(clip_per_example, in_axes=(0, None))


@jax.jit
def token_histogram(ids, vocab):
    uniq, counts = jnp.unique(ids, return_counts=True)  # real: PTL804
    return uniq, counts


@jax.jit
def token_histogram_static(ids, vocab_size):
    return jnp.bincount(ids, length=4096)  # trap


@jax.jit
def log_stats(x):
    jax.debug.print("mean {m}", m=x.mean())  # trap
    return x


@jax.jit
def sum_positive_rows(x):
    total = 0.0
    for row in x:  # trap
        total = total + jnp.where(row > 0, row, 0).sum()
    return total


def host_side_report(metrics):
    metrics = jax.device_get(metrics)  # trap
    if metrics["loss"] > 10:  # trap
        print("loss high", metrics["loss"])  # trap
    return {k: float(v) for k, v in metrics.items()}  # trap
