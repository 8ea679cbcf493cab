"""The detectors' token pre-filter (portlint/discovery/prefilter.py) finds exactly the tokens a plain
substring test finds, whatever the bytes and the tokens."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from portlint.core.config import Settings
from portlint.discovery.prefilter import TokenMatcher
from portlint.findings.selection import Plan

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
