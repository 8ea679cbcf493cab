"""Traced and static values inside regions (a part of `portlint.analyses.python.traced`).

`ValueModel` is the half of `TracedMap` that says which names and expressions of a region
hold traced values, and propagates regions through calls: a module function called from a
region with a traced argument becomes a region with those parameters traced. Function
summaries (is every `return` static for this set of traced parameters?) are memoised and
reach functions of other project files through the project model."""

from __future__ import annotations

import ast
from bisect import bisect_left
import re

from portlint.analyses.python.traced_imports import DIFF_TRANSFORMS, JAX_TRANSFORMS, LAX_BODIES, dotted
from portlint.analyses.python.traced_regions import Region, _positional, annotated_tensor, holds_tensors, params_of, read_as_tensor, torch_static_param
from portlint.frontends.python.astindex import walk
from portlint.frontends.python.returns import VALUE_READS, library_returns

# the libraries' declared return kinds (rules/vocabulary/python_returns.json), read once
RETURNS = library_returns()

STATIC_ATTRS = {
    "shape", "ndim", "dtype", "size", "itemsize", "nbytes", "device", "sharding", "aval",
    "weak_type", "is_cuda", "requires_grad", "layout", "is_leaf", "grad_fn", "training",
    "is_xla", "names",
    # autograd.Function ctx: a tuple of Python bools, one per forward input
    "needs_input_grad",
    # jax.experimental.sparse BCOO/BCSR layout fields: Python ints and flags of the pytree's aux data
    "n_batch", "n_dense", "n_sparse", "nse", "indices_sorted", "unique_indices",
}
STATIC_METHODS = {
    "dim", "ndimension", "numel", "nelement", "size", "is_floating_point", "is_complex",
    "get_device", "element_size", "is_contiguous", "items", "keys", "values", "startswith",
    "endswith", "format", "join", "split", "lower", "upper", "replace",
}
# calls whose result is static metadata (never a traced value)
STATIC_CALLS = {
    "len", "isinstance", "issubclass", "type", "hasattr", "getattr", "callable", "id", "str",
    "repr", "range", "enumerate", "zip", "print", "sorted", "reversed", "iter", "next", "super",
    "jax.numpy.shape", "jax.numpy.ndim", "jax.numpy.size", "jax.numpy.result_type",
    "jax.numpy.dtype", "jax.numpy.finfo", "jax.numpy.iinfo", "jax.numpy.issubdtype",
    "jax.numpy.promote_types", "jax.numpy.isscalar", "jax.numpy.iscomplexobj", "jax.numpy.isrealobj",
    "jax.numpy.can_cast", "jax.dtypes.issubdtype", "jax.dtypes.canonicalize_dtype", "jax.numpy.broadcast_shapes",
    "jax.core.is_concrete", "numpy.shape", "numpy.ndim", "numpy.size",
    "numpy.dtype", "numpy.finfo", "numpy.iinfo", "numpy.issubdtype", "numpy.prod",
    "jax.tree_util.tree_structure", "jax.tree.structure", "jax.process_index", "jax.device_count",
    "jax.local_device_count", "jax.process_count", "jax.devices", "jax.local_devices",
    "math.prod", "math.ceil", "math.floor", "math.sqrt", "math.log", "math.log2", "math.exp",
    "torch.is_tensor", "torch.is_floating_point", "torch.device", "torch.Size", "torch.finfo",
    "torch.iinfo", "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.autocast",
    "dataclasses.fields", "jax.experimental.pallas.next_power_of_2", "jax.experimental.pallas.cdiv",
    "int", "float", "bool", "complex",  # host syncs: reported by PTL803, static afterwards
}
# methods of named-array libraries that answer about axes, not values (haliax)
QUERY_METHODS = {"axis_size", "resolve_axis", "axis_indices"}
# methods only a tensor has (a Python number, list or dict has none of them): a call result
# they are applied to is a tensor
TENSOR_METHODS = {
    "sum", "mean", "amax", "amin", "any", "all", "nansum", "nanmean", "std", "var", "norm", "prod",
    "argmax", "argmin", "float", "long", "half", "bfloat16", "double", "detach", "clamp", "clamp_min",
    "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "nonzero", "masked_fill", "cumsum",
    "exp", "log", "sigmoid", "softmax", "log_softmax", "squeeze", "unsqueeze", "view", "reshape", "flatten",
    "max", "min", "abs", "sqrt", "to", "type_as", "contiguous", "clone", "cumsum", "long", "int", "bool",
}
# a value moved to the host is a host value afterwards (the move itself is the sync, PTL803)
HOST_MOVES = {"item", "tolist", "numpy", "block_until_ready", "cpu"}
STATIC_CALLS |= {"jax.device_get"}
# torch's questions about how the code is being run: a bool, or the TorchScript tracing
# state object / None, answered on the host (optimum-habana picks `_slow_forward` on
# `torch._C._get_tracing_state()` in its per-token input preparation)
STATIC_CALLS |= {"torch._C._get_tracing_state", "torch.jit.is_tracing", "torch.jit.is_scripting",
                 "torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling"}
ARRAY_NAMESPACES = ("jax.numpy.", "jax.lax.", "jax.random.", "jax.nn.", "jax.scipy.", "torch.", "optax.", "jax.experimental.pallas.")



# framework calls that answer about the host or the runtime, not about array values
_HOST_API = re.compile(r"^jax\.experimental\.pallas\.tpu\.(make_async_copy|async_copy|make_async_remote_copy|async_remote_copy|semaphore_\w+|get_barrier_semaphore)$|\.(is_\w+|get_\w+|set_\w+)$|^torch\.(backends|cuda|distributed|jit|compiler|_dynamo|utils|hub|profiler|autograd\.profiler)\.|^torch\.(no_grad|enable_grad|inference_mode|autocast|manual_seed|device|Size|finfo|iinfo|is_tensor)$")
# torch: callees whose result is a tensor when given one (models, losses, layers)
_TORCH_PRODUCER = re.compile(
    r"^(model|net|network|module|generate|forward|criterion|loss_fn|loss_func|compute_loss|step|head|lm_head|encoder|"
    r"decoder|backbone|embed|embedding|classifier|predict|logits)$|_(model|loss|fn|net|head|step|layer|block|proj|encoder|decoder)$"
    r"|^(loss|layer|block|proj|attn|attention|mlp|norm|conv|fc|linear|dropout|act|pool|softmax)", re.I)
# names that hold shapes and sizes (static in practice: `shape`, `target_shape`, `batch_size`)
_SHAPE_NAME = re.compile(r"shape|(^|_)(size|dims)$", re.I)
# fields that hold tensors in a named tuple or output object (`decoder_out.output_tokens`,
# `out.logits`): a parameter read through one may be a tensor container, not a plain object
_TENSOR_FIELD = re.compile(r"tensors?$|tokens?$|scores?$|mask|attn|attention|logits|hidden|_ids$|^ids$|loss|emb|states?$|weights?$|^grad|^x$|^y$|values?$|keys?$|probs|_out$|^out", re.I)
# parameter names that hold a batch or a model's outputs: objects whose fields are tensors
_TENSOR_CARRIER = re.compile(r"batch|inputs?$|outputs?$|^out$|sample|^data$|features|^x$|hidden", re.I)


def _host_factory(name: str, call: ast.Call, traced) -> bool:
    """`torch.randint(0, n, (1,))`, `torch.tensor(3.0)`: a tensor made on the host (a torch
    factory, by its declared `device` parameter, called without a device= keyword and
    without a traced argument); reading it is a host read, not a device sync."""
    if name not in RETURNS.factories or not name.startswith("torch."):
        return False
    if any(k.arg in ("device", None) for k in call.keywords):
        return False
    return not any(traced(a) for a in call.args)



# the `return_tensors=` formats of Hugging Face tokenizers, processors and feature extractors
# whose arrays are made on the host: "pt" builds them with `torch.tensor(...)` and no device
# (CPU tensors until `.to(device)`), "np" with numpy. ("jax" and "tf" put them on the
# framework's default device, which may be the accelerator.)
_HOST_TENSOR_FORMATS = ("pt", "np")


def returns_host_tensors(call: ast.Call) -> bool:
    """`tokenizer(texts, return_tensors="pt")`, `processor(images=..., return_tensors="pt")`: the
    encoded batch holds CPU tensors (the library calls `torch.tensor` without a device)."""
    return any(k.arg == "return_tensors" and isinstance(k.value, ast.Constant) and k.value.value in _HOST_TENSOR_FORMATS
               for k in call.keywords)


def host_op(name: str, call: ast.Call, host) -> bool:
    """`torch.argsort(torch.tensor(order))`: a torch op (not a factory that takes a device)
    called without `device=` whose tensor operands are all made on the host (`host(arg)`
    says so: a device-less factory, another such op); Python constants beside them (`dim`,
    a fill value) do not change where it runs. A CPU tensor in, a CPU tensor out: reading
    it is no device sync. An operand that is merely not traced (`self.weight`) is no
    evidence of the host, so each one must be shown host-made."""
    if not name.startswith("torch.") or name in RETURNS.factories or any(k.arg in ("device", "out", None) for k in call.keywords):
        return False

    def operand(a: ast.AST) -> bool | None:
        """True: host-made; None: a Python constant; False: anything else."""
        if a.__class__ is ast.Constant:
            return None
        if a.__class__ in (ast.List, ast.Tuple) and a.elts:
            parts = [operand(x) for x in a.elts]
            return False if False in parts else (True if True in parts else None)
        return True if host(a) else False

    found = [operand(a) for a in call.args]
    return bool(found) and False not in found and True in found


def _size_expr(e: ast.AST) -> bool:
    """A size read off an object: `x.shape[k]`, `x.ndim`, `x.size(k)`, `x.dim()`, `len(x)`."""
    if e.__class__ is ast.Subscript:
        e = e.value
    if e.__class__ is ast.Attribute:
        return e.attr in ("shape", "ndim")
    if e.__class__ is ast.Call:
        f = e.func
        return (f.__class__ is ast.Attribute and f.attr in ("size", "dim", "numel")) or (f.__class__ is ast.Name and f.id == "len")
    return False


_TORCH_DTYPE = re.compile(r"^torch\.(float|bfloat|half|double|int|uint|long|short|bool|complex|cfloat|cdouble|float8_\w+)\d*$")


def _names_metadata(e: ast.AST, canonical) -> bool:
    """An operand that is a tensor's metadata or a Python object, never array values: `x.dtype`,
    `x.device`, a torch dtype (`torch.bfloat16`), an operator (`torch.ops.aten.mm.default`,
    which an FX node's target is compared with), a string built by concatenation or an
    f-string (`"cuda:" + str(k)`). A comparison with one is a Python comparison."""
    if isinstance(e, ast.Attribute) and e.attr in ("dtype", "device"):
        return True
    if isinstance(e, ast.JoinedStr):
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        return any(isinstance(side, ast.Constant) and isinstance(side.value, str) or isinstance(side, ast.JoinedStr) for side in (e.left, e.right))
    if isinstance(e, (ast.Attribute, ast.Name)):
        name = canonical(e) or ""
        return _TORCH_DTYPE.match(name) is not None or name.startswith("torch.ops.")
    return False


def _computed(e: ast.AST) -> bool:
    """A value a call computes (`x.max()`, `torch.div(a, b) + 1`, `f(x)[0]`), not a name,
    a choice between names or a tuple handed back."""
    if e.__class__ is ast.Call:
        return True
    if e.__class__ is ast.BinOp:
        return _computed(e.left) or _computed(e.right)
    if e.__class__ is ast.UnaryOp:
        return _computed(e.operand)
    if e.__class__ is ast.Subscript:
        return _computed(e.value)
    return False


def to_cpu_args(call: ast.Call) -> bool:
    """`.to("cpu")` / `.to(device="cpu")` (the arguments of a `.to` call that name the host)."""
    args = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "device")]
    return any(isinstance(a, ast.Constant) and a.value == "cpu" for a in args)


def _loop_counters(nodes) -> set[str]:
    """Names a `for` binds to a Python int: `i` of `for i in range(n)` and of
    `for i, layer in enumerate(self.layers)` (a parameter compared with one is an int too:
    `if i == tgt_layer:`, `if i >= early_exit:`)."""
    out: set[str] = set()
    for n in nodes:
        if n.__class__ is not ast.For or n.iter.__class__ is not ast.Call:
            continue
        callee = dotted(n.iter.func)
        if callee == "range" and n.target.__class__ is ast.Name:
            out.add(n.target.id)
        elif callee == "enumerate" and n.target.__class__ is ast.Tuple and n.target.elts and n.target.elts[0].__class__ is ast.Name:
            out.add(n.target.elts[0].id)
    return out


def _asked_parts(binding: ast.AST) -> list[ast.AST]:
    """The parts of a binding node whose tracedness `compute_traced` asks (see there)."""
    if binding.__class__ in (ast.Assign, ast.AnnAssign, ast.NamedExpr):
        return [binding.value] if binding.value is not None else []
    if binding.__class__ is ast.AugAssign:
        return [binding.value, binding.target]
    if binding.__class__ in (ast.For, ast.comprehension):
        return [binding.iter]
    if binding.__class__ is ast.withitem:
        return [binding.context_expr]
    return []


def _nones(node: ast.AST) -> bool:
    """`(None, None)`: a tuple or list display of None only. Comparing with it is Python's
    element-wise `==` of a sequence (`past_key_value[-2:] != (None, None)`), and a tensor
    compared with None is False without a device op."""
    return isinstance(node, (ast.Tuple, ast.List)) and bool(node.elts) and all(
        isinstance(x, ast.Constant) and x.value is None for x in node.elts)


_LOOPS = (ast.For, ast.While, ast.AsyncFor)


def _parameter_list(e: ast.AST) -> bool:
    """`group["params"]` (a parameter group of an optimizer) or `model.parameters()`: the
    registered parameters of a module, device tensors once the model is on the device."""
    if e.__class__ is ast.Subscript:
        return e.slice.__class__ is ast.Constant and e.slice.value == "params"
    return e.__class__ is ast.Call and e.func.__class__ is ast.Attribute and e.func.attr == "parameters" and not e.args


def _next_batch(e: ast.AST) -> bool:
    """`next(train_iterator)`, `next(iter(loader))`: the next item of an iterator, drawn in a
    step loop's body (its batch, as a `for` loop's target would be)."""
    return e.__class__ is ast.Call and e.func.__class__ is ast.Name and e.func.id == "next" and len(e.args) == 1 and not e.keywords


def _is_enum_constant(e: ast.AST) -> bool:
    name = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else ""
    return len(name) > 1 and name.isupper() and any(ch.isalpha() for ch in name)


class ValueModel:
    """The value model and call propagation (mixed into `TracedMap`, which holds the state)."""

    # -- propagation --
    def _propagate_calls(self) -> None:
        """Module functions called from a region become regions; fixpoint over call sites."""
        for _ in range(6):
            changed = False
            for region in list(self.regions.values()):
                self.compute_traced(region)
                calls = self._once("calls", region.node, lambda: [n for n in self.region_nodes(region) if isinstance(n, ast.Call)])
                for node in calls:
                    tname = self.imports.canonical(node.func)
                    if region.kind == "jax" and tname in (DIFF_TRANSFORMS | set(JAX_TRANSFORMS) | set(LAX_BODIES)) and node.args:
                        for i in LAX_BODIES.get(tname, (0,)):
                            if i < len(node.args):
                                ref, n_bound, kw_bound = self._unwrap_partial(node.args[i], node)
                                fn = self.resolve(ref, node)
                                if fn is not None and fn not in self.regions and fn not in self.host_fns:
                                    self.add(fn, "jax", f"transformed by {dotted(node.func)} inside a traced region", bound=(n_bound, kw_bound))
                                    changed = True
                        continue
                    fn = self.resolve(node.func, node)
                    if fn is None or isinstance(fn, ast.Lambda) or fn in self.host_fns:
                        continue
                    if self.imports.canonical(node.func) in JAX_TRANSFORMS:
                        continue
                    traced = self._traced_params_at(fn, node, region)
                    if not traced and fn in self.regions:
                        continue
                    if not traced:
                        if self._same_step_method(fn, node, region):
                            # parameters typed as tensors or containers of them (`gradients:
                            # List[Tensor]`) hold them whatever the call passes
                            typed = {p.arg for p in params_of(fn) if holds_tensors(p.annotation)}
                            self.add(fn, "torch", f"called every step from {region.node.name}", traced_params=typed)
                            changed = True
                        continue
                    old = self.regions.get(fn)
                    before = set(old.traced) if old else None
                    self.add(fn, region.kind, f"called from a traced region ({getattr(region.node, 'name', 'step')})", traced_params=traced)
                    if old is not None and old.assumed and not region.assumed:
                        old.assumed = False  # a tensor function a step is seen to call
                    if before is None or not traced <= before:
                        changed = True
            if not changed:
                break
        for region in self.regions.values():
            self.compute_traced(region)

    def _same_step_method(self, fn, call: ast.Call, region: Region) -> bool:
        """torch: `self._get_lora_matrices(adapter)` in a module's forward (or
    `self._compute_grad_norm(...)` in an optimizer's or scheduler's `step`): a method of the
        same object whose result the forward uses, called with Python
        arguments only, runs in the same step on the module's own tensors (`self.weights[adapter]`),
        so it is traced code with no traced parameter. A bare call statement (`self.unmerge()`
        under `if self.merged:`) changes the object's state instead and is not followed. Only
        one call deep from the forward itself."""
        if region.kind != "torch" or region.parent is not None or region.reached_from is not None:
            return False
        if not isinstance(region.node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not region.why.startswith(("forward of ", "step of ")):
            return False  # a step function by name (`generate`) also calls its once-per-call setup
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return False
        if isinstance(self.parents.get(call), ast.Expr):
            return False
        return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.parents.get(fn) is self.parents.get(region.node)

    def _traced_params_at(self, fn, call: ast.Call, region: Region) -> set[str]:
        return self._call_traced_params(fn, call, lambda e: self.is_traced(e, region))

    # -- traced values --
    def compute_traced(self, region: Region) -> None:
        torch = region.kind == "torch"
        inherited: set[str] = set()
        p = region.parent
        if p is not None:
            inherited = set(p.traced)
        # the same inputs give the same names (regions are recomputed on every round of
        # `_propagate_calls` and again in `_nest`): memoised per region by its inputs
        memo = region.__dict__.setdefault("_traced_memo", {})
        key = (frozenset(region.traced), frozenset(inherited), frozenset(region.static))
        if key in memo:
            region.traced = set(memo[key])
            return
        assigned_static: set[str] = set()
        # a torch step loop (`while step < max_steps:` around `fabric.backward(loss)`) draws its
        # batch with `batch = next(train_iterator)`: the `for batch in loader` of a while loop
        step_loop = region.node.__class__ in _LOOPS
        traced = set(region.traced) | inherited
        traced -= self._python_params(region, traced, torch)
        bindings = self._bindings(region)
        reads = self._binding_reads(region)
        # a binding's answers depend on `traced` only through the names it mentions (every
        # test of `_expr_traced` is a name's membership): one whose mentioned traced names
        # are those of its last pass here gives the same answers, and adds names it already
        # added, so it is not evaluated again (the summaries and foreign maps a first pass
        # computed on the way are memoised: a second pass would only find them)
        last_seen: dict[ast.AST, frozenset[str]] = {}
        for _ in range(8):
            before = len(traced)
            for node, mentioned in zip(bindings, reads):
                seen = mentioned.intersection(traced)
                if last_seen.get(node) == seen:
                    continue
                last_seen[node] = seen
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                    value = node.value
                    if value is None:
                        continue
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if value.__class__ is ast.UnaryOp and value.op.__class__ is ast.Not and not isinstance(node, ast.AugAssign):
                        continue  # `not t` is a Python bool: the conversion is the sync, the name holds no tensor
                    is_t = self._expr_traced(value, traced, torch) or (isinstance(node, ast.AugAssign) and self._expr_traced(node.target, traced, torch)) \
                        or (torch and step_loop and _next_batch(value))
                    for t in targets:
                        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) and len(t.elts) == len(value.elts):
                            for te, ve in zip(t.elts, value.elts):
                                if isinstance(te, ast.Name) and self._expr_traced(ve, traced, torch):
                                    traced.add(te.id)
                            continue
                        for n in walk(t):
                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                                if is_t:
                                    traced.add(n.id)
                                else:
                                    assigned_static.add(n.id)
                elif isinstance(node, (ast.For, ast.comprehension)) and node is not region.node:
                    it = node.iter
                    if isinstance(it, ast.Call) and dotted(it.func) == "enumerate" and it.args and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2:
                        if self._expr_traced(it.args[0], traced, torch):
                            traced |= {n.id for n in walk(node.target.elts[1]) if isinstance(n, ast.Name)}
                    elif isinstance(it, ast.Call) and dotted(it.func) == "range":
                        pass
                    elif torch and _parameter_list(it):
                        traced |= {n.id for n in walk(node.target) if isinstance(n, ast.Name)}
                    elif self._expr_traced(it, traced, torch):
                        traced |= {n.id for n in walk(node.target) if isinstance(n, ast.Name)}
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    if self._expr_traced(node.context_expr, traced, torch):
                        traced |= {n.id for n in walk(node.optional_vars) if isinstance(n, ast.Name)}
            if len(traced) == before:
                break
        traced = {n for n in traced if not _SHAPE_NAME.search(n)}
        if torch:
            # the name test is for parameters (`num_heads`, `is_training`, `model`); a local
            # assigned a tensor expression is a tensor whatever its name (`is_eos = out == eos`)
            params = params_of(region.node) if isinstance(region.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else []
            traced -= {p.arg for p in params if torch_static_param(p) and p.arg not in read_as_tensor(region.node)}
            traced -= self._object_params(region)
        region.traced = traced - (region.static - set(region.traced))
        memo[key] = frozenset(region.traced)

    def container_truth(self, test: ast.AST, region: Region) -> bool:
        """`if leaves:` / `not pending`: the truth of a name bound only to Python containers
        (a list, tuple, dict or set display or comprehension, `list(...)`, a pytree's leaves)
        is its length, a Python value at trace time whatever the elements hold."""
        while test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not:
            test = test.operand
        if test.__class__ is not ast.Name:
            return False
        values = self._container_bindings(region).get(test.id)
        return bool(values) and all(values)

    def _container_bindings(self, region: Region) -> dict[str, list[bool]]:
        """name -> for each assignment to it in the region, is the value a container?"""
        def compute() -> dict[str, list[bool]]:
            out: dict[str, list[bool]] = {}
            for n in self.region_nodes(region):
                if n.__class__ in (ast.Assign, ast.AnnAssign) and n.value is not None:
                    targets = n.targets if n.__class__ is ast.Assign else [n.target]
                    for t in targets:
                        if t.__class__ is ast.Name:
                            out.setdefault(t.id, []).append(self._container_expr(n.value))
                        elif t.__class__ in (ast.Tuple, ast.List) and t.elts and t.elts[0].__class__ is ast.Name:
                            first = self._leaves_call(n.value, ("jax.tree_util.tree_flatten", "jax.tree.flatten", "jax.tree_flatten"))
                            out.setdefault(t.elts[0].id, []).append(first)
                            for other in t.elts[1:]:
                                for name in walk(other):
                                    if name.__class__ is ast.Name:
                                        out.setdefault(name.id, []).append(False)
                elif n.__class__ in (ast.AugAssign, ast.For, ast.comprehension, ast.withitem, ast.NamedExpr):
                    target = n.optional_vars if n.__class__ is ast.withitem else n.target
                    for name in walk(target) if target is not None else ():
                        if name.__class__ is ast.Name:
                            before = out.get(name.id) or [False]  # `xs += [...]` keeps a container one
                            out.setdefault(name.id, []).append(n.__class__ is ast.AugAssign and before[-1])
            return out

        return self._once("container bindings", region.node, compute)

    _CONTAINER_CALLS = ("list", "tuple", "dict", "set", "sorted", "jax.tree_util.tree_leaves", "jax.tree.leaves", "jax.tree_leaves")

    def _leaves_call(self, e: ast.AST, names) -> bool:
        return e.__class__ is ast.Call and (self.imports.canonical(e.func) or dotted(e.func)) in names

    def _container_expr(self, e: ast.AST) -> bool:
        if e.__class__ in (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp):
            return True
        return self._leaves_call(e, self._CONTAINER_CALLS)

    def _object_params(self, region: Region) -> frozenset[str]:
        """torch: parameters the function uses only as objects: read only through attributes
        a tensor does not have (`cache.seqlen_offset`, `state.step`; `TensorBase` declares
        every tensor attribute and method), never subscripted, iterated, computed with or
        passed on whole. Nothing shows a tensor there: their fields are not evidence of one.
        Parameters that carry a batch of tensors by their name (`batch`, `inputs`, `outputs`),
        or read through a field named like a tensor (`decoder_out.output_tokens`), are left
        as they are."""
        fn = region.node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return frozenset()

        def compute() -> frozenset[str]:
            names = {p.arg for p in params_of(fn) if not annotated_tensor(p.annotation) and not _TENSOR_CARRIER.search(p.arg)}
            as_object: set[str] = set()
            other: set[str] = set()
            for n in walk(fn):
                if n.__class__ is not ast.Name or n.id not in names or n.ctx.__class__ is not ast.Load:
                    continue
                parent = self.parents.get(n)
                if parent.__class__ is ast.Attribute and not RETURNS.tensor_member(parent.attr) and not _TENSOR_FIELD.search(parent.attr):
                    as_object.add(n.id)
                else:
                    other.add(n.id)
            return frozenset(as_object - other)

        return self._once("object params", fn, compute)

    def _once(self, kind: str, node: ast.AST, compute):
        """`compute()`, kept per (`kind`, function or loop node) for the life of this map:
        facts of a region's nodes that do not depend on what is traced, asked again on every
        round of `_propagate_calls` and in `_nest`."""
        key = (kind, node)
        found = self._node_facts.get(key)
        if found is None:
            found = self._node_facts[key] = compute()
        return found

    def _bindings(self, region: Region) -> list[ast.AST]:
        """The region's nodes that bind names (taken from `region_nodes`)."""
        return self._once("bindings", region.node, lambda: [
            n for n in self.region_nodes(region)
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.comprehension, ast.withitem))])

    def _binding_reads(self, region: Region) -> list[frozenset[str]]:
        """For each of `_bindings(region)`, the names under the parts `compute_traced` asks
        `_expr_traced` about: an assignment's value (and an augmented one's target), a
        loop's or comprehension's iterable, a `with` item's context expression."""
        return self._once("binding reads", region.node, lambda: [
            frozenset(n.id for part in _asked_parts(b) for n in walk(part) if n.__class__ is ast.Name)
            for b in self._bindings(region)])

    def _param_assigns(self, region: Region) -> dict[str, list[ast.AST]]:
        """Parameter name -> the assignments to it in the region's nodes, in their order
        (`_python_params` reads the names it needs)."""
        def compute() -> dict[str, list[ast.AST]]:
            names = {p.arg for p in params_of(region.node)}
            found: dict[str, list[ast.AST]] = {}
            for n in self.region_nodes(region):
                if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        for name in walk(t):
                            if name.__class__ is ast.Name and name.id in names:
                                found.setdefault(name.id, []).append(n)
            return found

        return self._once("param assigns", region.node, compute)

    def _python_params(self, region: Region, traced: set[str], torch: bool) -> set[str]:
        """Traced parameters the function's own code shows to be Python values:
        - rebound first thing with a static value, not read before
          (`candidates = default(candidates, self.candidates)`), never given a traced one;
        - torch: compared with a size (`self.bias.shape[-1] >= j`, `len(x) < n`) and never
          used as a tensor (no attribute, method or subscript of it): an int size."""
        fn = region.node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return set()
        params = {p.arg for p in params_of(fn)} & traced
        if not params:
            return set()
        out: set[str] = set()
        assigns = self._param_assigns(region)  # read only for names in `params`
        read_before: set[str] = set()
        for stmt, reads in zip(fn.body, self._param_reads(fn)):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0].__class__ is ast.Name:
                name = stmt.targets[0].id
                if name in params and name not in read_before and name not in out:
                    if all(a.__class__ is ast.Assign and not self._expr_traced(a.value, traced, torch) for a in assigns[name]):
                        out.add(name)
            read_before |= reads & params
            if read_before >= params:
                break  # every parameter is read: none can be rebound first thing any more
        if torch:
            out |= self._size_params(region, params - out)
        return out

    def _param_reads(self, fn) -> list[frozenset[str]]:
        """Per statement of `fn`'s body, the parameter names it reads (any `Name` of one)."""
        def compute() -> list[frozenset[str]]:
            names = {p.arg for p in params_of(fn)}
            return [frozenset(n.id for n in walk(stmt) if n.__class__ is ast.Name and n.id in names) for stmt in fn.body]

        return self._once("param reads", fn, compute)

    def _size_params(self, region: Region, params: set[str]) -> set[str]:
        """torch parameters compared with a size and never used as a tensor (`_python_params`)."""
        compared, as_tensor = self._size_uses(region)
        return (compared & params) - as_tensor

    def _size_uses(self, region: Region) -> tuple[frozenset[str], frozenset[str]]:
        """(names compared with a size or a loop counter, names used as a tensor: an
        attribute or subscript of them) in the region's nodes, whatever the parameters:
        the facts `_size_params` narrows to its parameters."""
        def compute() -> tuple[frozenset[str], frozenset[str]]:
            compared: set[str] = set()
            as_tensor: set[str] = set()
            counters = _loop_counters(self.region_nodes(region))
            for n in self.region_nodes(region):
                if n.__class__ is ast.Compare and len(n.comparators) == 1:
                    sides = (n.left, n.comparators[0])
                    for a, b in (sides, sides[::-1]):
                        if a.__class__ is ast.Name and (_size_expr(b) or (b.__class__ is ast.Name and b.id in counters)):
                            compared.add(a.id)
                elif n.__class__ is ast.Call and n.func.__class__ is ast.Name and n.func.id in ("max", "min") and len(n.args) > 1 \
                        and any(_size_expr(a) for a in n.args):
                    # `max(len(values), pad_to_bsz)`: compared with a size by max() itself
                    compared.update(a.id for a in n.args if a.__class__ is ast.Name)
                elif n.__class__ in (ast.Attribute, ast.Subscript) and n.value.__class__ is ast.Name:
                    as_tensor.add(n.value.id)
            return frozenset(compared), frozenset(as_tensor)

        return self._once("size uses", region.node, compute)

    def _host_made(self, e: ast.AST, arg_traced) -> bool:
        """torch: a tensor this expression makes on the host, by its form: a device-less
        factory (`torch.tensor(front + back)`), a torch op over such tensors (`host_op`),
        an indexing of either. Names are not followed (the value model has one answer per
        name; `host_created` of PTL803 follows the region's bindings)."""
        while e.__class__ is ast.Subscript:
            e = e.value
        if e.__class__ is not ast.Call:
            return False
        name = self.imports.canonical(e.func) or ""
        if not name.startswith("torch."):
            return False
        return _host_factory(name, e, arg_traced) or host_op(name, e, lambda a: self._host_made(a, arg_traced))

    def _tensor_result(self, e: ast.AST, traced: set[str]) -> bool:
        """torch: a call given a traced value whose result is used as a tensor (a tensor-only
        method is called on it): `accelerator.gather(loss).mean()`, `reduce(x).sum()`. The
        helper is not known to return a tensor, but the method says it does."""
        if not isinstance(e, ast.Call):
            return False
        if (self.imports.canonical(e.func) or "") in STATIC_CALLS:
            return False
        if isinstance(e.func, ast.Attribute) and (e.func.attr in STATIC_METHODS or e.func.attr in HOST_MOVES or e.func.attr == "get"):
            return False
        if isinstance(e.func, ast.Attribute) and e.func.attr in TENSOR_METHODS and self._tensor_result(e.func.value, traced):
            return True
        t = lambda x: self._expr_traced(x, traced, True)  # noqa: E731
        return any(t(a) for a in e.args) or any(t(k.value) for k in e.keywords if k.arg is not None)

    def _returns_traced(self, call: ast.Call, traced: set[str], arg_traced=None) -> bool:
        """torch: a call by name of a function of this file (a module helper, a nested def)
        that returns a traced value for the traced arguments it is given (`lengths =
        _conv_out_length(lengths, 7, 1)` returning `torch.div(...)`). Methods are left out:
        they return state objects (dicts of kwargs, caches) as often as tensors."""
        if not isinstance(call.func, ast.Name):
            return False
        fn = self.resolve(call.func, call)
        if fn is None or isinstance(fn, ast.Lambda) or fn in self.host_fns or fn in self.kernel_fns:
            return False
        params = self._call_traced_params(fn, call, arg_traced or (lambda e: self._expr_traced(e, traced, True)))
        if not params:
            return False
        # a return computed by a call (`lengths.max()`, `torch.div(...) + 1`), not one that
        # hands an argument back (`v if exists(v) else d`, `(beam[3], beam[0])`)
        computed = any(n.__class__ is ast.Return and n.value is not None and _computed(n.value) for n in self._walk_no_defs(fn.body))
        return computed and not self.fn_returns_static(fn, True, frozenset(params))

    def returns_static(self, call: ast.Call, traced: set[str], torch: bool = False, arg_traced=None) -> bool:
        """Is the value of `call` static, by the callee's summary? The summary of a function
        of this project (this file or, through the project model, another) says, for the set
        of its parameters that are traced at this call, whether every `return` is static
        (`return x.shape[-1] // heads`, or `n % multiple` with `multiple=8` given)."""
        ref = call.func
        if not isinstance(ref, (ast.Name, ast.Attribute)):
            return False
        fn = self.resolve(ref, call)
        owner = self
        if fn is None:
            owner, fn = self._foreign_def(ref)
            if fn is None:
                return False
        if isinstance(fn, ast.Lambda) or fn in owner.host_fns:
            return False
        params = owner._call_traced_params(fn, call, arg_traced or (lambda e: self._expr_traced(e, traced, torch)))
        return owner.fn_returns_static(fn, torch, frozenset(params))

    def _foreign_def(self, ref: ast.AST):
        """(TracedMap of its file, def) of a function imported from another project file."""
        name = self.imports.canonical(ref)
        head = (dotted(ref) or "").partition(".")[0]
        if not name or head not in self.imports.alias:
            return self, None
        if name not in self._foreign_defs:
            self._foreign_defs[name] = (self, None)
            from portlint.index.project import foreign_traced_map

            model, rel = self.file_model()
            found = model.find_definition(name, rel) if model is not None and rel is not None else None
            if found is not None and found[0] != rel:
                other = foreign_traced_map(self.ctx, found[0])
                fn = other._def_by_qualname(found[1]) if other is not None else None
                if fn is not None:
                    self._foreign_defs[name] = (other, fn)
        return self._foreign_defs[name]

    def _call_traced_params(self, fn, call: ast.Call, traced_arg) -> set[str]:
        """The parameters of `fn` that receive a traced value at `call`."""
        pos = [p.arg for p in _positional(fn)]
        if pos and pos[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
            pos = pos[1:]
        out: set[str] = set()
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                if traced_arg(arg.value):
                    out |= set(pos[i:])
                break
            if i < len(pos) and traced_arg(arg):
                out.add(pos[i])
        names = {p.arg for p in params_of(fn)}
        for kw in call.keywords:
            if kw.arg in names and traced_arg(kw.value):
                out.add(kw.arg)
            elif kw.arg is None and traced_arg(kw.value) and fn.args.kwarg:
                out.add(fn.args.kwarg.arg)
        return out

    def fn_returns_static(self, fn, torch: bool = False, traced_params: frozenset[str] | None = None) -> bool:
        """Are all of `fn`'s returns static when `traced_params` (default: every parameter)
        hold traced values? Memoised per function, kind and parameter set; a function that
        returns nothing is not a static source."""
        if isinstance(fn, ast.Lambda) or fn in self.host_fns:
            return False
        if traced_params is None:
            traced_params = frozenset(p.arg for p in params_of(fn) if p.arg not in ("self", "cls"))
        key = (fn, torch, traced_params)
        memo = self._static_returns
        if key not in memo:
            memo[key] = False  # recursion: assume traced until shown otherwise
            probe = Region(fn, "torch" if torch else "jax", "summary")
            probe.traced = set(traced_params)
            self.compute_traced(probe)
            returns = [n for n in self.region_nodes(probe) if isinstance(n, ast.Return) and n.value is not None]
            memo[key] = bool(returns) and not any(self._expr_traced(r.value, probe.traced, torch) for r in returns)
        return memo[key]

    def value_of(self, expr: ast.AST, region: Region | None) -> str:
        """Three-valued: "traced" (an array value in traced code this file proves), "static"
        (a Python value at trace time: constants, shapes, lengths, static parameters,
        config attributes, host values), or "unknown" (traced only by assumption: a
        function reached from another file, whose parameters are taken as traced without
        the call's values). Report at high confidence only on "traced"."""
        if region is None:
            return "static"
        if not self.is_traced(expr, region):
            return "static"
        return "unknown" if region.certainty == "unknown" else "traced"

    def is_traced(self, expr: ast.AST, region: Region | None) -> bool:
        if region is None:
            return False
        torch = region.kind == "torch"
        traced = region.traced
        rebound = self._rebound_static(expr, region)
        if rebound:
            traced = traced - rebound
        scoped = self._comprehension_scoped(expr, region)
        if scoped:
            traced = traced - scoped
        return self._expr_traced(expr, traced, torch)

    def _comprehension_scoped(self, expr: ast.AST, region: Region) -> set[str]:
        """Traced names that only a comprehension outside `expr` makes traced: a
        comprehension's variable is its own (Python 3), so the `v` of `[v for v in outs if v
        is not None]` at the end of a forward is not the `v` of `for k, v in
        self.device_map.items()` above it. The region's value model has one answer per name;
        a use outside every comprehension binding the name gets the answer of the name's
        other bindings (none of them traced, and not a parameter or a closure's name)."""
        names = {n.id for n in walk(expr) if n.__class__ is ast.Name and n.id in region.traced}
        if not names:
            return set()

        def compute() -> tuple[dict[str, list[ast.AST]], dict[str, list[ast.AST]]]:
            comps: dict[str, list[ast.AST]] = {}
            others: dict[str, list[ast.AST]] = {}
            for n in self.region_nodes(region):
                if n.__class__ is ast.comprehension:
                    for name in walk(n.target):
                        if name.__class__ is ast.Name:
                            comps.setdefault(name.id, []).append(n)
                elif n.__class__ in (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.withitem, ast.NamedExpr):
                    targets = n.targets if n.__class__ is ast.Assign else [n.optional_vars if n.__class__ is ast.withitem else n.target]
                    for t in targets:
                        for name in walk(t) if t is not None else ():
                            if name.__class__ is ast.Name:
                                others.setdefault(name.id, []).append(n)
            return comps, others

        comps, others = self._once("comprehension bindings", region.node, compute)
        fn = region.node
        params = {p.arg for p in params_of(fn)} if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else set()
        inherited = region.parent.traced if region.parent is not None else set()
        out: set[str] = set()
        for name in names:
            own = comps.get(name)
            if not own or name in params or name in inherited:
                continue
            if any(self._inside(expr, self.parents.get(c)) for c in own):
                continue  # a use inside a comprehension that binds it
            rest = region.traced - {name}
            if not any(self._expr_traced(part, rest, region.kind == "torch") for b in others.get(name, ()) for part in _asked_parts(b)):
                out.add(name)
        return out

    def _rebound_static(self, expr: ast.AST, region: Region) -> set[str]:
        """Traced names that the last assignment before `expr` on its path made a Python
        value: `n = n.item()`, `total = gather(t).sum().item()` and then `if n > 0:`. The
        region's value model has one answer per name; this gives the use its own (an
        assignment counts when its block holds the use, so it ran before it)."""
        names = {n.id for n in walk(expr) if n.__class__ is ast.Name and n.id in region.traced}
        if not names:
            return set()
        # name -> the block (parent node) of each of its plain assignments -> (end lines,
        # start lines, assignments, order in the region) in source order: a use looks only
        # at the blocks that hold it (its ancestors) and bisects each, so N rebinding `if`s
        # cost N x depth x log N, not N x N
        index = region._assigns
        if index is None:
            index = {}
            for order, n in enumerate(self.region_nodes(region)):
                if n.__class__ is ast.Assign and len(n.targets) == 1 and n.targets[0].__class__ is ast.Name:
                    entry = index.setdefault(n.targets[0].id, {}).setdefault(self.parents.get(n), ([], [], [], []))
                    entry[0].append(n.end_lineno or n.lineno)
                    entry[1].append(n.lineno)
                    entry[2].append(n)
                    entry[3].append(order)
            for blocks in index.values():  # source order (region_nodes need not walk in it)
                for block, entry in blocks.items():
                    rows = sorted(zip(entry[1], entry[3], entry[0], entry[2]), key=lambda r: (r[0], r[1]))
                    blocks[block] = ([r[2] for r in rows], [r[0] for r in rows], [r[3] for r in rows], [r[1] for r in rows])
            region._assigns = index
        line = getattr(expr, "lineno", 0)
        ancestors = []
        p = self.parents.get(expr)
        while p is not None:
            ancestors.append(p)
            p = self.parents.get(p)
        out: set[str] = set()
        for name in names:
            blocks = index.get(name)
            if not blocks:
                continue
            best = None  # (start line, -order, assignment): the latest start, the first of a line
            for block in ancestors:
                entry = blocks.get(block)
                if entry is None:
                    continue
                ends, starts, nodes, orders = entry
                k = bisect_left(ends, line) - 1  # the last that ends before the use's line
                if k < 0:
                    continue
                k = bisect_left(starts, starts[k], 0, k + 1)  # the first on that line
                cand = (starts[k], -orders[k], nodes[k])
                if best is None or cand[:2] > best[:2]:
                    best = cand
            if best is not None and not self._expr_traced(best[2].value, region.traced, region.kind == "torch") \
                    and not (region.kind == "torch" and region.node.__class__ in _LOOPS and _next_batch(best[2].value)):
                out.add(name)
        return out

    def _expr_traced(self, e: ast.AST, traced: set[str], torch: bool = False) -> bool:
        """Does `e` hold a traced value? For torch (eager Python around lazy tensors) the
        test is stricter: only torch ops, tensor methods, arithmetic on tensors and calls
        of models/losses/submodules produce tensors; an unknown function returns Python."""
        t = lambda x: self._expr_traced(x, traced, torch)  # noqa: E731
        if isinstance(e, ast.Name):
            return e.id in traced
        if isinstance(e, ast.Constant):
            return False
        if isinstance(e, ast.Attribute):
            if e.attr in STATIC_ATTRS or RETURNS.metadata_attribute(e.attr):
                return False  # declared a Python value by TensorBase (`is_cpu`, `output_nr`)
            if isinstance(e.value, ast.Name) and e.value.id in ("self", "cls", "config", "cfg", "args", "hparams", "opt"):
                return False
            if torch and RETURNS.module_hyperparameter(e.attr) and ("_" in e.attr or not _TENSOR_FIELD.search(e.attr)):
                # `mod.kernel_size`, `layer.out_features`: declared Python by torch.nn's modules
                # (a one-word name that also names tensor fields, `value`, is not taken as one)
                return False
            return t(e.value)
        if isinstance(e, ast.Subscript):
            if isinstance(e.value, ast.Attribute) and e.value.attr in STATIC_ATTRS:
                return False
            return t(e.value) or (not torch and t(e.slice))
        if isinstance(e, ast.Call):
            name = self.imports.canonical(e.func)
            if name in STATIC_CALLS:
                return False
            if returns_host_tensors(e):
                return False  # a tokenizer's `return_tensors="pt"` batch: CPU tensors (until `.to(device)`)
            kind = RETURNS.kind(name)
            if kind == "host" or (kind == "python" and name.rsplit(".", 1)[-1] not in VALUE_READS):
                return False  # declared by the library to return a host array or Python values
            # the answer for each argument, shared by the callee summary's test, the tensor
            # helper test and the test of the arguments below (each used to evaluate them
            # again, once per level of nested calls): nothing between them changes `traced`,
            # and whatever a first answer computed on the way (summaries, foreign maps) is
            # memoised, so a second evaluation would take the same path to the same answer
            answers: dict[ast.AST, bool] = {}

            def t_arg(x: ast.AST) -> bool:
                found = answers.get(x)
                if found is None:
                    found = answers[x] = self._expr_traced(x, traced, torch)
                return found

            if isinstance(e.func, (ast.Name, ast.Attribute)) and self.returns_static(e, traced, torch, t_arg):
                return False  # a helper whose every return is static whatever it is given
            if isinstance(e.func, ast.Name) and e.func.id.startswith(("is_", "has_")) and not (name or "").startswith(ARRAY_NAMESPACES) \
                    and self.resolve(e.func, e) is None and self._foreign_def(e.func)[1] is None:
                return False  # a predicate from a library (`is_named_array(x)`): a Python bool
            if name in ("jax.lax.psum", "jax.lax.axis_size") and e.args and isinstance(e.args[0], ast.Constant):
                return False  # psum(1, axis) is the axis size, a Python int at trace time
            if isinstance(e.func, ast.Attribute):
                if e.func.attr in STATIC_METHODS or e.func.attr in HOST_MOVES or RETURNS.metadata_method(e.func.attr):
                    return False
                if torch and "Tensor." + e.func.attr in RETURNS.host_moves:
                    return False  # `t.pin_memory()`: a host copy
                if torch and e.func.attr == "to" and to_cpu_args(e):
                    return False  # `t.to("cpu")` is a host copy too (reported by PTL803 itself)
                if torch and (e.func.attr == "get" or e.func.attr.startswith("get_")):
                    return False  # dict lookups and object queries, not tensor ops
                if e.func.attr.startswith(("is_", "has_")) or e.func.attr in QUERY_METHODS:
                    return False  # queries of an object's structure (`bias.has_axis(...)`)
                if name and name.startswith(ARRAY_NAMESPACES):
                    return not _HOST_API.search(name) and not (torch and (_host_factory(name, e, t_arg) or self._host_made(e, t_arg)))
                if t(e.func.value):
                    return True
                if torch and e.func.attr in TENSOR_METHODS and self._tensor_result(e.func.value, traced):
                    return True  # gather(x).sum(): only a tensor has .sum(); the helper returned one
            if name and name.startswith(("numpy.", "math.", "os.", "time.", "random.", "logging.")):
                return False
            if torch:
                callee = dotted(e.func) or ""
                tail = callee.rsplit(".", 1)[-1]
                submodule = callee.startswith("self.") and callee.count(".") == 1 and "_" not in tail  # self.proj(x), self.fc1(x)
                # Python's max/min/sum/abs of tensors hand back a tensor (an element, a sum)
                builtin = callee in ("max", "min", "sum", "abs") and self.resolve(e.func, e) is None
                if not submodule and not builtin and not _TORCH_PRODUCER.search(tail) and not self._returns_traced(e, traced, t_arg):
                    return False  # an unknown function of a tensor returns a Python value here
            return any(t_arg(a) for a in e.args) or any(t_arg(k.value) for k in e.keywords)
        if isinstance(e, ast.Compare):
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
                return False  # identity and membership are Python-level tests
            if any(isinstance(c, ast.Constant) and isinstance(c.value, (str, type(None))) or _nones(c) for c in [e.left, *e.comparators]):
                return False  # compared with a string, None or a tuple of Nones: not an array
            if any(_is_enum_constant(c) for c in [e.left, *e.comparators]):
                return False  # compared with an UPPER_CASE constant or enum member: a mode switch
            if any(_names_metadata(c, self.imports.canonical) for c in [e.left, *e.comparators]):
                return False  # compared with a dtype, a device, an operator or a string: not array values
            return t(e.left) or any(t(c) for c in e.comparators)
        if isinstance(e, ast.BinOp):
            return t(e.left) or t(e.right)
        if isinstance(e, ast.UnaryOp):
            return t(e.operand)
        if isinstance(e, ast.BoolOp):
            return any(t(v) for v in e.values)
        if isinstance(e, ast.IfExp):
            return t(e.body) or t(e.orelse)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return any(t(x) for x in e.elts)
        if isinstance(e, ast.Dict):
            return any(t(v) for v in e.values if v is not None)
        if isinstance(e, ast.Starred):
            return t(e.value)
        if isinstance(e, ast.NamedExpr):
            return t(e.value)
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            inner = set(traced)
            for g in e.generators:
                if t(g.iter) or (torch and _parameter_list(g.iter)):
                    inner |= {n.id for n in walk(g.target) if isinstance(n, ast.Name)}
            return self._expr_traced(e.elt, inner, torch)
        return False

