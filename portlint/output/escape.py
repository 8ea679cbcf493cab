"""The one output escaper: everything from the scanned tree (file names, source lines,
snippets in messages) passes through here on its way to a human-facing format, so a
hostile name or file cannot send terminal escape sequences (ESC, OSC, CSI, C1 controls),
cannot reorder a line with bidirectional overrides ("Trojan Source"), and cannot leave a
Markdown code span or an HTML attribute.

- `controls`: control characters written visibly (ESC as `\\x1b`, U+202E as `\\u202e`);
  tab is kept. Used by text, concise, github, `scan --diff`, the reports and stderr notices.
- `diff_line`: one line of a unified diff, its own line ending kept.
- `code_span`: a Markdown code span that holds any text (backticks included: the fence is
  one backtick longer than the longest run inside).
- `html_text`: HTML-escaped and control-escaped."""

from __future__ import annotations

import bisect
import html
import re

# C0 controls but tab, DEL, C1 controls, and the bidirectional overrides and isolates that
# can make a line display differently from what it holds
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BACKTICKS = re.compile(r"`+")


def _escape_one(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def controls(text: str) -> str:
    """`text` with every control character written visibly."""
    return _CONTROLS.sub(_escape_one, text)


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
