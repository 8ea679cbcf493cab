"""Pallas (TPU) and NKI (Trainium) skeletons derived from a Triton kernel.

A Triton kernel is read as: grid axes (`tl.program_id(a)`), block sizes (`BLOCK_*`
constexprs), refs (pointer parameters that are loaded from or stored to), scalars, and the
statements in between. Statements are sorted into
  - index math (offsets, masks, pointer arithmetic): replaced by BlockSpecs / tile indices;
  - loads and stores: become ref reads and writes (Pallas) or nl.load / nl.store (NKI);
  - arithmetic on loaded values: carried over where every call maps one to one;
  - anything else (loops, branches, unknown calls): left as commented TODO lines.
The header of every skeleton lists what was translated and what is left to do, and, for
Pallas, why none of the runnable translations fitted. An *elementwise* kernel (one grid axis,
every access at `ptr + offsets` with `offsets = pid * BLOCK + tl.arange(0, BLOCK)`, no loops
or reductions) becomes a complete Pallas kernel that runs (the tests run it with
`interpret=True`); so do row-wise kernels (pallas_rows: one program per row, including a
grid-stride row loop and loops over column blocks) and blocked matmuls (pallas_matmul, read
from the accumulator, the K loop and the tile offsets, not from names); `pallas()` tries them
in that order."""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass, field

TL_NAMES = ("tl", "triton.language")
_KERNEL_DECORATORS = ("jit", "autotune", "heuristics")

# Triton call -> jax.numpy / jax call (Pallas) and nki.language call (NKI)
_PALLAS_CALLS = {
    "exp": "jnp.exp", "exp2": "jnp.exp2", "log": "jnp.log", "log2": "jnp.log2", "sqrt": "jnp.sqrt",
    "sqrt_rn": "jnp.sqrt", "rsqrt": "jax.lax.rsqrt", "abs": "jnp.abs", "maximum": "jnp.maximum",
    "minimum": "jnp.minimum", "where": "jnp.where", "sigmoid": "jax.nn.sigmoid", "sin": "jnp.sin",
    "cos": "jnp.cos", "tanh": "jnp.tanh", "floor": "jnp.floor", "ceil": "jnp.ceil", "erf": "jax.lax.erf",
    "sum": "jnp.sum", "max": "jnp.max", "min": "jnp.min", "argmax": "jnp.argmax", "argmin": "jnp.argmin",
    "zeros": "jnp.zeros", "full": "jnp.full", "cdiv": "pl.cdiv", "fdiv": "jnp.divide", "div_rn": "jnp.divide",
    "softmax": "jax.nn.softmax", "clamp": "jnp.clip", "fma": "_fma", "cumsum": "jnp.cumsum",
}
_NKI_CALLS = {
    "exp": "nl.exp", "log": "nl.log", "sqrt": "nl.sqrt", "sqrt_rn": "nl.sqrt", "rsqrt": "nl.rsqrt",
    "abs": "nl.abs", "maximum": "nl.maximum", "minimum": "nl.minimum", "where": "nl.where",
    "sigmoid": "nl.sigmoid", "sin": "nl.sin", "cos": "nl.cos", "tanh": "nl.tanh", "floor": "nl.floor",
    "ceil": "nl.ceil", "erf": "nl.erf", "sum": "nl.sum", "max": "nl.max", "min": "nl.min",
    "zeros": "nl.zeros", "full": "nl.full", "fdiv": "nl.divide", "div_rn": "nl.divide", "cumsum": "nl.cumsum",
}
_DTYPES = {
    "float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "float64": "float64",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "uint32": "uint32", "int1": "bool_",
}
_INDEX_CALLS = {"arange", "program_id", "num_programs", "multiple_of", "max_contiguous", "make_block_ptr", "advance"}
_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "dot", "cumsum", "reduce", "softmax", "atomic_add", "atomic_max"}


class SkeletonError(Exception):
    """The kernel cannot be found or read."""


@dataclass
class Access:
    kind: str  # "load" | "store"
    pointer: str  # the pointer parameter
    node: ast.Call
    target: str | None = None  # variable a load is assigned to
    value: ast.AST | None = None  # value a store writes
    offsets: str | None = None  # the offset variable in `ptr + offsets`
    blocks: tuple[str, ...] = ()  # BLOCK_* names in the offset expression


@dataclass
class KernelInfo:
    name: str
    lineno: int
    params: list[str]
    constexprs: dict[str, str | None]  # name -> default value text (from a launch), or None
    pointers: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    scalars: list[str] = field(default_factory=list)  # non-pointer params used in arithmetic
    size_params: list[str] = field(default_factory=list)  # params used only in index math
    axes: dict[str, int] = field(default_factory=dict)  # variable -> program_id axis
    n_axes: int = 0
    accesses: list[Access] = field(default_factory=list)
    index_vars: set[str] = field(default_factory=set)
    definitions: dict[str, ast.AST] = field(default_factory=dict)  # first assignment of each local
    block_axis: dict[str, int] = field(default_factory=dict)  # BLOCK_* name -> program_id axis it tiles
    pointer_vars: dict[str, str] = field(default_factory=dict)  # local pointer variable -> parameter
    body: list[ast.stmt] = field(default_factory=list)
    elementwise: bool = False
    why_not_elementwise: list[str] = field(default_factory=list)


# ---- reading the kernel ------------------------------------------------------------------

def _tl_attr(node: ast.AST) -> str | None:
    """`tl.exp` / `triton.language.math.exp` / `libdevice.exp` -> "exp"."""
    if not isinstance(node, ast.Attribute):
        return None
    if not all(isinstance(n, (ast.Name, ast.Attribute)) for n in ast.walk(node.value) if not isinstance(n, ast.expr_context)):
        return None  # `tl.where(...).to(...)`: a method call on a value
    base = ast.unparse(node.value)
    if base in TL_NAMES or base.startswith(("tl.", "triton.language.")) or base.endswith("libdevice"):
        return node.attr
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def find_kernel(module: ast.Module, name: str) -> ast.FunctionDef:
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise SkeletonError(f"no function named {name!r} in the file")


def triton_kernels(module: ast.Module) -> list[str]:
    out = []
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                d = dec.func if isinstance(dec, ast.Call) else dec
                text = ast.unparse(d)
                if text.startswith(("triton.", "gluon.")) and text.split(".")[-1] in _KERNEL_DECORATORS:
                    out.append(node.name)
                    break
    return out


def _launch_constants(module: ast.Module, kernel: str) -> dict[str, str]:
    """Literal keyword values at launches `kernel[grid](..., BLOCK_SIZE=1024)`."""
    out: dict[str, str] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and ast.unparse(node.func.value) == kernel:
            for kw in node.keywords:
                if kw.arg and isinstance(kw.value, ast.Constant) and not isinstance(kw.value.value, str):
                    out.setdefault(kw.arg, repr(kw.value.value))
    return out


def _pointer_base(expr: ast.AST, info: KernelInfo) -> str | None:
    """The pointer parameter at the root of a pointer expression."""
    while True:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            expr = expr.left
        elif isinstance(expr, ast.Name):
            if expr.id in info.pointer_vars:
                return info.pointer_vars[expr.id]
            return expr.id if expr.id in info.params else None
        elif isinstance(expr, ast.Call) and _tl_attr(expr.func) in ("make_block_ptr", "advance") and expr.args:
            expr = expr.args[0]
        else:
            return None


def _kw(call: ast.Call, name: str, pos: int | None = None) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    if pos is not None and len(call.args) > pos:
        return call.args[pos]
    return None


def analyse(module: ast.Module, name: str) -> KernelInfo:
    fn = find_kernel(module, name)
    params = [a.arg for a in fn.args.args]
    launch = _launch_constants(module, name)
    constexprs: dict[str, str | None] = {}
    for a in fn.args.args:
        ann = ast.unparse(a.annotation) if a.annotation is not None else ""
        if ann.endswith("constexpr"):
            constexprs[a.arg] = launch.get(a.arg)
    info = KernelInfo(name=name, lineno=fn.lineno, params=params, constexprs=constexprs, body=list(fn.body))

    # pass 1: pointer variables, index variables, program ids
    for stmt in ast.walk(fn):
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            if value is None:
                continue
            for t in targets:
                if not isinstance(t, ast.Name):
                    continue
                info.definitions.setdefault(t.id, value)
                if isinstance(value, ast.Call) and _tl_attr(value.func) == "program_id":
                    axis = value.args[0] if value.args else _kw(value, "axis")
                    info.axes[t.id] = axis.value if isinstance(axis, ast.Constant) else 0
                    info.index_vars.add(t.id)
                    continue
                calls = {_tl_attr(c.func) for c in ast.walk(value) if isinstance(c, ast.Call)}
                if calls & {"load"}:
                    continue
                base = _pointer_base(value, info)
                if base is not None and base not in constexprs and (
                    isinstance(value, (ast.BinOp, ast.Call)) or t.id != base
                ):
                    info.pointer_vars.setdefault(t.id, base)
                elif calls & _INDEX_CALLS or (_names(value) & (info.index_vars | set(info.axes))):
                    info.index_vars.add(t.id)
    # program ids used inline: tl.program_id(1) inside expressions
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _tl_attr(node.func) == "program_id":
            axis = node.args[0] if node.args else _kw(node, "axis")
            if isinstance(axis, ast.Constant) and isinstance(axis.value, int):
                info.n_axes = max(info.n_axes, axis.value + 1)
    info.n_axes = max(info.n_axes, 1)

    # which grid axis each BLOCK_* tiles: `offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)`
    for var, value in info.definitions.items():
        axes = _axes_of(value, info, set())
        blocks = [n for n in _names(value) if n in constexprs]
        if len(axes) == 1 and len(blocks) == 1:
            info.block_axis.setdefault(blocks[0], axes.pop())

    # pass 2: loads and stores
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _tl_attr(node.func) in ("load", "store"):
            kind = _tl_attr(node.func)
            ptr = _kw(node, "pointer", 0)
            if ptr is None:
                continue
            base = _pointer_base(ptr, info)
            if base is None:
                continue
            acc = Access(kind=kind, pointer=base, node=node)
            if isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add) and isinstance(ptr.right, ast.Name):
                acc.offsets = ptr.right.id
            acc.blocks = _blocks_of(ptr, info)
            if kind == "store":
                acc.value = _kw(node, "value", 1)
            info.accesses.append(acc)
            if base not in info.pointers:
                info.pointers.append(base)
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _tl_attr(node.value.func) == "load":
            for acc in info.accesses:
                if acc.node is node.value and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    acc.target = node.targets[0].id
    info.inputs = [p for p in info.pointers if any(a.pointer == p and a.kind == "load" for a in info.accesses)]
    info.outputs = [p for p in info.pointers if any(a.pointer == p and a.kind == "store" for a in info.accesses)]
    if not info.accesses:
        raise SkeletonError(f"kernel {name!r} has no tl.load / tl.store on a pointer parameter")

    # scalars: non-pointer, non-constexpr params that appear in data arithmetic
    data_stmts = [s for s in ast.walk(fn) if isinstance(s, (ast.Assign, ast.AugAssign)) and _category(s, info) == "data"]
    used = set()
    for s in data_stmts:
        used |= _names(s.value)
    for acc in info.accesses:
        if acc.value is not None:
            used |= _names(acc.value)
    for p in params:
        if p in info.pointers or p in constexprs:
            continue
        (info.scalars if p in used else info.size_params).append(p)

    # elementwise?
    why = info.why_not_elementwise
    if info.n_axes != 1:
        why.append(f"{info.n_axes} grid axes")
    if any(isinstance(n, (ast.For, ast.While, ast.If)) for n in ast.walk(fn) if n is not fn):
        why.append("loops or branches")
    calls = {_tl_attr(c.func) for c in ast.walk(fn) if isinstance(c, ast.Call)}
    if calls & _REDUCTIONS:
        why.append("reductions or dots (" + ", ".join(sorted(calls & _REDUCTIONS)) + ")")
    offsets = {a.offsets for a in info.accesses}
    if None in offsets or len(offsets) != 1:
        why.append("accesses at different offsets")
    if any(isinstance(n, ast.Subscript) for n in ast.walk(fn)):
        why.append("2-D index expressions")
    if info.pointer_vars:
        why.append("pointer variables")
    info.elementwise = not why
    return info


def _ordered_names(node: ast.AST) -> list[str]:
    out: list[str] = []

    def visit(n: ast.AST) -> None:
        if isinstance(n, ast.Name):
            out.append(n.id)
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(node)
    return out


def _blocks_of(expr: ast.AST, info: KernelInfo, seen: set | None = None) -> tuple[str, ...]:
    """BLOCK constexprs behind a pointer expression, in order of appearance (one per dim)."""
    seen = seen if seen is not None else set()
    out: list[str] = []
    for name in _ordered_names(expr):
        if name in info.constexprs and name.startswith("BLOCK"):
            if name not in out:
                out.append(name)
        elif name in info.definitions and name not in seen:
            seen.add(name)
            for b in _blocks_of(info.definitions[name], info, seen):
                if b not in out:
                    out.append(b)
    return tuple(out)


def _axes_of(expr: ast.AST, info: KernelInfo, seen: set) -> set[int]:
    axes: set[int] = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and _tl_attr(node.func) == "program_id":
            a = node.args[0] if node.args else _kw(node, "axis")
            axes.add(a.value if isinstance(a, ast.Constant) else 0)
        elif isinstance(node, ast.Name) and node.id in info.axes:
            axes.add(info.axes[node.id])
    return axes


def _category(stmt: ast.stmt, info: KernelInfo) -> str:
    """index | pointer | load | store | data | other"""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _tl_attr(stmt.value.func) == "store":
        return "store"
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if len(names) != len(targets):
            return "other"
        if isinstance(stmt.value, ast.Call) and _tl_attr(stmt.value.func) == "load":
            return "load"
        if any(n in info.pointer_vars or n in info.params and n in info.pointers for n in names):
            return "pointer"
        if any(n in info.index_vars for n in names):
            return "index"
        used = _names(stmt.value) if stmt.value is not None else set()
        if used & (info.index_vars | set(info.axes)) and not any(
            isinstance(c, ast.Call) and _tl_attr(c.func) == "load" for c in ast.walk(stmt.value)
        ):
            # masks and offsets computed from other index values
            if not (used - info.index_vars - set(info.params) - set(info.constexprs)):
                return "index"
        return "data"
    if isinstance(stmt, ast.Pass):
        return "index"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return "index"  # docstring
    return "other"


# ---- translating expressions ---------------------------------------------------------------

class _Untranslatable(Exception):
    pass


class _Translate(ast.NodeTransformer):
    def __init__(self, calls: dict[str, str], dtype_prefix: str, to_dtype: str, info: KernelInfo, rename: dict[str, str]):
        self.calls = calls
        self.dtype_prefix = dtype_prefix
        self.to_dtype = to_dtype
        self.info = info
        self.rename = rename

    def visit_Name(self, node: ast.Name):
        if node.id in self.info.pointers:
            raise _Untranslatable(f"pointer {node.id}")
        if node.id in self.rename:
            return ast.copy_location(ast.Name(self.rename[node.id], node.ctx), node)
        return node

    def visit_Attribute(self, node: ast.Attribute):
        name = _tl_attr(node)
        if name in _DTYPES:
            return ast.parse(f"{self.dtype_prefix}{_DTYPES[name]}", mode="eval").body
        if name is not None:
            raise _Untranslatable(ast.unparse(node))
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call):
        name = _tl_attr(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and name is None and len(node.args) == 1:
            value = self.visit(node.func.value)
            dtype = self.visit(node.args[0])
            if self.to_dtype == "astype":
                return ast.Call(ast.Attribute(value, "astype", ast.Load()), [dtype], [])
            return ast.Call(ast.parse(self.to_dtype, mode="eval").body, [value], [ast.keyword("dtype", dtype)])
        if name is None:
            raise _Untranslatable(ast.unparse(node.func))
        if name == "program_id":
            if self.dtype_prefix != "jnp.":
                raise _Untranslatable("tl.program_id")
            return ast.parse(f"pl.program_id({ast.unparse(node.args[0]) if node.args else 0})", mode="eval").body
        if name == "dot" and self.dtype_prefix == "jnp.":
            a, b = (ast.unparse(self.visit(x)) for x in node.args[:2])
            text = f"jnp.dot({a}, {b}, preferred_element_type=jnp.float32)"
            if len(node.args) > 2:
                text = f"({ast.unparse(self.visit(node.args[2]))}) + {text}"
            return ast.parse(text, mode="eval").body
        if name == "dot":
            a, b = (ast.unparse(self.visit(x)) for x in node.args[:2])
            return ast.parse(f"nl.matmul({a}, {b})", mode="eval").body
        target = self.calls.get(name)
        if target is None:
            raise _Untranslatable(f"tl.{name}")
        args = [self.visit(a) for a in node.args]
        keywords = [ast.keyword(k.arg, self.visit(k.value)) for k in node.keywords]
        if target == "_fma":
            a, b, c = (ast.unparse(x) for x in args)
            return ast.parse(f"({a}) * ({b}) + ({c})", mode="eval").body
        if name in ("sum", "max", "min", "argmax", "argmin", "cumsum", "softmax") and len(args) > 1:
            keywords.insert(0, ast.keyword("axis", args[1]))
            args = args[:1]
            keywords = [k for k in keywords if k.arg != "keep_dims"] if self.dtype_prefix == "jnp." else keywords
        return ast.Call(ast.parse(target, mode="eval").body, args, keywords)


def _translate(expr: ast.AST, calls, dtype_prefix, to_dtype, info, rename=None) -> str:
    import copy

    tree = _Translate(calls, dtype_prefix, to_dtype, info, rename or {}).visit(copy.deepcopy(expr))
    return ast.unparse(ast.fix_missing_locations(tree))


def _pallas_expr(expr, info, rename=None) -> str:
    return _translate(expr, _PALLAS_CALLS, "jnp.", "astype", info, rename)


def _nki_expr(expr, info, rename=None) -> str:
    return _translate(expr, _NKI_CALLS, "nl.", "nl.copy", info, rename)


# ---- the pieces of a skeleton --------------------------------------------------------------

def _safe(name: str) -> str:
    """`in_ptr` -> `in` is a keyword: keep generated names legal."""
    return name + "_" if keyword.iskeyword(name) or keyword.issoftkeyword(name) else name


def _ref(p: str) -> str:
    base = re.sub(r"_?ptrs?$|_?pointer$", "", p) or p
    return f"{_safe(base)}_ref"


def _block_default(info: KernelInfo, name: str) -> str:
    """The block size a launch in the file passes, else 1024 (1-D) / 128 (tiled kernels)."""
    return info.constexprs.get(name) or ("1024" if info.n_axes == 1 and not info.block_axis.keys() - {name} else "128")


@dataclass
class _Body:
    lines: list[str]
    carried: int
    dropped: list[str]
    todo: list[str]


def _body(info: KernelInfo, expr, load_line, store_line, indent: str) -> _Body:
    lines: list[str] = []
    carried = 0
    dropped: list[str] = []
    todo: list[str] = []

    def emit(stmts: list[ast.stmt], ind: str) -> None:
        nonlocal carried
        for stmt in stmts:
            cat = _category(stmt, info)
            src = ast.unparse(stmt).split("\n")[0]
            if cat in ("index", "pointer"):
                if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                    dropped.append(src)
                continue
            if cat == "load":
                acc = next(a for a in info.accesses if a.node is stmt.value) if any(a.node is stmt.value for a in info.accesses) else None
                if acc is None:
                    lines.append(f"{ind}# TODO (load not translated): {src}")
                    todo.append(src)
                    continue
                lines.append(f"{ind}{load_line(acc, stmt.targets[0].id if isinstance(stmt, ast.Assign) else ast.unparse(stmt.target))}")
                continue
            if cat == "store":
                acc = next((a for a in info.accesses if a.node is stmt.value), None)
                try:
                    value = expr(acc.value, info) if acc and acc.value is not None else None
                except _Untranslatable as exc:
                    value = None
                    todo.append(f"{src}  ({exc})")
                if acc is None or value is None:
                    lines.append(f"{ind}# TODO (store not translated): {src}")
                    continue
                lines.append(f"{ind}{store_line(acc, value)}")
                continue
            if cat == "data":
                try:
                    if isinstance(stmt, ast.AugAssign):
                        text = f"{ast.unparse(stmt.target)} {_AUG[type(stmt.op)]}= {expr(stmt.value, info)}"
                    else:
                        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                        text = " = ".join(ast.unparse(t) for t in targets) + " = " + expr(stmt.value, info)
                    lines.append(ind + text)
                    carried += 0 if "#" in ind else 1
                except _Untranslatable as exc:
                    lines.append(f"{ind}# TODO (uses {exc}): {src}")
                    todo.append(f"{src}  (uses {exc})")
                continue
            if isinstance(stmt, ast.For):
                lines.append(f"{ind}# TODO (loop kept as a comment; accumulate over the reduction axis): {src}")
                todo.append(f"loop `{src}`")
                emit(stmt.body, ind + "#     ")
                continue
            for sub in ast.unparse(stmt).split("\n"):
                lines.append(f"{ind}# TODO (not translated): {sub}")
            todo.append(src)

    emit(info.body, indent)
    if not any(not ln.lstrip().startswith("#") for ln in lines):
        lines.append(f"{indent}pass  # nothing translated yet: see the TODO lines")
    return _Body(lines, carried, dropped, todo)


_AUG = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def _header(tool: str, info: KernelInfo, source: str, translated: list[str], todo: list[str]) -> list[str]:
    out = [f"# {tool} skeleton generated by portlint from the Triton kernel `{info.name}` ({source}:{info.lineno})."]
    out.append("# Translated:")
    out += [f"#   - {t}" for t in translated]
    out.append("# Left to do:")
    out += [f"#   - {t}" for t in todo] or ["#   - nothing known; test against the Triton kernel"]
    return out


# ---- Pallas --------------------------------------------------------------------------------

NOT_RUNNABLE_MARK = "# Not runnable as generated"  # the header line of a skeleton that is not a kernel


def pallas_skeleton(module: ast.Module, name: str, source: str = "<file>", not_runnable: list[str] | None = None) -> str:
    """The Pallas skeleton (runnable for an elementwise kernel). not_runnable: why the other
    translations did not fit, put in the header of a kernel that is not elementwise."""
    info = analyse(module, name)
    kname = f"{name}_pallas_kernel"
    ins = [_ref(p) for p in info.inputs]
    outs = [_ref(p) + ("_out" if p in info.inputs else "") for p in info.outputs]
    out_of = dict(zip(info.outputs, outs))
    in_of = dict(zip(info.inputs, ins))
    static = info.scalars + [c for c in info.constexprs if not c.startswith("BLOCK")]
    blocks = [c for c in info.constexprs if c.startswith("BLOCK")]

    def load_line(acc: Access, target: str) -> str:
        if info.elementwise:
            return f"{target} = {in_of[acc.pointer]}[...]"
        return f"{target} = {in_of[acc.pointer]}[...]  # TODO: was {ast.unparse(acc.node)}"

    def store_line(acc: Access, value: str) -> str:
        suffix = "" if info.elementwise else f"  # TODO: was tl.store({ast.unparse(acc.node.args[0]) if acc.node.args else '...'}, ...)"
        return f"{out_of[acc.pointer]}[...] = {value}{suffix}"

    body = _body(info, _pallas_expr, load_line, store_line, "    ")
    code = "\n".join(ln for ln in body.lines if not ln.lstrip().startswith("#"))
    static += [b for b in blocks if re.search(rf"\b{b}\b", code)]
    translated = [
        f"grid: {info.n_axes} {'axis' if info.n_axes == 1 else 'axes'} from tl.program_id -> pl.program_id",
        "refs: " + ", ".join([f"{p} (tl.load) -> {in_of[p]}" for p in info.inputs] + [f"{p} (tl.store) -> {out_of[p]}" for p in info.outputs]),
        f"arithmetic: {body.carried} statement(s) carried over (tl.* -> jnp / jax.nn / jax.lax)",
    ]
    if blocks:
        translated.insert(1, "blocks: " + ", ".join(
            f"{b} (tl.constexpr, " + ("default from a launch in the file: " if info.constexprs.get(b) else "no launch value found, assumed ") + f"{_block_default(info, b)})"
            for b in blocks) + " -> BlockSpec block shapes")
    if body.dropped:
        translated.append("index math dropped (BlockSpecs do the indexing): " + "; ".join(body.dropped[:6]) + (" ..." if len(body.dropped) > 6 else ""))
    todo = []
    if any(_kw(a.node, "mask") is not None for a in info.accesses):
        todo.append("masks are gone: pad inputs to a multiple of the block size (or check that the last partial block is harmless)")
    todo.append(
        "TPU block shapes: the last two block dims must be divisible by (8, 128) or equal the array dims; "
        "a 1-D block must be the full size, a multiple of 1024, or a power of 2 >= 128 * (32 / bitwidth)"
    )
    todo.append("out_shape assumes each output has the shape and dtype of the first input")
    if info.size_params:
        todo.append("size and stride arguments " + ", ".join(info.size_params) + " are dropped: the refs carry shapes, BlockSpecs do the strides")
    if static:
        todo.append("scalars and constexprs " + ", ".join(static) + " are static Python values (bound with functools.partial); pass traced scalars through scalar prefetch (PrefetchScalarGridSpec)")
    if not info.elementwise:
        todo.append("not elementwise (" + ", ".join(info.why_not_elementwise) + "): check every BlockSpec index map and each TODO line")
    todo += [f"untranslated: {t}" for t in body.todo]

    lines = _header("Pallas (TPU)", info, source, translated, todo)
    if not info.elementwise:
        lines[1:1] = [NOT_RUNNABLE_MARK + ": no kernel shape portlint translates fits:",
                      f"#   - elementwise: {', '.join(info.why_not_elementwise)}"] + [f"#   - {w}" for w in not_runnable or []]
    lines += ["import functools", "", "import jax", "import jax.numpy as jnp", "from jax.experimental import pallas as pl", "", ""]
    sig = ", ".join(ins + outs) + (", *, " + ", ".join(static) if static else "")
    lines.append(f"def {kname}({sig}):")
    lines += body.lines or ["    pass"]
    lines += ["", ""]

    # wrapper
    first = info.inputs[0] if info.inputs else None
    arrays = [re.sub(r"_ref$", "", r) for r in ins]
    wsig = arrays + [s for s in info.scalars]
    wsig_text = ", ".join(wsig)
    kw_defaults = [f"{b}={_block_default(info, b)}" for b in blocks] + [f"{c}={info.constexprs[c] or 'None'}" for c in info.constexprs if not c.startswith("BLOCK")]
    kw_defaults.append("interpret=False")
    lines.append(f"def {name}_pallas({wsig_text}{', ' if wsig_text else ''}*, {', '.join(kw_defaults)}):")
    shape_src = arrays[0] if arrays else "x"
    if info.elementwise:
        b = blocks[0] if blocks else "1024"
        lines.append(f"    spec = pl.BlockSpec(({b},), lambda i: (i,))")
        lines.append(f"    grid = (pl.cdiv({shape_src}.shape[0], {b}),)")
        in_specs = "[" + ", ".join("spec" for _ in ins) + "]"
        out_spec = "spec" if len(outs) == 1 else "[" + ", ".join("spec" for _ in outs) + "]"
    else:
        letters = ["ijk"[a] if a < 3 else f"a{a}" for a in range(info.n_axes)]
        axes = ", ".join(letters)
        arrays_of = dict(zip(info.inputs, arrays))
        grid = []
        for a in range(info.n_axes):
            entry = "1,  # TODO: size of this axis"
            for blk, ax in info.block_axis.items():
                if ax != a:
                    continue
                for p in info.inputs:
                    bl = next((x.blocks for x in info.accesses if x.pointer == p and x.blocks), ())
                    if blk in bl:
                        entry = f"pl.cdiv({arrays_of[p]}.shape[{bl.index(blk)}], {blk}),"
                        break
                break
            grid.append(entry)
        specs = []
        for p in info.inputs + info.outputs:
            bl = next((x.blocks for x in info.accesses if x.pointer == p and x.blocks), ())
            if bl:
                shape = "(" + ", ".join(bl) + ("," if len(bl) == 1 else "") + ")"
                index = ", ".join(letters[info.block_axis[b]] if b in info.block_axis else "0" for b in bl)
                index += "," if len(bl) == 1 else ""
                specs.append(f"pl.BlockSpec({shape}, lambda {axes}: ({index})),  # {p}: dims without a grid axis start at 0; TODO check")
            else:
                specs.append(f"pl.BlockSpec(memory_space=pl.ANY),  # {p}: TODO block shape and index map")
        lines.append("    grid = (")
        lines += [f"        {g}" for g in grid]
        lines.append("    )")
        lines.append("    in_specs = [")
        lines += [f"        {x}" for x in specs[: len(ins)]]
        lines.append("    ]")
        lines.append("    out_specs = [")
        lines += [f"        {x}" for x in specs[len(ins):]]
        lines.append("    ]")
        in_specs = "in_specs"
        out_spec = "out_specs[0]" if len(outs) == 1 else "out_specs"
    struct = f"jax.ShapeDtypeStruct({shape_src}.shape, {shape_src}.dtype)"
    out_shape = struct if len(outs) == 1 else "[" + ", ".join(struct for _ in outs) + "]"
    kernel_ref = kname if not static else f"functools.partial({kname}, " + ", ".join(f"{s}={s}" for s in static) + ")"
    lines += [
        "    return pl.pallas_call(",
        f"        {kernel_ref},",
        f"        out_shape={out_shape},",
        "        grid=grid,",
        f"        in_specs={in_specs},",
        f"        out_specs={out_spec},",
        "        interpret=interpret,",
        f"    )({', '.join(arrays)})",
    ]
    text = "\n".join(lines) + "\n"
    ast.parse(text)  # a skeleton that does not parse is a bug here, not the user's problem
    return text


# ---- NKI -----------------------------------------------------------------------------------

NKI_VERSION_NOTE = (
    "written for the NKI API of neuronxcc 2.x (`neuronxcc.nki`, nl.load / nl.store); "
    "NKI 0.3+ moves DMA to nki.isa.dma_copy and renames modules: check against your Neuron SDK"
)


def nki_skeleton(module: ast.Module, name: str, source: str = "<file>") -> str:
    info = analyse(module, name)
    tiles = {p: f"{re.sub(r'_?ptrs?$', '', p) or p}_hbm" for p in info.pointers}
    hbm_out = {p: f"{tiles[p][:-4]}_out_hbm" if p in info.inputs else tiles[p] for p in info.outputs}

    def load_line(acc: Access, target: str) -> str:
        return f"{target} = nl.load({tiles[acc.pointer]}[ip, jf], mask=(ip < rows))"

    def store_line(acc: Access, value: str) -> str:
        return f"nl.store({hbm_out[acc.pointer]}[ip, jf], value={value}, mask=(ip < rows))"

    body = _body(info, _nki_expr, load_line, store_line, "        ")
    static = info.scalars + [c for c in info.constexprs if not c.startswith("BLOCK")]
    translated = [
        "grid: the tl.program_id axis becomes a loop over 128-partition tiles (nl.affine_range)",
        "refs: " + ", ".join([f"{p} -> nl.load({tiles[p]}[...])" for p in info.inputs] + [f"{p} -> nl.store({hbm_out[p]}[...])" for p in info.outputs]),
        f"arithmetic: {body.carried} statement(s) carried over (tl.* -> nki.language)",
    ]
    if body.dropped:
        translated.append("index math dropped (tile indices ip/jf replace it): " + "; ".join(body.dropped[:6]) + (" ..." if len(body.dropped) > 6 else ""))
    todo = [
        NKI_VERSION_NOTE,
        "inputs are taken as 2-D (rows, cols) HBM tensors: reshape flat Triton buffers on the host; "
        "the free dimension (cols) must fit one SBUF tile, split it otherwise",
        "outputs are allocated with the first input's shape and dtype",
    ]
    if static:
        todo.append("scalars and constexprs " + ", ".join(static) + " are plain Python arguments")
    if info.size_params:
        todo.append("size and stride arguments " + ", ".join(info.size_params) + " are dropped: shapes come from the tensors, tile indices replace strides")
    if not info.elementwise:
        todo.append("not elementwise (" + ", ".join(info.why_not_elementwise) + "): the tile loop and every TODO line need work; matmuls go through nl.matmul / nki.isa.nc_matmul with PSUM accumulation")
    todo += [f"untranslated: {t}" for t in body.todo]
    todo.append("neuronxcc is not installable here: this skeleton is parsed, never run, by portlint's tests")

    lines = _header("NKI (Trainium)", info, source, translated, todo)
    lines += ["import neuronxcc.nki as nki", "import neuronxcc.nki.language as nl", "", ""]
    code = "\n".join(ln for ln in body.lines if not ln.lstrip().startswith("#"))
    blocks = [c for c in info.constexprs if c.startswith("BLOCK") and re.search(rf"\b{c}\b", code)]
    args = [tiles[p] for p in info.inputs] + [s for s in static] + [f"{b}={_block_default(info, b)}" for b in blocks]
    lines.append("@nki.jit")
    lines.append(f"def {name}_nki({', '.join(args)}):")
    first = tiles[info.inputs[0]] if info.inputs else "x"
    for p in info.outputs:
        lines.append(f"    {hbm_out[p]} = nl.ndarray({first}.shape, dtype={first}.dtype, buffer=nl.shared_hbm)")
    lines += [
        f"    rows, cols = {first}.shape",
        "    P = nl.tile_size.pmax  # 128 partitions per tile",
        "    for t in nl.affine_range((rows + P - 1) // P):",
        "        ip = t * P + nl.arange(P)[:, None]",
        "        jf = nl.arange(cols)[None, :]",
    ]
    lines += body.lines or ["        pass"]
    outs = [hbm_out[p] for p in info.outputs]
    lines.append(f"    return {', '.join(outs) if outs else 'None'}")
    text = "\n".join(lines) + "\n"
    ast.parse(text)
    return text


def pallas(module: ast.Module, name: str, source: str = "<file>") -> str:
    """A complete Pallas kernel for the kernel shapes portlint translates (row-wise, with a
    grid-stride row loop or loops over column blocks; blocked matmul; elementwise: each checked
    against TRITON_INTERPRET=1 by tests/test_oracle_pallas.py), else the skeleton, whose header
    says why no shape fitted and what is left to do."""
    from portlint.rewrites.pallas_matmul import matmul_pallas
    from portlint.rewrites.pallas_rows import row_pallas

    text, why_row = row_pallas(module, name, source)
    if text:
        return text
    text, why_matmul = matmul_pallas(module, name, source)
    if text:
        return text
    return pallas_skeleton(module, name, source, not_runnable=[f"row-wise: {why_row}", f"blocked matmul: {why_matmul}"])


def skeleton(source_text: str, kernel: str, to: str, source: str = "<file>") -> str:
    module = ast.parse(source_text)
    if to == "pallas":
        return pallas(module, kernel, source)
    if to == "nki":
        return nki_skeleton(module, kernel, source)
    raise SkeletonError(f"unknown skeleton kind {to!r} (pallas or nki)")
