"""JAX (CPU) as the oracle for the XLA-family rules.

Every JAX fixture under fixtures/xla_tracing/ that defines `ORACLE = {name: (args, error)}`
(or `(args, error, entry)` when the jitted entry point is another name, e.g. `f_jit =
jax.jit(f)`) is imported by path and each listed function is called:

- a function portlint flags with PTL801-PTL804 must raise the error its ORACLE entry names,
  and that error must be one the rule's docs promise;
- a function listed with `None` must run cleanly and carry no PTL801-PTL804 finding;
- a function with a PTL808 finding must print a tracer (the print ran at trace time).

The rewrite test applies every PTL801/PTL802 fix of a fixture, imports the rewritten module
and checks each rewritten function runs under jax.jit and returns what the original
returns when run eagerly (jax.disable_jit)."""

from __future__ import annotations

import ast
import importlib.util
import itertools
from pathlib import Path

import pytest
from conftest import FIXTURES, require_module, scan_paths
from fixture_expectations import fixture_files

pytestmark = pytest.mark.oracle

ERRORS = {
    "PTL801": {"TracerBoolConversionError", "ConcretizationTypeError"},
    "PTL802": {"TracerIntegerConversionError", "ConcretizationTypeError"},
    "PTL803": {"ConcretizationTypeError", "TracerArrayConversionError", "TracerIntegerConversionError"},
    "PTL804": {"NonConcreteBooleanIndexError", "ConcretizationTypeError", "TypeError", "IndexError"},
}
ORACLE_FILES = [p for p in fixture_files(FIXTURES / "xla_tracing") if p.suffix == ".py" and "\nORACLE = {" in p.read_text(encoding="utf-8")]
REWRITE_FILES = [p for p in ORACLE_FILES if p.with_name(p.stem + ".fixed.py").exists()]
_counter = itertools.count()


def load(path: Path, text: str | None = None, tmp: Path | None = None):
    """Import a fixture (or rewritten text of it) as a fresh module."""
    if text is not None:
        assert tmp is not None
        path = tmp / f"rewritten_{path.stem}.py"
        path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"_portlint_fixture_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def top_level_function(tree: ast.Module, line: int) -> str | None:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            return node.name
    return None


def findings_by_function(path: Path) -> dict[str, list]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, list] = {}
    for f in scan_paths([path]).findings:
        name = top_level_function(tree, f.span.start_line)
        if name is not None and not f.suppressed:
            out.setdefault(name, []).append(f)
    return out


def error_chain(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def leaves(value):
    import jax
    import numpy as np

    return [np.asarray(v) for v in jax.tree_util.tree_leaves(value)]


@pytest.mark.parametrize("path", ORACLE_FILES, ids=lambda p: p.name)
def test_flagged_functions_raise_and_negatives_run(path, capsys):
    jax = require_module("jax")
    module = load(path)
    flagged = findings_by_function(path)
    assert module.ORACLE, "empty ORACLE table"
    for name, findings in flagged.items():
        rules = {f.rule_id for f in findings if f.rule_id in ERRORS}
        if rules:
            assert name in module.ORACLE, f"{name} is flagged ({sorted(rules)}) but has no ORACLE case"
    for name, case in module.ORACLE.items():
        args, expected = case[0], case[1]
        rules = {f.rule_id for f in flagged.get(name, []) if f.rule_id in ERRORS}
        fn = getattr(module, case[2] if len(case) > 2 else name)  # optional: the jitted entry point
        if expected is None:
            assert not rules, f"{name} runs cleanly under jit but portlint reports {sorted(rules)}"
            capsys.readouterr()
            jax.block_until_ready(fn(*args))
            if any(f.rule_id == "PTL808" for f in flagged.get(name, [])):
                assert "Tracer" in capsys.readouterr().out, f"{name}: PTL808 but no tracer was printed"
            continue
        assert rules, f"{name} raises {expected} under jit but portlint reports nothing"
        allowed = set().union(*(ERRORS[r] for r in rules))
        assert expected in allowed, f"{name}: {expected} is not an error {sorted(rules)} documents"
        try:
            jax.block_until_ready(fn(*args))
        except Exception as exc:  # noqa: BLE001 - the oracle's verdict is the exception class
            assert expected in error_chain(exc), f"{name}: expected {expected}, got {type(exc).__name__}: {exc}"
        else:
            pytest.fail(f"{name}: portlint reports {sorted(rules)} but it runs under jax.jit without {expected}")


@pytest.mark.parametrize("path", REWRITE_FILES, ids=lambda p: p.name)
def test_control_flow_rewrites_run_under_jit_and_match_eager(path, tmp_path):
    jax = require_module("jax")
    import numpy as np

    from portlint.output.fixes import apply_edits

    # the fixes --fix --unsafe-fixes writes (a display-only loop rewrite is shown, not applied)
    findings = [f for f in scan_paths([path]).findings if f.rule_id in ("PTL801", "PTL802") and f.fix is not None
                and f.fix.applicability != "display-only"]
    assert findings, f"{path.name} has a .fixed.py but no control-flow rewrites"
    original = load(path)
    text = path.read_text(encoding="utf-8")
    rewritten = load(path, apply_edits(text, [e for f in findings for e in f.fix.edits]), tmp_path)
    tree = ast.parse(text)
    names = {top_level_function(tree, f.span.start_line) for f in findings}
    checked = 0
    for name in sorted(n for n in names if n):
        args = original.ORACLE[name][0]
        with jax.disable_jit():
            want = getattr(original, name)(*args)
        got = jax.block_until_ready(getattr(rewritten, name)(*args))
        w, g = leaves(want), leaves(got)
        assert len(w) == len(g), f"{name}: {want!r} != {got!r}"
        for a, b in zip(w, g):
            assert a.shape == b.shape and np.allclose(a, b), f"{name}: eager {want!r} != rewritten {got!r}"
        checked += 1
    assert checked == len({n for n in names if n})


def test_fixture_rewrites_cover_every_construct():
    """if/else assignment, return, single-branch update, ternary, a bounded while and a capped
    for: each has an applied fix; an unbounded while and a traced range show theirs only."""
    from portlint.rewrites.python import NO_REVERSE_MODE

    path = FIXTURES / "xla_tracing" / "jax_control_flow.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [f for f in scan_paths([path]).findings if f.fix]
    fixes = {f.fix.description.split(" ")[0] + " " + f.fix.description.split(" ")[-1] for f in found if f.fix.applicability == "unsafe"}
    assert {"select jnp.where", "return device", "loop (reverse-differentiable)"} <= fixes, fixes
    by_fn = {top_level_function(tree, f.span.start_line): f.fix for f in found if f.rule_id in ("PTL801", "PTL802")}
    for name in ("grow_at_most_sixteen_times", "repeated_scale_capped"):
        assert by_fn[name].applicability == "unsafe" and "jax.lax.fori_loop" in by_fn[name].description, (name, by_fn[name])
    assert by_fn["count_doublings"].applicability == "unsafe" and "is an integer" in by_fn["count_doublings"].description
    for name in ("grow_until_large", "grow_from_given_count", "grow_counting_down", "repeated_scale", "repeated_scale_int",
                 "repeated_scale_capped_by_argument", "count_doublings_from"):
        assert by_fn[name].applicability == "display-only" and NO_REVERSE_MODE in by_fn[name].description, (name, by_fn[name])


def test_recompile_mechanics_behind_ptl805_and_ptl807():
    """What PTL805/PTL807 rely on: new shapes, new function objects and new static values retrace."""
    jax = require_module("jax")
    import functools

    import jax.numpy as jnp

    traces = []

    def f(x, k=1):
        traces.append(x.shape)
        return x * k

    jf = jax.jit(f)
    for n in (5, 6, 7):  # PTL805: unbucketed lengths
        jf(jnp.ones(n))
    assert len(traces) == 3
    traces.clear()
    for _ in range(3):  # same function object: one trace (PTL807 stays quiet)
        jax.jit(f)(jnp.ones(4))
    assert len(traces) == 1
    traces.clear()
    for _ in range(3):  # a new partial per iteration: a trace per iteration (PTL807)
        jax.jit(functools.partial(f, k=2))(jnp.ones(4))
    assert len(traces) == 3
    traces.clear()
    js = jax.jit(f, static_argnums=1)
    for step in range(3):  # a loop counter as a static argument (PTL807)
        js(jnp.ones(4), step)
    assert len(traces) == 3
