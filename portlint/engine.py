"""The scan: for each file, read, classify, parse once, run the detectors in one walk, then
apply guards, suppressions and config filters. Files are independent, so they are spread
over worker processes; the result is sorted, so the worker count never changes it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from portlint.config import Settings
from portlint.context import FileContext
from portlint.discovery import SourceFile
from portlint.languages import classify
from portlint.model import Finding, Notice, ScanResult, Severity, Span
from portlint.registry import Detector, detectors_for
from portlint.rules import load_rules
from portlint import session

TOOL_UNUSED = "PTL001"
TOOL_UNKNOWN = "PTL002"
TOOL_INTERNAL = "PTL003"
_BINARY_SNIFF = 8192


@dataclass
class FileResult:
    findings: list[Finding] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "findings": [f.to_dict() for f in self.findings],
            "notices": [[n.path, n.message, n.level] for n in self.notices],
            "counters": self.counters,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "FileResult":
        return cls(
            [Finding.from_dict(f) for f in data["findings"]],
            [Notice(*n) for n in data["notices"]],
            dict(data["counters"]),
        )


def enabled_rules(settings: Settings) -> set[str]:
    rules = load_rules()
    if settings.select is None:
        chosen = {rid for rid, r in rules.items() if r.default_enabled}
    else:
        chosen = {rid for rid in rules if any(rid.startswith(s) for s in settings.select)}
    chosen = {rid for rid in chosen if not any(rid.startswith(s) for s in settings.ignore)}
    chosen.add(TOOL_INTERNAL)
    # a rule none of whose targets is selected cannot report anything
    return {rid for rid in chosen if set(rules[rid].severity) & set(settings.targets)}


class _Plan:
    """Per-process: which detectors run for which language, and their dispatch tables."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.rules = load_rules()
        self.enabled = enabled_rules(settings)
        # the tool's own rules (family "tool") are called by the engine, not by the walk
        self.detectable = {rid for rid in self.enabled if self.rules[rid].family != "tool"}
        self._by_language: dict[str, list[Detector]] = {}
        self._tokens: dict[str, tuple[bytes, ...]] = {}

    def detectors(self, language: str) -> list[Detector]:
        """The detectors for one language, importing their families on first use (a scan of
        CUDA files never imports the Python families, and the other way round)."""
        if language not in self._by_language:
            ids = {rid for rid in self.detectable if self.rules[rid].language in (language, "any")}
            self._by_language[language] = detectors_for(ids)
            self._tokens[language] = tuple(sorted({t for d in self._by_language[language] for t in d.tokens or ()}))
        return self._by_language[language]

    def detectors_for_file(self, language: str, data: bytes) -> list[Detector]:
        """The detectors whose pre-filter passes on `data`: each distinct token is looked for
        once per file (detectors share many), then every detector checks its own."""
        detectors = self.detectors(language)
        present = {t for t in self._tokens[language] if t in data}
        return [d for d in detectors if d.tokens is None or not present.isdisjoint(d.tokens)]


_PLAN: _Plan | None = None


def _plan(settings: Settings) -> _Plan:
    global _PLAN
    if _PLAN is None or _PLAN.settings is not settings:
        _PLAN = _Plan(settings)
    return _PLAN


def read_source(sf: SourceFile, settings: Settings) -> tuple[bytes | None, list[Notice]]:
    notices: list[Notice] = []
    try:
        size = sf.real.stat().st_size
        if size > settings.max_file_size:
            return None, [Notice(sf.display, f"file is {size} bytes, over the {settings.max_file_size}-byte limit (max-file-size): skipped")]
        with open(sf.real, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        return None, [Notice(sf.display, "is a directory, skipped")]
    except OSError as exc:
        return None, [Notice(sf.display, f"cannot read: {exc.strerror or exc}", "error")]
    if b"\0" in data[:_BINARY_SNIFF]:
        return None, [Notice(sf.display, "binary file (NUL bytes), skipped", "note")]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        notices.append(Notice(sf.display, f"not valid UTF-8 (byte {exc.start}): decoded with replacement characters", "note"))
    return data, notices


def scan_source(sf: SourceFile, data: bytes, settings: Settings) -> FileResult:
    """Scan one file's bytes (no I/O besides headers next to it for guard evaluation)."""
    plan = _plan(settings)
    result = FileResult()
    language, tags = classify(sf.display if sf.display else sf.real.name, data)
    if language is None:
        language, tags = classify(sf.real.name, data)
    if language is None:
        return result
    ctx = FileContext(sf.display, data, language, tags, settings)
    ctx.real_path = sf.real  # type: ignore[attr-defined]
    ctx.session = session.current(settings)  # type: ignore[attr-defined]
    detectors = plan.detectors_for_file(language, data)
    # a Python file that uses a framework we check is always parsed, so its syntax errors
    # are reported even when no detector's pre-filter matched
    if detectors or (language == "python" and tags):
        _run_detectors(ctx, detectors, plan, result)
    _postprocess(ctx, plan, result)
    result.notices.extend(Notice(ctx.path, message, level) for message, level in ctx.notices)
    if result.findings:
        _locate(ctx, result.findings)
    result.counters = ctx.counters
    return result


def _locate(ctx: FileContext, findings: list[Finding]) -> None:
    """What reporters need from the source text: line hashes and non-ASCII line texts."""
    from portlint.reporters.fingerprint import line_hashes

    hashes = line_hashes(ctx.text, {f.span.start_line for f in findings})
    for f in findings:
        f.line_hash = hashes[f.span.start_line - 1] if 0 < f.span.start_line <= len(hashes) else ""
        if not ctx._ascii:
            lines = {f.span.start_line, f.span.end_line}
            if f.fix:
                for e in f.fix.edits:
                    lines.update((e.span.start_line, e.span.end_line))
            f.wide_lines = {n: ctx.line_text(n) for n in sorted(lines) if not ctx.line_text(n).isascii()}


def _run_detectors(ctx: FileContext, detectors: list[Detector], plan: _Plan, result: FileResult) -> None:
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
            line = getattr(exc, "lineno", None) or 1
            result.notices.append(Notice(ctx.path, f"syntax error at line {line}: {getattr(exc, 'msg', exc)}; Python rules skipped", "error"))
            return
        from portlint.python.astindex import nodes

        for det in file_level:
            call(det, ctx)
        if dispatch:
            for node in nodes(module):
                dets = dispatch.get(type(node).__name__)
                if dets:
                    for det in dets:
                        call(det, node, ctx)
    elif ctx.language == "cuda":
        from portlint.cuda.parse import cuda_language, nodes_of_types

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


def _internal_error(ctx: FileContext, plan: _Plan, rule_id: str, exc: Exception, node) -> None:
    from portlint.detectors import tool

    ctx.rule = plan.rules[TOOL_INTERNAL]
    tool.internal_error(ctx, rule_id, exc, node)


def _postprocess(ctx: FileContext, plan: _Plan, result: FileResult) -> None:
    from portlint.precedence import drop_superseded
    from portlint.suppressions import parse_suppressions

    settings = plan.settings
    # 0. one finding per construct: a rule's finding replaces those of the rules it supersedes
    findings = ctx.findings = drop_superseded(ctx.findings)
    # 1. preprocessor guards: a rocm finding in a branch an AMD build skips, with a HIP
    #    branch beside it, is already ported.
    if ctx.language == "cuda" and any("rocm" in f.targets for f in findings):
        from portlint.cuda.guards import guard_map
        from portlint.detectors.cuda_ptx import stub_for

        guards = ctx.fact(guard_map)
        for f in findings:
            if "rocm" not in f.targets or f.rule_id == TOOL_INTERNAL:
                continue
            guard = guards.dead_for_amd(f.span.start_line)
            # an `#else` that is empty or only traps is not a HIP branch: the code is not ported
            stub = stub_for(ctx, f.span.start_line) if guard is not None and guard.has_alternative else None
            if stub is not None:
                f.suggestion = stub.note() + ("\n" + f.suggestion if f.suggestion else "")
            elif guard is not None and guard.has_alternative:
                del f.targets["rocm"]
                if not f.targets:
                    f.targets = {"rocm": plan.rules[f.rule_id].severity.get("rocm", f.severity)}
                    f.suppressed = guard.reason()
                    f.suppression_kind = "inSource"
                else:
                    f.severity = max(f.targets.values(), key=lambda s: s.rank)
    # 2. targets the user did not ask about
    kept: list[Finding] = []
    for f in findings:
        targets = {t: s for t, s in f.targets.items() if t in settings.targets}
        if not targets:
            continue
        if targets != f.targets:
            f.targets = targets
            f.severity = max(targets.values(), key=lambda s: s.rank)
        kept.append(f)
    findings = kept
    # 3. per-file ignores from the config
    if settings.per_file_ignores:
        import fnmatch

        drops = [ids for glob, ids in settings.per_file_ignores.items() if fnmatch.fnmatch(ctx.path, glob) or fnmatch.fnmatch(ctx.path, glob.rstrip("/") + "/*")]
        if drops:
            flat = tuple(i for ids in drops for i in ids)
            findings = [f for f in findings if not f.rule_id.startswith(flat)]
    # 4. inline suppressions, then the tool's own findings about them
    if "portlint:" in ctx.text:
        sups = parse_suppressions(ctx.lines)
        for f in findings:
            if f.suppressed:
                continue
            sup = sups.apply(f.rule_id, f.span.start_line, f.span.end_line)
            if sup is not None:
                f.suppressed = f"suppressed by comment on line {sup.line}" + (f": {sup.reason}" if sup.reason else "")
                f.suppression_kind = "inSource"
        findings.extend(_suppression_findings(ctx, plan, sups))
    result.findings = findings


def _suppression_findings(ctx: FileContext, plan: _Plan, sups) -> list[Finding]:
    from portlint.detectors import tool

    before = len(ctx.findings)
    for rule_id, func in ((TOOL_UNKNOWN, tool.unknown_suppression_id), (TOOL_UNUSED, tool.unused_suppression)):
        if rule_id in plan.enabled:
            ctx.rule = plan.rules[rule_id]
            func(ctx, sups, plan.enabled)
    ctx.rule = None
    targets = set(plan.settings.targets)
    out = ctx.findings[before:]
    for f in out:
        f.targets = {t: s for t, s in f.targets.items() if t in targets}
    return [f for f in out if f.targets]


# ---- many files ---------------------------------------------------------------------------
#
# scan_files looks every file up in the cache first, in this process: a warm rescan reads and
# hashes the files and never starts a worker. The misses go to a pool of forked workers,
# largest files first so that no big file is left to run alone at the end; each worker
# writes its own cache entries (atomic renames, see cache.py). Results are merged and sorted,
# so neither the worker count nor the completion order can change the report.

_POOL_MIN_FILES = 8  # below this many files to analyse, workers cost more than they save


def scan_one(sf: SourceFile, settings: Settings, cache=None, known: tuple[str, str] | None = None) -> FileResult:
    """Scan one file, through the cache when there is one. `known` is (cache key, sha256 of
    the bytes it was computed from) when the caller already looked the file up and found no
    entry: the key is reused unless the file changed since."""
    data, notices = read_source(sf, settings)
    if data is None:
        return FileResult(notices=notices)
    result = None
    key = None
    if cache is not None and known is not None and hashlib.sha256(data).hexdigest() == known[1]:
        key = known[0]
    elif cache is not None:
        key = cache.key(sf.display, data, sf.real)
        result = cache.get(key)
    if result is None:
        result = scan_source(sf, data, settings)
        if cache is not None:
            cache.put(key, result)
    result.notices = notices + result.notices
    return result


def _lookup(sf: SourceFile, settings: Settings, cache) -> tuple[FileResult | None, int, tuple[str, str] | None]:
    """(result, size, known): the result when the file needs no analysis (unreadable,
    skipped or cached), else None, the file's size for scheduling and (its cache key, the
    sha256 of the bytes read) for scan_one."""
    data, notices = read_source(sf, settings)
    if data is None:
        return FileResult(notices=notices), 0, None
    key = cache.key(sf.display, data, sf.real)
    result = cache.get(key)
    if result is None:
        return None, len(data), (key, hashlib.sha256(data).hexdigest())
    result.notices = notices + result.notices
    return result, len(data), None


_WORKER_SETTINGS: Settings | None = None
_WORKER_CACHE = None


def tune_gc() -> None:
    """Fewer cyclic garbage collections for a scan process.

    A scan makes millions of short-lived, acyclic objects (syntax trees, AST nodes,
    findings); with Python's default threshold (700 allocations) the collector ran some
    2,600 times over the bench corpus, full passes included, and took 6 % of a serial
    scan. 20,000 costs about 17 MB more at peak. The command line calls this; a library
    caller keeps its own settings."""
    import gc

    gc.set_threshold(20_000, 20, 20)


def _init_worker(settings: Settings, cache=None) -> None:
    global _WORKER_SETTINGS, _WORKER_CACHE
    tune_gc()
    _WORKER_SETTINGS = settings
    _WORKER_CACHE = cache


def _work(item: tuple[int, SourceFile, tuple[str, str] | None]) -> tuple[int, dict]:
    assert _WORKER_SETTINGS is not None
    index, sf, known = item
    return index, scan_one(sf, _WORKER_SETTINGS, _WORKER_CACHE, known).to_dict()


def _open_cache(settings: Settings):
    if settings.cache_dir is None:
        return None
    from portlint.cache import Cache

    return Cache(settings.cache_dir, settings)


def _size(sf: SourceFile) -> int:
    try:
        return sf.real.stat().st_size
    except OSError:
        return 0


def _prepare_parent(settings: Settings, languages: set[str]) -> None:
    """Load the detectors and the CUDA grammar once, before forking, so workers inherit them."""
    plan = _plan(settings)
    for language in sorted(languages):
        plan.detectors(language)
    if "cuda" in languages:
        from portlint.cuda.parse import cuda_language

        cuda_language()


def _start_method() -> str:
    """fork when it is safe (the command line: one thread), else a clean forkserver.

    Forking a process that runs other threads (a library caller that imported JAX, a test
    session) can deadlock the child on a lock some thread held."""
    import multiprocessing
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1 and not _foreign_threads():
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _foreign_threads() -> bool:
    """Threads started outside Python (XLA's thread pools) do not show in threading."""
    try:
        return len(os.listdir("/proc/self/task")) > 1
    except OSError:
        return False


def _scan_parallel(pending: list[tuple[int, SourceFile, int, tuple[str, str] | None]], settings: Settings, cache, jobs: int, done) -> None:
    import multiprocessing

    method = _start_method()
    if method == "fork":
        from portlint.languages import classify

        _prepare_parent(settings, {classify(sf.real.name, b"")[0] or "cuda" for _, sf, _, _ in pending})
    order = [(i, sf, known) for i, sf, _, known in sorted(pending, key=lambda p: (-p[2], p[0]))]
    chunk = max(1, min(8, len(order) // (jobs * 16)))
    with multiprocessing.get_context(method).Pool(jobs, initializer=_init_worker, initargs=(settings, cache)) as pool:
        for index, data in pool.imap_unordered(_work, order, chunksize=chunk):
            done(index, FileResult.from_dict(data))


def _forget_file_memos() -> None:
    """Helpers remember what they read from headers for the length of one scan; a long-lived
    caller (an editor integration, a test session) may change headers between scans."""
    import sys

    for name in ("portlint.cuda.guards", "portlint.cuda.hipify", "portlint.cuda.libclang_pass"):
        module = sys.modules.get(name)
        if module is not None:
            module.forget_files()


def scan_files(files: list[SourceFile], settings: Settings, progress=None) -> ScanResult:
    from portlint.config import default_jobs

    _forget_file_memos()
    session.begin(settings)
    jobs = settings.jobs or default_jobs()
    cache = _open_cache(settings)
    results: list[FileResult | None] = [None] * len(files)
    finished = 0

    def done(index: int, result: FileResult) -> None:
        nonlocal finished
        results[index] = result
        finished += 1
        if progress:
            progress(finished, len(files))

    pending: list[tuple[int, SourceFile, int, tuple[str, str] | None]] = []
    for i, sf in enumerate(files):
        if cache is None:
            pending.append((i, sf, _size(sf), None))
            continue
        hit, size, known = _lookup(sf, settings, cache)
        if hit is None:
            pending.append((i, sf, size, known))
        else:
            done(i, hit)
    if jobs > 1 and len(pending) >= max(_POOL_MIN_FILES, 2 * jobs):
        _scan_parallel(pending, settings, cache, jobs, done)
    else:
        for i, sf, _, known in pending:
            done(i, scan_one(sf, settings, cache, known))
    out = ScanResult(files_scanned=len(files))
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


def worst_severity(findings: list[Finding]) -> Severity | None:
    active = [f.severity for f in findings if not f.suppressed]
    return max(active, key=lambda s: s.rank) if active else None


def cpu_count() -> int:
    return os.cpu_count() or 1
