"""cuda_ptx (PTL201-PTL205) proven by the toolchains, and the PTX table's contract.

Oracle tests: the HIP form of a positive fails `HIP_PLATFORM=amd hipcc --offload-arch=gfx90a`
and the rewrite the suggestion names compiles. Only "compiles / does not compile" is
asserted, never the error text, so the tests hold across HIP versions."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, scan_paths
from oracles import hipcc_compile

from portlint.frontends.ptx import PTX_TABLE, classify_instruction, ptx_instructions
from portlint.core.catalog import load_rules

# (case id, HIP source the rule reports, the rewrite its suggestion names)
ORACLE_CASES = [
    (
        "PTL201-laneid",
        'extern "C" __global__ void k(unsigned* o) { unsigned id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id)); o[threadIdx.x] = id; }',
        'extern "C" __global__ void k(unsigned* o) { o[threadIdx.x] = __lane_id(); }',
    ),
    (
        "PTL201-prmt",
        '__global__ void k(unsigned* o) { unsigned r; asm("prmt.b32 %0, %1, %2, 0x5410;" : "=r"(r) : "r"(o[0]), "r"(o[1])); o[2] = r; }',
        "__global__ void k(unsigned* o) { o[2] = __byte_perm(o[0], o[1], 0x5410); }",
    ),
    (
        "PTL201-membar",
        '__global__ void k(int* o) { o[0] = 1; asm volatile("membar.gl;" ::: "memory"); o[1] = 2; }',
        "__global__ void k(int* o) { o[0] = 1; __threadfence(); o[1] = 2; }",
    ),
    (
        "PTL202-nvrtcGetPTX",
        "#include <hip/hiprtc.h>\nvoid f(hiprtcProgram p, char* out) { nvrtcGetPTX(p, out); }",
        "#include <hip/hiprtc.h>\nvoid f(hiprtcProgram p, char* out) { hiprtcGetCode(p, out); }",
    ),
    (
        "PTL203-libdevice",
        "__device__ float s(float x) { return 1.0f / (1.0f + __nv_expf(-x)); }\n__global__ void k(float* o) { o[0] = s(o[0]); }",
        "__device__ float s(float x) { return 1.0f / (1.0f + __expf(-x)); }\n__global__ void k(float* o) { o[0] = s(o[0]); }",
    ),
    (
        "PTL203-nvvm",
        "__global__ void k(const float* p, float* o) { o[0] = __nvvm_ldg_f(p); }",
        "__global__ void k(const float* __restrict__ p, float* o) { o[0] = __ldg(p); }",
    ),
    (
        "PTL204-dp4a",
        "__global__ void k(const int* a, const int* b, int* o) { o[0] = __dp4a(a[0], b[0], 0); }",
        "__global__ void k(const int* a, const int* b, int* o) { o[0] = __builtin_amdgcn_sdot4(a[0], b[0], 0, false); }",
    ),
    (
        "PTL204-trap",
        "__global__ void k(int* o) { if (o[0] < 0) __trap(); }",
        "__global__ void k(int* o) { if (o[0] < 0) __builtin_trap(); }",
    ),
    (
        "PTL204-cvta",
        "__global__ void k(unsigned* o) { __shared__ float t[4]; o[0] = (unsigned)__cvta_generic_to_shared(t); }",
        "__global__ void k(float* o) { __shared__ float t[4]; t[threadIdx.x % 4] = 1.0f; __syncthreads(); o[0] = t[0]; }",
    ),
    (
        "PTL204-stcs",
        "__global__ void k(float* o) { __stcs(o, 1.0f); }",
        "__global__ void k(float* o) { __builtin_nontemporal_store(1.0f, o); }",
    ),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case, broken, fixed", ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES])
def test_construct_fails_for_amd_and_rewrite_compiles(case, broken, fixed):
    ok, _ = hipcc_compile(broken)
    assert not ok, f"{case}: hipcc accepted the NVIDIA-only form for gfx90a"
    ok, out = hipcc_compile(fixed)
    assert ok, f"{case}: the suggested rewrite does not compile:\n{out}"


@pytest.mark.oracle
def test_host_side_asm_compiles_for_amd():
    """The trap PTL201 stays quiet on: x86 asm in host code is fine under hipcc."""
    src = (
        "#include <cstdint>\n"
        'static uint64_t tsc() { uint32_t lo, hi; asm volatile("rdtsc" : "=a"(lo), "=d"(hi)); return ((uint64_t)hi << 32) | lo; }\n'
        "__global__ void k(unsigned* o) { o[0] = 1; }\nuint64_t host_entry() { return tsc(); }\n"
    )
    ok, out = hipcc_compile(src)
    assert ok, out


@pytest.mark.oracle
def test_arch_gate_is_invisible_to_hipcc():
    """PTL205's problem compiles silently: hipcc accepts the group and takes the #else."""
    src = (
        "__device__ float f(float x) {\n#if __CUDA_ARCH__ >= 800\n  return x * 2.0f;\n#else\n  return x;\n#endif\n}\n"
        "__global__ void k(float* o) { o[0] = f(o[0]); }\n"
    )
    ok, out = hipcc_compile(src)
    assert ok, out


@pytest.mark.oracle
def test_cuda_version_macros_are_undefined_under_hipcc(tmp_path):
    """PTL206's premise: hipcc defines none of the CUDA version macros, nvcc 12 all of them,
    so `#if CUDART_VERSION >= N` picks another branch on AMD, and the fixture's
    `#else #error` stops the AMD build while nvcc compiles it."""
    from oracles import nvcc_compile

    any_defined = ("#include <hip/hip_runtime.h>\n#if defined(CUDA_VERSION) || defined(CUDART_VERSION) || "
                   "defined(__CUDACC_VER_MAJOR__) || defined(__CUDACC_VER_MINOR__)\n#error defined\n#endif\nint x;\n")
    ok, out = hipcc_compile(any_defined)
    assert ok, out
    all_defined = ("#include <cuda.h>\n#include <cuda_runtime.h>\n#if !defined(CUDA_VERSION) || !defined(CUDART_VERSION) || "
                   "__CUDACC_VER_MAJOR__ < 12\n#error missing\n#endif\nint x;\n")
    ok, out = nvcc_compile(all_defined)
    assert ok, out
    from portlint.output.fixes import fixed_text

    gate = FIXTURES / "cuda_ptx" / "cuda_version_gate.cu"
    # the fixture minus its PTX function (PTL201's own business), with the hipify renames
    # applied: they reach inside every branch of a version gate
    path = tmp_path / "gate.cu"
    path.write_text(gate.read_text(encoding="utf-8").split("// an `#else` that is only")[0], encoding="utf-8")
    ok, out = nvcc_compile(path)
    assert ok, out
    found = scan_paths([path], root=tmp_path, select=("PTL601",)).findings
    text, n = fixed_text(path.read_text(encoding="utf-8"), found)
    assert "cuda" not in text.replace("cuda_version", ""), text
    ok, _ = hipcc_compile(text)
    assert not ok, "the `#else #error` branch must stop the AMD build"
    ok, out = hipcc_compile(text.replace("#error", "// error"))
    assert ok, out


def test_error_only_else_is_not_a_hip_branch(tmp_path):
    """`#if __CUDACC_VER_MAJOR__ >= 12 ... #else #error` leaves AMD nothing but the error: the
    PTX in the CUDA branch is reported, not suppressed as ported; a real HIP branch still ports it."""
    asm = '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));\n'
    fatal = tmp_path / "fatal.cu"
    fatal.write_text("__device__ unsigned f() {\n  unsigned r = 0;\n#if __CUDACC_VER_MAJOR__ >= 12\n" + asm +
                     "#else\n#error \"CUDA 12\"\n#endif\n  return r;\n}\n", encoding="utf-8")
    ported = tmp_path / "ported.cu"
    ported.write_text("__device__ unsigned f() {\n  unsigned r = 0;\n#ifndef __HIP_PLATFORM_AMD__\n" + asm +
                      "#else\n  r = __lane_id();\n#endif\n  return r;\n}\n", encoding="utf-8")
    found = scan_paths([fatal, ported], root=tmp_path, select=("PTL201", "PTL206")).findings
    by = {(f.path, f.rule_id): f for f in found}
    assert by[("fatal.cu", "PTL201")].suppressed is None
    assert by[("fatal.cu", "PTL206")].targets["rocm"].value == "error"
    assert by[("ported.cu", "PTL201")].suppressed is not None
    assert ("ported.cu", "PTL206") not in by


def test_ptx_table_owners_are_rules():
    rules = load_rules()
    owners = {owner for owner, _hip in PTX_TABLE.values()}
    assert owners <= set(rules), owners - set(rules)
    # every rule of the three families that owns PTX reports asm statements
    assert {"PTL201", "PTL301", "PTL302", "PTL303", "PTL304", "PTL305", "PTL306", "PTL308", "PTL309", "PTL401", "PTL402", "PTL403", "PTL404"} <= owners


@pytest.mark.parametrize(
    "stmt, owner, hip_word",
    [
        ("mov.u32 %0, %%laneid", "PTL201", "__lane_id"),
        ("prmt.b32 %0, %1, %2, 0x5410", "PTL201", "__byte_perm"),
        ("membar.gl", "PTL201", "__threadfence()"),
        ("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4]", "PTL201", "__ldg"),
        ("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0}, %1, %2, p, 1, 1, 0, 0", "PTL301", "mfma"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4]", "PTL302", "LDS"),
        ("cp.async.cg.shared.global [%0], [%1], 16", "PTL401", "global_load_lds"),
        ("mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1", "PTL303", "__syncthreads"),
        ("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1", "PTL307", "FNUZ"),
        ("redux.sync.add.u32 %0, %1, 0xffffffff", "PTL404", "__shfl_xor"),
        ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4]", "PTL402", "rocWMMA"),
    ],
)


def test_instruction_routing_and_counterpart(stmt, owner, hip_word):
    got_owner, hip, _prefix = classify_instruction(stmt)
    assert got_owner == owner
    assert hip_word in hip


def test_instructions_skip_labels_predicates_and_registers():
    template = "{\\n.reg .pred p;\\nWAIT:\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n@!p bra WAIT;\\n}"
    assert [s.split()[0] for s in ptx_instructions(template)] == ["mbarrier.try_wait.parity.shared::cta.b64", "bra"]


def test_suggestion_names_hip_counterparts():
    result = scan_paths([FIXTURES / "cuda_ptx" / "inline_ptx_device.cu"])
    by_line = {f.span.start_line: f for f in result.findings if f.rule_id == "PTL201"}
    assert "__lane_id()" in by_line[6].suggestion
    assert "__byte_perm" in by_line[12].suggestion
    assert "__threadfence()" in by_line[29].suggestion


def test_ptx_file_reported_once():
    result = scan_paths([FIXTURES / "cuda_ptx" / "scale_kernel.ptx"])
    assert [(f.rule_id, f.span.start_line) for f in result.findings] == [("PTL202", 4)]


def test_arch_gate_message_names_the_branch_amd_takes():
    result = scan_paths([FIXTURES / "cuda_ptx" / "arch_gates.cu"])
    gates = [f for f in result.findings if f.rule_id == "PTL205"]
    assert gates and "#else` branch at line 8" in gates[0].message
    assert all(str(f.severity.value) == "warning" for f in gates)


def test_asm_labels_and_amd_assembly_are_not_ptx_sites(tmp_path):
    """Found on Composable Kernel: `__asm("llvm.amdgcn...")` symbol labels, register
    variables bound with `asm("v64")` and GCN `global_atomic_*` asm are not findings."""
    src = tmp_path / "ck_like.cu"
    src.write_text(
        '__device__ float raw_load(int off) __asm("llvm.amdgcn.raw.buffer.load.f32");\n'
        "__device__ void acc(float* p, float v) {\n"
        '  register float c0 asm("v64");\n'
        '  asm volatile("global_atomic_pk_add_bf16 %0, %1, off" : : "v"(p), "v"(v) : "memory");\n'
        '  asm volatile("s_waitcnt vmcnt(0)" ::: "memory");\n'
        "  c0 = v;\n  *p = c0;\n}\n"
    )
    result = scan_paths([src], root=tmp_path)
    assert not [f for f in result.findings if f.rule_id.startswith(("PTL2", "PTL3", "PTL4"))]


def test_literal_needles_never_exclude_a_match():
    """The substring prefilter of the name patterns: every match holds one of its needles."""

    from portlint.frontends.cuda.symbols import literal_needles
    from portlint.frontends.cuda.name_tables import load_tables

    rules = [e for e in load_tables() if e.pattern is not None]
    corpus = "\n".join(p.read_text(encoding="utf-8") for p in sorted((FIXTURES.parent / "tests" / "corpus" / "cuda_isa").glob("*.cu*")))
    corpus += "\n".join(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("cuda_*/*.cu*")))
    checked = 0
    for rule in rules:
        needles = literal_needles(rule.pattern.pattern)
        for m in rule.pattern.finditer(corpus):
            checked += 1
            assert needles is None or any(n in m.group(0) for n in needles), (rule.pattern.pattern, m.group(0))
    assert checked > 50  # exact names are looked up in a dict, only the patterns have needles
    assert literal_needles(r"\b(?:alpha|beta)\b|\bgamma_\w+") == ("alpha", "beta", "gamma_")
    assert literal_needles(r"\b__h(?:eq|ne)2_mask\b") == ("__h",)
    assert literal_needles(r"\bSM(?:70|75)_\d+") is None


@pytest.mark.oracle
def test_arch_gated_stub_leaves_an_empty_kernel_on_amd():
    """What PTL205 says of a stub: hipcc for gfx90a compiles the empty #else, so the kernel
    stores nothing; the same body without the gate does store."""
    from oracles import hipcc_device_asm

    body = "out[threadIdx.x] = in[threadIdx.x] * 2.0f;"
    gated = f'extern "C" __global__ void k(const float* in, float* out) {{\n#if __CUDA_ARCH__ >= 800\n  {body}\n#else\n#endif\n}}\n'
    plain = f'extern "C" __global__ void k(const float* in, float* out) {{ {body} }}\n'
    ok, gated_asm = hipcc_device_asm(gated)
    assert ok, gated_asm
    ok, plain_asm = hipcc_device_asm(plain)
    assert ok, plain_asm
    assert "global_store" in plain_asm
    assert "global_store" not in gated_asm and "k:" in gated_asm


def test_arch_stub_findings_say_not_ported():
    result = scan_paths([FIXTURES / "cuda_ptx" / "arch_stubs.cu"])
    gates = [f for f in result.findings if f.rule_id == "PTL205"]
    assert len(gates) == 3 and all("does nothing on AMD" in f.message for f in gates)
    # the `__trap()` of the third stub is live AMD code, not part of a body
    body = [f for f in result.findings if f.rule_id in ("PTL201", "PTL204", "PTL401") and f.snippet != "__trap"]
    # an optional hint (an empty cp.async commit) behind an empty #else is harmless on AMD:
    # suppressed with that reason (rules/optional-hints.toml); everything else is not ported
    live = [f for f in body if not f.suppressed]
    assert live and all(f.suggestion.startswith("Not ported:") for f in live)
    assert all("optional hint" in f.suppressed for f in body if f.suppressed)


@pytest.mark.oracle
def test_trap_asm_else_is_ptx_that_fails_for_amd():
    """An `#else` of `asm volatile("trap;")` is not a silent stub: hipcc for gfx90a rejects
    it (reported there, PTL201), while a `__builtin_trap()` stub compiles and does no work."""
    gate = 'extern "C" __global__ void k(float* out) {{\n#if __CUDA_ARCH__ >= 900\n  out[0] = 1.0f;\n#else\n  {}\n#endif\n}}\n'
    ok, out = hipcc_compile(gate.format('asm volatile("trap;");'))
    assert not ok and "trap" in out, out
    ok, out = hipcc_compile(gate.format("__builtin_trap();"))
    assert ok, out


def test_stub_forms_say_what_amd_compiles():
    result = scan_paths([FIXTURES / "cuda_ptx" / "arch_stub_forms.cu"])
    gates = {f.span.start_line: f.message for f in result.findings if f.rule_id == "PTL205"}
    assert "whole body of its function" in gates[52]  # no #else: an empty function on AMD
    assert "dummy return value" in gates[22]
    body = [f for f in result.findings if f.rule_id in ("PTL201", "PTL304", "PTL402", "PTL403")]
    assert len(body) == 5 and all(not f.suppressed and f.suggestion.startswith("Not ported:") for f in body)
    assert any(f.rule_id == "PTL304" and "%nclusterid.x" in f.message for f in body)
