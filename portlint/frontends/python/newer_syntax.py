"""Python files written for a newer interpreter than the one running portlint.

`ast` parses only the grammar of the running Python: under 3.11 a PEP 695 `type Alias =
...`, a generic `def f[T](x: T)` / `class Box[T]:`, or a PEP 701 f-string that reuses its
own quotes (`f"{d["key"]}"`) is a SyntaxError, and the whole file would lose its Python
rules. tree-sitter-python parses every Python version. When it accepts the file, the
constructs the running `ast` cannot read are blanked *in place* -- same bytes per line, so
every line and column of the rest stays where it was -- and `ast` parses what is left:

- a `type X = ...` statement becomes `pass` (the alias is a typing construct, no device code);
- the `[T, *Ts, **P]` type parameters of a def or class become spaces;
- a string literal the running `ast` rejects (found from the SyntaxError's line) becomes an
  empty string of the same length (its text is lost: a `"cuda"` inside such an f-string is
  not seen).

tree-sitter-python is imported only here, only for such a file (import and grammar load
measured at 9-16 ms and 26 ms with `python -X importtime` on this machine)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from portlint.frontends.python.astindex import parse


@dataclass
class Downgrade:
    module: ast.Module
    blanked: list[str] = field(default_factory=list)  # "type alias (line 3)", ...


_MAX_STRING_PASSES = 50


def _parser():
    import tree_sitter
    import tree_sitter_python

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))


def _blank(buf: bytearray, start: int, end: int, keep: bytes = b"") -> None:
    """Spaces over buf[start:end] (newlines kept), `keep` written at the start."""
    for i in range(start, end):
        if buf[i] not in (0x0A, 0x0D):
            buf[i] = 0x20
    buf[start:start + len(keep)] = keep


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _empty_string(buf: bytearray, node) -> None:
    """Replace a string literal by an empty one of the same length (`"     "`)."""
    start, end = node.start_byte, node.end_byte
    text = bytes(buf[start:end])
    body = text.lstrip(b"rRbBfFuUtT")
    quote = b'"""' if body.startswith((b'"""', b"'''")) else b'"'
    if end - start < 2 * len(quote):
        return
    _blank(buf, start, end)
    buf[start:start + len(quote)] = quote
    buf[end - len(quote):end] = quote


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    for i, b in enumerate(data):
        if b == 0x0A:
            starts.append(i + 1)
    return starts


def downgrade(data: bytes, filename: str = "<file>") -> Downgrade | None:
    """The file's `ast` with the newer constructs blanked, or None when tree-sitter-python
    also rejects it (a real syntax error) or the blanking does not make it parse."""
    try:
        tree = _parser().parse(data)
    except Exception:
        return None
    root = tree.root_node
    if root.has_error:
        return None
    buf = bytearray(data)
    blanked: list[str] = []
    strings = []
    for node in _walk(root):
        if node.type == "type_alias_statement":
            _blank(buf, node.start_byte, node.end_byte, b"pass")
            blanked.append(f"type alias (line {node.start_point[0] + 1})")
        elif node.type == "type_parameter" and node.parent is not None and node.parent.type in ("function_definition", "class_definition"):
            _blank(buf, node.start_byte, node.end_byte)
            blanked.append(f"type parameters (line {node.start_point[0] + 1})")
        elif node.type == "string":
            strings.append(node)
    starts = _line_starts(data)
    for _ in range(_MAX_STRING_PASSES):
        try:
            module = parse(bytes(buf), filename)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            if not line or line > len(starts):
                return None
            offset = starts[line - 1]
            hits = [s for s in strings if s.start_byte <= offset + max((getattr(exc, "offset", 1) or 1) - 1, 0) < s.end_byte
                    or s.start_point[0] <= line - 1 <= s.end_point[0]]
            hits = [s for s in hits if bytes(buf[s.start_byte:s.end_byte]) != _emptied(s, buf)]
            if not hits:
                return None
            outer = min(hits, key=lambda s: s.start_byte)  # the outermost literal on that line
            _empty_string(buf, outer)
            blanked.append(f"string literal (line {outer.start_point[0] + 1})")
            strings = [s for s in strings if not (outer.start_byte <= s.start_byte and s.end_byte <= outer.end_byte)]
            continue
        return Downgrade(module, blanked)
    return None


def _emptied(node, buf: bytearray) -> bytes:
    copy = bytearray(buf)
    _empty_string(copy, node)
    return bytes(copy[node.start_byte:node.end_byte])
