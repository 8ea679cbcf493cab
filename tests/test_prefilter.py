"""The byte-level pre-filters give the answers of their plain forms: the detectors' token
pre-filter (portlint/prefilter.py) finds exactly the tokens a substring test finds, and the
CUDA-content test of C/C++ files (portlint/languages.py) matches what its `\b` spelling
matches."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from portlint.config import Settings
from portlint.languages import _CUDA_CONTENT
from portlint.prefilter import TokenMatcher
from portlint.selection import Plan

ROOT = Path(__file__).resolve().parents[1]

# few distinct bytes, so that tokens do occur: word bytes, separators, bytes over 0x7f
_ALPHABET = st.sampled_from(list(b"abAB_09 :.-<\n\t\x00\xc3\xa9\xff"))
_BYTES = st.lists(_ALPHABET, max_size=60).map(bytes)


def _plain(tokens, data: bytes) -> set[bytes]:
    return {t for t in tokens if t in data}


@settings(max_examples=400, deadline=None)
@given(tokens=st.lists(st.lists(_ALPHABET, max_size=5).map(bytes), max_size=12), data=_BYTES)
def test_same_tokens_as_a_substring_test(tokens, data):
    assert TokenMatcher(tuple(tokens)).present(data) == _plain(tokens, data)


def test_tokens_spanning_words_and_separators():
    tokens = (b"cg::wait", b"cuda", b"cudaMalloc", b"<<<", b"-Xptxas", b"wait", b"a b", b"", b"\xc3")
    data = "cg::wait_all(); cudaMallocAsync(p); k<<<1, 2>>>(); é\n".encode()
    found = TokenMatcher(tokens).present(data)
    assert found == _plain(tokens, data)
    assert b"cg::wait" in found and b"-Xptxas" not in found and b"a b" not in found


def test_the_plan_tokens_on_the_fixtures():
    """Every language's real token set, on every fixture of that language."""
    plan = Plan(Settings())
    suffixes = {"cuda": (".cu", ".cuh", ".h", ".cpp"), "python": (".py",)}
    checked = 0
    for language, ends in suffixes.items():
        plan.detectors(language)
        matcher = plan._tokens[language]
        tokens = tuple(matcher.words) + tuple(t for _, t in matcher.mixed) + tuple(matcher.bare)
        for path in sorted((ROOT / "fixtures").rglob("*")):
            if path.suffix in ends and path.is_file():
                data = path.read_bytes()
                assert matcher.present(data) == _plain(tokens, data), path
                checked += 1
    assert checked > 100


# The CUDA-content test of C/C++ files (portlint/languages.py) in its plain spelling, with
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
