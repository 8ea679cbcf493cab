"""Small C integer constant expressions: integer literals, and expressions of literals, named
constants, parentheses and the arithmetic and bit operators.

Shared by the constant map (tree-sitter nodes and `#define` bodies of the file) and the
libclang pass (the tokens of header macros and constants). Names are resolved by the caller's
`lookup`, which returns a value or None; nothing here knows where constants come from."""

from __future__ import annotations

import re
from typing import Callable

from portlint.frontends.cuda.parse import node_text

Lookup = Callable[[str], "int | None"]

_INT = re.compile(r"^\(?\s*(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)([uUlL]*)\s*\)?$")
_TOKEN = re.compile(r"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*|<<|>>|[-+*/%&|()]")


def parse_int(text: str) -> tuple[int, str] | None:
    """`0xFFFFFFFFu` -> (4294967295, "u"); None if the text is not one integer literal."""
    m = _INT.match(text.strip())
    if not m:
        return None
    digits, suffix = m.group(1), m.group(2)
    try:
        value = int(digits, 0) if not digits.startswith("0") or digits[:2].lower() in ("0x", "0b") or digits == "0" else int(digits, 8)
    except ValueError:
        return None
    return value, suffix.lower()


_MIN, _MAX = -(1 << 63), (1 << 64) - 1  # what a 64-bit C integer holds, either sign
_PREC = {"|": 1, "&": 2, "<<": 3, ">>": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5}


def arith(op: str, a: int, b: int) -> int | None:
    """`a op b` for a binary C operator, None when it is undefined, not one we evaluate, or
    outside 64 bits (a chain of `#define`s squaring each other must not grow an integer of
    millions of digits)."""
    if not (_MIN <= a <= _MAX and _MIN <= b <= _MAX):
        return None
    try:
        value = {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b if b else None,
            "%": lambda: a % b if b else None, "<<": lambda: a << b if 0 <= b < 64 else None,
            ">>": lambda: a >> b if 0 <= b < 64 else None, "&": lambda: a & b, "|": lambda: a | b,
        }.get(op, lambda: None)()
    except (ValueError, OverflowError):
        return None
    return value if value is None or _MIN <= value <= _MAX else None


class _Tokens:
    """Precedence climbing over the tokens of `eval_text` (numbers already values). No
    Python `eval`: `9**9**9` is two `*` in a row, a syntax error here, not a power."""

    def __init__(self, toks: list) -> None:
        self.toks, self.i = toks, 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def expr(self, min_prec: int) -> int | None:
        left = self.unary()
        while True:
            op = self.peek()
            prec = _PREC.get(op) if isinstance(op, str) else None
            if prec is None or prec <= min_prec:
                return left
            self.i += 1
            right = self.expr(prec)
            left = None if left is None or right is None else arith(op, left, right)

    def unary(self) -> int | None:
        tok = self.peek()
        self.i += 1
        if isinstance(tok, int):
            return tok
        if tok == "(":
            v = self.expr(0)
            if self.peek() != ")":
                raise ValueError("missing )")
            self.i += 1
            return v
        if tok in ("-", "+"):
            v = self.unary()
            return None if v is None else (-v if tok == "-" else v)
        raise ValueError(f"unexpected {tok!r}")


def eval_node(node, lookup: Lookup, depth: int = 0) -> int | None:
    """Value of a tree-sitter expression node of literals and known constants, or None."""
    if node is None or depth > 8:
        return None
    t = node.type
    if t == "number_literal":
        p = parse_int(node_text(node))
        return p[0] if p else None
    if t == "identifier":
        return lookup(node_text(node))
    if t == "parenthesized_expression" and node.named_child_count == 1:
        return eval_node(node.named_children[0], lookup, depth + 1)
    if t == "call_expression":  # `dh::WarpThreads()`: a constant function without arguments
        fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if fn is not None and args is not None and args.named_child_count == 0 and fn.type in ("identifier", "qualified_identifier"):
            return lookup(node_text(fn).split("::")[-1].strip())
        return None
    if t == "binary_expression":
        a = eval_node(node.child_by_field_name("left"), lookup, depth + 1)
        b = eval_node(node.child_by_field_name("right"), lookup, depth + 1)
        op = node.child_by_field_name("operator")
        if a is None or b is None or op is None:
            return None
        return arith(node_text(op), a, b)
    return None


def eval_text(text: str, lookup: Lookup, depth: int = 0) -> int | None:
    """Value of a macro body or token run such as `32`, `(32)`, `(1 << 5)`, `WARP_SIZE / 2`."""
    text = re.sub(r"/\*.*?\*/|//.*$", "", text).strip()
    p = parse_int(text)
    if p:
        return p[0]
    if depth > 4 or not text or len(text) > 80:
        return None
    toks = _TOKEN.findall(text)
    if "".join(toks) != re.sub(r"\s+", "", text):
        return None
    out: list = []
    for tok in toks:
        if tok[0].isdigit():
            p = parse_int(tok)
            if p is None:
                return None
            out.append(p[0])
        elif tok[0].isalpha() or tok[0] == "_":
            v = lookup(tok)
            if not isinstance(v, int):
                return None
            out.append(int(v))
        else:
            out.append(tok)
    parser = _Tokens(out)
    try:
        value = parser.expr(0)
    except ValueError:
        return None
    if parser.i != len(out):
        return None
    return value if value is None or _MIN <= value <= _MAX else None
