"""Preprocessor guards evaluated for an AMD (HIP-Clang) build.

For each line of a CUDA/C++ file, GuardMap says whether an AMD build compiles it: live,
dead, or unknown (a condition on a project macro we cannot resolve). A dead line inside a
branch whose `#if` group also has a live or unknown branch is "ported": the group holds
the HIP alternative beside it, so rocm findings there are not problems.

Conditions are evaluated in three-valued logic: a macro that HIP-Clang defines, one it
does not define, or one we do not know. Macros the file (or a header included from next to
it) #defines in a live branch count as defined; ones defined only in dead branches count as
undefined — this is how `#ifdef USE_ROCM / #define WARP_SIZE 64 / #else ...` shims and
llama.cpp's `#define __CUDA_ARCH__ 1300` under GGML_USE_HIP are followed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# Defined by HIP-Clang or by the build systems of common ROCm ports (value, or None = defined
# with an unknown value).
AMD_DEFINED: dict[str, int | None] = {
    "__HIP_PLATFORM_AMD__": 1, "__HIP_PLATFORM_HCC__": 1, "__HIPCC__": 1, "__HIP__": 1,
    "USE_ROCM": 1, "GGML_USE_HIP": 1, "USE_AMD_ROCM": 1, "__HIP_PLATFORM_AMD": 1,
    "HIP_VERSION": None, "TORCH_HIP_VERSION": None, "ROCM_VERSION": None, "__AMDGCN_WAVEFRONT_SIZE": None,
    # device pass of HIP-Clang: the pass device-code findings are about
    "__HIP_DEVICE_COMPILE__": 1,
}
# Not defined by an AMD build (CUDA compiler and toolkit macros, other vendors).
AMD_UNDEFINED = {
    "__CUDA_ARCH__", "__CUDACC__", "__NVCC__", "__CUDACC_RTC__", "__HIP_PLATFORM_NVIDIA__",
    "__HIP_PLATFORM_NVCC__", "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__", "__CUDA_ARCH_FEAT_SM90_ALL", "__CUDA_ARCH_FEAT_SM100_ALL",
    "__CUDA_ARCH_SPECIFIC__", "__CUDA_ARCH_FAMILY_SPECIFIC__", "GGML_USE_MUSA", "__NVCOMPILER",
    "USE_CUDA_NVIDIA", "__CUDA__",
}

_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef|include)\b(.*)$")
_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(defined)\b|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|<<|>>|[!<>()+\-*/%]))")
_INCLUDE_LOCAL = re.compile(r'^\s*"([^"]+)"')


@dataclass(frozen=True)
class Guard:
    """Why a line is dead for AMD."""

    condition: str  # the directive text, e.g. "#ifndef USE_ROCM"
    line: int  # the directive's line
    has_alternative: bool  # the #if group has a live or unknown branch beside this one
    # the condition names no macro (`#if 0`): no build of any vendor compiles the branch
    never: bool = False

    def reason(self) -> str:
        if self.never:
            return f"never compiled: inside `{self.condition}` (line {self.line})"
        alt = "with a HIP branch beside it" if self.has_alternative else "with no alternative branch"
        return f"not compiled for AMD: inside `{self.condition}` (line {self.line}), {alt}"


class _Eval:
    """Three-valued #if evaluation: ints, or None for unknown."""

    def __init__(self, text: str, macro_state):
        self.toks = []
        pos = 0
        text = re.sub(r"/\*.*?\*/|//.*$", " ", text)
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ValueError("unparsed")
            pos = m.end()
            self.toks.append(m.groups())
        self.i = 0
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

    _PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4, "<<": 5, ">>": 5, "+": 6, "-": 6, "*": 7, "/": 7, "%": 7}

    def expr(self, min_prec):
        left = self.unary()
        while True:
            op = self.op()
            prec = self._PREC.get(op or "")
            if prec is None or prec <= min_prec:
                break
            self.take()
            right = self.expr(prec)
            left = _binop(op, left, right)
        return left

    def unary(self):
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
            if state == "unknown" or state is True:
                return None
            return state
        if op == "!":
            v = self.unary()
            return None if v is None else int(not v)
        if op == "-":
            v = self.unary()
            return None if v is None else -v
        if op == "(":
            v = self.expr(0)
            if self.op() != ")":
                raise ValueError("missing )")
            self.take()
            return v
        raise ValueError(f"unexpected {op}")


def _names_no_macro(expr: str) -> bool:
    """`#if 0`, `#if 1 && 0`: a condition made of numbers only, the same in every build."""
    return not re.search(r"[A-Za-z_]", re.sub(r"/\*.*?\*/|//.*$|\b0[xX][0-9a-fA-F]+|\b\d+[uUlL]*", " ", expr))


def _binop(op, a, b):
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if (a is not None and a != 0) or (b is not None and b != 0):
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None:
        return None
    try:
        return {
            "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b), ">": lambda: int(a > b),
            "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "<<": lambda: a << b, ">>": lambda: a >> b,
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b if b else None,
            "%": lambda: a % b if b else None,
        }[op]()
    except (ValueError, OverflowError):
        return None


def _blank_comments(text: str) -> str:
    """Comments replaced by spaces (newlines kept), so a `#if` inside a block comment is not
    a directive and line numbers do not move. String literals are matched (so a `/*` inside
    one opens nothing) and kept."""

    def blank(m: re.Match) -> str:
        s = m.group(0)
        if s[0] in "\"'":
            return s
        return re.sub(r"[^\n]", " ", s)

    return _COMMENT_OR_STRING.sub(blank, text)


_COMMENT_OR_STRING = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", re.S)


def logical_lines(text: str):
    """(first line number, joined text) for each logical line (backslash continuations).

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


class GuardMap:
    def __init__(self, text: str, path: Path | None = None, header_defines: dict[str, int | None | bool] | None = None):
        self.n_lines = text.count("\n") + 1
        # macro -> list of (line, state) where state is True (live), False (dead), None (unknown)
        self._defs: dict[str, list[tuple[int, bool | None, int | None]]] = {}
        self._header_defines = dict(header_defines or {})
        self._dead: list[Guard | None] = [None] * (self.n_lines + 2)
        self._unknown: list[bool] = [False] * (self.n_lines + 2)
        self.includes: list[str] = []
        self.live_macros: dict[str, str] = {}  # macros #defined where an AMD build compiles them
        self._build(text)

    # -- macro knowledge at a point of the file --
    def _macro_state(self, name: str, line: int):
        """What an AMD build knows about `name` at `line`: an int value, True (defined, value
        unknown), False (not defined) or "unknown". Definitions and #undefs of the file are
        replayed in order; dead ones do not count."""
        defs = [d for d in self._defs.get(name, []) if d[0] < line]
        result: object = None
        for _, state, value, kind in defs:
            if state is False:
                continue
            if state is None:
                result = "unknown"
            elif kind == "define":
                result = value if value is not None else True
            else:
                result = False
        if result is not None:
            return result
        if name in self._header_defines:
            v = self._header_defines[name]
            return "unknown" if v is None else v
        if name in AMD_DEFINED:
            v = AMD_DEFINED[name]
            return True if v is None else v
        if name in AMD_UNDEFINED:
            return False
        if defs:  # defined only in dead branches, and nothing else defines it
            return False
        return "unknown"

    def macro_state(self, name: str, line: int):
        """Public form of the macro knowledge at a line (int, True, False or "unknown")."""
        return self._macro_state(name, line)

    def defines_for_amd(self, name: str, line: int | None = None) -> bool:
        """True when an AMD build sees `name` #defined (here, before `line`, or in a header
        next to the file): used to recognise vendor shims such as
        `#define __shfl_xor_sync(mask, v, o, w) __shfl_xor(v, o, w)` in a HIP branch."""
        st = self._macro_state(name, (line if line is not None else self.n_lines + 1))
        if st == "unknown" or st is False:
            return False
        return name in self._defs or name in self._header_defines

    def header_values(self) -> dict[str, int]:
        """Integer macros the included headers define for an AMD build."""
        return {k: v for k, v in self._header_defines.items() if isinstance(v, int) and not isinstance(v, bool)}

    def evaluate(self, expr: str, line: int) -> bool | None:
        try:
            v = _Eval(expr, lambda n: self._macro_state(n, line)).run()
        except (ValueError, IndexError, TypeError):
            return None
        return None if v is None else bool(v)

    def _build(self, text: str) -> None:
        # stack frames: {id, held, constant} plus the open branch (value, cond, start, dir_line)
        stack: list[dict] = []
        branches: list[tuple[int, int, bool | None, str, int, int]] = []  # (start, end, value, cond, dir_line, frame_id)
        frame_branch_values: dict[int, list[bool | None]] = {}
        frame_counter = 0
        constant_frames: dict[int, bool] = {}

        def current_state() -> bool | None:
            state: bool | None = True
            for fr in stack:
                v = fr["value"]
                if v is False:
                    return False
                if v is None:
                    state = None
            return state

        def open_branch(fr, value, cond, line, last):
            fr["value"] = value
            fr["cond"] = cond
            fr["start"] = last
            fr["dir_line"] = line
            frame_branch_values[fr["id"]].append(value)

        def close_branch(fr, end_line):
            branches.append((fr["start"] + 1, end_line - 1, fr["value"], fr["cond"], fr["dir_line"], fr["id"]))
            constant_frames[fr["id"]] = fr.get("constant", False)

        directives = []
        for first, last, logical in logical_lines(_blank_comments(text)):
            m = _DIRECTIVE.match(logical)
            if m:
                directives.append((first, last, m.group(1), m.group(2).strip()))
        for index, (first, last, kind, rest) in enumerate(directives):
            directive = f"#{kind} {rest}".strip()
            if kind in ("if", "ifdef", "ifndef"):
                if kind == "if":
                    v = self.evaluate(rest, first)
                else:
                    name = rest.split()[0] if rest.split() else ""
                    st = self._macro_state(name, first)
                    v = None if st == "unknown" else (st is not False)
                    if kind == "ifndef" and v is not None:
                        v = not v
                    if kind == "ifndef" and v is None and name not in self._defs and index + 1 < len(directives):
                        nxt = directives[index + 1]
                        if nxt[2] == "define" and nxt[3].split()[:1] == [name]:
                            v = True  # an include guard: the first inclusion compiles the body
                fr = {"id": frame_counter, "held": False, "constant": kind == "if" and _names_no_macro(rest)}
                frame_counter += 1
                frame_branch_values[fr["id"]] = []
                stack.append(fr)
                open_branch(fr, v, directive, first, last)
                # "held": some condition of the chain so far holds for AMD. That branch, or
                # one before it whose condition is unknown, is the one compiled; no later one is.
                fr["held"] = v is True
            elif kind in ("elif", "elifdef", "elifndef", "else") and stack:
                fr = stack[-1]
                close_branch(fr, first)
                prior_true = fr["held"]
                prior_unknown = any(x is None for x in frame_branch_values[fr["id"]])
                if kind == "else":
                    v = False if prior_true else (None if prior_unknown else True)
                else:
                    if kind == "elif":
                        v = self.evaluate(rest, first)
                    else:
                        st = self._macro_state(rest.split()[0] if rest.split() else "", first)
                        v = None if st == "unknown" else (st is not False)
                        if kind == "elifndef" and v is not None:
                            v = not v
                    fr["held"] = prior_true or v is True
                    if prior_true:
                        v = False
                    elif prior_unknown and v is True:
                        v = None
                open_branch(fr, v, directive, first, last)
            elif kind == "endif" and stack:
                fr = stack.pop()
                close_branch(fr, first)
            elif kind in ("define", "undef"):
                parts = rest.split(None, 1)
                if not parts:
                    continue
                name = re.match(r"[A-Za-z_]\w*", parts[0])
                if not name:
                    continue
                state = current_state()
                value = None
                body = parts[1].strip() if len(parts) > 1 else ""
                if kind == "define" and "(" not in parts[0]:
                    num = re.fullmatch(r"\(?\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)?", body)
                    if num:
                        value = int(num.group(1), 16) if num.group(1)[:2] in ("0x", "0X") else int(num.group(1))
                # (line, state, value, kind); an #undef in a live branch undefines from here on
                self._defs.setdefault(name.group(), []).append((first, state, value, kind))
                if kind == "define" and state is not False:
                    self.live_macros[name.group()] = parts[1] if len(parts) > 1 else ""
            elif kind == "include":
                inc = _INCLUDE_LOCAL.match(rest)
                if inc:
                    self.includes.append(inc.group(1))
        while stack:  # unbalanced file: close at EOF
            close_branch(stack.pop(), self.n_lines + 1)

        frame_alternatives = {fid: vals for fid, vals in frame_branch_values.items()}
        for start, end, value, cond, dir_line, fid in sorted(branches, key=lambda b: (b[0], -b[1])):
            if value is None:
                for ln in range(start, min(end, self.n_lines) + 1):
                    self._unknown[ln] = True
                continue
            if value is not False:
                continue
            vals = frame_alternatives[fid]
            never = constant_frames.get(fid, False)
            has_alt = never or (len(vals) > 1 and any(v is not False for v in vals))
            guard = Guard(cond, dir_line, has_alt, never)
            for ln in range(start, min(end, self.n_lines) + 1):
                if self._dead[ln] is None:
                    self._dead[ln] = guard

    def dead_for_amd(self, line: int) -> Guard | None:
        """The guard that keeps `line` out of an AMD build, or None if it is compiled (or unknown)."""
        return self._dead[line] if 0 < line < len(self._dead) else None

    def unknown_for_amd(self, line: int) -> bool:
        return self._unknown[line] if 0 < line < len(self._unknown) else False


_HEADER_CACHE: dict[Path, dict[str, int | None | bool]] = {}


def forget_files() -> None:
    """Drop what was read from headers (called by the engine at the start of each scan)."""
    _HEADER_CACHE.clear()


def local_headers(path: Path, includes) -> list[Path]:
    """The headers of `#include "..."` names that exist next to `path`, resolved."""
    found = []
    for inc in includes:
        try:
            target = (path.parent / inc).resolve()
            if target.is_file():
                found.append(target)
        except OSError:
            continue
    return found


def header_defines(path: Path, includes: list[str], depth: int = 2) -> dict[str, int | None | bool]:
    """Macros that headers included with quotes from next to `path` define for an AMD build.

    Values: an int, True (defined, value unknown), False (defined only in branches an AMD
    build skips, so effectively undefined), None (defined under an unknown condition)."""
    out: dict[str, int | None | bool] = {}
    for target in local_headers(path, includes):
        if target not in _HEADER_CACHE:
            _HEADER_CACHE[target] = {}
            try:
                text = target.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            probe = GuardMap(text)
            nested = header_defines(target, probe.includes, depth - 1) if depth > 0 else {}
            gm = GuardMap(text, header_defines=nested) if nested else probe
            found: dict[str, int | None | bool] = dict(nested)
            end = gm.n_lines + 1
            for name in gm._defs:
                st = gm._macro_state(name, end)
                found[name] = None if st == "unknown" else st
            _HEADER_CACHE[target] = found
        out.update(_HEADER_CACHE[target])
    return out


def guard_map(ctx) -> GuardMap:
    """ctx.fact(guard_map): the file's GuardMap, with macros from headers next to it."""
    text = ctx.text
    probe = GuardMap(text)
    real = getattr(ctx, "real_path", None)
    if real is not None and probe.includes:
        defs = header_defines(Path(real), probe.includes)
        if defs:
            return GuardMap(text, header_defines=defs)
    return probe
