"""Async copies and sm80-era tensor-core PTX in CUDA sources (PTL401-PTL404).

As in cuda_hopper: each rule reports the asm statements the PTX table routes to it and the
CUDA / libcu++ / cooperative-groups / CuTe names of the same feature, one finding per line."""

from __future__ import annotations

import re

from portlint.cuda.ptx import report_rule
from portlint.cuda.symbols import NameRule, words
from portlint.registry import detector

_COPY_ADVICE = (
    "AMD has no asynchronous global->shared copy with commit/wait groups: stage the tile through registers "
    "(load tile k+1 into registers, `__syncthreads()`, store it to LDS, compute tile k), or on gfx90a/gfx942 use "
    "`__builtin_amdgcn_global_load_lds` (ROCm 6+) behind an arch check; in Triton, `num_stages` drives AMD's pipeliner."
)
_ASYNC = [
    NameRule(re.compile(words("__pipeline_memcpy_async", "__pipeline_commit", "__pipeline_wait_prior", "__pipeline_arrive_on")), "`cuda_pipeline.h` does not exist in HIP. " + _COPY_ADVICE),
    NameRule(
        re.compile(r"\bcuda::(?:memcpy_async|pipeline|make_pipeline|pipeline_shared_state|pipeline_role|aligned_size_t|producer_commit|consumer_wait)\b"),
        "libcu++ pipelines are not part of HIP. " + _COPY_ADVICE,
    ),
    NameRule(
        re.compile(r"\b(?:cg|cooperative_groups)::(?:memcpy_async|wait|wait_prior)\b"),
        "HIP's cooperative groups have no `memcpy_async` / `wait` / `wait_prior`. " + _COPY_ADVICE,
    ),
    NameRule(re.compile(r"(?<![\w:])(?<!\.)memcpy_async\s*\("), "An async copy (cooperative groups or libcu++ via a using-declaration). " + _COPY_ADVICE),
    NameRule(re.compile(r"\bSM80_CP_ASYNC\w*|\bcp_async_fence\b|\bcp_async_wait\b|\bcp_async_wait_all\b|\bcp_async_commit_group\b|\bcp_async_wait_group\b"), "A CuTe/CUTLASS cp.async wrapper. " + _COPY_ADVICE),
]


@detector("PTL401", tokens=("cp.async", "__pipeline_", "memcpy_async", "pipeline", "aligned_size_t", "SM80_CP_ASYNC", "cp_async_", "wait_prior"))
def cp_async_pipeline(ctx) -> None:
    report_rule(ctx, "PTL401", _ASYNC, intro="cp.async does not exist on AMD. " + _COPY_ADVICE)


_LDSM_ADVICE = (
    "Read the tile from LDS with ordinary loads into the MFMA operand layout (rocWMMA `load_matrix_sync`, or CK's tile "
    "loaders); the fragment layout differs on 64-lane wavefronts, so the index math is re-derived, not translated."
)
_LDMATRIX = [
    NameRule(re.compile(r"\bSM\d+_U\d+x\d+_(?:LD|ST)SM_[NT]\b"), "A CuTe ldmatrix/stmatrix copy atom. " + _LDSM_ADVICE),
    NameRule(re.compile(r"\bcuda::ptx::(?:ld|st)matrix\w*"), _LDSM_ADVICE),
]


@detector("PTL402", tokens=("ldmatrix", "stmatrix", "movmatrix", "LDSM", "STSM"))
def ldmatrix_stmatrix(ctx) -> None:
    report_rule(ctx, "PTL402", _LDMATRIX, intro="ldmatrix/stmatrix do not exist on AMD. " + _LDSM_ADVICE)


_MMA_ADVICE = (
    "HIP has no warp matrix functions: use rocWMMA (`#include <rocwmma/rocwmma.hpp>`, `rocwmma::fragment`, "
    "`rocwmma::load_matrix_sync`, `rocwmma::mma_sync`; the API mirrors nvcuda::wmma), MFMA builtins "
    "(`__builtin_amdgcn_mfma_f32_16x16x16f16`, ...), or hipBLASLt for whole GEMMs; tile shapes and fragment layouts differ on wave64."
)
_MMA = [
    NameRule(re.compile(r"\bnvcuda::wmma\b|(?<![\w:])wmma::\w+"), _MMA_ADVICE),
    NameRule(re.compile(r"\bSM(?:70|75|80|89|120)_\d+x\d+x\d+_\w+"), "A CuTe mma.sync atom. " + _MMA_ADVICE),
]


_ROCWMMA_ALIAS = re.compile(r"\bnamespace\s+wmma\s*=\s*(?:::)?rocwmma\b")
_MMA_QUALIFIED = [NameRule(re.compile(r"\bnvcuda::wmma\b"), _MMA_ADVICE), _MMA[1]]


@detector("PTL403", tokens=("mma", "wmma", "SM70_", "SM75_", "SM80_", "SM89_", "SM120_"))
def mma_sync_and_wmma_fragments(ctx) -> None:
    """`wmma::` stays quiet in a file that aliases `namespace wmma = rocwmma` for HIP (the
    alias is the port); `nvcuda::wmma` itself is still reported where AMD compiles it."""
    from portlint.cuda.symbols import code_text

    names = _MMA_QUALIFIED if _ROCWMMA_ALIAS.search(ctx.fact(code_text).code) else _MMA
    report_rule(ctx, "PTL403", names, intro="mma.sync / wmma PTX does not exist on AMD. " + _MMA_ADVICE)


@detector("PTL404", tokens=("redux.sync", "vote.", "match.", "activemask", "bar.warp.sync"))
def warp_reduce_ptx(ctx) -> None:
    report_rule(
        ctx,
        "PTL404",
        intro="Warp-level PTX does not exist on AMD; a wavefront has 64 lanes, so masks are 64-bit. Use:",
    )


# every name pattern of the family (PTL205 uses them to tell NVIDIA-only code inside a group)
NAME_RULES = [*_ASYNC, *_LDMATRIX, *_MMA]
