"""The real toolchains as test oracles: nvcc for NVIDIA, hipcc (AMD platform, gfx90a, a
64-lane CDNA GPU) for ROCm. Each call compiles one translation unit to an object file in a
temporary directory and returns (ok, output). Missing tools skip the test locally and fail
it in CI (see conftest.require_tool)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from conftest import require_tool

NVCC_ARCH = "sm_90a"
HIP_ARCH = "gfx90a"


def nvcc_compile(source: Path | str, extra: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Compile a .cu file (or CUDA source text) with nvcc -arch=sm_90a -c."""
    nvcc = require_tool("nvcc")
    with tempfile.TemporaryDirectory() as tmp:
        path = _materialise(source, Path(tmp), ".cu")
        proc = subprocess.run(
            [nvcc, f"-arch={NVCC_ARCH}", "-std=c++17", "-c", str(path), "-o", str(Path(tmp) / "out.o"), "-I", str(Path(path).parent), *extra],
            capture_output=True, text=True, timeout=300,
        )
    return proc.returncode == 0, proc.stdout + proc.stderr


def hipcc_compile(source: Path | str, extra: tuple[str, ...] = (), arch: str = HIP_ARCH, runtime_header: bool = True) -> tuple[bool, str]:
    """Compile HIP source (a file or text) for AMD gfx90a (or `arch`) with HIP_PLATFORM=amd hipcc -c.

    CUDA sources are compiled as HIP (`-x hip`); HIP's runtime header is included first so
    code that includes nothing still sees the HIP builtins (`runtime_header=False`: as hipcc
    compiles a file, with no implicit header, unlike nvcc)."""
    hipcc = require_tool("hipcc")
    env = dict(os.environ, HIP_PLATFORM="amd")
    with tempfile.TemporaryDirectory() as tmp:
        path = _materialise(source, Path(tmp), ".hip")
        proc = subprocess.run(
            [hipcc, f"--offload-arch={arch}", "-std=c++17", "-x", "hip", *(("-include", "hip/hip_runtime.h") if runtime_header else ()),
             "-c", str(path), "-o", str(Path(tmp) / "out.o"), "-I", str(Path(path).parent), *extra],
            capture_output=True, text=True, timeout=300, env=env,
        )
    return proc.returncode == 0, proc.stdout + proc.stderr


def _materialise(source: Path | str, tmp: Path, suffix: str) -> Path:
    if isinstance(source, Path):
        return source
    path = tmp / f"snippet{suffix}"
    path.write_text(source, encoding="utf-8")
    return path


def hipcc_device_asm(source: str) -> tuple[bool, str]:
    """The AMD GCN assembly hipcc emits for gfx90a device code (`--cuda-device-only -S`):
    what the GPU would run, to show what a branch choice leaves in a kernel."""
    hipcc = require_tool("hipcc")
    env = dict(os.environ, HIP_PLATFORM="amd")
    with tempfile.TemporaryDirectory() as tmp:
        path = _materialise(source, Path(tmp), ".hip")
        out = Path(tmp) / "out.s"
        proc = subprocess.run(
            [hipcc, f"--offload-arch={HIP_ARCH}", "-std=c++17", "-x", "hip", "-include", "hip/hip_runtime.h",
             "--cuda-device-only", "-S", "-O2", str(path), "-o", str(out)],
            capture_output=True, text=True, timeout=300, env=env,
        )
        text = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
    return proc.returncode == 0, text or (proc.stdout + proc.stderr)
