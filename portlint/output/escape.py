"""The one output escaper: everything from the scanned tree (file names, source lines,
snippets in messages) passes through here on its way to a human-facing format, so a
hostile name or file cannot send terminal escape sequences (ESC, OSC, CSI, C1 controls),
cannot reorder a line with bidirectional overrides ("Trojan Source"), and cannot leave a
Markdown code span or an HTML attribute.

- `controls`: control characters written visibly (ESC as `\\x1b`, U+202E as `\\u202e`);
  tab is kept. Used by text, concise, github, `scan --diff`, the reports and stderr notices.
- `text`: any string as text a UTF-8 writer can encode. A file name holding bytes that are
  not UTF-8 reaches portlint as `os.fsdecode` gives it, each such byte a lone surrogate
  (U+DC80..U+DCFF); written raw it is either an encoding error (json, sarif, `-o`) or,
  through a surrogate-escaping stream, the raw byte itself (0x9b is CSI in an 8-bit
  terminal). Each is written `\\xNN`, the byte it stands for; any other lone surrogate
  `\\udNNN`. `controls` does the same, so every human-facing format gets it too.
- `path_text`: a path as output text (`text` of it); `path_key`: a path one to one,
  its non-UTF-8 bytes `%NN` and `%` as `%25` (the JSON report, which declares it in
  `path_escape`, and the baseline); `path_plain`: a path as the file's name for a consumer
  that reads names as plain text (gitlab, github: a UTF-8 name as it is, `%` too; the
  format's own escapes go on top, once); `path_uri`: a relative path as a
  percent-encoded URI reference of its bytes (SARIF), lossless for any name;
  `json_ready`: a JSON document (dicts, lists, strings) with every string through `text`.
- `diff_line`: one line of a unified diff, its own line ending kept.
- `code_span`: a Markdown code span that holds any text (backticks included: the fence is
  one backtick longer than the longest run inside).
- `html_text`: HTML-escaped and control-escaped."""

from __future__ import annotations

import bisect
import html
import os
import re
from urllib.parse import quote

from portlint.core.names import SURROGATES, name_key, name_plain, name_text, surrogate_text

# C0 controls but tab, DEL, C1 controls, the line and paragraph separators (a line break
# to some viewers, none to others), the bidirectional overrides and isolates that can make
# a line display differently from what it holds, and lone surrogates (see `text`)
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

_BACKTICKS = re.compile(r"`+")


def _escape_one(m: re.Match) -> str:
    code = ord(m.group())
    if 0xD800 <= code <= 0xDFFF:
        return surrogate_text(code)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def controls(text: str) -> str:
    """`text` with every control character (and every lone surrogate) written visibly."""
    return _CONTROLS.sub(_escape_one, text)


def text(value: str) -> str:
    """`value` with its lone surrogates written visibly (`\\xNN` for a byte of a file name
    that was not UTF-8), so that it encodes as UTF-8; everything else is kept."""
    return SURROGATES.sub(_escape_one, value)


def path_text(path) -> str:
    """A path (str or PathLike, as portlint holds it) as output text (portlint.core.names)."""
    return name_text(path)


def path_key(path) -> str:
    """A path as the JSON report writes it (and a baseline matches it): a byte that is not
    UTF-8 as `%NN`, a `%` as `%25`, so that no two files share one spelling
    (portlint.core.names `name_key`); an ordinary UTF-8 name is unchanged."""
    return name_key(path)


def path_plain(path) -> str:
    """A path as GitLab's code quality report and GitHub's workflow commands take it, the
    file's own name, which they read without knowing `path_escape`: a UTF-8 name unchanged,
    `%` included; a byte that is not UTF-8 as `%NN` (portlint.core.names `name_plain`)."""
    return name_plain(path)


def path_uri(path) -> str:
    """A relative path as a URI reference: its bytes (the name as the filesystem holds it,
    undecodable bytes included) percent-encoded, `/` kept."""
    return quote(os.fsencode(os.fspath(path)), safe="/-._~")


def json_ready(value):
    """A JSON document with every string (keys too) through `text`: json.dumps with
    ensure_ascii=False then encodes as UTF-8 whatever file names the tree held."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {json_ready(k) if isinstance(k, str) else k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def diff_line(line: str) -> str:
    """A diff line with its controls escaped, its line ending (\\n or \\r\\n) kept."""
    for ending in ("\r\n", "\n"):
        if line.endswith(ending):
            return controls(line[: -len(ending)]) + ending
    return controls(line)


def code_span(text: str) -> str:
    """`text` as one Markdown code span, controls escaped; backticks inside cannot close it."""
    text = controls(text)
    if not text:
        return "` `"  # an empty span would be two backticks, which is no span
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip()) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def split_code_spans(text: str) -> list[tuple[bool, str]]:
    """(is a code span, piece) in order, by CommonMark's rule: a run of n backticks opens a
    span that the next run of exactly n backticks closes; an unmatched run is text."""
    out: list[tuple[bool, str]] = []
    runs = list(_BACKTICKS.finditer(text))
    by_length: dict[int, list[int]] = {}
    for i, r in enumerate(runs):
        by_length.setdefault(len(r.group()), []).append(i)
    k = plain_start = 0
    while k < len(runs):
        opener = runs[k]
        same = by_length[len(opener.group())]
        after = bisect.bisect_right(same, k)  # the next run of the same length: linear overall
        if after == len(same):
            k += 1
            continue
        closer_index = same[after]
        closer = runs[closer_index]
        if opener.start() > plain_start:
            out.append((False, text[plain_start:opener.start()]))
        out.append((True, text[opener.start():closer.end()]))
        plain_start = closer.end()
        k = closer_index + 1
    if plain_start < len(text):
        out.append((False, text[plain_start:]))
    return out


def html_text(text: str, quote: bool = True) -> str:
    return html.escape(controls(str(text)), quote=quote)
