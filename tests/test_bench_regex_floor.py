"""bench/regex_floor.py: the one-regex-per-family set, its semgrep twin and the floor loop."""

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import regex_floor  # noqa: E402


def test_one_pattern_for_each_rule_family():
    families = {p.name for p in (REPO / "rules").iterdir() if p.is_dir() and any(p.glob("PTL*.toml"))} - {"tool"}
    cats = regex_floor.load_categories()
    assert sorted(c["family"] for c in cats) == sorted(families)


def test_semgrep_config_is_generated_from_the_set():
    assert (REPO / "bench" / "semgrep" / "regex_equivalent.yml").read_text() == regex_floor.semgrep_config(regex_floor.load_categories())


def test_semgrep_config_round_trips_the_patterns():
    # YAML single-quoted scalars: the only escape is a doubled quote
    text = (REPO / "bench" / "semgrep" / "regex_equivalent.yml").read_text()
    got = [line.split("pattern-regex: ", 1)[1] for line in text.splitlines() if "pattern-regex: " in line]
    want = [c["pattern"] for c in regex_floor.load_categories()]
    assert [g[1:-1].replace("''", "'") for g in got] == want


def test_floor_counts_matching_lines_per_family_in_both_modes(tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text("#define WARP_SIZE 32\nint x = 1;\nasm volatile(\"mov.u32 %0, %laneid;\" : \"=r\"(x));\n")
    py = tmp_path / "m.py"
    py.write_text("import torch\nx = torch.zeros(3).cuda()\ny = x.item()\nif torch.cuda.is_available():\n    pass\n")
    cats = regex_floor.load_categories()
    for mode in ("line", "file"):
        r = regex_floor.floor([cu, py], cats, mode)
        assert r["files"] == 2 and r["lines"] == 8
        hits = r["matching_lines"]
        assert hits["cuda_warp"] == 1 and hits["cuda_ptx"] == 1
        assert hits["device_strings"] == 2  # .cuda( and torch.cuda.is_available()
        assert hits["xla_tracing"] == 1  # .item()
        assert hits["triton"] == 0 and hits["collectives"] == 0
