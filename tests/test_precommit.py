"""The hook manifest works with the real pre-commit: `try-repo` on a temporary git
repository fails on a CUDA file with a finding and passes on a clean one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_tool

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def precommit_env(tmp_path_factory):
    exe = Path(sys.executable).parent / "pre-commit"
    if not exe.exists():
        exe = Path(require_tool("pre-commit"))
    home = tmp_path_factory.mktemp("pre-commit-home")
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid", NO_COLOR="1")
    return str(exe), env


def _user_repo(tmp_path, env):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    (tmp_path / "bad.cu").write_text('__global__ void k(unsigned* o) {\n  asm volatile("membar.gl;");\n  o[0] = 1u;\n}\n')
    (tmp_path / "clean.cu").write_text("__global__ void k(unsigned* o) { o[threadIdx.x] = 1u; }\n")
    (tmp_path / "notes.txt").write_text("asm volatile is mentioned here but this is not code\n")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True, env=env)
    return tmp_path


def test_hook_fails_on_finding_and_passes_on_clean_file(tmp_path, precommit_env):
    exe, env = precommit_env
    user = _user_repo(tmp_path, env)
    bad = subprocess.run([exe, "try-repo", str(REPO), "portlint", "--files", "bad.cu", "notes.txt"],
                         cwd=user, env=env, capture_output=True, text=True, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "PTL201" in bad.stdout
    clean = subprocess.run([exe, "try-repo", str(REPO), "portlint", "--files", "clean.cu", "notes.txt"],
                           cwd=user, env=env, capture_output=True, text=True, timeout=900)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout
