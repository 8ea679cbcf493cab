"""core/globs.py owns glob matching: the semantics each caller relies on, and no module
matching globs around it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import around_owner
from portlint.core.globs import covers, fits, matching

# modules that still match globs for themselves, and why (each is work left): none now
AROUND: dict[str, str] = {}
OWNERS = ("portlint/core/globs.py", "portlint/discovery/gitignore.py")


def _glob_code(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in ("fnmatch", "glob", "pathspec")]
        elif isinstance(node, ast.ImportFrom) and node.module in ("fnmatch", "glob", "pathspec"):
            out.append(f"{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "match" \
                and isinstance(node.func.value, ast.Call) and getattr(node.func.value.func, "id", "") in ("Path", "PurePath", "PurePosixPath"):
            out.append(f"{node.lineno}: PurePath.match")
    return out


def test_no_module_matches_globs_around_core_globs():
    found, stale = around_owner(_glob_code, AROUND, OWNERS)
    assert found == {}, f"match globs with portlint.core.globs: {found}"
    assert stale == [], f"no longer matches globs itself, remove from AROUND: {stale}"


# ---- fits: the config's globs (fnmatch's reading) -------------------------------------------

@pytest.mark.parametrize("text, pattern, expected", [
    ("PTL101", "PTL1*", True),             # rule selectors: ids
    ("PTL201", "PTL1*", False),
    ("PTL102", "PTL10[12]", True),         # a set
    ("PTL103", "PTL10[!12]", True),        # its complement
    ("PTL101", "PTL10?", True),
    ("inline-ptx-asm", "*-ptx-*", True),   # names
    ("ptl101", "PTL1*", False),            # case-sensitive: the caller folds case
    ("tests/a/b.py", "tests/*", True),     # `*` crosses folders
    ("tests/a/b.py", "tests/**", True),    # so `**` is `*`
    ("src/tests/b.py", "tests/*", False),  # anchored at the start of the text
    ("Tests/b.py", "tests/*", False),
])
def test_fits_reads_a_glob_as_fnmatch_does(text, pattern, expected):
    assert fits(text, pattern) is expected


def test_brackets_false_takes_a_bracket_as_itself():
    """A dependency pattern in rules/build: `jax[cuda*]` is the extra's bracket."""
    assert fits("jax[cuda12]", "jax[cuda*]", brackets=False)
    assert not fits("jaxc", "jax[cuda*]", brackets=False)
    assert fits("jaxc", "jax[cuda*]")  # the set reading, for contrast
    assert fits("torch-cuda", "torch*", brackets=False)


@pytest.mark.parametrize("path, glob, expected", [
    ("tests/a.py", "tests/*.py", True),
    ("tests/sub/a.py", "tests/*.py", True),   # `*` crosses folders
    ("tests/sub/a.py", "tests", True),        # a folder named covers what lies below it
    ("tests/sub/a.py", "tests/", True),
    ("tests/sub/a.py", "tests/**", True),
    ("tests.py", "tests", False),
    ("testsuite/a.py", "tests", False),
    ("lib/tests/a.py", "tests", False),       # relative to the root, not any depth
    ("lib/tests/a.py", "*/tests", True),
    ("Tests/a.py", "tests", False),
    ("tests/a.py", "/tests", True),           # a leading slash anchors at the root, as paths already are
    ("tests/a.py", "/tests/*.py", True),
    ("lib/tests/a.py", "/tests", False),
    ("tests/a.py", "//tests", False),         # not a root-anchored glob: left as written
])
def test_covers_is_the_per_file_ignores_reading(path, glob, expected):
    assert covers(path, glob) is expected


# ---- matching: a build's own globs ----------------------------------------------------------

def test_a_build_glob_stays_in_one_folder_unless_recursive():
    files = ["src/a.cu", "src/x/b.cu", "src/x/y/c.cu", "d.cu"]
    assert matching(files, "src/*.cu", False) == ["src/a.cu"]
    assert matching(files, "src/?.cu", False) == ["src/a.cu"]
    assert matching(files, "src/**/*.cu", True) == ["src/a.cu", "src/x/b.cu", "src/x/y/c.cu"]
    assert matching(files, "src/*.cu", False, star_crosses=True) == ["src/a.cu", "src/x/b.cu", "src/x/y/c.cu"]
    assert matching(files, "[a-d].cu", False) == ["d.cu"]
    assert matching(files, "SRC/*.cu", False) == []  # case-sensitive
