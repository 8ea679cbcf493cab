"""The JSON report matches its documented schema and carries what scripts need."""

from __future__ import annotations

import json

import jsonschema
from conftest import FIXTURES, REPO, run_portlint


def schema():
    return json.loads((REPO / "docs" / "portlint-report.schema.json").read_text())


def test_fixtures_report_matches_schema():
    proc = run_portlint("scan", str(FIXTURES), "--no-cache", "--format", "json", "--sarif-include-suppressed")
    doc = json.loads(proc.stdout)
    jsonschema.Draft7Validator(schema()).validate(doc)
    assert doc["summary"]["findings"] == sum(1 for f in doc["findings"] if f["suppressed"] is None)
    assert doc["summary"]["suppressed"] == sum(1 for f in doc["findings"] if f["suppressed"])
    keys = [(f["path"], f["start_line"], f["start_column"]) for f in doc["findings"]]
    assert keys == sorted(keys)


def test_clean_report(tmp_path):
    (tmp_path / "ok.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    doc = json.loads(run_portlint("scan", "ok.cu", "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    jsonschema.Draft7Validator(schema()).validate(doc)
    assert doc["findings"] == [] and doc["summary"]["files_scanned"] == 1


def test_fingerprint_survives_line_moves(tmp_path):
    body = '__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'
    (tmp_path / "a.cu").write_text(body)
    first = json.loads(run_portlint("scan", "a.cu", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"][0]
    (tmp_path / "a.cu").write_text("// a new comment on top\n\n" + body)
    second = json.loads(run_portlint("scan", "a.cu", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"][0]
    assert first["start_line"] != second["start_line"]
    assert first["fingerprints"]["portlint/v1"] == second["fingerprints"]["portlint/v1"]
