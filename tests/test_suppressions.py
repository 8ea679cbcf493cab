"""Inline suppressions, the tool's own rules about them, and what is never honoured."""

from __future__ import annotations

from conftest import scan_paths

ASM = 'asm volatile("membar.gl;");'


def findings(tmp_path, text, name="a.cu", **kw):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = scan_paths([path], root=tmp_path, **kw)
    return result.findings


def active(fs):
    return sorted((f.span.start_line, f.rule_id) for f in fs if not f.suppressed)


def kernel(*body):
    return "__global__ void k(float* x) {\n" + "\n".join(body) + "\n}\n"


def test_same_line_and_line_before(tmp_path):
    fs = findings(tmp_path, kernel(
        f"  {ASM}  // portlint: ignore[PTL201] -- NVIDIA-only path",
        "  // portlint: ignore[PTL201] -- also NVIDIA-only",
        f"  {ASM}",
        f"  {ASM}",
    ))
    assert active(fs) == [(5, "PTL201")]
    reasons = [f.suppressed for f in fs if f.suppressed]
    assert any("NVIDIA-only path" in r for r in reasons)


def test_trailing_comment_does_not_cover_next_line(tmp_path):
    fs = findings(tmp_path, kernel(f"  {ASM}  // portlint: ignore[PTL201]", f"  {ASM}"))
    assert active(fs) == [(3, "PTL201")]


def test_prefix_and_list(tmp_path):
    fs = findings(tmp_path, kernel(f"  {ASM}  // portlint: ignore[PTL2, PTL201] -- family and rule"))
    assert active(fs) == []


def test_ignore_file(tmp_path):
    fs = findings(tmp_path, "// portlint: ignore-file[PTL201] -- reference kernels for NVIDIA\n" + kernel(f"  {ASM}", f"  {ASM}"))
    assert active(fs) == []
    assert len([f for f in fs if f.suppressed]) == 2


def test_unknown_id_is_a_warning_and_unused_a_note(tmp_path):
    fs = findings(tmp_path, kernel("  x[0] = 1.0f;  // portlint: ignore[PTL201] -- stale", f"  {ASM}  // portlint: ignore[PTL2O1]"))
    by_rule = {f.rule_id: f for f in fs if not f.suppressed}
    assert by_rule["PTL001"].severity.value == "note" and by_rule["PTL001"].span.start_line == 2
    assert by_rule["PTL002"].severity.value == "warning" and "PTL2O1" in by_rule["PTL002"].message
    assert ("PTL201" in by_rule)  # the misspelt suppression silences nothing


def test_unused_not_reported_when_rule_did_not_run(tmp_path):
    fs = findings(tmp_path, kernel("  x[0] = 1.0f;  // portlint: ignore[PTL201] -- stale"), ignore=("PTL201",))
    assert active(fs) == []


def test_malformed_directive(tmp_path):
    fs = findings(tmp_path, kernel(f"  {ASM}  // portlint: disable PTL201"))
    assert ("PTL002" in {f.rule_id for f in fs}) and (2, "PTL201") in active(fs)


def test_bare_noqa_and_nolint_are_not_honoured(tmp_path):
    fs = findings(tmp_path, kernel(f"  {ASM}  // NOLINT", f"  {ASM}  // noqa"))
    assert active(fs) == [(2, "PTL201"), (3, "PTL201")]


def test_python_comment_style(tmp_path):
    from portlint.findings.suppressions import parse_suppressions

    sups = parse_suppressions("x = t.item()  # portlint: ignore[PTL803] -- logged once per epoch\n", "python")
    (s,) = sups.items
    assert s.ids == ("PTL803",) and s.reason == "logged once per epoch" and not s.standalone


PY_ITEM = "import jax\n\n\ndef f():\n    return jax.devices('gpu')\n"  # PTL901 on line 5


def _py_findings(tmp_path, text):
    return findings(tmp_path, text, name="m.py")


def test_directive_inside_a_cuda_string_does_nothing(tmp_path):
    for literal in (
        '"// portlint: ignore-file[PTL] -- x"',
        'R"raw(\n// portlint: ignore-file[PTL] -- x\n)raw"',
        'u8R"(/* portlint: ignore-file[PTL] */)"',
    ):
        fs = findings(tmp_path, f"const char* s = {literal};\n" + kernel(f"  {ASM}"))
        assert [r for _, r in active(fs)] == ["PTL201"], (literal, active(fs))


def test_directive_inside_a_python_string_does_nothing(tmp_path):
    fs = _py_findings(tmp_path, 'NOTE = "# portlint: ignore-file[PTL] -- x"\n' + PY_ITEM)
    rules = {r for _, r in active(fs)}
    assert rules and not any(f.suppressed for f in fs), active(fs)
    doc = '"""\n# portlint: ignore-file[PTL]\n"""\n'
    assert {r for _, r in active(_py_findings(tmp_path, doc + PY_ITEM))} == rules


def test_real_comments_next_to_literals_still_work(tmp_path):
    fs = findings(tmp_path, kernel(
        "  int n = 1'000; char q = '\"';",
        f"  {ASM}  /* portlint: ignore[PTL201] -- block comment */",
        f"  {ASM}  // noqa: E501  // portlint: ignore[PTL201] -- after another tool's",
        "  const char* s = \"a // b\";",
        f"  {ASM}  // portlint: ignore[PTL201] -- after a string holding //",
    ))
    assert active(fs) == [], active(fs)
    fs = _py_findings(tmp_path, PY_ITEM.replace("('gpu')", "('gpu')  # noqa: E501  # portlint: ignore[PTL9] -- GPU box only"))
    assert active(fs) == [] and any(f.suppressed for f in fs)


import pytest  # noqa: E402


@pytest.mark.parametrize(
    "comment, problem",
    [
        ("// portlint: ignore[PTL201]  trailing junk", "unexpected text after `]`"),
        ("// PORTLINT: ignore[PTL201]", "must be written `portlint:`"),
        ("// Portlint: ignore[PTL201]", "must be written `portlint:`"),
        ("// portlint : ignore[PTL201]", "must be written `portlint:`"),
        ("// portlint ignore[PTL201]", "must be written `portlint:`"),
        ("// portlint: IGNORE[PTL201]", "lower case: `ignore`"),
        ("// portlint: disable[PTL201]", "unknown verb `disable`"),
        ("// portlint: ignore PTL201", "followed directly by `[`"),
        ("// portlint: ignore[PTL201", "never closed"),
        ("// portlint: ignore[]", "empty brackets"),
        ("// portlint: ignore[ , ]", "stray comma"),
        ("// portlint: ignore[ptl201]", "upper case: `PTL201`"),
        ("// portlint: ignore[E501]", "`E501` is not a portlint rule id"),
        ("// portlint: ignore[PTL2010]", "`PTL2010` is not a portlint rule id"),
        ("// portlint:", "not followed by `ignore[...]`"),
        ("/* portlint: ignore[PTL201] junk */", "unexpected text after `]`"),
    ],
)
def test_every_malformed_directive_is_ptl002_saying_what_is_wrong(tmp_path, comment, problem):
    fs = findings(tmp_path, kernel(f"  {ASM}  {comment}"))
    (bad,) = [f for f in fs if f.rule_id == "PTL002"]
    assert problem in bad.message and bad.span.start_line == 2, bad.message
    assert (2, "PTL201") in active(fs)  # a malformed directive suppresses nothing


def test_malformed_python_directive(tmp_path):
    fs = _py_findings(tmp_path, PY_ITEM.replace("('gpu')", "('gpu')  # portlint: ignore[PTL901]  trailing junk"))
    (bad,) = [f for f in fs if f.rule_id == "PTL002"]
    assert "trailing junk" in bad.message and bad.span.start_line == 5
    assert (5, "PTL901") in active(fs)


def test_prose_mentioning_portlint_is_not_a_directive(tmp_path):
    fs = findings(tmp_path, "// checked by portlint in CI; see docs\n" + kernel(f"  {ASM}"))
    assert not [f for f in fs if f.rule_id == "PTL002"]
