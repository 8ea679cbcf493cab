"""PTX text: pull the instructions out of an inline-asm template, tell PTX from x86, and
say what HIP offers for each instruction.

The owner column routes an instruction to the rule that explains it best: wgmma to the
Hopper rule, cp.async to the async-copy rule, and so on. PTL201 reports the rest, so an
asm statement gets one finding, from the most specific rule."""

from __future__ import annotations

import re

# mnemonic prefix -> (owning rule, what to write on HIP). Longest prefix wins.
PTX_TABLE: dict[str, tuple[str, str]] = {
    "mov.u32 %0, %laneid": ("PTL201", "`__lane_id()` (HIP device function)"),
    "%laneid": ("PTL201", "`__lane_id()`"),
    "%warpid": ("PTL201", "`threadIdx.x / warpSize` (there is no hardware warp id register in HIP)"),
    "%lanemask_lt": ("PTL201", "`__lanemask_lt()` (64-bit on AMD)"),
    "%lanemask": ("PTL201", "`__lanemask_lt()` / `__lanemask_gt()` / `__lanemask_eq()` (64-bit masks)"),
    "%clock64": ("PTL201", "`clock64()` or `wall_clock64()`"),
    "%clock": ("PTL201", "`clock64()`"),
    "%globaltimer": ("PTL201", "`wall_clock64()`"),
    "%smid": ("PTL201", "`__smid()`"),
    "%nsmid": ("PTL201", "`hipDeviceProp_t::multiProcessorCount` on the host"),
    "%dynamic_smem_size": ("PTL201", "pass the dynamic LDS size as a kernel argument"),
    "prmt": ("PTL201", "`__byte_perm(x, y, selector)`"),
    "bfe": ("PTL201", "`__bitextract_u32` / `__bitextract_u64`, or shifts and masks"),
    "bfi": ("PTL201", "`__bitinsert_u32` / `__bitinsert_u64`, or shifts and masks"),
    "brev": ("PTL201", "`__brev` / `__brevll`"),
    "popc": ("PTL201", "`__popc` / `__popcll`"),
    "clz": ("PTL201", "`__clz` / `__clzll`"),
    "bfind": ("PTL201", "`31 - __clz(x)` (or `63 - __clzll(x)`)"),
    "fns": ("PTL201", "`__fns64` / a loop over `__ffsll`"),
    "shf": ("PTL201", "`__funnelshift_l` / `__funnelshift_r`"),
    "lop3": ("PTL201", "plain `&`, `|`, `^`, `~` expressions (the compiler picks AMD's bitwise ops)"),
    "dp4a": ("PTL201", "`__builtin_amdgcn_sdot4` / `amd_mixed_dot`, or four multiply-adds"),
    "dp2a": ("PTL201", "`__builtin_amdgcn_sdot2`, or two multiply-adds"),
    "vote": ("PTL201", "`__ballot` / `__any` / `__all` (64-bit results on wave64)"),
    "activemask": ("PTL201", "`__activemask()` (64-bit) or `__ballot(1)`"),
    "shfl": ("PTL201", "`__shfl` / `__shfl_xor` / `__shfl_up` / `__shfl_down` with width `warpSize`"),
    "match": ("PTL201", "`__match_any` / `__match_all` (64-bit masks)"),
    "bar.warp.sync": ("PTL201", "`__syncwarp()` on ROCm >= 6.2, or nothing (a wavefront executes in lockstep)"),
    "bar.sync": ("PTL201", "`__syncthreads()`"),
    "barrier.sync": ("PTL201", "`__syncthreads()`"),
    "bar.arrive": ("PTL201", "a `__syncthreads()`-based rewrite (no named-barrier arrive in HIP)"),
    "membar.cta": ("PTL201", "`__threadfence_block()`"),
    "membar.gl": ("PTL201", "`__threadfence()`"),
    "membar.sys": ("PTL201", "`__threadfence_system()`"),
    "fence.proxy": ("PTL302", "nothing: proxy fences belong to TMA/wgmma, which AMD does not have"),
    "fence.acq_rel.cluster": ("PTL304", "drop the cluster scope; use `__threadfence()`"),
    "fence": ("PTL201", "`__threadfence()` / `__threadfence_block()` / `__atomic_thread_fence`"),
    "ld.global.nc": ("PTL201", "`__ldg(ptr)` or a plain load of a `const __restrict__` pointer"),
    "ld.global.cs": ("PTL201", "`__builtin_nontemporal_load(ptr)`"),
    "ld.global.lu": ("PTL201", "`__builtin_nontemporal_load(ptr)`"),
    "ld.global.cg": ("PTL201", "a plain load (or `__builtin_nontemporal_load`)"),
    "ld.global.ca": ("PTL201", "a plain load"),
    "ld.volatile": ("PTL201", "a load through a `volatile` pointer or `__atomic_load_n`"),
    "ld.acquire": ("PTL201", "`__hip_atomic_load(ptr, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)`"),
    "ld.relaxed": ("PTL201", "`__hip_atomic_load(ptr, __ATOMIC_RELAXED, scope)`"),
    "ld.shared": ("PTL201", "a plain load from the `__shared__` array"),
    "ld.global": ("PTL201", "a plain load, or `__builtin_nontemporal_load` for streaming"),
    "ld": ("PTL201", "a plain C++ load"),
    "st.global.cs": ("PTL201", "`__builtin_nontemporal_store(v, ptr)`"),
    "st.release": ("PTL201", "`__hip_atomic_store(ptr, v, __ATOMIC_RELEASE, scope)`"),
    "st.relaxed": ("PTL201", "`__hip_atomic_store(ptr, v, __ATOMIC_RELAXED, scope)`"),
    "st.volatile": ("PTL201", "a store through a `volatile` pointer"),
    "st.shared": ("PTL201", "a plain store to the `__shared__` array"),
    "st": ("PTL201", "a plain C++ store"),
    "red": ("PTL201", "`atomicAdd` / `atomicMax` / ... (or `__hip_atomic_fetch_add` with a scope)"),
    "atom": ("PTL201", "`atomicAdd` / `atomicCAS` / `atomicExch` / ... (or `__hip_atomic_*` with a scope)"),
    "cvt.rn.f16x2.f32": ("PTL201", "`__floats2half2_rn(a, b)`"),
    "cvt.rn.bf16x2.f32": ("PTL201", "`__floats2bfloat162_rn(a, b)`"),
    "cvt.rn.f16.f32": ("PTL201", "`__float2half_rn(x)`"),
    "cvt.rn.bf16.f32": ("PTL201", "`__float2bfloat16_rn(x)`"),
    "cvt.rna.tf32.f32": ("PTL201", "keep fp32 (MI300X has xf32 only through rocBLAS/hipBLASLt), or mask the low mantissa bits"),
    "cvt.rn.satfinite.e4m3x2": ("PTL307", "`__hip_cvt_float2_to_fp8x2` with the target's FP8 interpretation (FNUZ on MI300X)"),
    "cvt.rn.satfinite.e5m2x2": ("PTL307", "`__hip_cvt_float2_to_fp8x2` with the target's FP8 interpretation (FNUZ on MI300X)"),
    "cvt": ("PTL201", "a C++ cast or the matching `__float2*_r*` / `__*2float` intrinsic"),
    "ex2.approx": ("PTL201", "`exp2f(x)` / `__expf` (or `__builtin_amdgcn_exp2f`)"),
    "lg2.approx": ("PTL201", "`log2f(x)` / `__log2f`"),
    "rcp.approx": ("PTL201", "`__frcp_rn(x)` or `1.0f / x` with `-ffast-math`"),
    "rsqrt.approx": ("PTL201", "`rsqrtf(x)` / `__frsqrt_rn(x)`"),
    "sqrt.approx": ("PTL201", "`sqrtf(x)` / `__fsqrt_rn(x)`"),
    "sin.approx": ("PTL201", "`__sinf(x)`"),
    "cos.approx": ("PTL201", "`__cosf(x)`"),
    "tanh.approx": ("PTL201", "`tanhf(x)`"),
    "fma.rn": ("PTL201", "`__fmaf_rn(a, b, c)` / `fmaf` (or `__hfma2` for half2)"),
    "fma": ("PTL201", "`fmaf` / `__fmaf_rn`"),
    "mul.hi": ("PTL201", "`__umulhi` / `__mulhi` / `__umul64hi`"),
    "mul.wide": ("PTL201", "a widening C++ multiply, e.g. `(uint64_t)a * b`"),
    "mad.lo": ("PTL201", "`a * b + c`"),
    "add.cc": ("PTL201", "`__builtin_addc` / 64-bit arithmetic"),
    "addc": ("PTL201", "`__builtin_addc` / 64-bit arithmetic"),
    "min": ("PTL201", "`min` / `fminf` / `__hmin2`"),
    "max": ("PTL201", "`max` / `fmaxf` / `__hmax2`"),
    "nanosleep": ("PTL201", "`__builtin_amdgcn_s_sleep(n)`"),
    "trap": ("PTL201", "`__builtin_trap()` / `abort()`"),
    "exit": ("PTL201", "return from the kernel"),
    "griddepcontrol": ("PTL308", "nothing: programmatic dependent launch has no HIP form; rely on stream order"),
    "getctarank": ("PTL304", "nothing: there are no thread-block clusters on AMD"),
    "mapa": ("PTL304", "nothing: there is no distributed shared memory on AMD"),
    "barrier.cluster": ("PTL304", "`__syncthreads()` within a block; no cluster barrier on AMD"),
    "multimem": ("PTL309", "RCCL collectives (no NVLink SHARP multicast on AMD)"),
    "wgmma": ("PTL301", "MFMA through rocWMMA / Composable Kernel (`__builtin_amdgcn_mfma_*`)"),
    "cp.async.bulk.tensor": ("PTL302", "regular loads to LDS (or CK's block-to-LDS copies); no TMA on AMD"),
    "cp.reduce.async.bulk": ("PTL302", "regular loads/stores with atomics; no TMA on AMD"),
    "cp.async.bulk": ("PTL302", "regular loads to LDS; no bulk async copy on AMD"),
    "mbarrier": ("PTL303", "`__syncthreads()` around a regular LDS copy"),
    "setmaxnreg": ("PTL305", "nothing: AMD allocates VGPRs per kernel (`__launch_bounds__` / `amdgpu_waves_per_eu`)"),
    "tcgen05": ("PTL306", "MFMA (rocWMMA / CK); no tensor memory on AMD"),
    "elect.sync": ("PTL301", "`__lane_id() == 0` style election, or `__builtin_amdgcn_readfirstlane`"),
    "stmatrix": ("PTL402", "LDS stores (rocWMMA `store_matrix_sync` / CK)"),
    "ldmatrix": ("PTL402", "LDS loads into MFMA operand layout (rocWMMA `load_matrix_sync` / CK)"),
    "cp.async": ("PTL401", "direct global-to-LDS loads (`__builtin_amdgcn_global_load_lds` on gfx90a+) or plain loads + `__syncthreads()`"),
    "mma.sync": ("PTL403", "MFMA through rocWMMA (`rocwmma::mma_sync`) or `__builtin_amdgcn_mfma_*`"),
    "mma.sp": ("PTL403", "MFMA sparse (`__builtin_amdgcn_smfmac_*` on gfx940+) or dense MFMA"),
    "wmma": ("PTL403", "rocWMMA (`rocwmma::fragment`, `load_matrix_sync`, `mma_sync`)"),
    "redux.sync": ("PTL404", "`__reduce_add_sync` on ROCm >= 7 or a `__shfl_xor` butterfly over `warpSize` lanes"),
}
_PREFIXES = sorted(PTX_TABLE, key=len, reverse=True)

# A template that looks like PTX: an instruction with a type suffix, a PTX register or
# state space, or a directive.
_PTX_HINT = re.compile(
    r"%%?(?:laneid|warpid|clock|globaltimer|smid|lanemask|tid|ntid|ctaid|dynamic_smem)"
    r"|\.(?:[subf](?:8|16|32|64)|b(?:8|16|32|64)|pred|f16x2|bf16x2|e4m3|e5m2|global|shared|local|const|param|reg|sync|aligned|approx|rn|rz|rm|rp|ftz|sat|nc|cta|gpu|sys|cluster)\b"
    r"|\b(?:wgmma|mbarrier|ldmatrix|stmatrix|cp\.async|mma\.sync|setmaxnreg|tcgen05|prmt|lop3|shfl|vote|membar|griddepcontrol|bar\.sync|elect\.sync|redux\.sync)\b"
)
# x86 / ARM host assembly.
_HOST_ASM_HINT = re.compile(
    r"\b(?:rdtsc|rdtscp|cpuid|pause|lfence|mfence|sfence|xchg|lock|movq?|xorl?|pushq?|popq?|nop|hlt|int3|"
    r"isb|dmb|dsb|yield|wfe|sev)\b|%%?[re]?(?:ax|bx|cx|dx|si|di|sp|bp)\b|\$\d"
)


def ptx_instructions(template: str) -> list[str]:
    """The instructions of an asm template, without operands, predicates or braces."""
    out = []
    text = template.replace("\\n", "\n").replace("\\t", " ")
    for stmt in re.split(r"[;\n]", text):
        stmt = stmt.strip().lstrip("{").strip()
        if not stmt or stmt.startswith("//") or stmt.startswith("}"):
            continue
        stmt = re.sub(r"^@!?%?\w+\s+", "", stmt)  # predicate guard
        if stmt.startswith(".reg") or stmt.startswith(".pragma"):
            continue
        out.append(stmt)
    return out


def classify_instruction(stmt: str) -> tuple[str, str, str]:
    """(owning rule, HIP counterpart, matched prefix) for one PTX instruction."""
    s = stmt.replace("%%", "%")
    mnemonic = s.split()[0] if s.split() else s
    for prefix in _PREFIXES:
        if prefix.startswith("%"):
            if prefix in s:
                return (*PTX_TABLE[prefix], prefix)
        elif mnemonic == prefix or mnemonic.startswith(prefix + "."):
            return (*PTX_TABLE[prefix], prefix)
    return "PTL201", "", mnemonic


def looks_like_ptx(template: str) -> bool:
    return bool(_PTX_HINT.search(template))


def looks_like_host_asm(template: str) -> bool:
    return bool(_HOST_ASM_HINT.search(template)) and not looks_like_ptx(template)
