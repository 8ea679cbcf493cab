"""core.lines.CrLines: the numbering in which a lone CR also ends a line (Python's tokenizer,
so `ast`; the C preprocessor, so the CUDA analysis of the lone-CR-as-LF copy), one mapping
to byte offsets for both."""

from __future__ import annotations

import ast

from hypothesis import given, settings, strategies as st

from portlint.core import lines as line_model
from portlint.index.context import FileContext

BOUNDED = settings(max_examples=150, deadline=None, derandomize=True, database=None)

ends = st.sampled_from([b"\n", b"\r\n", b"\r"])
names = st.text("abcxyz", min_size=1, max_size=4)
statements = st.lists(st.tuples(st.integers(0, 3), names, ends), min_size=1, max_size=12)


def _python(rows) -> tuple[bytes, list[int]]:
    """A module of `name = 1` lines ended as drawn, and the byte offset of each name."""
    data, where = b"", []
    for indent, name, end in rows:
        prefix = b"if 1: " if indent else b""  # a simple statement after `if 1:` on its line
        where.append(len(data) + len(prefix))
        data += prefix + name.encode() + b" = 1" + end
    return data, where


@BOUNDED
@given(statements)
def test_ast_positions_land_on_the_bytes_they_name(rows):
    data, where = _python(rows)
    targets = [n.targets[0] for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Assign)]
    targets.sort(key=lambda n: (n.lineno, n.col_offset))
    cr = line_model.CrLines(data)
    assert [cr.offset(n.lineno, n.col_offset) for n in targets] == where


@BOUNDED
@given(statements)
def test_byte_and_character_columns_agree_on_ascii(rows):
    data, _ = _python(rows)
    cr = line_model.CrLines(data)
    copy = line_model.lone_cr_as_lf(data)
    for index, start in enumerate(line_model.line_starts(copy)):
        for col in range(1, 4):
            if start + col - 1 <= len(data):
                assert cr.char_offset(index + 1, col) == cr.offset(index + 1, col - 1)


@BOUNDED
@given(statements)
def test_a_python_span_is_given_in_the_line_model(rows):
    """node_span puts an `ast` node where the line model (LF / CRLF only) shows its bytes."""
    data, where = _python(rows)
    ctx = FileContext("m.py", data, "python", frozenset(), None)
    targets = sorted((n.targets[0] for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Assign)),
                     key=lambda n: (n.lineno, n.col_offset))
    for node, offset in zip(targets, where):
        span = ctx.node_span(node)
        assert (span.start_line, span.start_col) == ctx.offset_to_pos(offset)
        assert line_model.ByteMap(data).byte_offset(span.start_line, span.start_col) == offset
