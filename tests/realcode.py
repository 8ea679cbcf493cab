"""Load and evaluate a labelled real-code set (see tests/realcode/README.md)."""

from __future__ import annotations

import csv
import json
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
    line: int
    expect: str
    rules: tuple[str, ...]
    mode: str
    why: str
    row: int  # line of labels.csv, for messages


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
    """Every row of labels.csv, checked for shape (a malformed row fails loudly)."""
    families = tuple(load_settings(name)["families"])
    out: list[Label] = []
    seen: set[tuple[str, str, int, str]] = set()
    with open(set_dir(name) / "labels.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != ["package", "file", "line", "expect", "rules", "mode", "why"]:
            raise LabelError(f"labels.csv header is {reader.fieldnames}")
        for number, row in enumerate(reader, start=2):
            if row["expect"] not in EXPECTS:
                raise LabelError(f"labels.csv:{number}: expect must be flag or quiet, not {row['expect']!r}")
            if not row["line"].isdigit() or int(row["line"]) < 1:
                raise LabelError(f"labels.csv:{number}: bad line {row['line']!r}")
            if not row["why"].strip():
                raise LabelError(f"labels.csv:{number}: a label says why")
            rules = tuple(row["rules"].split()) or families
            if not all(r.startswith("PTL") for r in rules):
                raise LabelError(f"labels.csv:{number}: rules must be PTL ids or prefixes, not {row['rules']!r}")
            mode = row["mode"].strip() or "inferred"
            key = (row["package"], row["file"], int(row["line"]), mode)
            if key in seen:
                raise LabelError(f"labels.csv:{number}: {key} is labelled twice")
            seen.add(key)
            out.append(Label(row["package"], row["file"], int(row["line"]), row["expect"], rules, mode, row["why"], number))
    return out


def fetch_trees(name: str) -> Path:
    """Fetch (if missing) and verify the set's pinned sdists; return the trees folder."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import fetch_corpus
    finally:
        sys.path.pop(0)
    dest = set_dir(name) / "trees"
    fetch_corpus.ensure_corpus(manifest=set_dir(name) / "packages.toml", src=dest)
    return dest


def scan(tree: Path, mode: str, extra: tuple[str, ...] = (), paths: tuple[str, ...] = (".",)) -> list[dict]:
    """Findings of one package tree in one mode, through the real command line."""
    args = [sys.executable, "-m", "portlint", "scan", *paths, "--format", "json", "--no-cache",
            "--exit-zero", "--no-progress", *extra]
    if mode != "inferred":
        args += ["--target", mode]
    proc = subprocess.run(args, cwd=tree, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"portlint on {tree.name} ({mode}) exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)["findings"]


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
            if f.get("suppressed"):
                continue
            # paths are relative to the project root: the trees folder (its portlint.toml)
            path = f["path"].removeprefix(package + "/")
            found.setdefault((package, mode, path, f["start_line"]), []).append(f["rule"])
    out = Outcome()
    for label in labels:
        if not (trees / label.package / label.file).is_file():
            raise LabelError(f"labels.csv:{label.row}: no file {label.package}/{label.file}")
        got = found.get((label.package, label.mode, label.file, label.line), [])
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


def describe(name: str, out: Outcome) -> str:
    lines = [f"{name}: recall {out.hits}/{out.flags} = {out.recall:.3f}; "
             f"trap rate {out.trap_hits}/{out.quiets} = {out.trap_rate:.3f}"]
    for label, got in out.misses:
        lines.append(f"  miss  {label.package}/{label.file}:{label.line} [{' '.join(label.rules)}] {label.mode}: {label.why}"
                     + (f" (found {' '.join(got)})" if got else ""))
    for label, got in out.false_alarms:
        lines.append(f"  trap  {label.package}/{label.file}:{label.line} [{' '.join(got)}] {label.mode}: {label.why}")
    return "\n".join(lines)
