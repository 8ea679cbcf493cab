"""Where Python code is traced by a compiler, and which values in it are traced.

The XLA-family rules (PTL8xx) mean something only inside code that JAX, torch_xla, Neuron,
Gaudi's lazy mode or torch.compile turn into a graph: there, a Python `if` on an array or a
`.item()` is a hazard; outside it, the same code is fine. This module finds those regions
statically, within one file:

- JAX: functions decorated with or passed to `jax.jit`, `pmap`, `vmap`, `grad`,
  `value_and_grad`, `checkpoint`, `shard_map`, `pjit`, `nnx.jit`, `eqx.filter_jit`,
  `pl.pallas_call` (also through `functools.partial(...)`), bodies given to
  `lax.scan/cond/switch/while_loop/fori_loop/map`, methods of Flax/Equinox/Haiku modules,
  and the module functions those call (their parameters traced where a call site passes a
  traced value).
- torch (only in files that target `xla`/`hpu`): training/generation loop bodies (a loop
  that calls `.backward()`, an optimizer `step()` or a step boundary), step functions
  (`train_step`, `_compute_loss`, `generate`, `*_step`), `forward` of `nn.Module`
  subclasses and of any class with a base and a `forward(self, x)` (modules whose base is in
  another file), `__call__` of logits processors/warpers and `update` of metrics,
  `step` of diffusion schedulers, hooks given to `register_forward_hook` & co., module
  functions typed tensor to tensor (at lower confidence: no caller seen), `torch.compile`d
  functions, the module functions the step calls, and the methods of the same module whose
  result a forward uses (`A, B = self._get_matrices(adapter)`). Not in a region:
  the evaluation leg of `if not self.training:`, statements after a logging
  interval's early exit (`if not should_log(step): return`), and the methods of a class
  built around a graph compiled ahead of time (`__init__(self, model:
  torch.jit.ScriptModule)`, `self.graph = torch.jit.load(path)`): the host-side driver of
  a Neuron graph, which pads and checks CPU tensors before it calls the graph.

Inside a region a value is *traced* when it derives from a traced parameter, from an array
op (`jnp.*`, `lax.*`, `jax.random.*`, `torch.*`) or from a call that takes a traced value;
`.shape`, `.ndim`, `.dtype`, `len()`, `isinstance`, `x is None`, `self.<attr>` (module
config), static arguments (`static_argnums/static_argnames`, `partial`-bound values),
parameters annotated `bool/int/str` in modules, and names bound outside the region are
static. torch values: a tensor-only method (`.sum()`, `.mean()`) on the result of a call
given a tensor makes it a tensor (`accelerator.gather(loss).mean()`); a factory without a
device (`torch.randint(0, n, (1,))`) makes a host tensor; a name's last assignment before a
use, when it gives a host value (`n = n.item()`), decides that use.

The module is split along those lines: `traced_imports` (canonical names and the framework
APIs that trace a function), `traced_regions` (finding regions) and `traced_values` (the
value model and call propagation); `TracedMap` puts them together for one file."""

from __future__ import annotations

import ast

from portlint.frontends.python.names import import_table
# re-exported: the detectors and the project model import these from here
from portlint.analyses.python.traced_imports import (  # noqa: F401
    FLAX_BASES, HOST_CALLBACKS, JAX_TRANSFORMS, LAX_BODIES, TORCH_COMPILE, Imports, dotted,
)
from portlint.analyses.python.traced_regions import (  # noqa: F401
    Region, RegionFinder, _const_ints, drives_compiled_graph, _const_strs, _module_like, _per_step_def, _per_step_methods, _positional, _step_name, params_of,
    per_step_attribute, setup_name, takes_tensor,
)
from portlint.analyses.python.traced_values import ValueModel


class TracedMap(RegionFinder, ValueModel):
    """Regions of one file and the traced names in each."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.module: ast.Module = ctx.module
        self.imports = Imports(table=ctx.fact(import_table))
        self.tags = ctx.tags
        self.jax = "jax" in self.tags
        self.torch_target = bool({"torch_xla", "gaudi"} & self.tags)
        self.regions: dict[ast.AST, Region] = {}
        self.scopes: dict[ast.AST, dict[str, ast.AST]] = {}  # function/module -> local defs by name
        self.host_fns: set[ast.AST] = set()
        self.classes: dict[str, ast.ClassDef] = {}
        self._step_memo: dict[ast.AST, bool] = {}
        self._static_returns: dict[tuple, bool] = {}
        self._step_calls: list[ast.Call] | None = None
        self._loops: list[ast.AST] = []
        self._def_memo: dict[ast.AST, ast.AST | None] = {}
        self._foreign_defs: dict[str, tuple] = {}
        self._node_facts: dict[tuple[str, ast.AST], object] = {}  # ValueModel._once
        self._interval_exits: dict[int, int] = {}
        self._device_exits: dict[int, int] = {}
        self._lazy_platforms: frozenset[str] | None = None
        self._guards = None
        self._index()
        if self.jax:
            self._find_jax()
        if self.torch_target:
            self._find_torch()
        self._add_reached()
        self._propagate_calls()
        self._nest()


def traced_map(ctx) -> TracedMap:
    """The file's traced regions (share with `ctx.fact(traced_map)`)."""
    return TracedMap(ctx)
