"""Which non-CUDA devices a Python file aims at, and how a CUDA device is spelt.

Shared by the `device_strings` (PTL9xx) and `torch_distributed` (PTL501/PTL504) families.
A CUDA spelling is a hazard only in a file that also targets another device: a plain CUDA
training script is not a finding (on ROCm PyTorch keeps the CUDA spelling), and code already
dispatched by a device guard (`portlint.analyses.python.guards`) is the port, not the problem."""

from __future__ import annotations

import ast
import re

from portlint.index.project import file_model
from portlint.analyses.python.guards import GAUDI, TPU, TRAINIUM, dotted, guard_map
from portlint.frontends.python.names import modules_on_import_lines, names_module
from portlint.frontends.python.astindex import children, of_class, walk

_NEURON_MODULES = ("torch_neuronx", "neuronx_distributed", "neuronxcc", "libneuronxla")
_TPU_HINT = re.compile(rb"\bTPU\b|\btpu\b|PJRT_DEVICE")
# Gaudi integrations that the language tagger does not know (Lightning's HPU plugin)
_GAUDI_MODULES = ("lightning_habana",)
CUDA_STRING = re.compile(r"^cuda(?::\d+)?$")
# "neuron" used as a device value, not only looked for in a name (`"neuron" in device_name`)
_NEURON_DEVICE = re.compile(rb"""["']neuron["'](?!\s+(?:not\s+)?in\b)""")


def torch_targets(ctx) -> frozenset[str]:
    """Targets a torch file aims at besides CUDA: from its imports and device strings."""
    out: set[str] = set()
    data = ctx.data
    if "torch_xla" in ctx.tags:
        out.add(TRAINIUM)
        if not names_module(modules_on_import_lines(data), _NEURON_MODULES) or _TPU_HINT.search(data):
            out.add(TPU)
    if (b'"neuron"' in data or b"'neuron'" in data) and _NEURON_DEVICE.search(data):
        out.add(TRAINIUM)
    if "gaudi" in ctx.tags or (b"lightning_habana" in data and names_module(modules_on_import_lines(data), _GAUDI_MODULES)):
        out.add(GAUDI)
    return frozenset(out)


def relevant(ctx) -> bool:
    """Cheap per-file test (memoised): does this torch file target XLA or Gaudi at all?"""
    return bool(ctx.fact(torch_targets))


def reach(ctx, node: ast.AST, targets: frozenset[str]) -> frozenset[str]:
    """The targets among `targets` on which `node` can actually run (guards applied)."""
    if not targets:
        return targets
    return ctx.fact(guard_map).reaching(node, targets)


def is_cuda_device_value(node: ast.AST) -> bool:
    """"cuda", "cuda:0", f"cuda:{rank}", "cuda:%d" % i, "cuda:{}".format(i), "cuda:" + str(i),
    torch.device("cuda", i)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(CUDA_STRING.match(node.value))
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda:")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        left = node.left
        return isinstance(left, ast.Constant) and isinstance(left.value, str) and left.value.startswith("cuda:")
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            v = func.value
            return isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.startswith("cuda:")
        if dotted(func) in ("torch.device", "device") and node.args:
            return is_cuda_device_value(node.args[0])
    return False


def string_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def device_replacement(ctx, targets: frozenset[str]) -> tuple[str, str] | None:
    """(device expression, device string) to use instead of CUDA in this file, or None when
    the file aims at devices that need different spellings (XLA and Gaudi both)."""
    text = ctx.text
    if targets and targets <= {GAUDI}:
        return 'torch.device("hpu")', "hpu"
    if targets and targets <= {TPU, TRAINIUM} and "torch_xla" in ctx.tags:
        if "torch_xla.device()" in text:
            return "torch_xla.device()", "xla"
        if re.search(r"\bxm\.xla_device\(\)", text) and re.search(r"import\s+torch_xla\.core\.xla_model\s+as\s+xm\b", text):
            return "xm.xla_device()", "xla"
        return 'torch.device("xla")', "xla"
    return None


def target_words(targets: frozenset[str]) -> str:
    names = {TPU: "TPU", TRAINIUM: "Trainium", GAUDI: "Gaudi"}
    return "/".join(names[t] for t in (TPU, TRAINIUM, GAUDI) if t in targets)


# ---- idioms that spell CUDA but are not a CUDA dependency ---------------------------------

_BF16 = {"torch.bfloat16", "bfloat16"}


def neuron_autocast(call: ast.Call) -> bool:
    """`torch.autocast(device_type="cuda", dtype=torch.bfloat16)`: the Neuron training idiom.
    torch_xla long routed XLA tensors through the CUDA autocast key (pytorch/pytorch#96370:
    "AutocastCUDA is also being used for XLA"), and torch-neuronx training code keeps the
    "cuda" device type with bf16 for that reason; on Trainium it is not a CUDA dependency."""
    device = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device_type"), None)
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), call.args[1] if len(call.args) > 1 else None)
    if not (isinstance(device, ast.Constant) and device.value == "cuda"):
        return False
    if autocast_disabled(call):
        return True  # `autocast("cuda", enabled=False)` turns casting off: nothing runs on CUDA
    # any dtype but a float16 literal (which PTL906 reports): Neuron code passes the dtype it
    # chose (`dtype=self.dtype`, `dtype=args.mixed_precision_dtype`) as often as a literal
    return dtype is not None and not (dotted(dtype) or "").endswith(("float16", "half")) or dotted(dtype) in _BF16


def autocast_disabled(call: ast.Call) -> bool:
    """`torch.autocast(..., enabled=False)`: an autocast region that casts nothing."""
    enabled = next((k.value for k in call.keywords if k.arg == "enabled"), None)
    return isinstance(enabled, ast.Constant) and enabled.value is False


def _module_level(ctx):
    """Statements and expressions outside any def/class body (what runs at import)."""
    stack = list(ctx.module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(children(node))


def shimmed(ctx, member: str) -> bool:
    """Is `torch.cuda.<member>` rebound to a port's version, in this module at import or
    in any file of the project (a patch module: `torch.cuda.synchronize = xm.mark_step`)?"""
    shims = ctx.fact(module_cuda_shims)
    model, rel = file_model(ctx)
    if model is not None:
        shims = shims | model.cuda_shims_of(rel)
    return "*" in shims or member in shims or any(member.startswith(s + ".") for s in shims)


def module_cuda_shims(ctx) -> frozenset[str]:
    """Members of `torch.cuda` this module rebinds at import (`torch.cuda.synchronize =
    xm.mark_step`, `setattr(torch.cuda, "current_device", ...)`); "*" when it replaces the
    whole namespace (`torch.cuda = xla_cuda_shim`). Calls of a rebound member run the shim."""
    out: set[str] = set()
    for node in _module_level(ctx):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for t in targets:
            name = dotted(t)
            if name == "torch.cuda":
                out.add("*")
            elif name.startswith("torch.cuda."):
                out.add(name[len("torch.cuda."):])
        if isinstance(node, ast.Call) and dotted(node.func) == "setattr" and len(node.args) >= 2:
            owner, member = node.args[0], node.args[1]
            if dotted(owner) == "torch.cuda" and isinstance(member, ast.Constant) and isinstance(member.value, str):
                out.add(member.value)
    return frozenset(out)


def cuda_overrides(ctx) -> frozenset[str]:
    """Classes of this module whose own `cuda()` method moves the model elsewhere (its body
    never calls a real `.cuda()`): `model.cuda()` on them is the port's own API."""
    out = set()
    for node in of_class(ctx.module, ast.ClassDef):
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "cuda":
                calls_cuda = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "cuda"
                                 for n in walk(stmt))
                if not calls_cuda:
                    out.add(node.name)
    return frozenset(out)


def calls_own_cuda(ctx, call: ast.Call, parents: dict) -> bool:
    """`self.cuda()` inside such a class, or `m.cuda()` on a name bound to `Cls(...)` of one."""
    classes = ctx.fact(cuda_overrides)
    if not classes or not isinstance(call.func, ast.Attribute):
        return False
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        p = parents.get(call)
        while p is not None and not isinstance(p, ast.ClassDef):
            p = parents.get(p)
        return p is not None and p.name in classes
    if isinstance(receiver, ast.Name):
        for node in of_class(ctx.module, ast.Assign):
            if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                    and node.value.func.id in classes and any(isinstance(t, ast.Name) and t.id == receiver.id for t in node.targets):
                return True
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id in classes:
        return True  # MyModel(...).cuda()
    return False
