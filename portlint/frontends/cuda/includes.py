"""The include graph of one scan: which headers a C/C++/CUDA file reaches, found once.

Every consumer that needs another file's text asks here — the guard map (macros a header
defines for a build), the constant map, the file's own names (shim headers), the
withheld-macro check of the PTX rules, the libclang pass (which headers to stub) and the
result cache (which headers' bytes are part of a file's key). One search rule for all:

- `#include "x"`: the including file's folder, then the search folders;
- `#include <x>`: the search folders;
- search folders: the scanned file's folder, the `include-dirs` of the config, the
  `-I`/`-isystem`/`-iquote` folders of the file's compile command (`--compile-commands`);
  then, for quoted includes only, the scanned file's two nearest ancestors (projects that
  write includes relative to a source root, `-I ggml/src`);
- last, for a name with a folder in it (`<cute/arch/config.hpp>`, `"cutlass/arch/mma.h"`),
  the scanned file's ancestor folders up to the project root: the include folder of a
  library the project bundles (CUTLASS under `csrc/cutlass/include`), found without flags.

Every header read lies inside the scanned file's project root (`discovery.roots.project_root`,
from its tree, never the working directory) or inside a folder the user named (the `-I`,
`-isystem`, `-iquote` folders of `--compile-commands`; the `include-dirs` of the config,
which are confined to its folder): its bound. A name that leaves the bound (`"../../x.h"`,
`"/etc/x"`, a header that is a symlink out) is not looked at, not even for whether it
exists; it is missing, and the scanned file gets a one-line notice (`Reach.refused`). The
libclang pass, which reads headers itself, does not run for such a file.

Conditional includes are all followed, so the set is a superset of what one build reads.
The graph lives in the scan's session (`portlint/core/session.py`): headers are read once per
scan, and a new scan reads them again, so an edited header is never answered from an
earlier scan."""

from __future__ import annotations

import hashlib
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from portlint.core.files import MAX_BYTES, read_limited
from portlint.core.jsonfile import read_json
from portlint.discovery.roots import inside, project_root
from portlint.frontends.cuda.preprocessor import Directive, directives, include_target

MAX_HEADERS = 400  # a walk stops here (complete=False)
# nor does a walk look at more #include lines than this (complete=False): its cost is bounded
# by it, not by the bytes of up to MAX_HEADERS headers (round seven's B)
MAX_INCLUDE_LINES = 20_000
_FLAGS_WITH_PATH = ("-I", "-isystem", "-iquote", "-include")
_KEPT_FLAGS = ("-I", "-isystem", "-iquote", "-D", "-U", "-include")


@dataclass
class Header:
    path: str  # real path
    data: bytes
    digest: bytes  # sha256 of the bytes
    _text: str | None = None
    _directives: tuple[Directive, ...] | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.data.decode("utf-8", errors="replace")
        return self._text

    @property
    def directives(self) -> tuple[Directive, ...]:
        if self._directives is None:
            self._directives = directives(self.text)
        return self._directives

    @property
    def includes(self) -> tuple[tuple[str, str], ...]:
        return tuple(t for d in self.directives if d.kind == "include" for t in [include_target(d)] if t)


@dataclass(frozen=True)
class Reach:
    """What one file reaches through #include."""

    root: str  # the scanned file's real path
    dirs: tuple[str, ...]  # its search folders
    headers: tuple[str, ...]  # real paths, sorted
    # the headers found through system folders (`-isystem`, a CUDA toolkit's include folder):
    # part of the cache key and the libclang pass's stubs, but not the project's own — their
    # macros and names (CUDART_VERSION, inline __shfl_xor_sync) are not what an AMD build sees
    system: frozenset[str]
    missing: tuple[str, ...]  # include names no folder provides, sorted
    complete: bool  # False when the walk stopped at MAX_HEADERS
    # real path of an including file (the scanned one under its own path) -> the real paths
    # its includes resolved to, in directive order
    edges: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # include roots: the scanned file's ancestor folders, where `<cute/arch/config.hpp>` of a
    # bundled library is found when no search folder names the library's include folder
    roots: tuple[str, ...] = ()
    # the folders every header read lies in (the project root first, then the folders the
    # user named), and the include names that would have left them, sorted
    bound: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


def compile_flags(directory: str, args: list[str]) -> list[str]:
    """What changes preprocessing in a compile command: -I, -isystem, -iquote, -D, -U,
    -include (paths made absolute). A CUDA build's own vendor switches are dropped: they
    would contradict the AMD build portlint models."""
    keep: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        for flag in _KEPT_FLAGS:
            if a == flag and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            elif a.startswith(flag) and len(a) > len(flag) and not (flag == "-I" and a.startswith(("-isystem", "-iquote", "-include"))):
                value = a[len(flag):]
            else:
                continue
            if flag in _FLAGS_WITH_PATH and not os.path.isabs(value):
                value = os.path.normpath(os.path.join(directory, value))
            if flag == "-D" and value.split("=")[0] in ("__CUDA_ARCH__", "__CUDACC__", "__NVCC__"):
                break
            keep.extend([flag, value])
            break
        i += 1
    return keep


def _read_compile_database(path: Path) -> dict[str, list[str]]:
    """file (real path) -> its preprocessing flags, from a compile_commands.json."""
    try:
        entries = read_json(path, ValueError, "compile commands")
    except ValueError:
        return {}
    out: dict[str, list[str]] = {}
    for e in entries if isinstance(entries, list) else []:
        try:
            directory = str(e.get("directory", "."))
            args = e.get("arguments") or shlex.split(e.get("command", ""))
            file = os.path.realpath(os.path.join(directory, e["file"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        out[file] = compile_flags(directory, [str(a) for a in args])
    return out


class IncludeGraph:
    """Headers and include resolution for one scan (one per ScanSession)."""

    def __init__(self, settings):
        self.settings = settings
        self._headers: dict[str, Header | None] = {}
        self._is_file: dict[str, str | None] = {}
        self._reach: dict[tuple, Reach] = {}
        self._database: dict[str, list[str]] | None = None
        # facts derived from headers (the macros a header leaves defined for a build, the
        # names it defines), keyed by what they depend on; filled by their modules
        self.derived: dict = {}
        # include-dirs are relative to the configuration file's folder (the settings root a
        # library caller built its Settings with when it names none), never the working folder
        cfg = getattr(settings, "config_file", None)
        base = os.path.dirname(os.path.abspath(cfg)) if cfg else getattr(settings, "root", None)
        dirs = getattr(settings, "include_dirs", ()) or ()
        self.config_dirs = tuple(os.path.normpath(os.path.join(str(base), d)) for d in dirs if base is not None or os.path.isabs(d))
        self._real: dict[str, str] = {}
        # (includer, name, bound) -> the header a quoted include found beside its includer:
        # the first place looked, so the answer holds for every scanned file with that bound
        # whatever its own search folders (one search per header line per scan, not per file)
        self._beside: dict[tuple, str] = {}
        # every search's answer (and whether a folder was turned away for leaving the bound),
        # by all it depends on: the guard map asks again what the walk asked
        self._resolved: dict[tuple, tuple[str | None, bool]] = {}

    # ---- compile commands -------------------------------------------------------------------
    def flags_for(self, path: Path | str) -> list[str]:
        """The file's preprocessing flags from --compile-commands ([] without one)."""
        cc = getattr(self.settings, "compile_commands", None)
        if not cc:
            return []
        if self._database is None:
            self._database = _read_compile_database(Path(cc))
        return self._database.get(os.path.realpath(str(path)), [])

    def search_dirs(self, path: Path | str) -> tuple[str, ...]:
        """The folders `<...>` (and, after the includer's folder, `"..."`) are looked for in."""
        flags = self.flags_for(path)
        from_flags = [flags[i + 1] for i in range(0, len(flags) - 1, 2) if flags[i] in ("-I", "-isystem", "-iquote")]
        here = os.path.dirname(os.path.realpath(str(path)))
        out: list[str] = []
        for d in (here, *self.config_dirs, *from_flags):
            if d not in out:
                out.append(d)
        return tuple(out)

    def system_dirs(self, path: Path | str) -> tuple[str, ...]:
        """Folders whose headers are the system's, not the project's: `-isystem` folders and
        any search folder that holds a CUDA toolkit's `cuda_runtime_api.h`."""
        flags = self.flags_for(path)
        out = [os.path.realpath(flags[i + 1]) for i in range(0, len(flags) - 1, 2) if flags[i] == "-isystem"]
        for d in self.search_dirs(path):
            if self._file(d, "cuda_runtime_api.h") is not None and os.path.realpath(d) not in out:
                out.append(os.path.realpath(d))
        return tuple(out)

    def is_system(self, header: str, path: str) -> bool:
        key = ("system-dirs", path)
        dirs = self.derived.get(key)
        if dirs is None:
            dirs = self.derived[key] = self.system_dirs(path)
        return any(header.startswith(d.rstrip(os.sep) + os.sep) for d in dirs)

    def project_headers(self, reach: "Reach") -> tuple[str, ...]:
        return tuple(h for h in reach.headers if h not in reach.system)

    def names_in_headers(self, reach: "Reach", kind: str, names_of) -> set[str]:
        """The union over the project headers `reach` holds of `names_of(header)` (a
        `Header`, or None when it cannot be read), each header's answer computed once per
        scan and kind (`derived[(kind, path)]`)."""
        out: set[str] = set()
        for path in self.project_headers(reach):
            key = (kind, path)
            got = self.derived.get(key)
            if got is None:
                got = self.derived[key] = names_of(self.header(path))
            out |= got
        return out

    # ---- files --------------------------------------------------------------------------------
    def header(self, path: str) -> Header | None:
        """One header's bytes, read once per scan (None when it cannot be read)."""
        if path not in self._headers:
            try:
                self.read(path)
            except OSError:  # missing, not a regular file or over max-file-size
                self._headers[path] = None
        return self._headers[path]

    def read(self, path: str, keep: bool = True) -> bytes:
        """The bytes of the C/C++/CUDA file at real path `path`, read once per scan by the
        scan of the file and the walks that reach it as a header, whichever asks first
        (`core.files.read_limited`; its OSError when the file cannot be read, tried again
        when asked again, so each asker can say why). `keep=False`: a reader that takes
        what was read already but keeps nothing of its own (the build scope's include
        sweep reads every C/C++/CUDA file of a project in every worker that builds it;
        kept, each worker would hold the whole tree)."""
        h = self._headers.get(path)
        if h is not None:
            return h.data
        data = read_limited(path, getattr(self.settings, "max_file_size", MAX_BYTES))
        if keep:
            self._headers[path] = Header(path, data, hashlib.sha256(data).digest())
        return data

    def _file(self, folder: str, name: str) -> str | None:
        candidate = os.path.join(folder, name)
        if candidate not in self._is_file:
            try:
                self._is_file[candidate] = os.path.realpath(candidate) if os.path.isfile(candidate) else None
            except (OSError, ValueError):
                self._is_file[candidate] = None
        return self._is_file[candidate]

    def _realdir(self, folder: str) -> str:
        real = self._real.get(folder)
        if real is None:
            real = self._real[folder] = os.path.realpath(folder)
        return real

    def bound(self, real: str, tree: str | None) -> tuple[str, ...]:
        """The folders the headers of the scanned file `real` may lie in: its project root
        (from its tree, `discovery.roots`), then the folders the user named for it (its
        compile command's -I/-isystem/-iquote, the config's include-dirs), resolved."""
        out = [os.path.realpath(project_root(self.settings, real, tree))]
        flags = self.flags_for(real)
        named = [flags[i + 1] for i in range(0, len(flags) - 1, 2) if flags[i] in ("-I", "-isystem", "-iquote")]
        for d in (*self.config_dirs, *named):
            r = self._realdir(d)
            if r not in out:
                out.append(r)
        return tuple(out)

    def resolve(self, includer: str, quote: str, name: str, dirs: tuple[str, ...], ancestors: tuple[str, ...] = (),
                roots: tuple[str, ...] = (), bound: tuple[str, ...] | None = None, refused: set[str] | None = None,
                search: bool = True) -> str | None:
        """The real path an #include of `name` from `includer` reads, or None. A name with a
        folder in it (`cute/arch/config.hpp`) not found otherwise is looked for in `roots`.
        With a `bound`, a candidate outside it (by its spelling or, a symlink, its real
        path) is passed over unlooked-at and its name added to `refused`. `search=False`: only
        what was searched already is answered (None for the rest)."""
        if quote == '"' and bound is not None:
            hit = self._beside.get((includer, name, bound))
            if hit is not None:
                return hit
        key = (includer, quote, name, dirs, ancestors, roots, bound)
        known = self._resolved.get(key)
        if known is None and not search:
            return None
        if known is None:
            turned_away: set[str] = set()
            found = self._search(includer, quote, name, dirs, ancestors, roots, bound, turned_away)
            known = self._resolved[key] = (found, bool(turned_away))
            here = os.path.dirname(includer)
            if quote == '"' and bound is not None and found is not None and not turned_away and \
                    self._file(here, name) == found:
                self._beside[(includer, name, bound)] = found
        if known[1] and refused is not None:
            refused.add(name)
        return known[0]

    def _search(self, includer: str, quote: str, name: str, dirs: tuple[str, ...], ancestors: tuple[str, ...],
                roots: tuple[str, ...], bound: tuple[str, ...] | None, refused: set[str] | None) -> str | None:
        """`resolve`'s search, folder by folder."""
        bases = (os.path.dirname(includer), *dirs, *ancestors) if quote == '"' else dirs
        if "/" in name and not name.startswith(("/", "../", "./")):
            bases = (*bases, *roots)
        for base in bases:
            if bound is not None:
                spelled = os.path.normpath(os.path.join(self._realdir(base), name))
                if not any(inside(spelled, b) for b in bound):
                    if refused is not None:
                        refused.add(name)
                    continue
            found = self._file(base, name)
            if found is not None and bound is not None and not any(inside(found, b) for b in bound):
                if refused is not None:
                    refused.add(name)
                continue
            if found is not None:
                return found
        return None

    def include_roots(self, real: str, project: str) -> tuple[str, ...]:
        """The ancestor folders of a scanned file, nearest first, up to its project root
        `project` (which holds it, `discovery.roots.project_root`)."""
        out: list[str] = []
        here = os.path.dirname(real)
        while True:
            parent = os.path.dirname(here)
            if parent == here or not inside(parent, project):
                break
            out.append(parent)
            here = parent
        return tuple(out)

    def resolve_include(self, reach: "Reach", includer: str, directive: Directive, walked: bool = False) -> str | None:
        """The real path one #include directive of `includer` (a file of `reach`) reads, by
        the same rule as the walk that found `reach`; None when missing or computed.
        `walked`: only an answer the walk found (no search for a line past its bound)."""
        target = include_target(directive)
        if target is None:
            return None
        ancestors: tuple[str, ...] = ()
        if includer == reach.root:
            ancestors = _ancestors(includer, reach.bound[0] if reach.bound else None)
        return self.resolve(includer, target[0], target[1], reach.dirs, ancestors, reach.roots, reach.bound or None,
                            search=not walked)

    # ---- the graph of one file ---------------------------------------------------------------
    def reach(self, path: Path | str, text: str | None = None, file_includes=None, tree: str | None = None) -> Reach:
        """The headers `path` reaches (its own includes from `text` or `file_includes`, as
        the scan read it; the headers' from disk), within its bound (`bound`; `tree`: the
        file's scan root, `SourceFile.root`)."""
        real = os.path.realpath(str(path))
        if file_includes is None:
            file_includes = tuple(t for d in directives(text or "") if d.kind == "include" for t in [include_target(d)] if t)
        dirs = self.search_dirs(real)
        bound = self.bound(real, tree)
        key = (os.path.dirname(real), dirs, tuple(file_includes), bound)
        if key in self._reach:
            return self._reach[key]
        ancestors = _ancestors(real, bound[0])
        roots = self.include_roots(real, bound[0])
        seen: set[str] = {real}
        missing: set[str] = set()
        refused: set[str] = set()
        edges: dict[str, tuple[str, ...]] = {}
        complete = True
        lines = 0
        todo: list[tuple[str, tuple[tuple[str, str], ...]]] = [(real, tuple(file_includes))]
        while todo:
            cur, incs = todo.pop()
            targets = []
            lines += len(incs)
            if lines > MAX_INCLUDE_LINES:
                complete = False
                incs = incs[:max(0, len(incs) - (lines - MAX_INCLUDE_LINES))]
                todo.clear()
            for quote, name in incs:
                target = self.resolve(cur, quote, name, dirs, ancestors if cur == real else (), roots, bound, refused)
                if target is None:
                    missing.add(name)
                    continue
                targets.append(target)
                if target in seen:
                    continue
                if len(seen) > MAX_HEADERS:
                    complete = False
                    continue
                seen.add(target)
                h = self.header(target)
                if h is not None:
                    todo.append((target, h.includes))
            edges[cur] = tuple(targets)
        seen.discard(real)
        result = Reach(real, dirs, tuple(sorted(seen)), frozenset(h for h in seen if self.is_system(h, real)), tuple(sorted(missing)), complete,
                       edges, roots, bound, tuple(sorted(refused)))
        self._reach[key] = result
        return result


def _ancestors(real: str, project: str | None) -> tuple[str, ...]:
    """The two nearest ancestor folders of the scanned file `real` that lie inside its
    project root `project` (quoted includes written relative to a source root)."""
    here = os.path.dirname(real)
    parent = os.path.dirname(here)
    return tuple(a for a in (parent, os.path.dirname(parent))
                 if a and a != here and (project is None or inside(a, project)))


def include_graph(settings) -> IncludeGraph:
    """The running scan's include graph."""
    from portlint.core import session

    return session.current(settings).fact(IncludeGraph, lambda: IncludeGraph(settings))


def read_once(settings, path: Path | str, keep: bool = True) -> bytes:
    """The running scan's one read of the C/C++/CUDA file `path` (`IncludeGraph.read`)."""
    return include_graph(settings).read(os.path.realpath(path), keep)


def file_session(ctx):
    """The session of the scan `ctx` belongs to."""
    from portlint.core import session

    return getattr(ctx, "session", None) or session.current(ctx.settings)


def graph_of(ctx) -> IncludeGraph:
    return file_session(ctx).fact(IncludeGraph, lambda: IncludeGraph(ctx.settings))


def file_reach(ctx) -> Reach | None:
    """ctx.fact(file_reach): what the scanned file reaches (None for an in-memory text)."""
    real = getattr(ctx, "real_path", None)
    if real is None:
        return None
    from portlint.frontends.cuda.preprocessor import include_target as target

    incs = tuple(t for d in ctx.fact(file_directives) if d.kind == "include" for t in [target(d)] if t)
    reach = graph_of(ctx).reach(real, file_includes=incs, tree=getattr(ctx, "scan_root", None))
    if reach.refused and hasattr(ctx, "notice"):
        names = ", ".join(repr(n) for n in reach.refused[:3]) + (f" and {len(reach.refused) - 3} more" if len(reach.refused) > 3 else "")
        ctx.notice(f"#include {names} leads outside the project root: not read", "warning")
    if not reach.complete and hasattr(ctx, "notice"):
        ctx.notice(f"the file reaches more than {MAX_HEADERS} headers or {MAX_INCLUDE_LINES} #include lines: "
                   "the include walk stopped there and what lies past it is not taken into account", "warning")
    return reach


def file_directives(ctx) -> tuple[Directive, ...]:
    """ctx.fact(file_directives): the scanned file's directives."""
    return directives(ctx.text)
