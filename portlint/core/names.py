"""File names as text. On Linux a name is bytes; Python hands portlint one that is not
UTF-8 the way `os.fsdecode` decodes it, each undecodable byte a lone surrogate
(U+DC80..U+DCFF). Such a string cannot be encoded as UTF-8, so wherever a name leaves
portlint as text (a report, a baseline key compared with one) it goes through `name_text`:
each such byte written `\\xNN`, any other lone surrogate `\\udNNN`, everything else kept.
The escaper of human-facing output (portlint.output.escape) writes them the same way.

That spelling is not one to one: the name with the byte 0xff and the name spelled with a
literal backslash, `x`, `f`, `f` are both `c\\xff.cu`. Where a name is a key portlint's own
readers match (the JSON report, which says so in its `path_escape`, and the baseline read
from one) it goes through `name_key`: a byte that is not UTF-8 is `%NN` and a `%` is `%25`,
the percent-encoding SARIF's URIs use restricted to those two, so no two files share one
spelling (`c%FF.cu` and `c\\xff.cu`) and `urllib.parse.unquote_to_bytes` gives a name's
bytes back; a UTF-8 name without a `%` is the same in both.

A consumer that reads no such declaration and takes a name as plain text (GitHub's
workflow commands, GitLab's code quality report) gets `name_plain`: a UTF-8 name as it is,
`%` included, so the consumer names the file itself (its own escapes, a workflow command's
`%25` for `%`, are the format's, applied once on top). A name that is not UTF-8 cannot be
written as itself in their text: its undecodable bytes are `%NN` there, so it never reads
as its backslash twin `c\\xff.cu`; it reads as a file literally named `c%FF.cu`, which the
consumer cannot tell from it (docs/threat-model.md, "Not covered")."""

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


# the `path_escape` a JSON report declares when its paths are written by `name_key` (one
# written before has none, and its paths by `name_text`)
KEY_ESCAPE = "percent"


def _key_char(m: re.Match) -> str:
    c = m.group()
    if c == "%":
        return "%25"
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"%{code - 0xDC00:02X}"
    return "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))


_KEY_CHARS = re.compile(r"[%\ud800-\udfff]")


def name_key(name) -> str:
    """A name or path as an unambiguous key that encodes as UTF-8: each byte that is not
    UTF-8 (each lone surrogate) percent-encoded, each `%` written `%25`, all else kept. One
    to one; the same as `name_text` for a UTF-8 name without a `%`."""
    return _KEY_CHARS.sub(_key_char, os.fspath(name))


def name_plain(name) -> str:
    """A name or path as plain text for a consumer that reads it as the file's name: a UTF-8
    name unchanged (`%` too), each byte that is not UTF-8 (each lone surrogate) `%NN`."""
    return SURROGATES.sub(_key_char, os.fspath(name))
