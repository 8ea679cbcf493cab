"""Issue 29's measurements: where portlint's time goes, against a regex floor and semgrep.

    python bench/perf.py prepare                      # fetch/verify, build the four trees and their file lists
    python bench/perf.py measure --rounds 1,2,3       # portlint --jobs 2 cold, regex floor, semgrep: interleaved
    python bench/perf.py profile                      # cProfile per stage and per family, each tree
    python bench/perf.py scale --sizes 0.1,1,3        # synthetic replicated trees: time and peak memory, PNG
    python bench/perf.py report                       # the markdown tables from what was recorded

Trees (all under bench/corpus/, never committed):

- mixed:  bench/corpus/src, the packages of bench/corpus.toml (CUDA and Python together);
- cuda:   the CUDA/C/C++ files of bench/cuda_corpus.toml (bench/run.py's CUDA-only section);
- python: the Python files of bench/corpus.toml (bench/run.py's Python-only section);
- model:  a 1M-line multi-backend model library from PyPI (bench/model_corpus.toml).

Each tool reads the same files: portlint's discovery lists them once (`files-<tree>.txt`),
the floor reads that list and semgrep scans a hard-linked view of it (bench/run.py's).
Every run goes through `/usr/bin/time -v` (wall, user+sys CPU, max RSS of the largest
process) inside bench/measure.py's sampler (peak RSS summed over the whole process tree),
and the 1/5/15-minute load averages are read right before it. Results are appended to
bench/results/perf-<what>.jsonl as they come, so an interrupted run keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import fetch_corpus  # noqa: E402
from measure import run  # noqa: E402

RESULTS = BENCH / "results"
CORPUS = fetch_corpus.CORPUS
MODEL_MANIFEST = BENCH / "model_corpus.toml"
MODEL_SRC = CORPUS / "model-src"
SEMGREP = Path(os.environ.get("PERF_SEMGREP", "/work/perfvenv/bin/semgrep"))
TREES = ("mixed", "cuda", "python", "model")
JOBS = 2
TAG = str(os.getpid())  # output and cache names of concurrent invocations must not collide


def log(msg: str) -> None:
    print(f"perf: {msg}", file=sys.stderr, flush=True)


def tree_root(name: str) -> Path:
    return {"mixed": fetch_corpus.SRC, "cuda": CORPUS / "cuda-only", "python": CORPUS / "python-only", "model": MODEL_SRC}[name]


def listing(name: str) -> Path:
    return RESULTS / f"files-{name}.txt"


def load_listing(name: str) -> list[Path]:
    root = tree_root(name)
    return [root / line for line in listing(name).read_text().splitlines() if line]


# ---- prepare -----------------------------------------------------------------------------

def prepare(trees: list[str]) -> None:
    import run as bench_run

    RESULTS.mkdir(parents=True, exist_ok=True)
    if {"mixed", "python"} & set(trees):
        fetch_corpus.ensure_corpus()
    if "cuda" in trees:
        fetch_corpus.ensure_corpus(manifest=fetch_corpus.CUDA_MANIFEST, src=fetch_corpus.CUDA_SRC)
    if "model" in trees:
        fetch_corpus.ensure_corpus(manifest=MODEL_MANIFEST, src=MODEL_SRC)
    for name in trees:
        if name in ("cuda", "python"):
            src = fetch_corpus.CUDA_SRC if name == "cuda" else fetch_corpus.SRC
            files = [f for f in bench_run.corpus_files(src) if bench_run.kind_of(f) == name]
            bench_run.kind_tree(files, src, tree_root(name))
        root = tree_root(name)
        files = bench_run.corpus_files(root)
        listing(name).write_text("".join(f"{f.relative_to(root).as_posix()}\n" for f in files))
        lines, size, by_kind = bench_run.count_lines(files)
        bench_run.semgrep_view(files, root, CORPUS / f"perf-semgrep-{name}")
        log(f"{name}: {len(files)} files, {lines} lines {by_kind}, {size / 2**20:.1f} MiB")
        (RESULTS / f"tree-{name}.json").write_text(json.dumps({"files": len(files), "lines": lines, "bytes": size, "by_kind": by_kind}))


# ---- one measured run ----------------------------------------------------------------------

_TIME_FIELDS = {
    "Elapsed (wall clock) time (h:mm:ss or m:ss)": "elapsed",
    "User time (seconds)": "user",
    "System time (seconds)": "sys",
    "Maximum resident set size (kbytes)": "maxrss_kb",
    "Percent of CPU this job got": "pcpu",
}


def _parse_time_v(stderr: str) -> dict:
    out: dict = {}
    for line in stderr.splitlines():
        line = line.strip()
        for label, key in _TIME_FIELDS.items():
            if line.startswith(label + ":"):
                out[key] = line[len(label) + 1:].strip()
    wall = out.get("elapsed", "0:0")
    parts = [float(p) for p in wall.split(":")]
    secs = 0.0
    for p in parts:
        secs = secs * 60 + p
    return {"wall_s": secs, "cpu_s": float(out.get("user", 0)) + float(out.get("sys", 0)),
            "max_rss_mb": int(out.get("maxrss_kb", 0)) / 1024, "pcpu": out.get("pcpu")}


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def timed(cmd: list[str], cwd: Path, env: dict | None = None, ok=(0, 1)) -> dict:
    load = loadavg()
    m = run(["/usr/bin/time", "-v", *cmd], cwd=cwd, env=env, interval=0.05)
    err = m.stderr.decode(errors="replace")
    if m.returncode not in ok:
        sys.stderr.write(err[-3000:])
        raise SystemExit(f"perf: {cmd[:3]} failed with exit code {m.returncode}")
    rec = _parse_time_v(err)
    rec.update(peak_tree_mb=round(m.peak_tree_mb, 1), load_before=load, load_after=loadavg(),
               stdout_tail=m.stdout.decode(errors="replace")[-2000:])
    return rec


def portlint_cmd(out: Path, cache: Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "portlint", "scan", ".", "--format", "json", "-o", str(out), "--no-progress",
            "--exit-zero", "--cache-dir", str(cache), "--jobs", str(jobs)]


def env_here() -> dict:
    return dict(os.environ, PYTHONPATH=str(REPO))


def run_tool(tool: str, name: str) -> dict:
    root = tree_root(name)
    if tool == "portlint":
        cache = RESULTS / f"perf-cache-{name}-{TAG}"
        shutil.rmtree(cache, ignore_errors=True)  # cold: an empty portlint cache
        out = RESULTS / f"perf-{name}-portlint-{TAG}.json"
        rec = timed(portlint_cmd(out, cache, JOBS), root, env_here())
        data = json.loads(out.read_text())
        rec["result"] = {"findings": len(data["findings"]), "files": data["summary"]["files_scanned"]}
        shutil.rmtree(cache, ignore_errors=True)
    elif tool in ("floor", "floor-file"):
        mode = "line" if tool == "floor" else "file"
        rec = timed([sys.executable, str(BENCH / "regex_floor.py"), "--mode", mode, "--files", str(listing(name))], root)
        rec["result"] = json.loads(rec["stdout_tail"].strip().splitlines()[-1])
    elif tool == "grep":
        # the same patterns as one GNU grep -E process (a DFA over all thirteen at once), one
        # core: a lower floor than Python's regex engine, for scale
        import regex_floor

        pats = RESULTS / "perf-grep-patterns.txt"
        pats.write_text("".join(c["pattern"].replace("[ \\t]", "[[:blank:]]") + "\n" for c in regex_floor.load_categories()))
        out = RESULTS / f"perf-{name}-grep-{TAG}.txt"
        script = f"xargs -a {listing(name)} -d '\\n' grep -E -n -H -f {pats} > {out}; test $? -le 1"
        rec = timed(["bash", "-c", script], root, ok=(0,))
        rec["result"] = {"matching_lines": sum(1 for _ in open(out, errors="replace"))}
        out.unlink()
    elif tool == "semgrep":
        view = CORPUS / f"perf-semgrep-{name}"
        out = RESULTS / f"perf-{name}-semgrep-{TAG}.json"
        cmd = [str(SEMGREP), "scan", "--config", str(BENCH / "semgrep" / "regex_equivalent.yml"), "--metrics=off",
               "--disable-version-check", "--json", "-o", str(out), "--no-git-ignore", "--quiet", "--jobs", str(JOBS),
               "--max-target-bytes", "0", "--timeout", "0", "."]
        env = dict(os.environ, SEMGREP_ENABLE_VERSION_CHECK="0", SEMGREP_SEND_METRICS="off")
        rec = timed(cmd, view, env)
        data = json.loads(out.read_text())
        rec["result"] = {"findings": len(data.get("results", [])), "files": len(data.get("paths", {}).get("scanned", [])),
                         "errors": len(data.get("errors", []))}
    else:
        raise SystemExit(f"unknown tool {tool}")
    rec.pop("stdout_tail", None)
    rec.update(tool=tool, tree=name, when=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    return rec


def append(what: str, rec: dict) -> None:
    with open(RESULTS / f"perf-{what}.jsonl", "a") as fh:
        fh.write(json.dumps(rec) + "\n")


def measure(trees: list[str], tools: list[str], rounds: list[int]) -> None:
    """Interleaved: round r runs every tool on every tree before round r+1 starts, so a load
    spike on the shared machine lands on all of them rather than on one tool's runs."""
    for r in rounds:
        for name in trees:
            for tool in tools:
                log(f"round {r}: {tool} on {name} (load {loadavg()})")
                rec = run_tool(tool, name)
                rec["round"] = r
                append("measure", rec)
                log(f"  {rec['wall_s']:.1f} s wall, {rec['cpu_s']:.1f} s CPU, {rec['peak_tree_mb']:.0f} MB tree, {rec['max_rss_mb']:.0f} MB max")


# ---- profile -------------------------------------------------------------------------------

def stage_of(filename: str) -> tuple[str, str] | None:
    """(stage, unit) for a portlint source file: unit is the family for rules/ and
    analyses/<lang>/<module> etc.; None for code outside portlint."""
    path = filename.replace("\\", "/")
    i = path.rfind("/portlint/")
    if i < 0:
        return None
    parts = path[i + len("/portlint/"):].split("/")
    if len(parts) == 1:
        return "cli", parts[0][:-3]
    stage = parts[0]
    if stage == "rules":
        unit = parts[1][:-3] if parts[1].endswith(".py") else parts[1]
    else:
        unit = "/".join(parts[1:])[:-3]
    return stage, unit


def attribute(stats: pstats.Stats) -> tuple[dict, dict]:
    """Self time of every function, charged to portlint code: a portlint function's own
    time goes to its (stage, unit); time spent in code outside portlint (the ast module,
    tree-sitter, re, builtins) goes to the portlint callers that called it, split in
    proportion to the time each call edge accounts for, walking up through non-portlint
    callers. Returns {(stage, unit): seconds}, {(stage, unit): seconds inside non-portlint code}."""
    raw = stats.stats  # func -> (cc, nc, tt, ct, callers{func: (cc, nc, tt, ct)})
    memo: dict = {}

    def owners(func, depth=0) -> dict:
        """How the time of a call to `func` (non-portlint) splits over portlint owners."""
        if func in memo:
            return memo[func]
        memo[func] = {}  # cycle guard
        callers = raw[func][4]
        total = sum(edge[3] for edge in callers.values()) or 0.0
        share: dict = defaultdict(float)
        if total <= 0 or depth > 40:
            share[("(outside)", "(no portlint caller)")] = 1.0
        else:
            for caller, edge in callers.items():
                w = edge[3] / total
                st = stage_of(caller[0])
                if st is not None:
                    share[st] += w
                else:
                    for k, v in owners(caller, depth + 1).items():
                        share[k] += w * v
        memo[func] = dict(share)
        return memo[func]

    own: dict = defaultdict(float)
    lib: dict = defaultdict(float)
    for func, (cc, nc, tt, ct, callers) in raw.items():
        st = stage_of(func[0])
        if st is not None:
            own[st] += tt
            continue
        # a non-portlint function: split its self time by the calling edges
        total = sum(edge[2] for edge in callers.values())
        if total <= 0:
            own[("(outside)", func[2] if func[0] == "~" else Path(func[0]).name)] += tt
            continue
        for caller, edge in callers.items():
            part = tt * edge[2] / total
            cst = stage_of(caller[0])
            if cst is not None:
                own[cst] += part
                lib[cst] += part
            else:
                for k, v in owners(caller).items():
                    own[k] += part * v
                    lib[k] += part * v
    return dict(own), dict(lib)


def family_inclusive(stats: pstats.Stats) -> dict:
    """Inclusive seconds of each rule family's detectors as the engine calls them: the
    cumulative time of the edges from portlint/pipeline/engine.py into portlint/rules/<family>
    (a family's share of shared analyses it triggers first is in it)."""
    out: dict = defaultdict(float)
    calls: dict = defaultdict(int)
    for func, (cc, nc, tt, ct, callers) in stats.stats.items():
        st = stage_of(func[0])
        if st is None or st[0] != "rules":
            continue
        for caller, edge in callers.items():
            if caller[0].replace("\\", "/").endswith("portlint/pipeline/engine.py"):
                out[st[1]] += edge[3]
                calls[st[1]] += edge[1]
    return {k: (v, calls[k]) for k, v in out.items()}


def top_functions(stats: pstats.Stats, n: int = 25) -> list[dict]:
    rows = []
    for func, (cc, nc, tt, ct, callers) in stats.stats.items():
        rows.append({"func": f"{func[0].split('/portlint/')[-1]}:{func[1]}({func[2]})", "calls": nc, "tottime": tt, "cumtime": ct})
    rows.sort(key=lambda r: -r["tottime"])
    return rows[:n]


def top_cumulative(stats: pstats.Stats, n: int = 30) -> list[dict]:
    rows = []
    for func, (cc, nc, tt, ct, callers) in stats.stats.items():
        if stage_of(func[0]) is None:
            continue
        rows.append({"func": f"{func[0].split('/portlint/')[-1]}:{func[1]}({func[2]})", "calls": nc, "tottime": tt, "cumtime": ct})
    rows.sort(key=lambda r: -r["cumtime"])
    return rows[:n]


def profile(trees: list[str]) -> None:
    """For each tree: bench/stage_timers.py's CPU counters (stages, families), then a cProfile
    of the same cold serial scan (`--jobs 1`: every stage runs in the one profiled
    process; with `--jobs 2` the workers' time would be invisible to the parent's profile)."""
    for name in trees:
        root = tree_root(name)
        cache = RESULTS / f"perf-prof-cache-{name}"
        shutil.rmtree(cache, ignore_errors=True)
        prof = RESULTS / f"perf-{name}.prof"
        out = RESULTS / f"perf-{name}-prof-report.json"
        cmd = [sys.executable, str(BENCH / "profile_scan.py"), "--prof-out", str(prof), "scan", ".", "--format", "json",
               "-o", str(out), "--no-progress", "--exit-zero", "--cache-dir", str(cache), "--jobs", "1"]
        log(f"stage timers {name} (load {loadavg()})")
        tjson = RESULTS / f"perf-timers-{name}.json"
        tcmd = [sys.executable, str(BENCH / "stage_timers.py"), "--out", str(tjson)] + cmd[4:]
        trec = timed(tcmd, root, env_here())
        shutil.rmtree(cache, ignore_errors=True)
        timers = json.loads(tjson.read_text())
        timers["run"] = {k: trec[k] for k in ("wall_s", "cpu_s", "max_rss_mb", "load_before")}
        tjson.write_text(json.dumps(timers, indent=1))
        log(f"profile {name} (load {loadavg()})")
        rec = timed(cmd, root, env_here())
        shutil.rmtree(cache, ignore_errors=True)
        stats = pstats.Stats(str(prof))
        own, lib = attribute(stats)
        total = stats.total_tt
        stages: dict = defaultdict(float)
        for (stage, unit), sec in own.items():
            stages[stage] += sec
        fam = family_inclusive(stats)
        summary = {
            "tree": name, "run": {k: rec[k] for k in ("wall_s", "cpu_s", "max_rss_mb", "load_before")}, "total_s": total,
            "stages": sorted(([k, v] for k, v in stages.items()), key=lambda x: -x[1]),
            "units": sorted(([f"{k[0]}/{k[1]}", v, lib.get(k, 0.0)] for k, v in own.items()), key=lambda x: -x[1])[:40],
            "families_inclusive": sorted(([k, v[0], v[1]] for k, v in fam.items()), key=lambda x: -x[1]),
            "top_self": top_functions(stats), "top_cumulative": top_cumulative(stats),
        }
        (RESULTS / f"perf-profile-{name}.json").write_text(json.dumps(summary, indent=1))
        log(f"  {name}: profiled {total:.1f} s; stages " + ", ".join(f"{k} {v / total:.0%}" for k, v in summary["stages"][:6]))


# ---- scaling curve ---------------------------------------------------------------------------

def _top_packages(tree: Path) -> list[str]:
    """Top-level Python package names of an unpacked sdist (folders with __init__.py at the
    top or under src/)."""
    names = []
    for base in (tree, tree / "src"):
        if base.is_dir():
            names += [d.name for d in base.iterdir() if d.is_dir() and (d / "__init__.py").exists()]
    return sorted(set(names))


def build_scaled(target_lines: int, dest: Path) -> dict:
    """A tree of `target_lines` lines made of copies of the mixed corpus's packages (both
    languages), copy k of package P under rep<k>/P-<k>/, every file's bytes made unique and
    every top-level package renamed (`import deepspeed` -> `import deepspeed_r3` in copy 3),
    so neither the cache nor the project model can merge two copies. The last package is cut
    at a file boundary to land on the target."""
    packages = sorted(p for p in fetch_corpus.SRC.iterdir() if p.is_dir())
    fresh = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    lines = files = copies = 0
    k = 0
    while lines < target_lines:
        for pkg in packages:
            if lines >= target_lines:
                break
            tops = _top_packages(pkg)
            rename = re.compile(rb"\b(" + b"|".join(re.escape(t.encode()) for t in tops) + rb")\b") if tops else None
            out_root = fresh / f"rep{k}" / f"{pkg.name}-{k}"
            copies += 1
            for f in fetch_corpus.source_files(pkg):
                rel = f.relative_to(pkg)
                parts = list(rel.parts)
                if k and tops:
                    parts = [f"{p}_r{k}" if p in tops else p for p in parts]
                data = f.read_bytes()
                if f.suffix in (".py", ".pyi"):
                    if k and rename is not None:
                        data = rename.sub(lambda m: m.group(1) + b"_r%d" % k, data)
                    data = b"# replica %d\n" % k + data
                else:
                    data = b"// replica %d\n" % k + data
                target = out_root.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                lines += data.count(b"\n")
                files += 1
                if lines >= target_lines:
                    break
        k += 1
    fetch_corpus.mark_project(fresh, "synthetic scaling tree", replace=True)
    shutil.rmtree(dest, ignore_errors=True)
    fresh.rename(dest)
    return {"lines": lines, "files": files, "package_copies": copies}


def scale(sizes: list[float], repeat: int, floor: bool) -> None:
    for size in sizes:
        target = int(size * 1_000_000)
        dest = CORPUS / f"scaled-{size:g}M"
        log(f"building {dest.name}")
        meta = build_scaled(target, dest)
        for r in range(repeat):
            cache = RESULTS / "perf-scale-cache"
            shutil.rmtree(cache, ignore_errors=True)
            out = RESULTS / "perf-scale-report.json"
            log(f"scale {size:g}M round {r + 1} (load {loadavg()})")
            rec = timed(portlint_cmd(out, cache, JOBS), dest, env_here())
            shutil.rmtree(cache, ignore_errors=True)
            data = json.loads(out.read_text())
            rec.pop("stdout_tail", None)
            rec.update(tool="portlint", size_m=size, round=r + 1, **meta, findings=len(data["findings"]),
                       files_scanned=data["summary"]["files_scanned"], when=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
            append("scale", rec)
            log(f"  {rec['wall_s']:.1f} s wall, {rec['cpu_s']:.1f} s CPU, {rec['peak_tree_mb']:.0f} MB tree")
            if floor:
                lst = RESULTS / "perf-scale-files.txt"
                lst.write_text("".join(f"{p.relative_to(dest).as_posix()}\n" for p in fetch_corpus.source_files(dest)))
                frec = timed([sys.executable, str(BENCH / "regex_floor.py"), "--files", str(lst)], dest)
                frec.pop("stdout_tail", None)
                frec.update(tool="floor", size_m=size, round=r + 1, **meta)
                append("scale", frec)
        shutil.rmtree(dest, ignore_errors=True)
    plot()


def plot(png: Path = REPO / "docs" / "performance-scaling.png") -> None:
    """CPU time, wall time and peak memory against tree size, drawn with pillow (matplotlib is
    not installed here). CPU seconds are the line to read on a loaded machine."""
    from PIL import Image, ImageDraw

    recs = [json.loads(x) for x in (RESULTS / "perf-scale.jsonl").read_text().splitlines() if x.strip()]
    by: dict = defaultdict(list)
    for r in recs:
        if r["tool"] == "portlint":
            by[r["lines"]].append(r)
    pts = sorted((lines, statistics.median(x["cpu_s"] for x in rs), statistics.median(x["wall_s"] for x in rs),
                  statistics.median(x["peak_tree_mb"] for x in rs), statistics.median(x["max_rss_mb"] for x in rs))
                 for lines, rs in by.items())
    W, H, M = 1000, 440, 70
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    series = [  # (panel, index into pts, label, colour)
        (0, 1, "CPU s (user+sys, process tree)", (200, 40, 40)),
        # wall time is left out: on the loaded machine it was 80-95 % waiting (the table has it)
        (1, 3, "peak RSS MB, process tree (summed)", (200, 40, 40)),
        (1, 4, "max RSS MB, largest process", (40, 90, 200)),
    ]
    titles = ["portlint scan --jobs 2, cold: CPU seconds", "portlint scan --jobs 2, cold: memory"]
    xmax = max(p[0] for p in pts) * 1.05
    for panel in (0, 1):
        x0 = panel * (W // 2)
        left, right, top, bottom = x0 + M, x0 + W // 2 - 20, 40, H - 50
        mine = [s_ for s_ in series if s_[0] == panel]
        ymax = max(p[i] for _, i, _, _ in mine for p in pts) * 1.1
        d.rectangle([left, top, right, bottom], outline="black")
        d.text((left, 12), titles[panel], fill="black")
        d.text((left + (right - left) // 2 - 40, H - 25), "lines (millions)", fill="black")
        for i in range(6):
            y = bottom - (bottom - top) * i / 5
            d.line([left - 4, y, left, y], fill="black")
            d.text((x0 + 8, y - 6), f"{ymax * i / 5:.0f}", fill="black")
            x = left + (right - left) * i / 5
            d.line([x, bottom, x, bottom + 4], fill="black")
            d.text((x - 10, bottom + 8), f"{xmax * i / 5 / 1e6:.1f}", fill="black")
        for n, (_, idx, label, colour) in enumerate(mine):
            xy = [(left + (right - left) * p[0] / xmax, bottom - (bottom - top) * p[idx] / ymax) for p in pts]
            if len(xy) > 1:
                d.line(xy, fill=colour, width=3)
            for x, y in xy:
                d.ellipse([x - 4, y - 4, x + 4, y + 4], fill=colour)
            d.text((left + 10, top + 10 + 16 * n), label, fill=colour)
    png.parent.mkdir(parents=True, exist_ok=True)
    img.save(png)
    log(f"wrote {png}")


# ---- report --------------------------------------------------------------------------------

def _med(xs):
    return statistics.median(xs) if xs else float("nan")


def report() -> str:
    out = []
    recs = [json.loads(x) for x in (RESULTS / "perf-measure.jsonl").read_text().splitlines() if x.strip()] \
        if (RESULTS / "perf-measure.jsonl").exists() else []
    if recs:
        out += ["| tree | lines | tool | runs | wall s (median; min–max) | CPU s | CPU/wall | peak RSS MB, process tree | max RSS MB, one process | load avg (1 min) during runs |",
                "|---|---:|---|---:|---|---:|---:|---:|---:|---|"]
        for name in TREES:
            meta_p = RESULTS / f"tree-{name}.json"
            meta = json.loads(meta_p.read_text()) if meta_p.exists() else {}
            for tool in ("portlint", "floor", "floor-file", "grep", "semgrep"):
                rs = [r for r in recs if r["tree"] == name and r["tool"] == tool]
                if not rs:
                    continue
                walls = [r["wall_s"] for r in rs]
                cpus = [r["cpu_s"] for r in rs]
                loads = [r["load_before"][0] for r in rs] + [r["load_after"][0] for r in rs]
                out.append(f"| {name} | {meta.get('lines', 0):,} | {tool} | {len(rs)} | {_med(walls):.1f} ({min(walls):.1f}–{max(walls):.1f}) | "
                           f"{_med(cpus):.1f} | {_med(cpus) / _med(walls):.2f} | {_med([r['peak_tree_mb'] for r in rs]):.0f} | "
                           f"{_med([r['max_rss_mb'] for r in rs]):.0f} | {min(loads):.1f}–{max(loads):.1f} |")
        out += ["", "| tree | portlint ÷ line floor, CPU | portlint ÷ line floor, wall | portlint ÷ grep, CPU | semgrep ÷ portlint, CPU | semgrep ÷ portlint, wall |",
                "|---|---:|---:|---:|---:|---:|"]
        for name in TREES:
            med = {t: (_med([r["wall_s"] for r in recs if r["tree"] == name and r["tool"] == t]),
                       _med([r["cpu_s"] for r in recs if r["tree"] == name and r["tool"] == t])) for t in ("portlint", "floor", "grep", "semgrep")}
            if med["portlint"][0] != med["portlint"][0]:
                continue

            def ratio(a, b):
                return "–" if a != a or b != b or not b else f"{a / b:.2f}×"
            out.append(f"| {name} | {ratio(med['portlint'][1], med['floor'][1])} | {ratio(med['portlint'][0], med['floor'][0])} | "
                       f"{ratio(med['portlint'][1], med['grep'][1])} | {ratio(med['semgrep'][1], med['portlint'][1])} | {ratio(med['semgrep'][0], med['portlint'][0])} |")
    out += ["", *profile_tables(), "", *scale_table()]
    text = "\n".join(out) + "\n"
    (RESULTS / "perf-report.md").write_text(text)
    return text


def profile_tables() -> list[str]:
    out: list[str] = []
    for name in TREES:
        tp, pp = RESULTS / f"perf-timers-{name}.json", RESULTS / f"perf-profile-{name}.json"
        if tp.exists():
            t = json.loads(tp.read_text())
            tot = t["cpu_total_s"]
            out += [f"**{name}: CPU counters (bench/stage_timers.py, --jobs 1)** — {tot:.1f} s CPU in the scanning process "
                    f"(run: {t['run']['wall_s']:.0f} s wall, {t['run']['cpu_s']:.1f} s CPU, load {t['run']['load_before'][0]:.1f})", "",
                    "| counter | CPU s | share of the process's CPU | calls |", "|---|---:|---:|---:|"]
            for k, v in t["timers"].items():
                if "libclang" in k:  # portlint's own counter: perf_counter, wall seconds
                    out.append(f"| libclang pass: portlint's own STATS counter, **wall** seconds (not CPU; inflated by load) | {v['cpu_s']:.2f} | – | – |")
                    continue
                out.append(f"| {k.strip()} | {v['cpu_s']:.2f} | {v['cpu_s'] / tot:.1%} | {v['calls']:,} |")
            out.append("")
        if pp.exists():
            p = json.loads(pp.read_text())
            tot = p["total_s"]
            out += [f"**{name}: cProfile (bench/profile_scan.py, --jobs 1)** — {tot:.1f} s profiled; self time per stage, "
                    "time in code outside portlint (ast, tree-sitter, re, builtins) charged to the portlint code that called it", "",
                    "| stage | s | share |", "|---|---:|---:|"]
            out += [f"| {k} | {v:.2f} | {v / tot:.1%} |" for k, v in p["stages"] if v / tot >= 0.001]
            out += ["", "| module (stage/unit) | s | share | of which in non-portlint code |", "|---|---:|---:|---:|"]
            out += [f"| {k} | {v:.2f} | {v / tot:.1%} | {lib:.2f} |" for k, v, lib in p["units"][:15]]
            out += ["", "| rule family (inclusive, as the engine calls its detectors) | s | share | calls |", "|---|---:|---:|---:|"]
            out += [f"| {k} | {v:.2f} | {v / tot:.1%} | {c:,} |" for k, v, c in p["families_inclusive"]]
            out += ["", "| top functions by self time | calls | self s | cumulative s |", "|---|---:|---:|---:|"]
            out += [f"| `{r['func']}` | {r['calls']:,} | {r['tottime']:.2f} | {r['cumtime']:.2f} |" for r in p["top_self"][:12]]
            out.append("")
    return out


def scale_table() -> list[str]:
    path = RESULTS / "perf-scale.jsonl"
    if not path.exists():
        return []
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    out = ["| tree size (lines) | files | tool | wall s | CPU s | CPU/wall | peak RSS MB (tree) | max RSS MB (one process) | load avg before → after | findings |",
           "|---:|---:|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in sorted(recs, key=lambda r: (r["lines"], r["tool"], r["round"])):
        out.append(f"| {r['lines']:,} | {r['files']:,} | {r['tool']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cpu_s'] / r['wall_s']:.2f} | "
                   f"{r['peak_tree_mb']:.0f} | {r['max_rss_mb']:.0f} | {r['load_before'][0]:.1f} → {r['load_after'][0]:.1f} | {r.get('findings', '–')} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--trees", default=",".join(TREES))
    p = sub.add_parser("measure")
    p.add_argument("--trees", default=",".join(TREES))
    p.add_argument("--tools", default="portlint,floor,floor-file,semgrep")
    p.add_argument("--rounds", default="1,2,3", help="the rounds this invocation runs (labels; run them in one call or spread over several)")
    p = sub.add_parser("profile")
    p.add_argument("--trees", default=",".join(TREES))
    p = sub.add_parser("scale")
    p.add_argument("--sizes", default="0.1,1,3")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--floor", action="store_true", help="also time the regex floor on each size")
    sub.add_parser("plot")
    sub.add_parser("report")
    args = ap.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.cmd == "prepare":
        prepare(args.trees.split(","))
    elif args.cmd == "measure":
        measure(args.trees.split(","), args.tools.split(","), [int(r) for r in args.rounds.split(",")])
    elif args.cmd == "profile":
        profile(args.trees.split(","))
    elif args.cmd == "scale":
        scale([float(s) for s in args.sizes.split(",")], args.repeat, args.floor)
    elif args.cmd == "plot":
        plot()
    else:
        print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
