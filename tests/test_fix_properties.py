"""Property tests for the line model and the fix engine: random files mixing LF, CRLF and
lone CR, form feeds, vertical tabs, Unicode line separators, non-ASCII and invalid UTF-8.

Seeded and bounded (derandomize, max_examples, no per-example deadline) so the module
runs in a few seconds in CI; the spec each test checks against is written here
independently of portlint.core.lines."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from portlint.core import lines as line_model
from portlint.output.fixes import outside_unchanged, splice
from portlint.core.model import Edit, Span

BOUNDED = settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
PIPELINE = settings(max_examples=50, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])

# pieces a file is made of: every kind of break str.splitlines() knows, plus text
BREAKS = [b"\n", b"\r\n", b"\r", b"\f", b"\v", b"\x1c", b"\x1d", b"\x1e", "\u0085".encode(), "\u2028".encode(), "\u2029".encode()]
TEXT = [b"a", b"int", b" ", b"\t", b"32", b";", "\u00e9".encode(), "\u4e2d".encode(), "\U0001f642".encode(), b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80"]
files = st.lists(st.sampled_from(BREAKS + TEXT), max_size=40).map(b"".join)
new_texts = st.lists(st.sampled_from(["x", "warpSize", "\r", "\n", "\r\n", "\f", "\u2028", "\u00e9", "", "(a - 1)"]), max_size=3).map("".join)


def spec_position(data: bytes, offset: int) -> tuple[int, int]:
    """(line, column) of a byte offset, straight from the definition: lines end at LF
    (CRLF is a CR then an LF), a column counts the code points decoded before it."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, len(data[line_start:offset].decode("utf-8", "replace")) + 1


def boundaries(data: bytes) -> list[int]:
    """The byte offsets a position can name, by definition: a cut inside a line's content
    (a CRLF's CR belongs to the terminator) that does not change how the content decodes
    (so it is between two code points, or two replaced invalid runs), or its end."""
    def decode(b):
        return b.decode("utf-8", "replace")

    out = []
    start = 0
    while True:
        end = data.find(b"\n", start)
        stop = len(data) if end == -1 else end
        content = data[start : stop - 1 if end != -1 and data[start:stop].endswith(b"\r") else stop]
        whole = decode(content)
        out.extend(start + cut for cut in range(len(content) + 1) if decode(content[:cut]) + decode(content[cut:]) == whole)
        if end == -1:
            return out
        start = end + 1


@BOUNDED
@given(files)
def test_lines_are_what_the_scanner_splits(data):
    text = data.decode("utf-8", "replace")
    lines = line_model.split_lines(text)
    assert len(lines) == text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    for ln in lines:
        assert "\n" not in ln
    # every other break character stays inside its line
    assert "".join(lines).count("\f") == text.count("\f")


@BOUNDED
@given(files)
def test_every_position_maps_back_to_its_byte_offset(data):
    positions = line_model.ByteMap(data)
    for offset in boundaries(data):
        line, col = spec_position(data, offset)
        assert positions.byte_offset(line, col) == offset
    text = data.decode("utf-8", "replace")
    # the columns of each line are exactly the code points of the scanner's decoded line
    for number, content in enumerate(line_model.split_lines(text), start=1):
        assert positions.byte_offset(number, len(content) + 1) is not None
        assert positions.byte_offset(number, len(content) + 2) is None


@BOUNDED
@given(files, st.data())
def test_splice_changes_exactly_the_edited_ranges(data, draw):
    cuts = boundaries(data)
    picked = sorted(draw.draw(st.lists(st.sampled_from(cuts), max_size=6, unique=True)))
    pairs = list(zip(picked[::2], picked[1::2]))  # disjoint, ordered ranges
    edits, expected, pos = [], b"", 0
    for start, end in pairs:
        new = draw.draw(new_texts)
        edits.append(Edit(Span(*spec_position(data, start), *spec_position(data, end)), new, data[start:end].decode("utf-8", "replace")))
        expected += data[pos:start] + new.encode()
        pos = end
    expected += data[pos:]
    # stale edits (the span no longer holds what they replace) must change nothing
    stale = [Edit(e.span, "STALE", e.old + "?") for e in edits]
    result = splice(data, [(e,) for e in stale + edits])
    assert result.data == expected
    assert (result.dropped, result.fixes) == (len(stale), len(edits))
    assert splice(data, [(e,) for e in stale]).data == data
    # the check --fix runs before writing holds here, and fails for any byte changed outside
    assert outside_unchanged(data, result.data, result.applied)
    if pos < len(data):  # a byte after the last edit, unchanged so far
        tampered = result.data[:-1] + bytes([result.data[-1] ^ 1])
        assert not outside_unchanged(data, tampered, result.applied)
    # the same edits as one fix: all applied together, or (with a stale one) none
    assert splice(data, [tuple(edits)]).data == expected
    if stale:
        assert splice(data, [tuple(edits) + tuple(stale[:1])]).data == data


KERNEL = ("__global__ void k(int* out) {{{nl}{filler}  int lane = threadIdx.x % 32;{nl}  out[lane] = __shfl_sync(__activemask(), 1, lane);{nl}}}{nl}"
          "{filler2}__global__ void k2(int* out) {{{nl}  const int tid = threadIdx.x;{nl}  const int lane = tid % 32;{nl}"
          "  out[lane] = __shfl_sync(__activemask(), 2, lane);{nl}}}{end}")
COMMENT_CHARS = ["a", " ", "\t", "\f", "\v", "\x1c", "\x1d", "\x1e", "\u0085", "\u2028", "\u2029", "\r", "\u00e9", "\U0001f642", "32", "%"]


@st.composite
def cuda_files(draw) -> bytes:
    nl = draw(st.sampled_from(["\n", "\r\n"]))

    def filler():
        rows = draw(st.lists(st.lists(st.sampled_from(COMMENT_CHARS), max_size=8).map("".join), max_size=3))
        return "".join(f"  // {row}{nl}" for row in rows)

    text = KERNEL.format(nl=nl, filler=filler(), filler2=filler(), end=draw(st.sampled_from(["", nl])))
    data = text.encode()
    if draw(st.booleans()):  # invalid UTF-8 in a comment
        data = data.replace(b"// ", b"// \xff\xe2\x82 ", 1)
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


def _scan_and_fix(folder: Path, include_unsafe: bool = False):
    from conftest import scan_paths

    from portlint.core.config import Settings
    from portlint.discovery.files import discover
    from portlint.output.fixes import apply_fixes

    settings = Settings(root=folder, jobs=1)
    result = scan_paths([folder], root=folder)
    return apply_fixes(result.findings, settings, discover([folder], settings)[0], include_unsafe=include_unsafe, write=True)


@PIPELINE
@given(cuda_files())
def test_cuda_fix_edits_only_its_ranges_and_a_second_run_is_a_no_op(data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        target = folder / "k.cu"
        target.write_bytes(data)
        run = _scan_and_fix(folder)
        fixed = data.replace(b"% 32;", b"% warpSize;")  # both kernels' lane ids
        assert target.read_bytes() == fixed, run.notices
        second = _scan_and_fix(folder)
        assert second.changed == 0 and target.read_bytes() == fixed


PY = ("import torch{nl}import torch_xla.core.xla_model as xm{nl}{filler}"
      "b = torch.ones(3).cuda(){nl}{filler}c = 1{end}")
PY_COMMENT_CHARS = [c for c in COMMENT_CHARS if c != "\r"]  # a lone CR is a line break to Python


@st.composite
def python_files(draw) -> bytes:
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    rows = draw(st.lists(st.lists(st.sampled_from(PY_COMMENT_CHARS), max_size=8).map("".join), max_size=3))
    filler = "".join(f"# {row}{nl}" for row in rows)
    return PY.format(nl=nl, filler=filler, end=draw(st.sampled_from(["", nl]))).encode()


@PIPELINE
@given(python_files())
def test_python_fix_edits_only_its_range_and_a_second_run_is_a_no_op(data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        target = folder / "m.py"
        target.write_bytes(data)
        run = _scan_and_fix(folder, include_unsafe=True)
        assert run.changed == 1, run.notices
        after = target.read_bytes()
        start = data.index(b".cuda()")
        assert after[:start] == data[:start]
        assert after.endswith(data[start + len(b".cuda()"):])
        assert b".cuda()" not in after
        second = _scan_and_fix(folder, include_unsafe=True)
        assert second.changed == 0 and target.read_bytes() == after
