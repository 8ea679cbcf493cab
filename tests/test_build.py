"""The build family (rules/build/): the data tables' schema, and the toolchain facts the
rules rest on, observed with hipcc (HIP_PLATFORM=amd) and Debian's cmake."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib

import pytest
from conftest import REPO, require_tool

from portlint.frontends.buildfiles import requirements
from portlint.frontends.buildfiles.tables import HIPCC_BEHAVIOURS, STATUSES, cmake_targets, dependencies, dependency_for, nvcc_flags
from portlint.core.model import TARGETS

BUILD = REPO / "rules" / "build"
KERNEL = "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = 1.0f; }\n"


def _hipcc(tmp_path, flags: list[str]) -> subprocess.CompletedProcess:
    hipcc = require_tool("hipcc")
    src = tmp_path / "k.hip"
    src.write_text(KERNEL)
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run([hipcc, "--offload-arch=gfx90a", *flags, "-c", str(src), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True, env=env, timeout=300)


def test_dependency_table_schema():
    with open(BUILD / "dependencies.toml", "rb") as fh:
        rows = tomllib.load(fh)["dependency"]
    assert len(rows) >= 10
    for row in rows:
        assert row["patterns"] and all(p == p.lower() for p in row["patterns"]), row
        assert row["what"] and row["source"].strip(), row
        assert len(row["checked"]) == 10 and row["checked"][4] == "-", row
        judged = [t for t in TARGETS if t in row]
        assert judged, f"{row['patterns']} judges no target"
        for t in judged:
            assert row[t]["status"] in STATUSES and row[t]["counterpart"].strip(), (row["patterns"], t)
        assert set(row) - set(TARGETS) <= {"patterns", "what", "source", "checked"}, row
    assert len(dependencies()) == len(rows)


def test_dependency_forms_match_names_extras_and_local_versions():
    assert requirements.forms("torch==2.4.0+cu121") == ("torch", "torch+cu121")
    assert requirements.forms("Flash_Attn>=2") == ("flash-attn",)
    assert requirements.forms("jax[cuda12]==0.4.30")[1] == "jax[cuda12]"
    assert requirements.forms("-r other.txt") == () and requirements.forms("https://x/y.whl") == ()
    assert dependency_for(requirements.forms("jax[cuda12]")).targets["tpu"].counterpart == "`jax[tpu]`"
    assert dependency_for(requirements.forms("torch==2.4.0+rocm6.1")) is None
    assert dependency_for(requirements.forms("jax[tpu]")) is None


def test_flag_and_target_tables_load():
    assert {f.hipcc for f in nvcc_flags()} <= set(HIPCC_BEHAVIOURS)
    assert cmake_targets()["cublas"][0] == "roc::hipblas"


@pytest.mark.oracle
@pytest.mark.parametrize("flag", nvcc_flags(), ids=lambda f: f.flag)
def test_hipcc_treats_nvcc_flags_as_the_table_says(tmp_path, flag):
    """What rules/build/nvcc-flags.toml says hipcc does with each nvcc option, rerun."""
    proc = _hipcc(tmp_path, list(flag.probe))
    out = proc.stdout + proc.stderr
    if flag.hipcc == "rejected":
        assert proc.returncode != 0, out
        assert "unsupported option" in out or "unknown argument" in out, out
    elif flag.hipcc == "ignored":
        assert proc.returncode == 0, out
        assert "unused" in out, out
    else:  # misread: accepted as some other clang option
        assert proc.returncode == 0, out
        assert flag.flag not in out.replace(f"'{flag.flag[:2]} {flag.flag[2:]}'", "") or "unused" in out, out


@pytest.mark.oracle
def test_hipcc_accepts_the_counterparts(tmp_path):
    for flags in (["-ffast-math"], ["-fgpu-rdc"], ["-gline-tables-only"], ["-fPIC"]):
        proc = _hipcc(tmp_path, flags)
        assert proc.returncode == 0, (flags, proc.stderr)


@pytest.mark.oracle
def test_hipcc_rejects_or_ignores_nvidia_arch_flags(tmp_path):
    proc = _hipcc(tmp_path, ["-gencode", "arch=compute_90a,code=sm_90a"])
    assert proc.returncode != 0 and "unknown argument: '-gencode'" in proc.stderr
    proc = _hipcc(tmp_path, ["-arch=sm_90a"])
    assert proc.returncode == 0 and "argument unused during compilation: '-arch=sm_90a'" in proc.stderr
    assert _hipcc(tmp_path, []).returncode == 0  # the gfx90a build itself is fine


@pytest.mark.oracle
def test_cmake_cuda_language_refuses_hipcc(tmp_path):
    """An AMD machine's device compiler is hipcc: CMake's CUDA language does not take it
    (nvcc configures the same project: the fixture form is valid CMake)."""
    hipcc = require_tool("hipcc")
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake not installed")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\nadd_library(k OBJECT k.cu)\n")
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    proc = subprocess.run([cmake, "-S", str(tmp_path), "-B", str(tmp_path / "amd"), f"-DCMAKE_CUDA_COMPILER={hipcc}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "CUDA compiler identification source file" in proc.stderr and "failed" in proc.stderr
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        ok = subprocess.run([cmake, "-S", str(tmp_path), "-B", str(tmp_path / "nv"), f"-DCMAKE_CUDA_COMPILER={nvcc}",
                             "-DCMAKE_CUDA_ARCHITECTURES=90a"], capture_output=True, text=True, timeout=400)
        assert ok.returncode == 0, ok.stderr[-2000:]
