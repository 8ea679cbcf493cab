"""`portlint suggest FILE::kernel --to pallas` gives kernels that run under
`pallas_call(..., interpret=True)` on CPU and match the Triton kernel run by Triton's own
interpreter (TRITON_INTERPRET=1, in a subprocess: tests/run_triton_interpreted.py) on seeded
random inputs whose widths are not powers of two (the Triton masks matter).

Kernel classes: row-wise reductions over a 2-D input (softmax, RMSNorm, layernorm,
cross-entropy), broadcasting a vector over rows (bias + GELU), elementwise over a flat buffer
with a masked last block (axpy), a blocked matmul (tl.dot over a K loop, ReLU epilogue); and
the shapes of Triton's tutorials written as users write them (tests/pallas_tutorial_kernels.py):
vector add, fused softmax with a persistent grid-stride row loop, a grouped-pid matmul with
pointer increments, BM/BN/BK names and a constexpr leaky_relu epilogue, a matmul with other
names and a two-axis grid, layer norm forward with loops over column blocks. A kernel outside
these shapes (a `while` loop) gets a skeleton whose header says why and lists what is left."""

from __future__ import annotations

import subprocess
import zlib
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_module, run_portlint

KERNELS = Path(__file__).resolve().parent / "pallas_row_kernels.py"
TUTORIAL = Path(__file__).resolve().parent / "pallas_tutorial_kernels.py"
RUNNER = Path(__file__).resolve().parent / "run_triton_interpreted.py"


def _suggest(kernel: str, kernels: Path = KERNELS) -> str:
    proc = run_portlint("suggest", f"{kernels}::{kernel}", "--to", "pallas", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _pallas(kernel: str, kernels: Path = KERNELS):
    text = _suggest(kernel, kernels)
    namespace: dict = {}
    exec(compile(text, f"<pallas from {kernel}>", "exec"), namespace)  # portlint's own output
    return text, namespace[f"{kernel}_pallas"]


def _triton(kernel: str, tmp_path, module: str = "", outputs: int = 1, **arrays):
    """The kernel's output(s), run by Triton's interpreter; module: a kernels module with
    `launch` (pallas_tutorial_kernels), else pallas_row_kernels."""
    import numpy as np

    require_module("triton")
    require_module("torch")
    inputs, output = tmp_path / "in.npz", tmp_path / "out.npy"
    np.savez(inputs, **arrays)
    proc = subprocess.run([sys.executable, str(RUNNER), kernel, str(inputs), str(output), *([module] if module else [])],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    if outputs == 1:
        return np.load(output)
    return [np.load(output if i == 0 else tmp_path / f"out.{i}.npy") for i in range(outputs)]


ROW_CASES = {
    "softmax_kernel": (lambda rng, x: {}, {}),
    "rmsnorm_kernel": (lambda rng, x: {"w": rng.standard_normal(x.shape[1]).astype("float32")}, {"eps": 1e-6}),
    "layernorm_kernel": (lambda rng, x: {"w": rng.standard_normal(x.shape[1]).astype("float32"),
                                         "b": rng.standard_normal(x.shape[1]).astype("float32")}, {"eps": 1e-5}),
    "cross_entropy_kernel": (lambda rng, x: {"target": rng.integers(0, x.shape[1], x.shape[0]).astype("int32")}, {}),
    "bias_gelu_kernel": (lambda rng, x: {"bias": rng.standard_normal(x.shape[1]).astype("float32")}, {}),
    "row_cumsum_kernel": (lambda rng, x: {}, {}),
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
    assert "grid=(mp // BLOCK_M, np_ // BLOCK_N, kp // BLOCK_K)" in text and "TODO" not in text
    got = np.asarray(fn(jnp.asarray(a), jnp.asarray(b), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, interpret=True))
    assert got.shape == want.shape == (m, n)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# ---- the tutorials' kernel shapes ----------------------------------------------------------

def _runnable(text: str) -> None:
    """A generated kernel, not a skeleton: nothing left as a TODO, no reason it is not runnable."""
    assert text.startswith("# Pallas (TPU) kernel generated") or "Not runnable" not in text
    assert "TODO" not in text and "Not runnable" not in text


@pytest.mark.oracle
@pytest.mark.parametrize("n", [1000, 77])
def test_vector_add_runs_and_matches(n, tmp_path):
    jnp = require_module("jax.numpy")
    import numpy as np

    rng = np.random.default_rng(n)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    want = _triton("vector_add_kernel", tmp_path, "pallas_tutorial_kernels", x=x, y=y)
    text, fn = _pallas("vector_add_kernel", TUTORIAL)
    _runnable(text)
    got = np.asarray(fn(jnp.asarray(x), jnp.asarray(y), interpret=True))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize("shape", [(7, 45), (4, 129)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_grid_stride_softmax_is_one_row_per_program(shape, tmp_path):
    jnp = require_module("jax.numpy")
    import numpy as np

    rng = np.random.default_rng(zlib.crc32(f"softmax/{shape}".encode()))
    x = rng.standard_normal(shape).astype(np.float32) * 4.0
    want = _triton("persistent_softmax_kernel", tmp_path, "pallas_tutorial_kernels", x=x)  # fewer programs than rows
    text, fn = _pallas("persistent_softmax_kernel", TUTORIAL)
    _runnable(text)
    assert "grid-stride row loop" in text and "grid=(rows,)" in text
    got = np.asarray(fn(jnp.asarray(x), interpret=True))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


MATMULS = {
    # kernel: (Pallas keyword arguments matching the launch, output dtype, tolerance)
    "grouped_matmul_kernel": ({"BM": 16, "BN": 16, "BK": 16, "ACTIVATION": "leaky_relu"}, "float16", 2e-3),
    "tiled_matmul_kernel": ({"TILE_M": 16, "TILE_N": 32, "TILE_K": 16}, "float32", 1e-4),
}


@pytest.mark.oracle
@pytest.mark.parametrize("mnk", [(40, 24, 50), (33, 70, 17)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kernel", sorted(MATMULS))
def test_matmul_read_by_what_it_does_runs_and_matches(kernel, mnk, tmp_path):
    jnp = require_module("jax.numpy")
    import numpy as np

    m, n, k = mnk
    rng = np.random.default_rng(zlib.crc32(f"{kernel}/{mnk}".encode()))
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    want = _triton(kernel, tmp_path, "pallas_tutorial_kernels", a=a, b=b)
    text, fn = _pallas(kernel, TUTORIAL)
    _runnable(text)
    kwargs, dtype, tol = MATMULS[kernel]
    bm, bn, bk = list(kwargs)[:3]
    assert f"grid=(mp // {bm}, np_ // {bn}, kp // {bk})" in text  # M, N tiles and the K axis
    assert f"lambda i, j, k: (i, k)" in text and "scratch_shapes" in text
    got = np.asarray(fn(jnp.asarray(a), jnp.asarray(b), **kwargs, interpret=True))  # out_dtype from the epilogue's cast
    assert got.shape == want.shape == (m, n) and got.dtype == want.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=tol, atol=tol * 10)
    if kernel == "grouped_matmul_kernel":
        assert "tile order" in text and "GROUP_M only orders the tiles" in text
        assert (want < 0).any()  # the leaky_relu branch ran on both sides
        plain = np.asarray(fn(jnp.asarray(a), jnp.asarray(b), **{**kwargs, "ACTIVATION": ""}, out_dtype=jnp.float32, interpret=True))
        # the constexpr branch is static: without it, the plain product (rounded to float16 by the epilogue)
        np.testing.assert_allclose(plain, (a @ b).astype(np.float16).astype(np.float32), rtol=2e-3, atol=2e-2)
        assert not np.allclose(plain, got.astype(np.float32), atol=1e-2)


@pytest.mark.oracle
@pytest.mark.parametrize("shape", [(5, 37), (3, 130)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_layer_norm_forward_with_column_loops_runs_and_matches(shape, tmp_path):
    jnp = require_module("jax.numpy")
    import numpy as np

    rng = np.random.default_rng(zlib.crc32(f"layer_norm/{shape}".encode()))
    x = (rng.standard_normal(shape) * 2.0 + 1.5).astype(np.float32)
    w = rng.standard_normal(shape[1]).astype(np.float32)
    b = rng.standard_normal(shape[1]).astype(np.float32)
    want = _triton("layer_norm_fwd_kernel", tmp_path, "pallas_tutorial_kernels", outputs=3, x=x, w=w, b=b)  # BLOCK_SIZE=32 < N
    text, fn = _pallas("layer_norm_fwd_kernel", TUTORIAL)
    _runnable(text)
    assert "3 x the loop over column blocks" in text
    got = fn(jnp.asarray(x), jnp.asarray(w), jnp.asarray(b), eps=1e-5, interpret=True)
    for g, t in zip(got, want, strict=True):  # y, mean, rstd
        np.testing.assert_allclose(np.asarray(g), t, rtol=2e-5, atol=2e-5)


def test_untranslated_kernel_gets_a_skeleton_that_says_why():
    text = _suggest("row_running_max_kernel", TUTORIAL)
    why = text.split("# Not runnable as generated")[1].split("# Translated:")[0]
    assert "row-wise: a `while` statement" in why
    assert "blocked matmul: no 2-D accumulator" in why
    assert "elementwise: loops or branches" in why
    left = text.split("# Left to do:")[1].split("import ")[0]
    assert "while i < steps" in left and "TODO" in text


def test_matmul_whose_tile_order_skips_tiles_is_not_offered_as_runnable(tmp_path):
    """A 1-D pid mapped to (pid_m, pid_n) is checked by evaluating it: `pid_n = pid // tiles_m
    // 2` visits half the N tiles twice and the others never, so no runnable kernel."""
    src = TUTORIAL.read_text().replace("pid_n = (pid % per_group) // group_rows", "pid_n = (pid % per_group) // group_rows // 2")
    bad = tmp_path / "bad_order.py"
    bad.write_text(src)
    text = _suggest("grouped_matmul_kernel", bad)
    assert "# Not runnable as generated" in text
    assert "does not visit every (BM, BN) tile exactly once" in text


def test_a_kernel_with_a_row_loop_not_a_column_loop_stays_a_skeleton(tmp_path):
    """A loop over column blocks runs once over the whole row only if it runs to the row width."""
    src = TUTORIAL.read_text().replace("for off in range(0, N, BLOCK_SIZE):\n        cols = off + tl.arange(0, BLOCK_SIZE)\n        mask",
                                       "for off in range(0, stride, BLOCK_SIZE):\n        cols = off + tl.arange(0, BLOCK_SIZE)\n        mask")
    assert "range(0, stride, BLOCK_SIZE)" in src
    bad = tmp_path / "bad_loop.py"
    bad.write_text(src)
    text = _suggest("layer_norm_fwd_kernel", bad)
    assert "# Not runnable as generated" in text
    assert "the column loop runs to `stride`" in text


TILED_DOT = '        total += tl.dot(xt, wt, input_precision="ieee")\n'
TILED_ZEROS = "    total = tl.zeros((TILE_M, TILE_N), dtype=tl.float32)\n"


@pytest.mark.parametrize("old, new, why", [
    (TILED_DOT, TILED_DOT + "        total = total * 0.5\n", "the accumulator is changed in the K loop other than by tl.dot"),
    (TILED_ZEROS, TILED_ZEROS + "    total += 1.0\n", "the accumulator is changed before the K loop"),
    (TILED_DOT, TILED_DOT + "        s = tl.load(x + k0)\n", "loads in the K loop besides the two tl.dot tiles (s)"),
    ("    row_tile = tl.program_id(0)\n", "    row_tile = tl.program_id(0) + tl.program_id(2)\n", "are not program ids"),
    ("j = col_tile * TILE_N + tl.arange(0, TILE_N)\n", "j = col_tile * TILE_N + tl.arange(0, TILE_N)\n    jj = row_tile * TILE_N + tl.arange(0, TILE_N)\n", None),
], ids=["acc-scaled-in-loop", "acc-changed-before-loop", "extra-load-in-loop", "third-grid-axis", "unused-offsets-still-runnable"])
def test_matmul_near_misses_are_skeletons_that_say_why(old, new, why, tmp_path):
    src = TUTORIAL.read_text()
    assert old in src
    path = tmp_path / "near_miss.py"
    path.write_text(src.replace(old, new, 1))
    text = _suggest("tiled_matmul_kernel", path)
    if why is None:
        _runnable(text)
        return
    head = text.split("# Translated:")[0]
    assert "# Not runnable as generated" in head and why in head, head


GROUP_SCALE = '''
import triton
import triton.language as tl


@triton.jit
def group_scale_kernel(x_ptr, y_ptr, stride, n_cols, GROUP: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, GROUP):
        cols = start + tl.arange(0, GROUP)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        scale = tl.max(tl.abs(x), axis=0) / 127.0
        tl.store(y_ptr + row * stride + cols, x / scale, mask=cols < n_cols)


@triton.jit
def decayed_sum_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        acc = acc * 0.5 + tl.sum(x, axis=0)
    tl.store(y_ptr + row, acc)
'''


@pytest.mark.parametrize("kernel, why", [
    ("group_scale_kernel", "a store in the loop reads a reduction over the block (a result per block)"),
    ("decayed_sum_kernel", "the loop carries `acc` by `acc = acc * 0.5 + tl.sum(x, axis=0)`"),
])
def test_column_loops_whose_result_depends_on_the_block_size_stay_skeletons(kernel, why, tmp_path):
    """Running a column loop once over the whole row is what Triton computes with BLOCK >= N;
    a per-block result or an order-dependent carry differs, so these are not collapsed."""
    path = tmp_path / "block_dependent.py"
    path.write_text(GROUP_SCALE)
    text = _suggest(kernel, path)
    head = text.split("# Translated:")[0]
    assert "# Not runnable as generated" in head and why in head, head
