"""Scanning an editor buffer: the text the client sent, never the file on disk.

The settings come from the configuration file nearest to the document (pyproject.toml with
[tool.portlint], or portlint.toml), as `portlint scan` finds it, and are read again when
that file changes. The buffer is untrusted input like any scanned file: it is only parsed,
headers next to it are read as the CLI reads them, nothing is executed or written (no
result cache either: the server writes no file)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from portlint.core.config import ConfigError, Settings, find_config, git_root, load_config
from portlint.core.model import Finding, Notice
from portlint.discovery.roots import named_root

# languageId -> a file name suffix, for buffers that have no file name yet (untitled:)
LANGUAGE_SUFFIX = {"cuda": ".cu", "cuda-cpp": ".cu", "cpp": ".cpp", "c": ".c", "hip": ".hip", "python": ".py"}


@dataclass
class BufferResult:
    findings: list[Finding] = field(default_factory=list)  # the active ones (suppressed left out)
    notices: list[Notice] = field(default_factory=list)


class SettingsCache:
    """Settings per configuration file, rebuilt when the file's size or mtime changes (a
    config edited while the server runs applies to the next analysis). Keeping the same
    Settings object between analyses keeps the engine's per-settings plan warm."""

    def __init__(self) -> None:
        self._by_config: dict[Path, tuple[tuple[int, int], Settings]] = {}
        self._plain: dict[Path, Settings] = {}

    def for_document(self, path: Path, workspace_roots: list[Path]) -> Settings:
        """Raises ConfigError for a configuration file that is not valid."""
        # a new file may sit in folders not created yet: start from the nearest that exists
        folder = next((p for p in path.parents if p.is_dir()), Path.cwd())
        cfg = find_config(folder)
        if cfg is None:
            root = git_root(folder) or next((r for r in workspace_roots if path.is_relative_to(r)), folder)
            if root not in self._plain:
                self._plain[root] = _no_cache(Settings(root=root.resolve()))
            return self._plain[root]
        st = cfg.stat()
        stamp = (st.st_mtime_ns, st.st_size)
        known = self._by_config.get(cfg)
        if known is None or known[0] != stamp:
            settings = Settings()
            load_config(cfg, settings)
            known = self._by_config[cfg] = (stamp, _no_cache(settings))
        return known[1]


def _no_cache(settings: Settings) -> Settings:
    settings.cache_dir = None
    settings.jobs = 1
    return settings


def scan_buffer(path: Path, text: str, settings: Settings) -> BufferResult:
    """Findings of `text` as if it were the contents of `path`."""
    from portlint.core import session
    from portlint.discovery.files import SourceFile, display_path, is_excluded
    from portlint.pipeline.engine import scan_source

    if is_excluded(path, settings):
        return BufferResult()
    # text from the client is Unicode; a lone surrogate (JSON allows one) becomes "?" so
    # every code point stays one code point and columns agree with the text
    data = text.encode("utf-8", "replace")
    display = display_path(path, settings.root)
    if len(data) > settings.max_file_size:
        return BufferResult(notices=[Notice(display, f"buffer is {len(data)} bytes, over the {settings.max_file_size}-byte limit (max-file-size): not analysed")])
    session.begin(settings)  # nothing read for an earlier analysis is reused
    # the tree is the workspace (settings.root) when it holds the file, else the file's folder
    result = scan_source(SourceFile(path, display, named_root(path, str(settings.root))), data, settings)
    return BufferResult([f for f in result.findings if not f.suppressed], result.notices)

