"""torch.distributed backends and NCCL from Python (PTL501, PTL504).

Like the device-string family, these fire only in files that also target XLA (TPU,
Trainium) or Gaudi, and not in code a device guard keeps on CUDA: on ROCm PyTorch's "nccl"
backend is RCCL, so a plain GPU script is not a finding."""

from __future__ import annotations

import ast
import re

from portlint.core.model import Edit, Fix, Span
from portlint.analyses.python.devices import reach, relevant, string_literal, target_words, torch_targets
from portlint.analyses.python.guards import GAUDI, TPU, TRAINIUM, dotted
from portlint.frontends.python.names import bindings
from portlint.core.registry import detector

_INIT_CALLS = {"init_process_group", "new_group", "new_subgroups", "init_distributed", "init_device_mesh_backend"}
_BACKEND_KWARGS = {"backend", "dist_backend", "process_group_backend", "ddp_backend", "distributed_backend"}
_XLA_IMPORT = "import torch_xla.distributed.xla_backend"
_HCCL_IMPORT = "import habana_frameworks.torch.distributed.hccl"


def _targets(ctx, node) -> frozenset[str]:
    return reach(ctx, node, ctx.fact(torch_targets))


def _is_nccl(node: ast.AST) -> bool:
    if string_literal(node):
        return node.value.lower() == "nccl"
    return isinstance(node, ast.Attribute) and node.attr == "NCCL" and dotted(node.value).endswith("Backend")


def _backend_name_target(node: ast.AST) -> bool:
    name = dotted(node).rsplit(".", 1)[-1].lower() if dotted(node) else ""
    return "backend" in name


def _import_insertion(ctx, statement: str) -> Edit | None:
    """Insert `statement` after the module's leading imports, unless the file has it already."""
    if re.search(re.escape(statement) + r"\b", ctx.text):
        return None
    last = None
    for i, stmt in enumerate(ctx.module.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last = stmt
        elif not (i == 0 and isinstance(stmt, ast.Expr) and string_literal(stmt.value)):
            break
    line = 1 if last is None else (last.end_lineno or last.lineno) + 1
    return Edit(Span(line, 1, line, 1), statement + "\n")


def _backend_fix(ctx, node: ast.AST, targets) -> Fix | None:
    if targets <= {TPU, TRAINIUM}:
        new, imp = "xla", _XLA_IMPORT
    elif targets <= {GAUDI}:
        new, imp = "hccl", _HCCL_IMPORT
    else:
        return None
    if string_literal(node):
        raw = ctx.span_text(ctx.node_span(node))
        q = raw[:1] if raw[:1] in ("'", '"') else '"'
        text = f"{q}{new}{q}"
    else:
        text = f'"{new}"'
    edits = [Edit(ctx.node_span(node), text)]
    ins = _import_insertion(ctx, imp)
    if ins is not None:
        edits.insert(0, ins)
    return Fix(f'use the "{new}" backend', tuple(edits), "unsafe")


def _suggestion(targets) -> str:
    parts = []
    if targets & {TPU, TRAINIUM}:
        parts.append(f'TPU/Trainium (torch_xla): `{_XLA_IMPORT}` then `dist.init_process_group("xla", init_method="xla://")`')
    if GAUDI in targets:
        parts.append(f'Gaudi: `{_HCCL_IMPORT}` then `dist.init_process_group("hccl")`')
    return "; ".join(parts) + ". Code that compares the backend with \"nccl\" needs the same change."


@detector("PTL504", nodes=("Call", "Assign", "AnnAssign", "Attribute", "Name"), tokens=("nccl", "NCCL"))
def torch_distributed_backend_nccl(node, ctx) -> None:
    """`init_process_group("nccl")` and friends in a file that targets XLA or Gaudi."""
    if not relevant(ctx):
        return
    values: list[ast.AST] = []
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        last = node.func.attr if isinstance(node.func, ast.Attribute) else name.rsplit(".", 1)[-1]
        if last in _INIT_CALLS and node.args:
            values.append(node.args[0])
        values += [k.value for k in node.keywords if k.arg in _BACKEND_KWARGS]
        if last == "add_argument" and any(string_literal(a) and "backend" in a.value for a in node.args):
            values += [k.value for k in node.keywords if k.arg == "default"]
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        names = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is not None and any(_backend_name_target(t) for t in names):
            values.append(node.value)
    else:
        # ProcessGroupNCCL: the NCCL process-group class itself
        ident = node.attr if isinstance(node, ast.Attribute) else node.id
        if ident == "ProcessGroupNCCL" and isinstance(getattr(node, "ctx", None), ast.Load):
            targets = _targets(ctx, node)
            if targets:
                ctx.report(node, what="`ProcessGroupNCCL`", on=target_words(targets), targets=tuple(targets), suggestion=_suggestion(targets))
        return
    for value in values:
        if not _is_nccl(value):
            continue
        targets = _targets(ctx, value)
        if not targets:
            continue
        fix = _backend_fix(ctx, value, targets)
        ctx.report(value, what='the "nccl" backend', on=target_words(targets), targets=tuple(targets), fix=fix,
                   suggestion=_suggestion(targets))


_NCCL_MODULES = ("torch.cuda.nccl", "cupy.cuda.nccl")
_NCCL_CLASSES = {"PyNcclCommunicator", "NcclCommunicator"}


@detector("PTL501", nodes=("Import", "ImportFrom", "Attribute", "Call"), tokens=("nccl", "Nccl"))
def nccl_on_non_gpu_target(node, ctx) -> None:
    """Direct NCCL bindings (torch.cuda.nccl, cupy.cuda.nccl, pynccl) in a file that targets XLA or Gaudi."""
    if not relevant(ctx):
        return
    what = None
    if isinstance(node, ast.Import):
        hits = [b.module for b in bindings(node) if b.module.startswith(_NCCL_MODULES) or b.module.rsplit(".", 1)[-1] == "pynccl"]
        what = f"`import {hits[0]}`" if hits else None
    elif isinstance(node, ast.ImportFrom):
        bound = bindings(node)
        mod = bound[0].module if bound else ""
        names = [b.member for b in bound]
        if mod.startswith(_NCCL_MODULES) or mod.rsplit(".", 1)[-1] == "pynccl":
            what = f"`from {mod} import ...`"
        elif mod in ("torch.cuda", "cupy.cuda") and "nccl" in names:
            what = f"`from {mod} import nccl`"
    elif isinstance(node, ast.Attribute):
        # the outermost `torch.cuda.nccl` / `cupy.cuda.nccl` reference
        if node.attr == "nccl" and dotted(node.value) in ("torch.cuda", "cupy.cuda", "cp.cuda"):
            what = f"`{dotted(node)}`"
    elif isinstance(node, ast.Call):
        last = node.func.attr if isinstance(node.func, ast.Attribute) else dotted(node.func)
        if last in _NCCL_CLASSES:
            what = f"`{last}`"
    if what is None:
        return
    targets = _targets(ctx, node)
    if targets:
        ctx.report(node, what=what, on=target_words(targets), targets=tuple(targets),
                   suggestion="Use XLA collectives on TPU/Trainium (`xm.all_reduce`, `xm.all_gather`, `xm.reduce_scatter`, or "
                   "`torch.distributed` with the \"xla\" backend) and `torch.distributed` with the \"hccl\" backend on Gaudi.")
