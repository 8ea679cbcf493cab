"""Run one kernel of tests/pallas_row_kernels.py (or of another kernels module beside it that
has `launch(kernel, arrays)`, e.g. pallas_tutorial_kernels) with TRITON_INTERPRET=1 on CPU
tensors.

Usage: python run_triton_interpreted.py KERNEL IN.npz OUT.npy [MODULE]; a kernel with several
outputs writes OUT.npy, OUT.1.npy, OUT.2.npy ...
A separate process because the interpreter is chosen when triton is imported."""

import importlib
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pallas_row_kernels as k  # noqa: E402


def main(kernel: str, inputs: str, output: str, module: str = "") -> None:
    a = {name: torch.from_numpy(v) for name, v in np.load(inputs).items()}
    if module:
        outs = importlib.import_module(module).launch(kernel, a)
        outs = outs if isinstance(outs, tuple) else (outs,)
        for i, out in enumerate(outs):
            np.save(output if i == 0 else output.replace(".npy", f".{i}.npy"), out.numpy())
        return
    if kernel == "matmul_kernel":
        a_, b_ = a["a"], a["b"]
        (m, kd), n = a_.shape, b_.shape[1]
        out = torch.empty(m, n, dtype=torch.float32)
        grid = (triton.cdiv(m, 16), triton.cdiv(n, 16))
        k.matmul_kernel[grid](a_, b_, out, m, n, kd, *a_.stride(), *b_.stride(), *out.stride(), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    elif kernel == "axpy_kernel":
        x, y = a["x"], a["y"]
        out = torch.empty_like(x)
        k.axpy_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, float(a["alpha"]), x.numel(), BLOCK=128)
    else:
        x = a[next(iter(a))]
        rows, cols = x.shape
        block = triton.next_power_of_2(cols)
        if kernel == "softmax_kernel":
            out = torch.empty_like(x)
            k.softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block)
        elif kernel == "rmsnorm_kernel":
            out = torch.empty_like(x)
            k.rmsnorm_kernel[(rows,)](x, a["w"], out, x.stride(0), cols, 1e-6, BLOCK=block)
        elif kernel == "layernorm_kernel":
            out = torch.empty_like(x)
            k.layernorm_kernel[(rows,)](x, a["w"], a["b"], out, x.stride(0), cols, 1e-5, BLOCK=block)
        elif kernel == "cross_entropy_kernel":
            out = torch.empty(rows, dtype=torch.float32)
            k.cross_entropy_kernel[(rows,)](x, a["target"], out, x.stride(0), cols, BLOCK=block)
        elif kernel == "bias_gelu_kernel":
            out = torch.empty_like(x)
            k.bias_gelu_kernel[(rows,)](x, a["bias"], out, x.stride(0), cols, BLOCK=block)
        elif kernel == "row_cumsum_kernel":
            out = torch.empty(rows, dtype=torch.float32)
            k.row_cumsum_kernel[(rows,)](x, out, x.stride(0), cols, BLOCK=16)  # several column blocks
        else:
            raise SystemExit(f"unknown kernel {kernel}")
    np.save(output, out.numpy())


if __name__ == "__main__":
    main(*sys.argv[1:])
