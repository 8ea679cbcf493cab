"""Worker processes for a scan of many files (the misses of the cache lookup).

Misses go to a pool of forked workers, largest files first so that no big file is left to
run alone at the end; each worker writes its own cache entries (atomic renames, see
cache.py) and sends back plain dicts. A worker that dies (the OOM killer, a crash in native
parser code) costs only the files it was analysing: each is retried alone, and the one that
kills its process again gets a notice. The engine merges and sorts the results, so neither
the worker count nor the completion order can change the report."""

from __future__ import annotations

import os

from portlint.pipeline import engine

from portlint.findings import selection
from portlint.core.config import Settings
from portlint.discovery.files import SourceFile
from portlint.core.model import FileResult, Notice

_WORKER_SETTINGS: Settings | None = None
_WORKER_CACHE = None
_WORKER_SLOT: tuple | None = None  # (shared array, this worker's index in it)


def tune_gc() -> None:
    """Fewer cyclic garbage collections for a scan process.

    A scan makes millions of short-lived, acyclic objects (syntax trees, AST nodes,
    findings); with Python's default threshold (700 allocations) the collector ran some
    2,600 times over the bench corpus, full passes included, and took 6 % of a serial
    scan. 20,000 costs about 17 MB more at peak. The command line calls this; a library
    caller keeps its own settings."""
    import gc

    gc.set_threshold(20_000, 20, 20)


def _init_worker(settings: Settings, cache=None, slots=None, counter=None, model=None) -> None:
    """`model`: the parent's Python project model, for a worker that does not inherit the
    parent's memory (forkserver, spawn): the model is built once per scan, by the parent."""
    global _WORKER_SETTINGS, _WORKER_CACHE, _WORKER_SLOT
    tune_gc()
    _WORKER_SETTINGS = settings
    _WORKER_CACHE = cache
    if model is not None:
        from portlint.index.project import adopt_model

        adopt_model(settings, model)
    if slots is not None and counter is not None:
        with counter.get_lock():
            _WORKER_SLOT = (slots, counter.value % len(slots))
            counter.value += 1


def _work_chunk(items: list[tuple[int, SourceFile, tuple[str, str] | None]]) -> list[tuple[int, dict]]:
    assert _WORKER_SETTINGS is not None
    out = []
    for index, sf, known in items:
        if _WORKER_SLOT is not None:
            _WORKER_SLOT[0][_WORKER_SLOT[1]] = index
        out.append((index, engine._scan_isolated(sf, _WORKER_SETTINGS, _WORKER_CACHE, known).to_dict()))
    if _WORKER_SLOT is not None:
        _WORKER_SLOT[0][_WORKER_SLOT[1]] = -1
    return out


def _prepare_parent(settings: Settings, pending) -> None:
    """Load the detectors of the languages of `pending` and the CUDA grammar once, before
    forking, so workers inherit them."""
    from portlint.discovery.languages import classify

    languages = {classify(sf.real.name, b"")[0] or "cuda" for _, sf, _, _ in pending}
    plan = selection.plan(settings)
    for language in sorted(languages):
        plan.detectors(language)
    if "cuda" in languages:
        from portlint.frontends.cuda.parse import cuda_language

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
    return _os_threads() > 1


def _os_threads() -> int:
    """The threads the OS lists for this process (1 where it cannot say)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def scan_parallel(pending: list[tuple[int, SourceFile, int, tuple[str, str] | None]], settings: Settings, cache, jobs: int, done) -> None:
    """Scan `pending` in worker processes, surviving the death of a worker.

    An exception in a worker is already a notice or a PTL003 finding (scan_source); a
    worker can still die outright (the kernel's OOM killer, a crash in native parser
    code). Each worker keeps the index of the file it is analysing in shared memory, so
    when a pool breaks the files that were in progress are known: each of them is retried
    alone in a fresh process, the one that kills its process again gets a notice, and the
    files not yet done go to a new pool."""
    import multiprocessing

    method = _start_method()
    if method == "fork":
        _prepare_parent(settings, pending)
    context = multiprocessing.get_context(method)
    model = None
    if method != "fork":  # a fresh worker would build the project model again: hand it over
        from portlint.index.project import model_seed

        model = model_seed(settings)
    remaining = _largest_first(pending)
    while remaining:
        finished, broken, suspects = _run_pool(context, remaining, settings, cache, jobs, done, model)
        if not broken:
            return
        if not suspects:  # the pool died outside any file's analysis: do not start it again
            suspects = [item for item in remaining if item[0] not in finished]
        for item in suspects:  # alone, so that a second death names the file
            if _run_pool(context, [item], settings, cache, 1, done, model)[1]:
                index, sf, _ = item
                # unchecked like a file whose analysis raised: the scan ends with exit 2
                done(index, FileResult(notices=[Notice(sf.display, _WORKER_DIED, "error")],
                                       counters={engine.FILES_FAILED: 1}, scanned=False))
        settled = finished | {i for i, _, _ in suspects}
        remaining = [item for item in remaining if item[0] not in settled]


class EarlyStart:
    """Files that do not depend on the Python project model (CUDA, C++, build files),
    analysed in worker processes while the parent builds the model.

    The workers are forked before the build (the parent runs one thread then), one fewer
    than `jobs` so that the build has a core of its own. Each takes the next file of a
    shared list, largest first, until the list is done or the parent says stop (`finish`,
    when the model is ready): the files no worker took then go to the pool that scans the
    Python files, forked after the build so that its workers inherit the model. A worker
    that dies costs nothing here: every file whose result did not come back goes to that
    pool, whose own recovery names a file that kills its process again."""

    def __init__(self, pending, pool, futures, stop, threads_before: int = 1):
        self.pending = pending
        self.pool = pool
        self.futures = futures
        self.stop = stop
        self.threads_before = threads_before

    @classmethod
    def begin(cls, pending: list[tuple[int, SourceFile, int, tuple[str, str] | None]], settings: Settings, cache, jobs: int) -> "EarlyStart | None":
        """Start the workers on `pending`, or None where forking is not safe (threads)."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if _start_method() != "fork":
            return None
        _prepare_parent(settings, pending)
        threads_before = _os_threads()
        context = multiprocessing.get_context("fork")
        count = max(1, jobs - 1)
        items = _largest_first(pending)
        claimed = context.Value("i", 0)
        stop = context.Value("b", 0, lock=False)
        slots = context.Array("q", [-1] * count, lock=False)
        counter = context.Value("i", 0)
        pool = ProcessPoolExecutor(count, mp_context=context, initializer=_init_early,
                                   initargs=(settings, cache, slots, counter, items, claimed, stop))
        try:
            futures = [pool.submit(_claim_files) for _ in range(count)]
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        return cls(pending, pool, futures, stop, threads_before)

    def finish(self, done) -> list[tuple[int, SourceFile, int, tuple[str, str] | None]]:
        """Stop taking files, hand the results that came back to `done` and return the
        files that still need analysis."""
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        self.stop.value = 1
        finished: set[int] = set()
        try:
            for future in as_completed(self.futures):
                for index, data in future.result():
                    finished.add(index)
                    done(index, FileResult.from_dict(data))
        except BrokenProcessPool:
            pass
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)
            _settle_threads(self.threads_before)
        return [p for p in self.pending if p[0] not in finished]


def _settle_threads(before: int, limit: float = 2.0) -> None:
    """Wait (at most `limit` seconds) until the threads a pool of ours started have left the
    process: until the OS lists no more threads than `before`, the count when it started.

    `shutdown(wait=True)` joins the executor's threads, but a joined thread is still listed
    in /proc/self/task until the OS has finished tearing it down. On a loaded machine that
    window is long enough for the next pool's `_start_method` (EarlyStart's Python pool, or
    the next scan of a `--watch` loop or a library caller) to see a foreign thread and pick
    forkserver, whose fresh workers lose what this process loaded (and cost a start-up each).
    Threads that were there before the pool (a caller's XLA pools) are not waited for."""
    import time

    deadline = time.monotonic() + limit
    while _os_threads() > before and time.monotonic() < deadline:
        time.sleep(0.002)


_EARLY: tuple | None = None  # (the shared list of files, the count taken, the stop flag)


def _init_early(settings: Settings, cache, slots, counter, items, claimed, stop) -> None:
    global _EARLY
    _init_worker(settings, cache, slots, counter)
    _EARLY = (items, claimed, stop)


def _claim_files() -> list[tuple[int, dict]]:
    """Take files from the shared list until it is done or the parent says stop."""
    assert _EARLY is not None
    items, claimed, stop = _EARLY
    out = []
    while not stop.value:
        with claimed.get_lock():
            k = claimed.value
            if k >= len(items):
                break
            claimed.value = k + 1
        out.extend(_work_chunk([items[k]]))
    return out


def _largest_first(pending) -> list[tuple[int, SourceFile, tuple[str, str] | None]]:
    """(index, file, known) of `pending`, largest files first (then in file order), so that
    no big file is left to run alone at the end."""
    return [(i, sf, known) for i, sf, _, known in sorted(pending, key=lambda p: (-p[2], p[0]))]


_WORKER_DIED = "the process analysing this file died (killed, or a crash in native code): skipped, no findings for it"


def _run_pool(context, items, settings: Settings, cache, jobs: int, done, model=None) -> tuple[set[int], bool, list]:
    """Run `items` in one pool: (indices finished, whether a worker died, the items that
    were in progress when it did)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    slots = context.Array("q", [-1] * jobs, lock=False)  # per worker: the file it is analysing
    counter = context.Value("i", 0)
    chunk = max(1, min(8, len(items) // (jobs * 16)))
    finished: set[int] = set()
    threads_before = _os_threads()
    try:
        with ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker, initargs=(settings, cache, slots, counter, model)) as pool:
            futures = [pool.submit(_work_chunk, items[k : k + chunk]) for k in range(0, len(items), chunk)]
            for future in as_completed(futures):
                for index, data in future.result():
                    finished.add(index)
                    done(index, FileResult.from_dict(data))
    except BrokenProcessPool:
        in_progress = {i for i in slots if i >= 0} - finished
        return finished, True, [item for item in items if item[0] in in_progress]
    finally:
        _settle_threads(threads_before)
    return finished, False, []
