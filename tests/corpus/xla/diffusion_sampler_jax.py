import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    x = np.linspace(0, timesteps, steps)
    alphas = np.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas = alphas / alphas[0]
    betas = 1 - (alphas[1:] / alphas[:-1])
    if betas.max() > 0.999:  # trap
        betas = np.clip(betas, 0, 0.999)
    return betas


class GaussianDiffusion:
    def __init__(self, model_apply, timesteps=1000, clip_denoised=True):
        self.apply = model_apply
        self.num_timesteps = timesteps
        self.clip_denoised = clip_denoised
        betas = cosine_beta_schedule(timesteps)
        self.betas = jnp.asarray(betas, dtype=jnp.float32)
        self.alphas_cumprod = jnp.cumprod(1.0 - self.betas)

    @partial(jax.jit, static_argnums=(0,))
    def p_mean(self, params, x, t):
        eps = self.apply(params, x, t)
        a = self.alphas_cumprod[t]
        x0 = (x - jnp.sqrt(1 - a) * eps) / jnp.sqrt(a)
        if self.clip_denoised:  # trap
            x0 = jnp.clip(x0, -1.0, 1.0)
        if t > 0:  # real: PTL801
            noise_scale = jnp.sqrt(self.betas[t])
        else:
            noise_scale = 0.0
        return x0, noise_scale

    @partial(jax.jit, static_argnums=(0, 4))
    def sample(self, params, rng, x, num_steps):
        def body(i, carry):
            x, rng = carry
            t = self.num_timesteps - 1 - i
            rng, sub = jax.random.split(rng)
            x0, scale = self.p_mean(params, x, t)
            return x0 + scale * jax.random.normal(sub, x.shape), rng

        for _ in range(num_steps // 10):  # trap
            x = x * 1.0
        x, _ = jax.lax.fori_loop(0, num_steps, body, (x, rng))
        return x

    @partial(jax.jit, static_argnums=(0,))
    def ddim_step(self, params, x, t, t_prev, eta):
        eps = self.apply(params, x, t)
        a_t = self.alphas_cumprod[t]
        a_prev = jnp.where(t_prev >= 0, self.alphas_cumprod[t_prev], 1.0)  # trap
        sigma = eta * jnp.sqrt((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev))
        if eta == 0:  # real: PTL801
            sigma = jnp.zeros_like(sigma)
        x0 = (x - jnp.sqrt(1 - a_t) * eps) / jnp.sqrt(a_t)
        print("x0 range", x0.min(), x0.max())  # real: PTL808
        return jnp.sqrt(a_prev) * x0 + jnp.sqrt(1 - a_prev - sigma**2) * eps


def run_sampling(diffusion, params, rng, shape, steps=50):
    x = jax.random.normal(rng, shape)
    for i in range(steps):  # trap
        t = diffusion.num_timesteps - 1 - i * (diffusion.num_timesteps // steps)
        x = diffusion.ddim_step(params, x, t, t - steps, 0.0)
        if jnp.isnan(x).any():  # trap
            raise FloatingPointError("sampler diverged at step %d" % i)
    return np.asarray(x)  # trap
