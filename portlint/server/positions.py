"""Positions between portlint and an LSP client.

portlint's line model (portlint.core.lines) ends a line at LF or CRLF only and counts columns in
code points, from 1. LSP ends a line at LF, CRLF or a lone CR, counts lines and characters
from 0, and counts characters in the position encoding agreed at initialize: UTF-16 code
units unless both sides chose UTF-8 or UTF-32. A character outside the Basic Multilingual
Plane (an emoji, U+1F600) is one code point, two UTF-16 units and four UTF-8 bytes.

`PositionMap` goes through the absolute code-point offset in the buffer text, so the two
line models may disagree (a lone CR) and positions still land on the same character."""

from __future__ import annotations

import re
from bisect import bisect_right

from portlint.core import lines as line_model

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
_LSP_BREAK = re.compile(r"\r\n|\r|\n")


def units(text: str, encoding: str) -> int:
    """How many code units of `encoding` `text` takes."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _lines_portlint(text: str) -> tuple[list[int], list[int]]:
    """(start, content end) offsets of every line as portlint counts them."""
    starts, ends = [0], []
    for piece in line_model.split_keepends(text):
        ends.append(starts[-1] + len(piece) - (2 if piece.endswith("\r\n") else 1 if piece.endswith("\n") else 0))
        starts.append(starts[-1] + len(piece))
    if len(ends) < len(starts):
        ends.append(len(text))
    return starts, ends


def _lines_lsp(text: str) -> tuple[list[int], list[int]]:
    """(start, content end) offsets of every line as LSP counts them."""
    starts, ends = [0], []
    for m in _LSP_BREAK.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    return starts, ends


class PositionMap:
    """Conversions for one buffer text and one position encoding."""

    def __init__(self, text: str, encoding: str = UTF16):
        self.text = text
        self.encoding = encoding
        self._ours = _lines_portlint(text)
        self._theirs = _lines_lsp(text)

    def offset(self, line: int, col: int) -> int:
        """Code-point offset of portlint's 1-based (line, col), clamped into its line."""
        starts, ends = self._ours
        index = min(max(line - 1, 0), len(starts) - 1)
        return min(starts[index] + max(col - 1, 0), ends[index])

    def lsp_position(self, offset: int) -> tuple[int, int]:
        """(line, character) of a code-point offset, as the client counts them."""
        starts, ends = self._theirs
        index = bisect_right(starts, offset) - 1
        offset = min(offset, ends[index])
        return index, units(self.text[starts[index]:offset], self.encoding)

    def to_lsp(self, line: int, col: int) -> tuple[int, int]:
        return self.lsp_position(self.offset(line, col))

    def from_lsp(self, line: int, character: int) -> int:
        """Code-point offset of an LSP position (a character past the line's end is its end;
        one inside a surrogate pair or a UTF-8 sequence is the character holding it)."""
        starts, ends = self._theirs
        if line >= len(starts):
            return len(self.text)
        pos, end = starts[max(line, 0)], ends[max(line, 0)]
        seen = 0
        while pos < end and seen < character:
            seen += units(self.text[pos], self.encoding)
            if seen > character:
                break
            pos += 1
        return pos
