"""NCCL features RCCL lacks or honours differently (PTL502, PTL503, PTL505).

Core collectives (ncclAllReduce, ncclBroadcast, ncclSend/Recv in a group, communicator
setup) port through RCCL, which keeps the nccl* names: they are never reported. What is
reported: NVLS/CollNet/CGA configuration that RCCL ignores (PTL502), functions newer NCCL
has and RCCL releases lack (PTL503, by RCCL version), and NCCL-only tuning variables set
from code (PTL505, C/C++ and Python)."""

from __future__ import annotations

import ast
import posixpath
import re

from portlint.analyses.cuda.hipify import identifier_uses, is_call, report, word_regex
from portlint.frontends.cuda.parse import c_string_value, node_text, nodes_of_types
from portlint.frontends.cuda.preprocessor import AMD, ExpressionTooDeep, evaluate
from portlint.core.model import Span
from portlint.core.registry import detector

RCCL_BASE = "RCCL releases based on NCCL 2.21.5 (ROCm/rccl@0cbce2a7, Oct 2024)"
NEWER_RCCL = "newer RCCL (ROCm/rocm-systems, NCCL 2.28 base) has it"
# the RCCL release (its NCCL base, `[tool.portlint.versions] rccl`) from which NEWER_RCCL holds
NEWER_RCCL_BASE = (2, 28)
NO_RCCL = "no RCCL release has it (NCCL 2.30 parameter API)"

# NCCL functions absent from the RCCL 2.21.5-based release: name -> what newer RCCL says. The
# derived table (rules/collectives/names-nccl.toml) lists the same host functions from the
# headers themselves, plus NCCL's device API; tests/test_collectives.py keeps the two in step.
MISSING_IN_RCCL = {
    "ncclAlltoAll": NEWER_RCCL + " (older RCCL spells it ncclAllToAll)",
    "ncclCommShrink": NEWER_RCCL,
    "ncclCommGrow": NEWER_RCCL,
    "ncclCommRevoke": NEWER_RCCL,
    "ncclCommWindowRegister": NEWER_RCCL,
    "ncclCommWindowDeregister": NEWER_RCCL,
    "ncclPutSignal": NEWER_RCCL,
    "ncclSignal": NEWER_RCCL,
    "ncclWaitSignal": NEWER_RCCL,
    "ncclGroupSimulateEnd": NEWER_RCCL,
    "ncclCommSuspend": NEWER_RCCL + " (behind RCCL_SUSPEND_RESUME)",
    "ncclCommResume": NEWER_RCCL + " (behind RCCL_SUSPEND_RESUME)",
    "ncclCommGetUniqueId": "check your RCCL's nccl.h",
    "ncclCommMemStats": "check your RCCL's nccl.h",
    "ncclCommInitRankScalable": "check your RCCL's nccl.h",
    "ncclWinGetUserPtr": "check your RCCL's nccl.h",
    "ncclResetDebugInit": "check your RCCL's nccl.h",
}
PARAM_API = re.compile(r"^ncclParam[A-Z]\w*$")
_NCCL_RE = word_regex(("nccl",))
_VERSION_TEST = re.compile(r"\bNCCL_(VERSION_CODE|MAJOR|MINOR|VERSION)\b")

# ncclConfig_t fields that only mean something on NVIDIA hardware.
NVIDIA_ONLY_CONFIG_FIELDS = {
    "nvlsCTAs": "NVLink SHARP (NVLS) channels",
    "cgaClusterSize": "thread-block cluster (CGA) size",
    "collnetEnable": "CollNet/SHARP in-network reduction",
    "nvlinkCentricSched": "NVLink-centric scheduling",
}


def _span(ctx, start: int, end: int) -> Span:
    l1, c1 = ctx.offset_to_pos(start)
    l2, c2 = ctx.offset_to_pos(end)
    return Span(l1, c1, l2, c2)


_NCCL_VERSION_CALL = re.compile(r"\bNCCL_VERSION\s*\(\s*(\d{1,4})\s*,\s*(\d{1,4})\s*,\s*(\d{1,4})\s*\)")


def _nccl_code(major: int, minor: int, patch: int) -> int:
    """NCCL_VERSION(X, Y, Z) as nccl.h defines it (the layout changed at 2.9)."""
    return major * 1000 + minor * 100 + patch if (major, minor) <= (2, 8) else major * 10000 + minor * 100 + patch


def _skipped_by_rccl_version_test(node, rccl: tuple[int, ...]) -> bool:
    """Inside the true branch of an `#if` on NCCL_VERSION_CODE / NCCL_MAJOR / NCCL_MINOR that
    an AMD build against this RCCL (which reports its NCCL base) evaluates to false. The
    condition is evaluated, not just read for the macro's name: `NCCL_VERSION_CODE <
    NCCL_VERSION(2, 28, 0)` or `... || defined(__HIP_PLATFORM_AMD__)` is true on RCCL and
    keeps the call built; a name the evaluator does not know leaves the answer unknown, and
    an unknown answer hides nothing."""
    major, minor, patch = (tuple(rccl) + (0, 0, 0))[:3]
    known = {"NCCL_VERSION_CODE": _nccl_code(major, minor, patch), "NCCL_MAJOR": major, "NCCL_MINOR": minor,
             "NCCL_PATCH": patch}

    def state(name: str):
        return known[name] if name in known else AMD.macro_state(name)

    cur = node.parent
    while cur is not None:
        if cur.type in ("preproc_if", "preproc_elif"):
            cond = cur.child_by_field_name("condition")
            text = node_text(cond) if cond is not None else ""
            alt = cur.child_by_field_name("alternative")
            if _VERSION_TEST.search(text) and (alt is None or node.start_byte < alt.start_byte):
                text = _NCCL_VERSION_CALL.sub(lambda m: str(_nccl_code(*map(int, m.groups()))), text)
                try:
                    value = evaluate(text, state)
                except ExpressionTooDeep:
                    value = None
                if value is False:
                    return True
        cur = cur.parent
    return False


def _declared_type(obj) -> str | None:
    """The declared type text of a local variable or parameter named by `obj`, when the
    enclosing function declares it; None when unknown (a member, an expression)."""
    if obj is None or obj.type != "identifier":
        return None
    name = node_text(obj)
    fn = obj.parent
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    if fn is None:
        return None
    for decl in nodes_of_types(fn, ("declaration", "parameter_declaration")):
        if decl.start_byte > obj.start_byte:
            break
        for child in decl.named_children:
            ident = child
            while ident is not None and ident.type != "identifier":
                nxt = ident.child_by_field_name("declarator")
                if nxt is None and ident.type == "reference_declarator" and ident.named_children:
                    nxt = ident.named_children[0]
                ident = nxt
            if ident is not None and node_text(ident) == name:
                typ = decl.child_by_field_name("type")
                return node_text(typ) if typ is not None else ""
    return None


# ---- PTL502 -------------------------------------------------------------------------------

@detector("PTL502", nodes=("field_identifier", "call_expression"), tokens=("nccl",))
def nccl_feature_absent_in_rccl(node, ctx) -> None:
    if node.type == "field_identifier":
        what = NVIDIA_ONLY_CONFIG_FIELDS.get(node_text(node))
        if what is None:
            return
        parent = node.parent
        if parent is None or b"ncclConfig" not in ctx.data:
            return
        if parent.type == "field_expression":
            # a write: `cfg.nvlsCTAs = 16` (reads and other structs' fields stay quiet)
            assign = parent.parent
            if assign is None or assign.type != "assignment_expression" or assign.child_by_field_name("left") != parent:
                return
            declared = _declared_type(parent.child_by_field_name("argument"))
            if declared is not None and "ncclConfig" not in declared:
                return
        elif parent.type != "field_designator":
            return
        report(ctx, node, what=f"ncclConfig_t.{node_text(node)} ({what})",
                   suggestion="Leave it unset on AMD (RCCL has no NVLS, CollNet or CGA clusters); tune RCCL with its own knobs (RCCL_MSCCLPP_ENABLE, NCCL_MIN_NCHANNELS).")
        return
    fn = node.child_by_field_name("function")
    if fn is None or node_text(fn).lstrip(":") != "ncclMemAlloc":
        return
    report(ctx, fn, what="ncclMemAlloc (buffers for NVLS / user-buffer registration)",
               suggestion="On AMD it returns an ordinary device allocation (RCCL falls back to hipMalloc): keep it for correctness, but do not count on NVLS or zero-copy speed-ups.")


# ---- PTL503 -------------------------------------------------------------------------------

def _derived_rows() -> dict[str, object]:
    """name -> its row in rules/collectives/names-nccl.toml (derived from NCCL's and RCCL's
    headers by scripts/derive_name_tables.py): host functions RCCL's nccl.h lacks, and NCCL's
    device API. The notes in MISSING_IN_RCCL say more for the names they know."""
    from portlint.frontends.cuda.name_tables import entries_for

    return {name: row for row in entries_for("PTL503") for name in row.names}


def _missing_in_rccl(ctx, name: str, derived: dict) -> str | None:
    """What RCCL says of an NCCL name the configured RCCL lacks (the `later` of the message),
    or None: not a name RCCL lacks, or one the configured release has (`[tool.portlint.versions]
    rccl` on the NCCL 2.28 base or later)."""
    row = derived.get(name)
    if name in MISSING_IN_RCCL or row is not None:
        later = MISSING_IN_RCCL.get(name) or row.advise(name)
        return None if later.startswith(NEWER_RCCL) and ctx.settings.version("rccl") >= NEWER_RCCL_BASE else later
    return NO_RCCL if PARAM_API.match(name) else None


@detector("PTL503", tokens=("nccl",))
def nccl_api_version_drift(ctx) -> None:
    derived = _derived_rows()
    device_lines: set[int] = set()
    for use in identifier_uses(ctx, _NCCL_RE, lambda w: w in MISSING_IN_RCCL or w in derived or bool(PARAM_API.match(w))):
        row = derived.get(use.name)
        device_api = row is not None and row.kind == "device"
        if not is_call(use) and not use.in_macro and not device_api:
            continue  # a device-API type (`ncclDevComm`, `ncclTeam`) counts too
        if device_api:
            line = ctx.offset_to_pos(use.start)[0]
            if line in device_lines:
                continue  # one finding per line of device-API code
            device_lines.add(line)
        later = _missing_in_rccl(ctx, use.name, derived)
        if later is None:
            continue  # the configured RCCL (`[tool.portlint.versions] rccl`) has it
        if not use.in_macro and _skipped_by_rccl_version_test(use.node, ctx.settings.version("rccl")) and later.startswith(NEWER_RCCL):
            continue  # a version test that RCCL's reported base version answers correctly: not built
        alt = "; for all-to-all, an ncclSend/ncclRecv loop in a group compiles everywhere" if use.name == "ncclAlltoAll" else ""
        report(
            ctx,
            _span(ctx, use.start, use.end),
            name=use.name,
            base=RCCL_BASE,
            later=later,
            suggestion="Feature-test the RCCL you build against (CMake check_symbol_exists, or RCCL_* feature macros) rather than NCCL_VERSION_CODE, which RCCL sets to its NCCL base" + alt + ".",
        )
    _device_headers_and_loaded_names(ctx, derived)


_DLSYM = {"dlsym", "dlvsym", "GetProcAddress"}
DEVICE_API_LATER = "no RCCL release has NCCL's device API (NCCL 2.28+, nccl_device.h)"


def _device_headers_and_loaded_names(ctx, derived: dict) -> None:
    """The other two ways code reaches what RCCL lacks: `#include <nccl_device.h>` (or a
    header under nccl_device/), not found on ROCm, and a function loaded by name
    (`dlsym(handle, "ncclCommWindowRegister")`), which links but returns NULL there."""
    for node in nodes_of_types(ctx.tree.root_node, ("preproc_include", "call_expression")):
        if node.type == "preproc_include":
            path = node.child_by_field_name("path")
            header = node_text(path)[1:-1].strip() if path is not None and path.type in ("system_lib_string", "string_literal") else ""
            if header:  # `<./nccl_device.h>` names the same header
                header = posixpath.normpath(header)
            if header == "nccl_device.h" or header.startswith("nccl_device/"):
                report(ctx, path, name=header, base=RCCL_BASE, later=DEVICE_API_LATER,
                       suggestion="Keep the NCCL device-API code in the CUDA build (`#ifndef __HIP_PLATFORM_AMD__`) "
                                  "and give AMD a host-API path (ncclSend/ncclRecv, the collectives).")
            continue
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is None or args is None or node_text(fn).split("::")[-1] not in _DLSYM:
            continue
        named = [(a, v) for a in args.named_children if (v := c_string_value(a)) is not None]
        if len(named) != 1:
            continue
        where, name = named[0]
        later = _missing_in_rccl(ctx, name, derived)
        if later is None:
            continue
        report(ctx, where, name=name, base=RCCL_BASE, later=later + "; loaded by name, the lookup returns NULL on RCCL",
               suggestion="Check the looked-up pointer for NULL and take the RCCL path when it is missing, or feature-test the RCCL you build against.")


# ---- PTL505 -------------------------------------------------------------------------------

NCCL_ONLY_ENV = {
    "NCCL_NVLS_ENABLE", "NCCL_NVLS_NCHANNELS", "NCCL_NVLS_CHUNKSIZE", "NCCL_NVLSTREE_MAX_CHUNKSIZE",
    "NCCL_COLLNET_ENABLE", "NCCL_COLLNET_NODE_THRESHOLD", "NCCL_MNNVL_ENABLE", "NCCL_MNNVL_UUID",
    "NCCL_MNNVL_CLIQUE_ID", "NCCL_CUMEM_ENABLE", "NCCL_CUMEM_HOST_ENABLE", "NCCL_NVB_DISABLE",
    "NCCL_NVB_PRECONNECT", "NCCL_PXN_DISABLE", "NCCL_PXN_C2C", "NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE",
    "NCCL_P2P_NVL_CHUNKSIZE", "NCCL_SHARP_DISABLE", "NCCL_SHARP_GROUP_SIZE_THRESH", "NCCL_CTA_POLICY",
    "CUDA_DEVICE_MAX_CONNECTIONS",
}
ENV_PREFIXES = ("NCCL_NVLS_", "NCCL_COLLNET_", "NCCL_MNNVL_", "NCCL_SHARP_", "SHARP_COLL_")
_HINT = {"CUDA_DEVICE_MAX_CONNECTIONS": "the HIP runtime reads GPU_MAX_HW_QUEUES instead"}


def _env_name(text: str) -> str | None:
    name = text.split("=", 1)[0].strip()
    if name in NCCL_ONLY_ENV or name.startswith(ENV_PREFIXES):
        return name
    return None


def _is_os_environ(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "environ"
    return isinstance(node, ast.Name) and node.id == "environ"


def _report_env(ctx, where, name: str, python: bool) -> None:
    hint = _HINT.get(name, "RCCL has its own knobs (RCCL_*; NCCL_DEBUG, NCCL_SOCKET_IFNAME, NCCL_IB_HCA are honoured)")
    targets = None if python else ("rocm",)
    report(ctx, where, name=name, hint=hint, targets=targets)


@detector("PTL505", nodes=("call_expression", "Call", "Assign"), tokens=("NCCL_", "SHARP_COLL_", "CUDA_DEVICE_MAX_CONNECTIONS"))
def nccl_env_tuning_not_honoured(node, ctx) -> None:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and _is_os_environ(target.value):
                key = target.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    name = _env_name(key.value)
                    if name:
                        _report_env(ctx, target, name, True)
        return
    if isinstance(node, ast.Call):
        func = node.func
        if not isinstance(func, ast.Attribute) or not node.args:
            return
        is_env_call = (func.attr in ("setdefault", "__setitem__") and _is_os_environ(func.value)) or (
            func.attr == "putenv" and isinstance(func.value, ast.Name) and func.value.id == "os")
        first = node.args[0]
        if is_env_call and isinstance(first, ast.Constant) and isinstance(first.value, str):
            name = _env_name(first.value)
            if name:
                _report_env(ctx, node, name, True)
        return
    # C/C++: setenv("NCCL_...", value, overwrite) / putenv("NCCL_...=...")
    fn = node.child_by_field_name("function")
    if fn is None or node_text(fn).split("::")[-1] not in ("setenv", "putenv", "_putenv", "_putenv_s", "SetEnvironmentVariableA"):
        return
    args = node.child_by_field_name("arguments")
    if args is None or not args.named_children:
        return
    value = c_string_value(args.named_children[0])
    name = _env_name(value) if value else None
    if name:
        _report_env(ctx, node, name, False)
