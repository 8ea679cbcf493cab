"""Import aliases of a Python module, so `tl.dot`, `triton.language.dot` and
`from triton.language import dot` all read as `triton.language.dot`.

A view of `portlint.frontends.python.names.ImportTable` (the one reader of imports) kept for the
detectors that call `aliases(ctx)`."""

from __future__ import annotations

import ast

from portlint.frontends.python.names import ImportTable, import_table


class Aliases:
    def __init__(self, module: ast.Module | None = None, table: ImportTable | None = None):
        self.table = table if table is not None else ImportTable(module)
        self.names: dict[str, str] = self.table.names

    def canonical(self, node: ast.AST) -> str:
        """`tl.extra.cuda.libdevice.tanh` -> `triton.language.extra.cuda.libdevice.tanh`;
        "" when the expression is not a dotted name."""
        from portlint.frontends.python.names import dotted_name

        name = dotted_name(node)
        if name is None:
            return ""
        head, _, rest = name.partition(".")
        base = self.names.get(head, head)
        return base + ("." + rest if rest else "")


def aliases(ctx) -> Aliases:
    return Aliases(table=ctx.fact(import_table))
