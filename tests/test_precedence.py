"""One finding per construct as data: the `supersedes` key of the rule files, validated at
load, applied by one filter (portlint.findings.precedence) and by the HIPIFY row owners."""

from __future__ import annotations

import shutil

import pytest
from conftest import scan_paths

from portlint.findings import precedence

from portlint.core import catalog as rules
from portlint.core.model import Finding, Severity, Span


def _copy_rules(tmp_path):
    copy = tmp_path / "rules"
    shutil.copytree(rules.rules_root(), copy)
    return copy


def _set_supersedes(path, ids: str) -> None:
    text = path.read_text(encoding="utf-8")
    text = "\n".join(ln for ln in text.split("\n") if not ln.startswith("supersedes ="))
    path.write_text(text.replace("default_enabled = true\n", f"default_enabled = true\nsupersedes = {ids}\n", 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("ids", "error"),
    [('["PTL999"]', "supersedes unknown rules"), ('["PTL302"]', "must not name the rule itself"), ('"PTL602"', "must be a list")],
)
def test_a_bad_supersedes_key_is_refused(tmp_path, ids, error):
    copy = _copy_rules(tmp_path)
    _set_supersedes(next(copy.glob("cuda_hopper/PTL302-*.toml")), ids)
    with pytest.raises(rules.RuleError, match=error):
        rules._parse_all(copy, rules._rule_files(copy))


def test_a_supersedes_cycle_is_refused(tmp_path):
    copy = _copy_rules(tmp_path)
    _set_supersedes(next(copy.glob("cuda_api/PTL602-*.toml")), '["PTL302"]')  # PTL302 already supersedes PTL602
    with pytest.raises(rules.RuleError, match="cycle"):
        rules._parse_all(copy, rules._rule_files(copy))


def _finding(rule_id: str, line: int, path: str = "a.cu") -> Finding:
    return Finding(rule_id, path, Span(line, 1, line, 10), "m", Severity.ERROR, {"rocm": Severity.ERROR}, "high")


def test_the_filter_drops_only_the_superseded_finding_of_the_same_construct():
    kept = precedence.drop_superseded(
        [_finding("PTL302", 3), _finding("PTL602", 3), _finding("PTL602", 4), _finding("PTL602", 3, "b.cu"), _finding("PTL304", 3)]
    )
    assert [(f.rule_id, f.span.start_line, f.path) for f in kept] == [
        ("PTL302", 3, "a.cu"), ("PTL602", 4, "a.cu"), ("PTL602", 3, "b.cu"), ("PTL304", 3, "a.cu"),
    ]


def test_winner_follows_the_relation():
    assert precedence.supersedes("PTL302", "PTL602") and not precedence.supersedes("PTL602", "PTL302")
    assert precedence.winner(["PTL602", "PTL604"]) == "PTL604"
    assert precedence.winner(["PTL601", "PTL604"]) == "PTL604"
    assert precedence.winner([]) is None


def test_the_hipify_owners_come_from_the_claims():
    from portlint.analyses.cuda.hipify import owner_of

    assert owner_of("cudaMalloc", "CUDA Runtime", True, "hipMalloc") == "PTL601"
    assert owner_of("cudaGraphAddNode_v2", "CUDA Runtime", False, "") == "PTL610"
    assert owner_of("cudaStreamAttrValue", "CUDA Runtime", False, "") == "PTL602"
    assert owner_of("CUBLAS_TF32_TENSOR_OP_MATH", "cuBLAS", True, "HIPBLAS_TF32_TENSOR_OP_MATH") == "PTL604"
    assert owner_of("cudnnCreate", "cuDNN", True, "hipdnnCreate") == "PTL603"
    assert owner_of("__shfl_sync", "CUDA Device", False, "") is None
    assert owner_of("GLenum", "CUDA Runtime", False, "") is None


def test_tensor_map_is_reported_as_tma_once_with_or_without_the_api_rule(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda.h>\n__global__ void k(const __grid_constant__ CUtensorMap map) {}\n", encoding="utf-8")
    both = scan_paths([src], root=tmp_path, select=("PTL302", "PTL602"))
    assert [(f.rule_id, f.span.start_line) for f in both.findings] == [("PTL302", 2)]
    api_only = scan_paths([src], root=tmp_path, select=("PTL602",))
    assert [(f.rule_id, f.span.start_line) for f in api_only.findings] == [("PTL602", 2)]
