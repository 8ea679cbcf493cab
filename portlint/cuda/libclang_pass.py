"""The libclang pass: macros and integer constants across headers, as an AMD build sees them.

tree-sitter reads one file. When a fact crosses files — `WARP_SIZE` #defined in a header
found through `-I`, `constexpr int kWarpSize = 32;` in a header, a `#define` that an
`#ifdef USE_ROCM` branch of a nested header chooses — libclang preprocesses the file under
HIP-Clang's defines (`__HIP_PLATFORM_AMD__`, `__HIPCC__`, `__HIP__`, `USE_ROCM`,
`GGML_USE_HIP`, `__HIP_DEVICE_COMPILE__`, no `__CUDA_ARCH__`) and reports the macros and
constants of every header it reached. Branches an AMD build skips produce no definitions, so
the values are the AMD ones.

It runs when `--compile-commands` is given (the file's `-I`/`-D`/`-isystem` flags are
used) or when the file includes a header with quotes that exists next to it. The CUDA
toolkit is not needed: `include/portlint_cuda_builtins.h` declares the CUDA keywords and
builtins, and every `<...>` header that is not found is replaced by an empty one (the pass
wants definitions, not a type-correct program). clang.cindex is imported only here, only
when the pass runs. If libclang fails, the file is analysed by tree-sitter alone and a
one-line notice says so. `PORTLINT_LIBCLANG=0` turns the pass off (used to measure it)."""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from functools import lru_cache
from pathlib import Path

BUILTINS = Path(__file__).resolve().parent / "include" / "portlint_cuda_builtins.h"
STUB_DIR = "/__portlint_stubs__"
AMD_DEFINES = ("__HIP_PLATFORM_AMD__=1", "__HIPCC__=1", "__HIP__=1", "USE_ROCM=1", "GGML_USE_HIP=1", "__HIP_DEVICE_COMPILE__=1")
_NOT_FOUND = re.compile(r"'([^']+)' file not found")
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_ANGLE_INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>', re.M)
_MAX_ROUNDS = 6

# Statistics of this process (read by the measurement in docs/libclang-pass.md).
STATS = {"files": 0, "seconds": 0.0, "failures": 0}


def enabled(ctx) -> bool:
    if os.environ.get("PORTLINT_LIBCLANG", "1") == "0":
        return False
    real = getattr(ctx, "real_path", None)
    if real is None:
        return False
    if getattr(ctx.settings, "compile_commands", None):
        return True
    folder = Path(real).parent
    return any((folder / inc).is_file() for inc in _QUOTED_INCLUDE.findall(ctx.text))


@lru_cache(maxsize=4)
def _compile_database(path: str) -> dict[str, tuple[str, list[str]]]:
    """file -> (directory, arguments) from a compile_commands.json."""
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for e in entries if isinstance(entries, list) else []:
        try:
            directory = e.get("directory", ".")
            args = e.get("arguments") or shlex.split(e.get("command", ""))
            file = str((Path(directory) / e["file"]).resolve())
        except (KeyError, TypeError, ValueError):
            continue
        out[file] = (directory, list(args))
    return out


def _flags_from_command(directory: str, args: list[str]) -> list[str]:
    """Keep what changes preprocessing: -I, -isystem, -D, -U, -include (paths made absolute)."""
    keep: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        for flag in ("-I", "-isystem", "-iquote", "-D", "-U", "-include"):
            if a == flag and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            elif a.startswith(flag) and len(a) > len(flag) and not (flag == "-I" and a.startswith("-isystem")) and not (flag == "-I" and a.startswith("-iquote")) and not (flag == "-I" and a.startswith("-include")):
                value = a[len(flag):]
            else:
                continue
            if flag in ("-I", "-isystem", "-iquote", "-include") and not os.path.isabs(value):
                value = str(Path(directory) / value)
            # a CUDA build's own vendor switch would contradict the AMD build we model
            if flag == "-D" and value.split("=")[0] in ("__CUDA_ARCH__", "__CUDACC__", "__NVCC__"):
                break
            keep.extend([flag, value])
            break
        i += 1
    return keep


def _arguments(ctx, path: Path) -> list[str]:
    args = ["-x", "c++", "-std=c++17", "-nostdinc", "-nostdinc++", "-fsyntax-only", "-Wno-everything",
            "-ferror-limit=0", f"-I{path.parent}", f"-I{STUB_DIR}", "-include", str(BUILTINS)]
    args += [f"-D{d}" for d in AMD_DEFINES]
    cc = getattr(ctx.settings, "compile_commands", None)
    if cc:
        entry = _compile_database(str(cc)).get(str(path.resolve()))
        if entry:
            args += _flags_from_command(*entry)
    return args


def _angle_includes(path: Path, text: str, include_dirs: list[Path], depth: int = 3) -> set[str]:
    """`<...>` headers named by the file and the quoted headers it reaches that no include
    directory provides: stubbed up front, so clang rarely has to be run twice."""
    seen: set[Path] = set()
    wanted: set[str] = set()
    todo = [(path, text, depth)]
    while todo:
        cur, body, d = todo.pop()
        wanted.update(_ANGLE_INCLUDE.findall(body))
        if d <= 0:
            continue
        for inc in _QUOTED_INCLUDE.findall(body):
            for base in [cur.parent, *include_dirs]:
                target = base / inc
                if target.is_file():
                    if target not in seen:
                        seen.add(target)
                        try:
                            todo.append((target, target.read_text(encoding="utf-8", errors="replace"), d - 1))
                        except OSError:
                            pass
                    break
    return {w for w in wanted if not any((base / w).is_file() for base in include_dirs)}


def _eval_tokens(tokens: list[str], known: dict[str, int]) -> int | None:
    from portlint.cuda.constants import ConstantMap, Const, eval_text

    cmap = ConstantMap(outside={k: Const(k, v, "libclang") for k, v in known.items()})
    return eval_text(" ".join(tokens), cmap)


def _collect(tu, main: str) -> dict[str, tuple[int, str]]:
    from clang.cindex import CursorKind

    values: dict[str, int] = {}
    origins: dict[str, str] = {}
    for cur in tu.cursor.walk_preorder():
        kind = cur.kind
        loc = cur.location
        if loc.file is None:
            continue
        fname = loc.file.name
        if fname == str(BUILTINS) or fname.startswith(STUB_DIR):
            continue
        if kind == CursorKind.MACRO_DEFINITION:
            toks = [t.spelling for t in cur.get_tokens()][1:]
            if toks and toks[0] == "(":  # function-like macro
                continue
            v = _eval_tokens(toks, values)
        elif kind == CursorKind.ENUM_CONSTANT_DECL:
            v = cur.enum_value
        elif kind == CursorKind.VAR_DECL and cur.type.is_const_qualified():
            toks = [t.spelling for t in cur.get_tokens()]
            if "=" not in toks:
                continue
            rest = toks[toks.index("=") + 1:]
            if rest and rest[-1] == ";":
                rest = rest[:-1]
            v = _eval_tokens(rest, values)
        else:
            continue
        if v is None:
            continue
        values[cur.spelling] = v
        origins[cur.spelling] = fname
    return {k: (v, origins[k]) for k, v in values.items() if origins[k] != main}


_DIRECTIVE_LINE = re.compile(r"^\s*#\s*(?:include|define|undef|if|ifdef|ifndef|elif|else|endif)\b.*$", re.M)
_CACHE: dict[tuple, dict[str, tuple[int, str]]] = {}


def libclang_constants(ctx) -> dict[str, tuple[int, str]]:
    """name -> (value, header) for integer macros and constants defined outside the file.

    Only definitions outside the file are returned, and they depend on the file only through
    its preprocessor directives: files of one directory with the same directives (the same
    includes under the same conditions) share one libclang run within a process."""
    if not enabled(ctx):
        return {}
    path = Path(ctx.real_path)
    args = _arguments(ctx, path)
    key = (str(path.parent), tuple(args), tuple(m.group(0).strip() for m in _DIRECTIVE_LINE.finditer(ctx.text)))
    if key in _CACHE:
        return _CACHE[key]
    start = time.perf_counter()
    STATS["files"] += 1
    try:
        import clang.cindex as ci

        index = ci.Index.create()
        include_dirs = [Path(args[i + 1]) for i, a in enumerate(args[:-1]) if a in ("-I", "-isystem", "-iquote")]
        include_dirs += [Path(a[2:]) for a in args if a.startswith("-I") and len(a) > 2 and not a.startswith(f"-I{STUB_DIR}")]
        stubs: dict[str, str] = {name: "" for name in _angle_includes(path, ctx.text, include_dirs)}
        options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | ci.TranslationUnit.PARSE_INCOMPLETE
        unsaved = [(str(path), ctx.data.decode("utf-8", errors="replace"))]
        tu = None
        for _ in range(_MAX_ROUNDS):
            files = unsaved + [(f"{STUB_DIR}/{name}", "") for name in stubs]
            tu = index.parse(str(path), args=args, unsaved_files=files, options=options)
            missing = {m.group(1) for d in tu.diagnostics for m in [_NOT_FOUND.search(d.spelling)] if m}
            missing -= set(stubs)
            if not missing:
                break
            for name in missing:
                stubs[name] = ""
        assert tu is not None
        found = _collect(tu, str(path))
        # -D macros of the compile command have no file: take them from the arguments
        for i, a in enumerate(args[:-1]):
            if a == "-D" and "=" in args[i + 1]:
                name, _, value = args[i + 1].partition("=")
                v = _eval_tokens([value], {})
                if v is not None and name not in found:
                    found[name] = (v, "compile_commands.json")
        if len(_CACHE) > 512:
            _CACHE.clear()
        _CACHE[key] = found
        return found
    except Exception as exc:  # libclang missing, broken, or a crash on this file
        STATS["failures"] += 1
        if hasattr(ctx, "notice"):
            ctx.notice(f"libclang pass failed ({type(exc).__name__}: {str(exc)[:80]}); tree-sitter analysis only", "note")
        return {}
    finally:
        STATS["seconds"] += time.perf_counter() - start
