"""Inline PTX and NVIDIA ISA in CUDA sources (PTL2xx).

PTL201 inline PTX, PTL202 PTX modules and JIT (.ptx files, NVRTC PTX/CUBIN output, module
loading), PTL203 NVVM builtins and libdevice symbols, PTL204 device intrinsics HIP does
not declare, PTL205 `__CUDA_ARCH__` comparisons that send AMD down another branch.
(PTL206, build flags, is not implemented: portlint does not scan build files.)"""

from __future__ import annotations

import re
from dataclasses import dataclass

from portlint.core.model import Span
from portlint.frontends.cuda.guards import error_only_branches, guard_map, is_version_gate, sm90_guard_map
from portlint.frontends.cuda.includes import file_directives
from portlint.frontends.cuda.name_tables import first_per_line
from portlint.frontends.cuda.platform_macros import names_vendor
from portlint.frontends.cuda.preprocessor import branch_value
from portlint.frontends.ptx import asm_sites, report_rule
from portlint.frontends.cuda.symbols import code_text
from portlint.core.registry import detector

# ---- PTL201 ----------------------------------------------------------------------------------


@detector("PTL201", tokens=("asm",))
def inline_ptx_asm(ctx) -> None:
    """`asm("...")` with PTX in device code, also behind a macro; statements owned by a more
    specific rule (wgmma, cp.async, ...) are left to it."""
    report_rule(ctx, "PTL201", intro="HIP has no inline PTX. Replace the asm with:")


# ---- PTL202 ----------------------------------------------------------------------------------

# the names that make PTX/CUBIN and those that load it: rules/cuda_ptx/names.toml, kinds
# "producer" and "loader"
_PTX_MODULE = re.compile(r"\.version\s+\d+\.\d+|\.target\s+sm_\d+|\.(?:visible\s+)?\.?entry\s+\w+\s*\(")
_NVRTC_ARCH = re.compile(r"^\s*(?:--gpu-architecture|-arch|--gpu-name)[=\s]*(?:compute|sm)_\d+\w*\s*$")
_JIT_ASM = re.compile(r"\basm\s*(?:volatile\s*)?\(")


def _ptx_file(ctx) -> None:
    where = next((n for n, ln in enumerate(ctx.lines, 1) if ln.lstrip().startswith((".target", ".version"))), 1)
    text = ctx.line_text(where)
    from portlint.core.model import Span

    ctx.report(
        Span(where, 1, where, max(2, len(text) + 1)),
        what="PTX module file",
        suggestion="AMD GPUs cannot load PTX. Rewrite the kernel in HIP C++ (or AMDGPU assembly) and ship a code "
        "object (`.hsaco`) built with `--offload-arch=gfx942`, loaded with `hipModuleLoad`.",
    )


@detector(
    "PTL202",
    tokens=("nvrtc", "cuModuleLoad", "cuLink", "CU_JIT_INPUT", ".version", ".target", "cuLibraryLoadData", "asm", "compute_", "sm_"),
)
def ptx_source_or_jit(ctx) -> None:
    """PTX modules, NVRTC PTX/CUBIN output, PTX-loading driver calls, JIT sources with inline PTX."""
    if ctx.language == "ptx":
        _ptx_file(ctx)
        return
    if ctx.language != "cuda":
        return
    ct = ctx.fact(code_text)
    seen: set[int] = set()
    # string literals: an embedded PTX module, NVRTC arch options, JIT source with inline PTX
    last_module_line = -10
    jit = bool(re.search(r"\bnvrtc\w*\s*\(|\bjitify\b|\bcuModuleLoad|\bcuLinkAdd", ct.code))
    for start, end, body in ct.strings:
        line = ct.line_of(start)
        if _PTX_MODULE.search(body):
            near = line - last_module_line <= 3
            last_module_line = line
            if near:
                continue  # the next lines of the same embedded module
            what, advice = "embedded PTX module", "AMD GPUs cannot load PTX: ship the kernel as HIP C++ compiled by hiprtc or as a `.hsaco` code object."
        elif _NVRTC_ARCH.match(body):
            what, advice = body.strip(), "hiprtc takes AMD targets: `--offload-arch=gfx942` (gfx90a, gfx950, ...); choose the option by platform."
        elif jit and _JIT_ASM.search(body) and re.search(r"%%?laneid|\.(?:u32|b32|f32|s32|u64|b64|global|shared|sync)\b|\b(?:mma|ldmatrix|cp\.async|wgmma|mbarrier)\b", body):
            what, advice = "inline PTX in a runtime-compiled source", "The JIT source holds PTX, which hiprtc cannot compile for AMD: write the HIP form of that code in the source string (see PTL201's counterparts)."
        else:
            continue
        if line in seen:
            continue
        seen.add(line)
        ctx.report(ct.span(start, end), what=what[:60], suggestion=advice)
    # loaders count only in a file that makes or embeds PTX/CUBIN (otherwise hipify's
    # rename to hipModuleLoadData is all there is to do)
    producers = first_per_line(ctx, "PTL202", ("producer",))
    hits = first_per_line(ctx, "PTL202", ("producer", "loader")) if seen or producers else producers
    for span, name, rule in hits:
        if span.start_line in seen:
            continue
        seen.add(span.start_line)
        ctx.report(span, what=name, suggestion=rule.advise(name))


# ---- PTL203 ----------------------------------------------------------------------------------

@detector("PTL203", tokens=("__nvvm_", "__nv_", "llvm.nvvm", "libdevice"))
def nvvm_builtins_and_libdevice_symbols(ctx) -> None:
    """`__nvvm_*` builtins, `__nv_*` libdevice calls, `llvm.nvvm.*` IR and libdevice files."""
    ct = ctx.fact(code_text)
    seen: set[int] = set()
    for start, end, body in ct.strings:
        m = re.search(r"llvm\.nvvm\.[\w.]+|libdevice(?:\.\d+)?\.bc", body)
        if m:
            line = ct.line_of(start)
            if line not in seen:
                seen.add(line)
                ctx.report(
                    ct.span(start, end),
                    what=m.group(0),
                    suggestion="NVVM IR and libdevice are NVIDIA-only: AMD's LLVM uses `llvm.amdgcn.*` intrinsics and the ROCm device libraries (ocml/ockl).",
                )
    for span, name, rule in first_per_line(ctx, "PTL203"):
        if span.start_line not in seen:
            seen.add(span.start_line)
            ctx.report(span, what=name, suggestion=rule.advise(name))


# ---- PTL204 ----------------------------------------------------------------------------------

@detector("PTL204", tokens=("__",))
def nvidia_only_device_intrinsic(ctx) -> None:
    """CUDA device intrinsics that HIP does not declare (dp4a, SIMD video, cache-policy
    stores, directed rounding, address-space conversions, __trap, ...). `__nanosleep` and `__fns`
    are warp-builtin availability (PTL110)."""
    report_rule(ctx, "PTL204")


# ---- PTL205 ----------------------------------------------------------------------------------

_ARCH_TEST = re.compile(
    r"__CUDA_ARCH__\s*(?:[<>]=?|[!=]=)\s*\d|\d\s*(?:[<>]=?|[!=]=)\s*__CUDA_ARCH__"
    r"|__CUDA_ARCH_FEAT_SM\d+\w*|__CUDA_ARCH_SPECIFIC__|__CUDA_ARCH_FAMILY_SPECIFIC__|__CUDA_ARCH_LIST__"
)
def _flagged_lines(ctx) -> set[int]:
    """Lines holding inline PTX or a name one of the PTL2xx-PTL4xx rules reports."""
    return ctx.fact(_flagged_lines_fact)


def _flagged_lines_fact(ctx) -> set[int]:
    from portlint.frontends.cuda.name_tables import lines_with_names

    lines = {ctx.node_span(site.where).start_line for site in ctx.fact(asm_sites)}
    return lines | lines_with_names(ctx, exclude=("PTL205",), exclude_kinds=("loader",))


def _nvidia_value(expr: str) -> str:
    """The condition as an sm_90a device pass sees it (CUDA macros substituted; the nvcc
    version is a 12.x that builds sm_90a)."""
    expr = re.sub(r"\b__CUDACC_VER_MAJOR__\b", "12", expr)
    expr = re.sub(r"\b__CUDACC_VER_MINOR__\b", "8", expr)
    expr = re.sub(r"defined\s*\(\s*(__CUDA_ARCH__|__CUDACC__|__NVCC__|__CUDA_ARCH_FEAT_SM90_ALL)\s*\)", "1", expr)
    expr = re.sub(r"defined\s+(__CUDA_ARCH__|__CUDACC__|__NVCC__|__CUDA_ARCH_FEAT_SM90_ALL)\b", "1", expr)
    expr = re.sub(r"defined\s*\(?\s*__CUDA_ARCH_(?:FEAT_SM\d+\w*|SPECIFIC__|FAMILY_SPECIFIC__)\s*\)?", "0", expr)
    expr = re.sub(r"\b__CUDA_ARCH_FEAT_SM90_ALL\b", "1", expr)
    expr = re.sub(r"\b__CUDA_ARCH_FEAT_SM\d+\w*|\b__CUDA_ARCH_SPECIFIC__|\b__CUDA_ARCH_FAMILY_SPECIFIC__", "0", expr)
    return re.sub(r"\b__CUDA_ARCH__\b", "900", expr)


def _choose(conds: list[tuple[str, str, int]], evaluate) -> int | None:
    """Index of the branch a compiler takes; len(conds) when none; None when unknown."""
    from portlint.frontends.cuda.preprocessor import choose

    return choose(conds, evaluate)


def _groups(ctx):
    """#if groups as lists of (kind, condition, line), from the file's directives (the one
    tokenizer, portlint/frontends/cuda/preprocessor.py); `#elifdef X` reads as `#elif defined(X)`."""
    from portlint.frontends.cuda.includes import file_directives

    stack: list[list[tuple[str, str, int]]] = []
    for d in ctx.fact(file_directives):
        kind, rest = d.kind, d.rest
        if kind in ("elifdef", "elifndef"):
            kind, rest = "elif", f"{'!' if kind == 'elifndef' else ''}defined({rest.split()[0] if rest.split() else ''})"
        if kind in ("if", "ifdef", "ifndef"):
            stack.append([(kind, rest, d.first)])
        elif kind in ("elif", "else") and stack:
            stack[-1].append((kind, rest, d.first))
        elif kind == "endif" and stack:
            yield stack.pop(), d.first


_NAME = re.compile(r"[A-Za-z_]\w*")


def _arch_macros_of(found_directives, known: set[str]) -> set[str]:
    """Macros #defined inside a group whose condition tests `__CUDA_ARCH__` (or a macro in
    `known`, itself defined that way) and no vendor macro: CUTLASS's
    `CUTLASS_ARCH_MMA_SM80_ENABLED`, CuTe's `CUTE_ARCH_TMA_SM90_ENABLED`, a kernel's own
    `#define ARCH_SUPPORTS_X`."""
    from portlint.frontends.cuda.preprocessor import defined_name

    out: set[str] = set()
    stack: list[str] = []  # the conditions of the open groups (all branches so far)
    for d in found_directives:
        if d.kind in ("if", "ifdef", "ifndef"):
            stack.append(d.rest)
        elif d.kind.startswith(("elif", "else")) and stack:
            stack[-1] += " " + d.rest
        elif d.kind == "endif" and stack:
            stack.pop()
        elif d.kind == "define" and stack:
            head = defined_name(d)
            text = " ".join(stack)
            if head and not names_vendor(text) and (
                _ARCH_TEST.search(text) or known.intersection(_NAME.findall(text))
            ):
                out.add(head[0])
    return out


def arch_macros(ctx) -> frozenset[str]:
    """ctx.fact(arch_macros): the macros the file and the project headers it reaches define
    from `__CUDA_ARCH__` (through other such macros too): a test of one is an arch gate."""
    from portlint.frontends.cuda.includes import file_directives, file_reach, graph_of

    lists = [ctx.fact(file_directives)]
    reach = ctx.fact(file_reach)
    if reach is not None and reach.headers:
        graph = graph_of(ctx)
        for path in graph.project_headers(reach):
            h = graph.header(path)
            if h is not None:
                lists.append(h.directives)
    known: set[str] = set()
    while True:  # a fixpoint: a macro may be defined from one a later header defines
        found = set().union(*(_arch_macros_of(d, known) for d in lists))
        if found <= known:
            return frozenset(known)
        known |= found


def _is_arch_gate(ctx, text: str) -> bool:
    if names_vendor(text):
        return False
    if _ARCH_TEST.search(text):
        return True
    return bool(ctx.fact(arch_macros).intersection(_NAME.findall(text)))


def _arch_groups(ctx, newer: bool = False):
    """(conds, end line, AMD's branch, sm_90's branch) of the `__CUDA_ARCH__` groups an AMD
    build compiles and where the two builds take different branches (index len(conds): none).
    A group counts when it tests `__CUDA_ARCH__` or a macro defined from it (arch_macros).
    With `newer`, a group whose later branch both AMD and sm_90 take counts too, with the first
    branch as NVIDIA's (the one a newer arch takes): the arch-stub check asks that."""
    from portlint.frontends.cuda.guards import guard_map, sm90_guard_map

    guards = ctx.fact(guard_map)
    sm90 = ctx.fact(sm90_guard_map)
    for conds, end in _groups(ctx):
        text = " ".join(c[1] for c in conds)
        if not _is_arch_gate(ctx, text):
            continue
        if guards.dead_for_amd(conds[0][2]) is not None:
            continue  # an enclosing group already keeps this out of an AMD build
        amd = _choose(conds, guards.evaluate)
        if amd is None:
            continue
        nvidia_at = lambda e, ln: sm90.evaluate(_nvidia_value(e), ln)  # noqa: E731
        nvidia = _choose(conds, nvidia_at)
        if nvidia is None:
            # an arch macro whose sm_90 value hangs on what nvcc's version macros say: the
            # first branch before AMD's that sm_90 may take is NVIDIA's
            nvidia = next((i for i, (kind, expr, line) in enumerate(conds[:amd])
                           if branch_value(kind, expr, lambda e, _ln=line: nvidia_at(e, _ln)) is not False), None)
        if newer and amd == nvidia and 0 < amd < len(conds):
            nvidia = 0  # sm_90 fails the gate as AMD does (`__CUDA_ARCH__ >= 1000`): a newer arch takes the first branch
        if nvidia is None or amd == nvidia:
            continue
        yield conds, end, amd, nvidia


# What an arch-gated stub's AMD branch may hold: nothing, asserts and traps, `(void)x;` casts
# and `CUTLASS_UNUSED(x)`-style macros that silence unused-parameter warnings, a bare `return;`
# or the return of a constant (`return true;`, `return {0, 0, 0};`: a dummy value, not the
# result the body computes). Inline asm is not a stub statement: an `asm("trap;")` branch is
# PTX an AMD build compiles, reported at its own line like any other PTX branch.
_STUB_STATEMENT = re.compile(
    r"(?:assert|__trap|__builtin_trap|__builtin_unreachable|abort|__assertfail|CUTE_INVALID_CONTROL_PATH|CUTLASS_NOT_IMPLEMENTED"
    r"|CUTLASS_ASSERT|static_assert|printf|\w*UNUSED\w*)\s*\(.*\)"
    r"|\(\s*void\s*\)\s*\(?[\w.\->\[\]]+\)?"
    r"|return(?:\s+(?:-?\d[\w.]*|true|false|nullptr))?",
    re.S,
)
# a constant inside `return {...}`: numbers, true/false/nullptr (not names of values)
_CONSTANT_LIST = re.compile(r"\{(?:\s*(?:-?\d[\w.]*|true|false|nullptr)\s*,?)*\s*\}")


@dataclass(frozen=True)
class ArchStub:
    """An `#if __CUDA_ARCH__ >= N` group whose branch for AMD does nothing."""

    gate_line: int  # the #if
    stub_kind: str  # "else" or "elif": the directive of the branch AMD compiles; "endif": none (the group is a whole function body)
    stub_line: int
    body: tuple[int, int]  # first and last line of the branch sm_90 compiles
    holds: str  # "nothing" or "only asserts or traps"

    def note(self) -> str:
        if self.stub_kind == "endif":
            return (
                f"Not ported: an AMD build compiles none of the branches of the `#if` at line {self.gate_line}, which is the "
                "whole body of its function, so on AMD this function silently does nothing (HIP-Clang leaves "
                "`__CUDA_ARCH__` undefined)."
            )
        return (
            f"Not ported: an AMD build compiles the `#{self.stub_kind}` branch at line {self.stub_line} instead, which holds "
            f"{self.holds}, so on AMD this code silently does nothing (HIP-Clang leaves `__CUDA_ARCH__` undefined)."
        )


def _stub_holds(code_lines: list[str], first: int, last: int) -> str | None:
    """"nothing" / "only asserts or traps" when lines first..last (1-based) are a stub
    (`code_lines` has comments and literals blanked)."""
    body = "\n".join(code_lines[first - 1 : last]).strip()
    if not body:
        return "nothing"
    if "#" in body:
        return None
    body = _CONSTANT_LIST.sub("0", body)  # `return {0, 0, 0};` is one constant
    stmts = [st.strip() for st in body.replace("{", ";").replace("}", ";").split(";") if st.strip()]
    if not stmts or not all(_STUB_STATEMENT.fullmatch(st) for st in stmts):
        return None
    if any(re.fullmatch(r"return\s+\S+", st) for st in stmts):
        return "only asserts, traps or a dummy return value"
    return "only asserts or traps"


def _whole_function_body(ctx, gate_line: int) -> bool:
    """The `#if` group at `gate_line` is all a function's body holds (`{ #if ... #endif }`):
    an AMD build that takes none of its branches compiles an empty function."""
    from portlint.frontends.cuda.parse import nodes_of_types

    for node in nodes_of_types(ctx.tree.root_node, ("preproc_if", "preproc_ifdef")):
        if node.start_point[0] + 1 != gate_line:
            continue
        body = node.parent
        if body is None or body.type != "compound_statement" or body.parent is None:
            return False
        if body.parent.type not in ("function_definition", "lambda_expression"):
            return False
        return all(c.id == node.id or c.type == "comment" for c in body.named_children)
    return False


def arch_stubs(ctx) -> list[ArchStub]:
    """ctx.fact(arch_stubs): arch-gated groups whose AMD branch is empty or only asserts/traps."""
    from portlint.frontends.cuda.symbols import code_text

    if "__CUDA_ARCH" not in ctx.text and not ctx.fact(arch_macros):
        return []
    code_lines = ctx.fact(code_text).code.split("\n")
    out = []
    for conds, end, amd, nvidia in _arch_groups(ctx, newer=True):
        if nvidia == len(conds):
            continue
        nv_last = conds[nvidia + 1][2] - 1 if nvidia + 1 < len(conds) else end - 1
        if amd == len(conds):
            # no branch for AMD: a stub when the group is the whole body of a function
            if _whole_function_body(ctx, conds[0][2]):
                out.append(ArchStub(conds[0][2], "endif", end, (conds[nvidia][2] + 1, nv_last), "nothing"))
            continue
        if conds[amd][0] not in ("else", "elif"):
            continue
        amd_last = conds[amd + 1][2] - 1 if amd + 1 < len(conds) else end - 1
        holds = _stub_holds(code_lines, conds[amd][2] + 1, amd_last)
        if holds is None or _stub_holds(code_lines, conds[nvidia][2] + 1, nv_last) is not None:
            continue  # AMD's branch computes, or both branches are constants (`return 1;` / `return 0;`: an answer)
        out.append(ArchStub(conds[0][2], conds[amd][0], conds[amd][2], (conds[nvidia][2] + 1, nv_last), holds))
    return out


_INCLUDE_OR_CONDITIONAL = frozenset(("include", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"))


def _only_includes(ctx, first: int, end: int) -> bool:
    """Do the lines of the group from `first` to its `#endif` at `end` hold only `#include`s
    (in any branch, nested groups included)? Leaving out a header AMD could not use anyway is
    no change of behaviour; the code that uses the header is gated (and reported) where it is."""
    from portlint.frontends.cuda.symbols import code_text

    from portlint.frontends.cuda.preprocessor import directives

    lines = ctx.fact(code_text).code.split("\n")[first - 1 : end]
    found = directives("\n".join(lines))
    covered = {n for d in found for n in range(d.first, d.last + 1)}
    code = {n for n, ln in enumerate(lines, 1) if ln.strip()}
    return (any(d.kind == "include" for d in found) and code <= covered
            and all(d.kind in _INCLUDE_OR_CONDITIONAL for d in found))


def stub_for(ctx, line: int) -> ArchStub | None:
    """The arch-gated stub whose sm_90 body holds `line` (the engine reports what is there as
    not ported rather than as an AMD-dead branch)."""
    for stub in ctx.fact(arch_stubs):
        if stub.body[0] <= line <= stub.body[1]:
            return stub
    return None


@detector("PTL205", tokens=("__CUDA_ARCH", "NV_IF_", "NV_DISPATCH_TARGET"))
def cuda_arch_feature_gate(ctx) -> None:
    """`#if __CUDA_ARCH__ >= N` groups that pick a different branch for AMD than for sm_90;
    a group whose AMD branch is a stub says that the code does nothing on AMD."""
    from portlint.core.model import Span

    from portlint.frontends.cuda.optional_hints import any_hint

    stubs = {s.gate_line: s for s in ctx.fact(arch_stubs)}
    for conds, end, amd, nvidia in _arch_groups(ctx):
        first_line = conds[0][2]
        stub = stubs.get(first_line)
        if _only_includes(ctx, first_line, end):
            continue  # `#if CUTLASS_ARCH_WMMA_ENABLED #include <mma.h> #endif`: not a behaviour gate
        if amd == len(conds):
            flagged = [line for line in _flagged_lines(ctx) if first_line < line < end]
            # AMD drops NVIDIA-only code here: that code's own finding says so, unless the
            # group is all its function does (then the function is empty on AMD), and what
            # it drops is more than optional hints (an empty PDL wait is correct)
            if flagged and (stub is None or all(any_hint(ctx.line_text(line)) for line in flagged)):
                continue
        if amd < len(conds):
            kind, _, line = conds[amd]
            taken = f"the `#{kind}` branch at line {line}"
        else:
            taken = "none of its branches"
        suggestion = (
            "Make the AMD path explicit: add `#elif defined(__HIP_PLATFORM_AMD__)` (or test `__gfx942__`, "
            "`__HIP_ARCH_HAS_WARP_SHUFFLE__`, ...) with the code AMD should run, or combine the test with "
            "`!defined(__HIP_PLATFORM_AMD__)` so the fallback is a deliberate choice."
        )
        if stub is not None and stub.stub_kind == "endif":
            taken += " (the group is the whole body of its function: the function does nothing on AMD)"
        elif stub is not None:
            taken += f" (it holds {stub.holds}: the code does nothing on AMD)"
        if stub is not None:
            suggestion = (
                "The kernel does nothing on AMD: HIP-Clang leaves `__CUDA_ARCH__` undefined, so the stub branch is "
                "compiled and the work is silently skipped (or traps). Port the body into an "
                "`#elif defined(__HIP_PLATFORM_AMD__)` branch (the constructs reported inside it say what to change), "
                "or test `defined(__HIP_PLATFORM_AMD__) || __CUDA_ARCH__ >= N` if the body is portable."
            )
        directive = ctx.line_text(first_line).strip()
        ctx.report(
            Span(first_line, 1, first_line, len(ctx.line_text(first_line)) + 1),
            what=directive[:80],
            taken=taken,
            suggestion=suggestion,
        )
    for span, name, rule in first_per_line(ctx, "PTL205"):
        ctx.report(span, what=name, taken="a compile error (`<nv/target>` is missing)", suggestion=rule.advise(name), targets={"rocm": "error"})


# ---- PTL206 ----------------------------------------------------------------------------------

def _cuda12_value(expr: str) -> str:
    """The condition as nvcc 12.8 sees it: the CUDA version macros substituted."""
    expr = re.sub(r"defined\s*\(?\s*(?:CUDA_VERSION|CUDART_VERSION|__CUDACC_VER_MAJOR__|__CUDACC_VER_MINOR__|__CUDACC_VER_BUILD__)\s*\)?", "1", expr)
    expr = re.sub(r"\b(?:CUDA_VERSION|CUDART_VERSION)\b", "12080", expr)
    expr = re.sub(r"\b__CUDACC_VER_MAJOR__\b", "12", expr)
    expr = re.sub(r"\b__CUDACC_VER_MINOR__\b", "8", expr)
    return re.sub(r"\b__CUDACC_VER_BUILD__\b", "0", expr)


def _branch_span(conds, end: int, index: int) -> tuple[int, int]:
    """First and last line of branch `index` of a group (its directive excluded)."""
    last = conds[index + 1][2] - 1 if index + 1 < len(conds) else end - 1
    return conds[index][2] + 1, last


@detector("PTL206", tokens=("CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_"))
def cuda_version_gate(ctx) -> None:
    """`#if CUDART_VERSION >= N` / `#if __CUDACC_VER_MAJOR__ >= 12` groups: HIP defines none
    of the CUDA version macros, so an AMD build takes another branch than nvcc 12 does. Says
    which branch AMD takes and what it loses; an AMD branch that is only `#error` stops the
    AMD build (error)."""
    guards = ctx.fact(guard_map)
    sm90 = ctx.fact(sm90_guard_map)
    groups = [(conds, end) for conds, end in _groups(ctx) if is_version_gate(" ".join(f"#{c[0]} {c[1]}" for c in conds))]
    if not groups:
        return
    spans = [(*_branch_span(conds, end, i), None) for conds, end in groups for i in range(len(conds))]
    errors = error_only_branches(ctx.text, ctx.fact(file_directives), spans)
    for conds, end in groups:
        first_line = conds[0][2]
        if guards.dead_for_amd(first_line) is not None:
            continue  # an enclosing group already keeps this out of an AMD build
        if _is_arch_gate(ctx, " ".join(c[1] for c in conds)):
            continue  # an arch test as well (`CUTLASS_ARCH_MMA_SM80_ENABLED && __CUDACC_VER_MAJOR__ >= 11`): PTL205's
        amd = _choose(conds, guards.evaluate)
        nvidia = _choose(conds, lambda e, ln: sm90.evaluate(_cuda12_value(e), ln))
        if amd is None or nvidia is None or amd == nvidia:
            continue
        targets = None
        if amd < len(conds):
            kind, _, line = conds[amd]
            taken = f"the `#{kind}` branch at line {line}"
            if _branch_span(conds, end, amd) in errors:
                taken += ", which is an `#error`: the AMD build stops there"
                targets = {"rocm": "error"}
        else:
            taken = "none of its branches"
        if nvidia < len(conds):
            lo, hi = _branch_span(conds, end, nvidia)
            lost = (f"lines {lo}-{hi}, the branch nvcc 12 compiles, are dropped" if hi > lo
                    else f"line {lo}, the branch nvcc 12 compiles, is dropped" if hi == lo
                    else "nvcc 12's branch is empty")
            cond = conds[nvidia][1] if conds[nvidia][0] in ("if", "elif") else ""
        else:
            lost = "that is code for an older CUDA, which nvcc 12 does not compile"
            cond = ""
        admit = (f"`#if ({cond}) || defined(__HIP_PLATFORM_AMD__)` when the newer path ports (the HIP renames inside "
                 "it are applied by `--fix --select hipify`), or " if cond else "")
        ctx.report(
            Span(first_line, 1, first_line, len(ctx.line_text(first_line)) + 1),
            what=f"#{conds[0][0]} {conds[0][1]}"[:80],
            taken=taken,
            lost=lost,
            suggestion=(
                "HIP defines none of CUDA_VERSION, CUDART_VERSION, __CUDACC_VER_MAJOR__/MINOR__ (it has HIP_VERSION), "
                f"so these tests read 0 under hipcc. Say what AMD should compile: {admit}"
                "a `#elif defined(__HIP_PLATFORM_AMD__)` branch with the AMD code (test HIP_VERSION for HIP's own features)."
            ),
            targets=targets,
        )
