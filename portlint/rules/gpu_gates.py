"""Capability gates in Python that misfire on ROCm (PTL310).

On ROCm, `torch.cuda.get_device_capability()` reports the GFX version: MI210 (9, 0), MI300X
and MI325X (9, 4), MI350X/MI355X (9, 5), RDNA3 (11, x), RDNA4 (12, 0). A gate written for
NVIDIA's Hopper (9, 0) or newer therefore opens on AMD too and selects code (FA3, wgmma/TMA
kernels, Machete, FP8 paths) that AMD GPUs cannot run. A comparison is reported when some AMD
value gives it the same outcome as the NVIDIA architecture its threshold names; gates at
Ampere (8, x) and below are left alone (what they enable, bf16 and the like, AMD Instinct GPUs
have). Gates behind a vendor test (`torch.version.hip is None and ...`, `if is_hip(): return`,
`current_platform.is_cuda() and ...`) are already ported and stay quiet.
"""

from __future__ import annotations

import ast
import operator

from portlint.frontends.python import astindex
from portlint.frontends.python.pyimports import aliases
from portlint.analyses.python.guards import guard_map
from portlint.core.registry import detector

# (major, minor) that torch reports on AMD GPUs (pytorch/ao#4034 mapping; ROCm docs)
# Instinct (CDNA) first; Radeon RDNA3/RDNA4 are supported by PyTorch on ROCm too. A gate that
# only consumer RDNA GPUs pass is reported as a warning, one that Instinct GPUs pass as an error.
AMD_CAPABILITIES = ((9, 0), (9, 4), (9, 5), (11, 0), (12, 0))
_AMD_NAMES = {(9, 0): "MI210", (9, 4): "MI300X", (9, 5): "MI355X", (11, 0): "RDNA3", (12, 0): "RDNA4"}
_INSTINCT = {(9, 0), (9, 4), (9, 5)}
# The lowest threshold reported: Ada (8, 9), NVIDIA's first FP8 (float8_e4m3fn). MI210 has no
# FP8 and MI300X's is float8_e4m3fnuz, yet both pass `>= (8, 9)`. Below it (Ampere's bf16,
# tf32 ...) the features a gate enables exist on AMD Instinct GPUs.
ADA_FP8 = (8, 9)
_OPS = {ast.GtE: operator.ge, ast.Gt: operator.gt, ast.LtE: operator.le, ast.Lt: operator.lt, ast.Eq: operator.eq, ast.NotEq: operator.ne}
_FLIP = {ast.GtE: ast.LtE, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.Lt: ast.Gt, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


def _int(node) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _source_kind(node: ast.AST) -> str | None:
    """What a capability-reading expression yields: tuple | major | minor | cc | arch."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "get_device_capability":
            return "tuple"
        if node.func.attr == "to_int" and _source_kind(node.func.value) == "tuple":
            return "cc"  # vLLM DeviceCapability.to_int(): 90 for (9, 0)
    if isinstance(node, ast.Attribute):
        if node.attr == "arch" and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "get_current_target":
            return "arch"
        if node.attr in ("major", "minor"):
            inner = node.value
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in ("get_device_properties", "get_device_capability"):
                return node.attr
    if isinstance(node, ast.Subscript) and _source_kind(node.value) == "tuple":
        idx = _int(node.slice)
        return {0: "major", 1: "minor"}.get(idx)
    return None


def _own_assignments(scope: ast.AST):
    """Assignments in `scope` itself, not in functions nested in it."""
    stack = astindex.children(scope)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign):
            yield node
        stack.extend(astindex.children(node))


def _own_returns(fn: ast.AST):
    """`return <value>` statements of `fn` itself, not of functions nested in it."""
    stack = astindex.children(fn)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            yield node
        stack.extend(astindex.children(node))


class _Scopes:
    """Per function (and module): local names bound to capability values, and the helpers
    of the file that return one (`def sm_major(): return get_device_capability()[0]`),
    recorded as `name()` (module functions) and `self.name()` (methods)."""

    def __init__(self, module: ast.Module):
        self.module = module
        self.kinds: dict[ast.AST, dict[str, str]] = {}
        self.attributes: dict[str, str] = {}  # `self.capability = ...` is seen by every method
        functions = astindex.of_class(module, ast.FunctionDef, ast.AsyncFunctionDef)  # in walk order
        scopes = [module] + functions
        own = {scope: list(_own_assignments(scope)) for scope in scopes}  # walked once, read in every round
        self._returns = {fn: list(_own_returns(fn)) for fn in functions}
        for _ in range(3):  # `cc = major * 10 + minor` sees `major`, methods see attributes, callers see helpers
            for scope in scopes:
                names = self.kinds.setdefault(scope, {})
                for a in own[scope]:
                    for t in a.targets:
                        self._bind(t, a.value, names)
            for fn in functions:
                kind = self._return_kind(fn)
                if kind:
                    self.kinds[module][fn.name + "()"] = kind
                    self.attributes["self." + fn.name + "()"] = kind

    def _return_kind(self, fn) -> str | None:
        """The kind every `return` of `fn` gives, if they all give the same one."""
        names = {**self.kinds.get(self.module, {}), **self.attributes, **self.kinds.get(fn, {})}
        kinds = {kind_of(r.value, names) for r in self._returns[fn] if r.value is not None}
        if len(kinds) == 1:
            kind = kinds.pop()
            return kind if kind in ("tuple", "major", "cc") else None
        return None

    def _bind(self, target, value, names) -> None:
        if isinstance(target, ast.Name):
            kind = kind_of(value, names)
            if kind:
                names[target.id] = kind
        elif isinstance(target, ast.Tuple) and len(target.elts) == 2 and kind_of(value, names) == "tuple":
            for t, k in zip(target.elts, ("major", "minor")):
                if isinstance(t, ast.Name):
                    names[t.id] = k
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            kind = kind_of(value, {**names, **self.attributes})
            if kind:
                self.attributes["self." + target.attr] = kind


def kind_of(node: ast.AST, names: dict[str, str]) -> str | None:
    direct = _source_kind(node)
    if direct:
        return direct
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return names.get("self." + node.attr)
    if isinstance(node, ast.Attribute) and node.attr in ("major", "minor"):
        base = kind_of(node.value, names)
        if base in ("tuple", "props"):
            return node.attr
    if isinstance(node, ast.Subscript) and kind_of(node.value, names) == "tuple":
        return {0: "major", 1: "minor"}.get(_int(node.slice))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        # major * 10 + minor, 10 * major + minor, minor + major * 10
        for scaled in (node.left, node.right):
            if isinstance(scaled, ast.BinOp) and isinstance(scaled.op, ast.Mult) and 10 in (_int(scaled.left), _int(scaled.right)):
                other = scaled.left if _int(scaled.right) == 10 else scaled.right
                if kind_of(other, names) == "major":
                    return "cc"
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        # a helper of this file that returns a capability value
        if isinstance(node.func, ast.Name) and node.func.id + "()" in names:
            return names[node.func.id + "()"]
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            return names.get("self." + node.func.attr + "()")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get_device_properties":
        return "props"
    return None


def _scopes(ctx) -> _Scopes:
    return _Scopes(ctx.module)


def _names_for(ctx, node) -> dict[str, str]:
    scopes = ctx.fact(_scopes)
    parents = astindex.parents(ctx.module)
    fn = parents.get(node)
    while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        fn = parents.get(fn)
    merged = {**scopes.kinds.get(ctx.module, {}), **scopes.attributes}
    if fn is not None:
        merged.update(scopes.kinds.get(fn, {}))
    return merged


def _threshold(kind: str, literal: ast.AST) -> tuple[int, int] | None:
    if kind == "tuple" and isinstance(literal, ast.Tuple) and literal.elts:
        vals = [_int(e) for e in literal.elts]
        if any(v is None for v in vals):
            return None
        return (vals[0], vals[1] if len(vals) > 1 else 0)
    n = _int(literal)
    if n is None:
        return None
    if kind == "major":
        return (n, 0)
    if kind in ("cc", "arch"):
        return (n // 10, n % 10)
    return None


def _amd_values(kind: str, nvidia: tuple[int, int]):
    for cap in AMD_CAPABILITIES:
        if kind == "major":
            yield cap, cap[0]
        elif kind == "tuple":
            yield cap, cap
        else:
            yield cap, cap[0] * 10 + cap[1]


def _misfires(kind: str, op: type, nvidia: tuple[int, int]) -> list[tuple[int, int]]:
    """AMD capabilities on which `value <op> threshold` behaves as on the NVIDIA arch it names."""
    fn = _OPS[op]
    if kind == "major":
        threshold, nv_value = nvidia[0], nvidia[0]
    elif kind == "tuple":
        threshold, nv_value = nvidia, nvidia
    else:
        threshold = nv_value = nvidia[0] * 10 + nvidia[1]
    expected = fn(nv_value, threshold)
    return [cap for cap, value in _amd_values(kind, nvidia) if fn(value, threshold) == expected]


def _compare_parts(node: ast.Compare, names):
    """(kind, op, literal, expr) for `cap >= (9, 0)` and `(9, 0) <= cap`."""
    if len(node.ops) != 1 or type(node.ops[0]) not in _OPS:
        return None
    left, right, op = node.left, node.comparators[0], type(node.ops[0])
    k = kind_of(left, names)
    if k and k != "minor" and k != "props":
        return k, op, right
    k = kind_of(right, names)
    if k and k != "minor" and k != "props":
        return k, _FLIP[op], left
    return None


@detector("PTL310", nodes=("Compare", "Call"), tokens=("capability", "get_current_target", ".major"))
def capability_gate_misfires_on_rocm(node, ctx) -> None:
    if isinstance(node, ast.Call):
        # vLLM-style platform helpers: has_device_capability(90), is_device_capability(100)
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in ("has_device_capability", "is_device_capability") and node.args):
            return
        arg = node.args[0]
        kind = "tuple" if isinstance(arg, ast.Tuple) else "cc"
        nvidia = _threshold(kind, arg)
        op = ast.GtE if node.func.attr == "has_device_capability" else ast.Eq
        expr = ast.unparse(node)
    else:
        parts = _compare_parts(node, _names_for(ctx, node))
        if parts is None:
            return
        kind, op, literal = parts
        nvidia = _threshold(kind, literal)
        expr = ast.unparse(node)
    if nvidia is None or nvidia < ADA_FP8:
        return
    if kind == "arch":
        hits = list(AMD_CAPABILITIES)
        effect = "raises TypeError on ROCm, where the target's arch is a string such as 'gfx942'"
    else:
        hits = _misfires(kind, op, nvidia)
        if not hits:
            return
        amd = ", ".join(f"{_AMD_NAMES[c]} {c}" for c in hits[:3])
        if op in (ast.GtE, ast.Gt, ast.Eq):
            effect = f"is also true on {amd}"
        else:
            effect = f"is false on {amd} too, as on the NVIDIA GPU it names, so the NVIDIA branch runs there"
    if ctx.fact(guard_map).dead_for_amd(node) is not None:
        return
    ctx.report(
        node,
        targets={"rocm": "error" if set(hits) & _INSTINCT else "warning"},
        expr=expr if len(expr) <= 80 else expr[:77] + "...",
        sm=f"sm_{nvidia[0]}{nvidia[1]}",
        effect=effect,
        suggestion=(
            "Test the vendor first: `torch.version.hip is None and torch.cuda.get_device_capability() >= (9, 0)` "
            "(or `current_platform.is_cuda() and ...`); for AMD features test the architecture name, "
            "`\"gfx94\" in torch.cuda.get_device_properties(0).gcnArchName` (MI300), `\"gfx95\"` (MI355)."
        ),
    )


# ---- PTL311: the same gates in CUDA/C++ host code ------------------------------------------


@detector("PTL311", tokens=("major", "ComputeCapability", "COMPUTE_CAPABILITY"))
def cpp_capability_gate_misfires_on_rocm(ctx) -> None:
    """`prop.major >= 9`, `sm >= 90 && sm < 100`, `major == 8 ... else` in C++: the analysis
    lives in portlint/analyses/cuda/capability_gates.py (it reads CUDA, not Python)."""
    from portlint.analyses.cuda.capability_gates import gates
    from portlint.frontends.cuda.symbols import code_text

    ct = ctx.fact(code_text)
    for gate in ctx.fact(gates):
        ctx.report(ct.span(gate.start, gate.end), expr=gate.expr, sm=gate.nvidia, amd=gate.amd, effect=gate.effect)
