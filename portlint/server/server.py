"""The Language Server: diagnostics, code actions and hover for CUDA and Python buffers.

- Diagnostics on didOpen and didSave at once, on didChange after a quiet spell (DEBOUNCE
  seconds with no further change), always from the text the client holds for the
  document. An analysis runs on one worker thread (the engine keeps per-scan state in
  module globals); a result for a version the buffer has moved past is dropped.
- Code actions: each finding's fix, as a versioned workspace edit the client applies; safe
  fixes are marked preferred, unsafe ones say so in the title; display-only fixes are none.
  The server never writes a file.
- Hover over a finding: its rule's documentation.
- Positions in the encoding agreed at initialize (UTF-16 by default; UTF-8 and UTF-32 when
  the client offers them), converted by portlint.server.positions."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from portlint import __version__
from portlint.core.config import ConfigError
from portlint.server.buffers import LANGUAGE_SUFFIX, BufferResult, SettingsCache, scan_buffer
from portlint.server.positions import UTF8, UTF16, UTF32, PositionMap
from portlint.core.model import Finding, Severity, Span
from portlint.core.rule_links import editor_rule_url

DEBOUNCE = 0.3  # seconds of quiet after a change before the buffer is analysed
SOURCE = "portlint"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}
_ENCODING = {types.PositionEncodingKind.Utf8: UTF8, types.PositionEncodingKind.Utf16: UTF16, types.PositionEncodingKind.Utf32: UTF32}
log = logging.getLogger("portlint.server")


@dataclass
class Analysis:
    """The findings of one version of one document, with the text they were computed on."""

    version: int | None
    positions: PositionMap
    findings: list[Finding]
    docs_url: str | None


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, except that a change to a document never opened is ignored (with
    a log line) instead of failing with a KeyError the editor shows."""

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.info("didChange for a document that is not open, ignored: %s", params.text_document.uri[:200])
            return
        yield from super().lsp_text_document__did_change(params)


def fs_path(uri: str) -> Path | None:
    """The local path a `file:` URI names, or None when it names none portlint will read:
    another host (`file://host/share/x.cu`, a UNC share), a NUL byte (`%00`), or a path
    that is not absolute. Nothing climbs folders from a path that cannot be a local file."""
    if not uri.startswith("file:"):
        return None
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path) if parts.netloc else uris.to_fs_path(uri)
    if not path or "\x00" in path or not path.startswith("/") or path.startswith("//"):
        return None
    return Path(path)


class PortlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("portlint", __version__, protocol_cls=_Protocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings_cache = SettingsCache()
        self.analyses: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="portlint-analysis")
        self.shown_errors: set[str] = set()

    # -- helpers ------------------------------------------------------------------------
    def document(self, uri: str):
        """The open document's text as the client sent it (None when it is not open; never
        read from disk)."""
        return self.workspace.text_documents.get(unquote(uri))

    def encoding(self) -> str:
        return _ENCODING.get(self.workspace.position_encoding, UTF16)

    def workspace_roots(self) -> list[Path]:
        roots = [p for f in self.workspace.folders.values() if (p := fs_path(f.uri))]
        root = self.workspace.root_path
        if root and root.startswith("/") and not root.startswith("//") and "\x00" not in root:
            roots.append(Path(root))
        return roots

    def document_path(self, uri: str, language_id: str | None) -> Path | None:
        if uri.startswith("file:"):
            return fs_path(uri)  # None for a file portlint cannot read as a local one: not analysed
        suffix = LANGUAGE_SUFFIX.get(language_id or "")
        if suffix is None:
            return None
        roots = self.workspace_roots()
        return (roots[0] if roots else Path.cwd()) / f"untitled{suffix}"

    def report_error(self, text: str) -> None:
        """A configuration or analysis problem, shown once per distinct text."""
        log.warning(text)
        if text not in self.shown_errors:
            self.shown_errors.add(text)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=text))

    # -- analysis -----------------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        loop = asyncio.get_running_loop()
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        if delay <= 0:
            loop.create_task(self.analyse(uri))
        else:
            self.pending[uri] = loop.call_later(delay, lambda: loop.create_task(self.analyse(uri)))

    async def analyse(self, uri: str) -> None:
        self.pending.pop(uri, None)
        doc = self.document(uri)
        if doc is None:
            return
        text, version = doc.source, doc.version
        path = self.document_path(uri, doc.language_id)
        if path is None:
            return
        loop = asyncio.get_running_loop()
        try:
            outcome = await loop.run_in_executor(self.worker, self._scan, path, text)
        except ConfigError as exc:
            self.report_error(f"portlint: configuration error: {exc}")
            return
        except Exception as exc:  # a bug in the analysis must not stop the server
            self.report_error(f"portlint: internal error analysing {path.name}: {type(exc).__name__}: {exc} (please report it)")
            return
        result, docs_url = outcome
        current = self.document(uri)
        if current is None or current.version != version:
            return  # closed or edited meanwhile: a newer analysis follows
        for notice in result.notices:
            log.info("%s: %s", notice.path, notice.message)
        analysis = Analysis(version, PositionMap(text, self.encoding()), result.findings, docs_url)
        self.analyses[uri] = analysis
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[diagnostic(f, analysis) for f in result.findings])
        )

    def _scan(self, path: Path, text: str) -> tuple[BufferResult, str | None]:
        settings = self.settings_cache.for_document(path, self.workspace_roots())
        return scan_buffer(path, text, settings), settings.docs_url

    def forget(self, uri: str) -> None:
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self.analyses.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def lsp_range(span: Span, positions: PositionMap) -> types.Range:
    start = positions.to_lsp(span.start_line, span.start_col)
    end = positions.to_lsp(span.end_line, span.end_col)
    return types.Range(start=types.Position(*start), end=types.Position(*end))


def diagnostic(f: Finding, analysis: Analysis) -> types.Diagnostic:
    url = editor_rule_url(f.rule_id, analysis.docs_url)
    message = f.message
    if f.suggestion:
        message += "\nSuggestion: " + f.suggestion.strip().splitlines()[0]
    return types.Diagnostic(
        range=lsp_range(f.span, analysis.positions),
        message=message,
        severity=_SEVERITY[f.severity],
        code=f.rule_id,
        # an editor opens only a URI: the https:// page, else the page shipped with portlint
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
    )


def code_actions(uri: str, analysis: Analysis, wanted: types.Range) -> list[types.CodeAction]:
    actions = []
    for f in analysis.findings:
        if f.fix is None or f.fix.applicability == "display-only":
            continue
        d = diagnostic(f, analysis)
        if not _overlaps(d.range, wanted):
            continue
        edits = [types.TextEdit(range=lsp_range(e.span, analysis.positions), new_text=e.text) for e in f.fix.edits]
        safe = f.fix.applicability == "safe"
        actions.append(
            types.CodeAction(
                title=f"portlint: {f.fix.description} ({f.rule_id}{'' if safe else ', unsafe'})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d],
                is_preferred=safe,
                edit=types.WorkspaceEdit(
                    document_changes=[
                        types.TextDocumentEdit(
                            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=analysis.version),
                            edits=edits,
                        )
                    ]
                ),
            )
        )
    return actions


def hover(analysis: Analysis, line: int, character: int) -> types.Hover | None:
    from portlint.core.catalog import load_rules

    here = types.Position(line=line, character=character)
    rules = load_rules()
    parts: list[str] = []
    seen: set[str] = set()
    for f in analysis.findings:
        r = lsp_range(f.span, analysis.positions)
        if f.rule_id in seen or not _contains(r, here):
            continue
        seen.add(f.rule_id)
        link = editor_rule_url(f.rule_id, analysis.docs_url)
        parts.append(f"{rules[f.rule_id].markdown_doc().rstrip()}\n\nDocumentation: " + (link or f"`portlint rule {f.rule_id}`"))
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))


def _key(p: types.Position) -> tuple[int, int]:
    return (p.line, p.character)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return _key(a.start) <= _key(b.end) and _key(b.start) <= _key(a.end)


def _contains(r: types.Range, p: types.Position) -> bool:
    return _key(r.start) <= _key(p) <= _key(r.end)


def build_server() -> PortlintServer:
    server = PortlintServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PortlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PortlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: PortlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PortlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def on_code_action(ls: PortlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        analysis = ls.analyses.get(params.text_document.uri)
        doc = ls.document(params.text_document.uri)
        if analysis is None or doc is None or doc.version != analysis.version:
            return []  # the buffer moved on: its edits would land in the wrong place
        return code_actions(params.text_document.uri, analysis, params.range)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: PortlintServer, params: types.HoverParams) -> types.Hover | None:
        analysis = ls.analyses.get(params.text_document.uri)
        doc = ls.document(params.text_document.uri)
        if analysis is None or doc is None or doc.version != analysis.version:
            return None
        return hover(analysis, params.position.line, params.position.character)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: PortlintServer, params) -> None:
        for handle in ls.pending.values():
            handle.cancel()
        ls.pending.clear()
        ls.worker.shutdown(wait=False, cancel_futures=True)

    return server


def run_stdio() -> None:
    logging.basicConfig(level=logging.WARNING, format="portlint-server: %(levelname)s: %(message)s")
    build_server().start_io()
