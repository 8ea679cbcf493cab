"""What a detector module imports: the registration decorator, the finding model and the
analyses every family needs, each re-exported from its one home so that no family reaches
into another family's (or module's) private helpers. tests/test_rule_authoring.py checks
that no detector module imports a `_private` name of another family.

    from portlint.rules.api import detector, qualified_name, python_guards

Python sources (`ctx.module`, an `ast.Module`):
  qualified_name(ctx, node)   `tl.dot` -> "triton.language.dot" through the file's imports
  dotted_name(node)           "a.b.c" for a Name/Attribute chain, else None (no import lookup)
  import_table                the file's imports: `ctx.fact(import_table)` (names.ImportTable)
  words(identifier)           target words: `is_torch_xla_available` -> [is, torch, xla, available]
  literal_platforms(text)     the platforms a device/backend string names ("cuda:0", "TPU")
  string_literal(node), int_literal(node)   a literal's value, else None
  python_guards(ctx)          the file's platform guards (python.guards.Guards); e.g.
                              `python_guards(ctx).dead_for_amd(node)`
  parents(ctx)                child -> parent map of ctx.module
CUDA/C++ sources (`ctx.tree`, tree-sitter):
  node_text, nodes_of_types, enclosing   tree-sitter helpers (cuda.parse)
  cuda_guards(ctx)            the preprocessor guards of an AMD build (cuda.guards.GuardMap)
  device_spaces(ctx)          which code is device code (cuda.spaces.SpaceMap)
"""

from __future__ import annotations

from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.core.model import Edit, Fix, Span
from portlint.analyses.python.guards import literal_platforms, words
from portlint.frontends.python.literals import int_literal, string_literal
from portlint.frontends.python.names import dotted_name, import_table
from portlint.core.registry import detector

__all__ = [
    "Edit", "Fix", "Span", "cuda_guards", "detector", "device_spaces", "dotted_name", "enclosing",
    "import_table", "int_literal", "literal_platforms", "node_text", "nodes_of_types", "parents",
    "python_guards", "qualified_name", "string_literal", "words",
]


def qualified_name(ctx, node) -> str:
    """The dotted name an expression refers to with the file's import aliases resolved
    ("" when it is not a Name/Attribute chain)."""
    from portlint.frontends.python.pyimports import aliases

    return ctx.fact(aliases).canonical(node)


def python_guards(ctx):
    from portlint.analyses.python.guards import guard_map

    return ctx.fact(guard_map)


def cuda_guards(ctx):
    from portlint.frontends.cuda.guards import guard_map

    return ctx.fact(guard_map)


def device_spaces(ctx):
    from portlint.frontends.cuda.spaces import space_map

    return ctx.fact(space_map)


def parents(ctx) -> dict:
    from portlint.frontends.python import astindex

    return astindex.parents(ctx.module)
