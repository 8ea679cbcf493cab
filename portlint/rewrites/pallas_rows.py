"""Runnable Pallas kernels for row-wise Triton kernels (softmax, layernorm, RMSNorm,
cross-entropy ...): one program per row of a 2-D input.

The shape read: `row = tl.program_id(0)`, `cols = tl.arange(0, BLOCK)`, every access at
`P + row * stride (+ cols)` (directly, through pointer variables, or after `P += row * stride`),
masks on `cols`. The Pallas kernel gets one full row per grid step: a `(1, W)` block of each
row array and a `(1,)` block of each per-row array (`P + row`), grid `(rows,)`; `cols` becomes
`jnp.arange(W)`, the size parameter compared with `cols` becomes `W` and the block size in
`tl.zeros([BLOCK])` / `tl.full([BLOCK], ...)` becomes `W`, so masks hold everywhere and a
load's `other=` never applies.

Two loop forms are read as this shape first (`flatten`):
  - the persistent grid-stride row loop `for r in tl.range(tl.program_id(0), n_rows,
    tl.num_programs(0))`: it gives each row to one program, so its body is the kernel with
    `r = tl.program_id(0)`;
  - a loop over column blocks `for off in range(0, N, BLOCK): cols = off + tl.arange(0,
    BLOCK) ...` with `off` used only there: with one block as wide as the row the body runs
    once, over the whole row (what Triton computes with BLOCK >= N, assuming, as every
    such kernel does, that the result does not depend on the block size).
Anything else: `RowShape.why` says why not, and the general skeleton is used."""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field

from portlint.rewrites import skeletons as sk


@dataclass
class RowShape:
    ok: bool
    why: str = ""
    row: str = ""
    cols: str = ""
    sizes: set[str] = field(default_factory=set)  # parameters compared with cols (the row width)
    pointers: dict[str, tuple[str, bool, bool]] = field(default_factory=dict)  # local -> (param, has cols, has row)
    loaded: list[str] = field(default_factory=list)
    stored: dict[str, bool] = field(default_factory=dict)  # param -> row (True) or per-row (False)
    row_params: dict[str, str] = field(default_factory=dict)  # param -> "row" | "per_row" | "shared"
    arange: str = ""  # the text of cols' tl.arange(0, BLOCK)
    block: str = ""  # BLOCK
    notes: list[str] = field(default_factory=list)  # loops read as the row shape (flatten)


def _is_tl(call: ast.AST, name: str) -> bool:
    return isinstance(call, ast.Call) and sk._tl_attr(call.func) == name


def _address(expr: ast.AST, shape: RowShape, params: set[str]) -> tuple[str, bool, bool] | None:
    """(pointer parameter, has the column offsets, has the row) of a pointer expression."""
    names = sk._names(expr)
    leaf = expr
    while isinstance(leaf, ast.BinOp) and isinstance(leaf.op, ast.Add):
        leaf = leaf.left
    if not isinstance(leaf, ast.Name) or not (leaf.id in params or leaf.id in shape.pointers):
        return None
    b = leaf.id
    param, cols, row = shape.pointers.get(b, (b, False, False))
    return param, cols or shape.cols in names, row or shape.row in names


def _kind(addr) -> str | None:
    _, cols, row = addr
    return "row" if cols and row else "per_row" if row else "shared" if cols else None


def _is_range(it: ast.AST) -> bool:
    return isinstance(it, ast.Call) and (
        isinstance(it.func, ast.Name) and it.func.id == "range" or sk._tl_attr(it.func) in ("range", "static_range"))


def _uses(stmts: list[ast.stmt], name: str) -> int:
    return sum(1 for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))


_BLOCK_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "cumsum", "cumprod", "xor_sum", "associative_scan", "dot", "sort"}


def _block_dependent(loop: ast.For, before: list[ast.stmt]) -> str:
    """Why running the body of a column loop once over the whole row could differ from
    Triton's result over blocks ("" if it cannot): a carried value combined other than by
    `+=` / `tl.maximum` / `tl.minimum` of a term without it, or a store fed by a reduction over
    the block inside the same iteration (per-block results, e.g. a scale per group)."""
    defined = {t.id for s in before for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) for t in [n]}
    for s in loop.body:
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id in defined:
            if not isinstance(s.op, ast.Add) or s.target.id in sk._names(s.value):
                return f"the loop carries `{s.target.id}` by `{ast.unparse(s)[:40]}`"
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and s.targets[0].id in defined \
                and s.targets[0].id in sk._names(s.value):
            name, v = s.targets[0].id, s.value
            ok = (isinstance(v, ast.Call) and sk._tl_attr(v.func) in ("maximum", "minimum") and len(v.args) == 2
                  or isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add))
            if ok:
                sides = v.args if isinstance(v, ast.Call) else [v.left, v.right]
                ok = sum(1 for x in sides if isinstance(x, ast.Name) and x.id == name) == 1 and sum(
                    1 for x in sides for n in ast.walk(x) if isinstance(n, ast.Name) and n.id == name) == 1
            if not ok:
                return f"the loop carries `{name}` by `{ast.unparse(s)[:40]}`"
    tainted: set[str] = set()
    for s in loop.body:
        for n in ast.walk(s):
            if _is_tl(n, "store") and (sk._names(n) & tainted or any(
                    isinstance(c, ast.Call) and sk._tl_attr(c.func) in _BLOCK_REDUCTIONS for c in ast.walk(n))):
                return "a store in the loop reads a reduction over the block (a result per block)"
        if isinstance(s, (ast.Assign, ast.AugAssign)):
            value = s.value
            if sk._names(value) & tainted or any(isinstance(c, ast.Call) and sk._tl_attr(c.func) in _BLOCK_REDUCTIONS for c in ast.walk(value)):
                for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                    tainted |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return ""


def flatten(fn: ast.FunctionDef) -> tuple[ast.FunctionDef, list[str]]:
    """fn with a grid-stride row loop and loops over column blocks written as straight-line
    code (see the module docstring), and what was done; loops of other forms are left."""
    fn = copy.deepcopy(fn)
    notes: list[str] = []
    body = list(fn.body)
    values = {s.targets[0].id: s.value for s in body
              if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)}

    def resolved(e: ast.AST) -> ast.AST:
        return values.get(e.id, e) if isinstance(e, ast.Name) else e

    def axis0(call: ast.AST, kind: str) -> bool:
        if not _is_tl(call, kind):
            return False
        a = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "axis"), None)
        return isinstance(a, ast.Constant) and a.value == 0

    out: list[ast.stmt] = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.For) and _is_range(stmt.iter) and isinstance(stmt.target, ast.Name) and len(stmt.iter.args) == 3 \
                and axis0(resolved(stmt.iter.args[0]), "program_id") and axis0(resolved(stmt.iter.args[2]), "num_programs") and not stmt.orelse:
            helpers = [a.id for a in (stmt.iter.args[0], stmt.iter.args[2]) if isinstance(a, ast.Name)]
            after = [r for r in body[i + 1:] if not isinstance(r, ast.Pass) and not (isinstance(r, ast.Expr) and isinstance(r.value, ast.Constant))]
            memory = [n for r in body[:i] for n in ast.walk(r) if _is_tl(n, "load") or _is_tl(n, "store")]
            if after or memory:
                out.append(stmt)  # work outside the row loop runs once per program, not per row
                continue
            rest = body[:i] + body[i + 1:] + stmt.body
            if any(isinstance(n, ast.Name) and n.id in helpers and isinstance(n.ctx, ast.Load) for r in rest for n in ast.walk(r)):
                out.append(stmt)  # the program id is used for something else too
                continue
            out = [r for r in out if not (isinstance(r, ast.Assign) and isinstance(r.targets[0], ast.Name) and r.targets[0].id in helpers)]
            out.append(ast.Assign([ast.Name(stmt.target.id, ast.Store())], ast.parse("tl.program_id(0)", mode="eval").body, lineno=stmt.lineno))
            out.extend(stmt.body)
            notes.append(f"the grid-stride row loop `for {stmt.target.id} in {ast.unparse(stmt.iter)}` -> one row per program")
            continue
        out.append(stmt)
    body, out = out, []
    for stmt in body:
        if isinstance(stmt, ast.For) and _is_range(stmt.iter) and isinstance(stmt.target, ast.Name) and not stmt.orelse:
            args = stmt.iter.args
            off = stmt.target.id
            starts_at_0 = len(args) == 3 and isinstance(args[0], ast.Constant) and args[0].value == 0
            cols_defs = [s for s in stmt.body if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                         and isinstance(s.value, ast.BinOp) and isinstance(s.value.op, ast.Add)
                         and any(isinstance(x, ast.Name) and x.id == off for x in (s.value.left, s.value.right))
                         and any(_is_tl(x, "arange") for x in (s.value.left, s.value.right))]
            if starts_at_0 and len(cols_defs) == 1 and _uses(stmt.body, off) == 1:
                cdef = cols_defs[0]
                arange = next(x for x in (cdef.value.left, cdef.value.right) if _is_tl(x, "arange"))
                if len(arange.args) == 2 and ast.unparse(arange.args[1]) == ast.unparse(args[2]):
                    why = _block_dependent(stmt, out)
                    if why:
                        notes.append(f"not collapsed: {why}")
                        out.append(stmt)
                        continue
                    cdef.value = arange
                    out.extend(stmt.body)
                    notes.append(f"the loop over column blocks `for {off} in {ast.unparse(stmt.iter)}` -> its body once, over the whole row")
                    continue
        out.append(stmt)
    fn.body = out
    return fn, notes


def read_row_kernel(fn: ast.FunctionDef) -> RowShape:
    shape = RowShape(True)
    loads = [n for n in ast.walk(fn) if _is_tl(n, "load")]
    stores = [n for n in ast.walk(fn) if _is_tl(n, "store")]
    if not loads or not stores:
        return RowShape(False, "not both a tl.load and a tl.store")
    params = {a.arg for a in fn.args.args}
    pointer_params = set()
    for call in loads + stores:
        leaf = call.args[0] if call.args else None
        while isinstance(leaf, ast.BinOp) and isinstance(leaf.op, ast.Add):
            leaf = leaf.left
        if isinstance(leaf, ast.Name):
            pointer_params.add(leaf.id)
    for _ in range(3):  # pointer variables: `x_row = x_ptr + row * stride` ... `tl.load(x_row + cols)`
        for stmt in fn.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in pointer_params:
                leaf = stmt.value
                while isinstance(leaf, ast.BinOp) and isinstance(leaf.op, ast.Add):
                    leaf = leaf.left
                if isinstance(leaf, ast.Name):
                    pointer_params.add(leaf.id)
    pointer_params &= params
    for stmt in fn.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Return)):
            kind = type(stmt).__name__.lower()
            return RowShape(False, f"{'an' if kind == 'if' else 'a'} `{kind}` statement (only a grid-stride row loop and loops over column blocks are translated)")
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if _is_tl(value, "program_id"):
                axis = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "axis"), None)
                if not (isinstance(axis, ast.Constant) and axis.value == 0) or shape.row:
                    return RowShape(False, "more than one grid axis")
                shape.row = name
                continue
            if _is_tl(value, "arange"):
                if shape.cols and (shape.cols != name or ast.unparse(value) != shape.arange):
                    return RowShape(False, "more than one tl.arange")
                shape.cols, shape.arange = name, ast.unparse(value)
                shape.block = ast.unparse(value.args[1]) if len(value.args) == 2 else ""
                continue
            if any(_is_tl(n, "load") for n in ast.walk(value)):
                continue
            if _address(value, shape, pointer_params) is not None:
                addr = _address(value, shape, pointer_params)
                if addr is None:
                    return RowShape(False, f"pointer arithmetic `{ast.unparse(value)[:40]}` over several pointers")
                shape.pointers[name] = addr
            continue
        if isinstance(stmt, ast.Expr) and _is_tl(stmt.value, "store"):
            continue
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in pointer_params:
            # `X += row * stride`: X is the row's pointer from here on
            if not shape.row or shape.row not in sk._names(stmt.value) or stmt.target.id in shape.pointers:
                return RowShape(False, f"pointer increment `{ast.unparse(stmt)[:40]}` that is not the row offset")
            shape.pointers[stmt.target.id] = (stmt.target.id, False, True)
            continue
        if isinstance(stmt, ast.AugAssign):
            continue
        return RowShape(False, f"`{ast.unparse(stmt).splitlines()[0][:40]}`")
    if not shape.row or not shape.cols:
        return RowShape(False, "no `row = tl.program_id(0)` and `cols = tl.arange(0, BLOCK)`")
    for n in ast.walk(fn):
        if isinstance(n, ast.Compare) and shape.cols in sk._names(n):
            shape.sizes |= (sk._names(n) & params) - pointer_params
    for call in loads:
        addr = _address(call.args[0], shape, pointer_params)
        if addr is None or _kind(addr) is None:
            return RowShape(False, "a load at neither the program's row nor the columns")
        if shape.row_params.setdefault(addr[0], _kind(addr)) != _kind(addr):
            return RowShape(False, f"{addr[0]} is read in two ways")
        if addr[0] not in shape.loaded:
            shape.loaded.append(addr[0])
    for call in stores:
        addr = _address(call.args[0], shape, pointer_params)
        if addr is None or _kind(addr) not in ("row", "per_row"):
            return RowShape(False, "a store that is not at the program's row")
        if addr[0] in shape.loaded:
            return RowShape(False, f"{addr[0]} is loaded and stored (in place)")
        shape.stored[addr[0]] = _kind(addr) == "row"
        shape.row_params[addr[0]] = _kind(addr)
    return shape


def _kw(call: ast.Call, name: str, pos: int):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return call.args[pos] if len(call.args) > pos else None


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node):
        return ast.Name(self.names[node.id], node.ctx) if node.id in self.names else node


class _Refs(ast.NodeTransformer):
    """tl.load(...) -> a read of the row's block; names of sizes -> the width `_W`."""

    def __init__(self, shape: RowShape, params: set[str]):
        self.shape, self.params = shape, params

    def visit_Call(self, node):
        if (_is_tl(node, "zeros") or _is_tl(node, "full")) and node.args and self.shape.block:
            # a block-shaped accumulator: one block is the whole row
            node.args[0] = _Rename({self.shape.block: "_W"}).visit(node.args[0])
        if _is_tl(node, "load"):
            addr = _address(node.args[0], self.shape, self.params)
            param, cols = addr[0], addr[1]
            read = ast.parse({"row": f"{sk._ref(param)}[0, :]", "per_row": f"{sk._ref(param)}[0]", "shared": f"{sk._ref(param)}[:]"}[_kind(addr)], mode="eval").body
            mask, other = _kw(node, "mask", 1), _kw(node, "other", 2)
            if cols and mask is not None and other is not None:
                return ast.Call(ast.parse("tl.where", mode="eval").body, [self.visit(mask), read, self.visit(other)], [])
            return read
        if isinstance(node.func, ast.Name) and node.func.id == "float" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
            value = float(node.args[0].value)
            return ast.parse("jnp.inf" if value == float("inf") else "-jnp.inf" if value == -float("inf") else repr(value), mode="eval").body
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.shape.sizes:
            return ast.Name("_W", node.ctx)
        return node


def row_pallas(module: ast.Module, name: str, source: str = "<file>") -> tuple[str | None, str]:
    """(Pallas source, "") or (None, why not)."""
    try:
        return _row_pallas(module, name, source)
    except sk.SkeletonError:
        raise
    except Exception as exc:  # an odd kernel must still get its skeleton
        return None, f"portlint could not read it as one ({type(exc).__name__})"


def _row_pallas(module: ast.Module, name: str, source: str) -> tuple[str | None, str]:
    fn, notes = flatten(sk.find_kernel(module, name))
    shape = read_row_kernel(fn)
    refused = [n for n in notes if n.startswith("not collapsed: ")]
    if not shape.ok:
        return None, shape.why + (f"; a loop over column blocks is {refused[0]}" if refused else "")
    notes = [n for n in notes if n not in refused]
    shape.notes = [n if notes.count(n) == 1 else f"{notes.count(n)} x {n}" for i, n in enumerate(notes) if n not in notes[:i]]
    for note in notes:  # a collapsed column loop must run up to the row width
        if "column blocks" in note:
            stop = note.split("range(")[1].split(",")[1].strip()
            if stop not in shape.sizes:
                return None, f"the column loop runs to `{stop}`, which the masks do not compare with the columns"
    info = sk.analyse(module, name)
    params = [a.arg for a in fn.args.args]
    pointer_params = set(shape.row_params)
    refs = _Refs(shape, pointer_params)
    skip = {shape.row, *shape.pointers}
    body: list[str] = []
    first_row_in = next((p for p in shape.loaded if shape.row_params[p] == "row"), None)
    if first_row_in is None:
        return None, "no row of a 2-D input is loaded"
    body.append(f"    _W = {sk._ref(first_row_in)}.shape[-1]  # one block holds the whole row")
    body.append(f"    {shape.cols} = jnp.arange(_W)")
    scalars = []
    try:
        for stmt in fn.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            if isinstance(stmt, ast.Expr) and _is_tl(stmt.value, "store"):
                call = stmt.value
                param, cols, _ = _address(call.args[0], shape, pointer_params)
                value = sk._pallas_expr(refs.visit(copy.deepcopy(_kw(call, "value", 1))), info)
                target = f"{sk._ref(param)}[0, :]" if cols else f"{sk._ref(param)}[0]"
                body.append(f"    {target} = ({value}).astype({sk._ref(param)}.dtype)")
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if isinstance(stmt, ast.Assign) and isinstance(targets[0], ast.Name) and (targets[0].id in skip or targets[0].id == shape.cols):
                continue
            if isinstance(stmt, ast.AugAssign) and isinstance(targets[0], ast.Name) and targets[0].id in shape.pointers:
                continue  # `X += row * stride`: the BlockSpec picks the row
            value = sk._pallas_expr(refs.visit(copy.deepcopy(stmt.value)), info)
            op = f" {sk._AUG[type(stmt.op)]}= " if isinstance(stmt, ast.AugAssign) else " = "
            body.append("    " + ast.unparse(targets[0]) + op + value)
    except sk._Untranslatable as exc:
        return None, f"uses {exc}"
    except (KeyError, TypeError) as exc:
        return None, f"could not translate a statement ({type(exc).__name__})"
    used = "\n".join(body)

    for p in params:
        if p in pointer_params or p in shape.sizes or p == shape.row:
            continue
        if re.search(rf"\b{p}\b", used) and p not in info.constexprs:
            scalars.append(p)
    constexprs = [c for c in info.constexprs if re.search(rf"\b{c}\b", used)]
    ins = [p for p in params if p in shape.loaded]
    outs = [p for p in params if p in shape.stored]
    kname = f"{name}_pallas_kernel"
    static = scalars + constexprs
    header = sk._header("Pallas (TPU)", info, source, [
        "row kernel: grid (rows,), one program per row as in Triton (tl.program_id(0) -> the grid index)",
        *shape.notes,
        "refs: " + ", ".join(f"{p} -> {sk._ref(p)} ({ {'row': 'a (1, W) row block', 'per_row': 'a (1,) per-row block', 'shared': 'the whole (W,) vector, shared by every row'}[shape.row_params[p]]})" for p in ins + outs),
        f"columns: {shape.cols} = jnp.arange(W); " + (f"{', '.join(sorted(shape.sizes))} -> W (masks hold everywhere)" if shape.sizes else "no size parameter"),
        "index and stride arithmetic dropped (BlockSpecs do the indexing)",
    ], [
        "TPU block shapes: a (1, W) block needs W equal to the row width (it is) and rows padded to 8 for speed",
        "outputs take the first row input's dtype (per-row outputs: float32)",
    ] + ([f"scalars {', '.join(static)} are static Python values (functools.partial)"] if static else []))
    header[0] = header[0].replace("skeleton generated", "kernel generated")
    lines = header + ["import functools", "", "import jax", "import jax.numpy as jnp", "from jax.experimental import pallas as pl", "", ""]
    sig = ", ".join(sk._ref(p) for p in ins + outs) + (", *, " + ", ".join(static) if static else "")
    lines.append(f"def {kname}({sig}):")
    lines += body
    lines += ["", ""]
    arrays = [sk._ref(p)[: -len("_ref")] for p in ins]
    kw = [f"{s}" for s in scalars] + [f"{c}={info.constexprs.get(c) or 'None'}" for c in constexprs] + ["interpret=False"]
    first = sk._ref(first_row_in)[: -len("_ref")]
    lines.append(f"def {name}_pallas({', '.join(arrays)}, *, {', '.join(kw)}):")
    lines.append(f"    rows, width = {first}.shape")
    specs = []
    for p in ins:
        a = sk._ref(p)[: -len("_ref")]
        specs.append({"row": f"pl.BlockSpec((1, {a}.shape[1]), lambda i: (i, 0))", "per_row": "pl.BlockSpec((1,), lambda i: (i,))",
                      "shared": f"pl.BlockSpec({a}.shape, lambda i: (0,))"}[shape.row_params[p]])
    out_specs, out_shapes = [], []
    for p in outs:
        if shape.row_params[p] == "row":
            out_specs.append("pl.BlockSpec((1, width), lambda i: (i, 0))")
            out_shapes.append(f"jax.ShapeDtypeStruct((rows, width), {first}.dtype)")
        else:
            out_specs.append("pl.BlockSpec((1,), lambda i: (i,))")
            out_shapes.append("jax.ShapeDtypeStruct((rows,), jnp.float32)")
    kernel_ref = kname if not static else f"functools.partial({kname}, " + ", ".join(f"{s}={s}" for s in static) + ")"
    one = len(outs) == 1
    lines += [
        "    return pl.pallas_call(",
        f"        {kernel_ref},",
        f"        out_shape={out_shapes[0] if one else '[' + ', '.join(out_shapes) + ']'},",
        "        grid=(rows,),",
        f"        in_specs=[{', '.join(specs)}],",
        f"        out_specs={out_specs[0] if one else '[' + ', '.join(out_specs) + ']'},",
        "        interpret=interpret,",
        f"    )({', '.join(arrays)})",
    ]
    text = "\n".join(lines) + "\n"
    ast.parse(text)
    return text, ""
