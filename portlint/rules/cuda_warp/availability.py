"""PTL110: CUDA warp builtins that HIP lacks, or has only from ROCm 6.2 (opt-in) / 7.0.

The verdict follows the ROCm release the code must build with (`[tool.portlint.versions]
rocm`), from the release table in hip_releases.py that PTL104 shares."""

from __future__ import annotations

from portlint.rules.cuda_warp.analysis import Analysis
from portlint.frontends.cuda.parse import node_text, nodes_of_types
from portlint.analyses.cuda.warp_facts import callee_name
from portlint.core.config import version_text
from portlint.rules.cuda_warp import hip_releases

# CUDA warp builtins and their state on ROCm: (severity, what to use instead)
AVAILABILITY = {
    "__syncwarp": ("warning", "HIP before 7.0 has no `__syncwarp`: AMD lanes run in lockstep, so drop it or use `__builtin_amdgcn_wave_barrier()`"),
    "__activemask": ("warning", "HIP < 6.2 has no `__activemask` (6.2-6.4: only with HIP_ENABLE_WARP_SYNC_BUILTINS); `__ballot(1)` gives the 64-bit active mask"),
    "__match_any_sync": ("warning", "HIP < 6.2 has no `__match_any_sync` (6.2-6.4: only with HIP_ENABLE_WARP_SYNC_BUILTINS; from 7.0 with a 64-bit mask, or `__match_any`)"),
    "__match_all_sync": ("warning", "HIP < 6.2 has no `__match_all_sync` (6.2-6.4: only with HIP_ENABLE_WARP_SYNC_BUILTINS; from 7.0 with a 64-bit mask, or `__match_all`)"),
    "__reduce_add_sync": ("warning", "HIP < 7.0 has no `__reduce_add_sync` and ROCm 7 takes only int/unsigned: use a `__shfl_xor` loop from `warpSize / 2`"),
    "__reduce_min_sync": ("warning", "HIP < 7.0 has no `__reduce_min_sync`: use a `__shfl_xor` loop from `warpSize / 2`"),
    "__reduce_max_sync": ("warning", "HIP < 7.0 has no `__reduce_max_sync`: use a `__shfl_xor` loop from `warpSize / 2`"),
    "__reduce_and_sync": ("warning", "HIP < 7.0 has no `__reduce_and_sync`: use `__all`/a `__shfl_xor` loop"),
    "__reduce_or_sync": ("warning", "HIP < 7.0 has no `__reduce_or_sync`: use `__any`/a `__shfl_xor` loop"),
    "__reduce_xor_sync": ("warning", "HIP < 7.0 has no `__reduce_xor_sync`: use a `__shfl_xor` loop"),
    "__uni_sync": ("error", "HIP has no `__uni_sync`: compare `__ballot(p)` with `__ballot(1)`"),
}


def builtin_availability(a: Analysis) -> None:
    for call in nodes_of_types(a.root, ("call_expression",)):
        name = callee_name(call)
        fn_node = call.child_by_field_name("function")
        if fn_node is None or node_text(fn_node) != name or name not in AVAILABILITY:
            continue
        if not a.is_device(call) or a.guards.defines_for_amd(name):
            continue
        sev, text = AVAILABILITY[name]
        rocm = a.ctx.settings.version("rocm")
        st = hip_releases.state(name, rocm)
        said = availability_state(name, rocm, st)
        if said is None:
            continue
        if st in ("undeclared", "none"):
            sev = "error"  # undeclared on the configured release: the file does not compile there
        a.hit("PTL110", call, fields={"func": name, "state": said}, targets={"rocm": sev}, suggestion=text,
              confidence="high")


def availability_state(func: str, rocm: tuple[int, ...], st: str) -> str | None:
    """What the message says of a builtin whose state on the configured ROCm release is `st`
    (hip_releases.state, the table PTL104 uses too); None: it is there."""
    shown = version_text(rocm)
    if st == "none":
        return "does not exist in HIP"
    if st == "declared":
        return None
    if st == "opt-in":
        return (f"is declared in HIP {shown} only when HIP_ENABLE_WARP_SYNC_BUILTINS is defined "
                "(by default from ROCm 7.0; `[tool.portlint.versions] rocm`)")
    if rocm < hip_releases.FIRST:
        later = "opt-in in 6.2-6.4, default from 7.0" if func in hip_releases.IN_6_2 else "added in 7.0"
        return f"is undeclared in HIP before ROCm 6.2 ({later})"
    return f"is undeclared in HIP {shown} (its warp sync header has no such function)"
