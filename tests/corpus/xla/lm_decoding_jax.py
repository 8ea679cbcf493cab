import functools

import jax
import jax.numpy as jnp
from jax import lax


def top_p_filter(logits, top_p):
    sorted_logits = jnp.sort(logits, axis=-1)[..., ::-1]
    probs = jax.nn.softmax(sorted_logits, axis=-1)
    cum = jnp.cumsum(probs, axis=-1)
    cutoff_index = jnp.sum(cum < top_p, axis=-1, keepdims=True)
    cutoff = jnp.take_along_axis(sorted_logits, cutoff_index, axis=-1)
    return jnp.where(logits < cutoff, -jnp.inf, logits)  # trap


@functools.partial(jax.jit, static_argnames=("greedy", "max_len"))
def decode(params, apply_fn, prompt, rng, temperature, greedy=False, max_len=32):
    batch, prompt_len = prompt.shape  # trap
    tokens = jnp.zeros((batch, max_len), dtype=jnp.int32)
    tokens = tokens.at[:, :prompt_len].set(prompt)

    def step(state, _):
        tokens, pos, rng = state
        logits = apply_fn(params, tokens)[:, pos - 1]
        if greedy:  # trap
            nxt = logits.argmax(-1)
        else:
            rng, sub = jax.random.split(rng)
            if temperature > 0:  # real: PTL801
                logits = logits / temperature
            logits = top_p_filter(logits, 0.9)
            nxt = jax.random.categorical(sub, logits)
        tokens = tokens.at[:, pos].set(nxt)
        return (tokens, pos + 1, rng), nxt

    (tokens, _, _), _ = lax.scan(step, (tokens, prompt_len, rng), None, length=max_len - prompt_len)
    return tokens


@jax.jit
def strip_padding(tokens, pad_id):
    keep = tokens != pad_id
    return tokens[keep]  # real: PTL804


@jax.jit
def first_eos(tokens, eos_id):
    hits = jnp.argwhere(tokens == eos_id)  # real: PTL804
    return hits[0]


@jax.jit
def first_eos_static(tokens, eos_id):
    hits = jnp.argwhere(tokens == eos_id, size=1, fill_value=-1)  # trap
    return hits[0]


@jax.jit
def beam_rescore(scores, lengths, alpha):
    penalty = ((5.0 + lengths) / 6.0) ** alpha
    best = int(jnp.argmax(scores / penalty))  # real: PTL803
    return best


@jax.jit
def repetition_penalty(logits, history, penalty):
    seen = jnp.zeros_like(logits).at[history].set(1.0)
    return jnp.where(seen > 0, logits / penalty, logits)  # trap


@jax.jit
def until_done(tokens, eos_id):
    i = 0
    while tokens[i] != eos_id:  # real: PTL801
        i = i + 1
    return i


@jax.jit
def unroll_by_count(x, count):
    for _ in range(count):  # real: PTL802
        x = jnp.tanh(x)
    return x


@jax.jit
def ngram_block(tokens, n):
    out = []
    for i in range(tokens.shape[0] - 2):  # trap
        out.append(tokens[i : i + 2])
    return jnp.stack(out)


def generate_text(params, apply_fn, prompt, rng, tokenizer):
    tokens = decode(params, apply_fn, prompt, rng, 0.7)
    text = tokenizer.decode(tokens[0].tolist())  # trap
    if len(text) > 1000:  # trap
        text = text[:1000]
    return text, float(tokens.mean())  # trap
