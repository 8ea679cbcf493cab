"""Reading the expectations written inside fixture files.

In a fixture, a comment on a line says which findings portlint must report *starting* on
that line, and nothing else may be reported anywhere in the file:

    asm("membar.gl;");            // expect: PTL201
    x = t.item()                  # expect: PTL803, PTL808
    // expect-next-line: PTL101      (for lines that cannot carry a comment)
    asm("...");                   // expect-suppressed: PTL201   (guard or comment silences it)

A header comment in the first five lines may set scan options:

    // fixture: select=hipify targets=rocm
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from portlint.build.kinds import build_kind

EXPECT = re.compile(r"(?://|#)\s*expect(?P<kind>-next-line|-suppressed)?:\s*(?P<ids>PTL\d{3}(?:\s*,\s*PTL\d{3})*)")
HEADER = re.compile(r"(?://|#)\s*fixture:\s*(?P<opts>.*)$")


@dataclass
class Expectations:
    active: Counter = field(default_factory=Counter)  # (line, rule) -> count
    suppressed: Counter = field(default_factory=Counter)
    options: dict[str, str] = field(default_factory=dict)


def read_expectations(path: Path) -> Expectations:
    exp = Expectations()
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    for number, line in enumerate(lines, start=1):
        if number <= 5:
            h = HEADER.search(line)
            if h:
                for opt in h.group("opts").split():
                    key, _, value = opt.partition("=")
                    exp.options[key] = value
        for m in EXPECT.finditer(line):
            ids = [i.strip() for i in m.group("ids").split(",")]
            kind = m.group("kind")
            target_line = number + 1 if kind == "-next-line" else number
            bucket = exp.suppressed if kind == "-suppressed" else exp.active
            for rid in ids:
                bucket[(target_line, rid)] += 1
    return exp


FIXTURE_SUFFIXES = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".h", ".hpp", ".py", ".ptx"}


def fixture_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and (p.suffix in FIXTURE_SUFFIXES or build_kind(p.name, b"nvcc")) and ".fixed." not in p.name
        and "__pycache__" not in p.parts
    )
