"""Issue 26, round three: the mechanisms that close the findings of the round-3 attack
(tests/test_attack_round3.py holds the attacker's own tests). Budget tests count work
(expansions, matcher steps) at ten times the attack's sizes; a subprocess timeout is only a
hang guard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_portlint

from portlint.output import escape

ASM = b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


def run_bytes(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "portlint", *args], cwd=cwd, capture_output=True, env=env, timeout=timeout)


# --- 1. file names that are not UTF-8: one path-to-text place, one escaper ---------------

def test_1_escape_writes_undecodable_bytes_and_separators_visibly():
    name = os.fsdecode(b"a\xff\x9b.cu")
    assert escape.path_text(name) == "a\\xff\\x9b.cu"
    assert escape.controls(name + "\u2028\u2029") == "a\\xff\\x9b.cu\\u2028\\u2029"
    assert escape.text("\ud800x") == "\\ud800x"  # a lone surrogate that is no byte
    assert escape.path_uri(name) == "a%FF%9B.cu"
    assert escape.json_ready({name: [name, 3, None]}) == {"a\\xff\\x9b.cu": ["a\\xff\\x9b.cu", 3, None]}
    # valid text is left as it is
    assert escape.path_text("ü/ß.cu") == "ü/ß.cu" and escape.controls("tab\tkept") == "tab\tkept"


def _tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "k.cu").write_bytes(ASM)
    (repo / os.fsdecode(b"\xff.cu")).write_bytes(ASM)
    return repo


def test_1_every_format_and_the_cache_take_a_name_that_is_not_utf8(tmp_path):
    """With the cache on (its key hashes the name), every scan format, the report's three
    formats, a baseline made of the JSON and merge-sarif of a SARIF shard."""
    repo = _tree(tmp_path)
    for fmt in ("text", "concise", "json", "sarif", "github", "gitlab", "junit"):
        for _ in range(2):  # cold, then from the cache
            proc = run_bytes("scan", "--no-progress", "--format", fmt, "-o", f"out.{fmt}", ".", cwd=repo)
            assert proc.returncode == 1 and b"internal error" not in proc.stderr, (fmt, proc.stderr)
            assert b"skipped" not in proc.stderr, proc.stderr
        data = (repo / f"out.{fmt}").read_bytes()
        data.decode("utf-8")  # valid UTF-8 throughout
        assert b"\xff" not in data
        # the machine-readable formats percent-encode the byte (one to one: round 4's H),
        # GitHub's workflow command escaping the `%` once more; the others write `\\xff`
        spelled = {"sarif": b"%FF.cu", "json": b"%FF.cu", "gitlab": b"%FF.cu", "github": b"%25FF.cu"}
        assert spelled.get(fmt, b"\\xff.cu") in data, (fmt, data[:400])
    doc = json.loads((repo / "out.json").read_text())
    assert sorted(f["path"] for f in doc["findings"]) == ["%FF.cu", "k.cu"]
    proc = run_bytes("scan", "--no-progress", "--format", "concise", "--baseline", "out.json", ".", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    for fmt in ("html", "markdown", "json"):
        proc = run_bytes("report", "--format", fmt, "-o", f"r.{fmt}", ".", cwd=repo)
        assert proc.returncode == 0, proc.stderr
        assert b"\xff" not in (repo / f"r.{fmt}").read_bytes()
    # a shard that holds a lone surrogate (JSON allows the escape) merges into valid UTF-8
    shard = json.loads((repo / "out.sarif").read_text())
    shard["runs"][0]["results"][0]["message"]["text"] += "\udcff"
    (repo / "s.sarif").write_text(json.dumps(shard))
    proc = run_bytes("merge-sarif", "s.sarif", "-o", "m.sarif", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "\\xff" in json.loads((repo / "m.sarif").read_text())["runs"][0]["results"][0]["message"]["text"]


# --- 2. macro values: each expanded once, chains walked in bounded steps ---------------------

def _guard_map(text: str):
    from portlint.frontends.cuda.guards import GuardMap

    return GuardMap(text)


def test_2_doubling_macros_are_expanded_once_each():
    """Ten times the attack's 40 levels: 400 `#define Ai (Ai-1+Ai-1)`; the work is counted
    (bodies evaluated), one per macro, and the value is right (2**399 is past 64 bits, so
    unknown; 2**40 at level 40 is known)."""
    n = 400
    text = "#define A0 1\n" + "".join(f"#define A{i} (A{i-1}+A{i-1})\n" for i in range(1, n)) + f"#if A40 == {2**40}\nint live;\n#endif\n#if A{n-1}\nint z;\n#endif\n"
    gm = _guard_map(text)
    assert gm.expansions <= 2 * n, gm.expansions  # once each, plus the bounded-depth steps
    assert gm.limited is None
    live = text.splitlines().index("int live;") + 1
    assert gm.dead_for_amd(live) is None and not gm.unknown_for_amd(live)
    assert gm.unknown_for_amd(live + 3)  # 2**399 does not fit intmax_t: unknown, not a huge int


def test_2_a_macro_chain_ten_times_the_attack_is_evaluated_exactly():
    n = 30000
    text = "#define A0 0\n" + "".join(f"#define A{i} A{i-1}\n" for i in range(1, n)) + f"#if A{n-1}\nint dead;\n#endif\n"
    gm = _guard_map(text)
    assert gm.limited is None
    assert gm.expansions <= 3 * n, gm.expansions
    assert gm.dead_for_amd(text.count("\n") - 1) is not None  # A29999 is 0: the branch is skipped


def test_2_cycles_and_deep_expressions_are_unknown_with_a_reason():
    gm = _guard_map("#define A (B+1)\n#define B (A+1)\n#if A\nint z;\n#endif\n")
    assert gm.unknown_for_amd(4)
    gm = _guard_map("#if " + "(" * 50000 + "1" + ")" * 50000 + "\nint z;\n#endif\n#if " + "!" * 50000 + "1\n#endif\n")
    assert gm.limited and gm.unknown_for_amd(2)
    # a chain that doubles and cycles back on itself: stopped by the work bound
    text = "".join(f"#define A{i} (A{i-1}+A{i-1})\n" for i in range(1, 60)) + "#define A0 A59\n#if A59\nint z;\n#endif\n"
    gm = _guard_map(text)
    assert gm.limited and gm.expansions < 1_000_000


def test_2_constant_expressions_never_grow_unbounded_integers():
    from portlint.frontends.cuda.cexpr import eval_text

    none = lambda n: None  # noqa: E731
    assert eval_text("9**9**9", none) is None  # no Python power operator
    assert eval_text("1 << 4000", none) is None
    assert eval_text("(64 * 2) | 1", none) == 129 and eval_text("-(2+3)*4", none) == -20
    assert eval_text("W / 2", lambda n: 64) == 32


def test_2_macro_files_at_ten_times_the_attack_keep_their_finding(tmp_path):
    kernel = ASM.decode()
    files = {
        "d.cu": "#define A0 1\n" + "".join(f"#define A{i} (A{i-1}+A{i-1})\n" for i in range(1, 400)) + "#if A399\nint z;\n#endif\n",
        "c.cu": "#define A0 1\n" + "".join(f"#define A{i} A{i-1}\n" for i in range(1, 30000)) + "#if A29999\nint z;\n#endif\n",
        "m.cu": "#define A0 2\n" + "".join(f"#define A{i} (A{i-1}*A{i-1}+2)\n#if A{i}\n#endif\n" for i in range(1, 4000)),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(kernel + text)
    proc = run_portlint("scan", "--no-progress", "--no-cache", "--format", "concise", "-j", "1", *files, cwd=tmp_path)
    assert "PTL003" not in proc.stdout, proc.stdout
    for name in files:
        assert f"{name}:2:3: PTL201" in proc.stdout, (proc.stdout, proc.stderr)


# --- 3. deep braces: the deeper levels read as one block, with a notice ------------------

def test_3_flatten_deep_braces_keeps_positions_strings_and_comments():
    from portlint.frontends.cuda.parse import flatten_deep_braces

    data = b'f() {' + b'{' * 5 + b'"{{{{{{" /* {{{{{{ */ \'{\'' + b'}' * 5 + b'}'
    out, n = flatten_deep_braces(data, limit=3)
    assert len(out) == len(data) and n == 6  # levels 4..6 of each side
    assert b'"{{{{{{" /* {{{{{{ */ \'{\'' in out
    assert out.count(b"{") - b'"{{{{{{" /* {{{{{{ */ \'{\''.count(b"{") == 3
    assert flatten_deep_braces(b"{}" * 1000, limit=3) == (b"{}" * 1000, 0)  # wide is not deep


@pytest.mark.parametrize("n", [10000, 500000])
def test_3_ten_times_the_attacks_nesting_keeps_the_finding_and_says_so(tmp_path, n):
    src = "__global__ void k(float* x) {\n" + "{" * n + "}" * n + '\n  asm volatile("membar.gl;");\n}\n'
    (tmp_path / "a.cu").write_text(src)
    proc = run_portlint("scan", "--no-progress", "--no-cache", "--format", "concise", "a.cu", cwd=tmp_path)
    assert "a.cu:3:3: PTL201" in proc.stdout, (proc.stdout, proc.stderr)
    assert "a.cu: braces nested more than 200 deep" in proc.stderr


# --- 4. .gitignore matching: component by component, linear in the path ---------------------

def test_4_gitignore_match_work_is_linear_in_the_path():
    """Ten times the attack's path (300 folders of 40 letters, as a string: no file system
    holds it); the work counted is piece-against-name matches, at most pieces x folders."""
    from portlint.discovery.gitignore import ComponentMatcher, linear_spec

    spec = linear_spec(["**/*a*a/**/*a*a/**/*a*ac"])
    matcher = spec.patterns[0].regex
    assert isinstance(matcher, ComponentMatcher)
    path = "/".join(["a" * 40] * 300) + "/k.cu"
    assert not spec.match_file(path)
    assert matcher.steps <= 3 * 301, matcher.steps
    assert spec.match_file("/".join(["a" * 40] * 300) + "/xaac")


@pytest.mark.parametrize("lines", [["*.py", "!keep.py"], ["/build/", "docs/**/*.md"], ["a/**/b", "**/c/"],
                                   ["?x", "[ab]y", "\\*z"], ["***/***"], ["foo/**", "!foo/bar"]])
def test_4_gitignore_semantics_are_pathspecs(lines):
    import pathspec

    from portlint.discovery.gitignore import linear_spec

    ref, ours = pathspec.GitIgnoreSpec.from_lines(lines), linear_spec(lines)
    for path in ["x.py", "keep.py", "d/keep.py", "build/", "build/x", "src/build/", "docs/a/b/c.md", "docs/c.md",
                 "a/b", "a/x/y/b", "z/a/b", "c/", "p/c/", "p/c", "ax", "ay/", "*z", "q/*z", ".b/", "foo/", "foo/bar", "foo/baz/"]:
        assert ref.match_file(path) == ours.match_file(path), path


# --- 6. in-tree files portlint reads for itself never lead out of the tree ---------------------

def test_6_resolves_inside(tmp_path):
    from portlint.core.files import resolves_inside

    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "out").write_text("x")
    (tmp_path / "tree" / "sub" / "real").write_text("x")
    (tmp_path / "tree" / "in").symlink_to("sub/real")
    (tmp_path / "tree" / "away").symlink_to("../out")
    assert resolves_inside(tmp_path / "tree" / "in", tmp_path / "tree")
    assert not resolves_inside(tmp_path / "tree" / "away", tmp_path / "tree")
    assert not resolves_inside(tmp_path / "tree" / "in", tmp_path / "tree" / "sub" / "other")


def test_6_links_inside_the_tree_are_still_read_and_links_out_are_named(tmp_path):
    repo = tmp_path / "repo"
    (repo / "shared").mkdir(parents=True)
    (repo / "k.cu").write_bytes(ASM)
    (repo / "shared" / "ignore").write_text("k.cu\n")
    (repo / ".gitignore").symlink_to("shared/ignore")
    proc = run_portlint("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert "k.cu:2:3" not in proc.stdout and proc.returncode == 0, proc.stdout  # an in-tree link works
    (repo / ".gitignore").unlink()
    (tmp_path / "outside").write_text("k.cu\n")
    (repo / ".gitignore").symlink_to("../outside")
    proc = run_portlint("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert "k.cu:2:3: PTL201" in proc.stdout and ".gitignore: symlink to outside the scanned tree" in proc.stderr
    (repo / ".gitignore").unlink()
    (repo / "shared" / "cfg.toml").write_text('ignore = ["PTL2"]\n')
    (repo / "portlint.toml").symlink_to("shared/cfg.toml")
    proc = run_portlint("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert proc.returncode == 0 and "PTL201" not in proc.stdout, (proc.stdout, proc.stderr)  # applied
    (repo / "portlint.toml").unlink()
    (tmp_path / "cfg.toml").write_text('ignore = ["PTL2"]\n')
    (repo / "portlint.toml").symlink_to("../cfg.toml")
    proc = run_portlint("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert proc.returncode == 2 and "portlint.toml is a symlink" in proc.stderr, proc.stderr


# --- lone CR in CUDA/C++ (a round-3 low): analysed as the compiler reads it ------------------

LONE_CR_KERNEL = b'// a\r// b\r__global__ void k(float* x) {\r  asm volatile("membar.gl;");\r}\r'


def test_a_lone_cr_file_is_analysed_as_the_compiler_reads_it(tmp_path):
    """gcc, clang and hipcc end a line at a lone CR; tree-sitter does not, so the kernel after
    `// a\\r` was one comment to portlint and its inline PTX went unreported. Positions stay
    in the line model's numbering (LF / CRLF only), as for Python."""
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n')
    (tmp_path / "k.cu").write_bytes(LONE_CR_KERNEL)
    proc = run_bytes("scan", "k.cu", "--no-cache", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    (f,) = report["findings"]
    start = LONE_CR_KERNEL.index(b"asm")
    assert (f["rule"], f["start_line"]) == ("PTL201", 1), f
    assert f["start_column"] == start + 1, f
    assert b"lone CR" in proc.stderr


def test_a_lone_cr_file_keeps_its_guards_and_its_cr_bytes_under_fix(tmp_path):
    """Near misses: the PTX inside `#if 0` (directives after lone CRs) stays quiet, and
    `--fix` renames on the right bytes and keeps every lone CR."""
    (tmp_path / "portlint.toml").write_text('targets = ["rocm"]\n')
    guarded = b'#if 0\r__global__ void k(float* x) {\r  asm volatile("membar.gl;");\r}\r#endif\r'
    (tmp_path / "g.cu").write_bytes(guarded)
    renamable = b'#include <cuda_runtime.h>\rvoid f(void** p) { cudaMalloc(p, 4); }\r'
    (tmp_path / "r.cu").write_bytes(renamable)
    proc = run_bytes("scan", ".", "--no-cache", "--format", "json", "--select", "PTL2,PTL601", cwd=tmp_path)
    run_bytes("scan", ".", "--no-cache", "--fix", "--select", "PTL2,PTL601", cwd=tmp_path)
    again = run_bytes("scan", ".", "--no-cache", "--format", "json", "--select", "PTL2,PTL601", cwd=tmp_path)
    assert (tmp_path / "g.cu").read_bytes() == guarded
    assert (tmp_path / "r.cu").read_bytes() == renamable.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(b"cudaMalloc", b"hipMalloc")
    findings = json.loads(proc.stdout)["findings"]
    assert not [f for f in findings if f["path"] == "g.cu" and not f.get("suppressed")], findings
    # the renames were reported on the line the editor shows (line 1: no LF in the file)
    assert {(f["path"], f["rule"], f["start_line"]) for f in findings} == {("r.cu", "PTL601", 1)}, findings
    assert not json.loads(again.stdout)["findings"], again.stdout


def test_the_compiler_does_end_a_line_at_a_lone_cr(tmp_path):
    """The fact the analysis relies on, from the preprocessor itself: after `// a\\r` the
    kernel is code, not comment."""
    from conftest import require_tool

    require_tool("gcc")
    (tmp_path / "k.c").write_bytes(LONE_CR_KERNEL.replace(b"__global__ ", b""))
    out = subprocess.run(["gcc", "-E", "-P", str(tmp_path / "k.c")], capture_output=True, text=True).stdout
    assert 'asm volatile("membar.gl;")' in out
