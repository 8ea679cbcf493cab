"""Gitignore patterns, matched component by component: git's own answers for `.gitignore`
files, and pathspec's reading of the `exclude` setting (`linear_spec`, at the end); for
both, `bounded_patterns` first drops a line whose matching cost has no bound. Every other
glob portlint meets is core/globs.py's.

The rules are git's (gitignore(5), and wildmatch as git runs it with WM_PATHNAME), on the
bytes of names:

- a blank line or one starting with `#` is no pattern; one CR ending a line is dropped, then
  trailing spaces unless escaped with `\\`; `!` in front re-includes; one trailing `/`
  makes the pattern match folders only;
- a pattern with no other `/` matches the name alone, at any depth below the file's folder;
  any other is matched against the path relative to that folder (one leading `/` dropped);
- `*`, `?` and `[...]` never match `/`; `**` is special only as a whole component: a leading
  `**/` and a middle `/**/` match zero or more folders, a trailing `/**` one or more
  components (so `a/**` never matches `a` itself, and `a/b/**/` only folders below `a/b`);
  `**\\/` (an escaped `/` after it) needs at least one folder;
  anywhere else `**` is `*`, except right after the literal text a pattern starts with
  (`a**/k`, `x/a**`), which git reads as a leading `**` (`_alternatives`); an unclosed `[`
  or an unknown `[:class:]` matches nothing;
- within one file the last matching line decides; a deeper file's answer beats a higher
  one's; a folder that is ignored is not entered, so nothing below it comes back (the walk
  never asks about it, and `ignored_path` answers so for a path asked alone).

A match walks the path's components once, keeping the set of pattern components each
position can reach (a `**` is a loop in that set), and each component-against-name answer
is kept: the cost is (pattern components) x (path components) name matches. A component's
own expression has at most MAX_STARS_PER_PART stars, so one name match is
bounded too."""

from __future__ import annotations

import re
import warnings

from portlint.core.model import Notice

# ---- the cost bound on a pattern, for both readings --------------------------------------

MAX_PATTERN = 1024
MAX_STARS_PER_PART = 2  # `*` in one path component: matching costs up to name length ** stars
MAX_DOUBLE_STARS = 3  # `**` components in one pattern: the same for path length


def _pattern_cost_ok(line: str, runs: bool = False) -> bool:
    body = line.strip()
    if len(body) > MAX_PATTERN:
        return False
    parts = body.split("/")
    if runs:  # git's reading: `***` is `**`, and a run of stars in a name is one `*`
        double = sum(1 for part in parts if len(part) >= 2 and not part.strip("*"))
        return double <= MAX_DOUBLE_STARS and all(not part.strip("*") or len(_STAR_RUN.findall(part)) <= MAX_STARS_PER_PART
                                                  for part in parts)
    double = sum(1 for part in parts if part == "**")
    return double <= MAX_DOUBLE_STARS and all(part == "**" or part.count("*") <= MAX_STARS_PER_PART for part in parts)


_STAR_RUN = re.compile(r"\*+")


def bounded_patterns(lines: list[str], where: str, notices: list[Notice], runs: bool = False) -> list[str]:
    """The gitignore-style `lines` whose matching cost is bounded: a line with more than
    MAX_STARS_PER_PART `*` in one component, more than MAX_DOUBLE_STARS `**` components or
    longer than MAX_PATTERN is dropped (the regex it becomes backtracks polynomially in the
    name length with the number of stars, exponentially in effect), with one notice.
    `runs`: the lines are a .gitignore file's, read as git reads them (`Pattern`: stars in a
    row are one `*`, and a component of stars only is `**`)."""
    kept = [ln for ln in lines if ln.lstrip().startswith("#") or _pattern_cost_ok(ln, runs)]
    dropped = len(lines) - len(kept)
    if dropped:
        notices.append(Notice(where, f"{dropped} pattern(s) with more than {MAX_STARS_PER_PART} `*` in one path component, "
                                     f"more than {MAX_DOUBLE_STARS} `**` or over {MAX_PATTERN} characters not used "
                                     "(their matching cost is unbounded)"))
    return kept


# ---- git's reading: `.gitignore` files -----------------------------------------------------

_STAR = object()  # zero or more whole components (a `**` component)
_ANY = re.compile(rb"(?s).+")  # exactly one component (a trailing `**` needs one)
_NEVER = re.compile(rb"(?!)")

_SPACE = frozenset(b" \t\n\r")  # git's own isspace: no \v or \f
_CLASSES = {
    b"alnum": lambda c: chr(c).isascii() and chr(c).isalnum(),
    b"alpha": lambda c: chr(c).isascii() and chr(c).isalpha(),
    b"blank": lambda c: c in (0x20, 0x09),
    b"cntrl": lambda c: c < 0x20 or c == 0x7F,
    b"digit": lambda c: 0x30 <= c <= 0x39,
    b"graph": lambda c: 0x21 <= c <= 0x7E,
    b"lower": lambda c: 0x61 <= c <= 0x7A,
    b"print": lambda c: 0x20 <= c <= 0x7E,
    b"punct": lambda c: 0x21 <= c <= 0x7E and not chr(c).isalnum(),
    b"space": lambda c: c in _SPACE,
    b"upper": lambda c: 0x41 <= c <= 0x5A,
    b"xdigit": lambda c: chr(c) in "0123456789abcdefABCDEF",
}


class _Never(Exception):
    """The pattern can match nothing (git's wildmatch aborts on it)."""


def _trim_trailing_spaces(line: bytes) -> bytes:
    end, i, last_space = len(line), 0, None
    while i < end:
        c = line[i]
        if c == 0x20:
            if last_space is None:
                last_space = i
        elif c == 0x5C:  # a backslash keeps the byte after it
            i += 1
            if i >= end:
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def _bracket(body: bytes, i: int) -> tuple[frozenset[int], int]:
    """The bytes a `[...]` starting at body[i] matches, and the index after its `]`."""
    i += 1
    negated = i < len(body) and body[i] in b"!^"
    if negated:
        i += 1
    members: set[int] = set()
    prev = 0
    first = True
    while True:
        if i >= len(body):
            raise _Never
        c = body[i]
        if c == 0x5D and not first:  # `]` closes, except as the first member
            break
        first = False
        if c == 0x5C:
            i += 1
            if i >= len(body):
                raise _Never
            c = body[i]
            members.add(c)
        elif c == 0x2D and prev and i + 1 < len(body) and body[i + 1] != 0x5D:
            i += 1
            hi = body[i]
            if hi == 0x5C:
                i += 1
                if i >= len(body):
                    raise _Never
                hi = body[i]
            members.update(range(prev, hi + 1))
            c = 0  # no range may start from a range's end
        elif c == 0x5B and i + 1 < len(body) and body[i + 1] == 0x3A:
            close = body.find(b"]", i + 2)
            if close < 0:
                raise _Never
            if close - 1 < i + 2 or body[close - 1] != 0x3A:
                members.add(0x5B)  # no `:]`: a plain `[`, the rest read as members
            else:
                test = _CLASSES.get(body[i + 2:close - 1])
                if test is None:
                    raise _Never
                members.update(b for b in range(256) if test(b))
                i = close
                c = 0
        else:
            members.add(c)
        prev = c
        i += 1
    if negated:
        members = set(range(256)) - members
    members.discard(0x2F)  # never `/`
    return frozenset(members), i + 1


def _components(body: bytes) -> list:
    """`body` split at its `/` (and `\\/`) into components: _STAR for a `**` component,
    else the expression one name must match whole."""
    comps: list[list] = [[]]
    raw: list[bytes] = [b""]  # each component's own bytes, to know a `**` component
    escaped: list[bool] = []  # whether the separator after each component is `\\/`
    i = 0
    while i < len(body):
        c = body[i]
        if c == 0x5C:
            if i + 1 >= len(body):
                raise _Never
            nxt = body[i + 1]
            if nxt == 0x2F:
                comps.append([]); raw.append(b""); escaped.append(True)
            else:
                comps[-1].append(("lit", nxt)); raw[-1] += b"\\" + bytes([nxt])
            i += 2
        elif c == 0x2F:
            comps.append([]); raw.append(b""); escaped.append(False); i += 1
        elif c == 0x2A:
            comps[-1].append(("star",)); raw[-1] += b"*"; i += 1
        elif c == 0x3F:
            comps[-1].append(("one",)); raw[-1] += b"?"; i += 1
        elif c == 0x5B:
            members, i = _bracket(body, i)
            comps[-1].append(("set", members)); raw[-1] += b"[]"
        else:
            comps[-1].append(("lit", c)); raw[-1] += bytes([c]); i += 1
    out: list = []
    escaped.append(False)
    for tokens, text, before_escaped in zip(comps, raw, escaped):
        if len(text) >= 2 and text.strip(b"*") == b"":
            # git lets `**/` match no folder, but not `**\\/`: that one needs a component
            out.extend([_ANY, _STAR] if before_escaped else [_STAR])
            continue
        rx = []
        for tok in tokens:
            if tok[0] == "star":
                if not rx or rx[-1] != b".*":
                    rx.append(b".*")
            elif tok[0] == "one":
                rx.append(b".")
            elif tok[0] == "set":
                if not tok[1]:
                    rx = None
                    break
                rx.append(b"[" + b"".join(re.escape(bytes([b])) for b in sorted(tok[1])) + b"]")
            else:
                rx.append(re.escape(bytes([tok[1]])))
        out.append(_NEVER if rx is None or not rx else re.compile(b"".join(rx), re.S))
    if out and out[-1] is _STAR:  # trailing `/**`: one component or more
        out[-1:] = [_ANY, _STAR]
    return out


class Pattern:
    """One line of a .gitignore file."""

    __slots__ = ("line", "negated", "dir_only", "basename", "alternatives", "_known", "steps")

    def __init__(self, line: bytes, negated: bool, dir_only: bool, basename: bool, alternatives: list[list]):
        self.line, self.negated, self.dir_only, self.basename = line, negated, dir_only, basename
        self.alternatives = alternatives  # the pattern's component lists (one, but for git's prefix reading)
        self._known: dict[tuple[int, int, bytes], bool] = {}
        self.steps = 0  # component-against-name matches made (the work, for budget tests)

    def _fits(self, alt: int, k: int, name: bytes) -> bool:
        key = (alt, k, name)
        hit = self._known.get(key)
        if hit is None:
            self.steps += 1
            hit = self._known[key] = self.alternatives[alt][k].fullmatch(name) is not None
            if len(self._known) > 100_000:
                self._known.clear()
        return hit

    @staticmethod
    def _closure(parts: list, states: set[int]) -> set[int]:
        todo = list(states)
        while todo:
            j = todo.pop()
            if j < len(parts) and parts[j] is _STAR and j + 1 not in states:
                states.add(j + 1)
                todo.append(j + 1)
        return states

    def _walk(self, alt: int, names: list[bytes]) -> bool:
        parts = self.alternatives[alt]
        end = len(parts)
        states = self._closure(parts, {0})
        for name in names:
            nxt: set[int] = set()
            for j in states:
                if j == end:
                    continue
                if parts[j] is _STAR:
                    nxt.add(j)
                elif self._fits(alt, j, name):
                    nxt.add(j + 1)
            if not nxt:
                return False
            states = self._closure(parts, nxt)
        return end in states

    def matches(self, names: list[bytes], is_dir: bool) -> bool:
        """Whether this line names the path `names` (relative to its file's folder)."""
        if self.dir_only and not is_dir:
            return False
        if self.basename:
            return self._fits(0, 0, names[-1])
        return any(self._walk(alt, names) for alt in range(len(self.alternatives)))


_SPECIAL = re.compile(rb"[*?\\[\\\\]")


def _alternatives(body: bytes) -> list[list]:
    """The component lists of pathname pattern `body` (leading `/` dropped). git compares
    the literal text before the first wildcard byte first and wildmatches the rest alone, so
    a `**` right after a literal prefix that ends inside a name (`a**/k`, `x/a**`) reads as
    a `**` at the start: `a` + (`k` | any text + `/k`), that is `ak` or `a*/**/k`."""
    special = _SPECIAL.search(body)
    cut = special.start() if special else len(body)
    if 0 < cut and body[cut - 1] != 0x2F and body.startswith(b"**", cut):
        stop = cut
        while stop < len(body) and body[stop] == 0x2A:
            stop += 1
        after = body[stop:]
        prefix = body[:cut]
        if not after:
            return _alternatives(prefix + b"*") + _alternatives(prefix + b"*/**")
        if after.startswith(b"/"):
            rest = after[1:]
            return _alternatives(prefix + rest) + _alternatives(prefix + b"*/**/" + rest)
        if after.startswith(b"\\/"):  # no folder-less reading after `\\/`
            return _alternatives(prefix + b"*/**/" + after[2:])
    try:
        return [_components(body)]
    except _Never:
        return [[_NEVER]]


def parse_line(raw: bytes) -> Pattern | None:
    """The pattern of one .gitignore line, or None for a blank or comment line."""
    if raw.endswith(b"\r"):  # git drops one CR at the end of a line (CRLF files), then trailing spaces
        raw = raw[:-1]
    if not raw or raw[:1] == b"#":
        return None
    line = _trim_trailing_spaces(raw)
    if not line:
        return None
    body, negated = line, False
    if body[:1] == b"!":
        body, negated = body[1:], True
    dir_only = body.endswith(b"/")
    if dir_only:
        body = body[:-1]
    basename = b"/" not in body
    if body.startswith(b"/"):
        body = body[1:]
    if not body:
        return Pattern(line, negated, dir_only, basename, [[_NEVER]])
    if basename:  # against the name alone, where `**` is `*`
        try:
            parts = _components(body)
        except _Never:
            parts = [_NEVER]
        return Pattern(line, negated, dir_only, True, [[_ANY] if parts[:1] == [_ANY] else parts])
    return Pattern(line, negated, dir_only, False, _alternatives(body))


class IgnoreFile:
    """The patterns of one .gitignore file, in order."""

    def __init__(self, data: bytes):
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        self.patterns = [p for p in (parse_line(ln) for ln in data.split(b"\n")) if p is not None]

    @classmethod
    def from_lines(cls, lines: list[bytes]) -> "IgnoreFile":
        """The file of these lines (already split at `\\n`, the BOM already dropped)."""
        made = cls(b"")
        made.patterns = [p for p in (parse_line(ln) for ln in lines) if p is not None]
        return made

    def verdict(self, names: list[bytes], is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` line; None: no line names it."""
        for pattern in reversed(self.patterns):
            if pattern.matches(names, is_dir):
                return not pattern.negated
        return None


def ignored_path(chain: list[tuple[list[bytes], IgnoreFile]], is_dir: bool) -> bool:
    """git's answer for one path whose folders are not ignored: `chain` holds, from the top
    down, each .gitignore file that applies with the path's components relative to it."""
    for names, spec in reversed(chain):
        answer = spec.verdict(names, is_dir)
        if answer is not None:
            return answer
    return False


# ---- the `exclude` setting: pathspec's reading, matched in linear time ----------------------
#
# The configured excludes keep pathspec's reading of gitignore lines (docs/threat-model.md),
# but not its matching: pathspec turns a pattern into a regular expression that Python's
# backtracking engine runs (`(?:.+/)?` for a leading `**`, `(?:/.+)?` for a middle one,
# `[^/]*` for a `*`), whose combinations backtrack polynomially in the path length with the
# number of stars as the degree (`**/*a*a/**/*a*a/**/*a*ac` on 30 nested 40-letter folders:
# minutes per match). `linear_spec` keeps pathspec's parse and its rule for which pattern
# wins (negation, the folder marker) and swaps each pattern's expression for a
# `ComponentMatcher`, which walks the path one component at a time like `Pattern` above:
# (pattern pieces) x (path components) matches of one piece against one name, each piece
# with at most MAX_STARS_PER_PART stars and each result kept. An expression of another shape
# than the ones pathspec writes keeps its regex (those have no `**`, so their cost is what
# bounded_patterns already limits).

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


def linear_spec(lines: list[str]):
    """pathspec.GitIgnoreSpec of `lines`, each pattern matched by a ComponentMatcher."""
    import pathspec  # only when a walk starts: not on `portlint --help` or a server's start

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if regex is not None and not isinstance(regex, ComponentMatcher):
            matcher = component_matcher(regex.pattern)
            if matcher is not None:
                pattern.regex = matcher
    return spec
