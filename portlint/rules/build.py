"""Build files and dependencies (rules/build/): what fails first in a port, before any
kernel is compiled. CMake through portlint.frontends.buildfiles.cmake; Makefiles, shell lines and
Dockerfiles token by token; Python (setup.py, torch.utils.cpp_extension builders) through
its `ast`; dependency lists through portlint.frontends.buildfiles.requirements and rules/build/dependencies.toml.

Code in a CMake or Makefile vendor switch (`if(USE_ROCM)` ... `else()`), and Python code a
ROCm run never reaches, is the port: the rocm rules stay quiet there."""

from __future__ import annotations

import ast
import re
from pathlib import PurePath

from portlint.frontends.buildfiles import flags as flagmod
from portlint.frontends.buildfiles.cmake import parse_cmake
from portlint.core.model import Span
from portlint.frontends.python.astindex import of_class
from portlint.index.build_scope import file_verdict
from portlint.core.registry import detector

_FINDCUDA_COMMANDS = {
    "cuda_add_library", "cuda_add_executable", "cuda_compile", "cuda_compile_ptx", "cuda_compile_fatbin",
    "cuda_compile_cubin", "cuda_include_directories", "cuda_wrap_srcs", "cuda_add_cublas_to_target",
    "cuda_add_cufft_to_target", "cuda_select_nvcc_arch_flags", "cuda_build_clean_target", "cuda_link_separate",
}
_ARCH_COMMANDS = {"set", "set_property", "set_target_properties", "set_source_files_properties", "list", "string"}


def _kind(ctx) -> str | None:
    return next(iter(ctx.tags), None) if ctx.language == "build" else None


# words in a file name that say which target a Dockerfile or requirements file is for
_TARGET_WORDS = {
    "rocm": {"rocm", "hip", "amd"},
    "tpu": {"tpu", "xla"},
    "trainium": {"neuron", "trainium", "trn1", "trn2", "inf2"},
    "gaudi": {"hpu", "gaudi", "habana"},
}


def _targets_named(name: str) -> set[str]:
    words = set(re.split(r"[^a-z0-9]+", name.lower()))
    return {t for t, w in _TARGET_WORDS.items() if words & w}


def ported_targets(ctx) -> frozenset[str]:
    """`ctx.fact(ported_targets)`: the targets a Dockerfile or requirements file is the other
    leg of: a sibling of the same kind is named for them (`Dockerfile` beside `Dockerfile.rocm`,
    `requirements/cuda.txt` beside `requirements/rocm.txt`). The directory listing is read,
    nothing else."""
    from portlint.discovery.build_kinds import build_kind

    kind = _kind(ctx)
    real = getattr(ctx, "real_path", None)
    if kind not in ("docker", "requirements") or real is None:
        return frozenset()
    own = _targets_named(real.name)
    found: set[str] = set()
    try:
        for sibling in real.parent.iterdir():
            if sibling.name != real.name and build_kind(sibling.name) == kind:
                found |= _targets_named(sibling.name)
    except OSError:
        return frozenset()
    return frozenset(found - own)


_CUDA_WORDS = ("cuda", "nvidia", "cu")
_HIP_WORDS = ("hip", "rocm", "amd")


def cuda_backend_folder(ctx) -> bool:
    """`ctx.fact(cuda_backend_folder)`: a CMake file in a folder named for CUDA whose sibling
    folder has the same name with HIP or ROCm in its place (`ggml-cuda/` beside `ggml-hip/`):
    the CUDA backend of a build that has a HIP backend, the port's other leg."""
    real = getattr(ctx, "real_path", None)
    if _kind(ctx) != "cmake" or real is None:
        return False
    folder = real.parent
    parts = re.split(r"([^A-Za-z0-9]+)", folder.name)
    for i, part in enumerate(parts):
        if part.lower() in _CUDA_WORDS:
            for hip in _HIP_WORDS:
                twin = "".join(parts[:i] + [hip] + parts[i + 1:])
                try:
                    if any(s.is_dir() and s.name.lower() == twin.lower() for s in folder.parent.iterdir()):
                        return True
                except OSError:
                    return False
    return False


def _report(ctx, where, **fields) -> None:
    """ctx.report for the rules' own targets less those a sibling file is the port for."""
    if ctx.fact(cuda_backend_folder):  # only the rocm-only CMake rules reach a CMake file
        return
    ported = ctx.fact(ported_targets)
    if ported:
        targets = fields.pop("targets", None) or {t: s for t, s in ctx.rule.severity.items()}
        targets = {t: s for t, s in targets.items() if t not in ported}
        if not targets:
            return
        fields["targets"] = targets
    ctx.report(where, **fields)


def _token_span(ctx, line: int, col: int, token: str) -> Span:
    return Span(line, col, line, col + len(token))


def _in_arg(ctx, arg, token: str, offset: int) -> Span:
    """Span of `token` found at `offset` of a CMake argument's text."""
    if arg.span.start_line == arg.span.end_line:
        text = ctx.line_text(arg.span.start_line)
        at = text.find(token, arg.span.start_col - 1)
        if at >= 0:
            return _token_span(ctx, arg.span.start_line, at + 1, token)
    return arg.span


# ---- text lines: Makefiles, shell scripts, Dockerfile RUN/ENV --------------------------------
def _text_lines(ctx):
    """(line, text) of a Makefile or shell script, comments cut, lines in a vendor switch left out."""
    from portlint.frontends.buildfiles.make import vendor_lines

    guarded = vendor_lines(ctx.lines) if _kind(ctx) == "make" else {}
    for number, line in enumerate(ctx.lines, start=1):
        if number in guarded:
            continue
        body = re.split(r"(?:^|\s)#", line, maxsplit=1)[0]
        if body.strip():
            yield number, body


def _docker_runs(ctx):
    """(instruction, text) of Dockerfile RUN and ENV/ARG instructions."""
    for ins in ctx.fact(_docker):
        if ins.keyword in ("RUN", "ENV", "ARG"):
            yield ins


def _docker(ctx):
    from portlint.frontends.buildfiles.dockerfile import instructions

    return instructions(ctx.lines)


def _docker_span(ins, offset: int, token: str) -> Span:
    line, col = ins.positions[offset]
    return Span(line, col, line, col + len(token))


# ---- Python: string constants of build code --------------------------------------------------
def _python_strings(ctx, wanted):
    """(string constant, wanted(its text)) for each string constant of a Python file with a
    truthy `wanted` result that an AMD run can reach (the guards are worked out only for a
    file with such a string)."""
    from portlint.analyses.python.guards import guard_map

    guards = None
    for node in of_class(ctx.module, ast.Constant):
        if isinstance(node.value, str) and len(node.value) < 2000:
            found = wanted(node.value)
            if not found:
                continue
            if guards is None:
                guards = ctx.fact(guard_map)
            if guards.dead_for_amd(node):
                continue
            yield node, found


def _flag_findings(ctx, want: str):
    """(span, hit) for each flag of kind `want` ("arch" | "nvcc"): one per line for the arch
    flags (the `-gencode` list of a line is one choice), each for the nvcc-only options (each
    has its own counterpart)."""
    seen: set = set()
    kind = _kind(ctx)

    def keep(span: Span) -> bool:
        key = span.start_line if want == "arch" else (span.start_line, span.start_col)
        if key in seen:
            return False
        seen.add(key)
        return True

    if kind == "cmake":
        for cmd in ctx.fact(parse_cmake).commands:
            if cmd.guard or cmd.name == "message":
                continue
            for arg in cmd.args:
                for hit in flagmod.flag_hits(arg.text):
                    if hit.kind == want:
                        span = _in_arg(ctx, arg, hit.token, hit.offset)
                        if keep(span):
                            yield span, hit
    elif kind in ("make", "shell"):
        for number, body in _text_lines(ctx):
            for hit in flagmod.flag_hits(body):
                if hit.kind == want:
                    span = _token_span(ctx, number, hit.offset + 1, hit.token)
                    if keep(span):
                        yield span, hit
    elif kind == "docker":
        for ins in _docker_runs(ctx):
            for hit in flagmod.flag_hits(ins.text):
                if hit.kind == want:
                    span = _docker_span(ins, hit.offset, hit.token)
                    if keep(span):
                        yield span, hit
    elif ctx.language == "python":
        def options(text: str) -> list:
            # an option is the string itself (or its first word), not prose that names one
            first = text.lstrip()
            if want == "arch" and not first.startswith(_ARCH_STARTS):
                return []  # every architecture flag starts so (flags._ARCH_TOKEN): no hit can lead the string
            return [hit for hit in flagmod.flag_hits(text) if hit.kind == want and first.startswith(hit.token)]

        for node, hits in _python_strings(ctx, options):
            for hit in hits:
                span = ctx.node_span(node)
                if keep(span):
                    yield span, hit


# how every token `flags.is_arch_token` accepts begins
_ARCH_STARTS = ("-", "arch=")
_ARCH_TOKENS = ("gencode", "generate-code", "arch=", "sm_", "compute_", "CUDA_ARCH", "gpu-architecture")


@detector("PTL050", tokens=("CUDA",))
def cuda_language_without_hip(ctx) -> None:
    if _kind(ctx) != "cmake":
        return
    cm = ctx.fact(parse_cmake)
    why = "the project never enables HIP"
    hip_in_branch = cm.enables_hip()
    if hip_in_branch:
        # HIP enabled only inside an if() leg: `project(... CUDA)` (and a top-level
        # `enable_language(CUDA)`) runs first, and without nvcc configuring stops there
        if any(not c.in_if and _enables(c, "HIP") for c in cm.commands):
            return
        why = "HIP is enabled only inside an if() leg, which CMake never reaches on a machine without nvcc"
    for cmd in cm.commands:
        if cmd.guard:
            continue
        if cmd.name == "enable_language" or cmd.name == "project":
            if hip_in_branch and cmd.name == "enable_language" and cmd.in_if:
                continue
            args = cmd.args if cmd.name == "enable_language" else cmd.args[1:]
            for arg in args:
                if arg.text == "CUDA":
                    _report(ctx, arg.span, command=cmd.name, why=why,
                               suggestion="enable CMake's HIP language beside it (CMake >= 3.21): `enable_language(HIP)` "
                                          "under `if(USE_ROCM)`, with `CMAKE_HIP_ARCHITECTURES gfx942`, and set "
                                          "`LANGUAGE HIP` on the .cu sources (set_source_files_properties)")
                    break


def _enables(cmd, language: str) -> bool:
    if cmd.name == "enable_language":
        return any(a.text == language for a in cmd.args)
    return cmd.name == "project" and any(a.text == language for a in cmd.args[1:])


@detector("PTL051", tokens=_ARCH_TOKENS)
def nvidia_gpu_architectures(ctx) -> None:
    kind = _kind(ctx)
    seen: set[int] = set()
    if kind == "cmake":
        for cmd in ctx.fact(parse_cmake).commands:
            if cmd.guard or cmd.name not in _ARCH_COMMANDS:
                continue
            for i, arg in enumerate(cmd.args):
                name = re.sub(r"^ENV\{(.*)\}$", r"\1", arg.text)
                value = cmd.args[i + 1].text.strip() if i + 1 < len(cmd.args) else ""
                # `CUDA_ARCHITECTURES OFF` / empty: no architecture flags at all
                if name in flagmod.ARCH_VARIABLES and value.upper() not in ("OFF", "", "FALSE", "NO"):
                    seen.add(arg.span.start_line)
                    _report(ctx, arg.span, what=name, suggestion=flagmod.ARCH_SUGGESTION)
                    break
    elif kind == "docker":
        for ins in _docker_runs(ctx):
            for name in flagmod.ARCH_VARIABLES:
                for m in re.finditer(rf"\b{name}\b", ins.text):
                    span = _docker_span(ins, m.start(), name)
                    if span.start_line not in seen:
                        seen.add(span.start_line)
                        _report(ctx, span, what=name, suggestion=flagmod.ARCH_SUGGESTION)
    elif ctx.language == "python":
        for node in of_class(ctx.module, ast.Assign, ast.Call):  # the nodes _environ_key can match
            key = _environ_key(node)
            if key is not None and key.value in flagmod.ARCH_VARIABLES:
                span = ctx.node_span(key)
                if span.start_line not in seen:
                    seen.add(span.start_line)
                    _report(ctx, span, what=key.value, suggestion=flagmod.ARCH_SUGGESTION)
    for span, hit in _flag_findings(ctx, "arch"):
        if span.start_line not in seen:
            seen.add(span.start_line)
            _report(ctx, span, what=hit.token, suggestion=flagmod.ARCH_SUGGESTION)


def _environ_key(node) -> ast.Constant | None:
    """The constant key of `os.environ[KEY] = ...` or `os.environ.setdefault(KEY, ...)`."""
    if isinstance(node, ast.Assign):
        for t in node.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str) \
                    and isinstance(t.value, ast.Attribute) and t.value.attr == "environ":
                return t.slice
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("setdefault", "putenv") \
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        owner = node.func.value
        if (isinstance(owner, ast.Attribute) and owner.attr == "environ") or (isinstance(owner, ast.Name) and owner.id == "os"):
            return node.args[0]
    return None


@detector("PTL052", tokens=("CUDA", "cuda_"))
def findcuda_module(ctx) -> None:
    if _kind(ctx) != "cmake":
        return
    for cmd in ctx.fact(parse_cmake).commands:
        if cmd.guard:
            continue
        if cmd.name == "find_package" and cmd.args and cmd.args[0].text == "CUDA":
            _report(ctx, cmd.span, what="find_package(CUDA)")
        elif cmd.name in _FINDCUDA_COMMANDS:
            _report(ctx, cmd.span, what=cmd.name)


@detector("PTL053", tokens=("CUDA::",))
def cuda_imported_targets(ctx) -> None:
    if _kind(ctx) != "cmake":
        return
    from portlint.frontends.buildfiles.tables import cmake_targets

    table = cmake_targets()
    for cmd in ctx.fact(parse_cmake).commands:
        if cmd.guard:
            continue
        for arg in cmd.args:
            for token, offset in flagmod.tokens(arg.text):
                m = re.search(r"CUDA::(\w+)", token)
                if not m:
                    continue
                name = m.group(1)
                if name in table:
                    rocm, package = table[name]
                    suggestion = f"`find_package({package.split(' ')[0]})` and link `{rocm}` on AMD"
                else:
                    suggestion = "link the ROCm library's own CMake target (find_package(<rocm library>)) on AMD"
                _report(ctx, _in_arg(ctx, arg, m.group(), offset), target=m.group(), suggestion=suggestion)


@detector("PTL054", tokens=("-Xptxas", "ptxas-options", "fast_math", "fast-math", "-rdc", "relocatable-device-code",
                            "expt-", "extended-lambda", "maxrregcount", "-Xcompiler", "-lineinfo", "SEPARABLE_COMPILATION",
                            "-Xfatbin", "compress-mode"))
def nvcc_only_flags(ctx) -> None:
    seen: set[int] = set()
    if _kind(ctx) == "cmake":
        for cmd in ctx.fact(parse_cmake).commands:
            if cmd.guard:
                continue
            for arg in cmd.args:
                if arg.text == "CUDA_SEPARABLE_COMPILATION" and arg.span.start_line not in seen:
                    seen.add(arg.span.start_line)
                    _report(ctx, arg.span, flag=arg.text, behaviour="has no HIP counterpart property",
                               suggestion="`-fgpu-rdc` in the HIP compile and link options (CMake: target_compile_options / "
                                          "target_link_options under the HIP language)")
    flagged: set[tuple[int, int]] = set()
    for span, hit in _flag_findings(ctx, "nvcc"):
        # every nvcc-only flag of a line is its own finding (each has its own counterpart);
        # a line whose CUDA_SEPARABLE_COMPILATION property was reported is that one finding
        if span.start_line in seen or (span.start_line, span.start_col) in flagged:
            continue
        flagged.add((span.start_line, span.start_col))
        if hit.cuda_language_only:
            # CMake gives it to nvcc alone (a HIP-language source never gets it): nothing breaks;
            # what is left is the option's effect, when the HIP build needs its counterpart
            if hit.flag.nothing_to_carry:
                continue
            _report(ctx, span, flag=hit.token, behaviour="reaches nvcc alone here (`$<COMPILE_LANGUAGE:CUDA>`): "
                    "a HIP build of the target goes without its effect unless the HIP options carry the counterpart",
                    suggestion=hit.flag.counterpart)
            continue
        behaviour = {"rejected": "is rejected by hipcc", "ignored": "is ignored by hipcc (\"argument unused\")",
                     "misread": "is read by hipcc as a different option"}[hit.flag.hipcc]
        _report(ctx, span, flag=hit.token, behaviour=behaviour, suggestion=hit.flag.counterpart)


@detector("PTL055", tokens=("cuda", "cu1", "nvidia", "nvml", "flash", "xformers", "apex", "bitsandbytes", "triton",
                            "tensorrt", "gpustat", "onnxruntime-gpu", "onnxruntime_gpu"))
def dependency_without_target_build(ctx) -> None:
    from portlint.frontends.buildfiles import requirements as req

    kind = _kind(ctx)
    if kind == "requirements":
        reqs, indexes = req.from_requirements_file(ctx.lines)
        for r in reqs:
            _judge(ctx, r.text, r.span)
        for r in indexes:
            _report_index(ctx, r.text, r.span)
    elif kind == "pyproject":
        for r in req.from_pyproject(ctx.data, ctx.lines, ctx.notice):
            _judge(ctx, r.text, r.span)
    elif kind == "setupcfg":
        for r in req.from_setup_cfg(ctx.lines):
            _judge(ctx, r.text, r.span)
    elif kind == "docker":
        for ins in _docker_runs(ctx):
            if ins.keyword != "RUN":
                continue
            for text, offset in req.pip_install_arguments(ins.text):
                span = _docker_span(ins, offset, text)
                if text.startswith("-"):
                    if req.CUDA_INDEX.search(text):
                        _report_index(ctx, text, span)
                else:
                    _judge(ctx, text, span)
    elif ctx.language == "python" and PurePath(ctx.path).name == "setup.py":
        for text, node in req.from_setup_py(ctx.module):
            _judge(ctx, text, ctx.node_span(node))


def _judge(ctx, text: str, span: Span) -> None:
    from portlint.frontends.buildfiles.requirements import forms
    from portlint.frontends.buildfiles.tables import dependency_for

    found = forms(text)
    dep = dependency_for(found) if found else None
    if dep is None:
        return
    targets = {t: ("error" if a.status == "missing" else "note") for t, a in dep.targets.items() if a.status != "available"}
    # only the targets in scope (`targets` / --target): the message names their counterparts alone
    # (and not those a sibling requirements file or Dockerfile is the port for)
    ported = ctx.fact(ported_targets)
    targets = {t: s for t, s in targets.items() if t in ctx.rule.severity and t in ctx.settings.targets and t not in ported}
    if not targets:
        return
    advice = "; ".join(f"{t}: {dep.targets[t].counterpart}" + (" (drop it)" if dep.targets[t].status == "drop" else "")
                       for t in targets)
    # the fact's source stays in the table (a report page links nowhere)
    _report(ctx, span, targets=targets, requirement=text, what=dep.what, named=_target_names(targets),
            counterparts=advice, suggestion=f"{advice} (rules/build/dependencies.toml, checked {dep.checked})")


def _target_names(targets) -> str:
    """The targets a PTL055 message is about, as its text names them: `rocm`, `tpu or gaudi`,
    `rocm, tpu, trainium or gaudi` (never "this target" for a list of several)."""
    names = list(targets)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


# what replaces a CUDA wheel index on each target
_INDEX_COUNTERPARTS = {"rocm": "PyTorch's ROCm index (`/whl/rocmX.Y`)", "tpu": "the CPU index plus torch_xla[tpu]",
                       "trainium": "the Neuron pip repository (torch-neuronx)", "gaudi": "Intel Gaudi's containers"}


def _report_index(ctx, text: str, span: Span) -> None:
    ported = ctx.fact(ported_targets)
    targets = {t: "error" for t in ctx.rule.severity if t in ctx.settings.targets and t not in ported}
    if not targets:
        return
    advice = "; ".join(f"{t}: {_INDEX_COUNTERPARTS[t]}" for t in targets)
    shown = re.sub(r"https?://[^/\s]+", "...", text)  # the index's path says CUDA; no address in the message
    _report(ctx, span, targets=targets, requirement=shown, what="a CUDA wheel index", named=_target_names(targets),
            counterparts=advice, suggestion=advice)


@detector("PTL056", tokens=("FROM", "from"))
def nvidia_base_image(ctx) -> None:
    if _kind(ctx) != "docker":
        return
    from portlint.frontends.buildfiles.dockerfile import NVIDIA_IMAGE, image_of

    defaults: dict[str, tuple[str, object, int]] = {}  # ARG name -> (default, instruction, offset)
    for ins in ctx.fact(_docker):
        if ins.keyword == "ARG":
            m = re.match(r"\s*(\w+)=(\S+)", ins.text)
            if m:
                value = m.group(2).strip("\"'")
                defaults[m.group(1)] = (value, ins, m.start(2) + (1 if m.group(2)[0] in "\"'" else 0))
            continue
        if ins.keyword != "FROM":
            continue
        found = image_of(ins)
        if not found:
            continue
        if NVIDIA_IMAGE.match(found[0]):
            _report(ctx, _docker_span(ins, found[1], found[0]), image=found[0])
            continue
        # `FROM ${BASE}`: the image is the ARG's default, reported where it is written
        ref = re.fullmatch(r"\$\{?(\w+)\}?", found[0])
        if ref and ref.group(1) in defaults:
            value, arg, offset = defaults[ref.group(1)]
            if NVIDIA_IMAGE.match(value):
                _report(ctx, _docker_span(arg, offset, value), image=value)


@detector("PTL057")
def source_not_in_rocm_build(ctx) -> None:
    """A CUDA file its package's ROCm build never compiles (portlint.index.build_scope); the
    findings stage folds the file's other ROCm findings under this one."""
    if ctx.language != "cuda":
        return
    verdict = ctx.fact(file_verdict)
    if verdict is not None:
        ctx.report(Span(1, 1, 1, 1), listed=verdict.where())
