"""The package layout is the pipeline: each stage imports only the stages below it.

Stages, lowest first (portlint/<stage>/): core, discovery, frontends, index, analyses,
rewrites, rules, findings, pipeline, output, server, then the command line (cli.py,
__main__.py). An import of a higher stage from a lower one is a defect unless it is listed in
UPWARD below with the reason it is still there; a listed import that is gone must leave the
list, so the list only shrinks.

Imports inside functions hide the graph. The ones that remain are counted per module in
FUNCTION_LEVEL (most are the command line's lazy imports that keep `portlint --help` and the
pre-commit one-file call fast, see tests/test_startup.py); a module may not gain one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest


PACKAGE = Path(__file__).resolve().parent.parent / "portlint"

STAGES = ("core", "discovery", "frontends", "index", "analyses", "rewrites", "rules",
          "findings", "pipeline", "output", "server", "cli")

# (importer, imported): why the upward import is still there. Each is work for the issue that
# reworks that part; remove the entry with the import.
UPWARD = {
    ("portlint.analyses.cuda.hipify", "portlint.findings.precedence"):
        "hipify still creates findings itself and asks precedence which rename owns a name",
    ("portlint.core.cache", "portlint.frontends.cuda.includes"):
        "the cache key of a CUDA file digests the headers it includes",
    ("portlint.discovery.languages", "portlint.frontends.python.names"):
        "a .py file's languages (triton, jax, ...) are read from its import lines",
    ("portlint.frontends.python.names", "portlint.index.project"):
        "relative imports are resolved with the module name the project index gives the file",
    ("portlint.index.project", "portlint.analyses.python"):
        "the project index summarises traced regions per function",
    ("portlint.index.project", "portlint.analyses.python.traced"):
        "the project index summarises traced regions per function",
}

# module -> imports of portlint modules inside its functions, at most
FUNCTION_LEVEL = {
    # cli: +2 (issue 26) the one writer in _write and classify for --stdin-filename, imported per command for start-up time;
    # +6 (issue 27) init (config, the writer; init_section, discovery, config) and --extend-select, lazy as every command;
    # -2 (issue 23) the reader and writer (core.files, no third-party imports) at the top
    "portlint.cli": 40, "portlint.pipeline.engine": 14, "portlint.index.project": 16,
    "portlint.frontends.ptx": 14, "portlint.rules.cuda_ptx": 13,
    "portlint.frontends.cuda.libclang_pass": 9, "portlint.rules.build": 9,
    "portlint.analyses.cuda.hipify": 7, "portlint.frontends.cuda.name_tables": 6,
    "portlint.frontends.cuda.guards": 5, "portlint.rules.api": 5,
    "portlint.output.formats": 7,  # +2: gitlab, junit, imported only when asked for
    "portlint.frontends.cuda.platform_macros": 4,
    "portlint.pipeline.workers": 4, "portlint.output.fixes": 3, "portlint.server.buffers": 3,
    "portlint.frontends.cuda.symbols": 3, "portlint.frontends.cuda.includes": 3,
    "portlint.pipeline.stdin_scan": 3, "portlint.rules.xla_tracing": 3,
    "portlint.output.add_suppressions": 3, "portlint.output.formats.sarif": 2,
    "portlint.analyses.python.traced_regions": 3, "portlint.analyses.cuda.constants": 3,
    "portlint.core.cache": 3, "portlint.rewrites.skeletons": 2, "portlint.rules.cuda_hopper": 2,
    "portlint.rules.gpu_gates": 2, "portlint.rules.cuda_async": 2,
    "portlint.rules.cuda_warp.warpsize_constant": 2, "portlint.rules.cuda_warp": 2,
    "portlint.output.report": 2, "portlint.analyses.cuda.capability_gates": 2,
    "portlint.index.context": 1, "portlint.core.config": 2, "portlint.core.catalog": 2,
    "portlint.server.server": 1, "portlint.discovery.languages": 1,
    "portlint.frontends.python.names": 1, "portlint.frontends.python.pyimports": 1,
    "portlint.rules.collectives": 1, "portlint.rules.cuda_libraries": 1, "portlint.rules.triton": 1,
    "portlint.rules.cuda_warp.analysis": 1, "portlint.output.report.summary": 1,
    "portlint.output.formats.statistics": 1,
    "portlint.output.formats.json_report": 1, "portlint.findings.precedence": 1,
    "portlint.findings.selection": 1, "portlint.analyses.python.traced_values": 1,
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _stage(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) == 1:
        return None  # the package itself (__version__)
    if parts[1] in ("cli", "__main__"):
        return "cli"
    return parts[1] if parts[1] in STAGES else None


def _imports(module: str, path: Path):
    """(imported module, inside a function) for every portlint import of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("portlint"):
                continue
            if target == "portlint" or not node.module:
                names = [f"{target}.{a.name}" for a in node.names]
            else:
                names = [target]
            for name in names:
                yield name, id(node) in inside
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("portlint"):
                    yield alias.name, id(node) in inside


def _known(name: str, modules: set[str]) -> str:
    """The module an imported name lives in (`portlint.core.model.Finding` -> portlint.core.model)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def test_every_module_lives_in_a_stage():
    loose = [m for m, _ in _modules() if _stage(m) is None and m not in ("portlint",)]
    assert loose == [], f"modules outside the stage packages {STAGES}: {loose}"


def test_each_stage_imports_only_the_stages_below_it():
    modules = {m for m, _ in _modules()}
    found = set()
    for module, path in _modules():
        low = _stage(module)
        for name, _ in _imports(module, path):
            target = _known(name, modules)
            high = _stage(target)
            if low is None or high is None:
                continue
            if STAGES.index(high) > STAGES.index(low):
                found.add((module, target))
    new = sorted(found - set(UPWARD))
    gone = sorted(set(UPWARD) - found)
    assert new == [], "imports of a higher stage: " + "; ".join(f"{a} -> {b}" for a, b in new)
    assert gone == [], "no longer imported, remove from UPWARD: " + "; ".join(f"{a} -> {b}" for a, b in gone)


def test_no_module_gains_a_function_level_import():
    counts: dict[str, int] = {}
    for module, path in _modules():
        n = sum(1 for _, inside in _imports(module, path) if inside)
        if n:
            counts[module] = n
    grown = {m: (n, FUNCTION_LEVEL.get(m, 0)) for m, n in counts.items() if n > FUNCTION_LEVEL.get(m, 0)}
    assert grown == {}, f"function-level imports added (now, allowed): {grown}; import at the top of the module"
    shrunk = {m: (counts.get(m, 0), n) for m, n in FUNCTION_LEVEL.items() if counts.get(m, 0) < n}
    assert shrunk == {}, f"function-level imports removed: lower FUNCTION_LEVEL to the new counts {shrunk}"


def test_no_import_cycle_between_stage_packages_at_module_level():
    """Module-level imports form no cycle at all (the graph a reader sees is a DAG)."""
    modules = {m for m, _ in _modules()}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in _modules():
        for name, inside in _imports(module, path):
            target = _known(name, modules)
            if not inside and target in modules and target != module:
                edges[module].add(target)
    colour: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, stack: list[str]) -> bool:
        colour[m] = 1
        stack.append(m)
        for t in sorted(edges[m]):
            if colour.get(t) == 1:
                cycle.extend(stack[stack.index(t):] + [t])
                return True
            if colour.get(t) is None and visit(t, stack):
                return True
        stack.pop()
        colour[m] = 2
        return False

    for m in sorted(modules):
        if colour.get(m) is None and visit(m, []):
            break
    # a package's __init__ importing its own submodules is not a cycle a reader trips on
    assert cycle == [] or all(c.startswith(cycle[0]) or cycle[0].startswith(c) for c in cycle), " -> ".join(cycle)


def test_file_suffix_tables_live_in_core_suffixes():
    """Which suffixes make a file CUDA, C/C++, a header or Python is one table
    (portlint/core/suffixes.py): no other module spells a tuple or set of them."""
    import re

    table = re.compile(r"""[({]\s*["']\.(?:cu|cuh|hip|cpp|cc|hpp|h|py|pyi)["']\s*,\s*["']\.\w+["']""")
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "suffixes.py" and path.parent.name == "core":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if table.search(line) and ".json" not in line:  # portlint's own files, not a language
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
