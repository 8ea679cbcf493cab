"""Preprocessor guards: which lines of a CUDA/C++ file a build compiles.

For each line, GuardMap says whether a build — an AMD (HIP-Clang) device pass by default,
or another `Platform` of portlint/frontends/cuda/preprocessor.py (NVIDIA, sm_90) — compiles it: live,
dead, or unknown (a condition on a project macro we cannot resolve). A line dead for AMD
inside a branch whose `#if` group also has a live or unknown branch is "ported": the group
holds the HIP alternative beside it, so rocm findings there are not problems.

Conditions are evaluated in three-valued logic (one evaluator, preprocessor.evaluate): a
macro the platform defines, one it does not define, or one we do not know. Macros the file
#defines in a live branch count as defined, ones defined only in dead branches as undefined;
the headers it reaches through the scan's include graph (portlint/frontends/cuda/includes.py) add
theirs — this is how `#ifdef USE_ROCM / #define WARP_SIZE 64 / #else ...` shims and
llama.cpp's `#define __CUDA_ARCH__ 1300` under GGML_USE_HIP are followed. Project platform
macros (`FOO_WITH_HIP`, portlint/frontends/cuda/platform_macros.py) are read as the vendor switch they
are, and the Guard's reason says so.

Macro bodies are expanded where an #if reads them, each (macro, definition, point of the
file) once: its value is kept, keyed by how many definitions precede the reading line (all
a value can depend on), so `#define A1 (A0+A0)` ... `#define A39 (A38+A38)` costs 39
evaluations, not 2**39. Expansion nests at most MAX_MACRO_DEPTH macros deep and reads at
most MACRO_WORK characters of bodies per file; past either the condition is unknown and
`limited` says why (the file gets a notice), never an internal error."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

from portlint.frontends.cuda.preprocessor import AMD, AMD_BY_VENDOR, NVIDIA, SM90, SWITCH, Platform, blank_comments, branch_value, condition_macro, defined_name, directives
from portlint.frontends.cuda.preprocessor import ExpressionTooDeep
from portlint.frontends.cuda.preprocessor import evaluate as _evaluate
from portlint.frontends.cuda.preprocessor import include_target, integer_value
from portlint.frontends.cuda import includes as _includes
from portlint.frontends.cuda.preprocessor import logical_lines, names_no_macro

# The AMD build's macros (kept under these names for the modules that read them).
AMD_DEFINED = AMD.defined
AMD_UNDEFINED = AMD.undefined
__all__ = ["AMD", "NVIDIA", "SM90", "Platform", "Guard", "GuardMap", "guard_map", "guard_map_for", "header_defines", "logical_lines"]


@dataclass(frozen=True)
class Guard:
    """Why a line is dead for a build."""

    condition: str  # the directive text, e.g. "#ifndef USE_ROCM"
    line: int  # the directive's line
    has_alternative: bool  # the #if group has a live or unknown branch beside this one
    # the condition names no macro (`#if 0`): no build of any vendor compiles the branch
    never: bool = False
    # how project macros of the condition were read (`FOO_WITH_HIP` taken as an AMD build macro: ...)
    inferred: str = ""
    # the group's conditions test only the CUDA toolkit version (CUDA_VERSION, CUDART_VERSION,
    # __CUDACC_VER_MAJOR__/MINOR__), which HIP leaves undefined: no branch of it is a HIP port
    version_gate: bool = False

    def reason(self) -> str:
        if self.never:
            return f"never compiled: inside `{self.condition}` (line {self.line})"
        if self.version_gate:
            alt = "a CUDA version gate (HIP defines no CUDA version macro, so AMD takes another branch)"
        else:
            alt = "with a HIP branch beside it" if self.has_alternative else "with no alternative branch"
        why = f"; {self.inferred}" if self.inferred else ""
        return f"not compiled for AMD: inside `{self.condition}` (line {self.line}), {alt}{why}"

    def excluded_reason(self, facts: str = "") -> str:
        """The reason for a line an AMD build skips because the condition names the vendor
        (a guard of an `AMD_BY_VENDOR` map): the project left the code out of AMD builds."""
        why = "; ".join(x for x in (facts, self.inferred) if x)
        return f"excluded from AMD builds by `{self.condition}` (line {self.line})" + (f"; {why}" if why else "")

    def amd_only_reason(self) -> str:
        """The reason for a line only AMD builds compile (a guard of an NVIDIA map)."""
        why = f"; {self.inferred}" if self.inferred else ""
        return f"compiled only for AMD: inside `{self.condition}` (line {self.line}), which an NVIDIA build skips{why}"


_NOT_DEFINED = re.compile(r"!\s*defined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|\s([A-Za-z_]\w*))")


MAX_MACRO_DEPTH = 48  # macros expanding macros, nested; real headers stay below ten
MAX_DEEPENING = 1000  # steps of MAX_MACRO_DEPTH an outermost expansion may take
MACRO_WORK = 2_000_000  # characters of macro bodies evaluated per GuardMap


def _negated_defined(rest: str) -> str:
    """X of an `#if !defined(X)` / `#if ! defined X` condition ("" for any other)."""
    m = _NOT_DEFINED.fullmatch(rest.strip())
    return (m.group(1) or m.group(2)) if m else ""


class GuardMap:
    """Per line of one file: does `platform` (AMD by default) compile it — live, dead (with
    the Guard that says why) or unknown."""

    def __init__(self, text: str, path: Path | None = None, header_defines: dict[str, int | None | bool] | None = None,
                 platform: Platform = AMD, platform_macros: dict | None = None, file_directives=None,
                 include_macros=None):
        self.n_lines = text.count("\n") + 1
        self.platform = platform
        # macro -> list of (line, state, value, kind) where state is True (live), False (dead), None (unknown)
        self._defs: dict[str, list[tuple[int, bool | None, int | None, str]]] = {}
        # (name, line) -> body of an object-like #define whose body is an expression, not a
        # number (`#define X_SUPPORTED (A || B)`): its value is worked out where an #if reads it
        self._bodies: dict[tuple[str, int], str] = {}
        self._expanding: set[str] = set()
        # line of every definition event (#define, #undef, a header's macro at its #include),
        # in file order: bisect gives the "epoch" a macro value at a line depends on
        self._def_lines: list[int] = []
        # (name, defined at, epoch) -> (value, platform macros consulted while computing it)
        self._values: dict[tuple[str, int, int], tuple[object, tuple[str, ...]]] = {}
        self._cut = False  # the evaluation under way met a cycle or a limit: not kept
        self._deep: tuple[str, int] | None = None  # where the expansion under way ran out of depth
        self.expansions = 0  # bodies evaluated (memo misses): the work, for budget tests
        self._work = 0
        self.limited: str | None = None  # why some condition was left unknown
        self._header_defines = dict(header_defines or {})
        # project platform macros: name -> PlatformMacro (which vendor's build it selects, and why)
        self._platform_macros = platform_macros if platform_macros is not None else {}
        self._consulted: list[str] = []
        self._dead: list[Guard | None] = [None] * (self.n_lines + 2)
        self._unknown: list[bool] = [False] * (self.n_lines + 2)
        self.live_macros: dict[str, str] = {}  # macros #defined where this build compiles them
        # directive -> the macros the header it includes leaves defined for the build (as
        # final_defines); read where the #include stands, skipped where the build skips it
        self._include_macros = include_macros
        self._from_headers: dict[str, int | None | bool] = {}  # what the #includes the build reads bring
        self._text = text
        self._build(directives(text) if file_directives is None else file_directives)

    # -- macro knowledge at a point of the file --
    def _macro_state(self, name: str, line: int):
        """What the build knows about `name` at `line`: an int value, True (defined, value
        unknown), False (not defined) or "unknown". Definitions and #undefs of the file are
        replayed in order; dead ones do not count."""
        result: object = None
        defs = self._defs.get(name)
        if defs:
            for first, state, value, kind in defs:
                if first >= line:
                    break
                if state is False:
                    continue
                if state is None:
                    result = "unknown"
                elif kind == "define":
                    result = value if value is not None else self._body_value(name, first, line)
                else:
                    result = False
        if result is not None:
            return result
        if name in self._header_defines:
            v = self._header_defines[name]
            return "unknown" if v is None else v
        platform = self.platform
        said = platform.macro_state(name)
        if said != "unknown":
            return said
        if defs and any(d[0] < line for d in defs):  # defined only in dead branches, and nothing else defines it
            return False
        inferred = self._platform_macros.get(name)
        if inferred is not None:
            self._consulted.append(name)
            # the build it selects defines it to a true value: `defined(X)` and `#if X`
            # hold, `X == 64` stays unknown
            return SWITCH if inferred.side == platform.vendor else False
        return "unknown"

    def _body_value(self, name: str, defined_at: int, line: int):
        """The value of the #define of `name` at line `defined_at` as an #if at `line` reads it:
        its body evaluated there when it is a preprocessor expression, else True (defined,
        value unknown)."""
        body = self._bodies.get((name, defined_at))
        if body is None:
            return True
        if name in self._expanding:  # a macro in its own expansion stays itself
            self._cut = True
            return True
        epoch = bisect_left(self._def_lines, line)
        kept = self._values.get((name, defined_at, epoch))
        if kept is not None:
            self._consulted.extend(kept[1])
            return kept[0]
        if self._expanding:
            return self._expand(name, defined_at, line, epoch, body)
        # The outermost expansion: when it runs MAX_MACRO_DEPTH deep, the macro where it
        # stopped is expanded first on its own (its value is kept), then this one again, so
        # a chain of any length is walked in steps of bounded depth, with no recursion
        # across the steps. No progress (a cycle) or too many steps: unknown, with a notice.
        stack = [(name, defined_at)]
        seen: set[tuple[str, int]] = set()
        while True:
            n, d = stack[-1]
            self._deep = None
            value = self._expand(n, d, line, epoch, self._bodies[(n, d)])
            done = (n, d, epoch) in self._values or self._deep is None
            if done and len(stack) == 1:
                return value
            if done:
                stack.pop()
                continue
            point = self._deep
            if point in seen or len(seen) >= MAX_DEEPENING:
                self._limit(f"macros nested more than {MAX_MACRO_DEPTH * MAX_DEEPENING} deep, or expanding into each other")
                self._deep = None
                return self._expand(name, defined_at, line, epoch, body) if len(stack) > 1 else value
            seen.add(point)
            stack.append(point)

    def _expand(self, name: str, defined_at: int, line: int, epoch: int, body: str):
        """One evaluation of a body (the value kept when it met no cycle and no limit)."""
        key = (name, defined_at, epoch)
        kept = self._values.get(key)
        if kept is not None:
            self._consulted.extend(kept[1])
            return kept[0]
        if self._deep is not None or len(self._expanding) >= MAX_MACRO_DEPTH:
            # out of depth: this attempt will be made again once the macro where it stopped
            # has a value, so nothing more of it is evaluated now
            self._cut = True
            if self._deep is None:
                self._deep = (name, defined_at)
            return True
        self._work += len(body)
        if self._work > MACRO_WORK:
            self._limit(f"more than {MACRO_WORK:,} characters of macro bodies to expand")
            return True
        self.expansions += 1
        outer_cut, self._cut = self._cut, False
        consulted_from = len(self._consulted)
        self._expanding.add(name)
        try:
            value = integer_value(body, lambda n: self._macro_state(n, line))
        except ExpressionTooDeep as exc:
            self._limit(str(exc))
            value = None
        finally:
            self._expanding.discard(name)
        result = True if value is None else value
        if not self._cut:  # a value that met no cycle and no limit is the same wherever it is read
            self._values[key] = (result, tuple(self._consulted[consulted_from:]))
        self._cut = self._cut or outer_cut
        return result

    def _limit(self, why: str) -> None:
        self._cut = True
        if self.limited is None:
            self.limited = why

    def macro_state(self, name: str, line: int):
        """Public form of the macro knowledge at a line (int, True, False or "unknown")."""
        return self._macro_state(name, line)

    def defines_for_amd(self, name: str, line: int | None = None) -> bool:
        """True when the build sees `name` #defined (here, before `line`, or in a header it
        includes): used to recognise vendor shims such as
        `#define __shfl_xor_sync(mask, v, o, w) __shfl_xor(v, o, w)` in a HIP branch."""
        st = self._macro_state(name, (line if line is not None else self.n_lines + 1))
        if st == "unknown" or st is False:
            return False
        return name in self._defs or name in self._header_defines

    def header_values(self) -> dict[str, int]:
        """Integer macros the included headers define for the build."""
        found = {**self._header_defines, **self._from_headers}
        return {k: v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}

    def final_defines(self) -> dict[str, int | None | bool]:
        """What the file leaves defined at its end, for a file that includes it: the header
        macros it saw, then its own definitions (int, True, False, or None for unknown)."""
        found: dict[str, int | None | bool] = dict(self._header_defines)
        end = self.n_lines + 1
        for name in self._defs:
            st = self._macro_state(name, end)
            found[name] = None if st == "unknown" else st
        return found

    def evaluate(self, expr: str, line: int) -> bool | None:
        try:
            return _evaluate(expr, lambda n: self._macro_state(n, line))
        except ExpressionTooDeep as exc:
            self._limit(str(exc))
            return None

    def _inferred_note(self) -> str:
        names = list(dict.fromkeys(self._consulted))
        self._consulted = []
        notes = [self._platform_macros[n].note(n) for n in names if n in self._platform_macros]
        return "; ".join(notes)

    def _build(self, found_directives) -> None:
        # stack frames: {id, held, constant} plus the open branch (value, cond, start, dir_line)
        stack: list[dict] = []
        branches: list[tuple[int, int, bool | None, str, int, int]] = []  # (start, end, value, cond, dir_line, frame_id)
        frame_branch_values: dict[int, list[bool | None]] = {}
        frame_notes: dict[int, str] = {}
        frame_counter = 0
        constant_frames: dict[int, bool] = {}

        def current_state() -> bool | None:
            state: bool | None = True
            for fr in stack:
                v = fr["value"]
                if v is False:
                    return False
                if v is None:
                    state = None
            return state

        def open_branch(fr, value, cond, line, last):
            fr["value"] = value
            fr["cond"] = cond
            fr["start"] = last
            fr["dir_line"] = line
            frame_branch_values[fr["id"]].append(value)
            note = self._inferred_note()
            if note and note not in frame_notes.get(fr["id"], ""):
                frame_notes[fr["id"]] = "; ".join(x for x in (frame_notes.get(fr["id"], ""), note) if x)

        def close_branch(fr, end_line):
            branches.append((fr["start"] + 1, end_line - 1, fr["value"], fr["cond"], fr["dir_line"], fr["id"]))
            constant_frames[fr["id"]] = fr.get("constant", False)

        for index, (first, last, kind, rest) in enumerate(found_directives):
            if kind in ("if", "ifdef", "ifndef"):
                directive = f"#{kind} {rest}".strip()
                self._consulted = []
                v = branch_value(kind, rest, lambda e: self.evaluate(e, first))
                if v is None and (kind == "ifndef" or kind == "if"):
                    # `#ifndef X` / `#if !defined(X)` then `#define X`: an include guard, or a
                    # default a build may override; the file's first reading takes it
                    name = condition_macro(found_directives[index]) if kind == "ifndef" else _negated_defined(rest)
                    if name and name not in self._defs and index + 1 < len(found_directives):
                        nxt = found_directives[index + 1]
                        if nxt.kind == "define" and nxt.rest.split()[:1] == [name]:
                            v = True  # an include guard: the first inclusion compiles the body
                fr = {"id": frame_counter, "held": False, "constant": kind == "if" and names_no_macro(rest)}
                frame_counter += 1
                frame_branch_values[fr["id"]] = []
                stack.append(fr)
                open_branch(fr, v, directive, first, last)
                # "held": some condition of the chain so far holds for this build. That branch,
                # or one before it whose condition is unknown, is the one compiled; no later one is.
                fr["held"] = v is True
            elif kind in ("elif", "elifdef", "elifndef", "else") and stack:
                directive = f"#{kind} {rest}".strip()
                fr = stack[-1]
                close_branch(fr, first)
                prior_true = fr["held"]
                prior_unknown = any(x is None for x in frame_branch_values[fr["id"]])
                self._consulted = []
                if kind == "else":
                    v = False if prior_true else (None if prior_unknown else True)
                else:
                    v = branch_value(kind, rest, lambda e: self.evaluate(e, first))
                    fr["held"] = prior_true or v is True
                    if prior_true:
                        v = False
                    elif prior_unknown and v is True:
                        v = None
                open_branch(fr, v, directive, first, last)
            elif kind == "endif" and stack:
                fr = stack.pop()
                close_branch(fr, first)
            elif kind == "include" and self._include_macros is not None:
                state = current_state()
                if state is False:
                    continue  # `#if defined(GGML_USE_HIP) / #include "hip.h" / #else ...`: not this build's header
                brought = self._include_macros(found_directives[index])
                self._from_headers.update(brought if state is True else dict.fromkeys(brought))
                for name, v in brought.items():
                    # a header's macro counts from its #include on, as sure as the #include is
                    self._def_lines.append(first)
                    if v is None:
                        self._defs.setdefault(name, []).append((first, None, None, "define"))
                    elif v is False:
                        self._defs.setdefault(name, []).append((first, state, None, "undef"))
                    else:
                        self._defs.setdefault(name, []).append((first, state, None if v is True else v, "define"))
            elif kind in ("define", "undef"):
                head = defined_name(found_directives[index])
                if head is None:
                    continue
                name, function_like, body = head
                state = current_state()
                value = None
                if kind == "define" and not function_like:
                    num = re.fullmatch(r"\(?\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)?", body)
                    if num:
                        value = int(num.group(1), 16) if num.group(1)[:2] in ("0x", "0X") else int(num.group(1))
                # (line, state, value, kind); an #undef in a live branch undefines from here on
                self._defs.setdefault(name, []).append((first, state, value, kind))
                self._def_lines.append(first)
                if kind == "define" and not function_like and value is None and body:
                    self._bodies[(name, first)] = body
                if kind == "define" and state is not False:
                    parts = rest.split(None, 1)
                    self.live_macros[name] = parts[1] if len(parts) > 1 else ""
        while stack:  # unbalanced file: close at EOF
            close_branch(stack.pop(), self.n_lines + 1)

        # a branch that holds only `#error` is no alternative: `#if __CUDACC_VER_MAJOR__ >= 12 ...
        # #else #error "needs CUDA 12"` leaves an AMD build nothing to compile but the error
        errors = error_only_branches(self._text, found_directives, branches)
        frame_alternatives: dict[int, int] = {}
        frame_conds: dict[int, list[str]] = {}
        for start, end, value, cond, dir_line, fid in branches:
            frame_conds.setdefault(fid, []).append(cond)
            if value is not False and (start, end) not in errors:
                frame_alternatives[fid] = frame_alternatives.get(fid, 0) + 1
        for start, end, value, cond, dir_line, fid in sorted(branches, key=lambda b: (b[0], -b[1])):
            if value is None:
                for ln in range(start, min(end, self.n_lines) + 1):
                    self._unknown[ln] = True
                continue
            if value is not False:
                continue
            vals = frame_branch_values[fid]
            never = constant_frames.get(fid, False)
            has_alt = never or (len(vals) > 1 and frame_alternatives.get(fid, 0) > 0)
            guard = Guard(cond, dir_line, has_alt, never, frame_notes.get(fid, ""),
                          version_gate=is_version_gate(" ".join(frame_conds.get(fid, ()))))
            for ln in range(start, min(end, self.n_lines) + 1):
                if self._dead[ln] is None:
                    self._dead[ln] = guard

    def dead_for_amd(self, line: int) -> Guard | None:
        """The guard that keeps `line` out of the build (AMD unless the map was made for
        another platform), or None if it is compiled (or unknown)."""
        return self._dead[line] if 0 < line < len(self._dead) else None

    dead_at = dead_for_amd

    def unknown_for_amd(self, line: int) -> bool:
        return self._unknown[line] if 0 < line < len(self._unknown) else False


# HIP defines none of these (it has HIP_VERSION); nvcc 12.x defines them all.
CUDA_VERSION_MACROS = ("CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__")
# rules whose findings (renames) stand inside version-gated groups an AMD build skips, so the
# code is ready for the day the gate admits AMD
RENAMED_IN_VERSION_GATES = frozenset({"PTL601"})
_VERSION_MACRO = re.compile(r"\b(?:" + "|".join(CUDA_VERSION_MACROS) + r")\b")
_VENDOR_WORD = re.compile(r"HIP|ROCM|ROCm|AMD|__CUDA_ARCH")


def is_version_gate(conditions: str) -> bool:
    """The directive texts of a group test a CUDA toolkit version macro and name no vendor
    or arch macro (`#if CUDART_VERSION >= 11000`, `#if __CUDACC_VER_MAJOR__ >= 12`)."""
    return bool(_VERSION_MACRO.search(conditions)) and not _VENDOR_WORD.search(conditions)


def error_only_branches(text: str, found_directives, branches) -> set[tuple[int, int]]:
    """(first, last) line of each branch in `branches` whose code is only `#error` directives
    (at least one): a fatal stub, not an alternative."""
    errors = [d for d in found_directives if d.kind == "error"]
    if not errors:
        return set()
    covered = {n for d in found_directives for n in range(d.first, d.last + 1)}
    error_lines = {n for d in errors for n in range(d.first, d.last + 1)}
    lines = blank_comments(text).split("\n")
    out = set()
    for start, end, *_ in branches:
        span = range(start, min(end, len(lines)) + 1)
        code = [n for n in span if lines[n - 1].strip()]
        if code and any(n in error_lines for n in code) and all(n in covered and (n in error_lines or _is_conditional(found_directives, n)) for n in code):
            out.add((start, end))
    return out


def _is_conditional(found_directives, line: int) -> bool:
    return any(d.first <= line <= d.last and d.kind in ("if", "ifdef", "ifndef", "elif", "else", "endif") for d in found_directives)


def _include_resolver(graph, reach, includer: str, platform: Platform, busy: set[str], config: tuple[str, ...]):
    """GuardMap's include_macros for one file of `reach`: the macros the header an #include
    directive reads leaves defined for `platform` (nothing for a system or missing header)."""

    def macros(directive) -> dict[str, int | None | bool]:
        child = graph.resolve_include(reach, includer, directive, walked=True)
        if child is None or child in reach.system or child not in reach.edges:
            return {}  # missing, a system header, or past where the walk stopped (MAX_HEADERS)
        return _header_macros(graph, reach, child, platform, busy, config)

    return macros


def _header_macros(graph, reach, header: str, platform: Platform, busy: set[str], config: tuple[str, ...] = ()) -> dict[str, int | None | bool]:
    """Macros `header` (and what it includes where `platform` reads the #include) leaves
    defined for `platform`, kept in the scan's include graph. A header met again while it is
    being read (an include cycle, a header in `busy`) adds nothing.

    No read recurses: the headers below `header` are visited first with a stack of our own
    (depth first, in directive order, each header once) and each is read after everything
    it includes, so when its guard map asks for an included header's macros they are known
    already (or it is being read: a cycle). However deep a chain of headers a tree holds
    (round seven's A: 300 headers each including the next raised RecursionError), the
    Python stack stays as deep as one header's."""
    cached = graph.derived.get(_macros_key(header, platform, reach, config))
    if cached is not None:
        return cached
    if header in busy:
        return {}
    busy.add(header)
    stack = [(header, iter(_included(graph, reach, header)))]
    try:
        while stack:
            current, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                busy.discard(current)
                _read_header_macros(graph, reach, current, platform, busy, config)
                continue
            if child in busy or graph.derived.get(_macros_key(child, platform, reach, config)) is not None:
                continue
            busy.add(child)
            stack.append((child, iter(_included(graph, reach, child))))
    finally:
        for current, _ in stack:
            busy.discard(current)
    return graph.derived[_macros_key(header, platform, reach, config)]


def _macros_key(header: str, platform: Platform, reach, config: tuple[str, ...]) -> tuple:
    return ("macros", header, platform.name, reach.dirs, config)


def _included(graph, reach, header: str) -> list[str]:
    """The project headers `header`'s #include directives read (the guard map's resolver's
    answers, in directive order; none when the header defines and includes nothing)."""
    h = graph.header(header)
    if h is None or not any(d.kind in ("define", "undef", "include") for d in h.directives):
        return []
    # the walk that found `reach` resolved them already, by the same rule; a header it did
    # not expand (past MAX_HEADERS or MAX_INCLUDE_LINES) is not read for macros either
    return [child for child in reach.edges.get(header, ()) if child not in reach.system and child in reach.edges]


def _read_header_macros(graph, reach, header: str, platform: Platform, busy: set[str], config: tuple[str, ...]) -> None:
    """Read `header`'s final macros into the include graph (`_header_macros`' key); the
    headers it includes are read already or in `busy`."""
    key = _macros_key(header, platform, reach, config)
    if graph.derived.get(key) is not None:
        return
    h = graph.header(header)
    if h is None or not any(d.kind in ("define", "undef", "include") for d in h.directives):
        found: dict[str, int | None | bool] = {}
    else:
        from portlint.frontends.cuda.platform_macros import _header_platform_macros

        inferred = _header_platform_macros(graph, header, config)
        busy.add(header)
        try:
            found = GuardMap(h.text, platform=platform, platform_macros=inferred, file_directives=h.directives,
                             include_macros=_include_resolver(graph, reach, header, platform, busy, config)).final_defines()
        finally:
            busy.discard(header)
    graph.derived[key] = found


def header_defines(ctx, platform: Platform = AMD) -> dict[str, int | None | bool]:
    """Macros the headers the file includes (through the scan's include graph) define for
    `platform`. Values: an int, True (defined, value unknown), False (defined only in
    branches the build skips, so effectively undefined), None (defined under an unknown
    condition)."""
    from portlint.frontends.cuda.includes import file_reach, graph_of

    known = ctx.fact(_header_defines_by_platform)
    if platform.name in known:
        return known[platform.name]
    reach = ctx.fact(file_reach)
    if reach is None or not reach.headers:
        known[platform.name] = {}
        return {}
    graph = graph_of(ctx)
    config = tuple(getattr(ctx.settings, "amd_macros", ()) or ())
    out: dict[str, int | None | bool] = {}
    for child in reach.edges.get(reach.root, ()):
        if child in reach.system:
            continue
        out.update(_header_macros(graph, reach, child, platform, {reach.root}, config))
    known[platform.name] = out
    return out


def _header_defines_by_platform(ctx) -> dict[str, dict]:
    """ctx.fact: header_defines of the file, per platform name (filled on first use)."""
    return {}


def guard_map_for(ctx, platform: Platform) -> GuardMap:
    """The file's GuardMap for `platform`, with the macros of the headers it includes and the
    project platform macros of the file."""
    from portlint.frontends.cuda.includes import file_directives
    from portlint.frontends.cuda.platform_macros import platform_macros

    from portlint.frontends.cuda.includes import file_reach, graph_of

    found = ctx.fact(file_directives)
    reach = ctx.fact(file_reach)
    resolver = None
    if reach is not None and reach.headers:
        config = tuple(getattr(ctx.settings, "amd_macros", ()) or ())
        resolver = _include_resolver(graph_of(ctx), reach, reach.root, platform, {reach.root}, config)
    found_map = GuardMap(ctx.text, platform=platform, platform_macros=ctx.fact(platform_macros), file_directives=found,
                         include_macros=resolver)
    if found_map.limited:
        ctx.notice(f"preprocessor conditions too large to evaluate ({found_map.limited}); "
                   "the #if branches that depend on them are taken as unknown", "warning")
    return found_map


def vendor_guard_map(ctx) -> GuardMap:
    """ctx.fact(vendor_guard_map): the file's GuardMap for an AMD build known only by its
    vendor macros (preprocessor.AMD_BY_VENDOR)."""
    return guard_map_for(ctx, AMD_BY_VENDOR)


_NAME = re.compile(r"[A-Za-z_]\w*")


def excluded_from_amd(ctx, line: int) -> tuple[Guard, str] | None:
    """(guard, facts) when an AMD build skips `line` because a condition names the vendor:
    `#ifndef USE_ROCM`, `#if !defined(__HIP_PLATFORM_AMD__) && __CUDA_ARCH__ >= 800`, a
    feature macro the project #defines only where AMD builds do not reach, a `__CUDA_ARCH__`
    a HIP vendor header sets. `facts` says how such derived macros were read. None for a
    line AMD compiles, or skips only for want of `__CUDA_ARCH__` and the like."""
    if ctx.fact(guard_map).dead_for_amd(line) is None:
        return None
    vendor = ctx.fact(vendor_guard_map)
    guard = vendor.dead_for_amd(line)
    if guard is None:
        return None
    notes = []
    for name in dict.fromkeys(_NAME.findall(guard.condition.lstrip("#").partition(" ")[2])):
        if name == "defined" or name in AMD_BY_VENDOR.defined or name in AMD_BY_VENDOR.undefined:
            continue
        state = vendor.macro_state(name, guard.line)
        if state is False:
            notes.append(f"`{name}` is #defined only where an AMD build does not reach")
        elif isinstance(state, int) and not isinstance(state, bool) and name in AMD.undefined:
            notes.append(f"`{name}` is {state} in an AMD build (a header the file includes sets it)")
    return guard, "; ".join(notes)


def amd_only_guard(ctx, line: int) -> Guard | None:
    """The guard that keeps `line` out of every NVIDIA build while an AMD build may compile
    it (`#ifdef __HIP_PLATFORM_AMD__`, the `#else` of `#ifndef USE_ROCM`, a feature macro
    #defined only under `GGML_USE_HIP`): code written for AMD. None otherwise."""
    nvidia = ctx.fact(nvidia_guard_map).dead_at(line)
    if nvidia is None or nvidia.never or ctx.fact(guard_map).dead_at(line) is not None:
        return None
    return nvidia


def guard_map(ctx) -> GuardMap:
    """ctx.fact(guard_map): the file's GuardMap for an AMD build."""
    return guard_map_for(ctx, AMD)


def nvidia_guard_map(ctx) -> GuardMap:
    """ctx.fact(nvidia_guard_map): the file's GuardMap for an NVIDIA build (nvcc, host or
    device pass: `__CUDA_ARCH__` unknown)."""
    return guard_map_for(ctx, NVIDIA)


def sm90_guard_map(ctx) -> GuardMap:
    """ctx.fact(sm90_guard_map): the file's GuardMap for nvcc's device pass for sm_90a."""
    return guard_map_for(ctx, SM90)


# the folder of HIP's own headers (`<hip/hip_runtime.h>`, `<hip/hip_fp16.h>`): the CUDA
# toolkit has none of them
HIP_HEADER_FOLDER = "hip/"


_CONDITIONS = frozenset(("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"))


def _by_default(platform: Platform, found) -> Platform:
    """`platform` with no `-D` on the command line: every macro the conditions of `found` test
    that neither the compiler nor the file #defines is undefined."""
    tested = {m for d in found if d.kind in _CONDITIONS for m in _NAME.findall(d.rest)}
    own = {m.group() for d in found if d.kind == "define" for m in [_NAME.match(d.rest)] if m}
    off = frozenset(m for m in tested if m not in platform.defined and m not in own and m != "defined")
    return Platform(f"{platform.name}-default", platform.defined, platform.undefined | off, platform.vendor)


def default_off_guard(ctx, line: int) -> Guard | None:
    """The guard of a line whose #if an AMD build may take (it tests a project macro, unknown)
    but does not take with no `-D` given, where the group has another branch: code behind an
    opt-in switch (`#if defined(X_USE_NVTX)` ... `#else` a no-op). None otherwise."""
    if not ctx.fact(guard_map).unknown_for_amd(line):
        return None
    guard = ctx.fact(_default_amd_map).dead_at(line)
    return guard if guard is not None and guard.has_alternative and not guard.never else None


def _default_amd_map(ctx) -> GuardMap:
    found = ctx.fact(_includes.file_directives)
    return GuardMap(ctx.text, platform=_by_default(AMD, found), file_directives=found)


def _nvidia_hip_include(text: str, found) -> list:
    """The #include directives of one file a default NVIDIA build reads: nvcc's macros, and
    every other macro a condition tests undefined (no `-D` on the command line), unless the
    file #defines it: `#ifndef X_NO_HIP_HEADERS` is read, `#ifdef USE_HIP` is not."""
    gm = GuardMap(text, platform=_by_default(NVIDIA, found), file_directives=found)
    return [d for d in found if d.kind == "include" and gm.dead_at(d.first) is None and not gm.unknown_for_amd(d.first)]


def hip_written(ctx) -> str | None:
    """ctx.fact(hip_written): the HIP header an NVIDIA build of the file reads -- an #include
    of `<hip/...>` no #if keeps nvcc from, in the file or in a project header it reaches by
    such includes (`ck/ck.hpp` includes `hip/hip_runtime.h` for every kernel of AMD's
    composable_kernel). Such a file is written for HIP: nvcc alone does not build it, and
    what it says (`__launch_bounds__`' second argument) means what HIP reads. None otherwise;
    the walk reads at most includes.MAX_HEADERS headers."""
    def hip_include(text: str, found) -> tuple[str | None, list]:
        live = _nvidia_hip_include(text, found)
        for d in live:
            target = include_target(d)
            if target is not None and target[1].startswith(HIP_HEADER_FOLDER):
                return target[1], live
        return None, live

    name, live = hip_include(ctx.text, ctx.fact(_includes.file_directives))
    if name is not None:
        return f"`{name}`"
    reach = ctx.fact(_includes.file_reach)
    if reach is None or not reach.headers:
        return None
    graph = _includes.graph_of(ctx)
    own = set(graph.project_headers(reach))
    queue = [(reach.root, d) for d in live]
    seen = {reach.root}
    while queue and len(seen) <= _includes.MAX_HEADERS:
        includer, directive = queue.pop(0)
        path = graph.resolve_include(reach, includer, directive)
        if path is None or path in seen or path not in own:
            continue
        seen.add(path)
        key = ("hip-written", path)
        if key not in graph.derived:
            header = graph.header(path)
            graph.derived[key] = hip_include(header.text, header.directives) if header is not None else (None, [])
        name, inner = graph.derived[key]
        if name is not None:
            return f"`{name}` (through `{path.rsplit('/', 1)[-1]}`)"
        queue += [(path, d) for d in inner]
    return None
