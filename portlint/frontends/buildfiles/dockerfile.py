"""Dockerfiles as instructions: continuation lines joined, each instruction with the line
and column of every character of its text (so a finding points into the original line)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# base images that carry NVIDIA's CUDA stack
NVIDIA_IMAGE = re.compile(r"^(?:docker\.io/)?(?:nvidia/cuda|nvcr\.io/nvidia/|pytorch/pytorch:[^\s]*cuda)", re.I)
_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+")


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case
    text: str  # the arguments, continuation lines joined with a space
    positions: tuple[tuple[int, int], ...]  # (line, 1-based column) of each character of text


def instructions(lines: list[str]) -> list[Instruction]:
    out = []
    text: list[str] = []
    pos: list[tuple[int, int]] = []
    keyword = None
    for number, line in enumerate(lines, start=1):
        if keyword is None:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = _INSTRUCTION.match(line)
            if m is None:
                continue
            keyword, start = m.group(1).upper(), m.end()
        else:
            if line.lstrip().startswith("#"):
                continue  # a comment inside a continued instruction
            start = len(line) - len(line.lstrip())
        body = line[start:].rstrip()
        cont = body.endswith("\\")
        if cont:
            body = body[:-1]
        if text:
            text.append(" ")
            pos.append(pos[-1])
        text.append(body)
        pos.extend((number, start + i + 1) for i in range(len(body)))
        if not cont:
            out.append(Instruction(keyword, "".join(text), tuple(pos)))
            keyword, text, pos = None, [], []
    if keyword is not None and text:
        out.append(Instruction(keyword, "".join(text), tuple(pos)))
    return out


def image_of(instruction: Instruction) -> tuple[str, int] | None:
    """(image, offset) of a FROM instruction (the `--platform=` option skipped)."""
    for m in re.finditer(r"\S+", instruction.text):
        if not m.group().startswith("--"):
            return m.group(), m.start()
    return None
