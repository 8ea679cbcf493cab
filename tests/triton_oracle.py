"""Triton's own compiler as the oracle for the Triton rules, no GPU needed.

`triton.compile(ASTSource(...), target=GPUTarget(...))` runs the whole backend pipeline for a
named target on any machine: the AMD backend (LLVM AMDGPU + ROCm device libraries, shipped in
the wheel) produces AMDGCN and a code object, the NVIDIA backend produces PTX and a cubin.

`compile_kernel` returns a `Compiled` record: whether the backend accepted the kernel, its
diagnostics, and the launch facts from the compiled metadata (warp size, warps, shared memory,
pipeline stages). A compile counts as failed when Triton raises *or* LLVM prints an `error:`
diagnostic: for some invalid inline assembly (PTX `=f` constraints) the AMD backend only logs
"could not allocate output register" on the process's stderr, drops the instruction and still
returns a code object, so the diagnostics are captured at the file-descriptor level.

Fixture kernels are loaded by `load_kernels`: only the fixture's imports of triton, its
module-level constants and its top-level `@triton.jit` functions are executed (under the
fixture's own file name, so Triton can read the kernel source), not its host code, which
needs torch, torch_xla or a GPU driver."""

from __future__ import annotations

import ast
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from conftest import require_module

# (backend, arch, lanes per warp/wavefront)
GFX942 = ("hip", "gfx942", 64)      # MI300X / MI325X (CDNA3)
GFX90A = ("hip", "gfx90a", 64)      # MI210 / MI250X (CDNA2)
SM90 = ("cuda", 90, 32)             # H100
AMD_TARGETS = (GFX942, GFX90A)
ALL_TARGETS = (GFX942, GFX90A, SM90)
MAX_THREADS_PER_WORKGROUP = 1024    # HIP and CUDA launch limit for one workgroup / block


@dataclass
class Compiled:
    target: tuple
    ok: bool
    diagnostics: str = ""
    warp_size: int = 0
    num_warps: int = 0
    shared: int = 0
    num_stages: int = 0
    metadata: dict = field(default_factory=dict)
    asm: dict = field(default_factory=dict)

    @property
    def threads_per_workgroup(self) -> int:
        return self.warp_size * self.num_warps

    def __str__(self) -> str:
        name = f"{self.target[0]}:{self.target[1]}"
        if not self.ok:
            return f"{name} FAILED: {self.diagnostics.strip()[:400]}"
        return (f"{name} ok: warp_size={self.warp_size} num_warps={self.num_warps} "
                f"threads={self.threads_per_workgroup} shared={self.shared} num_stages={self.num_stages}")


_CACHE_DIR: str | None = None


def _triton():
    triton = require_module("triton")
    global _CACHE_DIR
    if _CACHE_DIR is None:
        # a private cache, and always compile: a cached kernel would hide the LLVM diagnostics
        import atexit
        import shutil

        _CACHE_DIR = tempfile.mkdtemp(prefix="portlint-triton-cache-")
        atexit.register(shutil.rmtree, _CACHE_DIR, True)
        os.environ["TRITON_CACHE_DIR"] = _CACHE_DIR
        os.environ["TRITON_ALWAYS_COMPILE"] = "1"
        os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    return triton


def compile_kernel(fn, signature: dict, constexprs: dict | None = None, target: tuple = GFX942,
                   **options) -> Compiled:
    """Compile the @triton.jit function `fn` for `target` with the given options.

    `signature` maps every parameter to its Triton type ("*fp32", "i32", "constexpr", ...);
    `constexprs` gives the constexpr values."""
    triton = _triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if getattr(fn, "is_gluon", lambda: False)():
        from triton.experimental.gluon._runtime import GluonASTSource as ASTSource  # module attrs (warp size) set
    src = ASTSource(fn, signature, constexprs or {})
    options.setdefault("num_warps", 4)
    with StderrCapture() as captured:
        try:
            kernel = triton.compile(src, target=GPUTarget(*target), options=options)
        except Exception as exc:  # the backend's rejection is the result being measured
            kernel, error = None, f"{type(exc).__name__}: {exc}"
            if exc.__cause__ is not None:
                error += f"\n(caused by {type(exc.__cause__).__name__}: {exc.__cause__})"
        else:
            error = ""
    diagnostics = "\n".join(part for part in (error, captured.text) if part)
    if kernel is None or _llvm_error(captured.text):
        return Compiled(target, False, diagnostics)
    meta = kernel.metadata._asdict()
    return Compiled(target, True, diagnostics, warp_size=meta["warp_size"], num_warps=meta["num_warps"],
                    shared=meta["shared"], num_stages=meta["num_stages"], metadata=meta, asm=dict(kernel.asm))


def _llvm_error(text: str) -> bool:
    return any(line.lstrip().startswith("error:") or ": error:" in line for line in text.splitlines())


class StderrCapture:
    """Collect what native code writes to file descriptor 2 while the block runs."""

    def __enter__(self):
        import sys

        sys.stderr.flush()
        self._file = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        self.text = ""
        return self

    def __exit__(self, *exc):
        import sys

        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode("utf-8", "replace")
        self._file.close()
        return False


def load_kernels(path: Path, extra_globals: dict | None = None) -> dict:
    """Execute a fixture's triton imports, constants and top-level @triton.jit functions.

    Returns the resulting namespace (kernel name -> JITFunction, constants ...). Host
    functions, other imports and module-level conditionals are left out."""
    _triton()
    tree = _parse_top_level(path)
    kept: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.Import) and all(a.name.split(".")[0] == "triton" for a in node.names):
            kept.append(node)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton":
            kept.append(node)
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.JoinedStr, ast.Call)) \
                and _is_string_expr(node.value):
            kept.append(node)
        elif isinstance(node, ast.FunctionDef) and _is_triton_jit(node):
            kept.append(_jit_only(node, node.name))
        elif isinstance(node, ast.Try):
            # `try: from triton.language.extra import libdevice except ...: <fallback>`: the
            # import the installed Triton has
            kept.extend(n for n in node.body if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("triton"))
        elif isinstance(node, ast.If):
            # `if FLAG: @jit def k ... else: @jit def k`: both variants, as k__if and k__else
            for suffix, branch in (("__if", node.body), ("__else", node.orelse)):
                kept.extend(_jit_only(n, n.name + suffix) for n in branch
                            if isinstance(n, ast.FunctionDef) and _is_triton_jit(n))
    module = ast.Module(body=kept, type_ignores=[])
    namespace: dict = {"__name__": f"_portlint_triton_fixture_{path.stem}", "__file__": str(path)}
    namespace.update(extra_globals or {})
    exec(compile(module, str(path), "exec"), namespace)
    return namespace


def _parse_top_level(path: Path) -> ast.Module:
    """The module's AST; for a file in newer Python syntax than this interpreter reads (a
    PEP 695 alias beside the kernels), the top-level statements that do parse, one by one,
    at their own line numbers."""
    text = path.read_text(encoding="utf-8")
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError:
        pass
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() and not line[0].isspace() and not line.startswith((")", "]", "}"))]
    # a decorator belongs to the statement below it
    blocks, current = [], None
    for i in starts:
        if current is not None and lines[current].startswith("@") and (lines[i - 1].startswith("@") or i - 1 == current):
            continue
        if current is not None and lines[i - 1].rstrip().endswith(("(", ",")):
            continue
        if current is not None:
            blocks.append((current, i))
        current = i
    if current is not None:
        blocks.append((current, len(lines)))
    body: list[ast.stmt] = []
    for start, end in blocks:
        try:
            part = ast.parse("".join(lines[start:end]), filename=str(path))
        except SyntaxError:
            continue  # the newer-syntax statement itself
        ast.increment_lineno(part, start)
        body.extend(part.body)
    return ast.Module(body=body, type_ignores=[])


def load_functions(path: Path, names: set[str], extra_globals: dict | None = None) -> dict:
    """Execute only the named top-level (host) functions of a fixture; they run with the
    globals given (e.g. a module they take as an argument needs none)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    kept = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert {n.name for n in kept} == set(names), f"{path.name} lacks {set(names) - {n.name for n in kept}}"
    namespace: dict = {"__name__": f"_portlint_fixture_functions_{path.stem}", **(extra_globals or {})}
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def _jit_only(node: ast.FunctionDef, name: str) -> ast.FunctionDef:
    """The function with only its @triton.jit decorator (autotune/heuristics configs are
    compiled explicitly by the tests)."""
    node.decorator_list = [d for d in node.decorator_list if _decorator_name(d) == "triton.jit"]
    node.name = name
    return node


def _is_string_expr(node: ast.expr) -> bool:
    if isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] == "constexpr" and len(node.args) == 1:
        return _is_string_expr(node.args[0])
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, int, float))
    # "".join([...]) of string literals (ASM_TEMPLATE in the PTX fixture)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant) and all(
                isinstance(a, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in a.elts)
                for a in node.args))


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return ast.unparse(node)


def _is_triton_jit(node: ast.FunctionDef) -> bool:
    return any(_decorator_name(d) == "triton.jit" for d in node.decorator_list)
