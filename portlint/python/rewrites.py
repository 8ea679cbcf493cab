"""Control-flow rewrites for traced code, built from the flagged statement's own expressions.

Each builder returns a `Fix` (one edit replacing the statement) or None when the statement
has a shape the rewrite cannot express faithfully (a `return` inside a loop body, `break`,
a branch that leaves a name unbound ...). All rewrites evaluate both branches or run the
loop as a compiled primitive, so they are offered as `unsafe`: the result is the same on
arrays, but side effects and shape-changing branches are not preserved.

- `a if c else b`                          -> `jnp.where(c, a, b)` / `torch.where(c, a, b)`
- `if c: v = a` `else: v = b`              -> `v = jnp.where(c, a, b)`
- `if c: return a` `else: return b`        -> `return jnp.where(c, a, b)` (`lax.cond` for tuples)
- `if c:` several assignments `else:` ...  -> two branch functions and `jax.lax.cond`
- `while c: body`                          -> `jax.lax.while_loop(cond_fn, body_fn, state)`
- `for i in range(n): body` (n traced)     -> `jax.lax.fori_loop(0, n, body_fn, state)`
"""

from __future__ import annotations

import ast
import textwrap

from portlint.model import Edit, Fix, Span


class Names:
    """How the file spells the namespaces a rewrite needs."""

    def __init__(self, imports, kind: str):
        self.kind = kind
        if kind == "jax":
            self.np = imports.local_name("jax.numpy")
            lax = imports.local_name("jax.lax")
            jax = imports.local_name("jax")
            self.lax = lax or (f"{jax}.lax" if jax else None)
            self.where = f"{self.np}.where" if self.np else None
        else:
            torch = imports.local_name("torch")
            self.np = None
            self.lax = None
            self.where = f"{torch}.where" if torch else None


def _src(ctx, node: ast.AST) -> str:
    return ctx.span_text(ctx.node_span(node))


def _stmt_span(ctx, first: ast.stmt, last: ast.stmt) -> Span:
    """From the start of `first`'s line (its indentation kept) to the end of `last`."""
    start = ctx.node_span(first)
    end = ctx.node_span(last)
    return Span(start.start_line, start.start_col, end.end_line, end.end_col)


def _indent_of(ctx, node: ast.stmt) -> str:
    line = ctx.line_text(node.lineno)
    return line[: len(line) - len(line.lstrip())]


def _block_text(ctx, stmts: list[ast.stmt], indent: str) -> str:
    first, last = stmts[0], stmts[-1]
    lines = [ctx.line_text(n) for n in range(first.lineno, last.end_lineno + 1)]
    body = textwrap.dedent("\n".join(lines))
    return textwrap.indent(body, indent)


def _jumps(stmts) -> bool:
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Raise)):
                return True
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                return True
    return False


def _stored(stmts) -> list[str]:
    """Names assigned in `stmts`, in first-assignment order."""
    out: list[str] = []
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in out:
                out.append(n.id)
            elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store):
                return []  # mutation of an object: no functional rewrite
    return out


def _single_assign(stmts) -> tuple[str, ast.AST] | None:
    if len(stmts) == 1 and isinstance(stmts[0], ast.Assign) and len(stmts[0].targets) == 1 and isinstance(stmts[0].targets[0], ast.Name):
        return stmts[0].targets[0].id, stmts[0].value
    if len(stmts) == 1 and isinstance(stmts[0], ast.AugAssign) and isinstance(stmts[0].target, ast.Name):
        return stmts[0].target.id, None
    return None


def _assign_value(ctx, stmt) -> str:
    if isinstance(stmt, ast.AugAssign):
        op = _BINOPS[type(stmt.op)]
        return f"{stmt.target.id} {op} ({_src(ctx, stmt.value)})"
    return _src(ctx, stmt.value)


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
           ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>"}


def _tuple_text(names: list[str]) -> str:
    return names[0] + "," if len(names) == 1 else ", ".join(names)


def ifexp_fix(ctx, node: ast.IfExp, names: Names) -> Fix | None:
    if names.where is None:
        return None
    text = f"{names.where}({_src(ctx, node.test)}, {_src(ctx, node.body)}, {_src(ctx, node.orelse)})"
    return Fix(f"select with {names.where}", (Edit(ctx.node_span(node), text),), "unsafe")


def if_fix(ctx, node: ast.If, names: Names, next_stmt: ast.stmt | None, bound_before: set[str] = frozenset()) -> Fix | None:
    """Rewrite an `if` on a traced condition (see the module docstring).

    `bound_before`: names bound earlier in the function; only those can be passed into the
    branch functions of a `lax.cond` (a name one branch leaves unassigned must be one)."""
    if names.where is None:
        return None
    cond = _src(ctx, node.test)
    body, orelse = node.body, node.orelse
    # return a / return b (the else may be the statement after the if)
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        other, last = None, node
        if len(orelse) == 1 and isinstance(orelse[0], ast.Return) and orelse[0].value is not None:
            other = orelse[0]
        elif not orelse and isinstance(next_stmt, ast.Return) and next_stmt.value is not None:
            other, last = next_stmt, next_stmt
        if other is None:
            return None
        a, b = body[0].value, other.value
        if isinstance(a, (ast.Tuple, ast.Dict)) or isinstance(b, (ast.Tuple, ast.Dict)):
            if names.lax is None:
                return None
            expr = f"{names.lax}.cond({cond}, lambda: {_src(ctx, a)}, lambda: {_src(ctx, b)})"
        else:
            expr = f"{names.where}({cond}, {_src(ctx, a)}, {_src(ctx, b)})"
        return Fix("return one value selected on device", (Edit(_stmt_span(ctx, node, last), f"return {expr}"),), "unsafe")
    # v = a / v = b, or v = a with v bound before
    one = _single_assign(body)
    if one is not None and (not orelse or (_single_assign(orelse) and _single_assign(orelse)[0] == one[0])):
        var = one[0]
        a = _assign_value(ctx, body[0])
        b = _assign_value(ctx, orelse[0]) if orelse else var
        return Fix(f"select {var} with {names.where}", (Edit(_stmt_span(ctx, node, node), f"{var} = {names.where}({cond}, {a}, {b})"),), "unsafe")
    # several assignments: branch functions and lax.cond
    if names.lax is None or _jumps(body) or _jumps(orelse) or (orelse and isinstance(orelse[0], ast.If) and len(orelse) == 1 and ctx.line_text(orelse[0].lineno).lstrip().startswith("elif")):
        return None
    stored = _stored(body)
    for n in _stored(orelse) if orelse else []:
        if n not in stored:
            stored.append(n)
    if not stored:
        return None
    in_both = set(_stored(body)) & set(_stored(orelse) if orelse else ())
    if any(n not in bound_before and n not in in_both for n in stored):
        return None  # a branch would leave the name unbound
    operands = [n for n in stored if n in bound_before]
    args = ", ".join(operands)
    indent = _indent_of(ctx, node)
    inner = indent + "    "
    state = _tuple_text(stored)
    line = node.lineno
    parts = [f"def _on_true_{line}({args}):", _block_text(ctx, body, inner), f"{inner}return {state}"]
    if orelse:
        parts += [f"{indent}def _on_false_{line}({args}):", _block_text(ctx, orelse, inner), f"{inner}return {state}"]
    else:
        parts += [f"{indent}def _on_false_{line}({args}):", f"{inner}return {state}"]
    call_args = ", ".join([cond, f"_on_true_{line}", f"_on_false_{line}", *operands])
    parts.append(f"{indent}{state} = {names.lax}.cond({call_args})")
    return Fix("branch with jax.lax.cond", (Edit(_stmt_span(ctx, node, node), "\n".join(parts)),), "unsafe")


def while_fix(ctx, node: ast.While, names: Names, bound_before: set[str] = frozenset()) -> Fix | None:
    if names.lax is None or node.orelse or _jumps(node.body):
        return None
    stored = _stored(node.body)
    if not stored or any(n not in bound_before for n in stored):
        return None  # the carried state must exist before the loop
    indent = _indent_of(ctx, node)
    inner = indent + "    "
    state = _tuple_text(stored)
    line = node.lineno
    text = "\n".join([
        f"def _loop_cond_{line}(state):",
        f"{inner}{state} = state",
        f"{inner}return {_src(ctx, node.test)}",
        f"{indent}def _loop_body_{line}(state):",
        f"{inner}{state} = state",
        _block_text(ctx, node.body, inner),
        f"{inner}return {'(' + state + ')' if len(stored) == 1 else state}",
        f"{indent}{state} = {names.lax}.while_loop(_loop_cond_{line}, _loop_body_{line}, ({state}))",
    ])
    return Fix("loop with jax.lax.while_loop", (Edit(_stmt_span(ctx, node, node), text),), "unsafe")


def _unwrap_host_read(e: ast.AST) -> ast.AST:
    """`int(n)` / `n.item()` -> `n`: fori_loop takes the traced bound as it is."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "int" and len(e.args) == 1:
        return e.args[0]
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "item" and not e.args:
        return e.func.value
    return e


def fori_fix(ctx, node: ast.For, names: Names, bound_before: set[str] = frozenset()) -> Fix | None:
    if names.lax is None or node.orelse or _jumps(node.body) or not isinstance(node.target, ast.Name):
        return None
    call = node.iter
    if not isinstance(call, ast.Call) or call.keywords or not 1 <= len(call.args) <= 2:
        return None
    bounds = [_unwrap_host_read(a) for a in call.args]
    lo, hi = ("0", _src(ctx, bounds[0])) if len(bounds) == 1 else (_src(ctx, bounds[0]), _src(ctx, bounds[1]))
    stored = [n for n in _stored(node.body) if n != node.target.id]
    if not stored or any(n not in bound_before for n in stored):
        return None
    indent = _indent_of(ctx, node)
    inner = indent + "    "
    state = _tuple_text(stored)
    line = node.lineno
    text = "\n".join([
        f"def _loop_body_{line}({node.target.id}, state):",
        f"{inner}{state} = state",
        _block_text(ctx, node.body, inner),
        f"{inner}return {'(' + state + ')' if len(stored) == 1 else state}",
        f"{indent}{state} = {names.lax}.fori_loop({lo}, {hi}, _loop_body_{line}, ({state}))",
    ])
    return Fix("loop with jax.lax.fori_loop", (Edit(_stmt_span(ctx, node, node), text),), "unsafe")


def bound_before(fn, line: int) -> set[str]:
    """Names a function binds (parameters, assignments) on lines before `line`."""
    if fn is None:
        return set()
    out: set[str] = set()
    if not isinstance(fn, ast.Module):
        a = fn.args
        out |= {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < line:
            out.add(n.id)
    return out
