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

from portlint.core.jsonfile import read_json


class MergeError(Exception):
    pass


def _load(path: Path) -> dict:
    doc = read_json(path, MergeError)
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or len(runs) != 1 or not isinstance(runs[0], dict):
        raise MergeError(f"{path} is not a SARIF log with one run")
    driver = runs[0].get("tool", {}).get("driver", {})
    if driver.get("name") != "portlint":
        raise MergeError(f"{path} was not written by portlint")
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
    for d, doc in enumerate(docs):
        run = doc["runs"][0]
        for i, result in enumerate(run.get("results", [])):
            if "ruleIndex" in result:
                result["ruleIndex"] = index[result["ruleId"]]
            results.append((_result_path(result), d, i, result))
        for inv in run.get("invocations", []):
            successful = successful and inv.get("executionSuccessful", True)
            for n in inv.get("toolExecutionNotifications", []):
                if n not in notifications:
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
    docs = [_load(p) for p in paths]
    log = merge(docs, [str(p) for p in paths])
    ordered = {"$schema": log.pop("$schema"), **log} if "$schema" in log else log
    return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"
