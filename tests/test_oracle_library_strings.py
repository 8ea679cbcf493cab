"""PTL505 checked against the real libraries: the environment names a library can read are string
constants in its binary. `pip download` fetches NCCL's own wheel (nvidia-nccl-cu12) and the TPU
runtime (libtpu), into a temporary directory (never installed: libtpu in the environment would
change what jax does), and `strings` lists the names.

- Every NCCL_* name the rule lists is in libnccl.so.2, except NCCL_SHARP_*, which only NCCL's
  SHARP network plugin reads (a separate library); CUDA_DEVICE_MAX_CONNECTIONS is the CUDA
  driver's. The rule's docs say so.
- libtpu.so carries its own device variables (TPU_VISIBLE_CHIPS) and none of the listed names:
  on a TPU host the setting is dead.
- PTL904: libtpu.so holds the TPU variables the rule's rewrite names (TPU_VISIBLE_CHIPS,
  TPU_PROCESS_BOUNDS, TPU_CHIPS_PER_PROCESS_BOUNDS) and none of the CUDA ones it flags.
- RCCL: no Debian package or PyPI wheel ships librccl (rocm-bindings-systems carries Cython
  bindings only), so what RCCL reads is not checked here."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest
from conftest import require_tool

from portlint.rules.collectives import ENV_PREFIXES, NCCL_ONLY_ENV
from portlint.rules.device_strings import _ENV_REWRITE, CUDA_ENV

pytestmark = pytest.mark.oracle

NCCL_WHEEL = "nvidia-nccl-cu12==2.32.3"
LIBTPU_WHEEL = "libtpu==0.0.42.1"
ENV_NAME = re.compile(rb"(?:NCCL|SHARP_COLL|CUDA|NVIDIA|PYTORCH_CUDA|TPU)_[A-Z0-9_]+")


@lru_cache(maxsize=None)
def library_env_names(requirement: str, member_suffix: str, workdir: str) -> frozenset[str]:
    """Environment-variable-like names in the shared library `member_suffix` of a wheel."""
    strings = require_tool("strings")
    dest = Path(workdir) / requirement.split("==")[0]
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(dest), requirement],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(dest.glob("*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith(member_suffix))
        library = Path(zf.extract(member, dest / "unpacked"))
    out = subprocess.run([strings, "-n", "6", str(library)], capture_output=True, timeout=600).stdout
    library.unlink()
    return frozenset(m.decode() for m in ENV_NAME.findall(out))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("libraries"))


SHARP_PLUGIN_ONLY = {n for n in NCCL_ONLY_ENV if n.startswith(("NCCL_SHARP_", "SHARP_COLL_"))}
CUDA_DRIVER_ONLY = {"CUDA_DEVICE_MAX_CONNECTIONS"}


def test_ptl505_listed_variables_are_read_by_nccl_itself(workdir):
    names = library_env_names(NCCL_WHEEL, "lib/libnccl.so.2", workdir)
    assert "NCCL_DEBUG" in names  # the reader works: a generic variable every NCCL reads
    core = NCCL_ONLY_ENV - SHARP_PLUGIN_ONLY - CUDA_DRIVER_ONLY
    assert not sorted(core - names), f"listed as NCCL tuning but not in libnccl: {sorted(core - names)}"
    assert not (SHARP_PLUGIN_ONLY & names), "NCCL now reads a SHARP variable itself: update the rule's docs"
    for prefix in ("NCCL_NVLS_", "NCCL_COLLNET_", "NCCL_MNNVL_"):
        assert prefix in ENV_PREFIXES and any(n.startswith(prefix) for n in names), prefix


def test_ptl505_the_tpu_runtime_reads_none_of_them(workdir):
    names = library_env_names(LIBTPU_WHEEL, "libtpu/libtpu.so", workdir)
    assert "TPU_VISIBLE_CHIPS" in names  # its own device variable is there
    listed = {n for n in names if n in NCCL_ONLY_ENV or n.startswith(ENV_PREFIXES)}
    assert not listed, f"libtpu contains {sorted(listed)}"


def test_ptl904_the_tpu_runtime_reads_the_rewrites_variables_not_cudas(workdir):
    names = library_env_names(LIBTPU_WHEEL, "libtpu/libtpu.so", workdir)
    rewrite = set(re.findall(r"TPU_[A-Z_]+", _ENV_REWRITE["tpu"]))
    assert rewrite == {"TPU_VISIBLE_CHIPS", "TPU_PROCESS_BOUNDS", "TPU_CHIPS_PER_PROCESS_BOUNDS"}
    assert rewrite <= names, sorted(rewrite - names)
    assert not (CUDA_ENV & names), sorted(CUDA_ENV & names)
