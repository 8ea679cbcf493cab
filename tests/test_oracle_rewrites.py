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
import itertools
import random
import textwrap

from conftest import require_module, scan_paths

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
C2 = "y.sum() < 0.5"
LOOP_SHAPES = {"while_growing", "while_carried", "while_break", "while_if_body", "fori_carried", "fori_nested_if"}
DISPLAY_ONLY = {"while_growing", "one_branch_unbound", "branch_value_not_array", "host_call_in_branch", "tuple_vs_name"}
FIXED_SHAPES = set(SHAPES) - DISPLAY_ONLY
LOOP_ONLY_CONDITION = "cmp"  # loops carry their own conditions


def _cases(torch: bool):
    for (shape, body), (cname, cond) in itertools.product(SHAPES.items(), CONDITIONS.items()):
        if shape in LOOP_SHAPES and (torch or cname != LOOP_ONLY_CONDITION):
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
        body = textwrap.dedent(SHAPES[shape]).strip("\n").replace("C2", C2).replace("C", cond)
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


def _check_family(tmp_path, torch: bool, run_fixed, run_original, inputs, equal):
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
        offered = [f for f in found if f.fix is not None]
        for f in found:
            if f.fix is None and "No automatic rewrite:" not in (f.suggestion or "") and not offered:
                problems.append(f"{name}: no fix and no display-only reason at line {f.span.start_line}")
        if not offered:
            display_shapes.add(shape)
            continue
        ok = True
        for seed in range(4):
            args = inputs(random.Random(f"{name}/{seed}"))
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
                problems.append(f"{name}: rewritten result differs from the original run eagerly (seed {seed})")
                break
        if ok:
            fixed_shapes.add(shape)
        else:
            display_shapes.add(shape)
    # a shape counts as fixed only when every generated case of it was rewritten and matched
    return fixed_shapes - display_shapes, display_shapes, problems, shapes


def test_generated_jax_rewrites_trace_and_match_eager(tmp_path):
    jax = require_module("jax")
    import numpy as np

    jnp = jax.numpy

    def inputs(rng):
        x = jnp.asarray(np.random.default_rng(rng.randrange(2**32)).normal(size=6), jnp.float32)
        y = jnp.asarray(np.random.default_rng(rng.randrange(2**32)).normal(size=6), jnp.float32)
        return x, y, jnp.int32(rng.randrange(0, 5))

    def run_fixed(fn, args):
        return jax.block_until_ready(jax.jit(fn)(*args))

    def run_original(fn, args):
        x, y, m = args
        return fn(x, y, int(m))  # eager: a Python trip count, Python branches on concrete values

    def equal(a, b):
        return np.shape(a) == np.shape(b) and np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)

    fixed, display, problems, shapes = _check_family(tmp_path, False, run_fixed, run_original, inputs, equal)
    assert not problems, "\n".join(problems)
    assert fixed == FIXED_SHAPES, f"shapes without a proven fix: {sorted(FIXED_SHAPES - fixed)}"
    assert DISPLAY_ONLY <= display, f"shapes that should be display only: {sorted(DISPLAY_ONLY - display)}"
    assert len(shapes) >= 100


TORCH_SHAPES = FIXED_SHAPES - LOOP_SHAPES


def test_generated_torch_rewrites_remove_the_graph_break_and_match_eager(tmp_path):
    torch = require_module("torch")
    import torch._dynamo as dynamo

    def inputs(rng):
        g = torch.Generator().manual_seed(rng.randrange(2**31))
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
        return a.shape == b.shape and torch.allclose(a.float(), b.float(), rtol=1e-5, atol=1e-5)

    fixed, display, problems, shapes = _check_family(tmp_path, True, run_fixed, run_original, inputs, equal)
    assert not problems, "\n".join(problems)
    assert fixed == TORCH_SHAPES, f"shapes without a proven fix: {sorted(TORCH_SHAPES - fixed)}"
    # the original functions do break the graph (the rewrite is what removes the break)
    source, _ = _module(True)
    original = _undecorated(source, "family.py")
    dynamo.reset()
    assert dynamo.explain(original["assign_if_else__and"])(*inputs(random.Random(0))).graph_break_count >= 1
