"""The scan: for each file, read, classify, parse once, run the detectors in one walk, then
apply guards, suppressions and config filters. Files are independent, so they are spread
over worker processes; the result is sorted, so the worker count never changes it."""

from __future__ import annotations

import codecs
import dataclasses
import gc
import hashlib
import os
import re
from typing import Callable

from portlint.core.config import Settings
from portlint.index.context import FileContext
from portlint.discovery.files import SourceFile
from portlint.core.files import NotRead, read_limited
from portlint.discovery.languages import CUDA_EXTENSIONS, CXX_EXTENSIONS, PYTHON_EXTENSIONS, classify
from portlint.frontends.cuda.includes import read_once
from portlint.core.model import FileResult, Finding, Notice, ScanResult, Severity, Span
from portlint.core.registry import Detector
from portlint.findings.selection import TOOL_INTERNAL, Plan, plan as _plan
from portlint.findings.stage import NOT_IN_ROCM_BUILD, apply_findings_stage
from portlint.core import session
from portlint.core import lines as line_model
from portlint.index.build_scope import CUDA_SUFFIXES, scan_build_scope
from portlint.index.roles import path_role

_BINARY_SNIFF = 8192
_NOT_READ = {
    "directory": "is a directory, skipped",
    "not-regular": "not a regular file (FIFO, device or socket): skipped",
    "too-large": "file is {size} bytes, over the {limit}-byte limit (max-file-size): skipped",
    "grew": "file is over the {limit}-byte limit (max-file-size) while reading: skipped",
}


def _is_c_family(sf: SourceFile) -> bool:
    suffix = sf.real.suffix.lower()
    return suffix in CUDA_EXTENSIONS or suffix in CXX_EXTENSIONS


def read_source(sf: SourceFile, settings: Settings, once: bool = False) -> tuple[bytes | None, list[Notice]]:
    """The file's bytes, or None and a notice. Read by `core.files.read_limited` (opened
    without blocking, a regular file only, at most the size limit). `once`: the scan's own
    read, which takes a C/C++/CUDA file through the scan's include graph
    (`includes.read_once`), so the scan of it and the walks that reach it as a header share
    one read (and the build scope's include sweep reuses it); without it (a caller after the scan, such
    as --add-suppressions) the file is read as it is now."""
    notices: list[Notice] = []
    limit = settings.max_file_size
    try:
        data = read_once(settings, sf.real) if once and _is_c_family(sf) else read_limited(sf.real, limit)
    except NotRead as exc:
        return None, [Notice(sf.display, _NOT_READ[exc.why].format(size=exc.size, limit=limit))]
    except IsADirectoryError:
        return None, [Notice(sf.display, _NOT_READ["directory"])]
    except OSError as exc:
        return None, [Notice(sf.display, f"cannot read: {exc.strerror or exc}", "error")]
    if b"\0" in data[:_BINARY_SNIFF]:
        return None, [Notice(sf.display, "binary file (NUL bytes), skipped", "note")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = None
        notices.append(Notice(sf.display, f"not valid UTF-8 (byte {exc.start}): decoded with replacement characters", "note"))
    if sf.real.suffix.lower() in PYTHON_EXTENSIONS:
        refused = _declared_encoding_differs(data, text)
        if refused:
            return None, [Notice(sf.display, refused)]
    return data, notices


# PEP 263: a comment on line 1 or 2 naming the encoding Python decodes the file with
_CODING_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _declared_encoding_differs(data: bytes, text: str | None) -> str | None:
    """Why a Python file is not analysed, or None. Every reader here takes the bytes as
    UTF-8; a coding cookie that makes Python read other text from them (UTF-7 spells
    `import jax` in plain ASCII as `import +AGoAYQB4-`) would hide the code Python runs. The
    file is analysed when its declared codec gives exactly the UTF-8 text, else skipped with
    this notice."""
    if data.startswith(b"\xef\xbb\xbf"):
        return None  # a BOM: Python reads UTF-8 whatever a cookie says (and refuses a conflict)
    lines = data.split(b"\n", 2)[:2]
    for i, line in enumerate(lines):
        m = _CODING_COOKIE.match(line)
        if m is None:
            if i == 0 and line.strip() and not line.lstrip().startswith(b"#"):
                return None  # only a comment or blank line 1 lets line 2 declare it
            continue
        name = m.group(1).decode("ascii", "replace")
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            return f"declares an unknown encoding {name!r} (coding cookie, line {i + 1}): not analysed"
        if codec == "utf-8":
            return None
        try:
            same = text is not None and data.decode(codec) == text
        except (UnicodeDecodeError, ValueError):
            same = False
        if same:
            return None
        return (f"declares encoding {name!r} (coding cookie, line {i + 1}), which reads other text than "
                "UTF-8 from these bytes; portlint reads UTF-8 only: not analysed")
    return None


def scan_source(sf: SourceFile, data: bytes, settings: Settings) -> FileResult:
    """Scan one file's bytes (no I/O besides headers next to it for guard evaluation).

    Every failure stays inside this file: a detector that raises becomes a PTL003 finding
    (see `_run_detectors`); anything else that raises while analysing it (a parser or a
    shared analysis that recurses too deep on a pathological expression, memory running
    out, a bug in post-processing) becomes one error notice for this file, and the other
    files' findings are reported as usual."""
    try:
        return _analyse(sf, data, settings)
    except Exception as exc:  # RecursionError and MemoryError included
        return _failed(sf, exc, "analysing")


def _failure(exc: BaseException) -> str:
    """`exc` in one line, for a notice (messages of pathological inputs can be huge)."""
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _analyse(sf: SourceFile, data: bytes, settings: Settings) -> FileResult:
    plan = _plan(settings)
    result = FileResult()
    model = rel = None
    if sf.real.suffix.lower() in PYTHON_EXTENSIONS:
        from portlint.index.project import scan_model

        model = scan_model(settings, [sf.real], sf.root)
        rel = model.rel_of(sf.real) if model is not None else None
    known = model.file_tags(rel, data) if rel is not None else None
    if known is not None:  # the model read these bytes and tagged them already
        language, tags = "python", known
    else:
        language, tags = classify(sf.display if sf.display else sf.real.name, data)
        if language is None:
            language, tags = classify(sf.real.name, data)
    if language is None:
        return result  # read and classified: nothing portlint checks (a plain C header)
    added: frozenset[str] = frozenset()
    parsed = None
    if language == "python" and model is not None:
        # bytes the model did not read (known is None: an editor buffer, a file written
        # since) get their declared scope from their own tags
        added = model.extra_tags(rel, None if known is not None else data) - tags
        tags = tags | added
        parsed = model.take_tree(rel, data)
    original = data
    view = compiler_view(language, data)
    lone_cr = view is not None
    if lone_cr:
        # analysed as the compiler reads it; positions are then given back in the line
        # model's numbering, as for Python (`_renumber`)
        data = view
    ctx = FileContext(sf.display, data, language, tags, settings)
    if lone_cr:
        ctx.notice("the file breaks lines with a lone CR, which the compiler counts as a line break: it is analysed "
                   "as the compiler reads it", "warning")
    if language == "python" and parsed is not None:  # parsed once, by the project model
        from portlint.frontends.python.astindex import adopt
        from portlint.frontends.python.names import import_table

        ctx.__dict__["module"] = parsed[0]
        adopt(parsed[0], parsed[1])
        ctx.note_cut_expressions(parsed[0])
        if parsed[2] is not None:  # its imports read once too (the same table import_table makes)
            ctx._facts[import_table] = parsed[2]
    ctx.real_path = sf.real  # type: ignore[attr-defined]
    ctx.scan_root = sf.root  # type: ignore[attr-defined]  # the tree: no folder outside it is read
    ctx.session = session.current(settings)  # type: ignore[attr-defined]
    detectors = plan.detectors_for_file(language, data, added)
    # a Python file that uses a framework we check is always parsed, so its syntax errors
    # are reported even when no detector's pre-filter matched
    if detectors or (language == "python" and tags):
        _run_detectors(ctx, detectors, plan, result)
    apply_findings_stage(ctx, plan, result)
    result.notices.extend(Notice(ctx.path, message, level) for message, level in ctx.notices)
    if result.findings:
        if lone_cr:
            ctx = _renumber(ctx, original, result.findings)
        _locate(ctx, result.findings)
    result.counters = ctx.counters
    return result


def compiler_view(language: str, data: bytes) -> bytes | None:
    """A CUDA/C++ file's bytes as the compiler reads its lines, when that is not how the line
    model does: the C preprocessor (gcc, clang, hipcc, nvcc) ends a line at a lone CR as
    well, where tree-sitter and the line model do not (`// a\r__global__ ...` would hide the
    kernel in a comment). Each lone CR becomes a line break, one byte for one, so offsets
    are unchanged. None when the file has no lone CR (or is not C-family): the line model's
    lines are the compiler's. The file is analysed, its suppressions matched, its
    suppression comments placed and a fix re-parsed in this view."""
    if language == "cuda" and line_model.has_lone_cr(data):
        return line_model.lone_cr_as_lf(data)
    return None


def renumbering(source: bytes, target: FileContext) -> Callable[[Span], Span]:
    """Span in the line numbering of `source` -> the span of the same bytes in `target`'s
    (the same bytes with their lines broken another way: a file and its `compiler_view`,
    either way round). A position `source` does not have is kept as it is."""
    positions = line_model.ByteMap(source)

    def at(line: int, col: int) -> tuple[int, int]:
        offset = positions.byte_offset(line, col)
        return target.offset_to_pos(offset) if offset is not None else (line, col)

    return lambda span: Span(*at(span.start_line, span.start_col), *at(span.end_line, span.end_col))


def _renumber(ctx: FileContext, original: bytes, findings: list[Finding]) -> FileContext:
    """Give positions found in the compiler's view of a file (`compiler_view`) back in the
    line model's numbering of its real bytes (lines end at LF or CRLF only, as editors and
    GitHub show them; Python's `ast` positions come back through `core.lines.CrLines` in
    `FileContext.node_span`),
    fix edits too. An edit keeps the `old` text it was anchored to in the copy: where its
    span holds a lone CR that text differs from the file's, and the fix engine drops it as
    stale. Returns a context over the real bytes, for the line hashes."""
    real = FileContext(ctx.path, original, ctx.language, ctx.tags, ctx.settings)
    real.counters = ctx.counters
    moved = renumbering(ctx.data, real)
    for f in (m for f in findings for m in (f, *f.related)):
        f.span = moved(f.span)
        if f.fix is not None:
            f.fix = dataclasses.replace(f.fix, edits=tuple(dataclasses.replace(e, span=moved(e.span)) for e in f.fix.edits))
    return real


def _locate(ctx: FileContext, findings: list[Finding]) -> None:
    """What reporters need from the source text: line hashes and non-ASCII line texts."""
    from portlint.findings.fingerprint import line_hashes

    findings = [m for f in findings for m in (f, *f.related)]  # folded uses too (SARIF columns)
    hashes = line_hashes(ctx.text, {f.span.start_line for f in findings})
    for f in findings:
        f.line_hash = hashes[f.span.start_line - 1] if 0 < f.span.start_line <= len(hashes) else ""
        if not ctx._ascii:
            lines = {f.span.start_line, f.span.end_line}
            if f.fix:
                for e in f.fix.edits:
                    lines.update((e.span.start_line, e.span.end_line))
            f.wide_lines = {n: ctx.line_text(n) for n in sorted(lines) if not ctx.line_text(n).isascii()}


def _run_detectors(ctx: FileContext, detectors: list[Detector], plan: Plan, result: FileResult) -> None:
    dispatch: dict[str, list[Detector]] = {}
    file_level: list[Detector] = []
    for det in detectors:
        if det.nodes is None:
            file_level.append(det)
        else:
            for node_type in det.nodes:
                dispatch.setdefault(node_type, []).append(det)
    failed: set[str] = set()

    def call(det: Detector, *args) -> None:
        if det.rule_id in failed:
            return
        ctx.rule = plan.rules[det.rule_id]
        try:
            det.func(*args)
        except Exception as exc:  # a broken detector must not take the scan down
            failed.add(det.rule_id)
            _internal_error(ctx, plan, det.rule_id, exc, args[0] if len(args) > 1 else None)

    if ctx.language == "python":
        try:
            module = ctx.module
        except (SyntaxError, ValueError) as exc:
            module = _newer_syntax(ctx, exc, result)
            if module is None:
                return
        except (RecursionError, MemoryError) as exc:
            # CPython's parser gives up on very deep nesting (a 3,000-term concatenation,
            # 100,000 unary minuses): the file cannot be analysed, the scan goes on
            result.notices.append(Notice(ctx.path, f"too deeply nested for Python's parser ({_failure(exc)}); Python rules skipped", "error"))
            return
        from portlint.frontends.python.astindex import node_classes, of_class

        for det in file_level:
            call(det, ctx)
        if dispatch:
            # the nodes whose class name a detector dispatches on, in walk order: the same
            # nodes, in the same order, as testing every node of the module
            wanted = [cls for cls in node_classes(module) if cls.__name__ in dispatch]
            # `call` inlined for this loop (it runs once per node and detector): the same
            # detectors in the same order, the same skip of a failed rule and the same notice
            by_class = {cls: [(det.rule_id, det.func, plan.rules[det.rule_id]) for det in dispatch[cls.__name__]] for cls in wanted}
            for node in of_class(module, *wanted) if wanted else ():
                for rule_id, func, rule in by_class[node.__class__]:
                    if rule_id in failed:
                        continue
                    ctx.rule = rule
                    try:
                        func(node, ctx)
                    except Exception as exc:  # a broken detector must not take the scan down
                        failed.add(rule_id)
                        _internal_error(ctx, plan, rule_id, exc, node)
    elif ctx.language == "cuda":
        from portlint.frontends.cuda.parse import cuda_language, nodes_of_types

        for det in file_level:
            call(det, ctx)
        # a `language = "any"` detector lists `ast` class names beside tree-sitter types:
        # only the types the CUDA grammar knows go into the query
        known = cuda_language()
        node_types = tuple(t for t in dispatch if known.id_for_node_kind(t, True))
        if node_types:
            for node in nodes_of_types(ctx.tree.root_node, node_types):
                for det in dispatch[node.type]:
                    call(det, node, ctx)
    else:
        for det in file_level:
            call(det, ctx)
    ctx.rule = None


def _newer_syntax(ctx: FileContext, exc: Exception, result: FileResult):
    """A file the running `ast` rejects: if it is valid newer Python (tree-sitter-python
    accepts it), the module with those constructs blanked in place; else a notice and None."""
    import sys

    from portlint.frontends.python.newer_syntax import downgrade

    line = getattr(exc, "lineno", None) or 1
    fallback = downgrade(ctx.data, ctx.path)
    if fallback is None:
        result.notices.append(Notice(ctx.path, f"syntax error at line {line}: {getattr(exc, 'msg', exc)}; Python rules skipped", "error"))
        return None
    ctx.__dict__["module"] = fallback.module  # FileContext.module is a cached_property
    running = "%d.%d" % sys.version_info[:2]
    shown = ", ".join(fallback.blanked[:4]) + (f" and {len(fallback.blanked) - 4} more" if len(fallback.blanked) > 4 else "")
    result.notices.append(Notice(
        ctx.path,
        f"syntax newer than Python {running} ({shown}): read with tree-sitter-python; every Python rule ran "
        "on the rest of the file, those constructs were not analysed", "note"))
    return fallback.module


def _internal_error(ctx: FileContext, plan: Plan, rule_id: str, exc: Exception, node) -> None:
    from portlint.rules import tool

    ctx.rule = plan.rules[TOOL_INTERNAL]
    tool.internal_error(ctx, rule_id, exc, node)


# ---- many files ---------------------------------------------------------------------------
#
# scan_files looks every file up in the cache first, in this process: a warm rescan reads and
# hashes the files and never starts a worker. The misses go to a pool of worker processes
# (portlint/pipeline/workers.py). Results are merged and sorted, so neither the worker count nor the
# completion order can change the report.

_POOL_MIN_FILES = 8  # below this many files to analyse, workers cost more than they save


def scan_one(sf: SourceFile, settings: Settings, cache=None, known: tuple[str, str] | None = None) -> FileResult:
    """Scan one file, through the cache when there is one. `known` is (cache key, sha256 of
    the bytes it was computed from) when the caller already looked the file up and found no
    entry: the key is reused unless the file changed since."""
    data, notices = read_source(sf, settings, once=True)
    if data is None:
        return FileResult(notices=notices, scanned=False)
    result = None
    key = None
    if cache is not None and known is not None and hashlib.sha256(data).hexdigest() == known[1]:
        key = known[0]
    elif cache is not None:
        key = cache.key(sf.display, data, sf.real, _cross_file_digest(sf, settings), sf.root)
        result = cache.get(key, sf.display)
    if result is None:
        result = scan_source(sf, data, settings)
        if cache is not None:
            cache.put(key, result)
    result.notices = notices + result.notices
    return result


def _scan_isolated(sf: SourceFile, settings: Settings, cache=None, known: tuple[str, str] | None = None) -> FileResult:
    """scan_one, with a failure outside the analysis itself (reading, the cache) kept to
    this file too: the analysis isolates its own failures (scan_source)."""
    try:
        return scan_one(sf, settings, cache, known)
    except Exception as exc:
        return _failed(sf, exc, "reading or caching")


FILES_FAILED = "files-failed"  # the counter of files an internal failure left unchecked


def _failed(sf: SourceFile, exc: Exception, doing: str) -> FileResult:
    """A file portlint failed on: one error notice, and the files-failed counter that makes
    the scan end with exit code 2 (an internal error), so that a gate never turns green on
    files it could not check."""
    return FileResult(notices=[Notice(sf.display, f"{_failure(exc)} while {doing} the file: skipped, no findings for it", "error")],
                      counters={FILES_FAILED: 1}, scanned=False)


def _cross_file_digest(sf: SourceFile, settings: Settings) -> bytes:
    """What a file's result depends on outside its own bytes, for its cache key: for a Python
    file the project model's facts about it; for any other file the role its folders give it
    when that is not library, and for a CUDA/C++ file whether its package's ROCm build
    compiles it (portlint.index.build_scope)."""
    if sf.real.suffix.lower() not in PYTHON_EXTENSIONS:
        # the role its folders give it (a vendored library's license file or header tree
        # beside them changes it without the file changing)
        role = path_role(settings, sf.real, sf.display, sf.root).name
        role = b"" if role == "library" else b"role=" + role.encode() + b"\0"
        if sf.real.suffix.lower() not in CUDA_SUFFIXES or NOT_IN_ROCM_BUILD not in _plan(settings).enabled:
            return role  # nothing reads the build scope: the build files are not read
        scope, rel = scan_build_scope(settings, sf.real, sf.root)
        verdict = scope.verdict(rel) if scope is not None else None
        return role + (repr(verdict).encode() if verdict is not None else b"")
    from portlint.index.project import scan_model

    model = scan_model(settings, [sf.real], sf.root)
    return model.file_digest(model.rel_of(sf.real)) if model is not None else b""


def _lookup(sf: SourceFile, settings: Settings, cache) -> tuple[FileResult | None, int, tuple[str, str] | None]:
    """(result, size, known): the result when the file needs no analysis (unreadable,
    skipped or cached), else None, the file's size for scheduling and (its cache key, the
    sha256 of the bytes read) for scan_one."""
    data, notices = read_source(sf, settings, once=True)
    if data is None:
        return FileResult(notices=notices, scanned=False), 0, None
    key = cache.key(sf.display, data, sf.real, _cross_file_digest(sf, settings), sf.root)
    result = cache.get(key, sf.display)
    if result is None:
        return None, len(data), (key, hashlib.sha256(data).hexdigest())
    result.notices = notices + result.notices
    return result, len(data), None


def _open_cache(settings: Settings):
    if settings.cache_dir is None:
        return None
    from portlint.core.cache import Cache

    return Cache(settings.cache_dir, settings)


def _size(sf: SourceFile) -> int:
    try:
        return sf.real.stat().st_size
    except OSError:
        return 0


def _is_python(sf: SourceFile) -> bool:
    return sf.real.suffix.lower() in PYTHON_EXTENSIONS


class _Collector:
    """Each file's result in its slot; the report is assembled from the slots in file order
    and sorted, so neither the worker count nor the completion order can change it."""

    def __init__(self, files: list[SourceFile], progress):
        self.files = files
        self.results: list[FileResult | None] = [None] * len(files)
        self.finished = 0
        self.progress = progress

    def done(self, index: int, result: FileResult) -> None:
        self.results[index] = result
        self.finished += 1
        if self.progress:
            self.progress(self.finished, len(self.files))

    def report(self, model_notices: list[Notice]) -> ScanResult:
        results = self.results
        out = ScanResult(files_scanned=sum(1 for r in results if r is not None and r.scanned))
        out.notices.extend(model_notices)
        for r in results:
            assert r is not None
            out.findings.extend(r.findings)
            out.notices.extend(r.notices)
            for k, v in r.counters.items():
                out.counters[k] = out.counters.get(k, 0) + v
        out.findings.sort(key=Finding.sort_key)
        out.notices.sort(key=Notice.sort_key)
        out.counters = dict(sorted(out.counters.items()))
        return out


def _look_up(indices: list[int], files: list[SourceFile], settings: Settings, cache, collected: _Collector) -> list[tuple[int, SourceFile, int, tuple[str, str] | None]]:
    """The files of `indices` that need analysis, as (index, file, size, known); the others
    (cached, unreadable, skipped) go to `collected` now."""
    pending: list[tuple[int, SourceFile, int, tuple[str, str] | None]] = []
    for i in indices:
        sf = files[i]
        if cache is None:
            pending.append((i, sf, _size(sf), None))
            continue
        try:
            hit, size, known = _lookup(sf, settings, cache)
        except Exception as exc:
            hit, size, known = _failed(sf, exc, "reading or caching"), 0, None
        if hit is None:
            pending.append((i, sf, size, known))
        else:
            collected.done(i, hit)
    return pending


def _pool_worth_it(pending: list, jobs: int) -> bool:
    return jobs > 1 and len(pending) >= max(_POOL_MIN_FILES, 2 * jobs)


def scan_files(files: list[SourceFile], settings: Settings, progress=None) -> ScanResult:
    """Scan `files`: look each one up in the cache (in this process: a warm rescan starts no
    worker), analyse the misses, in worker processes when there are enough of them.

    With Python files among them, the Python project model is built first, in this process,
    before any Python file is looked up (a Python file's cache key holds the model's facts
    about it) or analysed. The other files do not depend on the model: their misses start in
    worker processes forked before the build (`workers.EarlyStart`), which take them largest
    first while this process builds the model; those left when the model is ready go to the
    pool of the Python files (forked after the build, so its workers inherit the model)."""
    from portlint.core.config import default_jobs

    session.begin(settings)  # what an earlier scan read (headers, the include graph) is not reused
    jobs = settings.jobs or default_jobs()
    cache = _open_cache(settings)
    # a cache that holds no result yet (the first scan, a CI run) would miss every lookup:
    # the files go straight to the analysis, which keys and stores them where it runs
    lookups = None if cache is None or cache.holds_no_results() else cache
    collected = _Collector(files, progress)
    python = [i for i, sf in enumerate(files) if _is_python(sf)]
    model_notices: list[Notice] = []
    frozen = False
    try:
        if not python:
            pending = _look_up(list(range(len(files))), files, settings, lookups, collected)
        else:
            python_set = set(python)
            others = _look_up([i for i in range(len(files)) if i not in python_set], files, settings, lookups, collected)
            early = None
            if _pool_worth_it(others, jobs):
                from portlint.pipeline.workers import EarlyStart

                early = EarlyStart.begin(others, settings, cache, jobs)
            # The model parses and keeps the trees of the files it summarises (the scan takes
            # them over) and their summaries: millions of acyclic objects that live on. The
            # cyclic collector would traverse them again and again while they pile up and
            # while the files are scanned (0.3 s of a 1,175-file serial scan), so it is paused
            # for the build and what is alive then is kept out of its passes (`gc.freeze`)
            # until the scan ends. Nothing is freed later than without: refcounting frees them.
            paused = gc.isenabled() and gc.get_freeze_count() == 0
            if paused:
                gc.disable()
            try:
                _build_model(settings, [files[i].real for i in python], files[python[0]].root, model_notices)
            finally:
                if paused:
                    gc.freeze()
                    gc.enable()
                    frozen = True
                if early is not None:
                    others = early.finish(collected.done)
            pending = others + _look_up(python, files, settings, lookups, collected)
        if _pool_worth_it(pending, jobs):
            from portlint.pipeline.workers import scan_parallel

            scan_parallel(pending, settings, cache, jobs, collected.done)
        else:
            for i, sf, _, known in pending:
                collected.done(i, _scan_isolated(sf, settings, cache, known))
        return collected.report(model_notices)
    finally:
        if frozen:
            gc.unfreeze()


def _build_model(settings: Settings, python: list, tree: str | None, model_notices: list[Notice]) -> None:
    """Build the scan's Python project model (`tree`: the scan root of the first Python
    file); a failure inside it is one notice and the Python files are then analysed one by one."""
    from portlint.index.project import model_error, scan_model

    if scan_model(settings, python, tree) is None and model_error(settings):
        model_notices.append(Notice(".", f"internal error in the Python project model ({model_error(settings)}); Python files analysed one by one", "error"))


def worst_severity(findings: list[Finding]) -> Severity | None:
    active = [f.severity for f in findings if not f.suppressed]
    return max(active, key=lambda s: s.rank) if active else None


def cpu_count() -> int:
    return os.cpu_count() or 1
