"""The HIPIFY map and the CUDA API rules (PTL601, PTL602, PTL613).

- the map is data: the CSV keeps its source line and the derived JSON is what the
  generator script gives;
- every row of the map gets the verdict it states: supported=yes -> a rename fix to the
  HIP name, supported=no -> an error (with the documented exceptions);
- the safe fixes round-trip through hipcc for gfx90a;
- a default scan does not list PTL601 findings but counts them."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, run_portlint, scan_paths
from oracles import hipcc_compile

from portlint.analyses.cuda.hipify import generic_names, load_table, owner_of
from portlint.output.fixes import fixed_text
from portlint.rules.cuda_api import UNSAFE_RENAMES

CSV_PATH = REPO / "rules" / "cuda_api" / "hipify-map.csv"
API_FIXTURES = FIXTURES / "cuda_api"
OWNERS = ("PTL601", "PTL602", "PTL603", "PTL604", "PTL605", "PTL610")


def _map_rows() -> list[dict]:
    with open(CSV_PATH, encoding="utf-8", newline="") as fh:
        fh.readline()
        return list(csv.DictReader(fh))


# ---- the map as data ----------------------------------------------------------------------

def test_csv_keeps_its_source_line_and_rows():
    first = CSV_PATH.read_text(encoding="utf-8").split("\n", 1)[0]
    assert first.startswith("# source: github.com/ROCm/HIPIFY commit 014177bc")
    rows = _map_rows()
    assert len(rows) == 9226
    keys = Counter((r["cuda_name"], r["library"]) for r in rows)
    assert max(keys.values()) == 1, "(name, library) must be unique"


def test_derived_table_is_up_to_date():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "generate_hipify_tables.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_lookup_keys_on_name_and_library():
    table = load_table()
    assert table.version == "HIPIFY 014177bc (2024-10-24)"
    both = table.lookup("CUstream_st")
    assert {r.library for r in both} == {"CUDA Runtime", "CUDA Driver"}
    assert [r.hip for r in table.lookup("CUstream_st", "CUDA Driver")] == ["ihipStream_t"]
    assert table.lookup("cudaMalloc", "cuDNN") == ()
    assert table.lookup("cudaDeviceProp", "CUDA Runtime")[0].hip == "hipDeviceProp_t"


# ---- every row of the map -----------------------------------------------------------------

def _expected_exception(row: dict) -> str | None:
    """Why a row is not reported (None: it must be)."""
    name, lib, hip = row["cuda_name"], row["library"], row["hip_name"]
    if name in generic_names():
        return "generic name"
    if row["supported"] == "yes" and hip == name:
        return "same name in HIP: nothing to rename"
    if lib == "CUDA Device" and row["supported"] == "no":
        return "device intrinsic: the NVIDIA-intrinsic and warp rules own it"
    return None


def test_every_row_of_the_map_gets_its_verdict(tmp_path):
    """One file per library, one use per line; scanned with every API rule enabled."""
    rows = _map_rows()
    by_lib: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_lib[r["library"]].append(r)
    files = {}
    for lib, lib_rows in by_lib.items():
        path = tmp_path / (re.sub(r"\W+", "_", lib) + ".cu")
        lines = ["void use_all() {"] + [f"  use({r['cuda_name']});" for r in lib_rows] + ["}"]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files[lib] = path
    result = scan_paths(list(files.values()), root=tmp_path, select=OWNERS)
    found: dict[tuple[str, int], list] = defaultdict(list)
    for f in result.findings:
        found[(f.path, f.span.start_line)].append(f)
        for use in f.related:  # a use folded under its root (one finding per root cause) is reported at its line
            found[(use.path, use.span.start_line)].append(use)

    checked = Counter()
    exceptions = Counter()
    problems = []
    for lib, lib_rows in by_lib.items():
        display = files[lib].name
        for i, r in enumerate(lib_rows, start=2):
            got = found.get((display, i), [])
            why_not = _expected_exception(r)
            if why_not:
                exceptions[why_not] += 1
                if got:
                    problems.append(f"{r['cuda_name']} ({lib}): expected no finding ({why_not}), got {[f.rule_id for f in got]}")
                continue
            owner = owner_of(r["cuda_name"], lib, r["supported"] == "yes", r["hip_name"])
            if owner is None:
                # a name in two libraries (libraryPropertyType: Runtime and cuDNN) is reported
                # once, by the other row's rule, with the same verdict
                owner = next(o for o in (owner_of(x["cuda_name"], x["library"], x["supported"] == "yes", x["hip_name"])
                                         for x in rows if x["cuda_name"] == r["cuda_name"]) if o)
            if len(got) != 1 or got[0].rule_id != owner:
                problems.append(f"{r['cuda_name']} ({lib}): expected one {owner}, got {[f.rule_id for f in got]}")
                continue
            f = got[0]
            if r["supported"] == "yes" and owner != "PTL603":
                if f.fix is None or f.fix.edits[0].text != r["hip_name"]:
                    problems.append(f"{r['cuda_name']} ({lib}): no rename fix to {r['hip_name']}")
                elif owner == "PTL601" and f.fix.applicability != ("unsafe" if r["cuda_name"] in UNSAFE_RENAMES else "safe"):
                    problems.append(f"{r['cuda_name']} ({lib}): PTL601 fix must be safe (unsafe: the UNSAFE_RENAMES, whose HIP twin takes other arguments)")
                checked["rename"] += 1
            elif r["supported"] == "yes":
                # cuDNN: the HIP column names hipDNN, which the table gives no HIP version for;
                # reported as an error (MIOpen has a different API), never renamed
                if f.targets.get("rocm") is None or f.targets["rocm"].value != "error" or f.fix is not None:
                    problems.append(f"{r['cuda_name']} (cuDNN): expected an error without a fix")
                checked["cudnn-error"] += 1
            else:
                if f.targets.get("rocm") is None or f.targets["rocm"].value != "error":
                    problems.append(f"{r['cuda_name']} ({lib}): supported=no must be an error, got {f.targets}")
                checked["error"] += 1
    assert not problems, f"{len(problems)} rows wrong, e.g.:\n" + "\n".join(problems[:25])
    assert sum(checked.values()) + sum(exceptions.values()) == len(rows)
    # the exceptions stay the documented few kinds
    assert set(exceptions) <= {"generic name", "same name in HIP: nothing to rename",
                               "device intrinsic: the NVIDIA-intrinsic and warp rules own it"}
    assert checked["rename"] > 4000 and checked["error"] > 3000


# ---- fixes round-trip through hipcc -------------------------------------------------------

def _fixed_copy(tmp_path: Path, fixture: Path, select=("PTL601",)) -> Path:
    """Copy a fixture (and its stubs) to tmp_path, apply every safe fix to all of them."""
    dest = tmp_path / fixture.name
    shutil.copy(fixture, dest)
    if (fixture.parent / "stubs").is_dir():
        shutil.copytree(fixture.parent / "stubs", tmp_path / "stubs")
    targets = [dest] + sorted((tmp_path / "stubs").glob("*.inl")) if (tmp_path / "stubs").exists() else [dest]
    result = scan_paths(targets, root=tmp_path, select=select)
    for path in targets:
        mine = [f for f in result.findings if f.path == path.relative_to(tmp_path).as_posix()]
        new, _ = fixed_text(path.read_text(encoding="utf-8"), mine)
        path.write_text(new, encoding="utf-8")
    return dest


@pytest.mark.oracle
def test_runtime_fixes_round_trip_through_hipcc(tmp_path):
    fixture = API_FIXTURES / "runtime_hipify.cu"
    ok, _ = hipcc_compile(fixture)
    assert not ok, "the CUDA original should not compile for AMD before the renames"
    fixed = _fixed_copy(tmp_path, fixture)
    text = fixed.read_text(encoding="utf-8")
    assert "hipMemcpyToSymbol(HIP_SYMBOL(coeffs), host" in text
    assert "hipFuncSetAttribute(reinterpret_cast<const void*>(scale)," in text
    assert "#include <hip/hip_runtime.h>" in text
    assert not re.search(r"\bcuda[A-Z]\w*\(", re.sub(r"//.*|\"[^\"]*\"", "", text)), "a CUDA call was left unrenamed"
    ok, out = hipcc_compile(fixed)
    assert ok, out


@pytest.mark.oracle
def test_implicit_runtime_header_is_inserted_and_the_file_compiles_with_hipcc(tmp_path):
    """nvcc compiles a .cu that includes nothing (cuda_runtime.h is implicit there); hipcc
    does not, even after the renames; with the inserted `#include <hip/hip_runtime.h>` it does.
    The renames inside the CUDA version gate are applied too (both branches compile once the
    gate admits AMD)."""
    fixture = API_FIXTURES / "implicit_runtime.cu"
    fixed = _fixed_copy(tmp_path, fixture)
    text = fixed.read_text(encoding="utf-8")
    assert text.count("#include <hip/hip_runtime.h>") == 1
    ok, _ = hipcc_compile(text.replace("#include <hip/hip_runtime.h>\n", ""), runtime_header=False)
    assert not ok, "without the inserted header the renamed file should not compile"
    ok, out = hipcc_compile(fixed, runtime_header=False)
    assert ok, out
    ok, out = hipcc_compile(text.replace("#if CUDART_VERSION >= 11020", "#if 1"), runtime_header=False)
    assert ok, out
    # converged: a second pass finds nothing more to insert or rename
    again = scan_paths([fixed], root=tmp_path, select=("PTL601",)).findings
    assert [f for f in again if f.fix is not None] == []
    # only builtins (threadIdx, __syncthreads): the insertion is a finding of its own
    (tmp_path / "b").mkdir()
    builtins = _fixed_copy(tmp_path / "b", API_FIXTURES / "implicit_runtime_builtins.cu")
    ok, out = hipcc_compile(builtins, runtime_header=False)
    assert ok, out
    ok, _ = hipcc_compile(API_FIXTURES / "implicit_runtime_builtins.cu", runtime_header=False)
    assert not ok


@pytest.mark.oracle
def test_header_renames_compile_with_hipcc(tmp_path):
    """cuda_profiler_api.h -> hip/hip_runtime_api.h (which declares hipProfilerStart; HIP's
    hip_profile.h does not), channel_descriptor.h -> hip/hip_runtime.h: the renamed fixture
    compiles with hipcc as the original does with nvcc."""
    fixture = API_FIXTURES / "headers_and_namespaces.cu"
    ok, _ = hipcc_compile(fixture, runtime_header=False)
    assert not ok
    fixed = _fixed_copy(tmp_path, fixture)
    ok, out = hipcc_compile(fixed, runtime_header=False)
    assert ok, out
    ok, _ = hipcc_compile("#include <hip/hip_profile.h>\nvoid f() { hipProfilerStart(); }\n", runtime_header=False)
    assert not ok, "hip/hip_profile.h does not declare hipProfilerStart (the old rename did not compile)"


@pytest.mark.oracle
def test_occupancy_rename_with_a_callback_is_unsafe_because_it_does_not_compile(tmp_path):
    """hipModuleOccupancyMaxPotentialBlockSize has no callback parameter: the renamed call
    with one fails under hipcc, so PTL601 offers the rename as unsafe; without it, it compiles."""
    found = scan_paths([API_FIXTURES / "unsafe_renames.cu"], select=("PTL601",)).findings
    occ = [f for f in found if "cuOccupancyMaxPotentialBlockSize" in f.message]
    assert len(occ) == 2 and all(f.fix.applicability == "unsafe" for f in occ)
    legacy = [f for f in found if "cublasSscal" in f.message]
    assert legacy and all(f.fix.applicability == "unsafe" for f in legacy)
    pre = "#include <hip/hip_runtime.h>\nstatic size_t smem(int b) { return b * 4; }\n"
    ok, _ = hipcc_compile(pre + "int f(hipFunction_t k) { int g, b; hipModuleOccupancyMaxPotentialBlockSize(&g, &b, k, smem, 0, 0); return b; }\n",
                          runtime_header=False)
    assert not ok
    ok, out = hipcc_compile(pre + "int f(hipFunction_t k) { int g, b; hipModuleOccupancyMaxPotentialBlockSize(&g, &b, k, 0, 0); return b; }\n",
                            runtime_header=False)
    assert ok, out


@pytest.mark.oracle
def test_library_fixes_round_trip_through_hipcc(tmp_path):
    """cuBLAS/cuRAND/cuFFT renames, applied to the fixture and to its header stand-in
    (Debian's HIP 5.2 ships no hipBLAS/hipRAND/hipFFT headers): the result compiles."""
    fixed = _fixed_copy(tmp_path, API_FIXTURES / "libraries_hipify.cu")
    text = fixed.read_text(encoding="utf-8")
    assert "hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_T" in text
    assert "hiprandCreateGenerator(&gen, HIPRAND_RNG_PSEUDO_PHILOX4_32_10)" in text
    assert "hipfftPlan1d(&plan, n, HIPFFT_R2C, 1)" in text
    ok, out = hipcc_compile(fixed)
    assert ok, out


@pytest.mark.oracle
def test_apis_without_a_twin_do_not_compile_even_after_the_renames(tmp_path):
    fixed = _fixed_copy(tmp_path, API_FIXTURES / "runtime_no_twin.cu")
    ok, out = hipcc_compile(fixed)
    assert not ok
    assert "cudaStreamSetAttribute" in out or "cudaStreamAttrValue" in out or "mma.h" in out or "cuda_pipeline.h" in out


@pytest.mark.oracle
@pytest.mark.parametrize("header", ["mma.h", "cuda_pipeline.h", "cuda_awbarrier.h", "cuda_fp8.h", "math_constants.h", "texture_fetch_functions.h", "texture_indirect_functions.h", "surface_functions.h", "nvfunctional", "cusolverMg.h", "curand_normal.h", "curand_philox4x32_x.h"])
def test_cuda_only_headers_are_missing_under_hipcc(header):
    ok, _ = hipcc_compile(f"#include <{header}>\nint x;\n")
    assert not ok


# ---- default scans: PTL601 is counted, not listed -----------------------------------------

def test_default_scan_counts_mechanical_ports_without_listing_them():
    fixture = API_FIXTURES / "runtime_hipify.cu"
    hipify = scan_paths([fixture], select=("PTL601",))
    n = len([f for f in hipify.findings if f.rule_id == "PTL601"])
    assert n == 24
    default = scan_paths([fixture])
    assert not [f for f in default.findings if f.rule_id == "PTL601"]
    assert default.counters.get("mechanical-ports") == n


def test_text_summary_prints_the_count():
    proc = run_portlint("scan", "--no-cache", "--isolated", "-j", "1", "--select", "PTL602",
                        str(API_FIXTURES / "runtime_hipify.cu"))
    assert "24 CUDA API uses port mechanically" in proc.stdout, proc.stdout


def test_count_skips_uses_an_amd_build_does_not_compile(tmp_path):
    src = tmp_path / "guarded.cu"
    src.write_text(
        "#include <cuda_runtime.h>\n"
        "void f(float** p) {\n"
        "#ifdef __HIP_PLATFORM_AMD__\n"
        "  hipMalloc(p, 4);\n"
        "#else\n"
        "  cudaMalloc(p, 4);\n"
        "#endif\n"
        "  cudaDeviceSynchronize();\n"
        "}\n",
        encoding="utf-8",
    )
    result = scan_paths([src], root=tmp_path, select=("PTL602",))
    assert result.counters.get("mechanical-ports") == 2  # the include and cudaDeviceSynchronize


def test_identifiers_only_as_whole_names(tmp_path):
    src = tmp_path / "names.cu"
    src.write_text(
        "#include <cstdio>\n"
        "int cudaMallocAsyncWrapper(int);\n"             # longer name
        "void f() {\n"
        "  std::puts(\"cudaMalloc\");  // cudaFree\n"    # string, comment
        "  /* cudaStreamCreate */\n"
        "  int r = cudaMallocAsyncWrapper(1);\n"
        "  (void)r;\n"
        "}\n",
        encoding="utf-8",
    )
    result = scan_paths([src], root=tmp_path, select=("PTL601", "PTL602"))
    assert result.findings == []
    assert result.counters.get("mechanical-ports", 0) == 0


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


@pytest.mark.oracle
def test_renames_newer_than_the_installed_hip_are_marked_and_do_not_compile_there(tmp_path):
    """The round-trip fixture uses only twins HIP 5.2 (Debian) has; a twin the table dates
    later (hipGraphInstantiateWithParams, HIP 6.2) says so in its message, and Debian's
    hipcc indeed lacks it."""
    result = scan_paths([API_FIXTURES / "runtime_hipify.cu"], select=("PTL601",))
    table = load_table()
    for f in result.findings:
        rows = [r for r in table.lookup(f.snippet) if r.owner == "PTL601"]
        assert all(_version(r.hip_added) <= (5, 2, 0) for r in rows if r.hip_added), f.message
    src = tmp_path / "newer.cu"
    src.write_text("#include <cuda_runtime.h>\n"
                   "void f(cudaGraphExec_t* e, cudaGraph_t g, cudaGraphInstantiateParams* p) {\n"
                   "  cudaGraphInstantiateWithParams(e, g, p);\n}\n", encoding="utf-8")
    newer = scan_paths([src], root=tmp_path, select=("PTL601",))
    msg = next(f.message for f in newer.findings if f.snippet == "cudaGraphInstantiateWithParams")
    assert "HIP 6.2.0+" in msg
    fixed = _fixed_copy(tmp_path / "out", src) if (tmp_path / "out").mkdir() is None else None
    ok, _ = hipcc_compile(fixed)
    assert not ok, "HIP 5.2 should not have hipGraphInstantiateWithParams (added in 6.2)"


def test_a_definition_of_a_name_hip_lacks_is_not_a_use(tmp_path):
    """A package's own shim defines CUDA names on ROCm (cupy's hip/cupy_rocsolver.h): the
    definition, and the uses it gives a meaning to, are not uses of the CUDA library. A
    declaration without a body, a name hipify renames, and a definition in a header that does
    not know the AMD build (a stand-in for the toolkit's header) still are."""
    (tmp_path / "common.h").write_text("// the package's HIP shim\n#include <rocsolver/rocsolver.h>\ntypedef enum { MAJOR_VERSION } libraryPropertyType;\n")
    (tmp_path / "toolkit_standin.h").write_text("typedef enum { CUFFT_COPY_DEVICE_TO_HOST = 1 } copy_t;\n")
    (tmp_path / "shim.cu").write_text(
        '#include "common.h"\n#include "toolkit_standin.h"\n'
        "typedef int cusolverStatus_t;\n"                                    # 3: renamed by hipify
        "cusolverStatus_t cusolverDnDHgels_bufferSize(...) { return 1; }\n"  # 4: a definition
        "enum { CUFFT_COPY_UNDEFINED = 3 };\n"                                # 5: an enumerator
        "typedef void *cutensorMgHandle_t;\n"                                 # 6: a typedef's name
        "int use(libraryPropertyType p) {\n"                                  # 7: the header's type
        "  return cusolverDnDHgels_bufferSize(0) + CUFFT_COPY_UNDEFINED;\n"   # 8: uses of the definitions
        "}\n"
        "cusolverStatus_t cusolverDnDHgesv_bufferSize(int);\n"                # 10: a declaration
        "int kind() { return CUFFT_COPY_DEVICE_TO_HOST; }\n")                 # 11: the stand-in's value
    found = scan_paths([tmp_path / "shim.cu"], select=("PTL601", "PTL602", "PTL605"), root=tmp_path)
    lines = sorted((f.rule_id, f.span.start_line) for f in found.findings)
    assert lines == [("PTL601", 3), ("PTL601", 4), ("PTL601", 10), ("PTL602", 10), ("PTL602", 11)]
