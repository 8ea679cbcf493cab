"""PTL055 checked against pip's own resolution: `pip install --dry-run --report` resolves a
requirement against the package registry (metadata only, nothing installed) and lists every
wheel it would install. The CUDA extra of JAX pulls NVIDIA's CUDA library wheels, each of which
rules/build/dependencies.toml must recognise (so the table cannot silently miss one of them),
while the TPU counterpart the table names resolves to the TPU runtime and no CUDA wheel."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest

from portlint.frontends.buildfiles import requirements
from portlint.frontends.buildfiles.tables import dependency_for

pytestmark = pytest.mark.oracle


def pip_resolve(requirement: str, tmp_path) -> dict[str, str]:
    """name -> wheel file name of everything pip would install for `requirement` (a dry run)."""
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report), requirement],
        capture_output=True, text=True, timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(report.read_text(encoding="utf-8"))
    return {item["metadata"]["name"].lower().replace("_", "-"): item["download_info"]["url"].rsplit("/", 1)[-1]
            for item in data["install"]}


def _jax_pin() -> str:
    return metadata.version("jax")


def _cuda_built(name: str) -> bool:
    return name.startswith("nvidia-") or "cuda" in name


def test_ptl055_jax_cuda_extra_pulls_cuda_wheels_the_table_knows(tmp_path):
    requirement = f"jax[cuda12]=={_jax_pin()}"
    entry = dependency_for(requirements.forms(requirement))
    assert entry is not None and entry.targets["rocm"].status == "missing" and entry.targets["tpu"].status == "missing"
    resolved = pip_resolve(requirement, tmp_path)
    cuda = sorted(n for n in resolved if _cuda_built(n))
    assert any(n.startswith("nvidia-cublas") for n in cuda) and any(n.startswith("jax-cuda12") for n in cuda), resolved
    unknown = []
    for name in cuda:
        dep = dependency_for(requirements.forms(name))
        if dep is None or any(dep.targets[t].status not in ("missing", "drop") for t in ("rocm", "tpu")):
            unknown.append(name)
    assert not unknown, f"CUDA wheels pip installs for {requirement} that the table does not judge: {unknown}"


def test_ptl055_the_tpu_counterpart_resolves_to_the_tpu_runtime_without_cuda(tmp_path):
    requirement = f"jax[cuda12]=={_jax_pin()}"
    counterpart = dependency_for(requirements.forms(requirement)).targets["tpu"].counterpart
    assert counterpart == "`jax[tpu]`"
    resolved = pip_resolve(f"jax[tpu]=={_jax_pin()}", tmp_path)
    assert "libtpu" in resolved, resolved
    assert not [n for n in resolved if _cuda_built(n)], resolved
