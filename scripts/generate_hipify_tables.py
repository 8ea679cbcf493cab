#!/usr/bin/env python3
"""Regenerate the derived HIPIFY table from the map.

    python scripts/generate_hipify_tables.py          # rewrite rules/cuda_api/hipify-table.json
    python scripts/generate_hipify_tables.py --check  # exit 1 when the JSON is out of date

Input: rules/cuda_api/hipify-map.csv (first line: `# source: ...`, then the header
cuda_name,hip_name,library,supported,notes). Output: a compact JSON keyed by CUDA name,
each name holding one entry per library, with the rule that owns it (see
portlint.analyses.cuda.hipify.owner_of). Rows no rule reports are left out, which keeps the file
the scanner loads small."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from portlint.analyses.cuda.hipify import owner_of  # noqa: E402

CSV_PATH = REPO / "rules" / "cuda_api" / "hipify-map.csv"
JSON_PATH = REPO / "rules" / "cuda_api" / "hipify-table.json"
FIELDS = ["library", "hip", "owner", "hip_added", "miopen", "roc", "hip_deprecated", "section"]


def read_map(path: Path = CSV_PATH) -> tuple[str, list[dict]]:
    """(source line, rows) of the CSV."""
    with open(path, encoding="utf-8", newline="") as fh:
        first = fh.readline().strip()
        if not first.startswith("# source:"):
            raise SystemExit(f"{path}: the first line must be the '# source:' line")
        rows = list(csv.DictReader(fh))
    return first, rows


def parse_notes(notes: str) -> dict[str, str]:
    out = {}
    for part in notes.split(";"):
        key, _, value = part.strip().partition("=")
        if key:
            out[key] = value.strip()
    return out


def table_version(source: str) -> str:
    m = re.search(r"HIPIFY commit ([0-9a-f]{8})[0-9a-f]* \((\d{4}-\d{2}-\d{2})\)", source)
    return f"HIPIFY {m.group(1)} ({m.group(2)})" if m else "HIPIFY (unknown commit)"


def build(source: str, rows: list[dict]) -> dict:
    names: dict[str, list[list[str]]] = {}
    for r in rows:
        supported = r["supported"] == "yes"
        owner = owner_of(r["cuda_name"], r["library"], supported, r["hip_name"])
        if owner is None:
            continue
        notes = parse_notes(r["notes"])
        entry = {
            "library": r["library"],
            "hip": r["hip_name"] if supported else "",
            "owner": owner,
            "hip_added": notes.get("hip_added", ""),
            "miopen": notes.get("miopen", ""),
            "roc": notes.get("roc", ""),
            "hip_deprecated": notes.get("hip_deprecated", ""),
            "section": notes.get("section", ""),
        }
        names.setdefault(r["cuda_name"], []).append([entry[f] for f in FIELDS])
    return {
        "source": source,
        "version": table_version(source),
        "generated_by": "scripts/generate_hipify_tables.py",
        "fields": FIELDS,
        "names": dict(sorted(names.items())),
    }


def render(data: dict) -> str:
    # one name per line: small diffs when the map changes
    head = {k: v for k, v in data.items() if k != "names"}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"{json.dumps(k)}: {json.dumps(v)},")
    lines.append('"names": {')
    items = list(data["names"].items())
    for i, (name, entries) in enumerate(items):
        lines.append(f"{json.dumps(name)}: {json.dumps(entries, separators=(',', ':'))}" + ("," if i < len(items) - 1 else ""))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail when the JSON is not what the CSV gives")
    args = ap.parse_args(argv)
    source, rows = read_map()
    text = render(build(source, rows))
    if args.check:
        current = JSON_PATH.read_text(encoding="utf-8") if JSON_PATH.exists() else ""
        if current != text:
            print(f"{JSON_PATH.relative_to(REPO)} is out of date: run scripts/generate_hipify_tables.py", file=sys.stderr)
            return 1
        return 0
    JSON_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {JSON_PATH.relative_to(REPO)}: {len(rows)} rows read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
