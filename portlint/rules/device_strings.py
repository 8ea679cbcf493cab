"""Device and backend strings, `torch.cuda.*`, CUDA environment (PTL901-PTL906).

Every rule here fires only in a file that also targets a non-CUDA device (torch_xla /
Neuron imports, Habana imports, "xla" / "hpu" / "neuron" device strings; JAX for the JAX
forms), and only on code a guard does not already keep on CUDA
(`portlint.analyses.python.guards`). On ROCm PyTorch keeps the CUDA spelling, so rocm is never a
target of this family."""

from __future__ import annotations

import ast

from portlint.core.model import Edit, Fix, Span
from portlint.frontends.python import astindex
from portlint.analyses.python.devices import (
    autocast_disabled,
    calls_own_cuda,
    neuron_autocast,
    relevant,
    shimmed,
    device_replacement,
    is_cuda_device_value,
    reach,
    string_literal,
    target_words,
    torch_targets,
)
from portlint.analyses.python.guards import CUDA_LIKE, GAUDI, OTHER, TPU, TRAINIUM, condition, dotted, guard_map, skips_test, stops, words
from portlint.core.registry import detector

_TORCHISH = frozenset({"torch_xla", "gaudi", "torch"})
# device_types: torch.library.custom_op / register_kernel registrations for one device only
_DEVICE_KWARGS = {"device", "map_location", "pin_memory_device", "device_type", "output_device", "device_types"}
_SCALER = "GradScaler"


def _targets(ctx, node) -> frozenset[str]:
    return reach(ctx, node, ctx.fact(torch_targets))


def _declared_untagged(ctx) -> frozenset[str]:
    """With declared targets, a file that imports no framework (an argument parser, a
    launcher that sets the environment of its workers) still runs there: the declared XLA
    and Gaudi targets, for the rules that need no torch (`--device` defaults, PTL904)."""
    if not ctx.settings.declared_targets or ctx.tags & (_TORCHISH | {"jax"}):
        return frozenset()
    return frozenset(ctx.settings.targets) & {TPU, TRAINIUM, GAUDI}


def _span_between(ctx, start_node_end: tuple[int, int], end: tuple[int, int]) -> Span:
    (l1, c1), (l2, c2) = start_node_end, end
    return Span(l1, ctx.byte_col_to_col(l1, c1), l2, ctx.byte_col_to_col(l2, c2))


def _quote(ctx, node: ast.Constant, text: str) -> str:
    raw = ctx.span_text(ctx.node_span(node))
    q = raw[:1] if raw[:1] in ("'", '"') else '"'
    return f"{q}{text}{q}"


def _gaudi_note(targets) -> str:
    return (" On Gaudi, the GPU Migration Toolkit can map CUDA calls to HPU at run time, but it does not"
            " tune the model; prefer the explicit HPU spelling.") if "gaudi" in targets else ""


# ---- PTL901 -------------------------------------------------------------------------------

def _device_name_target(node: ast.AST) -> bool:
    name = dotted(node) if not isinstance(node, ast.Name) else node.id
    last = name.rsplit(".", 1)[-1].lower() if name else ""
    return last in ("device", "dev", "default_device", "device_name", "target_device", "train_device", "device_type",
                    "accelerator_type") or last.endswith("_device")


def _report_901(ctx, where, targets, what: str, fix: Fix | None) -> None:
    repl = device_replacement(ctx, targets)
    use = f"`{repl[0]}`" if repl else "`torch_xla.device()` on TPU/Trainium or `torch.device(\"hpu\")` on Gaudi"
    ctx.report(
        where,
        what=what,
        targets=tuple(targets),
        on=target_words(targets),
        fix=fix,
        suggestion=f"Use the device this file targets: {use}, or a configurable `device` passed in; "
        "keep CUDA only under a device guard (`if device.type == \"cuda\":`)." + _gaudi_note(targets),
    )


def _string_fix(ctx, node: ast.AST, targets) -> Fix | None:
    repl = device_replacement(ctx, targets)
    if repl is None:
        return None
    new = _quote(ctx, node, repl[1]) if string_literal(node) else f'"{repl[1]}"'
    return Fix(f"use the {repl[1]} device", (Edit(ctx.node_span(node), new),), "unsafe")


def _device_parameter(arg: ast.arg) -> bool:
    name = arg.arg.lower()
    return _device_name_target(ast.Name(id=arg.arg)) or name in ("device_type", "map_location", "backend_device")


def _cuda_defaults(args: ast.arguments):
    """(parameter, default) pairs of a def or lambda whose device parameter defaults to CUDA:
    `def to_device(x, device="cuda")` -- every caller that omits it gets a CUDA device."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return [(a, d) for a, d in pairs if _device_parameter(a) and is_cuda_device_value(d)]


def _places_on(fn: ast.AST, name: str, parents: dict | None = None) -> bool:
    """Does `fn` put tensors on the device its parameter `name` holds: `.to(name)`,
    `device=name` (and the other device keywords), `torch.device(name)`, `.cuda(name)`?
    A constructor that keeps it (`self.device = device`) places on it when a method of the
    class places on that attribute (`device=self.device`)."""
    if _places_on_value(fn, lambda e: isinstance(e, ast.Name) and e.id == name):
        return True
    if parents is None or getattr(fn, "name", "") != "__init__":
        return False
    kept = {t.attr for stmt in astindex.walk(fn) if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id == name
            for t in stmt.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    cls = parents.get(fn)
    if not kept or not isinstance(cls, ast.ClassDef):
        return False
    is_kept = lambda e: isinstance(e, ast.Attribute) and e.attr in kept and isinstance(e.value, ast.Name) and e.value.id == "self"  # noqa: E731
    return any(_places_on_value(m, is_kept) for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _callers_always_pass(ctx, fn: ast.AST, param: ast.arg) -> bool:
    """A private helper (`_get_pixels`) whose every call in this module passes `param`
    (by keyword or position): its CUDA default is never used."""
    name = getattr(fn, "name", "")
    if not name.startswith("_") or name.startswith("__"):
        return False
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    index = positional.index(param.arg) if param.arg in positional else None
    calls = [n for n in astindex.of_class(ctx.module, ast.Call) if _last(n.func) == name]
    if not calls:
        return False
    for call in calls:
        offset = 1 if isinstance(call.func, ast.Attribute) and positional[:1] == ["self"] else 0
        by_position = index is not None and len(call.args) > index - offset and not any(isinstance(a, ast.Starred) for a in call.args)
        if not (by_position or any(k.arg in (param.arg, None) for k in call.keywords)):
            return False
    return True


def _last(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _places_on_value(fn: ast.AST, is_param) -> bool:
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    for stmt in body:
        for n in astindex.walk(stmt):
            if not isinstance(n, ast.Call):
                continue
            if any(k.arg in _DEVICE_KWARGS and is_param(k.value) for k in n.keywords):
                return True
            last = n.func.attr if isinstance(n.func, ast.Attribute) else dotted(n.func)
            if last in ("to", "cuda", "torch.device", "device") and n.args and is_param(n.args[0]):
                return True
    return False


@detector("PTL901", nodes=("Call", "Assign", "AnnAssign", "arguments"), tokens=("cuda", "gpu"))
def cuda_device_string(node, ctx) -> None:
    """Hard-coded CUDA devices in a file that targets XLA or Gaudi; JAX GPU pins in JAX code."""
    if "jax" not in ctx.tags and not relevant(ctx):
        declared = _declared_untagged(ctx)
        if declared and isinstance(node, ast.Call) and _last(node.func) == "add_argument":
            for value in _argument_device_defaults(node):
                targets = reach(ctx, value, declared)
                if targets:
                    _report_901(ctx, value, targets, "a CUDA device string", None)
        return
    if isinstance(node, ast.arguments):
        if not (ctx.tags & _TORCHISH):
            return
        parents = astindex.parents(ctx.module)
        fn = parents.get(node)
        for param, default in _cuda_defaults(node):
            if fn is None or not _places_on(fn, param.arg, parents):
                continue  # a name handed on or looked up (`getattr(torch, device_type)`), not a placement
            if _callers_always_pass(ctx, fn, param):
                continue
            targets = _targets(ctx, default)
            if targets:
                _report_901(ctx, default, targets, f"a CUDA default for the device parameter `{param.arg}` (taken by calls that leave it out)",
                            _string_fix(ctx, default, targets))
        return
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        value = node.value
        names = node.targets if isinstance(node, ast.Assign) else [node.target]
        if value is None:
            return
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and string_literal(value.values[-1]):
            value = value.values[-1]  # `device_type = detected_type() or "cuda"`: the fallback
        elif isinstance(value, ast.IfExp) and any(_device_name_target(t) for t in names):
            # `compute_device = "xpu" if is_xpu_available() else "cuda"`: the CUDA leg (its guard
            # decides where it is taken)
            legs = [leg for leg in (value.body, value.orelse) if string_literal(leg) and is_cuda_device_value(leg)]
            value = legs[0] if len(legs) == 1 else value
        if _jax_env_assign(names, value):
            _jax_report(ctx, value, "`JAX_PLATFORMS` set to the GPU", None)
        elif any(_device_name_target(t) for t in names) and (
            is_cuda_device_value(value) and not isinstance(value, ast.Call) or _is_format(value)
        ):
            targets = _targets(ctx, value)
            if targets:
                _report_901(ctx, value, targets, "a CUDA device string", _string_fix(ctx, value, targets))
        return
    func = node.func
    name = dotted(func)
    # JAX: jax.devices("gpu"), jax.local_devices(backend="gpu"), jax.config.update("jax_platform_name", "gpu")
    if "jax" in ctx.tags and name.startswith(("jax.", "jnp.")) or name in ("devices", "local_devices"):
        _jax_call(node, ctx, name)
        return
    if not (ctx.tags & _TORCHISH):
        return
    if _own_override_call(node, astindex.parents(ctx.module)):
        return  # `self.to("cuda")` in a class that defines its own `to()`: the port's move
    # x.cuda() / model.cuda(rank)
    if isinstance(func, ast.Attribute) and func.attr == "cuda" and name not in ("torch.cuda",):
        if isinstance(func.value, ast.Name) and func.value.id in ("torch", "numba", "cupy", "cp"):
            return
        if calls_own_cuda(ctx, node, astindex.parents(ctx.module)):
            return  # the model's own cuda() override moves it to the port's device
        targets = _targets(ctx, node)
        if not targets:
            return
        repl = device_replacement(ctx, targets)
        fix = None
        if repl is not None:
            span = _span_between(ctx, (func.value.end_lineno, func.value.end_col_offset), (node.end_lineno, node.end_col_offset))
            dev = f'"{repl[1]}"' if repl[0].startswith("torch.device(") else repl[0]
            fix = Fix(f"move to {dev} instead", (Edit(span, f".to({dev})"),), "unsafe")
        _report_901(ctx, node, targets, "`.cuda()`", fix)
        return
    # torch.device("cuda"), torch.device("cuda", rank)
    if name in ("torch.device",) and node.args and is_cuda_device_value(node.args[0]):
        if isinstance(astindex.parents(ctx.module).get(node), ast.arguments):
            return  # a parameter's default: the `arguments` check above judges it (once, with its callers)
        targets = _targets(ctx, node)
        if not targets:
            return
        repl = device_replacement(ctx, targets)
        fix = Fix(f"use {repl[0]}", (Edit(ctx.node_span(node), repl[0]),), "unsafe") if repl else None
        _report_901(ctx, node, targets, "`torch.device(\"cuda\")`", fix)
        return
    if name.endswith(_SCALER):
        return  # PTL906 reports loss scaling
    if name.endswith("set_default_tensor_type") and node.args and string_literal(node.args[0]) and node.args[0].value.startswith("torch.cuda."):
        targets = _targets(ctx, node)
        if targets:
            _report_901(ctx, node.args[0], targets, "a CUDA default tensor type", None)
        return
    candidates: list[ast.AST] = []
    last = func.attr if isinstance(func, ast.Attribute) else name.rsplit(".", 1)[-1]
    if node.args and (last in ("to", "autocast", "set_default_device") or name in ("torch.amp.autocast",) or name.startswith("torch.cuda.")):
        candidates.append(node.args[0])  # also torch.cuda.get_device_properties("cuda")
    if last == "add_argument":
        candidates += _argument_device_defaults(node)
    candidates += [k.value for k in node.keywords if k.arg in _DEVICE_KWARGS]
    if last == "autocast" and autocast_disabled(node):
        return  # `autocast("cuda", enabled=False)` casts nothing and places nothing
    for value in candidates:
        if is_cuda_device_value(value) and (not isinstance(value, ast.Call) or _is_format(value)):
            targets = _targets(ctx, value)
            if last == "autocast" and neuron_autocast(node):
                targets = targets - {TRAINIUM}  # Neuron's bf16 autocast idiom (see devices.neuron_autocast)
            if targets:
                fix = _string_fix(ctx, value, targets)
                if fix is not None and last == "add_argument":
                    fix = Fix(fix.description + " as the default", fix.edits, "display-only")
                _report_901(ctx, value, targets, "a CUDA device string", fix)


def _own_override_call(node: ast.AST, parents: dict) -> bool:
    """`self.to(...)` / `self.cuda(...)` inside a method of a class that defines that method
    itself (an override of `nn.Module`'s): the class's own body decides what the move
    means (`def cuda(self): return self.to("cuda")` with a `to()` that maps "cuda" to the
    XLA device). `super().cuda()` and moves of other objects stay CUDA moves."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr not in ("cuda", "to"):
        return False
    if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
        return False
    p = parents.get(node)
    while p is not None and not isinstance(p, ast.ClassDef):
        p = parents.get(p)
    return p is not None and any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == node.func.attr for s in p.body)


def _argument_device_defaults(node: ast.Call) -> list[ast.AST]:
    """The CUDA default of a device option: `parser.add_argument("--device", default="cuda")`."""
    if not any(string_literal(a) and "device" in a.value for a in node.args):
        return []
    return [k.value for k in node.keywords if k.arg == "default" and is_cuda_device_value(k.value)
            and (not isinstance(k.value, ast.Call) or _is_format(k.value))]


def _is_format(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" and is_cuda_device_value(node)


_GPU_BACKENDS = {"gpu", "cuda", "rocm"}


def _jax_report(ctx, where, what: str, fix: Fix | None) -> None:
    if "jax" not in ctx.tags:
        return
    if TPU not in ctx.fact(guard_map).platforms(where):
        return
    ctx.report(
        where,
        what=what,
        on="TPU",
        targets=("tpu",),
        confidence="medium",
        fix=fix,
        suggestion="Let JAX pick the default backend (`jax.devices()`), or ask for `jax.devices(\"tpu\")` where TPU is meant.",
    )


def _jax_call(node: ast.Call, ctx, name: str) -> None:
    last = name.rsplit(".", 1)[-1]
    if last in ("devices", "local_devices"):
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "backend"), None)
        if arg is not None and string_literal(arg) and arg.value.lower() in _GPU_BACKENDS:
            fix = None
            if node.args and len(node.args) == 1 and not node.keywords:
                fix = Fix("use the default backend", (Edit(ctx.node_span(node), f"{ast.unparse(node.func)}()"),), "unsafe")
            _jax_report(ctx, arg, f"`{last}(\"{arg.value}\")`", fix)
    elif last == "update" and name.endswith("config.update") and len(node.args) >= 2:
        key, val = node.args[0], node.args[1]
        if string_literal(key) and key.value in ("jax_platform_name", "jax_platforms", "jax_default_device") and string_literal(val):
            if val.value.lower().split(",")[0] in _GPU_BACKENDS:
                _jax_report(ctx, val, f"`{key.value}` set to `{val.value}`", None)
    elif last == "jit":
        for k in node.keywords:
            if k.arg == "backend" and string_literal(k.value) and k.value.value.lower() in _GPU_BACKENDS:
                _jax_report(ctx, k.value, "`jit(backend=\"gpu\")`", None)


def _jax_env_assign(names, value) -> bool:
    for t in names:
        if isinstance(t, ast.Subscript) and dotted(t.value).endswith("environ") and string_literal(t.slice):
            if t.slice.value == "JAX_PLATFORMS" and string_literal(value) and value.value.lower().split(",")[0] in _GPU_BACKENDS:
                return True
    return False


# ---- PTL902 -------------------------------------------------------------------------------

# Measured on a CPU-only torch 2.13 (what TPU VMs and Neuron hosts run): these raise.
RAISING = frozenset({
    "synchronize", "current_device", "set_device", "get_device_name", "mem_get_info", "ipc_collect",
    "get_rng_state", "get_rng_state_all", "init", "Stream", "Event", "current_stream", "default_stream",
    "device", "set_per_process_memory_fraction", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "memory_summary", "utilization", "set_stream", "ExternalStream", "caching_allocator_alloc",
    "device_of", "set_sync_debug_mode", "temperature", "power_draw", "clock_rate",
})
# ...these quietly report zero / False, so logic built on them goes wrong without an error.
QUIET = frozenset({
    "device_count", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "memory_stats", "is_bf16_supported", "amp.autocast",
})
# ...and these are housekeeping that does nothing without CUDA and harms nothing: not reported
# (seeding, cache flushes, RNG state save/restore that returns or takes an empty list).
HOUSEKEEPING = frozenset({
    "empty_cache", "manual_seed", "manual_seed_all", "seed", "seed_all", "set_rng_state",
    "set_rng_state_all", "get_rng_state_all", "is_initialized", "get_arch_list", "stream",
})
# calls whose result only feeds a test (`if torch.cuda.device_count() > 1:`) act as guards
_PROBES = frozenset({"device_count", "is_bf16_supported", "memory_allocated", "max_memory_allocated"})


# owned by other rules: availability tests (PTL905 / guards), capability gates (PTL310),
# NVTX (PTL608), NCCL (PTL501), CUDA graphs (PTL610), loss scaling (PTL906)
_OTHER_RULES = ("is_available", "get_device_capability", "get_device_properties", "nvtx", "nccl",
                "CUDAGraph", "graph", "graphs", "make_graphed_callables", "amp.GradScaler")
# torch.hpu counterparts (habana_frameworks.torch registers torch.hpu)
HPU_NAMES = frozenset({
    "synchronize", "device_count", "current_device", "get_device_name", "memory_allocated",
    "max_memory_allocated", "reset_peak_memory_stats", "memory_stats", "Stream", "Event", "stream",
    "current_stream", "default_stream",
})
_XLA_HINTS = {
    "synchronize": "`torch_xla.sync()` to cut the graph, then `xm.wait_device_ops()` to wait",
    "device_count": "`torch_xla.runtime.world_size()` / `xr.global_runtime_device_count()`",
    "current_device": "`torch_xla.device()` (and `xr.global_ordinal()` for the index)",
    "set_device": "nothing: each process owns its XLA device (`torch_xla.device()`)",
    "manual_seed": "`torch.manual_seed(seed)` (seeds every device; `xm.set_rng_state` for XLA only)",
    "manual_seed_all": "`torch.manual_seed(seed)`",
    "empty_cache": "nothing (the XLA runtime owns device memory)",
    "memory_allocated": "`xm.get_memory_info(device)`",
    "max_memory_allocated": "`xm.get_memory_info(device)`",
    "mem_get_info": "`xm.get_memory_info(device)`",
    "Stream": "nothing: XLA schedules the graph itself",
    "Event": "wall-clock timing around `xm.wait_device_ops()`",
    "amp.autocast": "`torch.autocast(\"xla\", dtype=torch.bfloat16)`",
}


def _tested_calls(ctx) -> frozenset[int]:
    """ids of the calls that sit inside a comparison or a test (if / while / assert / and / or)."""
    out: set[int] = set()
    # the nodes of the classes tested below, in walk order
    for node in astindex.of_class(ctx.module, ast.Compare, ast.BoolOp, ast.If, ast.IfExp, ast.While, ast.Assert, ast.Call):
        tests: list[ast.AST] = []
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            tests.append(node)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            tests.append(node.test)
        elif isinstance(node, ast.Call) and node.args and dotted(node.func).rsplit(".", 1)[-1] in ("skipIf", "skipUnless", "skipif"):
            tests.append(node.args[0])
        for t in tests:
            out.update(id(n) for n in astindex.walk(t) if isinstance(n, ast.Call))
    return frozenset(out)


def _cuda_member(name: str) -> str | None:
    for prefix in ("torch.cuda.",):
        if name.startswith(prefix):
            return name[len(prefix):]
    return None


@detector("PTL902", nodes=("Call",), tokens=("cuda",))
def torch_cuda_namespace_call(node, ctx) -> None:
    """`torch.cuda.*` calls in a file that targets XLA or Gaudi."""
    if not relevant(ctx):
        return
    member = _cuda_member(dotted(node.func))
    if member is None or member.startswith(_OTHER_RULES) or member in HOUSEKEEPING:
        return
    if shimmed(ctx, member):
        return  # this module rebinds torch.cuda.<member> (or torch.cuda) to the target's version
    if member in _PROBES and id(node) in ctx.fact(_tested_calls):
        return
    targets = _targets(ctx, node)
    if not targets:
        return
    raises = member in RAISING or member.endswith("Tensor")  # torch.cuda.FloatTensor(...) has no type there
    level = "error" if raises else "warning"
    effect = "raises without CUDA" if raises else ("does nothing without CUDA" if member not in ("device_count", "is_bf16_supported") else "reports no device without CUDA")
    if member == "amp.autocast":
        effect = "is disabled without CUDA (the region runs in full precision)"
    hints = []
    fix = None
    if "gaudi" in targets and member in HPU_NAMES:
        hints.append(f"Gaudi: `torch.hpu.{member}`")
        if targets == {"gaudi"}:
            func = node.func
            fix = Fix(f"use torch.hpu.{member}", (Edit(ctx.node_span(func), f"torch.hpu.{member}"),), "unsafe")
    if targets & {"tpu", "trainium"} and member in _XLA_HINTS:
        hints.append(f"TPU/Trainium: {_XLA_HINTS[member]}")
    if member == "amp.autocast" and "gaudi" in targets:
        hints.append('Gaudi: `torch.autocast("hpu", dtype=torch.bfloat16)`')
    ctx.report(
        node,
        call=f"torch.cuda.{member}",
        effect=effect,
        on=target_words(targets),
        targets={t: level for t in targets},
        fix=fix,
        suggestion=("Instead: " + "; ".join(hints) + "." if hints else "Guard it with `if device.type == \"cuda\":` or use the `torch.accelerator` API.")
        + _gaudi_note(targets),
    )


# ---- PTL903 -------------------------------------------------------------------------------

_CUDNN_FLAGS = {"benchmark", "deterministic", "allow_tf32", "enabled", "benchmark_limit"}
_CUDA_MATMUL_FLAGS = {"allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"}
_SDP_CALLS = {"sdp_kernel", "enable_flash_sdp", "enable_mem_efficient_sdp", "enable_math_sdp", "enable_cudnn_sdp"}


def _backend_flag(name: str) -> bool:
    parts = name.split(".")
    if len(parts) >= 2 and parts[-2] == "cudnn" and parts[-1] in _CUDNN_FLAGS and parts[0] in ("torch", "cudnn", "backends"):
        return True
    return name.startswith("torch.backends.cuda.matmul.") and parts[-1] in _CUDA_MATMUL_FLAGS


def _only_turns_off(call: ast.Call) -> bool:
    """`cudnn.flags(enabled=False)`, `cudnn.flags(False, False)`: every value given is False."""
    values = [*call.args, *(k.value for k in call.keywords)]
    return bool(values) and all(isinstance(v, ast.Constant) and v.value is False for v in values)


@detector("PTL903", nodes=("Assign", "Call"), tokens=("cudnn", "backends.cuda"))
def cudnn_backend_flags(node, ctx) -> None:
    """cuDNN / CUDA matmul and SDPA backend switches in a file that targets XLA or Gaudi."""
    if not relevant(ctx):
        return
    if isinstance(node, ast.Assign):
        hits = [t for t in node.targets if _backend_flag(dotted(t))]
        if not hits or not isinstance(node.value, ast.Constant):
            return  # a value passed through from configuration is plumbing, not a choice
        where, flag = hits[0], dotted(hits[0])
    else:
        name = dotted(node.func)
        if not (name.startswith("torch.backends.cuda.") and name.rsplit(".", 1)[-1] in _SDP_CALLS) and name != "torch.backends.cudnn.flags":
            return
        if name == "torch.backends.cudnn.flags" and _only_turns_off(node):
            return  # `with cudnn.flags(enabled=False):` turns cuDNN off for a block: without cuDNN that is already so
        where, flag = node, name + "()"
    targets = _targets(ctx, where)
    if targets:
        ctx.report(where, flag=flag, on=target_words(targets), targets=tuple(targets),
                   suggestion="Keep it under `if device.type == \"cuda\":`, or drop it for XLA/HPU runs; XLA precision is set with "
                   "`torch_xla.backends.set_mat_mul_precision` / `XLA_USE_BF16`-style settings, HPU has its own graph compiler settings.")


# ---- PTL904 -------------------------------------------------------------------------------

SELECTION_ENV = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES"}
CUDA_ENV = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "NVIDIA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF",
}
_ENV_REWRITE = {
    "tpu": "TPU_VISIBLE_CHIPS with TPU_PROCESS_BOUNDS / TPU_CHIPS_PER_PROCESS_BOUNDS",
    "trainium": "NEURON_RT_VISIBLE_CORES (and NEURON_RT_NUM_CORES)",
    "gaudi": "HABANA_VISIBLE_DEVICES / HABANA_VISIBLE_MODULES",
}


def _env_keys(node) -> list[ast.Constant]:
    """CUDA environment names used as keys of os.environ (subscript, get/setdefault/pop, dict literal)."""
    keys: list[ast.AST] = []
    if isinstance(node, ast.Subscript) and dotted(node.value).endswith("environ"):
        keys.append(node.slice)
    elif isinstance(node, ast.Call):
        name = dotted(node.func)
        if name in ("os.getenv", "os.putenv", "os.unsetenv", "getenv") or (
            isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "setdefault", "pop") and dotted(node.func.value).endswith("environ")
        ):
            keys += node.args[:1]
    elif isinstance(node, ast.Dict):
        keys += [k for k in node.keys if k is not None]
    return [k for k in keys if string_literal(k) and k.value in CUDA_ENV]


@detector("PTL904", nodes=("Subscript", "Call", "Dict"), tokens=tuple(sorted(CUDA_ENV)))
def visible_devices_env(node, ctx) -> None:
    """CUDA device-selection environment variables in a file that targets XLA or Gaudi."""
    declared = frozenset() if relevant(ctx) else _declared_untagged(ctx)
    if not declared and not relevant(ctx):
        return
    for key in _env_keys(node):
        targets = reach(ctx, key, declared) if declared else _targets(ctx, key)
        if targets:
            level = "warning" if key.value in SELECTION_ENV else "note"
            effect = "selects NVIDIA GPUs" if key.value in SELECTION_ENV else "tunes the CUDA runtime"
            ctx.report(key, var=key.value, effect=effect, on=target_words(targets), targets={t: level for t in targets},
                       suggestion="Use the target's own variable: " + "; ".join(f"{t}: {_ENV_REWRITE[t]}" for t in ("tpu", "trainium", "gaudi") if t in targets) + ".")


# ---- PTL905 -------------------------------------------------------------------------------

_TARGET_WORDS = ("xla", "hpu", "neuron", "torch_xla", "habana", "htcore", "tpu", "xm.", "xr.")


def _mentions_target(nodes) -> bool:
    """Does this code choose or test a non-CUDA device (so the other branch is handled)?"""
    for top in nodes:
        for n in astindex.walk(top):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.lower().split(":")[0] in ("xla", "hpu", "neuron", "tpu"):
                return True
            if isinstance(n, (ast.Name, ast.Attribute)):
                text = dotted(n).lower()
                if text and any(w in text for w in _TARGET_WORDS):
                    return True
    return False


def _selects_cuda(nodes) -> bool:
    for top in nodes:
        for n in astindex.walk(top):
            if is_cuda_device_value(n):
                return True
            if isinstance(n, ast.Call):
                name = dotted(n.func)
                if (isinstance(n.func, ast.Attribute) and n.func.attr == "cuda" and name != "torch.cuda") or name.endswith("cuda.set_device"):
                    return True
            if string_literal(n) and n.value == "nccl":
                return True
    return False


_AVAILABILITY_CALLS = {"is_available", "device_count", "is_cuda_available", "is_torch_cuda_available", "is_gpu_available"}


def _is_availability_probe(test: ast.AST) -> bool:
    """The test asks whether CUDA exists (not what an existing tensor or device is)."""
    for n in astindex.walk(test):
        if isinstance(n, ast.Call):
            name = dotted(n.func)
            last = name.rsplit(".", 1)[-1]
            if last in _AVAILABILITY_CALLS and ("cuda" in name or last != "is_available" and last != "device_count"):
                return True
        if isinstance(n, ast.Attribute) and dotted(n).endswith("version.cuda"):
            return True
        # a local flag (`use_cuda = torch.cuda.is_available()`), not a user option (`args.cuda`)
        ident = n.id if isinstance(n, ast.Name) else None
        if ident:
            ws = words(ident)
            if ws and ws[0] in ("use", "no", "on", "has", "with", "cuda", "gpu", "n", "num") and any(w in ("cuda", "gpu", "gpus") for w in ws):
                return True
    return False


def _cuda_test(test) -> tuple[bool, ast.AST] | None:
    """(polarity, atom) when `test` is a CUDA availability test: polarity True when the test
    is true on CUDA (`torch.cuda.is_available()`), False for its negation."""
    if not _is_availability_probe(test):
        return None
    cond = condition(test)
    if cond is None:
        return None
    if cond.when_true <= CUDA_LIKE:
        return True, test
    if cond.when_false <= CUDA_LIKE:
        return False, test
    return None


@detector("PTL905", nodes=("If", "IfExp", "Assert", "Call"), tokens=("cuda", "gpu"))
def accelerator_detection_by_cuda_availability(node, ctx) -> None:
    """Choosing the device with a CUDA-only test, falling back to CPU (or failing) elsewhere."""
    if not relevant(ctx):
        return
    if isinstance(node, ast.Call):
        for k in node.keywords:
            if k.arg == "accelerator" and string_literal(k.value) and k.value.value in ("gpu", "cuda"):
                targets = _targets(ctx, k.value)
                if targets:
                    ctx.report(k.value, test=f'accelerator="{k.value.value}"', outcome="asks for a GPU",
                               on=target_words(targets), targets=tuple(targets),
                               suggestion='Use accelerator="auto" (or "tpu" / "hpu" where that is the target).')
        return
    hit = _cuda_test(node.test)
    if hit is None:
        return
    polarity, atom = hit
    if isinstance(node, ast.Assert):
        if not polarity:
            return
        outcome = "stops the program"
    elif isinstance(node, ast.IfExp):
        cuda_side, other_side = (node.body, node.orelse) if polarity else (node.orelse, node.body)
        if not _selects_cuda([cuda_side]) or _mentions_target([other_side]):
            return
        outcome = "falls back to the CPU"
    else:
        cuda_side, other_side = (node.body, node.orelse) if polarity else (node.orelse, node.body)
        if other_side and skips_test(other_side):
            return  # a test skipped without CUDA: the intended outcome, the program goes on
        if other_side and stops(other_side):
            outcome = "stops the program"
        elif other_side:
            if not _selects_cuda(cuda_side) or _mentions_target(other_side):
                return
            outcome = "falls back to the CPU"
        else:
            # no else: only a device *chosen* here falls back to the value set before the test
            if not _assigns_cuda_device(cuda_side):
                return
            outcome = "falls back to the CPU"
        if _mentions_target(cuda_side):
            return
    if isinstance(node, ast.If) and _dispatches_other_devices(ctx, node, atom):
        return
    if _followed_by_other_device(ctx, node):
        return
    targets = _targets(ctx, atom)
    if targets:
        ctx.report(atom, test=ast.unparse(atom), outcome=outcome, on=target_words(targets), targets=tuple(targets),
                   suggestion="Pick the device with a chain that knows the targets: torch_xla available -> `torch_xla.device()`; "
                   "`hasattr(torch, \"hpu\") and torch.hpu.is_available()` -> `\"hpu\"`; `torch.cuda.is_available()` -> `\"cuda\"`; "
                   "else `\"cpu\"` (or `torch.accelerator.current_accelerator()` where the backend registers one).")


def _dispatches_other_devices(ctx, node: ast.If, atom) -> bool:
    """The if/elif chain also tests other accelerators and has a leg for a target of this
    file (hpu, xla, neuron): a deliberate multi-backend dispatch, not CUDA-or-CPU detection.
    A chain that knows mps/xpu/npu/mlu but no target (`infer_device()` returning "cuda",
    "mps", "xpu" ... else "cpu") still sends TPU/Trainium/Gaudi to the CPU."""
    parents = astindex.parents(ctx.module)
    top = node
    while isinstance(parents.get(top), ast.If) and parents[top].orelse == [top]:
        top = parents[top]
    others = OTHER not in ctx.fact(guard_map).platforms(atom)  # an earlier branch took another accelerator
    legs: list[ast.AST] = []
    branch = [top]
    while len(branch) == 1 and isinstance(branch[0], ast.If):
        cond = condition(branch[0].test)
        if cond is not None and not cond.when_true <= CUDA_LIKE:
            others = True
        legs += [branch[0].test, *branch[0].body]
        branch = branch[0].orelse
    legs += branch
    return others and _mentions_target(legs)


def _followed_by_other_device(ctx, node) -> bool:
    """The statement right after the CUDA-or-CPU choice tests another accelerator and
    chooses it (`device = "cuda" if ... else "cpu"` then `if is_hpu_available(): device =
    "hpu"`): the choice is followed by the port's own branch, so nothing falls back."""
    parents = astindex.parents(ctx.module)
    stmt = node
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = parents.get(stmt)
    owner = parents.get(stmt) if stmt is not None else None
    if owner is None:
        return False
    for name in ("body", "orelse", "finalbody"):
        block = getattr(owner, name, None)
        if isinstance(block, list) and stmt in block:
            i = block.index(stmt)
            nxt = block[i + 1] if i + 1 < len(block) else None
            if isinstance(nxt, ast.If):
                cond = condition(nxt.test)
                other = cond is not None and not cond.when_true <= CUDA_LIKE
                return (other or _mentions_target([nxt.test])) and _mentions_target(nxt.body)
    return False


def _assigns_cuda_device(block) -> bool:
    for stmt in block:
        if isinstance(stmt, ast.Assign) and any(_device_name_target(t) for t in stmt.targets) and is_cuda_device_value(stmt.value):
            return True
        if isinstance(stmt, ast.Return) and stmt.value is not None and is_cuda_device_value(stmt.value):
            return True
    return False


# ---- PTL906 -------------------------------------------------------------------------------

_FP16 = {"torch.float16", "torch.half"}


@detector("PTL906", nodes=("Call",), tokens=("float16", "half", "GradScaler", "fp16", "precision", "amp"))
def mixed_precision_fp16_on_bf16_targets(node, ctx) -> None:
    """fp16 mixed precision and loss scaling in a file that targets XLA or Gaudi."""
    if not relevant(ctx):
        return
    name = dotted(node.func)
    last = node.func.attr if isinstance(node.func, ast.Attribute) else name.rsplit(".", 1)[-1]
    found: list[tuple[ast.AST, str, Fix | None]] = []
    if last == "autocast":
        for k in node.keywords:
            if k.arg == "dtype" and dotted(k.value) in _FP16:
                fix = Fix("autocast to bfloat16", (Edit(ctx.node_span(k.value), "torch.bfloat16"),), "unsafe")
                found.append((k.value, "`autocast(dtype=float16)`", fix))
    elif last == _SCALER:
        found.append((node, "`GradScaler` loss scaling", None))
    elif last == "half" and isinstance(node.func, ast.Attribute) and not node.args and not node.keywords:
        span = _span_between(ctx, (node.func.value.end_lineno, node.func.value.end_col_offset), (node.end_lineno, node.end_col_offset))
        found.append((node, "`.half()`", Fix("cast to bfloat16", (Edit(span, ".to(torch.bfloat16)"),), "unsafe")))
    elif last == "initialize" and name.endswith("amp.initialize") and b"apex" in ctx.data:
        found.append((node, "apex `amp.initialize`", None))
    else:
        for k in node.keywords:
            v = k.value
            if k.arg == "fp16" and isinstance(v, ast.Constant) and v.value is True:
                fix = Fix("train in bf16", (Edit(ctx.node_span(k), "bf16=True"),), "unsafe")
                found.append((k.value, "`fp16=True`", fix))
            elif k.arg == "mixed_precision" and string_literal(v) and v.value == "fp16":
                found.append((v, '`mixed_precision="fp16"`', Fix("use bf16", (Edit(ctx.node_span(v), _quote(ctx, v, "bf16")),), "unsafe")))
            elif k.arg == "precision" and (last.endswith(("Trainer", "Fabric"))) and (
                (isinstance(v, ast.Constant) and v.value in (16, "16", "16-mixed"))
            ):
                found.append((v, f"`precision={ast.unparse(v)}`", None))
    if found and ctx.fact(_precision_choices).inside(node):
        return  # the fp16 path is one the user selects (`if args.fp16:`, `mixed_precision == "fp16"`)
    for where, what, fix in found:
        targets = _targets(ctx, where)
        if targets:
            ctx.report(where, what=what, on=target_words(targets), targets=tuple(targets), fix=fix,
                       suggestion="Use bfloat16 (`torch.autocast(device_type, dtype=torch.bfloat16)`, `bf16=True`) and drop the "
                       "GradScaler: bf16 has fp32's exponent range and needs no loss scaling.")


class _Spans:
    def __init__(self, spans):
        self.spans = spans

    def inside(self, node) -> bool:
        pos = (node.lineno, node.col_offset)
        return any(a <= pos < b for a, b in self.spans)


_PRECISION_WORDS = {"fp16", "float16", "half", "amp", "apex", "precision", "mixed", "dtype", "scaler", "fp32", "bf16"}


def _name_words(identifier: str) -> set[str]:
    """The words of a name as `words` splits them, and its underscore parts whole: `words`
    cuts digits off (`fp16` -> fp, 16), and `fp16` / `bf16` are the words that say precision."""
    return set(words(identifier)) | {part.lower() for part in identifier.split("_") if part}


def _precision_choices(ctx) -> _Spans:
    """Spans of branches taken on a precision setting (`if args.fp16:`, `if dtype == torch.float16:`)."""
    spans = []
    for node in astindex.of_class(ctx.module, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.IfExp):  # in walk order
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _name_words(node.name) & (_PRECISION_WORDS | {"grad"}):
            spans.append(((node.body[0].lineno, node.body[0].col_offset), (node.body[-1].end_lineno, node.body[-1].end_col_offset)))
            continue
        if not isinstance(node, (ast.If, ast.IfExp)):
            continue
        idents = set()
        for n in astindex.walk(node.test):
            if isinstance(n, ast.Name):
                idents.update(_name_words(n.id))
            elif isinstance(n, ast.Attribute):
                idents.update(_name_words(n.attr))
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                idents.update(_name_words(n.value.replace("-", "_")))
        if not idents & _PRECISION_WORDS:
            continue
        branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else [node.body[0], node.body[-1]] + ([node.orelse[0], node.orelse[-1]] if node.orelse else [])
        if isinstance(node, ast.IfExp):
            spans += [((b.lineno, b.col_offset), (b.end_lineno, b.end_col_offset)) for b in branches]
        else:
            spans.append(((node.body[0].lineno, node.body[0].col_offset), (node.body[-1].end_lineno, node.body[-1].end_col_offset)))
            if node.orelse:
                spans.append(((node.orelse[0].lineno, node.orelse[0].col_offset), (node.orelse[-1].end_lineno, node.orelse[-1].end_col_offset)))
    return _Spans(spans)
