"""Validate a SARIF log the way GitHub code scanning would accept it: the OASIS 2.1.0
schema (draft-04, shared/data) plus the rules upload-sarif and the service add."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO, SHARED


def schema() -> dict:
    for candidate in (SHARED / "data" / "sarif-schema-2.1.0.json", REPO / "tests" / "data" / "sarif-schema-2.1.0.json"):
        if candidate.exists():
            return json.loads(candidate.read_text(encoding="utf-8"))
    raise FileNotFoundError("sarif-schema-2.1.0.json not found in ../shared/data or tests/data")


def github_problems(log: dict) -> list[str]:
    problems: list[str] = []
    if log.get("version") != "2.1.0" or not log.get("$schema"):
        problems.append("version must be 2.1.0 and $schema set")
    runs = log.get("runs", [])
    if len(runs) != 1:
        problems.append(f"expected exactly one run, got {len(runs)}")
        return problems
    run = runs[0]
    if "results" not in run:
        problems.append("run has no results array")
    driver = run["tool"]["driver"]
    rules = driver.get("rules", [])
    if not driver.get("name"):
        problems.append("driver name empty")
    ids = [r["id"] for r in rules]
    if len(ids) != len(set(ids)):
        problems.append("duplicate rule ids")
    for r in rules:
        for key in ("shortDescription", "fullDescription"):
            text = r.get(key, {}).get("text", "")
            if not text or len(text) > 1024:
                problems.append(f"{r['id']}: {key}.text empty or over 1024 chars")
        if not r.get("help", {}).get("text") or not r.get("help", {}).get("markdown"):
            problems.append(f"{r['id']}: help text/markdown missing")
        if r.get("defaultConfiguration", {}).get("level") not in ("note", "warning", "error"):
            problems.append(f"{r['id']}: defaultConfiguration.level missing")
        props = r.get("properties", {})
        if "security-severity" in props or "security" in props.get("tags", []):
            problems.append(f"{r['id']}: must not be a security rule")
        if len(props.get("tags", [])) > 20:
            problems.append(f"{r['id']}: more than 20 tags")
        if len(r.get("name", "")) > 255:
            problems.append(f"{r['id']}: name over 255 chars")
    if rules and run.get("results") and "columnKind" not in run:
        problems.append("columnKind missing with results present")
    suppress_states = set()
    identities: set = set()
    if len(run.get("results", [])) > 25_000:
        problems.append(f"{len(run['results'])} results: GitHub accepts at most 25,000 per run")
    for n in run.get("invocations", [{}])[0].get("toolExecutionNotifications", []):
        for loc in n.get("locations", []):
            art = loc.get("physicalLocation", {}).get("artifactLocation")
            if art:
                problems.extend(f"notification: {p}" for p in artifact_problems(art))
    for res in run.get("results", []):
        rid = res.get("ruleId")
        idx = res.get("ruleIndex")
        if idx is None or not (0 <= idx < len(rules)) or rules[idx]["id"] != rid:
            problems.append(f"{rid}: ruleIndex {idx} inconsistent")
        if not res.get("message", {}).get("text"):
            problems.append(f"{rid}: empty message")
        locs = res.get("locations", [])
        if not locs:
            problems.append(f"{rid}: no location")
        for loc in locs:
            problems.extend(f"{rid}: {p}" for p in artifact_problems(loc["physicalLocation"]["artifactLocation"]))
            region = loc["physicalLocation"].get("region", {})
            if region.get("startLine", 0) < 1 or region.get("startColumn", 1) < 1:
                problems.append(f"{rid}: bad region {region}")
        related_ids = []
        for loc in res.get("relatedLocations", []):  # the use sites of one root cause
            related_ids.append(loc.get("id"))
            if not loc.get("message", {}).get("text"):
                problems.append(f"{rid}: a related location without a message")
            phys = loc.get("physicalLocation", {})
            problems.extend(f"{rid}: related: {p}" for p in artifact_problems(phys.get("artifactLocation", {})))
            if phys.get("region", {}).get("startLine", 0) < 1:
                problems.append(f"{rid}: related location without a region")
        if len(related_ids) != len(set(related_ids)) or None in related_ids:
            problems.append(f"{rid}: related locations need distinct ids")
        if "primaryLocationLineHash" not in res.get("partialFingerprints", {}):
            problems.append(f"{rid}: no primaryLocationLineHash")
        identity = (rid, tuple(sorted(res.get("partialFingerprints", {}).items())))
        if identity in identities:
            problems.append(f"{rid}: two results share partialFingerprints {identity[1]} (GitHub merges them)")
        identities.add(identity)
        for fix in res.get("fixes", []):
            if not fix.get("artifactChanges") or any(not c.get("replacements") for c in fix["artifactChanges"]):
                problems.append(f"{rid}: empty fix")
        suppress_states.add("suppressions" in res)
        if res.get("level") not in ("note", "warning", "error"):
            problems.append(f"{rid}: level missing (the default would be wrong)")
    if len(suppress_states) > 1:
        problems.append("suppressions present on some results and not others")
    if "automationDetails" in run and not run["automationDetails"].get("id", "").endswith("/"):
        problems.append("automationDetails.id must end with / (category only)")
    return problems


def artifact_problems(art: dict) -> list[str]:
    """A root-relative POSIX URI with uriBaseId %SRCROOT%, or an absolute file:// URI with
    no base (a file outside the root); never an absolute URI or path beside a base."""
    uri = art.get("uri", "")
    if "\\" in uri:
        return [f"uri {uri!r} is not POSIX"]
    if uri.startswith("file:///"):
        return [f"absolute uri {uri!r} beside uriBaseId"] if "uriBaseId" in art else []
    if uri.startswith("/") or "://" in uri:
        return [f"uri {uri!r} is neither root-relative nor an absolute file:// URI"]
    if art.get("uriBaseId") != "%SRCROOT%":
        return [f"relative uri {uri!r} without uriBaseId %SRCROOT%"]
    return []


def validate(log: dict) -> list[str]:
    import jsonschema

    errors = [f"schema: {e.message[:200]} at {list(e.path)}" for e in jsonschema.Draft4Validator(schema()).iter_errors(log)]
    return errors + github_problems(log)


def load(text: str) -> dict:
    return json.loads(text)


__all__ = ["validate", "load", "Path"]
