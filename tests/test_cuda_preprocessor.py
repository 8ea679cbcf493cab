"""The preprocessor model (one tokenizer, one evaluator per platform), project platform
macros, and the include graph shared by every consumer."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, scan_paths
from oracles import hipcc_compile

from portlint.core.config import ConfigError, Settings, load_config
from portlint.frontends.cuda.guards import AMD, NVIDIA, SM90, GuardMap
from portlint.frontends.cuda.platform_macros import by_name, infer
from portlint.frontends.cuda.preprocessor import choose, directives, evaluate


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def line_of(text: str, marker: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), start=1) if marker in line)


def gmap(text: str, platform=AMD, config=()) -> GuardMap:
    found = directives(text)
    return GuardMap(text, platform=platform, platform_macros=infer(found, text.split("\n"), config), file_directives=found)


# ---- tokenizer and evaluator ----------------------------------------------------------------

def test_directives_join_continuations_and_skip_comments():
    text = src("""
    /* #if 0 */
    #  if defined(A) && \\
         B > 2  // trailing
    #include <x.h>
    // #define NOT_ONE 1
    #endif
    """)
    kinds = [(d.first, d.last, d.kind, " ".join(d.rest.split())) for d in directives(text)]
    assert kinds == [(2, 3, "if", "defined(A) && B > 2"), (4, 4, "include", "<x.h>"), (6, 6, "endif", "")]


@pytest.mark.parametrize("expr, amd, sm90", [
    ("__CUDA_ARCH__ >= 800", False, True),
    ("defined(__HIP_PLATFORM_AMD__)", True, False),
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900", False, False),
    ("__CUDA_ARCH__ >= 900 || defined(USE_ROCM)", True, True),
    ("MY_FLAG", None, None),
])
def test_one_evaluator_answers_for_each_platform(expr, amd, sm90):
    def state(platform):
        def macro(name):
            if name in platform.defined:
                v = platform.defined[name]
                return True if v is None else v
            return False if name in platform.undefined else "unknown"
        return macro

    assert evaluate(expr, state(AMD)) is amd
    assert evaluate(expr, state(SM90)) is sm90


def test_choose_picks_the_branch_each_build_takes():
    text = src("""
    #if __CUDA_ARCH__ >= 900
      hopper();
    #elif defined(__HIP_PLATFORM_AMD__)
      amd();
    #else
      other();
    #endif
    """)
    conds = [(d.kind, d.rest, d.first) for d in directives(text)[:-1]]
    assert choose(conds, gmap(text, AMD).evaluate) == 1
    assert choose(conds, gmap(text, SM90).evaluate) == 0


def test_sm90_and_amd_maps_of_one_file():
    text = src("""
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      wgmma();
    #else
      fallback();
    #endif
    """)
    assert gmap(text, SM90).dead_at(line_of(text, "wgmma")) is None
    assert gmap(text, SM90).dead_at(line_of(text, "fallback")) is not None
    assert gmap(text, AMD).dead_at(line_of(text, "wgmma")) is not None
    # the NVIDIA map covers both nvcc passes: the arch test is unknown there
    assert gmap(text, NVIDIA).dead_at(line_of(text, "wgmma")) is None


# ---- project platform macros ----------------------------------------------------------------

@pytest.mark.parametrize("name, side", [
    ("FOO_WITH_HIP", "amd"), ("BAR_USE_HIP_BUILD", "amd"), ("ENABLE_ROCM", "amd"), ("MYLIB_AMD", "amd"),
    ("BUILD_FOR_NVIDIA", "nvidia"), ("NO_HIP_FAST_PATH", None), ("DISABLE_ROCM", None), ("HIP_SHIMS_H", None),
    ("SHIP_IT", None), ("CUDA_OR_HIP_NVIDIA", None), ("__HIPCC_RTC__", None), ("__HIP_PLATFORM_SPIRV__", None),
])
def test_platform_macro_by_name(name, side):
    found = by_name(name)
    assert (found.side if found else None) == side


def test_branch_holding_hip_code_makes_an_amd_macro_and_the_reason_says_why():
    text = src("""
    #ifdef PORTED
    #include <hip/hip_runtime.h>
    #else
      cuda_only();
    #endif
    """)
    guard = gmap(text).dead_at(line_of(text, "cuda_only"))
    assert guard is not None and guard.has_alternative
    assert "`PORTED` read as an AMD build macro (its branch at line 2 holds HIP code: `#include <hip/`)" in guard.reason()


def test_hip_code_in_the_other_branch_makes_an_nvidia_macro():
    text = src("""
    #ifdef GPU_BACKEND_X
      nvidia_path();
    #else
      hipLaunchKernelGGL(k, 1, 1, 0, 0);
    #endif
    """)
    g = gmap(text)
    assert g.dead_at(line_of(text, "nvidia_path")) is not None
    assert g.dead_at(line_of(text, "hipLaunch")) is None
    assert "NVIDIA-only build macro" in g.dead_at(line_of(text, "nvidia_path")).reason()


def test_unknown_project_macro_without_evidence_stays_unknown():
    text = src("""
    #ifdef FAST_PATH
      fast();
    #else
      slow();
    #endif
    """)
    g = gmap(text)
    assert g.dead_at(line_of(text, "fast")) is None and g.unknown_for_amd(line_of(text, "fast"))


def test_config_adds_and_blocks_platform_macros():
    text = src("""
    #ifndef MYPROJ_PORT
      cuda_only();
    #else
      other();
    #endif
    #ifndef FOO_WITH_HIP
      cuda_two();
    #else
      other_two();
    #endif
    """)
    g = gmap(text, config=("MYPROJ_PORT", "!FOO_WITH_HIP"))
    assert "named in amd-macros of the config" in g.dead_at(line_of(text, "cuda_only")).reason()
    assert g.dead_at(line_of(text, "cuda_two")) is None and g.unknown_for_amd(line_of(text, "cuda_two"))


def test_a_macro_the_file_defines_is_not_inferred():
    text = src("""
    #define USE_HIP_ATOMICS 0
    #if USE_HIP_ATOMICS
      hip_atomics();
    #else
      cuda_atomics();
    #endif
    """)
    g = gmap(text)
    assert g.dead_at(line_of(text, "hip_atomics")) is not None
    assert g.dead_at(line_of(text, "cuda_atomics")) is None


def test_amd_macros_config_key(tmp_path):
    cfg = tmp_path / "portlint.toml"
    cfg.write_text('amd-macros = ["FOO_PORT", "!BAR_HIP"]\ninclude-dirs = ["include"]\n')
    s = load_config(cfg, Settings())
    assert s.amd_macros == ("FOO_PORT", "!BAR_HIP") and s.include_dirs == ("include",)
    cfg.write_text('amd-macros = ["not a name"]\n')
    with pytest.raises(ConfigError, match="amd-macros"):
        load_config(cfg, Settings())
    cfg.write_text("include-dirs = 3\n")
    with pytest.raises(ConfigError, match="include-dirs"):
        load_config(cfg, Settings())


@pytest.mark.oracle
def test_project_macro_fixture_is_what_its_amd_build_compiles():
    """The CUDA branches the fixture's project macros keep out of the AMD build do not compile
    for gfx90a; with the macros defined, as the project's AMD build defines them, it does:
    the suppressed findings there are already ported."""
    fixture = FIXTURES / "cuda_warp" / "project_platform_macros.cu"
    ok, out = hipcc_compile(fixture)
    assert not ok and "__shfl_xor_sync" in out and "__ballot_sync" in out
    ok, out = hipcc_compile(fixture, ("-DPORTED_BUILD", "-DBAR_USE_HIP_BUILD", "-DFOO_WITH_HIP"))
    assert ok, out


def test_project_switch_is_true_as_a_value_not_as_a_number():
    """An inferred AMD switch (`FOO_USE_HIP`) holds in `#if FOO_USE_HIP` for the AMD build,
    not for the NVIDIA one, and stays unknown when compared with a number."""
    from portlint.frontends.cuda.guards import GuardMap
    from portlint.frontends.cuda.platform_macros import infer
    from portlint.frontends.cuda.preprocessor import NVIDIA, directives

    src = "#if FOO_USE_HIP\nint a;\n#else\nint b;\n#endif\n#if FOO_HIP_VERSION >= 6\nint c;\n#endif\n"
    macros = infer(directives(src), src.split("\n"))
    amd = GuardMap(src, platform_macros=macros)
    assert amd.dead_for_amd(2) is None and amd.dead_for_amd(4) is not None and amd.dead_for_amd(4).has_alternative
    assert amd.dead_for_amd(7) is None and amd.unknown_for_amd(7)
    nvidia = GuardMap(src, platform=NVIDIA, platform_macros=macros)
    assert nvidia.dead_at(2) is not None and nvidia.dead_at(4) is None


@pytest.mark.oracle
@pytest.mark.parametrize("name, defines, failing", [
    # every NVIDIA-only line is one the AMD build skips: nothing fails for gfx90a
    ("vendor_exclusion.cu", (), ()),
    # the vendor header sets __CUDA_ARCH__ 1300 for AMD: `>= 900` is compiled, `== 1210` is not
    ("vendor_arch.cu", (), ("vendor_arch.cu:16",)),
    # headers included under a vendor test: the AMD build reads vendor_arch.h only
    ("vendor_select.cu", (), ("vendor_select.cu:20",)),
    # the project's switch selects the HIP branch; a version below 60000 selects the PTX
    ("project_switch.cu", ("-DVXLIB_USE_HIP=1", "-DVXLIB_HIP_VERSION=50000"), ("project_switch.cu:22",)),
])
def test_vendor_guard_fixtures_are_what_an_amd_build_compiles(name, defines, failing):
    """The suppressed lines of the vendor-guard fixtures are ones hipcc for gfx90a does not
    compile; the reported ones it compiles and rejects."""
    import re

    ok, out = hipcc_compile(FIXTURES / "cuda_ptx" / name, defines)
    errors = sorted(set(re.findall(r"([\w.]+\.cu:\d+):\d+: error", out)))
    assert errors == sorted(failing), out
    assert ok == (not failing)


def test_excluded_from_amd_names_the_vendor_and_follows_derived_macros(tmp_path: Path):
    """A line an AMD build skips is excluded on purpose when a condition names the vendor,
    directly or through a macro #defined only where AMD builds do not reach; not when it
    skips it only for want of __CUDA_ARCH__."""
    from portlint.frontends.cuda.guards import excluded_from_amd
    from test_cuda_guards import file_ctx

    (tmp_path / "feat.h").write_text("#pragma once\n#ifndef USE_ROCM\n#define FAST_PATH 1\n#endif\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "feat.h"\n#ifndef USE_ROCM\nint a;\n#endif\n#ifdef FAST_PATH\nint b;\n#endif\n'
                   "#if __CUDA_ARCH__ >= 800\nint c;\n#endif\n#if __CUDA_ARCH__ >= 800 && !defined(__HIP_PLATFORM_AMD__)\nint d;\n#endif\n")
    ctx = file_ctx(src)
    a, b, c, d = (excluded_from_amd(ctx, n) for n in (3, 6, 9, 12))
    assert a is not None and "excluded from AMD builds by `#ifndef USE_ROCM`" in a[0].excluded_reason(a[1])
    assert b is not None and "`FAST_PATH` is #defined only where an AMD build does not reach" in b[1]
    assert c is None
    assert d is not None


# ---- the include graph ----------------------------------------------------------------------

def test_one_graph_serves_guards_names_and_constants(tmp_path: Path):
    """A header found through include-dirs (angled include) gives the guard map its macros,
    the names check its shim, and the warp rules its constant."""
    inc = tmp_path / "include" / "proj"
    inc.mkdir(parents=True)
    (inc / "config.h").write_text("#pragma once\n#define GROUP_LANES 32\n#include \"shim.h\"\n")
    (inc / "shim.h").write_text("#pragma once\n#define __trap() abort()\n")
    kernel = tmp_path / "src" / "k.cu"
    kernel.parent.mkdir()
    kernel.write_text(src("""
    #include <proj/config.h>
    __global__ void k(float* y) {
      y[threadIdx.x % GROUP_LANES] = 1.f;
      __trap();
    }
    """))
    with_dirs = scan_paths([kernel], root=tmp_path, select=("PTL1", "PTL2"), include_dirs=(str(tmp_path / "include"),))
    assert [(f.span.start_line, f.rule_id) for f in with_dirs.findings] == [(3, "PTL102")]
    without = scan_paths([kernel], root=tmp_path, select=("PTL1", "PTL2"))
    assert [(f.span.start_line, f.rule_id) for f in without.findings] == [(4, "PTL204")]


def test_include_cycle_back_to_the_scanned_file_does_not_define_its_guard(tmp_path: Path):
    (tmp_path / "a.h").write_text("#ifndef A_H\n#define A_H\n#include \"b.h\"\n__device__ void f() { __trap(); }\n#endif\n")
    (tmp_path / "b.h").write_text("#ifndef B_H\n#define B_H\n#include \"a.h\"\n#endif\n")
    res = scan_paths([tmp_path / "a.h"], root=tmp_path, select=("PTL204",))
    assert [(f.path, f.span.start_line) for f in res.findings] == [("a.h", 4)]


def test_no_module_level_header_memos_remain():
    import portlint.frontends.cuda.guards as guards
    import portlint.analyses.cuda.hipify as hipify
    import portlint.frontends.cuda.libclang_pass as lp
    import portlint.frontends.cuda.symbols as symbols
    import portlint.pipeline.engine as engine

    assert not hasattr(engine, "_forget_file_memos")
    for module in (guards, hipify, lp, symbols):
        assert not hasattr(module, "forget_files")
    assert not hasattr(symbols, "_HEADER_NAMES") and not hasattr(guards, "_HEADER_CACHE") and not hasattr(lp, "_CACHE")


def test_fast_directive_reader_matches_the_reference_reading():
    """`directives` reads only the lines that start with `#` and finds block comments by
    search; it must agree with blanking every comment and trying every logical line."""
    from portlint.frontends.cuda.preprocessor import directives_reference

    tricky = src('''
    #include "a.h" /* one
    #if 0 still a comment */
    #define S "/* not a comment"
    const char* t = "// not one either"; /* a real
    #define HIDDEN 1
    */ #define NOT_A_DIRECTIVE 2
    #if A /* inline */ && \\
        B // tail
    # ifdef X
    #endif
    #else
    #endif
    %:if 0 /* a comment that
       ends here */ || 1
    #\\
    else
    #/**/endif
    const char* r = R"x(
    #if 0
    )x"; int n = 1'000; /* a
    #define HIDDEN_TOO 1 */
    ''')
    for text in (tricky, *(p.read_text(encoding="utf-8", errors="replace") for p in sorted((FIXTURES / "cuda_warp").rglob("*.cu*")))):
        fast = [(d.first, d.last, d.kind, " ".join(d.rest.split())) for d in directives(text)]
        slow = [(d.first, d.last, d.kind, " ".join(d.rest.split())) for d in directives_reference(text)]
        assert fast == slow
    # `*/ #define` after a comment that opened behind code on its line is no directive (the
    # comment is one space, so the `#` is not first on the logical line; g++ -E agrees)
    read = [(d.first, d.last, d.kind, d.rest.split()[:1]) for d in directives(tricky)]
    assert [r[2:] for r in read][:3] == [("include", ['"a.h"']), ("define", ["S"]), ("if", ["A"])]
    assert read[-3:] == [(13, 14, "if", ["0"]), (15, 16, "else", []), (17, 17, "endif", [])]


def test_system_headers_are_in_the_key_but_not_the_projects_macros_or_names(tmp_path: Path):
    """A CUDA toolkit reached through -isystem (or a search folder holding
    cuda_runtime_api.h) defines CUDART_VERSION and inline intrinsics; an AMD build does not
    see them, so they neither decide guards nor make intrinsics the project's own."""
    import json

    toolkit = tmp_path / "cuda" / "include"
    toolkit.mkdir(parents=True)
    (toolkit / "cuda_runtime_api.h").write_text("#pragma once\n#define CUDART_VERSION 12040\n")
    (toolkit / "cuda_runtime.h").write_text('#pragma once\n#include "cuda_runtime_api.h"\n__device__ void __trap() {}\n')
    kernel = tmp_path / "src" / "k.cu"
    kernel.parent.mkdir()
    kernel.write_text(src("""
    #include <cuda_runtime.h>
    __global__ void k() {
    #if CUDART_VERSION >= 12000
      __trap();
    #endif
    }
    """))
    db = tmp_path / "compile_commands.json"
    for flag in ("-isystem", "-I"):
        db.write_text(json.dumps([{"directory": str(kernel.parent), "command": f"nvcc {flag} {toolkit} -c {kernel}", "file": str(kernel)}]))
        res = scan_paths([kernel], root=tmp_path, select=("PTL204",), compile_commands=db)
        # the __trap line is not hidden by the toolkit's definition, and CUDART_VERSION is not
        # defined for AMD: the line is one an AMD build skips (no alternative: still reported)
        assert [(f.span.start_line, f.rule_id) for f in res.findings] == [(4, "PTL204")], flag


def test_an_inferred_macro_is_defined_with_an_unknown_value():
    """DeepSpeed passes -DROCM_WAVEFRONT_SIZE=64 to its ROCm build: the name says ROCm, so
    `defined(ROCM_WAVEFRONT_SIZE)` holds on AMD, but its value is not known."""
    text = src("""
    #if defined(ROCM_WAVEFRONT_SIZE) && ROCM_WAVEFRONT_SIZE == 64
      wave64();
    #endif
    #ifdef ROCM_WAVEFRONT_SIZE
      rocm();
    #else
      cuda();
    #endif
    """)
    g = gmap(text)
    assert g.dead_at(line_of(text, "wave64")) is None and g.unknown_for_amd(line_of(text, "wave64"))
    assert g.dead_at(line_of(text, "rocm")) is None and g.dead_at(line_of(text, "cuda")) is not None
