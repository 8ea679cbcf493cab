"""Which Python code an AMD (ROCm/HIP) run can reach.

Python ports guard NVIDIA-only code at run time instead of with `#ifdef`:
`if torch.version.hip: ... else: ...`, `if not is_hip(): ...`,
`triton.runtime.driver.active.get_current_target().backend == "hip"`,
`32 if not is_hip() else 16`, `torch.version.hip is None and cap >= (9, 0)`, or an early
`if is_hip(): return` at the top of a function. Code that such a guard keeps away from AMD
is already the port, so rocm findings there are noise (catalog §0.1 item 6).

`polarity(test)` classifies one condition:
  "not_amd" -- when the condition is true, the process is not running on AMD;
  "amd"     -- when the condition is false, the process is not running on AMD
               (the condition covers every AMD run, e.g. `is_hip()`, `x in ("xpu", "hip")`);
  None      -- it says nothing about the vendor.

This module is the vendor vocabulary only; which code an AMD run reaches is answered by the
one guard evaluator, `portlint.analyses.python.guards` (`ctx.fact(guard_map).dead_for_amd(node)`),
which reads these tests beside the device tests.
"""

from __future__ import annotations

import ast
import re


# identifiers that are true exactly on AMD builds/devices
_AMD_NAME = re.compile(r"^_*(?:is_|use_|on_|has_|running_on_|in_)?(?:hip|rocm|amd|amdgpu|cdna\d*|mi\d{3}\w*|gfx\w*)(?:_\w*)?$", re.I)
# calls that are true only on NVIDIA (vLLM `current_platform.is_cuda()`, Triton tutorials' `is_cuda()`)
_NV_CALL = re.compile(r"^_*(?:is_|use_|on_|running_on_)?(?:cuda|nvidia|nv_gpu|nvgpu)$", re.I)
# flags that switch NVIDIA-only features on (a kernel's `USE_TMA_LOAD: tl.constexpr`, `IS_HOPPER`)
_NV_FLAG = re.compile(
    r"^_*(?:use|is|has|enable|with|supports?)_?(?:ptx|nv_?asm|inline_ptx|nvidia_asm|tma\w*|wgmma|hopper|blackwell|"
    r"sm_?(?:9|10|12)\d|warp_?speciali[sz]\w*|tcgen05|cluster\w*|pdl\w*|gdc\w*|nvidia\w*)$",
    re.I,
)
# device types that are neither NVIDIA nor AMD: `device.type == "xpu"` is never true on ROCm
_OTHER_DEVICES = {"xpu", "npu", "hpu", "mps", "cpu", "tpu", "xla", "musa", "mlu", "neuron", "intel", "gaudi"}
_AMD_STRINGS = {"hip", "rocm", "amd", "amdgcn", "amdgpu"}
_NV_STRINGS = {"cuda", "nvidia", "nvptx"}
_BACKENDISH = re.compile(r"backend|get_current_target|platform|vendor|device_type|DEVICE_TYPE", re.I)


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        else:
            break
    return ".".join(reversed(parts))


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _value_polarity(node: ast.AST) -> str | None:
    """A bare value used as a condition: `torch.version.hip`, `is_hip()`, `IS_ROCM`."""
    dotted = _dotted(node)
    if dotted.endswith("version.hip"):
        return "amd"
    if dotted.endswith("version.cuda"):
        return "not_amd"  # torch.version.cuda is None on ROCm builds
    last = _last(node)
    if not last:
        return None
    if "alike" in last.lower():  # vLLM is_cuda_alike() is true on ROCm too
        return None
    if _AMD_NAME.match(last):
        return "amd"
    if isinstance(node, ast.Call) and _NV_CALL.match(last):
        return "not_amd"
    if isinstance(node, ast.Name) and (_NV_CALL.match(last) or _NV_FLAG.match(last)):
        # a flag such as `IS_CUDA` or a kernel's `USE_PTX: tl.constexpr` (not `tensor.is_cuda`,
        # an attribute that is true on ROCm too)
        return "not_amd"
    return None


def _flip(p: str | None) -> str | None:
    return {"amd": "not_amd", "not_amd": "amd"}.get(p) if p else None


def _strings(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value.lower()}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value.lower() for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def polarity(test: ast.AST) -> str | None:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _flip(polarity(test.operand))
    if isinstance(test, ast.BoolOp):
        parts = [polarity(v) for v in test.values]
        if isinstance(test.op, ast.And):
            # true only when every operand is true; one NVIDIA-only operand is enough
            return "not_amd" if "not_amd" in parts else ("amd" if parts and all(p == "amd" for p in parts) else None)
        # Or: false only when every operand is false
        if "amd" in parts:
            return "amd"
        return "not_amd" if parts and all(p == "not_amd" for p in parts) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
            base = _value_polarity(left)
            return _flip(base) if isinstance(op, ast.Is) else base
        if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            # `backend == "hip"`, `"hip" in backend`, `DEVICE_TYPE in ("xpu", "hip")`
            for value, other in ((right, left), (left, right)):
                words = _strings(value)
                if not words:
                    continue
                if isinstance(op, (ast.In, ast.NotIn)) and value is left:
                    # "hip" in <something>, "gfx94" in props.gcnArchName
                    p = "amd" if words & _AMD_STRINGS or any(w.startswith("gfx") for w in words) else None
                else:
                    p = None
                    if words & _AMD_STRINGS or any(w.startswith("gfx") for w in words):
                        p = "amd"
                    elif words <= _OTHER_DEVICES and isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) and value is not left:
                        p = "not_amd"
                    elif words and words <= _NV_STRINGS and _BACKENDISH.search(_dotted(other) or ast.unparse(other)):
                        # `backend == "cuda"` (not `device.type == "cuda"`, true on ROCm too)
                        p = "not_amd"
                if p and isinstance(op, (ast.NotEq, ast.NotIn)):
                    p = _flip(p)
                if p:
                    return p
        return None
    return _value_polarity(test)


_VENDOR = re.compile(r"cuda|nvidia|nv|hip|rocm|amd")
_NV_WORD = re.compile(r"cuda|nvidia", re.I)
_AMD_WORD = re.compile(r"hip|rocm|amd", re.I)


def nvidia_twin(name: str, functions) -> bool:
    """`get_cuda_autotune_config` when `get_hip_autotune_config` is among `functions`: the
    NVIDIA variant of a pair, which an AMD run does not call."""
    if not _NV_WORD.search(name) or _AMD_WORD.search(name):
        return False
    amd_variants = {_VENDOR.sub("*", n.lower()) for n in functions if _AMD_WORD.search(n)}
    return _VENDOR.sub("*", name.lower()) in amd_variants
