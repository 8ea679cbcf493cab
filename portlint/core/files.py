"""The one way portlint writes a file: reports (`scan -o`, `report -o`, `merge-sarif -o`,
which is also how a baseline is written), `--fix`, `--add-suppressions` and cache entries
all go through `write_file`.

What it guarantees, whatever the scanned tree holds:
- the last component is never followed: an existing symlink at the target is refused
  (and the final rename, relative to an open handle on the folder, replaces a name, never
  what a name points to);
- the folder is resolved once, and when an allowed `root` is given it must lie inside it
  (a committed `out -> ../../victim` folder link is refused before anything is created);
- the write is atomic: a new temporary file (created exclusively, `O_NOFOLLOW`) in the
  same folder, renamed over the target, so a reader never sees half a file;
- an existing file keeps its permission bits; a read-only file (no write bit for its
  owner) is refused rather than replaced;
- a file the scan read as a source (same device and inode) is refused as a target, so
  `--output k.cu` cannot overwrite the code it reports on.

Refusals raise `WriteRefused` (an OSError) with a one-line reason.

And the one way portlint reads a file of the scanned tree or one it does not trust (sources,
headers, `.gitignore` files, dependency lists, configuration, baselines): `read_limited`.
- it opens without blocking (a FIFO never hangs the open) and reads only a regular file (a
  FIFO swapped in after discovery, a symlink to `/dev/zero`, a folder are refused after
  the open, by what the open handle is);
- it reads at most `limit` bytes whatever size the file claims (a file that grows while it
  is read is refused too), in chunks, so a large limit costs no memory up front;
- a refusal is `NotRead` (an OSError) whose `why` says which, for the caller's one-line
  notice; `read_bytes` / `read_text` turn every failure into the caller's error type.
Where a file may lie (inside the tree, never through a link out of it) is the caller's
check, with `resolves_inside`: discovery's for sources, the reader's own for the rest."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Iterable

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class WriteRefused(OSError):
    """portlint will not write this target (the reason is the message)."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EPERM, reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def resolves_inside(path, folder) -> bool:
    """Whether `path`, every symlink on the way followed, lands inside `folder` (resolved
    too). How an in-tree file portlint reads for itself (configuration, `.gitignore`,
    dependency lists) is kept from being a link to a file outside the tree."""
    try:
        return _inside(Path(os.path.realpath(path)), Path(os.path.realpath(folder)))
    except (OSError, ValueError):
        return False


def _existing_ancestor(folder: Path) -> Path:
    current = folder
    while not os.path.lexists(current) and current.parent != current:
        current = current.parent
    return current


def source_identities(paths: Iterable) -> set[tuple[int, int]]:
    """(device, inode) of each path that exists (the files a scan read)."""
    out: set[tuple[int, int]] = set()
    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        out.add((st.st_dev, st.st_ino))
    return out


def check_folder(folder: Path, root: Path | None, make: bool = False) -> Path:
    """The resolved `folder`, refused when it (or, before it exists, its nearest existing
    ancestor) resolves outside `root`; created first when `make`."""
    folder = Path(os.path.abspath(folder))
    if root is not None:
        real_root = Path(os.path.realpath(root))
        base = Path(os.path.realpath(_existing_ancestor(folder)))
        if not _inside(base, real_root):
            raise WriteRefused(f"{folder} resolves to {base}, outside {real_root} (a symlinked folder)")
    if make:
        folder.mkdir(parents=True, exist_ok=True)
    real = Path(os.path.realpath(folder))
    if root is not None and not _inside(real, Path(os.path.realpath(root))):
        raise WriteRefused(f"{folder} resolves to {real}, outside {os.path.realpath(root)} (a symlinked folder)")
    return real


def write_file(path: Path, data: bytes, *, root: Path | None = None, make_folders: bool = False,
               sources: set[tuple[int, int]] | None = None, new_mode: int | None = None) -> None:
    """Replace `path` with `data` atomically (see the module docstring). `root`: the folder
    the target must resolve inside (None: anywhere the caller names). `sources`: (device,
    inode) of scanned files that must not be overwritten. `new_mode`: permission bits of a
    file that did not exist (default: 0o666 less the umask, as `open` would give)."""
    path = Path(path)
    name = path.name
    if not name or name in (".", ".."):
        raise WriteRefused(f"{path} is not a file name")
    folder = check_folder(path.parent, root, make=make_folders)
    dfd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                raise WriteRefused(f"{path} is a symlink: not written through")
            if not stat.S_ISREG(st.st_mode):
                raise WriteRefused(f"{path} is not a regular file")
            if sources and (st.st_dev, st.st_ino) in sources:
                raise WriteRefused(f"{path} is a file this scan read: not overwritten with a report")
            if not st.st_mode & stat.S_IWUSR:
                raise WriteRefused(f"{path} is read-only: not replaced")
            mode = stat.S_IMODE(st.st_mode)
        else:
            if new_mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            else:
                mode = new_mode
        tmp = f".{name[:64]}.{secrets.token_hex(6)}.portlint-tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                os.fchmod(fh.fileno(), mode)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    finally:
        os.close(dfd)


# ---- reading ------------------------------------------------------------------------------

MAX_BYTES = 256 * 1024 * 1024  # what a read takes at the most when its caller names no limit
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC


class NotRead(OSError):
    """A file `read_limited` refuses: `why` is "directory", "not-regular", "too-large" (its
    size, `size`, is over the limit) or "grew" (it held more than the limit when read)."""

    def __init__(self, why: str, size: int | None = None) -> None:
        super().__init__(errno.EINVAL, why)
        self.why, self.size = why, size


def open_for_reading(path) -> int:
    """A read-only descriptor of `path`, opened without blocking (FIFOs and devices never
    stall it)."""
    return os.open(path, _READ_FLAGS)


def read_limited(path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of regular file `path`, at most `limit` of them; `NotRead` for a folder, a
    FIFO, device or socket, or a file over `limit`; OSError when it cannot be opened or read."""
    fd = open_for_reading(path)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise NotRead("directory")
        if not stat.S_ISREG(st.st_mode):
            raise NotRead("not-regular")
        if st.st_size > limit:
            raise NotRead("too-large", st.st_size)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if left <= 0:
        raise NotRead("grew")
    return b"".join(chunks)


def shown_as(path, label: str) -> str:
    """How a message names the file: `label path`, or the path alone."""
    return f"{label} {path}" if label else str(path)


def read_bytes(path: Path, error: type[Exception], label: str = "", limit: int = MAX_BYTES) -> bytes:
    """`read_limited`, every failure `error(one-line message)` naming the file."""
    shown = shown_as(path, label)
    try:
        return read_limited(path, limit)
    except NotRead as exc:
        if exc.why in ("too-large", "grew"):
            raise error(f"{shown} is larger than {limit} bytes") from None
        raise error(f"cannot read {shown}: not a regular file") from None
    except OSError as exc:
        raise error(f"cannot read {shown}: {exc.strerror or exc}") from None


def read_text(path: Path, error: type[Exception], label: str = "", limit: int = MAX_BYTES) -> str:
    """`read_bytes`, decoded as UTF-8 (a BOM dropped); not UTF-8 is `error` too."""
    shown = shown_as(path, label)
    data = read_bytes(path, error, label, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{shown} is not UTF-8 text: {exc}") from None
    return text[1:] if text.startswith("\ufeff") else text
