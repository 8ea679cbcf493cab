"""Run one command and measure it: wall time, CPU time and peak memory of its whole
process tree (the command, its worker processes and their children)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Measurement:
    wall: float  # seconds
    cpu: float  # user + system seconds of the command and every child it waited for
    peak_tree_mb: float  # highest sum of resident memory over the process tree, sampled
    peak_single_mb: float  # ru_maxrss: the largest single process (exact, from the kernel)
    returncode: int
    stdout: bytes
    stderr: bytes
    load_before: float  # 1-minute load average when the command started


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
        except OSError:
            pass
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss(root: int) -> int:
    """Sum of resident set sizes of `root` and all its descendants (shared pages of forked
    workers are counted once per process, so this errs on the high side)."""
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss(pid)
        stack.extend(_children(pid))
    return total


def load_average() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def run(cmd: list[str], *, cwd: Path | None = None, env: dict | None = None, interval: float = 0.01) -> Measurement:
    load = load_average()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc.pid))
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # read the pipes on threads so a chatty command cannot block on a full pipe
    chunks: dict[str, bytes] = {}

    def drain(name: str, stream) -> None:
        chunks[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(n, s), daemon=True) for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    for r in readers:
        r.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measurement(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_tree_mb=peak / 2**20,
        peak_single_mb=usage.ru_maxrss / 1024,
        returncode=proc.returncode,
        stdout=chunks.get("out", b""),
        stderr=chunks.get("err", b""),
        load_before=load,
    )
