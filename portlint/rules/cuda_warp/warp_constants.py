"""PTL101: warp-size constants of the 32-lane world — `#define WARP_SIZE 32`, `constexpr int
kWarp = 32`, log2 and lane-mask constants, warp-named template arguments, `tiled_partition<32>`.
A warp-named constant defined in the file is reported at its definition, not at each use."""

from __future__ import annotations

import re

from portlint.analyses.cuda.constants import parse_int
from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.rules.cuda_warp.analysis import (
    WARP_SIZE_NAME, Analysis, clean, define_span, use_context, value_span,
)
from portlint.core.model import Edit, Fix, Span


def _is_width_default(ident) -> bool:
    p = ident.parent
    if p is not None and p.type == "optional_parameter_declaration" and p.child_by_field_name("default_value") == ident:
        d = p.child_by_field_name("declarator")
        return d is not None and re.fullmatch(r"(?i)width|w|logical_?warp(_?size)?|group_?size", node_text(d)) is not None
    return False


def _collect_uses(a: Analysis, names: set[str]) -> dict[str, list]:
    uses: dict[str, list] = {n: [] for n in names}
    for ident in nodes_of_types(a.root, ("identifier",)):
        name = node_text(ident)
        if name in uses:
            parent = ident.parent
            if parent is not None and parent.type in ("preproc_def", "init_declarator", "enumerator", "optional_parameter_declaration", "function_declarator") and parent.child_by_field_name("name" if parent.type in ("preproc_def", "enumerator") else "declarator") == ident:
                continue
            uses[name].append(ident)
    # uses inside macro bodies and #if conditions are text, not tree nodes
    for node in nodes_of_types(a.root, ("preproc_arg",)):
        text = node_text(node)
        for name in names:
            if re.search(rf"\b{re.escape(name)}\b", text):
                uses[name].append(node)
    return uses


def warp_constants(a: Analysis) -> None:
    for name, defs in a.cmap.local.items():
        for c in defs:
            kind = a.warp_const_kind(c)
            if kind is None or c.node is None:
                continue
            a.warp_consts[name] = c
    if not a.warp_consts:
        return
    uses = _collect_uses(a, set(a.warp_consts))
    for name, c in a.warp_consts.items():
        kind = a.warp_const_kind(c)
        used = uses.get(name, [])
        contexts = []
        host_use = False
        for u in used:
            if u.type == "preproc_arg":
                contexts.append("preproc")
                continue
            contexts.append(use_context(u))
            if not a.is_device(u):
                host_use = True
        # llama.cpp style logical warps: a constant passed as a shuffle width (or as the default
        # of a template parameter named `width`), or a file whose shuffles pass an explicit
        # width of 32, marks deliberate 32-lane groups
        if (any(x == "width" for x in contexts) or any(_is_width_default(u) for u in used if u.type != "preproc_arg")
                or a.file_logical32()) and a.knows_amd():
            continue
        strong = any(x in ("width", "runtime") for x in contexts) and any(
            a.is_device(u) for u in used if u.type != "preproc_arg")
        fix = None
        what = {"size": "a 32-lane warp size", "log": "log2 of a 32-lane warp (5)", "mask": "a 32-lane lane mask (31)"}[kind]
        value_node = c.node
        if kind == "size":
            new = "warpSize"
        elif kind == "log":
            new = "(__ffs(warpSize) - 1)"
        else:
            new = "(warpSize - 1)"
        const_use = any(x in ("const", "preproc") for x in contexts)
        if c.kind in ("define", "const") and value_node is not None and _literal_or_simple(value_node):
            vspan = value_span(a.ctx, value_node)
            old = clean(node_text(value_node))
            if c.kind == "const" and _file_scope(c.decl):
                fix = None  # a namespace-scope const cannot read the device variable warpSize
            elif const_use or host_use:
                fix = Fix(f"replace {old} with {new} (display only: used where a constant expression or host code needs it)",
                          (Edit(vspan, new),), "display-only")
            else:
                fix = Fix(f"replace {old} with {new}", (Edit(vspan, new),), "safe")
        suggestion = (
            "Device code: use `warpSize` (64 on CDNA/gfx9, 32 on RDNA). Where a compile-time value is needed "
            "(array sizes, template arguments; `warpSize` is not constexpr on ROCm 7), select it per target: "
            "`#if defined(__GFX8__) || defined(__GFX9__)` -> 64 else 32, or pass it as a template parameter chosen on the host "
            "from `hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`."
        )
        where = c.node if c.kind == "template-default" else c.decl
        if c.kind == "define":  # the directive without its newline and comment
            where = define_span(a.ctx, c)
        a.hit("PTL101", where, fields={"name": name, "value": clean(node_text(c.node)), "what": what},
              fix=fix, suggestion=suggestion, confidence="high" if strong else "medium")
        a.reported_consts.add(name)


def _literal_or_simple(node) -> bool:
    return parse_int(clean(node_text(node))) is not None


def _file_scope(decl) -> bool:
    return decl is not None and enclosing(decl, ("function_definition", "lambda_expression")) is None


def template_arguments(a: Analysis) -> None:
    """`tiled_partition<32>`, `thread_block_tile<32>`, and `32` passed to a warp-named
    template parameter of a template defined in this file."""
    params: dict[str, list[str]] = {}
    for tmpl in nodes_of_types(a.root, ("template_declaration",)):
        plist = tmpl.child_by_field_name("parameters")
        inner = [c for c in tmpl.named_children if c.type in ("function_definition", "class_specifier", "struct_specifier", "declaration")]
        if plist is None or not inner:
            continue
        name_node = None
        target = inner[0]
        if target.type == "function_definition":
            d = target.child_by_field_name("declarator")
            while d is not None and d.child_by_field_name("declarator") is not None:
                d = d.child_by_field_name("declarator")
            name_node = d
        else:
            name_node = target.child_by_field_name("name")
        if name_node is None:
            continue
        names = []
        for p in plist.named_children:
            decl = p.child_by_field_name("declarator")
            names.append(node_text(decl) if decl is not None else "")
        params[node_text(name_node).split("::")[-1]] = names
    for targs in nodes_of_types(a.root, ("template_argument_list",)):
        owner = targs.parent
        if owner is None:
            continue
        name_node = owner.child_by_field_name("name")
        tname = node_text(name_node).split("::")[-1] if name_node is not None else ""
        args = [c for c in targs.named_children]
        for i, arg in enumerate(args):
            inner = arg.named_children[0] if arg.type == "type_descriptor" and arg.named_child_count == 1 else arg
            v, how = a.value_of(inner) if inner.type in ("number_literal", "identifier", "parenthesized_expression") else (None, "none")
            if v != 32 or how in ("local-warp",):
                continue
            if tname in ("tiled_partition", "thread_block_tile"):
                continue  # below, from the text (tree-sitter often reads `tile<32> x` as comparisons)
            elif tname in params and i < len(params[tname]) and WARP_SIZE_NAME.match(params[tname][i] or "-"):
                a.hit("PTL101", inner, fields={"name": f"{tname}<...{params[tname][i]}...>", "value": node_text(inner), "what": "a 32-lane warp size"},
                      confidence="medium",
                      suggestion="Pass the device's warp size: a template argument chosen on the host from "
                                 "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)` (64 on CDNA, 32 on RDNA).")


def tiles(a: Analysis) -> None:
    data = a.ctx.data
    if b"tiled_partition" not in data and b"thread_block_tile" not in data:
        return  # neither name in the file's bytes: no identifier can spell it
    for ident in nodes_of_types(a.root, ("identifier", "type_identifier", "field_identifier")):
        if node_text(ident) not in ("tiled_partition", "thread_block_tile"):
            continue
        m = re.match(rb"\s*<\s*([A-Za-z_]\w*|\d+)\s*>", data[ident.end_byte: ident.end_byte + 80])
        if not m:
            continue
        arg = m.group(1).decode()
        v = parse_int(arg)[0] if arg[0].isdigit() else a.cmap.value(arg)
        if v != 32 or arg in a.warp_consts:
            continue
        line = ident.end_point[0] + 1
        start = a.ctx.byte_col_to_col(line, ident.end_point[1] + m.start(1))
        where = Span(line, start, line, start + len(arg))
        a.hit("PTL101", where, fields={"name": node_text(ident), "value": arg, "what": "a 32-thread tile taken as the warp"},
              confidence="medium", targets={"rocm": "warning"},
              suggestion="A 32-thread tile is legal on HIP, but it is half a wavefront on CDNA: if the tile stands for "
                         "the hardware warp (lane/warp ids, per-warp buffers), use `tiled_partition(block, warpSize)` "
                         "or keep 32 deliberately and size everything per 32-thread tile.")
