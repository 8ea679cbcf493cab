"""Python runtime guards: on which platforms can a given node run?

Python code dispatches on the device at run time, the way C++ does with `#ifdef`:

    if torch.cuda.is_available():          # body: only on NVIDIA or ROCm (HIP poses as CUDA)
        torch.cuda.synchronize()
    if device.type != "hpu":               # early exit: the rest of the block is Gaudi-only
        return
    dev = xm.xla_device() if is_torch_xla_available() else "cuda"   # ternaries, and/or too

This module recognises such conditions and answers, for any `ast` node, the set of
platforms on which it can be reached. Platforms are the portlint targets (`rocm`, `tpu`,
`trainium`, `gaudi`) plus `nvidia`, `cpu` and `other` (mps, xpu, ...).

API (small on purpose; other families may import it):

- `guard_map(ctx)`: use as `ctx.fact(guard_map)`; returns a `Guards`.
- `Guards.platforms(node, requirements=True)`: frozenset of platforms the node can run on
  (`ALL` if unguarded); `requirements=False` ignores hard `raise`/`exit`/`assert`
  requirements on an availability probe (the code a port exposes once they go).
- `Guards.reaching(node, platforms)`: the platforms among `platforms` that reach the node as
  a port sees it (`platforms(node, requirements=False)` narrowed): what every family and the
  traced-region finder ask.
- `exits_for_values_on(stmt, platforms)`: the statement leaves its block for every value on
  `platforms` (`if is_tensor(t) and t.device.type == "xla": return t`).
- `Guards.reason(node, platforms)`: text of the innermost guard that rules out one of
  `platforms` for the node (for messages), or None.
- `Guards.dead_for_amd(node)`: the guard that keeps `node` from every ROCm run, or None
  (the ROCm families, PTL310 and PTL70x, ask this).
- `condition(expr)`: the `Condition` an expression tests (platforms where it can be true
  and where it can be false), or None when it is not a device test.

This is the one evaluator of Python runtime guards: the device-string, distributed, Triton
and capability-gate families all ask it. Besides the device tests above it reads the vendor
tests of `portlint.analyses.python.rocm_branches` (`torch.version.hip`, `is_hip()`, `backend ==
"hip"`, NVIDIA-only flags such as `USE_TMA`), which decide only whether ROCm can be among
the platforms, and three places where code runs only when a test held: `while` bodies,
comprehension elements behind their `if` clauses, and the NVIDIA twin of a function that has
an AMD twin (`get_cuda_autotune_config` beside `get_hip_autotune_config`). Code that never runs
on an XLA or HPU device whatever calls it is read from names too: the body of a flash-attn
attention class (`LlamaFlashAttention2`), of a class named for CUDA, NCCL, cuDNN, Megatron-LM,
Apex or CUDA graphs, or that loads a CUDA extension (`Guards._class_scope`); a branch behind a
device handle (`if self.cuda_device is not None:`) or a platform predicate defined elsewhere
(`_use_triton(x.device)`).

Only the module's own control flow is read (no calls across functions): a function called
from a guarded branch is not itself guarded."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from portlint.frontends.python.names import dotted_name, import_table
from portlint.index.project import file_model
from portlint.analyses.python.rocm_branches import nvidia_twin, polarity
from portlint.frontends.python.astindex import of_class, parents, walk

NVIDIA, ROCM, TPU, TRAINIUM, GAUDI, CPU, OTHER = "nvidia", "rocm", "tpu", "trainium", "gaudi", "cpu", "other"
ALL: frozenset[str] = frozenset({NVIDIA, ROCM, TPU, TRAINIUM, GAUDI, CPU, OTHER})
CUDA_LIKE: frozenset[str] = frozenset({NVIDIA, ROCM})  # torch's "cuda" device on both
XLA: frozenset[str] = frozenset({TPU, TRAINIUM})

# Words (in identifiers and in device / backend strings) and the platforms they name.
_WORDS: dict[str, frozenset[str]] = {
    "cuda": CUDA_LIKE, "gpu": CUDA_LIKE, "gpus": CUDA_LIKE, "nccl": CUDA_LIKE, "cudnn": CUDA_LIKE,
    "rocm": frozenset({ROCM}), "hip": frozenset({ROCM}), "amd": frozenset({ROCM}),
    "nvidia": frozenset({NVIDIA}),
    "tpu": frozenset({TPU}), "tpus": frozenset({TPU}), "xla": XLA,
    "neuron": frozenset({TRAINIUM}), "neuroncore": frozenset({TRAINIUM}), "trainium": frozenset({TRAINIUM}),
    "hpu": frozenset({GAUDI}), "hpus": frozenset({GAUDI}), "habana": frozenset({GAUDI}),
    "gaudi": frozenset({GAUDI}), "hccl": frozenset({GAUDI}),
    "cpu": frozenset({CPU}), "gloo": frozenset({CPU}),
    "mps": frozenset({OTHER}), "xpu": frozenset({OTHER}), "npu": frozenset({OTHER}), "mlu": frozenset({OTHER}),
    "musa": frozenset({OTHER}),
    # NVIDIA's Apex (and its ROCm fork) runs on CUDA devices only; torch.distributed's FSDP
    # runs on NCCL, HCCL or gloo, while torch_xla shards with its own XLA FSDP wrapper
    "apex": CUDA_LIKE, "fsdp": ALL - XLA,
    # Megatron-LM (its fused kernels and Apex) runs on CUDA devices only; CUDA graphs are CUDA's
    "megatron": CUDA_LIKE, "cudagraph": CUDA_LIKE, "cudagraphs": CUDA_LIKE,
}
# Words that name a platform only in a predicate asked of a device (`_use_triton(x.device)`):
# Triton compiles for NVIDIA, AMD and Intel GPUs, not for TPU, Trainium or Gaudi, but a bare
# `HAS_TRITON` is no device test (torch's wheels install triton on any Linux host)
_DEVICE_PREDICATE_WORDS: dict[str, frozenset[str]] = {"triton": CUDA_LIKE | {OTHER}}
# words of a class name that make the whole class one platform's code (`CudaEnvironment`,
# `NcclCommunicator`, `MegatronLMTrainStep`, `CUDAGraphRunner`): `Guards._class_scope`.
# Not "triton" (a Triton class may be built anywhere; PTL710 reports its kernels),
# Not "gpu" (timm's `HighPerfGpuNet` is an architecture that runs anywhere) nor a bare
# "flash" (Neuron and Gaudi have flash attention of their own)
_CLASS_WORDS = ("cuda", "nccl", "cudnn", "megatron", "apex", "cudagraph", "cudagraphs")
# transformers' classes for the flash-attn package (`LlamaFlashAttention2`,
# `MiniCPMFlashAttention2`), chosen only for `attn_implementation="flash_attention_2"`
# words of a name whose value exists only on that device (`self.cuda_device is not None`);
# not cpu, gloo or fsdp (a `cpu_offload` or `fsdp_plugin` is set anywhere)
_HANDLE_WORDS = frozenset(("cuda", "gpu", "nccl", "cudnn", "cudagraph", "cudagraphs", "megatron", "apex",
                           "hpu", "habana", "hccl", "tpu", "xla", "neuron"))
_FLASH_ATTN_CLASS = re.compile(r"Flash(?:Attention|Attn)_?[23]$")
_NEGATIONS = {"no", "not", "disable", "disabled", "without", "skip"}
_PREDICATE_WORDS = {"use", "is", "has", "have", "on", "with", "enable", "enabled", "available", "run", "using", "multi", "n", "num"}
_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@dataclass(frozen=True)
class Condition:
    """What a test expression says about the platform."""

    when_true: frozenset[str]   # platforms on which the test can be true
    when_false: frozenset[str]  # platforms on which the test can be false
    text: str = ""

    def negate(self) -> "Condition":
        return Condition(self.when_false, self.when_true, f"not ({self.text})")


def words(identifier: str) -> list[str]:
    """`is_torch_xla_available` -> [is, torch, xla, available]; `MULTI_GPU` -> [multi, gpu]."""
    return [w.lower() for part in identifier.split("_") for w in _SPLIT.findall(part)]


def literal_platforms(text: str) -> frozenset[str] | None:
    """Platforms a device or backend string names: "cuda:0" -> nvidia+rocm, "TPU" -> tpu."""
    base = text.strip().lower().split(":", 1)[0]
    return _WORDS.get(base)


def dotted(node: ast.AST) -> str:
    """`torch.cuda.is_available` for Attribute/Name chains ("" for anything else):
    `names.dotted_name`, with "" for its None."""
    return dotted_name(node) or ""


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _identifier_platforms(name: str, *, predicate: bool) -> tuple[frozenset[str], bool] | None:
    """Platforms an identifier refers to, and whether it is negated (`no_cuda`).

    With `predicate`, the identifier must read like a yes/no flag (`use_cuda`, `args.tpu`,
    `is_hpu`, `n_gpu`), not just mention a platform (`cuda_kernel`)."""
    ws = words(name)
    # a `tpu` flag (`self.tpu`, `is_tpu`, `use_tpu`) selects torch_xla's device path, which
    # Trainium's torch-neuronx shares; a "tpu" string names the TPU alone (literal_platforms)
    found = [XLA if w in ("tpu", "tpus") else _WORDS[w] for w in ws if w in _WORDS]
    if not found:
        return None
    plats = frozenset().union(*found)
    negated = any(w in _NEGATIONS for w in ws)
    if predicate:
        others = [w for w in ws if w not in _WORDS and w not in _NEGATIONS]
        if others and not any(w in _PREDICATE_WORDS for w in others) and not name.isupper():
            return None
    return plats, negated


def _from_words(plats: frozenset[str], negated: bool, text: str) -> Condition:
    cond = Condition(plats, ALL - plats, text)
    return cond.negate() if negated else Condition(cond.when_true, cond.when_false, text)


_AVAILABLE_CALLS = {
    "is_torch_xla_available": XLA, "is_torch_tpu_available": XLA, "is_tpu_available": XLA,
    "is_xla_available": XLA, "is_torch_neuroncore_available": frozenset({TRAINIUM}),
    "is_torch_hpu_available": frozenset({GAUDI}), "is_habana_available": frozenset({GAUDI}),
    "is_hpu_available": frozenset({GAUDI}), "is_torch_cuda_available": CUDA_LIKE,
    "is_cuda_available": CUDA_LIKE, "is_hip": frozenset({ROCM}), "is_rocm": frozenset({ROCM}),
    "is_cuda": frozenset({NVIDIA}), "is_cuda_alike": CUDA_LIKE, "is_tpu": frozenset({TPU}),
    "is_hpu": frozenset({GAUDI}), "is_neuron": frozenset({TRAINIUM}), "is_cpu": frozenset({CPU}),
    "is_xpu": frozenset({OTHER}), "is_mps": frozenset({OTHER}), "is_torch_mps_available": frozenset({OTHER}),
    "is_torch_npu_available": frozenset({OTHER}), "is_torch_xpu_available": frozenset({OTHER}),
    # NVIDIA-GPU features and GPU-only libraries (transformers' helpers)
    "is_torch_tf32_available": CUDA_LIKE, "is_torch_bf16_gpu_available": CUDA_LIKE,
    "is_sagemaker_mp_enabled": CUDA_LIKE, "is_sagemaker_dp_enabled": CUDA_LIKE,
}


def _call_condition(call: ast.Call) -> Condition | None:
    name = dotted(call.func)
    last = name.rsplit(".", 1)[-1] if name else ""
    if last == "is_available" and "." in name:
        owner = name.rsplit(".", 2)[-2]
        plats = _WORDS.get(owner.lower())
        if plats is not None:
            return Condition(plats, ALL - plats, _text(call))
        return None
    if last.startswith("is_") and last.endswith("available") and last not in _AVAILABLE_CALLS:
        # is_npu_available(), is_mlu_available(), is_torch_xpu_available(): any known device word
        ws = [w for w in words(last) if w not in ("is", "torch", "available")]
        if ws and all(w in _WORDS for w in ws):
            plats = frozenset().union(*(_WORDS[w] for w in ws))
            return Condition(plats, ALL - plats, _text(call))
    if last in _AVAILABLE_CALLS:
        plats = _AVAILABLE_CALLS[last]
        for kw in call.keywords:  # transformers/accelerate: is_torch_xla_available(check_is_gpu=True)
            if kw.arg in ("check_is_gpu", "check_is_tpu") and isinstance(kw.value, ast.Constant) and kw.value.value is True:
                plats = CUDA_LIKE if kw.arg == "check_is_gpu" else frozenset({TPU})
        return Condition(plats, ALL - plats, _text(call))
    if last.startswith("is_") and last.endswith("_tensor") and call.args:
        # fairseq's is_xla_tensor(t), is_hpu_tensor(t): a device test of one tensor
        ws = [w for w in words(last) if w not in ("is", "tensor")]
        if ws and all(w in _WORDS for w in ws):
            plats = frozenset().union(*(_WORDS[w] for w in ws))
            return Condition(plats, ALL - plats, _text(call))
    if last == "device_count" and name.endswith("cuda.device_count"):
        return Condition(CUDA_LIKE, ALL - CUDA_LIKE, _text(call))
    if last and call.args and words(last)[:1] in (["use"], ["can"], ["supports"]):
        # a predicate named for a platform, defined elsewhere (`can_use_cuda_graphs(cfg)`,
        # `_use_triton(x.device)` asked of a device): true only where that platform is;
        # false anywhere
        ws = words(last)
        if any(w in _NEGATIONS for w in ws):
            return None
        found = [_WORDS[w] for w in ws if w in _WORDS and w in _HANDLE_WORDS]
        if any(_is_device(a) for a in call.args):
            found += [_DEVICE_PREDICATE_WORDS[w] for w in ws if w in _DEVICE_PREDICATE_WORDS]
        if found:
            return Condition(frozenset().union(*found), ALL, _text(call))
    return None


def _is_device(node: ast.AST) -> bool:
    """`x.device`, `device`, `self.cuda_device`: an argument that is a device."""
    name = _last_name(node)
    return bool(name) and (name == "device" or name.endswith("_device"))


# attention backends that exist only on CUDA devices (flash-attn also builds for ROCm, and
# transformers maps the name to its NPU/XPU kernels): `_attn_implementation == "flash_attention_2"`
_GPU_ATTENTION: dict[str, frozenset[str]] = {
    name: CUDA_LIKE | {OTHER} for name in ("flash_attention_2", "flash_attention_3", "flash_attn", "flash_attn_2", "flash_attn_3")
}


# attention kernels from the Hugging Face kernel hub (`attn_implementation=
# "kernels-community/flash-attn3"`): flash-attn builds and AMD's aiter run on GPUs only
_HUB_GPU_ATTENTION = re.compile(r"^kernels-community/(?:vllm-)?(?:flash-?attn\d*|aiter[\w-]*)(?:@[\w.-]+)?$")


def _gpu_attention_value(node: ast.AST, constants: dict[str, ast.AST], registered=None) -> frozenset[str] | None:
    """Platforms of an `attn_implementation` value that can only name a GPU-only kernel: a
    string (transformers' flash_attention_2/3, a kernel-hub flash-attn or aiter build), each
    leg of a ternary, a module-level name bound once to one, or an imported constant naming
    an implementation another project module registers on GPU-only hub kernels
    (`registered(name)`: the hub names it loads, None when unknown); None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        named = _attention_backend(node)
        if named is not None:
            return named
        return CUDA_LIKE | {OTHER} if _HUB_GPU_ATTENTION.match(node.value) else None
    if isinstance(node, ast.IfExp):
        legs = (_gpu_attention_value(node.body, constants, registered), _gpu_attention_value(node.orelse, constants, registered))
        return None if None in legs else legs[0] | legs[1]
    if isinstance(node, ast.Name) and node.id in constants:
        return _gpu_attention_value(constants[node.id], {})
    if isinstance(node, ast.Name) and registered is not None:
        hubs = registered(node.id)
        if hubs and all(_HUB_GPU_ATTENTION.match(h) for h in hubs):
            return CUDA_LIKE | {OTHER}
    return None


def _module_strings(module: ast.Module) -> dict[str, ast.AST]:
    """Module-level names assigned exactly once (`TREE_ATTENTION = "..."`), to their value."""
    seen: dict[str, list[ast.AST]] = {}
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            seen.setdefault(stmt.targets[0].id, []).append(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            seen.setdefault(stmt.target.id, []).append(stmt.value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def _hard_wired_attention(cls: ast.ClassDef, constants: dict[str, ast.AST], registered=None) -> tuple[frozenset[str], int] | None:
    """The platforms of the GPU-only attention kernel a class loads its model with, and the
    line: every `attn_implementation` the class's own code sets (a call's keyword,
    `kwargs.setdefault("attn_implementation", ...)`, a dict entry) names one, and at least
    one is set. trl's AsyncDistillationTrainer trains padding-free on flash-attn3 or aiter
    kernels only, so none of its methods runs on an XLA or HPU device."""
    found: list[tuple[frozenset[str] | None, int]] = []
    for n in walk(cls):
        value = None
        if isinstance(n, ast.keyword) and n.arg == "attn_implementation":
            value = n.value
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "setdefault"
              and len(n.args) == 2 and isinstance(n.args[0], ast.Constant) and n.args[0].value == "attn_implementation"):
            value = n.args[1]
        elif isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values):
                if isinstance(k, ast.Constant) and k.value == "attn_implementation":
                    found.append((_gpu_attention_value(v, constants, registered), getattr(v, "lineno", cls.lineno)))
            continue
        if value is not None:
            found.append((_gpu_attention_value(value, constants, registered), getattr(value, "lineno", cls.lineno)))
    if not found or any(p is None for p, _ in found):
        return None
    return frozenset().union(*(p for p, _ in found)), found[0][1]


def _attention_backend(node: ast.AST) -> frozenset[str] | None:
    """Platforms of a CUDA-only attention backend named by a string (or a tuple of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _GPU_ATTENTION.get(node.value.lower())
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        parts = [_attention_backend(e) for e in node.elts]
        return None if any(p is None for p in parts) else frozenset().union(*parts)
    return None


def _value_platforms(node: ast.AST) -> frozenset[str] | None:
    """Platforms named by a compared value: a device or backend string, or an enum-like
    constant (`DistributedType.XLA`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return literal_platforms(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        parts = [_value_platforms(e) for e in node.elts]
        if any(p is None for p in parts):
            return None
        return frozenset().union(*parts)
    name = _last_name(node)
    if name and name.isupper():
        hit = _identifier_platforms(name, predicate=False)
        if hit and not hit[1]:
            return hit[0]
    return None


def _compare_condition(cmp: ast.Compare) -> Condition | None:
    if len(cmp.ops) != 1:
        return None
    op, left, right = cmp.ops[0], cmp.left, cmp.comparators[0]
    # counts: torch.cuda.device_count() > 0, args.n_gpu > 1
    if isinstance(right, ast.Constant) and isinstance(right.value, int) and not isinstance(right.value, bool):
        subject = left.func if isinstance(left, ast.Call) else left
        hit = _identifier_platforms(_last_name(subject) or dotted(subject), predicate=False)
        if isinstance(left, ast.Call) and dotted(left.func).endswith("cuda.device_count"):
            hit = (CUDA_LIKE, False)
        if isinstance(left, ast.Call) and dotted(left.func) == "len":
            return None
        if not hit or hit[1]:
            return None
        plats, n = hit[0], right.value
        if (isinstance(op, ast.Gt) and n == 0) or (isinstance(op, ast.GtE) and n == 1) or (isinstance(op, ast.NotEq) and n == 0):
            return Condition(plats, ALL - plats, _text(cmp))
        if (isinstance(op, ast.Gt) and n >= 1) or (isinstance(op, ast.GtE) and n >= 2):
            return Condition(plats, ALL, _text(cmp))
        if (isinstance(op, ast.Eq) and n == 0) or (isinstance(op, ast.Lt) and n == 1):
            return Condition(ALL - plats, plats, _text(cmp))
        return None
    # `torch.version.hip is None` / `is not None`
    if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
        inner = _condition(left)
        if inner is None and isinstance(left, (ast.Name, ast.Attribute)):
            # a handle named for a platform (`self.cuda_device`, `nccl_comm`, `cuda_graph`):
            # it is set only where the platform is; unset anywhere
            named = [w for w in words(_last_name(left)) if w in _HANDLE_WORDS]
            if named and not any(w in _NEGATIONS for w in words(_last_name(left))):
                inner = Condition(frozenset().union(*(_WORDS[w] for w in named)), ALL, _text(left))
        if inner is None:
            return None
        return Condition(inner.when_false, inner.when_true, _text(cmp)) if isinstance(op, ast.Is) else Condition(inner.when_true, inner.when_false, _text(cmp))
    if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
        # a chosen attention backend: equal only where it exists, unequal anywhere
        backend = _attention_backend(right) if isinstance(op, (ast.In, ast.NotIn)) else _attention_backend(right) or _attention_backend(left)
        if backend is not None:
            cond = Condition(backend, ALL, _text(cmp))
            return cond.negate() if isinstance(op, (ast.NotEq, ast.NotIn)) else cond
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        if isinstance(op, (ast.In, ast.NotIn)):
            # "cuda" in str(device)  /  device.type in ("cuda", "hpu")
            if isinstance(left, ast.Constant) and isinstance(left.value, str):
                plats = literal_platforms(left.value)
            else:
                plats = _value_platforms(right) if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else None
        else:
            plats = _value_platforms(right)
            if plats is None:
                plats = _value_platforms(left)
        if plats is None:
            return None
        cond = Condition(plats, ALL - plats, _text(cmp))
        return cond.negate() if isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)) else cond
    return None


def condition(expr: ast.AST, aliases: dict[str, Condition] | None = None) -> Condition | None:
    """The device test `expr` makes, or None when it does not test the platform.

    `aliases` maps local names to the test they hold (`on_cuda = x.device.type == "cuda"`;
    `idx = d.index if d.type == "cuda" else None` makes `idx is not None` that test)."""
    cond = _condition(expr, aliases)
    if cond is None:
        return None
    return Condition(cond.when_true, cond.when_false, _text(expr))


def _condition(expr: ast.AST, aliases: dict[str, Condition] | None = None) -> Condition | None:
    if aliases and isinstance(expr, ast.Name) and expr.id in aliases:
        return aliases[expr.id]
    if aliases and isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id + "()" in aliases:
        return aliases[expr.func.id + "()"]  # a predicate helper of the module (`_supports_kernel(x)`)
    if aliases and isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.left, ast.Name) \
            and expr.left.id in aliases and isinstance(expr.comparators[0], ast.Constant) and expr.comparators[0].value is None \
            and isinstance(expr.ops[0], (ast.Is, ast.IsNot)):
        alias = aliases[expr.left.id]
        return alias if isinstance(expr.ops[0], ast.IsNot) else alias.negate()
    if aliases and isinstance(expr, (ast.UnaryOp, ast.BoolOp)):
        return _combine(expr, aliases)
    # the text (`ast.unparse`) is made only for a condition found: most expressions are none
    if isinstance(expr, (ast.UnaryOp, ast.BoolOp)):
        return _combine(expr, aliases)

    if isinstance(expr, ast.Call):
        name = dotted(expr.func)
        # str(device).startswith("cuda") / device.type.startswith(("cuda", "hpu"))
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "startswith" and expr.args:
            # a dotted module prefix (`opt_class.startswith("apex.")`, timm's optimizer factory)
            # names the package's platforms: the branch picks that package's classes
            arg = expr.args[0]
            prefix = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
            if prefix.endswith(".") and prefix.count(".") == 1:
                plats = literal_platforms(prefix[:-1])  # false: any other package, on any platform
                return Condition(plats, ALL, _text(expr)) if plats is not None else None
            plats = _value_platforms(arg)
            if plats is not None:
                return Condition(plats, ALL - plats, _text(expr))
            return None
        if name in ("bool",) and expr.args:
            return _condition(expr.args[0])
        return _call_condition(expr)
    if isinstance(expr, ast.Compare):
        return _compare_condition(expr)
    if isinstance(expr, (ast.Attribute, ast.Name)):
        name = dotted(expr)
        if name.endswith("version.hip"):
            return Condition(frozenset({ROCM}), ALL - {ROCM}, _text(expr))
        if name.endswith("version.cuda"):
            return Condition(frozenset({NVIDIA}), ALL - {NVIDIA}, _text(expr))
        if isinstance(expr, ast.Attribute) and expr.attr in ("is_cuda", "is_hpu", "is_xla", "is_cpu", "is_mps", "is_xpu"):
            plats = _WORDS[expr.attr[3:]]
            return Condition(plats, ALL - plats, _text(expr))
        hit = _identifier_platforms(_last_name(expr), predicate=True)
        if hit:
            return _from_words(hit[0], hit[1], _text(expr))
    return None


def _combine(expr: ast.AST, aliases) -> Condition | None:
    text = ""
    if isinstance(expr, ast.UnaryOp):
        if not isinstance(expr.op, ast.Not):
            return None
        inner = _condition(expr.operand, aliases)
        return inner.negate() if inner else None
    parts = [_condition(v, aliases) for v in expr.values]
    if all(p is None for p in parts):
        return None
    unknown = Condition(ALL, ALL)
    parts = [p or unknown for p in parts]
    if isinstance(expr.op, ast.And):
        t = frozenset.intersection(*(p.when_true for p in parts))
        f = frozenset().union(*(p.when_false for p in parts))
    else:
        t = frozenset().union(*(p.when_true for p in parts))
        f = frozenset.intersection(*(p.when_false for p in parts))
    return Condition(t, f, text)


def _vendor_condition(expr: ast.AST) -> Condition | None:
    """What a vendor test says about ROCm alone: `not_amd` rules ROCm out where the test is
    true, `amd` where it is false."""
    p = polarity(expr)
    if p == "not_amd":
        return Condition(ALL - {ROCM}, ALL, _text(expr))
    if p == "amd":
        return Condition(ALL, ALL - {ROCM}, _text(expr))
    return None


def _guard_condition(expr: ast.AST, aliases: dict[str, Condition] | None) -> Condition | None:
    """The device test of `expr` narrowed by its vendor test (both over-approximate)."""
    device = condition(expr, aliases)
    vendor = _vendor_condition(expr)
    if vendor is None or device is None:
        return device or vendor
    return Condition(device.when_true & vendor.when_true, device.when_false & vendor.when_false, device.text)


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # unparse of a partial tree
        return type(node).__name__


# ---- regions ----------------------------------------------------------------------------

Pos = tuple[int, int]


@dataclass(frozen=True)
class Region:
    start: Pos  # (line, byte column), inclusive
    end: Pos    # exclusive
    platforms: frozenset[str]
    reason: str  # e.g. "inside `if torch.cuda.is_available():` (line 12)"
    # a hard requirement (`if not torch.cuda.is_available(): sys.exit()`, `assert ...`) on an
    # availability probe: reachability is true, but a port removes the requirement itself
    requirement: bool = False


def _start(node: ast.AST) -> Pos:
    return (node.lineno, node.col_offset)


def _end(node: ast.AST) -> Pos:
    return (node.end_lineno or node.lineno, node.end_col_offset if node.end_col_offset is not None else node.col_offset + 1)


_EXIT_CALLS = {"sys.exit", "exit", "quit", "os._exit", "pytest.skip", "unittest.SkipTest"}


def skips_test(block: list[ast.stmt]) -> bool:
    """The block ends by skipping a test: `raise unittest.SkipTest(...)`, `self.skipTest(...)`,
    `pytest.skip(...)`. A skipped test is the intended outcome off its platform, not a failure."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Raise) and last.exc is not None:
        exc = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
        return _last_name(exc) == "SkipTest"
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        name = dotted(last.value.func)
        return name == "pytest.skip" or _last_name(last.value.func) == "skipTest"
    return False


def terminates(block: list[ast.stmt]) -> bool:
    """The block never falls through (return, raise, continue, break, sys.exit(), a test skip)."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if skips_test(block):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and dotted(last.value.func) in _EXIT_CALLS:
        return True
    if isinstance(last, ast.If):
        return terminates(last.body) and bool(last.orelse) and terminates(last.orelse)
    return False


def _predicate_helpers(module: ast.Module) -> dict[str, Condition]:
    """Module functions that return a device test in a conjunction, keyed `name()`:

        def _supports_kernel(x):
            ok = x.device.type in ("cuda", "xpu") and x.ndim == 2
            if strict:
                ok = ok and x.is_contiguous()
            return ok

    A call of it is true only where the device test can be (false anywhere: the other terms
    may fail). Only a single `return` of an expression or of one local name is read; each
    binding of the name may use the name itself (`ok = ok and ...`)."""
    out: dict[str, Condition] = {}
    returns_in: dict[ast.AST, int] | None = None  # statement of the module -> `return`s in it
    for fn in module.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name in ("__init__",):
            continue
        last = fn.body[-1] if fn.body else None
        if not isinstance(last, ast.Return) or last.value is None:
            continue  # the one `return` must end the body
        if returns_in is None:
            returns_in, up = {}, parents(module)
            for n in of_class(module, ast.Return):
                top = n
                while up.get(top) is not module:
                    top = up[top]
                returns_in[top] = returns_in.get(top, 0) + 1
        if returns_in.get(fn, 0) != 1:
            continue
        value = last.value
        if isinstance(value, ast.Name):
            name, cur = value.id, None
            for stmt in walk(fn):
                if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For)) and isinstance(getattr(stmt, "target", None), ast.Name) and stmt.target.id == name:
                    cur = None
                    break
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                    cond = _condition(stmt.value, {name: cur} if cur is not None else None)
                    if cond is None or (cur is not None and not cond.when_true <= cur.when_true):
                        cur = None
                        break
                    cur = cond
            cond = cur
        else:
            cond = _condition(value)
        if cond is not None and cond.when_true != ALL:
            out[fn.name + "()"] = Condition(cond.when_true, ALL, f"{fn.name}()")
    return out


def _aliases(module: ast.Module) -> dict[str, Condition]:
    """Names that hold a device test, assigned exactly once in the module, and the module's
    predicate helpers (`_predicate_helpers`)."""
    seen: dict[str, Condition | None] = {}
    for node in of_class(module, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For):  # in walk order
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        elif isinstance(node, (ast.AugAssign, ast.For)) and isinstance(node.target, ast.Name):
            seen[node.target.id] = None
            continue
        else:
            continue
        cond = _condition(value)
        if cond is None and isinstance(value, ast.IfExp):
            # `x = something if <test> else None`: `x is not None` means the test held
            inner = _condition(value.test)
            if inner is not None and isinstance(value.orelse, ast.Constant) and value.orelse.value is None:
                cond = inner
            elif inner is not None and isinstance(value.body, ast.Constant) and value.body.value is None:
                cond = inner.negate()
        if name in seen:
            prev = seen[name]
            same = prev is not None and cond is not None and (prev.when_true, prev.when_false) == (cond.when_true, cond.when_false)
            seen[name] = prev if same else None
        else:
            seen[name] = cond
    out = {k: v for k, v in seen.items() if v is not None}
    out.update(_predicate_helpers(module))
    return out


def stops(block: list[ast.stmt]) -> bool:
    """The block ends the program or raises (not a plain return / continue / break, nor a
    test skip: skipping is the intended outcome, and what follows is guarded by it)."""
    if skips_test(block):
        return False
    last = block[-1]
    if isinstance(last, ast.Raise):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and dotted(last.value.func) in _EXIT_CALLS


def exits_for_values_on(stmt: ast.stmt, platforms) -> bool:
    """`if torch.is_tensor(t) and t.device.type == "xla": return t`: a block exit (no else)
    taken for every value on `platforms`, because one operand of the test (or its `and`) is a
    device test true only there. The whole test is no platform guard (it is also false for a
    CPU tensor on an XLA host), so this says what the rest of the block sees: no value on
    `platforms`, while `Guards.platforms` still lets the platforms reach it."""
    if not isinstance(stmt, ast.If) or stmt.orelse or not stmt.body or not isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue)):
        return False
    ops = stmt.test.values if isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.And) else [stmt.test]
    for op in ops:
        cond = condition(op)
        if cond is not None and cond.when_true and cond.when_true <= frozenset(platforms):
            return True
    return False


def is_probe(test: ast.AST) -> bool:
    """The test asks whether a platform is present (`torch.cuda.is_available()`,
    `torch.cuda.device_count()`, `is_torch_xla_available()`), not what a tensor is on."""
    for n in walk(test):
        if isinstance(n, ast.Call):
            last = _last_name(n.func)
            if last in ("is_available", "device_count") or (last.startswith("is_") and last.endswith("available")):
                return True
    return False


_KINDS: dict[type, tuple[str, tuple[str, ...]]] = {}
# the classes whose nodes `Guards` reads: a kind below, or a statement block (body, orelse,
# finalbody); every other node gives nothing
_READ_CLASSES = (
    ast.If, ast.IfExp, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.BoolOp, ast.ListComp,
    ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.Module, ast.Interactive, ast.For, ast.AsyncFor, ast.With,
    ast.AsyncWith, ast.Try, ast.TryStar, ast.ExceptHandler, ast.match_case,
)


def _node_kind(cls: type) -> tuple[str, tuple[str, ...]]:
    """What `Guards` reads of a node class: its kind ("branch", "def", "boolop",
    "comprehension" or "") and which of its fields can hold a statement block."""
    try:
        return _KINDS[cls]
    except KeyError:
        pass
    if issubclass(cls, (ast.If, ast.IfExp, ast.While)):
        kind = "branch"
    elif issubclass(cls, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        kind = "def"
    elif issubclass(cls, ast.BoolOp):
        kind = "boolop"
    elif issubclass(cls, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        kind = "comprehension"
    else:
        kind = ""
    fields = getattr(cls, "_fields", ())
    value = _KINDS[cls] = (kind, tuple(f for f in ("body", "orelse", "finalbody") if f in fields))
    return value


def _cuda_extension(cls: ast.ClassDef) -> str:
    """The CUDA-only module a class imports in its body (`importlib.import_module(
    "fused_adam_cuda")`, `import fused_layer_norm_cuda`, `from apex import amp`), or "".
    Only the top-level package's name is read: `from torch.cuda import amp` names torch."""
    for n in walk(cls):
        if isinstance(n, ast.Import):
            names = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            names = [n.module]
        elif (isinstance(n, ast.Call) and dotted(n.func) in ("importlib.import_module", "import_module") and n.args
              and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
            names = [n.args[0].value]
        else:
            continue
        for name in names:
            top = name.partition(".")[0]
            if any(w in _CLASS_WORDS for w in words(top)):
                return top
    return ""


class Guards:
    """Platform reachability of every node in one module (see the module docstring)."""

    def __init__(self, module: ast.Module, registered=None):
        """`registered(name)`: the kernel-hub names of the attention implementation an imported
        constant names (`ProjectModel.registered_attention`), None when unknown or outside a project."""
        self.regions: list[Region] = []
        self._registered = registered
        self.aliases = _aliases(module)
        self._module_strings = _module_strings(module)
        self._conditions: dict[ast.AST, Condition | None] = {}  # test -> _guard_condition (an If's test is read twice)
        functions = [n.name for n in of_class(module, ast.FunctionDef, ast.AsyncFunctionDef)]
        # the module's one shared walk, in ast.walk order: the nodes of the classes read below
        for node in of_class(module, *_READ_CLASSES):
            kind, blocks = _node_kind(node.__class__)
            if kind == "branch":
                self._branches(node)
            elif kind == "def":
                self._decorators(node)
                if isinstance(node, ast.ClassDef):
                    self._class_scope(node)
                if not isinstance(node, ast.ClassDef) and nvidia_twin(node.name, functions):
                    self._add(node.body[0], node.body[-1], ALL - {ROCM}, f"in `{node.name}`, the NVIDIA variant of a function with an AMD twin")
            elif kind == "boolop":
                self._short_circuit(node)
            elif kind == "comprehension":
                self._comprehension(node)
            for fld in blocks:
                block = getattr(node, fld, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    self._early_exits(block)
        self.regions.sort(key=lambda r: (r.start, r.end))
        self._local_functions(module)

    def _guard(self, expr: ast.AST) -> Condition | None:
        """`_guard_condition` of a test of this module with its aliases, once per test."""
        try:
            return self._conditions[expr]
        except KeyError:
            cond = self._conditions[expr] = _guard_condition(expr, self.aliases)
            return cond

    def _add(self, first: ast.AST, last: ast.AST, plats: frozenset[str], reason: str, requirement: bool = False) -> None:
        if plats != ALL:
            self.regions.append(Region(_start(first), _end(last), plats, reason, requirement))

    def _branches(self, node: ast.If | ast.IfExp) -> None:
        cond = self._guard(node.test)
        if cond is None:
            return
        line = node.lineno
        if isinstance(node, ast.While):
            self._add(node.body[0], node.body[-1], cond.when_true, f"inside `while {cond.text}:` (line {line})")
            return
        if isinstance(node, ast.IfExp):
            self._add(node.body, node.body, cond.when_true, f"in the branch of `{cond.text}` (line {line})")
            self._add(node.orelse, node.orelse, cond.when_false, f"in the else branch of `{cond.text}` (line {line})")
            return
        self._add(node.body[0], node.body[-1], cond.when_true, f"inside `if {cond.text}:` (line {line})")
        if node.orelse:
            self._add(node.orelse[0], node.orelse[-1], cond.when_false, f"in the else branch of `if {cond.text}:` (line {line})")

    def _decorators(self, node) -> None:
        """`@skipIf(not torch.cuda.is_available(), ...)`, `@skipUnless(...)`, `@require_torch_gpu`:
        the body runs only where the decorator lets it."""
        for dec in node.decorator_list:
            func = dec.func if isinstance(dec, ast.Call) else dec
            last = _last_name(func)
            plats = None
            if isinstance(dec, ast.Call) and dec.args and last.lower() in ("skipif", "skipunless"):
                cond = self._guard(dec.args[0])
                if cond is not None:
                    plats = cond.when_false if last.lower() == "skipif" else cond.when_true
            elif last:
                ws = words(last)
                if ws and ws[0] in ("require", "requires", "needs", "only") and not any(w in _NEGATIONS for w in ws):
                    found = [_WORDS[w] for w in ws[1:] if w in _WORDS]
                    plats = frozenset().union(*found) if found else None
            if plats is not None:
                self._add(node.body[0], node.body[-1], plats, f"in `{node.name}`, which `@{_text(func)}` limits to {', '.join(sorted(plats))} (line {dec.lineno})")

    def _class_scope(self, node: ast.ClassDef) -> None:
        """A class whose name makes it one platform's code runs only there: a flash-attn
        attention class (`LlamaFlashAttention2`), a CUDA, NCCL, cuDNN, Megatron-LM, Apex,
        CUDA-graph or Triton class (`CudaEnvironment`, `NcclCommunicator`, `CUDAGraphRunner`).
        Its methods never run on an XLA or HPU device, whoever builds the object."""
        if not node.body:
            return
        if _FLASH_ATTN_CLASS.search(node.name):
            plats = _GPU_ATTENTION["flash_attention_2"]
            why = "the flash-attn attention class"
        else:
            named = [w for w in words(node.name) if w in _CLASS_WORDS]
            extension = "" if named else _cuda_extension(node)
            if not named and not extension:
                wired = _hard_wired_attention(node, self._module_strings, self._registered)
                if wired is None:
                    return
                plats, line = wired
                self._add(node.body[0], node.body[-1], plats,
                          f"in `{node.name}` (line {node.lineno}), which loads its model with a GPU-only attention kernel "
                          f"(`attn_implementation`, line {line}), so it runs on {', '.join(sorted(plats))} only")
                return
            if extension:
                named = [w for w in words(extension) if w in _CLASS_WORDS]
            plats = frozenset().union(*(_WORDS[w] for w in named))
            why = f"a class that loads the CUDA extension `{extension}`" if extension else f"a {'/'.join(dict.fromkeys(named))} class"
        self._add(node.body[0], node.body[-1], plats, f"in `{node.name}`, {why} (line {node.lineno}), which runs on {', '.join(sorted(plats))} only")

    def _comprehension(self, node) -> None:
        """`[k for k in cfgs if not is_hip()]`: the element is built only where the ifs hold."""
        plats = ALL
        texts = []
        for gen in node.generators:
            for test in gen.ifs:
                cond = self._guard(test)
                if cond is not None:
                    plats = plats & cond.when_true
                    texts.append(cond.text)
        if plats != ALL:
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self._add(part, part, plats, f"behind `if {' and '.join(texts)}` (line {node.lineno})")

    def _short_circuit(self, node: ast.BoolOp) -> None:
        # a vendor operand decides the outcome on ROCm for the operands before it too:
        # in `cap >= (9, 0) and torch.version.hip is None` the gate never opens on AMD
        for i, value in enumerate(node.values):
            vendor = _vendor_condition(value)
            if vendor is None:
                continue
            ruled_out = vendor.when_true if isinstance(node.op, ast.And) else vendor.when_false
            if ROCM not in ruled_out:
                for earlier in node.values[:i]:
                    self._add(earlier, earlier, ALL - {ROCM}, f"decided by `{vendor.text}` (line {node.lineno})")
        for i in range(1, len(node.values)):
            cond = _guard_condition(ast.BoolOp(op=node.op, values=node.values[:i]), self.aliases) if i > 1 else self._guard(node.values[0])
            if cond is None:
                continue
            plats = cond.when_true if isinstance(node.op, ast.And) else cond.when_false
            self._add(node.values[i], node.values[i], plats, f"after `{cond.text}` (line {node.lineno})")

    def _early_exits(self, block: list[ast.stmt]) -> None:
        for i, stmt in enumerate(block[:-1]):
            if isinstance(stmt, ast.Assert):
                cond = self._guard(stmt.test)
                if cond is not None:
                    self._add(block[i + 1], block[-1], cond.when_true, f"after `assert {cond.text}` (line {stmt.lineno})",
                              is_probe(stmt.test))
                continue
            if not isinstance(stmt, ast.If):
                continue
            cond = self._guard(stmt.test)
            if cond is None:
                continue
            if terminates(stmt.body) and not (stmt.orelse and terminates(stmt.orelse)):
                self._add(block[i + 1], block[-1], cond.when_false, f"after the early exit of `if {cond.text}:` (line {stmt.lineno})",
                          stops(stmt.body) and is_probe(stmt.test))
            elif stmt.orelse and terminates(stmt.orelse) and not terminates(stmt.body):
                self._add(block[i + 1], block[-1], cond.when_true, f"after the early exit in the else of `if {cond.text}:` (line {stmt.lineno})",
                          stops(stmt.orelse) and is_probe(stmt.test))

    def _local_functions(self, module: ast.Module) -> None:
        """A function defined inside another and used there only in guarded places runs
        only where they do: `def agg(t): return t.cuda()` ... `agg if should_agg else None`
        with `should_agg = self.is_fsdp and ...`. Module-level functions may be imported
        elsewhere, so only nested ones are followed."""
        defs = (ast.FunctionDef, ast.AsyncFunctionDef)
        every = of_class(module, *defs)  # the functions, in walk order
        # the functions that have a function inside: only those are walked (in ast.walk order)
        up = parents(module)
        holders: set[ast.AST] = set()
        for fn in every:
            p = up.get(fn)
            while p is not None:
                if isinstance(p, defs):
                    if p in holders:
                        break  # its holders above are marked already
                    holders.add(p)
                p = up.get(p)
        added = []
        for outer in every:
            if outer not in holders:
                continue
            below = walk(outer)
            inner = [s for s in below if s is not outer and isinstance(s, defs)]
            names: dict[str, list[ast.Name]] = {}
            for n in below:
                if isinstance(n, ast.Name):
                    names.setdefault(n.id, []).append(n)
            for fn in inner:
                pos, end = _start(fn), _end(fn)
                uses = [n for n in names.get(fn.name, ()) if not (pos <= _start(n) < end)]
                if not uses or any(not isinstance(u.ctx, ast.Load) for u in uses):
                    continue
                plats = frozenset().union(*(self.platforms(u) for u in uses))
                if plats != ALL:
                    reason = self.reason(uses[0], ALL - plats) or "a guard"
                    added.append(Region(_start(fn.body[0]), _end(fn.body[-1]), plats,
                                        f"in `{fn.name}`, used only {reason}"))
        if added:
            self.regions.extend(added)
            self.regions.sort(key=lambda r: (r.start, r.end))
        self._private_functions(module)

    def _private_functions(self, module: ast.Module) -> None:
        """A module-private function (`_infer_slurm_init`: one leading underscore, not named
        in `__all__`) called in its module only in guarded places runs only where they do:
        fairseq's `infer_init_method` returns at once on `cfg.tpu`, so the helpers it calls
        after that exit never run on TPU. Private helpers calling private helpers are
        followed (a few rounds, each seeing the regions the last one added). A name used
        other than by a call of it (handed on, assigned, rebound) keeps the helper
        unconstrained."""
        defs = (ast.FunctionDef, ast.AsyncFunctionDef)
        private = {s.name: s for s in module.body if isinstance(s, defs) and s.name.startswith("_") and not s.name.startswith("__")}
        if not private:
            return
        exported = _exported_names(module)
        calls: dict[str, list[ast.AST]] = {name: [] for name in private if name not in exported}
        spoiled: set[str] = set()
        for n in of_class(module, ast.Name):
            if n.id in calls:
                calls[n.id].append(n)
        up = parents(module)
        for name, uses in calls.items():
            fn = private[name]
            pos, end = _start(fn), _end(fn)
            uses[:] = [u for u in uses if not (pos <= _start(u) < end)]
            if not uses or any(not isinstance(u.ctx, ast.Load) or not (isinstance(up.get(u), ast.Call) and up[u].func is u) for u in uses):
                spoiled.add(name)
        done: set[str] = set()
        for _ in range(3):
            added = []
            for name, uses in calls.items():
                if name in spoiled or name in done:
                    continue
                plats = frozenset().union(*(self.platforms(u) for u in uses))
                if plats != ALL:
                    fn = private[name]
                    reason = self.reason(uses[0], ALL - plats) or "a guard"
                    added.append(Region(_start(fn.body[0]), _end(fn.body[-1]), plats, f"in `{name}`, called only {reason}"))
                    done.add(name)
            if not added:
                break
            self.regions.extend(added)
            self.regions.sort(key=lambda r: (r.start, r.end))

    def _containing(self, node: ast.AST):
        pos = _start(node)
        end = _end(node) if getattr(node, "end_lineno", None) is not None else pos
        for r in self.regions:
            if r.start > pos:
                break
            if pos < r.end and end <= r.end:
                yield r

    def platforms(self, node: ast.AST, *, requirements: bool = True) -> frozenset[str]:
        """Platforms on which `node` can run (ALL when no guard constrains it).

        With `requirements=False`, hard requirements on an availability probe (`if not
        torch.cuda.is_available(): raise`, `assert torch.cuda.device_count()`) are ignored:
        the code after them is what a port exposes once the requirement is removed."""
        out = ALL
        for r in self._containing(node):
            if requirements or not r.requirement:
                out = out & r.platforms
        return out

    def reaching(self, node: ast.AST, platforms) -> frozenset[str]:
        """The platforms among `platforms` that reach `node`, as a port sees them (hard
        requirements on an availability probe ignored). The question every family asks of
        a finding's targets, and the traced-region finder of the lazy-tensor platforms."""
        return frozenset(platforms) & self.platforms(node, requirements=False)

    def dead_for_amd(self, node: ast.AST) -> str | None:
        """The guard that keeps `node` from every ROCm run, or None."""
        if ROCM in self.platforms(node):
            return None
        return self.reason(node, {ROCM}) or "a vendor guard"

    def reason(self, node: ast.AST, platforms: frozenset[str] | set[str]) -> str | None:
        """The innermost guard that rules out one of `platforms` at `node`."""
        best = None
        for r in self._containing(node):
            if set(platforms) - r.platforms:
                best = r
        return best.reason if best else None


def _exported_names(module: ast.Module) -> frozenset[str]:
    """The strings of a module-level `__all__ = [...]` (or tuple), which make a name public."""
    out: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(stmt.value, (ast.List, ast.Tuple)):
                out.update(e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return frozenset(out)


def guard_map(ctx) -> Guards:
    """`ctx.fact(guard_map)`: the Guards of a Python file."""
    model, rel = file_model(ctx)
    if model is None or rel is None:
        return Guards(ctx.module)
    names = ctx.fact(import_table).names

    def registered(name: str) -> list[str] | None:
        qualified = names.get(name)
        return model.registered_attention(qualified, rel) if qualified else None

    return Guards(ctx.module, registered)
