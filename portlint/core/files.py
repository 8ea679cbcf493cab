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

Refusals raise `WriteRefused` (an OSError) with a one-line reason."""

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
