"""The PTL801/PTL802 rewrites check themselves on a generated family of statement shapes.

Every shape template below is filled with every condition form (`and`, `or`, `not`, chained
comparisons, truthiness of an array ...), giving a few hundred small functions. portlint scans
them, `--fix --unsafe-fixes` is applied, and for each function:
  - a function portlint rewrote must run under `jax.jit` (torch: `torch._dynamo.explain` shows
    no graph break) and return what the original returns eagerly on seeded random inputs;
  - a function portlint offered no rewrite for carries a display-only reason in the suggestion;
  - a function that still fails under jit after the fix is still reported by the rescan.
The shapes that must get a fix are listed (FIXED_SHAPES), so a rewrite that silently stops
being offered fails here too."""

from __future__ import annotations

import ast

import pytest
import itertools
import random
import textwrap

from conftest import require_module, run_portlint, scan_paths

from portlint.rewrites.python import NO_REVERSE_MODE

CONDITIONS = {
    "cmp": "x.sum() > 0",
    "and": "x.max() > 0.5 and x.min() < 0.5",
    "or": "x.mean() > 0.3 or y.mean() < -0.3",
    "not": "not x.sum() > y.sum()",
    "not_and": "not (x.max() > 1 and y.min() < -1)",
    "chain": "-1.0 < s < 1.0",
    "truth": "(x > 1.5).any()",
}

# name -> (body using C and C2; the body starts with `s = x.sum()`), jax and torch alike
SHAPES = {
    "assign_if_else": """
        if C:
            v = x * 2.0
        else:
            v = y - 1.0
        return v""",
    "assign_one_branch_bound": """
        v = x
        if C:
            v = v + y
        return v""",
    "augassign": """
        v = x + 0.0
        if C:
            v += y * 3.0
        return v""",
    "swap": """
        a, b = x, y
        if C:
            a, b = b, a
        return a - 2.0 * b""",
    "sequential_assign": """
        a = x
        b = y
        if C:
            a = x * 2.0
            b = a + 1.0
        else:
            b = y - 1.0
        return a, b""",
    "elif_assign": """
        if C:
            v = x
        elif C2:
            v = y * 2.0
        else:
            v = x + y
        return v""",
    "elif_no_else_bound": """
        v = x - y
        if C:
            v = x
        elif C2:
            v = y
        return v""",
    "nested_assign": """
        if C:
            if C2:
                v = x
            else:
                v = y
        else:
            v = x * y
        return v""",
    "return_if_else": """
        if C:
            return x * 2.0
        else:
            return y + 1.0""",
    "early_return": """
        if C:
            return x * 2.0
        t = x + y
        t = t * 3.0
        return t - s""",
    "elif_return": """
        if C:
            return x
        elif C2:
            return y
        return x - y""",
    "nested_return": """
        if C:
            if C2:
                return x
            return y
        return x + y""",
    "tuple_return": """
        if C:
            return x, y
        return y, x * 2.0""",
    "dict_return": """
        if C:
            return {"a": x, "b": y}
        return {"b": x, "a": y * 2.0}""",
    "ifexp": """
        return x * 2.0 if C else y""",
    "while_carried": """
        v = x * x + 0.1
        n = 0
        while v.sum() < 40.0 + s:
            v = v * 1.5 + 0.1
            n = n + 1
        return v, n""",
    "while_break": """
        v = x * x + 0.1
        n = 0
        while v.sum() < 1000.0:
            v = v * 2.0
            if v.max() > 5.0 + y.max():
                break
            n = n + 1
        return v, n""",
    "while_if_body": """
        v = x * x + 0.1
        while v.sum() < 30.0:
            if v.max() > 1.0:
                v = v * 1.2
            else:
                v = v + 0.5
        return v""",
    "fori_carried": """
        v = x
        w = y
        for k in range(m):
            v = v + w * 0.5
            w = w - k
        return v, w""",
    "fori_nested_if": """
        v = x
        for k in range(m):
            if v.sum() > 2.0:
                v = v - 1.0
            else:
                v = v + y
        return v""",
    # unsafe operations in a branch: the select alone gives NaN gradients where the branch is
    # not taken (0 * inf); the rewrite guards their operands (the double-where)
    "unsafe_pow_assign": """
        v = y + 0.0
        if x[0] > 0:
            v = y * x[0] ** 0.5
        return v""",
    "unsafe_div_else": """
        if y[0] == 0:
            v = x + 1.0
        else:
            v = x / y[0]
        return v""",
    "unsafe_return": """
        if x[0] > 0:
            return y * x[0] ** -1.5
        return y - 1.0""",
    "unsafe_ifexp": """
        return y * x[0] ** 0.5 if x[0] > 0 else y""",
    # shapes with no faithful rewrite: display only
    "one_branch_unbound": """
        if C:
            t = x * 2.0
            u = t + 1.0
        else:
            t = y
        return t""",
    "return_after_compute": """
        if C:
            t = x * 2.0
            return t
        return y""",
    "branch_value_not_array": """
        mode = 0.0
        if C:
            mode = "big"
        return x""",
    "host_call_in_branch": """
        v = x
        if C:
            print("big")
            v = y
        return v""",
    "return_on_one_path": """
        v = x
        if C:
            v = y
            return v * 2.0
        v = v + 1.0
        return v""",
    "while_growing": """
        v = x
        while v.sum() < 20.0 + s:
            v = jnp.concatenate([v, jnp.abs(x) + 1.0])
        return v""",
    "tuple_vs_name": """
        pair = (x, y)
        if C:
            return x, y
        return pair""",
}
JAX_SHAPES = {
    # a branch with a call beyond elementwise arithmetic runs alone, under lax.cond
    "cond_assign": """
        if C:
            v = jnp.sort(x) * jnp.dot(x, y)
            w = jnp.cumsum(y)
        else:
            v = y
            w = x * 0.0
        return v, w""",
    "cond_return": """
        if C:
            return jnp.cumsum(x) - jnp.dot(x, y)
        return y""",
    # the carry changes dtype on the first trip (int -> float), as Python's loop allows
    # an early exit from a static range: fori_loop over the whole range with a stop flag,
    # reverse-differentiable (a scan); the second keeps computing log where the eager loop
    # stopped, so its masked trips need the double-where for a finite gradient
    "static_break": """
        v = x * x + 0.1
        for k in range(12):
            v = v * 1.3 + 0.1 * y
            if v.sum() > 20.0 + s:
                break
        return v""",
    "static_break_unsafe": """
        v = x * x + 3.0
        n = 0.0
        for k in range(8):
            v = jnp.log(v) + 0.01 * y
            n = n + 1.0
            if v.min() < 0.5:
                break
        return v, n""",
    "while_int_to_float": """
        v = m
        while v < 10:
            v = v + 1.5
        return v * x""",
    # loops the code bounds statically: fori_loop over the static bound, the trips past the
    # real count masked -- a scan, reverse-differentiable (jax.grad, as the other shapes)
    "fori_capped": """
        v = x
        w = y
        for k in range(min(m, 3)):
            v = v + w * 0.5
            w = w - k
        return v, w""",
    "fori_capped_minimum": """
        v = x + 0.0
        for k in range(1, jnp.minimum(4, m)):
            v = v * 1.5 + y * k
        return v""",
    "fori_capped_break": """
        v = x * x + 0.1
        for k in range(min(m, 4)):
            v = v * 2.0
            if v.max() > 3.0 + y.max():
                break
        return v""",
    "while_capped": """
        v = x * x + 0.1
        n = 0
        while v.sum() < 40.0 + s and n < 5:
            v = v * 1.5 + 0.1
            n = n + 1
        return v, n""",
    "while_capped_break": """
        v = x * x + 0.1
        n = 0
        while v.sum() < 1000.0 and n <= 6:
            v = v * 2.0
            if v.max() > 5.0 + y.max():
                break
            n += 1
        return v, n""",
    # the trip after the test fails would take sqrt of a negative: the masked trips need the
    # double-where for a finite gradient
    "while_capped_unsafe": """
        v = x * x + 3.0
        n = 0
        while v.min() > 1.5 and n < 6:
            v = jnp.sqrt(v - 1.0) + 0.1 * y
            n = n + 1
        return v, n""",
    # no static bound, but every carried value is an integer by construction (int literals
    # under + - * // %): no gradient to lose, so the while_loop is applied; jax.grad of what
    # the code computes from the count still matches
    "while_int_carry": """
        n = 0
        k = 1
        while k * k < 20.0 + s * s:
            n = n + 1
            k = k * 2 + n // 3
        return x * n, k""",
    "fori_int_carry": """
        t = 0
        for k in range(m):
            t = t + k * 2
            t -= 1
        return x * t + y""",
    "while_capped_int_to_float": """
        v = m
        n = 0
        while v < 10 and 8 > n:
            v = v + 1.5
            n += 1
        return v * x""",
}
C2 = "y.sum() < 0.5"
# loops with no static bound: lax.while_loop (or a fori_loop on a traced bound, which JAX
# lowers to one) keeps the forward values but not reverse-mode gradients, so the rewrite is
# display-only, with that reason, and --fix --unsafe-fixes leaves the loop as it is
LOOP_SHAPES = {"while_growing", "while_carried", "while_break", "while_if_body", "fori_carried", "fori_nested_if", "while_int_to_float"}
STATIC_LOOP_SHAPES = {"static_break", "static_break_unsafe", "fori_capped", "fori_capped_minimum", "fori_capped_break",
                      "while_capped", "while_capped_break", "while_capped_unsafe", "while_capped_int_to_float",
                      "while_int_carry", "fori_int_carry"}
ONE_CONDITION = LOOP_SHAPES | STATIC_LOOP_SHAPES | {"unsafe_pow_assign", "unsafe_div_else", "unsafe_return", "unsafe_ifexp", "cond_return"}
DISPLAY_ONLY = LOOP_SHAPES | {"one_branch_unbound", "branch_value_not_array", "host_call_in_branch", "tuple_vs_name"}
FIXED_SHAPES = (set(SHAPES) | set(JAX_SHAPES)) - DISPLAY_ONLY
LOOP_ONLY_CONDITION = "cmp"  # loops carry their own conditions


def _shapes(torch: bool) -> dict[str, str]:
    return SHAPES if torch else {**SHAPES, **JAX_SHAPES}


def _cases(torch: bool):
    for (shape, body), (cname, cond) in itertools.product(_shapes(torch).items(), CONDITIONS.items()):
        if shape in LOOP_SHAPES | STATIC_LOOP_SHAPES and torch:
            continue
        if shape in ONE_CONDITION and cname != LOOP_ONLY_CONDITION:
            continue
        if torch and cname == "truth":
            cname, cond = cname, "(x > 1.5).any()"
        yield f"{shape}__{cname}", shape, cond


def _module(torch: bool) -> tuple[str, dict[str, str]]:
    head = "import torch\n\nDEVICE_TYPE = \"xla\"  # step code written for torch_xla\n\n" if torch else "import jax\nimport jax.numpy as jnp\n\n"
    deco = "@torch.compile" if torch else "@jax.jit"
    params = "x, y" if torch else "x, y, m"
    parts, shapes = [head], {}
    for name, shape, cond in _cases(torch):
        body = textwrap.dedent(_shapes(torch)[shape]).strip("\n").replace("C2", C2).replace("C", cond)
        parts.append(f"\n{deco}\ndef {name}({params}):\n    s = x.sum()\n" + textwrap.indent(body, "    ") + "\n\n")
        shapes[name] = shape
    return "".join(parts), shapes


def _undecorated(source: str, filename: str) -> dict:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            node.decorator_list = []
    ns: dict = {}
    exec(compile(tree, filename, "exec"), ns)  # the test's own generated code, not scanned input
    return ns


def _function_of(tree: ast.Module, line: int) -> str | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= node.end_lineno:
            return node.name
    return None


def _scan(tmp_path, name: str, source: str):
    from portlint.output.fixes import fixed_text

    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    findings = [f for f in scan_paths([path], root=tmp_path).findings if f.rule_id in ("PTL801", "PTL802")]
    fixed, _ = fixed_text(source, findings, include_unsafe=True)
    fixed_path = tmp_path / ("fixed_" + name)
    fixed_path.write_text(fixed, encoding="utf-8")
    rescan = [f for f in scan_paths([fixed_path], root=tmp_path).findings if f.rule_id in ("PTL801", "PTL802")]
    tree, fixed_tree = ast.parse(source), ast.parse(fixed)
    by_fn: dict[str, list] = {}
    for f in findings:
        by_fn.setdefault(_function_of(tree, f.span.start_line), []).append(f)
    still: dict[str, list] = {}
    for f in rescan:
        still.setdefault(_function_of(fixed_tree, f.span.start_line), []).append(f)
    return fixed, by_fn, still


def _leaves(v):
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in _leaves(v[k])]
    if isinstance(v, (tuple, list)):
        return [x for e in v for x in _leaves(e)]
    return [v]


# inputs each rewritten function is checked on: random floats (seeds 0-3), the boundary values
# of the branches (zero, negative, infinite entries, a zero denominator), and integers
REGIMES = ("float", "float", "float", "float", "boundary", "int")
GRADIENT_SEEDS = (0, 1, 4)  # derivatives on two random draws and the boundary values


def _check_family(tmp_path, torch: bool, run_fixed, run_original, inputs, equal, derivatives=None):
    source, shapes = _module(torch)
    fixed, by_fn, still = _scan(tmp_path, "family.py", source)
    original = _undecorated(source, "family.py")
    rewritten = _undecorated(fixed, "fixed_family.py")
    fixed_shapes, display_shapes, problems = set(), set(), []
    for name, shape in shapes.items():
        found = by_fn.get(name, [])
        if not found:
            problems.append(f"{name}: no PTL801/PTL802 finding on a traced branch")
            continue
        offered = [f for f in found if f.fix is not None and f.fix.applicability != "display-only"]
        for f in found:
            reason = "No automatic rewrite:" in (f.suggestion or "") or f.fix is not None and "(display only: " in f.fix.description
            if f.fix is None or f.fix.applicability == "display-only":
                if not reason and not offered:
                    problems.append(f"{name}: no fix and no display-only reason at line {f.span.start_line}")
        if shape in LOOP_SHAPES:
            # the loop's own finding shows its rewrite with the reason it is not applied
            loops = [f for f in found if f.fix is not None and f.fix.applicability == "display-only"]
            if shape != "while_growing" and not any(NO_REVERSE_MODE in f.fix.description for f in loops):
                problems.append(f"{name}: the unbounded loop has no display-only rewrite saying why it is not applied")
            if any(f.fix is not None and f.fix.applicability != "display-only" and "loop" in f.fix.description for f in found):
                problems.append(f"{name}: an unbounded loop got an applied loop rewrite")
        if not offered:
            display_shapes.add(shape)
            continue
        ok = True
        for seed, regime in enumerate(REGIMES):
            args = inputs(random.Random(f"{name}/{seed}"), regime)
            if args is None:
                continue
            want = run_original(original[name], args)
            try:
                got = run_fixed(rewritten[name], args)
            except Exception as exc:  # noqa: BLE001 - any failure under the tracer counts
                ok = False
                if not still.get(name):
                    problems.append(f"{name}: the fixed code fails ({type(exc).__name__}: {str(exc)[:80]}) and the rescan is clean")
                break
            w, g = _leaves(want), _leaves(got)
            if len(w) != len(g) or not all(equal(a, b) for a, b in zip(w, g)):
                ok = False
                problems.append(f"{name}: rewritten result differs from the original run eagerly (seed {seed}, {regime})")
                break
            if derivatives is not None and seed in GRADIENT_SEEDS:
                wrong = derivatives(original[name], rewritten[name], args, shape)
                if wrong:
                    ok = False
                    problems.append(f"{name}: {wrong} (seed {seed}, {regime})")
                    break
        if ok:
            fixed_shapes.add(shape)
        else:
            display_shapes.add(shape)
    # a shape counts as fixed only when every generated case of it was rewritten and matched
    return fixed_shapes - display_shapes, display_shapes, problems, shapes


@pytest.mark.oracle
def test_generated_jax_rewrites_trace_and_match_eager(tmp_path):
    jax = require_module("jax")
    import numpy as np

    jnp = jax.numpy

    def inputs(rng, regime):
        gen = np.random.default_rng(rng.randrange(2**32))
        if regime == "int":
            x, y = (jnp.asarray(gen.integers(-3, 4, size=6), jnp.int32) for _ in range(2))
        elif regime == "boundary":
            x = jnp.asarray([0.0, -1.0, 2.0, -0.0, 1e-30, -3.0], jnp.float32)
            y = jnp.asarray([0.0, 1.0, -1.0, 0.5, -2.0, 1e30], jnp.float32)
        else:
            x = jnp.asarray(gen.normal(size=6), jnp.float32)
            y = jnp.asarray(gen.normal(size=6), jnp.float32)
        return x, y, jnp.int32(rng.randrange(0, 5))

    def run_fixed(fn, args):
        return jax.block_until_ready(jax.jit(fn)(*args))

    def run_original(fn, args):
        x, y, m = args
        return fn(x, y, int(m))  # eager: a Python trip count, Python branches on concrete values

    def equal(a, b):
        return np.shape(a) == np.shape(b) and np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5, equal_nan=True)

    def total(out):
        floats = [v for v in _leaves(out) if jnp.issubdtype(jnp.result_type(v), jnp.floating)]
        return sum(jnp.sum(v) for v in floats) if floats else jnp.float32(0.0)

    def derivatives(original_fn, fixed_fn, args, shape):
        """Gradients of the outputs' sum with respect to x and y: the original differentiated
        eagerly (Python branches on concrete values), the rewrite under jit. Every applied
        rewrite, loops included, must give them: a loop with no static bound (whose
        lax.while_loop jax.grad refuses) is display-only, never applied."""
        x, y, m = args
        if not jnp.issubdtype(x.dtype, jnp.floating):
            return None
        want = jax.grad(lambda a, b: total(original_fn(a, b, int(m))), argnums=(0, 1))(x, y)
        got = jax.grad(lambda a, b: total(jax.jit(fixed_fn)(a, b, m)), argnums=(0, 1))(x, y)
        if all(equal(a, b) for a, b in zip(want, got)):
            return None
        return f"gradient {[np.asarray(g).tolist() for g in got]} != eager {[np.asarray(w).tolist() for w in want]}"

    fixed, display, problems, shapes = _check_family(tmp_path, False, run_fixed, run_original, inputs, equal, derivatives)
    assert not problems, "\n".join(problems)
    assert fixed == FIXED_SHAPES, f"shapes without a proven fix: {sorted(FIXED_SHAPES - fixed)}"
    assert DISPLAY_ONLY <= display, f"shapes that should be display only: {sorted(DISPLAY_ONLY - display)}"
    assert len(shapes) >= 100


TORCH_SHAPES = FIXED_SHAPES - LOOP_SHAPES - set(JAX_SHAPES)


@pytest.mark.oracle
def test_generated_torch_rewrites_remove_the_graph_break_and_match_eager(tmp_path):
    torch = require_module("torch")
    import torch._dynamo as dynamo

    def inputs(rng, regime):
        g = torch.Generator().manual_seed(rng.randrange(2**31))
        if regime == "int":
            return None  # torch.where keeps integer tensors integer as the branches do; the float cases cover it
        if regime == "boundary":
            return (torch.tensor([0.0, -1.0, 2.0, -0.0, 1e-30, -3.0]), torch.tensor([0.0, 1.0, -1.0, 0.5, -2.0, 1e30]))
        return torch.randn(6, generator=g), torch.randn(6, generator=g)

    explained_once: set[int] = set()

    def run_fixed(fn, args):
        if id(fn) in explained_once:  # one explain per function; the other seeds compare values
            return fn(*args)
        explained_once.add(id(fn))
        dynamo.reset()
        explained = dynamo.explain(fn)(*args)
        if explained.graph_break_count:
            raise RuntimeError(f"{explained.graph_break_count} graph break(s): {explained.break_reasons[0].reason[:60]}")
        return fn(*args)

    def run_original(fn, args):
        return fn(*args)

    def equal(a, b):
        if not torch.is_tensor(a):
            a = torch.as_tensor(a)
        if not torch.is_tensor(b):
            b = torch.as_tensor(b)
        return a.shape == b.shape and torch.allclose(a.float(), b.float(), rtol=1e-5, atol=1e-5, equal_nan=True)

    def derivatives(original_fn, fixed_fn, args, shape):
        """torch.autograd gradients of the outputs' sum with respect to x and y, both eagerly."""
        def grads(fn):
            a, b = (v.clone().requires_grad_(True) for v in args)
            out = [v for v in _leaves(fn(a, b)) if torch.is_tensor(v) and v.is_floating_point()]
            if not out:
                return None
            ga, gb = torch.autograd.grad(sum(v.sum() for v in out), (a, b), allow_unused=True)
            return [torch.zeros_like(a) if ga is None else ga, torch.zeros_like(b) if gb is None else gb]
        want, got = grads(original_fn), grads(fixed_fn)
        if want is None or all(equal(w, g) for w, g in zip(want, got)):
            return None
        return f"gradient {[g.tolist() for g in got]} != eager {[w.tolist() for w in want]}"

    fixed, display, problems, shapes = _check_family(tmp_path, True, run_fixed, run_original, inputs, equal, derivatives)
    assert not problems, "\n".join(problems)
    assert fixed == TORCH_SHAPES, f"shapes without a proven fix: {sorted(TORCH_SHAPES - fixed)}"
    # the original functions do break the graph (the rewrite is what removes the break)
    source, _ = _module(True)
    original = _undecorated(source, "family.py")
    dynamo.reset()
    assert dynamo.explain(original["assign_if_else__and"])(*inputs(random.Random(0), "float")).graph_break_count >= 1


UNBOUNDED_LOOPS = '''import jax
import jax.numpy as jnp


@jax.jit
def grow(x):
    v = x
    while v.sum() < 40.0:
        v = v * 1.5
    return v


@jax.jit
def power(x, n):
    y = x
    for _ in range(n):
        y = y * x
    return y


@jax.jit
def counted_from_argument(x, i):
    v = x
    while v.sum() < 40.0 and i < 16:
        v = v * 1.5
        i = i + 1
    return v
'''

BOUNDED_LOOPS = '''import jax
import jax.numpy as jnp


@jax.jit
def grow(x):
    v = x
    i = 0
    while v.sum() < 40.0 and i < 16:
        v = v * 1.5
        i = i + 1
    return v, i


@jax.jit
def power(x, n):
    y = x
    for _ in range(min(n, 8)):
        y = y * x
    return y
'''


def test_unbounded_loops_are_shown_not_written_by_the_cli(tmp_path):
    """`--fix --unsafe-fixes` leaves a while on a traced test and a range on a traced bound
    with no static cap as they are (a lax.while_loop would lose jax.grad), and the finding's
    text shows the rewrite as display only with that reason. A counter that starts at a
    parameter bounds nothing the code states, so `and i < 16` there is no cap either."""
    path = tmp_path / "loops.py"
    path.write_text(UNBOUNDED_LOOPS, encoding="utf-8")
    fixed = run_portlint("scan", "loops.py", "--no-cache", "--select", "PTL801,PTL802", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert fixed.returncode == 1, fixed.stderr
    assert path.read_text(encoding="utf-8") == UNBOUNDED_LOOPS
    shown = run_portlint("scan", "loops.py", "--no-cache", "--select", "PTL801,PTL802", cwd=tmp_path, env={"NO_COLOR": "1"})
    lines = [ln.strip() for ln in shown.stdout.splitlines() if ln.strip().startswith("fix (")]
    assert len(lines) == 3, shown.stdout
    for line in lines:
        assert line.startswith("fix (display-only): loop with jax.lax."), line
        assert "reverse-mode differentiation through lax.while_loop is not supported" in line, line
        assert "bound the loop by a static maximum and use lax.fori_loop with a mask" in line, line


@pytest.mark.oracle
def test_bounded_loops_are_written_by_the_cli_and_keep_gradients(tmp_path):
    """The same loops with a bound the code states (`i` from 0 under `and i < 16`,
    `range(min(n, 8))`) are rewritten by `--fix --unsafe-fixes` into masked fori_loops over
    the static bound, which run under jit with the original's values and jax.grad."""
    jax = require_module("jax")
    import numpy as np

    jnp = jax.numpy
    path = tmp_path / "loops.py"
    path.write_text(BOUNDED_LOOPS, encoding="utf-8")
    fixed = run_portlint("scan", "loops.py", "--no-cache", "--select", "PTL801,PTL802", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = path.read_text(encoding="utf-8")
    assert "while_loop" not in text and text.count("jax.lax.fori_loop(0, 16,") == 1 and text.count("jax.lax.fori_loop(0, 8,") == 1, text
    original, rewritten = _undecorated(BOUNDED_LOOPS, "loops.py"), _undecorated(text, "fixed_loops.py")
    x = jnp.asarray([0.5, 1.0, 2.0], jnp.float32)
    for scale in (0.1, 0.5, 2.0, 50.0):
        want = original["grow"](x * scale)
        got = jax.jit(rewritten["grow"])(x * scale)
        assert all(np.allclose(a, b) for a, b in zip(_leaves(want), _leaves(got))), (want, got)
        g_want = jax.grad(lambda a: original["grow"](a)[0].sum())(x * scale)
        g_got = jax.grad(lambda a: jax.jit(rewritten["grow"])(a)[0].sum())(x * scale)
        assert np.allclose(g_want, g_got), (g_want, g_got)
    for n in range(11):
        want = original["power"](x, n)
        got = jax.jit(rewritten["power"])(x, jnp.int32(n))
        assert np.allclose(want, got), (n, want, got)
        g_want = jax.grad(lambda a: original["power"](a, n).sum())(x)
        g_got = jax.grad(lambda a: jax.jit(rewritten["power"])(a, jnp.int32(n)).sum())(x)
        assert np.allclose(g_want, g_got), (n, g_want, g_got)
