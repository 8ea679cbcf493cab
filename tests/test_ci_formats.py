"""`--format gitlab` (code quality JSON) and `--format junit` (JUnit XML), through the real
command line: the GitLab report against the schema of the fields GitLab reads
(tests/data/gitlab-codequality.schema.json), the JUnit report through junitparser, the
parser CI result viewers use, and xml.etree for its structure."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import junitparser
from conftest import REPO, run_portlint

BAD = '__global__ void k(unsigned* o) {\n  asm volatile("membar.gl;");\n  asm volatile("membar.gl;");\n  o[0] = 1u;\n}\n'
CLEAN = "__global__ void k(unsigned* o) { o[threadIdx.x] = 1u; }\n"
HOSTILE_NAME = "we\x1bird<&>.cu"


def _tree(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.cu").write_text(BAD)
    (tmp_path / "src" / "clean.cu").write_text(CLEAN)
    (tmp_path / "requirements.txt").write_text("cupy-cuda12x\n")
    (tmp_path / "portlint.toml").write_text('targets = ["rocm", "tpu"]\n')
    return tmp_path


def test_gitlab_code_quality_matches_the_schema_and_fingerprints_are_unique(tmp_path):
    _tree(tmp_path)
    proc = run_portlint("scan", "--no-cache", "--format", "gitlab", cwd=tmp_path / "src")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    schema = json.loads((REPO / "tests" / "data" / "gitlab-codequality.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    assert [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(doc)] == []
    # paths are relative to the project root (where portlint.toml is), not to the cwd
    assert {d["location"]["path"] for d in doc} == {"src/bad.cu"}
    assert [d["location"]["lines"]["begin"] for d in doc] == [2, 3]
    assert {d["check_name"] for d in doc} == {"PTL201"} and {d["severity"] for d in doc} == {"critical"}
    assert len({d["fingerprint"] for d in doc}) == len(doc) == 2


def test_gitlab_report_of_a_clean_tree_is_an_empty_array(tmp_path):
    (tmp_path / "clean.cu").write_text(CLEAN)
    proc = run_portlint("scan", "--no-cache", "--isolated", "--format", "gitlab", "clean.cu", cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout) == []


def test_junit_parses_with_junitparser_one_failure_per_finding(tmp_path):
    _tree(tmp_path)
    out = tmp_path / "portlint.xml"
    proc = run_portlint("scan", "--no-cache", "--format", "junit", "-o", str(out), ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    xml = junitparser.JUnitXml.fromfile(str(out))
    cases = [(suite.name, case.name, [type(r).__name__ for r in case.result]) for suite in xml for case in suite]
    assert [c[:2] for c in cases] == [
        ("requirements.txt", "PTL055 requirements.txt:1:1"),
        ("src/bad.cu", "PTL201 src/bad.cu:2:3"),
        ("src/bad.cu", "PTL201 src/bad.cu:3:3"),
    ]
    assert all(kinds == ["Failure"] for *_, kinds in cases)
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "3"
    for suite in root.iter("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase")) == int(suite.get("failures"))
    failure = root.find("testsuite/testcase/failure")
    assert failure.get("type") == "PTL055 error" and "cupy-cuda12x" in failure.get("message")


def test_junit_clean_scan_is_one_passing_case_and_hostile_names_stay_well_formed(tmp_path):
    (tmp_path / "clean.cu").write_text(CLEAN)
    proc = run_portlint("scan", "--no-cache", "--isolated", "--format", "junit", "clean.cu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    root = ET.fromstring(proc.stdout)
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 1 and cases[0].find("failure") is None and root.get("failures") == "0"
    (tmp_path / HOSTILE_NAME).write_text(BAD)
    proc = run_portlint("scan", "--no-cache", "--isolated", "--format", "junit", ".", cwd=tmp_path)
    assert proc.returncode == 1
    root = ET.fromstring(proc.stdout)  # well-formed: ESC written visibly, <&> escaped
    names = {s.get("name") for s in root.iter("testsuite")}
    assert names == {"we\\x1bird<&>.cu"}
    (tmp_path / "r.xml").write_text(proc.stdout)
    assert sum(1 for suite in junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml")) for _ in suite) == 2
