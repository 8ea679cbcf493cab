"""A portlint scan with CPU-time counters around its stages and around every detector call,
by wrapping functions from outside (portlint itself is not changed and nothing here is on
when portlint runs normally).

    python bench/stage_timers.py --out timers.json scan . --jobs 1 --no-progress ...

cProfile charges its own per-call cost to call-heavy code (a Python-level AST walk runs
several times slower under it); these counters cost two clock reads per wrapped call, so
their totals are close to an unprofiled run and serve as the check on cProfile's shares.
Counters nest: "model build" contains most "python parse" time, "cuda detectors" contains
the tree-sitter parse a CUDA file's first query triggers, and a family's detector time
contains the shared analyses it is the first to ask for. Run with --jobs 1 (workers are
other processes: their counters would not come back)."""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time
from collections import defaultdict

from portlint.cli import main

CPU = time.process_time
TOTALS: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)


def _timed(label_of, func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        label = label_of(*args, **kwargs)
        t0 = CPU()
        try:
            return func(*args, **kwargs)
        finally:
            TOTALS[label] += CPU() - t0
            CALLS[label] += 1
    return wrapper


def _patch(module, name: str, label_of) -> None:
    """Replace `module.name` and every already-imported portlint module's reference to it."""
    orig = getattr(module, name)
    new = _timed(label_of, orig)
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("portlint") and getattr(mod, name, None) is orig:
            setattr(mod, name, new)


def install() -> None:
    from portlint.core import registry
    from portlint.discovery import files
    from portlint.frontends.cuda import parse as cuda_parse
    from portlint.frontends.python import astindex
    from portlint.pipeline import engine

    def lang(sf, *a, **k):
        return "python" if sf.real.suffix.lower() in (".py", ".pyi") else "cuda/c++/build"

    _patch(files, "discover", lambda *a, **k: "stage: discovery")
    _patch(engine, "read_source", lambda *a, **k: "stage: read files")
    _patch(engine, "_build_model", lambda *a, **k: "stage: project model build (index)")
    _patch(engine, "_analyse", lambda sf, *a, **k: f"stage: per-file analysis, {lang(sf)} files")
    _patch(engine, "_run_detectors", lambda ctx, *a, **k: f"  within analysis: detector dispatch, {ctx.language}")
    _patch(engine, "_postprocess", lambda *a, **k: "  within analysis: post-processing (guards, suppressions)")
    _patch(engine, "_locate", lambda *a, **k: "  within analysis: locate findings (line hashes)")
    _patch(astindex, "parse", lambda *a, **k: "  nested: Python parse (ast.parse via astindex.parse)")
    _patch(cuda_parse, "parse_cuda", lambda *a, **k: "  nested: tree-sitter CUDA parse")
    try:
        from portlint.frontends.cuda import libclang_pass

        _patch(libclang_pass, "libclang_constants", lambda *a, **k: "  nested: libclang pass (libclang_constants, CPU)")
    except ImportError:  # the pass needs clang's Python bindings only when it runs
        pass

    orig_load = registry.load_family
    done: set[str] = set()

    @functools.wraps(orig_load)
    def load_family(family):
        dets = orig_load(family)
        if family not in done:
            done.add(family)
            dets[:] = [dataclasses.replace(d, func=_timed(lambda *a, _f=family, **k: f"family: {_f}", d.func)) for d in dets]
        return dets

    registry.load_family = load_family
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("portlint") and getattr(mod, "load_family", None) is orig_load:
            mod.load_family = load_family


def run(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "--out":
        raise SystemExit("usage: stage_timers.py --out FILE PORTLINT-ARGS...")
    out, args = argv[1], argv[2:]
    install()
    t0, w0 = CPU(), time.perf_counter()
    code = 0
    try:
        main.main(args=args, prog_name="portlint", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    total = CPU() - t0
    try:
        from portlint.frontends.cuda import libclang_pass
        TOTALS["  nested: libclang pass (its own STATS, WALL seconds, not CPU)"] = float(libclang_pass.STATS.get("seconds", 0.0))
    except Exception:  # the pass may be absent or off
        pass
    with open(out, "w") as fh:
        json.dump({"cpu_total_s": total, "wall_s": time.perf_counter() - w0,
                   "timers": {k: {"cpu_s": v, "calls": CALLS.get(k, 0)} for k, v in sorted(TOTALS.items(), key=lambda x: -x[1])}}, fh, indent=1)
    return code


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
