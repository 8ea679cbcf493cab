"""The paths git tracks, read from the scanned tree's `.git/index` without running git.

git never applies ignore rules to a file it tracks (`git add -f gen/k.cu` is in the diff and
the build whatever `.gitignore` says), so discovery keeps such a file when an ignore rule
would drop it. Running git is not an option: a repository's `.git/config` can name programs
git would run. The reader follows the documented index format (gitformat-index): a "DIRC"
header with version 2, 3 or 4 and the entry count; per entry 40 bytes of stat data, the
object name (20 bytes for SHA-1, 32 for SHA-256, told apart by the file's trailing
checksum), 16 bits of flags (12 of them the name length), in version 3 and up 16 more when
the extended bit is set, then the path: NUL-terminated and padded to a multiple of 8 in
versions 2 and 3, prefix-compressed in version 4 (a varint of bytes to drop from the end of
the previous path, then the NUL-terminated rest).

The index is data the tree's author wrote: at most MAX_INDEX bytes are read, every length is
checked against what is left, a path that is absolute or has an empty, `.` or `..`
component makes the whole index unusable, and anything unusable is a one-line notice and no
tracked paths (ignore rules alone decide, as before). `.git` is only read at the scanned
tree's root: a `.git` that is a symlink, a `gitdir:` file pointing out of the tree, or an
index that resolves out of it is not read. The paths only ever keep a file the walk met; they
never add one."""

from __future__ import annotations

import hashlib
import os
import stat
import struct

from portlint.core.files import read_bytes, resolves_inside

MAX_INDEX = 128 * 1024 * 1024
MAX_GITFILE = 4096
_ENTRY_FIXED = 40  # ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size


class IndexError_(Exception):
    """The index cannot be used (the message says why, in one line)."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    if pos >= len(data):
        raise IndexError_("truncated entry")
    c = data[pos]; pos += 1
    value = c & 0x7F
    while c & 0x80:
        value += 1
        if value >= 1 << 56:
            raise IndexError_("prefix length out of range")
        if pos >= len(data):
            raise IndexError_("truncated entry")
        c = data[pos]; pos += 1
        value = (value << 7) + (c & 0x7F)
    return value, pos


def _check_path(path: bytes) -> None:
    if path.startswith(b"/") or any(part in (b"", b".", b"..") for part in path.split(b"/")):
        raise IndexError_(f"path {path[:80]!r} is not a path inside the tree")


def parse_index(data: bytes) -> set[bytes]:
    """The tracked paths (bytes, `/`-separated, relative to the work tree) of index `data`."""
    if len(data) < 12 or data[:4] != b"DIRC":
        raise IndexError_("not a git index (no DIRC signature)")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise IndexError_(f"index version {version} is not supported")
    errors = []
    for hash_size in _hash_sizes(data):
        try:
            return _entries(data, version, count, hash_size)
        except IndexError_ as exc:
            errors.append(str(exc))
    raise IndexError_(errors[0] if errors else "checksum does not match the contents")


def _hash_sizes(data: bytes) -> list[int]:
    sizes = []
    for size, algorithm in ((20, hashlib.sha1), (32, hashlib.sha256)):
        if len(data) >= 12 + size:
            tail = data[-size:]
            if tail == algorithm(data[:-size]).digest():
                return [size]
            if tail == bytes(size):  # index.skipHash: no checksum written
                sizes.append(size)
    return sizes


def _entries(data: bytes, version: int, count: int, hash_size: int) -> set[bytes]:
    end = len(data) - hash_size
    if count > (end - 12) // (_ENTRY_FIXED + hash_size + 3):
        raise IndexError_(f"{count} entries cannot fit in {len(data)} bytes")
    paths: set[bytes] = set()
    pos, previous = 12, b""
    for _ in range(count):
        start = pos
        pos += _ENTRY_FIXED + hash_size
        if pos + 2 > end:
            raise IndexError_("truncated entry")
        mode = struct.unpack_from(">I", data, start + 24)[0]
        (flags,) = struct.unpack_from(">H", data, pos)
        pos += 2
        if flags & 0x4000:
            if version < 3:
                raise IndexError_("extended flags in a version 2 index")
            pos += 2
        name_length = flags & 0x0FFF
        if version == 4:
            drop, pos = _varint(data, pos)
            if drop > len(previous):
                raise IndexError_("prefix length longer than the previous path")
            nul = data.find(b"\0", pos, end)
            if nul < 0:
                raise IndexError_("truncated entry")
            path = previous[:len(previous) - drop] + data[pos:nul]
            pos = nul + 1
        else:
            nul = data.find(b"\0", pos, end)
            if nul < 0:
                raise IndexError_("truncated entry")
            path = data[pos:nul]
            pos = start + ((nul - start) // 8 + 1) * 8  # 1 to 8 NULs, the entry a multiple of 8
            if pos > end or data[nul:pos].strip(b"\0"):
                raise IndexError_("bad padding after a path")
        if name_length < 0x0FFF and name_length != len(path):
            raise IndexError_("a path's length disagrees with its flags")
        previous = path
        if stat.S_IFMT(mode) == stat.S_IFDIR and path.endswith(b"/"):
            continue  # a sparse index's folder entry: nothing of it is on disk
        _check_path(path)
        paths.add(path)
    return paths


def _git_dir(root: str) -> tuple[str | None, str | None]:
    """The git directory of the tree at `root` and None, or None and why it is not read
    (None, None: the tree has no `.git`)."""
    dot_git = os.path.join(root, ".git")
    try:
        st = os.lstat(dot_git)
    except OSError:
        return None, None
    if stat.S_ISLNK(st.st_mode):
        return None, "`.git` is a symlink: not followed"
    if stat.S_ISDIR(st.st_mode):
        return dot_git, None
    if not stat.S_ISREG(st.st_mode):
        return None, None
    try:
        text = read_bytes(dot_git, OSError, limit=MAX_GITFILE)
    except OSError as exc:
        return None, f"`.git` not read: {exc}"
    first = text.split(b"\n", 1)[0].strip()
    if not first.startswith(b"gitdir:"):
        return None, "`.git` file without a `gitdir:` line"
    target = os.fsdecode(first[len(b"gitdir:"):].strip())
    target = os.path.join(root, target)  # an absolute target stays as it is
    if not resolves_inside(target, root):
        return None, "`.git` points to a git directory outside the scanned tree: not followed"
    return target, None


def tracked_paths(root: str) -> tuple[set[bytes], str | None]:
    """The paths the index at `root` tracks, and a one-line reason when it was not usable
    (an empty set then; an empty set and None when the tree is no git work tree)."""
    git_dir, why = _git_dir(root)
    if git_dir is None:
        return set(), why and why + " (tracked files unknown: ignore rules alone decide)"
    index = os.path.join(git_dir, "index")
    try:
        st = os.lstat(index)
    except OSError:
        return set(), None  # a repository with nothing added yet
    unknown = " (tracked files unknown: ignore rules alone decide)"
    if stat.S_ISLNK(st.st_mode) or not resolves_inside(index, root):
        return set(), "index is a symlink: not followed" + unknown
    try:
        data = read_bytes(index, IndexError_, "git index", limit=MAX_INDEX)
        return parse_index(data), None
    except IndexError_ as exc:
        return set(), f"git index not used: {exc}" + unknown
