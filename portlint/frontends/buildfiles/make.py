"""Makefile conditionals that switch on the vendor: `ifeq ($(USE_ROCM),1)` ... `else` ...
`endif`. Every branch of such a conditional is the port (as in CMake's vendor switch)."""

from __future__ import annotations

import re

from portlint.frontends.buildfiles.cmake import names_vendor

_OPEN = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef)\b(.*)$")
_ELSE = re.compile(r"^\s*else\b(.*)$")
_END = re.compile(r"^\s*endif\b")


def vendor_lines(lines: list[str]) -> dict[int, str]:
    """1-based line -> the vendor condition of the conditional it lies in."""
    out: dict[int, str] = {}
    stack: list[str | None] = []  # per open conditional: its vendor condition or None
    for number, line in enumerate(lines, start=1):
        m = _OPEN.match(line)
        if m:
            stack.append(m.group(2).strip() if names_vendor(m.group(2)) else None)
            continue
        m = _ELSE.match(line)
        if m and stack:
            nested = _OPEN.match(m.group(1))  # `else ifeq (...)`
            if nested and names_vendor(nested.group(2)) and stack[-1] is None:
                stack[-1] = nested.group(2).strip()
            continue
        if _END.match(line) and stack:
            stack.pop()
            continue
        guard = next((g for g in reversed(stack) if g), None)
        if guard:
            out[number] = f"inside a Makefile vendor switch `{guard}`"
    return out
