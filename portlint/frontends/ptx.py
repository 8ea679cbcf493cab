"""PTX text: pull the instructions out of an inline-asm template, tell PTX from x86, and
say what HIP offers for each instruction.

The owner column routes an instruction to the rule that explains it best: wgmma to the
Hopper rule, cp.async to the async-copy rule, and so on. PTL201 reports the rest, so an
asm statement gets one finding, from the most specific rule: a statement that holds any
instruction owned by a more specific rule belongs to the first such rule (the `setp`,
`selp`, `mov` scaffolding around a wgmma or an mbarrier wait does not make it generic).

`asm_sites(ctx)` (use through `ctx.fact`) lists every PTX asm statement of a CUDA file once,
with its owner, for all the detectors of PTL2xx, PTL3xx and PTL4xx."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from portlint.core.model import Span

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
    "vote": ("PTL404", "`__ballot` / `__any` / `__all` (64-bit results on wave64)"),
    "activemask": ("PTL404", "`__ballot(1)` (a 64-bit mask on wave64)"),
    "shfl": ("PTL201", "`__shfl` / `__shfl_xor` / `__shfl_up` / `__shfl_down` with width `warpSize`"),
    "match": ("PTL404", "`__match_any` / `__match_all` (64-bit masks)"),
    "bar.warp.sync": ("PTL404", "`__syncwarp()` on ROCm >= 6.2, or nothing (a wavefront executes in lockstep)"),
    "bar.sync": ("PTL201", "`__syncthreads()`"),
    "barrier.sync": ("PTL201", "`__syncthreads()`"),
    "bar.arrive": ("PTL201", "a `__syncthreads()`-based rewrite (no named-barrier arrive in HIP)"),
    "membar.cta": ("PTL201", "`__threadfence_block()`"),
    "membar.gl": ("PTL201", "`__threadfence()`"),
    "membar.sys": ("PTL201", "`__threadfence_system()`"),
    "fence.proxy": ("PTL302", "nothing: proxy fences belong to TMA/wgmma, which AMD does not have"),
    "fence.acq_rel.cluster": ("PTL304", "drop the cluster scope; use `__threadfence()`"),
    "fence.mbarrier_init": ("PTL303", "nothing: there are no transaction barriers on AMD"),
    "fence": ("PTL201", "`__threadfence()` / `__threadfence_block()` / `__atomic_thread_fence`"),
    "ld.global.nc": ("PTL201", "`__ldg(ptr)` or a plain load of a `const __restrict__` pointer"),
    "ld.global.cs": ("PTL201", "`__builtin_nontemporal_load(ptr)`"),
    "ld.global.lu": ("PTL201", "`__builtin_nontemporal_load(ptr)`"),
    "ld.global.cg": ("PTL201", "a plain load (or `__builtin_nontemporal_load`)"),
    "ld.global.ca": ("PTL201", "a plain load"),
    "ld.volatile": ("PTL201", "a load through a `volatile` pointer or `__atomic_load_n`"),
    "ld.acquire": ("PTL201", "`__hip_atomic_load(ptr, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)`"),
    "ld.relaxed": ("PTL201", "`__hip_atomic_load(ptr, __ATOMIC_RELAXED, scope)`"),
    "ld.shared::cluster": ("PTL304", "nothing: there is no distributed shared memory on AMD; exchange through global memory"),
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
    "%cluster": ("PTL304", "nothing: there are no thread-block clusters on AMD (use `blockIdx`)"),
    "%nclusterid": ("PTL304", "nothing: there are no thread-block clusters on AMD (use `gridDim`)"),
    "%is_explicit_cluster": ("PTL304", "nothing: there are no thread-block clusters on AMD"),
    "st.async": ("PTL304", "nothing: there is no distributed shared memory on AMD"),
    "red.async": ("PTL304", "nothing: there is no distributed shared memory on AMD"),
    "getctarank": ("PTL304", "nothing: there are no thread-block clusters on AMD"),
    "mapa": ("PTL304", "nothing: there is no distributed shared memory on AMD"),
    "barrier.cluster": ("PTL304", "`__syncthreads()` within a block; no cluster barrier on AMD"),
    "multimem": ("PTL309", "RCCL collectives (no NVLink SHARP multicast on AMD)"),
    "wgmma": ("PTL301", "MFMA through rocWMMA / Composable Kernel (`__builtin_amdgcn_mfma_*`)"),
    "cp.async.bulk.tensor": ("PTL302", "regular loads to LDS (or CK's block-to-LDS copies); no TMA on AMD"),
    "cp.reduce.async.bulk": ("PTL302", "regular loads/stores with atomics; no TMA on AMD"),
    "cp.async.bulk": ("PTL302", "regular loads to LDS; no bulk async copy on AMD"),
    "prefetch.tensormap": ("PTL302", "nothing: there are no tensor maps on AMD"),
    "prefetch.global.tensormap": ("PTL302", "nothing: there are no tensor maps on AMD"),
    "tensormap": ("PTL302", "nothing: there are no tensor maps on AMD"),
    "mbarrier": ("PTL303", "`__syncthreads()` around a regular LDS copy"),
    "setmaxnreg": ("PTL305", "nothing: AMD allocates VGPRs per kernel (`__launch_bounds__` / `amdgpu_waves_per_eu`)"),
    "tcgen05": ("PTL306", "MFMA (rocWMMA / CK); no tensor memory on AMD"),
    "elect.sync": ("PTL201", "`__lane_id() == 0` style election, or `__builtin_amdgcn_readfirstlane`"),
    "stmatrix": ("PTL402", "LDS stores (rocWMMA `store_matrix_sync` / CK)"),
    "ldmatrix": ("PTL402", "LDS loads into MFMA operand layout (rocWMMA `load_matrix_sync` / CK)"),
    "movmatrix": ("PTL402", "a register transpose through LDS or `__shfl` (MFMA layouts differ anyway)"),
    "cp.async": ("PTL401", "direct global-to-LDS loads (`__builtin_amdgcn_global_load_lds` on gfx90a+) or plain loads + `__syncthreads()`"),
    "mma.sync": ("PTL403", "MFMA through rocWMMA (`rocwmma::mma_sync`) or `__builtin_amdgcn_mfma_*`"),
    "mma": ("PTL403", "MFMA through rocWMMA (`rocwmma::mma_sync`) or `__builtin_amdgcn_mfma_*`"),
    "mma.sp": ("PTL403", "MFMA sparse (`__builtin_amdgcn_smfmac_*` on gfx940+) or dense MFMA"),
    "wmma": ("PTL403", "rocWMMA (`rocwmma::fragment`, `load_matrix_sync`, `mma_sync`)"),
    "redux.sync": ("PTL404", "`__reduce_add_sync` on ROCm >= 7 or a `__shfl_xor` butterfly over `warpSize` lanes"),
}
_PREFIXES = sorted(PTX_TABLE, key=len, reverse=True)
_FP8_CVT = re.compile(r"\.(?:e4m3|e5m2|e2m1|e2m3|e3m2|ue8m0)")

# A template that looks like PTX: an instruction with a type suffix, a PTX register or
# state space, or a directive.
_PTX_HINT = re.compile(
    r"%%?(?:laneid|warpid|nwarpid|clock|globaltimer|smid|nsmid|lanemask|tid|ntid|ctaid|nctaid|dynamic_smem|cluster)"
    r"|\.(?:[subf](?:8|16|32|64)|b(?:8|16|32|64|128)|pred|f16x2|bf16x2|e4m3|e5m2|global|shared|local|const|param|reg|sync|aligned|approx|rn|rz|rm|rp|ftz|sat|nc|cta|gpu|sys|cluster)\b"
    r"|\b(?:wgmma|mbarrier|ldmatrix|stmatrix|cp\.async|mma\.sync|setmaxnreg|tcgen05|prmt|lop3|shfl|vote|membar|griddepcontrol|bar\.sync|elect\.sync|redux\.sync|multimem)\b"
)
# x86 / ARM host assembly.
_HOST_ASM_HINT = re.compile(
    r"\b(?:rdtsc|rdtscp|cpuid|pause|lfence|mfence|sfence|xchg|lock|movq?|xorl?|pushq?|popq?|nop|hlt|int3|"
    r"isb|dmb|dsb|yield|wfe|sev)\b|%%?[re]?(?:ax|bx|cx|dx|si|di|sp|bp)\b|\$\d"
)
# AMD GCN/CDNA assembly (a HIP path written in asm): v_/s_/ds_/buffer_/global_ mnemonics.
_AMDGCN_HINT = re.compile(r"^\s*(?:v_|s_|ds_|buffer_|global_|flat_|scratch_|image_)[a-z0-9_]+\b", re.M)
# Parents of an asm node that make it a label (symbol or register name), not a statement.
_LABEL_PARENTS = {"declaration", "init_declarator", "function_declarator", "field_declaration", "parameter_declaration"}
# Instructions that only move values around an instruction of interest.
_SCAFFOLDING = re.compile(r"^(?:setp|selp|bra|mov|and|or|not|cvta|@|\w+:)")


def ptx_instructions(template: str) -> list[str]:
    """The instructions of an asm template, without operands, predicates or braces."""
    out = []
    text = template.replace("\\n", "\n").replace("\\t", " ")
    for stmt in re.split(r"[;\n]", text):
        stmt = stmt.strip().lstrip("{").strip()
        if not stmt or stmt.startswith("//") or stmt.startswith("}"):
            continue
        stmt = re.sub(r"^@!?%?\w+\s+", "", stmt)  # predicate guard
        stmt = re.sub(r"^[A-Za-z_$][\w$]*:\s*", "", stmt)  # label
        if not stmt or stmt.startswith(".reg") or stmt.startswith(".pragma"):
            continue
        out.append(stmt)
    return out


def classify_instruction(stmt: str) -> tuple[str, str, str]:
    """(owning rule, HIP counterpart, matched prefix) for one PTX instruction."""
    s = stmt.replace("%%", "%")
    mnemonic = s.split()[0] if s.split() else s
    if mnemonic.startswith("cvt") and _FP8_CVT.search(mnemonic):
        return "PTL307", "`__hip_cvt_float2_to_fp8x2` / `__hip_cvt_fp8x2_to_halfraw2` with the target's FP8 interpretation (FNUZ on MI300X, OCP on MI355X)", "cvt(fp8)"
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


def looks_like_amdgcn(template: str) -> bool:
    """The first instruction is an AMD GCN/CDNA mnemonic (v_mfma..., s_waitcnt, ds_read...)."""
    instructions = ptx_instructions(template)
    return bool(instructions) and bool(_AMDGCN_HINT.match(instructions[0]))


# ---- asm statements of a file ---------------------------------------------------------------

_ASM_IN_MACRO = re.compile(r"\b(?:asm|__asm__|__asm)\s*(?:volatile|__volatile__)?\s*\(\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)")
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")


@dataclass
class AsmSite:
    """One asm statement (or a macro whose body is one) whose template is PTX."""

    where: object  # tree-sitter node to report at
    template: str
    instructions: list[str]
    owner: str  # the rule that reports it
    in_macro: bool = False
    owners: list[str] = field(default_factory=list)  # owner of each instruction

    def first_of(self, rule_id: str) -> str:
        """The first instruction of the statement owned by `rule_id` (for the message)."""
        owned = [stmt for stmt, owner in zip(self.instructions, self.owners) if owner == rule_id]
        for stmt in sorted(owned, key=lambda st: bool(_SCAFFOLDING.match(st))):  # stable: real work first
            stmt = stmt.replace("%%", "%")
            prefix = classify_instruction(stmt)[2]
            if prefix.startswith("%"):  # a special register (`mov.u32 %0, %nclusterid.x`): name it
                return re.search(re.escape(prefix) + r"[\w.]*", stmt).group(0)
            return stmt.split()[0]
        return self.instructions[0].split()[0].replace("%%", "%") if self.instructions else "asm"

    def counterparts(self) -> list[str]:
        """`prefix` -> HIP counterpart lines for every distinct instruction, in order."""
        out, seen = [], set()
        for stmt in self.instructions:
            owner, hip, prefix = classify_instruction(stmt)
            if prefix in seen or _SCAFFOLDING.match(prefix):
                continue
            seen.add(prefix)
            out.append(f"`{prefix}` -> {hip}" if hip else f"`{prefix}`: no HIP intrinsic; write it in C++ and let the compiler pick AMD instructions")
        return out


def instruction_node(site: AsmSite, rule_id: str, compiled=None):
    """The string literal of a multi-line asm template that holds the instruction `rule_id`
    is reported for (`asm("{\\n" "wgmma.mma_async ...;\\n" ...)` is reported at the wgmma
    line); the asm node itself when the template is one literal or a macro's. `compiled(line)`
    says whether an AMD build compiles a line: of a template whose literals sit in `#if`
    branches, the literal an AMD build reads is preferred."""
    from portlint.frontends.cuda.parse import node_text

    if site.in_macro:
        return site.where
    literals = []
    for child in site.where.children:
        if child.type == "concatenated_string":
            literals.extend(c for c in child.children if c.type == "string_literal")
        elif child.type == "string_literal":
            literals.append(child)
        elif child.type.startswith("gnu_asm_") and child.type != "gnu_asm_qualifier":
            break
    if len(literals) < 2 or literals[0].start_point[0] == literals[-1].start_point[0]:
        return site.where
    mnemonic = site.first_of(rule_id).replace("%", "%%")
    holding = [
        lit for lit in literals
        if re.search(r"(?<![\w.])" + re.escape(mnemonic) + r"(?![\w])", node_text(lit))
        or re.search(r"(?<![\w.])" + re.escape(mnemonic.replace("%%", "%")) + r"(?![\w])", node_text(lit))
    ]
    live = [lit for lit in holding if compiled(lit.start_point[0] + 1)] if compiled is not None else holding
    if live:
        holding = live
    elif compiled is not None:
        # the AMD build reads another branch of the template: its own instruction of the rule
        def owned(lit) -> bool:
            text = "".join(m.group(1) for m in _STRING.finditer(node_text(lit)))
            return any(classify_instruction(st)[0] == rule_id and not _SCAFFOLDING.match(st) for st in ptx_instructions(text))

        holding = [lit for lit in literals if compiled(lit.start_point[0] + 1) and owned(lit)] or holding
    for lit in holding:
        return site.where if lit.start_point[0] == site.where.start_point[0] else lit
    return site.where


def _template_of(asm_node) -> str:
    """The assembly template: the concatenated string literals before the operand lists."""
    from portlint.frontends.cuda.parse import node_text

    parts = []
    for child in asm_node.children:
        if child.type in ("string_literal", "concatenated_string"):
            parts.extend(m.group(1) for m in _STRING.finditer(node_text(child)))
        elif child.type.startswith("gnu_asm_") and child.type != "gnu_asm_qualifier":
            break
    return "".join(parts)


def _owner(instructions: list[str]) -> tuple[str, list[str]]:
    owners = [classify_instruction(i)[0] for i in instructions]
    specific = [o for o in owners if o != "PTL201"]
    return (specific[0] if specific else "PTL201"), owners


def asm_sites(ctx) -> list[AsmSite]:
    """ctx.fact(asm_sites): the PTX asm statements of a CUDA file, each with its owner.

    An asm statement counts when its template is PTX; in device code also when it is
    neither x86/ARM host assembly nor AMD GCN assembly nor an empty compiler barrier
    (`asm volatile("" ::: "memory")`, which is portable)."""
    from portlint.frontends.cuda.parse import node_text, nodes_of_types
    from portlint.frontends.cuda.spaces import space_map

    if b"asm" not in ctx.data:
        return []
    sites: list[AsmSite] = []
    for node in nodes_of_types(ctx.tree.root_node, ("gnu_asm_expression", "preproc_function_def", "preproc_def")):
        in_macro = node.type != "gnu_asm_expression"
        if in_macro:
            value = node.child_by_field_name("value")
            m = _ASM_IN_MACRO.search(node_text(value)) if value is not None else None
            if not m:
                continue
            template = "".join(s.group(1) for s in _STRING.finditer(m.group(1)))
            if not looks_like_ptx(template):
                continue
        else:
            if node.parent is not None and node.parent.type in _LABEL_PARENTS:
                continue  # an asm label: `float v asm("v64");`, `f() __asm("llvm.amdgcn...")`
            template = _template_of(node)
            if looks_like_amdgcn(template):
                continue  # AMD GCN assembly is the HIP side of a port
            if not looks_like_ptx(template):
                if not ctx.fact(space_map).is_device(node):
                    continue  # host assembly (rdtsc, cpuid, ...) is fine
                if looks_like_host_asm(template):
                    continue
        instructions = ptx_instructions(template)
        if not instructions:
            continue  # an empty template is a compiler barrier
        owner, owners = _owner(instructions)
        sites.append(AsmSite(node, template, instructions, owner, in_macro, owners))
    return sites


def hip_advice(site: AsmSite, intro: str) -> str:
    """Suggestion text for an asm site: the intro, then the counterpart of each instruction."""
    lines = site.counterparts()
    text = intro + ("\n" + "\n".join(lines) if lines else "")
    return text + "\nKeep the PTX only under `#ifndef __HIP_PLATFORM_AMD__` with the HIP form in the `#else` branch."




def _withheld_from(found_directives) -> set[str]:
    """Macros #defined only inside a branch chosen by a vendor test (`#ifndef
    __HIP_PLATFORM_AMD__`, the `#else` of `#ifdef USE_ROCM`, ...): feature flags the project
    withholds from the AMD build on purpose, like llama.cpp's CP_ASYNC_AVAILABLE."""
    from portlint.frontends.cuda.platform_macros import names_vendor
    from portlint.frontends.cuda.preprocessor import defined_name

    vendor_defs: set[str] = set()
    other_defs: set[str] = set()
    stack: list[str] = []  # the conditions of the open groups (all branches so far)
    for d in found_directives:
        kind = d.kind
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(d.rest)
        elif kind in ("elif", "else") and stack:
            stack[-1] += " " + d.rest
        elif kind == "endif" and stack:
            stack.pop()
        elif kind == "define":
            head = defined_name(d)
            if head:
                (vendor_defs if any(names_vendor(c) for c in stack) else other_defs).add(head[0])
    return vendor_defs - other_defs


def _withheld_macros(ctx) -> set[str]:
    """Withheld feature macros of the file and of the headers it reaches (the scan's include graph)."""
    from portlint.frontends.cuda.includes import file_directives, file_reach, graph_of

    out = _withheld_from(ctx.fact(file_directives))
    reach = ctx.fact(file_reach)
    if reach is not None and reach.headers:
        graph = graph_of(ctx)
        for path in graph.project_headers(reach):
            key = ("withheld", path)
            found = graph.derived.get(key)
            if found is None:
                h = graph.header(path)
                found = graph.derived[key] = _withheld_from(h.directives) if h is not None else set()
            out |= found
    return out


def withheld_from_amd(ctx, line: int) -> bool:
    """The line sits under `#ifdef FLAG` (no alternative branch) where FLAG is a feature macro
    the project defines only for non-AMD builds: the AMD build was excluded on purpose."""
    from portlint.frontends.cuda.guards import guard_map

    guard = ctx.fact(guard_map).dead_for_amd(line)
    if guard is None or guard.has_alternative:
        return False
    from portlint.frontends.cuda.platform_macros import simple_test

    kind, _, rest = guard.condition.lstrip("#").partition(" ")
    test = simple_test(kind, rest)  # `#ifdef FLAG`, `#if defined(FLAG)`
    return test is not None and test[1] and (kind != "if" or "defined" in rest) and test[0] in ctx.fact(_withheld_macros)


def _entry_point_strings(ctx, rule_id: str, seen: set[int]):
    """(span, name, row) for string literals that are exactly a table name of the rule: a
    driver function looked up by name (`cudaGetDriverEntryPoint("cuTensorMapEncodeTiled",
    &fn, ...)`, `cuGetProcAddress`), the way TMA and multicast code avoids linking libcuda."""
    from portlint.frontends.cuda.name_tables import entries_for
    from portlint.frontends.cuda.symbols import code_text

    if b"EntryPoint" not in ctx.data and b"GetProcAddress" not in ctx.data:
        return
    names = {n: row for row in entries_for(rule_id) for n in row.names}
    ct = ctx.fact(code_text)
    for start, end, body in ct.strings:
        row = names.get(body)
        line = ct.line_of(start)
        if row is not None and line not in seen:
            seen.add(line)
            yield ct.span(start, end), body, row


def report_rule(ctx, rule_id: str, intro: str = "", targets=None, extra=(), kinds=None) -> None:
    """Report the asm statements `rule_id` owns and the names of its rows in the name tables
    (rules/<family>/names*.toml; `kinds` narrows the rows by their `kind`), one finding per
    line. `extra` NameRules are patterns the detector builds from the file itself. `intro`
    opens the suggestion of an asm finding; a name finding's suggestion is its row's advice.
    `targets(line)` may narrow the targets per finding (None: the rule's own; an empty
    tuple: not a finding)."""
    from portlint.frontends.cuda.name_tables import first_per_line
    from portlint.frontends.cuda.symbols import code_text

    seen: set[int] = set()
    ct = ctx.fact(code_text)
    inside_asm = []
    for site in ctx.fact(asm_sites):
        sp = ctx.node_span(site.where)
        inside_asm.append((ct.offset(sp.start_line, sp.start_col), ct.offset(sp.end_line, sp.end_col)))
    from portlint.frontends.cuda.guards import guard_map

    guards = ctx.fact(guard_map)

    def compiled(line: int) -> bool:
        return guards.dead_for_amd(line) is None

    for site in ctx.fact(asm_sites):
        if site.owner != rule_id:
            continue
        span = ctx.node_span(instruction_node(site, rule_id, compiled))
        seen.add(ctx.node_span(site.where).start_line)
        seen.add(span.start_line)
        narrowed = targets(span.start_line) if targets else None
        if narrowed == () or withheld_from_amd(ctx, span.start_line):
            continue  # not a finding: the detector says so, or the project withheld it from AMD
        ctx.report(
            span,
            what=site.first_of(rule_id),
            suggestion=hip_advice(site, intro),
            targets=narrowed,
        )
    for span, name, rule in first_per_line(ctx, rule_id, kinds, inside_asm, extra):
        if span.start_line in seen:
            continue
        seen.add(span.start_line)
        narrowed = targets(span.start_line) if targets else None
        if narrowed == () or withheld_from_amd(ctx, span.start_line):
            continue
        ctx.report(span, what=name, suggestion=rule.advise(name), targets=narrowed)
    for span, name, rule in _entry_point_strings(ctx, rule_id, seen):
        narrowed = targets(span.start_line) if targets else None
        if narrowed == () or withheld_from_amd(ctx, span.start_line):
            continue
        ctx.report(span, what=f'"{name}" (looked up by name)', suggestion=rule.advise(name), targets=narrowed)
