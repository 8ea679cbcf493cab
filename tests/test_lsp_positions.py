"""portlint.server.positions: portlint's 1-based code-point columns (lines at LF/CRLF) to LSP's
0-based positions in UTF-16, UTF-8 or UTF-32 units (lines at LF, CRLF or a lone CR), and back."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from portlint.server.positions import UTF8, UTF16, UTF32, PositionMap, units

EMOJI = "\U0001F600"


@pytest.mark.parametrize(("encoding", "expected"), [(UTF16, 2), (UTF8, 4), (UTF32, 1)])
def test_units_of_a_non_bmp_character(encoding, expected):
    assert units(EMOJI, encoding) == expected


@pytest.mark.parametrize(("encoding", "character"), [(UTF16, 5), (UTF8, 8), (UTF32, 4)])
def test_a_column_after_an_emoji_and_an_accent(encoding, character):
    text = f"x\na{EMOJI}é b\n"
    positions = PositionMap(text, encoding)
    # portlint: line 2, column 5 is "b" (a, emoji, é, space, b)
    assert positions.to_lsp(2, 5) == (1, character)
    assert text[positions.from_lsp(1, character)] == "b"


def test_a_lone_cr_is_a_line_break_for_lsp_but_not_for_portlint():
    text = "ab\rcd\nef\n"
    positions = PositionMap(text)
    # portlint sees "ab\rcd" as line 1: column 4 is "c"; LSP puts "c" at line 1, character 0
    assert positions.to_lsp(1, 4) == (1, 0)
    assert positions.to_lsp(2, 2) == (2, 1)


def test_crlf_counts_as_one_break_and_columns_past_the_end_clamp_to_it():
    text = "abc\r\ndef\r\n"
    positions = PositionMap(text)
    assert positions.to_lsp(2, 1) == (1, 0)
    assert positions.to_lsp(1, 99) == (0, 3)
    assert positions.from_lsp(0, 99) == 3
    assert positions.from_lsp(7, 0) == len(text)


def test_a_position_inside_a_surrogate_pair_goes_to_the_character_holding_it():
    positions = PositionMap(f"{EMOJI}x", UTF16)
    assert positions.from_lsp(0, 1) == 0
    assert positions.from_lsp(0, 2) == 1


def test_server_without_pygls_is_a_one_line_error():
    code = ("import sys; sys.modules['pygls'] = None; sys.argv = ['portlint', 'server']\n"
            "from portlint.cli import main\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("portlint: error: the editor server needs pygls") and "portlint[lsp]" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
