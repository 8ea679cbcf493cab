"""The project model of a Python tree: modules, imports, definitions, a call graph across
files, the traced entry points and what they reach, and each file's target scope.

Built once per scan, before the detectors (`ProjectModel.for_scan`, kept in the
ScanSession), over the whole project the scanned files belong to: the config file's folder
or the git root above them, else the folder scanned. So a one-file pre-commit call sees the
same model as a scan of the tree. Scanned code is read, never imported or executed;
dependency files (pyproject.toml, setup.cfg, setup.py, requirements*.txt) are read as text.

Cost. Every file is read and hashed (the model is cached by content); only files that can
hold a traced entry point (a cheap byte test) and the files their calls lead to are parsed,
each once, and their summaries are kept by sha256 (in memory, and under the cache dir when
there is one, all of a root's in one entry). The byte facts and the whole model are kept by content too, in this
process's memory (`_MEMORY`: the language server and any caller scanning again reuse the
model of unchanged files) and under the cache dir. A warm one-file call reads one JSON entry.

Scope, two modes:
- inferred (no `--target` / `targets` given): a package (the outermost folder of an
  `__init__.py` chain, or a loose script and the loose scripts it imports) that imports
  torch_xla / torch_neuronx / habana_frameworks anywhere, dispatches to them at run time
  (`is_torch_xla_available()`, `device="hpu"`, `xm.xla_device()`), or lists them (or
  optimum-neuron, optimum-habana, neuronx-distributed) as dependencies of the distribution
  it sits in, puts its torch files in scope for those targets, except files that a path
  word marks as another device's backend (`cuda_accelerator.py`, `ops/triton_ops/`,
  `op_builder/npu/`). A GPU-only package stays out.
- declared (`--target` / `targets` given): the code will run there, so every torch file is
  in scope for the named XLA/HPU targets whatever it imports.

Reachability: entry points (jax.jit & co., lax bodies, flax `__call__` / `nn.compact`,
`torch.compile` with an XLA backend, torch step loops; in a file in an XLA/HPU scope also
torch per-step code: module `forward`s, step functions such as `compute_loss` / `generate`,
logits processors' `__call__`, metrics' `update`, and package functions patched over a
library's per-step code: `lib.models.x.Model.forward = fast_forward`) and every function
reachable from them through direct calls, `module.func`, `self.method` (and its overrides
in the project's subclasses), `super().method`, submodules assigned in `__init__`/`setup`
and called as `self.block(x)` (their `forward`/`__call__`), and `Block(...)(x)`. A function reached from an entry point in another file is traced code
there too, and its findings say so ("reached from `train_step` in trainer.py") when every link
of the chain is a resolved call. A call matched to methods by name alone (`model.get_logits(...)`
on an object of unknown class) is followed after every resolved chain, and a function reached
only through one says that instead ("a method named `get_logits`, which `Loss.forward` in
loss.py calls by that name on an object of unknown class")."""

from __future__ import annotations

import ast
import hashlib
from bisect import bisect_left, bisect_right
import json
import os
import re
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from pathlib import Path

from portlint.core.files import read_limited, resolves_inside
from portlint.frontends.python.names import ImportTable, LineStartPattern, dotted_name

SUMMARY_VERSION = 8
# bytes that can hold an entry point; a file without any is never parsed for the model
_ENTRY_WORDS = (b"jax", b"flax", b"equinox", b"haiku", b"mark_step", b"optimizer_step", b"torch_xla", b"torch.compile", b".backward(", b"htcore", b"pallas")
# bytes of torch code that runs every step (a forward, a loss, generate, a metric's update):
# entry points only in a file that is in an XLA/HPU scope, so parsed only there
_TORCH_STEP_WORDS = (b"def forward(", b"loss", b"generate", b"_step(", b"Metric", b"LogitsProcessor", b"LogitsWarper")
# run-time dispatch to a non-CUDA device, from the file's bytes (tag -> pattern)
_DISPATCH = {
    "torch_xla": ((b"xla", b"neuron"), re.compile(rb"is_torch_xla_available\(|is_torch_neuronx_available\(|\bxm\.xla_device\(|torch_xla\.device\(|[\"']xla[\"']"
                                             rb"|backend\s*=\s*[\"'](?:openxla|openxla_eval|aot_torchxla_trace_once|torchxla_trace_once|neuronx)[\"']")),
    "gaudi": ((b"hpu", b"habana"), re.compile(rb"is_torch_hpu_available\(|is_habana_available\(|[\"']hpu[\"']|backend\s*=\s*[\"'](?:hpu_backend|aot_hpu_training_backend)[\"']")),
}
# distribution names in dependency files that put a package in scope (name -> tag)
_DEPENDENCIES = {
    "torch-xla": "torch_xla", "torch_xla": "torch_xla", "torch-neuronx": "torch_xla", "torch_neuronx": "torch_xla",
    "neuronx-distributed": "torch_xla", "neuronx_distributed": "torch_xla", "optimum-neuron": "torch_xla",
    "optimum_neuron": "torch_xla", "libneuronxla": "torch_xla",
    "optimum-habana": "gaudi", "optimum_habana": "gaudi", "habana-torch-plugin": "gaudi",
    "habana_frameworks": "gaudi", "habana-frameworks": "gaudi",
    "libtpu": "tpu", "libtpu-nightly": "tpu",
}
_DEP_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
_DEP_NAME = re.compile(r"(?<![\w.-])([A-Za-z][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")
SCOPE_TAGS = ("torch_xla", "gaudi")
# the declared targets that put torch code in scope, and the tag each one stands for
DECLARED_TAGS = {"tpu": "torch_xla", "trainium": "torch_xla", "gaudi": "gaudi"}
# the targets whose rules use the model (scope and reach); ROCm's do not
MODEL_TARGETS = {"tpu", "trainium", "gaudi"}
# torch.compile backends that lower to XLA or HPU graphs
XLA_BACKENDS = {"openxla", "openxla_eval", "aot_torchxla_trace_once", "torchxla_trace_once", "neuronx", "hpu_backend", "aot_hpu_training_backend"}


# ---- per-file summaries ------------------------------------------------------------------

def _jax_tables():
    from portlint.analyses.python import traced

    return traced


# torch.nn.Module's own API and object plumbing: a call of one of these on a model says
# nothing about which project method runs in the step
_MODULE_API = {"forward", "train", "eval", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "state_dict",
               "load_state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "modules",
               "named_modules", "children", "named_children", "apply", "zero_grad", "requires_grad_", "register_buffer",
               "register_parameter", "extra_repr", "reset_parameters", "get", "items", "keys", "values", "update",
               "append", "extend", "pop", "copy", "format", "join", "split"}


def _method_by_name(receiver: str, attr: str) -> bool:
    """`model.get_logits(...)` on a local or parameter (not self, not an import): a method
    the project's model classes may define, resolved by its name (`_Builder.methods_named`)."""
    return receiver not in ("self", "cls", "super") and not attr.startswith("__") and attr not in _MODULE_API


# a set, not a tuple: a class not in it is found absent by one hash lookup instead of
# three comparisons (this test runs on every node of every summarised file)
_LOOP_CLASSES = frozenset((ast.For, ast.While, ast.AsyncFor))
_SUMMARY_CLASSES = _LOOP_CLASSES | {ast.Call, ast.Assign}
_POSITION = attrgetter("lineno", "col_offset")  # a node's (line, column), for sorting
_STEP_CALL_ATTRS = frozenset(("backward", "mark_step", "optimizer_step", "sync", "step"))  # `_Summarizer._is_step_call`


class _Summarizer:
    """What the model needs from one parsed file, as plain JSON-able data."""

    def __init__(self, tree: ast.Module, module: str, is_package: bool, all_nodes: list[ast.AST], table: ImportTable | None = None):
        self.t = _jax_tables()
        self.table = table if table is not None else ImportTable(tree, module, is_package)
        self.tree = tree
        self.module = module
        imported = self.table.names.values()
        self.torch = "torch" in imported or any(map(str.startswith, imported, repeat("torch.")))
        # one walk of the file: calls in line order, found for a def or loop by bisection
        # one pass over all the nodes picks the few kinds read here (each in walk order)
        picked = [n for n in all_nodes if n.__class__ in _SUMMARY_CLASSES]
        call, assign = ast.Call, ast.Assign
        self.calls = [n for n in picked if n.__class__ is call]
        self.calls.sort(key=_POSITION)
        self.call_lines = [c.lineno for c in self.calls]
        self.loops = [n for n in picked if n.__class__ in _LOOP_CLASSES]
        self.assigns = [n for n in picked if n.__class__ is assign]
        self.top: set[str] = set()
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.top.add(stmt.name)
        self.defs: dict[str, dict] = {}
        self.classes: dict[str, dict] = {}
        self.entries: list[list] = []  # [id, kind, why, line, refs-or-None]
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._def(stmt, stmt.name, None)
            elif isinstance(stmt, ast.ClassDef):
                self._class(stmt)
        self._module_level(tree)
        self._patches()  # a patching file need not import torch itself

    def summary(self) -> dict:
        out = {"v": SUMMARY_VERSION, "imports": self.table.names, "star": self.table.star,
               "defs": self.defs, "classes": self.classes, "entries": self.entries}
        attention = self._registered_attention()
        if attention:
            out["attention"] = attention
        return out

    def _registered_attention(self) -> dict[str, list[str]]:
        """Attention implementations this module registers with transformers
        (`AttentionInterface.register(NAME, fn)`, NAME a module-level constant): NAME -> the
        kernel-hub names its function loads (`get_kernel("kernels-community/flash-attn3")`,
        in `fn` or a module function `fn` calls by name). trl's async GRPO registers
        `tree_fa3` so; what the kernels mean is the guards' question."""
        registers = [c for c in self.calls if c.func.__class__ is ast.Attribute and c.func.attr == "register" and len(c.args) == 2
                     and (dotted_name(c.func.value) or "").rpartition(".")[2] == "AttentionInterface"
                     and isinstance(c.args[0], ast.Name) and isinstance(c.args[1], ast.Name)]
        if not registers:
            return {}
        functions = {d.name: d for d in self.tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
        constants = {t.id for stmt in self.tree.body if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                     and isinstance(stmt.value.value, str) for t in stmt.targets if isinstance(t, ast.Name)}

        def kernels(fn, depth: int = 0) -> list[str]:
            found: list[str] = []
            for c in self.calls_in(fn):
                callee = dotted_name(c.func) or ""
                if callee.rpartition(".")[2] == "get_kernel" and c.args and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str):
                    found.append(c.args[0].value)
                elif depth < 2 and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Call) \
                        and isinstance(c.func.value.func, ast.Name) and c.func.value.func.id in functions:
                    found += kernels(functions[c.func.value.func.id], depth + 1)  # `_flash_attn().flash_attn_varlen_func(...)`
                elif depth < 2 and isinstance(c.func, ast.Name) and c.func.id in functions and functions[c.func.id] is not fn:
                    found += kernels(functions[c.func.id], depth + 1)
            return sorted(set(found))

        out: dict[str, list[str]] = {}
        for c in registers:
            name, fn = c.args[0].id, functions.get(c.args[1].id)
            if name in constants and fn is not None:
                hub = kernels(fn)
                if hub:
                    out[name] = hub
        return out

    # names
    def qualify(self, name: str, expanded: str | None = None) -> str | None:
        """The qualified name of a dotted name of this file (an import or a top-level
        definition), else None; `expanded`: `self.table.expand(name)` when the caller has it."""
        head = name.partition(".")[0]
        if head in self.table.names:
            return expanded if expanded is not None else self.table.expand(name)
        if head in self.top:
            return f"{self.module}.{name}" if self.module else name
        return None

    def canon(self, node) -> str:
        return self.table.canonical(node) or ""

    # calls
    def refs(self, calls: list[ast.Call], static_names: frozenset[str] = frozenset()) -> list[list]:
        """[ref, static positions, static keywords] per distinct callee: a ref is "Q:<name>"
        (a function by qualified name), "S:<attr>" (self.attr(...)), "U:<attr>"
        (super().attr(...)) or "C:<class>" (Class(...)(x)); the positions and keywords are
        the arguments that are static at every such call (literals, shapes, lengths, and the
        caller's own `static_argnames` / `static_argnums` parameters, `static_names`)."""
        out: dict[str, list] = {}

        def _static(a: ast.AST) -> bool:
            return _static_arg(a) or (a.__class__ is ast.Name and a.id in static_names)

        names, top, expand, host = self.table.names, self.top, self.table.expand, self.t.HOST_CALLBACKS

        def add(ref: str, call: ast.Call | None) -> None:
            entry = out.get(ref)
            if entry is None:
                if call is None:
                    out[ref] = [ref, set(), set()]
                else:
                    out[ref] = [ref, {i for i, a in enumerate(call.args) if _static(a)},
                                {k.arg for k in call.keywords if k.arg and _static(k.value)}]
            elif call is None:
                entry[1] = set()
                entry[2] = set()
            else:  # what stays static: only the arguments static at every call so far are looked at
                if entry[1]:
                    args = call.args
                    entry[1] = {i for i in entry[1] if i < len(args) and _static(args[i])}
                if entry[2]:
                    given = {k.arg: k.value for k in call.keywords if k.arg}
                    entry[2] = {a for a in entry[2] if a in given and _static(given[a])}

        for node in calls:
            func = node.func
            name = dotted_name(func)
            if name is not None:
                canon = expand(name)
                if canon in host:
                    continue
                if name.startswith("self.") and name.count(".") == 1:
                    add("S:" + name[5:], node)
                else:
                    q = self.qualify(name, canon)
                    if q:
                        add("Q:" + q, node)
                    elif self.torch and name.count(".") == 1 and _method_by_name(*name.split(".")):
                        add("M:" + name.partition(".")[2], node)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and dotted_name(func.value.func) == "super":
                add("U:" + func.attr, node)
            elif isinstance(func, ast.Call):
                inner = dotted_name(func.func)
                q = self.qualify(inner) if inner else None
                if q:
                    add("C:" + q, node)
            # functions handed to transformations and callbacks run where the caller runs:
            # a project function or an imported name (either qualifies)
            for arg in [*node.args, *(k.value for k in node.keywords)] if node.args or node.keywords else ():
                kind = arg.__class__
                if kind is ast.Name:
                    if arg.id in top or arg.id in names:
                        add("Q:" + self.qualify(arg.id), None)
                elif kind is ast.Attribute:  # `m.f`: only when `m` is an imported name
                    base = arg.value
                    while base.__class__ is ast.Attribute:
                        base = base.value
                    if base.__class__ is ast.Name and base.id in names:
                        add("Q:" + self.qualify(dotted_name(arg)), None)
        return [[ref, sorted(pos), sorted(kws)] for ref, pos, kws in out.values()]

    # definitions
    def _def(self, fn, qual: str, cls: str | None) -> None:
        calls = self.calls_in(fn)
        self.defs[qual] = {"line": fn.lineno, "cls": cls, "calls": self.refs(calls, _jit_static_params(fn, self.canon, self.t.JAX_TRANSFORMS)),
                           "params": [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]}
        if self.torch and self.t.takes_tensor(fn):
            self.defs[qual]["tensor"] = True  # a parameter annotated as a tensor (patches need one)
        for dec in fn.decorator_list:
            kind, why = self._decorator_entry(dec)
            if kind:
                self.entries.append([qual, kind, why, fn.lineno, None])
        lname = fn.name.lower()
        if self.torch and self.t._per_step_def(fn) and not any(w in lname for w in self.t.TracedMap._NOT_STEP):
            self.entries.append([qual, "torch", f"step function {fn.name}", fn.lineno, None])
        attribute = ast.Attribute
        steps = [c for c in calls if c.func.__class__ is attribute and c.func.attr in _STEP_CALL_ATTRS and self._is_step_call(c)]
        if steps:
            loops = [lp for lp in self.loops if _inside(lp, fn)]
            for loop in self._step_loops(loops, steps):
                inside = self.calls_in(loop)
                self.entries.append([f"{qual}@{loop.lineno}", "torch", f"the step loop in `{fn.name}`", loop.lineno, self.refs(inside)])

    def _decorator_entry(self, dec) -> tuple[str, str]:
        target = dec
        keywords: list[ast.keyword] = []
        if isinstance(dec, ast.Call):
            keywords = dec.keywords
            if self.canon(dec.func) in ("functools.partial", "partial") and dec.args:
                target = dec.args[0]
            else:
                target = dec.func
        name = self.canon(target)
        if name in self.t.JAX_TRANSFORMS:
            return "jax", f"decorated with {dotted_name(target)}"
        if name in self.t.TORCH_COMPILE and _xla_backend(keywords):
            return "torch", "compiled for an XLA/HPU backend"
        return "", ""

    def calls_in(self, node) -> list[ast.Call]:
        """The calls in the body of a def or loop (by lines; nested defs included)."""
        lo = bisect_left(self.call_lines, node.body[0].lineno)
        hi = bisect_right(self.call_lines, node.end_lineno or node.lineno)
        return self.calls[lo:hi]

    @staticmethod
    def _step_loops(loops: list[ast.AST], steps: list[ast.Call]):
        """Loops that run a lazy-tensor step (a boundary call or `.backward()` in their
        body) with no such loop nested inside (an epoch loop around a step loop is not)."""
        stepping = [lp for lp in loops if any(_inside(c, lp) for c in steps)]
        return [lp for lp in stepping if not any(o is not lp and _inside(o, lp) for o in stepping)]

    def _is_step_call(self, n: ast.Call) -> bool:  # the attributes it accepts: _STEP_CALL_ATTRS
        if not isinstance(n.func, ast.Attribute):
            return False
        if n.func.attr == "backward" and not n.args:
            return True
        if n.func.attr in ("mark_step", "optimizer_step", "sync", "step"):
            c = self.canon(n.func)
            return c.endswith(("mark_step", "optimizer_step")) or c in ("torch_xla.sync", "torch_xla.step")
        return False

    def _class(self, node: ast.ClassDef) -> None:
        bases = [self.qualify(b) or self.canon(b) for b in (dotted_name(x) for x in node.bases) if b]
        subs: dict[str, str] = {}
        methods = []
        flax = any(b in self.t.FLAX_BASES for b in bases) or any(b.endswith(("linen.Module", "nnx.Module")) for b in bases)
        for stmt in node.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            methods.append(stmt.name)
            qual = f"{node.name}.{stmt.name}"
            self._def(stmt, qual, node.name)
            if stmt.name in ("__init__", "setup"):
                subs.update(self._submodules(stmt))
            if flax:
                decorators = {self.canon(d.func if isinstance(d, ast.Call) else d) for d in stmt.decorator_list}
                if stmt.name == "__call__" or any(d.endswith("compact") for d in decorators):
                    self.entries.append([qual, "jax", f"method of the module class {node.name}", stmt.lineno, None])
        host = bool(self.torch and self.t.drives_compiled_graph(node, self.canon))
        if not flax and self.torch and not host:
            # torch code that runs on tensors every step: a module's forward, the per-step
            # methods of processors and metrics; what they call in other files is traced
            # code there when the file is in an XLA/HPU scope
            step_methods = set(self.t._per_step_methods(node))
            if self.t._module_like(node):
                step_methods.add("forward")
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in step_methods:
                    self.entries.append([f"{node.name}.{stmt.name}", "torch", f"{stmt.name} of {node.name}", stmt.lineno, None])
        self.classes[node.name] = {"bases": bases, "methods": methods, "subs": subs, "flax": flax}
        if host:
            self.classes[node.name]["host"] = True  # the host-side driver of a compiled graph: reach stops at it

    def _submodules(self, fn) -> dict[str, str]:
        out = {}
        for n in self.assigns:
            if _inside(n, fn) and isinstance(n.value, ast.Call):
                callee = dotted_name(n.value.func)
                q = self.qualify(callee) if callee else None
                if not q:
                    continue
                for t in n.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        out[t.attr] = q
        return out

    def _module_level(self, tree: ast.Module) -> None:
        """`f = jax.jit(g)`, `lax.scan(body, ...)` and `torch.compile(f, backend="openxla")`
        anywhere in the file: `g`, `body`, `f` are entry points."""
        for node in self.calls:
            if not node.args:
                continue
            name = self.canon(node.func)
            positions: tuple[int, ...] = ()
            if name in self.t.JAX_TRANSFORMS:
                positions, why = (0,), f"passed to {dotted_name(node.func)}"
            elif name in self.t.LAX_BODIES:
                positions, why = self.t.LAX_BODIES[name], f"body of {dotted_name(node.func)}"
            elif name in self.t.TORCH_COMPILE and _xla_backend(node.keywords):
                positions, why = (0,), "compiled for an XLA/HPU backend"
            for i in positions:
                if i < len(node.args):
                    ref = node.args[i]
                    if isinstance(ref, ast.Name):
                        ref = self._local_partial(ref, node) or ref  # `kernel = partial(k, block=8)`, then `pallas_call(kernel)`
                    bound: list[str] = []
                    if isinstance(ref, ast.Call) and self.canon(ref.func) in ("functools.partial", "partial") and ref.args:
                        bound = sorted(k.arg for k in ref.keywords if k.arg and _static_arg(k.value))
                        ref = ref.args[0]
                    refname = dotted_name(ref)
                    q = self.qualify(refname) if refname else None
                    if q:
                        kind = "torch" if name in self.t.TORCH_COMPILE else "jax"
                        self.entries.append([refname, kind, why, node.lineno, [["Q:" + q, [], bound]]])

    def _local_partial(self, ref: ast.Name, call: ast.Call) -> ast.Call | None:
        """The `functools.partial(...)` a name was last bound to before `call` (within the
        twenty lines above it: the same function in practice), else None."""
        best = None
        for node in self.assigns:
            if call.lineno - 20 <= node.lineno < call.lineno and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id == ref.id and (best is None or node.lineno > best.lineno):
                best = node
        if best is not None and isinstance(best.value, ast.Call) and self.canon(best.value.func) in ("functools.partial", "partial"):
            return best.value
        return None


    def _patches(self) -> None:
        """`lib.models.x.Decoder._mask_hidden_states = fast_mask_hidden_states`: a project
        function assigned over an attribute of an imported module or class replaces the
        library's code, which the library's model runs (its forward, its generation loop).
        The function is an entry point (`_reach` keeps it when the attribute is a per-step
        name or the function takes a tensor); the attribute's name is in the entry's id."""
        for node in self.assigns:
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Attribute):
                continue
            target = dotted_name(node.targets[0])
            value = dotted_name(node.value) if isinstance(node.value, (ast.Name, ast.Attribute)) else None
            if not target or not value or target.partition(".")[0] not in self.table.names:
                continue
            q = self.qualify(value)
            if q:
                attr = node.targets[0].attr
                self.entries.append([f"the patch of `{attr}`", "torch", f"patched over `{attr}`", node.lineno, [["Q:" + q, [], []]]])


# how the summary names the per-step torch entry points (a forward, a step function, a
# processor's __call__ or a metric's update): entry points only in an XLA/HPU scope
_PER_STEP_WHY = ("step function ", "forward of ", "__call__ of ", "update of ", "_update of ", "step of ", "patched over ")

_STATIC_ATTRS = {"shape", "ndim", "dtype", "size", "itemsize"}
_CONFIG_HEADS = {"self", "cls", "config", "cfg", "args", "hparams", "opt"}


_UNFOLLOWED = {"U", "C", "sub", "M"}
_MAX_BY_NAME = 32  # classes defining a method name beyond which `x.name(...)` is not resolved by it  # call forms TracedMap's same-file propagation does not resolve


def _jit_static_params(fn, canon, transforms) -> frozenset[str]:
    """Parameters a jax transformation decorator declares static (`static_argnames`,
    `static_argnums`): Python values at trace time, and so at the calls the function makes."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    out: set[str] = set()
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        target = dec.args[0] if canon(dec.func) in ("functools.partial", "partial") and dec.args else dec.func
        if canon(target) not in transforms:
            continue
        for kw in dec.keywords:
            values = kw.value.elts if isinstance(kw.value, (ast.Tuple, ast.List)) else [kw.value]
            consts = [v.value for v in values if isinstance(v, ast.Constant)]
            if kw.arg == "static_argnames":
                out |= {c for c in consts if isinstance(c, str)}
            elif kw.arg in ("static_argnums", "static_broadcasted_argnums"):
                out |= {params[c] for c in consts if isinstance(c, int) and 0 <= c < len(params)}
    return frozenset(out)


def _static_arg(node: ast.AST) -> bool:
    """An argument that is a Python value at the call, whatever is traced: a literal, a
    shape or dimension, a length, a module/config attribute, or a tuple of those."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_static_arg(e) for e in node.elts)
    if isinstance(node, ast.Attribute):
        if node.attr in _STATIC_ATTRS:
            return True
        head = dotted_name(node)
        return bool(head) and head.partition(".")[0] in _CONFIG_HEADS
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
    if isinstance(node, ast.Call):
        return dotted_name(node.func) in ("len", "range")
    if isinstance(node, ast.BinOp):
        return _static_arg(node.left) and _static_arg(node.right)
    return False


# words in a path that mark a file as one device backend of a multi-backend package
# (deepspeed's accelerator/cuda_accelerator.py, op_builder/npu/...): not shared code, so
# not put in an inferred scope for another device
_BACKEND_WORDS = {"cuda", "nvidia", "cudnn", "nccl", "triton", "mps", "npu", "mlu", "xpu", "sdaa", "musa", "rocm", "hip", "amd",
                  "megatron", "apex", "cudagraph"}  # Megatron-LM and Apex integrations run on CUDA devices only
_PATH_WORDS = re.compile(r"[A-Za-z0-9]+")


def _backend_specific(rel: str, files=None) -> bool:
    """A file that is one device backend of a multi-backend package: a backend word in its
    path (`cuda_accelerator.py`, `op_builder/npu/`), or a GPU file with a twin for an
    XLA/HPU device beside it (`gpu_model_runner.py` beside `tpu_model_runner.py` or
    `hpu_model_runner.py`; `files`: the project's paths, to look the twin up)."""
    if any(w.lower() in _BACKEND_WORDS for w in _PATH_WORDS.findall(rel.rpartition(".")[0])):
        return True
    return files is not None and _gpu_twin(rel, files)


_GPU_PART = re.compile(r"(?<![A-Za-z])gpu(?![a-z])|GPU|Gpu(?![a-z])")  # gpu_runner, GPUWorker, GpuRunner
_TWIN_DEVICES = ("tpu", "hpu", "xla", "neuron")


def _gpu_twin(rel: str, files) -> bool:
    folder, _, name = rel.rpartition("/")
    if not _GPU_PART.search(name):
        return False
    prefix = folder + "/" if folder else ""
    def swap(dev):
        return lambda m: dev if m.group().islower() else dev.upper() if m.group().isupper() else dev.capitalize()

    return any(prefix + _GPU_PART.sub(swap(dev), name) in files for dev in _TWIN_DEVICES)


def _xla_backend(keywords) -> bool:
    for kw in keywords:
        if kw.arg == "backend" and isinstance(kw.value, ast.Constant) and kw.value.value in XLA_BACKENDS:
            return True
    return False


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    """Is `node` within `outer`'s body lines (both from the same tree)?"""
    return outer.lineno < node.lineno <= (outer.end_lineno or outer.lineno)


def summarize(data: bytes, module: str, is_package: bool, keep=None) -> dict | None:
    """The summary of one file's bytes, or None when it does not parse. `keep(tree, nodes,
    table)` receives the parse, its walk and its import table (None if it could not be
    made), so the scan of the file does not parse, walk and read its imports again."""
    from portlint.frontends.python.astindex import parse_for_scan

    try:
        tree, all_nodes = parse_for_scan(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        table = ImportTable(tree, module, is_package)
    except RecursionError:
        table = None  # _Summarizer meets the same below
    if keep is not None:
        keep(tree, all_nodes, table)
    try:
        return _Summarizer(tree, module, is_package, all_nodes, table).summary()
    except RecursionError:  # absurdly nested code: the file is left out of the call graph
        return None


# ---- files and modules ---------------------------------------------------------------------

@dataclass
class FileInfo:
    rel: str  # POSIX path relative to the project root
    sha: str
    module: str
    is_package: bool
    tags: frozenset[str]
    hint: int  # _has_entry_hint of the bytes
    data: bytes | None = None  # kept until the file is summarised (or the model is built)
    own_tags: frozenset[str] = frozenset()  # languages.python_tags of the bytes (tags adds run-time dispatch)


def module_name_of(rel: str, has_init) -> tuple[str, bool]:
    """(dotted module name, is a package's __init__) of a file from the `__init__.py` chain
    above it; a loose script is named by its stem. `has_init(folder)` takes a POSIX folder
    relative to the root ("" for the root)."""
    folder, _, name = rel.rpartition("/")
    is_package = name == "__init__.py"
    parts = [] if is_package else [name.rpartition(".")[0] or name]
    while folder and has_init(folder):
        folder, _, last = folder.rpartition("/")
        parts.append(last)
    if is_package and not parts:
        parts.append("__init__")
    return ".".join(reversed(parts)), is_package


@dataclass
class Reach:
    entry: str  # the entry point's name
    file: str  # the file it is in (relative to the project root)
    kind: str  # "jax" | "torch"
    static: tuple[str, ...] = ()  # parameters static at every call from traced code
    # "" when every link of the chain from the entry point is a resolved call; else the
    # method name of the first link matched by name alone (`model.get_logits(...)` on an
    # object of unknown class, `_Builder.methods_named`): no call chain is known
    via: str = ""
    caller: str = ""  # with `via`: the function that makes that call, "`Loss.forward` in pkg/loss.py"

    def describe(self) -> str:
        """The provenance a finding prints: the entry point only for a resolved call chain."""
        if self.via:
            return f"a method named `{self.via}`, which {self.caller} calls by that name on an object of unknown class"
        return f"reached from `{self.entry}` in {self.file}" if not self.entry.startswith("the ") else f"reached from {self.entry} in {self.file}"


@dataclass
class ProjectModel:
    root: Path
    declared: tuple[str, ...] = ()  # declared targets, () when scope is inferred
    files: dict[str, FileInfo] = field(default_factory=dict)
    reached: dict[str, dict[str, Reach]] = field(default_factory=dict)  # rel -> qualname -> reach
    scope: dict[str, frozenset[str]] = field(default_factory=dict)  # rel -> scope tags added
    stats: dict[str, int] = field(default_factory=dict)
    declared_mode: bool = False  # targets were named: scope is declared, not inferred
    cuda_shims: dict[str, frozenset[str]] = field(default_factory=dict)  # top package -> `torch.cuda` members a module of it rebinds
    trees: dict[str, tuple] = field(default_factory=dict)  # rel -> (sha256, tree, nodes, import table) parsed here, until scanned
    deps: dict[str, list[str]] = field(default_factory=dict)  # rel -> project files its imports name
    shapes: dict[str, str] = field(default_factory=dict)  # rel -> summary shape, of the files the build looked at
    _resolver: "_Builder | None" = None
    _rels: dict[str, str | None] = field(default_factory=dict)

    def cuda_shims_of(self, rel: str | None) -> frozenset[str]:
        """`torch.cuda` members some module of `rel`'s package rebinds (a patch module)."""
        info = self.files.get(rel) if rel else None
        if info is None or "." not in info.module:
            return frozenset()
        return self.cuda_shims.get(info.module.partition(".")[0], frozenset())

    def take_tree(self, rel: str | None, data: bytes):
        """(tree, nodes, import table or None) of a file the model parsed, if its bytes are
        still those; given once (the scan of the file takes it over). The table is the one
        `names.import_table` makes for the file: same tree, module name and package flag."""
        if rel is None or rel not in self.trees:
            return None
        sha, tree, all_nodes, table = self.trees.pop(rel)
        return (tree, all_nodes, table) if sha == hashlib.sha256(data).hexdigest() else None

    # -- queries ---------------------------------------------------------------------------
    def rel_of(self, real: Path | str) -> str | None:
        """The file's path in the model (None when the model does not hold it)."""
        key = str(real)
        if key not in self._rels:
            rel = None
            prefix = str(self.root) + os.sep
            for resolve in (os.path.abspath, os.path.realpath):  # resolved only when the path as given is not one
                candidate = resolve(key)
                if candidate.startswith(prefix) and candidate[len(prefix):].replace(os.sep, "/") in self.files:
                    rel = candidate[len(prefix):].replace(os.sep, "/")
                    break
            self._rels[key] = rel
        return self._rels[key]

    def declared_scope(self, own: frozenset[str]) -> frozenset[str]:
        """With declared targets: the scope tags a torch file with tags `own` gets."""
        if "torch" not in own:
            return frozenset()
        return frozenset(DECLARED_TAGS[t] for t in self.declared) - own

    def scope_tags(self, rel: str | None) -> frozenset[str]:
        return self.scope.get(rel, frozenset()) if rel else frozenset()

    def reached_in(self, rel: str | None) -> dict[str, Reach]:
        return self.reached.get(rel, {}) if rel else {}

    def file_tags(self, rel: str, data: bytes) -> frozenset[str] | None:
        """The file's own framework tags (`languages.python_tags`), when the model read these
        very bytes; None otherwise."""
        info = self.files.get(rel)
        if info is None or info.sha != hashlib.sha256(data).hexdigest():
            return None
        return info.own_tags

    def extra_tags(self, rel: str | None, data: bytes | None = None) -> frozenset[str]:
        """Tags the model adds to a file's own: its scope, and "jax" when a JAX entry point
        in another file reaches a function in it (torch reach counts only in scope).

        `data` are the bytes being scanned when they are not the ones the model read (an
        editor buffer, a file not on disk): with declared targets, their scope follows from
        them alone, as `_scope` derives it for a file on disk."""
        if data is not None and self.declared_mode:
            from portlint.discovery.languages import python_tags

            tags = set(self.declared_scope(python_tags(data) | _dispatch_tags(data)))
        else:
            tags = set(self.scope_tags(rel))
        kinds = {r.kind for r in self.reached_in(rel).values()}
        if "jax" in kinds:
            tags.add("jax")
        return frozenset(tags)

    def file_digest(self, rel: str | None) -> bytes:
        """What a file's findings depend on besides its own bytes: its module name, scope
        tags and the functions in it reached from elsewhere. Part of its cache key."""
        if rel is None:
            return b""
        info = self.files[rel]
        reached = sorted((q, r.entry, r.file, r.kind, r.static, r.via, r.caller) for q, r in self.reached_in(rel).items())
        imported = [(dep, self.files[dep].sha) for dep in self.deps.get(rel, ()) if dep in self.files]
        facts = [info.module, info.is_package, sorted(self.scope_tags(rel)), reached, imported]
        return hashlib.sha256(json.dumps(facts).encode()).digest()

    def resolver(self) -> "_Builder":
        """The model's name resolution (lookups of qualified names across files)."""
        if self._resolver is None:
            self._resolver = _Builder(self, None, {})
        return self._resolver

    def class_ancestors(self, qualified: str, origin: str) -> list[str]:
        """The qualified names of the bases of the class `qualified` names (seen from file
        `origin`) and of their bases, through the project's files; [] when not found."""
        out: list[str] = []
        todo, seen = [(qualified, origin)], set()
        while todo and len(seen) < 16:
            name, where = todo.pop()
            found = self.resolver().lookup(name, where)
            if found is None or found in seen:
                continue
            seen.add(found)
            s = self.resolver().summary(found[0])
            info = s["classes"].get(found[1]) if s is not None else None
            if info is None:
                continue
            for base in info["bases"]:
                out.append(base)
                todo.append((base, found[0]))
        return out

    def registered_attention(self, qualified: str, origin: str) -> list[str] | None:
        """The kernel-hub names loaded by the attention implementation whose registered name
        the module-level constant `qualified` holds (`_Summarizer._registered_attention`),
        seen from file `origin`; None when no project module registers it."""
        module, _, name = qualified.rpartition(".")
        rel = self.resolver().find_module(module, origin) if module else None
        s = self.resolver().summary(rel) if rel is not None else None
        return s.get("attention", {}).get(name) if s is not None else None

    def find_definition(self, qualified: str, origin: str) -> tuple[str, str] | None:
        """(file, qualname) of the function `qualified` names, seen from file `origin`."""
        found = self.resolver().lookup(qualified, origin)
        if found is None:
            return None
        s = self.resolver().summary(found[0])
        return found if s is not None and found[1] in s["defs"] else None

    # -- building --------------------------------------------------------------------------
    @classmethod
    def for_scan(cls, settings, paths: list[Path], tree: str | None = None) -> "ProjectModel | None":
        root = project_root(settings, paths, tree)
        if root is None:
            return None
        model = build(root, settings)
        scanned = {model.rel_of(p) for p in paths}
        model.trees = {rel: t for rel, t in model.trees.items() if rel in scanned}  # only the scan takes them over
        return model


def project_root(settings, paths: list[Path], tree: str | None = None) -> Path | None:
    """The root of the project the scanned files belong to: the project marker's folder
    when it holds the first of them (`discovery.roots.marker_root`: the config file's
    folder, the git root), else the folder that holds them all, climbed up the chain of
    `__init__.py` folders above it. Without a marker, nothing above `tree` (the resolved
    scan root of the first file; None: not known, the settings root a library caller
    names) is the root: the folder that holds them all counts only when it lies inside
    that tree (files of several trees: the first file's own folder), and the climb stops
    at the tree. A tree with an `__init__.py` at its top must not pull in its siblings,
    whatever the working directory."""
    from portlint.discovery.roots import inside, marker_root, tree_bound

    if not paths:
        return None
    first = Path(os.path.realpath(paths[0]))  # the others are resolved only when no root holds the first
    top = marker_root(settings, first)
    if top is not None:
        return Path(top)
    reals = [str(first), *(os.path.realpath(p) for p in paths[1:])]
    common = Path(os.path.commonpath(reals)) if len(reals) > 1 else first
    folder = common if common.is_dir() else common.parent
    own = first if first.is_dir() else first.parent
    limit = tree_bound(settings, first, tree)
    if len(folder.parts) < 3 or not inside(str(folder), str(limit)):
        folder = own  # files from unrelated trees, or above the first one's: its own folder
    while (folder / "__init__.py").is_file() and folder.parent != folder and folder != limit:
        folder = folder.parent
    return folder


_SUMMARIES: dict[tuple[str, str], dict | None] = {}  # (sha256, module) -> summary: a pure function of both


def _summary_key(info: FileInfo) -> tuple[str, str]:
    return (info.sha, info.module + ("/" if info.is_package else ""))


def key_known(info: FileInfo) -> bool:
    return _summary_key(info) in _SUMMARIES


def _summary_of(info: FileInfo, store: "_SummaryBatch | None", trees: dict | None = None, root: Path | None = None) -> dict | None:
    """The file's summary: from this process's memo, else `store` (what the cache dir kept),
    else its bytes, parsed (the tree goes to `trees` for the scan to take over)."""
    key = _summary_key(info)
    if key in _SUMMARIES:
        return _SUMMARIES[key]
    summary = store.get(key) if store is not None else None
    if summary is None and info.data is None and root is not None:
        try:  # read as before: the digest tells the same bytes
            data = read_limited(root / info.rel)
        except OSError:
            data = None
        if data is not None and hashlib.sha256(data).hexdigest() == info.sha:
            info.data = data
    if summary is None and info.data is not None:
        keep = None
        if trees is not None:
            def keep(tree, all_nodes, table):
                trees[info.rel] = (info.sha, tree, all_nodes, table)
        summary = summarize(info.data, info.module, info.is_package, keep)
    _SUMMARIES[key] = summary
    return summary


class _Memory:
    """The byte facts and models this process built, by the store's keys, as JSON text (a
    caller can never change a kept value). A long-lived process — the language server
    analysing buffer after buffer, a library caller or a test session scanning again —
    builds the model of unchanged content once: every key is content (the sha256 of each
    file, the settings that shape the model), so an edit on disk misses and nothing stale
    is ever answered. The oldest entries go first beyond `limit`."""

    def __init__(self, limit: int = 24):
        from collections import OrderedDict

        self.limit = limit
        self._entries: "OrderedDict[object, str]" = OrderedDict()

    def get(self, key):
        text = self._entries.get(key)
        if text is None:
            return None
        self._entries.move_to_end(key)
        return json.loads(text)

    def put(self, key, value) -> None:
        self._entries[key] = json.dumps(value, separators=(",", ":"))
        self._entries.move_to_end(key)
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()


_MEMORY = _Memory()


class _Recall:
    """Facts and models: this process's memory first, then the cache dir's store (when there
    is one), whose hits are kept in memory too; what is built goes to both."""

    def __init__(self, store: "_Store | None"):
        self.store = store

    def get(self, key):
        value = _MEMORY.get(key)
        if value is None and self.store is not None:
            value = self.store.get(key)
            if value is not None:
                _MEMORY.put(key, value)
        return value

    def put(self, key, value) -> None:
        _MEMORY.put(key, value)
        if self.store is not None:
            self.store.put(key, value)


class _SummaryBatch:
    """The summaries of one project root's files, kept under the cache dir as ONE entry
    (`("summaries", root)`: summary key -> summary) instead of one entry per file: a cold
    build of a few hundred files then writes one entry, not hundreds (each a temporary
    file, a rename and its folders), and a rebuild reads one. Each summary is still found
    by its content key (sha256, module name), so a changed file misses and is parsed again.
    The entry is rewritten when the build summarised a different set of files."""

    def __init__(self, store: "_Store", root: Path):
        self.store = store
        self.key = ("summaries", str(root))
        loaded = store.get(self.key)
        self.known: dict[str, dict] = loaded if isinstance(loaded, dict) else {}
        self.used: dict[str, dict] = {}

    @staticmethod
    def _name(key: tuple[str, str]) -> str:
        return f"{key[0]}:{key[1]}"

    def get(self, key: tuple[str, str]):
        value = self.known.get(self._name(key))
        return value if isinstance(value, dict) else None

    def keep(self, key: tuple[str, str], value: dict | None) -> None:
        if value is not None:
            self.used[self._name(key)] = value

    def save(self) -> None:
        if self.used.keys() != self.known.keys():
            self.store.put(self.key, self.used)


class _Store:
    """Summaries and whole models under `<cache dir>/project/`, in the cache's entry format."""

    def __init__(self, directory: Path, root: Path | None = None):
        self.dir = directory / "project"
        self.root = root or directory

    def _key(self, key) -> str:
        from portlint.core.cache import code_fingerprint

        return hashlib.sha256(repr((SUMMARY_VERSION, code_fingerprint(), key)).encode()).hexdigest()

    def get(self, key):
        from portlint.core.cache import read_entry

        body = read_entry(self.dir, self._key(key))
        if body is None:
            return None
        try:
            return json.loads(body)
        except ValueError:
            return None

    def put(self, key, value) -> None:
        from portlint.core.cache import write_entry

        try:
            write_entry(self.dir, self._key(key), json.dumps(value, separators=(",", ":")).encode(), root=self.root)
        except OSError:
            pass


def build(root: Path, settings) -> ProjectModel:
    from portlint.discovery.files import discover
    from portlint.discovery.languages import python_tags

    declared_mode = bool(getattr(settings, "declared_targets", False))
    declared = tuple(t for t in settings.targets if t in DECLARED_TAGS) if declared_mode else ()
    model = ProjectModel(root, declared, declared_mode=declared_mode)
    files, _ = discover([root], settings)
    store = _Store(settings.cache_dir) if getattr(settings, "cache_dir", None) else None
    recall = _Recall(store)
    # the byte-level facts of each file (tags, entry hint), kept by content between runs
    known = recall.get(("facts", str(root))) or {}
    facts: dict[str, list] = {}
    prefix = str(root) + os.sep
    for sf in files:
        if sf.real.suffix != ".py":
            continue
        real = os.path.abspath(sf.real)
        if not real.startswith(prefix):
            real = os.path.realpath(real)
            if not real.startswith(prefix):
                continue
        try:  # as the scan reads it: a regular file, at most max-file-size (else the scan skips it too)
            data = read_limited(real, settings.max_file_size)
        except OSError:
            continue
        rel = real[len(prefix):].replace(os.sep, "/")
        sha = hashlib.sha256(data).hexdigest()
        old = known.get(rel)
        if old is not None and old[0] == sha and len(old) == 5:
            fact = old
        else:
            own = python_tags(data)
            fact = [sha, sorted(own | _dispatch_tags(data)), _has_entry_hint(data), sorted(own), _cuda_shims(data)]
        facts[rel] = fact
        model.files[rel] = FileInfo(rel, sha, "", False, frozenset(fact[1]), int(fact[2]), data, frozenset(fact[3]))
    if facts != known:
        recall.put(("facts", str(root)), facts)
    dirs_with_init = {r.rpartition("/")[0] for r in model.files if r.endswith("/__init__.py")}
    for info in model.files.values():
        info.module, info.is_package = module_name_of(info.rel, dirs_with_init.__contains__)
    for rel, fact in facts.items():
        top, dot, _ = model.files[rel].module.partition(".")
        if fact[4] and dot:  # a module of a package: its shims hold for the package's files
            model.cuda_shims[top] = model.cuda_shims.get(top, frozenset()) | frozenset(fact[4])
    dependencies = _dependency_tags(root, {r.rpartition("/")[0] for r in model.files})
    digest = hashlib.sha256(repr((declared_mode, declared, dependencies, sorted((r, i.sha) for r, i in model.files.items()))).encode()).hexdigest()
    setting = [declared_mode, list(declared), dependencies]
    cached = recall.get(("model", str(root), digest))
    if cached is not None:
        _load(model, cached)
        model.stats["cached"] = 1
    elif _reuse_latest(model, recall.get(("model-latest", str(root))), setting):
        model.stats["reused"] = 1
        dump = _dump(model, setting)
        recall.put(("model", str(root), digest), dump)
        recall.put(("model-latest", str(root)), dump)
    else:
        batch = _SummaryBatch(store, root) if store is not None else None
        model._resolver = _Builder(model, batch, dependencies)
        model._resolver.run()
        if batch is not None:
            batch.save()
        model.shapes = {rel: _shape(_SUMMARIES.get(_summary_key(model.files[rel]))) for rel in sorted(model._resolver.summarized)}
        dump = _dump(model, setting)
        recall.put(("model", str(root), digest), dump)
        recall.put(("model-latest", str(root)), dump)
    for info in model.files.values():
        info.data = None  # read again from disk (and checked) if a lookup needs it later
    return model


def _dump(model: ProjectModel, setting: list) -> dict:
    return {"reached": {rel: {q: [r.entry, r.file, r.kind, list(r.static), r.via, r.caller] for q, r in m.items()} for rel, m in model.reached.items()},
            "scope": {rel: sorted(t) for rel, t in model.scope.items()}, "deps": model.deps, "stats": model.stats,
            "files": {rel: [i.sha, sorted(i.tags), i.hint] for rel, i in model.files.items()}, "shapes": model.shapes, "setting": setting}


def _load(model: ProjectModel, data: dict) -> None:
    model.reached = {rel: {q: Reach(r[0], r[1], r[2], tuple(r[3]), *r[4:6]) for q, r in m.items()} for rel, m in data["reached"].items()}
    model.scope = {rel: frozenset(t) for rel, t in data["scope"].items()}
    model.deps = {rel: list(d) for rel, d in data.get("deps", {}).items()}
    model.stats = dict(data.get("stats", {}))
    model.shapes = dict(data.get("shapes", {}))


def _shape(summary: dict | None) -> str:
    """A summary without its line numbers: what the model's reach and scope depend on. An
    edit that leaves it unchanged (a comment, a statement, a moved function) leaves the
    model unchanged."""
    if summary is None:
        return ""
    defs = {q: {k: v for k, v in d.items() if k != "line"} for q, d in summary["defs"].items()}
    entries = [e[:3] + e[4:] for e in summary["entries"]]
    flat = {**summary, "defs": defs, "entries": entries}
    return hashlib.sha256(json.dumps(flat, sort_keys=True).encode()).hexdigest()


def _reuse_latest(model: ProjectModel, latest: dict | None, setting: list) -> bool:
    """Take the last model built for this root when the files that changed since cannot
    change it: same files, settings and dependency files; each changed file keeps its byte
    facts (tags, entry hint), and the summary shape of those the model had looked at. The
    common pre-commit case (one file edited in its body) then costs one parse, of the file
    being scanned anyway."""
    if not latest or latest.get("setting") != setting or set(latest.get("files", {})) != set(model.files):
        return False
    shapes = latest.get("shapes", {})
    for rel, (old_sha, old_tags, old_hint) in latest["files"].items():
        info = model.files[rel]
        if info.sha == old_sha:
            continue
        if sorted(info.tags) != old_tags or info.hint != int(old_hint):
            return False
        if rel in shapes:
            new = _shape(_summary_of(info, None, model.trees, model.root))
            if new != shapes[rel]:
                return False
    _load(model, latest)
    model.stats = {"reused": 1}
    return True


def _dispatch_tags(data: bytes) -> frozenset[str]:
    return frozenset(tag for tag, (words, rx) in _DISPATCH.items() if any(w in data for w in words) and rx.search(data))


# `lib.models.x.Decoder.forward = fast_forward` (`_Summarizer._patches`): an attribute two
# or more dots deep, not of self, assigned a bare name, alone on its line
_PATCH_LINE = LineStartPattern(rb"[ \t]*(?!self\.)[A-Za-z_]\w*(?:\.\w+){2,}[ \t]*=[ \t]*\(?\s*[A-Za-z_]\w*\s*\)?[ \t]*$", re.M)


_CUDA_SHIM = re.compile(rb"^[ \t]*torch\.cuda\.([A-Za-z_]\w*)[ \t]*=(?!=)|setattr\(\s*torch\.cuda\s*,\s*[\"']([A-Za-z_]\w*)[\"']", re.M)


def _cuda_shims(data: bytes) -> list[str]:
    """Members of `torch.cuda` a file rebinds (`torch.cuda.synchronize = xm.mark_step`, in a
    patch function or at import): a port's shim, which the package's own calls then run."""
    if b"torch.cuda" not in data:
        return []
    return sorted({(a or b).decode() for a, b in _CUDA_SHIM.findall(data)})


def _has_entry_hint(data: bytes) -> int:
    """2: the bytes can hold any entry point; 1: only torch per-step code (an entry point
    when the file is in scope) or a patch of the package's functions into a library; 0: none."""
    if any(word in data for word in _ENTRY_WORDS):
        return 2
    if any(word in data for word in _TORCH_STEP_WORDS):
        return 1
    return 1 if _PATCH_LINE.found(data) else 0


def _dependency_tags(root: Path, folders: set[str]) -> dict[str, list[str]]:
    """folder (relative) -> scope tags its dependency files name. Only folders that hold
    Python files and their ancestors are looked at."""
    look: set[str] = {""}
    for folder in folders:
        parts = folder.split("/") if folder else []
        look.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    out: dict[str, list[str]] = {}
    for folder in sorted(look):
        base = root / folder if folder else root
        tags: set[str] = set()
        names = list(_DEP_FILES)
        try:
            names += sorted(n for n in os.listdir(base) if n.startswith("requirements") and n.endswith(".txt"))
        except OSError:
            continue
        for name in names:
            path = base / name
            try:
                # a link out of the tree is not read (discovery's notice names it)
                if not path.is_file() or not resolves_inside(path, root):
                    continue
                text = read_limited(path, 1_000_000).decode("utf-8", errors="replace")
            except OSError:
                continue
            tags |= _tags_in_dependency_text(name, text)
        if tags:
            out[folder] = sorted(tags)
    return out


def _tags_in_dependency_text(name: str, text: str) -> set[str]:
    """Scope tags named in a dependency file, read as text (TOML parsed, never executed)."""
    if name == "pyproject.toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return set()
        project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
        reqs = list(project.get("dependencies", []) or [])
        for group in (project.get("optional-dependencies", {}) or {}).values():
            reqs += list(group or [])
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        if isinstance(poetry, dict):
            reqs += list((poetry.get("dependencies") or {}).keys())
        text = "\n".join(r for r in reqs if isinstance(r, str))
    elif name.endswith(".txt"):
        text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    tags: set[str] = set()
    for m in _DEP_NAME.finditer(text):
        dist, extras = m.group(1).lower(), (m.group(2) or "").lower()
        if dist in _DEPENDENCIES:
            tags.add(_DEPENDENCIES[dist])
        elif dist == "jax" and "tpu" in extras:
            tags.add("tpu")
    return tags & set(SCOPE_TAGS)


class _Builder:
    def __init__(self, model: ProjectModel, store: "_SummaryBatch | None", dependencies: dict[str, list[str]]):
        self.m = model
        self.store = store
        self.dependencies = dependencies
        self.by_module: dict[str, list[str]] = {}
        for rel, info in model.files.items():
            self.by_module.setdefault(info.module, []).append(rel)
        self.parsed = 0
        self.summarized: set[str] = set()
        self._kept: set[str] = set()  # files whose summary `store` (a _SummaryBatch) has
        self._by_method: dict[str, list[tuple[str, str]]] | None = None
        self._by_any_method: dict[str, list[tuple[str, str]]] | None = None  # method -> classes (`overrides`)
        self._descent: dict[tuple, bool] = {}
        # rel -> the scope tags of its package, for files `_scope` leaves out (no torch import):
        # such a file can still patch the package's torch functions into a library
        self.package_scope: dict[str, frozenset[str]] = {}

    def summary(self, rel: str) -> dict | None:
        info = self.m.files[rel]
        if not key_known(info):
            self.parsed += 1
        self.summarized.add(rel)
        s = _summary_of(info, self.store, self.m.trees, self.m.root)
        if self.store is not None and rel not in self._kept:  # wherever it came from
            self._kept.add(rel)
            self.store.keep(_summary_key(info), s)
        return s

    def run(self) -> None:
        self._scope()
        self._reach()
        self._deps()
        self.m.stats.update(files=len(self.m.files), summarised=self.parsed)

    def _deps(self) -> None:
        """For each file summarised, the project files its imports name: a change in one
        can change what its helpers return (their summaries), so it is in the file's key."""
        for rel in sorted(self.summarized):
            s = _SUMMARIES.get(_summary_key(self.m.files[rel]))
            if not s:
                continue
            out = set()
            for target in s["imports"].values():
                parts = target.split(".")
                for i in range(len(parts), 0, -1):
                    dep = self.find_module(".".join(parts[:i]), rel)
                    if dep is not None:
                        if dep != rel:
                            out.add(dep)
                        break
            if out:
                self.m.deps[rel] = sorted(out)

    # -- scope -------------------------------------------------------------------------------
    def _unit(self, rel: str) -> str:
        """The package a file belongs to: the outermost folder of its `__init__.py` chain,
        or the file itself when it is a loose script."""
        info = self.m.files[rel]
        depth = info.module.count(".") + (1 if info.is_package else 0)
        if depth == 0:
            return rel
        parts = rel.split("/")[:-1]
        return "/".join(parts[: len(parts) - depth + 1])

    def _scope(self) -> None:
        m = self.m
        if m.declared_mode:
            for rel, info in m.files.items():
                if m.declared_scope(info.tags):
                    m.scope[rel] = m.declared_scope(info.tags)
            return
        scope_tags = set(SCOPE_TAGS)
        units: dict[str, set[str]] = {}
        unit_of = {rel: self._unit(rel) for rel in m.files}
        for rel, info in m.files.items():
            units.setdefault(unit_of[rel], set()).update(info.tags & scope_tags)
        by_folder: dict[str, set[str]] = {}  # dependency tags that apply in a folder
        for rel, info in m.files.items():
            backend = _backend_specific(rel, m.files)
            if "torch" not in info.tags and units[unit_of[rel]] and not backend:
                self.package_scope[rel] = frozenset(units[unit_of[rel]])
            if "torch" not in info.tags or backend:
                continue
            folder = rel.rpartition("/")[0]
            if folder not in by_folder:
                tags: set[str] = set()
                parts = folder.split("/") if folder else []
                for i in range(len(parts) + 1):
                    tags.update(self.dependencies.get("/".join(parts[:i]), ()))
                by_folder[folder] = tags
            extra = frozenset(units[unit_of[rel]] | by_folder[folder]) - info.tags
            if extra:
                m.scope[rel] = extra

    # -- reachability --------------------------------------------------------------------------
    def find_module(self, name: str, origin: str) -> str | None:
        cands = self.by_module.get(name)
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]
        here = origin.rpartition("/")[0]
        for c in cands:
            if c.rpartition("/")[0] == here:
                return c
        return sorted(cands, key=lambda c: (c.count("/"), c))[0]

    def lookup(self, qname: str, origin: str, depth: int = 0) -> tuple[str, str] | None:
        """(file, qualname) of the definition `qname` names, following re-exports."""
        if depth > 8:
            return None
        parts = qname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            rel = self.find_module(".".join(parts[:i]), origin)
            if rel is None:
                continue
            s = self.summary(rel)
            if s is None:
                return None
            rest = parts[i:]
            qual = ".".join(rest)
            if qual in s["defs"] or (len(rest) == 1 and rest[0] in s["classes"]):
                return rel, qual
            head = rest[0]
            if head in s["imports"]:
                return self.lookup(".".join([s["imports"][head], *rest[1:]]), rel, depth + 1)
            for star in s["star"]:
                found = self.lookup(f"{star}.{qual}", rel, depth + 1)
                if found:
                    return found
            return None
        return None

    def method(self, rel: str, cls: str, name: str, depth: int = 0, skip_own: bool = False) -> tuple[str, str] | None:
        s = self.summary(rel)
        if s is None or cls not in s["classes"] or depth > 6:
            return None
        info = s["classes"][cls]
        if not skip_own and name in info["methods"]:
            return rel, f"{cls}.{name}"
        for base in info["bases"]:
            found = self.lookup(base, rel)
            if found and found[1] in self.summary(found[0])["classes"]:
                hit = self.method(found[0], found[1], name, depth + 1)
                if hit:
                    return hit
        return None

    def submodule(self, rel: str, cls: str, attr: str, depth: int = 0) -> str | None:
        s = self.summary(rel)
        if s is None or cls not in s["classes"] or depth > 6:
            return None
        info = s["classes"][cls]
        if attr in info["subs"]:
            return info["subs"][attr]
        for base in info["bases"]:
            found = self.lookup(base, rel)
            if found and found[1] in self.summary(found[0])["classes"]:
                hit = self.submodule(found[0], found[1], attr, depth + 1)
                if hit:
                    return hit
        return None

    def call_target(self, qclass: str, origin: str) -> tuple[str, str] | None:
        found = self.lookup(qclass, origin)
        if found is None or found[1] not in self.summary(found[0])["classes"]:
            return None
        return self.method(found[0], found[1], "forward") or self.method(found[0], found[1], "__call__")

    def edges(self, rel: str, refs: list[list], cls: str | None) -> list[tuple[tuple[str, str], frozenset[str], bool, str]]:
        """((file, qualname), parameters static at the call, a call form the file's own
        TracedMap does not follow, the method name when the callee was matched by that name
        alone, else "") for each callee found."""
        out = []
        for ref, static_pos, static_kws in refs:
            kind, _, what = ref.partition(":")
            if kind == "M":
                targets = self.methods_named(what)
            else:
                target = self._edge_target(rel, kind, what, cls)
                targets = [target[0]] if target else []
                kind = target[1] if target else kind
            bound = kind in ("S", "U", "C", "sub", "M")  # the callee's first parameter is self
            overriding = self.overrides(targets[0]) if kind == "S" and targets else []
            for target in targets + overriding:
                params = self.summary(target[0])["defs"][target[1]]["params"]
                if bound and params and params[0] in ("self", "cls"):
                    params = params[1:]
                static = {params[i] for i in static_pos if i < len(params)} | set(static_kws)
                out.append((target, frozenset(static), kind in _UNFOLLOWED or target in overriding, what if kind == "M" else ""))
        return out

    def overrides(self, target: tuple[str, str]) -> list[tuple[str, str]]:
        """The methods of the project's subclasses of `C` that override `C.m` (`target`):
        `self.m(...)` in C's code runs the subclass's `m` for an object of the subclass
        (a decoder whose base's forward calls `self.extract_features_scriptable`). Looked up
        among the classes of the files that hold per-step code in scope."""
        rel, qual = target
        cls, _, name = qual.partition(".")
        if not name or "." in name:
            return []
        if self._by_any_method is None:
            index: dict[str, list[tuple[str, str]]] = {}
            for frel, cname, c in self._torch_classes_in_scope():
                for meth in c["methods"]:
                    index.setdefault(meth, []).append((frel, cname))
            self._by_any_method = index
        return [(crel, f"{cname}.{name}") for crel, cname in self._by_any_method.get(name, ())
                if (crel, cname) != (rel, cls) and self._descends(crel, cname, (rel, cls))]

    def _torch_classes_in_scope(self):
        """(file, class name, class summary) of every non-Flax class with a base in the files
        that hold per-step code in scope, files in sorted order: where methods are looked up
        by name (`overrides`, `methods_named`)."""
        for rel in sorted(self.m.files):
            info = self.m.files[rel]
            if not info.hint or not (self.m.scope.get(rel) or info.tags & set(SCOPE_TAGS)):
                continue
            s = self.summary(rel)
            for cname, c in (s["classes"] if s else {}).items():
                if not c["flax"] and c["bases"]:
                    yield rel, cname, c

    def _descends(self, rel: str, cls: str, ancestor: tuple[str, str], depth: int = 0) -> bool:
        """Is the class `cls` of file `rel` a subclass of `ancestor` (file, class name)?"""
        key = (rel, cls, ancestor)
        if key in self._descent:
            return self._descent[key]
        self._descent[key] = False
        s = self.summary(rel)
        found = False
        if s is not None and cls in s["classes"] and depth < 6:
            for base in s["classes"][cls]["bases"]:
                hit = self.lookup(base, rel)
                if hit is not None and (hit == ancestor or (hit[1] in (self.summary(hit[0]) or {}).get("classes", {})
                                                             and self._descends(hit[0], hit[1], ancestor, depth + 1))):
                    found = True
                    break
        self._descent[key] = found
        return found

    def _edge_target(self, rel: str, kind: str, what: str, cls: str | None):
        """(target, kind) of one ref that names a single callee; "sub" for a submodule's forward."""
        target = None
        if kind == "Q":
            target = self.lookup(what, rel)
            if target is not None and target[1] in self.summary(target[0])["classes"]:
                target = None  # constructing an object runs __init__, not the model
        elif kind == "S" and cls:
            target = self.method(rel, cls, what)
            if target is None:
                sub = self.submodule(rel, cls, what)
                if sub:
                    target = self.call_target(sub, rel)
                    kind = "sub"
        elif kind == "U" and cls:
            target = self.method(rel, cls, what, skip_own=True)
        elif kind == "C":
            target = self.call_target(what, rel)
        return (target, kind) if target is not None else None

    def methods_named(self, attr: str) -> list[tuple[str, str]]:
        """The methods called `attr` of the torch model classes (a base and a forward) in the
        files that hold per-step code in scope: what `model.attr(...)` on an object of
        unknown class can run. A name more than _MAX_BY_NAME classes define says nothing."""
        if self._by_method is None:
            index: dict[str, list[tuple[str, str]]] = {}
            for rel, cname, c in self._torch_classes_in_scope():
                if "forward" in c["methods"]:
                    for meth in c["methods"]:
                        index.setdefault(meth, []).append((rel, f"{cname}.{meth}"))
            self._by_method = index
        found = self._by_method.get(attr, [])
        return found if len(found) <= _MAX_BY_NAME else []

    def _patch_runs_per_step(self, ident: str, target: tuple[str, str]) -> bool:
        """A function patched over a library attribute (`_Summarizer._patches`) runs in the
        library's per-step code when the attribute has a per-step name (`forward`,
        `_generate_speech`) or the function takes a tensor (`_mask_hidden_states(self,
        hidden_states: torch.FloatTensor)`); a patched `__init__`, `_prepare_*` or config check
        (`setup_name`) does not."""
        if not (self.m.scope.get(target[0]) or self.m.files[target[0]].tags & set(SCOPE_TAGS)):
            return False  # the patched function's own file is out of scope: not lazy code
        attr = ident.split("`")[1] if ident.count("`") == 2 else ""
        if _jax_tables().per_step_attribute(attr):
            return True
        if _jax_tables().setup_name(attr):
            return False
        s = self.summary(target[0])
        return bool(s and s["defs"].get(target[1], {}).get("tensor"))

    def _reach(self) -> None:
        """Breadth first from the entry points; a function keeps the first entry point that
        reaches it (files and entries in sorted order), and its static parameters are those
        static at every call seen from traced code."""
        m = self.m
        # (target, parameters static at the call, entry point, the path crossed a file,
        # the first link matched by a method name alone on the way: (name, its caller), or ())
        queue: list[tuple[tuple[str, str], frozenset[str], Reach, bool, tuple]] = []
        for rel in sorted(m.files):
            hint = m.files[rel].hint
            in_scope = bool(m.scope.get(rel) or m.files[rel].tags & set(SCOPE_TAGS))
            patching = rel in self.package_scope  # may patch its package's functions (`_patches`)
            if not hint or (hint == 1 and not in_scope and not patching):
                continue
            s = self.summary(rel)
            if s is None:
                continue
            for ident, kind, why, line, refs in s["entries"]:
                if kind == "torch" and why.startswith(_PER_STEP_WHY) and not in_scope and not (patching and why.startswith("patched over ")):
                    continue  # per-step torch code runs lazily only in an XLA/HPU scope
                reach = Reach(ident if "@" not in ident else why, rel, kind)
                if refs is None:
                    queue.append(((rel, ident), frozenset(), reach, False, ()))
                else:
                    info = s["defs"].get(ident.split("@")[0]) if "@" in ident else None
                    for target, static, unfollowed, by_name in self.edges(rel, refs, info["cls"] if info else None):
                        if why.startswith("patched over ") and not self._patch_runs_per_step(ident, target):
                            continue
                        link = (by_name, f"{reach.entry if reach.entry.startswith('the ') else '`' + reach.entry + '`'} in {rel}") if by_name else ()
                        queue.append((target, static, reach, target[0] != rel or unfollowed, link))
        # `crossed`: the call into the target comes from another file, or has a form a file's
        # own TracedMap does not follow (super().m, a submodule's forward, Block(...)(x)).
        # Only those functions are recorded: from them, each file's TracedMap follows its
        # internal calls with the values they pass (more precise than assuming every
        # parameter traced).
        # Chains of resolved calls are walked first; links matched by a method name alone
        # (`via`) only after them, so a function keeps a resolved chain whenever one reaches
        # it, and one reached by name only says so instead of naming an entry point.
        first: dict[tuple[str, str], tuple[Reach, tuple]] = {}
        static_at: dict[tuple[str, str], frozenset[str]] = {}
        crossed_at: dict[tuple[str, str], bool] = {}
        resolved = [q for q in queue if not q[4]]
        by_name = [q for q in queue if q[4]]
        i = j = 0
        while i < len(resolved) or j < len(by_name):
            if i < len(resolved):
                target, static, reach, crossed, via = resolved[i]
                i += 1
            else:
                target, static, reach, crossed, via = by_name[j]
                j += 1
            if crossed:
                static_at[target] = static_at[target] & static if target in static_at else static
            crossed_at[target] = crossed_at.get(target, False) or crossed
            if target in first:
                continue
            first[target] = (reach, via)
            rel, qual = target
            s = self.summary(rel)
            if s is None or qual not in s["defs"]:
                continue
            d = s["defs"][qual]
            if d["cls"] and s["classes"].get(d["cls"], {}).get("host"):
                del first[target]  # a method of a compiled graph's host-side driver (`drives_compiled_graph`): not traced code
                continue
            for callee, callee_static, unfollowed, link in self.edges(rel, d["calls"], d["cls"]):
                item = (callee, callee_static, reach, callee[0] != rel or unfollowed, via or ((link, f"`{qual}` in {rel}") if link else ()))
                (by_name if item[4] else resolved).append(item)
        for (rel, qual), (reach, via) in sorted(first.items()):
            s = self.summary(rel)
            if crossed_at[(rel, qual)] and s is not None and qual in s["defs"]:
                m.reached.setdefault(rel, {})[qual] = Reach(reach.entry, reach.file, reach.kind, tuple(sorted(static_at[(rel, qual)])), *via)


# ---- the session's model -----------------------------------------------------------------

def scan_model(settings, paths: list[Path] | None = None, tree: str | None = None) -> ProjectModel | None:
    """The running scan's project model (built on first use for the scan's files; `tree`:
    the resolved scan root of the first of them, which bounds its root)."""
    from portlint.core import session

    s = session.current(settings)
    if paths is None or not set(settings.targets) & MODEL_TARGETS:
        return s.fact("python-project", lambda: None)  # a scan for ROCm alone has no use for it

    def build_or_none() -> ProjectModel | None:
        try:
            return ProjectModel.for_scan(settings, paths, tree)
        except Exception as exc:  # a bug here must not take the scan down: files are then scanned alone
            s.fact("python-project-error", lambda: f"{type(exc).__name__}: {exc}")
            return None

    return s.fact("python-project", build_or_none)


def model_seed(settings) -> ProjectModel | None:
    """The running scan's model, if one was built, as a copy a worker process can take over
    (`adopt_model`) instead of building its own: without the parsed trees (each worker
    parses what it scans) and the lookup memos."""
    from dataclasses import replace

    from portlint.core import session

    model = session.current(settings)._facts.get("python-project")
    return replace(model, trees={}, _resolver=None, _rels={}) if model is not None else None


def adopt_model(settings, model: ProjectModel) -> None:
    """Make `model` the project model of this process's scan with `settings`."""
    from portlint.core import session

    session.current(settings).fact("python-project", lambda: model)


def model_error(settings) -> str | None:
    """Why the scan's project model could not be built (None when it was, or was not asked for)."""
    from portlint.core import session

    return session.current(settings).fact("python-project-error", lambda: None)


def file_model(ctx) -> tuple[ProjectModel | None, str | None]:
    """(model, the file's path in it) for a FileContext, or (None, None) outside a model."""
    real = getattr(ctx, "real_path", None)
    if real is None or ctx.session is None:
        return None, None
    model = scan_model(ctx.settings, [Path(real)], getattr(ctx, "scan_root", None))
    if model is None:
        return None, None
    return model, model.rel_of(real)


_BUILDING: set[tuple[int, str]] = set()


def foreign_traced_map(ctx, rel: str):
    """The TracedMap of another file of the project, for the summaries of its functions
    (does `helpers.width(x)` return a static value?): built once per scan, None when the
    file cannot be read or parsed, or while it is being built (a cycle of imports)."""
    from portlint.analyses.python.traced import TracedMap

    model, _ = file_model(ctx)
    if model is None or rel not in model.files:
        return None
    key = (id(ctx.session), rel)
    if key in _BUILDING:
        return None

    def build():
        from portlint.index.context import FileContext
        from portlint.discovery.languages import python_tags

        path = model.root / rel
        try:
            data = read_limited(path, ctx.settings.max_file_size)
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != model.files[rel].sha:
            return None
        fctx = FileContext(rel, data, "python", python_tags(data) | model.extra_tags(rel), ctx.settings)
        fctx.real_path = path  # type: ignore[attr-defined]
        fctx.scan_root = getattr(ctx, "scan_root", None)  # type: ignore[attr-defined]
        fctx.session = ctx.session
        try:
            fctx.module
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        _BUILDING.add(key)
        try:
            return TracedMap(fctx)
        finally:
            _BUILDING.discard(key)

    return ctx.session.fact(("foreign-traced-map", rel), build)


# words a detector's byte pre-filter looks for, standing in for the tags the model adds
TAG_TOKENS = {"torch_xla": (b"xla",), "gaudi": (b"hpu",), "jax": (b"jax",)}


def module_identity(ctx) -> tuple[str, bool]:
    """(dotted module name, is a package) of the file, "" when the model does not know it."""
    model, rel = file_model(ctx)
    if model is None or rel is None:
        return "", False
    info = model.files[rel]
    return info.module, info.is_package
