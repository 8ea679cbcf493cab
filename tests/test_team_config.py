"""What a porting team configures, through the real command line (issue 27): target
releases (`[tool.portlint.versions]`, PTL110 on both sides of ROCm 7.0), per-rule and
per-target severity, extend-select / extend-ignore and selectors by name, family and glob,
the targets line that opens the summary, `portlint init`, `--watch`, and the rule pages
and schemas inside the wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, run_portlint
from htmltree import parse_html

from portlint.core.config import DEFAULT_VERSIONS, load_config, Settings

WARP = """__global__ void k(int* out) {
  int v = threadIdx.x;
  __syncwarp();
  unsigned long long live = __activemask();
  asm volatile("membar.gl;");
  out[threadIdx.x] = v + (live != 0);
}
"""


def _project(tmp_path, config: str = "", name: str = "k.cu", text: str = WARP) -> Path:
    (tmp_path / name).write_text(text)
    (tmp_path / "portlint.toml").write_text(config)
    return tmp_path


def _rules(proc) -> list[tuple[int, str, str]]:
    """(line, rule, severity) of each concise output line."""
    out = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[1].startswith("PTL") and ":" in parts[0]:
            out.append((int(parts[0].split(":")[1]), parts[1], parts[2]))
    return out


# -- versions ------------------------------------------------------------------------------

@pytest.mark.parametrize(("rocm", "expected"), [
    # before 6.2 the builtins are undeclared: the file does not compile (hipcc 5.2:
    # "use of undeclared identifier '__syncwarp'", bench/conversion_samples/syncwarp_scan.cu)
    ("5.2", [(3, "PTL110", "error"), (4, "PTL110", "error")]),
    ("6.1", [(3, "PTL110", "error"), (4, "PTL110", "error")]),
    # 6.2-6.4.x (HIP's CHANGELOG): `__activemask` and the other sync builtins are opt-in
    # (HIP_ENABLE_WARP_SYNC_BUILTINS); `__syncwarp` is added only in 7.0
    ("6.2", [(3, "PTL110", "error"), (4, "PTL110", "warning")]),
    ("6.3", [(3, "PTL110", "error"), (4, "PTL110", "warning")]),
    ("6.4", [(3, "PTL110", "error"), (4, "PTL110", "warning")]),
    ("6.4.3", [(3, "PTL110", "error"), (4, "PTL110", "warning")]),
    # 7.0: declared by default, `__syncwarp` included
    ("7.0", []),
    ("7.1.1", []),
])
def test_ptl110_follows_the_configured_rocm_release(tmp_path, rocm, expected):
    _project(tmp_path, f'targets = ["rocm"]\n[versions]\nrocm = "{rocm}"\n')
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", "--select", "PTL110", cwd=tmp_path)
    assert _rules(proc) == expected, proc.stdout + proc.stderr
    assert proc.returncode == (1 if expected else 0)
    if rocm.startswith("6.") and rocm >= "6.2":
        assert f"`__activemask` is declared in HIP {rocm} only when HIP_ENABLE_WARP_SYNC_BUILTINS is defined" in proc.stdout
        assert "(by default from ROCm 7.0;" in proc.stdout
        assert f"`__syncwarp` is undeclared in HIP {rocm}" in proc.stdout
    if rocm == "6.1":
        assert "undeclared in HIP before ROCm 6.2" in proc.stdout


MASK32 = """__global__ void k(float* out) {
  float v = out[threadIdx.x];
  v += __shfl_xor_sync(0xffffffff, v, 1);
  out[threadIdx.x] = v;
}
"""


@pytest.mark.parametrize(("rocm", "says", "not_says"), [
    # no `*_sync` at all: the rewrite is the maskless HIP shuffle, not a wider mask
    ("6.1", ["HIP 6.1 has no `*_sync` warp intrinsics (undeclared before ROCm 6.2)", "`__shfl_xor(v, o)`",
             "HIP before ROCm 6.2 has no `*_sync` intrinsics: on AMD call the maskless form"],
     ["static_assert", "using lane_mask_t"]),
    # opt-in (HIP_ENABLE_WARP_SYNC_BUILTINS) and static_asserted where declared
    ("6.3", ["HIP 6.3 declares the `*_sync` forms only with HIP_ENABLE_WARP_SYNC_BUILTINS",
             "static_assert that the mask is 64-bit", "using lane_mask_t = unsigned long long"],
     ["undeclared before ROCm 6.2"]),
    ("6.4", ["HIP 6.4 declares the `*_sync` forms only with HIP_ENABLE_WARP_SYNC_BUILTINS",
             "static_assert that the mask is 64-bit", "using lane_mask_t = unsigned long long"],
     ["undeclared before ROCm 6.2"]),
    ("7.0", ["HIP's `*_sync` forms static_assert that the mask is 64-bit", "using lane_mask_t = unsigned long long"],
     ["undeclared", "HIP_ENABLE_WARP_SYNC_BUILTINS"]),
])
def test_ptl104_verdict_follows_the_configured_rocm_release(tmp_path, rocm, says, not_says):
    _project(tmp_path, f'targets = ["rocm"]\n[versions]\nrocm = "{rocm}"\n', text=MASK32)
    proc = run_portlint("scan", "k.cu", "--no-cache", "--select", "PTL104", cwd=tmp_path)
    concise = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", "--select", "PTL104", cwd=tmp_path)
    assert _rules(concise) == [(3, "PTL104", "error")] and proc.returncode == 1, concise.stdout + concise.stderr
    for needle in says:
        assert needle in proc.stdout, (needle, proc.stdout)
    for needle in not_says:
        assert needle not in proc.stdout, (needle, proc.stdout)
    # the SARIF message is the same text
    log = json.loads(run_portlint("scan", "k.cu", "--no-cache", "--format", "sarif", "--select", "PTL104", cwd=tmp_path).stdout)
    (result,) = log["runs"][0]["results"]
    assert says[0] in result["message"]["text"]


BOTH = """__global__ void k(float* out) {
  float v = out[threadIdx.x];
  unsigned long long m = __match_any_sync(0xffffffff, v);
  out[threadIdx.x] = v + (m != 0);
}
"""


@pytest.mark.parametrize(("rocm", "ptl110", "ptl104"), [
    # 6.3: opt-in for both rules
    ("6.3", "`__match_any_sync` is declared in HIP 6.3 only when HIP_ENABLE_WARP_SYNC_BUILTINS is defined",
     "HIP 6.3 declares the `*_sync` forms only with HIP_ENABLE_WARP_SYNC_BUILTINS"),
    ("6.4", "`__match_any_sync` is declared in HIP 6.4 only when HIP_ENABLE_WARP_SYNC_BUILTINS is defined",
     "HIP 6.4 declares the `*_sync` forms only with HIP_ENABLE_WARP_SYNC_BUILTINS"),
    # 7.0: declared by default for both (PTL110 quiet, PTL104 the static_assert)
    ("7.0", None, "HIP's `*_sync` forms static_assert that the mask is 64-bit"),
])
def test_ptl104_and_ptl110_agree_on_the_release(tmp_path, rocm, ptl110, ptl104):
    _project(tmp_path, f'targets = ["rocm"]\n[versions]\nrocm = "{rocm}"\n', text=BOTH)
    proc = run_portlint("scan", "k.cu", "--no-cache", "--select", "PTL104,PTL110", cwd=tmp_path)
    concise = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", "--select", "PTL104,PTL110", cwd=tmp_path)
    rules = {r for _, r, _ in _rules(concise)}
    assert rules == ({"PTL104", "PTL110"} if ptl110 else {"PTL104"}), concise.stdout + concise.stderr
    assert ptl104 in proc.stdout, proc.stdout
    if ptl110:
        assert ptl110 in proc.stdout, proc.stdout
    if ptl110:
        assert "by default from ROCm 7.0" in proc.stdout, proc.stdout


def test_default_release_is_rocm_7_and_shows_in_text_sarif_and_report(tmp_path):
    _project(tmp_path)
    text = run_portlint("scan", "k.cu", "--no-cache", cwd=tmp_path)
    assert "PTL110" not in text.stdout and "PTL201" in text.stdout  # rocm 7.0: the builtins are there
    summary = text.stdout.split("\n\n")[-1].splitlines()
    assert summary[0].startswith("targets: all four (rocm, tpu, trainium, gaudi) \u2014 set `targets` (or --target) to narrow")
    assert "versions: rocm 7.0, rccl 2.21, triton 3.9, jax 0.10, neuron 2.26, gaudi 1.22" in summary[0]
    assert summary[1].startswith("Found 1 problem")
    log = json.loads(run_portlint("scan", "k.cu", "--no-cache", "--format", "sarif", cwd=tmp_path).stdout)
    props = log["runs"][0]["properties"]
    assert props["portlint/versions"] == DEFAULT_VERSIONS and props["portlint/targetsDeclared"] is False
    report = json.loads(run_portlint("report", "k.cu", "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    assert report["versions"] == DEFAULT_VERSIONS and report["targets_declared"] is False
    md = run_portlint("report", "k.cu", "--no-cache", "--format", "markdown", cwd=tmp_path).stdout
    assert "targets: all four" in md and "versions: rocm 7.0" in md


def test_narrowed_targets_show_their_own_releases(tmp_path):
    _project(tmp_path, 'targets = ["rocm"]\n[versions]\nrocm = "6.1"\n')
    text = run_portlint("scan", "k.cu", "--no-cache", cwd=tmp_path).stdout
    assert "targets: rocm; versions: rocm 6.1, rccl 2.21, triton 3.9\n" in text
    log = json.loads(run_portlint("scan", "k.cu", "--no-cache", "--format", "sarif", cwd=tmp_path).stdout)
    assert log["runs"][0]["properties"]["portlint/versions"] == {"rocm": "6.1", "rccl": "2.21", "triton": "3.9"}
    html = run_portlint("report", "k.cu", "--no-cache", cwd=tmp_path).stdout
    assert "targets: rocm; versions: rocm 6.1" in html
    report = json.loads(run_portlint("scan", "k.cu", "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    assert report["versions"] == {"rocm": "6.1", "rccl": "2.21", "triton": "3.9"}


@pytest.mark.parametrize(("config", "needle"), [
    ('[versions]\nrocm = 6.2\n', 'versions.rocm must be a string (write rocm = "6.2")'),
    ('[versions]\nrocm = "latest"\n', "is not a release number"),
    ('[versions]\ncuda = "12.4"\n', "unknown stack 'cuda'"),
    ('versions = "rocm"\n', "versions must be a table"),
    ('severity = { PTL110 = "fatal" }\n', "is not one of error, warning, note"),
    ('severity = { PTL110 = { cuda = "note" } }\n', "unknown target 'cuda'"),
    ('severity = { no-such-rule = "note" }\n', "matches no rule"),
    ('extend-select = ["PTL9*9*"]\n', "matches no rule"),
])
def test_bad_versions_and_severities_are_one_line_usage_errors(tmp_path, config, needle):
    _project(tmp_path, config)
    proc = run_portlint("scan", "k.cu", "--no-cache", cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and needle in lines[0], proc.stderr


# -- severity ------------------------------------------------------------------------------

def test_severity_per_rule_changes_the_level_and_the_exit_code(tmp_path):
    _project(tmp_path, 'severity = { inline-ptx-asm = "note" }\n')
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", cwd=tmp_path)
    assert _rules(proc) == [(5, "PTL201", "note")] and proc.returncode == 0, proc.stdout  # fail-on warning
    log = json.loads(run_portlint("scan", "k.cu", "--no-cache", "--format", "sarif", cwd=tmp_path).stdout)
    run = log["runs"][0]
    (result,) = run["results"]
    assert result["level"] == "note" and result["properties"]["targets"] == {"rocm": "note"}
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "PTL201")
    assert rule["defaultConfiguration"]["level"] == "note"
    assert run["properties"]["portlint/severity"] == {"PTL201": {"*": "note"}}


def test_severity_per_target(tmp_path):
    _project(tmp_path, 'severity = { PTL055 = { tpu = "note", gaudi = "warning" } }\n', name="requirements.txt", text="cupy-cuda12x\n")
    proc = run_portlint("scan", "requirements.txt", "--no-cache", cwd=tmp_path)
    assert "targets: rocm error, tpu note, trainium error, gaudi warning" in proc.stdout, proc.stdout
    assert proc.returncode == 1
    narrowed = run_portlint("scan", "requirements.txt", "--no-cache", "--target", "tpu", cwd=tmp_path)
    assert "PTL055 note" in narrowed.stdout and narrowed.returncode == 0, narrowed.stdout



REQS = "torch==2.4.0+cu121\ncupy-cuda12x>=13\n--extra-index-url https://download.pytorch.org/whl/cu121\n"
_COUNTERPART = {"rocm": "rocm: ", "tpu": "tpu: ", "trainium": "trainium: ", "gaudi": "gaudi: "}


@pytest.mark.parametrize(("how", "targets"), [
    ("config", ["rocm"]),
    ("option", ["tpu", "gaudi"]),
    ("none", ["rocm", "tpu", "trainium", "gaudi"]),
])
def test_ptl055_names_the_counterparts_of_the_targets_in_scope_only(tmp_path, how, targets):
    config = f"targets = {json.dumps(targets)}\n" if how == "config" else ""
    _project(tmp_path, config, name="requirements.txt", text=REQS)
    extra = ["--target", ",".join(targets)] if how == "option" else []
    proc = run_portlint("scan", "requirements.txt", "--no-cache", "--format", "concise", "--select", "PTL055", *extra, cwd=tmp_path)
    lines = [line for line in proc.stdout.splitlines() if " PTL055 " in line]
    assert len(lines) == 3 and proc.returncode == 1, proc.stdout + proc.stderr
    for line in lines:
        # the message names the targets whose counterparts it lists, not "this target" for several
        assert "this target" not in line, line
        where = targets[0] if len(targets) == 1 else ", ".join(targets[:-1]) + " or " + targets[-1]
        advice = line.split(f"has no build for {where}: ", 1)[1]
        named = [t for t, prefix in _COUNTERPART.items() if advice.startswith(prefix) or f"; {prefix}" in advice]
        assert named == targets, line


def test_ptl055_message_leaves_out_the_target_a_sibling_file_ports_to(tmp_path):
    """requirements-cuda.txt beside requirements-rocm.txt: rocm is that sibling's business, so
    the findings are for the other targets, and the message names and advises those alone."""
    (tmp_path / "requirements-rocm.txt").write_text("torch\n")
    _project(tmp_path, 'targets = ["rocm", "tpu"]\n', name="requirements-cuda.txt", text=REQS)
    proc = run_portlint("scan", "requirements-cuda.txt", "--no-cache", "--format", "concise", "--select", "PTL055", cwd=tmp_path)
    lines = [line for line in proc.stdout.splitlines() if " PTL055 " in line]
    assert len(lines) == 3 and proc.returncode == 1, proc.stdout + proc.stderr
    for line in lines:
        assert "has no build for tpu: tpu: " in line and "rocm: " not in line, line


def test_report_header_names_targets_once_and_rule_badges_follow_the_configuration(tmp_path):
    _project(tmp_path, 'targets = ["rocm", "tpu"]\nseverity = { PTL055 = { rocm = "note" }, PTL201 = "warning" }\n')
    (tmp_path / "requirements.txt").write_text("cupy-cuda12x\n")
    proc = run_portlint("report", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = parse_html(proc.stdout)
    (header,) = page.find_all("header")
    head = header.text()
    assert head.count("targets:") == 1 and "targets: rocm, tpu; versions: rocm 7.0" in head, head

    def badges(rule_id: str) -> dict[str, str]:
        (row,) = [r for r in page.find_all("tr") if r.attrs.get("id") == f"rule-{rule_id}"]
        cells = row.find_all("td")
        return {b.text(): next(c for c in b.attrs["class"].split() if c != "t") for b in cells[1].find_all("span", cls="t")}

    # PTL055: error on every target by its rule file; configured note on rocm; trainium and gaudi out of scope
    assert badges("PTL055") == {"rocm": "note", "tpu": "error"}
    # PTL201 (inline PTX, rocm only): the `*` entry applies
    assert badges("PTL201") == {"rocm": "warning"}
    # the same levels the findings got
    other = run_portlint("report", ".", "--no-cache", "--target", "tpu", cwd=tmp_path)
    page = parse_html(other.stdout)
    assert badges("PTL055") == {"tpu": "error"}
    head = page.find_all("header")[0].text()
    assert head.count("targets:") == 1 and "targets: tpu; versions: jax 0.10" in head, head


# -- selection -----------------------------------------------------------------------------

HIPIFY = "#include <cuda_runtime.h>\nvoid f(float* p) { cudaMalloc(&p, 4); }\n__global__ void k(unsigned* o) {\n  asm volatile(\"membar.gl;\");\n}\n"


def test_select_replaces_the_defaults_and_says_so_extend_select_adds(tmp_path):
    _project(tmp_path, "", text=HIPIFY)
    only = run_portlint("scan", "k.cu", "--no-cache", "--select", "hipify", cwd=tmp_path)
    assert "PTL201" not in only.stdout and "PTL601" in only.stdout
    assert "rules: only PTL601 selected: --select / `select` replace the default rules; --extend-select" in only.stdout
    both = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", "--extend-select", "hipify", cwd=tmp_path)
    assert {r for _, r, _ in _rules(both)} == {"PTL201", "PTL601"}, both.stdout
    (tmp_path / "portlint.toml").write_text('extend-select = ["hipify"]\nextend-ignore = ["cuda_ptx"]\n')
    cfg = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", cwd=tmp_path)
    assert {r for _, r, _ in _rules(cfg)} == {"PTL601"}, cfg.stdout
    plain = run_portlint("scan", "k.cu", "--no-cache", "--isolated", cwd=tmp_path).stdout
    assert "list them with --extend-select hipify, apply them with --fix --select hipify" in plain


@pytest.mark.parametrize("selector", ["inline-ptx-asm", "cuda_ptx", "PTL20*", "ptl201", "PTL2", "*-ptx-asm"])
def test_selectors_by_name_family_glob_and_prefix(tmp_path, selector):
    _project(tmp_path)
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", "--select", selector, cwd=tmp_path)
    assert {r for _, r, _ in _rules(proc)} == {"PTL201"}, (selector, proc.stdout, proc.stderr)
    ignored = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", "--ignore", selector, cwd=tmp_path)
    assert "PTL201" not in ignored.stdout


def test_select_by_family_runs_the_whole_family(tmp_path):
    _project(tmp_path, '[versions]\nrocm = "6.1"\n')
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "concise", "--select", "cuda_warp", cwd=tmp_path)
    assert {r for _, r, _ in _rules(proc)} == {"PTL110"}, proc.stdout


# -- init ----------------------------------------------------------------------------------

def test_init_guesses_targets_from_imports_and_builds_and_the_section_loads(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "src" / "model.py").write_text("import jax\nfrom habana_frameworks.torch import core\n")
    (tmp_path / "src" / "notes.py").write_text("# we might try torch_neuronx one day\n")  # a comment, not an import
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    proc = run_portlint("init", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "x"\n\n[tool.portlint]\n')
    assert 'targets = ["rocm", "tpu", "gaudi"]' in text
    assert "#   rocm: CUDA sources (src/k.cu)" in text and "#   tpu: JAX (src/model.py)" in text
    settings = load_config(tmp_path / "pyproject.toml", Settings())
    assert settings.targets == ("rocm", "tpu", "gaudi") and settings.versions == DEFAULT_VERSIONS
    again = run_portlint("init", cwd=tmp_path)
    assert again.returncode == 2 and "already configures portlint" in again.stderr
    assert (tmp_path / "pyproject.toml").read_text() == text
    scan = run_portlint("scan", "src", "--no-cache", cwd=tmp_path)
    assert "targets: rocm, tpu, gaudi;" in scan.stdout


def test_init_without_evidence_declares_no_target_in_a_new_portlint_toml(tmp_path):
    """With nothing to guess from, the section leaves `targets` commented: writing all four
    would declare them and change what a scan reports (a newcomer's torch tree went from 1
    finding to 38 after `init`)."""
    (tmp_path / "util.py").write_text("import os\n")
    printed = run_portlint("init", "--print", cwd=tmp_path)
    assert printed.returncode == 0 and not (tmp_path / "portlint.toml").exists()
    assert '# targets = ["rocm", "tpu", "trainium", "gaudi"]' in printed.stdout and "none is declared" in printed.stdout
    (tmp_path / "m.py").write_text("import torch\n\ndef f(x):\n    return x.to('cuda')\n")
    before = run_portlint("scan", ".", "--no-cache", "--format", "json", "--exit-zero", cwd=tmp_path).stdout
    assert run_portlint("init", cwd=tmp_path).returncode == 0
    assert (tmp_path / "portlint.toml").read_text() == printed.stdout
    settings = load_config(tmp_path / "portlint.toml", Settings())
    assert not settings.declared_targets
    after = run_portlint("scan", ".", "--no-cache", "--format", "json", "--exit-zero", cwd=tmp_path).stdout
    assert json.loads(after)["findings"] == json.loads(before)["findings"]


# -- watch ---------------------------------------------------------------------------------

def test_watch_rescans_a_changed_file(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(unsigned* o) { o[threadIdx.x] = 1u; }\n")
    env = dict(os.environ, PORTLINT_WATCH_RESCANS="1", PORTLINT_WATCH_INTERVAL="0.1")
    proc = subprocess.Popen([sys.executable, "-m", "portlint", "scan", "--isolated", "--no-cache", "--format", "concise", "--watch", "."],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "watching for changes" in proc.stderr.readline()
        (tmp_path / "k.cu").write_text('__global__ void k(unsigned* o) {\n  asm volatile("membar.gl;");\n}\n')
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 1, err  # the exit code follows the last report
    first, second = out.split("No portability problems found in 1 file.\n")
    # concise output opens its summary with the targets line, as text output does
    assert first.startswith("targets: all four") and first.count("\n") == 1 and "k.cu:2:3: PTL201 error" in second
    assert "1 file changed; rescanning" in err


def test_watch_refuses_fix_and_diff(tmp_path):
    (tmp_path / "k.cu").write_text("\n")
    proc = run_portlint("scan", "--watch", "--fix", "k.cu", cwd=tmp_path)
    assert proc.returncode == 2 and "--watch" in proc.stderr


# -- wheel ---------------------------------------------------------------------------------

def test_wheel_ships_rule_docs_and_schemas_and_they_are_found_there(tmp_path):
    """Build the wheel from a copy of the source (pip, no build isolation, no network), check
    its contents, then run `portlint rule` from the unpacked wheel alone."""
    src = tmp_path / "src"
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name) if src.exists() else (src.mkdir(), shutil.copy(REPO / name, src / name))
    for folder in ("portlint", "rules", "docs"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist"), str(src)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    (wheel,) = (tmp_path / "dist").glob("portlint-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    pages = {n for n in names if n.startswith("portlint/_docs/rules/PTL")}
    assert len(pages) == len(list((REPO / "docs" / "rules").glob("PTL*.md"))) > 80
    assert {"portlint/_docs/portlint-report.schema.json", "portlint/_docs/portlint-migration-report.schema.json"} <= names
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    code = ("from portlint.core.rule_links import shipped_rule_page, editor_rule_url;"
            "print(shipped_rule_page('PTL110')); print(editor_rule_url('PTL110'))")
    env = dict(os.environ, PYTHONPATH=str(unpacked))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    page, uri = out.stdout.split()
    assert page == str(unpacked / "portlint" / "_docs" / "rules" / "PTL110.md") and Path(page).is_file(), out.stderr
    assert uri == Path(page).as_uri()
    rule = subprocess.run([sys.executable, "-m", "portlint", "rule", "PTL110"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert rule.returncode == 0 and rule.stdout in Path(page).read_text(), rule.stderr
