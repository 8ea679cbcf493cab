"""File names as text. On Linux a name is bytes; Python hands portlint one that is not
UTF-8 the way `os.fsdecode` decodes it, each undecodable byte a lone surrogate
(U+DC80..U+DCFF). Such a string cannot be encoded as UTF-8, so wherever a name leaves
portlint as text (a report, a baseline key compared with one) it goes through `name_text`:
each such byte written `\\xNN`, any other lone surrogate `\\udNNN`, everything else kept.
The escaper of human-facing output (portlint.output.escape) writes them the same way."""

from __future__ import annotations

import os
import re

SURROGATES = re.compile(r"[\ud800-\udfff]")


def surrogate_text(code: int) -> str:
    """How the lone surrogate `code` is written."""
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def name_text(name) -> str:
    """A name or path (str or PathLike) as text that encodes as UTF-8."""
    return SURROGATES.sub(lambda m: surrogate_text(ord(m.group())), os.fspath(name))
