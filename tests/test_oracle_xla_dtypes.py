"""PTL809 with jax 0.10 (CPU) as the oracle: what a float64 request turns into.

Run in a fresh interpreter so the process-wide x64 flag of other tests cannot leak in. What is
shown: without x64, `jnp.float64` arrays are silently created as float32 (JAX warns once); with
x64 enabled they are float64. The cost of float64 on a TPU (emulation) is not measured here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import require_module

pytestmark = pytest.mark.oracle

PROBE = """
import json, warnings
import jax, jax.numpy as jnp
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x = jnp.zeros((4,), dtype=jnp.float64)
    y = jnp.ones(3).astype("float64")
print(json.dumps({"x64": bool(jax.config.jax_enable_x64), "zeros": str(x.dtype), "astype": str(y.dtype),
                  "warnings": [str(w.message) for w in caught]}))
"""


def _probe(x64: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env["JAX_PLATFORMS"] = "cpu"
    if x64:
        env["JAX_ENABLE_X64"] = "1"
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_float64_silently_becomes_float32_without_x64():
    require_module("jax")
    off = _probe(x64=False)
    assert off["x64"] is False
    assert off["zeros"] == "float32" and off["astype"] == "float32"
    assert any("float64" in w and "float32" in w for w in off["warnings"]), off["warnings"]
    on = _probe(x64=True)
    assert on["zeros"] == "float64" and on["astype"] == "float64"
