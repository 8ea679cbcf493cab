"""Project platform macros: `#ifdef FOO_WITH_HIP`, `#ifndef BAR_USE_HIP_BUILD`.

Ported projects choose their AMD branch with macros of their own that their build system
defines. A macro nobody defines in the scanned tree is unknown to the guard map, so the CUDA
branch beside a real HIP branch would be reported. A macro is read as a platform macro when:

- its name says so: a `_`-separated word HIP, ROCM, AMD, HIPCC, AMDGPU (an AMD build
  defines it) or NVIDIA, NVCC (an AMD build does not); names with a negating word (NO,
  NOT, DISABLE, WITHOUT, SKIP), include guards and names reserved for compilers (`__X`) are
  left alone;
- or the branch it selects holds HIP code (a HIP header, a `hip*` API call, a `__shfl*`
  without `_sync`, a warp size of 64, `__builtin_amdgcn_*`, hipCUB/rocPRIM): the branch
  taken when it is defined makes it an AMD macro, the one taken when it is not makes it an
  NVIDIA macro;
- or the config says so: `amd-macros = ["FOO_HIP"]` adds a name, `"!FOO_HIP"` stops one
  from being inferred.

Only macros the platform and the file's own #defines leave unknown are read this way, and
the reason of a suppressed finding says which macro was read how."""

from __future__ import annotations

import re
from dataclasses import dataclass

from portlint.frontends.cuda.preprocessor import condition_macro, defined_name

# The vendor vocabulary of the CUDA modules, in one place:
# - the `_`-separated words of a macro name that say whose build defines it (`FOO_WITH_HIP`);
# - VENDOR_TEXT: a text (a condition, a header) that names a non-NVIDIA vendor or its
#   compiler (`!defined(USE_ROCM)`, `__HIP_PLATFORM_AMD__`, `__gfx942__`, MUSA's port,
#   `__builtin_amdgcn_*`): the guards, shim headers and withheld feature macros read it;
# - hip_code(): the signs of HIP code in a branch body (below).
_AMD_WORDS = frozenset(("HIP", "ROCM", "AMD", "HIPCC", "AMDGPU", "HCC"))
_NVIDIA_WORDS = frozenset(("NVIDIA", "NVCC"))
VENDOR_TEXT = re.compile(r"HIP|ROCM|ROCm|AMD|MUSA|amdgcn|__gfx|__GFX")


def names_vendor(text: str) -> bool:
    """`text` names a non-NVIDIA vendor (VENDOR_TEXT)."""
    return VENDOR_TEXT.search(text) is not None
_NEGATING = frozenset(("NO", "NOT", "DISABLE", "DISABLED", "WITHOUT", "SKIP", "NON"))
_INCLUDE_GUARD = re.compile(r"_(?:H|HPP|HH|CUH|HXX|INC|INCLUDED)_*$|^_*INCLUDED_")
# A simple test of one macro: `defined(X)`, `defined X`, `X`, optionally negated.
_SIMPLE_IF = re.compile(r"^(!\s*)?(?:defined\s*\(\s*([A-Za-z_]\w*)\s*\)|defined\s+([A-Za-z_]\w*)|([A-Za-z_]\w*))$")
_HIP_CODE = re.compile(r"#\s*include\s*[<\"]hip/|\bhip[A-Z]\w*\s*\(|\b__shfl(?:_xor|_up|_down)?\s*\(|\b__builtin_amdgcn_\w+"
                       r"|\b(?:hipcub|rocprim|rocwmma)::")
_HIP_HINTS = ("hip", "__shfl", "amdgcn", "rocprim", "rocwmma")
_WAVE64 = re.compile(r"(?:warp|wave)\w*(?:[ \t]+|\s*=\s*)64\b", re.I)


def hip_code(body: str) -> re.Match | None:
    """The first sign of HIP code in a text: a HIP header, a `hip*` call, `__shfl*` without
    `_sync`, `__builtin_amdgcn_*`, hipCUB/rocPRIM/rocWMMA, a warp size of 64."""
    found = _HIP_CODE.search(body) if any(h in body for h in _HIP_HINTS) else None
    if "64" in body:
        wide = _WAVE64.search(body)
        if wide is not None and (found is None or wide.start() < found.start()):
            return wide
    return found


@dataclass(frozen=True)
class PlatformMacro:
    side: str  # "amd": an AMD build defines it; "nvidia": an AMD build does not
    why: str  # "its name says HIP", "its branch at line 12 holds HIP code (`hipMalloc(`)", ...

    def note(self, name: str) -> str:
        who = "an AMD" if self.side == "amd" else "an NVIDIA-only"
        return f"`{name}` read as {who} build macro ({self.why})"


def by_name(name: str) -> PlatformMacro | None:
    # `__HIPCC_RTC__`, `__HIP_PLATFORM_SPIRV__`: names reserved for compilers are theirs, not
    # a project's switch (and several are not defined by a plain HIP-Clang build)
    if _INCLUDE_GUARD.search(name) or name.startswith("__"):
        return None
    words = {w for w in name.upper().split("_") if w}
    if words & _NEGATING:
        return None
    amd, nvidia = words & _AMD_WORDS, words & _NVIDIA_WORDS
    if amd and not nvidia:
        return PlatformMacro("amd", f"its name says {sorted(amd)[0]}")
    if nvidia and not amd:
        return PlatformMacro("nvidia", f"its name says {sorted(nvidia)[0]}")
    return None


def simple_test(kind: str, rest: str) -> tuple[str, bool] | None:
    """(macro, True when the branch is taken with it defined) for a one-macro condition."""
    if kind in ("ifdef", "ifndef", "elifdef", "elifndef"):
        name = rest.split()[0] if rest.split() else ""
        return (name, kind in ("ifdef", "elifdef")) if name else None
    m = _SIMPLE_IF.match(rest.strip())
    if not m:
        return None
    name = m.group(2) or m.group(3) or m.group(4)
    if name == "defined":
        return None
    return name, not m.group(1)


def _known(name: str) -> bool:
    from portlint.frontends.cuda.preprocessor import AMD, NVIDIA

    return name in AMD.defined or name in AMD.undefined or name in NVIDIA.defined or name in NVIDIA.undefined


def infer(found_directives, lines, config: tuple[str, ...] = ()) -> dict[str, PlatformMacro]:
    """Platform macros of one file: name -> PlatformMacro. `lines` are the file's lines with
    comments blanked, or a function returning them (called only when a branch is read)."""
    own = {head[0] for d in found_directives if d.kind == "define" for head in [defined_name(d)] if head}
    blocked = {c[1:] for c in config if c.startswith("!")}

    def worth_reading(test) -> bool:
        name = test[0]
        return not (name in own or name in blocked or _known(name) or _INCLUDE_GUARD.search(name))

    if callable(lines):
        get_lines, lines = lines, None
    else:
        get_lines = None
    cached: list = []

    def file_lines():
        if not cached:
            cached.append(lines if lines is not None else get_lines())
        return cached[0]
    out: dict[str, PlatformMacro] = {}
    evidence: dict[str, set[str]] = {}
    notes: dict[tuple[str, str], str] = {}
    # branches of one-macro #if groups: (macro, taken-when-defined, first body line, last body line)
    stack: list[list] = []
    for d in found_directives:
        if d.kind in ("if", "ifdef", "ifndef"):
            stack.append([simple_test(d.kind, d.rest), d.last + 1, True])
        elif d.kind in ("elif", "elifdef", "elifndef", "else", "endif") and stack:
            test, start, first = stack[-1]
            if test is not None and worth_reading(test):
                _look(test, start, d.first - 1, file_lines(), evidence, notes)
            if d.kind == "endif":
                stack.pop()
            elif d.kind == "else" and test is not None and first:
                stack[-1] = [(test[0], not test[1]), d.last + 1, False]
            else:
                stack[-1] = [None, d.last + 1, False]  # an #elif chain: its later branches are not one macro's
    candidates = set(evidence)
    for d in found_directives:
        if d.kind in ("ifdef", "ifndef", "elifdef", "elifndef"):
            candidates.add(condition_macro(d))
        elif d.kind in ("if", "elif"):
            candidates.update(re.findall(r"[A-Za-z_]\w*", d.rest))
    for name in sorted(candidates):
        if name in own or name in blocked or name == "defined" or _known(name):
            continue
        sides = evidence.get(name, set())
        if len(sides) == 1:
            side = next(iter(sides))
            out[name] = PlatformMacro(side, notes[(name, side)])
            continue
        named = by_name(name)
        if named is not None:
            out[name] = named
    for name in config:
        if not name.startswith("!"):
            out[name] = PlatformMacro("amd", "named in amd-macros of the config")
    return out


def _look(test: tuple[str, bool], start: int, end: int, lines: list[str], evidence, notes) -> None:
    name, when_defined = test
    body = "\n".join(lines[start - 1:end])
    m = hip_code(body) if body.strip() else None
    if m is None:
        return
    ln = start + body.count("\n", 0, m.start())
    side = "amd" if when_defined else "nvidia"
    evidence.setdefault(name, set()).add(side)
    branch = "its branch" if when_defined else "the branch taken without it"
    notes.setdefault((name, side), f"{branch} at line {ln} holds HIP code: `{m.group(0).strip()}`")


def platform_macros(ctx) -> dict[str, PlatformMacro]:
    """ctx.fact(platform_macros): the project platform macros the file reads — those its own
    branches show, then those the project headers it reaches through the scan's include
    graph show (a `FOO_USE_HIP` whose HIP branch is in a shared header counts in every file
    that includes it). The file's own evidence wins."""
    from portlint.frontends.cuda.includes import file_directives, file_reach, graph_of
    from portlint.frontends.cuda.preprocessor import blank_comments

    found = ctx.fact(file_directives)
    config = tuple(getattr(ctx.settings, "amd_macros", ()) or ())
    out: dict[str, PlatformMacro] = {}
    reach = ctx.fact(file_reach)
    if reach is not None and reach.headers:
        graph = graph_of(ctx)
        for path in graph.project_headers(reach):
            out.update(_header_platform_macros(graph, path, config))
    own_defines = {head[0] for d in found if d.kind == "define" for head in [defined_name(d)] if head}
    out = {name: m for name, m in out.items() if name not in own_defines}
    if config or any(d.kind in ("if", "ifdef", "ifndef") for d in found):
        out.update(infer(found, lambda: blank_comments(ctx.text).split("\n"), config))
    return out


def _header_platform_macros(graph, path: str, config: tuple[str, ...]) -> dict[str, PlatformMacro]:
    """The platform macros one header's branches show (kept in the scan's include graph; the
    guard map of the header itself reads the same entry)."""
    key = ("platform-macros", path, config)
    found = graph.derived.get(key)
    if found is None:
        from portlint.frontends.cuda.preprocessor import blank_comments

        h = graph.header(path)
        found = graph.derived[key] = infer(h.directives, lambda: blank_comments(h.text).split("\n"), config) if h is not None else {}
    return found
