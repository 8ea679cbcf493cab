"""`portlint scan - --stdin-filename PATH`: scan a buffer piped in by an editor or a
formatter, as if it were the file PATH.

The buffer is reported under PATH (relative to the project root, as a scan of that file
would show it), its language is decided from PATH and the bytes, and the configuration is
the one found from PATH. PATH need not exist. Nothing is written (no cache entry: the
buffer is not the file on disk); the size limit applies as to files."""

from __future__ import annotations

from pathlib import Path

from portlint.core.model import Notice, ScanResult
from portlint.discovery.roots import file_tree


def read_buffer(stream, limit: int) -> tuple[bytes | None, str | None]:
    """(the bytes on `stream`, None), or (None, why not) when over `limit` bytes."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        return None, f"stdin is over the {limit}-byte limit (max-file-size): skipped"
    return data, None


def scan_buffer(data: bytes | None, filename: Path, settings, why_not: str | None = None) -> ScanResult:
    from portlint.core import session
    from portlint.discovery.files import SourceFile, display_path
    from portlint.pipeline.engine import scan_source

    # the tree is the one a scan of PATH named on its own would have (nothing is written)
    sf = SourceFile(Path(filename).absolute(), display_path(Path(filename), settings.root), file_tree(settings, Path(filename)))
    result = ScanResult()
    if data is None:
        result.notices.append(Notice(sf.display, why_not or "nothing read from stdin"))
        return result
    session.begin(settings)  # a fresh session; a Python file's project model is built around PATH
    file_result = scan_source(sf, data, settings)
    result.files_scanned = 1
    result.findings = sorted(file_result.findings, key=lambda f: f.sort_key())
    result.notices = sorted(file_result.notices, key=lambda n: n.sort_key())
    result.counters = dict(sorted(file_result.counters.items()))
    return result
