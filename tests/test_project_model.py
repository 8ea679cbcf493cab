"""The Python project model: scope (inferred and declared), reachability across files, the
cache key's cross-file part, and the one-file (pre-commit) call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from portlint.cli import main
from portlint.core.config import Settings
from portlint.discovery.files import discover
from portlint.pipeline.engine import scan_files
from portlint.frontends.python.names import ImportTable, resolve_relative
from portlint.index.project import ProjectModel, module_name_of

CUDA_TRAIN = '''import torch
import torch.distributed as dist
import torch.nn.functional as F


def setup():
    dist.init_process_group(backend="nccl")
    return torch.device("cuda")


def train(model, loader, optimizer):
    device = setup()
    for batch, labels in loader:
        batch = batch.to(device)
        logits = model(batch)
        loss = F.cross_entropy(logits, labels.to("cuda"))
        if loss > 10.0:
            print("diverging")
        keep = torch.nonzero(labels)
        loss.backward()
        optimizer.step()
        print(loss.item(), keep.shape)
'''

HELPERS = '''def clip(x, limit):
    if x > limit:
        return limit
    return x


def width(x, multiple):
    n = x.shape[0]
    if n % multiple:
        n += multiple - n % multiple
    return n
'''

TRAIN = '''import jax
import jax.numpy as jnp

from jaxpkg import clip
from . import helpers


@jax.jit
def train_step(params, batch):
    n = helpers.width(batch, 8)
    loss = jnp.sum(params * batch[:n])
    return clip(loss, 1.0)
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def jax_package(tmp_path: Path) -> Path:
    return write(tmp_path / "proj", {"jaxpkg/__init__.py": "from .helpers import clip\n",
                                      "jaxpkg/helpers.py": HELPERS, "jaxpkg/train.py": TRAIN})


def scan(paths, root: Path, **overrides):
    settings = Settings(root=root, jobs=1)
    for k, v in overrides.items():
        setattr(settings, k, v)
    files, _ = discover([Path(p) for p in paths], settings)
    return scan_files(files, settings)


def found(result) -> set[tuple[str, int, str]]:
    return {(f.path, f.span.start_line, f.rule_id) for f in result.findings if not f.suppressed}


def run_cli(cwd: Path, *args: str):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["scan", *args, "--no-cache", "--format", "json", "--exit-zero", "--no-progress"])
    finally:
        os.chdir(old)


# ---- names -----------------------------------------------------------------------------------

def test_relative_imports_resolve_against_the_module_name():
    assert resolve_relative("pkg.sub.train", False, 1, "helpers") == "pkg.sub.helpers"
    assert resolve_relative("pkg.sub.train", False, 2, "ops") == "pkg.ops"
    assert resolve_relative("pkg.sub", True, 1, None) == "pkg.sub"
    import ast

    table = ImportTable(ast.parse("from . import helpers\nfrom ..core import clip as c\nimport jax.numpy as jnp\n"), "pkg.sub.train")
    assert table.expand("helpers.width") == "pkg.sub.helpers.width"
    assert table.expand("c") == "pkg.core.clip"
    assert table.expand("jnp.sum") == "jax.numpy.sum"


def test_one_reader_of_imports_statements_and_bytes():
    import ast

    from portlint.frontends.python.names import bindings, modules_on_import_lines

    (imp,) = ast.parse("import torch.cuda.nccl, jax.numpy as jnp\n").body
    assert [(b.local, b.qualified, b.module, b.member) for b in bindings(imp)] == [
        ("torch", "torch", "torch.cuda.nccl", None), ("jnp", "jax.numpy", "jax.numpy", None)]
    (rel,) = ast.parse("from .pynccl import PyNcclCommunicator as Comm\n").body
    assert [(b.local, b.qualified, b.module, b.member, b.level) for b in bindings(rel, "pkg.dist.comm")] == [
        ("Comm", "pkg.dist.pynccl.PyNcclCommunicator", "pynccl", "PyNcclCommunicator", 1)]
    (star,) = ast.parse("from jax.numpy import *\n").body
    assert [(b.local, b.qualified, b.member) for b in bindings(star)] == [("*", "jax.numpy", "*")]
    assert bindings(ast.parse("x = 1\n").body[0]) == []
    data = b"import os, sys\n  from torch_neuronx.xla_impl import trace\n'''\nimport lightning_habana\n'''\nimportant = 1\n"
    assert modules_on_import_lines(data) == {"os", "torch_neuronx.xla_impl", "lightning_habana"}


def test_module_names_follow_the_init_chain():
    inits = {"src/pkg", "src/pkg/sub"}
    assert module_name_of("src/pkg/sub/train.py", inits.__contains__) == ("pkg.sub.train", False)
    assert module_name_of("src/pkg/__init__.py", inits.__contains__) == ("pkg", True)
    assert module_name_of("scripts/run.py", inits.__contains__) == ("run", False)
    assert module_name_of("run.py", inits.__contains__) == ("run", False)


# ---- reachability ------------------------------------------------------------------------------

def test_a_helper_in_another_file_is_reached_from_the_jitted_step(tmp_path):
    root = jax_package(tmp_path)
    model = ProjectModel.for_scan(Settings(root=root), [root])
    reached = model.reached_in("jaxpkg/helpers.py")
    assert set(reached) == {"clip", "width"}
    assert reached["clip"].entry == "train_step" and reached["clip"].file == "jaxpkg/train.py"
    assert reached["width"].static == ("multiple",)  # 8 at the only call: static
    result = scan([root], root)
    assert found(result) == {("jaxpkg/helpers.py", 2, "PTL801")}
    (finding,) = result.findings
    assert "reached from `train_step` in jaxpkg/train.py" in finding.message


def test_an_unreached_helper_and_shape_arithmetic_stay_quiet(tmp_path):
    root = write(tmp_path / "proj", {"jaxpkg/__init__.py": "", "jaxpkg/helpers.py": HELPERS,
                                     "jaxpkg/train.py": TRAIN.replace("    return clip(loss, 1.0)\n", "    return loss\n").replace("from jaxpkg import clip\n", "")})
    assert found(scan([root], root)) == set()


def test_submodules_and_super_calls_are_followed(tmp_path):
    root = write(tmp_path / "proj", {
        "m/__init__.py": "",
        "m/blocks.py": "class Base:\n    def norm(self, x):\n        if x > 0:\n            return x\n        return -x\n\n\n"
                       "class Block(Base):\n    def forward(self, x):\n        return super().norm(x)\n",
        "m/model.py": "import flax.linen as nn\nfrom m.blocks import Block\n\n\nclass Net(nn.Module):\n"
                      "    def setup(self):\n        self.block = Block()\n\n    def __call__(self, x):\n        return self.block(x)\n",
    })
    model = ProjectModel.for_scan(Settings(root=root), [root])
    assert set(model.reached_in("m/blocks.py")) == {"Block.forward", "Base.norm"}


# ---- scope ---------------------------------------------------------------------------------------

def test_declared_target_reports_a_cuda_only_script_and_inferred_scope_does_not(tmp_path):
    """The issue's 'done when': `portlint scan src/ --target trainium` on a CUDA-only torch
    training script reports its host syncs, data-dependent branches, dynamic shapes, "cuda"
    devices and backend="nccl"; without --target, in a GPU-only package, none of them."""
    project = write(tmp_path / "gpu_only", {"src/train.py": CUDA_TRAIN})
    declared = run_cli(project, "src/", "--target", "trainium")
    assert declared.exit_code == 0, declared.output
    import json

    rules = {(f["rule"], f["start_line"]) for f in json.loads(declared.output)["findings"]}
    assert {("PTL504", 7), ("PTL901", 8), ("PTL901", 16), ("PTL801", 17), ("PTL804", 19), ("PTL803", 22)} <= rules
    assert all(set(f["targets"]) == {"trainium"} for f in json.loads(declared.output)["findings"])
    inferred = run_cli(project, "src/")
    assert inferred.exit_code == 0, inferred.output
    assert json.loads(inferred.output)["findings"] == []


def test_a_package_importing_habana_anywhere_puts_its_torch_code_in_scope(tmp_path):
    train = "def train(model, loader, optimizer):\n    model.cuda()\n    for b in loader:\n        loss = model(b)\n        loss.backward()\n        optimizer.step()\n        print(loss.item())\n"
    gaudi = write(tmp_path / "g", {"gpkg/__init__.py": "", "gpkg/model.py": "import torch\n\n\n" + train,
                                   "gpkg/hpu_backend.py": "import habana_frameworks.torch.core as htcore\n"})
    assert {(r, line) for _, line, r in found(scan([gaudi], gaudi))} == {("PTL901", 5), ("PTL803", 10)}
    gpu = write(tmp_path / "c", {"cpkg/__init__.py": "", "cpkg/model.py": "import torch\n\n\n" + train})
    assert found(scan([gpu], gpu)) == set()
    deps = write(tmp_path / "d", {"requirements.txt": "torch>=2\noptimum-habana==1.14  # Gaudi\n",
                                  "dpkg/__init__.py": "", "dpkg/model.py": "import torch\n\n\n" + train})
    assert {r for _, _, r in found(scan([deps], deps))} == {"PTL901", "PTL803"}


# ---- caching and the one-file call ------------------------------------------------------------------

def test_one_file_call_sees_the_project_model(tmp_path):
    root = jax_package(tmp_path)
    (root / ".git").mkdir()  # the repository root is found above the file
    result = run_cli(root / "jaxpkg", "helpers.py")
    import json

    findings = json.loads(result.output)["findings"]
    assert [(f["rule"], f["start_line"]) for f in findings] == [("PTL801", 2)]
    assert "reached from `train_step` in jaxpkg/train.py" in findings[0]["message"]


def test_warm_cache_is_not_stale_when_another_file_changes_what_reaches_a_helper(tmp_path):
    root = jax_package(tmp_path)
    cache = tmp_path / "cache"
    first = scan([root], root, cache_dir=cache)
    assert ("jaxpkg/helpers.py", 2, "PTL801") in found(first)
    (root / "jaxpkg/train.py").write_text(TRAIN.replace("    return clip(loss, 1.0)\n", "    return loss\n"))
    second = scan([root], root, cache_dir=cache)
    assert found(second) == set()  # helpers.py is unchanged, but nothing reaches clip any more
    (root / "jaxpkg/train.py").write_text(TRAIN)
    assert found(scan([root], root, cache_dir=cache)) == found(first)


def test_a_rebuild_in_a_new_process_parses_only_the_files_that_changed(tmp_path, monkeypatch):
    """The summaries live under the cache dir (one entry for the root) by content: a model
    rebuilt after an edit, with nothing in this process's memory, parses only the edited
    file; a summary stored for other bytes is never taken for the new ones."""
    from portlint.index import project

    def fresh_process():
        monkeypatch.setattr(project, "_SUMMARIES", {})
        monkeypatch.setattr(project, "_MEMORY", project._Memory())

    root = jax_package(tmp_path)
    settings = Settings(root=root, cache_dir=tmp_path / "cache")
    paths = sorted(root.rglob("*.py"))
    fresh_process()  # an earlier test may have built the model of these very bytes
    first = ProjectModel.for_scan(settings, paths)
    assert set(first.trees) == {"jaxpkg/__init__.py", "jaxpkg/helpers.py", "jaxpkg/train.py"}  # cold: all parsed
    # an edit that changes what the model knows of train.py (a new callee): rebuilt, not reused
    (root / "jaxpkg/train.py").write_text(TRAIN.replace("return clip(loss, 1.0)", "return clip(jnp.abs(loss), 1.0)"))
    fresh_process()
    second = ProjectModel.for_scan(settings, paths)
    assert "reused" not in second.stats and "cached" not in second.stats
    assert set(second.trees) == {"jaxpkg/train.py"}
    assert set(second.reached_in("jaxpkg/helpers.py")) == {"clip", "width"}
    fresh_process()
    third = ProjectModel.for_scan(settings, paths)  # the same bytes again: the whole model is cached
    assert third.trees == {} and third.stats.get("cached") == 1
    assert set(third.reached_in("jaxpkg/helpers.py")) == {"clip", "width"}


def test_one_file_call_with_a_warm_model_parses_only_the_edited_file(tmp_path, monkeypatch):
    """A median-size file among a few hundred others, edited before a commit: the one-file
    call takes the model from the cache and parses that file alone (the work, not the clock,
    is asserted here; its time is bench/'s business)."""
    from portlint.index.project import ProjectModel

    files = {f"big/pkg/m{i}.py": f"import torch\n\n\ndef f{i}(x):\n    return x * {i}\n" * 40 for i in range(300)}
    root = write(tmp_path / "repo", {**files, "big/pkg/__init__.py": "", "big/pkg/train.py": TRAIN})
    (root / ".git").mkdir()
    settings = Settings(root=root, jobs=1, cache_dir=tmp_path / "cache")
    target = root / "big/pkg/m7.py"
    scan_files(discover([target], settings)[0], settings)  # cold: builds and stores the model
    target.write_text(target.read_text() + "\n")  # the file edited, as before a commit
    built = []
    real = ProjectModel.for_scan.__func__

    def spy(cls, *args, **kwargs):
        built.append(real(cls, *args, **kwargs))
        return built[-1]

    monkeypatch.setattr(ProjectModel, "for_scan", classmethod(spy))
    scan_files(discover([target], settings)[0], settings)
    (model,) = built
    assert set(model.trees) <= {"big/pkg/m7.py"}, sorted(model.trees)[:5]
    assert "reused" in model.stats or "cached" in model.stats, model.stats


@pytest.mark.oracle
def test_jax_agrees_the_cross_file_helper_raises_and_the_shape_helper_does_not(tmp_path):
    """The oracle: importing the package and running the jitted step raises in `clip`
    (reached across files, flagged) and not in `width` (shape arithmetic, quiet)."""
    import importlib
    import sys

    import pytest
    from conftest import require_module

    jax = require_module("jax")
    root = jax_package(tmp_path)
    sys.path.insert(0, str(root))
    try:
        train = importlib.import_module("jaxpkg.train")
        x = jax.numpy.ones(16)
        with pytest.raises(jax.errors.TracerBoolConversionError) as info:
            train.train_step(x, x)
        assert "helpers.py" in "".join(str(f.filename) for f in __import__("traceback").extract_tb(info.tb))
        helpers = importlib.import_module("jaxpkg.helpers")
        assert jax.jit(lambda b: b[: helpers.width(b, 8)])(x).shape == (16,)
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "jaxpkg" or n.startswith("jaxpkg.")]:
            del sys.modules[name]
    assert found(scan([root], root)) == {("jaxpkg/helpers.py", 2, "PTL801")}


def test_a_failing_project_model_is_a_notice_and_files_are_still_scanned(tmp_path, monkeypatch):
    from portlint.index import project

    def broken(cls, settings, paths):
        raise ValueError("boom")

    monkeypatch.setattr(project.ProjectModel, "for_scan", classmethod(broken))
    root = write(tmp_path / "p", {"step.py": "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"})
    result = scan([root], root)
    assert found(result) == {("step.py", 6, "PTL801")}
    assert [n.level for n in result.notices if "project model" in n.message] == ["error"]


def test_a_function_reached_back_through_another_file_is_traced(tmp_path):
    root = write(tmp_path / "p", {
        "k/__init__.py": "",
        "k/step.py": "import jax\nfrom k import util\n\n\n@jax.jit\ndef step(x):\n    return util.apply(x)\n\n\n"
                     "def local_rule(x):\n    if x > 0:\n        return x\n    return -x\n",
        "k/util.py": "from k.step import local_rule\n\n\ndef apply(x):\n    return local_rule(x)\n",
    })
    model = ProjectModel.for_scan(Settings(root=root), [root])
    assert set(model.reached_in("k/step.py")) == {"local_rule"}
    assert found(scan([root], root)) == {("k/step.py", 11, "PTL801")}
