"""Runnable Pallas for a blocked Triton matmul, recognised by what the kernel does.

What is read (names do not matter):
  - the accumulator: `acc = tl.zeros((BM, BN), dtype=...)`; its shape gives the M and N block
    sizes, whatever the constexprs are called;
  - the K loop: the one top-level `for` whose body accumulates `tl.dot(a, b)` into the
    accumulator (`acc += tl.dot(a, b)`, `acc = tl.dot(a, b, acc)`, `acc = acc + tl.dot(a, b)`)
    where `a` and `b` are tiles loaded in the loop; the K block size is the loop's step
    (`range(0, K, BK)`), the divisor of its bound (`range(tl.cdiv(K, BK))`) or the step of a
    pointer increment (`a_ptrs += BK * stride_ak`);
  - the tiles: `a`'s address must hold `tl.arange(0, BM)` and `tl.arange(0, BK)`, `b`'s
    `tl.arange(0, BK)` and `tl.arange(0, BN)`, the stored tile's `tl.arange(0, BM)` and
    `tl.arange(0, BN)`; the M offset is `pid_m * BM + tl.arange(0, BM)` in both `a` and the
    store, the N offset `pid_n * BN + ...` in both `b` and the store, and the K offset
    advances every iteration (the loop variable is in the address, or each pointer is
    incremented by a multiple of BK);
  - the program ids: `pid_m` and `pid_n` are `tl.program_id(0)` / `(1)`, or both are computed
    from one `tl.program_id(0)` (the grouped tile order of Triton's matmul tutorial). The
    second form is checked by evaluating its integer arithmetic for a few sizes: every tile
    must be visited exactly once. Either way it is one output tile per program, so Pallas
    gets the grid (M/BM, N/BN) plus a K axis;
  - the epilogue: the statements after the loop that compute the stored value from the
    accumulator (`.to(dtype)`, calls of `@triton.jit` helpers in the same file, `if` on a
    constexpr such as `if ACTIVATION == "leaky_relu":`) are carried over; index math is
    dropped.

The Pallas kernel is the standard one: grid (M/BM, N/BN, K/BK), a (BM, BK) block of `a` at
(i, k), a (BK, BN) block of `b` at (k, j), a float32 VMEM accumulator zeroed at k == 0 and
the epilogue run at the last k. The wrapper pads M, N and K with zeros to block multiples
(what the masks with `other=0` do) and cuts the result back. Anything else: a reason, and
the general skeleton is used."""

from __future__ import annotations

import ast
import copy
import itertools

from portlint.rewrites import skeletons as sk


class NotMatmul(Exception):
    """Why the kernel is not read as a blocked matmul."""


def _tl(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and sk._tl_attr(node.func) == name


def _arg(call: ast.Call, name: str, pos: int) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return call.args[pos] if len(call.args) > pos else None


def _strip_to(node: ast.AST) -> ast.AST:
    """`tl.load(p).to(tl.float16)` -> `tl.load(p)`."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to" and sk._tl_attr(node.func) is None:
        node = node.func.value
    return node


def launch_values(module: ast.Module, kernel: str) -> dict[str, str]:
    """Literal keyword values (strings too) at launches `kernel[grid](..., BM=64, ACT="relu")`."""
    out: dict[str, str] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and ast.unparse(node.func.value) == kernel:
            for kw in node.keywords:
                if kw.arg and isinstance(kw.value, ast.Constant):
                    out.setdefault(kw.arg, repr(kw.value.value))
    return out


class _Defs:
    """Assignments of each local (top level and inside the K loop), for following names."""

    def __init__(self, stmts: list[ast.stmt]):
        self.values: dict[str, list[ast.AST]] = {}
        for s in stmts:
            for node in ast.walk(s):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self.values.setdefault(node.targets[0].id, []).append(node.value)
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    self.values.setdefault(node.target.id, []).append(node.value)

    def reach(self, expr: ast.AST, depth: int = 0) -> list[ast.AST]:
        """expr and every definition reachable from its names."""
        out = [expr]
        if depth > 12:
            return out
        for name in sk._names(expr):
            for v in self.values.get(name, []):
                out += self.reach(v, depth + 1)
        return out

    def inline(self, expr: ast.AST, depth: int = 0) -> ast.AST:
        """expr with each singly-assigned local replaced by its value."""
        defs = self.values

        class T(ast.NodeTransformer):
            def visit_Name(self, node):
                vals = defs.get(node.id, [])
                if len(vals) == 1 and depth < 12:
                    return _Defs.inline(self_outer, copy.deepcopy(vals[0]), depth + 1)
                return node

        self_outer = self
        return T().visit(copy.deepcopy(expr))


def _aranges(defs: _Defs, expr: ast.AST) -> set[str]:
    """Block sizes X of every `tl.arange(0, X)` behind an expression."""
    out = set()
    for e in defs.reach(expr):
        for n in ast.walk(e):
            if _tl(n, "arange") and len(n.args) == 2:
                out.add(ast.unparse(n.args[1]))
    return out


def _tile_index(defs: _Defs, expr: ast.AST, block: str) -> set[str]:
    """`P` of every `P * block + tl.arange(0, block)` behind an expression, P inlined."""
    out = set()
    for e in defs.reach(expr):
        for n in ast.walk(e):
            if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add)):
                continue
            for x, y in ((n.left, n.right), (n.right, n.left)):
                if _tl(y, "arange") and len(y.args) == 2 and ast.unparse(y.args[1]) == block:
                    start = defs.inline(x)
                    if isinstance(start, ast.BinOp) and isinstance(start.op, ast.Mult):
                        for p, q in ((start.left, start.right), (start.right, start.left)):
                            if ast.unparse(q) == block:
                                out.add(ast.unparse(p))
    return out


def _program_id_axes(expr: ast.AST) -> set[int]:
    axes = set()
    for n in ast.walk(expr):
        if _tl(n, "program_id"):
            a = _arg(n, "axis", 0)
            axes.add(a.value if isinstance(a, ast.Constant) else -1)
    return axes


# ---- checking a grouped tile order by evaluating its integer arithmetic -------------------

class _NoEval(Exception):
    pass


def _eval(node: ast.AST, env: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise _NoEval(node.id)
        return env[node.id]
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.FloorDiv: lambda: a // b, ast.Mod: lambda: a % b}
        if type(node.op) not in ops or (isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0):
            raise _NoEval(ast.unparse(node))
        return ops[type(node.op)]()
    if isinstance(node, ast.Call):
        args = [_eval(a, env) for a in node.args]
        fname = sk._tl_attr(node.func) or (node.func.id if isinstance(node.func, ast.Name) else None)
        if fname in ("min", "minimum") and len(args) == 2:
            return min(args)
        if fname in ("max", "maximum") and len(args) == 2:
            return max(args)
        if fname == "cdiv" and len(args) == 2 and args[1]:
            return -(-args[0] // args[1])
        if fname == "program_id":
            return env["__pid__"]
    raise _NoEval(ast.unparse(node))


def _tile_order_is_a_bijection(pid_m: ast.AST, pid_n: ast.AST, names: dict[str, str], extra: list[str]) -> str | None:
    """None if (pid_m, pid_n), evaluated for every pid of a 1-D grid, visits each tile once
    for several sizes; else why not. names: role -> the kernel's name (M, N, BM, BN)."""
    for m, n, bm, bn, g in itertools.product((5, 64, 100), (7, 48), (16,), (8, 16), (1, 3, 8)):
        tiles_m, tiles_n = -(-m // bm), -(-n // bn)
        env = {names["M"]: m, names["N"]: n, names["BM"]: bm, names["BN"]: bn}
        for e in extra:
            env.setdefault(e, g)
        seen = set()
        for pid in range(tiles_m * tiles_n):
            env["__pid__"] = pid
            try:
                seen.add((_eval(pid_m, env), _eval(pid_n, env)))
            except _NoEval as exc:
                return f"the tile order from tl.program_id(0) could not be evaluated (`{exc}`)"
        if seen != {(i, j) for i in range(tiles_m) for j in range(tiles_n)}:
            return f"the program-id arithmetic does not visit every ({names['BM']}, {names['BN']}) tile exactly once (M={m}, N={n})"
    return None


# ---- helpers and epilogue -----------------------------------------------------------------

def _jit_helpers(module: ast.Module) -> dict[str, ast.FunctionDef]:
    out = {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and any(
            ast.unparse(d.func if isinstance(d, ast.Call) else d).split(".")[-1] == "jit" for d in node.decorator_list
        ):
            out[node.name] = node
    return out


class _Rewrite(ast.NodeTransformer):
    """`P.dtype.element_ty` -> the dtype of P's ref; helper calls are kept (translated apart)."""

    def __init__(self, refs: dict[str, str]):
        self.refs = refs

    def visit_Attribute(self, node):
        if node.attr == "element_ty" and isinstance(node.value, ast.Attribute) and node.value.attr == "dtype" \
                and isinstance(node.value.value, ast.Name) and node.value.value.id in self.refs:
            return ast.Name(f"{self.refs[node.value.value.id]}.dtype", ast.Load())
        return self.generic_visit(node)


def _expr(node: ast.AST, info: sk.KernelInfo, refs: dict[str, str], helpers: dict, used_helpers: list) -> str:
    node = _Rewrite(refs).visit(copy.deepcopy(node))

    # helper calls are kept by name; their arguments are translated
    def translate(n):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in helpers:
            if n.func.id not in used_helpers:
                used_helpers.append(n.func.id)
            return f"{n.func.id}({', '.join(translate(a) for a in n.args)})"
        holes = {}

        class Holes(ast.NodeTransformer):
            def visit_Call(self, c):
                if isinstance(c.func, ast.Name) and c.func.id in helpers:
                    key = f"__h{len(holes)}__"
                    holes[key] = translate(c)
                    return ast.Name(key, ast.Load())
                return self.generic_visit(c)

        text = sk._pallas_expr(Holes().visit(copy.deepcopy(n)), info)
        for key, value in holes.items():
            text = text.replace(key, value)
        return text

    return translate(node)


def _helper_source(fn: ast.FunctionDef, info: sk.KernelInfo, helpers: dict, used: list) -> list[str]:
    args = ", ".join(a.arg for a in fn.args.args)
    lines = [f"def {fn.name}({args}):  # from the @triton.jit helper `{fn.name}`"]
    for s in fn.body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue
        if isinstance(s, ast.Return) and s.value is not None:
            lines.append(f"    return {_expr(s.value, info, {}, helpers, used)}")
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            lines.append(f"    {s.targets[0].id} = {_expr(s.value, info, {}, helpers, used)}")
        else:
            raise NotMatmul(f"the helper `{fn.name}` holds `{ast.unparse(s).splitlines()[0][:50]}`")
    return lines


# ---- reading the kernel ---------------------------------------------------------------

def _dot_in(stmt: ast.stmt, acc: str) -> ast.Call | None:
    """The tl.dot of `acc += tl.dot(a, b)` / `acc = tl.dot(a, b, acc)` / `acc = acc + tl.dot(a, b)`."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name) \
            and stmt.target.id == acc and _tl(stmt.value, "dot"):
        return stmt.value
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == acc:
        v = stmt.value
        if _tl(v, "dot"):
            third = _arg(v, "acc", 2)
            if isinstance(third, ast.Name) and third.id == acc:
                return v
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
            for x, y in ((v.left, v.right), (v.right, v.left)):
                if isinstance(x, ast.Name) and x.id == acc and _tl(y, "dot"):
                    return y
    return None


def read_matmul(module: ast.Module, name: str) -> dict:
    fn = sk.find_kernel(module, name)
    info = sk.analyse(module, name)
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    defs = _Defs(body)
    # the accumulator
    acc = shape = acc_dtype = None
    for s in body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and _tl(s.value, "zeros"):
            sh = _arg(s.value, "shape", 0)
            if isinstance(sh, (ast.Tuple, ast.List)) and len(sh.elts) == 2:
                acc, shape = s.targets[0].id, sh
                dt = _arg(s.value, "dtype", 1)
                acc_dtype = sk._DTYPES.get(sk._tl_attr(dt) or "", "float32") if dt is not None else "float32"
                break
    if acc is None:
        raise NotMatmul("no 2-D accumulator `acc = tl.zeros((BM, BN), ...)`")
    bm, bn = (ast.unparse(e) for e in shape.elts)
    # the K loop
    loops = [s for s in body if isinstance(s, ast.For) and any(_dot_in(x, acc) for x in s.body)]
    if len(loops) != 1:
        raise NotMatmul(f"no single top-level loop accumulating tl.dot into `{acc}`")
    loop = loops[0]
    if any(isinstance(s, (ast.For, ast.While)) for s in body if s is not loop) or any(isinstance(n, (ast.For, ast.While, ast.If)) for x in loop.body for n in ast.walk(x)):
        raise NotMatmul("other loops, or branches inside the K loop")
    if not isinstance(loop.target, ast.Name):
        raise NotMatmul("the K loop variable is not a name")
    for s in body[: body.index(loop)]:  # before the loop: index math only
        if any(_tl(n, "load") or _tl(n, "store") for n in ast.walk(s)):
            raise NotMatmul(f"a load or store before the K loop (`{ast.unparse(s).splitlines()[0][:50]}`)")
        if isinstance(s, ast.Expr) and not any(_tl(s.value, hint) for hint in ("assume", "static_assert", "multiple_of", "max_contiguous")):
            raise NotMatmul(f"`{ast.unparse(s)[:50]}` before the K loop")
        if not isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
            raise NotMatmul(f"a `{type(s).__name__.lower()}` statement before the K loop")
        written = [t.id for t in (s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)]) if isinstance(t, ast.Name)]
        if acc in written and not (isinstance(s, ast.Assign) and _tl(s.value, "zeros")):
            raise NotMatmul(f"the accumulator is changed before the K loop (`{ast.unparse(s)[:50]}`)")
    for s in loop.body:  # in the loop: the accumulator changes only by the dot
        written = [t.id for t in (s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)]) if isinstance(t, ast.Name)]
        if acc in written and _dot_in(s, acc) is None:
            raise NotMatmul(f"the accumulator is changed in the K loop other than by tl.dot (`{ast.unparse(s)[:50]}`)")
    if sum(1 for s in loop.body if _dot_in(s, acc)) != 1:
        raise NotMatmul("more than one tl.dot accumulation in the K loop")
    dot = next(_dot_in(x, acc) for x in loop.body if _dot_in(x, acc))
    if len(dot.args) < 2 or not all(isinstance(a, ast.Name) for a in dot.args[:2]):
        raise NotMatmul("tl.dot of expressions (expected two tiles loaded in the loop)")
    if _arg(dot, "acc", 2) is None and len(dot.args) > 2:
        raise NotMatmul("tl.dot with extra arguments")
    tiles = {}  # tile name -> (pointer expression, load call, full value)
    for s in loop.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            core = _strip_to(s.value)
            if _tl(core, "load"):
                tiles[s.targets[0].id] = (_arg(core, "pointer", 0), core, s.value)
            elif any(_tl(n, "load") for n in ast.walk(s.value)):
                raise NotMatmul(f"arithmetic on a loaded tile in the K loop (`{ast.unparse(s)[:50]}`)")
            elif any(isinstance(n, ast.Name) and n.id in tiles for n in ast.walk(s.value)) and s is not None and _dot_in(s, acc) is None:
                raise NotMatmul(f"arithmetic on a loaded tile in the K loop (`{ast.unparse(s)[:50]}`)")
        elif isinstance(s, ast.AugAssign) and _dot_in(s, acc) is None:
            if not isinstance(s.target, ast.Name) or sk._pointer_base(s.target, info) is None and s.target.id not in info.pointer_vars and s.target.id not in info.params:
                raise NotMatmul(f"`{ast.unparse(s)[:50]}` in the K loop")
        elif isinstance(s, ast.Expr) and not isinstance(s.value, ast.Constant):
            raise NotMatmul(f"`{ast.unparse(s)[:50]}` in the K loop")
    a_name, b_name = dot.args[0].id, dot.args[1].id
    if a_name not in tiles or b_name not in tiles:
        raise NotMatmul("the tl.dot operands are not tiles loaded in the K loop")
    if set(tiles) != {a_name, b_name}:
        raise NotMatmul(f"loads in the K loop besides the two tl.dot tiles ({', '.join(sorted(set(tiles) - {a_name, b_name}))})")
    a_ptr = sk._pointer_base(tiles[a_name][0], info)
    b_ptr = sk._pointer_base(tiles[b_name][0], info)
    if a_ptr is None or b_ptr is None or a_ptr == b_ptr:
        raise NotMatmul("the two tiles do not come from two pointer parameters")
    # K block size: loop bound, loop step, or pointer increments
    bk = None
    it = loop.iter
    if isinstance(it, ast.Call) and (isinstance(it.func, ast.Name) and it.func.id == "range" or sk._tl_attr(it.func) in ("range", "static_range")):
        args = it.args
        if len(args) >= 3:
            bk = ast.unparse(args[2])
        elif args and _tl(args[-1], "cdiv") and len(args[-1].args) == 2:
            bk = ast.unparse(args[-1].args[1])
    incs = {}
    for s in loop.body:
        if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add) and isinstance(s.target, ast.Name):
            incs[s.target.id] = s.value
    if bk is None:
        for v in incs.values():
            cands = [ast.unparse(n) for n in ast.walk(v) if isinstance(n, ast.Name) and n.id in info.constexprs]
            if len(cands) == 1:
                bk = cands[0]
                break
    if bk is None:
        raise NotMatmul("no K block size from the loop (`range(0, K, BK)`, `range(tl.cdiv(K, BK))` or `ptrs += BK * stride`)")
    # tiles: their aranges and tile offsets
    a_ar, b_ar = _aranges(defs, tiles[a_name][0]), _aranges(defs, tiles[b_name][0])
    if not ({bm, bk} <= a_ar and {bk, bn} <= b_ar):
        raise NotMatmul(f"the tiles are not ({bm}, {bk}) of `{a_ptr}` and ({bk}, {bn}) of `{b_ptr}` "
                        f"(aranges found: {sorted(a_ar)} and {sorted(b_ar)})")
    stores = [n for n in ast.walk(fn) if _tl(n, "store")]
    after = body[body.index(loop) + 1:]
    top_stores = [s for s in after if isinstance(s, ast.Expr) and _tl(s.value, "store")]
    if len(stores) != 1 or len(top_stores) != 1 or after[-1] is not top_stores[0]:
        raise NotMatmul("not exactly one tl.store, at the end, after the K loop")
    store = top_stores[0].value
    c_ptr = sk._pointer_base(_arg(store, "pointer", 0), info)
    if c_ptr is None or c_ptr in (a_ptr, b_ptr):
        raise NotMatmul("the store is not to a third pointer parameter")
    c_ar = _aranges(defs, _arg(store, "pointer", 0))
    if not {bm, bn} <= c_ar:
        raise NotMatmul(f"the stored tile is not ({bm}, {bn})")
    pm_a, pm_c = _tile_index(defs, tiles[a_name][0], bm), _tile_index(defs, _arg(store, "pointer", 0), bm)
    pn_b, pn_c = _tile_index(defs, tiles[b_name][0], bn), _tile_index(defs, _arg(store, "pointer", 0), bn)
    if len(pm_a) != 1 or pm_a != pm_c or len(pn_b) != 1 or pn_b != pn_c:
        raise NotMatmul(f"the M offsets of `{a_ptr}` and the store (or the N offsets of `{b_ptr}` and the store) "
                        f"are not the same `pid * block + tl.arange(0, block)`")
    if bm == bn and pm_a == pn_b:
        raise NotMatmul("the M and N tile indices are the same expression")
    pid_m = ast.parse(pm_a.pop(), mode="eval").body
    pid_n = ast.parse(pn_b.pop(), mode="eval").body
    ax_m, ax_n = _program_id_axes(pid_m), _program_id_axes(pid_n)
    all_axes = _program_id_axes(fn)
    if ast.unparse(pid_m) in ("tl.program_id(0)", "tl.program_id(axis=0)") and ast.unparse(pid_n) in ("tl.program_id(1)", "tl.program_id(axis=1)") \
            or ast.unparse(pid_m) in ("tl.program_id(1)", "tl.program_id(axis=1)") and ast.unparse(pid_n) in ("tl.program_id(0)", "tl.program_id(axis=0)"):
        order = "two program ids (tl.program_id(0), tl.program_id(1)) for the M and N tiles"
        if all_axes - {0, 1}:
            raise NotMatmul("a third grid axis (split-K?)")
    elif ax_m == ax_n == all_axes == {0}:
        # a 1-D grid mapped to (pid_m, pid_n): check it is a tile order
        size = {}
        for role, blk, ptr in (("M", bm, tiles[a_name][0]), ("N", bn, tiles[b_name][0])):
            cands = set()
            for e in defs.reach(_arg(store, "mask", 2) or store):
                for n in ast.walk(e):
                    if isinstance(n, ast.Compare) and len(n.comparators) == 1 and isinstance(n.ops[0], ast.Lt):
                        r = n.comparators[0]
                        if isinstance(r, ast.Name) and r.id in info.params and blk in _aranges(defs, n.left):
                            cands.add(r.id)
            if len(cands) != 1:
                raise NotMatmul(f"no size parameter compared with the {role} offsets in the store mask")
            size[role] = cands.pop()
        free = sorted((sk._names(pid_m) | sk._names(pid_n)) - {size["M"], size["N"], bm, bn} - {"tl", "min", "max"})
        free = [f for f in free if f in info.constexprs or f in info.params]
        why = _tile_order_is_a_bijection(pid_m, pid_n, {"M": size["M"], "N": size["N"], "BM": bm, "BN": bn}, free)
        if why:
            raise NotMatmul(why)
        order = (f"one tl.program_id(0) mapped to (pid_m, pid_n) by a tile order (evaluated: every tile once; "
                 + (", ".join(free) + " only orders the tiles" if free else "no other parameter") + ")")
    else:
        raise NotMatmul(f"the tile indices `{ast.unparse(pid_m)}`, `{ast.unparse(pid_n)}` are not program ids")
    # the K offset advances
    for tile, ptr in ((a_name, a_ptr), (b_name, b_ptr)):
        p = tiles[tile][0]
        uses_k = loop.target.id in {n.id for e in _Defs(loop.body).reach(p) for n in ast.walk(e) if isinstance(n, ast.Name)}
        inc = isinstance(p, ast.Name) and p.id in incs and bk in sk._names(incs[p.id])
        if not (uses_k or inc):
            raise NotMatmul(f"the address of `{tile}` does not advance along K in the loop")
    if _program_id_axes(ast.Module(body=[*loop.body], type_ignores=[])):
        raise NotMatmul("program ids in the K loop")
    return {"fn": fn, "info": info, "acc": acc, "acc_dtype": acc_dtype, "bm": bm, "bn": bn, "bk": bk, "loop": loop,
            "a": a_name, "b": b_name, "a_ptr": a_ptr, "b_ptr": b_ptr, "c_ptr": c_ptr, "tiles": tiles,
            "after": after, "store": store, "order": order, "dot": dot}


def _epilogue(m: dict, module: ast.Module, refs: dict[str, str], helpers: dict, used: list) -> tuple[list[str], set[str]]:
    """Translated statements after the K loop (data on the accumulator; constexpr `if`s),
    with the names of the constexprs they read."""
    info = m["info"]
    data = {m["acc"]}
    consts: set[str] = set()
    o_ref = refs[m["c_ptr"]]

    def emit(stmts, ind) -> list[str]:
        out = []
        for s in stmts:
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
                continue
            if s is m["after"][-1]:
                value = _arg(s.value, "value", 1)
                out.append(f"{ind}{o_ref}[...] = ({_expr(value, info, refs, helpers, used)}).astype({o_ref}.dtype)")
                continue
            if isinstance(s, ast.If):
                names = sk._names(s.test)
                if not names or not names <= set(info.constexprs):
                    raise NotMatmul(f"a branch on `{ast.unparse(s.test)[:40]}` after the K loop (only constexpr branches are carried)")
                consts.update(names)
                out.append(f"{ind}if {ast.unparse(s.test)}:  # a constexpr: a static Python branch")
                out.extend(emit(s.body, ind + "    ") or [ind + "    pass"])
                if s.orelse:
                    out.append(f"{ind}else:")
                    out.extend(emit(s.orelse, ind + "    ") or [ind + "    pass"])
                continue
            if isinstance(s, (ast.Assign, ast.AugAssign)):
                target = s.targets[0] if isinstance(s, ast.Assign) else s.target
                if not isinstance(target, ast.Name) or (isinstance(s, ast.Assign) and len(s.targets) != 1):
                    raise NotMatmul(f"`{ast.unparse(s)[:50]}` after the K loop")
                if any(_tl(n, "load") for n in ast.walk(s.value)):
                    raise NotMatmul(f"a load after the K loop (`{ast.unparse(s)[:50]}`)")
                if not (sk._names(s.value) & data):
                    continue  # index math for the store: the out BlockSpec does it
                data.add(target.id)
                consts.update(sk._names(s.value) & set(info.constexprs))
                scalars = (sk._names(s.value) & set(info.params)) - set(info.constexprs) - set(refs)
                if scalars:
                    raise NotMatmul(f"the epilogue reads the runtime argument(s) {', '.join(sorted(scalars))}")
                op = f" {sk._AUG[type(s.op)]}= " if isinstance(s, ast.AugAssign) else " = "
                out.append(f"{ind}{target.id}{op}{_expr(s.value, info, refs, helpers, used)}")
                continue
            raise NotMatmul(f"`{ast.unparse(s).splitlines()[0][:50]}` after the K loop")
        return out

    lines = emit(m["after"], "        ")
    value = _arg(m["store"], "value", 1)
    if value is None or not (sk._names(value) & data):
        raise NotMatmul("the stored value is not computed from the accumulator")
    # the stored dtype when the epilogue names it: `c = acc.to(tl.float16)` ... tl.store(p, c)
    m["out_dtype"] = None
    casts = {}
    for s in ast.walk(ast.Module(body=list(m["after"]), type_ignores=[])):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            v = s.value
            casts[s.targets[0].id] = (sk._tl_attr(v.args[0]) if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)
                                      and v.func.attr == "to" and v.args else None)
    final = value
    if isinstance(final, ast.Name):
        dt = casts.get(final.id)
    elif isinstance(final, ast.Call) and isinstance(final.func, ast.Attribute) and final.func.attr == "to" and final.args:
        dt = sk._tl_attr(final.args[0])
    else:
        dt = None
    if dt in sk._DTYPES:
        m["out_dtype"] = f"jnp.{sk._DTYPES[dt]}"
    return lines, consts


def matmul_pallas(module: ast.Module, name: str, source: str = "<file>") -> tuple[str | None, str]:
    """(Pallas source, "") or (None, why not)."""
    try:
        m = read_matmul(module, name)
        return _generate(m, module, name, source), ""
    except NotMatmul as exc:
        return None, str(exc)
    except sk._Untranslatable as exc:
        return None, f"the epilogue uses {exc}"
    except Exception as exc:  # an odd kernel must still get its skeleton
        return None, f"portlint could not read it as one ({type(exc).__name__})"


def _generate(m: dict, module: ast.Module, name: str, source: str) -> str:
    info = m["info"]
    bm, bn, bk, acc = m["bm"], m["bn"], m["bk"], m["acc"]
    for b in (bm, bn, bk):
        if b not in info.constexprs:
            raise NotMatmul(f"the block size `{b}` is not a tl.constexpr parameter")
    refs = {}
    for p in (m["a_ptr"], m["b_ptr"], m["c_ptr"]):
        r = sk._ref(p)
        refs[p] = r if r not in refs.values() else f"{r[:-4]}{len(refs)}_ref"
    a_ref, b_ref, o_ref = refs[m["a_ptr"]], refs[m["b_ptr"]], refs[m["c_ptr"]]
    helpers = _jit_helpers(module)
    helpers.pop(name, None)
    used: list[str] = []
    epilogue, consts = _epilogue(m, module, refs, helpers, used)
    helper_lines: list[str] = []
    done = set()
    while len(done) < len(used):
        h = next(x for x in used if x not in done)
        done.add(h)
        helper_lines += _helper_source(helpers[h], info, helpers, used) + ["", ""]
    consts -= {bm, bn, bk}
    launch = launch_values(module, name)

    def tile_read(tile: str, ref: str) -> str:
        full = m["tiles"][tile][2]
        text = f"{ref}[...]"
        chain = []
        node = full
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to" and sk._tl_attr(node.func) is None:
            chain.append(node.args[0])
            node = node.func.value
        for dt in reversed(chain):
            text = f"{text}.astype({_expr(dt, info, refs, {}, [])})"
        return text

    dot_dtype = f"jnp.{m['acc_dtype']}"
    kname = f"{name}_pallas_kernel"
    static = sorted(consts)
    sig = f"{a_ref}, {b_ref}, {o_ref}, {acc}_ref" + (", *, " + ", ".join(static) if static else "")
    unused = [c for c in info.constexprs if c not in (bm, bn, bk) and c not in consts]
    translated = [
        f"blocked matmul: the accumulator `{acc} = tl.zeros(({bm}, {bn}))` gives the M and N block sizes; "
        f"{'the K loop' + chr(39) + 's range gives' if bk in ast.unparse(m['loop'].iter) else 'the pointer increments in the K loop give'} {bk}",
        f"grid: {m['order']} -> Pallas grid (M/{bm}, N/{bn}, K/{bk}), one output tile per (i, j)",
        f"K loop: `{ast.unparse(_dot_in(next(x for x in m['loop'].body if _dot_in(x, acc)), acc))}` -> the K grid axis "
        f"with a {m['acc_dtype']} VMEM accumulator (zeroed at k == 0, the epilogue at the last k)",
        f"refs: {m['a_ptr']} -> {a_ref} ({bm}, {bk}) blocks at (i, k); {m['b_ptr']} -> {b_ref} ({bk}, {bn}) blocks at (k, j); "
        f"{m['c_ptr']} -> {o_ref} ({bm}, {bn}) tile at (i, j); pointer arithmetic, strides and increments dropped (the BlockSpecs do them)",
        f"epilogue: {len(epilogue)} line(s) after the loop carried over"
        + (f" (constexpr(s) {', '.join(static)} are static Python values)" if static else "")
        + (f", helper(s) {', '.join(used)} translated" if used else ""),
        "masks: the wrapper pads M, N, K with zeros to block multiples (the masked loads' other=0) and cuts the result back",
    ]
    if unused:
        translated.append(f"constexpr(s) {', '.join(unused)} not needed (tile order or unused)")
    header = sk._header("Pallas (TPU)", info, source, translated, [
        "TPU block shapes: the block sizes should be multiples of (8, 128) for a TPU (interpret mode takes any)",
        f"the wrapper takes {m['a_ptr']} as a logical (M, K) array and {m['b_ptr']} as (K, N) (the strides said how they were laid out); "
        f"the output dtype is out_dtype (default: " + (f"{m['out_dtype']}, the epilogue's cast)" if m["out_dtype"] else "the first input's)"),
    ])
    header[0] = header[0].replace("skeleton generated", "kernel generated")
    lines = header + ["import functools", "", "import jax", "import jax.numpy as jnp", "from jax.experimental import pallas as pl",
                      "from jax.experimental.pallas import tpu as pltpu", "", ""]
    lines += helper_lines
    lines += [
        f"def {kname}({sig}):",
        "    @pl.when(pl.program_id(2) == 0)",
        "    def _zero():",
        f"        {acc}_ref[...] = jnp.zeros({acc}_ref.shape, {acc}_ref.dtype)",
        "",
        f"    {m['a']} = {tile_read(m['a'], a_ref)}",
        f"    {m['b']} = {tile_read(m['b'], b_ref)}",
        f"    {acc}_ref[...] += jnp.dot({m['a']}, {m['b']}, preferred_element_type={dot_dtype})",
        "",
        "    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)",
        "    def _epilogue():",
        f"        {acc} = {acc}_ref[...]",
        *epilogue,
        "",
        "",
    ]
    defaults = {b: launch.get(b) or info.constexprs.get(b) or "32" for b in (bm, bn, bk)}
    kw = [f"{k}={v}" for k, v in defaults.items()] + [f"{c}={launch.get(c, 'None')}" for c in static] + ["out_dtype=None", "interpret=False"]
    partial = f"functools.partial({kname}" + "".join(f", {c}={c}" for c in static) + ")" if static else kname
    lines += [
        f"def {name}_pallas(a, b, *, {', '.join(kw)}):",
        "    m, kdim = a.shape",
        "    n = b.shape[1]",
        f"    mp, np_, kp = -(-m // {bm}) * {bm}, -(-n // {bn}) * {bn}, -(-kdim // {bk}) * {bk}",
        f"    out_dtype = out_dtype or {m['out_dtype'] or 'a.dtype'}",
        "    a = jnp.pad(a, ((0, mp - m), (0, kp - kdim)))",
        "    b = jnp.pad(b, ((0, kp - kdim), (0, np_ - n)))",
        "    out = pl.pallas_call(",
        f"        {partial},",
        "        out_shape=jax.ShapeDtypeStruct((mp, np_), out_dtype),",
        "        grid_spec=pltpu.PrefetchScalarGridSpec(",
        "            num_scalar_prefetch=0,",
        f"            grid=(mp // {bm}, np_ // {bn}, kp // {bk}),",
        f"            in_specs=[pl.BlockSpec(({bm}, {bk}), lambda i, j, k: (i, k)), pl.BlockSpec(({bk}, {bn}), lambda i, j, k: (k, j))],",
        f"            out_specs=pl.BlockSpec(({bm}, {bn}), lambda i, j, k: (i, j)),",
        f"            scratch_shapes=[pltpu.VMEM(({bm}, {bn}), {dot_dtype})],",
        "        ),",
        "        interpret=interpret,",
        "    )(a, b)",
        "    return out[:m, :n]",
    ]
    text = "\n".join(lines) + "\n"
    ast.parse(text)
    return text
