"""Round four attack pass, the items closed since (moved from tests/attacks/open_round4.py,
each test as the attacker wrote it, failing on the code as attacked), with the near misses
that must keep working beside them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_portlint_bytes as run


ASM = b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n'


# --- E (low). An in-tree `[tool.portlint.versions]` value that passes validation, then crashes ---

NCCL = b'#include <nccl.h>\nvoid f(ncclComm_t c) { ncclCommWindowRegister(c, 0, 0, 0, 0); }\n'


def test_e_a_huge_version_number_is_a_configuration_error(tmp_path):
    """`[tool.portlint.versions] rccl = "111...1"` (5,000 digits) matches `_VERSION_RE`
    (`\\d+(?:\\.\\d+){0,3}`, no length bound), so the config loads; then every CUDA file that
    names an NCCL function gets `PTL003 portlint internal error in rule PTL503: ValueError:
    Exceeds the limit (4300 digits)` and loses its real PTL503 findings (the issue's item 17
    class: an internal error where a usage error belongs). The value should be refused when
    the configuration is read, naming the file and the key."""
    (tmp_path / "pyproject.toml").write_text('[tool.portlint]\n[tool.portlint.versions]\nrccl = "' + "1" * 5000 + '"\n')
    (tmp_path / "n.cu").write_bytes(NCCL)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "n.cu", cwd=tmp_path)
    assert b"internal error" not in proc.stdout + proc.stderr, proc.stdout
    assert proc.returncode == 2 and b"versions" in proc.stderr, (proc.returncode, proc.stderr)


# --- F (low). A closed stdout is an internal error ---------------------------------------------

def test_f_a_closed_stdout_is_not_an_internal_error(tmp_path):
    """`portlint rules | head -1`: the reader closes the pipe and portlint ends with
    'portlint: error: internal error: BrokenPipeError ... (please report it)', exit 2
    (`scan` handles it). A closed pipe should end quietly, as `scan` does."""
    proc = subprocess.Popen([sys.executable, "-m", "portlint", "rules"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(REPO)))
    proc.stdout.read(1)
    proc.stdout.close()
    try:
        err = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert b"internal error" not in err, err


def test_e_a_long_but_ordinary_release_is_still_accepted(tmp_path):
    """The bound is eight digits a part: `rocm = "6.4.20250101"` (a dated build) loads."""
    (tmp_path / "pyproject.toml").write_text('[tool.portlint]\n[tool.portlint.versions]\nrccl = "2.21.20250101"\n')
    (tmp_path / "n.cu").write_bytes(NCCL)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "n.cu", cwd=tmp_path)
    assert proc.returncode == 1 and b"PTL503" in proc.stdout, (proc.returncode, proc.stdout, proc.stderr)


def test_f_a_scan_whose_stdout_closed_keeps_its_exit_code(tmp_path):
    """Findings and no one to read them: the exit code still says "findings" (1), not an
    internal error (2) and not clean (0); a clean tree still exits 0."""
    (tmp_path / "k.cu").write_bytes(b'__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n')
    (tmp_path / "clean.cu").write_bytes(b"__global__ void k(float* x) { x[0] = 1.0f; }\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for name, want in (("k.cu", 1), ("clean.cu", 0)):
        proc = subprocess.run(["bash", "-c", f'"$0" -m portlint scan --no-progress --no-cache {name} 1>&-', sys.executable],
                              cwd=tmp_path, capture_output=True, env=env, timeout=120)
        assert proc.returncode == want and b"internal error" not in proc.stderr, (name, proc.returncode, proc.stderr)


def test_f_a_reader_that_leaves_early_ends_the_rules_listing_quietly(tmp_path):
    """`portlint rules | head -1` as a shell runs it: exit 0 and nothing on stderr."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", '"$0" -m portlint rules | head -1 >/dev/null', sys.executable],
                          cwd=tmp_path, capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stderr == b"", (proc.returncode, proc.stderr)


# --- N (medium). A PEP 263 coding cookie hides a Python file ------------------------------------

def _utf7_forced(text: str) -> str:
    import base64

    return "+" + base64.b64encode(text.encode("utf-16-be")).decode().rstrip("=") + "-"


def test_n_a_python_file_in_a_declared_encoding_is_read_as_python_reads_it(tmp_path):
    """`# -*- coding: utf-7 -*-` then `import +AGoAYQB4-` / `@+AGoAYQB4-.jit` (UTF-7 for `jax`):
    CPython decodes the file by its cookie (PEP 263) and runs `import jax` / `@jax.jit`
    (`ast.parse` of the bytes gives exactly that), but portlint reads the bytes as UTF-8,
    sees no jax, and reports 'No portability problems found in 1 file' with no notice; the
    same file in UTF-8 has a PTL801. Issue 26's item 16 (a BOM hid a Python file) was the
    same hole through another door. A file should be decoded as Python decodes it (the
    cookie), or get a notice that it was not analysed."""
    import ast

    src = "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        x = x + 1\n    return x\n"
    data = ("# -*- coding: utf-7 -*-\n" + src.replace("+", "+-").replace("jax", _utf7_forced("jax"))).encode("ascii")
    assert ast.unparse(ast.parse(data)) == ast.unparse(ast.parse(src))  # what Python runs
    (tmp_path / "u.py").write_bytes(data)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "u.py", cwd=tmp_path)
    assert b"u.py:6:8: PTL801" in proc.stdout or b"u.py" in proc.stderr, (proc.stdout, proc.stderr)


JITTED_IF = "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        x = x + 1\n    return x\n"


def test_n_a_cookie_that_reads_the_same_text_is_analysed(tmp_path):
    """Near misses: a latin-1 or utf-8 cookie on a file whose bytes read the same either way
    (most real cookies: `# -*- coding: utf-8 -*-`, `# vim: set fileencoding=latin-1`) keeps
    every finding, with no notice."""
    for i, cookie in enumerate(("# -*- coding: utf-8 -*-", "#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :")):
        (tmp_path / f"c{i}.py").write_text(cookie + "\n" + JITTED_IF, encoding="ascii")
        proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", f"c{i}.py", cwd=tmp_path)
        line = 6 + cookie.count("\n")
        assert f"c{i}.py:{line}:8: PTL801".encode() in proc.stdout and f"c{i}.py".encode() not in proc.stderr, (proc.stdout, proc.stderr)


def test_n_a_cookie_that_reads_other_text_or_is_unknown_gets_a_notice(tmp_path):
    """Latin-1 bytes that are not UTF-8 are still read (with the replacement notice); an
    unknown codec, which Python refuses, is a one-line notice naming the file."""
    (tmp_path / "bad.py").write_text("# coding: no-such-codec\n" + JITTED_IF, encoding="ascii")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "bad.py", cwd=tmp_path)
    notices = [line for line in proc.stderr.splitlines() if b"bad.py" in line]
    assert len(notices) == 1 and b"no-such-codec" in notices[0], proc.stderr


# --- L (medium). Any `#if` naming NCCL_VERSION_CODE hides PTL503 ---------------------------------

@pytest.mark.parametrize("condition", [
    "NCCL_VERSION_CODE < NCCL_VERSION(2, 28, 0)",            # the branch RCCL (2.21 base) takes
    "NCCL_VERSION_CODE >= 0",                                # always true
    "!NCCL_VERSION_CODE || defined(__HIP_PLATFORM_AMD__)",   # the AMD branch, by name
    "NCCL_MAJOR || 1",
])
def test_l_a_version_test_that_rccl_passes_still_reports_the_call(tmp_path, condition):
    """PTL503 skips a call 'inside the true branch of an `#if NCCL_VERSION_CODE >= ...` test'
    because RCCL reports its NCCL base and the test answers correctly. The check
    (rules/collectives.py, then `_under_nccl_version_test`) only looked for the macro's name in
    the condition, so any condition that mentions it hides the call, including one that is
    true on RCCL 2.21 (`< NCCL_VERSION(2,28,0)`, `>= 0`) or names the AMD build outright:
    the call then fails to compile or link on ROCm with no finding. Only a condition that
    RCCL's base version makes false should hide it (evaluate it with the configured rccl
    version, unknown counting as not hidden)."""
    (tmp_path / "v.cu").write_text("#include <nccl.h>\nvoid f(ncclComm_t c) {\n"
                                   f"#if {condition}\n  ncclCommShrink(c, 0, 0, 0, 0, 0, 0);\n#endif\n}}\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "v.cu", cwd=tmp_path)
    assert b"v.cu:4:3: PTL503" in proc.stdout, (proc.stdout, proc.stderr)


@pytest.mark.parametrize("condition,rccl", [
    ("NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)", "2.21"),   # false on RCCL's 2.21 base
    ("NCCL_MAJOR > 2", "2.21"),
    ("NCCL_VERSION_CODE >= 22800 && FOO_UNKNOWN", "2.21"),     # false whatever FOO is
    ("NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0) && !defined(__HIP_PLATFORM_AMD__)", "2.21"),
])
def test_l_a_version_test_that_rccl_fails_still_hides_the_call(tmp_path, condition, rccl):
    """The near miss: a test that an AMD build against the configured RCCL evaluates to false
    leaves the call out of that build, so it is not reported."""
    (tmp_path / "pyproject.toml").write_text(f'[tool.portlint]\n[tool.portlint.versions]\nrccl = "{rccl}"\n')
    (tmp_path / "v.cu").write_text("#include <nccl.h>\nvoid f(ncclComm_t c) {\n"
                                   f"#if {condition}\n  ncclCommShrink(c, 0, 0, 0, 0, 0, 0);\n#endif\n}}\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "v.cu", cwd=tmp_path)
    assert b"PTL503" not in proc.stdout and proc.returncode == 0, (proc.stdout, proc.stderr)


# --- I (low). PTL503's readers miss ordinary spellings of the same name --------------------------

@pytest.mark.parametrize("line", [
    'void* p = dlsym(h, "ncclComm" "Shrink");',   # adjacent literals: one string to the compiler
    'void* p = dlsym(h, ("ncclCommShrink"));',     # parenthesised
    'void* p = dlsym(h, u8"ncclCommShrink");',     # an encoding prefix
    'void* p = dlsym(h, R"(ncclCommShrink)");',    # a raw string
    'void* p = dlsym(h, "ncclCommShr\\x69nk");',   # an escape
])
def test_i_dlsym_of_a_missing_nccl_function_is_found_in_any_spelling(tmp_path, line):
    """`dlsym(h, "ncclCommShrink")` is PTL503 (the lookup returns NULL on RCCL), but the reader
    (rules/collectives.py `_device_headers_and_loaded_names`) took only a call whose single
    `string_literal` argument is the name, with its first and last character cut: split,
    parenthesised, prefixed, raw or escaped spellings of the same string give no finding.
    The string's value should be what is compared."""
    (tmp_path / "d.cu").write_text("#include <dlfcn.h>\nvoid f(void* h) {\n  " + line + "\n}\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "d.cu", cwd=tmp_path)
    assert b"d.cu:3:" in proc.stdout and b"PTL503" in proc.stdout, (proc.stdout, proc.stderr)


@pytest.mark.parametrize("header", ["<./nccl_device.h>", '"./nccl_device/core.h"'])
def test_i_nccl_device_header_is_found_through_a_dot_folder(tmp_path, header):
    """`#include <nccl_device.h>` is PTL503 (not found on ROCm); `#include <./nccl_device.h>`
    names the same header and is not reported (the path is compared as text). The path
    should be normalised before it is compared."""
    (tmp_path / "i.cu").write_text(f"#include {header}\nint x;\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "i.cu", cwd=tmp_path)
    assert b"i.cu:1:" in proc.stdout and b"PTL503" in proc.stdout, (proc.stdout, proc.stderr)


@pytest.mark.parametrize("line", [
    'void* p = dlsym(h, "ncclAll" "Reduce");',   # RCCL has it
    'void* p = dlsym(h, name);',                 # not a string the reader can know
    'void* p = dlsym(h, "ncclCommShr\\q" "ink");', # an escape no compiler reads as `i`
])
def test_i_dlsym_of_a_name_rccl_has_or_an_unknown_string_is_quiet(tmp_path, line):
    (tmp_path / "d.cu").write_text("#include <dlfcn.h>\nvoid f(void* h, const char* name) {\n  " + line + "\n}\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "d.cu", cwd=tmp_path)
    assert b"PTL503" not in proc.stdout, (proc.stdout, proc.stderr)


def test_i_string_values_as_the_compiler_reads_them():
    from portlint.frontends.cuda.parse import c_string_value, nodes_of_types, parse_cuda

    src = b'const char* a[] = {"a\\x41\\101\\n", u8"b" "c", (R"(d\\e)"), L"\\u00e9", "\\q"};\n'
    root = parse_cuda(src).root_node
    init = nodes_of_types(root, ("initializer_list",))[0]
    assert [c_string_value(c) for c in init.named_children] == ["aAA\n", "bc", "d\\e", "\u00e9", None]


# --- G (medium). A long `+` chain in a jitted function turns its findings into internal errors ---

@pytest.mark.parametrize("n", [500, 2000])
def test_g_a_long_operator_chain_keeps_the_findings_of_its_function(tmp_path, n):
    """`y = x + x + ... + x` with 500 terms (valid Python: CPython compiles it; generated
    and unrolled code has such lines) after a flagged `if` in a `@jax.jit` function: the
    left-nested BinOp is ~500 deep and the Python rules' recursive walks (PTL801, PTL802,
    PTL803 and seven more) end in RecursionError; the file gets ten `PTL003 portlint
    internal error` findings and the real PTL801 on line 5 is lost (at 450 terms it is
    found). The walks should not recurse per nesting level (or the depth be capped with a
    notice) and the PTL801 be kept, as the CMake and macro-chain items were."""
    chain = "+".join(["x"] * n)
    (tmp_path / "j.py").write_text("import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        x = x + 1\n"
                                   f"    y = {chain}\n    return y\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "-j", "1", "j.py", cwd=tmp_path)
    assert b"PTL003" not in proc.stdout, proc.stdout[:400]
    assert b"j.py:5:8: PTL801" in proc.stdout, (proc.stdout[:400], proc.stderr)


def _scan_chain(tmp_path: Path, n: int) -> tuple[list[dict], list[bytes]]:
    """A jitted function with a flagged `if` (line 5) and an n-term `+` chain (line 7): its
    PTL801 findings and the notices about the file."""
    import json

    chain = "+".join(["x"] * n)
    (tmp_path / "j.py").write_text("import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        x = x + 1\n"
                                   f"    y = {chain}\n    return y\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "json", "-j", "1", "j.py", cwd=tmp_path)
    found = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "PTL801"]
    return found, [line for line in proc.stderr.splitlines() if b"j.py" in line]


def test_g_a_chain_below_the_cap_is_analysed_whole_with_no_notice(tmp_path):
    """The near miss: 100 terms are analysed as written, with no notice."""
    found, notices = _scan_chain(tmp_path, 100)
    assert [f["start_line"] for f in found] == [5] and notices == [], (found, notices)


def test_g_a_cut_file_gets_one_notice_and_no_fix(tmp_path):
    found, notices = _scan_chain(tmp_path, 500)
    assert [(f["start_line"], f.get("fix")) for f in found] == [(5, None)], found
    assert len(notices) == 1 and b"line 7" in notices[0], notices


# --- M (medium). Preprocessor spellings the guard reader does not know hide findings ------------

KERNEL = "__global__ void k(float* x) {\n  asm volatile(\"membar.gl;\");\n}\n"


def _gcc_builds(src: str) -> bool:
    """Does g++'s preprocessor (as C++, the language nvcc and hipcc read) keep the kernel?"""
    gxx = shutil.which("g++") or shutil.which("cpp")
    if gxx is None:
        pytest.skip("no g++ to check the trick with")
    args = [gxx, "-E", "-P", "-x", "c++", "-"] if gxx.endswith("g++") else [gxx, "-P", "-x", "c++", "-"]
    out = subprocess.run(args, input=src.encode(), capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return b"membar.gl" in out.stdout


GUARD_TRICKS = {
    # `%:` is the digraph of `#` (C99, C++): `#if 0` closed by `%:endif`; the compiler builds
    # everything after it, portlint reads the whole rest of the file as `#if 0`
    "digraph_endif": ("#if 0\n%:endif\n", ""),
    "digraph_else": ("#if 0\n%:else\n", "#endif\n"),
    # comments become one space before directives are read: this is `#if 0 || 1`
    "comment_across_lines": ("#if 0 /* off\n */ || 1\n", "#endif\n"),
    # a backslash-newline inside the directive name: this is `#else`
    "spliced_directive": ("#if 0\n#\\\nelse\n", "#endif\n"),
    # `#if 0` inside a raw string literal is text, not a directive
    "raw_string": ('const char* s = R"(\n#if 0\n)";\n', ""),
    # the same splice between `#` and the name, with blanks (gcc and clang accept them)
    "spliced_endif": ("#if 0\n# \\\n endif\n", ""),
    # a comment between `#` and the name is one space: this is `#else`
    "comment_in_directive": ("#if 0\n#/**/else\n", "#endif\n"),
}


@pytest.mark.parametrize("trick", sorted(GUARD_TRICKS))
def test_m_a_branch_the_compiler_builds_is_not_read_as_dead(tmp_path, trick):
    """Each prefix below makes the compiler build the kernel after it (checked with gcc -E as
    C++, and hipcc -E for the digraph), while portlint's guard reader (frontends/cuda/preprocessor.py directives /
    logical_lines) takes it as inside `#if 0`: every finding after it is 'suppressed
    (inline comments or guarded branches already ported)', no suppression comment, exit 0.
    With `#if 0` / `%:endif` as the first two lines a whole file reports 'No portability
    problems found'. Directives should be read as the preprocessor reads them (digraphs,
    comments spanning lines, line splices, raw strings), or an unknown spelling make the branch unknown,
    never dead."""
    prefix, suffix = GUARD_TRICKS[trick]
    src = prefix + KERNEL + suffix
    assert _gcc_builds(src), "the compiler builds the kernel"
    (tmp_path / "g.cu").write_text(src)
    line = src.splitlines().index('  asm volatile("membar.gl;");') + 1
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "g.cu", cwd=tmp_path)
    assert f"g.cu:{line}:3: PTL201".encode() in proc.stdout, (proc.stdout, proc.stderr)
    assert proc.returncode == 1


# the near misses: the same spellings where the compiler does leave the kernel out
DEAD_SPELLINGS = {
    "digraph_if": ("%:if 0\n", "%:endif\n"),
    "digraph_else": ("#if 1\n%:else\n", "#endif\n"),
    "comment_across_lines": ("#if 1 /* on\n */ && 0\n", "#endif\n"),
    "spliced_directive": ("#if 1\n#\\\nelse\n", "#endif\n"),
    "spliced_condition": ("#if 1 && \\\n 0\n", "#endif\n"),
    "raw_string_then_if": ('const char* s = R"(\n#endif\n)";\n#if 0\n', "#endif\n"),
    "comment_in_directive": ("#/**/if 0\n", "#/**/endif\n"),
}


@pytest.mark.parametrize("spelling", sorted(DEAD_SPELLINGS))
def test_m_a_branch_the_compiler_leaves_out_is_still_read_as_dead(tmp_path, spelling):
    prefix, suffix = DEAD_SPELLINGS[spelling]
    src = prefix + KERNEL + suffix
    assert not _gcc_builds(src), "the compiler leaves the kernel out"
    (tmp_path / "g.cu").write_text(src)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "g.cu", cwd=tmp_path)
    assert b"PTL201" not in proc.stdout and proc.returncode == 0, (proc.stdout, proc.stderr)


def test_m_a_finding_after_a_spliced_directive_keeps_its_line(tmp_path):
    """Line splices and comments spanning lines join lines for the preprocessor, not for the
    report: the finding after them is on its physical line."""
    src = "#if 1 /* a\n   comment */ || \\\n  0\n#define X \\\n  1\n#endif\n" + KERNEL
    (tmp_path / "g.cu").write_text(src)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "g.cu", cwd=tmp_path)
    assert b"g.cu:8:3: PTL201" in proc.stdout, (proc.stdout, proc.stderr)


# --- H (low). Two different files with one JSON path ------------------------------------------

def _reported_paths(fmt: str, out: bytes) -> list[str]:
    if fmt == "json":
        return [f["path"] for f in json.loads(out)["findings"]]
    if fmt == "gitlab":
        return [f["location"]["path"] for f in json.loads(out)]
    return [line.split(b"file=", 1)[1].split(b",", 1)[0].decode() for line in out.splitlines() if b"file=" in line]


@pytest.mark.parametrize("fmt", ["json", "gitlab", "github"])
def test_h_machine_readable_paths_name_the_file_with_the_finding(tmp_path, fmt):
    """A file named with the raw byte 0xff (`c\\xff.cu` on disk as bytes 63 ff 2e 63 75) is
    reported in `--format json` and `gitlab` with the path `c\\xff.cu` and in `github` as
    `file=c\\xff.cu`: the same text as a second, committed file whose name is the eight
    characters `c\\xff.cu`. SARIF keeps them apart (`c%FF.cu`, `c%5Cxff.cu`) and text output
    writes the literal one as `c\\\\xff.cu`. So the GitHub annotation and the GitLab
    code-quality entry land on the harmless twin, and a tool following the path opens it. A
    path in a report should name the file that has the finding (or no existing file)."""
    (tmp_path / os.fsdecode(b"c\xff.cu")).write_bytes(ASM)
    (tmp_path / "c\\xff.cu").write_bytes(b"int ok;\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", fmt, ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    paths = _reported_paths(fmt, proc.stdout)
    assert paths, proc.stdout[:300]
    for path in paths:
        named = tmp_path / path
        # a path that names an existing file must name the one with the finding
        assert not named.exists() or named.read_bytes() == ASM, (path, "names the harmless twin")

def test_h_an_ordinary_name_is_written_as_it_is_and_the_report_says_how(tmp_path):
    """The near miss: a UTF-8 name without a backslash keeps its spelling in every
    machine-readable format, and the JSON report declares how its paths are written."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k é.cu").write_bytes(ASM)
    for fmt in ("json", "gitlab", "github"):
        proc = run("scan", "--no-progress", "--no-cache", "--format", fmt, ".", cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert _reported_paths(fmt, proc.stdout) == ["sub/k é.cu"], (fmt, proc.stdout[:300])
    doc = json.loads(run("scan", "--no-progress", "--no-cache", "--format", "json", ".", cwd=tmp_path).stdout)
    assert doc["path_escape"] == "percent"
    concise = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=tmp_path)
    assert concise.stdout.startswith("sub/k é.cu:2:3: PTL201".encode()), concise.stdout


def test_h_a_baseline_keeps_the_twins_apart(tmp_path):
    """A baseline holding the finding of the file named with the byte 0xff does not absorb
    the same finding added later to its twin spelled `c\\xff.cu`."""
    (tmp_path / os.fsdecode(b"c\xff.cu")).write_bytes(ASM)
    (tmp_path / "c\\xff.cu").write_bytes(b"int ok;\n")
    base = run("scan", "--no-progress", "--no-cache", "--format", "json", "-o", "base.json", ".", cwd=tmp_path)
    assert base.returncode == 1, base.stderr
    same = run("scan", "--no-progress", "--no-cache", "--format", "concise", "--baseline", "base.json", ".", cwd=tmp_path)
    assert same.returncode == 0, same.stdout
    (tmp_path / "c\\xff.cu").write_bytes(ASM)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "json", "--baseline", "base.json", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert [f["path"] for f in json.loads(proc.stdout)["findings"]] == ["c\\xff.cu"]


@pytest.mark.parametrize("name", ["k.cu", "w%k.cu"])
def test_h_a_baseline_written_before_still_matches(tmp_path, name):
    """A report from before `path_escape` wrote a `%` as it is; as a baseline it
    matches the names it was written for, ordinary ones and those with a `%` (written
    `%25` now)."""
    (tmp_path / name).write_bytes(ASM)
    base = run("scan", "--no-progress", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    doc = json.loads(base.stdout)
    del doc["path_escape"]
    for f in doc["findings"]:
        f["path"] = name  # as the earlier writer spelled it
    (tmp_path / "old.json").write_text(json.dumps(doc), encoding="utf-8")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "--baseline", "old.json", ".", cwd=tmp_path)
    assert proc.returncode == 0 and b"1 finding in the baseline" in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)


def test_h_the_key_spelling_is_one_to_one_and_gives_the_bytes_back():
    from urllib.parse import unquote_to_bytes

    from portlint.core.names import name_key

    names = [b"c\xff.cu", b"c\\xff.cu", b"c%FF.cu", b"c%25FF.cu", b"d/\xc3\xa9 x.cu", b"k.cu"]
    keys = [name_key(os.fsdecode(n)) for n in names]
    assert len(set(keys)) == len(names)
    assert [unquote_to_bytes(k) for k in keys] == names
    assert keys[-2:] == ["d/é x.cu", "k.cu"]  # a UTF-8 name without `%` as it is


# --- D (medium). A baselined root swallows every new use folded under it -----------------------

def test_d_new_uses_folded_under_a_baselined_root_are_reported(tmp_path):
    """PTL603 folds every cuDNN use of a file under the `#include <cudnn.h>` (findings/roots.py),
    and `--baseline` matches the group by the primary's fingerprint only. A baseline taken on
    main with one include and two calls, then a pull request that adds any number of new cuDNN
    calls to that file: 'No portability problems found', exit 0, '1 finding in the baseline
    left out' (the group's 'and 5 more uses' is never shown). `--diff-base` on the same change
    does report them, so the two CI gates disagree. The new uses should be reported (the group
    shown as new when it has members the baseline did not have, or members matched one by
    one)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    k = repo / "k.cu"
    k.write_text("#include <cudnn.h>\nvoid f() {\n  cudnnHandle_t h;\n  cudnnCreate(&h);\n}\n")
    base = run("scan", "--no-progress", "--no-cache", "--format", "json", "-o", "base.json", ".", cwd=repo)
    assert base.returncode == 1, base.stderr
    k.write_text("#include <cudnn.h>\nvoid f() {\n  cudnnHandle_t h;\n  cudnnCreate(&h);\n}\n"
                 "void g() {\n  cudnnTensorDescriptor_t t;\n  cudnnCreateTensorDescriptor(&t);\n"
                 "  cudnnDestroyTensorDescriptor(t);\n}\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "--baseline", "base.json", ".", cwd=repo)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert b"k.cu" in proc.stdout, proc.stdout

CUDNN_F = "void f() {\n  cudnnHandle_t h;\n  cudnnCreate(&h);\n}\n"
CUDNN_G = "void g() {\n  cudnnTensorDescriptor_t t;\n  cudnnCreateTensorDescriptor(&t);\n}\n"


def _baselined_repo(tmp_path: Path, old_report: bool = False) -> Path:
    """A file with one cuDNN root and two uses, and its baseline (`old_report`: as a report
    from before `related` entries had fingerprints)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "k.cu").write_text("#include <cudnn.h>\n" + CUDNN_F)
    base = run("scan", "--no-progress", "--no-cache", "--format", "json", "-o", "base.json", ".", cwd=repo)
    assert base.returncode == 1, base.stderr
    doc = json.loads((repo / "base.json").read_text())
    assert [len(f["related"]) for f in doc["findings"]] == [2]
    if old_report:
        for f in doc["findings"]:
            for r in f["related"]:
                del r["fingerprint"]
        (repo / "base.json").write_text(json.dumps(doc))
    return repo


def _with_baseline(repo: Path, fmt: str = "concise") -> subprocess.CompletedProcess:
    return run("scan", "--no-progress", "--no-cache", "--format", fmt, "--baseline", "base.json", ".", cwd=repo)


@pytest.mark.parametrize("old_report", [False, True])
@pytest.mark.parametrize("change", ["none", "moved", "one_use_less"])
def test_d_a_root_whose_uses_the_baseline_has_stays_left_out(tmp_path, change, old_report):
    """The near misses: the same file, its lines moved (the uses' fingerprints hold no line)
    or a use removed, stays clean under the baseline."""
    repo = _baselined_repo(tmp_path, old_report)
    text = {"none": "#include <cudnn.h>\n" + CUDNN_F,
            "moved": "// moved\n\n#include <cudnn.h>\nint pad;\n\n" + CUDNN_F.replace("{\n", "{\n\n  // x\n"),
            "one_use_less": "#include <cudnn.h>\nvoid f() {\n  cudnnHandle_t h;\n}\n"}[change]
    (repo / "k.cu").write_text(text)
    proc = _with_baseline(repo)
    assert proc.returncode == 0 and b"PTL603" not in proc.stdout, (proc.stdout, proc.stderr)
    assert b"1 finding in the baseline left out" in proc.stdout + proc.stderr


@pytest.mark.parametrize("old_report", [False, True])
def test_d_the_new_uses_alone_are_reported_under_the_root(tmp_path, old_report):
    """New uses added beside the moved old ones: the root is new, its `related` the new
    uses only (also against a baseline from before uses had fingerprints)."""
    repo = _baselined_repo(tmp_path, old_report)
    (repo / "k.cu").write_text("#include <cudnn.h>\n" + CUDNN_G + "\n" + CUDNN_F)
    proc = _with_baseline(repo, "json")
    assert proc.returncode == 1, proc.stderr
    [finding] = json.loads(proc.stdout)["findings"]
    assert finding["rule"] == "PTL603" and finding["start_line"] == 1
    assert [r["start_line"] for r in finding["related"]] == [3, 4], finding["related"]
    # a second use of a name the baseline has once is new as well
    (repo / "k.cu").write_text("#include <cudnn.h>\n" + CUDNN_F + "void h() { cudnnHandle_t again; }\n")
    proc = _with_baseline(repo, "json")
    [finding] = json.loads(proc.stdout)["findings"]
    assert [r["start_line"] for r in finding["related"]] == [6], finding["related"]


# --- C (medium). .gitignore answers that differ from git's and hide files git keeps -----------

GIT_ENV = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")  # no user excludesFile


def git(*args: str, cwd: Path) -> bytes:
    return subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=cwd, check=True,
                          capture_output=True, timeout=60, env=GIT_ENV).stdout


def concise_paths(proc: subprocess.CompletedProcess) -> set[str]:
    return {line.split(b":", 1)[0].decode() for line in proc.stdout.splitlines() if b": PTL" in line}


def git_keeps(repo: Path) -> set[str]:
    """The untracked files git does not ignore, and the tracked ones."""
    listed = git("ls-files", "--others", "--cached", "--exclude-standard", "-z", cwd=repo).decode()
    return {p for p in listed.split("\0") if p.endswith(".cu")}


GITIGNORE_CASES = {
    # a deeper .gitignore re-including a file a parent ignores: git keeps sub/k.cu
    "nested_negation": ({"": "*.cu\n", "sub": "!k.cu\n"}, ["sub/k.cu"]),
    # `a/**` ignores what is inside a/, not a/ itself, so `!a/k.cu` re-includes it
    "inside_then_negate": ({"": "a/**\n!a/k.cu\n"}, ["a/k.cu"]),
    # the usual allow-list idiom: ignore everything, re-include folders and *.cu
    "allow_list": ({"": "*\n!*/\n!*.cu\n"}, ["k.cu", "a/k.cu", "a/b/k.cu"]),
    # `a/b/**/` names folders below a/b, not a/b itself: git keeps a/b/k.cu
    "folders_below": ({"": "a/b/**/\n"}, ["a/b/k.cu"]),
}


@pytest.mark.parametrize("case", sorted(GITIGNORE_CASES))
def test_c_gitignore_never_hides_a_file_git_keeps(tmp_path, case):
    """Compared with git's own answer (`git ls-files --others --exclude-standard`) on the same
    tree: portlint's walk (discovery/files.py `_Ignorer.excluded`, which returns True as soon
    as any .gitignore above matches, and pathspec's rules that discovery.gitignore.linear_spec keeps) skips files
    git does not ignore. A deeper `!k.cu` cannot re-include what a parent ignores; `a/**`
    also ignores the folder a/ itself, so `!a/k.cu` is dead; the allow-list idiom
    (`*`, `!*/`, `!*.cu`) scans only the top folder; `a/b/**/` hides a/b's own files. Each
    is silent (no notice) and looks like a re-include to a reviewer. Every file git keeps
    should be scanned."""
    gitignores, kept = GITIGNORE_CASES[case]
    repo = tmp_path / "repo"
    for rel in ["k.cu", "a/k.cu", "a/b/k.cu", "sub/k.cu"]:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(ASM)
    for folder, text in gitignores.items():
        (repo / folder / ".gitignore").write_text(text)
    git("init", "-q", ".", cwd=repo)
    keeps = git_keeps(repo)
    assert set(kept) <= keeps, keeps  # the case says what git says
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    assert keeps <= concise_paths(proc), (sorted(keeps - concise_paths(proc)), proc.stderr)


# near misses: what git does ignore stays out (an ignored folder's files cannot come back,
# `!` only re-includes what its own line names, `/*` + `!/src/` keeps src alone)
GITIGNORE_NEAR_MISSES = {
    "ignored_folder_blocks_reinclude": {"": "sub/\n!sub/k.cu\n"},
    "deeper_file_cannot_reach_into_an_ignored_folder": {"": "a/\n", "a/b": "!k.cu\n"},
    "inside_ignores_deeper_files": {"": "a/**\n!a/k.cu\n"},
    "allow_list_of_one_folder": {"": "/*\n!/src/\n"},
    "folders_below_drop_their_files": {"": "a/**/\n"},
    "deeper_file_ignores_again": {"": "*.cu\n!*.cu\n", "a": "k.cu\n"},
    "literal_prefix_then_double_star": {"": "a**/k.c?\n"},
}


@pytest.mark.parametrize("case", sorted(GITIGNORE_NEAR_MISSES))
def test_c_what_git_ignores_stays_out(tmp_path, case):
    repo = tmp_path / "repo"
    every = {"k.cu", "ak.cu", "a/k.cu", "a/b/k.cu", "a/b/c/k.cu", "sub/k.cu", "src/k.cu", "src/d/k.cu"}
    for rel in every:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(ASM)
    for folder, text in GITIGNORE_NEAR_MISSES[case].items():
        (repo / folder / ".gitignore").write_text(text)
    git("init", "-q", ".", cwd=repo)
    keeps = git_keeps(repo)
    assert keeps != every  # git ignores something here
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert concise_paths(proc) == keeps, (sorted(concise_paths(proc) ^ keeps), proc.stderr)


_ATOMS = ["a", "b", "k", "sub", "*", "**", "***", "?", "*.cu", "k*", "[ab]", "[!a]", "[^a]", "x.cu", "[a-c]*",
          "s*b", "\\k.cu", "[]a]*", "[[:alpha:]]*", "[[:bogus:]]", "[a", "k.cu ", "k.cu\\ ", "a**", "**b", "[a-]*",
          "[!]]*", "*[.]cu", "\\*.cu", "#k.cu", "\\#k.cu", "", "k.c?", "a\\/k.cu", "s\\/**", "**\\/k.cu",
          "[[:lower:]]", "[[:alpha:]", "[a-c-u]*", "[\\]]", "*\\", "[[:digit:][:alpha:]]*", "su?", "*u*", "x/a**",
          "!k.cu"]


def _random_tree(rng, root: Path) -> None:
    import random  # noqa: F401  (rng is a random.Random)

    files: list[Path] = []

    def fill(folder: Path, depth: int) -> None:
        files.extend(folder / name for name in rng.sample(["k.cu", "x.cu", "a.cu"], rng.randint(1, 2)))
        if depth < 3:
            for name in rng.sample(["a", "b", "k", "sub"], rng.randint(0, 2)):
                fill(folder / name, depth + 1)

    fill(root, 0)
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x\n")
    folders = sorted({p.parent for p in files})
    for folder in rng.sample(folders, min(len(folders), rng.randint(1, 3))):
        lines = []
        for _ in range(rng.randint(1, 4)):
            line = "/".join(rng.choice(_ATOMS) for _ in range(rng.randint(1, 3)))
            line = ("/" if rng.random() < 0.3 else "") + line + ("/" if rng.random() < 0.25 else "")
            lines.append(("!" if rng.random() < 0.35 else "") + line)
        end = "\r\n" if rng.random() < 0.2 else "\n"  # a CRLF file now and then
        (folder / ".gitignore").write_bytes("".join(ln + end for ln in lines).encode())


def test_c_discovery_agrees_with_git_on_random_trees(tmp_path):
    """Seeded random trees (three levels of folders, one to three .gitignore files of one to
    four lines each, drawn from negations, anchors, folder marks, `*`, `**` in every place,
    sets, classes, escapes, unclosed sets, trailing spaces, CRLF line ends): the files discovery lists are
    exactly the ones `git ls-files --others --cached --exclude-standard` lists, in every
    third tree after a `git add -f` of a few random files (tracked: never ignored); and for
    each file asked alone (the editor server's `is_excluded`), the answer is
    `git check-ignore`'s."""
    import random

    from portlint.core.config import Settings
    from portlint.discovery.files import discover, is_excluded

    for case in range(250):
        rng = random.Random(26_000 + case)
        repo = tmp_path / f"t{case}"
        repo.mkdir()
        _random_tree(rng, repo)
        git("init", "-q", ".", cwd=repo)
        every = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.cu"))
        if case % 3 == 0:
            git("add", "-f", *rng.sample(every, min(len(every), 3)), cwd=repo)
        want = git_keeps(repo)
        found, notices = discover([repo], Settings(root=repo))
        assert not [n for n in notices if "pattern" in n.message], notices  # every line was used
        got = {f.display for f in found}
        gitignores = {str(p.relative_to(repo)): p.read_text() for p in repo.rglob(".gitignore")}
        assert got == want, (case, gitignores, sorted(want - got), sorted(got - want))
        asked = subprocess.run(["git", "check-ignore", "--stdin", "-z"], cwd=repo, input="\0".join(every).encode(),
                               capture_output=True, timeout=60, env=GIT_ENV)
        ignored = {p for p in asked.stdout.decode().split("\0") if p}
        alone = {p for p in every if is_excluded(repo / p, Settings(root=repo))}
        assert alone == ignored, (case, gitignores, sorted(alone ^ ignored))


def test_c_git_matcher_work_is_linear_in_the_path():
    """The round-3 attack's pattern, and git's literal-prefix form of `**`, on a path of 300
    folders of 40 letters: the work is component-against-name matches, at most pieces x
    folders."""
    from portlint.discovery.gitignore import IgnoreFile

    path = [b"a" * 40] * 300
    for line, pieces in ((b"**/*a*a/**/*a*a/**/*a*ac", 3), (b"a**/*a*a/**/*a*ac", 2 * 3)):
        spec = IgnoreFile(line + b"\n")
        pattern = spec.patterns[0]
        assert spec.verdict(path + [b"k.cu"], False) is None
        assert pattern.steps <= pieces * 301, (line, pattern.steps)
        assert spec.verdict(path + [b"xaac"], False) is True


# --- K (medium). A file git tracks is dropped by an ignore rule ----------------------------------

def test_k_a_tracked_file_matching_gitignore_is_scanned(tmp_path):
    """Ignore rules do not apply to tracked files (`git check-ignore gen/k.cu` answers 'not
    ignored', exit 1, once the file is committed). A project whose .gitignore already has
    `gen/` or `*.generated.cu`, and a pull request that commits `gen/k.cu` with
    `git add -f` (GitHub shows it in the diff; the build compiles it): `portlint scan .`
    says 'No portability problems found in 0 files', exit 0, and `--diff-base HEAD~1` the
    same, with no notice. A file git tracks should be scanned (or at least named in a
    notice as skipped by an ignore rule)."""
    repo = tmp_path / "repo"
    (repo / "gen").mkdir(parents=True)
    (repo / ".gitignore").write_text("gen/\n*.generated.cu\n")
    git("init", "-q", ".", cwd=repo)
    git("add", ".gitignore", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    (repo / "gen" / "k.cu").write_bytes(ASM)
    (repo / "x.generated.cu").write_bytes(ASM)
    git("add", "-f", "gen/k.cu", "x.generated.cu", cwd=repo)
    git("commit", "-qm", "pr", cwd=repo)
    ignored = subprocess.run(["git", "check-ignore", "gen/k.cu", "x.generated.cu"], cwd=repo, capture_output=True, timeout=60)
    assert ignored.returncode == 1, ignored.stdout  # git: tracked, so not ignored
    for extra in ((), ("--diff-base", "HEAD~1")):
        proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", *extra, ".", cwd=repo)
        assert {"gen/k.cu", "x.generated.cu"} <= concise_paths(proc), (extra, proc.stdout, proc.stderr)


def test_k_a_scan_never_runs_git(tmp_path):
    """The tracked paths come from reading the index: a `git` first on PATH is never run
    (a repository's .git/config can name programs git would run)."""
    repo = _forced_repo(tmp_path)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(f"#!/bin/sh\ntouch {tmp_path / 'git-was-run'}\n")
    (fake / "git").chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(REPO), PATH=f"{fake}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", "--no-progress", "--no-cache", "--format", "concise", "."],
                          cwd=repo, capture_output=True, env=env, timeout=120)
    assert "gen/k.cu" in concise_paths(proc), (proc.stdout, proc.stderr)
    assert not (tmp_path / "git-was-run").exists()


def _forced_repo(tmp_path: Path, extra_files: dict[str, bytes] | None = None) -> Path:
    """gen/ ignored; gen/k.cu and gen/deep/t.cu tracked with `git add -f`; gen/u.cu and
    gen/deep/u.cu untracked."""
    repo = tmp_path / "repo"
    for rel in ["gen/k.cu", "gen/u.cu", "gen/deep/t.cu", "gen/deep/u.cu", "top.cu", *(extra_files or {})]:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes((extra_files or {}).get(rel, ASM))
    (repo / ".gitignore").write_text("gen/\n")
    git("init", "-q", ".", cwd=repo)
    git("add", "-f", "gen/k.cu", "gen/deep/t.cu", ".gitignore", cwd=repo)
    return repo


def test_k_only_tracked_files_come_back_from_an_ignored_folder(tmp_path):
    repo = _forced_repo(tmp_path)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert concise_paths(proc) == {"top.cu", "gen/k.cu", "gen/deep/t.cu"} == git_keeps(repo), (proc.stdout, proc.stderr)
    assert b"index" not in proc.stderr


def test_k_a_tracked_file_stays_out_when_portlint_excludes_it(tmp_path):
    repo = _forced_repo(tmp_path)
    (repo / "portlint.toml").write_text('exclude = ["gen/deep/"]\n')
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert concise_paths(proc) == {"top.cu", "gen/k.cu"}, (proc.stdout, proc.stderr)


def test_k_force_exclude_keeps_a_named_tracked_file(tmp_path):
    repo = _forced_repo(tmp_path)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", "--force-exclude",
               "gen/k.cu", "gen/u.cu", cwd=repo)
    assert concise_paths(proc) == {"gen/k.cu"}, (proc.stdout, proc.stderr)


def test_k_a_version_4_index_is_read(tmp_path):
    from portlint.discovery.gitindex import parse_index

    names = {"gen/deep/t.cu": ASM, "gen/deep/tt.cu": ASM, "gen/deeper/t.cu": ASM, "gen/z/" + "n" * 200 + ".cu": ASM}
    repo = _forced_repo(tmp_path, names)
    git("add", "-f", *names, cwd=repo)
    git("update-index", "--index-version", "4", cwd=repo)
    data = (repo / ".git" / "index").read_bytes()
    assert data[:8] == b"DIRC\0\0\0\x04"
    listed = git("ls-files", "-z", cwd=repo).split(b"\0")
    assert parse_index(data) == {p for p in listed if p}
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert concise_paths(proc) == {"top.cu", "gen/k.cu", *names}, (proc.stdout, proc.stderr)


def test_k_a_version_3_index_with_extended_flags_is_read(tmp_path):
    from portlint.discovery.gitindex import parse_index

    repo = _forced_repo(tmp_path)
    git("update-index", "--skip-worktree", "gen/k.cu", cwd=repo)  # sets the extended flag: version 3
    data = (repo / ".git" / "index").read_bytes()
    assert data[:8] == b"DIRC\0\0\0\x03"
    assert parse_index(data) == {b".gitignore", b"gen/k.cu", b"gen/deep/t.cu"}


@pytest.mark.parametrize("damage", ["truncated", "garbage", "version_9", "bad_checksum", "dotdot_path", "huge_count"])
def test_k_an_unusable_index_gives_a_notice_and_ignore_rules_alone(tmp_path, damage):
    import hashlib
    import struct

    repo = _forced_repo(tmp_path)
    index = repo / ".git" / "index"
    data = index.read_bytes()
    body = data[:-20]
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = b"\xff" * 500
    elif damage == "version_9":
        data = body[:4] + struct.pack(">I", 9) + body[8:]
        data += hashlib.sha1(data).digest()
    elif damage == "bad_checksum":
        data = body + b"\x01" * 20
    elif damage == "dotdot_path":
        body = body.replace(b"gen/k.cu", b"gen/../k")  # same length, a path that climbs
        data = body + hashlib.sha1(body).digest()
    else:
        body = body[:8] + struct.pack(">I", 1 << 31) + body[12:]
        data = body + hashlib.sha1(body).digest()
    index.write_bytes(data)
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    assert concise_paths(proc) == {"top.cu"}, (proc.stdout, proc.stderr)
    notes = [ln for ln in proc.stderr.splitlines() if b"git index not used" in ln]
    assert len(notes) == 1, proc.stderr


def _outside_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository outside the tree whose index tracks gen/k.cu, and the tree (gen/ ignored)."""
    outside = _forced_repo(tmp_path / "out")
    tree = tmp_path / "tree"
    (tree / "gen").mkdir(parents=True)
    (tree / "gen" / "k.cu").write_bytes(ASM)
    (tree / "top.cu").write_bytes(ASM)
    (tree / ".gitignore").write_text("gen/\n")
    return outside, tree


def test_k_a_git_symlink_out_of_the_tree_is_not_followed(tmp_path):
    outside, tree = _outside_repo(tmp_path)
    (tree / ".git").symlink_to(outside / ".git")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=tree)
    assert concise_paths(proc) == {"top.cu"}, (proc.stdout, proc.stderr)
    assert b"symlink: not followed" in proc.stderr


def test_k_a_gitdir_file_out_of_the_tree_is_not_followed(tmp_path):
    outside, tree = _outside_repo(tmp_path)
    (tree / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=tree)
    assert concise_paths(proc) == {"top.cu"}, (proc.stdout, proc.stderr)
    assert b"outside the scanned tree: not followed" in proc.stderr


def test_k_an_index_symlinked_out_of_the_tree_is_not_read(tmp_path):
    outside, tree = _outside_repo(tmp_path)
    (tree / ".git").mkdir()
    (tree / ".git" / "index").symlink_to(outside / ".git" / "index")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=tree)
    assert concise_paths(proc) == {"top.cu"}, (proc.stdout, proc.stderr)
    assert b"index is a symlink" in proc.stderr


def test_k_a_gitdir_file_inside_the_tree_is_followed(tmp_path):
    repo = _forced_repo(tmp_path)
    (repo / ".git").rename(repo / "gitstore")
    (repo / ".git").write_text("gitdir: gitstore\n")
    proc = run("scan", "--no-progress", "--no-cache", "--format", "concise", ".", cwd=repo)
    assert {"gen/k.cu", "gen/deep/t.cu"} <= concise_paths(proc), (proc.stdout, proc.stderr)
    assert "gen/u.cu" not in concise_paths(proc)
