"""Issue 26, round seven: the attacker's tests (a pull request's tree is hostile), each with the
near misses that must keep working beside it (docs/threat-model.md, "Round seven").

A. The guard map read a header's macros by recursing into what it includes, several Python
   frames per include level: 300 headers each including the next raised RecursionError in
   PTL102 and PTL204 (two PTL003 findings, the rules' findings lost). Now the headers below
   are read first from a stack of portlint's own (`guards._header_macros`).
B. Each scanned file walked the include lines of every header it reaches again, searching
   each name anew, and MAX_HEADERS bounded headers, not their bytes: 20 kernels in 20
   folders over 8 MB of headers took 45 s. Now a quoted include found beside its header is
   searched once per scan (`IncludeGraph._beside`), a walk looks at no more than
   MAX_INCLUDE_LINES #include lines, the guard map reads only the headers the walk reached,
   and a file whose walk stopped gets a notice."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import run_portlint_bytes as run
from conftest import scan_paths

SCAN = ("scan", "--no-progress", "--no-cache", "--format", "json")
KERNEL = '__global__ void k(float* y) { int lane = threadIdx.x % kGroupLanes; y[lane] = 1.f; }\n'


def _json(proc) -> dict:
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _chain(tree: Path, depth: int, last: str = "constexpr int kGroupLanes = 32;\n") -> None:
    """k.cu includes h0.h, each hN.h includes hN+1.h, the last holds `last`."""
    tree.mkdir(parents=True, exist_ok=True)
    for i in range(depth):
        body = f'#include "h{i + 1}.h"\n' if i + 1 < depth else last
        (tree / f"h{i}.h").write_text("#pragma once\n" + body)
    (tree / "k.cu").write_text('#include "h0.h"\n' + KERNEL)


def test_a_a_deep_include_chain_is_no_internal_error(tmp_path):
    """300 headers in a chain, the last giving the warp width: no PTL003, and the PTL102 the
    constant makes is found (the walk reaches all of them)."""
    _chain(tmp_path / "tree", 300)
    rules = [f["rule"] for f in _json(run(*SCAN, "tree", cwd=tmp_path))["findings"]]
    assert "PTL003" not in rules, rules
    assert "PTL102" in rules, rules


def test_a_a_chain_past_the_header_bound_says_so(tmp_path):
    """5,000 headers in a chain: no internal error, and a notice that the walk stopped."""
    _chain(tmp_path / "tree", 5000)
    out = _json(run(*SCAN, "tree", cwd=tmp_path))
    assert "PTL003" not in [f["rule"] for f in out["findings"]]
    assert any("include walk stopped" in n["message"] for n in out.get("notices", [])), out.get("notices")


def test_a_near_miss_macros_through_a_chain_still_decide_branches(tmp_path):
    """A macro #defined four headers down still selects the #if branch, an #undef on the way
    still removes it, and an include cycle still ends (each header read once)."""
    tree = tmp_path / "tree"
    _chain(tree, 4, "#define USE_WIDE 1\n")
    (tree / "k.cu").write_text('#include "h0.h"\n#if USE_WIDE\nconstexpr int kGroupLanes = 32;\n#else\nconstexpr int kGroupLanes = 64;\n#endif\n' + KERNEL)
    assert "PTL102" in [f["rule"] for f in _json(run(*SCAN, "tree", cwd=tmp_path))["findings"]]
    (tree / "h2.h").write_text('#pragma once\n#include "h3.h"\n#undef USE_WIDE\n#include "h0.h"\n')
    rules = [f["rule"] for f in _json(run(*SCAN, "tree", cwd=tmp_path))["findings"]]
    assert "PTL102" not in rules and "PTL003" not in rules, rules


def _fan(tree: Path, headers: int, folders: int) -> int:
    """`headers` headers in hdr/, each including every one of them and as many names no
    folder holds; one kernel in each of `folders` folders including the first. Returns the
    include lines of the headers."""
    (tree / "hdr").mkdir(parents=True)
    lines = "".join(f'#include "h{j}.h"\n' for j in range(headers))
    for i in range(headers):
        (tree / "hdr" / f"h{i}.h").write_text("#pragma once\n" + lines)
    for d in range(folders):
        (tree / f"s{d}").mkdir()
        (tree / f"s{d}" / "k.cu").write_text('#include "../hdr/h0.h"\n__global__ void k(float* y) { y[threadIdx.x] = 1.f; }\n')
    return headers * headers


def _searches(monkeypatch) -> list:
    """The file-system questions the include search asks (`IncludeGraph._file`, one per
    folder tried for a name), counted."""
    from portlint.frontends.cuda import includes

    calls: list = []
    original = includes.IncludeGraph._file

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(includes.IncludeGraph, "_file", counted)
    return calls


def test_b_header_includes_are_searched_once_per_scan_not_once_per_file(tmp_path, monkeypatch):
    """40 headers of 40 includes, 20 kernels in 20 folders: the headers' names are searched
    about once each (the walk's first meeting), not 20 times over."""
    calls = _searches(monkeypatch)
    tree = tmp_path / "tree"
    lines = _fan(tree, 40, 20)
    result = scan_paths([tree], root=tree, cache_dir=None)
    assert not [f for f in result.findings if f.rule == "PTL003"]
    assert len(calls) <= 4 * (lines + 20 * 2), len(calls)


def test_b_include_lines_walked_per_file_are_bounded(tmp_path, monkeypatch):
    """One header of twice MAX_INCLUDE_LINES includes of names that exist nowhere (a miss
    depends on the file's search folders, so it is searched per file): the walk stops at the
    bound, with a notice."""
    from portlint.frontends.cuda import includes

    calls = _searches(monkeypatch)
    tree = tmp_path / "tree"
    tree.mkdir()
    bound = getattr(includes, "MAX_INCLUDE_LINES", 20_000)
    extra = 2 * bound
    (tree / "big.h").write_text("".join(f'#include "nowhere{j}.h"\n' for j in range(extra)))
    (tree / "k.cu").write_text('#include "big.h"\n__global__ void k(float* y) { y[threadIdx.x] = 1.f; }\n')
    result = scan_paths([tree], root=tree, cache_dir=None)
    # a miss is looked for in two folders here (the header's, the kernel's): a walk that
    # stops at the bound, and no second search of the same names
    assert len(calls) <= 3 * bound, len(calls)
    assert any("include walk stopped" in n.message for n in result.notices), [n.message for n in result.notices]


def test_b_near_miss_search_folders_still_apply_per_file(tmp_path):
    """The memo holds only what a header finds beside itself: a header's quoted include that
    each kernel's own folder answers differently still gets each kernel's answer, and a
    header within the bounds gives no notice."""
    tree = tmp_path / "tree"
    (tree / "hdr").mkdir(parents=True)
    (tree / "hdr" / "common.h").write_text('#pragma once\n#include "lanes.h"\n')
    for name, width in (("a", 32), ("b", 64)):
        (tree / name).mkdir()
        (tree / name / "lanes.h").write_text(f"#pragma once\nconstexpr int kGroupLanes = {width};\n")
        (tree / name / "k.cu").write_text('#include "../hdr/common.h"\n' + KERNEL)
    out = _json(run(*SCAN, "tree", cwd=tmp_path))
    flagged = sorted(f["path"] for f in out["findings"] if f["rule"] == "PTL102")
    assert flagged == ["tree/a/k.cu"], out["findings"]
    assert not any("include walk stopped" in n["message"] for n in out.get("notices", []))
