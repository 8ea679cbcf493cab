"""rules/vocabulary/python_returns.json: torch's and jax's declared return kinds, as the
value model reads them (scripts/derive_python_returns.py writes the file)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_module

from portlint.frontends.python.returns import library_returns

ROOT = Path(__file__).resolve().parent.parent


def test_the_file_records_its_sources_and_versions():
    data = library_returns()
    assert set(data.versions) == {"torch", "jax"}
    assert all(v for v in data.versions.values())


def test_declared_kinds_the_value_model_relies_on():
    data = library_returns()
    # tensors by torch's _VariableFunctions.pyi and jax's annotations
    assert data.kind("torch.zeros") == "tensor" and data.kind("torch.nn.functional.softmax") == "tensor"
    assert data.kind("jax.numpy.full") == "tensor" and data.kind("jax.experimental.pallas.program_id") == "tensor"
    # Python values
    assert data.kind("jax.numpy.shape") == "python" and data.kind("jax.process_index") == "python"
    assert data.kind("torch.numel") == "python"
    # TensorBase: metadata methods and properties are Python, value reads are not metadata
    assert data.metadata_method("numel") and data.metadata_method("stride") and data.metadata_method("is_contiguous")
    assert not data.metadata_method("item") and not data.metadata_method("sum")
    assert data.metadata_attribute("shape") and data.tensor_attribute("grad")
    # host values: a hand-kept table, each with its reason in the file
    assert data.kind("torch.from_numpy") == "host"
    assert data.tensor_methods["numpy"] == "host"
    # factories: a device parameter and no tensor to take the device from
    assert "torch.tensor" in data.factories and "torch.randint" in data.factories


def test_module_hyperparameters_from_torch_nn_class_annotations():
    data = library_returns()
    # `kernel_size: tuple[int, ...]` (conv) and `_size_2_t` (pooling, through common_types)
    assert data.module_attributes["kernel_size"] == "python" and data.module_attributes["stride"] == "python"
    assert data.module_hyperparameter("in_features") and data.module_hyperparameter("in_channels")
    # parameters and buffers are not hyperparameters; neither is a name a tensor answers to
    assert not data.module_hyperparameter("weight") and not data.module_hyperparameter("weight_ih")
    assert data.module_attributes["dim"] == "python" and not data.module_hyperparameter("dim")
    assert "torch.zeros_like" not in data.factories
    assert data.kind("no.such.function") == "unknown"


@pytest.mark.oracle
def test_derive_check_reproduces_the_committed_file():
    require_module("torch")
    require_module("jax")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "derive_python_returns.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
