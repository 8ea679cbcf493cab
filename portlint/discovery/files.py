"""Turn the paths on the command line into the files to scan.

Directories are walked in sorted order, honouring `.gitignore` files with git's answers
(discovery/gitignore.py; each applies below its own folder, a deeper one first), except for
a file git tracks (read from the tree's `.git/index`, discovery/gitindex.py; git is never
run), the default and configured excludes (which win over both), and symlink loops. Files named
explicitly are always scanned unless `--force-exclude` is given (pre-commit passes files
one by one, and excludes must still apply). Problems become one-line Notices.

The scanned tree is what the command line names. Each file gets a scan root: the directory
named on the command line it was found under; for a file named itself, the working
directory when it lies inside it, else its own folder. A path named inside the working
directory that resolves outside it, and a symlink met in a walk whose target lies outside
its scan root, are skipped with a notice unless `--follow-symlinks`; `--fix` never writes
a file that resolves outside its scan root either way (see fixes.write_target). A FIFO,
device or socket is never opened."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from portlint.core.config import DEFAULT_EXCLUDES, Settings
from portlint.core.files import read_bytes, resolves_inside
from portlint.discovery.gitignore import IgnoreFile, bounded_patterns, ignored_path, linear_spec
from portlint.discovery.gitindex import tracked_paths
from portlint.discovery.languages import is_source_candidate
from portlint.core.model import Notice


@dataclass(frozen=True)
class SourceFile:
    real: Path  # the path to open
    display: str  # POSIX path relative to the settings root (absolute when outside it)
    root: str | None = None  # the resolved scan root it was found under (None: none known)


def inside(path: str, root: str) -> bool:
    """Whether resolved `path` is `root` or lies below it (both resolved)."""
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def named_root(path: Path, top: str) -> str:
    """The resolved scan root of a file named on its own (on the command line, as
    --stdin-filename, or opened in the editor with `top` its workspace): `top` (absolute)
    when the file lies inside it, otherwise the file's own folder."""
    absolute = os.path.abspath(path)
    return os.path.realpath(top) if inside(absolute, top) else os.path.realpath(os.path.dirname(absolute))


def _special_kind(mode: int) -> str | None:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return None


def _relative(absolute: str, folder: str) -> str | None:
    """`absolute` relative to `folder` (both absolute and normalised), or None when it lies
    outside. String work: this runs for every entry of a walk, where pathlib is slow."""
    if absolute == folder:
        return "."
    prefix = folder if folder.endswith(os.sep) else folder + os.sep
    if absolute.startswith(prefix):
        return absolute[len(prefix):].replace(os.sep, "/")
    return None


def display_path(path: Path, root: Path) -> str:
    absolute = os.path.abspath(path)
    rel = _relative(absolute, str(root))
    return rel if rel is not None else absolute.replace(os.sep, "/")


MAX_GITIGNORE = 1024 * 1024
class _Ignorer:
    """Which paths the excludes and the tree's .gitignore files leave out. `.gitignore`
    files give git's answers (discovery/gitignore.py): a deeper file's answer beats a
    higher one's, and a folder they ignore is not entered, except to reach a file git
    tracks (read from the tree's own `.git/index`, discovery/gitindex.py), which ignore
    rules never drop. The configured and default excludes drop a path whatever git says."""

    def __init__(self, settings: Settings):
        self.root = settings.root
        self._root = str(settings.root)
        self.notices: list[Notice] = []
        excludes = bounded_patterns(list(settings.exclude), "exclude (configuration)", self.notices)
        self.exclude = linear_spec(list(DEFAULT_EXCLUDES) + excludes)
        self.respect_gitignore = settings.respect_gitignore
        self._gitignores: dict[str, IgnoreFile | None] = {}
        self._chains: dict[str, list[tuple[str, IgnoreFile]]] = {}
        self._tracked: set[bytes] | None = None
        self._tracked_dirs: set[bytes] = set()

    def _gitignore(self, directory: str) -> IgnoreFile | None:
        if directory not in self._gitignores:
            spec = None
            gi = os.path.join(directory, ".gitignore")
            # a .gitignore that links out of the scanned tree is not read (whether a guessed
            # line is in a file outside would show in which files drop out of the report)
            inside_root = _relative(directory, self._root) is not None
            if self.respect_gitignore and os.path.isfile(gi) and not resolves_inside(gi, self._root if inside_root else directory):
                self.notices.append(Notice(display_path(Path(gi), self.root), "symlink to outside the scanned tree: not read", "warning"))
            elif self.respect_gitignore and os.path.isfile(gi):
                try:
                    data = read_bytes(Path(gi), OSError, limit=MAX_GITIGNORE)
                    if data.startswith(b"\xef\xbb\xbf"):
                        data = data[3:]
                    lines = [ln.decode("utf-8", "surrogateescape") for ln in data.split(b"\n")]
                    kept = bounded_patterns(lines, display_path(Path(gi), self.root), self.notices, runs=True)
                    spec = IgnoreFile.from_lines([ln.encode("utf-8", "surrogateescape") for ln in kept])
                except Exception as exc:
                    self.notices.append(Notice(display_path(Path(gi), self.root), f"not used: {exc}", "note"))
                    spec = None
            self._gitignores[directory] = spec
        return self._gitignores[directory]

    def excluded_by_settings(self, absolute: str, is_dir: bool) -> bool:
        """Whether the configured or default excludes drop `absolute`."""
        name = os.path.basename(absolute)
        rel = _relative(absolute, self._root)
        if rel is None:
            rel = name
        if rel != "." and self.exclude.match_file(rel + ("/" if is_dir else "")):
            return True
        return name in DEFAULT_EXCLUDES

    def gitignored(self, absolute: str, is_dir: bool) -> bool:
        """git's answer for `absolute` whose folders are not ignored (the walk's case)."""
        if not self.respect_gitignore:
            return False
        chain = [(os.fsencode(_relative(absolute, directory)).split(b"/"), spec)
                 for directory, spec in self._specs_above(os.path.dirname(absolute))]
        return ignored_path(chain, is_dir)

    def _tracked_rel(self, absolute: str) -> bytes | None:
        if self._tracked is None:
            self._tracked, why = tracked_paths(self._root)
            if why:
                self.notices.append(Notice(".git", why, "note"))
            for path in self._tracked:
                parts = path.split(b"/")
                for k in range(1, len(parts)):
                    self._tracked_dirs.add(b"/".join(parts[:k]))
        rel = _relative(absolute, self._root)
        return None if rel is None or rel == "." else os.fsencode(rel)

    def tracked(self, absolute: str) -> bool:
        """Whether git tracks the file `absolute` (the index at the tree's root says so)."""
        rel = self._tracked_rel(absolute)
        return rel is not None and rel in self._tracked

    def holds_tracked(self, absolute: str) -> bool:
        """Whether some file git tracks lies below the folder `absolute`."""
        rel = self._tracked_rel(absolute)
        return rel is not None and rel in self._tracked_dirs

    def excluded(self, path: Path, is_dir: bool) -> bool:
        """Whether a walk drops `path`, its folders having been let in."""
        absolute = os.path.abspath(path)
        if self.excluded_by_settings(absolute, is_dir):
            return True
        return self.gitignored(absolute, is_dir) and not (not is_dir and self.tracked(absolute))

    def excluded_alone(self, path: Path) -> bool:
        """Whether the file `path`, asked about without a walk, is dropped: by the excludes
        on it or a folder of it below the root, or by ignore rules (on a folder of it, the
        nearest ignored one ending the question, or on it) unless git tracks it."""
        absolute = os.path.abspath(path)
        root = Path(self._root)
        folders = [str(p) for p in reversed(Path(absolute).parents) if root in p.parents]
        if any(self.excluded_by_settings(f, True) for f in folders) or self.excluded_by_settings(absolute, False):
            return True
        ignored = any(self.gitignored(f, True) for f in folders) or self.gitignored(absolute, False)
        return ignored and not self.tracked(absolute)

    def _specs_above(self, folder: str) -> list[tuple[str, IgnoreFile]]:
        """The .gitignore specs that apply in `folder`: every one from the root down to it
        (only the folder's own when it lies outside the root). Memoised per folder, since a
        walk asks for the same folders once per entry."""
        found = self._chains.get(folder)
        if found is None:
            if folder != self._root and _relative(folder, self._root) is not None:
                found = list(self._specs_above(os.path.dirname(folder)))
            else:
                found = []
            spec = self._gitignore(folder)
            if spec is not None:
                found.append((folder, spec))
            self._chains[folder] = found
        return found


def discover(paths: list[Path], settings: Settings) -> tuple[list[SourceFile], list[Notice]]:
    ignorer = _Ignorer(settings)
    files: dict[str, SourceFile] = {}
    notices: list[Notice] = []
    seen_dirs: set[tuple[int, int]] = set()

    def add(path: Path, root: str) -> None:
        sf = SourceFile(path, display_path(path, settings.root), root)
        files.setdefault(sf.display, sf)

    def leaves_tree(path: Path, root: str) -> bool:
        """Whether the symlink `path` resolves to a place outside `root` (and that matters)."""
        if settings.follow_symlinks:
            return False
        try:
            return not inside(os.path.realpath(path), root)
        except (OSError, ValueError):
            return True

    def walk(directory: Path, root: str, tracked_only: bool = False) -> None:
        """`tracked_only`: the folder is ignored, and entered for the files git tracks."""
        try:
            st = directory.stat()
        except OSError as exc:
            notices.append(Notice(display_path(directory, settings.root), f"cannot read directory: {exc.strerror or exc}"))
            return
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            # reached again through a symlink: a loop (or a second way in); a folder named on
            # the command line inside another one named there (`scan . sub`) is no news
            if directory.is_symlink():
                notices.append(Notice(display_path(directory, settings.root), "symlink loop: directory already visited, skipped", "note"))
            return
        seen_dirs.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            notices.append(Notice(display_path(directory, settings.root), f"cannot read directory: {exc.strerror or exc}"))
            return
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError as exc:
                notices.append(Notice(display_path(path, settings.root), f"cannot stat: {exc.strerror or exc}"))
                continue
            if entry.is_symlink() and not is_dir and not is_file:
                if is_source_candidate(path):
                    notices.append(Notice(display_path(path, settings.root), "broken symlink, skipped"))
                continue
            absolute = os.path.abspath(path)
            if ignorer.excluded_by_settings(absolute, is_dir):
                continue
            inner = tracked_only
            if tracked_only or ignorer.gitignored(absolute, is_dir):
                # ignored (or below an ignored folder): only what git tracks stays
                if not (ignorer.holds_tracked(absolute) if is_dir else ignorer.tracked(absolute)):
                    continue
                inner = True
            if entry.is_symlink() and (is_dir or is_source_candidate(path)) and leaves_tree(path, root):
                notices.append(Notice(display_path(path, settings.root), _OUTSIDE, "note"))
                continue
            if is_dir:
                walk(path, root, inner)
            elif is_file and is_source_candidate(path):
                add(path, root)

    cwd = os.path.abspath(os.getcwd())
    cwd_real = os.path.realpath(cwd)
    for raw in paths:
        path = Path(raw)
        if path.is_symlink() and not path.exists():
            notices.append(Notice(display_path(path, settings.root), "broken symlink, skipped"))
            continue
        try:
            st = path.stat()
        except FileNotFoundError:
            raise FileNotFoundError(str(raw)) from None
        except OSError as exc:
            if exc.errno == 40:  # ELOOP
                notices.append(Notice(display_path(path, settings.root), "symlink loop, skipped"))
                continue
            notices.append(Notice(display_path(path, settings.root), f"cannot read: {exc.strerror or exc}"))
            continue
        real = os.path.realpath(path)
        if inside(os.path.abspath(path), cwd) and not inside(real, cwd_real):
            # named inside the working directory, but a symlink leads out of it
            if not settings.follow_symlinks:
                notices.append(Notice(display_path(path, settings.root), _NAMED_OUTSIDE, "note"))
                continue
            root = cwd_real  # scanned, and never written: it lies outside its root
        elif stat.S_ISDIR(st.st_mode):
            root = real
        else:
            root = named_root(path, cwd)
        if stat.S_ISDIR(st.st_mode):
            walk(path, root)
            continue
        kind = _special_kind(st.st_mode)
        if kind is not None:
            notices.append(Notice(display_path(path, settings.root), f"is {kind}, not a regular file: skipped"))
            continue
        if settings.force_exclude and ignorer.excluded_alone(path):
            continue
        if path.is_symlink() and leaves_tree(path, root):
            notices.append(Notice(display_path(path, settings.root), _OUTSIDE, "note"))
            continue
        add(path, root)  # named explicitly: scanned whatever its extension says (language decides)
    return sorted(files.values(), key=lambda f: f.display), notices + ignorer.notices


_OUTSIDE = "symlink to outside the scanned tree, skipped (--follow-symlinks scans it)"
_NAMED_OUTSIDE = ("resolves outside the working directory through a symlink, so it is outside the scanned tree: "
                  "skipped (name its target to scan and fix it; --follow-symlinks scans it without fixing)")


def is_excluded(path: Path, settings: Settings) -> bool:
    """Whether the configured and default excludes (and .gitignore files, unless turned off)
    leave `path` out, as they do for a file met in a walk: for a caller that has one file's
    contents and no walk (the editor server)."""
    return _Ignorer(settings).excluded_alone(path)
