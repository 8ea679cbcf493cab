"""Build scope (portlint/index/build_scope.py, rule PTL057): which CUDA sources a package's
own ROCm build never compiles, from its setup.py and CMakeLists.txt, and the folding of such
a file's ROCm findings under one finding."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from portlint.index.build_scope import build_scope

REPO = Path(__file__).resolve().parent.parent


def scope_of(files: dict[str, str]):
    data = {k: v.encode() for k, v in files.items()}
    return build_scope(Path("/nonexistent"), sorted(data), data.get)


SETUP = """
import glob, os
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION
common = ["csrc/shared.cu"]
ext = []
if not IS_HIP_EXTENSION:
    srcs = common + [os.path.join("csrc/cuda", n) for n in ["a.cu", "b.cu"]]
    srcs.append("csrc/cuda/c.cu")
    ext.append(CUDAExtension("x", sources=srcs))
else:
    ext.append(CUDAExtension("x", sources=common + glob.glob("csrc/ck/*.cpp")))
"""
KERNELS = {"csrc/shared.cu": "", "csrc/cuda/a.cu": '#include "kernel.h"\n', "csrc/cuda/b.cu": "",
           "csrc/cuda/c.cu": "", "csrc/cuda/kernel.h": "", "csrc/ck/k.cpp": '#include "../common.h"\n',
           "csrc/common.h": "", "csrc/cuda/uses_common.cu": '#include "../common.h"\n'}


def test_setup_py_cuda_leg_only_is_outside_both_legs_inside():
    scope = scope_of({"setup.py": SETUP, **KERNELS})
    assert {"csrc/cuda/a.cu", "csrc/cuda/b.cu", "csrc/cuda/c.cu"} <= set(scope.outside)
    assert scope.verdict("csrc/cuda/a.cu").build == "setup.py"
    assert scope.verdict("csrc/shared.cu") is None  # listed in both legs
    assert scope.verdict("csrc/ck/k.cpp") is None  # the ROCm leg's glob
    # a header only CUDA-leg files include is outside too; one the ROCm leg includes is not
    assert scope.verdict("csrc/cuda/kernel.h").via == "csrc/cuda/a.cu"
    assert scope.verdict("csrc/common.h") is None
    # not listed anywhere: unknown, in scope
    assert scope.verdict("csrc/cuda/uses_common.cu") is None


def test_setup_py_without_a_rocm_branch_keeps_everything():
    setup = SETUP.replace("not IS_HIP_EXTENSION", "torch.version.cuda")
    assert scope_of({"setup.py": setup, **KERNELS}).outside == {}


def test_setup_py_with_an_unreadable_rocm_list_keeps_everything():
    setup = SETUP.replace('common + glob.glob("csrc/ck/*.cpp")', "find_sources()")
    assert scope_of({"setup.py": setup, **KERNELS}).outside == {}


def test_setup_py_rocm_tests_of_the_vocabulary():
    for test in ("torch.version.hip is None", 'BUILD_TARGET == "cuda" and not IS_ROCM', "not is_hip()", 'BUILD_TARGET != "rocm"', "ROCM_HOME is None"):
        setup = SETUP.replace("not IS_HIP_EXTENSION", test)
        assert "csrc/cuda/a.cu" in scope_of({"setup.py": setup, **KERNELS}).outside, test
    # a ROCm build takes (or may take) it; `== "cuda"` with no test naming AMD's stack is no ROCm branch
    for test in ("torch.version.hip", "IS_HIP_EXTENSION or FORCE", "USE_CUDA", 'BUILD_TARGET == "cuda"'):
        setup = SETUP.replace("not IS_HIP_EXTENSION", test)
        assert "csrc/cuda/a.cu" not in scope_of({"setup.py": setup, **KERNELS}).outside, test


CMAKE = """
project(x LANGUAGES CXX)
if(HIP_FOUND)
  set(GPU_LANG "HIP")
  enable_language(HIP)
endif()
set(SRCS "csrc/shared.cu")
if(GPU_LANG STREQUAL "CUDA")
  list(APPEND SRCS "${CMAKE_CURRENT_SOURCE_DIR}/csrc/cuda/a.cu")
  file(GLOB MORE "csrc/cuda/b*.cu")
endif()
if(GPU_LANG STREQUAL "CUDA" OR GPU_LANG STREQUAL "HIP")
  list(APPEND SRCS "csrc/cuda/c.cu")
endif()
add_library(x ${SRCS})
"""


def test_cmake_language_switch():
    scope = scope_of({"CMakeLists.txt": CMAKE, **KERNELS})
    assert set(scope.outside) == {"csrc/cuda/a.cu", "csrc/cuda/b.cu", "csrc/cuda/kernel.h"}
    assert scope.verdict("csrc/cuda/a.cu").line == 9
    # without a HIP leg, `GPU_LANG STREQUAL "CUDA"` says nothing about a ROCm build
    plain = CMAKE.replace("if(HIP_FOUND)\n  set(GPU_LANG \"HIP\")\n  enable_language(HIP)\nendif()\n", "").replace(' OR GPU_LANG STREQUAL "HIP"', "")
    assert scope_of({"CMakeLists.txt": plain, **KERNELS}).outside == {}


def test_cmake_glob_of_a_variable_in_a_taken_branch_keeps_everything():
    cmake = CMAKE.replace('list(APPEND SRCS "csrc/cuda/c.cu")', 'file(GLOB ALL "${KERNEL_DIR}/*.cu")')
    assert scope_of({"CMakeLists.txt": cmake, **KERNELS}).outside == {}


def _scan(tree: Path, *extra: str) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", ".", "--format", "json", "--no-cache", "--exit-zero",
                           "--no-progress", "--target", "rocm", "--select", "PTL057,PTL104", *extra],
                          cwd=tree, capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["findings"]


def test_cli_folds_a_cuda_only_file_under_one_finding(tmp_path):
    (tmp_path / "portlint.toml").write_text("")
    (tmp_path / "setup.py").write_text(SETUP)
    shuffle = "__device__ float r(float v) { return v + __shfl_xor_sync(0xffffffff, v, 16); }\n"
    for rel in ("csrc/shared.cu", "csrc/cuda/a.cu", "csrc/ck/k.cpp"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(shuffle)
    (tmp_path / "csrc/cuda/b.cu").write_text("__global__ void k() {}\n")
    found = {(f["path"], f["rule"]): f for f in _scan(tmp_path)}
    top = found[("csrc/cuda/a.cu", "PTL057")]
    assert top["start_line"] == 1 and top["severity"] == "warning"
    assert "setup.py:9 lists it only where a ROCm build does not go" in top["message"]
    assert [(r["rule"], r["start_line"]) for r in top["related"]] == [("PTL104", 1)]
    assert ("csrc/cuda/a.cu", "PTL104") not in found
    assert ("csrc/shared.cu", "PTL104") in found  # both legs list it: a finding of its own
    # a CUDA-only file with no ROCm finding of its own: only its place in the source list, a note
    assert found[("csrc/cuda/b.cu", "PTL057")]["severity"] == "note"
    # without PTL057 the file's findings are their own again
    alone = {(f["path"], f["rule"]) for f in _scan(tmp_path, "--ignore", "PTL057")}
    assert ("csrc/cuda/a.cu", "PTL104") in alone


def test_cache_follows_the_build_file(tmp_path):
    """A CUDA file's cached result depends on the build files: listing it in the ROCm leg
    brings its findings back on the next (cached) scan."""
    (tmp_path / "portlint.toml").write_text("")
    (tmp_path / "setup.py").write_text(SETUP)
    (tmp_path / "csrc/cuda").mkdir(parents=True)
    (tmp_path / "csrc/cuda/a.cu").write_text("__device__ float r(float v) { return v + __shfl_xor_sync(0xffffffff, v, 16); }\n")

    def rules():
        proc = subprocess.run([sys.executable, "-m", "portlint", "scan", ".", "--format", "json", "--exit-zero", "--no-progress",
                               "--target", "rocm", "--select", "PTL057,PTL104", "--cache-dir", str(tmp_path / ".cache")],
                              cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
        return sorted(f["rule"] for f in json.loads(proc.stdout)["findings"] if f["path"] == "csrc/cuda/a.cu")

    assert rules() == ["PTL057"]
    (tmp_path / "setup.py").write_text(SETUP.replace('glob.glob("csrc/ck/*.cpp")', '["csrc/cuda/a.cu"]'))
    assert rules() == ["PTL104"]


def test_glob_patterns_follow_glob_and_cmake():
    from portlint.index.build_scope import matching

    files = ["csrc/a.cu", "csrc/sub/b.cu", "csrc/sub/deep/c.cu", "csrc/x.cpp"]
    assert matching(files, "csrc/*.cu", False) == ["csrc/a.cu"]  # glob.glob: `*` stays in its folder
    assert matching(files, "csrc/**/*.cu", True) == ["csrc/a.cu", "csrc/sub/b.cu", "csrc/sub/deep/c.cu"]
    assert matching(files, "csrc/*.cu", True, star_crosses=True) == ["csrc/a.cu", "csrc/sub/b.cu", "csrc/sub/deep/c.cu"]  # GLOB_RECURSE
    assert matching(files, "csrc/[ab].cu", False) == ["csrc/a.cu"]


def test_a_rocm_glob_that_recurses_keeps_the_files_below():
    """CMake's GLOB_RECURSE in the HIP leg reaches csrc/cuda/a.cu: it stays in scope."""
    cmake = CMAKE.replace('list(APPEND SRCS "csrc/cuda/c.cu")', 'file(GLOB_RECURSE HIPS "csrc/cuda/a*.cu")')
    assert "csrc/cuda/a.cu" not in scope_of({"CMakeLists.txt": cmake, **KERNELS}).outside
    # glob.glob without recursive=True in the ROCm leg does not reach a subfolder
    setup = SETUP.replace('glob.glob("csrc/ck/*.cpp")', 'glob.glob("csrc/*.cu")')
    assert "csrc/cuda/a.cu" in scope_of({"setup.py": setup, **KERNELS}).outside
    setup = SETUP.replace('glob.glob("csrc/ck/*.cpp")', 'glob.glob("csrc/**/*.cu", recursive=True)')
    assert "csrc/cuda/a.cu" not in scope_of({"setup.py": setup, **KERNELS}).outside


# ---- a CMake project that does not configure without nvcc; generator scripts ----------------

NVCC_CMAKE = """
project(lib LANGUAGES CXX CUDA)
find_package(CUDAToolkit 12.0 REQUIRED)
file(GLOB KERNELS ./src/*.cu)
add_library(lib SHARED ${KERNELS})
"""
NVCC_TREE = {"csrc/CMakeLists.txt": NVCC_CMAKE, "csrc/src/k.cu": '#include "lib/used.cuh"\n',
             "csrc/include/lib/used.cuh": "", "csrc/include/lib/generated_only.cuh": "",
             "csrc/include/lib/unused.cu": ""}
ROCM_ROUTE = {"pkg/device.py": "import torch\n\ndef is_rocm():\n    return bool(torch.version.hip)\n\nif torch.version.hip:\n    BACKEND = 'flex'\n"}


def test_nvcc_only_cmake_project_is_outside_when_the_package_has_a_rocm_route():
    scope = scope_of({**NVCC_TREE, **ROCM_ROUTE})
    assert scope.verdict("csrc/src/k.cu").nvcc and scope.verdict("csrc/src/k.cu").line == 4
    assert scope.verdict("csrc/include/lib/used.cuh").via == "csrc/src/k.cu"
    # a header nothing includes, in the project's folder: the project's (its generated sources)
    assert scope.verdict("csrc/include/lib/generated_only.cuh").unused
    # a compiled source nothing lists is not claimed
    assert scope.verdict("csrc/include/lib/unused.cu") is None


def test_nvcc_only_cmake_project_needs_a_rocm_route_and_no_hip():
    # a CUDA-only package (nothing tests for AMD's stack): entirely in scope
    assert scope_of(NVCC_TREE).outside == {}
    # `hip` in a comment or a string is no ROCm route
    assert scope_of({**NVCC_TREE, "pkg/a.py": "# TODO: hip support\nNAME = 'rocm'\n"}).outside == {}
    # the project enables HIP in a leg, or names ROCm in a condition: a ROCm build may configure it
    for change in ("if(USE_ROCM)\n  enable_language(HIP)\nendif()\n", "if(ROCM_PATH)\n  message(STATUS x)\nendif()\n"):
        tree = {**NVCC_TREE, **ROCM_ROUTE, "csrc/CMakeLists.txt": NVCC_CMAKE + change}
        assert scope_of(tree).outside == {}, change
    # CUDA enabled only inside an if() leg: it configures without nvcc
    tree = {**NVCC_TREE, **ROCM_ROUTE, "csrc/CMakeLists.txt": NVCC_CMAKE.replace("CXX CUDA", "CXX") + "if(WITH_CUDA)\n  enable_language(CUDA)\nendif()\n"}
    assert scope_of(tree).outside == {}
    # a comment naming HIP does not make it configure
    tree = {**NVCC_TREE, **ROCM_ROUTE, "csrc/CMakeLists.txt": "# no HIP here; see ROCm docs\n" + NVCC_CMAKE}
    assert "csrc/src/k.cu" in scope_of(tree).outside


GEN_CMAKE = CMAKE.replace('  file(GLOB MORE "csrc/cuda/b*.cu")\n',
                          '  set(GEN ${CMAKE_CURRENT_SOURCE_DIR}/gen/write.py)\n  execute_process(COMMAND python ${GEN})\n'
                          '  file(GLOB MORE "csrc/gen_*.cu")\n')
GEN_TREE = {"CMakeLists.txt": GEN_CMAKE, **KERNELS, "gen/write.py": 'HEAD = """\n#include "template.h"\n"""\n',
            "csrc/gen/template.h": "", "csrc/other/template.h": ""}


def test_generator_run_only_in_the_cuda_leg_takes_its_includes_along():
    scope = scope_of(GEN_TREE)
    # the generator's include resolves to every header of that name (it writes its sources anywhere)
    assert scope.verdict("csrc/gen/template.h").via == "gen/write.py"
    assert "gen/write.py generates, which CMakeLists.txt:10 runs only" in scope.verdict("csrc/other/template.h").where()
    # run where a ROCm build goes too: its includes are in scope
    both = GEN_CMAKE.replace("  set(GEN ${CMAKE_CURRENT_SOURCE_DIR}/gen/write.py)\n", "") \
        .replace('set(SRCS "csrc/shared.cu")', 'set(SRCS "csrc/shared.cu")\nset(GEN ${CMAKE_CURRENT_SOURCE_DIR}/gen/write.py)')
    assert scope_of({**GEN_TREE, "CMakeLists.txt": both}).verdict("csrc/gen/template.h") is None
    # a header another in-scope file includes stays in scope
    tree = {**GEN_TREE, "csrc/shared.cu": '#include "gen/template.h"\n'}
    assert scope_of(tree).verdict("csrc/gen/template.h") is None


# ---- JIT builds: Python modules that compile an extension when they run (issue 25) ---------

JIT_REFUSED = '''
from pathlib import Path
import torch
from torch.utils.cpp_extension import load
from .rocm import IS_ROCM


def _root():
    return Path(__file__).resolve().parents[2] / "csrc" / "marlin"


def _sources(tag):
    root = _root()
    out = [str(root / f"entry_{tag}.cu")]
    out.extend(str(p) for p in sorted(root.glob(f"kernel_{tag}_*.cu")))
    return out


def _error():
    if IS_ROCM:
        return "Marlin is not supported on ROCm."
    return ""


EXT = SomeJitExtension(name="marlin", sources=lambda: _sources("fp16"))


def load_marlin():
    if _error():
        raise RuntimeError(_error())
    return load(name="m", sources=_sources("bf16"))
'''
JIT_KERNELS = {"csrc/marlin/entry_fp16.cu": '#include "mma.h"\n', "csrc/marlin/entry_bf16.cu": "",
               "csrc/marlin/kernel_fp16_a.cu": "", "csrc/marlin/kernel_fp16_b.cu": "",
               "csrc/marlin/kernel_int8_a.cu": "", "csrc/marlin/mma.h": ""}


def jit_tree(loader: str, **more) -> dict[str, str]:
    return {"pkg/ops/marlin.py": loader, "pkg/ops/rocm.py": "import torch\nIS_ROCM = torch.version.hip is not None\n",
            **JIT_KERNELS, **more}


def test_jit_loader_that_refuses_rocm_takes_its_sources_and_their_headers_out():
    scope = scope_of(jit_tree(JIT_REFUSED))
    for rel in ("csrc/marlin/entry_fp16.cu", "csrc/marlin/entry_bf16.cu", "csrc/marlin/kernel_fp16_a.cu",
                "csrc/marlin/kernel_fp16_b.cu"):
        verdict = scope.verdict(rel)
        assert verdict is not None and verdict.build == "pkg/ops/marlin.py", rel
        assert verdict.refusal == "pkg/ops/marlin.py:20"  # the `if IS_ROCM:` that refuses
        assert "JIT build at pkg/ops/marlin.py:" in verdict.where()
    # the glob's pattern is built from the argument the lambda passes: int8 kernels are not listed
    assert scope.verdict("csrc/marlin/kernel_int8_a.cu") is None
    assert scope.verdict("csrc/marlin/mma.h").via == "csrc/marlin/entry_fp16.cu"


def test_jit_loader_refusal_forms():
    for refusal in ("    if IS_ROCM:\n        raise RuntimeError('no')\n",
                    "    if torch.version.hip:\n        return False\n",
                    "    assert not IS_ROCM, 'CUDA only'\n",
                    "    if not IS_ROCM:\n        pass\n    else:\n        raise ImportError('x')\n"):
        loader = JIT_REFUSED.replace('    if IS_ROCM:\n        return "Marlin is not supported on ROCm."\n', refusal)
        assert "csrc/marlin/entry_fp16.cu" in scope_of(jit_tree(loader)).outside, refusal


def test_jit_loader_near_misses_keep_their_sources_in():
    refusal = '    if IS_ROCM:\n        return "Marlin is not supported on ROCm."\n'
    for change in (
        # the refusal only warns: the build goes on
        "    if IS_ROCM:\n        warnings.warn('untested on ROCm')\n",
        # a partial test (ROCm and an old torch): some ROCm builds go on
        "    if IS_ROCM and not TORCH_NEW:\n        raise RuntimeError('old torch')\n",
        # PyTorch's device type is "cuda" on ROCm too: not a test for AMD's stack
        "    if device.type != 'cuda':\n        raise ValueError('needs a GPU')\n",
        # a bare return skips a step, it does not refuse
        "    if IS_ROCM:\n        return\n",
    ):
        loader = JIT_REFUSED.replace(refusal, change)
        assert scope_of(jit_tree(loader)).outside == {}, change
    # a refusal beside a leg of its own that runs on ROCm (its flags): the module supports ROCm
    loader = JIT_REFUSED + "\nFLAGS = ['-DUSE_ROCM'] if IS_ROCM else []\n"
    assert scope_of(jit_tree(loader)).outside == {}


def test_a_rocm_capable_jit_build_of_the_same_file_keeps_it_in():
    awq = ("import os\nfrom torch.utils.cpp_extension import load\n"
           "def build():\n    here = os.path.dirname(__file__)\n"
           "    return load('awq', [os.path.join(here, '..', '..', 'csrc', 'marlin', 'entry_fp16.cu')])\n")
    scope = scope_of(jit_tree(JIT_REFUSED, **{"pkg/ops/awq.py": awq}))
    assert scope.verdict("csrc/marlin/entry_fp16.cu") is None
    assert scope.verdict("csrc/marlin/mma.h") is None  # its includer is in the ROCm build now
    assert scope.verdict("csrc/marlin/entry_bf16.cu") is not None
    # a path relative to the working folder: any file whose path ends so may be the one
    relative = "from torch.utils.cpp_extension import load\nload('k', ['marlin/kernel_fp16_a.cu'])\n"
    scope = scope_of(jit_tree(JIT_REFUSED, **{"tools/build.py": relative}))
    assert scope.verdict("csrc/marlin/kernel_fp16_a.cu") is None
    assert scope.verdict("csrc/marlin/kernel_fp16_b.cu") is not None


def test_an_unread_jit_list_that_may_run_on_rocm_keeps_jit_sources_in_not_build_file_ones():
    unread = "from torch.utils.cpp_extension import load\nload('k', sources=find_sources())\n"
    tree = jit_tree(JIT_REFUSED, **{"tools/build.py": unread, "setup.py": SETUP}, **KERNELS)
    scope = scope_of(tree)
    assert scope.verdict("csrc/marlin/entry_fp16.cu") is None
    assert scope.verdict("csrc/cuda/a.cu") is not None  # setup.py's evidence stands
    # the same unread list in a module that refuses ROCm says nothing either way
    refused = unread.replace("load('k'", "if IS_ROCM:\n    raise ImportError('no')\nload('k'")
    scope = scope_of(jit_tree(JIT_REFUSED, **{"tools/build.py": "IS_ROCM = 0\n" + refused}))
    assert scope.verdict("csrc/marlin/entry_fp16.cu") is not None


def test_a_module_without_a_jit_build_is_not_read_as_one():
    other = "import torch\nx = torch.load('w.pt', 'cpu')\nif IS_ROCM:\n    raise RuntimeError('no')\n"
    scope = scope_of(jit_tree(JIT_REFUSED.replace("load(name=", "other_load(name=").replace(
        'EXT = SomeJitExtension(name="marlin", sources=lambda: _sources("fp16"))', ""), **{"pkg/x.py": other}))
    assert scope.outside == {}


# ---- #includes an AMD build skips by a condition that names the vendor -----------------------

GUARDED = {
    "csrc/topk.cu": '#ifndef USE_ROCM\n  #include "persistent.cuh"\n#endif\n#include "both.cuh"\n',
    "csrc/persistent.cuh": '#include "histogram.cuh"\n',
    "csrc/histogram.cuh": "",
    "csrc/both.cuh": "",
    "csrc/other.cu": ('#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n#include "arch.cuh"\n#endif\n'
                      '#ifdef FAST\n#include "fast.cuh"\n#endif\n#ifdef USE_ROCM\n#include "hip_side.cuh"\n#endif\n'
                      '#if !defined(__HIP_PLATFORM_AMD__)\n#include "both.cuh"\n#endif\n'),
    "csrc/arch.cuh": "", "csrc/fast.cuh": "", "csrc/hip_side.cuh": "",
}


def test_a_header_included_only_where_amd_builds_do_not_go_is_outside():
    # a package with no ROCm route at all (nothing tests for AMD's stack): not read
    assert scope_of(GUARDED).outside == {}
    tree = {**GUARDED, **ROCM_ROUTE}
    scope = scope_of(tree)
    verdict = scope.verdict("csrc/persistent.cuh")
    assert (verdict.build, verdict.line, verdict.guard) == ("csrc/topk.cu", 2, "#ifndef USE_ROCM")
    assert "inside `#ifndef USE_ROCM`" in verdict.where()
    assert scope.verdict("csrc/histogram.cuh").via == "csrc/persistent.cuh"
    # included outside the guard too, under an arch or project macro, or on the HIP side: in
    for rel in ("csrc/both.cuh", "csrc/arch.cuh", "csrc/fast.cuh", "csrc/hip_side.cuh", "csrc/topk.cu"):
        assert scope.verdict(rel) is None, rel
    # a second includer that includes it unguarded keeps it in
    scope = scope_of({**tree, "csrc/more.cu": '#include "persistent.cuh"\n'})
    assert scope.verdict("csrc/persistent.cuh") is None and scope.verdict("csrc/histogram.cuh") is None
