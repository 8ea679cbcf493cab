"""The XLA-family analysis itself: which regions are traced, which values are static, that
rewrites are valid Python, and that files without JAX/xla/hpu cost nothing."""

from __future__ import annotations

import ast
import textwrap

from portlint.core.config import Settings
from portlint.index.context import FileContext
from portlint.discovery.languages import classify


def ctx_for(source: str, name: str = "snippet.py") -> FileContext:
    data = textwrap.dedent(source).encode()
    language, tags = classify(name, data)
    return FileContext(name, data, language, tags, Settings())


def regions(source: str) -> dict[str, str]:
    from portlint.analyses.python.traced import traced_map

    tm = traced_map(ctx_for(source))
    return {getattr(node, "name", type(node).__name__): r.why for node, r in tm.regions.items()}


def test_jax_region_sources():
    found = regions(
        """
        from functools import partial
        import jax
        from jax import lax

        @partial(jax.jit, static_argnames=("n",))
        def a(x, n): return x

        def b(x): return x
        b_jit = jax.jit(jax.grad(b))

        def body(i, c): return c
        def c(x): return lax.fori_loop(0, 3, body, x)

        def helper(y): return y
        @jax.jit
        def d(x): return helper(x + 1)

        def not_traced(x): return helper(1)
        eager = jax.grad(not_traced)
        """
    )
    assert found["a"].startswith("decorated with")
    assert found["b"].startswith("passed to jax.jit")
    assert found["body"].startswith("body of lax.fori_loop")
    assert found["helper"].startswith("called from a traced region")
    assert "not_traced" not in found and "c" not in found


def test_static_values_in_a_jitted_function():
    from portlint.analyses.python.traced import traced_map

    ctx = ctx_for(
        """
        from functools import partial
        import jax, jax.numpy as jnp

        @partial(jax.jit, static_argnums=(1,))
        def f(x, k, mask=None):
            n = x.shape[0]
            m = len(x)
            y = jnp.sum(x) * k
            z = x if mask is None else mask
            return n, m, y, z
        """
    )
    tm = traced_map(ctx)
    (region,) = [r for node, r in tm.regions.items() if getattr(node, "name", "") == "f"]
    assert {"x", "y", "mask", "z"} <= region.traced
    assert not {"k", "n", "m"} & region.traced


def test_torch_rules_only_where_the_file_targets_xla_or_hpu():
    from portlint.rules.xla_tracing import hazards

    source = """
        import torch
        def train_step(model, x):
            loss = model(x).sum()
            if loss > 0:
                print(loss.item())
            return loss
        """
    cuda = ctx_for(source)
    assert "torch_xla" not in cuda.tags and not hazards(cuda).by_rule
    xla = ctx_for(source.replace("import torch", "import torch\n        import torch_xla.core.xla_model as xm"))
    found = hazards(xla).by_rule
    assert set(found) == {"PTL801", "PTL803"}, found


def test_files_without_relevant_tags_skip_the_analysis(monkeypatch):
    from portlint.rules import xla_tracing
    from portlint.core.registry import load_family

    called = []
    monkeypatch.setattr(xla_tracing, "traced_map", lambda ctx: called.append(ctx) or None)
    ctx = ctx_for("import torch\nx = torch.ones(3)\nif x.sum() > 0:\n    pass\n")
    assert xla_tracing.hazards(ctx).by_rule == {} and not called
    for det in load_family("xla_tracing"):
        assert det.tokens and b"jax" in det.tokens and b"xla" in det.tokens, det.rule_id


def test_rewrites_are_valid_python():
    from portlint.rules.xla_tracing import hazards

    ctx = ctx_for(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x, n):
            total = x
            count = 0
            while total.sum() < 10:
                total = total * 2
                count = count + 1
            for _ in range(n):
                total = total + 1
            if total.mean() > 3:
                a = total
                b = count
            else:
                a = -total
                b = 0
            return a, b
        """
    )
    fixes = [h.fix for rule in ("PTL801", "PTL802") for h in hazards(ctx).by_rule.get(rule, []) if h.fix]
    assert len(fixes) == 3
    # the unbounded loops' rewrites are shown only (no reverse mode through while_loop)
    assert sorted(f.applicability for f in fixes) == ["display-only", "display-only", "unsafe"]
    for fix in fixes:
        (edit,) = fix.edits
        ast.parse(textwrap.dedent(" " * (edit.span.start_col - 1) + edit.text))
