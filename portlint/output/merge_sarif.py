"""`portlint merge-sarif A.sarif B.sarif ... -o all.sarif`: join the SARIF logs of a
sharded scan (`--shard I/N`) into the one run a single scan would have written.

The inputs must each hold one portlint run from the same portlint version, with the same
source root and category. Rules are the union by id, in id order, each result's
`ruleIndex` renumbered to it. Shards split by file, so a file's results all come from one
log, in the order the scan wrote them; results are put in file order (the order of the
paths a scan sorts by), keeping each file's own order. Notifications are deduplicated and
sorted as a scan sorts its notices. The output is written exactly as a scan writes SARIF,
so merging the N shards of a scan gives the bytes of the full scan."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

from portlint.core.jsonfile import expect, read_json
from portlint.output.escape import json_ready


class MergeError(Exception):
    pass


def _check_location(loc, where: str) -> None:
    expect(loc, dict, MergeError, where)
    physical = expect(loc.get("physicalLocation", {}), dict, MergeError, f"{where}.physicalLocation")
    artifact = expect(physical.get("artifactLocation", {}), dict, MergeError, f"{where}.physicalLocation.artifactLocation")
    expect(artifact.get("uri", ""), str, MergeError, f"{where}...artifactLocation.uri")
    if "uriBaseId" in artifact:
        expect(artifact["uriBaseId"], str, MergeError, f"{where}...artifactLocation.uriBaseId")


def _check_run(run: dict, shown: str) -> None:
    """Every part of a run that merging reads, checked for its type before use."""
    tool = expect(run.get("tool"), dict, MergeError, f"{shown}: runs[0].tool")
    driver = expect(tool.get("driver"), dict, MergeError, f"{shown}: runs[0].tool.driver")
    if driver.get("name") != "portlint":
        raise MergeError(f"{shown} was not written by portlint")
    for i, rule in enumerate(expect(driver.get("rules", []), list, MergeError, f"{shown}: rules")):
        expect(rule, dict, MergeError, f"{shown}: rules[{i}]")
        expect(rule.get("id"), str, MergeError, f"{shown}: rules[{i}].id")
    for i, result in enumerate(expect(run.get("results", []), list, MergeError, f"{shown}: results")):
        where = f"{shown}: results[{i}]"
        expect(result, dict, MergeError, where)
        expect(result.get("ruleId"), str, MergeError, f"{where}.ruleId")
        if "ruleIndex" in result:
            expect(result["ruleIndex"], int, MergeError, f"{where}.ruleIndex")
        for j, loc in enumerate(expect(result.get("locations", []), list, MergeError, f"{where}.locations")):
            _check_location(loc, f"{where}.locations[{j}]")
    for i, inv in enumerate(expect(run.get("invocations", []), list, MergeError, f"{shown}: invocations")):
        where = f"{shown}: invocations[{i}]"
        expect(inv, dict, MergeError, where)
        expect(inv.get("executionSuccessful", True), bool, MergeError, f"{where}.executionSuccessful")
        for j, n in enumerate(expect(inv.get("toolExecutionNotifications", []), list, MergeError, f"{where}.toolExecutionNotifications")):
            expect(n, dict, MergeError, f"{where}.toolExecutionNotifications[{j}]")
            message = expect(n.get("message", {}), dict, MergeError, f"{where}.toolExecutionNotifications[{j}].message")
            expect(message.get("text", ""), str, MergeError, f"{where}.toolExecutionNotifications[{j}].message.text")
            for k, loc in enumerate(expect(n.get("locations", []), list, MergeError, f"{where}.toolExecutionNotifications[{j}].locations")):
                _check_location(loc, f"{where}.toolExecutionNotifications[{j}].locations[{k}]")


def _load(path: Path) -> dict:
    doc = read_json(path, MergeError)
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or len(runs) != 1 or not isinstance(runs[0], dict):
        raise MergeError(f"{path} is not a SARIF log with one run")
    _check_run(runs[0], str(path))
    return doc


def _shown_path(location: dict) -> str:
    """The path a scan sorted by (the report's path), from an artifact location."""
    uri = location.get("uri", "")
    if location.get("uriBaseId"):
        return unquote(uri)
    return unquote(urlsplit(uri).path)


def _result_path(result: dict) -> str:
    try:
        return _shown_path(result["locations"][0]["physicalLocation"]["artifactLocation"])
    except (KeyError, IndexError, TypeError):
        return ""


def _notification_key(n: dict) -> tuple:
    try:
        path = _shown_path(n["locations"][0]["physicalLocation"]["artifactLocation"])
    except (KeyError, IndexError, TypeError):
        return (1, "", n.get("message", {}).get("text", ""))  # no location (the over-limit warning): last
    text = n.get("message", {}).get("text", "")
    prefix = f"{path}: "
    return (0, path, text[len(prefix):] if text.startswith(prefix) else text)


def merge(docs: list[dict], names: list[str]) -> dict:
    first = docs[0]["runs"][0]
    same = ("originalUriBaseIds", "automationDetails", "columnKind", "properties")
    for doc, name in zip(docs[1:], names[1:]):
        run = doc["runs"][0]
        if run["tool"]["driver"].get("version") != first["tool"]["driver"].get("version"):
            raise MergeError(f"{name} was written by another portlint version than {names[0]}")
        for key in same:
            if run.get(key) != first.get(key):
                raise MergeError(f"{name} differs from {names[0]} in {key}: not shards of one scan")
    rules: dict[str, dict] = {}
    for doc in docs:
        for rule in doc["runs"][0]["tool"]["driver"].get("rules", []):
            rules.setdefault(rule["id"], rule)
    rule_ids = sorted(rules)
    index = {rid: i for i, rid in enumerate(rule_ids)}
    results: list[tuple[str, int, int, dict]] = []
    notifications: list[dict] = []
    successful = True
    seen_notifications: set[str] = set()
    owner: dict[str, int] = {}  # a file's results come from one shard only
    for d, doc in enumerate(docs):
        run = doc["runs"][0]
        for i, result in enumerate(run.get("results", [])):
            if "ruleIndex" in result:
                if result["ruleId"] not in index:
                    raise MergeError(f"{names[d]}: results[{i}] names rule {result['ruleId']!r}, which no input describes")
                result["ruleIndex"] = index[result["ruleId"]]
            path = _result_path(result)
            if owner.setdefault(path, d) != d:
                raise MergeError(f"{names[owner[path]]} and {names[d]} both hold results for {path!r}: "
                                 "not disjoint shards of one scan (the same shard twice?)")
            results.append((path, d, i, result))
        for inv in run.get("invocations", []):
            successful = successful and inv.get("executionSuccessful", True)
            for n in inv.get("toolExecutionNotifications", []):
                key = json.dumps(n, sort_keys=True)
                if key not in seen_notifications:  # a set, not a list scan: linear in the inputs
                    seen_notifications.add(key)
                    notifications.append(n)
    results.sort(key=lambda item: item[:3])
    notifications.sort(key=_notification_key)
    merged = json.loads(json.dumps(first))  # a copy, keeping the key order a scan writes
    merged["tool"]["driver"]["rules"] = [rules[rid] for rid in rule_ids]
    invocation = {"executionSuccessful": successful}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    merged["invocations"] = [invocation]
    merged["results"] = [item[3] for item in results]
    log = {key: value for key, value in docs[0].items() if key != "runs"}
    log["runs"] = [merged]
    return log


def merge_files(paths: list[Path]) -> str:
    seen: dict[tuple[int, int], Path] = {}
    for p in paths:
        try:
            st = p.stat()
        except OSError:
            continue  # _load says why
        if (st.st_dev, st.st_ino) in seen:
            raise MergeError(f"{p} is named twice (as {seen[(st.st_dev, st.st_ino)]}): each shard once")
        seen[(st.st_dev, st.st_ino)] = p
    docs = [_load(p) for p in paths]
    log = merge(docs, [str(p) for p in paths])
    ordered = {"$schema": log.pop("$schema"), **log} if "$schema" in log else log
    return json.dumps(json_ready(ordered), indent=2, ensure_ascii=False) + "\n"  # a shard may hold "\\udcff"
