"""Every Python detector on generated, syntactically valid Python (hypothesmith).

Real code is more varied than any fixture: a detector that assumes a field is a list of
statements, that an assignment has one target, or that a call has a name, raises on some
file and turns into PTL003 findings. Here hypothesmith writes arbitrary modules from the
Python grammar; each runs through every Python family as it is, and again wrapped in the
places the XLA-family analysis reads most closely (a jitted function, a Flax module method,
a torch_xla step loop, a Triton kernel), with every framework tag set so that no family
skips the file. Seeded and derandomized: the same examples on every run."""

from __future__ import annotations

import ast
import textwrap

import pytest

hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")

from hypothesis import HealthCheck, given, seed, settings, strategies as st  # noqa: E402

from portlint.core.config import Settings  # noqa: E402
from portlint.index.context import FileContext  # noqa: E402
from portlint.pipeline.engine import _run_detectors  # noqa: E402
from portlint.core.model import FileResult  # noqa: E402
from portlint.findings.selection import plan as _plan  # noqa: E402

# generated code is full of `"str"(...)`-style calls that compile with a SyntaxWarning
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

SETTINGS = Settings()
ALL_TAGS = frozenset({"jax", "torch", "torch_xla", "gaudi", "triton", "nki"})

# Wrappers put the generated statements where a region starts. `{body}` is indented to fit.
WRAPPERS = {
    "module": "{body}",
    "jitted": "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef step(x, y):\n{body}\n    return x\n",
    "flax": "import flax.linen as nn\n\nclass Block(nn.Module):\n    @nn.compact\n    def __call__(self, x):\n{body}\n        return x\n",
    "torch_step": (
        "import torch\nimport torch_xla.core.xla_model as xm\n\ndef train(model, loader, optimizer):\n"
        "    for batch, labels in loader:\n        loss = model(batch)\n{body}\n        loss.backward()\n        optimizer.step()\n"
    ),
    "triton": "import triton\nimport triton.language as tl\n\n@triton.jit\ndef kernel(x_ptr, n, BLOCK: tl.constexpr):\n{body}\n",
}
_DEPTH = {"module": 0, "jitted": 1, "flax": 2, "torch_step": 2, "triton": 1}


def wrap(kind: str, source: str) -> str | None:
    """The generated module inside a wrapper, or None where that is not valid Python
    (`from __future__` inside a function, `nonlocal` at the top of one ...)."""
    body = textwrap.indent(source if source.strip() else "pass\n", "    " * _DEPTH[kind])
    text = WRAPPERS[kind].format(body=body.rstrip("\n"))
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return text


def internal_errors(text: str) -> list[str]:
    """PTL003 findings (a detector raised) from every Python detector on `text`."""
    plan = _plan(SETTINGS)
    data = text.encode("utf-8", "surrogatepass")
    ctx = FileContext("generated.py", data, "python", ALL_TAGS, SETTINGS)
    result = FileResult()
    _run_detectors(ctx, plan.detectors("python"), plan, result)
    return [f.message for f in ctx.findings if f.rule_id == "PTL003"]


def test_the_python_detectors_are_all_run():
    """The check below means something only if the families are really called."""
    plan = _plan(SETTINGS)
    families = {plan.rules[d.rule_id].family for d in plan.detectors("python")}
    assert {"xla_tracing", "device_strings", "triton", "gpu_gates", "torch_distributed"} <= families
    bad = "import torch\nx = torch.ones(2).cuda()\nif torch.cuda.is_available(): pass\n"
    ctx = FileContext("t.py", bad.encode(), "python", ALL_TAGS, SETTINGS)
    _run_detectors(ctx, plan.detectors("python"), plan, FileResult())
    assert any(f.rule_id.startswith("PTL9") for f in ctx.findings)


@seed(20261201)
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar(), kind=st.sampled_from(sorted(WRAPPERS)))
def test_no_detector_raises_on_generated_python(source, kind):
    text = wrap(kind, source)
    if text is None:
        text = source
    assert internal_errors(text) == []


@seed(20261202)
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar())
def test_newer_syntax_reading_changes_nothing_in_current_syntax(source):
    """The newer-syntax path blanks only what the running `ast` cannot read: on a module it
    can read, the result is the very same tree (or None where tree-sitter disagrees)."""
    pytest.importorskip("tree_sitter_python")
    from portlint.frontends.python.newer_syntax import downgrade

    data = source.encode("utf-8", "surrogatepass")
    try:
        expected = ast.parse(data)
    except (SyntaxError, ValueError):
        return
    result = downgrade(data)
    if result is not None:
        assert result.blanked == []
        assert ast.dump(result.module, include_attributes=True) == ast.dump(expected, include_attributes=True)
