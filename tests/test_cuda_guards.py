"""The preprocessor-guard map evaluated for an AMD build, and the execution-space map."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from portlint.frontends.cuda.guards import GuardMap, guard_map


def file_ctx(path: Path, settings=None):
    """The context the engine gives a file on disk, in a scan of its own."""
    from portlint.core import session
    from portlint.core.config import Settings
    from portlint.index.context import FileContext

    settings = settings or Settings(root=path.parent)
    ctx = FileContext(path.name, path.read_bytes(), "cuda", frozenset(), settings)
    ctx.real_path = path
    ctx.session = session.begin(settings)
    return ctx


def gm(src: str, **kw) -> GuardMap:
    return GuardMap(textwrap.dedent(src).lstrip("\n"), **kw)


def line_of(src: str, marker: str) -> int:
    for n, line in enumerate(textwrap.dedent(src).lstrip("\n").split("\n"), start=1):
        if marker in line:
            return n
    raise AssertionError(marker)


def dead(src: str, marker: str, **kw):
    return gm(src, **kw).dead_for_amd(line_of(src, marker))


@pytest.mark.parametrize("cond", [
    "#ifndef USE_ROCM", "#if !defined(USE_ROCM)", "#ifndef __HIP_PLATFORM_AMD__", "#if !defined(__HIPCC__)",
    "#if defined(__HIP_PLATFORM_NVIDIA__)", "#ifdef __CUDA_ARCH__", "#if __CUDA_ARCH__ >= 800",
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900", "#if CUDA_VERSION >= 12000", "#if !defined(GGML_USE_HIP)",
    "#if !defined(__HIP__) && !defined(USE_ROCM)", "#ifdef __NVCC__", "#if 0x1 - 1",
])
def test_nvidia_only_branch_with_else_is_ported(cond):
    src = f"""
    {cond}
      nvidia();
    #else
      hip();
    #endif
    """
    g = dead(src, "nvidia")
    assert g is not None and g.has_alternative, cond
    assert dead(src, "hip()") is None


@pytest.mark.parametrize("cond", ["#ifdef USE_ROCM", "#if defined(__HIP_PLATFORM_AMD__)", "#ifdef __HIPCC__", "#if __HIP__", "#ifdef GGML_USE_HIP", "#if defined(__HIP_DEVICE_COMPILE__)"])
def test_amd_branch_is_live(cond):
    src = f"""
    {cond}
      hip();
    #else
      nvidia();
    #endif
    """
    assert dead(src, "hip()") is None
    assert dead(src, "nvidia").has_alternative


def test_guard_without_alternative_is_dead_but_still_reported():
    src = """
    #ifndef USE_ROCM
      nvidia();
    #endif
    """
    g = dead(src, "nvidia")
    assert g is not None and not g.has_alternative
    assert "no alternative" in g.reason()


def test_elif_chains_pick_one_live_branch():
    src = """
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      hopper();
    #elif defined(USE_ROCM)
      rocm();
    #elif __CUDA_ARCH__ >= 800
      ampere();
    #else
      fallback();
    #endif
    """
    assert dead(src, "hopper").has_alternative
    assert dead(src, "rocm()") is None
    assert dead(src, "ampere") is not None  # a live branch came first
    assert dead(src, "fallback") is not None


def test_else_after_an_unknown_if_and_an_amd_elif_is_dead():
    """DeepSpeed's gemm_test.h shape: the #if is a project flag (unknown), the #elif holds for
    AMD; whichever of the two is compiled, the #else never is."""
    src = """
    #if defined(MY_PROJECT_FLAG)
      project();
    #elif defined(__HIP_PLATFORM_AMD__)
      hip();
    #elif defined(USE_ROCM)
      rocm_again();
    #else
      cuda();
    #endif
    """
    g = gm(src)
    assert g.unknown_for_amd(line_of(src, "project")) and g.unknown_for_amd(line_of(src, "hip()"))
    assert dead(src, "rocm_again") is not None  # an earlier branch is compiled
    guard = dead(src, "cuda()")
    assert guard is not None and guard.has_alternative


def test_unknown_project_macro_is_neither_live_nor_dead():
    src = """
    #ifdef MY_PROJECT_FAST_PATH
      fast();
    #else
      slow();
    #endif
    """
    g = gm(src)
    assert g.dead_for_amd(line_of(src, "fast")) is None and g.unknown_for_amd(line_of(src, "fast"))
    assert g.dead_for_amd(line_of(src, "slow")) is None and g.unknown_for_amd(line_of(src, "slow"))


def test_macro_defined_only_in_a_dead_branch_counts_as_undefined():
    src = """
    #ifndef USE_ROCM
    #define HAS_NV_SHFL 1
    #endif
    #ifdef HAS_NV_SHFL
      nvidia();
    #else
      hip();
    #endif
    """
    assert dead(src, "nvidia").has_alternative
    assert dead(src, "hip()") is None


def test_project_macro_defined_in_a_live_branch_counts():
    src = """
    #if defined(__HIP_PLATFORM_AMD__)
    #define MY_WAVE 64
    #else
    #define MY_WAVE 32
    #endif
    #if MY_WAVE == 64
      wave64();
    #else
      wave32();
    #endif
    """
    assert dead(src, "wave64()") is None
    assert dead(src, "wave32()").has_alternative


def test_undef_in_a_live_branch_undefines_from_there_on():
    src = """
    #define USE_FAST 1
    #undef USE_FAST
    #ifdef USE_FAST
      fast();
    #else
      slow();
    #endif
    """
    assert dead(src, "fast()") is not None
    assert dead(src, "slow()") is None


def test_undef_of_a_compiler_macro_is_followed():
    src = """
    #undef __HIP_PLATFORM_AMD__
    #ifdef __HIP_PLATFORM_AMD__
      hip();
    #endif
    """
    assert dead(src, "hip()") is not None


def test_if_zero_is_dead_in_every_build():
    src = """
    #if 0
      old();
    #endif
    """
    g = dead(src, "old")
    assert g is not None and g.never and g.has_alternative and "never compiled" in g.reason()


def test_directives_inside_block_comments_are_not_directives():
    src = """
    /*
    #ifndef USE_ROCM
    */
      code();
    /* #endif */
    """
    assert dead(src, "code()") is None


def test_continued_directive_lines():
    src = """
    #if !defined(USE_ROCM) && \\
        !defined(__HIP_PLATFORM_AMD__)
      nvidia();
    #else
      hip();
    #endif
    """
    assert dead(src, "nvidia").has_alternative
    assert dead(src, "hip()") is None


def test_nested_groups_keep_the_outer_reason():
    src = """
    #ifndef USE_ROCM
    #if __CUDA_ARCH__ >= 800
      inner();
    #else
      inner_else();
    #endif
    #else
      hip();
    #endif
    """
    assert dead(src, "inner()").condition == "#ifndef USE_ROCM"
    assert dead(src, "inner_else").condition == "#ifndef USE_ROCM"


def test_line_numbers_survive_form_feeds_and_crlf():
    src = "// a\f b\r\n#ifndef USE_ROCM\r\n  nvidia();\r\n#else\r\n  hip();\r\n#endif\r\n"
    g = GuardMap(src)
    assert g.dead_for_amd(3) is not None and g.dead_for_amd(5) is None


def test_include_guard_body_is_live():
    src = """
    #ifndef MY_HEADER_H
    #define MY_HEADER_H
    #define WARP 32
    #endif
    """
    g = gm(src)
    assert g.macro_state("WARP", 99) == 32


def test_vendor_shim_is_recognised():
    src = """
    #if defined(__HIP_PLATFORM_AMD__)
    #define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)
    #endif
    """
    assert gm(src).defines_for_amd("__shfl_xor_sync")
    nv = """
    #ifndef USE_ROCM
    #define __shfl_xor_sync(mask, var, laneMask, width) something(var)
    #endif
    """
    assert not gm(nv).defines_for_amd("__shfl_xor_sync")


def test_header_next_to_the_file_defines_project_macros(tmp_path: Path):
    """llama.cpp's HIP vendor header defines __CUDA_ARCH__ for HIP: then `__CUDA_ARCH__ >= N`
    is live on ROCm, and the header's own GGML_USE_HIP branch chooses the values."""
    (tmp_path / "vendors").mkdir()
    (tmp_path / "vendors" / "hip.h").write_text(textwrap.dedent("""
        #pragma once
        #define __CUDA_ARCH__ 1300
        #define WARP_SIZE_PHYS 64
        #define HIP_DISABLE_WARP_SYNC_BUILTINS 1
    """))
    (tmp_path / "common.cuh").write_text(textwrap.dedent("""
        #pragma once
        #if defined(GGML_USE_HIP)
        #include "vendors/hip.h"
        #else
        #define NV_ONLY 1
        #endif
    """))
    src = textwrap.dedent("""
        #include "common.cuh"
        #if __CUDA_ARCH__ >= 800
          arch_path();
        #else
          other();
        #endif
        #ifdef NV_ONLY
          nv();
        #endif
    """).lstrip("\n")
    main = tmp_path / "k.cu"
    main.write_text(src)
    g = file_ctx(main).fact(guard_map)
    assert g.dead_for_amd(line_of(src, "arch_path")) is None  # live: the header defined __CUDA_ARCH__
    assert g.dead_for_amd(line_of(src, "other()")) is not None
    assert g.dead_for_amd(line_of(src, "nv()")) is not None
    assert g.header_values().get("WARP_SIZE_PHYS") == 64


def test_unparseable_condition_is_unknown_not_dead():
    src = """
    #if __has_include(<cuda_fp8.h>) && FOO(1, 2)
      maybe();
    #endif
    """
    assert dead(src, "maybe") is None


# ---- execution spaces ---------------------------------------------------------------------

def _spaces(src: str):
    from portlint.core.config import Settings
    from portlint.index.context import FileContext
    from portlint.frontends.cuda.spaces import space_map

    ctx = FileContext("x.cu", textwrap.dedent(src).encode(), "cuda", frozenset(), Settings())
    return ctx, ctx.fact(space_map)


def _is_device_at(src: str, marker: str) -> bool:
    ctx, smap = _spaces(src)
    offset = ctx.data.index(marker.encode())
    return smap.is_device_byte(offset)


def test_device_code_includes_qualifier_macros_and_callees():
    src = """
    #define DEVICE_INLINE __device__ __forceinline__
    DEVICE_INLINE float a(float x) { return x + 1.f; /*A*/ }
    CUTLASS_HOST_DEVICE float b(float x) { return x; /*B*/ }
    template <typename T> T helper(T v) { return v; /*H*/ }
    struct Op { float apply(float v) const { return v; /*M*/ } };
    __global__ void k(float* y) { Op op; y[0] = a(helper(1.f)) + b(2.f) + op.apply(3.f); }
    float host_only(float v) { return v; /*X*/ }
    int main() { return (int)host_only(1.f); }
    """
    assert _is_device_at(src, "/*A*/")
    assert _is_device_at(src, "/*B*/")
    assert _is_device_at(src, "/*H*/")
    assert _is_device_at(src, "/*M*/")
    assert not _is_device_at(src, "/*X*/")


def test_device_lambda_is_device_code():
    src = """
    void launch() {
      auto f = [] __device__ (int i) { return i * 2; /*L*/ };
      int h = 3; /*HOST*/
    }
    """
    assert _is_device_at(src, "/*L*/")
    assert not _is_device_at(src, "/*HOST*/")
