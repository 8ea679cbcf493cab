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
  `torch.compile`d functions, and the module functions the step calls. Not in a region:
  the evaluation leg of `if not self.training:`, and statements after a logging
  interval's early exit (`if not should_log(step): return`).

Inside a region a value is *traced* when it derives from a traced parameter, from an array
op (`jnp.*`, `lax.*`, `jax.random.*`, `torch.*`) or from a call that takes a traced value;
`.shape`, `.ndim`, `.dtype`, `len()`, `isinstance`, `x is None`, `self.<attr>` (module
config), static arguments (`static_argnums/static_argnames`, `partial`-bound values),
parameters annotated `bool/int/str` in modules, and names bound outside the region are
static. torch values: a tensor-only method (`.sum()`, `.mean()`) on the result of a call
given a tensor makes it a tensor (`accelerator.gather(loss).mean()`); a factory without a
device (`torch.randint(0, n, (1,))`) makes a host tensor; a name's last assignment before a
use, when it gives a host value (`n = n.item()`), decides that use."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from portlint.python import astindex
from portlint.python.guards import dotted as dotted_or_empty
from portlint.python.names import ImportTable, import_table

# ---- names ---------------------------------------------------------------------------------

def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    return dotted_or_empty(node) or None


class Imports:
    """Local name -> canonical dotted path: a view of the file's `names.ImportTable`."""

    def __init__(self, module: ast.Module | None = None, table: ImportTable | None = None):
        self.table = table if table is not None else ImportTable(module)
        self.alias: dict[str, str] = self.table.names

    def canonical(self, node: ast.AST) -> str | None:
        return self.table.canonical(node)

    def local_name(self, canonical: str) -> str | None:
        """A local spelling of a canonical module path (`jax.numpy` -> `jnp`), if imported."""
        return self.table.local_name(canonical)

    def uses(self, prefix: str) -> bool:
        return self.table.uses(prefix)


def _in(name: str | None, names) -> bool:
    return name is not None and name in names


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

STATIC_ATTRS = {
    "shape", "ndim", "dtype", "size", "itemsize", "nbytes", "device", "sharding", "aval",
    "weak_type", "is_cuda", "requires_grad", "layout", "is_leaf", "grad_fn", "training",
    "is_xla", "names",
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
ARRAY_NAMESPACES = ("jax.numpy.", "jax.lax.", "jax.random.", "jax.nn.", "jax.scipy.", "torch.", "optax.", "jax.experimental.pallas.")


# ---- regions -------------------------------------------------------------------------------

@dataclass
class Region:
    node: ast.AST  # FunctionDef/AsyncFunctionDef/Lambda, or a For/While loop (torch steps)
    kind: str  # "jax" | "torch"
    why: str
    traced: set[str] = field(default_factory=set)  # traced local names (params + derived)
    static: set[str] = field(default_factory=set)  # names known static
    parent: "Region | None" = None
    _nodes: list | None = None  # nodes of the region, outside nested defs (cached)
    _assigns: dict | None = None  # name -> its plain assignments in the region (cached)
    # the entry point in another file that reaches this function (project.Reach: .entry,
    # .file, .kind, .describe()), None for regions found in this file; `why` then reads
    # "reached from `train_step` in trainer.py", which the PTL80x messages show
    reached_from: object | None = None

    @property
    def certainty(self) -> str:
        """"traced" for regions this file proves (an entry point, or a call with traced
        arguments), "unknown" for functions reached from another file, whose parameters are
        assumed traced without seeing the call's values: report those at lower confidence."""
        return "unknown" if self.reached_from is not None else "traced"

    @property
    def body_nodes(self) -> list[ast.AST]:
        node = self.node
        if isinstance(node, ast.Lambda):
            return [node.body]
        return list(node.body)


def params_of(fn) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *( [a.vararg] if a.vararg else []), *a.kwonlyargs, *([a.kwarg] if a.kwarg else [])]


def _positional(fn) -> list[ast.arg]:
    return [*fn.args.posonlyargs, *fn.args.args]


def _defaults(fn) -> dict[str, ast.AST]:
    a = fn.args
    pos = _positional(fn)
    out = {p.arg: d for p, d in zip(pos[len(pos) - len(a.defaults):], a.defaults)}
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if d is not None:
            out[p.arg] = d
    return out


# framework calls that answer about the host or the runtime, not about array values
_HOST_API = re.compile(r"^jax\.experimental\.pallas\.tpu\.(make_async_copy|async_copy|make_async_remote_copy|async_remote_copy|semaphore_\w+|get_barrier_semaphore)$|\.(is_\w+|get_\w+|set_\w+)$|^torch\.(backends|cuda|distributed|jit|compiler|_dynamo|utils|hub|profiler|autograd\.profiler)\.|^torch\.(no_grad|enable_grad|inference_mode|autocast|manual_seed|device|Size|finfo|iinfo|is_tensor)$")
# torch: callees whose result is a tensor when given one (models, losses, layers)
_TORCH_PRODUCER = re.compile(
    r"^(model|net|network|module|generate|forward|criterion|loss_fn|loss_func|compute_loss|step|head|lm_head|encoder|"
    r"decoder|backbone|embed|embedding|classifier|predict|logits)$|_(model|loss|fn|net|head|step|layer|block|proj|encoder|decoder)$"
    r"|^(loss|layer|block|proj|attn|attention|mlp|norm|conv|fc|linear|dropout|act|pool|softmax)", re.I)
# torch: parameter names that hold Python values or objects, not tensors
_TORCH_STATIC_PARAM = re.compile(
    r"^(self|cls|model|module|optimizer|optim|opt|scheduler|lr_scheduler|args|config|cfg|hparams|tokenizer|processor|"
    r"device|accelerator|logger|writer|mesh|dataloader|loader|trainer|generation_config|stopping_criteria|streamer)$"
    r"|kwargs|len$|length$|size$|^num_|count$|_dim$|^dim$|steps?$|^is_|^use_|^do_|^return_|^output_|mode$|flag|_config$", re.I)
# names that hold shapes and sizes (static in practice: `shape`, `target_shape`, `batch_size`)
_SHAPE_NAME = re.compile(r"shape|(^|_)(size|dims)$", re.I)
_STATIC_ANNOT = {"bool", "int", "str", "Callable", "callable", "type", "tuple", "Sequence", "dict"}
# classes of configuration objects (dataclass hyperparameters), by the name's ending
_CONFIG_ANNOT = ("Config", "Configuration", "Args", "Arguments", "HParams", "Hparams", "Hyperparameters", "Options", "Spec",
                 "Axis", "AxisSelector", "AxisSpec", "Shape", "PrecisionLike", "DTypeLike")


def _annotation_static(ann: ast.AST | None) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, ast.Subscript):  # Optional[bool], Tuple[int, ...]
        base = dotted(ann.value) or ""
        if base.split(".")[-1] in ("Optional",):
            return _annotation_static(ann.slice)
        return base.split(".")[-1] in _STATIC_ANNOT | {"Tuple", "Sequence", "Callable", "Literal"}
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # bool | None
        return all(_annotation_static(s) or (isinstance(s, ast.Constant) and s.value is None) for s in (ann.left, ann.right))
    name = (dotted(ann) or "").split(".")[-1]
    return name in _STATIC_ANNOT or name.endswith(_CONFIG_ANNOT)


def _literal_default(d: ast.AST) -> bool:
    """A bool, str, int or float literal default: a Python value, not an array (a default
    is applied inside the traced function, so it stays a constant; None defaults are often
    arrays)."""
    if isinstance(d, ast.UnaryOp) and isinstance(d.op, ast.USub):
        d = d.operand
    return isinstance(d, ast.Constant) and isinstance(d.value, (bool, str, int, float)) and d.value is not None


def _const_ints(node: ast.AST) -> list[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
    return []


def _const_strs(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def static_params_from_kwargs(fn, keywords: list[ast.keyword]) -> set[str]:
    """Parameter names made static by `static_argnums` / `static_argnames` keywords."""
    pos = [p.arg for p in _positional(fn)] if fn is not None and not isinstance(fn, ast.Lambda) else []
    out: set[str] = set()
    for kw in keywords:
        if kw.arg in ("static_argnums", "static_broadcasted_argnums"):
            for i in _const_ints(kw.value):
                if -len(pos) <= i < len(pos):
                    out.add(pos[i])
        elif kw.arg == "static_argnames":
            out.update(_const_strs(kw.value))
    return out


def _tail(func: ast.AST) -> str:
    """The last name of a callee (`compile` of `torch.compile`), "" for other expressions."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


_STEP_WORDS = ("train_step", "training_step", "train_one_step", "step_fn", "train_fn", "forward_backward", "compute_loss",
               "loss_fn", "generate_step", "decode_step", "generate", "get_batch_loss_metrics", "compute_loss_metrics")


def _step_name(lname: str) -> bool:
    """A function that runs once per training or generation step, by its name: `train_step`,
    `_compute_loss`, `generate` / `_generate`, `*_step`."""
    bare = lname.strip("_")
    return bare in _STEP_WORDS or bare.endswith("_step") or bare.endswith("_compute_loss")


# base-class endings of objects whose `__call__` / `update` runs on tensors every step:
# logits processors and warpers (every generated token), metrics (every iteration)
_PER_STEP_BASES = {"LogitsProcessor": ("__call__",), "LogitsWarper": ("__call__",), "Metric": ("update", "_update")}


def _module_like(cls: ast.ClassDef) -> bool:
    """A class with a base and a `forward(self, x, ...)` method: a torch module whose base is
    defined elsewhere (FairseqEncoder, a model mixin); in a torch file nothing else has one."""
    if not cls.bases:
        return False
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
            return len(params_of(stmt)) >= 2
    return False


def _per_step_methods(cls: ast.ClassDef) -> tuple[str, ...]:
    out: list[str] = []
    for base in cls.bases:
        name = (dotted(base) or "").rsplit(".", 1)[-1]
        for ending, methods in _PER_STEP_BASES.items():
            if name.endswith(ending):
                out.extend(methods)
    return tuple(dict.fromkeys(out))


# torch factories: without a device= and without a tensor argument they make a CPU tensor
_TORCH_FACTORIES = {"randint", "rand", "randn", "randperm", "zeros", "ones", "empty", "full", "arange", "linspace", "tensor", "as_tensor"}


def _host_factory(name: str, call: ast.Call, traced) -> bool:
    """`torch.randint(0, n, (1,))`: a tensor made on the host (no device= keyword, no
    traced argument); reading it is a host read, not a device sync."""
    if name.rsplit(".", 1)[-1] not in _TORCH_FACTORIES or not name.startswith("torch."):
        return False
    if any(k.arg in ("device", None) for k in call.keywords):
        return False
    return not any(traced(a) for a in call.args)


_INTERVAL_WORDS = re.compile(r"log|print|verbose|debug|report", re.I)


def _interval_exit(stmt: ast.stmt) -> bool:
    """`if not should_log(step): return` / `if step % N != 0: continue`: the statements
    after it in the block run every N steps (a logging interval), not every step."""
    if not isinstance(stmt, ast.If) or stmt.orelse or not stmt.body or not isinstance(stmt.body[-1], (ast.Return, ast.Continue)):
        return False
    test = stmt.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        return any(isinstance(n, (ast.Name, ast.Attribute)) and _INTERVAL_WORDS.search(dotted(n) or "") for n in ast.walk(inner))
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Mod)


def _eval_leg(test_if: ast.If, child: ast.AST) -> bool:
    """Is `child` (a statement of `test_if`) in the evaluation leg of a training switch:
    the body of `if not self.training:` / `if not model.training:`, or the `else` of
    `if self.training:`? Validation runs once per evaluation, not every training step."""
    test = test_if.test
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    if negated:
        test = test.operand
    if not (isinstance(test, ast.Attribute) and test.attr == "training"):
        return False
    return child in (test_if.body if negated else test_if.orelse)


def _is_enum_constant(e: ast.AST) -> bool:
    name = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else ""
    return len(name) > 1 and name.isupper() and any(ch.isalpha() for ch in name)


class TracedMap:
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

    # -- indexing --
    def _index(self) -> None:
        self.nodes: list[ast.AST] = astindex.nodes(self.module)  # one walk, shared with the engine
        self.parents: dict[ast.AST, ast.AST] = astindex.parents(self.module)
        # the module's classes now; each scope's local defs when `resolve` first asks
        for stmt in self._own_statements(self.module):
            if isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt

    def scope_defs(self, scope: ast.AST) -> dict[str, ast.AST]:
        """The functions defined directly in a module or function scope, by name."""
        defs = self.scopes.get(scope)
        if defs is None:
            defs = {}
            if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for stmt in self._own_statements(scope):
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        defs[stmt.name] = stmt
            self.scopes[scope] = defs
        return defs

    @staticmethod
    def _own_statements(node):
        """Statements of a scope, descending into compound statements but not nested defs."""
        stack = list(getattr(node, "body", []))
        while stack:
            stmt = stack.pop()
            yield stmt
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            for name in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(stmt, name, []) or [])
            if isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    stack.extend(case.body)

    def enclosing_scope(self, node: ast.AST):
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            p = self.parents.get(p)
        return p

    def enclosing_function(self, node: ast.AST):
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            p = self.parents.get(p)
        return p

    def resolve(self, ref: ast.AST, at: ast.AST):
        """The function (def or lambda) a reference names, looking outwards from `at`."""
        if isinstance(ref, ast.Lambda):
            return ref
        if isinstance(ref, ast.Attribute) and isinstance(ref.value, ast.Name) and ref.value.id in ("self", "cls"):
            cls = self._enclosing_class(at)
            if cls is not None:
                return self._method(cls, ref.attr)
            return None
        if not isinstance(ref, ast.Name):
            return None
        scope = self.enclosing_scope(at)
        while scope is not None:
            if not isinstance(scope, (ast.ClassDef, ast.Lambda)):
                fn = self.scope_defs(scope).get(ref.id)
                if fn is not None:
                    return fn
            scope = self.enclosing_scope(scope)
        return None

    def _enclosing_class(self, node):
        p = self.parents.get(node)
        while p is not None and not isinstance(p, ast.ClassDef):
            p = self.parents.get(p)
        return p

    def _method(self, cls: ast.ClassDef, name: str, depth: int = 0):
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return stmt
        if depth < 5:
            for base in cls.bases:
                b = dotted(base)
                if b in self.classes:
                    found = self._method(self.classes[b], name, depth + 1)
                    if found is not None:
                        return found
        return None

    def _class_is(self, cls: ast.ClassDef, bases: set[str], depth: int = 0) -> bool:
        for base in cls.bases:
            canon = self.imports.canonical(base)
            if canon in bases:
                return True
            local = dotted(base)
            if local in self.classes and depth < 5 and self._class_is(self.classes[local], bases, depth + 1):
                return True
        return False

    def _unwrap_partial(self, node: ast.AST):
        """`partial(f, a, k=v)` -> (f, number of bound positionals, bound keyword names).

        Nested transformations are looked through: `jax.jit(jax.grad(f))` traces `f`."""
        if isinstance(node, ast.Call) and self.imports.canonical(node.func) in ("functools.partial", "partial"):
            if node.args:
                inner, n, kws = self._unwrap_partial(node.args[0])
                return inner, n + len(node.args) - 1, kws | {k.arg for k in node.keywords if k.arg}
        if isinstance(node, ast.Call) and node.args and self.imports.canonical(node.func) in (DIFF_TRANSFORMS | set(JAX_TRANSFORMS)):
            return self._unwrap_partial(node.args[0])
        return node, 0, set()

    # -- adding regions --
    def add(self, fn, kind: str, why: str, static: set[str] | None = None, traced_params: set[str] | None = None,
            bound: tuple[int, set[str]] = (0, set()), module_method: bool = False, jit_direct: bool = False) -> Region | None:
        """Make `fn` a region. Parameters are traced unless static: static_argnums/names,
        partial-bound, a bool/str default, and (except for functions jitted directly,
        where a non-static `flag: bool` is a real bug) an int/bool/str annotation."""
        if fn is None or fn in self.host_fns:
            return None
        region = self.regions.get(fn)
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = params_of(fn)
            names = [p.arg for p in params]
            if traced_params is None:
                defaults = _defaults(fn) if not isinstance(fn, ast.Lambda) else {}
                n_bound, kw_bound = bound
                pos = [p.arg for p in _positional(fn)]
                static = set(static or ())
                static |= set(pos[:n_bound]) | kw_bound
                static |= {p for p, d in defaults.items() if _literal_default(d)}
                if not jit_direct:
                    static |= {p.arg for p in params if _annotation_static(p.annotation)}
                if module_method:
                    static |= {p for p, d in defaults.items() if isinstance(d, ast.Constant) and d.value is not None}
                if kind == "torch":
                    static |= {n for n in names if _TORCH_STATIC_PARAM.search(n)}
                traced_params = {n for n in names if n not in static and n not in ("self", "cls")}
            else:
                traced_params = {n for n in traced_params if not _annotation_static(next(p.annotation for p in params if p.arg == n))}
                if kind == "torch":
                    traced_params = {n for n in traced_params if not _TORCH_STATIC_PARAM.search(n)}
                static = set(names) - traced_params
        else:
            traced_params, static = set(), set()
        if region is None:
            region = Region(fn, kind, why, set(traced_params), set(static or ()))
            self.regions[fn] = region
        else:
            region.traced |= traced_params
        return region

    # -- JAX --
    def _find_jax(self) -> None:
        canon = self.imports.canonical
        for node in self.nodes:
            if isinstance(node, ast.Call):
                name = canon(node.func)
                if name in HOST_CALLBACKS and node.args:
                    fn = self.resolve(node.args[0], node)
                    if fn is not None:
                        self.host_fns.add(fn)
                # initialisers given to self.param / self.variable / hk.get_parameter get
                # shapes and dtypes, not arrays
                is_init = (isinstance(node.func, ast.Attribute) and node.func.attr in ("param", "variable")
                           and isinstance(node.func.value, ast.Name) and node.func.value.id == "self") or name == "haiku.get_parameter"
                if is_init:
                    for arg in [*node.args, *(k.value for k in node.keywords)]:
                        if isinstance(arg, ast.Lambda):
                            self.host_fns.add(arg)
        for node in self.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    target, keywords = dec, []
                    if isinstance(dec, ast.Call):
                        inner, _, _ = self._unwrap_partial(dec)
                        if inner is not dec:  # @partial(jax.jit, static_argnames=...)
                            target, keywords = inner, dec.keywords
                        else:  # @jax.jit(...)-style factories (nnx.jit(static_argnums=...))
                            target, keywords = dec.func, dec.keywords
                    name = canon(target)
                    if name in JAX_TRANSFORMS:
                        self.add(node, "jax", f"decorated with {dotted(target)}", static_params_from_kwargs(node, keywords), jit_direct=name in JIT_LIKE)
            elif isinstance(node, ast.ClassDef) and self._class_is(node, FLAX_BASES):
                # entry points: __call__ and @nn.compact methods; other methods become traced
                # through the calls those make (self.helper(x) with a traced x)
                for stmt in node.body:
                    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    decorators = {canon(d.func if isinstance(d, ast.Call) else d) or "" for d in stmt.decorator_list}
                    if stmt.name == "__call__" or any(d.endswith(("linen.compact", "nn.compact", "compact")) for d in decorators):
                        self.add(stmt, "jax", f"method of the module class {node.name}", module_method=True)
            elif isinstance(node, ast.Call):
                name = canon(node.func)
                if name in JAX_TRANSFORMS and node.args:
                    ref, n_bound, kw_bound = self._unwrap_partial(node.args[0])
                    fn = self.resolve(ref, node)
                    if fn is not None:
                        static = static_params_from_kwargs(fn, node.keywords)
                        self.add(fn, "jax", f"passed to {dotted(node.func)}", static, bound=(n_bound, kw_bound), jit_direct=name in JIT_LIKE and ref is node.args[0])
                elif name in LAX_BODIES:
                    for i in LAX_BODIES[name]:
                        if i < len(node.args):
                            ref, n_bound, kw_bound = self._unwrap_partial(node.args[i])
                            self.add(self.resolve(ref, node), "jax", f"body of {dotted(node.func)}", bound=(n_bound, kw_bound))
                    if name == "jax.lax.switch" and len(node.args) > 1 and isinstance(node.args[1], (ast.List, ast.Tuple)):
                        for elt in node.args[1].elts:
                            self.add(self.resolve(elt, node), "jax", "branch of jax.lax.switch")
                elif name == "jax.lax.switch" and len(node.args) > 1 and isinstance(node.args[1], (ast.List, ast.Tuple)):
                    for elt in node.args[1].elts:
                        self.add(self.resolve(elt, node), "jax", "branch of jax.lax.switch")

    # -- reached from other files (the project model) --
    def _add_reached(self) -> None:
        from portlint.python.project import file_model

        model, rel = file_model(self.ctx)
        if model is None:
            return
        for qual, reach in sorted(model.reached_in(rel).items()):
            fn = self._def_by_qualname(qual)
            if fn is None or fn in self.regions or fn in self.host_fns:
                continue
            if reach.kind == "torch" and not self.torch_target:
                continue
            region = self.add(fn, reach.kind, reach.describe(), static=set(reach.static), module_method="." in qual)
            if region is not None:
                region.reached_from = reach

    def _def_by_qualname(self, qual: str):
        """The top-level function `f` or method `C.m` of this module."""
        head, _, rest = qual.partition(".")
        for stmt in self.module.body:
            if rest and isinstance(stmt, ast.ClassDef) and stmt.name == head:
                for inner in stmt.body:
                    if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner.name == rest:
                        return inner
            elif not rest and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == head:
                return stmt
        return None

    # -- torch on xla/hpu --
    _STEP_NAMES = ("train_step", "training_step", "train_one_step", "step_fn", "train_fn", "forward_backward", "compute_loss", "loss_fn", "generate_step", "decode_step")
    _NOT_STEP = ("eval", "valid", "test", "predict", "evaluate")

    def _is_boundary_call(self, call: ast.Call) -> bool:
        name = self.imports.canonical(call.func) or ""
        return name.endswith(("mark_step", "optimizer_step")) or name in ("torch_xla.sync", "torch_xla.step")

    def _loop_is_step(self, loop) -> bool:
        """A loop that runs training steps (and not an epoch loop around such a loop)."""
        if loop not in self._step_memo:
            self._step_memo[loop] = self._loop_is_step_uncached(loop)
        return self._step_memo[loop]

    def _loop_is_step_uncached(self, loop) -> bool:
        """A step call (`.backward()` or a step boundary) in the loop's body, outside nested
        defs, and no step loop nested in it. Found by lines among the file's step calls and
        loops (listed once), not by walking every loop's body."""
        if self._step_calls is None:
            self._step_calls, self._loops = [], []
            for node in self.nodes:
                if node.__class__ is ast.Call and isinstance(node.func, ast.Attribute) and (
                        (node.func.attr == "backward" and not node.args) or self._is_boundary_call(node)):
                    self._step_calls.append(node)
                elif node.__class__ in (ast.For, ast.While, ast.AsyncFor):
                    self._loops.append(node)
        if not self._step_calls or not loop.body:
            return False
        first, last = loop.body[0].lineno, loop.body[-1].end_lineno or loop.lineno
        home = self._def_of(loop)
        within = lambda n: first <= n.lineno <= last and self._def_of(n) is home and self._inside(n, loop)  # noqa: E731
        if not any(within(c) for c in self._step_calls):
            return False
        return not any(o is not loop and within(o) and self._loop_is_step(o) for o in self._loops)

    def _def_of(self, node):
        """The nearest def, lambda or class around `node` (None at module level)."""
        memo = self._def_memo
        if node not in memo:
            p = self.parents.get(node)
            while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                p = self.parents.get(p)
            memo[node] = p
        return memo[node]

    def _inside(self, node, outer) -> bool:
        p = self.parents.get(node)
        while p is not None:
            if p is outer:
                return True
            p = self.parents.get(p)
        return False

    def region_nodes(self, region: Region) -> list[ast.AST]:
        """Every node in the region's body outside nested defs (computed once)."""
        if region._nodes is None:
            region._nodes = list(self._walk_no_defs(region.body_nodes))
        return region._nodes

    def _walk_no_defs(self, stmts):
        stack = list(stmts)
        children = astindex.children
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
        while stack:
            node = stack.pop()
            yield node
            for child in children(node):
                if not isinstance(child, defs):
                    stack.append(child)

    def _find_torch(self) -> None:
        canon = self.imports.canonical
        calls = [n for n in self.nodes if n.__class__ is ast.Call and _tail(n.func) in ("add_step_closure", "compile")]
        for node in calls:
            if canon(node.func) in STEP_CLOSURE and node.args:
                fn = self.resolve(node.args[0], node)
                if fn is not None:
                    self.host_fns.add(fn)
        compiled = {node for node in calls if node.args and canon(node.func) in TORCH_COMPILE}
        for node in self.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lname = node.name.lower()
                if any(canon(d) in TORCH_COMPILE or (isinstance(d, ast.Call) and canon(d.func) in TORCH_COMPILE) for d in node.decorator_list):
                    self.add(node, "torch", "compiled with torch.compile")
                elif any(s in lname for s in self._NOT_STEP):
                    continue
                elif _step_name(lname):
                    self.add(node, "torch", f"step function {node.name}")
            elif isinstance(node, ast.ClassDef) and (self._class_is(node, TORCH_BASES) or self._torchish_class(node) or _module_like(node)):
                fwd = self._method(node, "forward")
                if fwd is not None and fwd in node.body:
                    self.add(fwd, "torch", f"forward of {node.name}", module_method=True)
                for name in _per_step_methods(node):
                    fn = self._method(node, name)
                    if fn is not None and fn in node.body:
                        self.add(fn, "torch", f"{name} of {node.name}", module_method=True)
            elif node in compiled:
                self.add(self.resolve(node.args[0], node), "torch", "passed to torch.compile")
            elif isinstance(node, (ast.For, ast.While)) and self._loop_is_step(node):
                fn = self.enclosing_function(node)
                if fn is not None and any(s in getattr(fn, "name", "").lower() for s in self._NOT_STEP):
                    continue
                region = self.add(node, "torch", "training-step loop")
                if isinstance(node, ast.For):
                    region.traced |= self._loop_target_traced(node)

    def _torchish_class(self, cls: ast.ClassDef) -> bool:
        if self.jax and not self.imports.uses("torch"):
            return False
        for base in cls.bases:
            b = dotted(base) or ""
            if b.endswith(("nn.Module", "PreTrainedModel")) and not (self.imports.canonical(base) or "").startswith(("flax", "equinox", "haiku")):
                return True
        return False

    def _loop_target_traced(self, loop: ast.For) -> set[str]:
        """Names bound by a step loop's target that hold batch data (not counters)."""
        it = loop.iter
        target = loop.target
        if isinstance(it, ast.Call) and (dotted(it.func) or "").rsplit(".", 1)[-1] in ("range", "trange", "progress_bar"):
            return set()
        if isinstance(it, ast.Call) and dotted(it.func) in ("tqdm", "tqdm.tqdm") and it.args and isinstance(it.args[0], ast.Call) and dotted(it.args[0].func) == "range":
            return set()
        if isinstance(it, ast.Call) and dotted(it.func) == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            target = target.elts[1]
        return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}

    # -- propagation --
    def _propagate_calls(self) -> None:
        """Module functions called from a region become regions; fixpoint over call sites."""
        for _ in range(6):
            changed = False
            for region in list(self.regions.values()):
                self.compute_traced(region)
                for node in self.region_nodes(region):
                    if not isinstance(node, ast.Call):
                        continue
                    tname = self.imports.canonical(node.func)
                    if region.kind == "jax" and tname in (DIFF_TRANSFORMS | set(JAX_TRANSFORMS) | set(LAX_BODIES)) and node.args:
                        for i in LAX_BODIES.get(tname, (0,)):
                            if i < len(node.args):
                                ref, n_bound, kw_bound = self._unwrap_partial(node.args[i])
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
                        continue
                    old = self.regions.get(fn)
                    before = set(old.traced) if old else None
                    self.add(fn, region.kind, f"called from a traced region ({getattr(region.node, 'name', 'step')})", traced_params=traced)
                    if before is None or not traced <= before:
                        changed = True
            if not changed:
                break
        for region in self.regions.values():
            self.compute_traced(region)

    def _traced_params_at(self, fn, call: ast.Call, region: Region) -> set[str]:
        return self._call_traced_params(fn, call, lambda e: self.is_traced(e, region))

    def _nest(self) -> None:
        """Nested defs and lambdas inside a region are traced too (closures see tracers)."""
        for fn_node in list(self.nodes):
            if not isinstance(fn_node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or fn_node in self.host_fns:
                continue
            parent = self.region_of(fn_node, include_self=False)
            if parent is None:
                continue
            own = self.regions.get(fn_node)
            if own is None:
                # torch: a nested helper's parameters are Python values unless a call says otherwise
                own = self.add(fn_node, parent.kind, parent.why, traced_params=set() if parent.kind == "torch" else None)
                if own is None:
                    continue
            own.parent = parent
        # closures: names traced in the parent and not rebound in the child stay traced
        for region in sorted(self.regions.values(), key=lambda r: getattr(r.node, "lineno", 0)):
            self.compute_traced(region)

    def region_of(self, node: ast.AST, include_self: bool = True) -> Region | None:
        """The innermost region containing `node` (a function region or a step loop)."""
        p = node if include_self else self.parents.get(node)
        child = None
        located = None  # the innermost node with a position (`Load` contexts have none)
        while p is not None:
            if p in self.host_fns:
                return None
            if located is None and hasattr(p, "lineno"):
                located = p
            if child is not None and isinstance(child, ast.stmt) and self._after_interval_exit(p, child):
                return None  # runs every N steps, after the logging interval's early exit
            if child is not None and isinstance(child, ast.stmt) and self._after_device_exit(p, child):
                return None  # `if is_tensor(t) and t.device.type == "xla": return t` came first
            r = self.regions.get(p)
            if r is not None:
                if r.kind == "torch" and located is not None and located is not p and self._off_device(located):
                    return None
                return r
            if p.__class__ is ast.If and child is not None and _eval_leg(p, child):
                return None
            child, p = p, self.parents.get(p)
        return None

    def _off_device(self, node: ast.AST) -> bool:
        """torch: a runtime guard (`portlint.python.guards`) keeps `node` from every
        lazy-tensor platform of the file (after `if x.device.type == "xla": return`, in
        the `torch.cuda.is_available()` leg): the code is not traced there."""
        if self._lazy_platforms is None:
            lazy: set[str] = set()
            if "torch_xla" in self.tags:
                lazy |= {"tpu", "trainium"}
            if "gaudi" in self.tags:
                lazy.add("gaudi")
            self._lazy_platforms = frozenset(lazy)
            from portlint.python.guards import guard_map

            self._guards = self.ctx.fact(guard_map)
        return bool(self._lazy_platforms) and not (self._guards.platforms(node, requirements=False) & self._lazy_platforms)

    def _after_device_exit(self, parent: ast.AST, stmt: ast.stmt) -> bool:
        """Does an early exit for lazy-device values precede `stmt` in its block: `if
        torch.is_tensor(t) and t.device.type == "xla": return t.detach()`? One operand of the
        `and` is a device test true only on the file's lazy platforms, so what follows sees
        no lazy tensor (the whole test is no platform guard: it also fails for CPU tensors)."""
        if "torch_xla" not in self.tags and "gaudi" not in self.tags:
            return False
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(parent, field_name, None)
            if not isinstance(block, list) or not block or stmt not in block:
                continue
            key = id(block)
            first = self._device_exits.get(key)
            if first is None:
                first = next((i for i, s in enumerate(block) if self._device_exit(s)), len(block))
                self._device_exits[key] = first
            return block.index(stmt) > first
        return False

    def _device_exit(self, stmt: ast.stmt) -> bool:
        if not isinstance(stmt, ast.If) or stmt.orelse or not stmt.body or not isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue)):
            return False
        from portlint.python.guards import condition

        lazy = {"tpu", "trainium"} if "torch_xla" in self.tags else set()
        if "gaudi" in self.tags:
            lazy.add("gaudi")
        ops = stmt.test.values if isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.And) else [stmt.test]
        for op in ops:
            cond = condition(op)
            if cond is not None and cond.when_true and cond.when_true <= lazy:
                return True
        return False

    def _after_interval_exit(self, parent: ast.AST, stmt: ast.stmt) -> bool:
        """Does an interval exit (`if not should_log(step): return`) precede `stmt` in its
        block? Memoised per block: the position of the first such exit."""
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(parent, field_name, None)
            if not isinstance(block, list) or not block or stmt not in block:
                continue
            key = id(block)
            first = self._interval_exits.get(key)
            if first is None:
                first = next((i for i, s in enumerate(block) if _interval_exit(s)), len(block))
                self._interval_exits[key] = first
            return block.index(stmt) > first
        return False

    # -- traced values --
    def compute_traced(self, region: Region) -> None:
        torch = region.kind == "torch"
        inherited: set[str] = set()
        p = region.parent
        if p is not None:
            inherited = set(p.traced)
        assigned_static: set[str] = set()
        traced = set(region.traced) | inherited
        bindings = [n for n in self.region_nodes(region)
                    if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.comprehension, ast.withitem))]
        for _ in range(8):
            before = len(traced)
            for node in bindings:
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                    value = node.value
                    if value is None:
                        continue
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    is_t = self._expr_traced(value, traced, torch) or (isinstance(node, ast.AugAssign) and self._expr_traced(node.target, traced, torch))
                    for t in targets:
                        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) and len(t.elts) == len(value.elts):
                            for te, ve in zip(t.elts, value.elts):
                                if isinstance(te, ast.Name) and self._expr_traced(ve, traced, torch):
                                    traced.add(te.id)
                            continue
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                                if is_t:
                                    traced.add(n.id)
                                else:
                                    assigned_static.add(n.id)
                elif isinstance(node, (ast.For, ast.comprehension)) and node is not region.node:
                    it = node.iter
                    if isinstance(it, ast.Call) and dotted(it.func) == "enumerate" and it.args and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2:
                        if self._expr_traced(it.args[0], traced, torch):
                            traced |= {n.id for n in ast.walk(node.target.elts[1]) if isinstance(n, ast.Name)}
                    elif isinstance(it, ast.Call) and dotted(it.func) == "range":
                        pass
                    elif self._expr_traced(it, traced, torch):
                        traced |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    if self._expr_traced(node.context_expr, traced, torch):
                        traced |= {n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name)}
            if len(traced) == before:
                break
        traced = {n for n in traced if not _SHAPE_NAME.search(n)}
        if torch:
            # the name test is for parameters (`num_heads`, `is_training`, `model`); a local
            # assigned a tensor expression is a tensor whatever its name (`is_eos = out == eos`)
            params = {p.arg for p in params_of(region.node)} if isinstance(region.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else set()
            traced = {n for n in traced if not (n in params and _TORCH_STATIC_PARAM.search(n))}
        region.traced = traced - (region.static - set(region.traced))

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

    def returns_static(self, call: ast.Call, traced: set[str], torch: bool = False) -> bool:
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
        params = owner._call_traced_params(fn, call, lambda e: self._expr_traced(e, traced, torch))
        return owner.fn_returns_static(fn, torch, frozenset(params))

    def _foreign_def(self, ref: ast.AST):
        """(TracedMap of its file, def) of a function imported from another project file."""
        name = self.imports.canonical(ref)
        head = (dotted(ref) or "").partition(".")[0]
        if not name or head not in self.imports.alias:
            return self, None
        if name not in self._foreign_defs:
            self._foreign_defs[name] = (self, None)
            from portlint.python.project import file_model, foreign_traced_map

            model, rel = file_model(self.ctx)
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
        return self._expr_traced(expr, traced, torch)

    def _rebound_static(self, expr: ast.AST, region: Region) -> set[str]:
        """Traced names that the last assignment before `expr` on its path made a Python
        value: `n = n.item()`, `total = gather(t).sum().item()` and then `if n > 0:`. The
        region's value model has one answer per name; this gives the use its own (an
        assignment counts when its block holds the use, so it ran before it)."""
        names = {n.id for n in ast.walk(expr) if n.__class__ is ast.Name and n.id in region.traced}
        if not names:
            return set()
        index = region._assigns
        if index is None:
            index = {}
            for n in self.region_nodes(region):
                if n.__class__ is ast.Assign and len(n.targets) == 1 and n.targets[0].__class__ is ast.Name:
                    index.setdefault(n.targets[0].id, []).append(n)
            region._assigns = index
        line = getattr(expr, "lineno", 0)
        out: set[str] = set()
        for name in names:
            last = None
            for a in index.get(name, ()):
                if a.lineno >= line or (a.end_lineno or a.lineno) >= line:
                    continue
                block = self.parents.get(a)
                if block is not None and self._inside(expr, block) and (last is None or a.lineno > last.lineno):
                    last = a
            if last is not None and not self._expr_traced(last.value, region.traced, region.kind == "torch"):
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
            if e.attr in STATIC_ATTRS:
                return False
            if isinstance(e.value, ast.Name) and e.value.id in ("self", "cls", "config", "cfg", "args", "hparams", "opt"):
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
            if isinstance(e.func, (ast.Name, ast.Attribute)) and self.returns_static(e, traced, torch):
                return False  # a helper whose every return is static whatever it is given
            if isinstance(e.func, ast.Name) and e.func.id.startswith(("is_", "has_")) and not (name or "").startswith(ARRAY_NAMESPACES) \
                    and self.resolve(e.func, e) is None and self._foreign_def(e.func)[1] is None:
                return False  # a predicate from a library (`is_named_array(x)`): a Python bool
            if name in ("jax.lax.psum", "jax.lax.axis_size") and e.args and isinstance(e.args[0], ast.Constant):
                return False  # psum(1, axis) is the axis size, a Python int at trace time
            if isinstance(e.func, ast.Attribute):
                if e.func.attr in STATIC_METHODS or e.func.attr in HOST_MOVES:
                    return False
                if torch and (e.func.attr == "get" or e.func.attr.startswith("get_")):
                    return False  # dict lookups and object queries, not tensor ops
                if e.func.attr.startswith(("is_", "has_")) or e.func.attr in QUERY_METHODS:
                    return False  # queries of an object's structure (`bias.has_axis(...)`)
                if name and name.startswith(ARRAY_NAMESPACES):
                    return not _HOST_API.search(name) and not (torch and _host_factory(name, e, t))
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
                if not submodule and not _TORCH_PRODUCER.search(tail):
                    return False  # an unknown function of a tensor returns a Python value here
            return any(t(a) for a in e.args) or any(t(k.value) for k in e.keywords)
        if isinstance(e, ast.Compare):
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
                return False  # identity and membership are Python-level tests
            if any(isinstance(c, ast.Constant) and isinstance(c.value, (str, type(None))) for c in [e.left, *e.comparators]):
                return False  # compared with a string or None: not an array
            if any(_is_enum_constant(c) for c in [e.left, *e.comparators]):
                return False  # compared with an UPPER_CASE constant or enum member: a mode switch
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
                if t(g.iter):
                    inner |= {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            return self._expr_traced(e.elt, inner, torch)
        return False


def traced_map(ctx) -> TracedMap:
    """The file's traced regions (share with `ctx.fact(traced_map)`)."""
    return TracedMap(ctx)
