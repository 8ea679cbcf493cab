"""The value of a literal in Python source, read from the tree alone (never evaluated)."""

from __future__ import annotations

import ast


def string_literal(node: ast.AST) -> str | None:
    """The text of a string constant ("" parts of an f-string are dropped: `f"cuda:{i}"` ->
    "cuda:"), or None when `node` is not a string literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return None


def int_literal(node: ast.AST) -> int | None:
    """The value of an integer constant (a bool is not one; `-3` is), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None
