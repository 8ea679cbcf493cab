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


# one file of each kind the build family reads, each with a finding, and the rule it gets
BUILD_FILES = {
    "CMakeLists.txt": ("cmake_minimum_required(VERSION 3.18)\nproject(ext LANGUAGES CXX CUDA)\nadd_library(ext k.cu)\n", "PTL050"),
    "cmake/arch.cmake": ("set(CMAKE_CUDA_ARCHITECTURES 80)\n", "PTL051"),
    "Makefile": ("NVCCFLAGS = -arch=sm_80 --use_fast_math\nk.o: k.cu\n\tnvcc $(NVCCFLAGS) -c k.cu\n", "PTL054"),
    "Dockerfile": ("FROM nvidia/cuda:12.4.0-devel-ubuntu22.04\nRUN echo hi\n", "PTL056"),
    "pyproject.toml": ('[project]\nname = "x"\nversion = "0"\ndependencies = ["cupy-cuda12x"]\n', "PTL055"),
    "setup.cfg": ("[options]\ninstall_requires =\n    cupy-cuda12x\n", "PTL055"),
    "requirements.txt": ("cupy-cuda12x\n", "PTL055"),
    "scripts/build.sh": ("#!/bin/sh\nnvcc -arch=sm_80 -c k.cu\n", "PTL051"),
}


def test_hook_passes_build_and_dependency_files(tmp_path, precommit_env):
    """The manifest's types reach every kind of build file a scan reports (CMake, make,
    Docker, pyproject/setup.cfg, requirements, nvcc shell scripts): real pre-commit, one
    try-repo run over all files; a notes.txt and another toml pass as clean."""
    exe, env = precommit_env
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    for name, (text, _) in BUILD_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "notes.txt").write_text("nvcc -arch=sm_80 is mentioned in prose only\n")
    (tmp_path / "other.toml").write_text('[tool.other]\ndeps = ["cupy-cuda12x"]\n')
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True, env=env)
    run = subprocess.run([exe, "try-repo", str(REPO), "portlint", "--all-files", "--verbose"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    for name, (_, rule) in BUILD_FILES.items():
        assert any(line.startswith(f"{name}:") and f" {rule} " in line for line in out.splitlines()), (name, rule, out)
    assert "notes.txt:" not in out and "other.toml:" not in out, out
    assert f"in {len(BUILD_FILES) + 2} files" in out, out  # every file was passed to the hook
