"""File roles (portlint/index/roles.py) and the role step (portlint/findings/roles.py): a
finding in a test, benchmark, example, conversion tool or script is a note, carries its role
and never fails the scan at the default fail level; CUDA sources keep their severity;
`roles` in the config overrides the role."""

from __future__ import annotations

import json
import os

import pytest
from conftest import run_portlint

from portlint.core.config import ConfigError, Settings, load_config
from portlint.core.vocabulary import file_roles
from portlint.index.roles import decide, override

CUDA_STRING = 'import torch\nx = torch.randn(3, device="cuda")\n'
MAIN = 'if __name__ == "__main__":\n    main()\n'


@pytest.mark.parametrize("path, data, role", [
    ("tests/test_model.py", "", "test"),
    ("pkg/testing/helpers.py", "", "test"),
    ("pkg/conftest.py", "", "test"),
    ("pkg/model_test.py", "", "test"),
    ("src/pkg/check.py", "import pytest\n", "test"),
    ("src/pkg/check.py", "from unittest import TestCase\n", "test"),
    ("benchmarks/attn.py", "", "benchmark"),
    ("pkg/bench_matmul.py", "", "benchmark"),
    ("examples/train_mnist.py", "", "example"),
    ("docs/source/quicktour.py", "", "example"),
    ("pkg/convert_llama_checkpoint.py", "", "conversion"),
    ("pkg/export/trt.py", "", "conversion"),
    ("pkg/engine.py", "import tensorrt as trt\n", "conversion"),
    ("pkg/deploy.py", "def f(m, x):\n    torch.onnx.export(m, x, 'm.onnx')\n", "conversion"),
    ("scripts/download.py", "", "script"),
    ("tools/merge.py", "", "script"),
    ("pkg/cli.py", "import argparse\n\ndef main():\n    argparse.ArgumentParser()\n\n" + MAIN, "script"),
    ("examples/CMakeLists.txt", "", "example"),
])
def test_roles_from_paths_and_source(path, data, role):
    language = "python" if path.endswith(".py") else "build"
    assert decide(path, language, data.encode()).name == role


@pytest.mark.parametrize("path, data", [
    ("src/pkg/modeling.py", CUDA_STRING),  # plain library code
    ("src/pkg/contest.py", ""),  # a name that only looks like a test's
    ("src/pkg/latest.py", ""),
    ("src/pkg/attest/x.py", ""),
    ("src/pkg/check.py", "def f():\n    import pytest\n"),  # a lazy import in a function is no test file
    ("src/pkg/check.py", "from pkg.unittest_helpers import x\n"),
    # a `__main__` entry point that trains is what users run on the target: library
    ("train.py", "import argparse\n\ndef main():\n    loss.backward()\n    optimizer.step()\n\n" + MAIN),
    ("pkg/model.py", MAIN),  # a `__main__` smoke test without a command line
    # a training launcher that hands its config to the trainer in another module
    ("pkg_cli/hydra_train.py", "import hydra\n\n@hydra.main()\ndef hydra_main(cfg):\n    main(cfg)\n\n" + MAIN),
    ("src/pkg/onnx_utils_doc.py", "# torch.onnx.export is not called here\n"),
])
def test_library_near_misses(path, data):
    assert decide(path, "python", data.encode()).name == "library"


def test_config_globs_win_and_may_restore_library():
    assert decide("tools/serve.py", "python", b"", {"tools/**": "library"}).name == "library"
    assert decide("pkg/ops.py", "python", b"", {"pkg/ops.py": "benchmark"}).name == "benchmark"
    assert override("tools/a/b.py", {"tools": "library"}) == "library"
    assert override("src/tools.py", {"tools": "library"}) is None


def test_vocabulary_is_loaded_and_checked():
    vocab = file_roles()
    assert vocab.names[0] == "library" and {"test", "benchmark", "example", "conversion", "script"} <= set(vocab.names)
    assert "cuda" in vocab.keep_severity_languages


def test_config_roles_are_validated(tmp_path):
    cfg = tmp_path / "portlint.toml"
    cfg.write_text('roles = { "tools/**" = "Library" }\n')
    assert load_config(cfg, Settings()).roles == {"tools/**": "library"}
    cfg.write_text('roles = { "tools/**" = "lib" }\n')
    with pytest.raises(ConfigError, match="is not a role"):
        load_config(cfg, Settings())
    cfg.write_text('roles = ["tools"]\n')
    with pytest.raises(ConfigError, match="table of glob = role"):
        load_config(cfg, Settings())


def _tree(tmp_path, config=""):
    (tmp_path / "pyproject.toml").write_text("[tool.portlint]\ntargets = ['tpu']\n" + config)
    for rel in ("src/pkg/__init__.py", "tests/test_a.py", "examples/demo_run.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("" if rel.endswith("__init__.py") else CUDA_STRING)
    (tmp_path / "src/pkg/lib.py").write_text(CUDA_STRING)
    (tmp_path / "tests/k.cu").write_text('__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n')
    return tmp_path


def _json(tmp_path, *args):
    proc = run_portlint("scan", ".", "--no-cache", "--format", "json", "--target", "tpu", "--target", "rocm", *args, cwd=tmp_path)
    return proc, json.loads(proc.stdout)


def test_findings_outside_the_library_are_notes_with_their_role(tmp_path):
    proc, doc = _json(_tree(tmp_path))
    by_path = {f["path"]: f for f in doc["findings"]}
    assert by_path["src/pkg/lib.py"]["severity"] == "error" and by_path["src/pkg/lib.py"]["role"] == "library"
    for path, role in (("tests/test_a.py", "test"), ("examples/demo_run.py", "example")):
        f = by_path[path]
        assert (f["severity"], f["role"], set(f["targets"].values())) == ("note", role, {"note"}), f
        assert f["suggestion"].startswith(f"a note, not a blocker: {role} code")
    # the CUDA test kernel still fails to build for ROCm: its finding keeps its severity
    assert by_path["tests/k.cu"]["severity"] == "error" and by_path["tests/k.cu"]["role"] == "library"
    assert doc["summary"]["outside_library"] == 2


def test_notes_of_tests_never_fail_the_scan_and_are_summed_apart(tmp_path):
    _tree(tmp_path)
    (tmp_path / "src/pkg/lib.py").write_text("import torch\n")
    (tmp_path / "tests/k.cu").unlink()
    proc = run_portlint("scan", ".", "--no-cache", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "No portability problems found in 5 files of library code." in proc.stdout, proc.stdout
    assert "2 notes in example and test code (2 files), not blockers" in proc.stdout
    # `--fail-on note` asks for notes too
    assert run_portlint("scan", ".", "--no-cache", "--fail-on", "note", cwd=tmp_path).returncode == 1


def test_config_roles_make_tests_library_again(tmp_path):
    _, doc = _json(_tree(tmp_path, 'roles = { "tests/**" = "library" }\n'))
    by_path = {f["path"]: f for f in doc["findings"]}
    assert by_path["tests/test_a.py"]["severity"] == "error" and by_path["tests/test_a.py"]["role"] == "library"
    assert by_path["examples/demo_run.py"]["severity"] == "note"


def test_sarif_and_migration_report_carry_the_role(tmp_path):
    _tree(tmp_path)
    sarif = json.loads(run_portlint("scan", ".", "--no-cache", "--format", "sarif", cwd=tmp_path).stdout)
    props = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["properties"] for r in sarif["runs"][0]["results"]}
    assert props["tests/test_a.py"]["role"] == "test" and "role" not in props["src/pkg/lib.py"]
    report = json.loads(run_portlint("report", ".", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert report["outside_library"] == {"example": {"findings": 1, "files": 1}, "test": {"findings": 1, "files": 1}}
    assert {i["path"] for i in report["findings"]} == {"src/pkg/lib.py"}  # the config targets tpu: no rocm finding
    md = run_portlint("report", ".", "--format", "markdown", "--no-cache", cwd=tmp_path).stdout
    assert "2 notes in example and test code (2 files), not blockers" in md


def test_megatron_and_apex_files_are_cuda_backends_for_the_inferred_scope():
    from portlint.index.project import _backend_specific

    assert _backend_specific("src/accelerate/utils/megatron_lm.py")
    assert _backend_specific("fairseq/model_parallel/megatron_trainer.py")
    assert not _backend_specific("src/accelerate/utils/modeling.py")


def test_a_gpu_file_with_an_xla_or_hpu_twin_is_a_backend():
    from portlint.index.project import _backend_specific

    files = {"pkg/worker/gpu_model_runner.py", "pkg/worker/tpu_model_runner.py", "pkg/worker/gpu_utils.py",
             "pkg/GPUWorker.py", "pkg/HPUWorker.py"}
    assert _backend_specific("pkg/worker/gpu_model_runner.py", files)
    assert _backend_specific("pkg/GPUWorker.py", files)
    assert not _backend_specific("pkg/worker/gpu_utils.py", files)  # no twin: shared code
    assert not _backend_specific("pkg/worker/tpu_model_runner.py", files)


# --- vendored third-party code ---------------------------------------------------------------

ASM_KERNEL = '__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def _vendored_tree(tmp_path, config=""):
    """A package that bundles CUTLASS the way flash-attn's sdist does (csrc/cutlass with its
    own include/cutlass tree, no license file), cupy's CCCL (a license file), natten's
    third_party/, and one folder of its own kernels named cutlass (vllm's w8a8/cutlass)."""
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n' + config)
    files = {
        "csrc/cutlass/include/cutlass/gemm.h": ASM_KERNEL,
        "csrc/cutlass/test/unit/gemm_test.cu": ASM_KERNEL,
        "pkg/include/_cccl/cub/block.cuh": ASM_KERNEL,
        "pkg/include/_cccl/LICENSE": "BSD\n",
        "third_party/glm/detail/x.cu": ASM_KERNEL,
        "csrc/quant/cutlass/scaled_mm.cu": ASM_KERNEL,  # the package's own kernels
        "csrc/quant/cutlass/README.md": "ours\n",
        "csrc/attention.cu": ASM_KERNEL,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_vendored_libraries_are_told_by_their_folders_and_layout(tmp_path):
    root = _vendored_tree(tmp_path)
    for rel, role in [
        ("csrc/cutlass/include/cutlass/gemm.h", "vendored"),  # its own header tree under its name
        ("csrc/cutlass/test/unit/gemm_test.cu", "vendored"),  # the bundle's own tests are the bundle's
        ("pkg/include/_cccl/cub/block.cuh", "vendored"),  # its own license file
        ("third_party/glm/detail/x.cu", "vendored"),  # a vendor folder
        ("csrc/quant/cutlass/scaled_mm.cu", "library"),  # named like CUTLASS, laid out as nothing of the kind
        ("csrc/attention.cu", "library"),
    ]:
        assert decide(rel, "cuda", b"", None, root / rel, _layout_in(root)).name == role, rel
    # without the file on disk, a library name alone decides nothing
    assert decide("csrc/cutlass/include/cutlass/gemm.h", "cuda", b"").name == "library"
    # nor without a tree to read it in: no folder is listed
    assert decide("pkg/include/_cccl/cub/block.cuh", "cuda", b"", None, root / "pkg/include/_cccl/cub/block.cuh").name == "library"
    # and a folder outside the tree is not read (the scan root below the library's folder)
    inner = root / "pkg/include/_cccl/cub"
    assert decide("pkg/include/_cccl/cub/block.cuh", "cuda", b"", None, inner / "block.cuh", _layout_in(inner)).name == "library"


def _layout_in(tree):
    """The folder-layout reader a scan of `tree` (its resolved scan root) passes to decide."""
    from portlint.index.roles import _library_root

    return lambda folder, names: _library_root(folder, names, os.path.realpath(tree))


def test_vendored_findings_are_notes_in_every_language_and_roles_can_restore_them(tmp_path):
    proc, doc = _json(_vendored_tree(tmp_path))
    by_path = {f["path"]: f for f in doc["findings"]}
    for rel in ("csrc/cutlass/include/cutlass/gemm.h", "pkg/include/_cccl/cub/block.cuh", "third_party/glm/detail/x.cu",
                "csrc/cutlass/test/unit/gemm_test.cu"):
        f = by_path[rel]
        assert (f["severity"], f["role"]) == ("note", "vendored"), f
        assert f["suggestion"].startswith("a note, not a blocker: vendored code")
    for rel in ("csrc/quant/cutlass/scaled_mm.cu", "csrc/attention.cu"):
        assert (by_path[rel]["severity"], by_path[rel]["role"]) == ("error", "library"), by_path[rel]
    _, doc = _json(_vendored_tree(tmp_path, 'roles = { "third_party/**" = "library" }\n'))
    assert {f["path"]: f["severity"] for f in doc["findings"]}["third_party/glm/detail/x.cu"] == "error"
