"""Linear-time matching for .gitignore patterns.

pathspec turns a pattern into a regular expression that Python's backtracking engine runs:
`(?:.+/)?` for a leading `**`, `(?:/.+)?` for a middle one and `[^/]*` for a `*`. Their
combinations backtrack polynomially in the path length, with the total number of stars as
the degree (`**/*a*a/**/*a*a/**/*a*ac` on 30 nested 40-letter folders: minutes per match).

`linear_spec` keeps pathspec's parse and its rule for which pattern wins (negation, the
directory marker), and swaps each pattern's expression for a matcher that walks the path
one component at a time: the set of component positions where each piece of the pattern
can start, so a match costs (pattern pieces) x (path components) matches of one piece
against one name, each piece having at most MAX_STARS_PER_PART stars and each result kept.
An expression of another shape than the ones pathspec writes keeps its regex (those have
no `**`, so their cost is what bounded_patterns already limits)."""

from __future__ import annotations

import re
import warnings

_LEAD = "(?:.+/)?"
_MID = "(?:/.+)?/"
_ENDS = (("(?:(?P<ps_d>/)|$)", "either"), ("(?P<ps_d>/)", "dir"), ("/", "inside"))


class _Match:
    __slots__ = ("_dir",)

    def __init__(self, dir_mark: bool) -> None:
        self._dir = dir_mark

    def groupdict(self) -> dict:
        return {"ps_d": "/" if self._dir else None}


class ComponentMatcher:
    """Stands in for a pattern's compiled regex: `search(path)` answers as the regex would
    (None, or a match whose `ps_d` group says it matched a folder above or at the path)."""

    def __init__(self, pattern: str, lead: bool, pieces: list[re.Pattern], gaps: list[str], end: str) -> None:
        self.pattern = pattern  # the regex text it replaces (pathspec reads `.pattern`)
        self.lead, self.pieces, self.gaps, self.end = lead, pieces, gaps, end
        self._known: dict[tuple[int, str], bool] = {}
        self.steps = 0  # piece-against-name matches made (the work, for budget tests)

    def _fits(self, k: int, name: str) -> bool:
        key = (k, name)
        hit = self._known.get(key)
        if hit is None:
            self.steps += 1
            hit = self._known[key] = self.pieces[k].fullmatch(name) is not None
            if len(self._known) > 100_000:
                self._known.clear()
        return hit

    def search(self, path: str):
        # a folder is named with a trailing `/`: the empty name after it is a component
        # here as it is a (possibly empty) piece to the regex
        names = path.split("/")
        n = len(names)
        starts = range(n) if self.lead else range(1)
        ends: list[int] = []
        for k in range(len(self.pieces)):
            ends = [i + 1 for i in starts if i < n and self._fits(k, names[i])]
            if not ends:
                return None
            if k + 1 < len(self.pieces):
                starts = range(ends[0], n) if self.gaps[k] == "mid" else ends
        full = n in ends  # the regex's `$`
        inner = any(e < n for e in ends)  # a `/` follows: the path is in (or is) that folder
        if self.end == "either":
            return _Match(False) if full else _Match(True) if inner else None
        if self.end == "dir":
            return _Match(True) if inner else None
        return _Match(False) if inner else None  # `foo/**`: inside the folder, no marker


def _split(body: str) -> tuple[list[str], list[str]] | None:
    pieces, gaps, cur = [], [], []
    i = 0
    while i < len(body):
        if body.startswith(_MID, i):
            pieces.append("".join(cur)); gaps.append("mid"); cur = []; i += len(_MID)
        elif body[i] == "/":
            pieces.append("".join(cur)); gaps.append("sep"); cur = []; i += 1
        elif body[i] == "\\":
            cur.append(body[i:i + 2]); i += 2
        elif body.startswith("[^/]", i):  # `?`, and with `*` or `+` after it a `*`
            cur.append("[^/]"); i += 4
        elif body[i] == "[":
            j = i + 1
            if j < len(body) and body[j] == "^":
                j += 1
            if j < len(body) and body[j] == "]":
                j += 1
            close = body.find("]", j)
            if close < 0 or "/" in body[i:close]:
                return None
            cur.append(body[i:close + 1]); i = close + 1
        elif body[i] in "()|^$?{":
            return None  # not a shape pathspec writes for a piece
        else:
            cur.append(body[i]); i += 1
    pieces.append("".join(cur))
    if any(not p for p in pieces):
        return None
    return pieces, gaps


def component_matcher(regex: str) -> ComponentMatcher | None:
    """The matcher for one of pathspec's gitignore expressions, or None for another shape."""
    if not regex.startswith("^"):
        return None
    body = regex[1:]
    lead = body.startswith(_LEAD)
    if lead:
        body = body[len(_LEAD):]
    for suffix, end in _ENDS:
        if body.endswith(suffix):
            body = body[: -len(suffix)]
            break
    else:
        return None
    split = _split(body)
    if split is None:
        return None
    pieces, gaps = split
    try:
        with warnings.catch_warnings():  # `[[...]`: "possible nested set", a pattern's own business
            warnings.simplefilter("ignore", FutureWarning)
            compiled = [re.compile(p, re.S) for p in pieces]
    except re.error:
        return None
    return ComponentMatcher(regex, lead, compiled, gaps, end)


def linear_spec(pathspec_module, lines: list[str]):
    """pathspec.GitIgnoreSpec of `lines`, each pattern matched by a ComponentMatcher."""
    spec = pathspec_module.GitIgnoreSpec.from_lines(lines)
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if regex is not None and not isinstance(regex, ComponentMatcher):
            matcher = component_matcher(regex.pattern)
            if matcher is not None:
                pattern.regex = matcher
    return spec
