"""Derive the CUTLASS/CuTe rows of the NVIDIA-only name tables from CUTLASS's own headers.

    python scripts/derive_name_tables.py --cutlass CUTLASS_GIT_DIR [--nccl NCCL_GIT_DIR --rccl RCCL_GIT_DIR]
        [--nvshmem NVSHMEM_GIT_DIR --rocshmem ROCSHMEM_GIT_DIR] [--check]

Reads (through `git show`, never a work tree) the architecture headers listed in SOURCES from
the repository's HEAD, takes the names they declare at namespace scope (structs, classes,
unions, free functions, aliases; not enums, which are layouts and options rather than
instructions, and nothing under a `detail` namespace), routes each to a rule, finds the
earliest release tag whose copy of the header declares it (`since`), leaves out names a
hand-written pattern row of the family already matches, and writes
`rules/<family>/names-cutlass.toml`. Only names (facts) are written, never code.

With --nccl and --rccl it also writes `rules/collectives/names-nccl.toml`: the functions NCCL's
`src/nccl.h.in` declares that RCCL's does not mention, and the names NCCL's device API
(`src/include/nccl_device/`, NCCL 2.28+) declares, which RCCL has no counterpart for, each
dated by the first NCCL minor release that has it.

With --nvshmem and --rocshmem it writes `rules/cuda_libraries/names-nvshmem.toml`: NVSHMEM's
public names whose mechanical rocSHMEM spelling rocSHMEM's headers do not declare.

Run it again on newer releases to refresh the tables; `--check` fails when the files on
disk differ from what the headers give."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# header -> (family, rule, advice key); a rule of None routes per name (see _route)
SOURCES: dict[str, tuple[str, str | None, str]] = {
    "include/cute/arch/cluster_sm90.hpp": ("cuda_hopper", "PTL304", "cluster"),
    "include/cute/arch/copy_sm90_tma.hpp": ("cuda_hopper", "PTL302", "tma"),
    "include/cute/arch/copy_sm100_tma.hpp": ("cuda_hopper", "PTL302", "tma"),
    "include/cute/arch/copy_sm90_desc.hpp": ("cuda_hopper", "PTL302", "tma"),
    "include/cute/atom/copy_traits_sm90_tma.hpp": ("cuda_hopper", "PTL302", "tma"),
    "include/cute/arch/mma_sm90_desc.hpp": ("cuda_hopper", "PTL301", "mfma"),
    "include/cute/arch/mma_sm90_gmma.hpp": ("cuda_hopper", "PTL301", "mfma"),
    "include/cute/arch/mma_sm100_desc.hpp": ("cuda_hopper", "PTL306", "mfma"),
    "include/cute/arch/mma_sm100_umma.hpp": ("cuda_hopper", "PTL306", "mfma"),
    "include/cute/arch/tmem_allocator_sm100.hpp": ("cuda_hopper", "PTL306", "mfma"),
    "include/cute/atom/mma_traits_sm100.hpp": ("cuda_hopper", "PTL306", "mfma"),
    "include/cute/atom/mma_traits_sm100_frag.hpp": ("cuda_hopper", "PTL306", "mfma"),
    "include/cute/atom/mma_traits_sm90_gmma.hpp": ("cuda_hopper", "PTL301", "mfma"),
    "include/cutlass/arch/barrier.h": ("cuda_hopper", None, ""),
    "include/cutlass/arch/reg_reconfig.h": ("cuda_hopper", "PTL305", "nreg"),
    "include/cutlass/arch/arch.h": ("cuda_hopper", None, ""),
    "include/cutlass/gemm/dispatch_policy.hpp": ("cuda_hopper", None, ""),
    "include/cutlass/epilogue/dispatch_policy.hpp": ("cuda_hopper", None, ""),
    "include/cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp": ("cuda_hopper", "PTL301", "sm90_gemm"),
    "include/cutlass/epilogue/fusion/sm90_visitor_load_tma_warpspecialized.hpp": ("cuda_hopper", "PTL301", "sm90_gemm"),
    "include/cutlass/epilogue/fusion/sm90_visitor_store_tma_warpspecialized.hpp": ("cuda_hopper", "PTL301", "sm90_gemm"),
    "include/cutlass/epilogue/fusion/sm90_visitor_compute_tma_warpspecialized.hpp": ("cuda_hopper", "PTL301", "sm90_gemm"),
    "include/cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp": ("cuda_hopper", "PTL301", "sm90_gemm"),
    "include/cutlass/pipeline/sm90_pipeline.hpp": ("cuda_hopper", None, ""),
    "include/cutlass/pipeline/sm100_pipeline.hpp": ("cuda_hopper", None, ""),
    "include/cute/arch/copy_sm80.hpp": ("cuda_async", "PTL401", "copy"),
    "include/cute/arch/copy_sm75.hpp": ("cuda_async", "PTL402", "ldsm"),
    "include/cute/arch/copy_sm90.hpp": ("cuda_async", "PTL402", "ldsm"),
}
# advice text per (rule, key) opening: what the name is
WHAT = {
    "cluster": "A CuTe cluster / lane-election wrapper (sm_90 PTX). ",
    "tma": "A CuTe TMA descriptor, atom or helper. ",
    "mfma": "A CuTe Hopper/Blackwell tensor-core building block: ",
    "nreg": "CUTLASS's setmaxnreg wrapper. ",
    "sm90_gemm": "",
    "sm100_gemm": "",
    "sm120_gemm": "A CUTLASS SM120 (TMA) kernel schedule. ",
    "barrier": "A CUTLASS transaction-barrier helper. ",
    "copy": "A CuTe cp.async atom or wrapper. ",
    "ldsm": "A CuTe ldmatrix/stmatrix atom. ",
}
# release tags tried for `since`, oldest first (CUTLASS 3.0 introduced CuTe and the SM90 kernels)
TAGS = ("v3.0.0", "v3.1.0", "v3.2.0", "v3.3.0", "v3.4.0", "v3.5.0", "v3.6.0", "v3.7.0", "v3.8.0", "v3.9.0",
        "v4.0.0", "v4.1.0", "v4.2.0", "v4.3.0", "v4.4.0", "v4.5.0", "v4.6.0", "v4.7.0")
# namespaces that do not qualify a name (users write these names without them, or with any of them)
_PLAIN_NS = {"cute", "cutlass", "arch", "gemm", "epilogue", "fusion", "collective", "kernel", "std", "SM90", "SM100", "cuda"}
_GENERIC = {"to_string", "print", "operator", "make_tensor", "get", "size", "MakeTensor", "DescriptorIterator",
            "smem_desc", "sparse_smem_desc", "Copy_Traits", "PtrTypes", "fma", "copy"}
_MACRO = re.compile(r"^(?:CUTE|CUTLASS|CUDA)_[A-Z_]+$")
_NOT_FUNCS = {"if", "for", "while", "switch", "return", "sizeof", "static_assert", "alignas", "decltype", "defined",
              "__launch_bounds__", "template", "noexcept", "requires", "__attribute__", "__align__"}


def git_show(git_dir: str, rev: str, path: str) -> str | None:
    proc = subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:{path}"], capture_output=True)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def _clean(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"\\\n", " ", text)
    return "\n".join("" if ln.lstrip().startswith("#") else ln for ln in text.split("\n"))


def _strip_template(seg: str) -> str:
    seg = seg.strip()
    while seg.startswith("template"):
        i, depth = seg.index("<") if "<" in seg else -1, 0
        if i < 0:
            return seg
        for j in range(i, len(seg)):
            depth += {"<": 1, ">": -1}.get(seg[j], 0)
            if depth == 0:
                seg = seg[j + 1 :].strip()
                break
        else:
            return seg
    return seg


def _declared(seg: str) -> str | None:
    """The name a namespace-scope declaration introduces, or None."""
    seg = _strip_template(" ".join(seg.split()))
    if not seg or seg.startswith(("enum", "typedef", "friend", "namespace", "extern", "static_assert")):
        return None
    m = re.match(r"(?:struct|class|union)\s+(?:alignas\s*\([^)]*\)\s*)?(\w+)\s*(<)?", seg)
    if m:
        return None if m.group(2) else m.group(1)  # `struct X<...>` specialises another name
    m = re.match(r"using\s+(\w+)\s*=", seg)
    if m:
        return m.group(1)
    head = seg.split("=")[0]
    for m in re.finditer(r"(\w+)\s*\(", head):
        name = m.group(1)
        if name in _NOT_FUNCS or _MACRO.match(name):
            continue
        before = head[: m.start()].split()
        return name if before and before[-1] not in ("return", "new") else None
    return None


def declarations(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(name, enclosing namespaces) for every namespace-scope declaration of a header."""
    code = _clean(text)
    out: list[tuple[str, tuple[str, ...]]] = []
    stack: list[tuple[str, tuple[str, ...]]] = []  # ("ns", names) or ("other", ())
    seg: list[str] = []
    for ch in code:
        if ch == "{":
            s = "".join(seg)
            m = re.search(r"\bnamespace\s+([\w:]*)\s*$", s)
            at_ns = all(kind == "ns" for kind, _ in stack)
            if m:
                stack.append(("ns", tuple(n for n in m.group(1).split("::") if n)))
            else:
                if at_ns:
                    name = _declared(s)
                    if name:
                        out.append((name, tuple(n for kind, ns in stack for n in ns)))
                stack.append(("other", ()))
            seg = []
        elif ch == "}":
            if stack:
                stack.pop()
            seg = []
        elif ch == ";":
            if all(kind == "ns" for kind, _ in stack):
                name = _declared("".join(seg))
                if name:
                    out.append((name, tuple(n for kind, ns in stack for n in ns)))
            seg = []
        else:
            seg.append(ch)
    return out


def _route(path: str, name: str) -> tuple[str, str] | None:
    """(rule, advice key) for names of the headers that mix several features."""
    if path.endswith("arch.h"):
        m = re.fullmatch(r"Sm(\d+)a?", name)
        if not m:
            return None
        sm = int(m.group(1))
        return ("PTL301", "sm90_gemm") if sm == 90 else ("PTL306", "sm100_gemm") if sm in (100, 101, 103, 110) else None
    if "/pipeline/" in path:
        # the mbarrier-based producer/consumer pipelines of CUTLASS 3 kernels; tokens and
        # PipelineState are generic names and stay out
        if re.search(r"Umma|CLC", name):
            return "PTL306", "mfma"
        if "Tma" in name:
            return "PTL302", "tma"
        if re.search(r"Transaction|OrderedSequenceBarrier|^PipelineAsync$", name):
            return "PTL303", "barrier"
        return None
    if path.endswith("barrier.h"):
        low = name.lower()
        if "tmem" in low or "umma" in low or "tcgen" in low:
            return "PTL306", "mfma"
        if low.startswith("fence_view_async"):
            return "PTL302", "tma"
        if low.startswith("cluster") or "transaction" in low or low.startswith("fence_barrier"):
            return "PTL303", "barrier"
        return None
    # dispatch policies: kernel schedules, mainloops, epilogues by architecture (SM100's
    # 1-SM / 2-SM UMMA schedules; SM120 has TMA but no wgmma or tensor memory)
    if re.search(r"Sm1[01]\d|Umma|Tmem|[12]Sm(?![a-z\d])", name):
        return "PTL306", "sm100_gemm"
    if re.search(r"Sm12\d", name):
        return "PTL302", "sm120_gemm"
    if re.search(r"Sm90|Gmma|TmaWarpSpecialized|TmaCooperative|WarpSpecializedCooperative|WarpSpecializedPingpong", name):
        return "PTL301", "sm90_gemm"
    return None


# a lowercase helper with none of these in its name could be anyone's (`cluster_shape` is also a
# k-means variable): it is matched only
# with its namespace written (`cute::set_block_rank`)
_SPECIFIC = re.compile(r"tma|umma|utc|tmem|gmma|elect|ldsm|stsm|movm|fence_view|cp_async|bulk|sm\d", re.I)
# mbarrier wrappers CuTe declares beside its TMA helpers
_BARRIER_HELPERS = re.compile(r"barrier")


# shared-memory layout atoms and shape helpers describe data, not instructions (like the enums)
_LAYOUT = re.compile(r"^(?:Layout|tile_to_|make_.*layout|ss_smem_selector|rs_op_selector|ss_op_selector)")


def qualified(name: str, namespaces: tuple[str, ...], path: str) -> str | None:
    if any("detail" in n.lower() for n in namespaces) or name in _GENERIC or name.startswith("_") or _LAYOUT.match(name):
        return None
    if path.endswith("arch.h"):
        return f"arch::{name}"
    if "/fusion/" in path and not name.startswith("Sm90"):
        return None  # the visitors' helper templates (get_element_aux_t, ...)
    specific = [n for n in namespaces if n not in _PLAIN_NS]
    if specific:
        return f"{specific[-1]}::{name}"
    if name.islower() and not _SPECIFIC.search(name) and namespaces:
        return f"{namespaces[-1]}::{name}"
    return name


def derive(git_dir: str) -> dict[str, list[dict]]:
    from portlint.frontends.cuda.name_tables import load_tables

    patterns = [e for e in load_tables() if e.pattern is not None and not e.source.startswith("NVIDIA/cutlass (derived")]
    listed = {n for e in load_tables() if not e.source.startswith("NVIDIA/cutlass (derived") for n in e.names}
    head = subprocess.run(["git", "--git-dir", git_dir, "describe", "--tags"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    rows: dict[str, dict[tuple, list[str]]] = {}
    seen: set[str] = set()
    for path, (family, rule, key) in SOURCES.items():
        text = git_show(git_dir, "HEAD", path)
        if text is None:
            print(f"warning: {path} is not in {head}", file=sys.stderr)
            continue
        old = {tag: git_show(git_dir, tag, path) for tag in TAGS}
        for name, namespaces in declarations(text):
            full = qualified(name, namespaces, path)
            if full is None or full in seen:
                continue
            route = (rule, key) if rule else _route(path, name)
            if route is not None and route[0] == "PTL302" and _BARRIER_HELPERS.search(name) and "tma" not in name.lower():
                route = ("PTL303", "barrier")
            if route is None:
                continue
            r, k = route
            if full in listed or name in listed or any(e.rule == r and (e.pattern.fullmatch(full) or e.pattern.fullmatch(name)) for e in patterns):
                continue  # a hand-written row already says this
            seen.add(full)
            word = re.compile(r"\b" + re.escape(name) + r"\b")
            since = next((t for t in TAGS if old[t] is not None and word.search(old[t])), head)
            rows.setdefault(family, {}).setdefault((r, k, path, since), []).append(full)
    out: dict[str, list[dict]] = {}
    for family, groups in rows.items():
        out[family] = [
            {"rule": r, "key": k, "path": p, "since": s, "names": sorted(set(ns))}
            for (r, k, p, s), ns in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2], TAGS.index(kv[0][3]) if kv[0][3] in TAGS else 99))
        ]
    return {"_version": [{"head": head, "commit": commit}], **out}


def render(family: str, groups: list[dict], head: str, commit: str) -> str:
    lines = [
        f"# Derived by scripts/derive_name_tables.py from NVIDIA/cutlass {head} ({commit[:12]}): do not edit by hand.",
        "# Names declared at namespace scope in CUTLASS/CuTe architecture headers (enums and `detail`",
        "# namespaces left out), routed to a rule; names a hand-written row of names.toml already",
        "# matches are left out too. `since` is the first release tag whose header declares the name.",
        f'generated = "NVIDIA/cutlass {head}"',
        "",
    ]
    for g in groups:
        lines += [
            "[[name]]",
            f'rule = "{g["rule"]}"',
            "names = [",
            *[f'    "{n}",' for n in g["names"]],
            "]",
            f'advice = "{WHAT.get(g["key"], "")}{{{"tma" if g["key"] == "sm120_gemm" else g["key"]}}}"',
            f'since = "CUTLASS {g["since"].lstrip("v")}"',
            f'source = "NVIDIA/cutlass (derived) {g["path"]}"',
            "",
        ]
    return "\n".join(lines)


NCCL_TAGS = ("v2.17.1-1", "v2.18.1-1", "v2.19.1-1", "v2.20.3-1", "v2.21.5-1", "v2.22.3-1", "v2.23.4-1", "v2.24.3-1",
             "v2.25.1-1", "v2.26.2-1", "v2.27.3-1", "v2.28.3-1", "v2.29.2-1", "v2.30.3-1")
# device-API names that are backends or implementation details, not what user kernels write
_NCCL_INTERNAL = re.compile(r"_internal$|_stash$|Impl\b|Gdaki|Gpi|CpuProxy|^ncclGinApi_|^ncclGin_(?:is|get)|^ncclGin_C\b|_M$")


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True).stdout.strip()


def derive_nccl(nccl: str, rccl: str) -> tuple[str, list[dict]]:
    head, rhead = _git(nccl, "describe", "--tags"), _git(rccl, "rev-parse", "HEAD")
    rccl_header = git_show(rccl, "HEAD", "src/nccl.h.in") or ""
    rccl_words = set(re.findall(r"\bnccl[A-Z]\w*", rccl_header))
    old_headers = {t: git_show(nccl, t, "src/nccl.h.in") or "" for t in NCCL_TAGS}

    def since(name: str, texts: dict[str, str]) -> str:
        word = re.compile(r"\b" + re.escape(name) + r"\b")
        return next((t for t in NCCL_TAGS if word.search(texts[t])), f"after {NCCL_TAGS[-1]}")

    groups: dict[tuple[str, str], list[str]] = {}
    host = git_show(nccl, "HEAD", "src/nccl.h.in") or ""
    for name in sorted(set(re.findall(r"\b(nccl[A-Z]\w*)\s*\(", host))):
        if name not in rccl_words and not name.startswith("ncclParam"):  # ncclParam*: PTL503's own pattern
            groups.setdefault(("host", since(name, old_headers)), []).append(name)
    files = [f for f in _git(nccl, "ls-tree", "-r", "--name-only", "HEAD", "src/include/nccl_device/").split() if f.endswith(".h")]
    device: dict[str, str] = {}
    for f in files:
        for name, namespaces in declarations(git_show(nccl, "HEAD", f) or ""):
            if name.startswith("nccl") and not name.startswith("nccl_") and "detail" not in namespaces and not _NCCL_INTERNAL.search(name):
                if name not in rccl_words:
                    device.setdefault(name, f)
    old_device = {t: "\n".join(git_show(nccl, t, f) or "" for f in files) for t in NCCL_TAGS}
    for name in sorted(device):
        groups.setdefault(("device", since(name, old_device)), []).append(name)
    rows = [{"kind": k, "since": s, "names": n} for (k, s), n in sorted(groups.items(), key=lambda kv: (kv[0][0], NCCL_TAGS.index(kv[0][1]) if kv[0][1] in NCCL_TAGS else 99))]
    return f"NVIDIA/nccl {head} against ROCm/rccl@{rhead[:8]}", rows


def _release(tag: str) -> str:
    """v2.28.3-1 -> 2.28.3; "after v2.30.3-1" -> "main after 2.30.3"."""
    if tag.startswith("after "):
        return "main after " + _release(tag[6:])
    return tag.lstrip("v").split("-")[0]


def render_nccl(version: str, rows: list[dict]) -> str:
    lines = [
        f"# Derived by scripts/derive_name_tables.py from {version}: do not edit by hand.",
        "# kind host: functions NCCL's nccl.h declares that RCCL's nccl.h does not mention;",
        "# kind device: NCCL's device API (nccl_device/, NCCL 2.28+), which RCCL has no counterpart for.",
        f'generated = "{version}"',
        "",
    ]
    for r in rows:
        src = "src/nccl.h.in" if r["kind"] == "host" else "src/include/nccl_device/*.h"
        lines += ["[[name]]", 'rule = "PTL503"', f'kind = "{r["kind"]}"', "names = [", *[f'    "{n}",' for n in r["names"]], "]",
                  f'advice = "{{{"nccl_" + r["kind"]}}}"', f'since = "NCCL {_release(r["since"])}"',
                  f'source = "NVIDIA/nccl (derived) {src}"', ""]
    return "\n".join(lines)


def _rocshmem_twin(name: str) -> str:
    """The rocSHMEM spelling a mechanical port would use (the same rule as PTL615's advice)."""
    base = name.replace("nvshmemx_", "rocshmem_").replace("nvshmem_", "rocshmem_")
    return re.sub(r"_block$", "_wg", re.sub(r"_warp$", "_wave", base))


def derive_nvshmem(nvshmem: str, rocshmem: str) -> tuple[str, list[dict]]:
    """NVSHMEM's public names (nvshmem_*, nvshmemx_* in its headers outside internal/) whose
    mechanical rocSHMEM spelling rocSHMEM's headers do not declare."""
    tag = _git(nvshmem, "describe", "--tags")
    head = tag or f"commit {_git(nvshmem, 'rev-parse', '--short=8', 'HEAD')} ({_git(nvshmem, 'log', '-1', '--format=%cs')})"
    rhead = _git(rocshmem, "rev-parse", "HEAD")
    roc_files = [f for f in _git(rocshmem, "ls-tree", "-r", "--name-only", "HEAD", "include").split() if f.endswith((".h", ".hpp"))]
    roc = set()
    for f in roc_files:
        roc.update(re.findall(r"\b(rocshmemx?_\w*[A-Za-z0-9])\b", git_show(rocshmem, "HEAD", f) or ""))
    files = [f for f in _git(nvshmem, "ls-tree", "-r", "--name-only", "HEAD", "src/include").split()
             if f.endswith((".h", ".cuh", ".hpp")) and "/internal/" not in f and "/non_abi/" not in f and "/env/" not in f]
    names: set[str] = set()
    for f in files:
        text = _clean(git_show(nvshmem, "HEAD", f) or "")
        # identifiers only, not macro fragments (`nvshmem_##TYPENAME##_p`)
        names.update(m.group(1) for m in re.finditer(r"(?<!##)\b(nvshmemx?_\w*[A-Za-z0-9])\b(?!\s*##)", text))
    missing = sorted(n for n in names if _rocshmem_twin(n) not in roc and not n.isupper())
    version = f"NVIDIA/nvshmem {head} against ROCm/rocSHMEM@{rhead[:8]}"
    return version, [{"kind": "no-twin", "since": head, "names": missing}]


def render_nvshmem(version: str, rows: list[dict]) -> str:
    lines = [
        f"# Derived by scripts/derive_name_tables.py from {version}: do not edit by hand.",
        "# NVSHMEM's public names (headers outside internal/ and non_abi/) whose mechanical rocSHMEM",
        "# spelling (nvshmem[x]_ -> rocshmem_, _warp -> _wave, _block -> _wg) rocSHMEM's headers do not declare.",
        f'generated = "{version}"',
        "",
    ]
    for r in rows:
        lines += ["[[name]]", 'rule = "PTL615"', f'kind = "{r["kind"]}"', "names = [", *[f'    "{n}",' for n in r["names"]], "]",
                  'advice = "{nvshmem_no_twin}"', f'since = "present in NVSHMEM {_release(r["since"]) if r["since"].startswith("v") else r["since"]}"',
                  'source = "NVIDIA/nvshmem (derived) src/include/{nvshmem.h,nvshmemx.h,host/,device/,device_host/}"', ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutlass", required=True, help="a CUTLASS git directory (bare is fine)")
    ap.add_argument("--nccl", help="an NCCL git directory")
    ap.add_argument("--rccl", help="an RCCL git directory (the release line to compare with)")
    ap.add_argument("--nvshmem", help="an NVSHMEM git directory")
    ap.add_argument("--rocshmem", help="a rocSHMEM git directory")
    ap.add_argument("--check", action="store_true", help="fail when the tables on disk differ")
    args = ap.parse_args()
    outputs: dict[Path, str] = {}
    if args.nvshmem and args.rocshmem:
        version, rows = derive_nvshmem(args.nvshmem, args.rocshmem)
        outputs[ROOT / "rules" / "cuda_libraries" / "names-nvshmem.toml"] = render_nvshmem(version, rows)
    if args.nccl and args.rccl:
        version, rows = derive_nccl(args.nccl, args.rccl)
        outputs[ROOT / "rules" / "collectives" / "names-nccl.toml"] = render_nccl(version, rows)
    derived = derive(args.cutlass)
    version = derived.pop("_version")[0]
    status = 0
    for family, groups in sorted(derived.items()):
        outputs[ROOT / "rules" / family / "names-cutlass.toml"] = render(family, groups, version["head"], version["commit"])
    for path, text in sorted(outputs.items()):
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                print(f"{path} is out of date", file=sys.stderr)
                status = 1
        else:
            path.write_text(text, encoding="utf-8")
            names = sum(1 for ln in text.split("\n") if ln.startswith('    "'))
            print(f"wrote {path.relative_to(ROOT)}: {names} names in {text.count('[[name]]')} rows")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
