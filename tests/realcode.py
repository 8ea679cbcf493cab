"""Load and evaluate a labelled real-code set (see tests/realcode/README.md)."""

from __future__ import annotations

import csv
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETS = REPO / "tests" / "realcode"
EXPECTS = ("flag", "quiet")


@dataclass(frozen=True)
class Label:
    package: str
    file: str
    line: int  # the site's first line
    expect: str
    rules: tuple[str, ...]
    mode: str
    why: str
    row: int  # line of labels.csv, for messages
    last: int = 0  # the site's last line (a span `A-B`: one statement on lines A..B); 0: `line` alone

    @property
    def lines(self) -> range:
        return range(self.line, max(self.line, self.last) + 1)

    @property
    def where(self) -> str:
        return f"{self.line}-{self.last}" if self.last > self.line else str(self.line)


def parse_line(text: str) -> tuple[int, int] | None:
    """`12` -> (12, 0); `12-18` -> (12, 18): the statement on lines 12..18; None when malformed."""
    first, dash, last = text.partition("-")
    if not first.isdigit() or int(first) < 1:
        return None
    if not dash:
        return int(first), 0
    if not last.isdigit() or int(last) <= int(first):
        return None
    return int(first), int(last)


@dataclass
class Outcome:
    flags: int = 0
    hits: int = 0
    quiets: int = 0
    trap_hits: int = 0
    misses: list[tuple[Label, list[str]]] = field(default_factory=list)
    false_alarms: list[tuple[Label, list[str]]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.hits / self.flags if self.flags else 1.0

    @property
    def trap_rate(self) -> float:
        return self.trap_hits / self.quiets if self.quiets else 0.0


class LabelError(Exception):
    pass


def set_dir(name: str) -> Path:
    return SETS / name


def load_settings(name: str) -> dict:
    with open(set_dir(name) / "set.toml", "rb") as fh:
        return tomllib.load(fh)


def load_labels(name: str) -> list[Label]:
    """Every row of the set's labels.csv, checked for shape (a malformed row fails loudly)."""
    families = tuple(load_settings(name)["families"])
    with open(set_dir(name) / "labels.csv", newline="", encoding="utf-8") as fh:
        return read_labels(fh, families)


def read_labels(fh, families: tuple[str, ...]) -> list[Label]:
    """The labels of one labels.csv text (an open file or any iterable of lines)."""
    out: list[Label] = []
    taken: dict[tuple[str, str, str], list[Label]] = {}  # (package, file, mode) -> labels so far
    reader = csv.DictReader(fh)
    if reader.fieldnames != ["package", "file", "line", "expect", "rules", "mode", "why"]:
        raise LabelError(f"labels.csv header is {reader.fieldnames}")
    for number, row in enumerate(reader, start=2):
        if row["expect"] not in EXPECTS:
            raise LabelError(f"labels.csv:{number}: expect must be flag or quiet, not {row['expect']!r}")
        span = parse_line(row["line"])
        if span is None:
            raise LabelError(f"labels.csv:{number}: bad line {row['line']!r} (a line, or a span A-B with A < B)")
        if not row["why"].strip():
            raise LabelError(f"labels.csv:{number}: a label says why")
        rules = tuple(row["rules"].split()) or families
        if not all(r.startswith("PTL") for r in rules):
            raise LabelError(f"labels.csv:{number}: rules must be PTL ids or prefixes, not {row['rules']!r}")
        mode = row["mode"].strip() or "inferred"
        label = Label(row["package"], row["file"], span[0], row["expect"], rules, mode, row["why"], number, span[1])
        same_file = taken.setdefault((label.package, label.file, mode), [])
        for other in same_file:
            if set(other.lines) & set(label.lines):
                raise LabelError(f"labels.csv:{number}: {label.file}:{label.where} overlaps the label of row {other.row} "
                                 f"({other.file}:{other.where})")
        same_file.append(label)
        out.append(label)
    return out


def fetch_trees(name: str) -> Path:
    """Fetch (if missing) and verify the set's pinned sdists; return the trees folder."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import fetch_corpus
    finally:
        sys.path.pop(0)
    dest = set_dir(name) / "trees"
    fetch_corpus.ensure_corpus(manifest=set_dir(name) / "packages.toml", src=dest, each_package_a_project=True)
    return dest


@functools.lru_cache(maxsize=1)
def _portlint_digest() -> str:
    """A digest of the portlint the scans run: every file of the package the subprocess will
    import (found the way it finds it: PYTHONPATH, then the installed one) and of the rules/
    folder beside it."""
    spec = importlib.util.find_spec("portlint")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("portlint is not importable")
    package = Path(next(iter(spec.submodule_search_locations))).resolve()
    digest = hashlib.sha256()
    for folder in (package, package.parent / "rules"):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(folder.parent)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def scan(tree: Path, mode: str, extra: tuple[str, ...] = (), paths: tuple[str, ...] = (".",)) -> list[dict]:
    """Findings of one package tree in one mode, through the real command line.

    The recall test and the judged-findings test scan the same trees with the same arguments;
    the report is kept in the set's work/scans/ folder under a key of the arguments and the
    digest of the portlint that ran, so the second asks costs nothing. A lock per key lets
    pytest-xdist's workers wait for one another instead of scanning twice; a report of another
    portlint (the digest differs) is rescanned and replaced, so the folder holds one report per
    tree, mode and arguments."""
    args = [sys.executable, "-m", "portlint", "scan", *paths, "--format", "json", "--no-cache",
            "--exit-zero", "--no-progress", *extra]
    if mode != "inferred":
        args += ["--target", mode]
    store = tree.parent.parent / "work" / "scans"
    store.mkdir(parents=True, exist_ok=True)
    # whether the package's folder is its own project root (fetch_trees marks it): a report
    # kept from a scan where the whole trees folder was one project is not this one
    own_project = (tree / "portlint.toml").is_file()
    name = hashlib.sha256(json.dumps([tree.name, mode, args[2:], own_project]).encode()).hexdigest()[:24]
    digest = _portlint_digest()
    with open(store / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = store / f"{name}.json"
        if kept.is_file():
            with open(kept, encoding="utf-8") as fh:
                record = json.load(fh)
            if record.get("portlint") == digest:
                return record["findings"]
        proc = subprocess.run(args, cwd=tree, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            raise RuntimeError(f"portlint on {tree.name} ({mode}) exited {proc.returncode}:\n{proc.stderr[-3000:]}")
        findings = json.loads(proc.stdout)["findings"]
        partial = kept.with_suffix(".part")
        with open(partial, "w", encoding="utf-8") as fh:
            json.dump({"portlint": digest, "tree": tree.name, "mode": mode, "findings": findings}, fh)
        os.replace(partial, kept)
        return findings


def score(labels: list[Label], found: dict[tuple[str, str, str, int], list[str]]) -> Outcome:
    """Recall and trap hits of `labels` against `found`: (package, mode, path, start line) ->
    the rules of the findings starting there. A label with a span counts every line of it."""
    out = Outcome()
    for label in labels:
        got = [r for line in label.lines for r in found.get((label.package, label.mode, label.file, line), [])]
        matching = sorted(r for r in got if r.startswith(label.rules))
        if label.expect == "flag":
            out.flags += 1
            if matching:
                out.hits += 1
            else:
                out.misses.append((label, sorted(got)))
        else:
            out.quiets += 1
            if matching:
                out.trap_hits += 1
                out.false_alarms.append((label, matching))
    return out


def evaluate(name: str) -> Outcome:
    labels = load_labels(name)
    settings = load_settings(name)
    trees = fetch_trees(name)
    extra = tuple(settings.get("scan_args", ()))
    with open(set_dir(name) / "packages.toml", "rb") as fh:
        # a package may name the folders of its tree that are scanned (`scan = [...]`)
        scan_paths = {f"{p['name']}-{p['version']}": tuple(p.get("scan", (".",))) for p in tomllib.load(fh)["package"]}
    found: dict[tuple[str, str, str, int], list[str]] = {}
    for package, mode in sorted({(l.package, l.mode) for l in labels}):
        tree = trees / package
        if not tree.is_dir():
            raise LabelError(f"no tree {package} in packages.toml's fetch")
        for f in scan(tree, mode, extra, scan_paths.get(package, (".",))):
            for path, line, rule in reported_sites(f):
                # paths are relative to the project root: the package's folder (its portlint.toml)
                found.setdefault((package, mode, path, line), []).append(rule)
    for label in labels:
        if not (trees / label.package / label.file).is_file():
            raise LabelError(f"labels.csv:{label.row}: no file {label.package}/{label.file}")
    return score(labels, found)


def reported_sites(f: dict) -> list[tuple[str, int, str]]:
    """(path, start line, rule) of every site an active JSON finding reports: its own, and
    each use folded under it (`related`, one finding per root cause). A folded use is a
    site the report names, so it counts as found for a `flag` label and as a trap hit for
    a `quiet` one, exactly as when it was a finding of its own, under its own rule (a file
    outside the ROCm build folds the findings of every rule under its PTL057)."""
    if f.get("suppressed"):
        return []
    return [(f["path"], f["start_line"], f["rule"])] + [(r["path"], r["start_line"], r.get("rule", f["rule"])) for r in f.get("related", ())]


def describe(name: str, out: Outcome) -> str:
    lines = [f"{name}: recall {out.hits}/{out.flags} = {out.recall:.3f}; "
             f"trap rate {out.trap_hits}/{out.quiets} = {out.trap_rate:.3f}"]
    for label, got in out.misses:
        lines.append(f"  miss  {label.package}/{label.file}:{label.where} [{' '.join(label.rules)}] {label.mode}: {label.why}"
                     + (f" (found {' '.join(got)})" if got else ""))
    for label, got in out.false_alarms:
        lines.append(f"  trap  {label.package}/{label.file}:{label.where} [{' '.join(got)}] {label.mode}: {label.why}")
    return "\n".join(lines)
