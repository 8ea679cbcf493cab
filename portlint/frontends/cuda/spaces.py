"""Execution spaces: which functions of a CUDA/C++ file run on the device.

Device code is a `__global__` or `__device__` function (also `__host__ __device__`), a
lambda marked `__device__`, or a function reachable in the same file from device code
through a call by name (templates and inline helpers without annotations are compiled for
the device when a kernel calls them under `--expt-relaxed-constexpr` or as constexpr).
Qualifiers hidden behind macros count: ones the file #defines with `__device__`/`__global__`
in their body, and the conventional names of common projects (`CUTLASS_DEVICE`,
`C10_HOST_DEVICE`, `DEVICE_INLINE`, `HOST_DEVICE`, `__device_inline__`). Calls through
members (`obj.f()`, `p->f()`) are followed by the member name. Host code is everything else.
Macro bodies have no space of their own: a macro counts as device when it is expanded inside
device code."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from portlint.frontends.cuda.parse import node_text, nodes_of_types


@dataclass
class SpaceMap:
    # (start_byte, end_byte, name, kind) for every function body; kind: "global", "device", "host-device", "host"
    functions: list[tuple[int, int, str, str]] = field(default_factory=list)
    device_ranges: list[tuple[int, int]] = field(default_factory=list)
    device_names: set[str] = field(default_factory=set)
    macro_uses_in_device: set[str] = field(default_factory=set)

    def is_device(self, node) -> bool:
        return self.is_device_byte(node.start_byte)

    def is_device_byte(self, offset: int) -> bool:
        for start, end in self.device_ranges:
            if start <= offset < end:
                return True
        return False

    def function_at(self, offset: int) -> tuple[int, int, str, str] | None:
        best = None
        for fn in self.functions:
            if fn[0] <= offset < fn[1] and (best is None or fn[0] >= best[0]):
                best = fn
        return best


# qualifier macros of common projects (defined in headers the file may not show us)
_QUALIFIER_MACRO = re.compile(r"^(?:[A-Z0-9]+_)*(?:HOST_DEVICE|DEVICE|GLOBAL|KERNEL)(?:_INLINE|_FORCEINLINE|_FUNC|_FN)?$|^(?:[A-Z0-9]+_)*DEVICE_INLINE$|^__device_inline__$|^__host_device__$")


def _macro_qualifiers(root) -> dict[str, set[str]]:
    """Object-like macros of the file whose body holds execution-space qualifiers:
    `#define DEVICE_INLINE __device__ __forceinline__` -> {"DEVICE_INLINE": {"__device__"}}."""
    out: dict[str, set[str]] = {}
    for d in nodes_of_types(root, ("preproc_def",)):
        name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
        if name is None or value is None:
            continue
        quals = set(re.findall(r"__global__|__device__|__host__", node_text(value)))
        if quals:
            out[node_text(name)] = quals
    return out


def _head_words(fn_node) -> list[str]:
    """Identifiers in a function's head (before its name): where qualifier macros sit."""
    decl = fn_node.child_by_field_name("declarator")
    end = decl.start_byte if decl is not None else fn_node.start_byte
    head = fn_node.text[: end - fn_node.start_byte].decode("utf-8", errors="replace")
    words = re.findall(r"[A-Za-z_]\w*", head)
    prev = fn_node.prev_sibling  # a macro tree-sitter split off as its own node on the same line
    if prev is not None and prev.type in ("ERROR", "expression_statement", "identifier", "type_identifier") and prev.end_point[0] == fn_node.start_point[0]:
        words = re.findall(r"[A-Za-z_]\w*", node_text(prev)) + words
    return words


def _qualifiers(fn_node, macros: dict[str, set[str]] | None = None) -> set[str]:
    quals = set()
    for word in _head_words(fn_node):
        if macros and word in macros:
            quals |= macros[word]
        elif _QUALIFIER_MACRO.match(word):
            quals.add("__device__")
            if "HOST" in word:
                quals.add("__host__")
    for child in fn_node.children:
        if child.type in ("__global__", "__device__", "__host__"):
            quals.add(child.type)
        elif child.type in ("attribute_specifier", "attribute_declaration", "ms_declspec_modifier", "launch_bounds"):
            continue
        elif child.type == "identifier" and node_text(child) in ("__global__", "__device__", "__host__"):
            quals.add(node_text(child))
    # qualifiers hidden behind macros (e.g. `__device__ __forceinline__` as DEVICE_INLINE) are
    # seen through their text
    return quals


def _function_name(fn_node) -> str:
    decl = fn_node.child_by_field_name("declarator")
    while decl is not None and decl.type not in ("identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name"):
        nxt = decl.child_by_field_name("declarator")
        if nxt is None:
            break
        decl = nxt
    return node_text(decl).split("::")[-1] if decl is not None else ""


def space_map(ctx) -> SpaceMap:
    """ctx.fact(space_map): the SpaceMap of a CUDA file."""
    root = ctx.tree.root_node
    smap = SpaceMap()
    fn_nodes = nodes_of_types(root, ("function_definition", "lambda_expression"))
    macros = _macro_qualifiers(root) if b"#define" in ctx.data else {}
    calls_by_fn: dict[str, set[str]] = {}
    bodies: dict[str, list[tuple[int, int]]] = {}
    for fn in fn_nodes:
        if fn.type == "lambda_expression":
            text = node_text(fn)
            head = text.split("{", 1)[0]
            if "__device__" in head:
                smap.device_ranges.append((fn.start_byte, fn.end_byte))
            continue
        quals = _qualifiers(fn, macros)
        name = _function_name(fn)
        body = fn.child_by_field_name("body")
        if body is None:
            continue
        if "__global__" in quals:
            kind = "global"
        elif "__device__" in quals:
            kind = "host-device" if "__host__" in quals else "device"
        else:
            kind = "host"
        smap.functions.append((fn.start_byte, fn.end_byte, name, kind))
        bodies.setdefault(name, []).append((fn.start_byte, fn.end_byte))
        if kind != "host":
            smap.device_ranges.append((fn.start_byte, fn.end_byte))
            smap.device_names.add(name)
    # functions called by name from device code are device code too (fixed point, same file)
    if smap.functions:
        call_nodes = nodes_of_types(root, ("call_expression",))
        for call in call_nodes:
            fn = smap.function_at(call.start_byte)
            if fn is None:
                continue
            callee = call.child_by_field_name("function")
            if callee is None:
                continue
            cname = re.split(r"::|\.|->", node_text(callee).split("<", 1)[0])[-1].strip()
            calls_by_fn.setdefault(fn[2], set()).add(cname)
        changed = True
        while changed:
            changed = False
            for caller in list(smap.device_names):
                for callee in calls_by_fn.get(caller, ()):
                    if callee in bodies and callee not in smap.device_names:
                        smap.device_names.add(callee)
                        smap.device_ranges.extend(bodies[callee])
                        changed = True
    smap.device_ranges.sort()
    return smap
