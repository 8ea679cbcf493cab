"""Content-hash result cache (`.portlint_cache/` by default).

An entry's key is a hash of: the file's bytes and display path, the bytes of the headers
it can include (C/C++/CUDA: guards and the libclang pass read them), and a salt made of the
cache format, the tool version, portlint's own code, the rule files and the settings that
change findings. So editing a file, a header it includes, a rule, a detector or the config
gives a different key; stale entries are simply never looked up again.

An entry is one file `<key[:2]>/<key[2:]>.json`: a first line with HMAC-SHA256(secret,
key + body), then the JSON body. A truncated, corrupt, misplaced or forged entry fails that
check, is ignored, and is rewritten after the file is scanned again. Entries are written to
a temporary file and renamed into place, so worker processes writing at the same time never
expose half an entry. A cache directory that cannot be written (read-only checkout) only
turns writing off.

Trust (docs/threat-model.md): the cache directory usually lies inside the scanned tree, so
its contents are attacker-controlled; every input of the key is public, so only the secret
makes an entry unforgeable. The secret is a per-user random key kept outside the tree
(`$XDG_CACHE_HOME/portlint/core/cache-key`, else `~/.cache/portlint/core/cache-key`), created 0600 and
refused unless it is a regular file of this user that nobody else can read or write. Without
a usable key the cache is off. Even an entry that checks out is not believed about where it
applies: its findings and notices are re-bound to the file being looked up, and the fix
engine validates every edit against the file's current bytes."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from functools import lru_cache
from pathlib import Path

from portlint import __version__
from portlint.core.files import read_limited, write_file
from portlint.core.suffixes import C_FAMILY

_FORMAT = 3


def fingerprinted_files() -> list[Path]:
    """What code_fingerprint hashes: the modules of every stage and the bundled headers,
    everything under the portlint package (the rule files and vocabulary have their own
    hash, catalog.rules_fingerprint)."""
    package = Path(__file__).resolve().parent.parent
    return [path for path in sorted(package.rglob("*"))
            if path.suffix in (".py", ".h", ".json", ".csv", ".toml") and path.is_file() and "__pycache__" not in path.parts]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of portlint's own source (fingerprinted_files): a changed detector must not be
    answered from a cache its old code filled."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in fingerprinted_files():
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def settings_fingerprint(settings) -> str:
    parts = [settings.key()]
    cc = getattr(settings, "compile_commands", None)
    if cc:  # its flags (-I, -D) change what the libclang pass sees
        try:
            parts.append(hashlib.sha256(read_limited(cc)).hexdigest())
        except OSError:
            parts.append("unreadable")
    return "\0".join(parts)


class Cache:
    def __init__(self, directory: Path, settings):
        from portlint.core.catalog import rules_fingerprint

        self.dir = Path(directory)
        salt = "\0".join((str(_FORMAT), __version__, code_fingerprint(), rules_fingerprint(), settings_fingerprint(settings)))
        self.salt = hashlib.sha256(salt.encode()).hexdigest()
        self.settings = settings
        self.writable = True

    # ---- keys ---------------------------------------------------------------------------------
    def key(self, display_path: str, data: bytes, real_path: Path | None = None, cross_file: bytes = b"",
            tree: Path | str | None = None) -> str:
        """`cross_file`: a digest of the facts from other files the result depends on (the
        Python project model's scope and reachability for this file). `tree`: the file's scan
        root (`SourceFile.root`), which bounds the headers it reaches."""
        h = hashlib.sha256()
        h.update(self.salt.encode())
        h.update(display_path.encode("utf-8", "surrogatepass") + b"\0")  # a name need not be UTF-8
        h.update(data)
        if cross_file:
            h.update(b"\0cross-file\0" + cross_file)
        if real_path is not None and Path(real_path).suffix.lower() in C_FAMILY:
            h.update(b"\0headers\0")
            h.update(self._header_digest(Path(real_path), data, tree))
        return h.hexdigest()

    def _header_digest(self, path: Path, data: bytes, tree: Path | str | None = None) -> bytes:
        """Hash of every header the file reaches in the scan's include graph (the one the
        analysis reads: -I folders of --compile-commands and include-dirs included, within
        the same bound) and of the names refused for leaving that bound."""
        from portlint.frontends.cuda.includes import include_graph

        graph = include_graph(self.settings)
        reach = graph.reach(path, data.decode("utf-8", errors="replace"), tree=None if tree is None else str(tree))
        digest = hashlib.sha256()
        for header in reach.headers:
            h = graph.header(header)
            digest.update(header.encode("utf-8", "surrogatepass") + b"\0" + (h.digest if h is not None else b"unreadable"))
        for name in reach.refused:
            digest.update(b"\0refused\0" + name.encode("utf-8", "surrogatepass"))
        if not reach.complete:
            digest.update(b"\0incomplete")
        return digest.digest()

    # ---- entries ------------------------------------------------------------------------------
    def holds_no_results(self) -> bool:
        """True when no entry can be found here (the directory is missing or holds no entry
        folder): every lookup would miss, so a scan need not look files up before analysing
        them. False when the directory cannot be listed (the lookups then say)."""
        try:
            with os.scandir(self.dir) as entries:
                return not any(len(e.name) == 2 and all(c in "0123456789abcdef" for c in e.name) for e in entries)
        except FileNotFoundError:
            return True
        except OSError:
            return False

    def _path(self, key: str) -> Path:
        return _entry_path(self.dir, key)

    def get(self, key: str, display_path: str):
        """The cached FileResult for `key`, its findings and notices re-bound to
        `display_path` (the file being scanned), or None (missing, corrupt, forged)."""
        from portlint.core.model import FileResult

        body = read_entry(self.dir, key)
        if body is None:
            return None
        try:
            data = json.loads(body)
            if not _well_formed(data):
                return None
            result = FileResult.from_dict(data)
        except Exception:  # anything wrong with an entry means: not cached
            return None
        for f in result.findings:
            f.path = display_path
        for n in result.notices:
            n.path = display_path
        return result

    def put(self, key: str, result) -> None:
        if not self.writable:
            return
        body = json.dumps(result.to_dict(), separators=(",", ":")).encode()  # key order is data (targets)
        try:
            write_entry(self.dir, key, body)
        except OSError:
            self.writable = False  # read-only checkout, full disk: run without writing


# One entry format for every cache under the cache directory (results here, libclang values
# in libclang_pass): `<dir>/<key[:2]>/<key[2:]>.json` holding HMAC-SHA256(secret, key + body),
# a newline, then the body. The check binds the body to its key and to this user's secret,
# so a truncated, corrupt, misplaced or forged entry reads as missing.

_KEY_BYTES = 32


def key_path() -> Path:
    """Where the per-user cache secret lives: the user cache directory, never the tree."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "portlint" / "cache-key"


_SECRETS: dict[str, bytes | None] = {}


def entry_secret() -> bytes | None:
    """This user's cache secret (created on first use), or None when there is no usable one."""
    try:
        path = key_path()
    except (RuntimeError, KeyError):  # no home directory to keep a key in
        return None
    if str(path) not in _SECRETS:
        _SECRETS[str(path)] = _load_or_create_secret(path)
    return _SECRETS[str(path)]


def _read_secret(path: Path) -> bytes | None:
    """The key at `path` if it can be trusted: a regular file (not a symlink) of this user,
    with no permission bits for group or others (a file git checks out is 0644, so a key
    committed to a scanned tree never passes), holding exactly the key's bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            return None
        data = os.read(fd, _KEY_BYTES + 1)
    finally:
        os.close(fd)
    return data if len(data) == _KEY_BYTES else None


def _load_or_create_secret(path: Path) -> bytes | None:
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".cache-key.", dir=path.parent)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(_KEY_BYTES))
            try:
                os.link(tmp, path)  # atomic create-if-absent: a concurrent first run wins once
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
        return _read_secret(path)
    except OSError:
        return None


def _entry_path(directory: Path, key: str) -> Path:
    return directory / key[:2] / f"{key[2:]}.json"


def _entry_check(secret: bytes, key: str, body: bytes) -> bytes:
    return hmac.new(secret, key.encode() + b"\0" + body, hashlib.sha256).hexdigest().encode()


def _well_formed(data) -> bool:
    """The shape of a result entry, checked before any of it is turned into findings."""
    def ints(values, n):
        return isinstance(values, list) and len(values) == n and all(type(v) is int and v > 0 for v in values)

    if not isinstance(data, dict) or not isinstance(data.get("findings"), list) or not isinstance(data.get("notices"), list):
        return False
    for f in data["findings"]:
        if not isinstance(f, dict) or not isinstance(f.get("rule_id"), str) or not ints(f.get("span"), 4):
            return False
        fix = f.get("fix")
        if fix is not None:
            edits = fix.get("edits") if isinstance(fix, dict) else None
            if not isinstance(edits, list) or not edits:
                return False
            for e in edits:  # four positions, the new text, the text it replaces
                if not (isinstance(e, list) and len(e) == 6 and ints(e[:4], 4) and isinstance(e[4], str) and isinstance(e[5], str)):
                    return False
    return all(isinstance(n, list) and len(n) == 3 and all(isinstance(x, str) for x in n) for n in data["notices"])


_MAX_ENTRY = 64 * 1024 * 1024


def read_entry(directory: Path, key: str) -> bytes | None:
    """The body stored under `key`, or None when it is missing or does not check out. The
    entry must be a regular file, not a symlink, and is read up to a bound."""
    secret = entry_secret()
    if secret is None:
        return None
    try:
        fd = os.open(_entry_path(directory, key), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            raw = fh.read(_MAX_ENTRY + 1)
    except OSError:
        return None
    check, sep, body = raw.partition(b"\n")
    if not sep or len(raw) > _MAX_ENTRY:
        return None
    return body if hmac.compare_digest(check, _entry_check(secret, key, body)) else None


def write_entry(directory: Path, key: str, body: bytes, root: Path | None = None) -> None:
    """Store `body` under `key` atomically; `root` (default: `directory`) is the cache
    directory that gets the `.gitignore` keeping it out of version control. Raises OSError,
    also when there is no usable secret (nothing could read the entry back) and when a
    folder inside the cache directory is a symlink leading out of it."""
    secret = entry_secret()
    if secret is None:
        raise PermissionError(f"no usable cache key at {key_path()}")
    top = root or directory
    path = _entry_path(directory, key)
    _make_folders(Path(top), path.parent)
    gitignore = top / ".gitignore"
    if not os.path.lexists(gitignore):
        _atomic_write(gitignore, b"# created by portlint\n*\n", top=Path(top))
    _atomic_write(path, _entry_check(secret, key, body) + b"\n" + body, top=Path(top))


def _make_folders(top: Path, folder: Path) -> None:
    """Create `folder` below `top` one level at a time, refusing any level that is a
    symlink, so nothing is created or written outside the cache directory."""
    top.mkdir(parents=True, exist_ok=True)
    current = top
    for part in folder.relative_to(top).parts:
        current = current / part
        if current.is_symlink():
            raise PermissionError(f"{current} is a symlink inside the cache directory")
        current.mkdir(exist_ok=True)


def default_cache_dir(root: Path) -> Path | None:
    """`.portlint_cache` in the project root, unless it is a symlink (a tree can hold one
    pointing anywhere; the cache is then off rather than written outside the tree)."""
    path = Path(root) / ".portlint_cache"
    return None if path.is_symlink() else path.resolve()


def _atomic_write(path: Path, data: bytes, top: Path | None = None) -> None:
    """The one writer (portlint.core.files): a new temporary file next to `path`, created
    exclusively, renamed over it (never through a symlink), inside the cache directory."""
    write_file(path, data, root=top if top is not None else path.parent, new_mode=0o600)
