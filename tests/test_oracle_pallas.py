"""`portlint suggest FILE::kernel --to pallas` gives kernels that run under
`pallas_call(..., interpret=True)` on CPU and match the Triton kernel run by Triton's own
interpreter (TRITON_INTERPRET=1, in a subprocess: tests/run_triton_interpreted.py) on seeded
random inputs whose widths are not powers of two (the Triton masks matter).

Kernel classes: row-wise reductions over a 2-D input (softmax, RMSNorm, layernorm,
cross-entropy), broadcasting a vector over rows (bias + GELU), elementwise over a flat buffer
with a masked last block (axpy), a blocked matmul (tl.dot over a K loop, ReLU epilogue). A kernel outside these shapes (a loop over column blocks)
gets a skeleton whose header lists what is left."""

from __future__ import annotations

import subprocess
import zlib
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_module, run_portlint

KERNELS = Path(__file__).resolve().parent / "pallas_row_kernels.py"
RUNNER = Path(__file__).resolve().parent / "run_triton_interpreted.py"


def _suggest(kernel: str) -> str:
    proc = run_portlint("suggest", f"{KERNELS}::{kernel}", "--to", "pallas", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _pallas(kernel: str):
    text = _suggest(kernel)
    namespace: dict = {}
    exec(compile(text, f"<pallas from {kernel}>", "exec"), namespace)  # portlint's own output
    return text, namespace[f"{kernel}_pallas"]


def _triton(kernel: str, tmp_path, **arrays):
    import numpy as np

    require_module("triton")
    inputs, output = tmp_path / "in.npz", tmp_path / "out.npy"
    np.savez(inputs, **arrays)
    proc = subprocess.run([sys.executable, str(RUNNER), kernel, str(inputs), str(output)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return np.load(output)


ROW_CASES = {
    "softmax_kernel": (lambda rng, x: {}, {}),
    "rmsnorm_kernel": (lambda rng, x: {"w": rng.standard_normal(x.shape[1]).astype("float32")}, {"eps": 1e-6}),
    "layernorm_kernel": (lambda rng, x: {"w": rng.standard_normal(x.shape[1]).astype("float32"),
                                         "b": rng.standard_normal(x.shape[1]).astype("float32")}, {"eps": 1e-5}),
    "cross_entropy_kernel": (lambda rng, x: {"target": rng.integers(0, x.shape[1], x.shape[0]).astype("int32")}, {}),
    "bias_gelu_kernel": (lambda rng, x: {"bias": rng.standard_normal(x.shape[1]).astype("float32")}, {}),
}


@pytest.mark.oracle
@pytest.mark.parametrize("shape", [(6, 37), (3, 130)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("kernel", sorted(ROW_CASES))
def test_row_kernel_pallas_matches_triton_interpreter(kernel, shape, tmp_path):
    jnp = require_module("jax.numpy")
    import numpy as np

    rng = np.random.default_rng(zlib.crc32(f"{kernel}/{shape}".encode()))
    x = rng.standard_normal(shape).astype(np.float32) * 3.0
    extra, scalars = ROW_CASES[kernel]
    arrays = {"x": x, **extra(rng, x)}
    want = _triton(kernel, tmp_path, **arrays)
    text, fn = _pallas(kernel)
    assert "grid (rows,)" in text and "TODO" not in text
    got = np.asarray(fn(*(jnp.asarray(v) for v in arrays.values()), **scalars, interpret=True))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


@pytest.mark.oracle
def test_elementwise_pallas_matches_triton_interpreter(tmp_path):
    jnp = require_module("jax.numpy")
    import numpy as np

    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
    want = _triton("axpy_kernel", tmp_path, x=x, y=y, alpha=np.float32(0.75))
    text, fn = _pallas("axpy_kernel")
    got = np.asarray(fn(jnp.asarray(x), jnp.asarray(y), 0.75, BLOCK=128, interpret=True))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize("mnk", [(40, 24, 50), (16, 33, 16)], ids=lambda s: "x".join(map(str, s)))
def test_blocked_matmul_pallas_matches_triton_interpreter(mnk, tmp_path):
    jnp = require_module("jax.numpy")
    import numpy as np

    m, n, k = mnk
    rng = np.random.default_rng(zlib.crc32(f"matmul/{mnk}".encode()))
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    want = _triton("matmul_kernel", tmp_path, a=a, b=b)
    text, fn = _pallas("matmul_kernel")
    assert "fori_loop" in text and "TODO" not in text
    got = np.asarray(fn(jnp.asarray(a), jnp.asarray(b), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, interpret=True))
    assert got.shape == want.shape == (m, n)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_untranslated_kernel_gets_a_skeleton_that_says_what_is_left():
    text = _suggest("row_cumsum_kernel")
    left = text.split("# Left to do:")[1].split("import ")[0]
    assert "loop" in left and "TODO" in text
