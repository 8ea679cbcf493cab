"""Applying fixes: edits are applied per file from the end backwards, skipping any edit that
overlaps one already taken, and each file is replaced atomically (write a temporary file
beside it, then rename)."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path


def _offset(lines: list[str], line: int, col: int) -> int:
    """1-based (line, code-point column) -> index into the joined text."""
    return sum(len(ln) for ln in lines[: line - 1]) + (col - 1)


def apply_edits(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    spans = []
    for e in edits:
        start = _offset(lines, e.span.start_line, e.span.start_col)
        end = _offset(lines, e.span.end_line, e.span.end_col)
        spans.append((start, end, e.text))
    out = text
    taken: list[tuple[int, int]] = []
    for start, end, new in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        if any(start < t_end and t_start < end or (start == end == t_start) for t_start, t_end in taken):
            continue
        out = out[:start] + new + out[end:]
        taken.append((start, end))
    return out


def fixed_text(text: str, findings, include_unsafe: bool = False) -> tuple[str, int]:
    edits = []
    count = 0
    for f in findings:
        if f.suppressed or f.fix is None:
            continue
        if f.fix.applicability == "display-only" or (f.fix.applicability == "unsafe" and not include_unsafe):
            continue
        edits.extend(f.fix.edits)
        count += 1
    return (apply_edits(text, edits) if edits else text), count


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".portlint", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def apply_fixes(findings, settings, include_unsafe: bool = False, write: bool = False) -> tuple[int, str]:
    by_path: dict[str, list] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    changed = 0
    diffs: list[str] = []
    for display, group in sorted(by_path.items()):
        path = Path(display)
        if not path.is_absolute():
            path = settings.root / path
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        text = raw.decode("utf-8", errors="surrogateescape")
        new, count = fixed_text(text, group, include_unsafe)
        if not count or new == text:
            continue
        changed += count
        diffs.extend(difflib.unified_diff(text.splitlines(True), new.splitlines(True), f"a/{display}", f"b/{display}"))
        if write:
            _atomic_write(path, new.encode("utf-8", errors="surrogateescape"))
    return changed, "".join(diffs)
