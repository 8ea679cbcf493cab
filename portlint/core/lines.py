"""The one line model every part of portlint uses: the scanner, the fix engine, reporters.

- Bytes are decoded as UTF-8 with replacement characters (`decode`); nothing decodes a
  scanned file any other way.
- A line ends at `\\n` or `\\r\\n`, nothing else. Form feeds, vertical tabs, `\\x1c`-`\\x1e`,
  U+0085, U+2028/U+2029 and a lone `\\r` are ordinary characters of their line (this is how
  tree-sitter and GitHub count lines; `str.splitlines` disagrees).
- Lines are numbered from 1; a column is 1-based and counts code points of the decoded line,
  where each run of invalid bytes that the decoder replaces is one code point.

A position is turned into a byte offset of the original bytes with `ByteMap`, so an edit
is applied to the bytes that were scanned, never to a re-decoded copy of them."""

from __future__ import annotations

import re
from bisect import bisect_right

ERRORS = "replace"
_LONE_CR = re.compile(rb"\r(?!\n)")


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors=ERRORS)


def split_lines(text: str) -> list[str]:
    """Line contents without their `\\n` / `\\r\\n`; no empty last line after a final newline."""
    pieces = text.split("\n")
    lines = [p[:-1] if p.endswith("\r") else p for p in pieces[:-1]]  # each was ended by \n
    if pieces[-1]:
        lines.append(pieces[-1])  # no terminator: a lone \r at its end is content
    return lines


def split_keepends(text: str) -> list[str]:
    """Lines with their terminators (for diffs): the pieces after each `\\n`."""
    pieces = text.split("\n")
    out = [p + "\n" for p in pieces[:-1]]
    if pieces[-1]:
        out.append(pieces[-1])
    return out


def line_starts(data: bytes) -> list[int]:
    """Byte offset of the first byte of every line, one more than the number of `\\n`."""
    starts = [0]
    pos = data.find(b"\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = data.find(b"\n", pos + 1)
    return starts


def content_end(data: bytes, starts: list[int], index: int) -> int:
    """Byte offset just past the content of line `index` (0-based), before `\\n` / `\\r\\n`."""
    end = starts[index + 1] - 1 if index + 1 < len(starts) else len(data)
    if index + 1 < len(starts) and end > starts[index] and data[end - 1 : end] == b"\r":
        end -= 1
    return end


def char_offsets(line: bytes) -> list[int]:
    """Byte offset of every code point of `decode(line)`, then `len(line)`: entry i is where
    column i + 1 starts. Valid UTF-8 starts a code point at every non-continuation byte; each
    invalid run the decoder replaces with one U+FFFD starts one."""
    if line.isascii():
        return list(range(len(line) + 1))
    out: list[int] = []
    pos = 0
    n = len(line)
    while pos < n:
        try:
            line[pos:].decode("utf-8")
            valid_end, resume = n, n
        except UnicodeDecodeError as exc:
            valid_end, resume = pos + exc.start, pos + exc.end
        out.extend(i for i in range(pos, valid_end) if line[i] & 0xC0 != 0x80)
        if valid_end < n:
            out.append(valid_end)  # one replacement character for the invalid run
        pos = resume
    out.append(n)
    return out


class ByteMap:
    """Positions of one file's bytes: (line, column) -> byte offset, memoised per line."""

    def __init__(self, data: bytes):
        self.data = data
        self.starts = line_starts(data)
        self._chars: dict[int, list[int]] = {}

    def byte_offset(self, line: int, col: int) -> int | None:
        """The byte offset of 1-based (line, col), or None when no such position exists. The
        position one past the last character of a line (before its terminator) exists."""
        if not (isinstance(line, int) and isinstance(col, int)) or line < 1 or col < 1 or line > len(self.starts):
            return None
        index = line - 1
        chars = self._chars.get(index)
        if chars is None:
            start = self.starts[index]
            chars = [start + c for c in char_offsets(self.data[start : content_end(self.data, self.starts, index)])]
            self._chars[index] = chars
        return chars[col - 1] if col <= len(chars) else None


def has_lone_cr(data: bytes) -> bool:
    return b"\r" in data and _LONE_CR.search(data) is not None


def lone_cr_as_lf(data: bytes) -> bytes:
    """`data` with each lone `\\r` turned into `\\n` (one byte for one: offsets unchanged), as
    a C preprocessor reads line ends."""
    return _LONE_CR.sub(b"\n", data)


class CrLines:
    """A file's lines as the tools that also end a line at a lone `\\r` count them: Python's
    tokenizer (so `ast` positions) and a C preprocessor (so the CUDA analysis, which reads
    `lone_cr_as_lf` of the file). A position in that numbering is turned into a byte offset
    of the same bytes (the copy changes one byte for one, so offsets agree); the file's
    context turns the offset into this model's (line, column). Only needed when
    `has_lone_cr`: otherwise both numberings are this model's."""

    def __init__(self, data: bytes):
        self.view = lone_cr_as_lf(data)  # the same bytes, each lone CR an LF
        self._map = ByteMap(self.view)  # its lines: after each LF, CRLF or lone CR

    def offset(self, line: int, byte_col: int) -> int:
        """The byte offset of 1-based `line`, 0-based byte column `byte_col` (as `ast` gives)."""
        return self._map.starts[line - 1] + byte_col

    def char_offset(self, line: int, col: int) -> int | None:
        """The byte offset of 1-based (line, code-point column), None when there is none."""
        return self._map.byte_offset(line, col)

    def line_at(self, offset: int) -> int:
        """The 1-based line, in this numbering, that holds byte `offset`."""
        return bisect_right(self._map.starts, offset)
