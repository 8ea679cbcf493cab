"""Launcher shared by the GPU cluster and the Gaudi cluster."""
import argparse
import os
import subprocess
import sys

import torch

try:
    import habana_frameworks.torch.distributed.hccl  # noqa: F401
    HAS_HPU = True
except ImportError:
    HAS_HPU = False


def choose_backend() -> str:
    if HAS_HPU:
        return "hccl"
    return "nccl"  # trap


def choose_device(local_rank: int) -> torch.device:
    if HAS_HPU:
        return torch.device("hpu")
    torch.cuda.set_device(local_rank)  # trap
    return torch.device("cuda", local_rank)  # trap


def child_env(local_rank: int) -> dict:
    env = dict(os.environ)
    if HAS_HPU:
        env["HABANA_VISIBLE_MODULES"] = str(local_rank)
    else:
        env["CUDA_VISIBLE_DEVICES"] = str(local_rank)  # trap
    return env


def launch(script: str, nproc: int):
    procs = []
    for r in range(nproc):
        cmd = [sys.executable, script, f"--local_rank={r}"]
        procs.append(subprocess.Popen(cmd, env=child_env(r)))
    for p in procs:
        p.wait()


def legacy_launch(script: str, nproc: int):
    # the old path, still wired into the Gaudi job template
    for r in range(nproc):
        subprocess.Popen([sys.executable, script], env={"CUDA_VISIBLE_DEVICES": str(r)})  # real: PTL904


def old_device_pick():
    return "cuda" if torch.cuda.is_available() else "cpu"  # real: PTL905


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("script")
    ap.add_argument("--nproc", type=int, default=8)
    a = ap.parse_args()
    launch(a.script, a.nproc)
