"""Which of a fixed set of byte strings occur in a file: the detectors' pre-filter.

A language's detectors name some 250 tokens between them, and looking for each one in the
whole file was a visible share of a scan (250 passes over every file). Most tokens are made
of word characters only (`[A-Za-z0-9_]`, what `\\w` means in a bytes pattern), and such a
token occurs in the file exactly when it occurs inside one of the file's words (a maximal run
of word characters): it cannot span a non-word byte. So the file's distinct words, joined by
a non-word byte, stand in for the file; that text is a fraction of its size. A token with
other bytes in it ("cg::wait", "-Xptxas") is looked for in the file itself, and only when its
longest word part occurs among the words (a necessary condition). The answer is the same set
as testing every token against the whole file."""

from __future__ import annotations

import re

_WORD_PART = re.compile(rb"\w+")
_WORD_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
# every byte that is not a word byte becomes a space, so `split()` yields the words
_WORDS_ONLY = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))


class TokenMatcher:
    """The subset of `tokens` that occur in a file's bytes."""

    def __init__(self, tokens: tuple[bytes, ...]):
        self.words: list[bytes] = []  # tokens that are one word
        self.mixed: list[tuple[bytes, bytes]] = []  # (longest word part, token)
        self.bare: list[bytes] = []  # tokens without a word byte ("<<<")
        for token in tokens:
            parts = _WORD_PART.findall(token)
            if parts == [token]:
                self.words.append(token)
            elif parts:
                self.mixed.append((max(parts, key=len), token))
            else:
                self.bare.append(token)

    def present(self, data: bytes) -> set[bytes]:
        words = b" ".join(set(data.translate(_WORDS_ONLY).split()))
        found = {t for t in self.words if t in words}
        found.update(t for part, t in self.mixed if part in words and t in data)
        found.update(t for t in self.bare if t in data)
        return found
