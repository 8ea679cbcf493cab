"""Which language a file is, and for Python which frameworks it uses.

By extension first, then by content: a C/C++ file counts as CUDA when it holds device code
or CUDA API use; a Python file is tagged by what it imports, so that rule families run
only where they apply."""

from __future__ import annotations

import re
from pathlib import PurePath

from portlint.discovery.build_kinds import build_kind, is_build_name

from portlint.core.suffixes import CUDA_SOURCES as CUDA_EXTENSIONS
from portlint.core.suffixes import CXX_SOURCES as CXX_EXTENSIONS
from portlint.core.suffixes import PTX_SOURCES as PTX_EXTENSIONS
from portlint.core.suffixes import PYTHON_SOURCES as PYTHON_EXTENSIONS

# Content that makes a C/C++ file worth the CUDA rules: device code, CUDA/NCCL API use,
# inline asm, or CUDA headers. Matched on bytes, before any parse, and only ever asked
# whether it matches. Written so that every alternative starts with a literal byte: the
# regex engine then skips to the bytes that can start a match instead of trying each
# alternative at every offset (ten times faster on headers with no CUDA in them). A word
# boundary before a word byte `x` is written `x(?<!\wx)`: the byte before `x` is no word
# byte (or there is none), which is what `\bx` means.
_CUDA_CONTENT = re.compile(
    rb"__(?:global__|device__|shared__|constant__|asm__|shfl|ballot)"
    # cuda*, cuXxx(, the CUDA libraries, cub::, cute::, cutlass::
    rb"|c(?<!\wc)u(?:da[A-Z_]|[A-Z]\w+\(|blas|dnn|fft|rand|sparse|solver|b::|te::|tlass::)"
    rb"|n(?<!\wn)(?:ccl[A-Z]|vrtc|vtx|vml|vshmem)"
    rb"|a(?<!\wa)sm\s*(?:volatile\s*)?\("
    rb"|t(?<!\wt)hrust::|threadIdx|CUtensorMap|w(?<!\ww)arpSize\b"
    # CUTLASS/CuTe headers: their device-code markers and includes
    rb"|C(?<!\wC)UT(?:E|LASS)_(?:HOST_)?DEVICE\b|#\s*include\s*[<\"]cu(?:da|te/|tlass/)"
)

# Python: framework tags from imports. Keys are tags the rule families ask for; values are
# the top modules (a module or anything under it) whose import sets the tag.
_PY_IMPORTS = {
    "triton": ("triton",),
    "jax": ("jax", "flax", "optax", "equinox", "haiku"),
    "torch_xla": ("torch_xla", "torch_neuronx", "neuronx_distributed", "neuronxcc", "libneuronxla"),
    "gaudi": ("habana_frameworks", "optimum.habana"),
    "torch": ("torch",),
    "nki": ("neuronxcc.nki", "nki"),
}
# Device strings that mark a file as targeting a non-NVIDIA accelerator even without imports,
# each with the words one of which any match contains (a cheap test before the regex).
_PY_DEVICE_HINTS = {
    "gaudi": ((b"hpu", b"htcore"), re.compile(rb"[\"']hpu[\"']|\bhtcore\b")),
    "torch_xla": ((b"xla",), re.compile(rb"[\"']xla[\"']|\bxm\.xla_device\b")),
}


def classify(path: str | PurePath, head: bytes) -> tuple[str | None, frozenset[str]]:
    """Return (language, tags). language is "cuda", "python", "ptx", "build" or None (skip).
    A build file (CMake, Makefile, Dockerfile, requirements, pyproject.toml, setup.cfg, a
    shell script calling nvcc) is tagged with its kind (portlint.discovery.build_kinds)."""
    suffix = PurePath(path).suffix.lower()
    kind = build_kind(path, head)
    if kind is not None:
        return "build", frozenset({kind})
    if suffix in CUDA_EXTENSIONS:
        return "cuda", frozenset({"cuda"})
    if suffix in CXX_EXTENSIONS:
        if _CUDA_CONTENT.search(head):
            return "cuda", frozenset({"cxx"})
        return None, frozenset()
    if suffix in PYTHON_EXTENSIONS:
        return "python", python_tags(head)
    if suffix in PTX_EXTENSIONS:
        return "ptx", frozenset()
    return None, frozenset()


# the most dotted parts a module of _PY_IMPORTS has (`optimum.habana`: 2)
_PY_IMPORT_DEPTH = max(root.count(".") + 1 for roots in _PY_IMPORTS.values() for root in roots)


def python_tags(data: bytes) -> frozenset[str]:
    from portlint.frontends.python.names import modules_on_import_lines

    # one pass over the file for every tag; a module names a root when the root is one of
    # its dotted prefixes (`torch.nn` names `torch`), so the prefixes are matched as a set
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 BOM: line 1 starts after it (as Python reads it)
        data = data[3:]
    heads: set[str] = set()
    for module in modules_on_import_lines(data):
        parts = module.split(".", _PY_IMPORT_DEPTH)
        heads.update(".".join(parts[:i]) for i in range(1, min(len(parts), _PY_IMPORT_DEPTH) + 1))
    tags = {tag for tag, roots in _PY_IMPORTS.items() if not heads.isdisjoint(roots)}
    for tag, (needles, rx) in _PY_DEVICE_HINTS.items():
        if any(n in data for n in needles) and rx.search(data):
            tags.add(tag)
    return frozenset(tags)


def is_source_candidate(path: str | PurePath) -> bool:
    suffix = (path if isinstance(path, PurePath) else PurePath(path)).suffix.lower()  # a walk's Path is not parsed again
    return (suffix in CUDA_EXTENSIONS or suffix in CXX_EXTENSIONS or suffix in PYTHON_EXTENSIONS
            or suffix in PTX_EXTENSIONS or is_build_name(path))
