"""The comments of a source file, found the way its compiler would find them.

Suppression directives live in comments only: text that merely looks like a comment inside
a string literal (`"// portlint: ignore-file[PTL]"`) must do nothing. Python comments come
from `tokenize` (COMMENT tokens); C, C++, CUDA and PTX comments from a lexer that knows
string and character literals, raw strings (`R"delim(...)delim"`), numbers with digit
separators (`1'000`) and line continuations after `//`.

Positions follow the scanner's line model: lines end at LF (the CR of a CRLF is part of
nothing a comment reports); columns are 1-based code points."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass


@dataclass(frozen=True)
class Comment:
    line: int  # 1-based line of the comment's first character
    col: int  # 1-based code-point column of its first character
    text: str  # the comment with its markers (`# ...`, `// ...`, `/* ... */`)
    standalone: bool  # nothing but whitespace before it on its line


def _blank(before: str) -> bool:
    """Nothing but whitespace (or the UTF-8 BOM that opens a file) before a comment."""
    return not before.replace("\ufeff", "").strip()


def comments(text: str, language: str) -> list[Comment]:
    if language == "python":
        return _python_comments(text)
    if language == "build":
        return _hash_comments(text)
    return _c_family_comments(text)


def _hash_comments(text: str) -> list[Comment]:
    """`#` comments of build files (CMake, Makefiles, Dockerfiles, requirements, TOML,
    setup.cfg): from a `#` outside a quoted string to the end of its line."""
    out: list[Comment] = []
    for number, line in enumerate(text.split("\n"), start=1):
        quote = None
        for i, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                out.append(Comment(number, i + 1, line[i:].rstrip("\r"), _blank(line[:i])))
                break
    return out


def _python_comments(text: str) -> list[Comment]:
    """COMMENT tokens, in order. A file the tokenizer gives up on (an unterminated
    triple-quoted string, a bad dedent) keeps the comments found before that point:
    anything after it cannot be told apart from string contents."""
    lines = text.split("\n")
    out: list[Comment] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline="\n").readline):
            if tok.type == tokenize.COMMENT:
                line, col = tok.start
                before = lines[line - 1][:col] if line - 1 < len(lines) else ""
                out.append(Comment(line, col + 1, tok.string.rstrip("\r"), _blank(before)))
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


# One token of C-family source that can hold comment-like text, earliest match first.
# Raw strings are matched up to their opening parenthesis; the end is found by searching for
# `)delim"`. Numbers (pp-numbers) are matched so that a digit separator's `'` does not open
# a character literal. Unterminated strings and characters end at the end of their line,
# as compilers recover.
_C_TOKEN = re.compile(
    r"""(?P<raw>(?<![\w])(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\()"""
    r"""|(?P<line>//(?:[^\n\\]|\\[^\n]|\\\n)*)"""
    r"""|(?P<block>/\*.*?(?:\*/|\Z))"""
    r"""|(?P<string>"(?:[^"\\\n]|\\.|\\\n)*"?)"""
    r"""|(?P<number>(?<![\w])\.?\d(?:[eEpP][+-]|[\w.'])*)"""
    r"""|(?P<char>'(?:[^'\\\n]|\\.)*'?)""",
    re.S,
)


def _c_family_comments(text: str) -> list[Comment]:
    out: list[Comment] = []
    pos = 0
    n = len(text)
    line, counted = 1, 0  # line number at offset `counted` (counted forward, never again)
    while pos < n:
        m = _C_TOKEN.search(text, pos)
        if m is None:
            break
        kind = m.lastgroup
        if kind == "delim":  # the inner group of a raw string: lastgroup names it
            kind = "raw"
        if kind == "raw":
            end = text.find(")" + m.group("delim") + '"', m.end())
            pos = n if end == -1 else end + len(m.group("delim")) + 2
            continue
        if kind in ("line", "block"):
            start = m.start()
            line_start = text.rfind("\n", 0, start) + 1
            line += text.count("\n", counted, start)
            counted = start
            body = m.group()
            out.append(Comment(line, start - line_start + 1, body.rstrip("\r"), _blank(text[line_start:start])))
        pos = max(m.end(), pos + 1)
    return out
