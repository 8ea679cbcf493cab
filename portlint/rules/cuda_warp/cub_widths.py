"""PTL111: cub warp primitives whose logical width follows the device — `cub::WarpReduce<T>`
with the default width and `CUB_PTX_WARP_THREADS` in a file that otherwise assumes 32 lanes."""

from __future__ import annotations

import re

from portlint.frontends.cuda.parse import node_text, nodes_of_types
from portlint.rules.cuda_warp.analysis import Analysis


def cub_widths(a: Analysis, has_32_assumption: bool) -> None:
    if not has_32_assumption:
        return
    # the names and the `cub::Warp...<` texts looked for are bytes of the file when present:
    # a file without them has nothing to walk for
    data = a.ctx.data
    if b"WARP_THREADS" in data:
        for ident in nodes_of_types(a.root, ("identifier", "type_identifier")):
            name = node_text(ident)
            # CUB_LOG_WARP_THREADS has no hipify counterpart: PTL602 reports it
            if name in ("CUB_PTX_WARP_THREADS", "CUB_WARP_THREADS"):
                a.hit("PTL111", ident, fields={"what": f"`{name}` beside 32-lane arithmetic"}, confidence="medium",
                      suggestion="hipify renames it to `HIPCUB_WARP_THREADS`, the device wavefront (64 on CDNA); the 32s "
                                 "elsewhere in this file then disagree with it. Derive every per-warp size from the same constant.")
    if not has_32_assumption or b"cub::Warp" not in data:
        return
    for targs in nodes_of_types(a.root, ("template_argument_list",)):
        owner = targs.parent
        if owner is None or owner.type not in ("qualified_identifier", "template_type", "template_function"):
            continue
        text = node_text(owner)
        m = re.match(r"(?:::)?(?:cub|hipcub)::(Warp(?:Reduce|Scan|Exchange|Load|Store))\s*<", text)
        if m is None and owner.parent is not None:
            m = re.match(r"(?:::)?(?:cub|hipcub)::(Warp(?:Reduce|Scan|Exchange|Load|Store))\s*<", node_text(owner.parent))
        if m is None:
            continue
        n_args = len(targs.named_children)
        default_width = n_args == 1 if m.group(1) in ("WarpReduce", "WarpScan") else n_args <= 2
        if default_width:
            a.hit("PTL111", owner, fields={"what": f"`cub::{m.group(1)}` with the default logical width"}, confidence="medium",
                  suggestion="hipCUB's default logical warp is the device wave (64 on CDNA) while this file indexes per-warp "
                             "storage by 32 lanes: pass the width explicitly (`hipcub::WarpReduce<T, 32>` to keep 32-lane groups) "
                             "or size `TempStorage[BLOCK / warp]` and the warp id with the same `HIPCUB_WARP_THREADS`.")
