"""Files valid for a newer Python than the running one (PEP 695, PEP 701) are read through
tree-sitter-python with those constructs blanked in place; real syntax errors still skip the
file with an error notice; tree-sitter-python is imported only for such files."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest
from conftest import FIXTURES, REPO, scan_paths

pytest.importorskip("tree_sitter_python")

from portlint.frontends.python.newer_syntax import downgrade  # noqa: E402

NEWER = textwrap.dedent('''\
    type Pair[T] = tuple[T, T]
    def pick[T](a: T, b: T) -> T:
        return a
    label = f"{cfg["name"]} on {cfg["device"]}"
    device = "cuda"
''').encode()


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this interpreter reads PEP 695 itself")
def test_the_sample_is_newer_syntax_here():
    with pytest.raises(SyntaxError):
        ast.parse(NEWER)


def test_blanking_keeps_every_other_position():
    result = downgrade(NEWER)
    assert result is not None
    assert result.blanked == ["type alias (line 1)", "type parameters (line 2)", "string literal (line 4)"]
    assign = result.module.body[-1]
    assert isinstance(assign, ast.Assign) and assign.value.value == "cuda"
    assert (assign.lineno, assign.col_offset, assign.value.col_offset) == (5, 0, 9)  # as in the source
    pick = result.module.body[1]
    assert isinstance(pick, ast.FunctionDef) and [a.arg for a in pick.args.args] == ["a", "b"]
    assert (pick.args.args[0].lineno, pick.args.args[0].col_offset) == (2, 12)


def test_a_real_syntax_error_is_still_an_error(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("import torch_xla\ndef f(:\n    return 1\n", encoding="utf-8")
    assert downgrade(bad.read_bytes()) is None
    result = scan_paths([bad])
    assert [n.level for n in result.notices] == ["error"]
    assert "Python rules skipped" in result.notices[0].message


def test_the_notice_says_what_was_read_and_what_ran():
    result = scan_paths([FIXTURES / "device_strings" / "newer_syntax_port.py"])
    notes = [n.message for n in result.notices]
    assert len(notes) == 1 and notes[0].startswith("syntax newer than Python")
    assert "type alias (line 9)" in notes[0] and "every Python rule ran" in notes[0]
    assert {f.rule_id for f in result.findings} == {"PTL901", "PTL902"}


def test_tree_sitter_python_is_imported_only_for_newer_files(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text('import torch_xla\nimport torch\nx = torch.ones(2).cuda()\n', encoding="utf-8")
    code = ("import sys; from pathlib import Path; sys.path.insert(0, 'tests'); from conftest import scan_paths; "
            f"scan_paths([Path({str(plain)!r})]); print('tree_sitter_python' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert out.stdout.strip() == "False"
