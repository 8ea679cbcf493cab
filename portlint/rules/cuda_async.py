"""Async copies and sm80-era tensor-core PTX in CUDA sources (PTL401-PTL404).

As in cuda_hopper: each rule reports the asm statements the PTX table routes to it and the
CUDA / libcu++ / cooperative-groups / CuTe names of the same feature listed in
rules/cuda_async/names*.toml, one finding per line."""

from __future__ import annotations

import re

from portlint.frontends.ptx import report_rule
from portlint.core.registry import detector


def _advice(key: str) -> str:
    from portlint.frontends.cuda.name_tables import shared_advice

    return shared_advice("cuda_async", key)


@detector("PTL401", tokens=("cp.async", "__pipeline_", "memcpy_async", "pipeline", "aligned_size_t", "SM80_CP_ASYNC", "cp_async_", "cp_async4", "cp_async1", "drain_cp_asyncs", "wait_prior", "producer_commit", "consumer_wait", "cg::wait", "groups::wait"))
def cp_async_pipeline(ctx) -> None:
    report_rule(ctx, "PTL401", intro="cp.async does not exist on AMD. " + _advice("copy"))


@detector("PTL402", tokens=("ldmatrix", "stmatrix", "movmatrix", "LDSM", "STSM", "MOVM", "ldsm", "stsm"))
def ldmatrix_stmatrix(ctx) -> None:
    report_rule(ctx, "PTL402", intro="ldmatrix/stmatrix do not exist on AMD. " + _advice("ldsm"))


_ROCWMMA_ALIAS = re.compile(r"\bnamespace\s+wmma\s*=\s*(?:::)?rocwmma\b")


@detector("PTL403", tokens=("mma", "wmma", "SM70_", "SM75_", "SM80_", "SM89_", "SM120_"))
def mma_sync_and_wmma_fragments(ctx) -> None:
    """`wmma::` stays quiet in a file that aliases `namespace wmma = rocwmma` for HIP (the
    alias is the port); `nvcuda::wmma` itself is still reported where AMD compiles it."""
    from portlint.frontends.cuda.symbols import code_text

    kinds = ("",) if _ROCWMMA_ALIAS.search(ctx.fact(code_text).code) else None
    report_rule(ctx, "PTL403", intro="mma.sync / wmma PTX does not exist on AMD. " + _advice("mma"), kinds=kinds)


@detector("PTL404", tokens=("redux.sync", "vote.", "match.", "activemask", "bar.warp.sync"))
def warp_reduce_ptx(ctx) -> None:
    report_rule(
        ctx,
        "PTL404",
        intro="Warp-level PTX does not exist on AMD; a wavefront has 64 lanes, so masks are 64-bit. Use:",
    )
