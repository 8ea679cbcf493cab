"""NCCL features RCCL lacks (PTL502, PTL503, PTL505): targets, version wording, guards."""

from __future__ import annotations

from conftest import FIXTURES, scan_paths

COLL = FIXTURES / "collectives"


def test_python_env_tuning_targets_every_backend():
    result = scan_paths([COLL / "nccl_env.py"], select=("PTL505",))
    f = result.findings[0]
    assert {t: s.value for t, s in f.targets.items()} == {"rocm": "note", "tpu": "warning", "trainium": "warning", "gaudi": "warning"}
    cdmc = next(x for x in result.findings if "CUDA_DEVICE_MAX_CONNECTIONS" in x.message)
    assert "GPU_MAX_HW_QUEUES" in cdmc.message


def test_c_env_tuning_is_rocm_only():
    result = scan_paths([COLL / "nccl_newer_than_rccl.cu"])
    env = [f for f in result.findings if f.rule_id == "PTL505"]
    assert len(env) == 1 and set(env[0].targets) == {"rocm"}


def test_api_drift_names_the_rccl_release(tmp_path):
    result = scan_paths([COLL / "nccl_newer_than_rccl.cu"])
    drift = [f for f in result.findings if f.rule_id == "PTL503"]
    assert {f.snippet for f in drift} == {"ncclAlltoAll", "ncclCommWindowRegister"}
    assert all("NCCL 2.21.5" in f.message and "rocm-systems" in f.message for f in drift)
    assert all(f.confidence == "medium" for f in drift)


def test_version_tests_keep_calls_newer_rccl_has_but_not_the_param_api(tmp_path):
    src = tmp_path / "drift.cu"
    src.write_text(
        "typedef struct ncclComm* ncclComm_t;\n"
        "int ncclCommShrink(ncclComm_t, int*, int, ncclComm_t*, void*, int);\n"
        "int ncclParamGetInt(const char*, long*);\n"
        "void f(ncclComm_t c, ncclComm_t* o, long* v) {\n"
        "#if NCCL_VERSION_CODE >= 22700\n"
        "  ncclCommShrink(c, nullptr, 0, o, nullptr, 0);\n"
        "  ncclParamGetInt(\"x\", v);\n"
        "#endif\n"
        "  ncclCommShrink(c, nullptr, 0, o, nullptr, 0);\n"
        "}\n",
        encoding="utf-8",
    )
    result = scan_paths([src], root=tmp_path, select=("PTL503",))
    got = sorted((f.span.start_line, f.snippet) for f in result.findings)
    assert got == [(7, "ncclParamGetInt"), (9, "ncclCommShrink")]
    param = next(f for f in result.findings if f.snippet == "ncclParamGetInt")
    assert "no RCCL release" in param.message


def test_core_collectives_are_never_reported():
    result = scan_paths([COLL / "nccl_core_negative.cu"])
    assert [f for f in result.findings if f.rule_id.startswith("PTL5")] == []


def test_derived_nccl_rows_cover_the_hand_kept_notes():
    """The host functions derived from NCCL's and RCCL's headers are the names the notes in
    MISSING_IN_RCCL explain: a name added to one and not the other is a stale table."""
    from portlint.frontends.cuda.name_tables import entries_for
    from portlint.rules.collectives import MISSING_IN_RCCL

    host = {n for row in entries_for("PTL503", ("host",)) for n in row.names}
    device = {n for row in entries_for("PTL503", ("device",)) for n in row.names}
    assert host == set(MISSING_IN_RCCL)
    assert {"ncclDevComm", "ncclTeam", "ncclLsaBarrierSession", "ncclGetLsaPointer"} <= device
    assert not host & device


def test_the_configured_rccl_release_decides_which_functions_are_missing(tmp_path):
    """[tool.portlint.versions] rccl, through the real command line: on the default (NCCL
    2.21.5-based) RCCL both calls are reported; on an RCCL with the NCCL 2.28 base only the one
    no RCCL has."""
    import json
    import subprocess
    import sys

    src = tmp_path / "drift.cu"
    src.write_text(
        "typedef struct ncclComm* ncclComm_t;\n"
        "int ncclCommShrink(ncclComm_t, int*, int, ncclComm_t*, void*, int);\n"
        "int ncclParamGetInt(const char*, long*);\n"
        "void f(ncclComm_t c, ncclComm_t* o, long* v) {\n"
        "  ncclCommShrink(c, nullptr, 0, o, nullptr, 0);\n"
        "  ncclParamGetInt(\"x\", v);\n"
        "}\n",
        encoding="utf-8",
    )

    def reported(config: str) -> list[str]:
        (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "portlint", "scan", ".", "--format", "json", "--no-cache",
                               "--select", "PTL503"], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 1, proc.stderr
        return sorted(f["message"].split("`")[1] for f in json.loads(proc.stdout)["findings"])

    assert reported("[tool.portlint]\n") == ["ncclCommShrink", "ncclParamGetInt"]
    assert reported("[tool.portlint.versions]\nrccl = \"2.27\"\n") == ["ncclCommShrink", "ncclParamGetInt"]
    assert reported("[tool.portlint.versions]\nrccl = \"2.28\"\n") == ["ncclParamGetInt"]
