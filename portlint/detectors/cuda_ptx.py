"""Inline PTX and NVIDIA ISA in CUDA sources (PTL2xx)."""

from __future__ import annotations

import re

from portlint.cuda.parse import node_text
from portlint.cuda.ptx import classify_instruction, looks_like_host_asm, looks_like_ptx, ptx_instructions
from portlint.cuda.spaces import space_map
from portlint.registry import detector

_ASM_IN_MACRO = re.compile(r"\b(?:asm|__asm__|__asm)\s*(?:volatile|__volatile__)?\s*\(\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)")
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")


def _template_of(asm_node) -> str:
    """The assembly template: the concatenated string literals before the operand lists."""
    parts = []
    for child in asm_node.children:
        if child.type in ("string_literal", "concatenated_string"):
            parts.extend(m.group(1) for m in _STRING.finditer(node_text(child)))
        elif child.type.startswith("gnu_asm_") and child.type != "gnu_asm_qualifier":
            break
    return "".join(parts)


def _suggestion(instructions: list[str]) -> tuple[str, list[str]]:
    """HIP counterparts for the instructions PTL201 owns, and the owners of the others."""
    lines: list[str] = []
    owners: list[str] = []
    seen: set[str] = set()
    for stmt in instructions:
        owner, hip, prefix = classify_instruction(stmt)
        owners.append(owner)
        if owner != "PTL201" or prefix in seen:
            continue
        seen.add(prefix)
        if hip:
            lines.append(f"`{prefix}` -> {hip}")
        else:
            lines.append(f"`{prefix}`: no HIP intrinsic; write it in C++ and let the compiler pick AMD instructions")
    return "\n".join(lines), owners


def _report_asm(ctx, where, template: str) -> None:
    instructions = ptx_instructions(template)
    suggestion, owners = _suggestion(instructions)
    if owners and all(o != "PTL201" for o in owners):
        return  # a more specific rule (wgmma, cp.async, ...) reports this statement
    first = instructions[0].split()[0] if instructions and instructions[0].split() else "asm"
    ctx.report(
        where,
        mnemonic=first.replace("%%", "%"),
        suggestion=(
            "HIP has no inline PTX. Replace the asm with:\n" + suggestion
            if suggestion
            else "HIP has no inline PTX: write the operation in C++ or with a HIP intrinsic."
        )
        + "\nKeep the PTX only under `#ifndef __HIP_PLATFORM_AMD__` with the HIP form in the `#else` branch.",
    )


@detector("PTL201", nodes=("gnu_asm_expression", "preproc_function_def", "preproc_def"), tokens=("asm",))
def inline_ptx_asm(node, ctx) -> None:
    """`asm("...")` with PTX in device code, also behind a macro."""
    if node.type == "gnu_asm_expression":
        template = _template_of(node)
        device = ctx.fact(space_map).is_device(node)
        if not device:
            # host code: only PTX text itself is a finding (x86 `rdtsc` and friends are fine)
            if not looks_like_ptx(template):
                return
        elif looks_like_host_asm(template):
            return
        _report_asm(ctx, node, template)
        return
    # a macro whose body is an asm statement: report the definition once
    value = node.child_by_field_name("value")
    if value is None:
        return
    body = node_text(value)
    m = _ASM_IN_MACRO.search(body)
    if not m:
        return
    template = "".join(s.group(1) for s in _STRING.finditer(m.group(1)))
    if looks_like_ptx(template):
        _report_asm(ctx, node, template)
