"""nvcc command-line flags in build text: NVIDIA architecture selections and nvcc-only
options, found token by token (the same test for CMake arguments, Makefile and shell lines,
Dockerfile ENV lines and Python string constants)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from portlint.frontends.buildfiles.tables import NvccFlag, nvcc_flag

# -gencode / --generate-code, arch=compute_XX,code=sm_XX, -arch=sm_XX, --gpu-architecture=...,
# -code=sm_XX, and the bare sm_XX / compute_XX values that follow a separate -arch
_ARCH_TOKEN = re.compile(
    r"^(?:-gencode|--generate-code)(?:=.*)?$"
    r"|^arch=compute_\d+\w*"
    r"|^-{1,2}(?:arch|gpu-architecture|gpu-code|code)[= ]?(?:sm|compute|lto)_\d+\w*"
    r"|^-{1,2}(?:arch|gpu-architecture)=(?:all|all-major|native)$"
)
# variables and properties that hold NVIDIA architectures
ARCH_VARIABLES = ("CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES", "TORCH_CUDA_ARCH_LIST", "CUDA_ARCH_LIST")
_SPLIT = re.compile(r"[\s;\"']+")
# the condition of a generator expression that selects the CUDA language (alone or in an AND)
_CUDA_LANGUAGE = re.compile(r"\$<COMPILE_LANGUAGE:CUDA>|\$<COMPILE_LANG_AND_ID:CUDA,")
_WIDER = re.compile(r"\$<(?:OR|NOT):")


@dataclass(frozen=True)
class FlagHit:
    token: str
    offset: int  # in the text the token was found in
    kind: str  # "arch" | "nvcc"
    flag: NvccFlag | None = None
    # inside a CMake generator expression whose condition is the CUDA language
    # (`$<$<COMPILE_LANGUAGE:CUDA>:...>`): CMake hands it to the CUDA compiler alone, which is
    # nvcc or clang's CUDA mode, never hipcc (a HIP port compiles its sources as the HIP language)
    cuda_language_only: bool = False


def tokens(text: str):
    """(token, offset) for each whitespace/semicolon/quote-separated token of `text`."""
    pos = 0
    for part in _SPLIT.split(text):
        if not part:
            continue
        at = text.find(part, pos)
        pos = at + len(part)
        yield part, at


def is_arch_token(token: str) -> bool:
    return bool(_ARCH_TOKEN.match(token))


def flag_hits(text: str) -> list[FlagHit]:
    """Each NVIDIA architecture flag and nvcc-only option in `text`. Generator expressions
    (`$<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>`) are looked into."""
    out = []
    for token, at in tokens(text):
        inner, cuda_only = token, False
        if inner.startswith("$<"):
            head, _, inner = inner.rstrip(">").rpartition(":")
            cuda_only = bool(_CUDA_LANGUAGE.search(head)) and not _WIDER.search(head)
            at += token.find(inner) if inner in token else 0
        if is_arch_token(inner):
            out.append(FlagHit(inner, at, "arch"))
            continue
        flag = nvcc_flag(inner)
        if flag is not None:
            out.append(FlagHit(inner, at, "nvcc", flag, cuda_only))
    return out


ARCH_SUGGESTION = (
    "for AMD GPUs name gfx targets instead: `--offload-arch=gfx942` (MI300; gfx90a for MI200) for hipcc, "
    "`CMAKE_HIP_ARCHITECTURES gfx942` / the `HIP_ARCHITECTURES` property in CMake, "
    "`PYTORCH_ROCM_ARCH=gfx942` for torch extensions"
)
