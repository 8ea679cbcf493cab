"""The wave64 family (PTL101-PTL111): toolchain proofs, fix applicability, header following
and the libclang pass.

Most of these problems are silent: hipcc compiles the 32-lane code and the results are
wrong. For those the oracle shows that hipcc accepts both forms (so no compiler would have
told the user) and that the rewrite compiles for gfx90a (a 64-lane CDNA GPU). Where hipcc can
see the problem (sync intrinsics with 32-bit masks, missing builtins, narrowing under
-Wshorten-64-to-32) the original must fail and the rewrite must compile, on any HIP version."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, scan_paths
from oracles import hipcc_compile, hipcc_device_asm

from portlint.core.config import parse_versions
from portlint.output.fixes import fixed_text

WARP = FIXTURES / "cuda_warp"


def _scan_text(tmp_path: Path, text: str, name: str = "k.cu", **kw):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    kw.setdefault("select", ("PTL1",))
    return scan_paths([path], root=tmp_path, **kw)


def _rules(result):
    return sorted((f.span.start_line, f.rule_id) for f in result.findings if not f.suppressed)


# ---- oracles: hipcc for gfx90a ---------------------------------------------------------

SILENT_PAIRS = {
    # rule: (32-lane original, portable rewrite); both compile, only the second is right on wave64
    "PTL101": (
        "#define WARP_SIZE 32\n__global__ void k(float* y) { y[threadIdx.x % WARP_SIZE] = 1.f; }\n",
        "#define WARP_SIZE warpSize\n__global__ void k(float* y) { y[threadIdx.x % WARP_SIZE] = 1.f; }\n",
    ),
    "PTL102": (
        "__global__ void k(float* y) { int lane = threadIdx.x & 31; int w = threadIdx.x >> 5; y[w * 64 + lane] = 1.f; }\n",
        "__global__ void k(float* y) { int lane = threadIdx.x & (warpSize - 1); int w = threadIdx.x / warpSize; y[w * 64 + lane] = 1.f; }\n",
    ),
    "PTL103": (
        "__global__ void k(float* y) { float v = y[threadIdx.x];\n"
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);\n  y[threadIdx.x] = v; }\n",
        "__global__ void k(float* y) { float v = y[threadIdx.x];\n"
        "  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);\n  y[threadIdx.x] = v; }\n",
    ),
    "PTL106": (
        "__global__ void k(unsigned long long* y) { int lane = __lane_id(); y[threadIdx.x] = (1u << lane) - 1; }\n",
        "__global__ void k(unsigned long long* y) { int lane = __lane_id(); y[threadIdx.x] = (1ull << lane) - 1; }\n",
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("rule", sorted(SILENT_PAIRS))
def test_silent_rules_compile_both_ways_with_hipcc(rule, tmp_path):
    original, rewrite = SILENT_PAIRS[rule]
    ok, out = hipcc_compile(original)
    assert ok, f"{rule}: the 32-lane form was expected to compile silently:\n{out}"
    ok, out = hipcc_compile(rewrite)
    assert ok, f"{rule}: the rewrite does not compile for gfx90a:\n{out}"
    # and portlint sees the original, not the rewrite
    assert rule in {r for _, r in _rules(_scan_text(tmp_path, original))}
    assert rule not in {r for _, r in _rules(_scan_text(tmp_path, rewrite, name="fixed.cu"))}


BALLOT_32 = """
__global__ void k(int* y, const float* x) {
  unsigned votes = __ballot(x[threadIdx.x] > 0.f);
  y[threadIdx.x] = __popc(votes);
}
"""
BALLOT_64 = """
__global__ void k(int* y, const float* x) {
  unsigned long long votes = __ballot(x[threadIdx.x] > 0.f);
  y[threadIdx.x] = __popcll(votes);
}
"""


@pytest.mark.oracle
def test_ballot_narrowing_is_silent_but_visible_with_shorten_warning(tmp_path):
    """PTL105: hipcc's defaults accept the narrowing; -Werror=shorten-64-to-32 exposes it."""
    assert hipcc_compile(BALLOT_32)[0]
    ok, _ = hipcc_compile(BALLOT_32, extra=("-Werror=shorten-64-to-32",))
    assert not ok, "the 32-bit ballot store should narrow a 64-bit value"
    ok, out = hipcc_compile(BALLOT_64, extra=("-Werror=shorten-64-to-32",))
    assert ok, out
    assert {r for _, r in _rules(_scan_text(tmp_path, BALLOT_32))} == {"PTL105"}
    assert not _rules(_scan_text(tmp_path, BALLOT_64, name="ok.cu"))


SYNC_32 = """
__global__ void k(float* y) {
  float v = y[threadIdx.x];
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  y[threadIdx.x] = v;
}
"""
SYNC_PORTED = """
__global__ void k(float* y) {
  float v = y[threadIdx.x];
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_xor(v, o);
  y[threadIdx.x] = v;
}
"""


@pytest.mark.oracle
def test_32_bit_mask_sync_shuffle_fails_and_hip_shuffle_compiles(tmp_path):
    """PTL104: HIP < 6.2 has no __shfl_xor_sync; ROCm >= 7 static_asserts a 64-bit mask. Either
    way the 32-bit form does not compile; the non-sync HIP shuffle does."""
    ok, _ = hipcc_compile(SYNC_32)
    assert not ok
    ok, out = hipcc_compile(SYNC_PORTED)
    assert ok, out
    assert _rules(_scan_text(tmp_path, SYNC_32)) == [(3, "PTL104")]
    assert not _rules(_scan_text(tmp_path, SYNC_PORTED, name="ported.cu"))


OVERLOAD_32 = """
__device__ float up(const unsigned mask, float v, unsigned d) {
  return __shfl_up_sync(mask, v, d);
}
__global__ void k(float* y) { y[threadIdx.x] = up(0xffffffffu, y[threadIdx.x], 1); }
"""
OVERLOAD_PORTED = """
__device__ float up(float v, unsigned d) {
  return __shfl_up(v, d);
}
__global__ void k(float* y) { y[threadIdx.x] = up(y[threadIdx.x], 1); }
"""


@pytest.mark.oracle
def test_32_bit_mask_parameter_of_an_overload_fails_and_hip_shuffle_compiles(tmp_path):
    """PTL104 through a parameter: a wrapper whose signature takes `const unsigned mask` hands
    HIP's `*_sync` a 32-bit mask (undeclared before 6.2, a static_assert from 7.0), so it does
    not compile; reported where the parameter is forwarded and where a caller passes a 32-bit
    mask. The non-sync HIP shuffle compiles and is quiet."""
    ok, _ = hipcc_compile(OVERLOAD_32)
    assert not ok
    ok, out = hipcc_compile(OVERLOAD_PORTED)
    assert ok, out
    assert _rules(_scan_text(tmp_path, OVERLOAD_32)) == [(2, "PTL104"), (4, "PTL104")]
    assert not _rules(_scan_text(tmp_path, OVERLOAD_PORTED, name="ported.cu"))


@pytest.mark.oracle
def test_missing_builtin_fails_and_wave_barrier_compiles(tmp_path):
    """PTL110: `__uni_sync` exists in no HIP; `__builtin_amdgcn_wave_barrier()` replaces __syncwarp."""
    ok, _ = hipcc_compile("__global__ void k(int* y) { y[0] = __uni_sync(~0ull, y[threadIdx.x] > 0); }\n")
    assert not ok
    ok, out = hipcc_compile("__global__ void k(int* y) { y[threadIdx.x] = 1; __builtin_amdgcn_wave_barrier(); y[0] += 1; }\n")
    assert ok, out


@pytest.mark.oracle
def test_compile_time_wave_size_selector_compiles():
    """PTL107/PTL101 rewrite for constant contexts: the __GFX9__ selector (warpSize itself is
    not constexpr on ROCm 7; HIP 5.2 still accepted it, so the failing side has no portable oracle)."""
    src = textwrap.dedent("""
        #if defined(__GFX8__) || defined(__GFX9__)
        #define WAVE 64
        #else
        #define WAVE 32
        #endif
        template <int N> struct Slots { float v[N]; };
        __global__ void k(float* y) {
          __shared__ float partial[WAVE];
          Slots<WAVE> s{};
          partial[threadIdx.x % WAVE] = s.v[0];
          y[threadIdx.x] = partial[0];
        }
    """)
    ok, out = hipcc_compile(src)
    assert ok, out


@pytest.mark.oracle
def test_fixed_fixture_kernels_compile_with_hipcc(tmp_path):
    """The fixed fixtures, with the HIP shuffle in place of the CUDA-only sync builtins that HIP
    5.2 lacks (the shim a port would add), compile for gfx90a."""
    shim = textwrap.dedent("""
        #define __shfl_sync(m, v, l, ...) __shfl(v, l, ##__VA_ARGS__)
        #define __shfl_xor_sync(m, v, o, ...) __shfl_xor(v, o, ##__VA_ARGS__)
        #define __shfl_down_sync(m, v, o, ...) __shfl_down(v, o, ##__VA_ARGS__)
        #define __shfl_up_sync(m, v, o, ...) __shfl_up(v, o, ##__VA_ARGS__)
        #define __activemask() __ballot(1)
    """)
    for name in ("lane_arith.fixed.cu", "reductions.fixed.cu"):
        text = (WARP / name).read_text().replace("#include <cuda_fp16.h>", "")
        ok, out = hipcc_compile(shim + text)
        assert ok, f"{name}:\n{out}"


# ---- fixes: honest applicability -------------------------------------------------------

def _fix_of(result, rule):
    fixes = [f.fix for f in result.findings if f.rule_id == rule and f.fix]
    assert fixes, f"no {rule} fix"
    return fixes[0]


def test_warp_define_fix_is_display_only_when_a_constant_is_needed(tmp_path):
    res = _scan_text(tmp_path, """
        #define WARP_SIZE 32
        __global__ void k(float* y) {
          __shared__ float s[WARP_SIZE];
          s[threadIdx.x % WARP_SIZE] = 1.f;
          y[0] = s[0];
        }
    """)
    assert _fix_of(res, "PTL101").applicability == "display-only"


def test_warp_define_fix_is_safe_for_runtime_device_uses(tmp_path):
    res = _scan_text(tmp_path, """
        #define WARP_SIZE 32
        __global__ void k(float* y) { y[threadIdx.x / WARP_SIZE] = threadIdx.x % WARP_SIZE; }
    """)
    fix = _fix_of(res, "PTL101")
    assert fix.applicability == "safe" and fix.edits[0].text == "warpSize"


def test_constexpr_warp_constant_gets_no_warpsize_fix(tmp_path):
    res = _scan_text(tmp_path, """
        constexpr int kWarpSize = 32;
        __global__ void k(float* y) { y[threadIdx.x / kWarpSize] = 1.f; }
    """)
    assert [f.fix for f in res.findings if f.rule_id == "PTL101"] == [None]


def test_reduction_fix_is_unsafe_beside_32_lane_ids_no_safe_fix_changes(tmp_path):
    src = """
        __device__ float red(float v) {
          for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);
          return __shfl(v, 0);  // a broadcast of the whole wave's lane 0: not 32-lane groups
        }
        __global__ void k(float* y) {
          int lane = threadIdx.x % 32;
          float v = red(y[threadIdx.x]);
          if (lane == 0) y[threadIdx.x / 32] = v;
        }
    """
    # the 32-lane ids beside it have safe fixes of their own, applied in the same pass: the
    # fixed file is consistent, and a fix that were unsafe now would turn safe on the second
    # --fix (no convergence), so it is safe now
    assert _fix_of(_scan_text(tmp_path, src), "PTL103").applicability == "safe"
    alone = src.replace("% 32", "% warpSize").replace("/ 32", "/ warpSize")
    assert _fix_of(_scan_text(tmp_path, alone, name="alone.cu"), "PTL103").applicability == "safe"
    # a 32-lane id no safe fix changes (a lane handed in, maybe a 32-thread row) stays: unsafe
    kept = src.replace("int lane = threadIdx.x % 32;", "").replace("void k(float* y)", "void k(float* y, int lane)").replace(
        "if (lane == 0)", "if (lane == 31)")
    assert _fix_of(_scan_text(tmp_path, kept, name="kept.cu"), "PTL103").applicability == "unsafe"


def test_clz_fix_is_unsafe_popc_fix_is_safe(tmp_path):
    res = _scan_text(tmp_path, """
        __device__ int f(bool p) {
          unsigned long long b = __ballot(p);
          return __popc(b) + __clz(__ballot(p));
        }
    """)
    apps = {f.fix.edits[0].text: f.fix.applicability for f in res.findings if f.rule_id == "PTL105" and f.fix}
    assert apps == {"__popcll": "safe", "__clzll": "unsafe"}


# ---- scope and traps ---------------------------------------------------------------------

def test_host_code_bit_tricks_are_quiet_and_host_launch_math_is_ptl108(tmp_path):
    res = _scan_text(tmp_path, """
        unsigned host_bits(unsigned x) { return (x & 31) + (x >> 5) + (x % 32) + (1u << (x & 31)); }
        int blocks(int num_warps) { return num_warps * 32; }
    """)
    assert _rules(res) == [(2, "PTL108")]


def test_llama_style_logical_warp_constant_is_quiet(tmp_path):
    res = _scan_text(tmp_path, """
        #define WARP_SIZE 32
        __device__ float warp_sum(float x) {
          for (int o = 16; o > 0; o >>= 1) x += __shfl_xor(x, o, WARP_SIZE);
          return x;
        }
    """)
    assert _rules(res) == []


def test_warp_constant_chosen_per_vendor_is_quiet(tmp_path):
    res = _scan_text(tmp_path, """
        #if defined(USE_ROCM)
        #define C10_WARP_SIZE_DEV warpSize
        #define WS 64
        #else
        #define WS 32
        #endif
        __global__ void k(float* y) { y[threadIdx.x % WS] = 1.f; }
    """)
    assert _rules(res) == []
    assert [f.rule_id for f in res.findings if f.suppressed] == ["PTL101"]


# ---- headers and the libclang pass ------------------------------------------------------

def test_plain_header_constexprs_are_read_without_the_libclang_pass(monkeypatch):
    """`constexpr int kWarpLanes = 32;` in a header is read from the header's text, so the
    uses are found with the libclang pass off as well."""
    path = WARP / "header_constants.cu"
    with_pass = _rules(scan_paths([path], select=("PTL1",)))
    monkeypatch.setenv("PORTLINT_LIBCLANG", "0")
    without = _rules(scan_paths([path], select=("PTL1",)))
    # threadIdx.x / kWarpLanes and threadIdx.x % kGroupLanes: constexprs of the header
    assert {(11, "PTL102"), (13, "PTL102")} <= set(without)
    assert with_pass == without


def test_libclang_pass_finds_a_constexpr_only_it_can_see(tmp_path, monkeypatch):
    """A header constexpr defined from another header's macro: the text scan cannot value
    it, the libclang pass (which preprocesses both) can."""
    (tmp_path / "lanes.h").write_text("#pragma once\n#define LANES 32\n")
    (tmp_path / "cfg.h").write_text('#pragma once\n#include "lanes.h"\nconstexpr int kGroupLanes = LANES;\n')
    src = tmp_path / "k.cu"
    src.write_text('#include "cfg.h"\n__global__ void k(float* y) { int lane = threadIdx.x % kGroupLanes; y[lane] = 1.f; }\n')
    with_pass = _rules(scan_paths([src], root=tmp_path, select=("PTL1",)))
    monkeypatch.setenv("PORTLINT_LIBCLANG", "0")
    without = _rules(scan_paths([src], root=tmp_path, select=("PTL1",)))
    assert with_pass == [(2, "PTL102")] and without == []


def test_libclang_results_are_kept_in_the_cache_dir_and_follow_header_edits(tmp_path):
    """pre-commit runs one file per process: the pass's result is kept under
    <cache>/libclang/, reused while the directives and reached headers are unchanged, and
    recomputed when a header changes or an entry is corrupt."""
    from portlint.frontends.cuda import libclang_pass as lp

    project = tmp_path / "p"
    (project / "include").mkdir(parents=True)
    header = project / "include" / "cfg.cuh"
    header.write_text("#pragma once\n#define LANES 32\nconstexpr int kGroupLanes = LANES;\n")  # valued by the pass only
    src = project / "k.cu"
    body = "#include \"include/cfg.cuh\"\n__global__ void k(float* y) { y[threadIdx.x % kGroupLanes] = 1.f; }\n"
    src.write_text(body)
    cache = tmp_path / "cache"

    def scan() -> tuple[list, dict]:  # each scan has a session of its own: nothing kept in memory
        before = dict(lp.STATS)
        res = scan_paths([src], select=("PTL102",), root=project, cache_dir=cache)
        return _rules(res), {k: lp.STATS[k] - before[k] for k in ("files", "kept")}

    found, stats = scan()
    assert found == [(2, "PTL102")] and stats == {"files": 1, "kept": 0}
    entries = list((cache / "libclang").rglob("*.json"))
    assert len(entries) == 1

    src.write_text(body + "// an edit below the directives\n")
    found, stats = scan()
    assert found == [(2, "PTL102")] and stats == {"files": 1, "kept": 1}

    entries[0].write_bytes(b"0" * 64 + b"\n{}")  # corrupt: ignored and rewritten
    src.write_text(body + "// a second edit\n")
    found, stats = scan()
    assert found == [(2, "PTL102")] and stats["kept"] == 0
    from portlint.core.cache import read_entry

    assert read_entry(entries[0].parent.parent, entries[0].parent.name + entries[0].stem) is not None

    header.write_text("#pragma once\n#define LANES 64\nconstexpr int kGroupLanes = LANES;\n")  # a 64-lane group: not a warp
    found, stats = scan()
    assert found == [] and stats["kept"] == 0


def test_compile_commands_include_paths_and_defines(tmp_path):
    inc = tmp_path / "third_party" / "inc"
    inc.mkdir(parents=True)
    (inc / "wave.h").write_text(textwrap.dedent("""
        #pragma once
        #ifdef USE_ROCM
        #define LANES_PER_WARP 64
        #else
        #define LANES_PER_WARP 32
        #endif
        namespace cfg { constexpr int kThreadsPerWarp = 32; }
    """))
    src = tmp_path / "src" / "k.cu"
    src.parent.mkdir()
    src.write_text(textwrap.dedent("""
        #include <wave.h>
        #include <cuda_runtime.h>
        __global__ void k(float* y) {
          y[threadIdx.x % LANES_PER_WARP] = 1.f;
          y[threadIdx.x / cfg::kThreadsPerWarp] = 2.f;
          y[threadIdx.x & (THREADS - 1)] = 3.f;
        }
    """).lstrip("\n"))
    db = tmp_path / "build" / "compile_commands.json"
    db.parent.mkdir()
    db.write_text(json.dumps([{
        "directory": str(tmp_path / "build"),
        "command": f"nvcc -I../third_party/inc -DTHREADS=32 -c {src}",
        "file": str(src),
    }]))
    res = scan_paths([src], root=tmp_path, select=("PTL1",), compile_commands=db)
    # LANES_PER_WARP is 64 for AMD (quiet); the namespaced constexpr is 32 (a warp id);
    # THREADS comes from -D (THREADS - 1 = 31: a lane id).
    assert _rules(res) == [(5, "PTL102"), (6, "PTL102")]
    assert not [n for n in res.notices if "libclang" in n.message]


def test_libclang_failure_falls_back_with_one_notice(monkeypatch, tmp_path):
    import clang.cindex

    def broken(*a, **k):
        raise RuntimeError("simulated libclang failure")

    monkeypatch.setattr(clang.cindex.Index, "create", staticmethod(broken))
    (tmp_path / "cfg.h").write_text("#define GROUP 32\nconstexpr int kGroup = GROUP;\n")
    res = _scan_text(tmp_path, """
        #include "cfg.h"
        __global__ void k(float* y) { y[threadIdx.x % GROUP] = 1.f; y[threadIdx.x % kGroup] = 2.f; }
    """)
    # tree-sitter's header scan still sees the #define; the constexpr defined from it needs libclang
    assert _rules(res) == [(2, "PTL102")]
    notes = [n for n in res.notices if "libclang" in n.message]
    assert len(notes) == 1 and "\n" not in notes[0].message


def test_libclang_results_kept_with_a_compile_database_follow_include_path_headers(tmp_path):
    """With --compile-commands the pass's kept result is keyed by the headers found through
    -I too (the scan's include graph), so an edit there is not answered from the cache."""
    from portlint.frontends.cuda import libclang_pass as lp

    (tmp_path / "inc").mkdir()
    header = tmp_path / "inc" / "cfg.h"
    header.write_text("#pragma once\n#define LANES 32\nconstexpr int kGroupLanes = LANES;\n")  # valued by the pass only
    src = tmp_path / "src" / "k.cu"
    src.parent.mkdir()
    src.write_text("#include <cfg.h>\n__global__ void k(float* y) { y[threadIdx.x % kGroupLanes] = 1.f; }\n")
    db = tmp_path / "compile_commands.json"
    db.write_text(json.dumps([{"directory": str(src.parent), "command": f"nvcc -I../inc -c {src}", "file": str(src)}]))

    def scan() -> tuple[list, int]:
        before = lp.STATS["kept"]
        res = scan_paths([src], select=("PTL102",), root=tmp_path, cache_dir=tmp_path / "cache", compile_commands=db)
        return _rules(res), lp.STATS["kept"] - before

    assert scan() == ([(2, "PTL102")], 0)
    src.write_text(src.read_text() + "// an edit below the directives\n")
    assert scan() == ([(2, "PTL102")], 1)  # kept: same directives, same headers
    header.write_text("#pragma once\n#define LANES 64\nconstexpr int kGroupLanes = LANES;\n")
    assert scan() == ([], 0)


def _as_hip(path: Path) -> str:
    """A CUDA cooperative-groups fixture as a HIP port would spell its includes."""
    text = path.read_text(encoding="utf-8")
    text = text.replace("#include <cooperative_groups/reduce.h>", "")
    return text.replace("#include <cooperative_groups.h>", "#include <hip/hip_cooperative_groups.h>")


@pytest.mark.oracle
def test_cooperative_groups_apis_hip_lacks_fail_for_gfx90a():
    """PTL110's cooperative-groups rows: labeled_partition, reduce and plus are not members of
    HIP's cooperative_groups; the near-miss (tiled_partition, shfl_down, a project reduce) builds."""
    ok, out = hipcc_compile(_as_hip(FIXTURES / "cuda_warp" / "cg_missing_apis.cu"))
    assert not ok
    for name in ("labeled_partition", "reduce", "plus"):
        assert f"'{name}'" in out, out
    ok, out = hipcc_compile(_as_hip(FIXTURES / "cuda_warp" / "cg_missing_apis_negative.cu"))
    assert ok, out


# ---- PTL112: the default shuffle width inside 32-lane groups ------------------------------

_TILE_BROADCAST = """
__global__ void k(float* y) {{
  float v = y[threadIdx.x];
  y[threadIdx.x] = {call};
}}
"""


@pytest.mark.oracle
def test_default_shuffle_width_is_64_on_gfx90a():
    """What PTL112 claims, from hipcc for gfx90a: HIP's shuffles default their width to
    warpSize, warpSize is 64 there (a static_assert on 64 compiles, on 32 fails), the default
    compiles to the same device code as an explicit width of 64 and to different code from
    the width 32 the fix passes, which compiles too."""
    ok, out = hipcc_compile("__device__ void f() { static_assert(warpSize == 64, \"wave64\"); }\n")
    assert ok, out
    ok, _ = hipcc_compile("__device__ void f() { static_assert(warpSize == 32, \"wave32\"); }\n")
    assert not ok, "warpSize was expected to be 64 on gfx90a"
    asm = {}
    for label, call in (("default", "__shfl(v, 0)"), ("64", "__shfl(v, 0, 64)"), ("32", "__shfl(v, 0, 32)")):
        ok, text = hipcc_device_asm(_TILE_BROADCAST.format(call=call))
        assert ok, f"{call}: {text}"
        asm[label] = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith((".", ";")) or line.lstrip().startswith(".text"))
    assert asm["default"] == asm["64"], "the default width should be the 64-lane wave"
    assert asm["default"] != asm["32"], "width 32 should change which lane is read"


def test_default_width_fix_appends_32_and_converges(tmp_path):
    """PTL112's safe fix appends the width, the rescan has no PTL112 because the call now
    has a width, and a PTL104 on the same call keeps only a note (no safe mask-only fix)."""
    src = WARP / "shuffle_default_width_in_32_lane_group.cu"
    path = tmp_path / "k.cu"
    path.write_text(src.read_text())
    result = scan_paths([path], root=tmp_path, select=("PTL1",), versions=parse_versions("rocm:6.1", "test"))
    hits = [f for f in result.findings if f.rule_id == "PTL112"]
    assert [f.span.start_line for f in hits] == [21, 29]
    assert all(f.fix is not None and f.fix.applicability == "safe" for f in hits)
    masks_here = [f for f in result.findings if f.rule_id == "PTL104" and f.span.start_line in (21, 29)]
    assert masks_here and all(f.fix is None or f.fix.applicability != "safe" for f in masks_here)
    assert all("width" in (f.suggestion or "") for f in masks_here)
    text, applied = fixed_text(path.read_text(), hits)
    assert applied == 2
    path.write_text(text)
    fixed = text.splitlines()
    assert fixed[20].strip().startswith("s = __shfl_sync(0xffffffffu, s, 0, 32);")
    assert "__shfl_xor_sync(0xffffffffu, v, lanemask, 32)" in fixed[28]
    again = scan_paths([path], root=tmp_path, select=("PTL1",), versions=parse_versions("rocm:6.1", "test"))
    assert not [f for f in again.findings if f.rule_id in ("PTL112", "PTL102", "PTL103")]


def test_widening_a_mask_that_is_still_read_as_32_bits_is_unsafe(tmp_path):
    """PTL105's declaration fix (`unsigned` -> `unsigned long long`) is safe only when no use
    keeps reading the mask as 32 bits: `active == 0xffffffffu` is never true on a full wave64
    once widened (the conversion check found it compiling and wrong). A nonzero test, or
    `__popc(b)` (which gets its own fix to `__popcll`), keeps the fix safe."""
    src = tmp_path / "k.cu"
    src.write_text(
        "__global__ void k(int* o) {\n"
        "  unsigned active = __activemask();\n"
        "  if (active == 0xffffffffu) o[0] = 1;\n"
        "  unsigned b = __ballot_sync(0xffffffffu, o[threadIdx.x] > 0);\n"
        "  o[1] = __popc(b);\n"
        "  unsigned c = __activemask();\n"
        "  o[2] = c != 0;\n"
        "}\n", encoding="utf-8")
    result = scan_paths([src], root=tmp_path, select=("PTL105",))
    fixes = {f.span.start_line: f.fix.applicability for f in result.findings if f.fix is not None}
    assert fixes[2] == "unsafe" and fixes[4] == "safe" and fixes[5] == "safe" and fixes[6] == "safe", fixes
