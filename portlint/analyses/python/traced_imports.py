"""Names the traced-region finder looks up (a part of `portlint.analyses.python.traced`).

A view of the file's imports that answers in canonical dotted paths (`jnp.sum` ->
`jax.numpy.sum`), and the framework APIs that make a function traced: JAX transformations
and their function arguments, lax control-flow bodies, host callbacks (run on the host),
`torch.compile`, torch_xla step closures, and the module base classes whose methods are traced."""

from __future__ import annotations

import ast
from typing import Callable

from portlint.analyses.python.guards import dotted as dotted_or_empty
from portlint.frontends.python.names import ImportTable

# ---- names ---------------------------------------------------------------------------------

def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    return dotted_or_empty(node) or None


class Imports:
    """Local name -> canonical dotted path: a view of the file's `names.ImportTable`."""

    def __init__(self, module: ast.Module | None = None, table: ImportTable | None = None):
        self.table = table if table is not None else ImportTable(module)
        self.alias: dict[str, str] = self.table.names
        # the table's own (memoised) lookup, bound here: asked of the same callees many
        # times, it is not worth a frame of its own
        self.canonical: Callable[[ast.AST], str | None] = self.table.canonical

    def local_name(self, canonical: str) -> str | None:
        """A local spelling of a canonical module path (`jax.numpy` -> `jnp`), if imported."""
        return self.table.local_name(canonical)

    def uses(self, prefix: str) -> bool:
        return self.table.uses(prefix)




# Decorators that make a def a Triton kernel: its body is Triton (PTL7xx), never a torch/JAX trace.
TRITON_KERNEL_DECORATORS = ("triton.jit", "triton.autotune", "triton.heuristics", "triton.experimental.gluon.jit")


def is_triton_kernel(imports: Imports, fn: ast.AST) -> bool:
    """A def decorated with `@triton.jit` (or autotune/heuristics, called or not)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return any(imports.canonical(d.func if isinstance(d, ast.Call) else d) in TRITON_KERNEL_DECORATORS
               for d in fn.decorator_list)


# JAX transformations whose function argument is traced (name -> index of the function arg).
# Differentiation alone (jax.grad, value_and_grad, jacfwd ...) evaluates eagerly and allows
# Python control flow on values; its function is traced only when the derivative is taken
# inside a traced region (DIFF_TRANSFORMS, handled by the call propagation).
JAX_TRANSFORMS = {
    "jax.jit": 0, "jax.pmap": 0, "jax.vmap": 0,
    "jax.checkpoint": 0, "jax.remat": 0, "jax.shard_map": 0, "jax.experimental.pallas.pallas_call": 0,
    "jax.experimental.pallas.tpu.emit_pipeline": 0,
    "jax.experimental.checkify.checkify": 0,
    "flax.nnx.jit": 0, "flax.nnx.vmap": 0,
    "flax.nnx.scan": 0, "flax.nnx.remat": 0, "flax.linen.jit": 0, "flax.linen.remat": 0,
    "flax.linen.vmap": 0, "flax.linen.scan": 0,
    "equinox.filter_jit": 0, "equinox.filter_vmap": 0, "equinox.filter_pmap": 0,
}
DIFF_TRANSFORMS = {
    "jax.grad", "jax.value_and_grad", "jax.hessian", "jax.jacfwd", "jax.jacrev", "jax.vjp", "jax.jvp",
    "jax.linearize", "jax.named_call", "jax.custom_jvp", "jax.custom_vjp", "flax.nnx.grad",
    "flax.nnx.value_and_grad", "equinox.filter_grad", "equinox.filter_value_and_grad",
}
JIT_LIKE = {"jax.jit", "jax.pmap", "flax.nnx.jit", "equinox.filter_jit"}
# lax control-flow primitives: positions of their traced function arguments
LAX_BODIES = {
    "jax.lax.scan": (0,), "jax.lax.fori_loop": (2,), "jax.lax.while_loop": (0, 1),
    "jax.lax.cond": (1, 2), "jax.lax.map": (0,), "jax.lax.associative_scan": (0,),
    "jax.lax.custom_root": (0, 2, 3),
}
# host callbacks: the function argument runs on the host, not traced
HOST_CALLBACKS = {"jax.pure_callback", "jax.debug.callback", "jax.experimental.io_callback", "jax.experimental.host_callback.call", "jax.experimental.host_callback.id_tap"}
TORCH_COMPILE = {"torch.compile"}
STEP_CLOSURE = {"torch_xla.core.xla_model.add_step_closure", "torch_xla.xla_model.add_step_closure"}
FLAX_BASES = {"flax.linen.Module", "flax.linen.module.Module", "flax.nnx.Module", "flax.nnx.Object", "equinox.Module", "haiku.Module"}
TORCH_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
