"""PTL501 / PTL504 proven on a CPU-only torch (what TPU and Neuron hosts run): the "nccl"
backend cannot start there, while a backend the host has ("gloo" here, standing in for
"xla" / "hccl", which need their hardware) starts with the same single-rank store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import require_module, scan_paths

_INIT = textwrap.dedent(
    """
    import sys, tempfile, datetime
    import torch.distributed as dist
    backend = sys.argv[1]
    store = dist.FileStore(tempfile.mktemp(prefix="portlint-store-"), 1)
    try:
        dist.init_process_group(backend, store=store, rank=0, world_size=1, timeout=datetime.timedelta(seconds=20))
    except Exception as exc:
        print("FAILED", type(exc).__name__)
        sys.exit(3)
    import torch
    t = torch.ones(2)
    dist.all_reduce(t)
    print("OK", dist.get_backend(), t.tolist())
    dist.destroy_process_group()
    """
)


def _init(backend: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _INIT, backend], capture_output=True, text=True, timeout=120)


@pytest.mark.oracle
def test_ptl504_nccl_backend_cannot_start_without_nccl_but_gloo_can():
    torch = require_module("torch")
    import torch.distributed as dist

    if dist.is_nccl_available():
        pytest.skip("this torch ships NCCL; the claim is about hosts without it")
    failed = _init("nccl")
    assert failed.returncode == 3 and failed.stdout.startswith("FAILED"), failed.stdout + failed.stderr
    ok = _init("gloo")
    assert ok.returncode == 0 and ok.stdout.startswith("OK gloo [1.0, 1.0]"), ok.stdout + ok.stderr
    assert torch.distributed.is_gloo_available()


@pytest.mark.oracle
def test_ptl501_torch_cuda_nccl_has_nothing_to_run_on():
    torch = require_module("torch")
    if torch.cuda.is_available():
        pytest.skip("needs a host without CUDA")
    import torch.cuda.nccl as nccl

    with pytest.raises(Exception):
        nccl.all_reduce([torch.ones(2)])  # CPU tensors: NCCL only takes CUDA tensors


def _scan(tmp_path, text, name="t.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan_paths([path], root=tmp_path, select=("PTL501", "PTL504"))


def test_backend_fix_adds_the_registering_import_once(tmp_path):
    from portlint.output.fixes import fixed_text

    src = """
    import torch.distributed as dist
    import habana_frameworks.torch.core as htcore
    dist.init_process_group("nccl")
    sub = dist.new_group([0, 1], backend='nccl')
    """
    result = _scan(tmp_path, src)
    assert [f.rule_id for f in result.findings] == ["PTL504", "PTL504"]
    assert all(set(f.targets) == {"gaudi"} for f in result.findings)
    new, n = fixed_text(textwrap.dedent(src), result.findings, include_unsafe=True)
    assert n == 2
    assert new.count("import habana_frameworks.torch.distributed.hccl\n") == 1
    assert 'init_process_group("hccl")' in new and "backend='hccl'" in new


def test_plain_gpu_code_and_comparisons_stay_quiet(tmp_path):
    gpu = """
    import torch.distributed as dist
    dist.init_process_group(backend="nccl")
    from torch.cuda import nccl
    """
    assert not _scan(tmp_path, gpu, "gpu.py").findings
    xla = """
    import torch_xla
    import torch.distributed as dist
    if dist.get_backend() == "nccl":
        pass
    import neuronxcc.nki.nccl as nki_collectives
    """
    assert not _scan(tmp_path, xla, "xla.py").findings
