"""The rule authoring path: id ranges and retired ids, scripts/new_rule.py, detector names,
message placeholders, docs.example, near-miss coverage and the author API's import rule."""

from __future__ import annotations

import ast
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import FIXTURES, REPO, scan_paths
from fixture_expectations import fixture_files, read_expectations

from portlint.core.rule_ids import IdTableError, check_rule_ids, load_id_table
from portlint.core.catalog import RuleError, _parse_all, _rule_files, load_rules

MARK = "TODO(new_rule)"


# ---------------------------------------------------------------- id ranges and retired ids


def _rules_copy(tmp_path: Path) -> Path:
    root = tmp_path / "rules"
    shutil.copytree(REPO / "rules", root)
    return root


def test_every_rule_id_lies_in_its_familys_range():
    table = load_id_table(REPO / "rules")
    assert check_rule_ids(table, load_rules()) == []
    assert set(table.ranges) == {r.family for r in load_rules().values()}


def test_an_id_outside_its_familys_range_is_named():
    table = load_id_table(REPO / "rules")
    stray = {"PTL310": SimpleNamespace(family="cuda_hopper", source="PTL310-x.toml"),
             "PTL100": SimpleNamespace(family="cuda_warp", source="PTL100-y.toml")}
    problems = check_rule_ids(table, stray)
    assert len(problems) == 2
    assert "PTL100 lies in no family's range" in problems[0]  # sorted by id
    assert "PTL310 lies in the range of gpu_gates, not in cuda_hopper's" in problems[1]


def test_a_retired_id_in_a_rule_file_is_an_error(tmp_path):
    root = _rules_copy(tmp_path)
    (root / "retired-ids.toml").write_text('[[retired]]\nid = "PTL201"\nname = "inline-ptx-asm"\nwhy = "test"\n', encoding="utf-8")
    with pytest.raises(RuleError, match="PTL201 is retired"):
        _parse_all(root, _rule_files(root))


def test_overlapping_ranges_are_refused(tmp_path):
    root = _rules_copy(tmp_path)
    text = (root / "id-ranges.toml").read_text(encoding="utf-8")
    (root / "id-ranges.toml").write_text(text.replace('triton = ["PTL701-PTL799"]', 'triton = ["PTL701-PTL801"]'), encoding="utf-8")
    with pytest.raises(IdTableError, match="PTL801 already belongs to triton"):
        load_id_table(root)


def test_the_index_goes_stale_when_the_id_table_changes(tmp_path):
    from portlint.core.catalog import _files_digest

    root = _rules_copy(tmp_path)
    before = _files_digest(root, _rule_files(root))
    (root / "retired-ids.toml").write_text('[[retired]]\nid = "PTL999"\nname = "gone"\nwhy = "test"\n', encoding="utf-8")
    assert _files_digest(root, _rule_files(root)) != before


# ---------------------------------------------------------------- scripts/new_rule.py


def _repo_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    dest.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "__snapshots__")
    for name in ("portlint", "rules", "scripts", "fixtures", "docs"):
        shutil.copytree(REPO / name, dest / name, ignore=ignore)
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(REPO / name, dest / name)
    return dest


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, env=env, timeout=300)


def _next_free(family: str, taken: set[str]) -> str:
    """Independently of rule_ids.next_free_id: the lowest number in the family's last range."""
    import tomllib

    table = tomllib.loads((REPO / "rules" / "id-ranges.toml").read_text(encoding="utf-8"))
    lo, _, hi = table["families"][family][-1].partition("-")
    return next(f"PTL{n:03d}" for n in range(int(lo[3:]), int((hi or lo)[3:]) + 1) if f"PTL{n:03d}" not in taken)


def test_new_rule_writes_the_rule_the_stub_and_fixtures_and_regenerates(tmp_path):
    root = _repo_copy(tmp_path)
    rid = _next_free("cuda_ptx", set(load_rules()))
    done = _run(root, "scripts/new_rule.py", "cuda_ptx", "ptx-in-a-test")
    assert done.returncode == 0, done.stderr
    rule_file = root / "rules" / "cuda_ptx" / f"{rid}-ptx-in-a-test.toml"
    positive = root / "fixtures" / "cuda_ptx" / "ptx_in_a_test.cu"
    negative = root / "fixtures" / "cuda_ptx" / "ptx_in_a_test_negative.cu"
    for path in (rule_file, positive, negative):
        assert path.is_file(), path
    assert f"expect: {rid}" in positive.read_text(encoding="utf-8")
    assert f"ok: {rid}" in negative.read_text(encoding="utf-8")
    detector_text = (root / "portlint" / "rules" / "cuda_ptx.py").read_text(encoding="utf-8")
    assert f'@detector("{rid}", nodes=None)\ndef ptx_in_a_test(ctx)' in detector_text
    # the copy loads: the rule parses with every required key, pairs with its detector (by
    # name), lies in the family's range; the derived files are fresh
    check = _run(root, "-c", (
        "from portlint.core.catalog import load_rules; from portlint.core.registry import load_family\n"
        f"r = load_rules()['{rid}']; load_family('cuda_ptx')\n"
        "print(r.name, r.family, r.effort, r.proof.startswith('unproven:'))"))
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == ["ptx-in-a-test", "cuda_ptx", "local", "True"]
    for script in ("generate_rule_index.py", "generate_readme_rules.py", "generate_rule_docs.py"):
        fresh = _run(root, f"scripts/{script}", "--check")
        assert fresh.returncode == 0, (script, fresh.stdout, fresh.stderr)
    assert f"[{rid}](rules/cuda_ptx/{rid}-ptx-in-a-test.toml)" in (root / "README.md").read_text(encoding="utf-8")
    assert (root / "docs" / "rules" / f"{rid}.md").is_file()
    # the stub does not pass: scanning its positive fixture reports nothing, so the fixture
    # test fails on the missing finding until the detector is written
    scan = _run(root, "-m", "portlint", "scan", str(positive.relative_to(root)), "--select", rid, "--format", "concise")
    assert scan.returncode == 0 and rid not in scan.stdout, scan.stdout


def test_new_rule_skips_retired_ids_and_refuses_bad_names(tmp_path):
    root = _repo_copy(tmp_path)
    first = _next_free("triton", set(load_rules()))
    (root / "rules" / "retired-ids.toml").write_text(f'[[retired]]\nid = "{first}"\nname = "old"\nwhy = "test"\n', encoding="utf-8")
    dry = _run(root, "scripts/new_rule.py", "triton", "some-new-check", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    second = _next_free("triton", set(load_rules()) | {first})
    assert dry.stdout.startswith(f"{second} some-new-check (triton, python):")
    assert not list((root / "rules" / "triton").glob(f"{second}-*"))  # a dry run writes nothing
    for args, message in ((("triton", "Bad_Name"), "not kebab-case"), (("nope", "x-y"), "no family"),
                          (("triton", "triton-fp8-dtype"), "exists already")):
        refused = _run(root, "scripts/new_rule.py", *args)
        assert refused.returncode == 2 and message in refused.stderr, refused.stderr


def test_no_new_rule_placeholder_is_left_in_the_tree():
    """A rule started by new_rule.py is finished when none of its TODO(new_rule) remain."""
    left = []
    for folder in ("rules", "portlint", "fixtures"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and path.suffix not in (".pyc", ".snap") and MARK in path.read_text(encoding="utf-8", errors="replace"):
                left.append(str(path.relative_to(REPO)))
    assert not left, f"unfinished rules (fill in every {MARK}): {left}"


# ---------------------------------------------------------------- detectors against rules


def test_every_detector_is_named_after_its_rule():
    from portlint.core import registry

    rules = load_rules()
    for family in registry.families():
        for d in registry.load_family(family):  # load_family refuses a misnamed detector
            assert d.func.__name__ == registry.detector_name(rules[d.rule_id])


def _placeholders(template: str) -> set[str]:
    return {field.split(".")[0].split("[")[0] for _, field, _, _ in string.Formatter().parse(template) if field}


def _report_calls(func_node: ast.FunctionDef) -> list[set[str]] | None:
    """The keyword names of each of the detector's own `ctx.report(...)` calls that use the
    rule's template (a call with `message=` writes its own text); None when the detector
    reports only through helpers or passes `**fields` (then the fixture run tells)."""
    calls = [n for n in ast.walk(func_node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "report"]
    if not calls or any(kw.arg is None for c in calls for kw in c.keywords):
        return None
    return [{kw.arg for kw in c.keywords} for c in calls if "message" not in {kw.arg for kw in c.keywords}]


def test_message_placeholders_are_filled_by_the_detectors_own_report_calls():
    """Statically, where a detector calls ctx.report itself with literal keywords: each such
    call passes every placeholder of the rule's message."""
    import inspect
    import textwrap

    from portlint.core import registry

    rules = load_rules()
    checked, problems = 0, []
    for family in registry.families():
        for d in registry.load_family(family):
            calls = _report_calls(ast.parse(textwrap.dedent(inspect.getsource(d.func))).body[0])
            if not calls:
                continue
            checked += 1
            for fields in calls:
                missing = _placeholders(rules[d.rule_id].message) - fields
                if missing:
                    problems.append(f"{d.rule_id} {d.func.__name__}: a report call lacks {sorted(missing)}")
    assert not problems, problems
    assert checked >= 20  # the check reaches a good share of the detectors


def test_every_placeholder_is_filled_on_every_fixture_finding():
    """Dynamically: a finding whose message kept a `{field}` unfilled, or a template the
    detector could not fill (reported as PTL003), would show in the messages."""
    rules = load_rules()
    files = fixture_files(FIXTURES)
    result = scan_paths(files)
    assert not [f for f in result.findings if f.rule_id == "PTL003"], "a detector crashed (a missing field raises)"
    for f in result.findings:
        for name in _placeholders(rules[f.rule_id].message):
            assert "{" + name + "}" not in f.message, f"{f.rule_id} at {f.path}:{f.span.start_line}: {{{name}}} unfilled"


# ---------------------------------------------------------------- docs.example


EXAMPLE_FILE = {"cuda": "example.cu", "cpp": "example.cu", "python": "example.py", "cmake": "CMakeLists.txt",
                "dockerfile": "Dockerfile", "text": "requirements.txt"}
# An example may leave out its family's everyday imports (when it has no import of its own).
PRELUDE = {"triton": "import triton\nimport triton.language as tl\n", "xla_tracing": "import jax\nimport jax.numpy as jnp\n"}
_FUNCTION = re.compile(r"__global__|__device__|^#|^\w[\w:<>]*\s+\w+\s*\(", re.M)


def example_source(rule) -> tuple[str, str]:
    """(file name, text) of the rule's first fenced docs.example: CUDA statements outside a
    function are placed in a kernel, Python gets the family's prelude."""
    m = re.search(r"```(\w*)\n(.*?)```", rule.docs_example, re.S)
    assert m, f"{rule.id}: docs.example has no fenced code block"
    fence, code = m.group(1), m.group(2)
    if fence in ("cuda", "cpp") and not _FUNCTION.search(code):
        code = "__global__ void example_kernel(float* out, float v, int o) {\n" + code + "}\n"
    if fence == "python" and not re.search(r"^(import|from) ", code, re.M):
        code = PRELUDE.get(rule.family, "") + code
    return EXAMPLE_FILE[fence], code


def example_files(rule) -> dict[str, str]:
    """{path: text} when every fenced block of the example starts with a `file: PATH` comment
    (a rule about how files of a package meet: a build file and the source it lists); else {}."""
    blocks = re.findall(r"```\w*\n(.*?)```", rule.docs_example, re.S)
    named = [re.match(r"(?://|#)\s*file:\s*(\S+)\n", b) for b in blocks]
    if len(blocks) < 2 or not all(named):
        return {}
    return {m.group(1): b for m, b in zip(named, blocks)}


RULES = [r for r in load_rules().values() if r.family != "tool"]


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_docs_example_yields_its_rule(rule, tmp_path):
    """Scanned with its family's rules, the example reports the rule, and any other rule it
    reports is one the example names in its text (`// PTL104 for the mask`)."""
    from test_fixtures import family_selection

    select = tuple(sorted(set(family_selection({rule.family})) | {rule.id}))
    files = example_files(rule)
    if files:  # a package of several files, each block naming its path (`# file: setup.py`)
        paths = []
        for name, text in files.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text, encoding="utf-8")
            paths.append(tmp_path / name)
        code = "\n".join(files.values())
        result = scan_paths(paths, root=tmp_path, select=select)
    else:
        name, code = example_source(rule)
        path = tmp_path / name
        path.write_text(code, encoding="utf-8")
        result = scan_paths([path], root=tmp_path, select=select)
    got = {f.rule_id for f in result.findings if not f.suppressed}
    named = {rule.id} | set(re.findall(r"PTL\d{3}", code))
    assert rule.id in got and got <= named, f"{rule.id}: the example reports {sorted(got)}\n{code}"


# ---------------------------------------------------------------- positive and near-miss lines


def _coverage():
    positive, near_miss = set(), set()
    for path in fixture_files(FIXTURES):
        exp = read_expectations(path)
        positive |= {rid for (_, rid) in exp.active}
        near_miss |= {rid for (_, rid) in exp.near_miss}
    return positive, near_miss


def test_every_rule_has_a_positive_and_a_near_miss_line():
    """An `expect: PTLnnn` line and an `ok: PTLnnn` line (a near-miss the rule leaves alone)
    for every rule; tests/test_fixtures.py checks that the rule runs there and stays quiet."""
    positive, near_miss = _coverage()
    rules = {rid for rid, r in load_rules().items() if r.family != "tool"}
    assert not rules - positive, f"rules with no `expect:` line: {sorted(rules - positive)}"
    assert not rules - near_miss, f"rules with no near-miss line (`ok: PTLnnn`): {sorted(rules - near_miss)}"


# ---------------------------------------------------------------- the author API


def _family(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["portlint", "detectors"] else None


def test_no_detector_module_imports_another_familys_private_names():
    offenders = []
    folder = REPO / "portlint" / "rules"
    for path in sorted(folder.rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        own = _family(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                other = _family(node.module)
                private = [a.name for a in node.names if a.name.startswith("_")]
                if other and other != own and private:
                    offenders.append(f"{module} imports {private} from {node.module}")
            if isinstance(node, ast.ImportFrom) and node.level:
                offenders.append(f"{module}: relative import (write portlint.rules.api or the full module)")
    assert not offenders, offenders


def test_the_author_api_exports_what_it_lists():
    import portlint.rules.api as api

    for name in api.__all__:
        assert hasattr(api, name), name
        assert f"{name}" in api.__doc__ or name in ("Edit", "Fix", "Span", "detector"), f"{name} is not described in the api docstring"


def test_new_rule_puts_the_stub_of_a_package_family_in_its_own_module(tmp_path):
    """A family split into a package (portlint/rules/<family>/) gets a new module for the
    stub and the import line its __init__ needs for the registration to run."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import new_rule
    finally:
        sys.path.remove(str(REPO / "scripts"))
    package = tmp_path / "portlint" / "rules" / "cuda_warp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    path, init_line = new_rule.detector_target(tmp_path, "cuda_warp", "lane_trick")
    assert path == package / "lane_trick.py"
    assert init_line.startswith("from portlint.rules.cuda_warp import lane_trick")
    (tmp_path / "portlint" / "rules" / "gpu_gates.py").write_text("", encoding="utf-8")
    assert new_rule.detector_target(tmp_path, "gpu_gates", "x") == (tmp_path / "portlint" / "rules" / "gpu_gates.py", None)
