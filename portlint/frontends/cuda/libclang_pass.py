"""The libclang pass: macros and integer constants across headers, as an AMD build sees them.

tree-sitter reads one file. When a fact crosses files — `WARP_SIZE` #defined in a header
found through `-I`, `constexpr int kWarpSize = 32;` in a header, a `#define` that an
`#ifdef USE_ROCM` branch of a nested header chooses — libclang preprocesses the file under
HIP-Clang's defines (`__HIP_PLATFORM_AMD__`, `__HIPCC__`, `__HIP__`, `USE_ROCM`,
`GGML_USE_HIP`, `__HIP_DEVICE_COMPILE__`, no `__CUDA_ARCH__`) and reports the macros and
constants of every header it reached. Branches an AMD build skips produce no definitions, so
the values are the AMD ones.

It runs when `--compile-commands` is given (the file's `-I`/`-D`/`-isystem` flags are
used) or when the file includes a header with quotes that exists next to it, and never
for a file with an #include that leads outside its project root (libclang reads headers
itself; `includes.py` refuses such names and says so). The CUDA
toolkit is not needed: `include/portlint_cuda_builtins.h` declares the CUDA keywords and
builtins, and every `<...>` header that is not found is replaced by an empty one (the pass
wants definitions, not a type-correct program). clang.cindex is imported only here, only
when the pass runs. If libclang fails, the file is analysed by tree-sitter alone and a
one-line notice says so. `PORTLINT_LIBCLANG=0` turns the pass off (used to measure it)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from portlint.frontends.cuda.cexpr import eval_text

BUILTINS = Path(__file__).resolve().parent / "include" / "portlint_cuda_builtins.h"
STUB_DIR = "/__portlint_stubs__"
AMD_DEFINES = ("__HIP_PLATFORM_AMD__=1", "__HIPCC__=1", "__HIP__=1", "USE_ROCM=1", "GGML_USE_HIP=1", "__HIP_DEVICE_COMPILE__=1")
_NOT_FOUND = re.compile(r"'([^']+)' file not found")
_MAX_ROUNDS = 6

# Statistics of this process (read by the measurement in docs/libclang-pass.md).
STATS = {"files": 0, "seconds": 0.0, "failures": 0, "kept": 0}


def enabled(ctx) -> bool:
    if os.environ.get("PORTLINT_LIBCLANG", "1") == "0":
        return False
    real = getattr(ctx, "real_path", None)
    if real is None:
        return False
    from portlint.frontends.cuda.includes import file_reach

    reach = ctx.fact(file_reach)
    if reach is None or reach.refused:
        # libclang reads headers itself: a file with an #include that leads outside the
        # project root (includes.py's bound; a notice says so) is left to tree-sitter
        return False
    if getattr(ctx.settings, "compile_commands", None) or getattr(ctx.settings, "include_dirs", None):
        return True
    return bool(reach.headers)


def _arguments(ctx, path: Path) -> list[str]:
    args = ["-x", "c++", "-std=c++17", "-nostdinc", "-nostdinc++", "-fsyntax-only", "-Wno-everything",
            "-ferror-limit=0", f"-I{path.parent}", f"-I{STUB_DIR}", "-include", str(BUILTINS)]
    args += [f"-D{d}" for d in AMD_DEFINES]
    from portlint.frontends.cuda.includes import graph_of

    graph = graph_of(ctx)
    for folder in graph.config_dirs:
        args.append(f"-I{folder}")
    return args + graph.flags_for(path)


# ---- results kept across runs ----------------------------------------------------------------
# A pre-commit run analyses one file in a fresh process, and the pass is most of its cost when
# it runs. Its result depends on the folder, the arguments, the file's directives and the
# headers it reaches (the scan's include graph, -I folders included), so with a cache
# directory it is kept under <cache>/libclang/, keyed by all of those and by portlint's own
# source; an entry that does not check out is ignored.

def _disk_entry(ctx, key: tuple, headers: list[str]) -> tuple[Path, Path, str] | None:
    """(cache directory, folder of the pass's entries, entry key), or None without a cache."""
    cache_dir = getattr(ctx.settings, "cache_dir", None)
    if cache_dir is None:
        return None
    from portlint.core.cache import code_fingerprint

    digest = hashlib.sha256()
    for part in ("libclang-pass-1", code_fingerprint(), repr(key)):
        digest.update(part.encode() + b"\0")
    from portlint.frontends.cuda.includes import graph_of

    graph = graph_of(ctx)
    args = key[1]
    forced = [os.path.realpath(args[i + 1]) for i in range(len(args) - 1) if args[i] == "-include" and args[i + 1] != str(BUILTINS)]
    for header in [*headers, *forced]:  # -include files of the compile command count too
        h = graph.header(header)
        digest.update(header.encode() + b"\0" + (h.digest.hex() if h is not None else "unreadable").encode() + b"\0")
    return Path(cache_dir), Path(cache_dir) / "libclang", digest.hexdigest()


def _disk_get(entry: tuple[Path, Path, str]) -> dict[str, tuple[int, str]] | None:
    from portlint.core.cache import read_entry

    body = read_entry(entry[1], entry[2])
    if body is None:
        return None
    try:
        return {name: (int(v), str(origin)) for name, (v, origin) in json.loads(body).items()}
    except Exception:  # a body that checks out but is not ours: not cached
        return None


def _disk_put(entry: tuple[Path, Path, str], found: dict[str, tuple[int, str]]) -> None:
    from portlint.core.cache import write_entry

    body = json.dumps({name: [v, origin] for name, (v, origin) in sorted(found.items())}, separators=(",", ":")).encode()
    try:
        write_entry(entry[1], entry[2], body, root=entry[0])
    except OSError:
        pass  # a read-only cache directory: the pass simply runs again next time


def _eval_tokens(tokens: list[str], known: dict[str, int]) -> int | None:
    return eval_text(" ".join(tokens), known.get)


def _definitions(tu):
    """The cursors that can define a constant, in source order: macro definitions, enum
    constants and variables. Only declarations that can hold such definitions are entered
    (namespaces, classes, enums, linkage blocks); functions, expressions and references are
    not, which keeps the walk to a fraction of the tree (function bodies are skipped by the
    parse options anyway)."""
    from clang.cindex import CursorKind as K

    containers = {K.TRANSLATION_UNIT, K.NAMESPACE, K.LINKAGE_SPEC, K.ENUM_DECL, K.STRUCT_DECL, K.CLASS_DECL,
                  K.UNION_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, K.UNEXPOSED_DECL}
    wanted = {K.MACRO_DEFINITION, K.ENUM_CONSTANT_DECL, K.VAR_DECL}
    stack = [tu.cursor]
    while stack:
        cur = stack.pop()
        kind = cur.kind
        if kind in wanted:
            yield kind, cur
        if kind in containers:
            stack.extend(reversed(list(cur.get_children())))


def _function_like():
    """libclang's test for a function-like macro (`#define F(x)`), or None when the library
    lacks it. Such a macro's first token after its name is `(`, so `_collect` skips it either
    way: asking first saves reading its tokens (most of the macros of CUTLASS-style headers)."""
    import ctypes

    from clang.cindex import Cursor, conf

    test = getattr(conf.lib, "clang_Cursor_isMacroFunctionLike", None)
    if test is not None:
        test.argtypes, test.restype = [Cursor], ctypes.c_uint
    return test


def _collect(tu, main: str) -> dict[str, tuple[int, str]]:
    from clang.cindex import CursorKind

    values: dict[str, int] = {}
    origins: dict[str, str] = {}
    builtins = str(BUILTINS)
    function_like = _function_like()
    for kind, cur in _definitions(tu):
        loc = cur.location
        if loc.file is None:
            continue
        fname = loc.file.name
        if fname == builtins or fname.startswith(STUB_DIR):
            continue
        if kind == CursorKind.MACRO_DEFINITION:
            if function_like is not None and function_like(cur):
                continue
            toks = [t.spelling for t in cur.get_tokens()][1:]
            if toks and toks[0] == "(":  # function-like macro
                continue
            v = _eval_tokens(toks, values)
        elif kind == CursorKind.ENUM_CONSTANT_DECL:
            v = cur.enum_value
        elif cur.type.is_const_qualified():  # a variable
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


# ---- the parse: headers libclang cannot find become empty stubs ---------------------------
# libclang stops entering #includes at the first header it cannot find (a fatal error), so the
# pass parses again with that header stubbed, until none is missing (at most _MAX_ROUNDS
# parses). Files of a scan share their include folders after the scanned file's own, and a
# header libclang found in none of them cannot be found there for the next file either: such
# names are stubbed up front (`_parse_with_known_missing`), which saves the rounds that would
# find them one by one. A stub no #include reaches is never read, so the result is the one of
# the rounds, as long as nothing asks whether a header exists (`__has_include`) and the names
# the file does reach would have fitted in the rounds; otherwise the rounds run as before.

@dataclass
class _Parse:
    index: object
    path: Path
    args: list[str]
    text: str
    options: int

    def run(self, stubs: dict[str, str]):
        files = [(str(self.path), self.text)] + [(f"{STUB_DIR}/{name}", "") for name in stubs]
        return self.index.parse(str(self.path), args=self.args, unsaved_files=files, options=self.options)


def _reported_missing(tu) -> tuple[set[str], bool]:
    """The header names libclang reports it cannot find, and whether every such report is the
    plain one ("'x' file not found", not the "found with quotes" kind that recovers)."""
    names, plain = set(), True
    for d in tu.diagnostics:
        m = _NOT_FOUND.search(d.spelling)
        if m:
            names.add(m.group(1))
            plain = plain and d.spelling == f"'{m.group(1)}' file not found"
    return names, plain


def _rounds(parse: _Parse, stubs: dict[str, str]):
    """Parse, stub what is missing, parse again (at most _MAX_ROUNDS parses). Returns the last
    translation unit, the names stubbed on the way, and whether the last parse reported no
    missing header at all and every report on the way was a plain one."""
    tu, added, plain = None, [], True
    for _ in range(_MAX_ROUNDS):
        tu = parse.run(stubs)
        reported, plain_here = _reported_missing(tu)
        plain = plain and plain_here
        missing = reported - set(stubs)
        if not missing:
            return tu, added, plain and not reported
        for name in missing:
            stubs[name] = ""
            added.append(name)
    return tu, added, False


def _parse_with_known_missing(ctx, parse: _Parse, stubs: dict[str, str]):
    """The translation unit of the rounds, with the names known to be missing stubbed up front
    when that provably gives the same one (see above)."""
    from portlint.frontends.cuda.includes import file_session

    # the arguments but the scanned file's own folder (searched before the stubs: a stub can
    # never hide a header there) say where else a header is looked for
    where = tuple(a for a in parse.args if a != f"-I{parse.path.parent}")
    known: set[str] = file_session(ctx).fact("libclang-missing", dict).setdefault(where, set())
    guessed = sorted(known - set(stubs))
    if guessed:
        trial = dict(stubs)
        trial.update((name, "") for name in guessed)
        tu, added, clean = _rounds(parse, trial)
        if clean and _same_as_rounds(ctx, tu, guessed, added):
            known.update(added)
            return tu
    tu, added, clean = _rounds(parse, stubs)
    if clean:
        known.update(added)
    return tu


def _same_as_rounds(ctx, tu, guessed: list[str], added: list[str]) -> bool:
    """Whether rounds from the file's own stubs would have ended with this translation unit:
    the guessed stubs it reads plus the names stubbed on the way fit in the rounds, and no file
    it reads asks whether a header exists (an unread stub would answer yes)."""
    from portlint.frontends.cuda.includes import graph_of

    if b"__has_include" in ctx.data:
        return False
    graph = graph_of(ctx)
    read: set[str] = set()
    for inclusion in tu.get_includes():
        name = inclusion.include.name
        if name.startswith(STUB_DIR + "/"):
            read.add(name[len(STUB_DIR) + 1:])
            continue
        header = graph.header(os.path.realpath(name))
        if header is None or b"__has_include" in header.data:
            return False
    return len(read & set(guessed)) + len(added) < _MAX_ROUNDS


def libclang_constants(ctx) -> dict[str, tuple[int, str]]:
    """name -> (value, header) for integer macros and constants defined outside the file.

    Only definitions outside the file are returned, and they depend on the file only through
    its preprocessor directives: files of one directory with the same directives (the same
    includes under the same conditions) share one libclang run within a process."""
    if not enabled(ctx):
        return {}
    from portlint.frontends.cuda.includes import file_directives, file_reach, file_session

    path = Path(ctx.real_path)
    args = _arguments(ctx, path)
    key = (str(path.parent), tuple(args), tuple((d.kind, d.rest) for d in ctx.fact(file_directives)))
    # results of this scan: files of one folder with the same directives share one run
    results = file_session(ctx).fact("libclang-results", dict)
    if key in results:
        return results[key]
    start = time.perf_counter()
    STATS["files"] += 1
    try:
        reach = ctx.fact(file_reach)
        entry = _disk_entry(ctx, key, list(reach.headers)) if reach.complete else None
        if entry is not None:
            kept = _disk_get(entry)
            if kept is not None:
                STATS["kept"] += 1
                results[key] = kept
                return kept
        import clang.cindex as ci

        options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | ci.TranslationUnit.PARSE_INCOMPLETE
        parse = _Parse(ci.Index.create(), path, args, ctx.data.decode("utf-8", errors="replace"), options)
        tu = _parse_with_known_missing(ctx, parse, {name: "" for name in reach.missing})
        found = _collect(tu, str(path))
        # -D macros of the compile command have no file: take them from the arguments
        for i, a in enumerate(args[:-1]):
            if a == "-D" and "=" in args[i + 1]:
                name, _, value = args[i + 1].partition("=")
                v = _eval_tokens([value], {})
                if v is not None and name not in found:
                    found[name] = (v, "compile_commands.json")
        results[key] = found
        if entry is not None:
            _disk_put(entry, found)
        return found
    except Exception as exc:  # libclang missing, broken, or a crash on this file
        STATS["failures"] += 1
        if hasattr(ctx, "notice"):
            ctx.notice(f"libclang pass failed ({type(exc).__name__}: {str(exc)[:80]}); tree-sitter analysis only", "note")
        return {}
    finally:
        STATS["seconds"] += time.perf_counter() - start
