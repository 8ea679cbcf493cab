"""Proof as data: every non-tool rule names the check that proves it (`proof` in its TOML),
and that check exists and runs a real toolchain (nvcc, hipcc, jax, torch, triton, CMake from
PyPI configuring against Debian's ROCm packages, pip resolving against the package registry, or
`strings` reading a real library binary fetched with pip)."""

from __future__ import annotations

import ast
import json
import re

from conftest import REPO, run_portlint

from portlint.core.catalog import load_rules

TEST_REF = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
# what a toolchain call looks like in a test or in a helper it calls
TOOLCHAIN_CALL = re.compile(
    r"hipcc_compile\(|nvcc_compile\(|require_tool\(\"(?:nvcc|hipcc|strings)\"\)|\"-m\", \"pip\"|require_module\(\"(?:jax|torch|triton|cmake)"
    r"|compile_kernel\(|compile_all\(|dynamo\.explain|jax\.jit\(|pallas_call")
# rules whose proof says plainly that no toolchain checks them yet; shrinking this list is progress,
# growing it must be a visible decision
UNPROVEN = {"PTL056"}


def _function_source(path, name: str) -> str | None:
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(text, node)
    return None


def _calls_a_toolchain(path, name: str) -> bool:
    """The test itself, or a module-level function of its file (or tests/oracles.py,
    tests/triton_oracle.py) that the test calls, runs a toolchain."""
    text = path.read_text(encoding="utf-8")
    body = _function_source(path, name)
    if TOOLCHAIN_CALL.search(body):
        return True
    module = ast.parse(text)
    helpers = {n.name for n in module.body if isinstance(n, ast.FunctionDef)
               and TOOLCHAIN_CALL.search(ast.get_source_segment(text, n))}
    return any(re.search(rf"\b{h}\(", body) for h in helpers)


def test_every_non_tool_rule_has_a_proof():
    missing = [r.id for r in load_rules().values() if r.family != "tool" and not r.proof]
    assert not missing, f"rules without a proof: {missing}"


def test_each_proof_names_existing_tests_that_run_a_toolchain():
    unproven = set()
    for rule in load_rules().values():
        if rule.family == "tool":
            continue
        if rule.proof.startswith("unproven:"):
            unproven.add(rule.id)
            continue
        refs = TEST_REF.findall(rule.proof)
        assert refs, f"{rule.id}: proof names no test (`tests/file.py::test_name`): {rule.proof}"
        assert re.match(r"[\w .+()/-]*(nvcc|hipcc|jax|torch|triton|cmake|pip|strings)", rule.proof), f"{rule.id}: proof names no toolchain"
        for file, name in refs:
            path = REPO / file
            assert path.is_file(), f"{rule.id}: {file} does not exist"
            assert _function_source(path, name), f"{rule.id}: {file} has no {name}"
            assert _calls_a_toolchain(path, name), f"{rule.id}: {file}::{name} runs no toolchain"
    assert unproven == UNPROVEN, f"unproven rules changed: now {sorted(unproven)}"


def test_rule_command_prints_the_proof_and_json_lists_it():
    proc = run_portlint("rule", "PTL703")
    assert proc.returncode == 0
    assert "## Proof" in proc.stdout and "test_oracle_triton.py::test_ptl703_" in proc.stdout
    proc = run_portlint("rules", "--format", "json")
    assert proc.returncode == 0
    doc = {r["id"]: r for r in json.loads(proc.stdout)}
    assert doc["PTL301"]["proof"].startswith("hipcc gfx90a")
    assert all(doc[rid]["proof"] for rid in doc if not rid.startswith("PTL00"))


def _category(proof: str) -> str:
    if proof.startswith("unproven:"):
        return "unproven"
    if proof.startswith("nvcc sm_90a only"):
        return "nvcc only"
    if proof.startswith("hipcc"):
        return "hipcc"
    if proof.startswith("triton"):
        return "triton"
    if proof.startswith(("jax", "torch")):
        return "jax/torch"
    if proof.startswith("cmake"):
        return "cmake"
    if proof.startswith(("pip", "strings")):
        return "pip/strings"
    raise AssertionError(f"proof of unknown kind: {proof}")


def test_readme_counts_match_the_proofs():
    from collections import Counter

    rules = [r for r in load_rules().values() if r.family != "tool"]
    counts = Counter(_category(r.proof) for r in rules)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    stated = {label: int(n) for n, label in re.findall(r"^- \*\*(\d+) rules?\*\*: ([\w/ ]+)\.", readme, re.M)}
    assert stated == dict(counts), f"README says {stated}, the rule files say {dict(counts)}"
    assert f"For the {len(rules)} rules\noutside the `tool` family" in readme
