"""Fetch a pinned set of PyPI sdists (by default the benchmark corpus, bench/corpus.toml,
into bench/corpus/src/; `--manifest M --dest D` for another set, such as the labelled
real-code sets under tests/realcode/).

Each package is fetched with pip itself, as a source distribution, with its archive hash
pinned (`--require-hashes`, so pip refuses a different file before unpacking it). Several
sdists import torch or CUDA tooling in setup.py, so their metadata step fails here; pip is
then told to keep its unpacked tree (`--no-clean`) and that tree is taken. Either way the
tree that ends up in corpus/src/ is hashed and compared with `tree_sha256`.

    python bench/fetch_corpus.py            # fetch what is missing, verify everything
    python bench/fetch_corpus.py --pin      # print the tree hashes (to fill corpus.toml)
    python bench/fetch_corpus.py --manifest tests/realcode/cuda/packages.toml --dest tests/realcode/cuda/trees
    python bench/fetch_corpus.py --manifest bench/cuda_corpus.toml --dest bench/corpus/cuda-src
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CORPUS = BENCH / "corpus"
SRC = CORPUS / "src"
# The CUDA-heavy tree of the CUDA-only figures (bench/run.py --only cuda).
CUDA_MANIFEST = BENCH / "cuda_corpus.toml"
CUDA_SRC = CORPUS / "cuda-src"
# The extensions the benchmark measures (portlint's, semgrep's and grep's inputs).
SOURCE_EXTENSIONS = {
    ".cu", ".cuh", ".hip", ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx",
    ".inl", ".ipp", ".tpp", ".py", ".pyi", ".ptx",
}
# Packaging by-products that are not the package's source, left out of scans and digests.
SKIP_DIRS = {"__pycache__", "build", "dist"}


class CorpusError(Exception):
    pass


def load_manifest(path: Path = BENCH / "corpus.toml") -> list[dict]:
    with open(path, "rb") as fh:
        return tomllib.load(fh)["package"]


def source_files(tree: Path) -> list[Path]:
    """The measured files under `tree`, sorted, as the digest and the line count see them."""
    out = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.suffix.lower() in SOURCE_EXTENSIONS and path.is_file() and not path.is_symlink():
                out.append(path)
    return out


def tree_digest(tree: Path) -> tuple[str, int, int]:
    """sha256 over (relative path, size, bytes) of every measured file; files; lines."""
    digest = hashlib.sha256()
    files = lines = 0
    for path in source_files(tree):
        data = path.read_bytes()
        rel = path.relative_to(tree).as_posix().encode()
        digest.update(b"%d:%s:%d:" % (len(rel), rel, len(data)))
        digest.update(data)
        files += 1
        lines += data.count(b"\n")
    return digest.hexdigest(), files, lines


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _extract(archive: Path, into: Path) -> Path:
    """Unpack an sdist safely (no absolute paths, links or devices) and return its root."""
    into.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise CorpusError(f"{archive.name}: unsafe member {member!r}")
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(into, filter="data")
    roots = [p for p in into.iterdir() if p.is_dir()]
    if len(roots) != 1:
        raise CorpusError(f"{archive.name}: expected one top-level folder, found {len(roots)}")
    return roots[0]


def _pip_fetch(pkg: dict, work: Path) -> Path:
    """Run pip download for one pinned sdist; return the unpacked source tree."""
    spec = f"{pkg['name']}=={pkg['version']}"
    reqs = work / "requirements.txt"
    reqs.write_text(f"{spec} --hash=sha256:{pkg['sha256']}\n")
    archives = work / "sdist"
    tmp = work / "tmp"
    archives.mkdir()
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PIP_NO_INPUT="1")
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        "--require-hashes", "--no-build-isolation", "--no-clean", "-r", str(reqs), "-d", str(archives),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    saved = sorted(archives.iterdir())
    if saved:
        # pip kept the archive (its metadata step worked): check it again and unpack it.
        got = _sha256(saved[0])
        if got != pkg["sha256"]:
            raise CorpusError(f"{spec}: archive sha256 {got} != pinned {pkg['sha256']}")
        return _extract(saved[0], work / "unpacked")
    if "DO NOT MATCH THE HASHES" in proc.stderr:
        raise CorpusError(f"{spec}: PyPI served a file whose hash is not the pinned one:\n{proc.stderr[-1500:]}")
    # Metadata generation failed (setup.py wants torch/CUDA): take the tree pip unpacked
    # after it had verified the archive hash.
    candidates = [p for p in tmp.glob("pip-*/*") if p.is_dir() and ((p / "setup.py").exists() or (p / "pyproject.toml").exists())]
    if len(candidates) != 1:
        raise CorpusError(f"{spec}: pip download failed and left no unpacked tree (exit {proc.returncode}):\n{proc.stderr[-1500:]}")
    return candidates[0]


def fetch(pkg: dict, *, pin: bool = False, src: Path = SRC) -> dict:
    spec = f"{pkg['name']}=={pkg['version']}"
    dest = src / f"{pkg['name']}-{pkg['version']}"
    if not dest.is_dir():
        work = src.parent / "work" / f"{pkg['name']}-{pkg['version']}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        print(f"fetch_corpus: downloading {spec}", file=sys.stderr)
        tree = _pip_fetch(pkg, work)
        src.mkdir(parents=True, exist_ok=True)
        shutil.move(str(tree), dest)
        shutil.rmtree(work, ignore_errors=True)
    digest, files, lines = tree_digest(dest)
    if not pin and digest != pkg["tree_sha256"]:
        raise CorpusError(
            f"{spec}: tree sha256 {digest} != pinned {pkg['tree_sha256'] or '(none)'}; "
            f"delete {dest} to fetch it again"
        )
    return {"name": pkg["name"], "version": pkg["version"], "tree": dest, "files": files, "lines": lines, "tree_sha256": digest}


def ensure_corpus(*, pin: bool = False, manifest: Path = BENCH / "corpus.toml", src: Path = SRC,
                  each_package_a_project: bool = False) -> list[dict]:
    """Fetch what is missing and verify every package; also mark the corpus folder as
    its own portlint project so the repository's config and .gitignore do not apply.

    `each_package_a_project`: mark every package's folder too, so that a scan run in it
    takes that package alone as the project, as a user scanning the unpacked sdist gets
    (its Python project model then holds that package's files only, not every package of
    the set: one package's imports must not resolve into another's tree). The marker is
    not a measured file (SOURCE_EXTENSIONS), so the tree digest is unchanged."""
    out = [fetch(pkg, pin=pin, src=src) for pkg in load_manifest(manifest)]
    mark_project(src, "the benchmark corpus is its own project")
    if each_package_a_project:
        for pkg in out:
            mark_project(pkg["tree"], "one unpacked sdist, its own project")
    return out


def mark_project(folder: Path, why: str, replace: bool = False) -> None:
    """Make `folder` a portlint project root with default settings (an empty `portlint.toml`
    whose one comment says why), so the repository's own config and .gitignore do not apply
    to a scan run in it. An existing marker is kept unless `replace`."""
    marker = folder / "portlint.toml"
    if replace or not marker.exists():
        marker.write_text(f"# {why}: default settings\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pin", action="store_true", help="do not compare tree hashes; print them")
    parser.add_argument("--manifest", type=Path, default=BENCH / "corpus.toml", help="the pinned package list (TOML)")
    parser.add_argument("--dest", type=Path, default=SRC, help="where the unpacked trees go")
    args = parser.parse_args(argv)
    try:
        packages = ensure_corpus(pin=args.pin, manifest=args.manifest.resolve(), src=args.dest.resolve())
    except CorpusError as exc:
        print(f"fetch_corpus: error: {exc}", file=sys.stderr)
        return 2
    for p in packages:
        print(f"{p['name']:<26} {p['version']:<10} {p['files']:>6} files {p['lines']:>8} lines  tree_sha256 = \"{p['tree_sha256']}\"")
    print(f"{'total':<37} {sum(p['files'] for p in packages):>6} files {sum(p['lines'] for p in packages):>8} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
