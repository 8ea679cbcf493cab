"""Triton family: Pallas skeletons that run, NKI skeletons that parse, PTL710 scoping, the
`suggest` command, and the vendor-guard classifier the PTL7xx rules lean on."""

from __future__ import annotations

import ast

import pytest
from conftest import FIXTURES, require_module, run_portlint, scan_paths

from portlint.analyses.python.rocm_branches import polarity
from portlint.rewrites.skeletons import SkeletonError, analyse, nki_skeleton, pallas_skeleton, triton_kernels

TPU_FIXTURE = FIXTURES / "triton" / "kernel_for_tpu.py"
CONFIGS_FIXTURE = FIXTURES / "triton" / "launch_and_configs.py"
PORTABLE = FIXTURES / "triton" / "portable_negative.py"


def _module(path):
    return ast.parse(path.read_text(encoding="utf-8"))


def _load_pallas(kernel: str):
    src = pallas_skeleton(_module(TPU_FIXTURE), kernel, "kernel_for_tpu.py")
    namespace: dict = {}
    exec(compile(src, f"<pallas skeleton of {kernel}>", "exec"), namespace)
    return src, namespace[f"{kernel}_pallas"]


@pytest.mark.oracle
@pytest.mark.parametrize("n", [4096, 3000])
def test_pallas_skeleton_of_add_kernel_runs_and_matches_numpy(n):
    jnp = require_module("jax.numpy")
    import numpy as np

    src, add = _load_pallas("add_kernel")
    assert "Left to do:" in src and "masks are gone" in src
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.asarray(add(jnp.asarray(x), jnp.asarray(y), interpret=True))
    np.testing.assert_allclose(out, x + y, rtol=1e-6)


@pytest.mark.oracle
def test_pallas_skeleton_of_scaled_relu_carries_scalar_and_arithmetic():
    jnp = require_module("jax.numpy")
    import numpy as np

    src, relu = _load_pallas("scaled_relu_kernel")
    assert "jnp.maximum(x * scale, 0.0)" in src
    assert "scale" in src.split("Left to do:")[1]  # the static scalar is called out
    x = np.linspace(-3, 3, 2048, dtype=np.float32)
    out = np.asarray(relu(jnp.asarray(x), 1.5, BLOCK=512, interpret=True))
    np.testing.assert_allclose(out, np.maximum(x * 1.5, 0.0), rtol=1e-6)


def test_matmul_skeleton_maps_grid_axes_to_block_specs():
    src = pallas_skeleton(_module(CONFIGS_FIXTURE), "matmul_kernel", "launch_and_configs.py")
    ast.parse(src)
    assert "pl.BlockSpec((BLOCK_M, BLOCK_K), lambda i, j: (i, 0))" in src
    assert "pl.BlockSpec((BLOCK_K, BLOCK_N), lambda i, j: (0, j))" in src
    assert "pl.BlockSpec((BLOCK_M, BLOCK_N), lambda i, j: (i, j))" in src
    assert "pl.cdiv(a.shape[0], BLOCK_M)" in src and "pl.cdiv(b.shape[1], BLOCK_N)" in src
    assert "jnp.dot(a, b, preferred_element_type=jnp.float32)" in src
    header = src.split("import functools")[0]
    assert "not elementwise" in header and "loop" in header


@pytest.mark.oracle
def test_matmul_skeleton_defines_a_callable_pallas_wrapper():
    require_module("jax")
    src = pallas_skeleton(_module(CONFIGS_FIXTURE), "matmul_kernel", "launch_and_configs.py")
    namespace: dict = {}
    exec(compile(src, "<matmul skeleton>", "exec"), namespace)
    assert callable(namespace["matmul_kernel_pallas"])


@pytest.mark.parametrize("kernel,op", [("add_kernel", "x + y"), ("scaled_relu_kernel", "nl.maximum(x * scale, 0.0)")])
def test_nki_skeleton_parses_and_uses_nki_language(kernel, op):
    """neuronxcc is not installable here (no PyPI wheel for this platform): parse and inspect only."""
    src = nki_skeleton(_module(TPU_FIXTURE), kernel, "kernel_for_tpu.py")
    tree = ast.parse(src)
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert {"nl.load", "nl.store", "nl.ndarray", "nl.affine_range", "nl.arange"} <= calls
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert [ast.unparse(d) for d in fn.decorator_list] == ["nki.jit"]
    assert op in src
    assert "neuronxcc 2.x" in src  # the API version the sketch was written for


def test_elementwise_detection():
    assert analyse(_module(TPU_FIXTURE), "add_kernel").elementwise
    info = analyse(_module(CONFIGS_FIXTURE), "matmul_kernel")
    assert not info.elementwise and info.n_axes == 2
    assert info.inputs == ["a_ptr", "b_ptr"] and info.outputs == ["c_ptr"]
    assert info.block_axis == {"BLOCK_M": 0, "BLOCK_N": 1}


def test_skeleton_errors_are_reported():
    with pytest.raises(SkeletonError):
        pallas_skeleton(_module(TPU_FIXTURE), "helper", "x.py")  # no loads or stores
    with pytest.raises(SkeletonError):
        nki_skeleton(_module(TPU_FIXTURE), "missing", "x.py")


def test_ptl710_suggestion_carries_both_skeletons():
    result = scan_paths([TPU_FIXTURE])
    found = {f.span.start_line: f for f in result.findings if f.rule_id == "PTL710"}
    assert len(found) == 2
    f = found[9]
    assert set(f.targets) == {"tpu", "trainium"}
    assert "def add_kernel_pallas_kernel(x_ref, y_ref, out_ref):" in f.suggestion
    assert "@nki.jit" in f.suggestion
    assert "portlint suggest FILE::add_kernel --to pallas" in f.suggestion
    # an elementwise kernel translates to a runnable Pallas kernel: the suggestion says kernel
    assert f.suggestion.startswith("Pallas (TPU) kernel (runnable")


def test_ptl710_names_a_skeleton_a_skeleton():
    """A grouped matmul whose tile order visits a tile twice gets the skeleton, named so."""
    result = scan_paths([FIXTURES / "triton" / "grouped_matmul_bad_order_for_tpu.py"])
    (f,) = [f for f in result.findings if f.rule_id == "PTL710" and f.span.start_line == 14]
    assert f.suggestion.startswith("Pallas (TPU) skeleton, also") and "# Not runnable as generated" in f.suggestion


def test_ptl710_quiet_in_gpu_repo_unless_scanning_for_tpu():
    default = scan_paths([PORTABLE])
    assert not [f for f in default.findings if f.rule_id == "PTL710"]
    for_tpu = scan_paths([PORTABLE], targets=("tpu", "trainium"))
    kernels = {f.message.split("`")[1] for f in for_tpu.findings if f.rule_id == "PTL710"}
    assert kernels == set(triton_kernels(_module(PORTABLE)))
    assert all(set(f.targets) == {"tpu", "trainium"} for f in for_tpu.findings if f.rule_id == "PTL710")


def test_suggest_command(tmp_path):
    proc = run_portlint("suggest", f"{TPU_FIXTURE}::add_kernel", "--to", "pallas")
    assert proc.returncode == 0, proc.stderr
    ast.parse(proc.stdout)
    assert "pl.pallas_call(" in proc.stdout
    proc = run_portlint("suggest", f"{TPU_FIXTURE}::add_kernel", "--to", "nki")
    assert proc.returncode == 0 and "@nki.jit" in proc.stdout
    proc = run_portlint("suggest", f"{TPU_FIXTURE}::helper", "--to", "nki")
    assert proc.returncode == 2 and "no Triton kernel named 'helper'" in proc.stderr
    proc = run_portlint("suggest", str(TPU_FIXTURE), "--to", "nki")
    assert proc.returncode == 2 and "FILE::KERNEL" in proc.stderr


@pytest.mark.parametrize(
    "cond,expected",
    [
        ("torch.version.hip", "amd"),
        ("torch.version.hip is None", "not_amd"),
        ("torch.version.hip is not None", "amd"),
        ("not is_hip()", "not_amd"),
        ("current_platform.is_rocm()", "amd"),
        ("current_platform.is_cuda()", "not_amd"),
        ("current_platform.is_cuda_alike()", None),
        ("x.is_cuda", None),
        ('triton.runtime.driver.active.get_current_target().backend == "hip"', "amd"),
        ('triton.runtime.driver.active.get_current_target().backend == "cuda"', "not_amd"),
        ('x.device.type == "cuda"', None),
        ('x.device.type == "xpu"', "not_amd"),
        ('DEVICE_TYPE in ("xpu", "hip")', "amd"),
        ('"gfx94" in props.gcnArchName', "amd"),
        ("torch.cuda.is_available() and torch.version.cuda", "not_amd"),
        ("not torch.cuda.is_available() or torch.version.hip", "amd"),
        ("USE_TMA_LOAD", "not_amd"),
        ("BLOCK_SIZE > 1024", None),
    ],
)
def test_vendor_guard_polarity(cond, expected):
    assert polarity(ast.parse(cond, mode="eval").body) == expected


def test_ptl710_for_gaudi_needs_a_module_level_import(tmp_path):
    kernel = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def copy(src, dst, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)\n"
    )
    gaudi = tmp_path / "gaudi_model.py"
    gaudi.write_text("import habana_frameworks.torch.core as htcore\n" + kernel, encoding="utf-8")
    hinted = tmp_path / "multi_backend.py"
    hinted.write_text(kernel + "\n\ndef pick(device):\n    return device == 'hpu'\n", encoding="utf-8")
    result = scan_paths([gaudi, hinted], root=tmp_path)
    found = [f for f in result.findings if f.rule_id == "PTL710"]
    assert [(f.path, set(f.targets)) for f in found] == [("gaudi_model.py", {"gaudi"})]
    assert "hpu" in found[0].suggestion and "pallas" not in found[0].suggestion.lower()


def test_ptl707_verdict_follows_the_configured_triton_release(tmp_path):
    """[tool.portlint.versions] triton, through the command line. The AMD backend accepts
    input_precision="bf16x3"/"bf16x6" from Triton 3.6 (3.5.0's HIPOptions allow "ieee" and, on
    gfx942, "tf32"; 3.6.0's add bf16x3 and bf16x6) and "tf32" on gfx942 from 3.3 (3.2.0: "ieee"
    only). On the default (3.9) bf16x3 is quiet; on 3.5 it is an error naming the release that
    brings it; on 3.2 "tf32" is an error too."""
    import json

    (tmp_path / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(a, b, c):\n"
        "    x = tl.dot(a, b, input_precision=\"bf16x3\")\n"
        "    y = tl.dot(a, b, input_precision=\"tf32\")\n"
        "    z = tl.dot(a, b, input_precision=\"tf32x3\")\n",
        encoding="utf-8",
    )

    def verdicts(config: str) -> dict[int, tuple[str, str]]:
        (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
        proc = run_portlint("scan", "k.py", "--format", "json", "--no-cache", "--select", "PTL707", cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        return {f["start_line"]: (f["severity"], f["message"]) for f in json.loads(proc.stdout)["findings"]}

    default = verdicts("[tool.portlint]\n")
    assert sorted(default) == [8, 9]
    assert default[8][0] == "warning" and default[9][0] == "error"
    assert 'Triton 3.9 allows "ieee", "bf16x3", "bf16x6", and "tf32" on gfx942 only' in default[9][1]
    assert verdicts('[tool.portlint.versions]\ntriton = "3.6"\n').keys() == {8, 9}

    old = verdicts('[tool.portlint.versions]\ntriton = "3.5"\n')
    assert sorted(old) == [7, 8, 9]
    assert old[7][0] == "error" and "fails to compile for AMD with Triton 3.5" in old[7][1]
    assert "Triton 3.6 brings bf16x3/bf16x6 on AMD" in old[7][1]
    assert old[8][0] == "warning"
    assert 'Triton 3.5 allows "ieee", and "tf32" on gfx942 only' in old[9][1]

    oldest = verdicts('[tool.portlint.versions]\ntriton = "3.2"\n')
    assert oldest[8][0] == "error" and "Triton 3.3 brings \"tf32\" on gfx942" in oldest[8][1]
    assert 'Triton 3.2 allows "ieee")' in oldest[9][1]


def test_ptl710_pallas_translation_names_the_jax_release_its_spelling_needs(tmp_path):
    """[tool.portlint.versions] jax, through the command line. The Pallas text PTL710 offers
    writes `pl.BlockSpec(block_shape, index_map)` (jax 0.4.31's order; 0.4.30's dataclass takes
    index_map first) and `memory_space=pl.ANY` (jax 0.4.34; before it only `pltpu.ANY`). On the
    default jax (0.10) the suggestion says nothing of releases; on 0.4.33 it names 0.4.34 for
    pl.ANY; on 0.4.30 it names 0.4.31 for the argument order too."""
    import json
    import shutil

    for name in ("kernel_for_tpu.py", "grouped_matmul_bad_order_for_tpu.py"):
        shutil.copy(FIXTURES / "triton" / name, tmp_path / name)

    def suggestions(config: str) -> dict[str, str]:
        (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
        proc = run_portlint("scan", ".", "--target", "tpu", "--format", "json", "--no-cache", "--select", "PTL710", cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        # the kernels whose translation has block specs (a device helper's has none)
        found = [f for f in json.loads(proc.stdout)["findings"] if "pl.BlockSpec(" in f["suggestion"]]
        assert len(found) >= 2
        return {f"{f['path']}:{f['start_line']}": f["suggestion"] for f in found}

    default = suggestions("[tool.portlint]\n")
    assert any("memory_space=pl.ANY" in s for s in default.values())
    assert not any("With jax" in s or "brings it" in s for s in default.values())

    mid = suggestions('[tool.portlint.versions]\njax = "0.4.33"\n')
    assert mid.keys() == default.keys()
    for where, text in mid.items():
        assert ("jax 0.4.33 has no `pl.ANY` (jax 0.4.34 brings it)" in text) == ("pl.ANY" in default[where])
        assert "takes `(index_map, block_shape)`" not in text

    old = suggestions('[tool.portlint.versions]\njax = "0.4.30"\n')
    assert all("With jax 0.4.30, `pl.BlockSpec` takes `(index_map, block_shape)`" in s and "jax 0.4.31 and later" in s
               for s in old.values())


def test_ptl708_verdict_follows_the_configured_triton_release(tmp_path):
    """[tool.portlint.versions] triton, through the command line. OCP e4m3 compiles for gfx942
    from Triton 3.3 and for gfx90a from 3.5; the FNUZ formats compile off gfx942 (gfx950, gfx90a)
    from 3.7 (3.5.0 and 3.6.0 stop on a compiler assertion). On the default (3.9) both are
    warnings about the format; on older releases errors that name the release that brings them."""
    import json

    (tmp_path / "q.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def ocp(x):\n    return x.to(tl.float8e4nv)\n\n\n@triton.jit\n"
        "def mi300(x):\n    return x.to(tl.float8e5b16)\n",
        encoding="utf-8",
    )

    def verdicts(config: str) -> dict[int, tuple[str, str]]:
        (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
        proc = run_portlint("scan", "q.py", "--format", "json", "--no-cache", "--select", "PTL708", cwd=tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
        return {f["start_line"]: (f["severity"], f["message"]) for f in json.loads(proc.stdout)["findings"]}

    default = verdicts("[tool.portlint]\n")
    assert {line: sev for line, (sev, _) in default.items()} == {7: "warning", 12: "warning"}
    assert not any("brings it" in m for _, m in default.values())
    assert verdicts('[tool.portlint.versions]\ntriton = "3.7"\n') == default

    v36 = verdicts('[tool.portlint.versions]\ntriton = "3.6"\n')
    assert v36[7] == default[7]
    assert v36[12][0] == "error" and "Triton 3.6 cannot compile for MI355X (gfx950) or MI250X (gfx90a)" in v36[12][1]
    assert "Triton 3.7 brings it there" in v36[12][1]

    v34 = verdicts('[tool.portlint.versions]\ntriton = "3.4"\n')
    assert v34[7][0] == "error" and "Triton 3.4 cannot compile for gfx90a (Triton 3.5 brings it there" in v34[7][1]
    v32 = verdicts('[tool.portlint.versions]\ntriton = "3.2"\n')
    assert "Triton 3.2 cannot compile for gfx942 or gfx90a (Triton 3.5 brings it there" in v32[7][1]
