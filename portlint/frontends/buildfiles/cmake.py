"""CMake files as a list of commands, each with its arguments and the ROCm guard around it.

Parsed with tree-sitter-cmake (imported on first use). An `if()` whose condition (or one of
its `elseif()` conditions) names HIP or ROCm (`USE_ROCM`, `HIP_FOUND`, `CMAKE_HIP_COMPILER`,
`GPU_LANG STREQUAL "HIP"`) is a vendor switch: every branch of it is the port, the CUDA leg
included, so commands inside carry that condition as their guard. In a file that enables HIP,
`if(GPU_LANG STREQUAL "CUDA")` is one too (the CUDA leg of a language switch)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from portlint.core.model import Span

# identifier parts that name AMD's stack in a condition
_VENDOR_WORDS = {"hip", "rocm", "amd", "amdgpu", "hipcc", "hipify"}
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+")


@dataclass(frozen=True)
class Arg:
    text: str  # the argument without quotes
    span: Span


@dataclass(frozen=True)
class Command:
    name: str  # lower-case command name
    args: tuple[Arg, ...]
    span: Span  # the command name
    guard: str | None  # the vendor condition around it, or None
    in_if: bool = False  # inside an if() leg (any condition), not run unconditionally


@dataclass(frozen=True)
class CMakeFile:
    commands: tuple[Command, ...]

    def enables_hip(self) -> bool:
        """The file enables CMake's HIP language somewhere (any branch)."""
        for c in self.commands:
            if c.name == "enable_language" and any(a.text == "HIP" for a in c.args):
                return True
            if c.name == "project" and any(a.text == "HIP" for a in c.args[1:]):
                return True
        return False


def needs_nvcc(commands) -> bool:
    """A CMake file that cannot be configured without nvcc: it declares CUDA a language where
    it always runs (`project(x LANGUAGES CXX CUDA)`, a top-level `enable_language(CUDA)`) and
    never enables HIP in any branch. `commands` are (lower-case name, argument texts, inside
    an if() leg) triples."""
    cuda = hip = False
    for name, args, in_if in commands:
        langs = args[1:] if name == "project" else args if name == "enable_language" else ()
        hip = hip or "HIP" in langs
        cuda = cuda or (not in_if and "CUDA" in langs)
    return cuda and not hip


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_cmake

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cmake.language()))


def names_vendor(condition: str) -> bool:
    return any(w.lower() in _VENDOR_WORDS for w in _WORD_SPLIT.split(condition))


# `if(GPU_LANG STREQUAL "CUDA")`: a language switch, the CUDA leg of a build that has a HIP leg
# when the same file enables HIP
_CUDA_LANGUAGE_TEST = re.compile(r"\bSTREQUAL CUDA\b|\bCUDA STREQUAL\b")
_ENABLES_HIP = re.compile(rb"enable_language\s*\(\s*HIP\b|\bproject\s*\([^)]*\bHIP\b", re.I)


def _arguments(node, data: bytes) -> list[tuple[str, object]]:
    """(text, node) of each argument of a command, quotes and bracket marks taken off."""
    out = []
    arglist = next((c for c in node.children if c.type == "argument_list"), None)
    for arg in arglist.children if arglist is not None else ():
        if arg.type != "argument" or not arg.children:
            continue
        inner = arg.children[0]
        raw = data[inner.start_byte:inner.end_byte].decode("utf-8", "replace")
        if inner.type == "quoted_argument":
            raw = raw[1:-1] if raw.startswith('"') and raw.endswith('"') else raw.strip('"')
        elif inner.type == "bracket_argument":
            raw = re.sub(r"^\[=*\[|\]=*\]$", "", raw)
        out.append((raw, inner))
    return out


def _quoted_condition(node, data: bytes) -> str:
    """An `if()` head's condition as written: it keeps its quotes (`X STREQUAL "CUDA"`
    compares with a literal) and its parentheses."""
    parts = []
    arglist = next((c for c in node.children if c.type == "argument_list"), None)
    for arg in arglist.children if arglist is not None else ():
        if arg.type == "argument":
            parts.append(data[arg.start_byte:arg.end_byte].decode("utf-8", "replace"))
        elif arg.type in ("(", ")"):
            parts.append(arg.type)
    return " ".join(parts)


_NESTED = ("body", "foreach_loop", "while_loop", "function_def", "macro_def", "block_def")


class Leg:
    """One leg of an `if()`: the `if_condition` node, the conditions of the legs before it
    (false when this leg runs), its own condition (None for an `else()`) and the leg around
    it. One object per leg, shared by every command in it (and hashed by identity), so a
    reader can judge each leg once."""

    __slots__ = ("node", "earlier", "own", "parent")

    def __init__(self, node, earlier: tuple[str, ...], own: str | None, parent: "Leg | None"):
        self.node, self.earlier, self.own, self.parent = node, earlier, own, parent


def _walk(tree, data: bytes):
    """(command node, its name, legs) of every command of a parsed CMake file, in source
    order. `legs` is the tuple of `Leg`s around it, outermost first (the same tuple object
    for every command of one leg). Loop, function and macro bodies are read in place.
    An explicit stack, not recursion: 500 nested `if()` must not exhaust Python's stack and
    lose the file (work stays linear in the number of nodes)."""
    stack = [(iter(tree.root_node.children), ())]
    while stack:
        children, legs = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            continue
        if child.type == "normal_command":
            ident = child.children[0]
            yield child, data[ident.start_byte:ident.end_byte].decode("utf-8", "replace").lower(), legs
        elif child.type == "if_condition":
            earlier: list[str] = []
            bodies = []
            own = None
            for c in child.children:
                if c.type in ("if_command", "elseif_command"):
                    own = _quoted_condition(c, data)
                elif c.type == "else_command":
                    own = None
                elif c.type == "body":
                    bodies.append((c, Leg(child, tuple(earlier), own, legs[-1] if legs else None)))
                    if own is not None:
                        earlier.append(own)
            for body, leg in reversed(bodies):
                stack.append((iter(body.children), legs + (leg,)))
        elif child.type in _NESTED:
            stack.append((iter(child.children), legs))


def parse_cmake(ctx) -> CMakeFile:
    """`ctx.fact(parse_cmake)`: the commands of a CMake file in source order, each with the
    outermost vendor switch around it (`if(USE_ROCM)`, or `if(LANG STREQUAL "CUDA")` where
    the file enables HIP), the guard PTL05x reports name."""
    tree = _parser().parse(ctx.data)
    has_hip_leg = bool(_ENABLES_HIP.search(ctx.data))

    def vendor_test(condition: str) -> bool:
        return names_vendor(condition) or (has_hip_leg and bool(_CUDA_LANGUAGE_TEST.search(condition)))

    def span(node) -> Span:
        (l1, c1), (l2, c2) = node.start_point, node.end_point
        return Span(l1 + 1, ctx.byte_col_to_col(l1 + 1, c1), l2 + 1, ctx.byte_col_to_col(l2 + 1, c2))

    switches: dict[int, str | None] = {}  # if_condition node id -> its vendor head's condition

    def switch(if_node) -> str | None:
        if if_node.id not in switches:
            heads = [c for c in if_node.children if c.type in ("if_command", "elseif_command")]
            texts = (" ".join(t for t, _ in _arguments(h, ctx.data)) for h in heads)
            switches[if_node.id] = next((t for t in texts if vendor_test(t)), None)
        return switches[if_node.id]

    out: list[Command] = []
    for node, name, legs in _walk(tree, ctx.data):
        vendor = next((v for v in (switch(leg.node) for leg in legs) if v), None)
        guard = f"inside a CMake vendor switch `if({vendor})`" if vendor else None
        args = tuple(Arg(text, span(inner)) for text, inner in _arguments(node, ctx.data))
        out.append(Command(name, args, span(node.children[0]), guard, bool(legs)))
    return CMakeFile(tuple(out))


def branch_commands(data: bytes):
    """(name, argument texts, line, legs) of every command of a CMake file, in source order,
    where `legs` are the `Leg`s of the `if()`s around it, outermost first (each with the
    conditions of the legs before it, false when it runs, and its own, None for an
    `else()`). Function and macro bodies are read in place."""
    tree = _parser().parse(data)
    for node, name, legs in _walk(tree, data):
        yield name, [text for text, _ in _arguments(node, data)], node.start_point[0] + 1, legs
