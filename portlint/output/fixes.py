"""Applying fixes to the bytes that were scanned.

Every edit is located in the file's ORIGINAL bytes with the one line model
(portlint.core.lines) and validated before use: both ends must be positions of the current
file, and the span must still hold the text the edit says it replaces (`Edit.old`);
otherwise the edit is dropped. Edits are applied from the end backwards, skipping any that
overlaps one already taken. The result is then checked: the bytes outside the edited ranges
are the original bytes, and the file still parses as well as before (tree-sitter for CUDA:
no more ERROR or MISSING nodes than before; `ast.parse` for Python). A file that fails a
check is left untouched and the fix run says so in a notice.

Only files the scan discovered are written, and only when the file that would be written
(after resolving symlinks) is a regular file inside the scan root it was found under; a
symlink is written through to its target, so the link stays a link. Each file is replaced
atomically: a temporary file beside the target, renamed over it."""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from portlint.core import lines as line_model
from portlint.core.files import NotRead, read_limited, write_file
from portlint.core.model import Notice
from portlint.output.escape import diff_line
from portlint.pipeline.engine import compiler_view


@dataclass
class Spliced:
    data: bytes
    applied: list[tuple[int, int, int]]  # (start, end) in the original bytes, length of the new text
    fixes: int = 0  # fixes applied (all of their edits)
    dropped: int = 0  # fixes with an edit that is not a position of the file or no longer matches


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Two ranges overlap, or are two insertions at one point (their order would be a guess)."""
    return a[0] < b[1] and b[0] < a[1] or a[0] == a[1] == b[0] == b[1]


def _locate(positions: line_model.ByteMap, data: bytes, e) -> tuple[int, int, bytes] | None:
    """(start, end, new bytes) of an edit, or None when it does not fit the current bytes."""
    start = positions.byte_offset(e.span.start_line, e.span.start_col)
    end = positions.byte_offset(e.span.end_line, e.span.end_col)
    if start is None or end is None or end < start or not isinstance(e.text, str):
        return None
    if e.old is not None and line_model.decode(data[start:end]) != e.old:
        return None
    try:
        return start, end, e.text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: not text a file can hold
        return None


def splice(data: bytes, fixes) -> Spliced:
    """Apply `fixes` (each a sequence of portlint.core.model.Edit) to `data` at validated byte
    offsets. A fix is applied whole or not at all: when one of its edits does not fit the
    current bytes it is dropped; when one overlaps an edit of a fix already taken (fixes are
    taken from the end of the file backwards) it is skipped, unless the two are the same
    edit."""
    positions = line_model.ByteMap(data)
    located: list[list[tuple[int, int, bytes]]] = []
    dropped = 0
    for fix in fixes:
        spans = [_locate(positions, data, e) for e in fix]
        if not spans or any(sp is None for sp in spans):
            dropped += 1
            continue
        located.append(sorted(spans))
    taken: list[tuple[int, int, bytes]] = []
    count = 0
    for spans in sorted(located, key=lambda sp: (sp[0][0], sp[0][1]), reverse=True):
        # an edit identical to one already taken (fixes that add the same import) is shared
        fresh = [sp for sp in dict.fromkeys(spans) if sp not in taken]
        ranges = [(st, en) for st, en, _ in fresh]
        inner = any(_overlaps(r, q) for i, r in enumerate(ranges) for q in ranges[i + 1 :])
        if inner or any(_overlaps(r, (t[0], t[1])) for r in ranges for t in taken):
            continue
        taken.extend(fresh)
        count += 1
    out = data
    for start, end, new in sorted(taken, reverse=True):
        out = out[:start] + new + out[end:]
    return Spliced(out, sorted((st, en, len(new)) for st, en, new in taken), count, dropped)


def outside_unchanged(before: bytes, after: bytes, applied: list[tuple[int, int, int]]) -> bool:
    """Whether `after` is `before` with only the `applied` ranges replaced (by texts of the
    recorded lengths): every byte outside them is compared."""
    pos_before = pos_after = 0
    for start, end, new_len in applied:
        gap = start - pos_before
        if before[pos_before:start] != after[pos_after : pos_after + gap]:
            return False
        pos_before, pos_after = end, pos_after + gap + new_len
    return before[pos_before:] == after[pos_after:] and len(after) - pos_after == len(before) - pos_before


# ---- the re-parse check -----------------------------------------------------------------

def _cuda_tree(data: bytes):
    import tree_sitter

    from portlint.frontends.cuda.parse import cuda_language

    return tree_sitter.Parser(cuda_language()).parse(data)


def _cuda_errors(tree) -> int:
    cursor = tree.walk()
    errors = 0
    while True:
        node = cursor.node
        if node.type == "ERROR" or node.is_missing:
            errors += 1
        if cursor.goto_first_child() or cursor.goto_next_sibling():
            continue
        while cursor.goto_parent():
            if cursor.goto_next_sibling():
                break
        else:
            return errors


def _python_parses(data: bytes) -> bool:
    import ast

    try:
        ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def parse_regression(language: str | None, before: bytes, after: bytes) -> str | None:
    """Why `after` parses worse than `before`, or None when it does not."""
    try:
        if language == "cuda":
            # read as the file is analysed: the compiler's lines (a lone CR a line break too)
            before, after = compiler_view(language, before) or before, compiler_view(language, after) or after
            fixed = _cuda_tree(after)
            if not fixed.root_node.has_error:
                return None
            old, new = _cuda_errors(_cuda_tree(before)), _cuda_errors(fixed)
            return f"the fixed file has {new} syntax error node(s), the original {old}" if new > old else None
        if language == "python":
            return "the fixed file is not valid Python" if _python_parses(before) and not _python_parses(after) else None
    except (RecursionError, MemoryError):
        return "the fixed file could not be re-parsed"
    return None


# ---- text conveniences (tests, library callers) ------------------------------------------

def _chosen_fixes(findings, include_unsafe: bool) -> list[tuple]:
    """The edits of each fix to apply: not suppressed, not display-only, unsafe only when asked."""
    chosen = []
    for top in findings:
        for f in (top, *top.related):  # a folded finding's uses keep their own fixes
            if f.suppressed or f.fix is None:
                continue
            if f.fix.applicability == "display-only" or (f.fix.applicability == "unsafe" and not include_unsafe):
                continue
            chosen.append(f.fix.edits)
    return chosen


def apply_edits(text: str, edits) -> str:
    """`text` with each of `edits` applied as a fix of its own (through its UTF-8 bytes)."""
    return line_model.decode(splice(text.encode("utf-8", errors="surrogateescape"), [(e,) for e in edits]).data)


def fixed_text(text: str, findings, include_unsafe: bool = False) -> tuple[str, int]:
    """`text` with the chosen fixes of `findings` applied, and how many were applied."""
    chosen = _chosen_fixes(findings, include_unsafe)
    if not chosen:
        return text, 0
    result = splice(text.encode("utf-8", errors="surrogateescape"), chosen)
    return line_model.decode(result.data), result.fixes


# ---- files -----------------------------------------------------------------------------

@dataclass
class FixRun:
    changed: int = 0  # findings whose fix went into a file (or into the diff)
    diff: str = ""
    notices: list[Notice] = field(default_factory=list)


def write_target(sf) -> tuple[Path | None, str]:
    """The real file `--fix` may write for the discovered file `sf`, or (None, why not):
    a regular file whose resolved path lies inside the scan root `sf` was found under."""
    from portlint.discovery.files import inside

    try:
        real = os.path.realpath(sf.real)
        st = os.stat(real)
    except (OSError, ValueError) as exc:
        return None, f"cannot resolve: {getattr(exc, 'strerror', None) or exc}"
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file"
    if sf.root is None or not inside(real, sf.root):
        return None, "resolves to a file outside the scanned tree (symlink)"
    return Path(real), ""


def apply_fixes(findings, settings, files, include_unsafe: bool = False, write: bool = False) -> FixRun:
    """Fix the discovered `files` (discovery.SourceFile) that `findings` have fixes for;
    write them only when `write`. A finding whose path is not one of `files` is ignored."""
    from portlint.discovery.languages import classify

    by_display = {sf.display: sf for sf in files}
    by_path: dict[str, list] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    run = FixRun()
    diffs: list[str] = []
    fixed_through: dict[Path, str] = {}  # one real file reached under two names is fixed once
    for display, group in sorted(by_path.items()):
        chosen = _chosen_fixes(group, include_unsafe)
        sf = by_display.get(display)
        if not chosen or sf is None:
            continue
        target, why = write_target(sf)
        if target is None:
            run.notices.append(Notice(display, f"not fixed: {why}"))
            continue
        if target in fixed_through:
            run.notices.append(Notice(display, f"not fixed again: the same file as {fixed_through[target]}", "note"))
            continue
        fixed_through[target] = display
        try:  # read as the scan reads sources
            before = read_limited(target, settings.max_file_size)
        except NotRead:
            run.notices.append(Notice(display, "not fixed: not a regular file, or over the size limit"))
            continue
        except OSError as exc:
            run.notices.append(Notice(display, f"not fixed: cannot read: {exc.strerror or exc}"))
            continue
        result = splice(before, chosen)
        if result.dropped:
            run.notices.append(Notice(display, f"{result.dropped} fix(es) dropped: the file no longer holds the text they replace", "note"))
        if not result.applied or result.data == before:
            continue
        if not outside_unchanged(before, result.data, result.applied):
            problem = "the fix changed bytes outside the edited ranges"
        else:
            problem = parse_regression(classify(display, before)[0], before, result.data)
        if problem:
            run.notices.append(Notice(display, f"not fixed, file left untouched: {problem}", "error"))
            continue
        run.changed += result.fixes
        old_text, new_text = line_model.decode(before), line_model.decode(result.data)
        diffs.extend(_diff(old_text, new_text, display))
        if write:
            try:
                write_file(target, result.data, root=Path(sf.root))
            except OSError as exc:
                run.notices.append(Notice(display, f"not fixed: cannot write: {exc.strerror or exc}", "error"))
                run.changed -= result.fixes
    run.diff = "".join(diffs)
    return run


def _diff(old: str, new: str, display: str) -> list[str]:
    """A unified diff by portlint's lines; a last line without a newline is marked as such."""
    out = []
    for line in difflib.unified_diff(line_model.split_keepends(old), line_model.split_keepends(new), f"a/{display}", f"b/{display}"):
        line = diff_line(line)  # the one escaper: names and contents cannot reach the terminal raw
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out
