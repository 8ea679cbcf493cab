"""PTL108: host code that assumes 32-thread warps — launch math such as `warps * 32` and
`threads / 32`, and compile-time warp sizes (`C10_WARP_SIZE`) in host functions."""

from __future__ import annotations

import re

from portlint.frontends.cuda.parse import node_text, nodes_of_types
from portlint.analyses.cuda.warp_facts import callee_name, strip_parens
from portlint.rules.cuda_warp.analysis import THREAD_COUNT_NAME, WARP_COUNT_NAME, Analysis


_NOT_A_WARP_UNIT = re.compile(r"tile|elem|byte|chunk|vec|pack|scale|row|col|bits", re.I)


def host_arith(a: Analysis, be, op: str) -> None:
    if op not in ("*", "/"):
        return
    if op == "/" and a.spaces.function_at(be.start_byte) is None and not a.uses_warp_primitives():
        # `kNWarps = kNThreads / 32` as a type's or namespace's constant in a file without warp
        # primitives: 32-thread groups that tile work, not warps (`kNWarps * 32` threads, a
        # block size built from warps, is still reported)
        return
    left, right = strip_parens(be.child_by_field_name("left")), strip_parens(be.child_by_field_name("right"))
    pairs = ((left, right), (right, left)) if op == "*" else ((left, right),)
    for x, y in pairs:
        v, how = a.value_of(y)
        if v != 32 or how == "local-warp" or x is None:
            continue
        # a 32 whose name says what it counts (MX scaling blocks: `chunkElems`, tiles,
        # bytes) is that unit, not a warp
        if y.type in ("identifier", "qualified_identifier") and _NOT_A_WARP_UNIT.search(node_text(y)):
            continue
        xname = node_text(x)
        if op == "*" and x.type in ("identifier", "field_expression", "qualified_identifier") and \
                WARP_COUNT_NAME.match(xname.split(".")[-1].split("->")[-1].split("::")[-1].strip()):
            a.hit("PTL108", be, fields={"expr": node_text(be), "meaning": "threads for a number of 32-lane warps"},
                  confidence="medium", suggestion=_HOST_SUGGESTION)
        elif op == "/" and x.type in ("identifier", "field_expression") and THREAD_COUNT_NAME.search(xname.split(".")[-1].split("->")[-1]) \
                and not re.search(r"tile|elem|byte|row|col", xname, re.I):
            a.hit("PTL108", be, fields={"expr": node_text(be), "meaning": "warps per block for 32-lane warps"},
                  confidence="medium", suggestion=_HOST_SUGGESTION)


def host_macros(a: Analysis) -> None:
    if b"C10_WARP_SIZE" not in a.ctx.data:
        return  # an identifier's text is bytes of the file: none can be C10_WARP_SIZE
    seen_lines: set[int] = set()
    for ident in nodes_of_types(a.root, ("identifier",)):
        if node_text(ident) == "C10_WARP_SIZE" and not a.is_device(ident) and a.spaces.function_at(ident.start_byte) is not None:
            if ident.start_point[0] in seen_lines:
                continue
            seen_lines.add(ident.start_point[0])
            a.hit("PTL108", ident, fields={"expr": "C10_WARP_SIZE", "meaning": "a compile-time warp size in host code"},
                  confidence="medium", suggestion="In host code ask the device: `at::cuda::warp_size()` (PyTorch) or "
                  "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`; a host-side constant cannot know "
                  "whether the GPU runs wave64 (CDNA) or wave32 (RDNA).")


_HOST_SUGGESTION = (
    "Query the warp size once on the host (`cudaDeviceGetAttribute(&ws, cudaDevAttrWarpSize, dev)` -> "
    "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`, `props.warpSize`, `at::cuda::warp_size()`) "
    "and derive block sizes and per-warp counts from it; on CDNA a wave is 64 threads."
)


def host_one_warp_blocks(a: Analysis) -> None:
    """`constexpr uint32_t kBlockThreads = 32;` in host code of a file whose kernels assert
    that a block is one warp (`static_assert(kBlockSize == 32, ...)`): the launch relies on a
    32-thread block being a whole warp, which on CDNA is half a wavefront."""
    if not a.block_is_warp():
        return
    for name, defs in a.cmap.local.items():
        if not THREAD_COUNT_NAME.search(name) or WARP_COUNT_NAME.match(name):
            continue
        for c in defs:
            if c.kind not in ("const", "constexpr") or c.decl is None or not c.live or a.is_device(c.decl):
                continue
            if a.spaces.function_at(c.decl.start_byte) is None or a.cmap.value_of(c) != 32:
                continue  # launch sizes live in host functions
            a.hit("PTL108", c.decl, fields={"expr": f"{name} = 32", "meaning": "a block of one 32-lane warp (the kernels assert block size == 32)"},
                  confidence="medium", suggestion=_HOST_SUGGESTION)


def host_dim3_products(a: Analysis) -> None:
    """`dim3 block(warps * WARP_SIZE);` in a host function: C++ reads the line as the
    declaration of a function `block` taking a `warps*` (the most vexing parse), so there is no
    multiplication in the tree for `host_arith`. The product is read back from the parameter:
    its type and its pointer declarator are the two factors."""
    if b"dim3" not in a.ctx.data:
        return
    for fd in nodes_of_types(a.root, ("function_declarator",)):
        decl = fd.parent
        if decl is None or decl.type != "declaration" or a.is_device(decl) or a.spaces.function_at(decl.start_byte) is None:
            continue
        tnode = decl.child_by_field_name("type")
        if tnode is None or node_text(tnode).split("::")[-1].strip() != "dim3":
            continue
        params = fd.child_by_field_name("parameters")
        for p in params.named_children if params is not None else ():
            ptype, pdecl = p.child_by_field_name("type"), p.child_by_field_name("declarator")
            if p.type != "parameter_declaration" or ptype is None or pdecl is None or pdecl.type != "pointer_declarator":
                continue
            inner = pdecl.child_by_field_name("declarator")
            if inner is None or inner.type != "identifier":
                continue
            left, right = node_text(ptype).strip(), node_text(inner).strip()
            for count, size in ((left, right), (right, left)):
                c = a.cmap.lookup(size)
                if c is None or a.cmap.value_of(c) != 32 or size in a.warp_consts or _NOT_A_WARP_UNIT.search(size):
                    continue
                if WARP_COUNT_NAME.match(count.split("::")[-1]):
                    a.hit("PTL108", p, fields={"expr": f"{left} * {right}", "meaning": "threads for a number of 32-lane warps"},
                          confidence="medium", suggestion=_HOST_SUGGESTION)
                    break


_CEIL_DIV = re.compile(r"^(?:ceil_?div|div_?up|DIV_UP|CEIL_DIV|cdiv|divUp|ceilDiv|div_round_up|DIVUP|iDivUp)$")


def host_ceil_divs(a: Analysis) -> None:
    """`num_warps = ceil_div(block_size, 32)` in a host function: the warps of a block counted
    in 32-thread warps, through the rounding-up division helpers projects define."""
    if not re.search(rb"(?i)div_?up|ceil_?div|cdiv", a.ctx.data):
        return
    for call in nodes_of_types(a.root, ("call_expression",)):
        if a.is_device(call) or a.spaces.function_at(call.start_byte) is None or not _CEIL_DIV.match(callee_name(call) or ""):
            continue
        args = call.child_by_field_name("arguments").named_children
        if len(args) != 2:
            continue
        x, y = strip_parens(args[0]), strip_parens(args[1])
        v, how = a.value_of(y)
        if v != 32 or how == "local-warp" or x is None or x.type not in ("identifier", "field_expression", "qualified_identifier"):
            continue
        if y.type in ("identifier", "qualified_identifier") and _NOT_A_WARP_UNIT.search(node_text(y)):
            continue
        xname = node_text(x).split(".")[-1].split("->")[-1].split("::")[-1].strip()
        if THREAD_COUNT_NAME.search(xname) and not re.search(r"tile|elem|byte|row|col", xname, re.I):
            a.hit("PTL108", call, fields={"expr": node_text(call), "meaning": "warps per block for 32-lane warps"},
                  confidence="medium", suggestion=_HOST_SUGGESTION)
