# Input pipeline + train step written for GPU JAX, being moved to TPU.
import os

import jax
import jax.numpy as jnp
import optax

os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.9")  # trap
os.environ["JAX_PLATFORMS"] = "cuda,cpu"  # real: PTL901

DEVICES = jax.devices("gpu")  # real: PTL901
MESH_DEVICES = jax.devices()  # trap


def init(rng, dim=256):
    return {"w": jax.random.normal(rng, (dim, dim)) * 0.02}


def loss_fn(params, x, y):
    return jnp.mean((x @ params["w"] - y) ** 2)


@jax.jit
def train_step(params, opt_state, x, y):
    grads = jax.grad(loss_fn)(params, x, y)
    updates, opt_state = optax.adam(1e-3).update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state


def eval_on_host(params, x):
    cpu = jax.devices("cpu")[0]  # trap
    return jax.device_put(params, cpu), x


def summary():
    backend = jax.default_backend()
    if backend == "gpu":  # trap
        print("gpu run:", jax.devices("gpu"))  # trap
    print("backend", backend)


fast_eval = jax.jit(loss_fn, backend="gpu")  # real: PTL901
