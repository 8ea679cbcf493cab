"""GitHub code scanning's `primaryLocationLineHash`, computed the way upload-sarif does.

Per file: iterate UTF-16 code units, skip spaces and tabs (and the LF of a CRLF; a lone CR
counts as LF), keep a rolling hash over a 100-character window starting at each line
start, `h = 37*h + c - 37^100 * c_out (mod 2^64)`; after the end of the file feed a 65535
sentinel, then zeros. A line's value is the unsigned hex of the hash of the window that
starts on it plus `:k`, where k counts earlier lines in the file with the same hash."""

from __future__ import annotations

import hashlib
from collections import deque
from operator import mul

from portlint.findings.roots import folds

_MOD = 1 << 64
_B = 37
_WINDOW = 100
_B_POW = pow(_B, _WINDOW, _MOD)
_EOF = 65535


_POWERS = [pow(_B, _WINDOW - 1 - i, _MOD) for i in range(_WINDOW)]


def line_hashes(text: str, wanted: set[int] | None = None) -> list[str]:
    """The primaryLocationLineHash of every line of `text` (index 0 is line 1).

    With `wanted` (1-based line numbers), only those entries are filled (others are "").
    The rolling hash of a window equals the polynomial hash of its 100 characters, and two
    lines share a hash exactly when their windows are equal, so the window strings (sliced
    in C) give the `:k` counts and only the wanted lines need arithmetic."""
    if not text.isascii() and max(text) > "\uffff":
        return _line_hashes_rolling(text)  # astral characters: count UTF-16 units one by one
    counted = text.replace("\r\n", "\n").replace("\r", "\n").replace(" ", "").replace("\t", "")
    starts = [0]
    pos = counted.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = counted.find("\n", pos + 1)
    padded = counted + chr(_EOF) + "\0" * _WINDOW
    seen: dict[str, int] = {}
    out: list[str] = []
    for line, start in enumerate(starts, start=1):
        window = padded[start : start + _WINDOW]
        k = seen.get(window, 0) + 1
        seen[window] = k
        if wanted is not None and line not in wanted:
            out.append("")
            continue
        value = sum(map(mul, map(ord, window), _POWERS)) % _MOD
        out.append(f"{value:x}:{k}")
    return out


def _line_hashes_rolling(text: str) -> list[str]:
    """The reference algorithm, one UTF-16 code unit at a time."""
    raw = text.encode("utf-16-le")
    units = [raw[i] | (raw[i + 1] << 8) for i in range(0, len(raw), 2)]
    # 1. the characters that count, and where each line's first one is
    fed: list[int] = []
    starts: list[tuple[int, int]] = [(1, 0)]  # (line, index into fed)
    line = 1
    prev_cr = False
    for c in units:
        if c in (32, 9):
            prev_cr = False
            continue
        if c == 13:
            c, prev_cr = 10, True
        elif c == 10 and prev_cr:
            prev_cr = False
            continue
        else:
            prev_cr = False
        fed.append(c)
        if c == 10:
            line += 1
            starts.append((line, len(fed)))
    fed.append(_EOF)
    fed.extend([0] * _WINDOW)
    # 2. rolling hash; a line's hash is the one once its 100-character window is full
    take_at: dict[int, list[int]] = {}
    for ln, index in starts:
        take_at.setdefault(index + _WINDOW - 1, []).append(ln)
    window: deque[int] = deque([0] * _WINDOW)
    value = 0
    hashes: dict[int, int] = {}
    for pos, c in enumerate(fed):
        value = (value * _B + c - _B_POW * window.popleft()) % _MOD
        window.append(c)
        for ln in take_at.get(pos, ()):
            hashes[ln] = value
    # 3. number repeated hashes in file order
    counts: dict[int, int] = {}
    result: list[str] = []
    for ln in range(1, line + 1):
        h = hashes[ln]
        counts[h] = counts.get(h, 0) + 1
        result.append(f"{h:x}:{counts[h]}")
    return result


def portlint_fingerprint(f) -> str:
    """A location-independent key: rule, path and the normalised matched text. A finding
    of a folding rule that stands for a root not in its file (portlint.findings.roots) is
    keyed by that root instead of the use's text, so adding uses anywhere keeps it."""
    if folds(f) and not f.root_site:
        normalised = "root: " + " ".join(f.root.split())
    else:
        normalised = " ".join(f.snippet.split())
    # surrogatepass: a file name that is not UTF-8 (os.fsdecode's lone surrogates) hashes too
    return hashlib.sha256(f"{f.rule_id}\0{f.path}\0{normalised}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def use_fingerprint(f) -> str:
    """The key of one use folded under a root (a `related` entry): rule, path and its own
    normalised text, never its line, so moving the use keeps it and another use of the same
    name is counted again (a baseline holds these as a multiset)."""
    normalised = "use: " + " ".join(f.snippet.split())
    return hashlib.sha256(f"{f.rule_id}\0{f.path}\0{normalised}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def portlint_fingerprints(findings) -> dict[int, str]:
    """id(finding) -> its unique `portlint/v1` fingerprint. Findings that share rule, path
    and matched text (the same call twice on one line, a pattern repeated in a file) are
    numbered in report order: the first keeps the plain hash, the k-th gets `:k` appended,
    so GitHub does not merge them into one alert and a line move keeps every value."""
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for f in findings:
        base = portlint_fingerprint(f)
        k = seen[base] = seen.get(base, 0) + 1
        out[id(f)] = base if k == 1 else f"{base}:{k}"
    return out
