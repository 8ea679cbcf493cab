"""Content-hash result cache (`.portlint_cache/` by default).

An entry's key is a hash of: the file's bytes and display path, the bytes of the headers
it can include (C/C++/CUDA: guards and the libclang pass read them), and a salt made of the
cache format, the tool version, portlint's own code, the rule files and the settings that
change findings. So editing a file, a header it includes, a rule, a detector or the config
gives a different key; stale entries are simply never looked up again.

An entry is one file `<key[:2]>/<key[2:]>.json`: a first line with sha256(key + body), then
the JSON body. A truncated, corrupt or misplaced entry fails that check, is ignored, and is
rewritten after the file is scanned again. Entries are written to a temporary file and
renamed into place, so worker processes writing at the same time never expose half an
entry. A cache directory that cannot be written (read-only checkout) only turns writing off."""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path

from portlint import __version__

_FORMAT = 2
_C_FAMILY = {".cu", ".cuh", ".hip", ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp"}
# Any #include, quoted or angled: resolved like the preprocessor would (includer's folder for
# quotes, then the scanned file's folder, which the libclang pass puts on -I). Conditional
# includes are all followed, so the set is a superset of what a build reads.
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
_MAX_HEADERS = 256


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of portlint's own source (detectors, engine, helpers, bundled headers): a
    changed detector must not be answered from a cache its old code filled."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".h", ".json", ".csv", ".toml") and path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def settings_fingerprint(settings) -> str:
    parts = [settings.key()]
    cc = getattr(settings, "compile_commands", None)
    if cc:  # its flags (-I, -D) change what the libclang pass sees
        try:
            parts.append(hashlib.sha256(Path(cc).read_bytes()).hexdigest())
        except OSError:
            parts.append("unreadable")
    return "\0".join(parts)


class Cache:
    def __init__(self, directory: Path, settings):
        from portlint.rules import rules_fingerprint

        self.dir = Path(directory)
        salt = "\0".join((str(_FORMAT), __version__, code_fingerprint(), rules_fingerprint(), settings_fingerprint(settings)))
        self.salt = hashlib.sha256(salt.encode()).hexdigest()
        self.writable = True
        self._headers: dict[str, tuple[bytes, list[bytes]] | None] = {}
        self._found: dict[tuple[str, str], str | None] = {}

    # ---- keys ---------------------------------------------------------------------------------
    def key(self, display_path: str, data: bytes, real_path: Path | None = None, cross_file: bytes = b"") -> str:
        """`cross_file`: a digest of the facts from other files the result depends on (the
        Python project model's scope and reachability for this file)."""
        h = hashlib.sha256()
        h.update(self.salt.encode())
        h.update(display_path.encode() + b"\0")
        h.update(data)
        if cross_file:
            h.update(b"\0cross-file\0" + cross_file)
        if real_path is not None and Path(real_path).suffix.lower() in _C_FAMILY:
            h.update(b"\0headers\0")
            h.update(self._header_digest(Path(real_path), data))
        return h.hexdigest()

    def _header(self, path: str) -> tuple[bytes, list[bytes]] | None:
        """(sha256, includes) of one header, read once per cache object (= per scan)."""
        if path not in self._headers:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                self._headers[path] = None
            else:
                self._headers[path] = (hashlib.sha256(data).digest(), _INCLUDE.findall(data))
        return self._headers[path]

    def _find(self, folder: str, name: str) -> str | None:
        """The real path of `folder/name` when it is a file; memoised per scan."""
        key = (folder, name)
        if key not in self._found:
            candidate = os.path.join(folder, name)
            try:
                self._found[key] = os.path.realpath(candidate) if os.path.isfile(candidate) else None
            except (OSError, ValueError):
                self._found[key] = None
        return self._found[key]

    def _header_digest(self, path: Path, data: bytes) -> bytes:
        """Hash of every header reachable from `data` through #include, as found on disk."""
        base = os.path.dirname(os.path.abspath(path))
        digest = hashlib.sha256()
        seen: set[str] = set()
        todo = [(base, inc) for inc in _INCLUDE.findall(data)]
        while todo and len(seen) < _MAX_HEADERS:
            folder, inc = todo.pop()
            name = inc.decode("utf-8", "replace")
            found = self._find(folder, name) or self._find(base, name)
            if found is not None and found not in seen:
                seen.add(found)
                info = self._header(found)
                if info is not None:
                    todo.extend((os.path.dirname(found), nested) for nested in info[1])
        for header in sorted(seen):
            info = self._header(header)
            digest.update(header.encode() + b"\0" + (info[0] if info else b"unreadable"))
        return digest.digest()

    # ---- entries ------------------------------------------------------------------------------
    def _path(self, key: str) -> Path:
        return _entry_path(self.dir, key)

    def get(self, key: str):
        """The cached FileResult for `key`, or None (missing, corrupt, unreadable)."""
        from portlint.engine import FileResult

        body = read_entry(self.dir, key)
        if body is None:
            return None
        try:
            return FileResult.from_dict(json.loads(body))
        except Exception:  # anything wrong with an entry means: not cached
            return None

    def put(self, key: str, result) -> None:
        if not self.writable:
            return
        body = json.dumps(result.to_dict(), separators=(",", ":")).encode()  # key order is data (targets)
        try:
            write_entry(self.dir, key, body)
        except OSError:
            self.writable = False  # read-only checkout, full disk: run without writing


# One entry format for every cache under the cache directory (results here, libclang values
# in libclang_pass): `<dir>/<key[:2]>/<key[2:]>.json` holding sha256(key + body), a newline,
# then the body. The check binds the body to its key, so a truncated, corrupt or misplaced
# entry reads as missing.

def _entry_path(directory: Path, key: str) -> Path:
    return directory / key[:2] / f"{key[2:]}.json"


def _entry_check(key: str, body: bytes) -> bytes:
    return hashlib.sha256(key.encode() + b"\0" + body).hexdigest().encode()


def read_entry(directory: Path, key: str) -> bytes | None:
    """The body stored under `key`, or None when it is missing or does not check out."""
    try:
        check, sep, body = _entry_path(directory, key).read_bytes().partition(b"\n")
    except OSError:
        return None
    return body if sep and check == _entry_check(key, body) else None


def write_entry(directory: Path, key: str, body: bytes, root: Path | None = None) -> None:
    """Store `body` under `key` atomically; `root` (default: `directory`) is the cache
    directory that gets the `.gitignore` keeping it out of version control. Raises OSError."""
    path = _entry_path(directory, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    gitignore = (root or directory) / ".gitignore"
    if not gitignore.exists():
        _atomic_write(gitignore, b"# created by portlint\n*\n")
    _atomic_write(path, _entry_check(key, body) + b"\n" + body)


def _atomic_write(path: Path, data: bytes) -> None:
    """Write a temporary file next to `path` and rename it over `path`. The temporary name
    carries the process id, so parallel workers never share one (and a leftover of a killed
    process is simply overwritten by the next process with that id)."""
    tmp = path.parent / f".tmp.{path.name}.{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
