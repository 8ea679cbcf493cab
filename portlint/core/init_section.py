"""`portlint init`: a commented `[tool.portlint]` section for the user to edit, with the
targets guessed from what the tree already imports and builds for.

The guess reads file names and bytes only (never imports or runs anything in the tree):
CUDA sources, HIP headers, Triton kernels and ROCm wheels point at rocm; JAX, Pallas and
libtpu at tpu; torch-neuronx, NKI and the Neuron compiler at trainium; habana_frameworks,
optimum-habana and the `hpu` device at gaudi. With no evidence for any target the section
keeps all four and says so."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from portlint.core.config import DEFAULT_VERSIONS
from portlint.core.model import TARGETS
from portlint.core.suffixes import NVCC_SOURCES

_PY_IMPORT = r"^[ \t]*(?:import|from)[ \t]+"
# (target, what it stands for, pattern over a file's text)
_EVIDENCE: tuple[tuple[str, str, re.Pattern[bytes]], ...] = (
    ("rocm", "HIP / ROCm", re.compile(rb"#\s*include\s*[<\"]hip/|__HIP_PLATFORM_AMD__|torch\.version\.hip|rocm/|--index-url[^\n]*rocm")),
    ("rocm", "Triton kernels", re.compile(rb"(?m)" + _PY_IMPORT.encode() + rb"triton\b")),
    ("tpu", "JAX", re.compile(rb"(?m)" + _PY_IMPORT.encode() + rb"jax\b|^jax\[tpu\]|\blibtpu\b|jax\.experimental\.pallas")),
    ("tpu", "torch_xla on TPU", re.compile(rb"PJRT_DEVICE\s*=\s*[\"']?TPU|xla_device\(\)[^\n]*tpu", re.I)),
    ("trainium", "Neuron SDK", re.compile(rb"(?m)" + _PY_IMPORT.encode() + rb"(?:torch_neuronx|neuronxcc|libneuronxla|neuronx_distributed)\b|^torch-neuronx|^neuronx-cc")),
    ("gaudi", "Intel Gaudi", re.compile(rb"(?m)" + _PY_IMPORT.encode() + rb"(?:habana_frameworks|optimum\.habana)\b|^optimum-habana|[\"']hpu[\"']")),
)


@dataclass
class Guess:
    evidence: dict[str, list[str]] = field(default_factory=dict)  # target -> "what (path)" lines

    def add(self, target: str, what: str, path: str) -> None:
        lines = self.evidence.setdefault(target, [])
        if len(lines) < 3 and not any(line.startswith(what + " ") for line in lines):
            lines.append(f"{what} ({path})")

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(t for t in TARGETS if t in self.evidence)


def guess_targets(files) -> Guess:
    """`files`: (display path, bytes) pairs, as discovery lists them."""
    guess = Guess()
    for path, data in files:
        if PurePosixPath(path).suffix.lower() in NVCC_SOURCES:
            guess.add("rocm", "CUDA sources", path)
        for target, what, pattern in _EVIDENCE:
            if pattern.search(data):
                guess.add(target, what, path)
    return guess


def section_text(guess: Guess, version: str) -> str:
    """The section, comments included; it loads as written (tests load it back)."""
    targets = guess.targets
    out = ["[tool.portlint]", f"# Written by `portlint init` (portlint {version}); edit it to suit the port."]
    if targets:
        out.append("# Targets guessed from what the tree imports and builds for:")
        for t in targets:
            out.append(f"#   {t}: " + "; ".join(guess.evidence[t]))
        out.append("# Add or remove targets as the port needs (rocm, tpu, trainium, gaudi).")
        out.append("targets = [" + ", ".join(f'"{t}"' for t in targets) + "]")
    else:
        # writing the list would declare all four (every torch file then counts as code for
        # them, as `targets` in config means): left commented, the scan stays inferred
        out.append("# Nothing in the tree names a target, so none is declared: every scan judges all four")
        out.append("# and infers from each file's imports where it runs. Declare those you port to:")
        out.append("# targets = [" + ", ".join(f'"{t}"' for t in TARGETS) + "]")
    out += [
        '# exclude = ["third_party/"]           # gitignore-style patterns, besides .gitignore',
        '# fail-on = "warning"                  # lowest severity that fails the exit code: error, warning, note',
        '# extend-select = ["hipify"]           # also list the CUDA API calls hipify renames (PTL601; apply: --fix --select hipify)',
        '# ignore = ["PTL109"]                  # rule ids, prefixes, names (inline-ptx-asm), families (cuda_warp), globs (PTL1*)',
        '# severity = { PTL110 = "note" }       # per rule, or per target: { PTL055 = { tpu = "note" } }',
        "",
        "# The releases verdicts are judged against (the defaults shown; see each rule's Versions).",
        "[tool.portlint.versions]",
    ]
    out += [f'# {stack} = "{value}"' for stack, value in DEFAULT_VERSIONS.items()]
    return "\n".join(out) + "\n"
