"""Which non-CUDA devices a Python file aims at, and how a CUDA device is spelt.

Shared by the `device_strings` (PTL9xx) and `torch_distributed` (PTL501/PTL504) families.
A CUDA spelling is a hazard only in a file that also targets another device: a plain CUDA
training script is not a finding (on ROCm PyTorch keeps the CUDA spelling), and code already
dispatched by a device guard (`portlint.python.guards`) is the port, not the problem."""

from __future__ import annotations

import ast
import re

from portlint.python.guards import GAUDI, TPU, TRAINIUM, dotted, guard_map

_NEURON_IMPORT = re.compile(rb"^\s*(?:import|from)\s+(?:torch_neuronx|neuronx_distributed|neuronxcc|libneuronxla)\b", re.M)
_TPU_HINT = re.compile(rb"\bTPU\b|\btpu\b|PJRT_DEVICE")
# Gaudi integrations that the language tagger does not know (Lightning's HPU plugin)
_GAUDI_IMPORT = re.compile(rb"^\s*(?:import|from)\s+lightning_habana\b", re.M)
CUDA_STRING = re.compile(r"^cuda(?::\d+)?$")


def torch_targets(ctx) -> frozenset[str]:
    """Targets a torch file aims at besides CUDA: from its imports and device strings."""
    out: set[str] = set()
    data = ctx.data
    if "torch_xla" in ctx.tags:
        out.add(TRAINIUM)
        if not _NEURON_IMPORT.search(data) or _TPU_HINT.search(data):
            out.add(TPU)
    if b'"neuron"' in data or b"'neuron'" in data:
        out.add(TRAINIUM)
    if "gaudi" in ctx.tags or (b"lightning_habana" in data and _GAUDI_IMPORT.search(data)):
        out.add(GAUDI)
    return frozenset(out)


def relevant(ctx) -> bool:
    """Cheap per-file test (memoised): does this torch file target XLA or Gaudi at all?"""
    return bool(ctx.fact(torch_targets))


def reach(ctx, node: ast.AST, targets: frozenset[str]) -> frozenset[str]:
    """The targets among `targets` on which `node` can actually run (guards applied)."""
    if not targets:
        return targets
    return targets & ctx.fact(guard_map).platforms(node, requirements=False)


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
