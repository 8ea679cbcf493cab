"""torch 2.13 (CPU) as the oracle for the torch side of the XLA-family rules.

The torch fixtures that define `ORACLE_TORCH = {name: (args, verdict[, factory])}` are
imported by path (they need only torch) and each function (or the module a factory builds)
runs under `torch._dynamo.explain`:

- "break": portlint flags the function with PTL801/803/804/808, and dynamo reports a graph
  break at every flagged line;
- "invisible": portlint flags it, and this torch version's dynamo does *not* break at the
  line (`.cpu()`, `nonzero`): the rule docs say the oracle cannot see it. If a torch upgrade
  starts breaking there, this test fails and the docs must be updated;
- None: no PTL8xx finding in the function and no graph break at all."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from conftest import FIXTURES, require_module, scan_paths
from fixture_expectations import fixture_files

pytestmark = pytest.mark.oracle

STEP_RULES = {"PTL801", "PTL803", "PTL804", "PTL808"}
TORCH_FILES = [p for p in fixture_files(FIXTURES / "xla_tracing") if p.suffix == ".py" and "\nORACLE_TORCH = {" in p.read_text(encoding="utf-8")]


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_portlint_torch_fixture_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flagged_lines(path: Path) -> dict[str, set[int]]:
    """Top-level function or class name -> lines with a step-rule finding."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    spans = [(n.name, n.lineno, n.end_lineno) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    out: dict[str, set[int]] = {}
    for f in scan_paths([path]).findings:
        if f.rule_id not in STEP_RULES or f.suppressed:
            continue
        for name, start, end in spans:
            if start <= f.span.start_line <= end:
                out.setdefault(name, set()).add(f.span.start_line)
    return out


def break_lines(fn, args, path: Path) -> tuple[set[int], object]:
    torch = require_module("torch")
    import torch._dynamo as dynamo

    dynamo.reset()
    explanation = dynamo.explain(fn)(*args)
    lines = set()
    for reason in explanation.break_reasons:
        for frame in reason.user_stack:
            if Path(frame.filename).resolve() == path.resolve():
                lines.add(frame.lineno)
    del torch
    return lines, explanation


@pytest.mark.parametrize("path", TORCH_FILES, ids=lambda p: p.name)
def test_torch_fixture_graph_breaks_match_findings(path):
    require_module("torch")
    module = load(path)
    flagged = flagged_lines(path)
    cases = module.ORACLE_TORCH
    for name in flagged:
        assert name in cases, f"{name} is flagged but has no ORACLE_TORCH case"
    seen = {"break": 0, "invisible": 0, None: 0}
    for name, case in cases.items():
        args, verdict = case[0], case[1]
        fn = case[2]() if len(case) > 2 else getattr(module, name)
        lines, explanation = break_lines(fn, args, path)
        seen[verdict] += 1
        if verdict is None:
            assert name not in flagged, f"{name}: portlint flags lines {sorted(flagged[name])} but the case says clean"
            assert not explanation.break_reasons, f"{name}: dynamo breaks at {sorted(lines)}: {[r.reason for r in explanation.break_reasons]}"
            continue
        assert name in flagged, f"{name}: expected a finding ({verdict}) but portlint reports nothing"
        if verdict == "break":
            missing = flagged[name] - lines
            assert not missing, f"{name}: no dynamo graph break at flagged lines {sorted(missing)} (breaks at {sorted(lines)})"
        else:
            assert not (flagged[name] & lines), f"{name}: dynamo now breaks at {sorted(flagged[name] & lines)}; update the rule docs"
    assert seen["break"] and seen[None], "the oracle table needs positives and negatives"
