"""Regexes spelled for speed match what their plain spelling matches (the plain spelling is
kept here as the specification): a `\\b` before a word byte written as a lookbehind after it,
possessive repeats where giving back can never lead to a match."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from portlint.frontends.cuda.symbols import _FUNC_DEF, _TYPE_DEF, required_literals
from portlint.discovery.languages import _CUDA_CONTENT

ROOT = Path(__file__).resolve().parents[1]


# The CUDA-content test of C/C++ files (portlint/discovery/languages.py) in its plain spelling, with
# `\b`: the fast spelling must match exactly the same byte strings.
_PLAIN_CUDA_CONTENT = re.compile(
    rb"__global__|__device__|__shared__|__constant__|\bcuda[A-Z_]\w*|\bcu[A-Z]\w+\(|\bnccl[A-Z]\w*"
    rb"|\bcublas|\bcudnn|\bcufft|\bcurand|\bcusparse|\bcusolver|\bnvrtc|\bnvtx|\bnvml|\bnvshmem"
    rb"|\basm\s*(volatile\s*)?\(|__asm__|\bcub::|\bthrust::|\bcute::|\bcutlass::|#\s*include\s*[<\"]cuda"
    rb"|\bwarpSize\b|__shfl|__ballot|threadIdx|CUtensorMap"
    rb"|\b(?:CUTE|CUTLASS)_(?:HOST_)?DEVICE\b|#\s*include\s*[<\"](?:cute|cutlass)/"
)
_PIECES = ("__global__", "__device__", "__shared__", "__constant__", "__asm__", "__shfl", "__ballot", "cuda", "cu",
           "Malloc", "nccl", "All", "cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", "nvrtc", "nvtx",
           "nvml", "nvshmem", "asm", "volatile", "cub::", "thrust::", "cute::", "cutlass::", "cute/", "cutlass/",
           "#include", "#", "include", "<", '"', "warpSize", "threadIdx", "CUtensorMap", "CUTE_", "CUTLASS_",
           "HOST_", "DEVICE", "x", "_", "9", " ", "\t", "\n", "(", ":", "/", "é")


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8))
def test_cuda_content_matches_what_its_plain_spelling_matches(pieces):
    data = "".join(pieces).encode()
    assert bool(_CUDA_CONTENT.search(data)) == bool(_PLAIN_CUDA_CONTENT.search(data)), data


def test_cuda_content_at_word_boundaries():
    """Each `\\b` of the plain spelling, with a word byte, a non-word byte and nothing beside it."""
    words = ("cudaMalloc", "cuInit(", "ncclAllReduce", "cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver",
             "nvrtc", "nvtx", "nvml", "nvshmem", "asm(", "asm volatile (", "cub::", "thrust::", "cute::", "cutlass::",
             "warpSize", "CUTE_DEVICE", "CUTLASS_HOST_DEVICE", "CUTE_HOST_DEVICE")
    for word in words:
        for before in ("", " ", "x", "_", "9", "é", "::"):
            for after in ("", " ", "x", "_", "9", "é", ";"):
                data = (before + word + after).encode()
                assert bool(_CUDA_CONTENT.search(data)) == bool(_PLAIN_CUDA_CONTENT.search(data)), data


def test_cuda_content_on_the_fixtures():
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            assert bool(_CUDA_CONTENT.search(data)) == bool(_PLAIN_CUDA_CONTENT.search(data)), path


_PLAIN_FUNC_DEF = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*(?:const\s*)?(?:noexcept\s*)?\{")
_PLAIN_TYPE_DEF = re.compile(r"\b(?:struct|class|union)\s+(?:alignas\s*\([^()]*\)\s*)?([A-Za-z_]\w*)\s*(?:final\s*)?[:{]")
_CODE_PIECES = ("f", "Xy", "_1", "é", "ß", "struct", "class", "union", "alignas", "final", "const", "noexcept",
                "(", ")", "{", "}", ";", ":", " ", "\n", "\t", "int a", ",", "*", "::", "9")


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_CODE_PIECES), max_size=14))
def test_definition_patterns_match_what_their_plain_spelling_matches(pieces):
    code = "".join(pieces)
    assert _FUNC_DEF.findall(code) == _PLAIN_FUNC_DEF.findall(code), code
    assert _TYPE_DEF.findall(code) == _PLAIN_TYPE_DEF.findall(code), code


def test_definition_patterns_at_their_edges():
    """Word boundaries (ASCII and not), the optional parts and nested parentheses."""
    bodies = ("f(){", "f ( int a ) {", "f(int (*g)(int)) const noexcept {", "f() const{", "f()noexcept{", "f(a(b)c(d))  {",
              "f(;){", "f((x)){", "f() volatile {", "if (x) {", "struct S {", "class C final : B {", "union U{",
              "struct alignas(16) T {", "struct S;", "class alignas (8) D final{", "structS {")
    for body in bodies:
        for before in ("", " ", "x", "_", "9", "é", "::", "\n"):
            code = before + body
            assert _FUNC_DEF.findall(code) == _PLAIN_FUNC_DEF.findall(code), code
            assert _TYPE_DEF.findall(code) == _PLAIN_TYPE_DEF.findall(code), code


def test_definition_patterns_on_the_fixtures():
    checked = 0
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.is_file() and path.suffix in (".cu", ".cuh", ".h", ".cpp", ".hpp"):
            code = path.read_text(encoding="utf-8", errors="replace")
            assert _FUNC_DEF.findall(code) == _PLAIN_FUNC_DEF.findall(code), path
            assert _TYPE_DEF.findall(code) == _PLAIN_TYPE_DEF.findall(code), path
            checked += 1
    assert checked > 100


# ---- required literals: a match always contains one of them ----------------------------------

def _regexes():
    """Small regexes over the letters a, b, c: literals, classes, \\b, lookarounds, groups,
    alternations and repeats (possessive and lazy ones too)."""
    atom = st.sampled_from(["a", "b", "c", "ab", "abc", "bca", "cab", "[ab]", ".", "\\b", "(?!a)", "(?<=b)", "\\w", "_"])

    def grow(inner):
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda t: f"(?:{t[0]}|{t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]}|{t[1]})"),
            st.tuples(inner, st.sampled_from(["?", "*", "+", "{2}", "{1,3}", "*+", "+?", "{0,2}"])).map(lambda t: f"(?:{t[0]}){t[1]}"),
            inner.map(lambda x: f"(?>{x})"),
        )

    return st.recursive(atom, grow, max_leaves=10)


@settings(max_examples=1500, deadline=None)
@given(_regexes(), st.lists(st.sampled_from(["a", "b", "c", "_", " ", "ab", "abc", "cba"]), max_size=12).map("".join))
def test_required_literals_occur_in_every_match(pattern, text):
    needles = required_literals(pattern)
    if needles is not None and re.search(pattern, text):
        assert any(n in text for n in needles), (pattern, text, needles)


def test_required_literals_refuse_case_folding():
    assert required_literals("(?i)abcd") is None
    assert required_literals("x(?i:abcd)") is None
    assert required_literals("(?:abc|de)") is None  # "de" is too short to be worth a test
    assert required_literals(r"\bSM(?:70|120)_\d") == ("SM120_", "SM70_")
    assert required_literals(r"x(?:abc|bca)y") == ("xabcy", "xbcay")


def test_table_needles_on_the_fixtures():
    """Every name-table pattern: a fixture it matches holds one of its needles."""
    from portlint.frontends.cuda.name_tables import _needles, load_tables

    patterns = [e.pattern for e in load_tables() if e.pattern is not None]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "fixtures").rglob("*"))
             if p.is_file() and p.suffix in (".cu", ".cuh", ".h", ".cpp", ".hpp")]
    matched = 0
    for pattern in patterns:
        needles = _needles(pattern.pattern)
        for text in texts:
            if pattern.search(text):
                matched += 1
                assert needles is None or any(n in text for n in needles), pattern.pattern
    assert matched > 20


# Line-anchored byte scans of Python files (portlint/frontends/python/names.py, project.py), spelled as
# "the first line, or after a newline" so the regex engine searches for the newline byte:
# they must find what the `^`-anchored (re.M) plain spelling finds.
_PLAIN_IMPORT_LINE = re.compile(rb"^\s*(?:import|from)[^\S\n]+([A-Za-z_][\w.]*)", re.M)
_PLAIN_PATCH_LINE = re.compile(rb"^[ \t]*(?!self\.)[A-Za-z_]\w*(?:\.\w+){2,}[ \t]*=[ \t]*\(?\s*[A-Za-z_]\w*\s*\)?[ \t]*$", re.M)
_LINE_PIECES = ("import", "from", "self", "self.", "a", "b1", "_x", ".", "..", "=", "==", "(", ")", " ", "\t", "\n",
                "\r", "\f", "\v", "\r\n", "torch", "x.y.z", "#", "é", "9")


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_LINE_PIECES), max_size=12))
def test_line_scans_find_what_their_anchored_spelling_finds(pieces):
    from portlint.frontends.python.names import modules_on_import_lines
    from portlint.index.project import _has_entry_hint

    data = "".join(pieces).encode()
    assert modules_on_import_lines(data) == {m.decode() for m in _PLAIN_IMPORT_LINE.findall(data)}, data
    assert _has_entry_hint(data) == (1 if _PLAIN_PATCH_LINE.search(data) else 0), data


def test_line_scans_on_the_fixtures():
    from portlint.frontends.python.names import modules_on_import_lines
    from portlint.index.project import _ENTRY_WORDS, _TORCH_STEP_WORDS, _has_entry_hint

    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        data = path.read_bytes()
        assert modules_on_import_lines(data) == {m.decode() for m in _PLAIN_IMPORT_LINE.findall(data)}, path
        if not any(w in data for w in (*_ENTRY_WORDS, *_TORCH_STEP_WORDS)):
            assert _has_entry_hint(data) == (1 if _PLAIN_PATCH_LINE.search(data) else 0), path
