"""Conversion check: does a CUDA file that portlint's safe fixes leave with no ROCm error
finding really compile with hipcc for AMD gfx90a?

For every candidate .cu (the labelled sets' PyPI trees, and the samples in
bench/conversion_samples/):

1. a static include walk drops files that reach a header of a library not installed here
   (torch, ATen, c10, CUTLASS/CuTe, pybind11, Python, TVM FFI); the rest are compiled with
   `nvcc -arch=sm_90a -std=c++17 -c` with -I the file's folder, the package root and the
   package's include/ and csrc/ folders. Only files that compile there count.
2. each nvcc-compiling file is copied with the package files its includes reach and those
   are fixed together (`portlint scan DIR --fix --select ALL`: safe fixes, the hipify renames included since ALL selects PTL601), then
   rescanned (`--format json --target rocm`) for findings whose ROCm severity is error, then
   compiled with `HIP_PLATFORM=amd hipcc --offload-arch=gfx90a -std=c++17 -x hip -c` and the
   same -I folders, with no implicit header (as a build compiles the file). When that fails,
   the file is compiled once more with `-include hip/hip_runtime.h` to tell a missing runtime
   header from the rest.
3. classes: ok (no ROCm error left, hipcc compiles), miss (no ROCm error left, hipcc fails:
   a miss or a wrong fix), flagged (errors left; `flagged-compiles` when hipcc compiles it
   anyway: a false-alarm candidate). Rate = ok / (ok + miss).

The trees are never modified: the copies live in a temporary folder; hipcc sees them first,
then the original package folders (read-only). portlint is run as a subprocess on the copy; it
reads, never executes, the code. One compile at a time.

    nice python bench/conversion_check.py [--trees DIR ...] [--samples-only] [--per-package N]
                                          [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "bench" / "conversion_samples"
DEFAULT_TREES = (
    ROOT / "tests" / "realcode" / "cuda" / "trees",
    ROOT / "tests" / "realcode" / "cuda_heldout" / "trees",
)
NVCC_ARCH = "sm_90a"
HIP_ARCH = "gfx90a"
# Headers of libraries this machine does not have: a file that reaches one cannot compile.
MISSING_LIBS = ("torch/", "ATen/", "c10/", "cutlass/", "cute/", "pybind11/", "Python.h", "tvm/", "THC/",
                "caffe2/", "dlpack/", "cub/cub.cuh.missing")
SYSTEM_DIRS = tuple(Path(p) for p in (
    "/usr/local/cuda/include", "/usr/local/cuda/include/cccl", "/usr/include/c++/12",
    "/usr/include/x86_64-linux-gnu/c++/12", "/usr/lib/gcc/x86_64-linux-gnu/12/include",
    "/usr/include/x86_64-linux-gnu", "/usr/include") if Path(p).is_dir())
INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
TIMEOUT = 300


@dataclass
class Result:
    package: str
    path: str                     # relative to the package root
    stage: str                    # dropped / nvcc-fail / ok / miss / flagged / flagged-compiles / scan-error
    reason: str = ""
    fixes_changed: bool = False
    rocm_errors: list[str] = field(default_factory=list)   # "PTL123:line"
    hipcc_error: str = ""
    runtime_header_only: bool = False  # hipcc passes once hip_runtime.h is force-included
    seconds: float = 0.0


# ---------------------------------------------------------------- include walk

_PKG_DIRS: dict[Path, list[Path]] = {}


def package_dirs(pkg_root: Path) -> list[Path]:
    """The package root and its include/ and csrc/ folders (at most 12, nearest first)."""
    if pkg_root not in _PKG_DIRS:
        found = sorted((p for p in pkg_root.rglob("*") if p.is_dir() and p.name in ("include", "csrc")),
                       key=lambda p: (len(p.parts), str(p)))
        _PKG_DIRS[pkg_root] = [pkg_root, *found[:12]]
    return _PKG_DIRS[pkg_root]


def include_dirs(pkg_root: Path, file: Path) -> list[Path]:
    """-I folders for a file: its own folder, then the package's folders."""
    out = [file.parent]
    for d in package_dirs(pkg_root):
        if d not in out:
            out.append(d)
    return out


def missing_library(file: Path, dirs: list[Path]) -> str | None:
    """The first header of a missing library the file reaches through its includes (a
    textual walk: conditional includes count too, which can only drop more), or None."""
    return walk_includes(file, dirs)[0]


def walk_includes(file: Path, dirs: list[Path]) -> tuple[str | None, list[Path]]:
    """(the first missing-library header reached or None, every non-system file reached,
    the file first)."""
    seen: set[Path] = set()
    order: list[Path] = []
    stack = [file.resolve()]
    while stack:
        cur = stack.pop()
        if cur in seen:
            continue
        seen.add(cur)
        order.append(cur)
        try:
            text = cur.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for kind, name in INCLUDE_RE.findall(text):
            if name.startswith(MISSING_LIBS):
                return name, order
            search = ([cur.parent] if kind == '"' else []) + dirs
            for d in search:
                cand = d / name
                if cand.is_file():
                    if not any(str(cand).startswith(str(s)) for s in SYSTEM_DIRS):
                        stack.append(cand.resolve())
                    break
    return None, order


# ---------------------------------------------------------------- tools

def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    lines = [l for l in output.splitlines() if l.strip()]
    return lines[0][:300] if lines else ""


def nvcc(file: Path, dirs: list[Path]) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["nvcc", f"-arch={NVCC_ARCH}", "-std=c++17", "-c", str(file), "-o", str(Path(tmp) / "o.o")]
        cmd += [a for d in dirs for a in ("-I", str(d))]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return False, "nvcc timed out"
    return p.returncode == 0, p.stdout + p.stderr


def hipcc(file: Path, dirs: list[Path], runtime_header: bool = False, syntax_only: bool = False) -> tuple[bool, str]:
    """hipcc for gfx90a; `syntax_only`: stop after semantic analysis of the host and device
    sides (-fsyntax-only, the quick form the test uses), else compile to an object."""
    env = dict(os.environ, HIP_PLATFORM="amd")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["hipcc", f"--offload-arch={HIP_ARCH}", "-std=c++17", "-x", "hip"]
        if runtime_header:
            cmd += ["-include", "hip/hip_runtime.h"]
        cmd += ["-fsyntax-only", str(file)] if syntax_only else ["-c", str(file), "-o", str(Path(tmp) / "o.o")]
        cmd += [a for d in dirs for a in ("-I", str(d))]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            return False, "hipcc timed out"
    return p.returncode == 0, p.stdout + p.stderr


def portlint(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "portlint", "scan", *args, "--isolated", "--no-cache",
                           "--no-progress", "-j", "1", "--color", "never"],
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, env=env)


def fix_and_rescan_all(target: Path, cwd: Path) -> tuple[dict[str, list[str]], str | None]:
    """Apply safe fixes (ALL rules, hipify renames included) in place to a file or folder,
    then rescan: {path relative to cwd: ROCm-error findings left ("PTLnnn:line")}, or an
    error text."""
    rel = os.path.relpath(target, cwd)
    p = portlint([rel, "--fix", "--select", "ALL", "--exit-zero"], cwd)
    if p.returncode not in (0, 1):
        return {}, f"--fix exit {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
    p = portlint([rel, "--select", "ALL", "--target", "rocm", "--format", "json", "--exit-zero"], cwd)
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {}, f"rescan exit {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
    left: dict[str, list[str]] = {}
    for f in report["findings"]:
        if f["targets"].get("rocm") == "error" and not f.get("suppressed"):
            left.setdefault(f["path"], []).append(f"{f['rule']}:{f['start_line']}")
    return left, None


def fix_and_rescan(file: Path, cwd: Path) -> tuple[list[str], str | None]:
    """fix_and_rescan_all for one file: the ROCm-error findings left in it."""
    left, err = fix_and_rescan_all(file, cwd)
    return left.get(Path(os.path.relpath(file, cwd)).as_posix(), []), err


# ---------------------------------------------------------------- the check

def check_file(package: str, pkg: Path, rel: str, work: Path) -> Result:
    """Check one file of the (read-only) package `pkg`. The file and every package file its
    includes reach are copied under `work` at the same relative paths and fixed there
    together (the translation unit, as a project-wide fix would leave it); hipcc sees the
    copies first, then the original folders."""
    t0 = time.monotonic()
    src = pkg / rel
    dirs = include_dirs(pkg, src)
    res = Result(package, rel, "dropped")
    lib, reached = walk_includes(src, dirs)
    if lib:
        res.reason = f"reaches {lib}"
        return res
    try:
        ok, out = nvcc(src, dirs)
        if not ok:
            res.stage, res.reason = "nvcc-fail", _first_error(out)
            return res
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        real_pkg = pkg.resolve()
        copies: list[Path] = []
        for f in reached:
            try:
                r = f.relative_to(real_pkg)
            except ValueError:
                continue
            dst = work / r
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst)
            copies.append(dst)
        file = work / rel
        original = file.read_bytes()
        hip_dirs: list[Path] = []
        for d in dirs:
            try:
                hip_dirs.append(work / d.resolve().relative_to(real_pkg))
            except ValueError:
                pass
            hip_dirs.append(d)
        left_by_path, err = fix_and_rescan_all(work, work)
        res.fixes_changed = file.read_bytes() != original
        if err:
            res.stage, res.reason = "scan-error", err
            return res
        res.rocm_errors = [f"{p}:{x}" if p != Path(rel).as_posix() else x
                           for p, xs in sorted(left_by_path.items()) for x in xs]
        left = res.rocm_errors
        ok, out = hipcc(file, hip_dirs)
        if not ok:
            res.hipcc_error = _first_error(out)
            res.runtime_header_only = hipcc(file, hip_dirs, runtime_header=True)[0]
        if left:
            res.stage = "flagged-compiles" if ok else "flagged"
        else:
            res.stage = "ok" if ok else "miss"
        if os.environ.get("CONVCHECK_KEEP"):
            keep = Path(os.environ["CONVCHECK_KEEP"]) / package
            for c in copies:
                k = keep / c.relative_to(work)
                k.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(c, k)
        return res
    finally:
        res.seconds = round(time.monotonic() - t0, 1)


def _stable_key(rel: str) -> str:
    return hashlib.sha256(rel.encode()).hexdigest()


def candidates(pkg: Path, per_package: int | None) -> tuple[list[str], int]:
    """The package's .cu files (relative paths), all or a stable-hash sample of
    `per_package` among those not dropped by the include walk; and the count of all .cu."""
    files = sorted(str(p.relative_to(pkg)) for p in pkg.rglob("*.cu") if p.is_file())
    if per_package is None:
        return files, len(files)
    return sorted(files, key=_stable_key), len(files)


def run_package(name: str, src: Path, per_package: int | None, results: list[Result], log) -> None:
    files, total = candidates(src, per_package)
    with tempfile.TemporaryDirectory(prefix="convcheck-") as tmp:
        work = Path(tmp) / name
        work.mkdir()
        tried = 0
        for rel in files:
            if per_package is not None and tried >= per_package:
                # the rest: counted by the include walk only, never compiled
                lib = missing_library(src / rel, include_dirs(src, src / rel))
                results.append(Result(name, rel, "dropped", f"reaches {lib}" if lib else "not sampled"))
                continue
            r = check_file(name, src, rel, work)
            if r.stage != "dropped":
                tried += 1
            results.append(r)
            if r.stage != "dropped":
                log(f"{r.stage:17} {name}/{rel} {r.seconds}s {r.reason or r.hipcc_error or ''} {','.join(r.rocm_errors[:6])}")


def summarise(results: list[Result]) -> dict:
    by = lambda s: [r for r in results if r.stage == s]  # noqa: E731
    dropped = by("dropped")
    s = {
        "cu_files": len(results),
        "dropped_missing_library": sum(1 for r in dropped if r.reason.startswith("reaches")),
        "not_sampled": sum(1 for r in dropped if r.reason == "not sampled"),
        "nvcc_tried": sum(1 for r in results if r.stage != "dropped"),
        "nvcc_failed": len(by("nvcc-fail")),
        "scan_error": len(by("scan-error")),
        "ok": len(by("ok")),
        "miss": len(by("miss")),
        "miss_runtime_header_only": sum(1 for r in by("miss") if r.runtime_header_only),
        "flagged": len(by("flagged")),
        "flagged_compiles": len(by("flagged-compiles")),
    }
    s["nvcc_compiled"] = s["nvcc_tried"] - s["nvcc_failed"]
    denom = s["ok"] + s["miss"]
    s["rate"] = round(s["ok"] / denom, 3) if denom else None
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", nargs="*", type=Path, default=list(DEFAULT_TREES),
                    help="folders whose subfolders are unpacked packages")
    ap.add_argument("--samples-only", action="store_true", help="only bench/conversion_samples/")
    ap.add_argument("--per-package", type=int, default=None,
                    help="compile at most N files of a package (stable-hash sample of those the include walk keeps)")
    ap.add_argument("--package", action="append", default=[], help="only these package folder names")
    ap.add_argument("--json", type=Path, help="write every file's result here")
    a = ap.parse_args(argv)
    for tool in ("nvcc", "hipcc"):
        if not shutil.which(tool):
            print(f"conversion_check: {tool} not found", file=sys.stderr)
            return 2
    results: list[Result] = []
    log = lambda m: print(m, flush=True)  # noqa: E731
    run_package("conversion_samples", SAMPLES, None, results, log)
    if not a.samples_only:
        for tree in a.trees:
            for pkg in sorted(p for p in tree.iterdir() if p.is_dir()):
                if a.package and pkg.name not in a.package:
                    continue
                run_package(pkg.name, pkg, a.per_package, results, log)
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.package, []).append(r)
    summary = {"all": summarise(results), **{k: summarise(v) for k, v in groups.items()}}
    for k, v in summary.items():
        print(f"{k:32} " + " ".join(f"{kk}={vv}" for kk, vv in v.items()))
    for r in results:
        if r.stage == "miss":
            print(f"MISS {r.package}/{r.path}: {r.hipcc_error}" + ("  [passes with hip_runtime.h force-included]" if r.runtime_header_only else ""))
    if a.json:
        a.json.write_text(json.dumps({"summary": summary, "files": [asdict(r) for r in results]}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
