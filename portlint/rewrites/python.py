"""Control-flow rewrites for traced code, built from the flagged statement's own expressions.

A rewrite is applied only for the statement shapes below, each of which
tests/test_oracle_rewrites.py applies to a generated family of functions and runs under
`jax.jit` (and `torch._dynamo.explain` for torch), comparing with the original run eagerly.
Any other shape gets no fix but a `NoFix` whose reason the finding's suggestion shows
(display only), never a guess.

Shapes (the condition may use `and` / `or` / `not`, which become logical_and / logical_or /
logical_not on the device, and one-operator comparisons; chains `a < b < c` split when the
middle operand is a name or constant):
- `a if c else b`                              -> `where(c, a, b)`
- if / elif / else whose branches only assign names (`v = e`, `v += e`, `a, b = e1, e2`,
  nested ifs of the same kind)                  -> one `v, w = where(c, .., ..), where(..)`
- if / elif / else whose branches return (the `else` may be the rest of the block: pure
  assignments then a `return`)                  -> `return where(...)`; tuples and dicts are
  selected element by element
- `for i in range(N):` over assignments with a top-level `if c: break`, `N` static and `c`
  traced (jax only)                             -> `lax.fori_loop` over the whole range with a
  carried stop flag: later trips keep the state; static bounds make it a scan, so it is
  reverse-differentiable
- `for i in range([lo,] min(n, CAP)):` over assignments (a top-level `if c: break` allowed), `n`
  traced, `lo` and `CAP` int literals (jax only) -> `lax.fori_loop(lo, CAP, ...)`, the trips at
  or past `n` masked (`fori_fix`, `_range_cap`)
- `while c:` over assignments (and `if b: break` at the top of the body) whose test has an
  `and` operand `i < N` on a counter the code bounds (`_counter_cap`: `i = <int>` just before
  the loop, `i = i + k` once in the body) (jax only) -> `lax.fori_loop` over the static
  trip bound, the trips after the test fails masked (`while_fix`)
Loops with no such bound -- any other `while` on a traced test, `for i in range(n)` with `n`
traced -- get `lax.while_loop` / `lax.fori_loop(0, n, ...)` only as a display-only fix (shown,
never written by --fix): JAX cannot differentiate a while_loop in reverse mode, so the rewrite
would keep the forward values and lose jax.grad, which the obligation above forbids. The
exception (`_integer_carry`): every carried value an integer by construction, so there is no
gradient to lose; that rewrite is applied.

A select computes every value on both sides, so branch values must be arrays (or numbers)
of one shape; the fixes are `unsafe`. A name one branch leaves unassigned must be bound
before the `if`; loop state must be bound before the loop. Three refinements keep the
rewrite's derivatives and types those of the original run eagerly:
- an operation unsafe outside its domain in a branch (`sqrt`, `log`, a fractional or negative
  power, a division by a traced value, ...) gets its operand replaced by a value inside the
  domain where the branch is not taken (`where(c, x, 1)`, the double-where), so the
  unselected side's gradient is finite and the select's zero keeps it zero, not NaN;
- under jax, a branch holding a call beyond elementwise arithmetic, or more than a few
  operations, runs alone under `lax.cond`, its values cast and broadcast to what the select
  would give (cond wants both branches to agree);
- a loop's initial values are widened to the dtypes one trip gives them (`jax.eval_shape`),
  as Python lets `n = n + 0.5` turn an integer into a float.
tests/test_oracle_rewrites.py checks values on random, boundary and integer inputs and
gradients (`jax.grad`, loops included, `torch.autograd`) of every applied rewrite against the
original run eagerly."""

from __future__ import annotations

import ast
import bisect
import copy
from collections import OrderedDict
from collections.abc import Set
from dataclasses import dataclass

from portlint.core.model import Edit, Fix, Span
from portlint.frontends.python.astindex import parents, walk
from portlint.frontends.python.literals import int_literal

__all__ = ["Fix", "NO_REVERSE_MODE", "NoFix", "Names", "bound_before", "fori_fix", "if_fix", "ifexp_fix", "static_break_fix", "while_fix"]


@dataclass(frozen=True)
class NoFix:
    """No rewrite for this shape, and why (shown with the suggestion)."""

    reason: str

    @property
    def note(self) -> str:
        return f" No automatic rewrite: {self.reason}."


class _Refuse(Exception):
    pass


class Names:
    """How the file spells the namespaces a rewrite needs."""

    def __init__(self, imports, kind: str):
        self.kind = kind
        if kind == "jax":
            self.np = imports.local_name("jax.numpy")
            lax = imports.local_name("jax.lax")
            jax = imports.local_name("jax")
            self.jax = jax
            self.lax = lax or (f"{jax}.lax" if jax else None)
            self.where = f"{self.np}.where" if self.np else None
        else:
            self.torch = imports.local_name("torch")
            self.jax = None
            self.np = None
            self.lax = None
            self.where = f"{self.torch}.where" if self.torch else None


# ---- building expressions ----------------------------------------------------------------

def _dotted(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _call(fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(_dotted(fn), list(args), [])


_IMPURE = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp, ast.Starred)
_HOST_CALLS = {"print", "isinstance", "hasattr", "callable", "id", "input", "open"}


def _check_value(e: ast.expr) -> None:
    if isinstance(e, ast.Constant) and (e.value is None or isinstance(e.value, (str, bytes))):
        raise _Refuse(f"the value {ast.unparse(e)[:30]} is not an array")
    if isinstance(e, (ast.List, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        raise _Refuse("a list or set is not an array a select can choose")
    for n in walk(e):
        if isinstance(n, _IMPURE):
            raise _Refuse(f"`{ast.unparse(n)[:40]}` in a branch value")
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _HOST_CALLS:
            raise _Refuse(f"`{n.func.id}()` runs on the host")
        if isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in n.ops):
            raise _Refuse("an identity or membership test is a Python question")


class _Builder:
    def __init__(self, names: Names):
        self.n = names

    # conditions
    def cond(self, e: ast.expr) -> ast.expr:
        """A device boolean equal to Python's truth of `e`."""
        torch = self.n.kind == "torch"
        if isinstance(e, ast.BoolOp):
            parts = [self.cond(v) for v in e.values]
            out = parts[0]
            for p in parts[1:]:
                if torch:
                    out = ast.BinOp(out, ast.BitAnd() if isinstance(e.op, ast.And) else ast.BitOr(), p)
                else:
                    out = _call(f"{self.n.np}.logical_and" if isinstance(e.op, ast.And) else f"{self.n.np}.logical_or", out, p)
            return out
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            inner = self.cond(e.operand)
            return _call(f"{self.n.torch}.logical_not" if torch else f"{self.n.np}.logical_not", inner)
        if isinstance(e, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
                raise _Refuse("the condition has an identity or membership test, a Python question")
            _check_value(e)
            if len(e.ops) == 1:
                return self.expr(e)
            if not all(isinstance(m, (ast.Name, ast.Constant)) for m in e.comparators[:-1]):
                raise _Refuse("a chained comparison whose middle operand is computed")
            left, pieces = e.left, []
            for op, right in zip(e.ops, e.comparators):
                pieces.append(ast.Compare(self.expr(left), [op], [self.expr(right)]))
                left = right
            return self.cond(ast.BoolOp(ast.And(), pieces))
        if isinstance(e, ast.Constant):
            raise _Refuse("a constant condition")
        _check_value(e)
        value = self.expr(e)
        # torch.where and `&` want a bool tensor; jnp.where takes any number as its truth
        return ast.Compare(value, [ast.NotEq()], [ast.Constant(0)]) if torch else value

    def expr(self, e: ast.expr) -> ast.expr:
        """`e` with its conditional expressions selected on the device."""
        e = copy.deepcopy(e)
        builder = self

        class T(ast.NodeTransformer):
            def visit_IfExp(self, node):
                self.generic_visit(node)
                return builder.select(builder.cond(node.test), node.body, node.orelse)

            def visit_BoolOp(self, node):
                raise _Refuse(f"`{ast.unparse(node)[:40]}` returns one of its operands (Python's and/or)")

        return T().visit(e)

    def where(self, c: ast.expr, a: ast.expr, b: ast.expr) -> ast.expr:
        return _call(self.n.where, c, a, b)

    def select(self, c: ast.expr, a: ast.expr, b: ast.expr) -> ast.expr:
        """`a` where `c` else `b`, element by element through tuples and dicts."""
        if isinstance(a, ast.Tuple) or isinstance(b, ast.Tuple):
            if not (isinstance(a, ast.Tuple) and isinstance(b, ast.Tuple)) or len(a.elts) != len(b.elts):
                raise _Refuse("the branches return tuples of different lengths (or a tuple and another value)")
            return ast.Tuple([self.select(c, x, y) for x, y in zip(a.elts, b.elts)], ast.Load())
        if isinstance(a, ast.Dict) or isinstance(b, ast.Dict):
            keys = lambda d: [ast.unparse(k) if isinstance(k, ast.Constant) else None for k in d.keys] if isinstance(d, ast.Dict) else None
            ka, kb = keys(a), keys(b)
            if ka is None or kb is None or None in ka or sorted(ka) != sorted(kb):
                raise _Refuse("the branches return dicts with different or computed keys (or a dict and another value)")
            bv = dict(zip(kb, b.values))
            return ast.Dict([copy.deepcopy(k) for k in a.keys], [self.select(c, v, bv[k]) for k, v in zip(ka, a.values)])
        _check_value(a)
        _check_value(b)
        return self.where(copy.deepcopy(c), self.guarded(c, self.expr(a), True), self.guarded(c, self.expr(b), False))

    def guarded(self, c: ast.expr, e: ast.expr, taken: bool) -> ast.expr:
        """`e` with the argument of every operation that is unsafe outside its domain replaced,
        where the branch is not taken, by a value inside the domain (the double-where): the
        select already drops that branch's value there, and now its gradient is finite too, so
        the zero the select multiplies it by stays zero instead of NaN (0 * inf)."""
        builder = self

        def safe(arg: ast.expr, value: int) -> ast.expr:
            keep, other = (arg, ast.Constant(value)) if taken else (ast.Constant(value), arg)
            return builder.where(copy.deepcopy(c), keep, other)

        class G(ast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                found = _unsafe_call(node, builder.n)
                if found is not None:
                    where, value = found
                    if where < 0:
                        node.func.value = safe(node.func.value, value)
                    else:
                        node.args[where] = safe(node.args[where], value)
                return node

            def visit_BinOp(self, node):
                self.generic_visit(node)
                if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and not _constant(node.right):
                    node.right = safe(node.right, 1)
                elif isinstance(node.op, ast.Pow) and not _whole_power(node.right):
                    node.left = safe(node.left, 1)
                return node

        return G().visit(copy.deepcopy(e))


# functions whose value or gradient is NaN or infinite somewhere in the reals, with a value
# inside their domain (the double-where's stand-in where the branch is not taken)
_UNSAFE = {
    "sqrt": 1, "rsqrt": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 0, "reciprocal": 1,
    "arcsin": 0, "arccos": 0, "arctanh": 0, "asin": 0, "acos": 0, "atanh": 0, "arccosh": 1,
    "acosh": 1, "exp": 0, "exp2": 0, "expm1": 0, "lgamma": 1, "digamma": 1, "erfinv": 0,
    "tan": 0, "power": 1, "pow": 1, "float_power": 1, "true_divide": 1, "divide": 1,
}


def _constant(e: ast.expr) -> bool:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    return isinstance(e, ast.Constant) and isinstance(e.value, (int, float)) and e.value != 0


def _whole_power(e: ast.expr) -> bool:
    """A constant exponent that keeps `x ** p` finite with a finite gradient everywhere."""
    return isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool) and e.value >= 1


def _is_method(node: ast.Call, names: "Names") -> bool:
    """`t.sqrt()` (a tensor method), not `jnp.sqrt(x)` / `torch.sqrt(x)`."""
    base = ast.unparse(node.func.value)
    return base not in {names.np, getattr(names, "torch", None), f"{names.jax}.numpy" if names.jax else None, "math"}


def _unsafe_call(node: ast.Call, names: "Names") -> tuple[int, int] | None:
    """(which operand to guard: an argument's index, or -1 for a method's tensor; the value
    inside the domain) for a call unsafe outside its domain, else None."""
    if not isinstance(node.func, ast.Attribute) or node.func.attr not in _UNSAFE or node.keywords:
        return None
    name, value = node.func.attr, _UNSAFE[node.func.attr]
    method = _is_method(node, names)
    operands = ([node.func.value] if method else []) + list(node.args)
    if name in ("divide", "true_divide"):
        if len(operands) != 2 or _constant(operands[1]):
            return None
        return (0 if method else 1), value
    if name in ("power", "pow", "float_power"):
        if len(operands) != 2 or _whole_power(operands[1]):
            return None
    if method:
        return -1, value
    return (0, value) if node.args else None


# ---- branch environments ---------------------------------------------------------------------

def _substitute(e: ast.expr, env: dict[str, ast.expr]) -> ast.expr:
    class S(ast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Load) and node.id in env:
                return copy.deepcopy(env[node.id])
            return node

    return S().visit(copy.deepcopy(e))


_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr, ast.BitXor, ast.MatMult)


class _Env:
    """What a block of assignments leaves in each name, as expressions of the names before it."""

    def __init__(self, b: _Builder, bound: set[str]):
        self.b = b
        self.bound = bound

    def run(self, stmts: list[ast.stmt], env: dict[str, ast.expr]) -> dict[str, ast.expr]:
        env = dict(env)
        for s in stmts:
            env = self.step(s, env)
            _bounded(env)
        return env

    def step(self, s: ast.stmt, env: dict[str, ast.expr]) -> dict[str, ast.expr]:
        if isinstance(s, ast.Pass):
            return env
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            t = s.targets[0]
            if isinstance(t, ast.Name):
                _check_value(s.value)
                return {**env, t.id: _substitute(self.b.expr(s.value), env)}
            if isinstance(t, ast.Tuple) and isinstance(s.value, ast.Tuple) and len(t.elts) == len(s.value.elts) \
                    and all(isinstance(x, ast.Name) for x in t.elts):
                vals = []
                for v in s.value.elts:
                    _check_value(v)
                    vals.append(_substitute(self.b.expr(v), env))
                return {**env, **{x.id: v for x, v in zip(t.elts, vals)}}
            raise _Refuse(f"the assignment to `{ast.unparse(t)[:30]}` is not to plain names")
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and isinstance(s.op, _BINOPS):
            _check_value(s.value)
            name = s.target.id
            if name not in env and name not in self.bound:
                raise _Refuse(f"`{name}` is updated before it is bound")
            old = env.get(name, ast.Name(name, ast.Load()))
            return {**env, name: ast.BinOp(copy.deepcopy(old), type(s.op)(), _substitute(self.b.expr(s.value), env))}
        if isinstance(s, ast.If):
            c = _substitute(self.b.cond(s.test), env)
            t_env = self.run(s.body, env)
            f_env = self.run(s.orelse, env)
            out = dict(env)
            for name in _ordered(list(t_env) + list(f_env)):
                if t_env.get(name) is env.get(name) and f_env.get(name) is env.get(name):
                    continue
                a = t_env.get(name) or self.unbound(name)
                bb = f_env.get(name) or self.unbound(name)
                out[name] = self.b.select(c, a, bb) if ast.dump(a) != ast.dump(bb) else a
            return out
        raise _Refuse(f"a branch holds `{ast.unparse(s).splitlines()[0][:40]}`, not only assignments")

    def unbound(self, name: str) -> ast.expr:
        if name not in self.bound:
            raise _Refuse(f"`{name}` is assigned in one branch only and not bound before")
        return ast.Name(name, ast.Load())


_MAX_NODES = 2000  # a rewrite whose values grow past this many syntax nodes is refused
_MAX_BRANCHES = 32  # an if/elif chain longer than this gets no rewrite


def _bounded(env: dict[str, ast.expr]) -> None:
    """Refuse a rewrite whose inlined values grow past _MAX_NODES: each assignment is
    substituted into the next, so `s = s + s` k times doubles the text each line (2^k), and a
    long elif chain nests its selects. Checked after every statement, so the work before the
    refusal stays bounded too."""
    total = 0
    for value in env.values():
        for _ in ast.walk(value):
            total += 1
            if total > _MAX_NODES:
                raise _Refuse(f"the rewritten values would exceed {_MAX_NODES} syntax nodes (each assignment is inlined into the next)")


def _ordered(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _assign(names: list[str], values: list[ast.expr]) -> ast.stmt:
    if len(names) == 1:
        return ast.Assign([ast.Name(names[0], ast.Store())], values[0], lineno=0)
    return ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())], ast.Tuple(values, ast.Load()), lineno=0)


def _changed(env: dict[str, ast.expr], start: dict[str, ast.expr]) -> list[str]:
    return [n for n, v in env.items() if start.get(n) is not v]


# ---- text --------------------------------------------------------------------------------------

def _indent_of(ctx, node: ast.stmt) -> str:
    line = ctx.line_text(node.lineno)
    return line[: len(line) - len(line.lstrip())]


def _text(stmts: list[ast.stmt], indent: str) -> str:
    lines = ast.unparse(ast.Module(stmts, [])).split("\n")
    return "\n".join((indent if i else "") + ln if ln else ln for i, ln in enumerate(lines))


def _span(ctx, first: ast.stmt, last: ast.stmt) -> Span:
    start, end = ctx.node_span(first), ctx.node_span(last)
    return Span(start.start_line, start.start_col, end.end_line, end.end_col)


def _offer(description: str, span: Span, text: str) -> Fix:
    return Fix(description, (Edit(span, text),), "unsafe")


# why a loop with no static bound gets its rewrite shown, never applied
NO_REVERSE_MODE = ("reverse-mode differentiation through lax.while_loop is not supported, so jax.grad through the "
                   "carried values would fail; bound the loop by a static maximum and use lax.fori_loop with a mask, "
                   "or apply this rewrite by hand for forward-only or integer code")


def _show(description: str, span: Span, text: str) -> Fix:
    """A rewrite that keeps the forward values but not the gradients: shown with the finding
    (display only), never written by --fix or --fix --unsafe-fixes."""
    return Fix(f"{description} (display only: {NO_REVERSE_MODE})", (Edit(span, text),), "display-only")


def _needs(names: Names, lax: bool = False) -> None:
    if lax and names.kind != "jax":
        raise _Refuse("torch has no traced loop this rewrite can target")
    if names.where is None:
        raise _Refuse("the file does not import jax.numpy / torch under a name the rewrite can use")
    if lax and names.lax is None:
        raise _Refuse("the file does not import jax")
    if lax and not names.jax:
        raise _Refuse("the file does not import `jax` itself (the loop's carry types are found with jax.eval_shape)")


# ---- lax.cond for branches worth running only once ---------------------------------------------

# calls a select may evaluate on both sides: elementwise arithmetic, reductions and reshapes
# cost little next to the branch's other work; any other call (a layer, a matmul, a sort, a user function) is a reason
# to run only the branch that is taken
_ELEMENTWISE = {
    "sum", "mean", "max", "min", "any", "all", "prod", "reshape", "transpose", "squeeze", "ravel",
    "zeros_like", "ones_like", "full_like", "zeros", "ones", "full", "isnan", "isinf", "isfinite",
    "where", "logical_and", "logical_or", "logical_not", "abs", "absolute", "maximum", "minimum",
    "clip", "sign", "square", "negative", "asarray", "float32", "int32", "astype", "sqrt", "rsqrt",
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "tanh", "sinh",
    "cosh", "arcsin", "arccos", "arctan", "arctanh", "asin", "acos", "atan", "atanh", "floor",
    "ceil", "round", "power", "pow", "reciprocal", "sigmoid", "relu", "erf", "erfinv", "lgamma",
    "digamma", "divide", "true_divide", "multiply", "add", "subtract",
}
_FEW_OPS = 6


def _heavy(values: list[ast.expr]) -> bool:
    """Does a branch hold a call beyond elementwise arithmetic, or more than a few operations?"""
    ops = 0
    for e in values:
        for n in walk(e):
            if isinstance(n, ast.Call):
                name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
                if name not in _ELEMENTWISE:
                    return True
                ops += 1
            elif isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Compare)):
                ops += 1
    return ops > _FEW_OPS


def _can_cond(names: Names) -> bool:
    return names.kind == "jax" and bool(names.jax) and bool(names.lax) and bool(names.np)


def _cond(names: Names, c: ast.expr, then: list[ast.expr], other: list[ast.expr], line: int) -> tuple[list[ast.stmt], ast.expr]:
    """Statements that run one of two branches with `lax.cond`, and the expression of its value.
    Each branch's values are cast and broadcast to what `where(c, then, else)` would give, so
    the rewrite keeps the select's dtypes and shapes (lax.cond wants both branches to agree)."""
    jax, np, lax = names.jax, names.np, names.lax
    c_name, then_name, else_name, like_name = f"_pred_{line}", f"_then_{line}", f"_else_{line}", f"_like_{line}"

    def pack(values: list[ast.expr]) -> ast.expr:
        return values[0] if len(values) == 1 else ast.Tuple(values, ast.Load())

    stmts: list[ast.stmt] = [
        ast.Assign([ast.Name(c_name, ast.Store())], c, lineno=0),
        ast.FunctionDef(then_name, _args([]), [ast.Return(pack(then))], [], lineno=0),
        ast.FunctionDef(else_name, _args([]), [ast.Return(pack(other))], [], lineno=0),
        ast.Assign([ast.Name(like_name, ast.Store())], _dotted(
            f"{jax}.tree_util.tree_map(lambda a, b: {jax}.eval_shape({np}.where, {c_name}, a, b), "
            f"{jax}.eval_shape({then_name}), {jax}.eval_shape({else_name}))"), lineno=0),
    ]
    cast = (f"{jax}.tree_util.tree_map(lambda v, t: {np}.broadcast_to({np}.asarray(v, t.dtype), t.shape), "
            "{fn}(), " + like_name + ")")
    value = _dotted(f"{lax}.cond({np}.reshape({c_name}, ()), lambda: {cast.format(fn=then_name)}, "
                    f"lambda: {cast.format(fn=else_name)})")
    return stmts, value


# ---- the rewrites -------------------------------------------------------------------------------

def ifexp_fix(ctx, node: ast.IfExp, names: Names) -> Fix | NoFix:
    try:
        _needs(names)
        b = _Builder(names)
        text = ast.unparse(b.select(b.cond(node.test), node.body, node.orelse))
    except _Refuse as exc:
        return NoFix(str(exc))
    if _can_cond(names) and _heavy([node.body, node.orelse]):
        return NoFix("a branch holds a call or more than a few operations: run one branch with "
                     f"`{names.lax}.cond` (a statement, not an expression); a select would compute both")
    return _offer(f"select with {names.where}", ctx.node_span(node), text)


def _returns(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], ast.Return)


def _return_value(b: _Builder, env_runner: _Env, stmts: list[ast.stmt], env: dict) -> ast.expr:
    """The value a block returns: assignments, then an `if` whose branches all return or a `return`."""
    *head, last = stmts
    for i, s in enumerate(head):
        if isinstance(s, ast.If) and _all_return(s):
            rest = stmts[i + 1 :]
            return _if_return_value(b, env_runner, s, rest, env)
        env = env_runner.step(s, env)
        _bounded(env)
    if isinstance(last, ast.If) and _all_return(last):
        return _if_return_value(b, env_runner, last, [], env)
    if not isinstance(last, ast.Return) or last.value is None:
        raise _Refuse("a branch does not end in `return value`")
    _check_value(last.value)
    return _substitute(b.expr(last.value), env)


def _all_return(node: ast.If) -> bool:
    return _returns(node.body) or (bool(node.orelse) and _all_return_block(node.orelse))


def _all_return_block(stmts) -> bool:
    return _returns(stmts) or (len(stmts) == 1 and isinstance(stmts[0], ast.If) and _all_return(stmts[0]) and bool(stmts[0].orelse))


def _if_return_value(b, env_runner, node: ast.If, rest: list[ast.stmt], env, top: bool = False):
    """The selected value of an `if` whose paths return; with `top`, (condition, value if true,
    value if false) unselected."""
    c = _substitute(b.cond(node.test), env)
    if not _returns(node.body) and not (len(node.body) and isinstance(node.body[-1], ast.If) and _all_return(node.body[-1])):
        raise _Refuse("the `if` branch does not return")
    a = _return_value(b, env_runner, node.body, env)
    other = node.orelse + rest if not _all_return_block(node.orelse) else node.orelse
    if not other:
        raise _Refuse("one path falls off the end of the function (returns None)")
    f = _return_value(b, env_runner, other, env)
    return (c, a, f) if top else b.select(c, a, f)


def if_fix(ctx, node: ast.If, names: Names, next_stmt: ast.stmt | None, bound_before: set[str] = frozenset(),
           rest: list[ast.stmt] | None = None) -> Fix | NoFix:
    """Rewrite an `if` on a traced condition (see the module docstring). `rest`: the statements
    after the `if` in its block (for an early `return`); `next_stmt` alone is used when absent."""
    if rest is None:
        rest = [next_stmt] if next_stmt is not None else []
    branches, tail = 1, node
    while len(tail.orelse) == 1 and isinstance(tail.orelse[0], ast.If) and branches <= _MAX_BRANCHES:
        branches, tail = branches + 1, tail.orelse[0]
    if branches > _MAX_BRANCHES:
        # counted before anything is built: a select per branch nests as deep as the chain
        return NoFix(f"an if/elif chain of more than {_MAX_BRANCHES} branches (a select per branch; "
                     "use jax.lax.switch on an index instead)")
    try:
        _needs(names)
        b = _Builder(names)
        runner = _Env(b, set(bound_before))
        indent = _indent_of(ctx, node)
        if _returns(node.body) or (node.body and isinstance(node.body[-1], ast.If) and _all_return(node.body[-1])):
            tail = [] if _all_return_block(node.orelse) else rest
            if tail and not isinstance(tail[-1], ast.Return):
                raise _Refuse("the early `return` is not followed by a `return` that ends the block")
            last = tail[-1] if tail else node
            c, a, f = _if_return_value(b, runner, node, tail, {}, top=True)
            if _can_cond(names) and _heavy([a, f]):
                if isinstance(a, ast.Tuple) != isinstance(f, ast.Tuple) or (isinstance(a, ast.Tuple) and len(a.elts) != len(f.elts)):
                    raise _Refuse("the branches return tuples of different lengths (or a tuple and another value)")
                elements = lambda v: [b.expr(x) for x in v.elts] if isinstance(v, ast.Tuple) else [b.expr(v)]
                stmts, value = _cond(names, c, elements(a), elements(f), node.lineno)
                return _offer(f"return the taken branch's value with {names.lax}.cond", _span(ctx, node, last),
                              _text(stmts + [ast.Return(value)], indent))
            value = b.select(c, a, f)
            return _offer("return one value selected on device", _span(ctx, node, last), _text([ast.Return(value)], indent))
        if _jumps(node):
            raise _Refuse("a branch returns, breaks or raises on one path only")
        if _can_cond(names):
            cond_fix = _if_cond(ctx, node, names, b, runner, indent)
            if cond_fix is not None:
                return cond_fix
        env = runner.step(node, {})
        _bounded(env)
        changed = _changed(env, {})
        if not changed:
            raise _Refuse("the branches assign no name")
        stmt = _assign(changed, [env[n] for n in changed])
    except _Refuse as exc:
        return NoFix(str(exc))
    except RecursionError:
        return NoFix("the branches nest too deeply")
    return _offer(f"select {', '.join(changed)} with {names.where}", _span(ctx, node, node), _text([stmt], indent))


def _if_cond(ctx, node: ast.If, names: Names, b: _Builder, runner: "_Env", indent: str) -> Fix | None:
    """The assignments of a heavy `if` as one `lax.cond`; None when a select is enough."""
    c = b.cond(node.test)
    t_env, f_env = runner.run(node.body, {}), runner.run(node.orelse, {})
    changed = _ordered(list(t_env) + list(f_env))
    if not changed:
        raise _Refuse("the branches assign no name")
    then = [t_env.get(n) or runner.unbound(n) for n in changed]
    other = [f_env.get(n) or runner.unbound(n) for n in changed]
    if not _heavy(then + other):
        return None
    stmts, value = _cond(names, c, then, other, node.lineno)
    target = ast.Name(changed[0], ast.Store()) if len(changed) == 1 else ast.Tuple([ast.Name(n, ast.Store()) for n in changed], ast.Store())
    stmts.append(ast.Assign([target], value, lineno=0))
    return _offer(f"assign {', '.join(changed)} from the taken branch with {names.lax}.cond", _span(ctx, node, node), _text(stmts, indent))


def _jumps(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Raise, ast.Yield, ast.YieldFrom)) for n in walk(node))


def _state(names: list[str]) -> tuple[ast.expr, ast.expr]:
    load = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
    store = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    return load, store


_GROWING = {"concatenate", "stack", "hstack", "vstack", "append", "pad", "tile", "repeat", "cat"}


def _loop(ctx, node, names: Names, body: list[ast.stmt], bound: set[str], extra: set[str] = frozenset()):
    """(assigned names, env after one trip, `break` condition or None) for a loop body."""
    b = _Builder(names)
    runner = _Env(b, set(bound) | set(extra))
    env: dict[str, ast.expr] = {}
    stop = None
    for s in body:
        if isinstance(s, ast.If) and len(s.body) == 1 and isinstance(s.body[0], ast.Break) and not s.orelse:
            if stop is not None:
                raise _Refuse("more than one `break`")
            stop = _substitute(b.cond(s.test), env)
            before = env
            continue
        if _jumps(s):
            raise _Refuse("the loop body returns, continues, raises or breaks other than by a top-level `if c: break`")
        env = runner.step(s, env)
        _bounded(env)
    growing = [n for s in body for n in walk(s) if isinstance(n, ast.Call)
               and (n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")) in _GROWING]
    if growing:
        raise _Refuse(f"`{ast.unparse(growing[0].func)}` changes the shape of the carried state each trip (a traced loop keeps it fixed)")
    changed = [n for n in env if n not in extra]
    if not changed:
        raise _Refuse("the loop assigns no name to carry")
    missing = [n for n in changed if n not in bound]
    if missing:
        raise _Refuse(f"the loop state {', '.join(missing)} is not bound before the loop")
    if stop is not None:
        # after the break the rest of the trip does not run: keep what the names held at the break
        for n in changed:
            if env.get(n) is not before.get(n):
                env[n] = b.select(stop, before.get(n, ast.Name(n, ast.Load())), env[n])
    return b, changed, env, stop


def _binds(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)) for n in walk(node))


def _step(s: ast.stmt, name: str) -> int | None:
    """k of a statement `name = name + k` / `name = k + name` / `name += k`, k a positive int literal."""
    k = None
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id == name and isinstance(s.op, ast.Add):
        k = int_literal(s.value)
    elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name \
            and isinstance(s.value, ast.BinOp) and isinstance(s.value.op, ast.Add):
        left, right = s.value.left, s.value.right
        if isinstance(left, ast.Name) and left.id == name:
            k = int_literal(right)
        elif isinstance(right, ast.Name) and right.id == name:
            k = int_literal(left)
    return k if k is not None and k > 0 else None


def _start(ctx, node: ast.stmt, name: str) -> int | None:
    """The int literal `name` holds when the loop `node` starts: the last statement before the
    loop in its own block that binds `name` is `name = <int literal>`; None otherwise (bound
    elsewhere, in a branch, by a parameter)."""
    module = getattr(ctx, "module", None)
    if module is None:
        return None
    parent = parents(module).get(node)
    block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody"))
                  if isinstance(b, list) and any(x is node for x in b)), None)
    if block is None:
        return None
    for s in reversed(block[: next(i for i, x in enumerate(block) if x is node)]):
        if _binds(s, name):
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                return int_literal(s.value)
            return None
    return None


def _counter_cap(ctx, node: ast.While) -> tuple[str, int] | None:
    """(counter, most trips) of a `while` the code itself bounds: a top-level `and` operand of
    the test is `i < N` (`i <= N`, `N > i`, `N >= i`) on an int literal N, `i` starts at an
    int literal just before the loop, and the body adds a positive int literal k to `i` in one
    statement at its top level and binds `i` nowhere else. Every trip that goes on adds k,
    and a trip runs only while `i < N`, so there are at most ceil((N - start) / k) trips."""
    test = node.test
    operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for t in operands:
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1):
            continue
        left, op, right = t.left, t.ops[0], t.comparators[0]
        if isinstance(op, (ast.Gt, ast.GtE)):
            left, right, op = right, left, (ast.Lt() if isinstance(op, ast.Gt) else ast.LtE())
        limit = int_literal(right)
        if not isinstance(op, (ast.Lt, ast.LtE)) or not isinstance(left, ast.Name) or limit is None:
            continue
        name = left.id
        limit += 1 if isinstance(op, ast.LtE) else 0
        steps = [s for s in node.body if _step(s, name) is not None]
        if len(steps) != 1 or any(_binds(s, name) for s in node.body if s is not steps[0]):
            continue
        start = _start(ctx, node, name)
        if start is None:
            continue
        k = _step(steps[0], name)
        return name, max(0, -(-(limit - start) // k))
    return None


_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _int_valued(e: ast.expr, ints: set[str]) -> bool:
    """An expression that is an integer by construction: int literals and the names `ints`
    under `+ - * // %` and unary minus."""
    if int_literal(e) is not None:
        return True
    if isinstance(e, ast.Name):
        return e.id in ints
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return _int_valued(e.operand, ints)
    return isinstance(e, ast.BinOp) and isinstance(e.op, _INT_OPS) and _int_valued(e.left, ints) and _int_valued(e.right, ints)


def _integer_carry(ctx, node: ast.stmt, changed: list[str], env: dict[str, ast.expr], stop, index: str | None = None) -> bool:
    """Every value the loop carries is an integer by construction, so the loop has no gradient
    to lose: each carried name is set to an int literal just before the loop (`_start`), the
    body only assigns plain names (no `if`, no `break`) and each value one trip gives is
    `_int_valued` in the carried names (and the loop index). A while_loop over such a carry is
    as differentiable as the original: jax.grad of what the code computes from it works."""
    if stop is not None or not all(isinstance(s, (ast.Assign, ast.AugAssign)) for s in node.body):
        return False
    ints = set(changed) | ({index} if index else set())
    return all(_start(ctx, node, n) is not None and _int_valued(env[n], ints) for n in changed)


def _masked_fori(names: Names, b: "_Builder", line: int, changed: list[str], env: dict[str, ast.expr], stop,
                 lo: int, hi: int, index: str, go: ast.expr) -> list[ast.stmt]:
    """`lax.fori_loop(lo, hi, ...)` over static int bounds (a scan: reverse-differentiable)
    whose trips run the body only where `go` (an expression of the state and `index`) holds
    and no `break` was taken; any other trip keeps every value (a select, the double-where
    guarding the unsafe operations the masked trips still compute)."""
    np, flag, gate = names.np, f"_stop_{line}", f"_go_{line}"
    carried = changed + ([flag] if stop is not None else [])
    state_in = ast.Assign([_state(carried)[1]], ast.Name("state", ast.Load()), lineno=0)
    if stop is not None:
        go = _call(f"{np}.logical_and", _call(f"{np}.logical_not", ast.Name(flag, ast.Load())), go)
    gate_in = ast.Assign([ast.Name(gate, ast.Store())], go, lineno=0)
    on = ast.Name(gate, ast.Load())
    values = [b.select(on, env[n], ast.Name(n, ast.Load())) for n in changed]
    if stop is not None:
        values.append(_call(f"{np}.logical_or", ast.Name(flag, ast.Load()), _call(f"{np}.logical_and", ast.Name(gate, ast.Load()), stop)))
    body_fn = ast.FunctionDef(f"_loop_body_{line}", _args([index, "state"]), [state_in, gate_in, ast.Return(ast.Tuple(values, ast.Load()))], [], lineno=0)
    init = [ast.Name(n, ast.Load()) for n in changed] + ([ast.Constant(False)] if stop is not None else [])
    carry = _carry(names, body_fn.name, init, line, f"{lo}, ")
    loop = _call(f"{names.lax}.fori_loop", ast.Constant(lo), ast.Constant(hi), ast.Name(body_fn.name, ast.Load()), ast.Name(f"_carry_{line}", ast.Load()))
    out = ast.Assign([_state(changed + ([f"_stopped_{line}"] if stop is not None else []))[1]], loop, lineno=0)
    return [body_fn, *carry, out]


def while_fix(ctx, node: ast.While, names: Names, bound_before: set[str] = frozenset()) -> Fix | NoFix:
    """A `while` whose trip count the code bounds (`and i < 16` on a counter, `_counter_cap`)
    -> `lax.fori_loop` over that many trips, masked once the test fails: an applied fix, as
    reverse-differentiable as the original. Any other `while` -> `lax.while_loop`, shown only
    (display-only): it keeps the forward values but jax.grad cannot go through it."""
    try:
        _needs(names, lax=True)
        if node.orelse:
            raise _Refuse("`while ... else`")
        b, changed, env, stop = _loop(ctx, node, names, node.body, bound_before)
        line = node.lineno
        cap = _counter_cap(ctx, node)
        if cap is not None:
            counter, trips = cap
            stmts = _masked_fori(names, b, line, changed, env, stop, 0, trips, f"_trip_{line}", b.cond(node.test))
            return _offer(f"loop over at most {trips} trips (the bound on `{counter}`) with jax.lax.fori_loop, the trips after "
                          "the test fails masked (reverse-differentiable)", _span(ctx, node, node), _text(stmts, _indent_of(ctx, node)))
        carried = changed + ([f"_stop_{line}"] if stop is not None else [])
        load, store = _state(carried)
        test = b.cond(node.test)
        if stop is not None:
            test = _call(f"{names.np}.logical_and", _call(f"{names.np}.logical_not", ast.Name(f"_stop_{line}", ast.Load())), test)
        values = [env.get(n, ast.Name(n, ast.Load())) for n in changed] + ([stop] if stop is not None else [])
        state_in = ast.Assign([store], ast.Name("state", ast.Load()), lineno=0)
        cond_fn = ast.FunctionDef(f"_loop_cond_{line}", _args(["state"]), [state_in, ast.Return(test)], [], lineno=0)
        body_fn = ast.FunctionDef(f"_loop_body_{line}", _args(["state"]), [copy.deepcopy(state_in), ast.Return(ast.Tuple(values, ast.Load()))], [], lineno=0)
        init = [ast.Name(n, ast.Load()) for n in changed] + ([ast.Constant(False)] if stop is not None else [])
        carry = _carry(names, body_fn.name, init, line)
        call = _call(f"{names.lax}.while_loop", ast.Name(cond_fn.name, ast.Load()), ast.Name(body_fn.name, ast.Load()), ast.Name(f"_carry_{line}", ast.Load()))
        out = ast.Assign([store if stop is None else _state(changed + [f"_stopped_{line}"])[1]], call, lineno=0)
    except _Refuse as exc:
        return NoFix(str(exc))
    text = _text([cond_fn, body_fn, *carry, out], _indent_of(ctx, node))
    if _integer_carry(ctx, node, changed, env, stop):
        return _offer(f"loop with jax.lax.while_loop (every carried value, {', '.join(changed)}, is an integer: no gradient to lose)",
                      _span(ctx, node, node), text)
    return _show("loop with jax.lax.while_loop", _span(ctx, node, node), text)


def _carry(names: Names, body: str, init: list[ast.expr], line: int, index: str = "") -> list[ast.stmt]:
    """`_carry_<line>`: the loop's initial values widened to the dtypes one trip gives them.
    Python's loop lets `n = n / 2` turn an integer into a float; `lax.while_loop` wants the
    carry's type fixed, so the start values take the type the body settles on (found with
    `jax.eval_shape`, which runs nothing)."""
    np, jax, name = names.np, names.jax, f"_carry_{line}"
    start = ast.Assign([ast.Name(name, ast.Store())], ast.Tuple([_call(f"{np}.asarray", v) for v in init], ast.Load()), lineno=0)
    # each round widens every value to what one trip makes of the current types; a widening
    # reaches the next value the round after, so one round per value (and one more) settles it
    widen = ast.parse(
        f"for _widen_{line} in range({len(init) + 1}):\n"
        f"    {name} = tuple({np}.asarray(a, {np}.result_type(a, b.dtype)) for a, b in zip({name}, {jax}.eval_shape({body}, {index}{name})))\n").body[0]
    return [start, widen]


def _args(names: list[str]) -> ast.arguments:
    return ast.arguments([], [ast.arg(n) for n in names], None, [], [], None, [])


def _unwrap_host_read(e: ast.AST) -> ast.AST:
    """`int(n)` / `n.item()` -> `n`: fori_loop takes the traced bound as it is."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "int" and len(e.args) == 1:
        return e.args[0]
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "item" and not e.args:
        return e.func.value
    return e


def _read_after(ctx, node: ast.stmt, name: str) -> bool:
    """Is `name` read after the loop `node` in its function? Python leaves a `for` target
    bound to its last value; a lax loop keeps the index inside its body function."""
    module = getattr(ctx, "module", None)
    if module is None:
        return True
    end = node.end_lineno or node.lineno
    # the innermost function around the loop, from the module's cached parent table (a scan
    # of the module's functions per loop made each rewrite cost the whole file)
    up = parents(module)
    owner = up.get(node)
    while owner is not None and not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
        owner = up.get(owner)
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno > end
               for n in walk(owner if owner is not None else module) if hasattr(n, "lineno"))


def _range_loop(ctx, node: ast.For, names: Names, bound) -> tuple[str, ast.expr, ast.expr]:
    """(target, lo, hi) of `for target in range([lo,] hi):` that a lax loop can replace, each
    bound passed through `bound`; _Refuse otherwise."""
    _needs(names, lax=True)
    if node.orelse or not isinstance(node.target, ast.Name):
        raise _Refuse("`for ... else` or a loop target that is not one name")
    call = node.iter
    if not isinstance(call, ast.Call) or call.keywords or not 1 <= len(call.args) <= 2:
        raise _Refuse("a range with a step")
    bounds = [bound(a) for a in call.args]
    lo, hi = (ast.Constant(0), bounds[0]) if len(bounds) == 1 else tuple(bounds)
    target = node.target.id
    if _read_after(ctx, node, target):
        raise _Refuse(f"the loop index `{target}` is read after the loop (a lax loop keeps it inside its body)")
    return target, lo, hi


def _device_bound(e: ast.expr, names: Names) -> ast.expr:
    """`min(a, b)` / `max(a, b)` in a traced bound -> `jnp.minimum` / `jnp.maximum`: Python's
    compares with bool(), which a tracer refuses."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("min", "max") and len(e.args) == 2 \
            and not e.keywords and not any(isinstance(a, ast.Starred) for a in e.args):
        return _call(f"{names.np}.{e.func.id}imum", *(_device_bound(a, names) for a in e.args))
    return e


def _rebound_builtins(ctx) -> frozenset[str]:
    """The builtin names the module binds to something else anywhere (a `def min`, an
    assignment, an import, a parameter): those calls are not the builtins'."""
    watched = {"min", "range"}
    out = set()
    for n in walk(ctx.module):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.id in watched:
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in watched:
            out.add(n.name)
        elif isinstance(n, ast.alias) and (n.asname or n.name.partition(".")[0]) in watched:
            out.add(n.asname or n.name)
        elif isinstance(n, ast.arg) and n.arg in watched:
            out.add(n.arg)
    return frozenset(out)


def _range_cap(node: ast.For, names: Names, rebound: frozenset[str] = frozenset()) -> tuple[int, int, ast.expr] | None:
    """(lo, cap, traced bound) of `range([lo,] min(n, CAP))` (also `min(CAP, n)` and
    `jnp.minimum`), lo and CAP int literals: at most CAP - lo trips whatever `n` is. Not
    where the module binds `min` or `range` to a function of its own."""
    if rebound & {"min", "range"}:
        return None
    call = node.iter
    if not isinstance(call, ast.Call) or call.keywords or not 1 <= len(call.args) <= 2:
        return None
    lo = int_literal(call.args[0]) if len(call.args) == 2 else 0
    hi = call.args[-1]
    if lo is None or not (isinstance(hi, ast.Call) and not hi.keywords and len(hi.args) == 2):
        return None
    fn = ast.unparse(hi.func)
    if fn != "min" and not (names.np and fn == f"{names.np}.minimum"):
        return None
    a, c = hi.args
    if int_literal(c) is None:
        a, c = c, a
    cap = int_literal(c)
    return None if cap is None or int_literal(a) is not None else (lo, cap, a)


def fori_fix(ctx, node: ast.For, names: Names, bound_before: set[str] = frozenset()) -> Fix | NoFix:
    """`for i in range(min(n, CAP)):` (`_range_cap`) -> `lax.fori_loop` over the static range
    to CAP, the trips at or past `n` masked: an applied fix, reverse-differentiable. A traced
    bound with no cap -> `lax.fori_loop(0, n, ...)`, which JAX lowers to a while_loop: shown
    only (display-only), as jax.grad cannot go through it."""
    try:
        cap = _range_cap(node, names, ctx.fact(_rebound_builtins))
        if cap is None and any(isinstance(s, ast.If) and any(isinstance(x, ast.Break) for x in s.body) for s in node.body):
            raise _Refuse("`break` in a counted loop")
        target, lo, hi = _range_loop(ctx, node, names, lambda a: _device_bound(_unwrap_host_read(a), names))
        b, changed, env, stop = _loop(ctx, node, names, node.body, bound_before, {target})
        line = node.lineno
        if cap is not None:
            start, limit, traced = cap
            # the bound is read once, before the first trip, as range() reads it
            bound = f"_bound_{line}"
            first = ast.Assign([ast.Name(bound, ast.Store())], b.expr(_unwrap_host_read(traced)), lineno=0)
            go = ast.Compare(ast.Name(target, ast.Load()), [ast.Lt()], [ast.Name(bound, ast.Load())])
            stmts = [first, *_masked_fori(names, b, line, changed, env, stop, start, limit, target, go)]
            return _offer(f"loop over the static range to the cap {limit} with jax.lax.fori_loop, the trips at or past the "
                          "traced bound masked (reverse-differentiable)", _span(ctx, node, node), _text(stmts, _indent_of(ctx, node)))
        load, store = _state(changed)
        state_in = ast.Assign([store], ast.Name("state", ast.Load()), lineno=0)
        values = [env[n] for n in changed]
        body_fn = ast.FunctionDef(f"_loop_body_{line}", _args([target, "state"]), [state_in, ast.Return(ast.Tuple(values, ast.Load()))], [], lineno=0)
        lo_e = b.expr(lo)
        carry = _carry(names, body_fn.name, [ast.Name(n, ast.Load()) for n in changed], line, f"{ast.unparse(lo_e)}, ")
        call = _call(f"{names.lax}.fori_loop", lo_e, b.expr(hi), ast.Name(body_fn.name, ast.Load()), ast.Name(f"_carry_{line}", ast.Load()))
        out = ast.Assign([store], call, lineno=0)
    except _Refuse as exc:
        return NoFix(str(exc))
    text = _text([body_fn, *carry, out], _indent_of(ctx, node))
    if _integer_carry(ctx, node, changed, env, stop, target):
        return _offer(f"loop with jax.lax.fori_loop (every carried value, {', '.join(changed)}, is an integer: no gradient to lose)",
                      _span(ctx, node, node), text)
    return _show("loop with jax.lax.fori_loop (a traced bound makes it a while_loop)", _span(ctx, node, node), text)


def static_break_fix(ctx, node: ast.For, names: Names, bound_before: set[str] = frozenset()) -> Fix | NoFix:
    """`for i in range(<static>):` whose body stops at a top-level `if c: break` on a traced `c`
    -> `lax.fori_loop` over the whole static range with a carried stop flag: once it is set, each
    later trip keeps the state as it was (a select, with the double-where guarding the unsafe
    operations the masked trips still compute). Static bounds make fori_loop a scan, so the
    rewrite is reverse-differentiable like the original run eagerly; the caller checks that the
    range's arguments are not traced."""
    try:
        target, lo, hi = _range_loop(ctx, node, names, lambda a: a)
        b, changed, env, stop = _loop(ctx, node, names, node.body, bound_before, {target})
        if stop is None:
            raise _Refuse("no top-level `if c: break` in the loop")
        line = node.lineno
        flag = f"_stop_{line}"
        load, store = _state(changed + [flag])
        state_in = ast.Assign([store], ast.Name("state", ast.Load()), lineno=0)
        stopped = ast.Name(flag, ast.Load())
        # a trip after the stop keeps every value; the trip that sets it keeps what _loop
        # selected at the break
        values = [b.select(stopped, ast.Name(n, ast.Load()), env[n]) for n in changed]
        values.append(_call(f"{names.np}.logical_or", ast.Name(flag, ast.Load()), stop))
        body_fn = ast.FunctionDef(f"_loop_body_{line}", _args([target, "state"]), [state_in, ast.Return(ast.Tuple(values, ast.Load()))], [], lineno=0)
        init = [ast.Name(n, ast.Load()) for n in changed] + [ast.Constant(False)]
        carry = _carry(names, body_fn.name, init, line, f"{ast.unparse(lo)}, ")
        loop = _call(f"{names.lax}.fori_loop", copy.deepcopy(lo), copy.deepcopy(hi), ast.Name(body_fn.name, ast.Load()), ast.Name(f"_carry_{line}", ast.Load()))
        out = ast.Assign([_state(changed + [f"_stopped_{line}"])[1]], loop, lineno=0)
    except _Refuse as exc:
        return NoFix(str(exc))
    return _offer("early-exit loop over a static range with jax.lax.fori_loop and a stop flag (reverse-differentiable)",
                  _span(ctx, node, node), _text([body_fn, *carry, out], _indent_of(ctx, node)))


class _BoundIndex:
    """Where a function first binds each name: parameters at line 0, every other name at
    its first store. One walk of the function, shared by every `bound_before` query on it
    (a generated function with thousands of `if`s asks once per `if`)."""

    def __init__(self, fn):
        first: dict[str, int] = {}
        if not isinstance(fn, ast.Module):
            a = fn.args
            for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                first[p.arg] = 0
        for n in walk(fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and first.get(n.id, n.lineno + 1) > n.lineno:
                first[n.id] = n.lineno
        self.first = first
        self.order = sorted(first.items(), key=lambda item: item[1])
        self.lines = [line for _, line in self.order]


class BoundBefore(Set):
    """The names bound before one line: a read-only set over the function's shared index
    (membership is a dict look-up; nothing is copied per query)."""

    __slots__ = ("_index", "_line", "_count")

    def __init__(self, index: _BoundIndex, line: int):
        self._index = index
        self._line = line
        self._count = bisect.bisect_left(index.lines, line)

    def __contains__(self, name) -> bool:
        first = self._index.first.get(name)
        return first is not None and first < self._line

    def __iter__(self):
        return (name for name, _ in self._index.order[: self._count])

    def __len__(self) -> int:
        return self._count


_BOUND_INDEXES: "OrderedDict[int, tuple[object, _BoundIndex]]" = OrderedDict()


def bound_before(fn, line: int) -> Set:
    """Names a function binds (parameters, assignments) on lines before `line`. The
    function is walked once however many lines are asked about (near-linear in its size)."""
    if fn is None:
        return frozenset()
    held = _BOUND_INDEXES.get(id(fn))
    if held is None or held[0] is not fn:
        held = (fn, _BoundIndex(fn))  # holding fn keeps its id from being reused while cached
        _BOUND_INDEXES[id(fn)] = held
        if len(_BOUND_INDEXES) > 64:
            _BOUND_INDEXES.popitem(last=False)
    else:
        _BOUND_INDEXES.move_to_end(id(fn))
    return BoundBefore(held[1], line)
