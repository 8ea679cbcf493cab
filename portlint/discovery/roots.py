"""The roots of a scan: which folders each stage may read, decided here and nowhere else.

The scanned tree is what the user names, never the working directory (which only sets how
paths are written in reports, `Settings.root`):

- **The tree** of a path (its scan root, `SourceFile.root`, handed to the analyses as
  `ctx.scan_root`): a folder named on the command line is its own tree. A file named on
  its own (on the command line, as `--stdin-filename`) belongs to the project its marker
  declares when that holds it (below), else its own folder is its tree; the editor server
  gives a document its workspace instead (`named_root`). With several paths named, a
  file's tree is the widest of theirs that holds it (`discover`). Folders are listed (the
  vendored role's library layout) and files written (`--fix`) only inside the tree.
- **The project marker**: the configuration file in use, whose folder is the project when
  it holds the path (`--config` or the file found from the path, as configuration is
  found), else the root of the git work tree at or above the path (a `.git`). Both are
  found from the named path, never from the working directory, and a scanned tree cannot
  put either above itself: they are the user's own checkout and configuration. A tree
  that wants to be read alone inside a larger checkout says so with a configuration file
  of its own, which is nearer than the git root.
- **The project root** of a file, for the stages that read beyond one file (the Python
  project model, the build scope's walk, the `.gitignore` chain and the git index, the
  default cache directory): the marker's folder when it holds the file, else the file's
  tree, else the file's own folder. A library caller that knows no tree gets the settings
  root it built its Settings with; the command line, the stdin scan and the editor server
  always know each file's tree. Nothing outside the project root is listed or opened,
  whatever the working directory; the only reads outside it are the configuration found
  above the path and headers in the folders the user named for the include search
  (`--compile-commands`' -I folders; `frontends/cuda/includes.py`, whose every header is
  bounded by this project root)."""

from __future__ import annotations

import os
from pathlib import Path

from portlint.core.config import git_root


def inside(path: str, root: str) -> bool:
    """Whether resolved `path` is `root` or lies below it (both resolved)."""
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def named_root(path: Path, top: str) -> str:
    """The resolved tree of a file named on its own, given the folder `top` that may hold
    it (its project marker's, or the editor's workspace): `top` when the file lies inside
    it, otherwise the file's own folder."""
    absolute = os.path.abspath(path)
    return os.path.realpath(top) if inside(absolute, top) else os.path.realpath(os.path.dirname(absolute))


def marker_root(settings, path) -> str | None:
    """The resolved folder of the project marker that holds `path`: the configuration
    file's folder, else the git work tree's root at or above it; None when neither does."""
    real = os.path.realpath(path)
    cfg = getattr(settings, "config_file", None)
    if cfg is not None:
        croot = os.path.realpath(os.path.dirname(os.path.abspath(cfg)))
        if inside(real, croot):
            return croot
    groot = git_root(Path(real))
    return os.path.realpath(groot) if groot is not None else None


def file_tree(settings, path) -> str:
    """The tree of a file named on its own (on the command line, `--stdin-filename`): its
    project marker's folder when that holds it, else the file's own folder."""
    absolute = os.path.abspath(path)
    top = marker_root(settings, absolute)
    return named_root(Path(absolute), top if top is not None else os.path.dirname(absolute))


def named_tree(settings, path) -> str:
    """The tree of a path named on the command line: a folder is its own, a file's is
    `file_tree`'s."""
    return os.path.realpath(path) if os.path.isdir(path) else file_tree(settings, path)


def _known_tree(settings, tree: str | None) -> str | None:
    """`tree`, or when none is known the settings root: a library caller that builds its
    own Settings (the command line, the stdin scan and the editor server always know each
    file's tree; their settings root is only where report paths are written from)."""
    if tree is not None:
        return tree
    root = getattr(settings, "root", None)
    return str(root) if root is not None else None


def project_root(settings, real, tree: str | None) -> Path:
    """The project root of the file `real` found in `tree` (its resolved scan root; None:
    not known, `_known_tree`): the marker's folder when it holds the file, else the tree
    when it holds it, else the file's own folder (or the folder itself)."""
    resolved = os.path.realpath(real)
    tree = _known_tree(settings, tree)
    top = marker_root(settings, resolved)
    if top is None and tree is not None and inside(resolved, os.path.realpath(tree)):
        top = os.path.realpath(tree)
    if top is None:
        top = resolved if os.path.isdir(resolved) else os.path.dirname(resolved)
    return Path(top)


def tree_bound(settings, real, tree: str | None) -> Path:
    """How far a climb from `real` (a resolved file or folder) may go when no marker holds
    it: up to the tree (`_known_tree`) when it holds `real`, else not above `real`'s own folder."""
    resolved = os.path.realpath(real)
    tree = _known_tree(settings, tree)
    if tree is not None and inside(resolved, os.path.realpath(tree)):
        return Path(os.path.realpath(tree))
    return Path(resolved if os.path.isdir(resolved) else os.path.dirname(resolved))
