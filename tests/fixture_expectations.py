"""Reading the expectations written inside fixture files.

In a fixture, a comment on a line says which findings portlint must report *starting* on
that line, and nothing else may be reported anywhere in the file:

    asm("membar.gl;");            // expect: PTL201
    asm("membar.gl;");            // expect: PTL201@5         (and the finding starts in column 5)
    x = t.item()                  # expect: PTL803, PTL808
    // expect-next-line: PTL101      (for lines that cannot carry a comment)
    v = __shfl_sync(FULL_MASK, v, 0);  // related: PTL104  (a use site folded under a finding
                                          at its root, portlint.findings.roots)
    asm("...");                   // expect-suppressed: PTL201   (guard or comment silences it)
    t.nonzero()                   # todo-expect: PTL804    (a known miss: must NOT be reported yet)
    y = x.shape[0]                # ok: PTL801            (a near-miss: the rule stays quiet here)

Every kind takes `-next-line` (`ok-next-line:`, `todo-expect-next-line:`, ...), and every id
an optional `@column` (1-based code points, as the text output prints it). `near-miss:` is
a synonym of `ok:`. Expected, suppressed and related findings are all exhaustive; a `todo-expect`
fails as soon as the finding appears, so that it is promoted to `expect`.

A header comment in the first five lines may set scan options:

    // fixture: select=hipify targets=rocm
    // fixture: families=cuda_api          (also run these families' rules: by default a fixture
                                              runs its own family's, those of the rules its
                                              annotations name, and the tool's rules)
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from portlint.discovery.build_kinds import build_kind

_ID = r"PTL\d{3}(?:@\d+)?"
EXPECT = re.compile(
    r"(?://|#)\s*(?P<kind>expect|todo-expect|ok|near-miss|related)(?P<suppressed>-suppressed)?(?P<next>-next-line)?:"
    rf"\s*(?P<ids>{_ID}(?:\s*,\s*{_ID})*)"
)
HEADER = re.compile(r"(?://|#)\s*fixture:\s*(?P<opts>.*)$")
SNAPSHOT_DIR = "__snapshots__"


@dataclass
class Expectations:
    active: Counter = field(default_factory=Counter)  # (line, rule) -> count
    suppressed: Counter = field(default_factory=Counter)
    todo: Counter = field(default_factory=Counter)  # known misses: (line, rule)
    near_miss: set = field(default_factory=set)  # (line, rule) where the rule must stay quiet
    related: Counter = field(default_factory=Counter)  # (line, rule) -> use sites folded under a finding
    columns: Counter = field(default_factory=Counter)  # (line, rule, column) -> count, where a column is given
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
            kind = m.group("kind")
            target_line = number + 1 if m.group("next") else number
            if m.group("suppressed") and kind != "expect":
                raise ValueError(f"{path}:{number}: only `expect` takes -suppressed")
            for item in (i.strip() for i in m.group("ids").split(",")):
                rid, _, col = item.partition("@")
                key = (target_line, rid)
                if kind in ("ok", "near-miss"):
                    exp.near_miss.add(key)
                elif kind == "related":
                    exp.related[key] += 1
                elif kind == "todo-expect":
                    exp.todo[key] += 1
                else:
                    (exp.suppressed if m.group("suppressed") else exp.active)[key] += 1
                    if col:
                        exp.columns[(target_line, rid, int(col))] += 1
    return exp


FIXTURE_SUFFIXES = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".h", ".hpp", ".py", ".ptx"}


def fixture_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and (p.suffix in FIXTURE_SUFFIXES or build_kind(p.name, b"nvcc")) and ".fixed." not in p.name
        and "__pycache__" not in p.parts and SNAPSHOT_DIR not in p.parts
    )


def snapshot_path(path: Path) -> Path:
    """Where a fixture's snapshot lives: `__snapshots__/<file name>.snap` beside it (the full
    name, so `x.cu` and `x.cuh` do not share one; the folder is a default exclude of
    discovery, so scanning fixtures/ never reads a snapshot as a Dockerfile or source)."""
    return path.parent / SNAPSHOT_DIR / (path.name + ".snap")
