"""Issue 26: every stage's root is bounded by the tree the user named (discovery/roots.py).

With no configuration and no git repository, the roots used to come from the working
directory: `cd / && portlint scan /abs/tree` read `.gitignore` files above the tree and
walked the whole filesystem for the build scope (33,779 files opened outside the tree in
one such scan), a file named alone had the working directory as its tree (its folders'
library layout listed up to `/`), the Python project model climbed an `__init__.py` chain
up to it, and the cache was written there. Each test names the tree one way (a folder, a
file, `--stdin-filename`) from a working directory above it, beside a sibling whose being
read would change the findings or be seen by an audit of what was opened; the near misses
keep what a project marker (a configuration file, a git work tree) declares."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from conftest import run_portlint_bytes as run

PTX = b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'
JAX = b'import jax\n\n\ndef f():\n    return jax.devices("gpu")\n'
# a setup.py that leaves tree/k.cu out of a ROCm build (PTL057 when it is read)
SETUP = (b"from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
         b'if not IS_ROCM:\n    setup(ext_modules=[CUDAExtension("x", ["tree/k.cu"])])\n')

# Runs the command line with an audit hook that records every file opened and every folder
# listed (Python's `open`, `os.scandir`, `os.listdir` audit events) outside the tree.
_AUDIT = r'''
import os, sys
tree, log, args = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3:]
seen = []

def hook(event, a):
    if event in ("open", "os.scandir", "os.listdir") and isinstance(a[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(a[0])
        if not os.path.isabs(path):
            return  # relative to an open folder (the writer's dir_fd), never to the cwd here
        path = os.path.abspath(path)
        if path != tree and not path.startswith(tree + os.sep):
            seen.append(event + " " + path)

sys.addaudithook(hook)
sys.argv = ["portlint", *args]
from portlint.cli import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
with open(log, "w") as fh:
    fh.write("\n".join(seen))
sys.exit(code)
'''


def audited(tree: Path, *args: str, cwd: Path | str, tmp_path: Path, stdin: bytes | None = None):
    """(the completed command, what it opened or listed outside `tree` that is not the
    interpreter's, portlint's install or the user's cache key)."""
    (tmp_path / "audit").mkdir(exist_ok=True)
    script, log = tmp_path / "audit" / "audit.py", tmp_path / "audit" / "audit.log"
    script.write_text(_AUDIT)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("NO_COLOR", None)
    proc = subprocess.run([sys.executable, str(script), str(tree), str(log), *args], cwd=cwd, env=env,
                          capture_output=True, input=stdin, timeout=120)
    own = [os.path.realpath(p) for p in (REPO, sys.prefix, sys.base_prefix, *filter(None, sys.path))]
    own.append(os.path.realpath(os.environ["XDG_CACHE_HOME"]))
    own.append(str(tmp_path / "audit"))  # the wrapper's own folder (the interpreter lists it for imports)
    outside = [line for line in log.read_text().splitlines()
               if not any(line.split(" ", 1)[1].startswith(p) for p in own)]
    return proc, outside


def _parent(tmp_path: Path) -> tuple[Path, Path]:
    """parent/ holding the named tree/ and siblings that change findings when read: a
    `.gitignore` that ignores the kernel, a setup.py that leaves it out of a ROCm build,
    a Python module and a kernel of its own."""
    parent = tmp_path / "parent"
    tree = parent / "tree"
    tree.mkdir(parents=True)
    (tree / "k.cu").write_bytes(PTX)
    (tree / "__init__.py").write_text("")
    (tree / "m.py").write_bytes(JAX)
    (parent / ".gitignore").write_text("k.cu\nm.py\n")
    (parent / "setup.py").write_bytes(SETUP)
    (parent / "sibling.py").write_text("import torch\nSECRET = 1\n")
    (parent / "other.cu").write_bytes(PTX)
    return parent, tree


def _rules(proc) -> list[str]:
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(f["rule"] for f in json.loads(proc.stdout)["findings"])


# --- the defect: roots from the working directory -------------------------------------------

@pytest.mark.parametrize("named", ["tree", "tree/k.cu", "tree/m.py"])
def test_a_scan_from_the_root_folder_opens_and_lists_nothing_outside_the_tree(tmp_path, named):
    """`cd / && portlint scan /abs/tree` (or a file of it): nothing outside the tree is
    opened or listed, and the siblings' `.gitignore` drops nothing; the findings are the
    tree's own (PTL201 for the kernel, PTL901 for the module)."""
    parent, tree = _parent(tmp_path)
    proc, outside = audited(tree, "scan", "--no-progress", "--no-cache", "--format", "json", str(parent / named),
                            cwd="/", tmp_path=tmp_path)
    assert outside == [], outside[:20]
    want = {"tree": ["PTL201", "PTL901"], "tree/k.cu": ["PTL201"], "tree/m.py": ["PTL901"]}[named]
    assert _rules(proc) == want, proc.stdout


def test_a_stdin_filename_from_the_root_folder_opens_nothing_outside_the_tree(tmp_path):
    """`--stdin-filename /abs/tree/m.py` piped from `/`: its tree is its folder."""
    parent, tree = _parent(tmp_path)
    proc, outside = audited(tree, "scan", "--no-progress", "--format", "json", "-", "--stdin-filename",
                            str(tree / "m.py"), cwd="/", tmp_path=tmp_path, stdin=JAX)
    assert outside == [], outside[:20]
    assert _rules(proc) == ["PTL901"], proc.stdout


def test_a_the_build_scope_of_a_folder_named_below_the_working_directory_is_the_folder(tmp_path):
    """`cd parent && portlint scan tree`: parent/setup.py is outside the tree named, so it
    does not put the kernel outside a ROCm build (it made a PTL057 note before), and a scan
    from `/` gives the same findings."""
    parent, tree = _parent(tmp_path)
    (parent / ".gitignore").unlink()
    args = ("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "json")
    here = run(*args, "tree", cwd=parent)
    assert _rules(here) == ["PTL201"], here.stdout
    assert _rules(run(*args, str(tree), cwd=Path("/"))) == ["PTL201"]


def test_a_a_file_named_alone_is_not_vendored_by_a_license_beside_the_working_directory(tmp_path):
    """A file named alone has its own folder as its tree (no marker holds it): a
    `cutlass/LICENSE.txt` above it, in the working directory's tree, is not read."""
    sub = tmp_path / "cutlass" / "sub"
    sub.mkdir(parents=True)
    (sub / "k.cu").write_bytes(PTX)
    (tmp_path / "cutlass" / "LICENSE.txt").write_text("BSD\n")
    args = ("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "concise")
    for named, cwd in (("cutlass/sub/k.cu", tmp_path), (str(sub / "k.cu"), Path("/"))):
        proc = run(*args, named, cwd=cwd)
        assert proc.returncode == 1 and b"PTL201 error" in proc.stdout, (named, proc.stdout)


def test_a_the_cache_is_written_in_the_tree_not_the_working_directory(tmp_path):
    """The default cache lives in the named tree's project root: nothing is created in the
    working directory above it, and the cache names no sibling."""
    parent, tree = _parent(tmp_path)
    proc = run("scan", "--no-progress", "--target", "tpu", "tree", cwd=parent)
    assert proc.returncode in (0, 1), proc.stderr
    assert not (parent / ".portlint_cache").exists()
    cached = b"".join(p.read_bytes() for p in (tree / ".portlint_cache").rglob("*") if p.is_file())
    assert cached and b"sibling" not in cached


def test_a_the_project_model_does_not_climb_above_the_tree(tmp_path):
    """In process: the model's root for a tree with an `__init__.py` at its top is the tree,
    whatever `Settings.root` (the working directory) says; a library caller that knows no
    tree is bounded by the settings root it names."""
    from portlint.core.config import Settings
    from portlint.index.project import project_root

    parent, tree = _parent(tmp_path)
    (tree / "sub").mkdir()
    (tree / "sub" / "__init__.py").write_text("")
    (tree / "sub" / "m.py").write_bytes(JAX)
    (parent / "__init__.py").write_text("")
    settings = Settings(root=Path("/"))
    assert project_root(settings, [tree / "sub" / "m.py"], str(tree)) == tree.resolve()
    assert project_root(Settings(root=tree), [tree / "sub" / "m.py"]) == tree.resolve()
    assert project_root(Settings(root=tree / "sub"), [tree / "sub" / "m.py"]) == (tree / "sub").resolve()
    # files of two named trees: not their common parent
    other = parent / "other"
    other.mkdir()
    (other / "x.py").write_bytes(JAX)
    assert project_root(settings, [tree / "m.py", other / "x.py"], str(tree)) == tree.resolve()


def test_a_discovery_reads_no_gitignore_above_the_tree(tmp_path, monkeypatch):
    """In process, with the working directory above the tree: the `.gitignore` of the
    folder above is not opened (the tree's own still is)."""
    from portlint.core.config import Settings
    import portlint.discovery.files as files

    parent, tree = _parent(tmp_path)
    (tree / ".gitignore").write_text("m.py\n")
    opened: list[str] = []
    real_read = files.read_bytes
    monkeypatch.setattr(files, "read_bytes", lambda path, *a, **k: opened.append(str(path)) or real_read(path, *a, **k))
    monkeypatch.chdir(parent)
    found, _ = files.discover([tree], Settings(root=parent))
    assert [f.real.name for f in found] == ["__init__.py", "k.cu"]
    assert opened == [str(tree / ".gitignore")]


# --- near misses: what a project marker declares ------------------------------------------

def test_b_a_config_file_that_sets_the_root_still_does(tmp_path):
    """A `portlint.toml` in parent/ makes parent/ the project: its setup.py is read for the
    tree (PTL057 folds the kernel's PTL201) and the cache goes there, from any working
    directory; a file named alone has that project as its tree."""
    parent, tree = _parent(tmp_path)
    (parent / ".gitignore").unlink()
    (parent / "portlint.toml").write_text('targets = ["rocm"]\n')
    for named, cwd in (("tree", parent), (str(tree), Path("/")), (str(tree / "k.cu"), Path("/"))):
        proc = run("scan", "--no-progress", "--format", "json", named, cwd=cwd)
        assert _rules(proc) == ["PTL057"], (named, proc.stdout)
    assert (parent / ".portlint_cache").is_dir() and not (tree / ".portlint_cache").exists()


def test_b_a_config_file_at_the_top_of_the_tree_bounds_it_inside_a_larger_checkout(tmp_path):
    """A configuration file is nearer than the git root: parent/ is a git work tree, and the
    tree's own `portlint.toml` keeps every stage inside the tree."""
    parent, tree = _parent(tmp_path)
    (parent / ".gitignore").unlink()
    subprocess.run(["git", "init", "-q", str(parent)], check=True)
    (tree / "portlint.toml").write_text('targets = ["rocm"]\n')
    proc, outside = audited(tree, "scan", "--no-progress", "--no-cache", "--format", "json", str(tree),
                            cwd="/", tmp_path=tmp_path)
    assert outside == [], outside[:20]
    assert _rules(proc) == ["PTL201"], proc.stdout


def test_b_a_git_work_tree_above_the_named_folder_is_its_project(tmp_path):
    """Decided (docs/threat-model.md, "The project root"): a git work tree that holds the
    named folder is the project it belongs to, as pre-commit (files named one by one from
    the repository's root) and `portlint scan src/` need; a scanned tree cannot put a
    `.git` above itself. Its setup.py is read (PTL057), from any working directory, and
    its `.gitignore` applies as git applies it."""
    parent, tree = _parent(tmp_path)
    (parent / ".gitignore").write_text("m.py\n")
    subprocess.run(["git", "init", "-q", str(parent)], check=True)
    args = ("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "json")
    for named, cwd in (("tree", parent), (str(tree), Path("/")), (str(tree / "k.cu"), Path("/"))):
        assert _rules(run(*args, named, cwd=cwd)) == ["PTL057"], named


def test_b_a_folder_named_reads_as_from_inside_it(tmp_path):
    """With no marker a folder named is its own project, from any working directory:
    `portlint scan cutlass` from its parent gives what `cd cutlass && portlint scan .`
    gives (its license file names its own code, not a bundled library above the root)."""
    sub = tmp_path / "cutlass" / "sub"
    sub.mkdir(parents=True)
    (sub / "k.cu").write_bytes(PTX)
    (tmp_path / "cutlass" / "LICENSE.txt").write_text("BSD\n")
    args = ("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "json")
    outer = run(*args, "cutlass", cwd=tmp_path)
    inner = run(*args, ".", cwd=tmp_path / "cutlass")
    strip = lambda proc: [(f["rule"], f["severity"], f["path"].rpartition("sub/")[2]) for f in json.loads(proc.stdout)["findings"]]
    assert strip(outer) == strip(inner) == [("PTL201", "error", "k.cu")], (outer.stdout, inner.stdout)


def test_b_several_files_named_share_the_widest_of_their_trees(tmp_path):
    """`portlint scan setup.py tree/k.cu`: the kernel's tree is the setup.py's folder, also
    named, so the build scope reads that setup.py (PTL057), as a scan of the folder does."""
    parent, tree = _parent(tmp_path)
    (parent / ".gitignore").unlink()
    args = ("scan", "--no-progress", "--no-cache", "--target", "rocm", "--format", "json")
    assert _rules(run(*args, "setup.py", "tree/k.cu", cwd=parent)) == ["PTL057"]
    assert _rules(run(*args, "tree/k.cu", cwd=parent)) == ["PTL201"]  # its own folder alone
