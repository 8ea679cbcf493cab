"""The findings stage: what every finding of a file goes through after the detectors ran and
before anything renders it (portlint.pipeline.engine calls apply_findings_stage once per file;
the editor server reaches it through the same engine call, so it agrees with the CLI)."""

from __future__ import annotations

from portlint.core.globs import covers
from portlint.core.model import FileResult, Finding, Severity
from portlint.findings.precedence import drop_superseded
from portlint.findings.roles import demote_by_role
from portlint.findings.roots import fold_roots, fold_under
from portlint.findings.selection import TOOL_INTERNAL, TOOL_UNKNOWN, TOOL_UNUSED, Plan
from portlint.findings.severity import apply_severities
from portlint.findings.suppressions import file_suppressions, mentions_portlint
from portlint.frontends.cuda.guards import RENAMED_IN_VERSION_GATES, amd_only_guard, excluded_from_amd, guard_map
from portlint.frontends.cuda.optional_hints import amd_only_quiet, hint_for
from portlint.index.context import FileContext
from portlint.rules import tool
from portlint.rules.cuda_ptx import stub_for


def apply_findings_stage(ctx: FileContext, plan: Plan, result: FileResult) -> None:
    """The findings stage of one file, in this order for every language, for the CLI and the
    server alike: one finding per construct, platform reach (guards, roles), targets and
    severities, per-file ignores, inline suppressions (and the tool's findings about them),
    one finding per root cause. `result.findings` is what the reporters render; the scan-wide
    steps (baseline, changed lines) follow in the command line's run."""
    settings = plan.settings
    # 0. one finding per construct: a rule's finding replaces those of the rules it supersedes
    findings = ctx.findings = drop_superseded(ctx.findings)
    # 1. preprocessor guards (portlint/frontends/cuda/guards.py): a rocm finding is not a problem in a
    #    branch an AMD build skips with a HIP branch beside it (ported), nor where a condition
    #    naming the vendor leaves the code out of AMD builds (ported by omission), nor in code
    #    only AMD compiles; an optional hint (rules/optional-hints.toml) an AMD build skips
    #    loses nothing. An arch-gated body whose `#else` is a stub is not ported.
    if ctx.language == "cuda" and any("rocm" in f.targets for f in findings):
        for f in findings:
            if "rocm" not in f.targets or f.rule_id == TOOL_INTERNAL:
                continue
            reason = _guard_verdict(ctx, f)
            if reason is None:
                continue
            del f.targets["rocm"]
            if not f.targets:
                f.targets = {"rocm": plan.rules[f.rule_id].severity.get("rocm", f.severity)}
                f.suppressed = reason
                f.suppression_kind = "inSource"
            else:
                f.severity = max(f.targets.values(), key=lambda s: s.rank)
    # 2. targets the user did not ask about
    kept: list[Finding] = []
    for f in findings:
        targets = {t: s for t, s in f.targets.items() if t in settings.targets}
        if not targets:
            continue
        if targets != f.targets:
            f.targets = targets
            f.severity = max(targets.values(), key=lambda s: s.rank)
        kept.append(f)
    findings = kept
    # 2b. severities the config sets per rule (and target): portlint.findings.severity
    apply_severities(findings, settings)
    # 2c. where the code runs (portlint/findings/roles.py): in a test, benchmark, example,
    #     conversion tool or script a finding is a note
    demote_by_role(ctx, findings)
    # 3. per-file ignores from the config
    if settings.per_file_ignores:
        drops = [ids for glob, ids in settings.per_file_ignores.items() if covers(ctx.path, glob)]
        if drops:
            flat = tuple(i for ids in drops for i in ids)
            findings = [f for f in findings if not f.rule_id.startswith(flat)]
    # 4. inline suppressions, then the tool's own findings about them
    by_comment: set[int] = set()
    tool_findings: list[Finding] = []
    if mentions_portlint(ctx.text):
        sups = file_suppressions(ctx)
        for f in findings:
            if f.suppressed:
                continue
            sup = sups.covering(f.rule_id, f.span)
            if sup is not None:
                f.suppressed = f"suppressed by comment on line {sup.line}" + (f": {sup.reason}" if sup.reason else "")
                f.suppression_kind = "inSource"
                by_comment.add(id(f))
        tool_findings = _suppression_findings(ctx, plan, sups)
    # 5. one finding per root cause (portlint/findings/roots.py): the uses of one `#include`
    #    or `#define` folded under it, for the rules whose file says `fold = "root"`
    findings = fold_roots(findings, by_comment)
    # 6. a file its package's ROCm build never compiles (rule PTL057, portlint/index/build_scope.py):
    #    its other ROCm findings are folded under that one finding
    outside = next((f for f in findings if f.rule_id == NOT_IN_ROCM_BUILD and not f.suppressed), None)
    if outside is not None:
        findings = fold_under(outside, findings, "rocm")
        if not outside.related and "rocm" in outside.targets:
            # nothing to port in it but its place in the ROCm source list: a note
            outside.targets["rocm"] = Severity.parse("note")
            outside.severity = max(outside.targets.values(), key=lambda s: s.rank)
    result.findings = findings + tool_findings


NOT_IN_ROCM_BUILD = "PTL057"


def _guard_verdict(ctx: FileContext, f: Finding) -> str | None:
    """Why the rocm side of a CUDA finding is no problem, from the preprocessor guards
    around it; None when it is one. May add the not-ported note of an arch stub to the
    finding's suggestion."""
    line = f.span.start_line
    guard = ctx.fact(guard_map).dead_for_amd(line)
    if guard is None:
        quiet, why = amd_only_quiet()
        only = amd_only_guard(ctx, line) if f.rule_id in quiet else None
        return f"{only.amd_only_reason()}: {why}" if only is not None else None
    excluded = excluded_from_amd(ctx, line)
    # an `#else` that is empty or only traps is not a HIP branch: the code is not ported
    stub = stub_for(ctx, line) if excluded is None else None
    # an optional hint is no loss where AMD compiles nothing in its place; where AMD's branch
    # asserts or traps instead, calling it stops the AMD build's kernel: still not ported
    if stub is None or stub.holds == "nothing":
        hint = hint_for(f.rule_id, "\n".join(ctx.lines[line - 1:f.span.end_line]))
        if hint is not None:
            return f"an optional hint an AMD build skips (inside `{guard.condition}`, line {guard.line}): {hint.why}"
    if stub is not None:
        f.suggestion = stub.note() + ("\n" + f.suggestion if f.suggestion else "")
        return None
    if guard.version_gate and f.rule_id in RENAMED_IN_VERSION_GATES:
        return None  # a rename inside `#if CUDART_VERSION >= N`: ready for when the gate is fixed
    if guard.has_alternative:
        return guard.reason()
    if excluded is not None:
        return excluded[0].excluded_reason(excluded[1])
    return None


def _suppression_findings(ctx: FileContext, plan: Plan, sups) -> list[Finding]:
    before = len(ctx.findings)
    for rule_id, func in ((TOOL_UNKNOWN, tool.unknown_suppression_id), (TOOL_UNUSED, tool.unused_suppression)):
        if rule_id in plan.enabled:
            ctx.rule = plan.rules[rule_id]
            func(ctx, sups, plan.enabled)
    ctx.rule = None
    targets = set(plan.settings.targets)
    out = ctx.findings[before:]
    for f in out:
        f.targets = {t: s for t, s in f.targets.items() if t in targets}
    return [f for f in out if f.targets]
