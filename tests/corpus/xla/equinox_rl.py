import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class ValueNet(eqx.Module):
    layers: list
    dropout_rate: float = 0.0

    def __init__(self, key, sizes):
        keys = jax.random.split(key, len(sizes) - 1)
        self.layers = [eqx.nn.Linear(a, b, key=k) for a, b, k in zip(sizes[:-1], sizes[1:], keys)]

    def __call__(self, x, *, key=None):
        for layer in self.layers[:-1]:  # trap
            x = jax.nn.relu(layer(x))
        if self.dropout_rate > 0 and key is not None:  # trap
            x = x * jax.random.bernoulli(key, 1 - self.dropout_rate, x.shape)
        out = self.layers[-1](x)
        if out.shape[0] == 1:  # trap
            out = out[0]
        return out


def gae(rewards, values, dones, gamma=0.99, lam=0.95):
    def step(carry, inp):
        r, v, v_next, d = inp
        delta = r + gamma * v_next * (1 - d) - v
        adv = delta + gamma * lam * (1 - d) * carry
        return adv, adv

    _, adv = jax.lax.scan(step, jnp.zeros(()), (rewards, values[:-1], values[1:], dones), reverse=True)
    return adv


@eqx.filter_jit
def ppo_loss(model, obs, actions, old_logp, adv, clip=0.2):
    logits = jax.vmap(model)(obs)
    logp = jax.nn.log_softmax(logits)[jnp.arange(actions.shape[0]), actions]
    ratio = jnp.exp(logp - old_logp)
    if adv.std() > 0:  # real: PTL801
        adv = (adv - adv.mean()) / adv.std()
    unclipped = ratio * adv
    clipped = jnp.clip(ratio, 1 - clip, 1 + clip) * adv
    return -jnp.minimum(unclipped, clipped).mean()


@eqx.filter_jit
def update(model, opt_state, batch, optimizer):
    loss, grads = eqx.filter_value_and_grad(ppo_loss)(model, *batch)
    updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


@jax.jit
def episode_returns(rewards, dones):
    ends = jnp.where(dones)  # real: PTL804
    return jnp.cumsum(rewards)[ends]


@jax.jit
def explained_variance(values, returns):
    var_y = jnp.var(returns)
    return jnp.where(var_y == 0, jnp.nan, 1 - jnp.var(returns - values) / var_y)  # trap


def train(model, env_batches, optimizer, log_interval=10):
    opt_state = optimizer.init(eqx.filter(model, eqx.is_array))
    history = []
    for it, batch in enumerate(env_batches):  # trap
        model, opt_state, loss = update(model, opt_state, batch, optimizer)
        if it % log_interval == 0:  # trap
            history.append(loss.item())  # trap
            print(f"iter {it} loss {float(loss):.3f}")  # trap
    return model, history
