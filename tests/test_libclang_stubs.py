"""The libclang pass stubs headers no include folder provides. Names one file of a scan found
missing are stubbed up front for the next file (fewer parses), and the pass's result is the
one the parse-and-stub rounds give on their own: scanning files together or one by one makes
no difference, also when a header asks `__has_include` about such a name."""

from __future__ import annotations

from pathlib import Path

from conftest import scan_paths

from portlint.frontends.cuda import libclang_pass as lp

LANES_FROM_HEADER = "constexpr int kGroupLanes = LANES;\n"
KERNEL = "__global__ void k(float* y) { int lane = threadIdx.x % kGroupLanes; y[lane] = 1.f; }\n"


def _findings(paths: list[Path], root: Path) -> dict[str, list[tuple[int, str]]]:
    # the project is `root` (its configuration file is the marker; a file named alone
    # without one is its own folder's, and headers above it are not read)
    res = scan_paths(paths, root=root, select=("PTL102",), config_file=root / "portlint.toml")
    out: dict[str, list[tuple[int, str]]] = {p.name: [] for p in paths}
    for f in res.findings:
        if not f.suppressed:
            out[Path(f.path).name].append((f.span.start_line, f.rule_id))
    return out


def _count_parses(monkeypatch) -> list[int]:
    calls: list[int] = []
    run = lp._Parse.run

    def counted(self, stubs):
        calls.append(1)
        return run(self, stubs)

    monkeypatch.setattr(lp._Parse, "run", counted)
    return calls


def _project(tmp_path: Path, lanes_h: str) -> Path:
    """proj/common/{one,two}.h, which portlint finds from proj/k/ (a quoted include relative
    to an ancestor folder) and libclang, given only proj/k/ to search, does not: it stubs them."""
    (tmp_path / "portlint.toml").write_text("")
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "one.h").write_text("#pragma once\n")
    (tmp_path / "common" / "two.h").write_text("#pragma once\n")
    kernels = tmp_path / "k"
    kernels.mkdir()
    (kernels / "lanes.h").write_text(lanes_h)
    (kernels / "cfg.h").write_text('#pragma once\n#include "lanes.h"\n' + LANES_FROM_HEADER)
    return kernels


def test_known_missing_headers_are_stubbed_up_front(tmp_path, monkeypatch):
    kernels = _project(tmp_path, "#pragma once\n#define LANES 32\n")
    first, second = kernels / "a.cu", kernels / "b.cu"
    first.write_text('#include "common/one.h"\n#include "common/two.h"\n#include "cfg.h"\n' + KERNEL)
    second.write_text('#include "cfg.h"\n#include "common/two.h"\n#include "common/one.h"\n' + KERNEL)
    alone = {**_findings([first], tmp_path), **_findings([second], tmp_path)}
    assert alone == {"a.cu": [(4, "PTL102")], "b.cu": [(4, "PTL102")]}

    calls = _count_parses(monkeypatch)
    assert _findings([first, second], tmp_path) == alone
    # a.cu: one parse per header libclang misses and a last one; b.cu: one parse
    assert len(calls) == 3 + 1


def test_a_header_that_asks_whether_a_stubbed_name_exists_gets_the_rounds_answer(tmp_path, monkeypatch):
    """lanes.h picks 64 lanes when libclang finds `common/one.h`. a.cu includes it, so the
    rounds stub it and lanes.h sees a stub; b.cu does not, so for b.cu it does not exist: a
    stub guessed up front from a.cu would change b.cu's answer, and is not kept."""
    kernels = _project(tmp_path, '#pragma once\n#if __has_include("common/one.h")\n#define LANES 64\n#else\n#define LANES 32\n#endif\n')
    first, second = kernels / "a.cu", kernels / "b.cu"
    first.write_text('#include "common/one.h"\n#include "cfg.h"\n' + KERNEL)
    second.write_text('#include "cfg.h"\n' + KERNEL)
    alone = {**_findings([first], tmp_path), **_findings([second], tmp_path)}
    assert alone == {"a.cu": [], "b.cu": [(2, "PTL102")]}

    calls = _count_parses(monkeypatch)
    assert _findings([first, second], tmp_path) == alone
    # a.cu: two rounds; b.cu: the guess is tried (one parse), refused, then the rounds (one)
    assert len(calls) == 2 + 2
