"""Runnable Pallas for a blocked Triton matmul: `acc += tl.dot(a, b)` over a loop on K.

The shape read: two grid axes (`tl.program_id(0)` / `(1)`), a `for` loop whose body loads one
tile of each of two pointers and accumulates `tl.dot` into one name, then (after the loop)
elementwise statements on the accumulator and one `tl.store`. Block sizes are the
constexprs whose names end in M, N and K (`BLOCK_M`, `BLOCK_SIZE_N` ...). The Pallas kernel
takes an (BM, K) strip of `a` and a (K, BN) strip of `b` per (i, j) program and runs the K
loop with `jax.lax.fori_loop` over `pl.ds` slices; the wrapper pads M, N and K with zeros to
block multiples (what the Triton masks with `other=0` do) and cuts the result back. Anything
else: None, and the general skeleton is used."""

from __future__ import annotations

import ast
import re

from portlint.rewrites import skeletons as sk


def _tl(call, name):
    return isinstance(call, ast.Call) and sk._tl_attr(call.func) == name


def _block(info: sk.KernelInfo, axis: str) -> str | None:
    names = [c for c in info.constexprs if re.search(rf"BLOCK\w*_?{axis}$", c)]
    return names[0] if len(names) == 1 else None


def matmul_pallas(module: ast.Module, name: str, source: str = "<file>") -> str | None:
    fn = sk.find_kernel(module, name)
    info = sk.analyse(module, name)
    loops = [s for s in fn.body if isinstance(s, ast.For)]
    if len(loops) != 1 or any(isinstance(n, (ast.While, ast.If)) for n in ast.walk(fn)):
        return None
    loop = loops[0]
    bm, bn, bk = (_block(info, a) for a in "MNK")
    if None in (bm, bn, bk):
        return None
    loads = {}  # local -> pointer param, in the loop
    acc = dot = None
    for s in loop.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and _tl(s.value, "load"):
            leaf = s.value.args[0]
            while isinstance(leaf, ast.BinOp) and isinstance(leaf.op, ast.Add):
                leaf = leaf.left
            if isinstance(leaf, ast.Name):
                loads[s.targets[0].id] = leaf.id
        elif isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add) and isinstance(s.target, ast.Name) and _tl(s.value, "dot"):
            acc, dot = s.target.id, s.value
        elif isinstance(s, ast.Assign) and _tl(s.value, "dot") and len(s.value.args) >= 3 and isinstance(s.value.args[2], ast.Name):
            acc, dot = s.value.args[2].id, s.value
    if dot is None or len(dot.args) < 2 or not all(isinstance(a, ast.Name) and a.id in loads for a in dot.args[:2]):
        return None
    a_ptr, b_ptr = loads[dot.args[0].id], loads[dot.args[1].id]
    after = fn.body[fn.body.index(loop) + 1 :]
    stores = [s for s in after if isinstance(s, ast.Expr) and _tl(s.value, "store")]
    if len(stores) != 1 or a_ptr == b_ptr:
        return None
    store = stores[0].value
    leaf = store.args[0]
    while isinstance(leaf, ast.BinOp) and isinstance(leaf.op, ast.Add):
        leaf = leaf.left
    if not isinstance(leaf, ast.Name):
        return None
    c_ptr = leaf.id
    epilogue = []
    try:
        for s in after:
            if s is stores[0]:
                value = store.args[1] if len(store.args) > 1 else next(k.value for k in store.keywords if k.arg == "value")
                epilogue.append(f"    o_ref[...] = ({sk._pallas_expr(value, info)}).astype(o_ref.dtype)")
            elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                epilogue.append(f"    {s.targets[0].id} = {sk._pallas_expr(s.value, info)}")
            else:
                return None
    except (sk._Untranslatable, StopIteration):
        return None
    header = sk._header("Pallas (TPU)", info, source, [
        f"blocked matmul: grid (M/{bm}, N/{bn}) from tl.program_id(0), tl.program_id(1)",
        f"K loop: tl.dot accumulated into {acc} -> jax.lax.fori_loop over pl.ds({bk}-wide) slices, float32 accumulator",
        f"refs: {a_ptr} -> a_ref ({bm}, K) strip, {b_ptr} -> b_ref (K, {bn}) strip, {c_ptr} -> o_ref ({bm}, {bn}) tile",
        f"epilogue: {len(epilogue)} statement(s) after the loop carried over",
        "masks: the wrapper pads M, N, K with zeros to block multiples (Triton's other=0.0) and cuts the result back",
    ], [
        "TPU block shapes: the block sizes should be multiples of (8, 128) for a TPU (interpret mode takes any)",
        "the output takes a's dtype; strides and size arguments are dropped (the arrays carry them)",
    ])
    blocks = {bm: info.constexprs.get(bm) or "32", bn: info.constexprs.get(bn) or "32", bk: info.constexprs.get(bk) or "32"}
    lines = header + ["import functools", "", "import jax", "import jax.numpy as jnp", "from jax.experimental import pallas as pl", "", ""]
    lines += [
        f"def {name}_pallas_kernel(a_ref, b_ref, o_ref, *, {bk}):",
        f"    def step(k, {acc}):",
        f"        a = a_ref[:, pl.ds(k * {bk}, {bk})]",
        f"        b = b_ref[pl.ds(k * {bk}, {bk}), :]",
        f"        return {acc} + jnp.dot(a, b, preferred_element_type=jnp.float32)",
        f"    {acc} = jnp.zeros(o_ref.shape, jnp.float32)",
        f"    {acc} = jax.lax.fori_loop(0, a_ref.shape[1] // {bk}, step, {acc})",
        *epilogue,
        "",
        "",
        f"def {name}_pallas(a, b, *, {', '.join(f'{k}={v}' for k, v in blocks.items())}, interpret=False):",
        "    m, kdim = a.shape",
        "    n = b.shape[1]",
        f"    mp, np_, kp = -(-m // {bm}) * {bm}, -(-n // {bn}) * {bn}, -(-kdim // {bk}) * {bk}",
        "    a = jnp.pad(a, ((0, mp - m), (0, kp - kdim)))",
        "    b = jnp.pad(b, ((0, kp - kdim), (0, np_ - n)))",
        "    out = pl.pallas_call(",
        f"        functools.partial({name}_pallas_kernel, {bk}={bk}),",
        "        out_shape=jax.ShapeDtypeStruct((mp, np_), a.dtype),",
        f"        grid=(mp // {bm}, np_ // {bn}),",
        f"        in_specs=[pl.BlockSpec(({bm}, kp), lambda i, j: (i, 0)), pl.BlockSpec((kp, {bn}), lambda i, j: (0, j))],",
        f"        out_specs=pl.BlockSpec(({bm}, {bn}), lambda i, j: (i, j)),",
        "        interpret=interpret,",
        "    )(a, b)",
        "    return out[:m, :n]",
    ]
    text = "\n".join(lines) + "\n"
    ast.parse(text)
    return text
