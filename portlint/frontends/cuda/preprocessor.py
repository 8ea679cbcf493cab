"""The preprocessor model: one directive tokenizer and one #if evaluator for every consumer.

`directives(text)` turns a C/C++/CUDA text into its directives as the compiler's
translation phases leave them (line splices joined, comments one space, string and raw string
literals skipped, `%:` read as `#`; physical line numbers kept). Every module that needs `#include`, `#define` or
`#if` lines reads them from here: the include graph, the guard map, the shim and
withheld-macro checks, the libclang pass key.

`evaluate(expr, macro_state)` is a three-valued `#if` evaluator: True, False or None
(unknown). What it knows about a macro comes from `macro_state(name)`, so one evaluator
answers for any build: a `Platform` says which macros a compiler defines (HIP-Clang for
gfx90a, nvcc for sm_90) and which it leaves undefined; `GuardMap` (portlint/frontends/cuda/guards.py)
adds the file's own #defines and those of its headers. `choose(conds, evaluate)` picks the
branch of one `#if` group a compiler takes."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Mapping, NamedTuple


class Directive(NamedTuple):
    first: int  # first physical line (1-based)
    last: int  # last physical line (backslash continuations)
    kind: str  # if, ifdef, ifndef, elif, elifdef, elifndef, else, endif, define, undef, include
    rest: str  # the text after the keyword, comments removed, stripped


_KINDS = frozenset(("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif", "define", "undef", "include", "error"))
_COMMENT_OR_STRING = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", re.S)
_INCLUDE_TARGET = re.compile(r'([<"])([^>"\n]+)[>"]')
_DEFINE_HEAD = re.compile(r"([A-Za-z_]\w*)(\()?")


def blank_comments(text: str) -> str:
    """Comments replaced by spaces (newlines kept), so a `#if` inside a block comment is not
    a directive and line numbers do not move. String literals are matched (so a `/*` inside
    one opens nothing) and kept."""

    def blank(m: re.Match) -> str:
        s = m.group(0)
        if s[0] in "\"'":
            return s
        return re.sub(r"[^\n]", " ", s)

    if "/" not in text:
        return text
    return _COMMENT_OR_STRING.sub(blank, text)


def logical_lines(text: str):
    """(first line, last line, joined text) for each logical line (backslash continuations).

    Lines are split on LF only, as FileContext and tree-sitter count them."""
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    i = 0
    while i < len(lines):
        start = i
        buf = lines[i]
        while buf.endswith("\\") and i + 1 < len(lines):
            i += 1
            buf = buf[:-1] + " " + lines[i]
        yield start + 1, i + 1, buf
        i += 1


# Translation phases 2 and 3 as the compiler runs them before it reads a directive: a
# backslash-newline (gcc and clang also accept blanks between the two) joins two lines, a
# comment is one space (so `#if 0 /* ...\n */ || 1` is one directive and `#/**/if` an #if),
# string, character and raw string literals are text (a raw string may span lines: a `#if`
# inside it is no directive), and `%:` is the digraph of `#`.
_SPLICE = re.compile(r"\\[ \t]*\r?\n")
_LEXEME = re.compile(r"""
    (?P<nl>\n(?:[^\n"'/\#%]*\n)*)  # a newline, and the lines after it that hold no token
  | (?P<raw>(?<![\w$])(?:u8|[uUL])?R"(?P<delim>[^\s()\\"]{0,16})\()
  | (?P<str>"(?:[^"\\\n]|\\.)*"?)
  | (?P<chr>(?<![\w$])(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'?)
  | (?P<block>/\*)
  | (?P<line>//)
  | (?P<hash>\#|%:)
""", re.X)
_BLANKS = " \t\f\v\r"
_NAME = re.compile(r"[A-Za-z_]\w*")


def _splices(text: str) -> tuple[str, list[int], list[int]]:
    """The text with its line splices removed, the offsets (in it) where each was removed,
    and the characters removed up to and including each."""
    if "\\" not in text:
        return text, [], []
    cut_at: list[int] = []
    removed: list[int] = []
    pieces = []
    prev = gone = 0
    for m in _SPLICE.finditer(text):
        pieces.append(text[prev:m.start()])
        gone += m.end() - m.start()
        cut_at.append(m.start() - (gone - (m.end() - m.start())))
        removed.append(gone)
        prev = m.end()
    if not cut_at:
        return text, [], []
    pieces.append(text[prev:])
    return "".join(pieces), cut_at, removed


def directives(text: str) -> tuple[Directive, ...]:
    """The directives of a source text, in order, read as the preprocessor reads them (line
    splices joined, comments one space, literals skipped, `%:` for `#`); `first` and `last`
    are physical lines (1-based). `directives_reference` is the same reading done the slow,
    obvious way, character by character."""
    if "#" not in text and "%:" not in text:
        return ()
    s, cut_at, removed = _splices(text)
    line, counted = 1, 0  # physical line of original offset `counted`

    def line_of(offset: int) -> int:
        nonlocal line, counted
        if cut_at:
            j = bisect_right(cut_at, offset)
            offset += removed[j - 1] if j else 0
        line += text.count("\n", counted, offset)
        counted = offset
        return line

    out = []
    n = len(s)
    pos = 0
    unclosed: dict[str, int] = {}  # raw-string delimiter -> the earliest position no close follows
    at_start = True  # nothing but blanks and comments since the last newline
    directive = None  # (first line, kind, pieces of its text) while one is read
    search = _LEXEME.search
    while True:
        m = search(s, pos)
        start = n if m is None else m.start()
        if directive is not None:
            directive[2].append(s[pos:start])
        elif at_start and pos < start and s[pos:start].strip(_BLANKS):
            at_start = False
        if m is None:
            break
        kind = m.lastgroup
        end = m.end()
        if kind == "nl":
            if directive is not None:
                out.append(Directive(directive[0], line_of(start), directive[1], "".join(directive[2]).strip()))
                directive = None
            at_start = True
        elif kind == "block":
            close = s.find("*/", end)
            end = n if close == -1 else close + 2
            if directive is not None:
                directive[2].append(" ")
        elif kind == "line":
            close = s.find("\n", end)
            end = n if close == -1 else close
        elif kind == "hash" and at_start and directive is None:
            at_start = False
            p = end
            while True:  # blanks and comments between the `#` and the directive's name
                while p < n and s[p] in _BLANKS:
                    p += 1
                if not s.startswith("/*", p):
                    break
                close = s.find("*/", p + 2)
                p = n if close == -1 else close + 2
            name = _NAME.match(s, p)
            if name and name.group(0) in _KINDS:
                directive = (line_of(start), name.group(0), [])
                end = name.end()
        else:
            if kind == "raw":
                delim = m.group("delim")
                # a delimiter not found after some position is found after no later one: each
                # is searched for at most once to the end, so unterminated raw strings cost
                # one pass, not one per opening
                close = -1 if unclosed.get(delim, n + 1) <= end else s.find(")" + delim + '"', end)
                if close == -1:
                    unclosed[delim] = min(unclosed.get(delim, n + 1), end)
                # an unterminated one is no raw string: its `"` opens an ordinary one
                end = m.start("delim") - 1 if close == -1 else close + len(delim) + 2
            if directive is not None:
                directive[2].append(s[start:end])
            at_start = False
        pos = end
    if directive is not None:
        out.append(Directive(directive[0], line_of(n), directive[1], "".join(directive[2]).strip()))
    return tuple(out)


def directives_reference(text: str) -> tuple[Directive, ...]:
    """The same directives read the slow, obvious way: phase 2 character by character (each
    character kept with its physical line), then phase 3 one character at a time, then every
    logical line tried as a directive. The tests check `directives` against it."""
    flat, lines = [], []
    i, ln = 0, 1
    while i < len(text):
        m = _SPLICE.match(text, i) if text[i] == "\\" else None
        if m:
            i, ln = m.end(), ln + 1
            continue
        flat.append(text[i])
        lines.append(ln)
        ln += text[i] == "\n"
        i += 1
    s = "".join(flat)

    def word(k: int) -> bool:  # is s[k] part of an identifier (False before the text)?
        return k >= 0 and (s[k].isalnum() or s[k] in "_$")

    def literal_prefix(k: int, opener: str) -> int:
        """Length of the literal that opens at k (`opener` after an optional prefix), or 0."""
        for prefix in ("", "u8", "u", "U", "L"):
            if s.startswith(prefix + opener, k) and not word(k - 1):
                return len(prefix) + len(opener)
        return 0

    logical: list[list[int]] = [[]]  # per logical line, the indices into s it keeps (-1: a space)
    k = 0
    while k < len(s):
        c = s[k]
        if c == "\n":
            logical[-1].append(k)
            logical.append([])
            k += 1
        elif s.startswith("/*", k):
            close = s.find("*/", k + 2)
            logical[-1].append(-1 - k)  # one space, on the comment's first line
            k = len(s) if close == -1 else close + 2
        elif s.startswith("//", k):
            while k < len(s) and s[k] != "\n":
                k += 1
        elif (n := literal_prefix(k, 'R"')) and (m := re.match(r'([^\s()\\"]{0,16})\(', s[k + n:])) \
                and (close := s.find(")" + m.group(1) + '"', k + n + m.end())) != -1:
            stop = close + len(m.group(1)) + 2
            logical[-1].extend(range(k, stop))
            k = stop
        elif c == '"' or (n := literal_prefix(k, "'")):
            quote, j = ('"', k + 1) if c == '"' else ("'", k + n)
            while j < len(s) and s[j] not in (quote, "\n"):
                j += 2 if s[j] == "\\" and j + 1 < len(s) and s[j + 1] != "\n" else 1
            if j < len(s) and s[j] == quote:
                j += 1
            logical[-1].extend(range(k, j))
            k = j
        else:
            logical[-1].append(k)
            k += 1
    out = []
    for kept in logical:
        joined = "".join(" " if x < 0 else s[x] for x in kept)
        m = re.match(r"[ \t\f\v\r]*(#|%:)[ \t\f\v\r]*([A-Za-z_]\w*)", joined)
        if not m or m.group(2) not in _KINDS:
            continue
        at = kept[m.start(1)]
        last = lines[kept[-1]] if kept[-1] >= 0 and s[kept[-1]] == "\n" else text.count("\n") + 1  # else at the end
        out.append(Directive(lines[at], last, m.group(2), joined[m.end():].strip()))
    return tuple(out)


def include_target(d: Directive) -> tuple[str, str] | None:
    """(`"` or `<`, name) of an #include directive; None for a computed include."""
    if d.kind != "include":
        return None
    m = _INCLUDE_TARGET.match(d.rest)
    return (m.group(1), m.group(2).strip()) if m else None


def includes(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(t for d in directives(text) if d.kind == "include" for t in [include_target(d)] if t)


def defined_name(d: Directive) -> tuple[str, bool, str] | None:
    """(name, function-like, body) of a #define; (name, False, "") of an #undef."""
    if d.kind not in ("define", "undef"):
        return None
    m = _DEFINE_HEAD.match(d.rest)
    if not m:
        return None
    function_like = m.group(2) is not None
    return m.group(1), function_like, d.rest[m.end():].strip() if d.kind == "define" else ""


def condition_macro(d: Directive) -> str:
    """The macro an #ifdef/#ifndef/#elifdef/#elifndef tests ("" when missing)."""
    parts = d.rest.split()
    return parts[0] if parts else ""


# ---- platforms --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Platform:
    """What one compiler defines: name -> value (None: defined, value unknown), and the
    macros it leaves undefined. Any other macro is unknown unless the file or its headers
    define it."""

    name: str
    defined: Mapping[str, int | None]
    undefined: frozenset[str]
    vendor: str = "nvidia"  # whose build it is: a project platform macro of this side is defined

    def macro_state(self, name: str) -> object:
        """What this compiler alone says of `name` (a MacroState answer): its value, True
        (defined, value unknown), False (left undefined) or "unknown"."""
        if name in self.defined:
            v = self.defined[name]
            return True if v is None else v
        return False if name in self.undefined else "unknown"


_HIP_MACROS = {
    "__HIP_PLATFORM_AMD__": 1, "__HIP_PLATFORM_HCC__": 1, "__HIPCC__": 1, "__HIP__": 1,
    "USE_ROCM": 1, "GGML_USE_HIP": 1, "USE_AMD_ROCM": 1, "__HIP_PLATFORM_AMD": 1,
    "HIP_VERSION": None, "TORCH_HIP_VERSION": None, "ROCM_VERSION": None, "__AMDGCN_WAVEFRONT_SIZE": None,
}
_CUDA_MACROS = {
    "__CUDA_ARCH__", "__CUDACC__", "__NVCC__", "__CUDACC_RTC__", "__HIP_PLATFORM_NVIDIA__",
    "__HIP_PLATFORM_NVCC__", "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__", "__CUDA_ARCH_FEAT_SM90_ALL", "__CUDA_ARCH_FEAT_SM100_ALL",
    "__CUDA_ARCH_SPECIFIC__", "__CUDA_ARCH_FAMILY_SPECIFIC__", "USE_CUDA_NVIDIA", "__CUDA__",
}

# HIP-Clang compiling device code for gfx90a, as ROCm ports build it (value, or None =
# defined with an unknown value). The device pass is the one device-code findings are about.
# Builds are modelled on Linux: no MSVC (`_MSC_VER`); HIP-Clang is a clang.
_NOT_ON_LINUX = frozenset({"_MSC_VER"})
AMD = Platform(
    "AMD",
    {**_HIP_MACROS, "__HIP_DEVICE_COMPILE__": 1, "__clang__": 1},
    frozenset(_CUDA_MACROS | _NOT_ON_LINUX | {"GGML_USE_MUSA", "__NVCOMPILER"}),
    "amd",
)

# An AMD build known only by what names a vendor: the AMD macros defined, NVIDIA's compiler
# identification macros (nvcc, NVRTC, nvc++, HIP's NVIDIA platform) undefined, and every
# arch or version macro (`__CUDA_ARCH__`, `CUDART_VERSION`) unknown. A line this build
# skips is left out of AMD builds by a condition that names the vendor — `#ifndef USE_ROCM`,
# `!defined(__HIP_PLATFORM_AMD__) && __CUDA_ARCH__ >= 800`, a feature macro #defined only
# under `!defined(GGML_USE_HIP)`, a `__CUDA_ARCH__` a HIP vendor header sets — a choice the
# project made, unlike `#if __CUDA_ARCH__ >= 800` alone, which drops the code on AMD only
# because HIP-Clang leaves `__CUDA_ARCH__` undefined.
NVIDIA_TOOLCHAIN = frozenset({"__NVCC__", "__CUDACC_RTC__", "__NVCOMPILER", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"})
AMD_BY_VENDOR = Platform("AMD-by-vendor", AMD.defined, NVIDIA_TOOLCHAIN, "amd")
# nvcc compiling device code for sm_90a.
SM90 = Platform(
    "sm_90",
    {"__CUDA_ARCH__": 900, "__CUDACC__": 1, "__NVCC__": 1, "__CUDA_ARCH_FEAT_SM90_ALL": 1, "CUDA_VERSION": None,
     "CUDART_VERSION": None, "__CUDACC_VER_MAJOR__": 12, "__CUDACC_VER_MINOR__": 8, "__CUDA__": 1},
    frozenset({*_HIP_MACROS, *_NOT_ON_LINUX, "__HIP_DEVICE_COMPILE__", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__",
               "__CUDA_ARCH_FEAT_SM100_ALL", "__CUDACC_RTC__", "GGML_USE_MUSA", "__NVCOMPILER"}),
    "nvidia",
)

# nvcc, either pass (host or device, any arch): what every NVIDIA build has in common.
NVIDIA = Platform(
    "NVIDIA",
    {"__CUDACC__": 1, "__NVCC__": 1, "CUDA_VERSION": None, "CUDART_VERSION": None, "__CUDACC_VER_MAJOR__": None,
     "__CUDACC_VER_MINOR__": None},
    frozenset({*_HIP_MACROS, *_NOT_ON_LINUX, "__HIP_DEVICE_COMPILE__", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__",
               "__CUDACC_RTC__", "GGML_USE_MUSA", "__NVCOMPILER"}),
    "nvidia",
)


# ---- evaluation ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(defined)\b|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|<<|>>|[!<>()+\-*/%]))")
_PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4, "<<": 5, ">>": 5, "+": 6, "-": 6, "*": 7, "/": 7, "%": 7}

# What a macro_state callback answers: an int value, True (defined, value unknown), False
# (not defined), "unknown", or "switch": defined to a value that is true in `#if X`
# (a project's vendor switch such as `#if FOO_USE_HIP` in the build it selects) but whose
# number is unknown, so `FOO_USE_HIP >= 2` stays unknown.
MacroState = Callable[[str], object]
SWITCH = "switch"


class _NonZero:
    """The value of a switch macro: true as a condition, no known number."""

    def __repr__(self) -> str:
        return "<nonzero>"


_ON = _NonZero()

# An #if expression nests at most this deep (parentheses, `!`, unary `-`): a condition of
# 5,000 `(` is not code anyone compiles, and the recursive descent must not reach Python's
# recursion limit. Values are the preprocessor's intmax_t: a result outside 64 bits is
# unknown (a `*` or `<<` chain must not build a million-digit integer).
MAX_EXPRESSION_DEPTH = 100
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1


class ExpressionTooDeep(Exception):
    """An expression (or the macros it expands) nests beyond what the evaluator walks; the
    caller treats the condition as unknown and says so."""


class _Parser:
    def __init__(self, text: str, macro_state: MacroState):
        self.toks = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ValueError("unparsed")
            pos = m.end()
            self.toks.append(m.groups())
        self.i = 0
        self.depth = 0
        self.macro_state = macro_state

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def op(self):
        t = self.peek()
        return t[3] if t else None

    def take(self):
        t = self.peek()
        self.i += 1
        return t

    def run(self):
        value = self.expr(0)
        if self.i != len(self.toks):
            raise ValueError("trailing tokens")
        return value

    def expr(self, min_prec):
        left = self.unary()
        while True:
            op = self.op()
            prec = _PREC.get(op or "")
            if prec is None or prec <= min_prec:
                break
            self.take()
            right = self.expr(prec)
            left = _binop(op, left, right)
        return left

    def unary(self):
        self.depth += 1
        try:
            return self._unary()
        finally:
            self.depth -= 1

    def _unary(self):
        if self.depth > MAX_EXPRESSION_DEPTH:
            raise ExpressionTooDeep(f"more than {MAX_EXPRESSION_DEPTH} nested parentheses or operators")
        tok = self.take()
        if tok is None:
            raise ValueError("unexpected end")
        num, defined, ident, op = tok
        if num is not None:
            return int(num, 16) if num[:2] in ("0x", "0X") else int(num)
        if defined:
            paren = self.op() == "("
            if paren:
                self.take()
            name = self.take()
            if name is None or name[2] is None:
                raise ValueError("defined needs a name")
            if paren:
                if self.op() != ")":
                    raise ValueError("missing )")
                self.take()
            state = self.macro_state(name[2])
            return None if state == "unknown" else (1 if state is not False else 0)
        if ident is not None:
            if self.op() == "(":  # function-like macro call we cannot evaluate
                depth = 0
                while self.peek() is not None:
                    o = self.take()[3]
                    depth += o == "("
                    depth -= o == ")"
                    if depth == 0:
                        break
                return None
            state = self.macro_state(ident)
            if state is False:
                return 0
            if state == SWITCH:
                return _ON
            if state == "unknown" or state is True:
                return None
            return state
        if op == "!":
            v = self.unary()
            return None if v is None else int(not v)
        if op == "-":
            v = self.unary()
            return None if v is None or v is _ON else -v
        if op == "(":
            v = self.expr(0)
            if self.op() != ")":
                raise ValueError("missing )")
            self.take()
            return v
        raise ValueError(f"unexpected {op}")


def _binop(op, a, b):
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if (a is not None and a != 0) or (b is not None and b != 0):
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None or a is _ON or b is _ON:
        return None
    if op in ("<<", ">>") and not 0 <= b < 64:
        return None  # undefined in C for intmax_t; never a huge integer here
    try:
        value = {
            "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b), ">": lambda: int(a > b),
            "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "<<": lambda: a << b, ">>": lambda: a >> b,
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b if b else None,
            "%": lambda: a % b if b else None,
        }[op]()
    except (ValueError, OverflowError):
        return None
    return value if value is None or _INT_MIN <= value <= _INT_MAX else None


def evaluate(expr: str, macro_state: MacroState) -> bool | None:
    """Three-valued value of an #if/#elif condition (comments already removed or not).
    Raises ExpressionTooDeep for nesting beyond MAX_EXPRESSION_DEPTH (or beyond Python's
    stack, through macros that expand into each other)."""
    try:
        v = _Parser(re.sub(r"/\*.*?\*/|//.*$", " ", expr), macro_state).run()
    except (ValueError, IndexError, TypeError):
        return None
    except RecursionError as exc:
        raise ExpressionTooDeep("too deep for the evaluator's stack") from exc
    return None if v is None else bool(v)


def integer_value(expr: str, macro_state: MacroState) -> int | None:
    """The number an object-like macro's body stands for in an #if (`(A || B)`, `(32 * 2)`,
    `(__CUDACC_VER_MAJOR__ >= 11)`), or None when unknown or not a preprocessor expression.
    Raises ExpressionTooDeep as `evaluate` does."""
    try:
        v = _Parser(re.sub(r"/\*.*?\*/|//.*$", " ", expr), macro_state).run()
    except (ValueError, IndexError, TypeError):
        return None
    except RecursionError as exc:
        raise ExpressionTooDeep("too deep for the evaluator's stack") from exc
    return v if isinstance(v, int) else None


def names_no_macro(expr: str) -> bool:
    """`#if 0`, `#if 1 && 0`: a condition made of numbers only, the same in every build."""
    return not re.search(r"[A-Za-z_]", re.sub(r"/\*.*?\*/|//.*$|\b0[xX][0-9a-fA-F]+|\b\d+[uUlL]*", " ", expr))


def branch_value(kind: str, rest: str, evaluate_at: Callable[[str], bool | None]) -> bool | None:
    """Value of one branch condition (`#if`/`#elif` expression, `#ifdef`/`#ifndef` name)."""
    if kind in ("if", "elif"):
        return evaluate_at(rest)
    name = rest.split()[0] if rest.split() else ""
    v = evaluate_at(f"defined({name})") if name else None
    if v is None:
        return None
    return v if kind in ("ifdef", "elifdef") else not v


def choose(conds: list[tuple[str, str, int]], evaluate_at: Callable[[str, int], bool | None]) -> int | None:
    """Index of the branch of one #if group (a list of (kind, condition, line)) that a
    compiler takes; len(conds) when it takes none; None when that is unknown."""
    for i, (kind, expr, line) in enumerate(conds):
        if kind == "else":
            return i
        value = branch_value(kind, expr, lambda e, _line=line: evaluate_at(e, _line))
        if value is None:
            return None
        if value:
            return i
    return len(conds)
