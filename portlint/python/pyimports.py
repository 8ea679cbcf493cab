"""Import aliases of a Python module, so `tl.dot`, `triton.language.dot` and
`from triton.language import dot` all read as `triton.language.dot`."""

from __future__ import annotations

import ast

from portlint.python.astindex import nodes


class Aliases:
    def __init__(self, module: ast.Module):
        self.names: dict[str, str] = {}
        for node in nodes(module):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.names[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.names.setdefault(top, top)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name != "*":
                        self.names[a.asname or a.name] = f"{node.module}.{a.name}"

    def canonical(self, node: ast.AST) -> str:
        """`tl.extra.cuda.libdevice.tanh` -> `triton.language.extra.cuda.libdevice.tanh`;
        "" when the expression is not a dotted name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return ""
        head = self.names.get(node.id, node.id)
        return ".".join([head, *reversed(parts)])


def aliases(ctx) -> Aliases:
    return Aliases(ctx.module)
