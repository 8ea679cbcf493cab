"""Derive rules/vocabulary/python_returns.json: what the public torch and JAX callables return,
read from the libraries' own declarations, for the Python value model
(portlint/analyses/python/traced_values.py).

Sources (read with `ast`; neither library is imported, only located and asked its version
from its installed metadata):
- torch: `torch/_C/_VariableFunctions.pyi` (the `torch.*` functions), `torch/_C/__init__.pyi`
  class `TensorBase` (tensor methods and properties), `torch/nn/functional.pyi`;
- jax: the public modules `jax`, `jax.numpy` (its `__init__.pyi`), `jax.lax`, `jax.random`,
  `jax.nn`, `jax.experimental.pallas`: each `from jax._src.X import f as g` is followed to
  the `def f` of the source file and its return annotation read.

Each declared return annotation is classified by the names it mentions:
- "tensor": a torch `Tensor` / jax `Array` (alone, optional, or a tuple/list/named tuple of them);
- "host": a host array (`numpy.ndarray`);
- "python": Python values only (`int`, `bool`, `float`, `Size`, dtypes, devices, `None`...);
- "unknown": anything else, or overloads that disagree (tensor in one, Python in another).
A callable with a `device` parameter that returns a tensor is recorded in `factories`: it
makes its tensor on the host when no device is given (torch's default device is the CPU).
A short table of `host_moves` (a stub says `Tensor`, but the value lives on the host) is
written here by hand, each with its reason, and kept apart from the derived data.

Usage: python scripts/derive_python_returns.py [--check] [--out PATH]
`--check` exits 1 when the committed file differs from what the installed libraries give.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "rules" / "vocabulary" / "python_returns.json"

TENSOR_NAMES = {"Tensor", "Array", "Self", "S", "Sequence", "tuple", "list", "Tuple", "List", "Union", "Optional", "NamedTuple"}
PYTHON_NAMES = {
    "_int", "_bool", "_float", "_complex", "int", "bool", "float", "complex", "str", "bytes", "Number",
    "Size", "_size", "_dtype", "DType", "dtype", "Device", "_device", "_qscheme", "None", "builtins",
    "SymInt", "_layout", "Sharding", "NamedSharding", "PartitionSpec", "DimSize", "Shape",
}
HOST_NAMES = {"numpy", "ndarray", "np", "_np"}
# container words carry no kind by themselves
CONTAINERS = {"tuple", "list", "Tuple", "List", "Sequence", "Union", "Optional", "builtins", "dict", "Dict"}

# a stub says Tensor, but the value lives in host memory: hand-written, each with its reason
HOST_MOVES = {
    "torch.from_numpy": "shares the memory of a numpy array: a CPU tensor",
    "torch.frombuffer": "wraps a Python buffer: a CPU tensor",
    "Tensor.cpu": "a copy in host memory (the copy itself is a device sync when the tensor is on the device)",
    "Tensor.pin_memory": "a page-locked host copy",
    "Tensor.numpy": "a numpy array in host memory",
    "Tensor.tolist": "Python lists of Python numbers",
    "Tensor.item": "a Python number",
}

JAX_MODULES = ("jax", "jax.numpy", "jax.lax", "jax.random", "jax.nn", "jax.experimental.pallas")


def _names(annotation: ast.AST) -> set[str]:
    out: set[str] = set()
    for n in ast.walk(annotation):
        if isinstance(n, ast.Attribute) or any(n is a.value for a in ast.walk(annotation) if isinstance(a, ast.Attribute)):
            if isinstance(n, ast.Attribute):
                out.add(n.attr)  # `jax_typing.Array`, `numpy.ndarray`: the type is the last name
            continue
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Constant):
            if n.value is None:
                out.add("None")
            elif isinstance(n.value, str):  # a string annotation
                try:
                    out |= _names(ast.parse(n.value, mode="eval").body)
                except SyntaxError:
                    out.add("?")
    return out


def classify(annotation: ast.AST | None, aliases: dict[str, str] | None = None) -> str:
    if annotation is None:
        return "unknown"
    text = ast.unparse(annotation)
    if isinstance(annotation, ast.Subscript) and (text.startswith(("Literal[", "typing.Literal[", "Final[", "typing.Final["))):
        return "python" if text.startswith(("Literal", "typing.Literal")) else classify(annotation.slice, aliases)
    if text.startswith("torch.return_types."):
        return "tensor"  # named tuples of tensors (values, indices)
    names = _names(annotation) - CONTAINERS
    if "return_types" in names:
        return "tensor"
    if names & HOST_NAMES and not names & {"Tensor", "Array"}:
        return "host"
    kinds = set()
    for name in names:
        if name in ("Tensor", "Array", "Self", "S"):
            kinds.add("tensor")
        elif name == "None":
            continue
        elif name in PYTHON_NAMES:
            kinds.add("python")
        elif aliases and name in aliases:
            kinds.add(aliases[name])
        elif name in ("torch", "_core", "jax"):
            continue
        else:
            kinds.add("unknown")
    if not kinds:
        return "python" if "None" in names else "unknown"
    return kinds.pop() if len(kinds) == 1 else "unknown"


def _merge(a: str | None, b: str) -> str:
    return b if a is None or a == b else "unknown"


def _has_device_param(fn: ast.FunctionDef) -> bool:
    """A factory: a `device` parameter, and a first positional that is not a tensor (the
    `*_like` functions take the device of their tensor argument when no device is given)."""
    args = fn.args
    if not any(a.arg == "device" for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
        return False
    first = [*args.posonlyargs, *args.args][:1]
    return not (first and first[0].annotation is not None and classify(first[0].annotation) == "tensor")


def _defs(body) -> list[ast.FunctionDef]:
    return [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _is_property(fn: ast.FunctionDef) -> bool:
    return any((isinstance(d, ast.Name) and d.id == "property") for d in fn.decorator_list)


def _setter(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in fn.decorator_list)


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"derive_python_returns: {name} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def _last(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _torch_size_aliases(path: Path) -> dict[str, str]:
    """torch.nn.common_types: `_size_2_t = _scalar_or_tuple_2_t[int]` (an int or a tuple of
    ints) -> the kind of the type the generic alias is applied to."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for n in ast.parse(path.read_text()).body:
        target = n.target if isinstance(n, ast.AnnAssign) else n.targets[0] if isinstance(n, ast.Assign) and len(n.targets) == 1 else None
        if isinstance(target, ast.Name) and isinstance(n.value, ast.Subscript) and isinstance(n.value.value, ast.Name) \
                and n.value.value.id.startswith("_scalar_or_tuple"):
            out[target.id] = classify(n.value.slice)
    return out


def derive_torch(out: dict) -> None:
    base = package_dir("torch")
    callables, factories, methods, attributes = out["callables"], out["factories"], out["tensor_methods"], out["tensor_attributes"]
    for rel, prefix in (("_C/_VariableFunctions.pyi", "torch."), ("nn/functional.pyi", "torch.nn.functional.")):
        tree = ast.parse((base / rel).read_text())
        kinds: dict[str, str] = {}
        device: set[str] = set()
        for fn in _defs(tree.body):
            if fn.name.startswith("__"):
                continue  # private ops are kept: code calls them (`torch._nested_tensor_from_mask_left_aligned`)
            kinds[fn.name] = _merge(kinds.get(fn.name), classify(fn.returns))
            if _has_device_param(fn):
                device.add(fn.name)
        for name, kind in kinds.items():
            callables[prefix + name] = kind
            if kind == "tensor" and name in device:
                factories.append(prefix + name)
        out["sources"].append(f"torch/{rel}")
    tree = ast.parse((base / "_C/__init__.pyi").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")
    for fn in _defs(cls.body):
        if fn.name.startswith("__") or _setter(fn):
            continue
        table = attributes if _is_property(fn) else methods
        table[fn.name] = _merge(table.get(fn.name), classify(fn.returns))
    # class-level annotations of TensorBase (`requires_grad: _bool`, `shape: Size`...)
    for n in cls.body:
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and not n.target.id.startswith("__"):
            attributes[n.target.id] = _merge(attributes.get(n.target.id), classify(n.annotation))
    out["sources"].append("torch/_C/__init__.pyi (class TensorBase)")
    # class-level annotations of torch.nn's module classes (`kernel_size: tuple[int, ...]`,
    # `in_features: int`, `weight: Tensor`): the constructor's hyperparameters, kept as Python
    # values on the module, and its parameters and buffers
    module_attrs = out["module_attributes"]
    aliases = _torch_size_aliases(base / "nn" / "common_types.py")
    classes: dict[str, ast.ClassDef] = {}
    for path in sorted((base / "nn" / "modules").glob("*.py")):
        for cls in ast.parse(path.read_text()).body:
            if isinstance(cls, ast.ClassDef):
                classes.setdefault(cls.name, cls)

    def is_module(name: str, depth: int = 0) -> bool:  # a subclass of nn.Module, by the bases' names
        cls = classes.get(name)
        if name == "Module" or cls is None or depth > 12:
            return name == "Module"
        return any(is_module((_last(b) or ""), depth + 1) for b in cls.bases)

    for name, cls in classes.items():
        if not is_module(name):
            continue
        for n in cls.body:
            if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and not n.target.id.startswith("_"):
                module_attrs[n.target.id] = _merge(module_attrs.get(n.target.id), classify(n.annotation, aliases))
    out["sources"].append("torch/nn/modules/*.py (class annotations of the module classes)")
    out["versions"]["torch"] = importlib.metadata.version("torch")


def _module_file(dotted: str) -> Path | None:
    parts = dotted.split(".")
    base = package_dir(parts[0]).parent
    path = base.joinpath(*parts)
    for cand in (path / "__init__.pyi", path / "__init__.py", path.with_suffix(".pyi"), path.with_suffix(".py")):
        if cand.is_file():
            return cand
    return None


class _JaxReader:
    def __init__(self) -> None:
        self.trees: dict[str, ast.Module | None] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self.trees:
            path = _module_file(module)
            self.trees[module] = ast.parse(path.read_text()) if path is not None else None
        return self.trees[module]

    def lookup(self, module: str, name: str, depth: int = 0) -> ast.FunctionDef | None:
        """The `def` that `module.name` is, following `from X import f as name` re-exports."""
        tree = self.tree(module)
        if tree is None or depth > 4:
            return None
        found = None
        for n in tree.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
                found = n  # the last overload or definition wins; overloads merged by the caller
        if found is not None:
            return found
        for n in tree.body:
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                for a in n.names:
                    if (a.asname or a.name) == name:
                        return self.lookup(n.module, a.name, depth + 1)
        return None

    def overloads(self, module: str, name: str) -> list[ast.FunctionDef]:
        tree = self.tree(module)
        if tree is None:
            return []
        own = [n for n in _defs(tree.body) if n.name == name]
        if own:
            return own
        fn = self.lookup(module, name)
        return [fn] if fn is not None else []

    def public_names(self, module: str) -> list[str]:
        tree = self.tree(module)
        out: list[str] = []
        if tree is None:
            return out
        for n in tree.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_"):
                out.append(n.name)
            elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0 and n.module.startswith("jax._src"):
                out += [a.asname or a.name for a in n.names if not (a.asname or a.name).startswith("_")]
        return sorted(set(out))


def derive_jax(out: dict) -> None:
    reader = _JaxReader()
    callables, factories = out["callables"], out["factories"]
    for module in JAX_MODULES:
        for name in reader.public_names(module):
            fns = reader.overloads(module, name)
            if not fns:
                continue
            kind = None
            for fn in fns:
                kind = _merge(kind, classify(fn.returns))
            callables[f"{module}.{name}"] = kind
            if kind == "tensor" and any(_has_device_param(fn) for fn in fns):
                factories.append(f"{module}.{name}")
        out["sources"].append(f"{module} (re-exports followed to jax/_src)")
    out["versions"]["jax"] = importlib.metadata.version("jax")


def derive() -> dict:
    out: dict = {
        "generated_by": "scripts/derive_python_returns.py",
        "versions": {},
        "sources": [],
        "kinds": {
            "tensor": "a torch Tensor / jax Array (or a tuple, list or named tuple of them)",
            "host": "a host array (numpy)",
            "python": "Python values only (int, bool, float, Size, dtype, device, None)",
            "unknown": "undeclared, another type, or overloads that disagree",
        },
        "callables": {},
        "factories": [],
        "tensor_methods": {},
        "tensor_attributes": {},
        "module_attributes": {},
        "host_moves": HOST_MOVES,
    }
    derive_torch(out)
    derive_jax(out)
    for key in ("callables", "tensor_methods", "tensor_attributes", "module_attributes"):
        out[key] = dict(sorted(out[key].items()))
    out["factories"] = sorted(set(out["factories"]))
    return out


def render(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing it")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    text = render(derive())
    if args.check:
        current = args.out.read_text() if args.out.is_file() else ""
        if current != text:
            print(f"{args.out} is stale: run scripts/derive_python_returns.py", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    data = json.loads(text)
    counts: dict[str, int] = {}
    for kind in data["callables"].values():
        counts[kind] = counts.get(kind, 0) + 1
    print(f"wrote {args.out}: {len(data['callables'])} callables {counts}, {len(data['factories'])} factories, "
          f"{len(data['tensor_methods'])} tensor methods, versions {data['versions']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
