"""Turn the paths on the command line into the files to scan.

Directories are walked in sorted order, honouring `.gitignore` files with git's answers
(discovery/gitignore.py; each applies below its own folder, a deeper one first), except for
a file git tracks (read from the tree's `.git/index`, discovery/gitindex.py; git is never
run), the default and configured excludes (which win over both), and symlink loops. Files named
explicitly are always scanned unless `--force-exclude` is given (pre-commit passes files
one by one, and excludes must still apply). Problems become one-line Notices.

The scanned tree is what the command line names (discovery/roots.py decides every root).
Each file gets a scan root: the directory named on the command line it was found under;
for a file named itself, its project marker's folder (the configuration file's, the git
root) when that holds it, else its own folder; never the working directory. With several
paths named, a file's scan root is the widest of their trees that holds it. The
`.gitignore` files read and the git index are those of the project root of the tree
(`roots.project_root`). A path named inside the working directory that resolves outside
it, and a symlink met in a walk whose target lies outside its scan root, are skipped with
a notice unless `--follow-symlinks`; `--fix` never writes a file that resolves outside its
scan root either way (see fixes.write_target). A FIFO, device or socket is never opened."""

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
from portlint.discovery.roots import file_tree, inside, named_root, project_root
from portlint.core.model import Notice


@dataclass(frozen=True)
class SourceFile:
    real: Path  # the path to open
    display: str  # POSIX path relative to the settings root (absolute when outside it)
    root: str | None = None  # the resolved scan root it was found under (None: none known)


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
    tracks (read from the `.git/index` at the project root, discovery/gitindex.py), which
    ignore rules never drop. The configured and default excludes drop a path whatever git
    says. The `.gitignore` files read for a tree are those from its project root
    (`roots.project_root`: the git root, the configuration file's folder, else the tree
    itself) down, never above it."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.root = settings.root
        self._root = str(settings.root)  # excludes are written against the settings root
        self.notices: list[Notice] = []
        excludes = bounded_patterns(list(settings.exclude), "exclude (configuration)", self.notices)
        self.exclude = linear_spec(list(DEFAULT_EXCLUDES) + excludes)
        self.respect_gitignore = settings.respect_gitignore
        self._gitignores: dict[str, IgnoreFile | None] = {}
        self._chains: dict[tuple[str, str], list[tuple[str, IgnoreFile]]] = {}
        self._tops: dict[str, str] = {}
        self._tracked: dict[str, tuple[set[bytes], set[bytes]]] = {}

    def top(self, tree: str) -> str:
        """The folder the `.gitignore` chain and git index of the resolved `tree` start at."""
        if tree not in self._tops:
            self._tops[tree] = str(project_root(self.settings, tree, tree))
        return self._tops[tree]

    def _gitignore(self, directory: str, top: str) -> IgnoreFile | None:
        if directory not in self._gitignores:
            spec = None
            gi = os.path.join(directory, ".gitignore")
            # a .gitignore that links out of the scanned tree is not read (whether a guessed
            # line is in a file outside would show in which files drop out of the report)
            inside_root = _relative(directory, top) is not None
            if self.respect_gitignore and os.path.isfile(gi) and not resolves_inside(gi, top if inside_root else directory):
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

    def gitignored(self, absolute: str, is_dir: bool, top: str) -> bool:
        """git's answer for `absolute` whose folders are not ignored (the walk's case)."""
        if not self.respect_gitignore:
            return False
        chain = [(os.fsencode(_relative(absolute, directory)).split(b"/"), spec)
                 for directory, spec in self._specs_above(os.path.dirname(absolute), top)]
        return ignored_path(chain, is_dir)

    def _tracked_rel(self, absolute: str, top: str) -> tuple[bytes | None, tuple[set[bytes], set[bytes]]]:
        known = self._tracked.get(top)
        if known is None:
            tracked, why = tracked_paths(top)
            if why:
                self.notices.append(Notice(display_path(Path(top) / ".git", self.root), why, "note"))
            dirs: set[bytes] = set()
            for path in tracked:
                parts = path.split(b"/")
                for k in range(1, len(parts)):
                    dirs.add(b"/".join(parts[:k]))
            known = self._tracked[top] = (tracked, dirs)
        rel = _relative(absolute, top)
        return (None if rel is None or rel == "." else os.fsencode(rel)), known

    def tracked(self, absolute: str, top: str) -> bool:
        """Whether git tracks the file `absolute` (the index at the project root says so)."""
        rel, (tracked, _) = self._tracked_rel(absolute, top)
        return rel is not None and rel in tracked

    def holds_tracked(self, absolute: str, top: str) -> bool:
        """Whether some file git tracks lies below the folder `absolute`."""
        rel, (_, dirs) = self._tracked_rel(absolute, top)
        return rel is not None and rel in dirs

    def excluded_alone(self, path: Path, tree: str) -> bool:
        """Whether the file `path` of the resolved `tree`, asked about without a walk, is
        dropped: by the excludes on it or a folder of it below the settings root, or by
        ignore rules (on a folder of it below its project root, the nearest ignored one
        ending the question, or on it) unless git tracks it."""
        absolute = os.path.abspath(path)
        top = self.top(tree)
        root, base = Path(self._root), Path(top)
        parents = list(reversed(Path(absolute).parents))
        folders = [str(p) for p in parents if root in p.parents]
        if any(self.excluded_by_settings(f, True) for f in folders) or self.excluded_by_settings(absolute, False):
            return True
        below = [str(p) for p in parents if base in p.parents]
        ignored = any(self.gitignored(f, True, top) for f in below) or self.gitignored(absolute, False, top)
        return ignored and not self.tracked(absolute, top)

    def _specs_above(self, folder: str, top: str) -> list[tuple[str, IgnoreFile]]:
        """The .gitignore specs that apply in `folder`: every one from `top` down to it
        (only the folder's own when it lies outside `top`). Memoised per folder, since a
        walk asks for the same folders once per entry."""
        key = (folder, top)
        found = self._chains.get(key)
        if found is None:
            if folder != top and _relative(folder, top) is not None:
                found = list(self._specs_above(os.path.dirname(folder), top))
            else:
                found = []
            spec = self._gitignore(folder, top)
            if spec is not None:
                found.append((folder, spec))
            self._chains[key] = found
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
        top = ignorer.top(root)
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
            if tracked_only or ignorer.gitignored(absolute, is_dir, top):
                # ignored (or below an ignored folder): only what git tracks stays
                if not (ignorer.holds_tracked(absolute, top) if is_dir else ignorer.tracked(absolute, top)):
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
    named: set[str] = set()  # the trees of the paths named (not those named through a link out)
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
            # scanned, and never written: it lies outside its root, the nearest folder above
            # it that no symlink leads to
            root = _unlinked_folder(os.path.abspath(path))
        elif stat.S_ISDIR(st.st_mode):
            root = real
            named.add(root)
        else:
            root = file_tree(settings, path)
            named.add(root)
        if stat.S_ISDIR(st.st_mode):
            walk(path, root)
            continue
        kind = _special_kind(st.st_mode)
        if kind is not None:
            notices.append(Notice(display_path(path, settings.root), f"is {kind}, not a regular file: skipped"))
            continue
        if settings.force_exclude and ignorer.excluded_alone(path, root):
            continue
        if path.is_symlink() and leaves_tree(path, root):
            notices.append(Notice(display_path(path, settings.root), _OUTSIDE, "note"))
            continue
        add(path, root)  # named explicitly: scanned whatever its extension says (language decides)
    found = sorted(files.values(), key=lambda f: f.display)
    if len(named) > 1:
        # several trees named (`portlint scan setup.py csrc/k.cu`, `scan . sub`): a file's
        # tree is the widest of them that holds it, so it does not depend on which name
        # reached it first
        widest = sorted(named, key=len)
        for i, sf in enumerate(found):
            if sf.root in named:
                real = os.path.realpath(sf.real)
                top = next((t for t in widest if inside(real, t)), sf.root)
                if top != sf.root:
                    found[i] = SourceFile(sf.real, sf.display, top)
    return found, notices + ignorer.notices


def _unlinked_folder(absolute: str) -> str:
    """Where a path named through a symlink out of the tree was named: the folder that
    holds the lowest folder of `absolute` that is a symlink (the file's own folder when
    none is: the file itself is the link)."""
    folder = os.path.dirname(absolute)
    here = folder
    while os.path.dirname(here) != here:
        if os.path.islink(here):
            folder = os.path.dirname(here)
            break
        here = os.path.dirname(here)
    return os.path.realpath(folder)


_OUTSIDE = "symlink to outside the scanned tree, skipped (--follow-symlinks scans it)"
_NAMED_OUTSIDE = ("resolves outside the working directory through a symlink, so it is outside the scanned tree: "
                  "skipped (name its target to scan and fix it; --follow-symlinks scans it without fixing)")


def is_excluded(path: Path, settings: Settings) -> bool:
    """Whether the configured and default excludes (and .gitignore files, unless turned off)
    leave `path` out, as they do for a file met in a walk: for a caller that has one file's
    contents and no walk (the editor server)."""
    return _Ignorer(settings).excluded_alone(path, named_root(path, str(settings.root)))
