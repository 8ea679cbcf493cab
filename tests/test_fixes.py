"""Applying fixes: right text, overlapping edits skipped, atomic replacement, --diff writes nothing."""

from __future__ import annotations

import os

from portlint.config import Settings
from portlint.discovery import discover
from portlint.fixes import apply_edits, apply_fixes, fixed_text
from portlint.model import Edit, Finding, Fix, Severity, Span


def finding(line, c1, c2, text, applicability="safe", path="a.cu"):
    return Finding("PTL201", path, Span(line, c1, line, c2), "m", Severity.ERROR, {"rocm": Severity.ERROR}, "high",
                   fix=Fix("d", (Edit(Span(line, c1, line, c2), text),), applicability))


def test_apply_edits_multiline_and_unicode():
    text = "int a = 32; // é\nint b = 32;\n"
    out = apply_edits(text, [Edit(Span(1, 9, 1, 11), "warpSize"), Edit(Span(2, 9, 2, 11), "64")])
    assert out == "int a = warpSize; // é\nint b = 64;\n"
    assert apply_edits("ab", [Edit(Span(1, 1, 1, 1), "x")]) == "xab"  # insertion


def test_overlapping_edits_keep_one():
    out = apply_edits("abcdef", [Edit(Span(1, 2, 1, 4), "X"), Edit(Span(1, 3, 1, 5), "Y")])
    assert out in ("aXdef", "abYef")


def test_applicability_levels():
    text = "abc\n"
    fs = [finding(1, 1, 2, "A"), finding(1, 2, 3, "B", "unsafe"), finding(1, 3, 4, "C", "display-only")]
    assert fixed_text(text, fs) == ("Abc\n", 1)
    assert fixed_text(text, fs, include_unsafe=True) == ("ABc\n", 2)


def test_apply_fixes_writes_atomically_and_diff_does_not(tmp_path):
    target = tmp_path / "a.cu"
    target.write_text("int lane = 31;\n")
    os.chmod(target, 0o640)
    settings = Settings(root=tmp_path)
    files, _ = discover([tmp_path], settings)
    fs = [finding(1, 12, 14, "(warpSize - 1)")]
    run = apply_fixes(fs, settings, files, write=False)
    assert run.changed == 1 and "+int lane = (warpSize - 1);" in run.diff
    assert target.read_text() == "int lane = 31;\n"
    inode = target.stat().st_ino
    apply_fixes(fs, settings, files, write=True)
    assert target.read_text() == "int lane = (warpSize - 1);\n"
    assert target.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cu"]  # no temporary left behind
