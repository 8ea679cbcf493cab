"""PTL052 / PTL053 shown by CMake itself: CMake from PyPI (the `cmake` wheel, 3.21+ with HIP as a
language) configures small projects against Debian's ROCm packages (hipcc's clang, hip-lang,
hiprand, hipsparse) on a host where the CUDA toolkit is hidden, which is what an AMD machine is.

FindCUDA and CUDA:: targets fail there; the rewrites the rules offer configure and build.
With the CUDA toolkit visible, the same FindCUDA project configures and its build rules call
nvcc: the module is a driver for nvcc, nothing else."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, require_module, require_tool, run_portlint

pytestmark = pytest.mark.oracle

# the kernel as a port leaves it: HIP's runtime header, CUDA's kernel syntax
KERNEL = "#include <hip/hip_runtime.h>\n__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n"


def _cuda_roots() -> list[str]:
    """CUDA toolkit installations CMake's modules look in by themselves (/usr/local/cuda*)."""
    return sorted(str(Path(p)) for p in glob.glob("/usr/local/cuda*"))


def _nvcc_dirs() -> list[str]:
    """Directories of PATH that hold an nvcc."""
    return [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and shutil.which("nvcc", path=p)]


def _amd_host_args() -> list[str]:
    """Cache variables that make CMake's searches skip the CUDA toolkit: an AMD host."""
    roots = _cuda_roots()
    ignored = sorted({*roots, *(f"{r}/bin" for r in roots), *_nvcc_dirs()})
    return [f"-DCMAKE_IGNORE_PATH={';'.join(ignored)}", f"-DCMAKE_IGNORE_PREFIX_PATH={';'.join(roots)}"]


def _amd_host_env() -> dict:
    nvcc_dirs = set(_nvcc_dirs())
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_PATH", "CUDA_HOME", "CUDA_TOOLKIT_ROOT", "CUDA_BIN_PATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p not in nvcc_dirs)
    return env


def _under_lib(root: str, tail: str) -> list[str]:
    """`tail` in ROCm's lib directory: lib/, lib64/ or a multiarch lib/<triple>/ (Debian)."""
    return sorted({*glob.glob(f"{root}/lib/{tail}"), *glob.glob(f"{root}/lib64/{tail}"), *glob.glob(f"{root}/lib/*/{tail}"),
                   *glob.glob(f"{root}/{tail}")})


def _hip_language_args() -> tuple[list[str], dict]:
    """What CMake's HIP language needs to find Debian's ROCm: the clang hipcc runs (CMake refuses
    the hipcc wrapper itself), the AMD platform, the ROCm root and the directory of hip-lang's
    CMake package (under the multiarch lib directory, where CMake does not look by itself)."""
    hipcc = require_tool("hipcc")
    env = dict(os.environ, HIP_PLATFORM="amd")
    version = subprocess.run([hipcc, "--version"], capture_output=True, text=True, env=env, timeout=120).stdout
    clang_dir = re.search(r"InstalledDir: (\S+)", version).group(1)
    clangs = [p for p in [f"{clang_dir}/clang++", *sorted(glob.glob(f"{clang_dir}/clang++-*"))] if os.path.exists(p)]
    assert clangs, f"no clang++ beside hipcc's InstalledDir {clang_dir}"
    root = subprocess.run(["hipconfig", "-R"], capture_output=True, text=True, env=env, timeout=60).stdout.strip() or "/usr"
    lang = _under_lib(root, "cmake/hip-lang/hip-lang-config.cmake")
    bitcode = _under_lib(root, "amdgcn/bitcode/ocml.bc")
    comgr = _under_lib(root, "cmake/amd_comgr/amd_comgr-config.cmake")
    assert lang and bitcode and comgr, f"ROCm CMake packages not found under {root}"
    rocm_lib = str(Path(lang[0]).parent.parent.parent)
    args = [
        "-DCMAKE_HIP_PLATFORM=amd", f"-DCMAKE_HIP_COMPILER={clangs[0]}", "-DCMAKE_HIP_ARCHITECTURES=gfx90a",
        f"-DCMAKE_HIP_COMPILER_ROCM_ROOT={root}", f"-DCMAKE_HIP_COMPILER_ROCM_LIB={rocm_lib}",
        f"-DCMAKE_HIP_FLAGS=--rocm-path={root} --rocm-device-lib-path={Path(bitcode[0]).parent}",
        # Debian's hip-config.cmake says cmake_minimum_required(VERSION 3.3); CMake 4 needs this to read it
        "-DCMAKE_POLICY_VERSION_MINIMUM=3.5",
    ]
    # hip-lang's config finds amd_comgr with find_dependency, also inside CMake's try_compile projects
    return args, {"amd_comgr_DIR": str(Path(comgr[0]).parent)}


def cmake_configure(source: Path, build: Path, *, amd_host: bool, hip: bool = False,
                    do_build: bool = False, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Configure (and optionally build) `source` with the CMake wheel from PyPI."""
    cmake = Path(require_module("cmake").CMAKE_BIN_DIR) / "cmake"
    args = [str(cmake), "-S", str(source), "-B", str(build), *extra]
    env = _amd_host_env() if amd_host else dict(os.environ)
    if amd_host:
        args += _amd_host_args()
    if hip:
        hip_args, hip_env = _hip_language_args()
        args += hip_args
        env.update(hip_env)
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode == 0 and do_build:
        built = subprocess.run([str(cmake), "--build", str(build)], capture_output=True, text=True, env=env, timeout=300)
        proc = subprocess.CompletedProcess(proc.args, built.returncode, proc.stdout + built.stdout, proc.stderr + built.stderr)
    return proc


def _project(root: Path, cmakelists: str, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "CMakeLists.txt").write_text(cmakelists, encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


FINDCUDA = """cmake_minimum_required(VERSION 3.18)
project(p LANGUAGES CXX)
find_package(CUDA REQUIRED)
cuda_add_library(kernels kernels.cu)
"""

FINDCUDA_REWRITE = """cmake_minimum_required(VERSION 3.21)
project(p LANGUAGES CXX)
enable_language(HIP)
find_package(hip REQUIRED)
add_library(kernels kernels.cu)
set_source_files_properties(kernels.cu PROPERTIES LANGUAGE HIP)
target_link_libraries(kernels PRIVATE hip::host)
"""


def test_ptl052_findcuda_fails_to_configure_on_an_amd_host(tmp_path):
    src = _project(tmp_path / "src", FINDCUDA, {"kernels.cu": KERNEL})
    proc = cmake_configure(src, tmp_path / "amd", amd_host=True)
    assert proc.returncode != 0
    assert "FindCUDA" in proc.stderr and "CUDA_TOOLKIT_ROOT_DIR" in proc.stderr, proc.stderr[-2000:]


def test_ptl052_findcuda_drives_nvcc_when_the_toolkit_is_there(tmp_path):
    require_tool("nvcc")
    src = _project(tmp_path / "src", FINDCUDA, {"kernels.cu": KERNEL})
    proc = cmake_configure(src, tmp_path / "nv", amd_host=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rules = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "nv").rglob("*.cmake.pre-gen"))
    assert re.search(r"CUDA_NVCC_EXECUTABLE .*nvcc", rules), "FindCUDA's generated build rule does not run nvcc"


def test_ptl052_rewrite_configures_and_builds_hip_for_gfx90a(tmp_path):
    src = _project(tmp_path / "src", FINDCUDA_REWRITE, {"kernels.cu": KERNEL})
    proc = cmake_configure(src, tmp_path / "amd", amd_host=True, hip=True, do_build=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "The HIP compiler identification is Clang" in proc.stdout
    assert list((tmp_path / "amd").rglob("libkernels.a")), "no library built"


IMPORTED = """cmake_minimum_required(VERSION 3.21)
project(p LANGUAGES CXX)
find_package(CUDAToolkit)
add_library(ext SHARED ext.cpp)
target_link_libraries(ext PRIVATE {targets})
"""

EXT = "int ext_version() { return 1; }\n"


def _rocm_targets(cuda_names: list[str]) -> tuple[list[str], list[str]]:
    """ROCm targets and packages portlint's table (rules/build/cmake-targets.toml) names."""
    from portlint.frontends.buildfiles.tables import cmake_targets

    table = cmake_targets()
    rows = [table[name] for name in cuda_names]
    return [row[0] for row in rows], sorted({row[1] for row in rows})


# the CUDA libraries whose ROCm counterparts Debian packages (hip, hiprand, hipsparse)
CHECKED_TARGETS = ["cudart", "curand", "cusparse"]


def test_ptl053_cuda_targets_do_not_exist_on_an_amd_host(tmp_path):
    targets = " ".join(f"CUDA::{t}" for t in CHECKED_TARGETS)
    src = _project(tmp_path / "src", IMPORTED.format(targets=targets), {"ext.cpp": EXT})
    proc = cmake_configure(src, tmp_path / "amd", amd_host=True)
    assert proc.returncode != 0
    assert "CUDA::cudart" in proc.stderr and "but the target was not found" in proc.stderr, proc.stderr[-2000:]


def test_ptl053_cudart_target_resolves_where_the_toolkit_is(tmp_path):
    require_tool("nvcc")
    src = _project(tmp_path / "src", IMPORTED.format(targets="CUDA::cudart"), {"ext.cpp": EXT})
    proc = cmake_configure(src, tmp_path / "nv", amd_host=False)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_ptl053_the_tables_rocm_targets_configure_and_link(tmp_path):
    targets, packages = _rocm_targets(CHECKED_TARGETS)
    assert targets == ["hip::host", "hip::hiprand", "roc::hipsparse"]
    finds = "".join(f"find_package({p} REQUIRED)\n" for p in packages)
    text = IMPORTED.replace("find_package(CUDAToolkit)\n", finds).format(targets=" ".join(targets))
    src = _project(tmp_path / "src", text, {"ext.cpp": EXT})
    proc = cmake_configure(src, tmp_path / "amd", amd_host=True, hip=True, do_build=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert list((tmp_path / "amd").rglob("libext.so")), "no shared library linked"


def test_ptl057_rocm_configure_leaves_out_what_portlint_calls_cuda_only(tmp_path):
    """fixtures/build/scope_cmake configured by CMake as an AMD host does it (HIP found, the HIP
    language enabled, no CUDA toolkit): the target's sources are exactly the listed files
    portlint keeps in the ROCm build, and the one it reports (PTL057) is not among them."""
    from portlint.index.build_scope import build_scope

    fixture = REPO / "fixtures" / "build" / "scope_cmake"
    source = tmp_path / "src"
    shutil.copytree(fixture, source, ignore=shutil.ignore_patterns("__snapshots__"))
    text = (source / "CMakeLists.txt").read_text(encoding="utf-8")
    (source / "CMakeLists.txt").write_text(
        text + 'get_target_property(S ext SOURCES)\nfile(WRITE "${CMAKE_BINARY_DIR}/sources.txt" "${S}")\n', encoding="utf-8")
    proc = cmake_configure(source, tmp_path / "build", amd_host=True, hip=True, extra=("-DHIP_FOUND=ON",))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    built = {os.path.relpath(s, source) if os.path.isabs(s) else s
             for s in (tmp_path / "build" / "sources.txt").read_text().split(";") if s}
    files = sorted(str(p.relative_to(fixture)) for p in fixture.rglob("*") if p.is_file() and "__snapshots__" not in p.parts)
    scope = build_scope(fixture, files, lambda rel: (fixture / rel).read_bytes())
    listed = {"csrc/shared.cu", "csrc/cuda_only.cu"}
    assert built == listed - set(scope.outside) == {"csrc/shared.cu"}
    assert set(scope.outside) == {"csrc/cuda_only.cu"}


HIP_IN_A_BRANCH = """cmake_minimum_required(VERSION 3.21)
project(p LANGUAGES CXX CUDA)
if(USE_ROCM)
  enable_language(HIP)
  add_library(kernels kernels.cu)
  set_source_files_properties(kernels.cu PROPERTIES LANGUAGE HIP)
endif()
"""


def test_ptl050_project_cuda_stops_before_the_hip_branch(tmp_path):
    """HIP enabled only under if(USE_ROCM) does not save `project(... CUDA)`: on an AMD host
    with USE_ROCM=ON configuring fails at project(), looking for a CUDA compiler; the same
    file with CUDA left out of project() configures its HIP leg."""
    source = _project(tmp_path / "src", HIP_IN_A_BRANCH, {"kernels.cu": KERNEL})
    proc = cmake_configure(source, tmp_path / "build", amd_host=True, hip=True, extra=("-DUSE_ROCM=ON",))
    assert proc.returncode != 0
    # the error is CMake's CUDA compiler detection, raised from project() on line 2
    assert "CMakeDetermineCUDACompiler" in proc.stderr and "CMakeLists.txt:2 (project)" in proc.stderr, proc.stderr
    fixed = _project(tmp_path / "fixed", HIP_IN_A_BRANCH.replace("LANGUAGES CXX CUDA", "LANGUAGES CXX"), {"kernels.cu": KERNEL})
    proc = cmake_configure(fixed, tmp_path / "build-fixed", amd_host=True, hip=True, extra=("-DUSE_ROCM=ON",))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = run_portlint("scan", str(source / "CMakeLists.txt"), "--select", "PTL050", "--format", "concise", "--no-cache")
    assert "PTL050" in out.stdout and "only inside an if() leg" in out.stdout
