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
    from portlint.suppressions import parse_suppressions

    sups = parse_suppressions(["x = t.item()  # portlint: ignore[PTL803] -- logged once per epoch"])
    (s,) = sups.items
    assert s.ids == ("PTL803",) and s.reason == "logged once per epoch" and not s.standalone
