"""Round five attack pass: the surfaces added since round four (PTL057's build scope, the
vendored file role, lone-CR CUDA files, the rewritten directive reader), and what was found
while fixing them. Each test is one finding, written so that it fails on the code as
attacked and passes once the finding is fixed; the severity is in each docstring, rated as
docs/threat-model.md does. The fixed ones moved to tests/test_attack_round5.py. Run with
`python -m pytest tests/attacks/open_round5.py -p no:cacheprovider` (not collected by default)."""

from __future__ import annotations

import json

from conftest import run_portlint_bytes as run  # the real command line, streams kept as bytes


# --- L (low). A suppression on one line of a lone-CR Python file silences the lines after it ----

def test_l_a_suppression_in_a_lone_cr_python_file_covers_its_own_line_only(tmp_path):
    """Promise: a suppression silences the line it is on (a trailing comment) and nothing
    else. Python ends a line at a lone CR (its tokenizer, `ast` and the interpreter), and a
    `#` comment ends there too, so in `...devices('gpu')  # portlint: ignore[PTL901] -- this
    one only\\r...\\rdef g():\\r    return jax.devices('gpu')\\r` the comment is on line 5 and
    the second call on line 9. Suppressions are matched in the line model's numbering, where
    the whole file is line 1 (no LF), so the comment silences the second call too: 'No
    portability problems found', 2 findings suppressed; the same file with LF line breaks
    reports line 9 (checked by hand, both ways). `--add-suppressions` on such a file writes
    its comment above line 1, before the whole file, and with an LF where the file has lone
    CRs. Found while fixing E (the CUDA side, whose suppressions are matched in the
    compiler's lines). Severity low: the file must be written with lone CRs, and a suppression is an
    in-tree comment a reviewer sees, but it hides findings on lines it is not on."""
    (tmp_path / "m.py").write_bytes(
        b"import jax\r\r\rdef f():\r    return jax.devices('gpu')  # portlint: ignore[PTL901] -- this one only\r"
        b"\r\rdef g():\r    return jax.devices('gpu')\r")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "json", "m.py", cwd=tmp_path)
    live = [f for f in json.loads(proc.stdout)["findings"] if not f.get("suppressed")]
    assert [f["rule"] for f in live] == ["PTL901"], live
    assert proc.returncode == 1, proc.stdout
