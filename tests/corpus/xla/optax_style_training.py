from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax


class TrainState(NamedTuple):
    params: dict
    opt_state: tuple
    step: jnp.ndarray


def warmup_cosine(peak, warmup, total):
    def schedule(count):
        if count < warmup:  # real: PTL801
            return peak * count / warmup
        progress = (count - warmup) / (total - warmup)
        return peak * 0.5 * (1 + jnp.cos(jnp.pi * progress))

    return schedule


def make_optimizer(peak_lr, warmup, total):
    return optax.adamw(learning_rate=warmup_cosine(peak_lr, warmup, total))


def cross_entropy(logits, labels, ignore_index=-1):
    valid = labels != ignore_index
    logp = jax.nn.log_softmax(logits)
    nll = -jnp.take_along_axis(logp, jnp.maximum(labels, 0)[..., None], axis=-1)[..., 0]
    return jnp.sum(nll * valid) / jnp.maximum(valid.sum(), 1)  # trap


def make_train_step(apply_fn, tx, accum_steps: int):
    @jax.jit
    def train_step(state: TrainState, batch):
        def loss_fn(params):
            logits = apply_fn(params, batch["inputs"])
            return cross_entropy(logits, batch["labels"])

        loss, grads = jax.value_and_grad(loss_fn)(state.params)
        if jnp.isnan(loss):  # real: PTL801
            grads = jax.tree_util.tree_map(jnp.zeros_like, grads)
        if accum_steps > 1:  # trap
            grads = jax.tree_util.tree_map(lambda g: g / accum_steps, grads)
        updates, opt_state = tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        gnorm = optax.global_norm(grads)
        stats = {"loss": loss, "grad_norm": gnorm, "lr_step": state.step}
        return TrainState(params, opt_state, state.step + 1), stats

    return train_step


@jax.jit
def accuracy(logits, labels):
    correct = logits.argmax(-1) == labels
    return correct[labels >= 0].mean()  # real: PTL804


@jax.jit
def masked_mean(x, mask):
    return (x * mask).sum() / mask.sum()  # trap


@jax.jit
def sanitize(x):
    return x.at[jnp.isnan(x)].set(0.0)  # real: PTL804


@jax.jit
def sanitize_where(x):
    return jnp.where(jnp.isnan(x), 0.0, x)  # trap


@jax.jit
def pairwise_close(a, b):
    if jnp.allclose(a, b):  # real: PTL801
        return a
    return (a + b) / 2


@jax.jit
def check_shapes(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)  # trap
    return a - b


@jax.jit
def layer_stack(x, depth):
    outs = [jnp.tanh(x * i) for i in range(depth)]  # real: PTL802
    return sum(outs)


@jax.jit
def done_flag(done):
    finished = bool(done.all())  # real: PTL803
    return finished


def run(state, batches, train_step, log_every=100):
    for i, batch in enumerate(batches):  # trap
        state, stats = train_step(state, batch)
        if i % log_every == 0:  # trap
            stats = jax.device_get(stats)  # trap
            print({k: float(v) for k, v in stats.items()})  # trap
    return state
