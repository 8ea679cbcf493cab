"""When HIP declares the CUDA warp sync builtins, one table for PTL104 (masks.py) and PTL110
(availability.py).

From HIP's own CHANGELOG.md (ROCm/clr), release by release:
- HIP 6.2 introduced the `_sync()` cross-lane builtins (`__shfl*_sync`, `__all_sync`,
  `__any_sync`, `__ballot_sync`, and with them `__activemask` and `__match_*_sync` in
  amd_warp_sync_functions.h), with a 64-bit mask, hidden behind HIP_ENABLE_WARP_SYNC_BUILTINS;
  it promised them unconditionally in 6.3.
- HIP 6.3: they "continue to be hidden behind" HIP_ENABLE_WARP_SYNC_BUILTINS, now promised for
  the next release; HIP 6.4 and 6.4.x record no change to them.
- HIP 7.0: they are enabled by default (HIP_DISABLE_WARP_SYNC_BUILTINS turns them off), and
  `__syncwarp` and the `__reduce_*_sync` intrinsics are added.
`__uni_sync` is in no release."""

from __future__ import annotations

FIRST = (6, 2)      # the first release with the sync builtins (opt-in)
DEFAULT = (7, 0)    # the first release that declares them by default, and adds __syncwarp / __reduce_*_sync

# opt-in from 6.2 to 6.4.x, declared by default from 7.0
IN_6_2 = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
                    "__all_sync", "__any_sync", "__match_any_sync", "__match_all_sync", "__activemask"})
NO_RELEASE = frozenset({"__uni_sync"})


def state(func: str, rocm: tuple[int, ...]) -> str:
    """'none' (no release has it), 'undeclared' (not on this release), 'opt-in' (only with
    HIP_ENABLE_WARP_SYNC_BUILTINS) or 'declared'."""
    if func in NO_RELEASE:
        return "none"
    if rocm < FIRST:
        return "undeclared"
    if func in IN_6_2:
        return "opt-in" if rocm < DEFAULT else "declared"
    return "undeclared" if rocm < DEFAULT else "declared"
