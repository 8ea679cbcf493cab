"""Content-hash result cache (`.portlint_cache/` by default).

An entry is keyed by the file's bytes and display path, the tool version, the rule files'
hash and the settings that change findings, so editing a rule or the config invalidates it.
Entries are JSON with a checksum; a corrupt or unreadable one is ignored and rewritten."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from portlint import __version__

_FORMAT = 1


class Cache:
    def __init__(self, directory: Path, settings):
        from portlint.rules import rules_fingerprint

        self.dir = directory
        salt = f"{_FORMAT}\0{__version__}\0{rules_fingerprint()}\0{settings.key()}"
        self.salt = hashlib.sha256(salt.encode()).hexdigest()
        self._ok = True

    def key(self, display_path: str, data: bytes) -> str:
        h = hashlib.sha256()
        h.update(self.salt.encode())
        h.update(display_path.encode())
        h.update(b"\0")
        h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key[2:]}.json"

    def get(self, key: str):
        from portlint.engine import FileResult

        try:
            raw = self._path(key).read_bytes()
            digest, _, body = raw.partition(b"\n")
            if hashlib.sha256(body).hexdigest().encode() != digest:
                return None
            return FileResult.from_dict(json.loads(body))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result) -> None:
        if not self._ok:
            return
        body = json.dumps(result.to_dict(), separators=(",", ":"), sort_keys=True).encode()
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            gitignore = self.dir / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# created by portlint\n*\n")
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
            os.replace(tmp, path)
        except OSError:
            self._ok = False  # read-only checkout and the like: run without a cache
