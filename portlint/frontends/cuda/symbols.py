"""Names in CUDA/C++ code, outside comments and string literals.

Many NVIDIA-only features are spelled as identifiers (`CUtensorMap`, `__cluster_dims__`,
`wmma::fragment`, `__dp4a`). tree-sitter does not parse macro bodies, so these rules match
names on the text with comments and string/char literals blanked out (offsets kept), which
also sees names used inside `#define` bodies. A name the file defines itself (a function
or a macro of that name, typically a HIP shim such as `#define __trap() abort()`) is the
file's own and is not a finding."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterable

from portlint.frontends.cuda.platform_macros import names_vendor
from portlint.core.model import Span

_NOISE = re.compile(
    r"//[^\n]*"
    r"|/\*.*?\*/"
    r"|R\"(?P<delim>[^(\s\"\\]{0,16})\(.*?\)(?P=delim)\""
    r"|\"(?:\\.|[^\"\\\n])*\""
    r"|'(?:\\.|[^'\\\n])*'",
    re.S,
)
# Both run over every file and header, so they are spelled for the regex engine: each starts
# with a byte class or literal (a word boundary before a word byte `x` is `x(?<!\wx)`), which
# lets the engine skip to the bytes that can start a match, and the function pattern's
# repeats are possessive (`*+`): giving back what a repeat took can never lead to a match
# there (the next byte would be one the repeat accepts, which the pattern after it rejects).
# Same matches as `\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)...` and
# `\b(?:struct|class|union)\s+...`, at a fraction of the cost.
_FUNC_DEF = re.compile(
    r"([A-Za-z_](?<!\w[A-Za-z_])\w*+)\s*+\((?:[^;{}()]*+(?:\([^;{}()]*+\)[^;{}()]*+)*+)\)"
    r"\s*+(?:const\s*+)?(?:noexcept\s*+)?\{"
)
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "catch", "defined"}
_TYPE_DEF = re.compile(
    r"(?:s(?<!\ws)truct|c(?<!\wc)lass|u(?<!\wu)nion)\s+(?:alignas\s*\([^()]*\)\s*)?([A-Za-z_]\w*)\s*(?:final\s*)?[:{]"
)


@dataclass
class CodeText:
    code: str  # the file text with comments and literals replaced by spaces
    line_starts: list[int]
    own_names: set[str]  # functions and macros the file defines
    strings: list[tuple[int, int, str]]  # (start, end, body) of each string literal

    def offset(self, line: int, col: int) -> int:
        """1-based line and code-point column -> offset in `code`."""
        return self.line_starts[line - 1] + col - 1 if 0 < line <= len(self.line_starts) else len(self.code)

    def span(self, start: int, end: int) -> Span:
        line = bisect_right(self.line_starts, start)
        end_line = bisect_right(self.line_starts, end)
        return Span(line, start - self.line_starts[line - 1] + 1, end_line, end - self.line_starts[end_line - 1] + 1)

    def line_of(self, offset: int) -> int:
        return bisect_right(self.line_starts, offset)


def _blank(match: re.Match) -> str:
    tok = match.group(0)
    if "\n" not in tok:
        return " " * len(tok)
    return "\n".join(" " * len(part) for part in tok.split("\n"))


def code_text(ctx) -> CodeText:
    """ctx.fact(code_text): the file with comments and literals blanked, and its own names."""
    text = ctx.text
    strings = []
    for m in _NOISE.finditer(text):
        tok = m.group(0)
        if tok.startswith('"'):
            strings.append((m.start(), m.end(), tok[1:-1]))
        elif tok.startswith('R"'):
            body = tok[2:-1]
            delim = m.group("delim") or ""
            strings.append((m.start(), m.end(), body[len(delim) + 1 : len(body) - len(delim) - 1]))
    code = _NOISE.sub(_blank, text)
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    from portlint.frontends.cuda.includes import file_directives

    own = _own_names(code, ctx.fact(file_directives))
    own |= _header_names(ctx)
    return CodeText(code, starts, own, strings)


def _own_names(code: str, found_directives, functions: bool = True) -> set[str]:
    """Macros (from the directives) and, with `functions`, functions (from the code) a text
    defines."""
    from portlint.frontends.cuda.preprocessor import defined_name

    own = {head[0] for d in found_directives if d.kind == "define" for head in [defined_name(d)] if head}
    if functions:
        # a constructor (`GmmaDescriptor() noexcept {`) is not a function of that name: the
        # type it builds is (CUTLASS's own headers, a copy of one) what the name tables list
        types = set(_TYPE_DEF.findall(code)) if "struct" in code or "class" in code or "union" in code else set()
        own.update(n for n in _FUNC_DEF.findall(code) if n not in _KEYWORDS and n not in types)
    return own




def _header_names(ctx) -> set[str]:
    """Names defined by the headers the file reaches through the scan's include graph (a
    vendor shim header that maps `__trap` or `__vsubss4` for HIP makes their uses the
    project's own). Each header's names are read once per scan."""
    from portlint.frontends.cuda.includes import file_reach, graph_of

    reach = ctx.fact(file_reach)
    if reach is None or not reach.headers:
        return set()

    def names_of(h) -> set[str]:
        # a macro that redefines a name is the project's (`#define __trap() abort()`);
        # a function body is a port's shim only in a header that knows the AMD build:
        # a library header (CUTLASS's elect_one_sync, a vendored CuTe) that implements
        # an NVIDIA-only function does not make its uses the project's own
        if h is None:
            return set()
        return _own_names(_NOISE.sub(_blank, h.text), h.directives, functions=names_vendor(h.text))

    return graph_of(ctx).names_in_headers(reach, "own-names", names_of)


def _split_alternatives(src: str) -> list[str]:
    """Top-level `|` alternatives of a regex source."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(src):
        ch = src[i]
        if ch == "\\":
            cur.append(src[i : i + 2])
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


_LEAD = re.compile(r"^(?:\\b|\(\?<![^)]*\))+")


def literal_needles(src: str) -> tuple[str, ...] | None:
    """Literal prefixes one of which every match of `src` contains (a cheap substring test
    before the regex runs), or None when some alternative has no usable literal."""
    alternatives = _split_alternatives(src)
    m = re.fullmatch(r"\\b\(\?:(.*)\)\\b", src)
    if m and len(alternatives) == 1:  # words(): \b(?:a|b|c)\b
        alternatives = _split_alternatives(m.group(1))
    needles: list[str] = []
    for alt in alternatives:
        alt = _LEAD.sub("", alt)
        group = re.fullmatch(r"\(\?:(.*)\)(?:\\b)?", alt)
        if group and len(_split_alternatives(alt)) == 1:
            inner = literal_needles(group.group(1))
            if inner is None:
                return None
            needles.extend(inner)
            continue
        lit = re.match(r"(?:[A-Za-z0-9_:]|\\[.])+", alt)
        text = lit.group().replace("\\", "") if lit else ""
        if len(text) < 3:
            return None
        needles.append(text)
    return tuple(needles)


_CASE_FLAG = re.compile(r"\(\?[aiLmsux-]*i")  # (?i) or a scoped (?i:...) anywhere


def required_literals(src: str) -> tuple[str, ...] | None:
    """Strings one of which every match of the regex `src` contains, read from its parse
    tree: a run of literal characters (through alternations of plain words: `SM(?:70|80)_`
    gives SM70_ and SM80_); for an alternation, one string per branch; the body of a group
    or of a repeat that runs at least once. None when no such set of strings of 3
    characters or more is found, or when the pattern ignores case anywhere. Where
    `literal_needles` (which reads the source text) gives up, on `\\b(?:cg|cooperative_groups)::x`
    say, this finds `::x`."""
    from re import _constants as C, _parser

    if _CASE_FLAG.search(src):
        return None
    try:
        parsed = _parser.parse(src)
    except Exception:  # noqa: BLE001 - a pattern this cannot read is simply not pre-filtered
        return None
    if parsed.state.flags & C.SRE_FLAG_IGNORECASE:
        return None
    repeats = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)

    def literal_branch(av) -> list[str] | None:
        """The alternatives of a branch whose every alternative is plain literal text."""
        texts = []
        for alt in av[1]:
            if any(op is not C.LITERAL for op, _ in alt):
                return None
            texts.append("".join(chr(c) for _, c in alt))
        return texts

    def of_sequence(items) -> tuple[str, ...] | None:
        options: list[tuple[str, ...]] = []
        run = [""]  # the literal text just matched, one string per way it can read
        for op, av in items:
            if op is C.LITERAL:
                run = [r + chr(av) for r in run]
                continue
            texts = literal_branch(av) if op is C.BRANCH else None
            if texts is not None and len(run) * len(texts) <= 64:  # `SM(?:70|80)_`: SM70_, SM80_
                run = [r + t for r in run for t in texts]
                continue
            if run != [""]:  # any other element ends the run, zero-width ones included
                options.append(tuple(sorted(set(run))))
            run = [""]
            inner = None
            if op is C.SUBPATTERN:
                inner = of_sequence(av[3])
            elif op is C.ATOMIC_GROUP:
                inner = of_sequence(av)
            elif op in repeats and av[0] >= 1:
                inner = of_sequence(av[2])
            elif op is C.BRANCH:
                branches = [of_sequence(b) for b in av[1]]
                if all(b is not None for b in branches):
                    inner = tuple(sorted({s for b in branches for s in b}))
            if inner is not None:
                options.append(inner)
        if run != [""]:
            options.append(tuple(sorted(set(run))))
        usable = [o for o in options if min(map(len, o)) >= 3]
        # the most selective: the longest shortest string, then the fewest strings
        return max(usable, key=lambda o: (min(map(len, o)), -len(o))) if usable else None

    return of_sequence(parsed.data)


@dataclass(frozen=True)
class NameRule:
    """A pattern of names and what to say about a match."""

    pattern: re.Pattern
    advice: str | Callable[[str], str]
    # the match text that names the construct (group 0 by default)
    group: int | str = 0

    def advise(self, name: str) -> str:
        return self.advice(name) if callable(self.advice) else self.advice

    def may_match(self, code: str) -> bool:
        needles = _NEEDLES.get(self.pattern.pattern, ...)
        if needles is ...:
            needles = _NEEDLES[self.pattern.pattern] = literal_needles(self.pattern.pattern)
        return needles is None or any(n in code for n in needles)


_NEEDLES: dict[str, tuple[str, ...] | None] = {}


def name_hits(ctx, rules: Iterable[NameRule], skip: list[tuple[int, int]] = ()) -> list[tuple[Span, str, NameRule]]:
    """Matches of the patterns in code (not comments/strings), first match per line only,
    skipping names the file defines itself and matches inside the `skip` offset ranges."""
    ct = ctx.fact(code_text)
    found: dict[int, tuple[int, Span, str, NameRule]] = {}
    ranges = sorted(skip)
    starts = [a for a, _ in ranges]

    def skipped(pos: int) -> bool:
        i = bisect_right(starts, pos) - 1
        return i >= 0 and pos < ranges[i][1]

    for rule in rules:
        if not rule.may_match(ct.code):
            continue
        for m in rule.pattern.finditer(ct.code):
            name = m.group(rule.group)
            idents = re.findall(r"[A-Za-z_]\w*", name)
            if name in ct.own_names or (idents and idents[-1] in ct.own_names):
                continue
            start, end = m.span(rule.group)
            if ranges and skipped(start):
                continue
            line = ct.line_of(start)
            if line in found and found[line][0] <= start:
                continue
            found[line] = (start, ct.span(start, end), name, rule)
    return [(span, name, rule) for _, (_, span, name, rule) in sorted(found.items())]


def words(*names: str) -> str:
    """A regex alternation of exact identifiers."""
    return r"\b(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b"
