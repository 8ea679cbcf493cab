"""Triton kernels and their launch code (PTL7xx).

Runs only on Python files that import triton (tag `triton`). Every rocm finding is dropped
where a run-time vendor guard keeps the code away from AMD (`portlint.analyses.python.rocm_branches`):
the NVIDIA side of `if is_hip(): ... else: ...`, `32 if not is_hip() else 16`, and the like.
"""

from __future__ import annotations

import ast
import re

from portlint.core.config import version_text
from portlint.core.model import Span
from portlint.frontends.python import astindex
from portlint.analyses.python.guards import guard_map
from portlint.frontends.python.names import bindings
from portlint.frontends.python.pyimports import aliases
from portlint.core.registry import detector

TL = "triton.language"
_WAVE64_MAX_WARPS = 16  # 1024 threads per workgroup / 64 lanes
_LDS_BYTES_GFX942 = 64 * 1024


def _triton(ctx) -> bool:
    return "triton" in ctx.tags


def _guarded(ctx, node) -> bool:
    return ctx.fact(guard_map).dead_for_amd(node) is not None


def _ancestors(ctx, node):
    parents = astindex.parents(ctx.module)
    cur = parents.get(node)
    while cur is not None:
        yield cur
        cur = parents.get(cur)


def _enclosing_function(ctx, node):
    return next((a for a in _ancestors(ctx, node) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _canon(ctx, node) -> str:
    return ctx.fact(aliases).canonical(node)


def _int(node) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _str(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
            ast.unparse(node.func).rsplit(".", 1)[-1] == "constexpr":
        # `ASM = tl.constexpr("...")`: Triton 3.x lets kernels read only constexpr globals
        return _str(node.args[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _str(node.left), _str(node.right)
        if a is not None or b is not None:
            return (a or "") + (b or "")
    return None


def _module_strings(ctx) -> dict[str, str]:
    """Module- and function-level `NAME = "literal"` assignments (asm strings kept in constants)."""
    out: dict[str, str] = {}
    for node in astindex.of_class(ctx.module, ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            s = _str(node.value)
            if s is not None:
                out[node.targets[0].id] = s
    return out


def _seen_set(_ctx) -> set:
    return set()


def _once(ctx, key) -> bool:
    """True the first time `key` is seen in this file (several node types reach one literal)."""
    seen = ctx.fact(_seen_set)
    if key in seen:
        return False
    seen.add(key)
    return True


# ---- PTL701 inline PTX -------------------------------------------------------------------

_PTX_MNEMONIC = re.compile(
    r"\b(?:mov|cvt|prmt|lop3|shf|shl|shr|ex2|lg2|tanh|rcp|rsqrt|sqrt|div|fma|mul|add|sub|min|max|abs|neg|and|or|xor|"
    r"not|selp|setp|ld|st|atom|red|bfe|bfi|brev|popc|clz|mma|ldmatrix|cp|bar|membar|fence|shfl|vote|sin|cos|"
    r"mad|copysign|testp|isspace|cvta|griddepcontrol|elect|redux)\.[a-z0-9_.]+"
)
_PTX_REG = re.compile(r"\.reg\s+\.|%%?laneid|\{\s*\.reg|\$\d+\s*,")
_PTX_CONSTRAINT = re.compile(r"=[rfhlcd]\b|(?:^|,)\s*[rfhlcd]\s*(?:,|$)")
_AMDGCN = re.compile(r"\b[vs]_[a-z0-9_]+\b|\bds_[a-z_0-9]+|\bbuffer_[a-z_0-9]+|=v\b")


def _asm_args(call: ast.Call) -> tuple[ast.AST | None, ast.AST | None]:
    asm = call.args[0] if call.args else None
    cons = call.args[1] if len(call.args) > 1 else None
    for kw in call.keywords:
        if kw.arg == "asm":
            asm = kw.value
        elif kw.arg == "constraints":
            cons = kw.value
    return asm, cons


@detector("PTL701", nodes=("Call",), tokens=("inline_asm",))
def triton_inline_ptx(node: ast.Call, ctx) -> None:
    if not _triton(ctx):
        return
    name = _canon(ctx, node.func) or ""
    if not (name.endswith("inline_asm_elementwise") or name.endswith("elementwise_inline_asm")):
        return
    asm_node, cons_node = _asm_args(node)
    strings = ctx.fact(_module_strings)
    asm = _str(asm_node) if asm_node is not None else None
    if asm is None and isinstance(asm_node, ast.Name):
        asm = strings.get(asm_node.id)
    cons = _str(cons_node) if cons_node is not None else None
    if cons is None and isinstance(cons_node, ast.Name):
        cons = strings.get(cons_node.id)
    text = asm or ""
    if _AMDGCN.search(text) or (cons and "=v" in cons):
        return  # an AMDGCN string: the AMD side of a port
    mnemonic = None
    m = _PTX_MNEMONIC.search(text)
    if m:
        mnemonic = m.group(0)
    elif _PTX_REG.search(text):
        mnemonic = text.strip().split()[0] if text.strip() else "asm"
    elif cons and _PTX_CONSTRAINT.search(cons):
        mnemonic = (text.strip().split() or ["asm"])[0] if text else "asm (PTX constraints " + cons + ")"
    if mnemonic is None:
        return
    if _guarded(ctx, node):
        return
    ctx.report(
        node,
        mnemonic=mnemonic.rstrip(";"),
        suggestion=(
            "Use a Triton builtin instead of PTX: tl.math.rsqrt / tl.math.exp2 / tl.sigmoid / tl.fdiv, "
            "or `from triton.language.extra import libdevice` (libdevice.tanh, libdevice.fast_expf), which "
            "the HIP backend maps to its own library. If the asm must stay, keep it under "
            "`if not is_hip():` with an AMDGCN string (`v` constraints) or a builtin on the AMD side."
        ),
    )


# ---- PTL702 CUDA libdevice ------------------------------------------------------------------

_CUDA_EXTRA = "triton.language.extra.cuda"


_PORTABLE_LIBDEVICE = ("triton.language.extra", "triton.language.extra.libdevice", "triton.language.math")


def _portable_libdevice_import(stmts) -> bool:
    for s in stmts:
        for n in astindex.walk(s):
            if isinstance(n, ast.ImportFrom) and any(b.module in _PORTABLE_LIBDEVICE for b in bindings(n)):
                return True
    return False


def _in_fallback_handler(ctx, node) -> bool:
    """`try: from triton.language.extra import libdevice` / `except ...: <cuda import>`."""
    child = node
    for anc in _ancestors(ctx, node):
        if isinstance(anc, ast.ExceptHandler):
            try_node = astindex.parents(ctx.module).get(anc)
            if isinstance(try_node, ast.Try) and _portable_libdevice_import(try_node.body):
                return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return False
        child = anc
    return False


@detector("PTL702", nodes=("ImportFrom", "Import", "Attribute", "keyword"), tokens=("cuda", "libdevice"))
def triton_cuda_libdevice_import(node, ctx) -> None:
    if not _triton(ctx):
        return
    what = None
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        bound = bindings(node)
        if node.module == _CUDA_EXTRA or node.module.startswith(_CUDA_EXTRA + "."):
            what = f"from {node.module} import {', '.join(b.member for b in bound)}"
        elif node.module == "triton.language.extra" and any(b.member == "cuda" for b in bound):
            what = "from triton.language.extra import cuda"
    elif isinstance(node, ast.Import):
        hits = [b.module for b in bindings(node) if b.module == _CUDA_EXTRA or b.module.startswith(_CUDA_EXTRA + ".")]
        if hits:
            what = f"import {hits[0]}"
    elif isinstance(node, ast.Attribute):
        # the `.cuda` of `tl.extra.cuda.libdevice.tanh`, reported once per use
        if node.attr == "cuda" and _canon(ctx, node) == _CUDA_EXTRA:
            parent = astindex.parents(ctx.module).get(node)
            use = _canon(ctx, parent) if isinstance(parent, ast.Attribute) else _CUDA_EXTRA
            what = use.replace("triton.language", "tl", 1)
    elif isinstance(node, ast.keyword) and node.arg == "extern_libs" and isinstance(node.value, ast.Dict):
        for k, v in zip(node.value.keys, node.value.values):
            if _str(k) == "libdevice" and re.search(r"cuda|libdevice\.10\.bc", ast.unparse(v)):
                what = "extern_libs={'libdevice': <CUDA libdevice.10.bc>}"
    if what is None:
        return
    if _guarded(ctx, node) or _in_fallback_handler(ctx, node):
        return
    ctx.report(
        node,
        what=what,
        suggestion=(
            "Import the backend-neutral module: `from triton.language.extra import libdevice` "
            "(Triton maps it to the CUDA or the HIP library at compile time). Timers and SM ids "
            "(globaltimer, smid) have no portable form: drop them or gate them on the backend."
        ),
    )


# ---- PTL703 num_warps above the wave64 workgroup limit ---------------------------------------

def _loop_values(ctx, node: ast.AST, name: str) -> list[ast.AST]:
    """Literal elements bound to `name` by an enclosing comprehension or for loop."""
    for anc in _ancestors(ctx, node):
        gens = []
        if isinstance(anc, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            gens = anc.generators
        elif isinstance(anc, ast.For):
            gens = [anc]
        for g in gens:
            if isinstance(g.target, ast.Name) and g.target.id == name and isinstance(g.iter, (ast.List, ast.Tuple, ast.Set)):
                return list(g.iter.elts)
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            break
    return []


def _big_literals(ctx, value: ast.AST, limit: int) -> list[ast.Constant]:
    """Integer literals above `limit` that `value` can evaluate to (IfExp arms, loop lists)."""
    if isinstance(value, ast.IfExp):
        return _big_literals(ctx, value.body, limit) + _big_literals(ctx, value.orelse, limit)
    n = _int(value)
    if n is not None:
        return [value] if n > limit else []
    if isinstance(value, ast.Name):
        return [e for e in _loop_values(ctx, value, value.id) if (_int(e) or 0) > limit]
    return []


_WARPS_NAME = re.compile(r"^_*num_?warps$", re.I)


_WARPS_FUNCTION = re.compile(r"num_?warps|warps_for|get_warps", re.I)
# positional place of num_warps in Triton's launch configs: Config(kwargs, num_warps, num_stages, ...)
_WARPS_POSITION = {"triton.Config": 1, "triton.runtime.Config": 1, "triton.runtime.autotuner.Config": 1}


def _warps_positions(ctx) -> dict[str, int]:
    """Classes of this file with a `num_warps` field (dataclasses, NamedTuples, classes whose
    fields are annotated in the body) -> the field's positional index in the constructor."""
    out: dict[str, int] = {}
    for node in ctx.module.body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields = [stmt.target.id for stmt in node.body
                  if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                  and "ClassVar" not in ast.unparse(stmt.annotation)]
        for i, name in enumerate(fields):
            if _WARPS_NAME.match(name):
                out[node.name] = i
    return out


def _positional_warps(ctx, call: ast.Call) -> ast.AST | None:
    """The argument that lands in `num_warps` when it is passed by position."""
    index = _WARPS_POSITION.get(_canon(ctx, call.func))
    if index is None and isinstance(call.func, ast.Name):
        index = ctx.fact(_warps_positions).get(call.func.id)
    if index is None or any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return None
    return call.args[index] if index < len(call.args) else None


@detector("PTL703", nodes=("keyword", "Assign", "AnnAssign", "Dict", "For", "comprehension", "Return", "Call"), tokens=("warps",))
def num_warps_exceeds_wave64_limit(node, ctx) -> None:
    if not _triton(ctx):
        return
    literals: list[ast.AST] = []
    if isinstance(node, ast.keyword) and node.arg == "num_warps":
        literals = _big_literals(ctx, node.value, _WAVE64_MAX_WARPS)
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in targets]
        if any(_WARPS_NAME.match(n) for n in names) and node.value is not None:
            literals = _big_literals(ctx, node.value, _WAVE64_MAX_WARPS)
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if k is not None and _str(k) == "num_warps":
                literals += _big_literals(ctx, v, _WAVE64_MAX_WARPS)
    elif isinstance(node, ast.Return) and node.value is not None:
        # `def get_num_warps(block): ... return 32`
        fn = _enclosing_function(ctx, node)
        if fn is not None and _WARPS_FUNCTION.search(fn.name):
            literals = _big_literals(ctx, node.value, _WAVE64_MAX_WARPS)
    elif isinstance(node, (ast.For, ast.comprehension)):
        if isinstance(node.target, ast.Name) and _WARPS_NAME.match(node.target.id) and isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)):
            literals = [e for e in node.iter.elts if (_int(e) or 0) > _WAVE64_MAX_WARPS]
    elif isinstance(node, ast.Call):
        # `triton.Config({...}, 32, 3)`, `KernelConfig(128, 128, 32)` with a num_warps field
        arg = _positional_warps(ctx, node)
        if arg is not None:
            literals = _big_literals(ctx, arg, _WAVE64_MAX_WARPS)
    for lit in literals:
        if not _once(ctx, ("PTL703", lit.lineno, lit.col_offset)):
            continue
        if _guarded(ctx, lit):
            continue
        n = _int(lit)
        ctx.report(
            lit,
            num_warps=n,
            threads=n * 64,
            suggestion=(
                f"Cap num_warps at 16 on wave64 AMD GPUs: `num_warps = {n} if torch.version.hip is None else 16`, "
                "or derive it from the warp size: `min(num_warps, 1024 // warp_size)` with "
                "`warp_size = triton.runtime.driver.active.get_current_target().warp_size`."
            ),
        )


# ---- PTL704 host code assuming 32 lanes ------------------------------------------------------------

_LANES_NAME = re.compile(r"^_*k?(?:warp_?size|threads_?per_?warp|lanes_?per_?warp|warp_?threads)$", re.I)


def _product(node) -> int | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        out = 1
        for e in node.elts:
            v = _int(e)
            if v is None:
                return None
            out *= v
        return out
    return _int(node)


@detector("PTL704", nodes=("keyword", "Assign", "AnnAssign", "BinOp", "Call"), tokens=("32",))
def triton_host_assumes_32_lanes(node, ctx) -> None:
    if not _triton(ctx):
        return
    what = None
    if isinstance(node, ast.keyword) and node.arg == "threads_per_warp" and _product(node.value) == 32:
        what = f"threads_per_warp={ast.unparse(node.value)}"
    elif isinstance(node, ast.Call) and len(node.args) >= 2 and _canon(ctx, node.func).endswith("BlockedLayout"):
        # BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta, order)
        if _product(node.args[1]) == 32 and isinstance(node.args[1], (ast.List, ast.Tuple)):
            what = f"BlockedLayout(..., threads_per_warp={ast.unparse(node.args[1])}, ...)"
    elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _int(node.value) == 32:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if _LANES_NAME.match(name):
                what = f"{name} = 32"
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for lit, other in ((node.left, node.right), (node.right, node.left)):
            if _int(lit) == 32:
                name = other.id if isinstance(other, ast.Name) else other.attr if isinstance(other, ast.Attribute) else ""
                if _WARPS_NAME.match(name):
                    what = ast.unparse(node)
    if what is None or _guarded(ctx, node):
        return
    ctx.report(
        node,
        what=what,
        suggestion=(
            "Read the lane count from the device instead of writing 32: "
            "`triton.runtime.driver.active.get_current_target().warp_size` (64 on CDNA, 32 on RDNA and NVIDIA) "
            "or `torch.cuda.get_device_properties(dev).warp_size`, and build layouts and block sizes from it."
        ),
    )


# ---- PTL705 TMA tensor descriptors ------------------------------------------------------------------

_TMA = {
    f"{TL}.make_tensor_descriptor": "tl.make_tensor_descriptor",
    f"{TL}._experimental_make_tensor_descriptor": "tl._experimental_make_tensor_descriptor",
    f"{TL}._experimental_descriptor_load": "tl._experimental_descriptor_load",
    f"{TL}._experimental_descriptor_store": "tl._experimental_descriptor_store",
    "triton.tools.tensor_descriptor.TensorDescriptor": "TensorDescriptor",
    "triton.tools.tensor_descriptor.TensorDescriptor.from_tensor": "TensorDescriptor.from_tensor",
    "triton.tools.experimental_descriptor.create_1d_tma_descriptor": "create_1d_tma_descriptor",
    "triton.tools.experimental_descriptor.create_2d_tma_descriptor": "create_2d_tma_descriptor",
    "triton.tools.experimental_descriptor.TmaDescKernelParam": "TmaDescKernelParam",
}


@detector("PTL705", nodes=("Call",), tokens=("descriptor",))
def triton_tma_descriptor(node: ast.Call, ctx) -> None:
    if not _triton(ctx):
        return
    name = _canon(ctx, node.func)
    api = _TMA.get(name)
    if api is None or _guarded(ctx, node):
        return
    # one finding per function: a kernel that builds five descriptors has one porting task
    fn = _enclosing_function(ctx, node)
    if not _once(ctx, ("PTL705", id(fn) if fn is not None else None)):
        return
    ctx.report(
        node,
        api=api,
        suggestion=(
            "Triton 3.9 compiles descriptors for AMD into ordinary global loads (no TMA: slower, "
            "not wrong). For a path without descriptors use offsets plus masks, "
            "`tl.load(base + offs_m[:, None] * stride_m + offs_k[None, :], mask=...)` "
            "(`tl.make_block_ptr` is removed in Triton 3.9); keep the descriptor path "
            "behind `if not is_hip():` for Hopper/Blackwell."
        ),
    )


# ---- PTL706 NVIDIA-only scheduling knobs -------------------------------------------------------------

_GLUON_NV = "triton.experimental.gluon.language.nvidia"


def _knob(kw: ast.keyword) -> str | None:
    v = kw.value
    if kw.arg == "warp_specialize" and isinstance(v, ast.Constant) and v.value is True:
        return "warp_specialize=True"
    if kw.arg == "launch_pdl" and isinstance(v, ast.Constant) and v.value is True:
        return "launch_pdl=True"
    if kw.arg == "maxnreg" and not (isinstance(v, ast.Constant) and v.value is None):
        return f"maxnreg={ast.unparse(v)}"
    if kw.arg == "num_ctas" and (_int(v) or 0) > 1:
        return f"num_ctas={_int(v)}"
    if kw.arg in ("num_consumer_groups", "num_buffers_warp_spec") and (_int(v) or 0) > 0:
        return f"{kw.arg}={_int(v)}"
    return None


@detector("PTL706", nodes=("keyword", "ImportFrom", "Import"), tokens=("warp_specialize", "maxnreg", "launch_pdl", "num_ctas", "num_consumer_groups", "num_buffers_warp_spec", "gluon"))
def triton_nvidia_only_scheduling(node, ctx) -> None:
    if not _triton(ctx):
        return
    targets = None
    if isinstance(node, ast.keyword):
        knob = _knob(node)
        effect = "the HIP backend has no such option and drops it"
        if knob and knob.startswith("warp_specialize"):
            effect = "automatic warp specialization is built for NVIDIA Hopper/Blackwell pipelines (TMA producers, wgmma/tcgen05 consumers); AMD GPUs do not get that schedule"
        elif knob and knob.startswith("num_ctas"):
            effect = "block clusters are SM90+ only; Triton's AMD backend raises ValueError for num_ctas > 1 on GPUs without multi-CTA launch (all CDNA)"
            targets = {"rocm": "error"}
    else:
        module = node.module if isinstance(node, ast.ImportFrom) else next((b.module for b in bindings(node) if b.module.startswith(_GLUON_NV)), "")
        if not module or not module.startswith(_GLUON_NV) or (isinstance(node, ast.ImportFrom) and node.level):
            return
        knob = f"import of {module}"
        effect = "Gluon's NVIDIA modules (wgmma, tcgen05, mbarrier, TMA) do not compile for AMD"
        targets = {"rocm": "error"}
    if knob is None or _guarded(ctx, node):
        return
    ctx.report(
        node,
        targets=targets,
        knob=knob,
        effect=effect,
        suggestion=(
            "Keep NVIDIA knobs in an NVIDIA branch and give AMD its own: `waves_per_eu`, "
            "`matrix_instr_nonkdim=16`, `kpack` in triton.Config; Gluon kernels need a variant written "
            "against triton.experimental.gluon.language.amd."
        ),
    )


# ---- PTL707 dot precision -----------------------------------------------------------------------------

# The Triton releases whose AMD backend (triton/backends/amd/compiler.py: HIPOptions.
# allowed_dot_input_precisions and HIPBackend.parse_options) first accepts a dot precision:
# "tf32" on gfx942 from 3.3 (3.2.0 allows "ieee" alone), "bf16x3"/"bf16x6" on every AMD GPU from
# 3.6 (3.5.0 allows "ieee", plus "tf32" on gfx942). Read from the release wheels; the 3.5/3.6
# edge also compiled for gfx942 and gfx90a (tests/test_oracle_triton.py for 3.9).
AMD_TF32_FROM = (3, 3)
AMD_BF16X_FROM = (3, 6)


def amd_dot_precisions(triton: tuple[int, ...]) -> str:
    """The dot precisions the AMD backend of Triton release `triton` accepts, as a reader sees them."""
    allowed = '"ieee", "bf16x3", "bf16x6"' if triton >= AMD_BF16X_FROM else '"ieee"'
    return allowed + (', and "tf32" on gfx942 only' if triton >= AMD_TF32_FROM else "")


@detector("PTL707", nodes=("Call",), tokens=("input_precision", "allow_tf32"))
def triton_dot_precision_default_differs(node: ast.Call, ctx) -> None:
    if not _triton(ctx):
        return
    name = _canon(ctx, node.func)
    if not (name == f"{TL}.dot" or name == f"{TL}.dot_scaled" or name.endswith(".dot")):
        return
    triton = ctx.settings.version("triton")
    release = f"Triton {version_text(triton)}"
    for kw in node.keywords:
        val = kw.value.value if isinstance(kw.value, ast.Constant) else None
        severity = None
        if kw.arg == "input_precision" and isinstance(val, str):
            if val == "tf32x3":
                severity = "error"
                why = f"input_precision=\"tf32x3\" is not an allowed dot precision on AMD ({release} allows {amd_dot_precisions(triton)})"
            elif val in ("bf16x3", "bf16x6"):
                if triton >= AMD_BF16X_FROM:
                    continue  # the AMD backend emulates it as NVIDIA's does
                severity = "error"
                why = (f"input_precision=\"{val}\" fails to compile for AMD with {release}, whose AMD backend allows "
                       f"{amd_dot_precisions(triton)}; Triton {version_text(AMD_BF16X_FROM)} brings bf16x3/bf16x6 on AMD")
            elif val == "tf32":
                if triton >= AMD_TF32_FROM:
                    severity = "warning"
                    why = "input_precision=\"tf32\" is accepted on gfx942 only; MI355X (gfx950) and other AMD GPUs reject it"
                else:
                    severity = "error"
                    why = (f"input_precision=\"tf32\" fails to compile for every AMD GPU with {release}, whose AMD backend "
                           f"allows \"ieee\" only; Triton {version_text(AMD_TF32_FROM)} brings \"tf32\" on gfx942")
        elif kw.arg == "allow_tf32" and val is True:
            severity = "warning"
            why = "allow_tf32=True asks for TF32, which AMD provides on gfx942 only; results and tolerances differ"
        if severity and not _guarded(ctx, kw):
            ctx.report(
                kw,
                targets={"rocm": severity},
                why=why,
                suggestion=(
                    "State the precision per backend, e.g. `input_precision=\"ieee\"` on AMD "
                    "(`\"tf32\" if torch.version.hip is None else \"ieee\"` passed as a tl.constexpr), "
                    "and set test tolerances per backend."
                ),
            )


# ---- PTL708 FP8 dtypes ---------------------------------------------------------------------------------

# dtype -> (counterpart dtypes whose presence in the file means a per-arch choice, severity, why)
_FP8 = {
    "float8e4b15": ((), "error", "an NVIDIA-only format: no AMD backend supports fp8e4b15"),
    "float8e4nv": (("float8e4b8", "fnuz"), "warning",
                   "OCP e4m3; MI300X/MI325X (gfx942) implement FNUZ e4m3 (float8e4b8) in hardware, so Triton emulates it "
                   "there (slowly)"),
    "float8e4b8": (("float8e4nv",), "warning",
                   "the FNUZ e4m3 of MI300 (gfx942); MI355X (gfx950) and NVIDIA use OCP float8e4nv (gfx950 deprecates "
                   "FNUZ dot operands, NVIDIA rejects them)"),
    "float8e5b16": (("float8e5",), "warning",
                    "the FNUZ e5m2 of MI300 (gfx942); MI355X (gfx950) and NVIDIA use OCP float8e5 (gfx950 deprecates "
                    "FNUZ dot operands, NVIDIA rejects them)"),
}


# Triton releases from which the AMD backend compiles an FP8 format off its native GPU. Read from
# the release wheels' triton/backends/amd/compiler.py (supported_fp8_dtypes per arch) and compiled
# (a cast from fp32, no GPU): OCP e4m3 on gfx942 from 3.3 (3.2.0: fp8e5, fp8e4b8, fp8e5b16 only),
# on gfx90a from 3.5 (3.3.1/3.4.0 list only fp8e5 there); the FNUZ formats on gfx90a and gfx950
# from 3.7 (rejected by 3.4.0's list, a compiler assertion in Fp32_to_Fp8E4M3FNUZ_HW in 3.5.0 and
# 3.6.0, compiled by 3.7.0, 3.8.0, 3.9.0).
AMD_OCP_E4M3_FROM = {"gfx942": (3, 3), "gfx90a": (3, 5)}
AMD_FNUZ_OFF_GFX942_FROM = (3, 7)


def _fp8_on_release(dtype: str, severity: str, why: str, triton: tuple[int, ...]) -> tuple[str, str]:
    """PTL708's verdict for the configured Triton release: an error where that release's AMD
    backend cannot compile the format on an AMD GPU it could meet, naming the release that can."""
    release = f"Triton {version_text(triton)}"
    if dtype == "float8e4nv":
        failing = [arch for arch, first in AMD_OCP_E4M3_FROM.items() if triton < first]
        if failing:
            first = max(AMD_OCP_E4M3_FROM[a] for a in failing)
            return "error", (f"OCP e4m3, which the AMD backend of {release} cannot compile for {' or '.join(failing)} "
                             f"(Triton {version_text(first)} brings it there, emulated; MI300X/MI325X implement FNUZ "
                             "e4m3, float8e4b8, in hardware)")
    elif dtype in ("float8e4b8", "float8e5b16") and triton < AMD_FNUZ_OFF_GFX942_FROM:
        return "error", (f"a FNUZ format of MI300 (gfx942) that the AMD backend of {release} cannot compile for "
                         f"MI355X (gfx950) or MI250X (gfx90a) (Triton {version_text(AMD_FNUZ_OFF_GFX942_FROM)} brings "
                         "it there, emulated); gfx950 and NVIDIA use OCP FP8")
    return severity, why


@detector("PTL708", nodes=("Attribute",), tokens=("float8e",))
def triton_fp8_dtype(node: ast.Attribute, ctx) -> None:
    if not _triton(ctx) or node.attr not in _FP8:
        return
    if _canon(ctx, node) != f"{TL}.{node.attr}":
        return
    counterparts, severity, why = _FP8[node.attr]
    text = ctx.text.lower()
    # a dtype name as a whole word (float8e5 is not the start of float8e5b16); "fnuz" anywhere
    if any(re.search(rf"\b{c}\b", text) if c.startswith("float8") else c in text for c in counterparts):
        return  # the file chooses the format per architecture
    if _guarded(ctx, node):
        return
    fn = _enclosing_function(ctx, node)
    if not _once(ctx, ("PTL708", node.attr, id(fn) if fn is not None else None)):
        return  # one finding per dtype and function
    severity, why = _fp8_on_release(node.attr, severity, why, ctx.settings.version("triton"))
    ctx.report(
        node,
        targets={"rocm": severity},
        dtype=f"tl.{node.attr}",
        why=why,
        suggestion=(
            "Choose the FP8 format per architecture: `tl.float8e4b8` (FNUZ) on gfx942, `tl.float8e4nv` on "
            "gfx950 and NVIDIA, e.g. pass `FP8_DTYPE: tl.constexpr` from the host, picked with "
            "`\"gfx94\" in torch.cuda.get_device_properties(0).gcnArchName`; take max values from "
            "torch.finfo of the chosen dtype, never a hard-coded 448.0."
        ),
    )


# ---- PTL709 autotune configs tuned for NVIDIA -----------------------------------------------------------

_AMD_KNOBS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
_BLOCK_KEY = re.compile(r"^BLOCK_(?:SIZE_)?([MNK])$")


def _is_config(ctx, node) -> bool:
    return isinstance(node, ast.Call) and _canon(ctx, node.func) in ("triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config")


def _min_value(ctx, node) -> int | None:
    """Smallest integer a config field can take (literal, or loop variable over a literal list)."""
    n = _int(node)
    if n is not None:
        return n
    if isinstance(node, ast.Name):
        vals = [_int(e) for e in _loop_values(ctx, node, node.id)]
        vals = [v for v in vals if v is not None]
        return min(vals) if vals else None
    return None


def _config_cost(ctx, call: ast.Call) -> tuple[int | None, int | None]:
    """(num_stages, LDS bytes estimate) of one triton.Config, None where unknown."""
    stages = None
    for kw in call.keywords:
        if kw.arg == "num_stages":
            stages = _min_value(ctx, kw.value)
    blocks: dict[str, int] = {}
    meta = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "kwargs"), None)
    if isinstance(meta, ast.Dict):
        for k, v in zip(meta.keys, meta.values):
            m = _BLOCK_KEY.match(_str(k) or "") if k is not None else None
            val = _min_value(ctx, v)
            if m and val is not None:
                blocks[m.group(1)] = val
    lds = None
    if stages is not None and len(blocks) == 3:
        bm, bn, bk = blocks["M"], blocks["N"], blocks["K"]
        lds = max(stages - 1, 1) * (bm * bk + bk * bn) * 2  # fp16/bf16 operands, one buffer per prefetched stage
    return stages, lds


@detector("PTL709", nodes=("List", "Tuple", "ListComp"), tokens=("Config",))
def triton_config_tuned_for_nvidia(node, ctx) -> None:
    if not _triton(ctx):
        return
    if isinstance(node, ast.ListComp):
        configs = [node.elt] if _is_config(ctx, node.elt) else []
    else:
        configs = [e for e in node.elts if _is_config(ctx, e)]
        if configs and len(configs) != len(node.elts):
            configs = [e for e in node.elts if _is_config(ctx, e)]
    if not configs:
        return
    if any(k in ctx.text for k in _AMD_KNOBS):
        return  # the project carries AMD configs
    costs = [_config_cost(ctx, c) for c in configs]
    ldss = [lds for _, lds in costs]
    stages = [s for s, _ in costs]
    reason = None
    if all(lds is not None and lds > _LDS_BYTES_GFX942 for lds in ldss):
        reason = (
            f"every config is sized for more than 64 KiB of shared memory (smallest NVIDIA-style estimate "
            f"{min(ldss) // 1024} KiB for 2-byte operands), the LDS of an MI300X CU; none is tuned for AMD"
        )
    elif all(s is not None and s >= 4 and lds is not None for s, lds in costs):
        # deep pipelines matter where tiles of a dot are staged through shared memory
        reason = f"every config uses num_stages >= 4 (smallest {min(stages)}); the AMD backend defaults to 2 and its LDS is smaller"
    if reason is None or _guarded(ctx, node):
        return
    ctx.report(
        node,
        count=f"{len(configs)} configs" if not isinstance(node, ast.ListComp) else "generated",
        reason=reason,
        suggestion=(
            "Add AMD configs under `if torch.version.hip:` (num_stages=2, num_warps 4-8, waves_per_eu, "
            "matrix_instr_nonkdim=16) or prune the list per device with `prune_configs_by`."
        ),
    )


# ---- PTL710 Triton kernels on TPU / Trainium / Gaudi ----------------------------------------------------

from portlint.analyses.python.traced_imports import TRITON_KERNEL_DECORATORS as _KERNEL_DECORATORS  # noqa: E402  (one list, shared with the PTL8xx regions)


def is_triton_kernel(ctx, fn: ast.AST) -> bool:
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if _canon(ctx, target) in _KERNEL_DECORATORS:
            return True
    return False


_TARGET_MODULES = {
    "jax": ("tpu",), "flax": ("tpu",),
    "torch_xla": ("tpu", "trainium"),
    "torch_neuronx": ("trainium",), "neuronxcc": ("trainium",), "nki": ("trainium",), "neuronx_distributed": ("trainium",),
    "habana_frameworks": ("gaudi",), "optimum": (),  # optimum.habana below
}


def _module_level_import_targets(ctx) -> set[str]:
    """Targets named by unconditional module-level imports (`import torch_xla`, `import jax`).
    Imports inside try/if blocks are optional support in a multi-backend file, and device
    strings such as "hpu" only mention a target: neither makes the kernels TPU/Trainium code."""
    found: set[str] = set()
    for stmt in ctx.module.body:
        names: list[str] = []
        if isinstance(stmt, ast.Import):
            names = [b.module for b in bindings(stmt)]
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            names = [stmt.module]
        for name in names:
            if name.startswith("optimum.habana"):
                found.add("gaudi")
            found.update(_TARGET_MODULES.get(name.split(".")[0], ()))
    return found


def _kernel_targets(ctx) -> tuple[str, ...]:
    """The non-GPU targets this file (or the scan) is for."""
    found = ctx.fact(_module_level_import_targets) if ctx.tags & {"jax", "torch_xla", "nki", "gaudi"} else set()
    if "rocm" not in ctx.settings.targets:
        found = found | set(ctx.settings.targets)  # the user scans for TPU/Trainium/Gaudi only
    return tuple(t for t in ("tpu", "trainium", "gaudi") if t in found)


def _def_line(ctx, node) -> Span:
    """The `def name(` line of a kernel (not its decorators or whole body)."""
    line = node.lineno
    text = ctx.line_text(line)
    start = ctx.byte_col_to_col(line, node.col_offset)
    return Span(line, start, line, len(text.rstrip()) + 1)


# JAX releases the Pallas translation's spelling needs (read from the jax wheels' jax/_src/pallas/
# core.py and jax/experimental/pallas/__init__.py): `pl.BlockSpec(block_shape, index_map)` from
# 0.4.31 (0.4.30's dataclass takes index_map first, so the same positional call swaps them);
# `pl.ANY` from 0.4.34 (0.4.30-0.4.33 have it only as `pltpu.ANY`).
JAX_BLOCKSPEC_SHAPE_FIRST = (0, 4, 31)
JAX_PALLAS_ANY = (0, 4, 34)


def pallas_release_notes(kernel: str, jax: tuple[int, ...]) -> list[str]:
    """What the Pallas text `kernel` writes that the configured JAX release `jax` spells otherwise."""
    notes = []
    if jax < JAX_BLOCKSPEC_SHAPE_FIRST and "pl.BlockSpec(" in kernel:
        notes.append(f"With jax {version_text(jax)}, `pl.BlockSpec` takes `(index_map, block_shape)`: the "
                     f"`(block_shape, index_map)` order above is that of jax {version_text(JAX_BLOCKSPEC_SHAPE_FIRST)} "
                     "and later; swap the two arguments (or pass them by keyword) on the older release.")
    if jax < JAX_PALLAS_ANY and "pl.ANY" in kernel:
        notes.append(f"jax {version_text(jax)} has no `pl.ANY` (jax {version_text(JAX_PALLAS_ANY)} brings it): "
                     "write `pltpu.ANY` (`from jax.experimental.pallas import tpu as pltpu`).")
    return notes


@detector("PTL710", nodes=("FunctionDef",), tokens=("jit",))
def triton_kernel_for_tpu_or_trainium(node: ast.FunctionDef, ctx) -> None:
    if not _triton(ctx) or not is_triton_kernel(ctx, node):
        return
    targets = _kernel_targets(ctx)
    if not targets:
        return
    from portlint.rewrites.skeletons import NOT_RUNNABLE_MARK, SkeletonError, nki_skeleton, pallas

    parts = []
    try:
        if "tpu" in targets:
            kernel = pallas(ctx.module, node.name, ctx.path)
            # a translation the tests run against Triton's interpreter is a kernel, not a skeleton
            kind = "skeleton" if NOT_RUNNABLE_MARK in kernel else "kernel (runnable: checked against TRITON_INTERPRET=1 for this shape)"
            parts.append("Pallas (TPU) %s, also `portlint suggest FILE::%s --to pallas`:\n\n%s" % (kind, node.name, kernel))
            parts.extend(pallas_release_notes(kernel, ctx.settings.version("jax")))
        if "trainium" in targets:
            parts.append("NKI (Trainium) skeleton, also `portlint suggest FILE::%s --to nki`:\n\n%s" % (node.name, nki_skeleton(ctx.module, node.name, ctx.path)))
    except SkeletonError as exc:
        parts.append(f"No skeleton could be derived: {exc}")
    except Exception as exc:  # a skeleton bug must not cost the finding itself
        parts.append(f"No skeleton could be derived (portlint could not read the kernel: {type(exc).__name__}).")
    if "gaudi" in targets:
        parts.append("Gaudi: no user-kernel path here; call the equivalent PyTorch ops on `hpu` instead.")
    ctx.report(
        _def_line(ctx, node),
        targets=targets,
        kernel=node.name,
        platforms=", ".join(targets),
        suggestion="\n\n".join(parts),
    )
