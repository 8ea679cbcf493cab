"""Traced regions of one file (a part of `portlint.analyses.python.traced`).

A region is a function (or a torch step loop) whose body a compiler traces: found from JAX
transformations and lax bodies, Flax/Equinox/Haiku module methods, torch step functions,
step loops, module `forward`s, per-step `__call__`/`update` methods and `torch.compile`, or
reached from an entry point in another file (the project model). `RegionFinder` is the
half of `TracedMap` that finds regions, nests closures in them and answers which region a
node is in (not after a logging-interval exit, not in an evaluation leg, not off-device);
the parameter rules here say which of a region's parameters start out static."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from functools import cached_property

from portlint.frontends.python import astindex
from portlint.analyses.python.traced_imports import (
    DIFF_TRANSFORMS, FLAX_BASES, HOST_CALLBACKS, JAX_TRANSFORMS, JIT_LIKE, LAX_BODIES, STEP_CLOSURE, TORCH_BASES,
    TORCH_COMPILE, TRITON_KERNEL_DECORATORS, dotted, is_triton_kernel,
)

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
    assumed: bool = False  # an entry point by its types alone (no caller seen): like reached_from

    @property
    def certainty(self) -> str:
        """"traced" for regions this file proves (an entry point, or a call with traced
        arguments), "unknown" for functions reached from another file, whose parameters are
        assumed traced without seeing the call's values, and for tensor functions no step is
        seen to call: report those at lower confidence."""
        return "unknown" if self.reached_from is not None or self.assumed else "traced"

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


# torch: parameter names that hold Python values or objects, not tensors
_TORCH_STATIC_PARAM = re.compile(
    r"^(self|cls|models?|modules?|optimizer|optim|opt|scheduler|lr_scheduler|args|config|cfg|hparams|tokenizer|processor|"
    r"device|accelerator|logger|writer|mesh|dataloader|loader|trainer|generation_config|stopping_criteria|streamer)$"
    r"|kwargs|len$|length$|size$|^num_|count$|_dim$|^dim$|steps?$|^is_|^use_|^do_|^return_|^output_|mode$|flag|_config$"
    # the loop positions a trainer passes to its hooks (Lightning's `training_step(batch, batch_idx)`)
    r"|^(batch|dataloader)_(idx|index|nb)$|^epoch$", re.I)
# annotations that declare an array: a parameter annotated so is a tensor whatever its name
# (`num_tokens_per_item: torch.Tensor`)
_TENSOR_ANNOT = {"Tensor", "LongTensor", "FloatTensor", "BoolTensor", "IntTensor", "Array", "ndarray", "ArrayLike"}


def _annotation_expr(ann: ast.AST | None) -> ast.AST | None:
    """An annotation as an expression: a string annotation (`"torch.Tensor"`) parsed, None when
    there is none or it does not parse."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            return ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    return ann


def annotated_tensor(ann: ast.AST | None) -> bool:
    """`torch.Tensor`, `Optional[torch.Tensor]`, `Tensor | None`, `jax.Array`, as a string too."""
    ann = _annotation_expr(ann)
    if ann is None:
        return False
    if isinstance(ann, ast.Subscript) and (dotted(ann.value) or "").split(".")[-1] == "Optional":
        return annotated_tensor(ann.slice)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        sides = (ann.left, ann.right)
        return any(annotated_tensor(x) for x in sides) and all(
            annotated_tensor(x) or (isinstance(x, ast.Constant) and x.value is None) for x in sides)
    return (dotted(ann) or "").split(".")[-1] in _TENSOR_ANNOT


def holds_tensors(ann: ast.AST | None) -> bool:
    """A tensor annotation or a container of them: `Tensor`, `List[Tensor]`,
    `List[Tuple[Tensor]]`, `Optional[Sequence[torch.Tensor]]`."""
    ann = _annotation_expr(ann)
    return ann is not None and any(isinstance(n, (ast.Name, ast.Attribute)) and annotated_tensor(n) for n in astindex.walk(ann))


def torch_static_param(param: ast.arg) -> bool:
    """torch: a parameter that holds a Python value or object by its name (`num_heads`,
    `model`, `is_training`), unless its annotation says it is a tensor."""
    return _TORCH_STATIC_PARAM.search(param.arg) is not None and not annotated_tensor(param.annotation)


@functools.lru_cache(maxsize=4096)
def read_as_tensor(fn: ast.AST) -> frozenset[str]:
    """Parameters of `fn` read with `.item()` / `.tolist()` in its body (`input_length.item()`):
    the function treats them as tensors, whatever their names say. A call that passes a
    traced value to one keeps it traced (`_conv_out_length(lengths, ...)` in a forward)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return frozenset()
    names = {p.arg for p in params_of(fn)}
    return frozenset(n.func.value.id for n in astindex.walk(fn) if n.__class__ is ast.Call and isinstance(n.func, ast.Attribute)
                     and n.func.attr in ("item", "tolist") and not n.args and isinstance(n.func.value, ast.Name) and n.func.value.id in names)


_STATIC_ANNOT = {"bool", "int", "str", "Callable", "callable", "type", "tuple", "Sequence", "dict"}
_CONTAINER_ANNOT = {"list", "List", "set", "Set", "frozenset", "FrozenSet", "Dict", "Mapping", "Iterable", "Collection"}
# classes of configuration objects (dataclass hyperparameters), by the name's ending
_CONFIG_ANNOT = ("Config", "Configuration", "Args", "Arguments", "HParams", "Hparams", "Hyperparameters", "Options", "Spec",
                 "Axis", "AxisSelector", "AxisSpec", "Shape", "PrecisionLike", "DTypeLike")


def _names_tensor_or_any(ann: ast.AST) -> bool:
    """Does any part of the annotation name a tensor/array type, `Any` or `object`?"""
    for n in astindex.walk(ann):
        if isinstance(n, (ast.Name, ast.Attribute)):
            last = (dotted(n) or "").rsplit(".", 1)[-1]
            if last in ("Any", "object") or annotated_tensor(n):
                return True
    return False


def _annotation_static(ann: ast.AST | None) -> bool:
    ann = _annotation_expr(ann)
    if ann is None:
        return False
    if isinstance(ann, ast.Subscript):  # Optional[bool], Tuple[int, ...]
        base = dotted(ann.value) or ""
        if base.split(".")[-1] in ("Optional",):
            return _annotation_static(ann.slice)
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if any(annotated_tensor(item) for item in items):
            return False  # a container of tensors: Sequence[torch.Tensor], tuple[Tensor, Tensor]
        if base.split(".")[-1] == "Union":  # Optional[Union[int, List[int]]]: every member a Python value
            return all(_annotation_static(i) or (isinstance(i, ast.Constant) and i.value is None) for i in items)
        if base.split(".")[-1] in _STATIC_ANNOT | {"Tuple", "Sequence", "Callable", "Literal"}:
            return True
        # a container whose items are all Python values (`adapter_names: list[str]`,
        # `dict[str, int]`, `tuple[int, ...]`) is a Python value: no tensor hides in it
        # (`list[dict[str, Tensor | Any]]` holds tensors: nothing in it may name a tensor or Any)
        return base.split(".")[-1] in _CONTAINER_ANNOT and not _names_tensor_or_any(ann) and all(
            _annotation_static(item) or (isinstance(item, ast.Constant) and item.value is Ellipsis) for item in items)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # bool | None
        return all(_annotation_static(s) or (isinstance(s, ast.Constant) and s.value is None) for s in (ann.left, ann.right))
    name = (dotted(ann) or "").split(".")[-1]
    return name in _STATIC_ANNOT or name.endswith(_CONFIG_ANNOT)


def _annotated_float(ann: ast.AST | None) -> bool:
    """`lam: float`, `Optional[float]`, `float | None` (torch helpers take Python floats;
    under jax.jit a float may be traced)."""
    if isinstance(ann, ast.Subscript) and (dotted(ann.value) or "").split(".")[-1] == "Optional":
        return _annotated_float(ann.slice)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        sides = (ann.left, ann.right)
        return any(_annotated_float(x) for x in sides) and all(_annotated_float(x) or (isinstance(x, ast.Constant) and x.value is None) for x in sides)
    return isinstance(ann, ast.Name) and ann.id == "float"


def _float_params(fn) -> set[str]:
    """torch: parameters annotated `float` (`mask_prob: float`), Python numbers in eager
    code. For functions reached from another file, whose callers' values are not seen."""
    return {p.arg for p in params_of(fn) if _annotated_float(p.annotation)}


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
    `_compute_loss`, `generate` / `_generate`, `*_step`, a forward written as a function or
    a variant of one (`gaudi_llama_forward`, `forward_features`), and the hook a decode loop
    calls for every token (`prepare_inputs_for_generation`)."""
    bare = lname.strip("_")
    return (bare in _STEP_WORDS or bare.endswith(("_step", "_compute_loss", "_forward")) or bare.startswith("forward_")
            or bare == "prepare_inputs_for_generation")


# a method of a generation loop, by its name: `stream_generate`, `_generate_and_score_completions`,
# `beam_search` (module-level functions such as `generate_widths(...)` are not)
_GENERATION_METHOD = re.compile(r"(^|_)generate(_|$)|(^|_)(beam|greedy|contrastive|assisted|group_beam)_search$")


def takes_tensor(fn) -> bool:
    """Does a parameter of `fn` (other than self) say by its annotation that it may hold a
    tensor: `torch.Tensor`, `Optional[torch.LongTensor]`, `Union[torch.LongTensor, int]`?"""
    return any(_may_be_tensor(p.annotation) for p in params_of(fn) if p.arg not in ("self", "cls"))


def _may_be_tensor(ann: ast.AST | None) -> bool:
    ann = _annotation_expr(ann)
    if ann is None:
        return False
    if isinstance(ann, ast.Subscript) and (dotted(ann.value) or "").split(".")[-1] in ("Optional", "Union"):
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return any(_may_be_tensor(item) for item in items)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _may_be_tensor(ann.left) or _may_be_tensor(ann.right)
    return annotated_tensor(ann)


def _tensor_to_tensor(fn) -> bool:
    """A function whose annotations say it maps tensors to a tensor: a tensor-annotated
    parameter and a tensor (or optional tensor) return annotation."""
    return annotated_tensor(fn.returns) and any(annotated_tensor(p.annotation) for p in params_of(fn))


def per_step_attribute(name: str) -> bool:
    """A method or function name that, when a project function is patched over it in a
    library (`lib.models.x.Decoder.forward = fast_forward`), runs every step: a forward or
    `__call__`, a step or loss function, a generation method (`_generate_speech`)."""
    lname = name.lower()
    return name in ("forward", "__call__") or _step_name(lname) or _GENERATION_METHOD.search(lname.strip("_")) is not None


# names of setup code: run once (per model, per generate call) before any step, not per step
_SETUP_NAME = re.compile(r"(^|_)(init|prepare|validate|check|load|setup|configure|register|expand)(_|$)")


def setup_name(name: str) -> bool:
    """`__init__`, `_prepare_attention_mask_for_generation`, `_validate_model_kwargs`: code
    that runs once before the steps it sets up (the per-token hook
    `prepare_inputs_for_generation` is a step name, `per_step_attribute`, and wins)."""
    return _SETUP_NAME.search(name.lower()) is not None and not per_step_attribute(name)


def _per_step_def(fn) -> bool:
    """A function that runs every training or generation step, by its name (`_step_name`),
    or a generation method: a def named like one whose first parameter is `self`."""
    lname = fn.name.lower()
    if _step_name(lname):
        return True
    params = [*fn.args.posonlyargs, *fn.args.args]
    return bool(params) and params[0].arg == "self" and _GENERATION_METHOD.search(lname.strip("_")) is not None


# base-class endings of objects whose `__call__` / `update` runs on tensors every step:
# logits processors and warpers (every generated token), metrics (every iteration)
# and optimizers (`step` of a `torch.optim.Optimizer` subclass or of a wrapper named so runs
# once per training step, over the parameters and their gradients)
_PER_STEP_BASES = {"LogitsProcessor": ("__call__",), "LogitsWarper": ("__call__",), "Metric": ("update", "_update"),
                   "Optimizer": ("step",), "Optim": ("step",)}


# a graph compiled before the call: TorchScript modules (what `torch.jit.load`,
# `torch.jit.trace`, `torch_neuronx.trace` and neuronx-distributed's ModelBuilder hand back)
_COMPILED_GRAPH_TYPES = frozenset(("torch.jit.ScriptModule", "torch.jit.RecursiveScriptModule", "torch.jit.ScriptFunction"))
_COMPILED_GRAPH_LOADS = frozenset(("torch.jit.load", "torch_neuronx.trace", "torch_neuronx.load"))


def drives_compiled_graph(cls: ast.ClassDef, canon) -> bool:
    """A class built around a graph compiled ahead of time: its `__init__` takes a parameter
    annotated `torch.jit.ScriptModule` or assigns `self.x = torch.jit.load(...)`. Its methods
    are the host-side driver of that graph (optimum-neuron's NxD model classes and their
    wrappers pad and reorder CPU tensors, then call the compiled Neuron graph with them):
    nothing in them is traced by a lazy-tensor backend, so they are no step code, and calls
    from them do not make traced regions. `canon` gives a node's canonical dotted name."""
    for stmt in cls.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.name != "__init__":
            continue
        if any(p.annotation is not None and (canon(p.annotation) or "") in _COMPILED_GRAPH_TYPES for p in params_of(stmt)):
            return True
        for n in ast.walk(stmt):
            if (n.__class__ is ast.Assign and n.value.__class__ is ast.Call and (canon(n.value.func) or "") in _COMPILED_GRAPH_LOADS
                    and any(t.__class__ is ast.Attribute and t.value.__class__ is ast.Name and t.value.id == "self" for t in n.targets)):
                return True
    return False


def _module_like(cls: ast.ClassDef) -> bool:
    """A class with a base and a `forward(self, x, ...)` method: a torch module whose base is
    defined elsewhere (FairseqEncoder, a model mixin); in a torch file nothing else has one."""
    if not cls.bases:
        return False
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
            return len(params_of(stmt)) >= 2
    return False


def _per_step_methods(cls: ast.ClassDef, ancestors: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The methods of `cls` that run on tensors every step, by the names of the class, of its
    bases (and of their bases, `ancestors`, when known): `__call__` of a logits processor,
    `update` of a metric, `step` of a diffusion scheduler."""
    out: list[str] = []
    names = [(dotted(base) or "").rsplit(".", 1)[-1] for base in cls.bases] + list(ancestors)
    for name in [cls.name, *names]:  # a warper named so needs no base (`class FusedLogitsWarper:`)
        for ending, methods in _PER_STEP_BASES.items():
            if name.endswith(ending):
                out.extend(methods)
    if _denoising_step(cls, names):
        out.append("step")
    return tuple(dict.fromkeys(out))


def _denoising_step(cls: ast.ClassDef, base_names: list[str]) -> bool:
    """A diffusion scheduler's `step(self, model_output: Tensor, timestep, sample, ...)`: a
    class named (or based on one named) `...Scheduler` whose `step` takes a tensor-annotated
    parameter. A sampling loop calls it once per denoising step, on device tensors. A
    learning-rate scheduler's `step(epoch, val_loss)` takes Python numbers and is not one."""
    if not any(name.endswith("Scheduler") for name in [cls.name, *base_names]):
        return False
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "step":
            return any(annotated_tensor(p.annotation) for p in params_of(stmt)[1:])
    return False




# nn.Module methods that register a function to run in every forward (or backward) pass
_MODULE_HOOKS = {"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                 "register_full_backward_pre_hook", "register_backward_hook"}


_ONE_OFF_WORDS = ("eval", "valid", "test", "predict", "calib", "preprocess", "profile")


def _one_off_pass(fn) -> bool:
    """A function that runs the model once for a purpose other than training: named for an
    evaluation, calibration or profiling pass, or putting the model in eval mode itself
    (`hooked_model.eval()` before registering the statistics hooks)."""
    if any(w in fn.name.lower() for w in _ONE_OFF_WORDS):
        return True
    return any(n.__class__ is ast.Call and isinstance(n.func, ast.Attribute) and n.func.attr == "eval" and not n.args
               and not n.keywords for n in astindex.walk(fn))


_INTERVAL_WORDS = re.compile(r"log|print|verbose|debug|report", re.I)


def _interval_exit(stmt: ast.stmt) -> bool:
    """`if not should_log(step): return` / `if step % N != 0: continue`: the statements
    after it in the block run every N steps (a logging interval), not every step."""
    if not isinstance(stmt, ast.If) or stmt.orelse or not stmt.body or not isinstance(stmt.body[-1], (ast.Return, ast.Continue)):
        return False
    test = stmt.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        return any(isinstance(n, (ast.Name, ast.Attribute)) and _INTERVAL_WORDS.search(dotted(n) or "") for n in astindex.walk(inner))
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


def _error_only(parent: ast.AST, child: ast.AST) -> bool:
    """Does `child` of `parent` run only on the way to an exception: a `raise` statement (its
    message too), an `assert`'s message, or a leg of an `if` that ends by raising? Such code
    does not run in a normal step; the `if` test, which runs every time, is not error-only."""
    if parent.__class__ is ast.Raise:
        return True
    if parent.__class__ is ast.Assert:
        return child is parent.msg
    if parent.__class__ is ast.If:
        for leg in (parent.body, parent.orelse):
            if leg and child in leg:
                return leg[-1].__class__ is ast.Raise
    return False


class RegionFinder:
    """Finding a file's regions (mixed into `TracedMap`, which holds the state)."""

    # -- indexing --
    def _index(self) -> None:
        self.nodes: list[ast.AST] = astindex.nodes(self.module)  # one walk, shared with the engine
        # the module's classes now; each scope's local defs when `resolve` first asks
        for stmt in self._own_statements(self.module):
            if isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt
        # Triton kernel bodies are left to the PTL7xx rules: no region starts or reaches into one
        wrappers = self._triton_wrappers()
        self.kernel_fns: set[ast.AST] = {n for n in self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef)
                                         if n.decorator_list and (is_triton_kernel(self.imports, n)
                                                                  or any(isinstance(d, ast.Name) and d.id in wrappers for d in n.decorator_list))}

    def _triton_wrappers(self) -> frozenset[str]:
        """Module functions that hand their argument to `triton.jit` (`def _jit(fn): return
        triton.jit(fn) if is_triton_available() else fn`, trl's kernels): a def they decorate
        is a Triton kernel where Triton is installed, compiled by Triton, not traced by torch."""
        found = set()
        for stmt in self.module.body:
            if not isinstance(stmt, ast.FunctionDef) or len(stmt.args.args) != 1:
                continue
            param = stmt.args.args[0].arg
            for n in astindex.walk(stmt):
                if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == param \
                        and self.imports.canonical(n.func) in TRITON_KERNEL_DECORATORS:
                    found.add(stmt.name)
                    break
        return frozenset(found)

    @cached_property
    def parents(self) -> dict[ast.AST, ast.AST]:
        """child -> parent in the module (the shared index's table), built when first asked
        for: a file without regions may never need it."""
        return astindex.parents(self.module)

    def nodes_of(self, *classes: type) -> list[ast.AST]:
        """The module's nodes of these classes (exactly), in `self.nodes` order (shared index)."""
        return astindex.of_class(self.module, *classes)

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

    def _unwrap_partial(self, node: ast.AST, at: ast.AST | None = None):
        """`partial(f, a, k=v)` -> (f, number of bound positionals, bound keyword names).

        Nested transformations are looked through: `jax.jit(jax.grad(f))` traces `f`; with
        `at` (the call that uses it), so is a local name last bound to one before it
        (`kernel = functools.partial(body, block=8)`, then `pl.pallas_call(kernel, ...)`)."""
        if at is not None and isinstance(node, ast.Name):
            bound = self._local_binding(node.id, at)
            if bound is not None and isinstance(bound, ast.Call) and self.imports.canonical(bound.func) in ("functools.partial", "partial"):
                return self._unwrap_partial(bound)
        if isinstance(node, ast.Call) and self.imports.canonical(node.func) in ("functools.partial", "partial"):
            if node.args:
                inner, n, kws = self._unwrap_partial(node.args[0])
                return inner, n + len(node.args) - 1, kws | {k.arg for k in node.keywords if k.arg}
        if isinstance(node, ast.Call) and node.args and self.imports.canonical(node.func) in (DIFF_TRANSFORMS | set(JAX_TRANSFORMS)):
            return self._unwrap_partial(node.args[0])
        return node, 0, set()

    def _local_binding(self, name: str, at: ast.AST) -> ast.AST | None:
        """The value of the last `name = ...` before `at` in `at`'s function (None when the
        name is bound otherwise there, or not at all)."""
        fn = self.enclosing_function(at)
        if fn is None:
            return None
        line = getattr(at, "lineno", 0)
        last = None
        for n in astindex.walk(fn):
            if n.__class__ is ast.Assign and n.lineno < line and len(n.targets) == 1 and n.targets[0].__class__ is ast.Name \
                    and n.targets[0].id == name and (last is None or n.lineno > last.lineno):
                last = n
        return last.value if last is not None else None

    # -- adding regions --
    def add(self, fn, kind: str, why: str, static: set[str] | None = None, traced_params: set[str] | None = None,
            bound: tuple[int, set[str]] = (0, set()), module_method: bool = False, jit_direct: bool = False) -> Region | None:
        """Make `fn` a region. Parameters are traced unless static: static_argnums/names,
        partial-bound, a bool/str default, and (except for functions jitted directly,
        where a non-static `flag: bool` is a real bug) an int/bool/str annotation."""
        if fn is None or fn in self.host_fns or fn in self.kernel_fns:
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
                if kind == "torch":  # in eager torch a `float` annotation is a Python number too
                    static |= {p.arg for p in params if torch_static_param(p) or _annotated_float(p.annotation)}
                traced_params = {n for n in names if n not in static and n not in ("self", "cls")}
            else:
                traced_params = {n for n in traced_params if not _annotation_static(next(p.annotation for p in params if p.arg == n))}
                if kind == "torch":  # in eager torch a `float` annotation is a Python number too
                    traced_params = {p.arg for p in params if p.arg in traced_params and not (torch_static_param(p) and p.arg not in read_as_tensor(fn))
                                     and not _annotated_float(p.annotation)}
                    if not traced_params and region is None and why.startswith("called from"):
                        return None  # every argument the call passes traced is a Python value here
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
        for node in self.nodes_of(ast.Call):
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
        for node in self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Call):
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
                    ref, n_bound, kw_bound = self._unwrap_partial(node.args[0], node)
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
    def file_model(self):
        """(project model, this file's path in it) or (None, None): `project.file_model` of
        the file, asked once per map (the class, reach and definition lookups all start there)."""
        found = self.__dict__.get("_file_model")
        if found is None:
            from portlint.index.project import file_model

            found = self.__dict__["_file_model"] = file_model(self.ctx)
        return found

    def _add_reached(self) -> None:
        model, rel = self.file_model()
        if model is None:
            return
        for qual, reach in sorted(model.reached_in(rel).items()):
            fn = self._def_by_qualname(qual)
            if fn is None or fn in self.regions or fn in self.host_fns:
                continue
            if reach.kind == "torch" and not self.torch_target:
                continue
            static = set(reach.static) | (_float_params(fn) if reach.kind == "torch" else set())
            region = self.add(fn, reach.kind, reach.describe(), static=static, module_method="." in qual)
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
        """A step call (`.backward()`, a launcher's `fabric.backward(loss)` /
        `accelerator.backward(loss)`, or a step boundary) in the loop's body, outside nested
        defs, and no step loop nested in it. Found by lines among the file's step calls and
        loops (listed once), not by walking every loop's body."""
        if self._step_calls is None:
            self._step_calls, self._loops = [], []
            for node in self.nodes_of(ast.Call, ast.For, ast.While, ast.AsyncFor):
                if node.__class__ is ast.Call and isinstance(node.func, ast.Attribute) and (
                        (node.func.attr == "backward" and len(node.args) <= 1) or self._is_boundary_call(node)):
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

    def _step_loop_why(self, loop) -> str:
        """"training-step loop" when the loop's own body calls `.backward()`; otherwise the
        step boundary it calls names it (a generation or inference loop that calls
        `xm.mark_step()` each token is not training)."""
        first, last = loop.body[0].lineno, loop.body[-1].end_lineno or loop.lineno
        home = self._def_of(loop)
        calls = [c for c in self._step_calls or () if first <= c.lineno <= last and self._def_of(c) is home and self._inside(c, loop)]
        if any(c.func.attr == "backward" for c in calls if isinstance(c.func, ast.Attribute)):
            return "training-step loop"
        names = sorted({(dotted(c.func) or "").rsplit(".", 1)[-1] for c in calls} - {""})
        return f"loop that calls {names[0]}() each iteration" if names else "step loop"

    def _construction_only(self, fn) -> bool:
        """A method named like a step (`_generate_sentence_pair`) that this file calls only from
        its class's `__init__` (`self._generate_sentence_pair(doc, doc_id, ...)` while a
        dataset is built): it runs once per object, before any step, not every step."""
        cls = self.parents.get(fn)
        if not isinstance(cls, ast.ClassDef):
            return False
        calls = [c for c in self.nodes_of(ast.Call) if isinstance(c.func, ast.Attribute) and c.func.attr == fn.name]
        if not calls:
            return False
        for c in calls:
            home = self.enclosing_function(c)
            if getattr(home, "name", None) != "__init__" or self.parents.get(home) is not cls:
                return False
        return True

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
        """Every node in the region's body outside nested defs (computed once per function
        or loop: the summaries of `fn_returns_static` make a region of a function again)."""
        if region._nodes is None:
            by_node = self.__dict__.setdefault("_region_nodes_memo", {})
            found = by_node.get(region.node)
            if found is None:
                found = by_node[region.node] = list(self._walk_no_defs(region.body_nodes))
            region._nodes = found
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
        calls = [n for n in self.nodes_of(ast.Call) if _tail(n.func) in ("add_step_closure", "compile")]
        for node in calls:
            if canon(node.func) in STEP_CLOSURE and node.args:
                fn = self.resolve(node.args[0], node)
                if fn is not None:
                    self.host_fns.add(fn)
        compiled = {node for node in calls if node.args and canon(node.func) in TORCH_COMPILE}
        for cls in self.nodes_of(ast.ClassDef):
            if drives_compiled_graph(cls, canon):
                self.host_fns.update(stmt for stmt in cls.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)))
        for node in self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Call, ast.For, ast.While):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lname = node.name.lower()
                if any(canon(d) in TORCH_COMPILE or (isinstance(d, ast.Call) and canon(d.func) in TORCH_COMPILE) for d in node.decorator_list):
                    self.add(node, "torch", "compiled with torch.compile")
                elif any(s in lname for s in self._NOT_STEP):
                    continue
                elif _per_step_def(node) and not self._construction_only(node):
                    self.add(node, "torch", f"step function {node.name}")
            elif isinstance(node, ast.ClassDef):
                if self._class_is(node, TORCH_BASES) or self._torchish_class(node) or _module_like(node):
                    fwd = self._method(node, "forward")
                    if fwd is not None and fwd in node.body:
                        self.add(fwd, "torch", f"forward of {node.name}", module_method=True)
                # processors and metrics need no forward: their per-step method is the entry
                for name in _per_step_methods(node, self._ancestor_names(node)):
                    fn = self._method(node, name)
                    if fn is not None and fn in node.body:
                        self.add(fn, "torch", f"{name} of {node.name}", module_method=True)
            elif node in compiled:
                self.add(self.resolve(node.args[0], node), "torch", "passed to torch.compile")
            elif isinstance(node, (ast.For, ast.While)) and self._loop_is_step(node):
                fn = self.enclosing_function(node)
                if fn is not None and any(s in getattr(fn, "name", "").lower() for s in self._NOT_STEP):
                    continue
                region = self.add(node, "torch", self._step_loop_why(node))
                if isinstance(node, ast.For):
                    region.traced |= self._loop_target_traced(node)
        self._add_module_hooks()
        self._add_tensor_functions()

    def _add_tensor_functions(self) -> None:
        """Module-level functions typed tensor to tensor (`def lengths_to_padding_mask(lengths:
        Tensor) -> Tensor`): the package's tensor helpers, which its models call in their
        forwards (from this file, another, or the package's users). Setup-named ones
        (`init_*`, `prepare_*`) and evaluation ones are left out."""
        for stmt in self.module.body:
            if (isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt not in self.regions
                    and _tensor_to_tensor(stmt) and not setup_name(stmt.name)
                    and not any(w in stmt.name.lower() for w in self._NOT_STEP)):
                region = self.add(stmt, "torch", f"tensor function {stmt.name}")
                if region is not None:
                    region.assumed = True

    def _add_module_hooks(self) -> None:
        """`module.register_forward_hook(hook)`: the hook runs in every forward of the module,
        on its input and output tensors (`hook(module, inputs, output)`)."""
        for node in self.nodes_of(ast.Call):  # (the module's calls, in `self.nodes` order)
            if (isinstance(node.func, ast.Attribute) and node.func.attr in _MODULE_HOOKS
                    and node.args):
                home = self.enclosing_function(node)
                if home is not None and not isinstance(home, ast.Lambda) and _one_off_pass(home):
                    continue  # registered for a calibration or evaluation pass, not the training steps
                fn = self.resolve(node.args[0], node)
                if fn is not None and fn not in self.regions:
                    self.add(fn, "torch", f"hook passed to {node.func.attr}")

    def _ancestor_names(self, cls: ast.ClassDef) -> tuple[str, ...]:
        """Last names of the bases of `cls`'s bases, through this file's classes and, for a
        base defined in another project file, through the project model's class summaries
        (`MeanError(_BaseRegression)` with `_BaseRegression(Metric)` in `_base.py`)."""
        out: list[str] = []
        model, rel = self.file_model()
        stack = [(base, 0) for base in cls.bases]
        while stack:
            base, depth = stack.pop()
            local = dotted(base) or ""
            if local in self.classes and depth < 5:
                for b in self.classes[local].bases:
                    out.append((dotted(b) or "").rsplit(".", 1)[-1])
                    stack.append((b, depth + 1))
            elif model is not None and rel is not None:
                qualified = self.imports.canonical(base)
                if qualified:
                    out.extend(name.rsplit(".", 1)[-1] for name in model.class_ancestors(qualified, rel))
        return tuple(dict.fromkeys(out))

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
        return {n.id for n in astindex.walk(target) if isinstance(n, ast.Name)}

    # -- closures and the region of a node --
    def _nest(self) -> None:
        """Nested defs and lambdas inside a region are traced too (closures see tracers)."""
        for fn_node in self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            if fn_node in self.host_fns:
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
        """The innermost region containing `node` (a function region or a step loop).

        Walking up from `node`, the first of these decides: a host or kernel function (no
        region), a statement after a logging-interval or lazy-device exit in its block, a
        region, an evaluation leg, an error-only path. What the walk finds above a node is
        the same for every node below it, so it is memoised per node (`_region_above`);
        the memo holds while the file's regions, host and kernel functions are unchanged.
        A torch region is then left out where a device guard keeps the innermost located
        node (`Load` contexts have no position) off every lazy platform."""
        if not self.regions:
            return None  # the walk below can only end at a region
        if not include_self:
            node = self.parents.get(node)
            if node is None:
                return None
        if node in self.host_fns or node in self.kernel_fns:
            return None
        r = self.regions.get(node)
        if r is None:
            r = self._region_above(node)
            if r is None:
                return None
        if r.kind == "torch":
            located = node
            while located is not None and not hasattr(located, "lineno"):
                located = self.parents.get(located)
            if located is not None and located is not r.node and self._off_device(located):
                return None
        return r

    def _region_above(self, child: ast.AST) -> Region | None:
        """What the walk of `region_of` finds from `child`'s parent upwards (see there)."""
        memo = self.__dict__.get("_above_memo")
        stamp = (len(self.regions), len(self.host_fns), len(self.kernel_fns))
        if memo is None or memo[0] != stamp:
            memo = self.__dict__["_above_memo"] = (stamp, {})
        known = memo[1]
        chain = []
        found = None
        while True:
            if child in known:
                found = known[child]
                break
            chain.append(child)
            p = self.parents.get(child)
            if p is None or p in self.host_fns or p in self.kernel_fns:
                break
            if isinstance(child, ast.stmt) and (self._after_interval_exit(p, child) or self._after_device_exit(p, child)):
                break  # runs every N steps, after the logging interval's early exit; or after
                # `if is_tensor(t) and t.device.type == "xla": return t`
            found = self.regions.get(p)
            if found is not None:
                break
            if p.__class__ is ast.If and _eval_leg(p, child):
                break
            if _error_only(p, child):
                break  # error path: runs once, on the way to an exception
            child = p
        for c in chain:
            known[c] = found
        return found

    def _off_device(self, node: ast.AST) -> bool:
        """torch: a runtime guard (`portlint.analyses.python.guards`) keeps `node` from every
        lazy-tensor platform of the file (after `if x.device.type == "xla": return`, in
        the `torch.cuda.is_available()` leg): the code is not traced there."""
        lazy = self._lazy()
        if not lazy:
            return False
        memo = self.__dict__.setdefault("_off_device_memo", {})
        if node not in memo:
            if self._guards is None:
                from portlint.analyses.python.guards import guard_map

                self._guards = self.ctx.fact(guard_map)
            memo[node] = not self._guards.reaching(node, lazy)
        return memo[node]

    def _lazy(self) -> frozenset[str]:
        """The file's lazy-tensor platforms (torch_xla: TPU and Trainium; Gaudi)."""
        if self._lazy_platforms is None:
            lazy: set[str] = set()
            if "torch_xla" in self.tags:
                lazy |= {"tpu", "trainium"}
            if "gaudi" in self.tags:
                lazy.add("gaudi")
            self._lazy_platforms = frozenset(lazy)
        return self._lazy_platforms

    def _after_device_exit(self, parent: ast.AST, stmt: ast.stmt) -> bool:
        """Does an early exit for lazy-device values precede `stmt` in its block: `if
        torch.is_tensor(t) and t.device.type == "xla": return t.detach()`? One operand of the
        `and` is a device test true only on the file's lazy platforms, so what follows sees
        no lazy tensor (the whole test is no platform guard: it also fails for CPU tensors)."""
        if "torch_xla" not in self.tags and "gaudi" not in self.tags:
            return False
        return _after_first(parent, stmt, self._device_exits, self._device_exit)

    def _device_exit(self, stmt: ast.stmt) -> bool:
        from portlint.analyses.python.guards import exits_for_values_on

        return exits_for_values_on(stmt, self._lazy())

    def _after_interval_exit(self, parent: ast.AST, stmt: ast.stmt) -> bool:
        """Does an interval exit (`if not should_log(step): return`) precede `stmt` in its
        block? Memoised per block: the position of the first such exit."""
        return _after_first(parent, stmt, self._interval_exits, _interval_exit)


def _after_first(parent: ast.AST, stmt: ast.stmt, memo: dict[int, int], is_exit) -> bool:
    """Is `stmt` after the first statement of its block (a body, else or finally list of
    `parent`) for which `is_exit` holds? The first position is memoised per block in `memo`."""
    for field_name in ("body", "orelse", "finalbody"):
        block = getattr(parent, field_name, None)
        if not isinstance(block, list) or not block or stmt not in block:
            continue
        first = memo.get(id(block))
        if first is None:
            first = next((i for i, s in enumerate(block) if is_exit(s)), len(block))
            memo[id(block)] = first
        return block.index(stmt) > first
    return False
