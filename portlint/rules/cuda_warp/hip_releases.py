"""When HIP declares the CUDA warp sync builtins, one table for PTL104 (masks.py) and PTL110
(availability.py). From HIP's amd_warp_sync_functions.h / amd_warp_functions.h in ROCm/clr:
no warp sync header in rocm-6.1.0; in rocm-6.2.x the shuffles, ballot/all/any, match and
`__activemask` are declared only under HIP_ENABLE_WARP_SYNC_BUILTINS, and `__syncwarp(mask)` and
`__reduce_*_sync` are not in the header (6.3 is the same, as a colleague read it; not re-checked
here: the mirror has no 6.3 tag). From 6.4 they are declared by default
(HIP_DISABLE_WARP_SYNC_BUILTINS turns them off), a fact from a header comment, not a tag.
Whether 6.4-6.x declares `__syncwarp` / `__reduce_*_sync` is not established; 7.0 does.
`__uni_sync` is in no release."""

from __future__ import annotations

FIRST = (6, 2)      # the first release with the sync builtins (opt-in)
DEFAULT = (6, 4)    # the first release that declares them by default
LATER = (7, 0)      # where `__syncwarp` and `__reduce_*_sync` are known to be declared

# in the 6.2/6.3 header (opt-in), declared by default from 6.4
IN_6_2 = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
                    "__all_sync", "__any_sync", "__match_any_sync", "__match_all_sync", "__activemask"})
NO_RELEASE = frozenset({"__uni_sync"})


def state(func: str, rocm: tuple[int, ...]) -> str:
    """'none' (no release has it), 'undeclared' (not on this release), 'opt-in' (only with
    HIP_ENABLE_WARP_SYNC_BUILTINS), 'unknown' (6.4-6.x for a builtin the 6.2/6.3 header lacks)
    or 'declared'."""
    if func in NO_RELEASE:
        return "none"
    if rocm < FIRST:
        return "undeclared"
    if func in IN_6_2:
        return "opt-in" if rocm < DEFAULT else "declared"
    if rocm < DEFAULT:
        return "undeclared"
    return "unknown" if rocm < LATER else "declared"
