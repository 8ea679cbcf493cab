"""JUnit XML, which CI systems (GitLab's `junit` report, Jenkins, Azure Pipelines, CircleCI)
show as test results: one `<testsuite>` per file with active findings, one `<testcase>` per
finding with a `<failure>` naming the rule; a clean scan is one passing test case, so the
report is never empty. Text from the scanned tree has its control characters written
visibly (XML 1.0 cannot hold most of them)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from portlint.output.escape import controls as escape_controls


def build_junit(result) -> ET.Element:
    active = sorted((f for f in result.findings if not f.suppressed), key=lambda f: f.sort_key())
    root = ET.Element("testsuites", name="portlint", tests=str(max(1, len(active))), failures=str(len(active)), errors="0")
    if not active:
        suite = ET.SubElement(root, "testsuite", name="portlint", tests="1", failures="0", errors="0", skipped="0")
        ET.SubElement(suite, "testcase", classname="portlint", name=f"no portability problems in {result.files_scanned} files")
        return root
    for path, group in groupby(active, key=lambda f: f.path):
        findings = list(group)
        shown = escape_controls(path)
        suite = ET.SubElement(root, "testsuite", name=shown, tests=str(len(findings)), failures=str(len(findings)), errors="0", skipped="0")
        for f in findings:
            where = f"{shown}:{f.span.start_line}:{f.span.start_col}"
            case = ET.SubElement(suite, "testcase", classname=shown, name=f"{f.rule_id} {where}", file=shown, line=str(f.span.start_line))
            targets = ", ".join(f"{t} {s.value}" for t, s in f.targets.items())
            failure = ET.SubElement(case, "failure", message=escape_controls(f.message), type=f"{f.rule_id} {f.severity.value}")
            body = f"{where}: {f.rule_id} {f.severity.value}: {f.message}\ntargets: {targets}"
            if f.suggestion:
                body += "\nsuggestion: " + f.suggestion.strip()
            failure.text = "\n".join(escape_controls(line) for line in body.split("\n"))
    return root


def render_junit(result, settings, options) -> str:
    root = build_junit(result)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
