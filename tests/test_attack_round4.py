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
