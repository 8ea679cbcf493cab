"""What torch and JAX callables return, by the libraries' own declarations
(rules/vocabulary/python_returns.json, written by scripts/derive_python_returns.py from
torch's type stubs and jax's annotations), read once per process.

Kinds: "tensor" (a device tensor / array, or a tuple of them), "host" (a host array),
"python" (Python values: ints, bools, sizes, dtypes, devices, None), "unknown"."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from portlint.core.catalog import rules_root

# Python-valued tensor methods that read the tensor's values (a host sync, reported as one by
# PTL803 / PTL801 themselves): their result is Python, but the call is not metadata
VALUE_READS = frozenset({"item", "tolist", "allclose", "equal", "is_nonzero", "is_set_to", "record_stream", "retain_grad"})


@dataclass(frozen=True)
class Returns:
    versions: dict
    callables: dict  # canonical name -> kind
    factories: frozenset  # callables with a `device` parameter that make a new tensor
    tensor_methods: dict  # method name -> kind
    tensor_attributes: dict  # property name -> kind
    host_moves: frozenset  # "torch.from_numpy", "Tensor.cpu": values in host memory
    module_attributes: dict  # torch.nn module attribute (`kernel_size`, `in_features`) -> kind

    def kind(self, name: str | None) -> str:
        if not name:
            return "unknown"
        if name in self.host_moves:
            return "host"
        return self.callables.get(name, "unknown")

    def metadata_method(self, attr: str) -> bool:
        """A tensor method whose declared result is a Python value computed from the
        tensor's metadata (`numel`, `dim`, `stride`, `is_contiguous`), not its values."""
        return self.tensor_methods.get(attr) == "python" and attr not in VALUE_READS

    def metadata_attribute(self, attr: str) -> bool:
        return self.tensor_attributes.get(attr) == "python"

    def tensor_attribute(self, attr: str) -> bool:
        return self.tensor_attributes.get(attr) == "tensor"

    def module_hyperparameter(self, attr: str) -> bool:
        """An attribute torch.nn's module classes declare a Python value (`kernel_size:
        tuple[int, ...]`, `in_features: int`, `p: float`): a constructor's hyperparameter,
        not a parameter or buffer, and not a name a tensor answers to."""
        return self.module_attributes.get(attr) == "python" and not self.tensor_member(attr)

    def tensor_member(self, attr: str) -> bool:
        """A name a tensor answers to (method or property of `TensorBase`)."""
        return attr in self.tensor_methods or attr in self.tensor_attributes


@lru_cache(maxsize=1)
def library_returns() -> Returns:
    with open(rules_root() / "vocabulary" / "python_returns.json", encoding="utf-8") as fh:
        data = json.load(fh)
    return Returns(
        versions=dict(data["versions"]),
        callables=dict(data["callables"]),
        factories=frozenset(data["factories"]),
        tensor_methods=dict(data["tensor_methods"]),
        tensor_attributes=dict(data["tensor_attributes"]),
        host_moves=frozenset(data["host_moves"]),
        module_attributes=dict(data.get("module_attributes", {})),
    )
