"""`portlint server` end to end: a real LSP client (pytest-lsp's, built on pygls's) starts
`python -m portlint server` over stdio and speaks the protocol to it: initialize, didOpen,
publishDiagnostics, codeAction, applying the edit, didChange, hover, shutdown.

Every wait is bounded (asyncio.wait_for); nothing sleeps."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp.client import LanguageClient, client_capabilities  # noqa: E402

from conftest import REPO  # noqa: E402

KERNEL = "__global__ void k(float* out) {\n  int lane = threadIdx.x % 32;\n  out[lane] = 1.0f;\n}\n"
CLEAN = "__global__ void k(float* out) {\n  out[threadIdx.x] = 1.0f;\n}\n"
TIMEOUT = 60  # seconds for any one answer (the first analysis imports the CUDA parser)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=4 * TIMEOUT))


class Session:
    """A client connected to a server process; diagnostics arrive through `next_diagnostics`."""

    def __init__(self, root: Path, encodings: list[str] | None = None):
        self.root = root
        self.encodings = encodings
        # pytest-lsp's client checks what the server sends against the capabilities the
        # client announced; diagnostics are collected here, with their versions
        self.client = LanguageClient(converter_factory=default_converter)
        self.received: asyncio.Queue = asyncio.Queue()

    async def __aenter__(self) -> "Session":
        client = self.client

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.received.put_nowait(params)

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        await client.start_io(sys.executable, "-m", "portlint", "server", env=env, cwd=str(self.root))
        capabilities = client_capabilities("visual-studio-code")
        if self.encodings is not None:
            capabilities.general = types.GeneralClientCapabilities(position_encodings=self.encodings)
        self.init = await asyncio.wait_for(
            client.initialize_session(types.InitializeParams(
                capabilities=capabilities, root_uri=self.root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="ws")])),
            TIMEOUT,
        )
        return self

    async def __aexit__(self, *exc) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_session(), TIMEOUT)
        finally:
            await self.client.stop()

    async def next_diagnostics(self, uri: str) -> types.PublishDiagnosticsParams:
        while True:
            params = await asyncio.wait_for(self.received.get(), TIMEOUT)
            if params.uri == uri:
                return params

    def open(self, uri: str, text: str, language: str = "cuda-cpp", version: int = 1) -> None:
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))

    def replace_all(self, uri: str, text: str, version: int) -> None:
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions) to `text`, as an editor does."""
    lines = text.splitlines(keepends=True)

    def offset(pos: types.Position) -> int:
        before = sum(len(ln) for ln in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return before + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return before + len(line.rstrip("\r\n"))

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
        lines = text.splitlines(keepends=True)
    return text


def test_diagnostics_fix_clean_change_and_hover(tmp_path):
    async def scenario():
        path = tmp_path / "kernel.cu"
        path.write_text(CLEAN)  # the disk holds clean code: the diagnostics must come from the buffer
        uri = path.as_uri()
        async with Session(tmp_path) as s:
            assert s.init.capabilities.code_action_provider and s.init.capabilities.hover_provider
            s.open(uri, KERNEL)
            published = await s.next_diagnostics(uri)
            assert published.version == 1
            lane = [d for d in published.diagnostics if d.code == "PTL102"]
            assert len(lane) == 1, [(d.code, d.message) for d in published.diagnostics]
            d = lane[0]
            assert d.source == "portlint" and d.severity == types.DiagnosticSeverity.Error
            assert (d.range.start.line, d.range.start.character) == (1, 13)  # `threadIdx.x % 32` on line 2
            assert (d.range.end.line, d.range.end.character) == (1, 29)
            assert "lane" in d.message.lower() and "32" in d.message

            actions = await asyncio.wait_for(s.client.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
                context=types.CodeActionContext(diagnostics=[d]))), TIMEOUT)
            assert actions, "no code action for PTL102"
            action = actions[0]
            assert action.kind == types.CodeActionKind.QuickFix and "PTL102" in action.title
            change = action.edit.document_changes[0]
            assert change.text_document.uri == uri and change.text_document.version == 1
            fixed = apply_edits(KERNEL, change.edits)
            assert fixed != KERNEL and "% 32" not in fixed
            assert path.read_text() == CLEAN, "the server wrote the file"

            hovered = await asyncio.wait_for(s.client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=1, character=20))), TIMEOUT)
            assert hovered is not None and hovered.contents.kind == types.MarkupKind.Markdown
            assert hovered.contents.value.startswith("# PTL102") and "docs/rules/PTL102.md" in hovered.contents.value
            # a link the editor can open (the shipped page as a file: URI), never the bare relative path
            assert "Documentation: file:///" in hovered.contents.value, hovered.contents.value
            nothing = await asyncio.wait_for(s.client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))), TIMEOUT)
            assert nothing is None

            s.replace_all(uri, fixed, 2)
            after_fix = await s.next_diagnostics(uri)
            assert after_fix.version == 2 and not [x for x in after_fix.diagnostics if x.code == "PTL102"]

            # two quick changes: only the last one is analysed and published (debounce)
            s.replace_all(uri, KERNEL, 3)
            s.replace_all(uri, CLEAN, 4)
            cleaned = await s.next_diagnostics(uri)
            assert cleaned.version == 4 and list(cleaned.diagnostics) == []
            assert s.received.empty()

    run(scenario())


@pytest.mark.parametrize(("offered", "expected_start", "expected_end"), [
    (None, 21, 37),  # UTF-16 by default: the emoji is two code units
    (["utf-32"], 20, 36),  # one code point
    (["utf-8"], 24, 40),  # four bytes, and "é" two more
])
def test_columns_after_a_non_bmp_character_in_each_position_encoding(tmp_path, offered, expected_start, expected_end):
    # `é` (BMP, one UTF-16 unit, two UTF-8 bytes) and U+1F600 (two UTF-16 units, four UTF-8
    # bytes) stand before the finding on its line
    text = "__global__ void k(float* out) {\n  /*é😀*/ int lane = threadIdx.x % 32;\n  out[lane] = 1.0f;\n}\n"

    async def scenario():
        uri = (tmp_path / "wide.cu").as_uri()
        async with Session(tmp_path, offered) as s:
            encoding = s.init.capabilities.position_encoding
            assert encoding == (offered[0] if offered else types.PositionEncodingKind.Utf16)
            s.open(uri, text)
            d = [x for x in (await s.next_diagnostics(uri)).diagnostics if x.code == "PTL102"][0]
            assert (d.range.start.line, d.range.start.character, d.range.end.character) == (1, expected_start, expected_end)

    run(scenario())


def test_configuration_comes_from_the_workspace(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.portlint]\nignore = ["PTL102"]\n')

    async def scenario():
        uri = (tmp_path / "kernel.cu").as_uri()
        async with Session(tmp_path) as s:
            s.open(uri, KERNEL)
            published = await s.next_diagnostics(uri)
            assert published.version == 1
            assert not [d for d in published.diagnostics if d.code == "PTL102"]

    run(scenario())


def code_actions_for(s: Session, uri: str, d: types.Diagnostic):
    return s.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))


def test_python_buffer_unsafe_fix_is_offered_but_not_preferred_and_docs_url_links(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.portlint]\ntargets = ["gaudi"]\ndocs-url = "https://docs.example.org/portlint/core/catalog/"\n')
    text = "import torch\n\ndef step(x):\n    torch.cuda.synchronize()\n    return x\n"

    async def scenario():
        uri = (tmp_path / "train.py").as_uri()
        async with Session(tmp_path) as s:
            s.open(uri, text, language="python")
            d = [x for x in (await s.next_diagnostics(uri)).diagnostics if x.code == "PTL902"][0]
            assert (d.range.start.line, d.range.start.character) == (3, 4)
            assert d.code_description.href == "https://docs.example.org/portlint/core/catalog/PTL902.md"
            actions = await asyncio.wait_for(code_actions_for(s, uri, d), TIMEOUT)
            (action,) = [a for a in actions if "PTL902" in a.title]
            assert "unsafe" in action.title and not action.is_preferred
            fixed = apply_edits(text, action.edit.document_changes[0].edits)
            assert "torch.hpu.synchronize()" in fixed

    run(scenario())


def test_save_analyses_the_buffer_and_a_suppression_comment_silences(tmp_path):
    path = tmp_path / "kernel.cu"
    path.write_text(CLEAN)
    suppressed = KERNEL.replace("  int lane", "  // portlint: ignore[PTL102] -- lanes are 32 here\n  int lane")

    async def scenario():
        uri = path.as_uri()
        async with Session(tmp_path) as s:
            s.open(uri, CLEAN)
            assert list((await s.next_diagnostics(uri)).diagnostics) == []
            # an edit, then a save straight away (the disk still holds the clean text)
            s.replace_all(uri, KERNEL, 2)
            s.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
            saved = await s.next_diagnostics(uri)
            assert saved.version == 2 and [d.code for d in saved.diagnostics if d.code == "PTL102"] == ["PTL102"]
            s.replace_all(uri, suppressed, 3)
            quiet = await s.next_diagnostics(uri)
            assert quiet.version == 3 and not [d for d in quiet.diagnostics if d.code == "PTL102"]

    run(scenario())


def test_a_broken_config_is_one_error_message_and_no_diagnostics(tmp_path):
    (tmp_path / "portlint.toml").write_text('docs-url = "javascript:alert(1)"\n')

    async def scenario():
        uri = (tmp_path / "kernel.cu").as_uri()
        async with Session(tmp_path) as s:
            shown = asyncio.ensure_future(s.client.wait_for_notification(types.WINDOW_SHOW_MESSAGE))
            s.open(uri, KERNEL)
            message = await asyncio.wait_for(shown, TIMEOUT)
            assert message.type == types.MessageType.Error
            assert "configuration error" in message.message and "docs-url" in message.message
            assert s.received.empty()

    run(scenario())


def test_diagnostics_link_the_shipped_rule_page_without_a_docs_url(tmp_path):
    """codeDescription.href without `docs-url`: the rule page portlint ships (a file: URI an
    editor opens), never a relative path."""
    from portlint.core.rule_links import shipped_rule_page

    async def scenario():
        uri = (tmp_path / "kernel.cu").as_uri()
        async with Session(tmp_path) as s:
            s.open(uri, KERNEL)
            d = [x for x in (await s.next_diagnostics(uri)).diagnostics if x.code == "PTL102"][0]
            page = shipped_rule_page("PTL102")
            assert page is not None and d.code_description.href == page.as_uri()
            assert Path(d.code_description.href.removeprefix("file://")).read_text(encoding="utf-8").count("# PTL102 `") == 1

    run(scenario())
