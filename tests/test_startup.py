"""Start-up stays light: the command line imports nothing heavy until a scan needs it.
(Speed itself is measured by bench/run.py, not here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("tree_sitter", "tree_sitter_cuda", "clang", "jax", "torch", "sarif_om", "jinja2", "numpy", "jsonschema", "pygls", "lsprotocol")


def loaded_after(code: str, cwd: Path | None = None) -> dict[str, bool]:
    probe = code + "\nimport sys, json\nprint(json.dumps({m: m in sys.modules for m in %r}))\n" % (HEAVY,)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def scan_code(*args: str) -> str:
    """The command's `main` (what `python -m portlint` runs before its fast exit, which
    would end the process before the probe could look at the loaded modules)."""
    return (
        "import sys\n"
        f"sys.argv = ['portlint', 'scan', *{list(args)!r}]\n"
        "from portlint.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )


def test_importing_the_cli_loads_nothing_heavy():
    loaded = loaded_after("import portlint.cli")
    assert not any(loaded.values()), loaded


def test_scanning_one_cuda_file_loads_only_the_cuda_parser(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n")
    loaded = loaded_after(scan_code("--no-cache", "--isolated", "k.cu"), cwd=tmp_path)
    assert loaded["tree_sitter"]
    assert not any(v for m, v in loaded.items() if m not in ("tree_sitter", "tree_sitter_cuda")), loaded


def test_scanning_one_python_file_loads_no_cuda_parser_nor_sarif(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch.zeros(3)\n")
    loaded = loaded_after(scan_code("--no-cache", "--isolated", "m.py"), cwd=tmp_path)
    assert not any(loaded.values()), loaded


def test_json_report_does_not_load_sarif_om(tmp_path):
    (tmp_path / "k.cu").write_text('__global__ void k() { asm volatile("membar.gl;"); }\n')
    loaded = loaded_after(scan_code("--no-cache", "--isolated", "--format", "json", "k.cu"), cwd=tmp_path)
    assert not loaded["sarif_om"] and not loaded["clang"], loaded
