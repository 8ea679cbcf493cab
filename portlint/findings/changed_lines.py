"""`--diff-base REF`: keep only the findings whose span touches a line added or changed
since the merge base of REF and HEAD.

Every file is still analysed whole (a guard three screens up still counts); only the
report is narrowed. A line counts as changed when it is not one of the base version's
lines in a line diff of the base blob against the file as it is now on disk (or the buffer
given on stdin), so staged, unstaged and untracked work all count: `--diff-base HEAD` is
the pre-commit case, `--diff-base origin/main` the pull-request case. A file the base does
not hold (new, untracked, outside the repository) is changed on every line. Lines that
were only deleted change no line that is still there.

git runs with a fixed argument list, no shell, no pager, no terminal prompt, and only
plumbing that never runs a command the scanned repository's configuration names: the base
is found with `rev-parse` and `merge-base`, the old contents are read with
`cat-file --batch` (which applies no textconv, no filter and no external diff), and the
comparison is done here. The same `-c` overrides are passed anyway
(`core.fsmonitor=false`, `diff.external=`, `core.quotepath=off`)."""

from __future__ import annotations

import bisect
import difflib
import os
import subprocess
from pathlib import Path

from portlint.core import lines as line_model
from portlint.core.files import read_bytes

_GIT_CONFIG = ("-c", "core.quotepath=off", "-c", "core.fsmonitor=false", "-c", "diff.external=", "-c", "core.pager=cat")
# environment variables that could make git run something, or look elsewhere than asked
_DROP_ENV = ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR")


class ChangedLinesError(Exception):
    """--diff-base cannot be honoured (one line, for the command line)."""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return env


def _git(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            ["git", "--no-pager", *_GIT_CONFIG, *args],
            cwd=cwd,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            env=_env(),
            check=False,
        )
    except FileNotFoundError:
        raise ChangedLinesError("--diff-base needs git, and no `git` is on PATH") from None


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else "no message"


class ChangedLines:
    """The lines changed since the merge base, per file, computed on first use."""

    def __init__(self, ref: str, start: Path):
        start = start if start.is_dir() else start.parent
        while not start.is_dir() and start != start.parent:  # a --stdin-filename that does not exist yet
            start = start.parent
        top = _git(["rev-parse", "--show-toplevel"], start)
        if top.returncode != 0:
            raise ChangedLinesError(f"--diff-base needs a git repository, and {start} is not inside one")
        self.top = Path(os.fsdecode(top.stdout.rstrip(b"\n"))).resolve()
        if not ref or ref.startswith("-"):
            raise ChangedLinesError(f"--diff-base: {ref!r} is not a git revision")
        wanted = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], self.top)
        if wanted.returncode != 0:
            raise ChangedLinesError(f"--diff-base: {ref!r} is not a commit of the repository at {self.top}")
        base = _git(["merge-base", "--end-of-options", wanted.stdout.strip().decode(), "HEAD"], self.top)
        if base.returncode != 0:
            raise ChangedLinesError(f"--diff-base: no merge base of {ref!r} and HEAD ({_first_line(base.stderr)})")
        self.ref = ref
        self.base = base.stdout.strip().decode()
        self._changed: dict[str, frozenset[int] | None] = {}  # absolute path -> lines (None: all)
        self._buffers: dict[str, bytes] = {}

    def repo_path(self, absolute: str) -> str | None:
        """The path git knows `absolute` by (relative to the top level), or None outside."""
        real = os.path.realpath(absolute)
        rel = os.path.relpath(real, self.top)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
            return None
        return rel.replace(os.sep, "/")

    def prepare(self, absolutes: list[str]) -> None:
        """Read the base versions of `absolutes` with one `git cat-file --batch`."""
        todo = [a for a in dict.fromkeys(absolutes) if a not in self._changed]
        asked: list[tuple[str, str]] = []
        for absolute in todo:
            rel = self.repo_path(absolute)
            if rel is None or "\n" in rel:
                self._changed[absolute] = None  # git cannot be asked about it: all lines count
            else:
                asked.append((absolute, rel))
        if not asked:
            return
        request = b"".join(os.fsencode(f"{self.base}:{rel}") + b"\n" for _, rel in asked)
        out = _git(["cat-file", "--batch"], self.top, stdin=request)
        if out.returncode != 0:
            raise ChangedLinesError(f"--diff-base: git cat-file failed ({_first_line(out.stderr)})")
        blobs = _parse_batch(out.stdout, len(asked))
        for (absolute, _), old in zip(asked, blobs):
            self._changed[absolute] = None if old is None else _changed_against(old, self._buffers[absolute] if absolute in self._buffers else _read(absolute))

    def set_current(self, absolute: str, data: bytes) -> None:
        """Compare `absolute` as `data` (a buffer from stdin) instead of what is on disk."""
        self._buffers[absolute] = data
        self._changed.pop(absolute, None)

    def touches(self, absolute: str, start_line: int, end_line: int) -> bool:
        if absolute not in self._changed:
            self.prepare([absolute])
        changed = self._changed[absolute]
        if changed is None:
            return True
        return any(line in changed for line in range(start_line, end_line + 1))


def _read(absolute: str) -> bytes:
    """The file as it is now (regular files only, bounded: the one reader); b"" otherwise."""
    try:
        return read_bytes(Path(absolute), OSError)
    except OSError:
        return b""


def _parse_batch(out: bytes, count: int) -> list[bytes | None]:
    """The blobs of a `cat-file --batch` answer, in request order (None: not a blob there).

    A header is `<oid> <type> <size>` for an object, `<name> missing` (or `ambiguous`)
    otherwise, where <name> is what was asked and may hold spaces (a file named
    `Dockerfile.x blob`): a header is read from its end, and only a hex object id, a type
    and a decimal size make an object."""
    blobs: list[bytes | None] = []
    pos = 0
    for _ in range(count):
        end = out.find(b"\n", pos)
        if end < 0:
            blobs.extend([None] * (count - len(blobs)))  # a short answer: those files count as all new
            break
        header = out[pos:end].rsplit(b" ", 2)
        pos = end + 1
        if len(header) == 3 and header[1] in (b"blob", b"tree", b"commit", b"tag") and header[2].isdigit() \
                and len(header[2]) < 20 and all(c in b"0123456789abcdef" for c in header[0]):
            size = int(header[2])
            blobs.append(out[pos : pos + size] if header[1] == b"blob" else None)
            pos += size + 1  # the contents, then a newline
        else:
            blobs.append(None)  # "<name> missing" / "ambiguous"
    return blobs


def _lines_for_diff(data: bytes) -> list[str]:
    return [ln.rstrip("\r") for ln in line_model.split_lines(line_model.decode(data))]


# Exact line matching (difflib without autojunk) costs up to the product of the two
# sides' lengths; a gap larger than this is first split at lines unique to both sides, and
# a gap that is still larger counts as changed on every new line (more findings shown,
# none hidden).
DIFF_BUDGET = 4_000_000


def _unique_anchors(before: list[str], after: list[str], lo1: int, hi1: int, lo2: int, hi2: int) -> list[tuple[int, int]]:
    """Pairs (i, j) of lines that occur exactly once in before[lo1:hi1] and in after[lo2:hi2],
    the longest run of them in increasing order on both sides (patience sorting)."""
    count1: dict[str, int] = {}
    where1: dict[str, int] = {}
    for i in range(lo1, hi1):
        count1[before[i]] = count1.get(before[i], 0) + 1
        where1[before[i]] = i
    count2: dict[str, int] = {}
    where2: dict[str, int] = {}
    for j in range(lo2, hi2):
        count2[after[j]] = count2.get(after[j], 0) + 1
        where2[after[j]] = j
    pairs = [(where1[line], j) for line, j in sorted(((l, where2[l]) for l, n in count2.items() if n == 1 and count1.get(l) == 1), key=lambda x: x[1])]
    # longest increasing subsequence of the `before` positions, in `after` order
    tails: list[int] = []
    tail_at: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (i, _) in enumerate(pairs):
        slot = bisect.bisect_left(tails, i)
        if slot == len(tails):
            tails.append(i)
            tail_at.append(k)
        else:
            tails[slot] = i
            tail_at[slot] = k
        back[k] = tail_at[slot - 1] if slot else -1
    out: list[tuple[int, int]] = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


def _mark_gap(before: list[str], after: list[str], lo1: int, hi1: int, lo2: int, hi2: int, changed: set[int]) -> None:
    if hi2 <= lo2:
        return
    if hi1 <= lo1:
        changed.update(range(lo2 + 1, hi2 + 1))
        return
    if (hi1 - lo1) * (hi2 - lo2) > DIFF_BUDGET:
        changed.update(range(lo2 + 1, hi2 + 1))
        return
    matcher = difflib.SequenceMatcher(None, before[lo1:hi1], after[lo2:hi2], autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(range(lo2 + j1 + 1, lo2 + j2 + 1))


def _changed_against(old: bytes, new: bytes) -> frozenset[int]:
    """1-based numbers of the lines of `new` that are not lines kept from `old`. Work is
    near-linear: the common head and tail are cut off, a large middle is split at lines
    unique to both sides, and each gap is diffed exactly only within DIFF_BUDGET."""
    if old == new:
        return frozenset()
    before, after = _lines_for_diff(old), _lines_for_diff(new)
    lo1, lo2, hi1, hi2 = 0, 0, len(before), len(after)
    while lo1 < hi1 and lo2 < hi2 and before[lo1] == after[lo2]:
        lo1, lo2 = lo1 + 1, lo2 + 1
    while hi1 > lo1 and hi2 > lo2 and before[hi1 - 1] == after[hi2 - 1]:
        hi1, hi2 = hi1 - 1, hi2 - 1
    changed: set[int] = set()
    if (hi1 - lo1) * (hi2 - lo2) <= DIFF_BUDGET:
        _mark_gap(before, after, lo1, hi1, lo2, hi2, changed)
        return frozenset(changed)
    prev1, prev2 = lo1, lo2
    for i, j in _unique_anchors(before, after, lo1, hi1, lo2, hi2):
        _mark_gap(before, after, prev1, i, prev2, j, changed)
        prev1, prev2 = i + 1, j + 1
    _mark_gap(before, after, prev1, hi1, prev2, hi2, changed)
    return frozenset(changed)


def narrow_to_changes(result, settings, changed: ChangedLines) -> int:
    """Drop the findings of `result` whose span touches no changed line; how many active
    (not suppressed) findings went."""
    def absolute(path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(str(settings.root), path)

    changed.prepare(sorted({absolute(m.path) for f in result.findings for m in (f, *f.related)}))
    # a finding folded by root (portlint.findings.roots) stays when its root or one of its
    # uses is on a changed line: a new use of a 32-bit mask constant is a new problem
    kept = [f for f in result.findings
            if any(changed.touches(absolute(m.path), m.span.start_line, m.span.end_line) for m in (f, *f.related))]
    dropped = sum(1 for f in result.findings if not f.suppressed) - sum(1 for f in kept if not f.suppressed)
    result.findings = kept
    return dropped
