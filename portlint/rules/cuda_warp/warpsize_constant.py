"""PTL107: `warpSize` (or the deprecated `__AMDGCN_WAVEFRONT_SIZE`) where a constant expression
is needed: array bounds, template arguments, constexpr, static_assert, `#if`."""

from __future__ import annotations

import re

from portlint.frontends.cuda.includes import file_directives
from portlint.frontends.cuda.parse import nodes_of_types
from portlint.frontends.cuda.parse import node_text
from portlint.rules.cuda_warp.analysis import CONST_CONTEXT_PARENTS, Analysis, use_context
from portlint.core.model import Span


def warpsize_constants(a: Analysis) -> None:
    data = a.ctx.data
    # the identifiers can only spell a name the file's bytes hold
    idents = nodes_of_types(a.root, ("identifier", "type_identifier")) if b"warpSize" in data or b"__AMDGCN_WAVEFRONT_SIZE" in data else []
    for ident in idents:
        name = node_text(ident)
        if name in ("__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"):
            a.hit("PTL107", ident, fields={"use": f"`{name}`", "place": "code", "reason": _AMDGCN_REASON}, confidence="high", suggestion=_WS_SUGGESTION)
            continue
        if name != "warpSize":
            continue
        ctx_kind = use_context(ident)
        bracket = ctx_kind != "const" and _in_template_brackets(a.ctx.data, ident)
        if ctx_kind == "const" or bracket:
            where = "a template argument" if bracket else _const_context_name(ident)
            a.hit("PTL107", ident, fields={"use": "`warpSize`", "place": where, "reason": _WS_REASON}, confidence="high", suggestion=_WS_SUGGESTION)
    # `#if` conditions are text
    from portlint.frontends.cuda.includes import file_directives
    from portlint.core.model import Span

    for d in a.ctx.fact(file_directives):
        if d.kind not in ("if", "elif") or not re.search(r"\bwarpSize\b|__AMDGCN_WAVEFRONT_SIZE", d.rest):
            continue
        word = "warpSize" if re.search(r"\bwarpSize\b", d.rest) else re.search(r"__AMDGCN_WAVEFRONT_SIZE\w*", d.rest).group()
        line, col = d.first, -1
        for n in range(d.first, d.last + 1):
            col = a.ctx.line_text(n).find(word)
            if col >= 0:
                line = n
                break
        col = max(col, 0)
        a.hit("PTL107", Span(line, col + 1, line, col + 1 + len(word)), fields={"use": f"`{word}`", "place": "an #if condition", "reason": _WS_REASON if word == "warpSize" else _AMDGCN_REASON},
              confidence="high", suggestion=_WS_SUGGESTION)


def _in_template_brackets(data: bytes, ident) -> bool:
    """`Foo<warpSize>` / `Foo<T, warpSize>` that tree-sitter read as comparisons."""
    line_start = data.rfind(b"\n", 0, ident.start_byte) + 1
    line_end = data.find(b"\n", ident.end_byte)
    before = data[line_start: ident.start_byte].decode("utf-8", "replace")
    after = data[ident.end_byte: line_end if line_end != -1 else len(data)].decode("utf-8", "replace")
    return bool(re.search(r"[A-Za-z_]\w*\s*<\s*(?:[^<>;()]*,\s*)?$", before) and re.match(r"\s*(?:,[^<>;()]*)?>(?![>=])", after))


def _const_context_name(ident) -> str:
    cur = ident.parent
    while cur is not None:
        if cur.type in CONST_CONTEXT_PARENTS:
            return {"array_declarator": "an array bound", "template_argument_list": "a template argument", "case_statement": "a case label",
                    "static_assert_declaration": "a static_assert", "alignas_qualifier": "alignas", "bitfield_clause": "a bit-field width",
                    "enumerator": "an enumerator"}[cur.type]
        if cur.type == "declaration":
            return "a constexpr initialiser"
        cur = cur.parent
    return "a constant expression"


_WS_REASON = "`warpSize` is not a constant expression on ROCm 7 (nor on CUDA)"
_AMDGCN_REASON = "`__AMDGCN_WAVEFRONT_SIZE` is deprecated in ROCm 7 / recent LLVM and going away"
_WS_SUGGESTION = (
    "ROCm 7 made `warpSize` a runtime value (and CUDA never had it constant); `__AMDGCN_WAVEFRONT_SIZE` is deprecated. "
    "For a compile-time wave size use `#if defined(__GFX8__) || defined(__GFX9__)` -> 64 else 32 in device code, or a "
    "template parameter chosen on the host from `hipDeviceAttributeWarpSize`; loop bounds may keep `warpSize`."
)
