"""XLA-family tracing hazards (PTL8xx): code that JAX, torch_xla/Neuron, Gaudi lazy mode or
torch.compile trace into a graph, and the Python that breaks or slows that graph.

All rules share one analysis per file (`hazards`, computed once with `ctx.fact`): the traced
regions of `portlint.analyses.python.traced`, then one walk over each region. Files that import
neither JAX nor target xla/hpu cost a tag check and nothing else."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field

from portlint.rewrites import python as rewrites
from portlint.analyses.python.guards import guard_map
from portlint.analyses.python.traced import Region, TracedMap, dotted, params_of, traced_map
from portlint.analyses.python.traced_regions import annotated_tensor
from portlint.analyses.python.traced_values import RETURNS, host_op, returns_host_tensors, to_cpu_args
from portlint.core.registry import detector
from portlint.frontends.python.astindex import walk

TOKENS = ("jax", "flax", "optax", "equinox", "haiku", "xla", "hpu", "habana", "neuron", "htcore")
RELEVANT_TAGS = {"jax", "torch_xla", "gaudi"}

JAX_ERROR = {"tpu": "error"}
JAX_NOTE = {"tpu": "note"}
JAX_WARNING = {"tpu": "warning"}


@dataclass
class Hazard:
    where: object
    fields: dict
    targets: dict
    suggestion: str | None = None
    fix: object = None
    confidence: str | None = None


@dataclass
class Hazards:
    by_rule: dict[str, list[Hazard]] = field(default_factory=dict)

    def add(self, rule: str, where, targets, suggestion=None, fix=None, confidence=None, **fields) -> None:
        self.by_rule.setdefault(rule, []).append(Hazard(where, fields, dict(targets), suggestion, fix, confidence))


def torch_targets(tags) -> dict[str, str]:
    out = {}
    if "torch_xla" in tags:
        out.update(tpu="warning", trainium="warning")
    if "gaudi" in tags:
        out["gaudi"] = "warning"
    return out


# ---- the analysis ---------------------------------------------------------------------------

_SYNC_METHODS_JAX = {"item", "tolist"}
_SYNC_METHODS_TORCH = {"item", "tolist", "numpy", "cpu"}
_SYNC_BUILTINS = {"int", "float", "bool", "complex"}
_NUMPY_STATIC = {"shape", "ndim", "size", "dtype", "finfo", "iinfo", "issubdtype", "result_type", "isscalar", "promote_types"}
# numpy's `fromnumeric` wrappers call the array's own method (x.mean() ...), which works on a
# tracer: np.mean(tracer) runs under jax.jit (measured with jax 0.10.2); the rest convert.
_NUMPY_DELEGATES = {
    "mean", "sum", "argmax", "argmin", "any", "all", "max", "min", "amax", "amin", "prod", "std",
    "var", "round", "around", "reshape", "transpose", "squeeze", "cumsum", "cumprod", "swapaxes",
    "repeat", "take", "trace", "choose", "searchsorted", "diagonal", "ptp",
}
_JNP_DYNAMIC = {"nonzero", "argwhere", "flatnonzero", "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "compress", "extract"}
_TORCH_DYNAMIC = {"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"}
_BOOL_FUNCS = {"isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor", "isclose", "greater", "less", "equal", "not_equal", "greater_equal", "less_equal", "isneginf", "isposinf", "signbit"}
_MASK_NAME = re.compile(r"(^|_)(masks?|is_\w+)($|_)|masks?$", re.I)
_LOG_METHODS = {"info", "debug", "warning", "warn", "error", "log", "critical", "exception"}
# metric writers that turn their value into a host number (TensorBoard, MLflow, W&B, trackers)
_METRIC_METHODS = {"add_scalar", "add_scalars", "add_histogram", "log_metric", "log_metrics"}
_METRIC_CALLS = {"wandb.log", "mlflow.log_metric", "mlflow.log_metrics"}
# Python's own comparisons of array values: max()/min() call bool() on `a > b`
_COMPARING_BUILTINS = {"max", "min"}
# torch calls that answer with a Python bool (the comparison runs on the device, the answer is read)
_TORCH_BOOL_ANSWERS = {"torch.equal", "torch.allclose", "torch.is_nonzero"}
# torch reductions: their result is a (0-d) tensor, never a Python number
_TORCH_REDUCTIONS = {"max", "min", "amax", "amin", "sum", "mean", "prod", "any", "all", "count_nonzero", "norm", "argmax", "argmin"}
# results of these are Python values (lengths, types, strings), not tensors
_HOST_FUNCS = {"len", "int", "float", "bool", "str", "repr", "type", "isinstance", "hasattr", "getattr", "range", "list", "tuple",
               "dict", "set", "sorted", "print", "zip", "enumerate", "reversed", "id", "callable", "round", "abs", "sum", "max", "min"}
_HOST_RESULTS = {"item", "tolist", "numpy", "dim", "ndimension", "numel", "nelement", "size", "is_floating_point", "element_size",
                 "is_contiguous", "items", "keys", "values", "get", "format", "join", "split", "startswith", "endswith"}
_HOST_ATTRS = {"shape", "ndim", "dtype", "device", "is_cuda", "requires_grad", "layout", "training", "names", "itemsize", "nbytes"}
_INTERVAL_NAME = re.compile(r"log|print|verbose|debug|report", re.I)
# flags and probes that are true only while a model is exported (ONNX, TorchScript tracing):
# the code under them never runs in a training or inference step on the device
_EXPORT_FLAG = re.compile(r"onnx|^(is_)?export(ing)?$|_export(ing)?$|^is_tracing$|^is_scripting$", re.I)
# methods that hand a value to a host-side sink (a streamer, a file, a queue)
_SINK_METHODS = {"put", "write", "writelines"}
# element tests for NaN/inf: an `if` on one guards a repair path for bad values
_NONFINITE_TESTS = {"isnan", "isinf", "isfinite", "isposinf", "isneginf"}
# tokenizer methods that turn token ids into text (on the host)
_DECODE_METHODS = {"decode", "batch_decode", "convert_ids_to_tokens"}
# methods that put a value into a container (the container then holds it)
_CONTAINER_ADDS = {"append", "extend", "insert", "add"}
# Python builtins whose result holds the elements of their argument (a sum of tensors is a tensor)
_ELEMENT_FUNCS = {"zip", "enumerate", "reversed", "sum", "max", "min", "sorted", "list", "tuple"}
# methods that exist on torch tensors and not on Python numbers, numpy arrays or containers
_TORCH_ONLY_METHODS = {"detach", "float", "half", "bfloat16", "clamp", "clamp_min", "clamp_max",
                       "masked_fill", "masked_select", "isnan", "isinf", "isfinite", "eq", "ne", "gt", "lt", "ge", "le",
                       "unsqueeze", "contiguous", "type_as", "softmax", "log_softmax", "cuda", "nanmean", "nansum"}


# jax's errors for a traced value used as a Python one (a `try` that catches them handles it)
_TRACER_ERRORS = {"ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError", "TracerArrayConversionError"}
# the node classes `_Walker.visit` looks at (every other node it passes over)
_VISITED = (ast.If, ast.While, ast.IfExp, ast.Assert, ast.BoolOp, ast.UnaryOp, ast.For, ast.comprehension, ast.Call, ast.Subscript)


def _applied(fix) -> bool:
    """A rewrite --fix --unsafe-fixes writes (not a NoFix, not a display-only loop rewrite)."""
    return isinstance(fix, rewrites.Fix) and fix.applicability != "display-only"


class _Walker:
    def __init__(self, ctx, tm: TracedMap, out: Hazards):
        self.ctx = ctx
        self.tm = tm
        self.out = out
        self.canon = tm.imports.canonical
        self.ttargets = torch_targets(ctx.tags)
        self.jnames = rewrites.Names(tm.imports, "jax")
        self.tnames = rewrites.Names(tm.imports, "torch")
        self.bool_names: dict[ast.AST, set[str]] = {}
        self.bindings: dict[ast.AST, dict[str, list[ast.AST]]] = {}
        self.assigned: dict[ast.AST, dict[str, list[tuple[int, int, ast.Assign]]]] = {}
        self.plain: dict[ast.AST, list[ast.Name]] = {}  # region -> the names it binds whole (`_plain_names`)
        self.rewritten: dict[tuple[ast.AST, ast.AST], object] = {}  # (statement, region node) -> Fix | NoFix
        self.buffers: dict[ast.AST, set[str]] = {}

    # helpers
    def targets(self, region: Region, jax_level=JAX_ERROR):
        return dict(jax_level) if region.kind == "jax" else dict(self.ttargets)

    def traced(self, e, region) -> bool:
        return self.tm.is_traced(e, region)

    def confidence(self, region: Region, certain: bool = True) -> str | None:
        """"medium" for a value the model cannot prove traced: a region reached only by
        assumption from another file, or a receiver that is a tensor by its form alone."""
        return None if certain and region.certainty != "unknown" else "medium"

    def _bindings(self, region) -> dict[str, list[ast.AST]]:
        """name -> the expressions it is bound from inside the region (for/comprehension
        targets map to their iterable)."""
        out = self.bindings.get(region.node)
        if out is None:
            out = {}
            for n in self.tm.region_nodes(region):
                if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and n.value is not None:
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(n.value, (ast.Tuple, ast.List)) and len(t.elts) == len(n.value.elts):
                            for te, ve in zip(t.elts, n.value.elts):
                                if isinstance(te, ast.Name):
                                    out.setdefault(te.id, []).append(ve)
                        elif isinstance(t, ast.Name):
                            out.setdefault(t.id, []).append(n.value)
                        elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(n.value, ast.Call):
                            _bind_unpacked_call(out, t, n.value)
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                            out.setdefault(t.value.id, []).append(n.value)  # `metrics["loss"] = loss.mean()`
                        for attr in _self_attributes(t):
                            out.setdefault(attr, []).append(n.value)  # `y_q, self.scale = quantize(y)`
                elif isinstance(n, (ast.For, ast.comprehension)):
                    for t in walk(n.target):
                        if isinstance(t, ast.Name):
                            out.setdefault(t.id, []).append(n.iter)
                elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CONTAINER_ADDS
                      and isinstance(n.func.value, ast.Name) and n.args):
                    out.setdefault(n.func.value.id, []).append(n.args[-1])  # `losses.append(loss)`
            self.bindings[region.node] = out
        return out

    def _buffers(self, region) -> set[str]:
        """Names the enclosing class registers as buffers (`self.register_buffer("step", ...)`)."""
        cls = self.tm.parents.get(self.tm.enclosing_function(region.node) or region.node)
        while cls is not None and not isinstance(cls, ast.ClassDef):
            cls = self.tm.parents.get(cls)
        if cls is None:
            return set()
        out = self.buffers.get(cls)
        if out is None:
            out = {c.args[0].value for c in walk(cls) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                   and c.func.attr == "register_buffer" and c.args and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str)}
            self.buffers[cls] = out
        return out

    def maybe_tensor(self, e, region, seen=None) -> bool:
        """torch: is `e` traced, or computed from a traced value through calls the value model
        does not follow (`accelerator.gather(loss).mean()`, `nanmin(t)`, a name bound from
        `zip(traced_a, traced_b)`), or a registered buffer? Host values (`.item()`, `int()`,
        `len()`, shapes) are not. Used only for forms that exist on tensors alone (`.item()`,
        `.nonzero()`, `if t.any():`), reported at medium confidence when not traced."""
        if self.traced(e, region):
            return True
        seen = set() if seen is None else seen
        if isinstance(e, ast.Name):
            if e.id in seen:
                return False
            seen.add(e.id)
            return any(self.maybe_tensor(v, region, seen) for v in self._bindings(region).get(e.id, ()))
        if isinstance(e, ast.Attribute):
            if e.attr in _HOST_ATTRS:
                return False
            if isinstance(e.value, ast.Name) and e.value.id == "self":
                key = f"self.{e.attr}"  # assigned in the region from a tensor (`_self_attributes`)
                if key not in seen and key in self._bindings(region):
                    seen.add(key)
                    if any(self.maybe_tensor(v, region, seen) for v in self._bindings(region)[key]):
                        return True
                return e.attr in self._buffers(region)
            return self.maybe_tensor(e.value, region, seen)
        if isinstance(e, ast.Subscript):
            return self.maybe_tensor(e.value, region, seen)
        if isinstance(e, ast.BinOp):
            return self.maybe_tensor(e.left, region, seen) or self.maybe_tensor(e.right, region, seen)
        if isinstance(e, ast.UnaryOp):
            return self.maybe_tensor(e.operand, region, seen)
        if isinstance(e, (ast.IfExp, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return any(self.maybe_tensor(part, region, seen) for part in _produced_values(e))
        if isinstance(e, ast.Compare):
            # `targets[:, 1:] != ignore_index`: an elementwise comparison of a tensor is a tensor
            return _compares_values(e) and any(self.maybe_tensor(c, region, seen) for c in (e.left, *e.comparators))
        if isinstance(e, ast.Call):
            func = e.func
            name = self.canon(func) or ""
            if isinstance(func, ast.Name) and func.id in _HOST_FUNCS:
                # zip/enumerate pass the elements on; Python's sum/max/min of tensors is a tensor
                return func.id in _ELEMENT_FUNCS and any(self.maybe_tensor(a, region, seen) for a in e.args)
            if isinstance(func, ast.Attribute) and func.attr in ("values", "items") and not e.args:
                return self.maybe_tensor(func.value, region, seen)  # the values of a dict of tensors
            if isinstance(func, ast.Attribute) and func.attr in _HOST_RESULTS:
                return False
            if _to_host(e):
                return False  # `t.cpu()`, `t.to("cpu")`: a tensor in host memory (the copy is PTL803's)
            if region.kind == "torch" and (returns_host_tensors(e) or (name.startswith("torch.") and self.host_created(e, region))
                                           or (isinstance(func, ast.Attribute) and not _moves_to_device(e, self.canon) and self.host_created(func.value, region))):
                return False  # made on the host (`tokenizer(..., return_tensors="pt")`, `torch.tensor(ids)`), or a method of one
            if isinstance(func, ast.Attribute) and func.attr in _TORCH_ONLY_METHODS and not name.startswith(("numpy.", "jax.")):
                return True  # only a tensor has .detach() / .float() / .clamp(): the result is one
            if _moves_to_device(e, self.canon):
                return True  # `.to(ids.device)`: a tensor on the accelerator
            if name.startswith(("numpy.", "math.", "os.", "time.", "random.", "logging.", "json.")):
                return False
            if isinstance(func, ast.Attribute) and self.maybe_tensor(func.value, region, seen):
                return True
            if self.returns_tensor(e):
                return True  # `dist_utils.clip_grad_norm_(...)` is declared `-> torch.Tensor`
            return any(self.maybe_tensor(a, region, seen) for a in e.args) or any(self.maybe_tensor(k.value, region, seen) for k in e.keywords if k.arg is not None)
        return False

    def returns_tensor(self, call: ast.Call) -> bool:
        """Is `call` a call of a project function (this file's, or another file's through the
        project model) whose return annotation is a tensor (`-> torch.Tensor`)?"""
        func = call.func
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return False
        fn = self.tm.resolve(func, call)
        if fn is None:
            fn = self.tm._foreign_def(func)[1]
        return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and _torch_tensor_annotation(fn.returns)

    def host_rebound(self, test, region) -> bool:
        """Every traced name `test` reads was last assigned (before it, in the region) a host
        value: `n = gather(n).sum().item()` then `if n > 0:` compares Python numbers."""
        names = [n for n in walk(test) if isinstance(n, ast.Name) and n.id in region.traced]
        if not names:
            return False
        line = getattr(test, "lineno", 0)
        assigned = self._assignments(region)
        for name in names:
            lines = assigned.get(name.id)
            k = bisect.bisect_left(lines, (line,)) if lines else 0
            if not k or not _is_host_read(lines[k - 1][2].value):
                return False
        return True

    def _assignments(self, region) -> dict[str, list[tuple[int, int, ast.Assign]]]:
        """name -> the region's plain `name = ...` assignments as (line, -order, node), by line:
        one walk of the region, kept for every `if` of it (was a walk per `if` and name)."""
        found = self.assigned.get(region.node)
        if found is None:
            found = {}
            for i, n in enumerate(self.tm.region_nodes(region)):
                if isinstance(n, ast.Assign):
                    for tgt in n.targets:
                        if isinstance(tgt, ast.Name):
                            # -i: of two on one line the walk's first wins, as before
                            found.setdefault(tgt.id, []).append((n.lineno, -i, n))
            for entries in found.values():
                entries.sort(key=lambda e: (e[0], e[1]))
            self.assigned[region.node] = found
        return found

    def host_created(self, e, region, seen=None) -> bool:
        """A tensor made on the CPU: a torch factory with no `device=` and no tensor
        argument (`torch.randint(0, n, (1,))`), a torch op over such tensors
        (`torch.argsort(torch.tensor(order))`, `host_op`), the batch of a tokenizer or
        processor called with `return_tensors="pt"`, possibly indexed or reduced, or a name
        every binding of which in the region is one of those."""
        while isinstance(e, ast.Subscript) or (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and not (self.canon(e.func) or "").startswith("torch.")
                                               and not returns_host_tensors(e)):
            if isinstance(e, ast.Call) and _moves_to_device(e, self.canon):
                return False  # `torch.tensor(flag).to(ids.device)`: made on the host, then moved
            e = e.value if isinstance(e, ast.Subscript) else e.func.value
        if "set_default_device" in self.ctx.text:
            return False  # factories without a device make tensors on the chosen default device
        if isinstance(e, ast.Name):
            seen = set() if seen is None else seen
            if e.id in seen:
                return False
            seen.add(e.id)
            values = self._bindings(region).get(e.id, ())
            return bool(values) and all(self.host_created(v, region, seen) for v in values)
        if not isinstance(e, ast.Call):
            return False
        if returns_host_tensors(e):
            return True
        name = self.canon(e.func) or ""
        if name.startswith("torch.") and name in RETURNS.factories:
            return not any(k.arg in ("device", None) for k in e.keywords) and not any(self.maybe_tensor(a, region) for a in e.args)
        return host_op(name, e, lambda a: self.host_created(a, region, seen))

    def generated(self, e, region) -> bool:
        """The finished output of a `.generate(...)` call, or a value computed from it alone
        (with Python values and tensors made from them): `completion_ids =
        prompt_completion_ids[:, prompt_length:]`, an EOS mask built from it. generate() has
        already read every token to decide when to stop; copying its ids to the host to
        decode them or turn them into Python lists runs no step graph (trl's
        `_generate_single_turn`, open_clip's and MiniCPM's decode helpers). A model call on
        them, a loss or logits is no such value."""
        return self._from_generate(e, region, frozenset()) == 2

    def _from_generate(self, e, region, seen) -> int:
        """0: not; 1: a Python value or a tensor made from Python values; 2: and computed from
        a generate() result. `seen`: the names being followed (a path)."""
        if isinstance(e, ast.Constant):
            return 1
        if isinstance(e, ast.Name):
            if e.id in seen:
                return 0
            values = self._bindings(region).get(e.id, ())
            if not values or not any(n.id == e.id for n in self._plain_names(region)):
                return 0  # a parameter or a name only filled in by `name[k] = ...`: the caller's value
            kinds = [self._from_generate(v, region, seen | {e.id}) for v in values]
            return 0 if 0 in kinds else max(kinds)
        if isinstance(e, ast.Attribute):
            # a size is a Python value, whatever it is read from; a field of generate()'s
            # output object (`.sequences`) is part of that output
            return 1 if e.attr in ("shape", "ndim") else self._from_generate(e.value, region, seen)
        if isinstance(e, (ast.Subscript, ast.BinOp, ast.Compare, ast.UnaryOp, ast.Slice, ast.Tuple, ast.List, ast.keyword)):
            parts = [c for c in ast.iter_child_nodes(e) if not isinstance(c, (ast.operator, ast.cmpop, ast.unaryop, ast.expr_context))]
            return self._all_from_generate(parts, region, seen) if parts else 1  # `[:, a:]`'s bare `:` is no value
        if isinstance(e, (ast.ListComp, ast.GeneratorExp)):
            return self._from_generate(e.elt, region, seen)
        if isinstance(e, ast.Call):
            func = e.func
            name = self.canon(func) or ""
            args = [*e.args, *(k.value for k in e.keywords)]
            if isinstance(func, ast.Attribute) and func.attr in ("generate", "generate_batch"):
                return 2
            if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist") and not e.args:
                return 1  # read to the host already: a Python value
            if isinstance(func, ast.Attribute) and func.attr in ("size", "dim", "numel"):
                return 1  # a size
            if isinstance(func, ast.Name) and func.id in ("len", "int", "range"):
                return 1 if self._all_from_generate(args, region, seen) else 0
            if name.startswith("torch."):
                kind = self._all_from_generate(args, region, seen)
                if not kind and name in RETURNS.factories and not any(self.maybe_tensor(a, region) for a in args):
                    return 1  # made from Python values, wherever `device=` puts it
                return kind
            if isinstance(func, ast.Attribute):  # a tensor method of one (`.size(1)`, `.bool()`, `.int().argmax(dim=1)`)
                return self._all_from_generate([func.value, *args], region, seen)
        return 0

    def _all_from_generate(self, parts, region, seen) -> int:
        kinds = [self._from_generate(p, region, seen) for p in parts]
        return 0 if not kinds or 0 in kinds else max(kinds)

    def _plain_names(self, region) -> list[ast.Name]:
        """The names a region binds by `name = ...` (or as a for / comprehension target)."""
        found = self.plain.get(region.node)
        if found is None:
            found = self.plain[region.node] = [t for n in self.tm.region_nodes(region) if isinstance(n, (ast.Assign, ast.For, ast.comprehension))
                                               for tgt in (n.targets if isinstance(n, ast.Assign) else [n.target]) for t in walk(tgt)
                                               if isinstance(t, ast.Name)]
        return found

    def unambiguous_tensor(self, receiver, region) -> tuple[bool, str | None]:
        """(report?, confidence) for a tensor-only form on `receiver`: high when traced in a
        region this file proves, medium when only `maybe_tensor` says so (torch)."""
        if self.traced(receiver, region):
            return True, self.confidence(region)
        if region.kind == "torch" and self.maybe_tensor(receiver, region):
            return True, "medium"
        return False, None

    def under_interval(self, node, region: Region) -> bool:
        """Inside `if step % N == 0:` (or a logging flag) within a torch step: runs every N steps."""
        child, p = node, self.tm.parents.get(node)
        while p is not None and p is not region.node:
            if isinstance(p, ast.If) and child is not p.test:
                test = p.test
                if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in walk(test)):
                    return True
                if any(isinstance(n, (ast.Name, ast.Attribute)) and _INTERVAL_NAME.search(dotted(n) or "") for n in walk(test)):
                    return True
            if isinstance(child, ast.stmt) and self._after_interval_exit(p, child):
                return True
            child, p = p, self.tm.parents.get(p)
        return p is not None and isinstance(child, ast.stmt) and self._after_interval_exit(p, child)

    def _after_interval_exit(self, parent, stmt) -> bool:
        """`if not should_log(step): return` earlier in the block: what follows runs only on
        logging steps."""
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if not isinstance(block, list) or stmt not in block:
                continue
            for prev in block[:block.index(stmt)]:
                if not isinstance(prev, ast.If) or prev.orelse or not prev.body:
                    continue
                if not isinstance(prev.body[-1], (ast.Return, ast.Continue, ast.Break)):
                    continue
                test = prev.test
                if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in walk(test)) or any(
                        isinstance(n, (ast.Name, ast.Attribute)) and _INTERVAL_NAME.search(dotted(n) or "") for n in walk(test)):
                    return True
        return False

    def quiet_torch(self, node, region) -> bool:
        return region.kind == "torch" and (self.under_interval(node, region) or self.export_or_sink_branch(node, region))

    def _nonfinite_test(self, test, at) -> bool:
        """A test for NaN/inf values (`torch.isnan(x).any()`, `not ok.all()` with `ok =
        x.isfinite()`): its body is a repair path that runs only on bad data, not each step."""
        for n in walk(test):
            if isinstance(n, ast.Call) and (dotted(n.func) or "").rsplit(".", 1)[-1] in _NONFINITE_TESTS:
                return True
            if isinstance(n, ast.Name):
                fn = self.tm.parents.get(at)
                while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    fn = self.tm.parents.get(fn)
                if fn is None:
                    continue
                for a in walk(fn):
                    if (isinstance(a, ast.Assign) and a.lineno < at.lineno and any(isinstance(t, ast.Name) and t.id == n.id for t in a.targets)
                            and isinstance(a.value, ast.Call) and (dotted(a.value.func) or "").rsplit(".", 1)[-1] in _NONFINITE_TESTS):
                        return True
        return False

    def export_or_sink_branch(self, node, region: Region) -> bool:
        """In the body of an `if` that runs only while the model is exported (`if
        self.onnx_trace:`, `if torch.onnx.is_in_onnx_export():`), or of an `if sink is not
        None:` whose body hands values to that optional sink (`streamer.put(t.cpu())`,
        `print(..., file=self.prediction_h)`): host output the caller asked for."""
        child, p = node, self.tm.parents.get(node)
        while p is not None and p is not region.node:
            if isinstance(p, ast.If) and child in p.body:
                if _export_test(p.test) or _sink_test(p) or self._nonfinite_test(p.test, p):
                    return True
            child, p = p, self.tm.parents.get(p)
        return False

    def boolish(self, e, region) -> bool:
        """An expression that holds a boolean mask of traced values."""
        if isinstance(e, ast.Compare):
            return not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops) and self.traced(e, region)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.Invert, ast.Not)):
            return self.boolish(e.operand, region)
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self.boolish(e.left, region) or self.boolish(e.right, region)
        if isinstance(e, ast.Call):
            name = self.canon(e.func) or ""
            last = name.rsplit(".", 1)[-1]
            if last in _BOOL_FUNCS and self.traced(e, region):
                return True
            if last in ("astype", "to", "bool") and isinstance(e.func, ast.Attribute):
                if last == "bool" or any((self.canon(a) or "").endswith(("bool", "bool_")) for a in e.args):
                    return self.traced(e.func.value, region)
        if isinstance(e, ast.Name):
            return e.id in self.bool_names.get(region.node, set()) or (_MASK_NAME.search(e.id) is not None and e.id in region.traced)
        return False

    def collect_bool_names(self, region) -> None:
        names: set[str] = set()
        self.bool_names[region.node] = names
        for _ in range(2):
            for n in self.tm.region_nodes(region):
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    if self.boolish(n.value, region):
                        names.add(n.targets[0].id)

    # the walk
    def run(self) -> None:
        for region in self.tm.regions.values():
            self.collect_bool_names(region)
            for node in self.tm.region_nodes(region):
                # the classes `visit` acts on, tested before the (pure, memoised) region lookup
                if not isinstance(node, _VISITED) or self.tm.region_of(node) is not region:
                    continue
                self.visit(node, region)

    def visit(self, node, region) -> None:
        if isinstance(node, (ast.If, ast.While)):
            self.control(node, region)
        elif isinstance(node, ast.IfExp):
            if self.host_rebound(node.test, region):
                pass
            elif self.traced(node.test, region):
                self.report_801(node.test, region, "a if cond else b", rewrites.ifexp_fix(self.ctx, node, self.names(region)))
            elif self.tensor_only_test(node.test, region):
                self.report_801(node.test, region, "a if cond else b", None, confidence="medium")
        elif isinstance(node, ast.Assert):
            if self.traced(node.test, region):
                self.report_801(node.test, region, "assert", None)
            elif self.tensor_only_test(node.test, region):
                self.report_801(node.test, region, "assert", None, confidence="medium")
        elif isinstance(node, ast.BoolOp):
            parent = self.tm.parents.get(node)
            in_test = isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert, ast.BoolOp, ast.UnaryOp)) or isinstance(parent, ast.comprehension)
            # `a and b` / `a or b` calls bool() on every operand but the last (returned as is)
            tested = node.values[:-1]
            constant_operand = any(isinstance(v, ast.Constant) for v in node.values)
            if not in_test and any(self.traced(v, region) for v in tested) and not (region.kind == "torch" and constant_operand):
                self.report_801(node, region, "and" if isinstance(node.op, ast.And) else "or", None)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            parent = self.tm.parents.get(node)
            if region.kind == "jax" and not isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert, ast.BoolOp, ast.UnaryOp)) and self.traced(node.operand, region):
                self.report_801(node, region, "not", None)
        elif isinstance(node, (ast.For, ast.comprehension)):
            self.loop_bound(node, region)
            for cond in getattr(node, "ifs", ()):
                if self.traced(cond, region):
                    self.report_801(cond, region, "if (in a comprehension)", None)
        elif isinstance(node, ast.Call):
            self.call(node, region)
        elif isinstance(node, ast.Subscript):
            self.subscript(node, region)

    def names(self, region):
        return self.jnames if region.kind == "jax" else self.tnames

    def _params(self, region) -> set[str]:
        """Parameters of the region's function (and enclosing regions), plus local aliases
        of them (`scale = state.dynamic_scale`)."""
        out: set[str] = set()
        r = region
        while r is not None:
            node = r.node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                node = self.tm.enclosing_function(node)  # a step loop: its function's parameters
            if node is not None:
                out |= {p.arg for p in params_of(node)}
            r = r.parent
        for node in self.tm.region_nodes(region):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                root = _field_root(node.value)
                if isinstance(root, ast.Name) and root.id in out:
                    out.add(node.targets[0].id)
        return out

    def bare_param_truth(self, test, region) -> bool:
        """`if flag:`, `not cfg.x`, `a if cache else b` on a parameter (or its attributes):
        a truthiness test of an argument is a Python flag, None check or container check in
        practice (an array of more than one element has no truth value even in numpy)."""
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.BoolOp):
            return all(self.bare_param_truth(v, region) or not (self.traced(v, region) or self.tensor_only_test(v, region)) for v in test.values)
        root = _field_root(test)
        return isinstance(root, ast.Name) and root.id in self._params(region)

    def report_801(self, where, region, construct, fix, suggestion=None, confidence=None) -> None:
        if self.quiet_torch(where, region) or self.bare_param_truth(where, region) or self.tm.container_truth(where, region):
            return
        if region.kind == "jax" and self._tracer_errors_handled(where):
            return  # `try: if rate == 0.0: ... except jax.errors.ConcretizationTypeError:` handles a traced value
        note, fix = (fix.note, None) if isinstance(fix, rewrites.NoFix) else ("", fix)
        confidence = confidence or self.confidence(region)
        targets = self.targets(region)
        operands = self._deciding_operands(where, region)
        if operands:
            targets = _reachable(self.ctx, operands, targets)
            if not targets:
                return  # every operand that reads the device is short-circuited away there
        if region.kind == "jax":
            effect = "raises TracerBoolConversionError / ConcretizationTypeError under jax.jit"
            default = "Select on device: jnp.where(cond, a, b), or jax.lax.cond / jax.lax.while_loop; mark true Python flags static (static_argnames)."
        else:
            effect = "forces a device-to-host sync and compiles one graph per branch taken"
            default = "Keep the choice on the device: torch.where(cond, a, b) or masking arithmetic."
        self.out.add("PTL801", where, targets, (suggestion or default) + note, fix, confidence, construct=construct, region=region.why, effect=effect)

    def _tracer_errors_handled(self, node) -> bool:
        """Inside the body of a `try` that catches the tracer errors themselves."""
        child, p = node, self.tm.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if isinstance(p, ast.Try) and child in p.body:
                for h in p.handlers:
                    kinds = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type] if h.type is not None else []
                    if any((dotted(k) or "").rsplit(".", 1)[-1] in _TRACER_ERRORS for k in kinds):
                        return True
            child, p = p, self.tm.parents.get(p)
        return False

    def tensor_only_test(self, test, region) -> bool:
        """torch: a test whose truth can only come from a tensor: `t.any()` / `t.all()`,
        `torch.equal(a, b)` / `allclose` on values `maybe_tensor` accepts."""
        if region.kind != "torch":
            return False
        identity = _identity_operands(test)  # `x is None` tests the object, whatever x holds
        metadata = _metadata_operands(test)  # `x.shape[0] != len(labels)` reads no values of x
        for n in walk(test):
            if n in metadata:
                continue
            if isinstance(n, ast.Compare) and not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in n.ops):
                if any(self.tensor_by_form(c, region) for c in (n.left, *n.comparators)):
                    return True
            if isinstance(n, ast.Name) and n not in identity and self.tensor_by_form(n, region):
                return True
            if not isinstance(n, ast.Call):
                continue
            if isinstance(n.func, ast.Attribute) and n.func.attr in ("any", "all", "equal", "allclose") and self.maybe_tensor(n.func.value, region):
                return True
            if (self.canon(n.func) or "") in _TORCH_BOOL_ANSWERS and any(self.maybe_tensor(a, region) for a in n.args):
                return True
        return False

    def _deciding_operands(self, test, region) -> list[ast.AST]:
        """The operands of an `and`/`or` test that read a device value (`not is_tpu and not
        mask.any()` -> `not mask.any()`, which the guard before it keeps off TPU)."""
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.Name):
            # `has_pads = x.device.type == "xla" or mask.any()` ... `if has_pads:`: the name holds
            # the short-circuit (bound once), and so it decides where `mask.any()` is read
            values = self._bindings(region).get(test.id, ())
            test = values[0] if len(values) == 1 else test
        if not isinstance(test, ast.BoolOp):
            return []
        out = []
        for v in test.values:
            inner = self._deciding_operands(v, region)
            if inner:
                out += inner
            elif self.traced(v, region) or self.tensor_only_test(v, region):
                out.append(v)
        return out

    def tensor_by_form(self, e, region, seen=None) -> bool:
        """A value that is a tensor whatever the names in it hold: a `torch.*` array op of a
        possible tensor (`torch.max(position_ids) + 1`), a reduction method compared on one
        (`x.max() == 0`), or a local bound only to such values (`seq_len = torch.max(p) + 1`,
        whose name alone reads like a Python length)."""
        seen = set() if seen is None else seen
        if isinstance(e, ast.Name):
            values = self._bindings(region).get(e.id, ())
            if e.id in seen or not values:
                return False
            seen.add(e.id)
            return all(self.tensor_by_form(v, region, seen) for v in values)
        if isinstance(e, ast.BinOp):
            return self.tensor_by_form(e.left, region, seen) or self.tensor_by_form(e.right, region, seen)
        if isinstance(e, ast.Compare):
            return not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops) and any(
                self.tensor_by_form(c, region, seen) for c in (e.left, *e.comparators))
        if isinstance(e, ast.Call):
            name = self.canon(e.func) or ""
            if name.startswith("torch.") and name.rsplit(".", 1)[-1] in _TORCH_REDUCTIONS:
                return any(self.maybe_tensor(a, region) for a in e.args)
            if isinstance(e.func, ast.Attribute) and not name.startswith("torch.") and e.func.attr in _TORCH_REDUCTIONS:
                return self.maybe_tensor(e.func.value, region)
        return False

    def control(self, node, region) -> None:
        confidence = None
        if self.host_rebound(node.test, region):
            return
        if not self.traced(node.test, region):
            if not self.tensor_only_test(node.test, region):
                return
            confidence = "medium"
        names = self.names(region)
        if isinstance(node, ast.If):
            construct = "elif" if self._is_elif(node) else "if"
            fix = self._covered(node, region) or self._rewrite(node, region)
            self.report_801(node.test, region, construct, None if confidence else fix, confidence=confidence)
        else:
            fix = self._covered(node, region) or (self._rewrite(node, region) if region.kind == "jax" else None)
            self.report_801(node.test, region, "while", None if confidence else fix,
                            None if region.kind == "torch" else "Bound the trips by a static maximum and use jax.lax.fori_loop with a mask "
                            "(`while c and i < 16:` is rewritten so), or carry the state through jax.lax.while_loop(cond_fn, body_fn, init) "
                            "where no gradient is taken (jax.grad cannot differentiate it).", confidence)

    def _rewrite(self, node, region):
        """The rewrite (a Fix or rewrites.NoFix) of a flagged if / while / for statement,
        built once per statement: `_covered` asks again for every enclosing statement of each
        nested one, which made an elif chain superlinear."""
        key = (node, region.node)
        if key not in self.rewritten:
            self.rewritten[key] = self._build_rewrite(node, region)
        return self.rewritten[key]

    def _build_rewrite(self, node, region):
        bound = rewrites.bound_before(self.tm.enclosing_function(node), node.lineno)
        names = self.names(region)
        if isinstance(node, ast.If):
            loop = self._static_break_loop(node, region)
            if loop is not None:
                loop_bound = rewrites.bound_before(self.tm.enclosing_function(loop), loop.lineno)
                return rewrites.static_break_fix(self.ctx, loop, names, loop_bound)
            return rewrites.if_fix(self.ctx, node, names, self._next_statement(node), bound, self._rest_of_block(node))
        if isinstance(node, ast.While):
            return rewrites.while_fix(self.ctx, node, names, bound)
        return rewrites.fori_fix(self.ctx, node, names, bound)

    def _static_break_loop(self, node, region):
        """The `for i in range(<static>)` loop (jax) whose body holds `node`, a top-level
        `if c: break` on a traced value: its rewrite is the whole loop's, not the if's."""
        if region.kind != "jax" or node.orelse or len(node.body) != 1 or not isinstance(node.body[0], ast.Break):
            return None
        loop = self.tm.parents.get(node)
        if not (isinstance(loop, ast.For) and node in loop.body and isinstance(loop.iter, ast.Call)
                and dotted(loop.iter.func) == "range"):
            return None
        if any(self.traced(a, region) or self._host_value(a, region) for a in loop.iter.args):
            return None
        return loop

    def _covered(self, node, region):
        """A NoFix when an enclosing flagged statement's rewrite replaces this one too (an
        applied one: a display-only loop rewrite leaves the statements inside it their own). The
        enclosing statements are tried from the outermost in: the outermost rewrite is the one
        offered, and asking each nearer one first built the rest of an elif chain once per
        branch (quadratic and worse)."""
        chain = []
        p = self.tm.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            chain.append(p)
            p = self.tm.parents.get(p)
        for p in reversed(chain):
            if isinstance(p, ast.For) and not (isinstance(node, ast.If) and self._static_break_loop(node, region) is p):
                # another traced statement of a loop whose early exit is rewritten as a whole
                breaks = [s for s in p.body if isinstance(s, ast.If) and self.traced(s.test, region) and self._static_break_loop(s, region) is p]
                if breaks and _applied(self._rewrite(breaks[0], region)):
                    return rewrites.NoFix(f"the rewrite offered at line {breaks[0].lineno} covers this statement")
            flagged = isinstance(p, (ast.If, ast.While)) and self.traced(p.test, region) or isinstance(p, ast.For) and region.kind == "jax" \
                and isinstance(p.iter, ast.Call) and dotted(p.iter.func) == "range" and any(self.traced(a, region) or self._host_value(a, region) for a in p.iter.args)
            if flagged and _applied(self._rewrite(p, region)):
                return rewrites.NoFix(f"the rewrite offered at line {p.lineno} covers this statement")
        return None

    def _is_elif(self, node) -> bool:
        parent = self.tm.parents.get(node)
        return isinstance(parent, ast.If) and parent.orelse == [node] and self.ctx.line_text(node.lineno).lstrip().startswith("elif")

    def _rest_of_block(self, node):
        parent = self.tm.parents.get(node)
        block = next((b for b in (getattr(parent, n, None) for n in ("body", "orelse", "finalbody")) if isinstance(b, list) and node in b), [])
        return block[block.index(node) + 1 :] if node in block else []

    def _next_statement(self, node):
        parent = self.tm.parents.get(node)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and node in block:
                i = block.index(node)
                return block[i + 1] if i + 1 < len(block) else None
        return None

    def loop_bound(self, node, region) -> None:
        """`for` statements and comprehension clauses (`[f(i) for i in range(n)]`)."""
        it = node.iter
        bad = None
        if isinstance(it, ast.Call) and dotted(it.func) == "range":
            for arg in it.args:
                if self.traced(arg, region) or self._host_value(arg, region):
                    bad = arg
                    break
        elif (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "tolist" and self.traced(it.func.value, region)
              and self._body_touches_traced(node, region)):
            # `for row in t.tolist()`: as many trips as t has rows (a static shape); the values
            # set the graph only when the body feeds them to traced code (`x[i, :n]`). A body of
            # host code over the rows (token ids counted in Python) is the one read PTL803 reports.
            bad = it
        conf = self.confidence(region)
        if bad is None and region.kind == "torch" and self.dynamic_length(it, region):
            bad, conf = it, self.confidence(region, self.traced(it, region))
        if bad is None or self.quiet_torch(it, region):
            return
        fix = None
        if isinstance(node, ast.For) and region.kind == "jax" and dotted(it.func) == "range":
            fix = self._covered(node, region) or self._rewrite(node, region)
        if region.kind == "jax":
            effect = "the trip count is not known when jax.jit traces (ConcretizationTypeError)"
            sugg = ("Use a static bound with masking (`range(min(n, 8))` is rewritten so), jax.lax.scan, or jax.lax.fori_loop(lo, hi, body, init) "
                    "with a traced hi where no gradient is taken (it becomes a while_loop, which jax.grad cannot differentiate).")
        else:
            effect = "each trip count is a different graph (recompile) and reading it syncs with the host"
            sugg = "Use a fixed trip count with masking, or keep the count as a Python int that does not come from a tensor."
        if isinstance(fix, rewrites.NoFix):
            sugg, fix = sugg + fix.note, None
        self.out.add("PTL802", node.iter, self.targets(region), sugg, fix, conf, bound=self.ctx.span_text(self.ctx.node_span(bad))[:60], region=region.why, effect=effect)

    def _body_touches_traced(self, node, region) -> bool:
        """Does the body of a `for` (the element of a comprehension) read a traced value?"""
        if isinstance(node, ast.For):
            parts = node.body + node.orelse
        else:
            comp = self.tm.parents.get(node)
            parts = [x for x in (getattr(comp, "elt", None), getattr(comp, "key", None), getattr(comp, "value", None)) if x is not None] or [node]
        return any(n.__class__ is ast.Name and n.ctx.__class__ is ast.Load and self.traced(n, region)
                   for part in parts for n in walk(part))

    def dynamic_length(self, e, region, seen=None) -> bool:
        """torch: a value whose length comes from the data: `t.nonzero()`, one-argument
        `torch.where(mask)` (and `[0]` of either), `unique`, `masked_select`, or a name bound
        to one. A Python `for` over it has a data-dependent trip count."""
        seen = set() if seen is None else seen
        if isinstance(e, ast.Subscript):
            return self.dynamic_length(e.value, region, seen)
        if isinstance(e, ast.Name):
            if e.id in seen:
                return False
            seen.add(e.id)
            return any(self.dynamic_length(v, region, seen) for v in self._bindings(region).get(e.id, ())
                       if not isinstance(v, ast.Subscript) or isinstance(v.slice, ast.Constant))
        if not isinstance(e, ast.Call):
            return False
        name = self.canon(e.func) or ""
        if name == "torch.where":
            return len(e.args) == 1 and not e.keywords and self.maybe_tensor(e.args[0], region)
        if name.startswith("torch.") and name.rsplit(".", 1)[-1] in _TORCH_DYNAMIC:
            return any(self.maybe_tensor(a, region) for a in e.args[:1])
        return (isinstance(e.func, ast.Attribute) and not name.startswith("torch.") and e.func.attr in _TORCH_DYNAMIC
                and self.maybe_tensor(e.func.value, region))

    def _host_value(self, e, region) -> bool:
        """int(traced) / traced.item() inside an expression (a loop bound read from a tensor)."""
        for n in walk(e):
            if isinstance(n, ast.Call):
                if dotted(n.func) in _SYNC_BUILTINS and n.args and self.traced(n.args[0], region):
                    return True
                if isinstance(n.func, ast.Attribute) and n.func.attr in ("item", "tolist") and self.traced(n.func.value, region):
                    return True
        return False

    def _in_range_bound(self, node) -> bool:
        p = self.tm.parents.get(node)
        while p is not None and not isinstance(p, ast.stmt):
            if isinstance(p, ast.Call) and dotted(p.func) == "range":
                loop = self.tm.parents.get(p)
                return isinstance(loop, ast.For) and loop.iter is p
            p = self.tm.parents.get(p)
        return False

    def call(self, node: ast.Call, region) -> None:
        name = self.canon(node.func) or ""
        func = node.func
        jax = region.kind == "jax"
        # host syncs
        sync = None
        conf = self.confidence(region)
        if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist") and not jax and self.host_created(func.value, region):
            return  # a CPU tensor: reading it is a host read
        if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist", "cpu", "numpy") and not jax and self.generated(func.value, region):
            return  # generate()'s finished ids going to the host: generation already synced each token
        if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist", "cpu") and not node.args and not jax and not self.traced(func.value, region):
            # `.cpu()` too: a later `.tolist()` of the host copy reads host memory (`_to_host`)
            found, conf = self.unambiguous_tensor(func.value, region)
            if found:
                sync = f".{func.attr}()"
        elif isinstance(func, ast.Name) and func.id in _SYNC_BUILTINS and len(node.args) == 1 and not node.keywords and self.traced(node.args[0], region):
            sync = f"{func.id}()"
        elif isinstance(func, ast.Attribute) and func.attr in (_SYNC_METHODS_JAX if jax else _SYNC_METHODS_TORCH) and self.traced(func.value, region):
            if func.attr in ("item", "tolist", "numpy", "cpu") and not node.args:
                sync = f".{func.attr}()"
        elif isinstance(func, ast.Attribute) and func.attr == "to" and not jax and self.traced(func.value, region):
            if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "cpu":
                sync = '.to("cpu")'
        elif name.startswith("numpy.") and name.rsplit(".", 1)[-1] not in _NUMPY_STATIC | _NUMPY_DELEGATES and any(self.traced(a, region) for a in node.args):
            sync = f"{dotted(func)}()"
        elif name.startswith("math.") and any(self.traced(a, region) for a in node.args):
            sync = f"{dotted(func)}()"  # math functions convert their argument with float()
        elif not jax and self._torch_bool_answer(node, name, region) and not self.in_condition(node):
            sync = f"{dotted(func)}()"  # in a condition, PTL801 reports the same read
        if sync is None and not jax and isinstance(func, ast.Name) and func.id == "sum" and len(node.args) == 1 and self._tensor_expression(node.args[0], region):
            sync = "sum()"  # Python's sum iterates the tensor: one 0-d tensor per element, added on the host side
            conf = self.confidence(region, self.traced(node.args[0], region))
        if sync is None and isinstance(func, ast.Name) and name in _COMPARING_BUILTINS and self._compares_traced(node, region):
            # in a loop's range (`range(min(n, 8))`) the loop's rewrite, when one is applied, replaces it
            self.report_801(node, region, f"{func.id}()", self._covered(node, region) if jax and self._in_range_bound(node) else None,
                            None if jax else "Compare on the device: torch.maximum(a, b) / torch.clamp, or tensor.max() of a stacked tensor.")
            return
        if sync is not None and not self._in_range_bound(node) and not self.quiet_torch(node, region):
            targets = self.targets(region)
            if jax:
                effect = "needs a concrete value while jax.jit traces (ConcretizationTypeError / TracerArrayConversionError)"
                sugg = "Keep the value as an array inside the jitted function and read it outside (after the step returns); use jax.debug.print to look at it."
            else:
                effect = f"stops the lazy graph, executes it and copies the result to the host {self.how_often(node, region)}"
                sugg = ("Keep the value on the device and read it every N steps after the step boundary "
                        "(accumulate `running += loss.detach()`; `if step % N == 0: print(running.item())`), "
                        "or defer it with xm.add_step_closure(lambda: ...).")
                if self._feeds_decoding(node):
                    # the text needs the ids on the host: the copy is the algorithm's, a cost to
                    # place (outside the compiled step), not a bug to remove
                    targets = {t: "note" for t in targets}
                    effect += "; the ids go to a tokenizer's decode, which needs them on the host anyway"
                    sugg = "Decode outside the compiled step (after the step boundary), so the copy does not cut the graph."
            self.out.add("PTL803", node, targets, sugg, confidence=conf, call=sync, region=region.why, effect=effect)
            return
        # data-dependent output shapes
        last = name.rsplit(".", 1)[-1]
        kws = {k.arg for k in node.keywords}
        dynamic = None
        if jax:
            shape_arg = None
            if name == "jax.numpy.arange":
                shape_arg = next((a for a in node.args if self.traced(a, region)), None)
            elif name in ("jax.numpy.zeros", "jax.numpy.ones", "jax.numpy.empty", "jax.numpy.full") and node.args:
                shape_arg = node.args[0] if self.traced(node.args[0], region) else None
            elif isinstance(func, ast.Attribute) and func.attr == "reshape" and self.traced(func.value, region) and not name.startswith("jax."):
                shape_arg = next((a for a in node.args if self.traced(a, region)), None)
            elif name == "jax.numpy.reshape" and len(node.args) > 1:
                shape_arg = node.args[1] if self.traced(node.args[1], region) else None
            if shape_arg is not None:
                dynamic = f"{dotted(func) or 'reshape'}() with a traced size"
        if jax and dynamic is None:
            if name.startswith("jax.numpy.") and last in _JNP_DYNAMIC and "size" not in kws and any(self.traced(a, region) for a in node.args[:1]):
                dynamic = f"{dotted(func)}()"
            elif name == "jax.numpy.where" and len(node.args) == 1 and "size" not in kws and self.traced(node.args[0], region):
                dynamic = f"{dotted(func)}(cond)"
            elif isinstance(func, ast.Attribute) and func.attr == "nonzero" and "size" not in kws and self.traced(func.value, region) and not name.startswith("jax."):
                dynamic = ".nonzero()"
        else:
            if name.startswith("torch.") and last in _TORCH_DYNAMIC and any(self.traced(a, region) for a in node.args[:1]):
                dynamic = f"{dotted(func)}()"
            elif name == "torch.where" and len(node.args) == 1 and self.traced(node.args[0], region):
                dynamic = f"{dotted(func)}(cond)"
            elif isinstance(func, ast.Attribute) and not name.startswith("torch.") and func.attr in _TORCH_DYNAMIC and self.traced(func.value, region):
                dynamic = f".{func.attr}()"
            elif isinstance(func, ast.Attribute) and not name.startswith("torch.") and func.attr in ("nonzero", "masked_select") and self.maybe_tensor(func.value, region):
                dynamic, conf = f".{func.attr}()", "medium"
            elif name == "torch.where" and len(node.args) == 1 and not node.keywords and self.maybe_tensor(node.args[0], region):
                dynamic, conf = f"{dotted(func)}(cond)", "medium"
        if dynamic is not None and not self.quiet_torch(node, region):
            self.report_804(node, region, dynamic, conf)
            return
        # print / logging of traced values
        is_print = isinstance(func, ast.Name) and func.id == "print"
        is_log = isinstance(func, ast.Attribute) and func.attr in _LOG_METHODS and (dotted(func.value) or "").split(".")[-1].lower() in ("logging", "logger", "log", "_logger", "LOGGER".lower())
        if (is_print or is_log) and (any(self._shows_traced(a, region) for a in node.args) or any(self._shows_traced(k.value, region) for k in node.keywords if k.arg not in ("file", "flush", "sep", "end"))):
            if self.quiet_torch(node, region):
                return
            if jax:
                effect = "prints the tracer once at trace time, not the values of each call"
                sugg = 'Use jax.debug.print("{x}", x=x), which prints the runtime values.'
            else:
                effect = "formatting a device tensor executes the pending graph and copies it to the host"
                sugg = "Print after the step boundary every N steps, or defer it with xm.add_step_closure(print, args=(...))."
            self.out.add("PTL808", node, self.targets(region, JAX_NOTE), sugg, call=dotted(func) or "print", region=region.why, effect=effect)
            return
        is_metric = (isinstance(func, ast.Attribute) and func.attr in _METRIC_METHODS) or name in _METRIC_CALLS
        if is_metric and (any(self._shows_traced(a, region) for a in node.args) or any(self._shows_traced(k.value, region) for k in node.keywords)):
            if self.quiet_torch(node, region):
                return
            if jax:
                effect = "a logger converts its value to a host number, which a tracer cannot give while jax.jit traces (TracerArrayConversionError)"
                sugg = "Return the metric from the jitted step and log it outside, or use jax.debug.callback for a host-side writer."
            else:
                effect = "the writer reads the device value as a Python number: a host sync every step"
                sugg = "Log every N steps after the step boundary, or defer the write with xm.add_step_closure(writer.add_scalar, args=(...))."
            self.out.add("PTL808", node, self.targets(region, JAX_ERROR), sugg, call=dotted(func) or func.attr, region=region.why, effect=effect)

    def _tensor_expression(self, e, region) -> bool:
        """An expression that is a tensor by its form (`~mask`, `a == b`, `t.sum(0)` on a
        tensor), not a name that may hold a Python list of tensors."""
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
            return self.maybe_tensor(e.operand, region)
        if isinstance(e, ast.Compare):
            return not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops) and self.maybe_tensor(e.left, region)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr not in _HOST_RESULTS:
            return self.maybe_tensor(e.func.value, region) and self.maybe_tensor(e, region)
        return False

    def _torch_bool_answer(self, node: ast.Call, name: str, region) -> bool:
        func = node.func
        if name in ("torch.equal", "torch.allclose") and any(self.host_created(a, region) for a in node.args[:2]):
            # `torch.equal(seq_ids, torch.arange(n))`: a device tensor beside a CPU one raises,
            # so the other operand is on the host too, and the comparison reads host memory
            return False
        if name in _TORCH_BOOL_ANSWERS:
            return any(self.traced(a, region) for a in node.args)
        return (isinstance(func, ast.Attribute) and func.attr in ("equal", "allclose") and not name.startswith(("jax.", "numpy."))
                and self.traced(func.value, region))

    def _compares_traced(self, node: ast.Call, region) -> bool:
        """`max(a, b)` with a traced operand, or `max(xs)` over a traced container."""
        if not node.args or any(k.arg not in ("key", "default") for k in node.keywords):
            return False
        return any(self.traced(a, region) for a in node.args)

    def in_condition(self, node) -> bool:
        """Is `node` part of the test of an if/while/assert/ternary or a comprehension's `if`?"""
        child, p = node, self.tm.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            if isinstance(p, (ast.If, ast.While, ast.Assert, ast.IfExp)) and child is p.test:
                return True
            if isinstance(p, ast.comprehension) and child in p.ifs:
                return True
            if isinstance(p, ast.stmt):
                return False
            child, p = p, self.tm.parents.get(p)
        return False

    def _shows_traced(self, e, region) -> bool:
        if isinstance(e, ast.JoinedStr):
            return any(isinstance(v, ast.FormattedValue) and self.traced(v.value, region) for v in e.values)
        return self.traced(e, region)

    def subscript(self, node: ast.Subscript, region) -> None:
        if isinstance(node.ctx, ast.Store):
            return  # `x[mask] = 0` writes in place: the shape is kept
        sl = node.slice
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if region.kind == "jax" and self.traced(node.value, region):
            for part in parts:
                if isinstance(part, ast.Slice) and any(b is not None and self.traced(b, region) for b in (part.lower, part.upper, part.step)):
                    self.report_804(node, region, "a slice with traced bounds")
                    return
        if region.kind == "torch" and self._sliced_by_tensor(node, parts, region):
            self.report_804(node, region, "a slice with bounds read from a tensor", self.confidence(region, self.traced(node.value, region)))
            return
        conf = None
        if not any(self.boolish(p, region) for p in parts):
            if region.kind != "torch" or not any(self.unproven_mask(p, region) for p in parts):
                return
            conf = "medium"
        if not self.traced(node.value, region) and not (isinstance(node.value, ast.Attribute) and node.value.attr == "at"):
            if region.kind != "torch" or not self.maybe_tensor(node.value, region):
                return
            conf = "medium"
        if self.quiet_torch(node, region):
            return
        self.report_804(node, region, "boolean-mask indexing", conf)

    def _sliced_by_tensor(self, node: ast.Subscript, parts, region) -> bool:
        """torch: `logits[:, -keep:]` with `keep = torch.amax(counts)`: a slice bound that is a
        tensor by its form (a reduction, not a Python int read with `.item()`/`int()`). Slicing
        reads the bound on the host (`__index__`) and the result's length is the data's."""
        bounds = []
        for part in parts:
            if isinstance(part, ast.Slice):
                for bound in (part.lower, part.upper, part.step):
                    while isinstance(bound, ast.UnaryOp) and isinstance(bound.op, ast.USub):
                        bound = bound.operand
                    if bound is not None and not isinstance(bound, ast.Constant):
                        bounds.append(bound)
        if not bounds or not any(self.tensor_by_form(b, region) for b in bounds):
            return False
        return self.maybe_tensor(node.value, region) and not self.quiet_torch(node, region)

    def unproven_mask(self, e, region) -> bool:
        """torch: an index that reads as a boolean mask the value model cannot prove traced:
        a `mask`-named parameter or local (`loss[mask]`, `x[~mask]`), `~torch.isnan(t)`."""
        while isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.Invert, ast.Not)):
            e = e.operand
        if isinstance(e, ast.Name):
            return _MASK_NAME.search(e.id) is not None and (e.id in self._params(region) or self.maybe_tensor(e, region))
        if isinstance(e, ast.Compare):
            return not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops) and self.maybe_tensor(e.left, region)
        if isinstance(e, ast.Call):
            last = (self.canon(e.func) or "").rsplit(".", 1)[-1]
            return last in _BOOL_FUNCS and any(self.maybe_tensor(a, region) for a in e.args)
        return False

    def how_often(self, node, region: Region) -> str:
        """How often the node runs, as far as the analysis knows: on every iteration of the
        innermost loop around it inside the region, else once per call of the region's
        function (every step for a forward or a per-step method)."""
        child, p = node, self.tm.parents.get(node)
        while p is not None and p is not region.node:
            if isinstance(p, (ast.For, ast.AsyncFor, ast.While)) and child not in p.orelse and child is not getattr(p, "iter", None):
                return f"on every iteration of the loop at line {p.lineno}"
            child, p = p, self.tm.parents.get(p)
        top = region.node
        if isinstance(top, (ast.For, ast.AsyncFor, ast.While)):
            return "on every iteration of that loop"
        name = getattr(top, "name", None)
        if name is None:
            return "each time it runs"
        if region.why.startswith(("forward of ", f"{name} of ", "compiled with", "passed to torch.compile")):
            return f"on every call of {name}() (every step)"
        return f"once per call of {name}()"

    def _feeds_decoding(self, node) -> bool:
        """The host copy is an argument of a tokenizer's decode (`tok.batch_decode(ids.tolist())`,
        `tok.decode([i.tolist() for i in ids])`), directly or through a comprehension."""
        p = self.tm.parents.get(node)
        while p is not None and not isinstance(p, ast.stmt):
            if isinstance(p, ast.Call) and isinstance(p.func, ast.Attribute) and p.func.attr in _DECODE_METHODS:
                return True
            p = self.tm.parents.get(p)
        return False

    def report_804(self, node, region, what, confidence=None) -> None:
        if region.kind == "jax":
            effect = "the result's shape depends on traced values, which jax.jit cannot compile (NonConcreteBooleanIndexError / ConcretizationTypeError / TypeError / IndexError)"
            sugg = ("Keep the shape static: jnp.where(mask, x, 0) instead of x[mask]; "
                    "jnp.nonzero(x, size=K, fill_value=0) / jnp.unique(x, size=K, fill_value=...) with a static K; "
                    "jax.lax.dynamic_slice(x, (start,), (static_len,)) for a traced start; sizes from .shape or static arguments.")
        else:
            effect = "the output shape depends on the data: a recompile per distinct shape"
            effect += " (and a read of the bound from the device)" if what.startswith("a slice") else " or a CPU fallback (aten::nonzero)"
            effect += f"; it runs {self.how_often(node, region)}"
            sugg = ("Keep the shape static: torch.where(mask, x, 0) or x.masked_fill(~mask, 0) and reduce; "
                    "torch.topk with a static k instead of selecting with nonzero.")
        self.out.add("PTL804", node, self.targets(region), sugg, confidence=confidence or self.confidence(region), op=what, region=region.why, effect=effect)


_DTYPE_TAILS = re.compile(r"^(float|bfloat|half|double|int|uint|long|short|bool|complex|cfloat|cdouble)\d*$")


def _to_host(call: ast.Call) -> bool:
    """`t.cpu()`, `t.numpy()`, `t.to("cpu")`, `t.to(device="cpu")`: a copy to host memory."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in ("cpu", "numpy"):
        return True
    return func.attr == "to" and to_cpu_args(call)


def _self_attributes(target: ast.AST) -> list[str]:
    """`self.scale` targets of an assignment, alone or in a tuple (`y, self.scale = f(x)`),
    keyed "self.scale" (a name cannot hold a dot): bound to the whole assigned value."""
    elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    return [f"self.{e.attr}" for e in elts if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"]


def _metadata_operands(test: ast.AST) -> set[ast.AST]:
    """Nodes of `test` that are only asked for metadata: under `x.shape`, `x.dtype`,
    `x.numel()` (what torch's stubs declare Python-valued) or `len(x)`."""
    out: set[ast.AST] = set()
    for n in walk(test):
        inner = None
        if isinstance(n, ast.Attribute) and (n.attr in _HOST_ATTRS or RETURNS.metadata_attribute(n.attr) or RETURNS.metadata_method(n.attr)):
            inner = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and n.args:
            inner = n.args[0]
        if inner is not None:
            out.update(walk(inner))
    return out


def _identity_operands(test: ast.AST) -> set[ast.AST]:
    """The operands of identity tests in `test` (`x` of `x is None`)."""
    out: set[ast.AST] = set()
    for n in walk(test):
        if isinstance(n, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops):
            out.update((n.left, *n.comparators))
    return out


def _moves_to_device(call: ast.Call, canon) -> bool:
    """`t.to(x.device)`, `t.to(device)`, `t.to(device=d)`, `t.cuda()`: the value moves to an
    accelerator (a `.to(torch.float32)` changes the dtype only, `.to("cpu")` moves to the host)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "cuda":
        return True
    if func.attr != "to":
        return False
    args = [*call.args, *(k.value for k in call.keywords if k.arg in ("device", None))]
    for a in args:
        if isinstance(a, ast.Constant):
            if a.value == "cpu" or not isinstance(a.value, str):
                continue
            return True
        name = canon(a) or dotted(a) or ""
        tail = name.rsplit(".", 1)[-1]
        if _DTYPE_TAILS.match(tail) or "dtype" in tail:
            continue
        if tail == "device" or "device" in tail:
            return True
    return False


def _bind_unpacked_call(out: dict[str, list[ast.AST]], target: ast.AST, call: ast.Call) -> None:
    """`loss, entropy_sum, count = self._forward(model, inputs)`: each unpacked name holds a
    part of the call's result, so it is bound to the call (a tensor when the call is given one)."""
    for elt in target.elts:
        if isinstance(elt, ast.Starred):
            elt = elt.value
        if isinstance(elt, ast.Name):
            out.setdefault(elt.id, []).append(call)


def _produced_values(e: ast.AST) -> tuple[ast.AST, ...]:
    """The expressions whose values `e` holds: both legs of `a if c else b`, the element of a
    list/set/generator comprehension, the value of a dict comprehension (`{k: v.to(device)
    for k, v in inputs.items()}` holds what `v.to(device)` gives)."""
    if isinstance(e, ast.IfExp):
        return (e.body, e.orelse)
    if isinstance(e, ast.DictComp):
        return (e.value,)
    return (e.elt,)


def _torch_tensor_annotation(ann: ast.AST | None) -> bool:
    """`torch.Tensor`, `Optional[Tensor]`, `"torch.Tensor"`: an array annotation that is not
    numpy's (`-> np.ndarray` is a host array in a torch file)."""
    if not annotated_tensor(ann):
        return False
    text = ann.value if isinstance(ann, ast.Constant) else ast.unparse(ann)
    return "ndarray" not in text and "numpy" not in text and "np." not in text


def _compares_values(e: ast.Compare) -> bool:
    """A comparison of values (`a != b`, `x < 0`), not an identity or membership test nor a
    comparison with a string or None (mode switches, optional arguments)."""
    if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
        return False
    return not any(isinstance(c, ast.Constant) and isinstance(c.value, (str, type(None))) for c in (e.left, *e.comparators))


def _is_host_read(e) -> bool:
    """`t.item()`, `t.tolist()`, `int(t)`, `float(t)` (possibly inside arithmetic)."""
    if isinstance(e, ast.Call):
        if isinstance(e.func, ast.Attribute) and e.func.attr in ("item", "tolist"):
            return True
        return isinstance(e.func, ast.Name) and e.func.id in ("int", "float", "bool")
    if isinstance(e, ast.BinOp):
        return _is_host_read(e.left) and (_is_host_read(e.right) or isinstance(e.right, ast.Constant))
    return False


def _field_root(e):
    """`a.b["k"].c` -> the Name `a` (fields and constant keys only), else None."""
    while isinstance(e, ast.Attribute) or (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, str)):
        e = e.value
    return e if isinstance(e, ast.Name) else None


# ---- file-level rules (no traced region needed) --------------------------------------------

def _kw(call: ast.Call, name: str):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _const(e):
    return e.value if isinstance(e, ast.Constant) else None


def _loops_containing(tm: TracedMap, node):
    p = tm.parents.get(node)
    out = []
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
        if isinstance(p, (ast.For, ast.While)):
            out.append(p)
        p = tm.parents.get(p)
    return out


def _gaudi_lazy(ctx, tm: TracedMap) -> bool:
    text = ctx.text
    if re.search(r"PT_HPU_LAZY_MODE[\"']?\s*\]?\s*[=,:]\s*[\"']?0", text):
        return False
    return tm.imports.uses("habana_frameworks.torch.core") or "PT_HPU_LAZY_MODE" in text


def file_rules(ctx, tm: TracedMap, out: Hazards) -> None:
    canon = tm.imports.canonical
    tags = ctx.tags
    torch_t = torch_targets(tags)
    has_torch_target = bool(torch_t)
    jax_file = "jax" in tags
    # PTL806: step loops without a step boundary
    if has_torch_target:
        targets806 = {}
        if "torch_xla" in tags:
            targets806.update(tpu="warning", trainium="warning")
        if "gaudi" in tags and _gaudi_lazy(ctx, tm):
            targets806["gaudi"] = "warning"
        wrapped_loader = re.search(r"MpDeviceLoader|ParallelLoader|accelerator\.prepare|\.prepare\(", ctx.text) is not None
        boundary_names: set[str] = set()  # functions of this file that cut the graph
        for c in tm.nodes_of(ast.Call):
            if tm._is_boundary_call(c):
                fn = tm.enclosing_function(c)
                while fn is not None:
                    boundary_names.add(getattr(fn, "name", ""))
                    fn = tm.enclosing_function(fn)
        if targets806 and not wrapped_loader:
            for loop in tm.nodes_of(ast.For, ast.While):
                calls = [c for c in tm._walk_no_defs(loop.body) if isinstance(c, ast.Call)]
                backward = any(isinstance(c.func, ast.Attribute) and c.func.attr == "backward" and not c.args for c in calls)
                opt_step = any(isinstance(c.func, ast.Attribute) and c.func.attr == "step" and not c.args and re.search(r"optim|opt\b|opt$", dotted(c.func.value) or "", re.I) for c in calls)
                if not (backward and opt_step):
                    continue
                if any(_calls_backward(tm, inner) for inner in tm._walk_no_defs(loop.body)
                       if isinstance(inner, (ast.For, ast.While)) and inner is not loop):
                    continue  # an inner loop is the step; this one is the epoch loop
                if any(tm._is_boundary_call(c) or (dotted(c.func) or "").split(".")[-1] in boundary_names for c in calls):
                    continue
                if _loops_containing(tm, loop) and any(
                    tm._is_boundary_call(c) for outer in _loops_containing(tm, loop) for c in tm._walk_no_defs(outer.body) if isinstance(c, ast.Call)
                ):
                    continue
                lazy = "torch_xla.sync() / xm.mark_step()" if "torch_xla" in tags else "htcore.mark_step()"
                out.add("PTL806", _loop_head(ctx, loop), targets806,
                        f"End each iteration with {lazy} after optimizer.step() (Gaudi lazy mode: also after loss.backward()), "
                        "use xm.optimizer_step(optimizer), or iterate a pl.MpDeviceLoader.",
                        boundary=lazy)
    # PTL805: shapes that vary per batch
    if has_torch_target:
        for call in tm.nodes_of(ast.Call):
            name = canon(call.func) or ""
            last = name.rsplit(".", 1)[-1]
            if last == "DataLoader":
                dl = _kw(call, "drop_last")
                bs = _kw(call, "batch_size") or (call.args[1] if len(call.args) > 1 else None)
                if dl is not None or bs is None or _const(bs) == 1 or _const(bs) is None and isinstance(bs, ast.Constant):
                    continue
                target_name = _assigned_name(tm, call)  # (looked up only here: it reads the parents)
                if re.search(r"eval|val|test|dev", target_name or "", re.I):
                    continue
                out.add("PTL805", call, torch_t, "Pass drop_last=True so every step sees the same batch shape (or pad the last batch).",
                        what="DataLoader without drop_last=True", effect="the last, smaller batch compiles a second graph")
            elif last in ("DataCollatorWithPadding", "DataCollatorForSeq2Seq", "DataCollatorForLanguageModeling") and _kw(call, "pad_to_multiple_of") is None:
                if last == "DataCollatorForLanguageModeling" or _const(_kw(call, "padding")) == "max_length":
                    continue
                out.add("PTL805", call, torch_t, "Pad to fixed buckets: pad_to_multiple_of=64 (or padding='max_length', max_length=L).",
                        what=f"{last} without pad_to_multiple_of", effect="each batch is padded to its own longest sequence: one graph per length")
            else:
                pad = _kw(call, "padding")
                if pad is not None and (_const(pad) is True or _const(pad) == "longest") and _kw(call, "pad_to_multiple_of") is None and isinstance(call.func, (ast.Name, ast.Attribute)):
                    fname = (dotted(call.func) or "").split(".")[-1].lower()
                    if "token" in fname or fname in ("pad", "__call__", "batch_encode_plus", "encode_plus", "processor"):
                        out.add("PTL805", call, torch_t, "Use padding='max_length' with a fixed max_length, or pad_to_multiple_of=B buckets.",
                                what=f"padding={ast.unparse(pad)}", effect="pads each batch to its own longest sequence: one graph per length")
    # PTL809: float64 on the accelerator. A file that reads or sets torch_xla's downcast
    # switches (XLA_DOWNCAST_BF16 / XLA_USE_BF16: float64 runs as float32 on the device, float32
    # as bfloat16) asks for double to get float32 there: the idiom, not a float64 tensor
    downcast = "XLA_DOWNCAST_BF16" in ctx.text or "XLA_USE_BF16" in ctx.text
    for node in tm.nodes_of(ast.Call, ast.Assign, ast.IfExp):  # the nodes the tests below can match
        if jax_file and isinstance(node, ast.Call):
            name = canon(node.func) or ""
            if name.endswith("config.update") and node.args and _const(node.args[0]) == "jax_enable_x64" and len(node.args) > 1 and _const(node.args[1]) in (True, 1, "1", "True", "true"):
                out.add("PTL809", node, JAX_WARNING, "Keep float32/bfloat16 on TPU; enable x64 only in CPU-side numerics code.", what="jax_enable_x64")
                continue
        if isinstance(node, ast.Assign) and jax_file:
            for t in node.targets:
                if isinstance(t, ast.Subscript) and dotted(t.value) == "os.environ" and _const(t.slice) == "JAX_ENABLE_X64" and _const(node.value) in ("1", "True", "true"):
                    out.add("PTL809", node, JAX_WARNING, "Keep float32/bfloat16 on TPU; enable x64 only in CPU-side numerics code.", what="JAX_ENABLE_X64")
        wide = _wide_dtype_use(node, canon, jax_file, has_torch_target)
        if wide is not None and wide[0] == "torch" and _host_or_scalar_factory(node, canon, ctx.text):
            wide = None
        if wide is not None and wide[1] == ".double()" and _HostTensors(tm, canon, ctx.text).host(node.func.value, node):
            wide = None  # `.double()` of tensors already copied to the CPU (a metric computed on the host)
        if wide is None and has_torch_target and isinstance(node, ast.IfExp):
            leg = _device_chosen_wide_dtype(ctx, node, canon)
            if leg is not None:
                node, wide = leg, ("torch", dotted(leg))
        if wide is not None:
            kind, text = wide
            targets = JAX_WARNING if kind == "jax" else ({} if downcast else torch_t)
            if targets:
                out.add("PTL809", node, targets, "Use float32 (or bfloat16) for device tensors; keep float64 for host-side numpy.", what=text)
    # PTL810: CUDA-only torch.compile modes
    if has_torch_target:
        for node in tm.nodes_of(ast.Call, ast.Assign):
            if isinstance(node, ast.Call) and canon(node.func) == "torch.compile":
                mode, backend = _const(_kw(node, "mode")), _const(_kw(node, "backend"))
                if mode in ("reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
                    out.add("PTL810", _kw(node, "mode"), torch_t, _compile_sugg(tags), what=f'mode="{mode}"')
                if backend in ("inductor", "cudagraphs"):
                    out.add("PTL810", _kw(node, "backend"), torch_t, _compile_sugg(tags), what=f'backend="{backend}"')
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if (dotted(t) or "").startswith(("torch._inductor.config.", "inductor_config.")):
                        out.add("PTL810", t, torch_t, _compile_sugg(tags), what=dotted(t))
    # PTL807: jit re-created per iteration; loop counters in static arguments
    if jax_file:
        jitted = _jitted_statics(tm)
        for node in tm.nodes_of(ast.Call):
            loops = _loops_containing(tm, node)
            if not loops:
                continue
            name = canon(node.func) or ""
            if name in ("jax.jit", "jax.pmap", "flax.nnx.jit", "equinox.filter_jit") and node.args:
                arg = node.args[0]
                fresh = isinstance(arg, ast.Lambda) or (isinstance(arg, ast.Call) and canon(arg.func) in ("functools.partial", "partial"))
                if isinstance(arg, ast.Name):
                    fn = tm.resolve(arg, node)
                    fresh = fn is not None and any(fn in walk(lp) for lp in loops)
                if fresh:
                    out.add("PTL807", node, JAX_WARNING, "Create the jitted function once, outside the loop, and pass changing values as array arguments.",
                            what=f"{dotted(node.func)}() of a new function object inside a loop", effect="a new function object each iteration: traced and compiled again every time")
                continue
            callee = dotted(node.func)
            if callee in jitted:
                counters = _loop_counters(tm, loops)
                for pos_or_name, arg in _args_at(node, jitted[callee]):
                    if any(isinstance(n, ast.Name) and n.id in counters for n in walk(arg)):
                        out.add("PTL807", arg, JAX_WARNING, "Pass the changing value as a traced argument (drop it from static_argnums/static_argnames).",
                                what=f"loop counter `{ast.unparse(arg)}` passed as static argument {pos_or_name!s} of {callee}", effect="a static argument is part of the compile key: one compile per step")


def _compile_sugg(tags) -> str:
    out = []
    if "torch_xla" in tags:
        out.append('torch.compile(model, backend="openxla") on TPU (torch_xla dynamo); on Trainium the Neuron backend')
    if "gaudi" in tags:
        out.append('torch.compile(model, backend="hpu_backend") on Gaudi')
    return "Use " + "; ".join(out) + "; drop CUDA-graph and Triton autotune modes and torch._inductor tuning."


def _calls_backward(tm: TracedMap, loop) -> bool:
    """Does a loop's body (a statement list: never an `IfExp`'s expression body) call `.backward()`?"""
    return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "backward"
               for c in tm._walk_no_defs(loop.body))


def _loop_head(ctx, loop):
    from portlint.core.model import Span
    span = ctx.node_span(loop)
    end = loop.iter if isinstance(loop, ast.For) else loop.test
    e = ctx.node_span(end)
    return Span(span.start_line, span.start_col, e.end_line, e.end_col)


def _assigned_name(tm, call) -> str | None:
    parent = tm.parents.get(call)
    if isinstance(parent, ast.Assign):
        return " ".join(dotted(t) or "" for t in parent.targets)
    if isinstance(parent, ast.keyword):
        return parent.arg
    return None


_WIDE_JAX = {"jax.numpy.float64", "jax.numpy.complex128", "jax.numpy.double"}
_WIDE_TORCH = {"torch.float64", "torch.double", "torch.complex128", "torch.cdouble"}


def _device_chosen_wide_dtype(ctx, node: ast.IfExp, canon) -> ast.AST | None:
    """The float64 leg of `dtype = torch.float32 if is_mps else torch.float64`: a dtype
    picked by a device test (diffusers' timestep idiom) whose float64 leg the guard lets the
    other accelerators take. A choice by a user option (`... if args.double else ...`) is not one."""
    legs = [leg for leg in (node.body, node.orelse) if canon(leg) in _WIDE_TORCH]
    if len(legs) != 1:
        return None
    guards = ctx.fact(guard_map)
    if guards.platforms(legs[0]) == guards.platforms(node):
        return None  # the test is no device test
    if _overwritten_next(node, ctx.fact(traced_map).parents):
        return None  # `dtype = ... else torch.float64` then `dtype = torch.float32`: the choice is dead
    return legs[0]


def _overwritten_next(value: ast.AST, parents) -> bool:
    """`value` is the whole right side of `name = value`, and the next statement of the same
    block assigns `name` again without reading it: a dead store, never used."""
    stmt = parents.get(value)
    if not (isinstance(stmt, ast.Assign) and stmt.value is value and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    name, block = stmt.targets[0].id, parents.get(stmt)
    for field_name in ("body", "orelse", "finalbody"):
        seq = getattr(block, field_name, None)
        if isinstance(seq, list) and stmt in seq:
            i = seq.index(stmt)
            nxt = seq[i + 1] if i + 1 < len(seq) else None
            return (isinstance(nxt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in nxt.targets)
                    and not any(isinstance(n, ast.Name) and n.id == name for n in walk(nxt.value)))
    return False


def _wide_dtype_use(node, canon, jax_file, torch_file):
    """A float64 dtype used to create or convert an array (not compared or stored in a table)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    cands = list(node.args) + [k.value for k in node.keywords if k.arg in ("dtype", None)]
    if isinstance(func, ast.Attribute) and func.attr in ("astype", "to", "type", "set_default_dtype", "new_tensor", "view") or (canon(func) or "").startswith(("jax.numpy.", "torch.")):
        for c in cands:
            name = canon(c)
            if jax_file and name in _WIDE_JAX:
                return "jax", dotted(c)
            if torch_file and name in _WIDE_TORCH:
                return "torch", dotted(c)
            if jax_file and isinstance(c, ast.Constant) and c.value in ("float64", "complex128") and (canon(func) or "").startswith("jax.") | (isinstance(func, ast.Attribute) and func.attr == "astype"):
                return "jax", repr(c.value)
    for k in node.keywords:
        if k.arg == "dtype":
            name = canon(k.value)
            if jax_file and name in _WIDE_JAX:
                return "jax", dotted(k.value)
            if torch_file and name in _WIDE_TORCH:
                return "torch", dotted(k.value)
    if torch_file and isinstance(func, ast.Attribute) and func.attr == "double" and not node.args and not node.keywords:
        return "torch", ".double()"
    return None


class _HostTensors:
    """Tensors this file proves are in host memory, by their construction: `t.cpu()`,
    `t.numpy()`, `torch.from_numpy(a)`, a torch factory without `device=`, element-wise
    arithmetic and tensor methods on such a tensor, `torch.cat`/`stack` of a list whose every
    `append` adds one, a local name every binding of which is one, and a module-level helper
    every `return` of which gives one. Anything else is not known to be on the host."""

    _KEEP = {"cat", "stack", "concat", "concatenate", "vstack", "hstack"}
    _MOVES = {"to", "cuda", "xla", "hpu", "npu", "pin_memory"}

    def __init__(self, tm: TracedMap, canon, text: str):
        self.tm, self.canon, self.text = tm, canon, text
        self.busy: set = set()

    def _function_of(self, node):
        p = self.tm.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            p = self.tm.parents.get(p)
        return p

    def _bindings(self, fn, name: str) -> list:
        """The values `name` is assigned in `fn` (tuples unpacked element-wise); None in the
        list for a binding whose value is not known (a for target, an augmented assignment)."""
        out: list = []
        for n in walk(fn):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id == name:
                        out.append(n.value)
                    elif isinstance(t, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == name for e in t.elts):
                        i = next(i for i, e in enumerate(t.elts) if isinstance(e, ast.Name) and e.id == name)
                        out.append(n.value.elts[i] if isinstance(n.value, ast.Tuple) and len(n.value.elts) == len(t.elts) else None)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)) and any(
                    isinstance(t, ast.Name) and t.id == name for t in walk(getattr(n, "target", None) or ast.Pass())):
                out.append(getattr(n, "value", None))
        if fn is not None and name in {a.arg for a in params_of(fn)}:
            out.append(None)  # a parameter: the caller decides
        return out

    def _attr_list_host(self, node, attr: str) -> bool:
        """`self.<attr>` is a list whose every `self.<attr>.append(v)` in the class adds a host tensor."""
        cls = self.tm.parents.get(node)
        while cls is not None and not isinstance(cls, ast.ClassDef):
            cls = self.tm.parents.get(cls)
        if cls is None:
            return False
        adds = [n for n in walk(cls) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend")
                and dotted(n.func.value) == f"self.{attr}"]
        return bool(adds) and all(len(a.args) == 1 and self.host(a.args[0], a) for a in adds)

    def host(self, e, at) -> bool:
        key = (id(e), id(at))
        if key in self.busy:
            return False
        self.busy.add(key)
        try:
            return self._host(e, at)
        finally:
            self.busy.discard(key)

    def _host(self, e, at) -> bool:
        if isinstance(e, ast.Call):
            name = self.canon(e.func) or ""
            func = e.func
            if isinstance(func, ast.Attribute) and func.attr in ("cpu", "numpy") and not e.args:
                return True
            if name == "torch.from_numpy":
                return True
            if name.startswith("torch.") and name.rsplit(".", 1)[-1] in self._KEEP and e.args:
                seq = e.args[0]
                if isinstance(seq, (ast.List, ast.Tuple)):
                    return bool(seq.elts) and all(self.host(x, at) for x in seq.elts)
                if isinstance(seq, (ast.ListComp, ast.GeneratorExp)):
                    return self.host(seq.elt, at)
                if isinstance(seq, ast.Attribute) and isinstance(seq.value, ast.Name) and seq.value.id == "self":
                    return self._attr_list_host(at, seq.attr)
                return self.host(seq, at)
            if name.startswith("torch.") and name in RETURNS.factories:
                return _host_or_scalar_factory(e, self.canon, self.text) and not any(
                    isinstance(a, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for a in e.args)
            if isinstance(func, ast.Attribute) and func.attr not in self._MOVES and not name.startswith("torch."):
                return self.host(func.value, at)  # `.sigmoid()`, `.bool()`, `.float()` of a host tensor
            if isinstance(func, ast.Name):
                fn = next((s for s in self.tm.module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == func.id), None)
                if fn is not None:
                    rets = [r.value for r in walk(fn) if isinstance(r, ast.Return)]
                    return bool(rets) and all(r is not None and self.host(r, r) for r in rets)
            return False
        # a 0-d CPU tensor may meet a device tensor (the result is on the device): every
        # operand is on the host, or a constant, or a scalar setting (`self.threshold`)
        if isinstance(e, ast.BinOp):
            return all(self.host(x, at) or isinstance(x, ast.Constant) for x in (e.left, e.right)) and not all(
                isinstance(x, ast.Constant) for x in (e.left, e.right))
        if isinstance(e, ast.Compare):
            return self.host(e.left, at) and all(self.host(x, at) or isinstance(x, ast.Constant) or _self_setting(x) for x in e.comparators)
        if isinstance(e, ast.UnaryOp):
            return self.host(e.operand, at)
        if isinstance(e, ast.Subscript):
            return self.host(e.value, at)
        if isinstance(e, ast.Name):
            fn = self._function_of(at)
            if fn is None:
                return False
            values = self._bindings(fn, e.id)
            return bool(values) and all(v is not None and self.host(v, v) for v in values)
        return False


def _self_setting(e) -> bool:
    """`self.threshold`: a plain attribute of the object, read as a scalar setting."""
    return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"


def _host_or_scalar_factory(node, canon, text: str) -> bool:
    """A torch factory (by its declared `device` parameter) that makes its float64 tensor on
    the host (no `device=`, no `**kwargs`, no default device set in the file: sampler weights,
    reference values), or a one-element accumulator (`torch.zeros(1, dtype=torch.double,
    device=dev)`, HF Trainer's running loss): neither is float64 math on the accelerator."""
    if not isinstance(node, ast.Call):
        return False
    name = canon(node.func) or ""
    if name not in RETURNS.factories or not name.startswith("torch."):
        return False
    if not any(k.arg in ("device", None) for k in node.keywords) and "set_default_device" not in text:
        return True
    first = node.args[0] if node.args else None
    if isinstance(first, (ast.Tuple, ast.List)):
        first = first.elts[0] if len(first.elts) == 1 else (None if first.elts else ast.Constant(1))
    if name.rsplit(".", 1)[-1] in ("tensor", "scalar_tensor"):
        return isinstance(first, ast.Constant) and isinstance(first.value, (int, float))
    return isinstance(first, ast.Constant) and first.value == 1 and len(node.args) == 1


def _jitted_statics(tm: TracedMap) -> dict[str, tuple[set[int], set[str]]]:
    """Names bound to jitted functions with static arguments: name -> (positions, names)."""
    from portlint.analyses.python.traced import _const_ints, _const_strs, _positional

    out: dict[str, tuple[set[int], set[str]]] = {}
    for node in tm.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call):
                    inner, _, _ = tm._unwrap_partial(dec)
                    if tm.imports.canonical(inner if inner is not dec else dec.func) in ("jax.jit", "jax.pmap"):
                        pos, names = _statics(dec.keywords, node)
                        if pos or names:
                            out[node.name] = (pos, names)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and tm.imports.canonical(node.value.func) in ("jax.jit", "jax.pmap"):
            call = node.value
            fn = tm.resolve(call.args[0], node) if call.args else None
            pos, names = _statics(call.keywords, fn)
            if (pos or names) and len(node.targets) == 1 and dotted(node.targets[0]):
                out[dotted(node.targets[0])] = (pos, names)
    return out


def _statics(keywords, fn) -> tuple[set[int], set[str]]:
    from portlint.analyses.python.traced import _const_ints, _const_strs, _positional

    pos: set[int] = set()
    names: set[str] = set()
    params = [p.arg for p in _positional(fn)] if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    for kw in keywords:
        if kw.arg in ("static_argnums", "static_broadcasted_argnums"):
            for i in _const_ints(kw.value):
                pos.add(i)
                if 0 <= i < len(params):
                    names.add(params[i])
        elif kw.arg == "static_argnames":
            for n in _const_strs(kw.value):
                names.add(n)
                if n in params:
                    pos.add(params.index(n))
    return pos, names


def _args_at(call: ast.Call, statics):
    pos, names = statics
    for i, a in enumerate(call.args):
        if i in pos:
            yield i, a
    for k in call.keywords:
        if k.arg in names:
            yield k.arg, k.value


def _loop_counters(tm: TracedMap, loops) -> set[str]:
    out: set[str] = set()
    for loop in loops:
        if isinstance(loop, ast.For):
            it, target = loop.iter, loop.target
            if isinstance(it, ast.Call) and dotted(it.func) == "range" and isinstance(target, ast.Name):
                out.add(target.id)
            elif isinstance(it, ast.Call) and dotted(it.func) == "enumerate" and isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
                out.add(target.elts[0].id)
        for n in tm._walk_no_defs(loop.body):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and isinstance(n.op, ast.Add):
                out.add(n.target.id)
    return out


def hazards(ctx) -> Hazards:
    out = Hazards()
    if not (RELEVANT_TAGS & ctx.tags):
        return out
    tm = ctx.fact(traced_map)
    _Walker(ctx, tm, out).run()
    file_rules(ctx, tm, out)
    return out


def _reachable(ctx, nodes, targets: dict) -> dict:
    """`targets` restricted to the platforms on which one of `nodes` can run (the device
    guards of `portlint.analyses.python.guards`: `if not self.tpu:`, `if device.type == "cuda":`)."""
    guards = ctx.fact(guard_map)
    plats = frozenset().union(*(guards.reaching(n, targets) for n in nodes))
    return {t: level for t, level in targets.items() if t in plats}


def _emit(ctx, rule_id: str) -> None:
    if not (RELEVANT_TAGS & ctx.tags):
        return
    seen = set()
    for h in ctx.fact(hazards).by_rule.get(rule_id, ()):
        if isinstance(h.where, ast.AST):
            h.targets = _reachable(ctx, [h.where], h.targets)
            if not h.targets:
                continue  # a guard keeps this line off every target (`if not self.tpu:`)
        span = ctx.node_span(h.where)
        key = (span.start_line, span.start_col)  # `t.cpu().item()`: one finding, the outer call
        if key in seen:
            continue
        seen.add(key)
        ctx.report(h.where, targets=h.targets, suggestion=h.suggestion, fix=h.fix, confidence=h.confidence, **h.fields)



def _export_test(test) -> bool:
    """`self.onnx_trace`, `torch.onnx.is_in_onnx_export()`, `torch.jit.is_tracing()`, or an
    `and` of one with other tests: true only during an export."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_export_test(v) for v in test.values)
    if isinstance(test, ast.Call) and not test.args:
        test = test.func
    if isinstance(test, (ast.Name, ast.Attribute)):
        return _EXPORT_FLAG.search((dotted(test) or "").rsplit(".", 1)[-1]) is not None
    return False


def _sink_test(branch: ast.If) -> bool:
    """`if sink is not None:` (or `if sink:`) whose body passes values to that sink: a
    `sink.put(...)` / `sink.write(...)` call or a `print(..., file=sink)`."""
    test = branch.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        test = test.left
    sink = dotted(test) if isinstance(test, (ast.Name, ast.Attribute)) else None
    if not sink:
        return False
    for stmt in branch.body:
        for n in walk(stmt):
            if not isinstance(n, ast.Call):
                continue
            if isinstance(n.func, ast.Attribute) and n.func.attr in _SINK_METHODS and dotted(n.func.value) == sink:
                return True
            if isinstance(n.func, ast.Name) and n.func.id == "print" and any(
                    k.arg == "file" and dotted(k.value) == sink for k in n.keywords):
                return True
    return False

@detector("PTL801", tokens=TOKENS)
def python_control_flow_on_traced_value(ctx) -> None:
    """`if`/`while`/`assert`/ternary/`and`/`or`/`not` on a traced value."""
    _emit(ctx, "PTL801")


@detector("PTL802", tokens=TOKENS)
def python_loop_bound_from_traced_value(ctx) -> None:
    """`for ... in range(traced)` or over `traced.tolist()`."""
    _emit(ctx, "PTL802")


@detector("PTL803", tokens=TOKENS)
def host_sync_in_step(ctx) -> None:
    """`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `float(t)`, `np.asarray(t)` in traced code."""
    _emit(ctx, "PTL803")


@detector("PTL804", tokens=TOKENS)
def data_dependent_output_shape(ctx) -> None:
    """Boolean-mask indexing, nonzero/unique/one-argument where without a static size."""
    _emit(ctx, "PTL804")


@detector("PTL805", tokens=TOKENS)
def unbucketed_variable_input_shapes(ctx) -> None:
    """Batches whose shape changes per step on xla/hpu (no drop_last, pad-to-longest)."""
    _emit(ctx, "PTL805")


@detector("PTL806", tokens=TOKENS)
def missing_step_boundary(ctx) -> None:
    """A torch_xla / Gaudi-lazy training loop that never cuts the graph."""
    _emit(ctx, "PTL806")


@detector("PTL807", tokens=TOKENS)
def step_varying_python_scalar_baked_into_graph(ctx) -> None:
    """jit re-created in a loop; loop counters fed to static arguments."""
    _emit(ctx, "PTL807")


@detector("PTL808", tokens=TOKENS)
def print_of_traced_value(ctx) -> None:
    """print/logging of traced values inside traced code."""
    _emit(ctx, "PTL808")


@detector("PTL809", tokens=TOKENS)
def float64_and_wide_types_on_accelerator(ctx) -> None:
    """jax_enable_x64, float64/complex128 arrays in JAX or xla/hpu torch code."""
    _emit(ctx, "PTL809")


@detector("PTL810", tokens=TOKENS)
def cuda_specific_compile_modes(ctx) -> None:
    """torch.compile CUDA-graph / autotune modes, inductor backend or tuning on xla/hpu."""
    _emit(ctx, "PTL810")
