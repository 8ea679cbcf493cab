"""Applying fixes: right text, overlapping edits skipped, atomic replacement, --diff writes nothing."""

from __future__ import annotations

import os

import pytest

from portlint.core.config import Settings
from portlint.discovery.files import discover
from portlint.output.fixes import apply_edits, apply_fixes, fixed_text
from portlint.core.model import Edit, Finding, Fix, Severity, Span


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


# ---- the line model: fixes edit exactly the scanned bytes ---------------------------------

KERNEL_WITH = "__global__ void k(int* out) {{\n  // note{sep}here\n  int lane = threadIdx.x % 32;\n  out[lane] = __shfl_sync(__activemask(), 1, lane);\n}}\n"
# characters str.splitlines() breaks on but the scanner (and tree-sitter) does not, a lone
# CR, invalid UTF-8 and the endings the scanner did handle
LINE_EDGE_CASES = {
    "form-feed": KERNEL_WITH.format(sep="\f").encode(),
    "vertical-tab": KERNEL_WITH.format(sep="\v").encode(),
    "file-separator": KERNEL_WITH.format(sep="\x1c").encode(),
    "record-separator": KERNEL_WITH.format(sep="\x1e").encode(),
    "next-line": KERNEL_WITH.format(sep="\u0085").encode(),
    "line-separator": KERNEL_WITH.format(sep="\u2028").encode(),
    "paragraph-separator": KERNEL_WITH.format(sep="\u2029").encode(),
    "lone-cr": KERNEL_WITH.format(sep="\r").encode(),
    "invalid-utf8": KERNEL_WITH.format(sep="@").encode().replace(b"@", b"\xff\xe2\x82"),
    "crlf": KERNEL_WITH.format(sep=" ").replace("\n", "\r\n").encode(),
    "bom-no-final-newline": b"\xef\xbb\xbf" + KERNEL_WITH.format(sep=" ").encode().rstrip(b"\n"),
}


def _scan_and_fix(tmp_path, write=True):
    from conftest import scan_paths

    settings = Settings(root=tmp_path, jobs=1)
    files, _ = discover([tmp_path], settings)
    result = scan_paths([tmp_path], root=tmp_path)
    return apply_fixes(result.findings, settings, files, write=write)


@pytest.mark.parametrize("name", sorted(LINE_EDGE_CASES))
def test_fix_changes_only_the_edited_bytes_whatever_the_line_breaks(tmp_path, name):
    original = LINE_EDGE_CASES[name]
    target = tmp_path / "k.cu"
    target.write_bytes(original)
    run = _scan_and_fix(tmp_path)
    assert run.changed == 1, run.notices
    assert target.read_bytes() == original.replace(b"% 32;", b"% warpSize;")
    again = _scan_and_fix(tmp_path)  # idempotent: nothing left to fix
    assert again.changed == 0 and target.read_bytes() == original.replace(b"% 32;", b"% warpSize;")


def test_fix_that_would_break_the_parse_leaves_the_file_untouched(tmp_path):
    target = tmp_path / "k.cu"
    original = KERNEL_WITH.format(sep=" ").encode()
    target.write_bytes(original)
    settings = Settings(root=tmp_path)
    files, _ = discover([tmp_path], settings)
    # replaces the "32" of `% 32` with unbalanced text
    bad = Finding("PTL102", "k.cu", Span(3, 28, 3, 30), "m", Severity.ERROR, {"rocm": Severity.ERROR}, "high",
                  fix=Fix("d", (Edit(Span(3, 28, 3, 30), "32 ) ) {", "32"),)))
    run = apply_fixes([bad], settings, files, write=True)
    assert target.read_bytes() == original
    assert run.changed == 0 and any("left untouched" in n.message for n in run.notices)


def test_fix_on_python_keeps_it_valid_python(tmp_path):
    target = tmp_path / "m.py"
    original = b"import torch\nx = 1\n"
    target.write_bytes(original)
    settings = Settings(root=tmp_path)
    files, _ = discover([tmp_path], settings)
    bad = Finding("PTL901", "m.py", Span(2, 1, 2, 2), "m", Severity.ERROR, {"tpu": Severity.ERROR}, "high",
                  fix=Fix("d", (Edit(Span(2, 1, 2, 2), "def (", "x"),)))
    run = apply_fixes([bad], settings, files, write=True)
    assert target.read_bytes() == original and any("not valid Python" in n.message for n in run.notices)


def test_python_positions_follow_a_lone_cr(tmp_path):
    """Python's tokenizer breaks lines at a lone CR, portlint does not: positions from `ast`
    are translated for the report, and no fix is offered (detectors build some edit spans
    from ast's own line numbers), so --fix cannot land on other bytes."""
    from conftest import scan_paths

    target = tmp_path / "m.py"
    original = b'import torch\nimport torch_xla.core.xla_model as xm\nx = 1\ry = 2\nb = torch.ones(3).cuda()\n'
    target.write_bytes(original)
    result = scan_paths([tmp_path], root=tmp_path)
    (f,) = result.findings
    assert (f.rule_id, f.span.start_line, f.span.start_col) == ("PTL901", 4, 5)  # Python says line 5
    assert f.fix is None and any("lone CR" in n.message for n in result.notices)
    target.write_bytes(original.replace(b"\r", b"\n"))
    (with_lf,) = scan_paths([tmp_path], root=tmp_path).findings
    assert with_lf.span.start_line == 5 and with_lf.fix is not None  # the same file with LF has its fix


def test_cli_diff_writes_nothing_and_exits_1_when_there_is_a_change(tmp_path):
    from conftest import run_portlint

    (tmp_path / "k.cu").write_bytes(LINE_EDGE_CASES["crlf"])
    for args in (("--diff",), ("--fix", "--diff")):
        proc = run_portlint("scan", ".", "--no-cache", *args, cwd=tmp_path)
        assert proc.returncode == 1, (args, proc.stderr)
        assert "+  int lane = threadIdx.x % warpSize;" in proc.stdout
        assert (tmp_path / "k.cu").read_bytes() == LINE_EDGE_CASES["crlf"]
    (tmp_path / "k.cu").write_bytes(b"__global__ void k(int* o) { o[threadIdx.x] = 1; }\n")
    clean = run_portlint("scan", ".", "--no-cache", "--diff", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


def test_fix_in_a_file_that_already_has_a_syntax_error_is_applied(tmp_path):
    """The re-parse check compares with the original: an existing error does not block a
    fix that adds none."""
    target = tmp_path / "k.cu"
    original = KERNEL_WITH.format(sep=" ").encode() + b"int broken( {\n"
    target.write_bytes(original)
    run = _scan_and_fix(tmp_path)
    assert run.changed == 1, run.notices
    assert target.read_bytes() == original.replace(b"% 32;", b"% warpSize;")
