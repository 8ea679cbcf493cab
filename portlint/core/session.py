"""ScanSession: the state that lives for exactly one scan.

Facts that several files share — the include graph and header reads for CUDA, the project
model of a Python tree — are built once per scan, on first use, and kept here; nothing of
the kind lives in module-level memos. A new scan (a long-lived editor or test process
scanning again after an edit) gets a new session, so nothing read by an earlier scan can
leak into a later one.

Workers forked for a parallel scan inherit the parent's session with whatever it had built
before the fork; a worker started fresh (forkserver, spawn) builds its own lazily. A fact
must therefore be a pure function of the scanned tree and the settings.

What outlives a session is kept by content only: the Python project model and its per-file
summaries (`python/project.py`) are keyed by the sha256 of every file and the settings that
shape them, so a later session finds them only for the very same bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Hashable

if TYPE_CHECKING:
    from portlint.core.config import Settings


class ScanSession:
    def __init__(self, settings: "Settings"):
        self.settings = settings
        self._facts: dict[Hashable, Any] = {}

    def fact(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The value kept under `key`, built by `build()` the first time it is asked for."""
        try:
            return self._facts[key]
        except KeyError:
            value = self._facts[key] = build()
            return value


_CURRENT: ScanSession | None = None


def begin(settings: "Settings") -> ScanSession:
    """Start a new scan's session (the engine calls this once per scan)."""
    global _CURRENT
    _CURRENT = ScanSession(settings)
    return _CURRENT


def current(settings: "Settings") -> ScanSession:
    """The running scan's session; a caller that scans one file outside `scan_files` (a
    test, a library user) gets a session of its own for those settings."""
    global _CURRENT
    if _CURRENT is None or _CURRENT.settings is not settings:
        _CURRENT = ScanSession(settings)
    return _CURRENT
