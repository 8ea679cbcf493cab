"""SARIF 2.1.0 for GitHub code scanning, built from sarif-om's classes.

sarif-om's attrs classes carry defaults that must not reach the log (`level="warning"`,
`ruleIndex=-1`, `kind="fail"`, `results=None`), and do not serialise themselves. So every
object here is built through `_make`, which records the fields set explicitly, and
`_to_json` writes exactly those, under their SARIF property names. What GitHub needs
beyond the schema: one run; `results` even when empty; non-empty rule texts; repo-relative
POSIX URIs with `uriBaseId`; `partialFingerprints.primaryLocationLineHash` computed its way;
`fixes` only with a real replacement; suppressed results left out unless asked for;
`automationDetails` only when a category is given; no timestamps; at most 25,000 results
in the run (GitHub rejects more: the least severe are left out, with a notification saying
how many and how to shard the scan); a fingerprint unique to each result.

A file inside the project root has a root-relative URI with `uriBaseId: %SRCROOT%`; a file
outside it (named explicitly on the command line) has an absolute `file://` URI and no
base: a base beside an absolute URI is invalid."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

import attr
import sarif_om as so

from portlint import __version__
from portlint.core.model import utf16_col
from portlint.core.config import STACK_TARGET
from portlint.core.rule_links import absolute_rule_url
from portlint.findings.fingerprint import portlint_fingerprints
from portlint.findings.roots import more_uses
from portlint.findings.severity import configured_level
from portlint.output.escape import json_ready, path_uri

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_PRECISION = {"high": "high", "medium": "medium", "low": "low"}
_PROBLEM = {"error": "error", "warning": "warning", "note": "recommendation"}
# GitHub code scanning rejects a run with more results than this
MAX_RESULTS = 25_000


def _make(cls, **fields):
    obj = cls(**fields)
    object.__setattr__(obj, "_portlint_set", tuple(fields))
    return obj


def _to_json(value):
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if attr.has(type(value)):
        names = {f.name: f.metadata.get("schema_property_name", f.name) for f in attr.fields(type(value))}
        out = {}
        for name in getattr(value, "_portlint_set", ()):
            if name == "properties" and isinstance(getattr(value, name), dict):
                out["properties"] = _to_json(getattr(value, name))
                continue
            out[names[name]] = _to_json(getattr(value, name))
        return out
    return value


def _artifact(path: str):
    """The ArtifactLocation of a reported path (root-relative POSIX, or absolute outside
    the root). Either way the URI percent-encodes the name's bytes, so a name that is not
    UTF-8 has a URI too."""
    if PurePosixPath(path).is_absolute():
        return _make(so.ArtifactLocation, uri=PurePosixPath(path).as_uri())
    return _make(so.ArtifactLocation, uri=path_uri(PurePosixPath(path).as_posix()), uri_base_id="%SRCROOT%")


def within_limit(findings: list) -> tuple[list, int]:
    """(the findings to put in the run, how many were left out): at most MAX_RESULTS,
    keeping active before suppressed, then the most severe; kept in report order."""
    if len(findings) <= MAX_RESULTS:
        return findings, 0
    ranked = sorted(range(len(findings)), key=lambda i: (bool(findings[i].suppressed), -findings[i].severity.rank, i))
    keep = sorted(ranked[:MAX_RESULTS])
    return [findings[i] for i in keep], len(findings) - MAX_RESULTS


def reported_findings(result, options) -> list:
    include_suppressed = options.get("include_suppressed", False)
    return [f for f in result.findings if include_suppressed or not f.suppressed]


def over_limit_message(result, options) -> str | None:
    """The line saying how many results were left out (None when none were): a
    notification in the run, and the command line prints it on stderr."""
    return _over_limit_text(within_limit(reported_findings(result, options))[1])


def _over_limit_text(dropped: int) -> str | None:
    if not dropped:
        return None
    return (
        f"SARIF holds {MAX_RESULTS} of {MAX_RESULTS + dropped} results, GitHub's limit per run: the {dropped} least severe "
        "were left out; to upload them all, shard the scan into several runs (by --select rule families or by paths, "
        "each with its own --sarif-category)"
    )


_SUGGESTION_LINES = 12  # a longer suggestion (a kernel skeleton) is cut at a paragraph's end


def _message_text(f) -> str:
    """The message and the suggestion. A suggestion of a few lines goes whole (a sentence that
    ends in `:` introduces the code after it); a long one keeps its first paragraph, at most
    _SUGGESTION_LINES lines, and says where the rest is."""
    text = f.message
    if f.related:  # one finding per root cause: its uses are the related locations
        text = f"{text} ({more_uses(f)}, listed as related locations)"
    if not f.suggestion:
        return text
    lines = f.suggestion.strip().splitlines()
    if len(lines) > _SUGGESTION_LINES:
        kept = []
        for line in lines[:_SUGGESTION_LINES]:
            if not line.strip() and kept and not kept[-1].rstrip().endswith(":"):
                break
            kept.append(line)
        rest = len(lines) - len(kept)
        lines = kept + [f"({rest} more lines: the JSON report's `suggestion`)"]
    return f"{text} Suggestion: " + "\n".join(lines)


def _region(span, wide_lines):
    return _make(
        so.Region,
        start_line=span.start_line,
        start_column=utf16_col(wide_lines.get(span.start_line), span.start_col),
        end_line=span.end_line,
        end_column=utf16_col(wide_lines.get(span.end_line), span.end_col),
    )


def _related_location(index: int, r):
    """A use site folded under a result (portlint.findings.roots), with its own message."""
    return _make(
        so.Location,
        id=index,
        physical_location=_make(so.PhysicalLocation, artifact_location=_artifact(r.path), region=_region(r.span, r.wide_lines)),
        message=_make(so.Message, text=r.message),
    )


def _rule_descriptor(rule, settings):
    help_text = f"{rule.docs_finds.strip()}\n\nPortable rewrite:\n{rule.docs_rewrite.strip()}"
    level = configured_level(rule, settings).value
    # an absolute link or none: a relative docs/rules/PTLnnn.md resolves nowhere a SARIF
    # viewer looks (the help text holds the whole page anyway)
    url = absolute_rule_url(rule.id, settings.docs_url)
    return _make(
        so.ReportingDescriptor,
        id=rule.id,
        name=rule.name,
        short_description=_make(so.MultiformatMessageString, text=rule.summary[:1024]),
        full_description=_make(so.MultiformatMessageString, text=" ".join(rule.docs_finds.split())[:1024]),
        help=_make(so.MultiformatMessageString, text=help_text, markdown=rule.markdown_doc()),
        **({"help_uri": url} if url else {}),
        default_configuration=_make(so.ReportingConfiguration, level=level),
        properties={
            "tags": sorted({"portability", *rule.tags, *rule.severity})[:20],
            "precision": _PRECISION[rule.confidence],
            "problem.severity": _PROBLEM[level],
            "targets": {t: s.value for t, s in rule.severity.items()},
        },
    )


def run_properties(settings) -> dict:
    """What the run was judged against, in the run's property bag: the targets (and whether
    they were chosen or are the all-four default), the releases of their stacks, and the
    severities the configuration changed."""
    props = {
        "portlint/targets": list(settings.targets),
        "portlint/targetsDeclared": bool(settings.declared_targets),
        "portlint/versions": {k: v for k, v in settings.versions.items() if STACK_TARGET[k] in settings.targets},
    }
    if settings.severity:
        props["portlint/severity"] = {rid: {t: s.value for t, s in by.items()} for rid, by in sorted(settings.severity.items())}
    return props


def build_sarif(result, settings, options) -> dict:
    from portlint.findings.selection import enabled_rules
    from portlint.core.catalog import load_rules

    rules = load_rules()
    include_suppressed = options.get("include_suppressed", False)
    findings, dropped = within_limit(reported_findings(result, options))
    prints = portlint_fingerprints(result.findings)
    rule_ids = sorted(enabled_rules(settings) | {f.rule_id for f in findings})
    index = {rid: i for i, rid in enumerate(rule_ids)}
    results = []
    for f in findings:
        fields = dict(
            rule_id=f.rule_id,
            rule_index=index[f.rule_id],
            level=f.severity.value,
            message=_make(so.Message, text=_message_text(f)),
            locations=[
                _make(
                    so.Location,
                    physical_location=_make(
                        so.PhysicalLocation,
                        artifact_location=_artifact(f.path),
                        region=_region(f.span, f.wide_lines),
                    ),
                )
            ],
            partial_fingerprints={"portlint/v1": prints[id(f)], **({"primaryLocationLineHash": f.line_hash} if f.line_hash else {})},
            properties={
                "targets": {t: s.value for t, s in f.targets.items()},
                "confidence": f.confidence,
                **({"role": f.role} if f.role else {}),
                **({"suggestion": f.suggestion} if f.suggestion else {}),
            },
        )
        if f.related:
            fields["related_locations"] = [_related_location(i, r) for i, r in enumerate(f.related, start=1)]
        fixed = [m for m in (f, *f.related) if m.fix is not None]  # a folded use keeps its fix
        if fixed:
            fields["fixes"] = [
                _make(
                    so.Fix,
                    description=_make(so.Message, text=f"{m.fix.description} ({m.fix.applicability})"),
                    artifact_changes=[
                        _make(
                            so.ArtifactChange,
                            artifact_location=_artifact(m.path),
                            replacements=[
                                _make(
                                    so.Replacement,
                                    deleted_region=_region(e.span, m.wide_lines),
                                    inserted_content=_make(so.ArtifactContent, text=e.text),
                                )
                                for e in m.fix.edits
                            ],
                        )
                    ],
                )
                for m in fixed
            ]
        if f.baseline_state:  # a scan with --baseline: "unchanged" (baselined) or "new"
            fields["baseline_state"] = f.baseline_state
        if include_suppressed:
            fields["suppressions"] = (
                [_make(so.Suppression, kind=f.suppression_kind or "inSource", justification=f.suppressed)] if f.suppressed else []
            )
        results.append(_make(so.Result, **fields))
    notifications = [
        _make(
            so.Notification,
            level=n.level,
            message=_make(so.Message, text=f"{n.path}: {n.message}"),
            locations=[
                _make(
                    so.Location,
                    physical_location=_make(
                        so.PhysicalLocation,
                        artifact_location=_artifact(n.path),
                    ),
                )
            ],
        )
        for n in result.notices
    ]
    message = _over_limit_text(dropped)
    if message:
        notifications.append(_make(so.Notification, level="warning", message=_make(so.Message, text=message)))
    invocation = _make(so.Invocation, execution_successful=True, **({"tool_execution_notifications": notifications} if notifications else {}))
    run_fields = dict(
        tool=_make(
            so.Tool,
            driver=_make(
                so.ToolComponent,
                name="portlint",
                version=__version__,
                semantic_version=__version__,
                rules=[_rule_descriptor(rules[rid], settings) for rid in rule_ids],
            ),
        ),
        invocations=[invocation],
        column_kind="utf16CodeUnits",
        original_uri_base_ids={"%SRCROOT%": _make(so.ArtifactLocation, uri=settings.root.as_uri().rstrip("/") + "/")},
        results=results,
        properties=run_properties(settings),
    )
    if options.get("category"):
        category = options["category"].rstrip("/")
        run_fields["automation_details"] = _make(so.RunAutomationDetails, id=f"{category}/")
    log = _make(so.SarifLog, version="2.1.0", schema_uri=SCHEMA_URI, runs=[_make(so.Run, **run_fields)])
    return _to_json(log)


def render_sarif(result, settings, options) -> str:
    doc = build_sarif(result, settings, options)
    # "$schema" first, as readers expect
    ordered = {"$schema": doc.pop("$schema"), **doc}
    return json.dumps(json_ready(ordered), indent=2, ensure_ascii=False) + "\n"
