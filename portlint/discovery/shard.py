"""`--shard I/N`: scan one of N disjoint parts of the discovered files (for a CI matrix).

A file belongs to shard `1 + h % N`, where h is the first 8 bytes of the SHA-256 of its
path relative to the project root (the path reports show), so the split depends on
nothing but that path: the same on every machine and Python, and adding a file moves only
that file. Notices about paths (an unreadable folder, a broken symlink) go with the shard
their path belongs to, so merged shard outputs name each once."""

from __future__ import annotations

import hashlib
import re


class ShardError(ValueError):
    pass


_NUMBER = re.compile(r"[0-9]{1,9}")


def parse_shard(text: str) -> tuple[int, int]:
    """(I, N) from "I/N", with 1 <= I <= N: ASCII digits only (`²` is a digit to
    str.isdigit, not to int), at most 9 of them."""
    index, sep, count = text.partition("/")
    index, count = index.strip(), count.strip()
    if not sep or not _NUMBER.fullmatch(index) or not _NUMBER.fullmatch(count):
        raise ShardError(f"--shard: expected I/N with I and N whole numbers of at most 9 digits (as in 1/4), got {text[:40]!r}")
    i, n = int(index), int(count)
    if n < 1 or not 1 <= i <= n:
        raise ShardError(f"--shard: I must be between 1 and N, got {text!r}")
    return i, n


def shard_of(path: str, count: int) -> int:
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def take_shard(files, notices, index: int, count: int) -> tuple[list, list]:
    """The discovered `files` (discovery.SourceFile) and `notices` of shard `index` of `count`."""
    return (
        [sf for sf in files if shard_of(sf.display, count) == index],
        [n for n in notices if shard_of(n.path, count) == index],
    )
