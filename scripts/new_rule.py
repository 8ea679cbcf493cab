"""Start a new rule: pick its id, write every file it needs, regenerate the derived files.

    python scripts/new_rule.py FAMILY NAME            # e.g. cuda_ptx inline-ptx-in-lambda
    python scripts/new_rule.py FAMILY NAME --dry-run  # print the id and the files, write nothing

It writes
  rules/<family>/PTLnnn-<name>.toml      every required key, the texts marked TODO(new_rule)
  the detector stub                      in portlint/rules/<family>.py (or a module of its
                                         package), named after the rule, reporting nothing yet
  fixtures/<family>/<name>.<ext>         a positive line (`expect: PTLnnn`)
  fixtures/<family>/<name>_negative.<ext> a near-miss line (`ok: PTLnnn`)
and regenerates rules/index.json, the README rule table and docs/rules/.

The id is the lowest free one in the family's newest range in rules/id-ranges.toml, never a
retired one (rules/retired-ids.toml).

A stub never passes silently: until it is filled in, tests/test_fixtures.py fails (the
positive fixture expects a finding the stub does not report, and there is no snapshot),
tests/test_rule_authoring.py fails (the TODO(new_rule) markers, and the rule's docs.example
yields nothing) and tests/test_rule_proofs.py fails (a new unproven rule). Fill in the three
places (the rule's texts, the detector, the fixtures), then run
`python -m pytest tests/test_fixtures.py --update-snapshots`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "TODO(new_rule)"
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DERIVED = ("generate_rule_index.py", "generate_readme_rules.py", "generate_rule_docs.py")
EXTENSIONS = {"cuda": ".cu", "python": ".py", "ptx": ".ptx", "build": ".cmake", "any": ".py"}


class NewRuleError(Exception):
    pass


def _family_defaults(root: Path, family: str) -> tuple[str, list[str]]:
    """The language and the targets of the family's first rule (a new rule usually shares them)."""
    import tomllib

    files = sorted((root / "rules" / family).glob("PTL*.toml"))
    if not files:
        raise NewRuleError(f"rules/{family}/ has no rule file to take the language and targets from")
    first = tomllib.loads(files[0].read_text(encoding="utf-8"))
    return first["language"], list(first["severity"])


def _taken(root: Path) -> tuple[set[str], set[str]]:
    import tomllib

    ids, names = set(), set()
    for path in (root / "rules").glob("*/PTL*.toml"):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        ids.add(data["id"])
        names.add(data["name"])
    return ids, names


def rule_toml(rid: str, name: str, family: str, language: str, targets: list[str]) -> str:
    severity = "\n".join(f'{t} = "warning"' for t in targets)
    why = "\n".join(f'{t} = "{MARK}: why the construct breaks on {t}."' for t in targets)
    fence = {"cuda": "cuda", "python": "python", "ptx": "ptx", "build": "cmake", "any": "python"}[language]
    return f'''id = "{rid}"
name = "{name}"
family = "{family}"
language = "{language}"
summary = "{MARK}: one sentence on what the rule finds."
message = "{MARK}: the message, with {{construct}} filled in by the detector."
confidence = "medium"
proof = "unproven: {MARK}: name the toolchain check (`toolchain: tests/test_x.py::test_y`) or say why there is none"
fix = "none"
tags = []
references = []

[severity]
{severity}

[docs]
finds = "{MARK}: what it finds, and the near-misses it leaves alone."
example = """
```{fence}
{MARK}: a short example that yields exactly this rule
```
"""
rewrite = "{MARK}: the portable rewrite."

[docs.why]
{why}

[effort]
level = "local"
why = "{MARK}: how much work a finding is to port, and why."
'''


def detector_stub(rid: str, func: str) -> str:
    return f'''

@detector("{rid}", nodes=None)
def {func}(ctx) -> None:
    """{MARK}: find the construct and report it: `ctx.report(node, construct=...)`.
    Give `nodes=(...)` (node types to be called with) and `tokens=(...)` (an exact
    pre-filter) once the detector is written; see docs/adding-a-rule.md."""
    return None
'''


def fixture_texts(rid: str, func: str, language: str) -> tuple[str, str]:
    if language == "cuda":
        pos = (f"// {MARK}: the construct {rid} reports, on the marked line.\n"
               f"__global__ void {func}_positive(int* out) {{\n"
               f"  out[threadIdx.x] = 0;  // expect: {rid}\n}}\n")
        neg = (f"// {MARK}: a near-miss that {rid} must leave alone, on the marked line.\n"
               f"__global__ void {func}_near_miss(int* out) {{\n"
               f"  out[threadIdx.x] = 1;  // ok: {rid}\n}}\n")
    elif language == "ptx":
        pos = f"// {MARK}: the construct {rid} reports.\n.version 7.0\n.target sm_80  // expect: {rid}\n"
        neg = f"// {MARK}: a near-miss {rid} must leave alone.\n.version 7.0\n.target sm_80  // ok: {rid}\n"
    else:  # python, build (CMake) and any: `#` comments
        pos = f"# {MARK}: the construct {rid} reports, on the marked line.\nvalue = 0  # expect: {rid}\n"
        neg = f"# {MARK}: a near-miss that {rid} must leave alone, on the marked line.\nvalue = 1  # ok: {rid}\n"
        if language == "build":
            pos = pos.replace("value = 0", "set(VALUE 0)")
            neg = neg.replace("value = 1", "set(VALUE 1)")
    return pos, neg


def detector_target(root: Path, family: str, func: str) -> tuple[Path, str | None]:
    """Where the stub goes: the family's module, or a new module of the family's package
    (with the import line its __init__ needs so that the registration runs)."""
    package = root / "portlint" / "rules" / family
    if package.is_dir():
        return package / f"{func}.py", f"from portlint.rules.{family} import {func}  # noqa: F401  (registers {func})\n"
    module = root / "portlint" / "rules" / f"{family}.py"
    if not module.is_file():
        raise NewRuleError(f"no detector module for family {family}: {module.relative_to(root)}")
    return module, None


def plan(root: Path, family: str, name: str) -> dict:
    sys.path.insert(0, str(root))
    from portlint.core.rule_ids import IdTableError, load_id_table

    if not NAME_RE.match(name):
        raise NewRuleError(f"name {name!r} is not kebab-case (lower-case words joined by '-')")
    if not (root / "rules" / family).is_dir():
        raise NewRuleError(f"no family {family!r}: rules/{family}/ does not exist")
    ids, names = _taken(root)
    if name in names:
        raise NewRuleError(f"a rule named {name!r} exists already")
    try:
        rid = load_id_table(root / "rules").next_free_id(family, ids)
    except IdTableError as exc:
        raise NewRuleError(str(exc)) from None
    language, targets = _family_defaults(root, family)
    func = name.replace("-", "_")
    detector_path, init_line = detector_target(root, family, func)
    ext = EXTENSIONS[language]
    return {
        "id": rid, "func": func, "language": language, "targets": targets,
        "rule": root / "rules" / family / f"{rid}-{name}.toml",
        "detector": detector_path, "init_line": init_line,
        "positive": root / "fixtures" / family / f"{func}{ext}",
        "negative": root / "fixtures" / family / f"{func}_negative{ext}",
    }


def write(root: Path, family: str, name: str, p: dict) -> None:
    for key in ("rule", "positive", "negative"):
        if p[key].exists():
            raise NewRuleError(f"{p[key].relative_to(root)} exists already")
    p["rule"].write_text(rule_toml(p["id"], name, family, p["language"], p["targets"]), encoding="utf-8")
    stub = detector_stub(p["id"], p["func"])
    if p["init_line"] is None:
        with p["detector"].open("a", encoding="utf-8") as fh:
            fh.write(stub)
    else:
        header = f'"""{p["id"]} {name}."""\n\nfrom __future__ import annotations\n\nfrom portlint.rules.api import detector\n'
        p["detector"].write_text(header + stub, encoding="utf-8")
        with (p["detector"].parent / "__init__.py").open("a", encoding="utf-8") as fh:
            fh.write(p["init_line"])
    pos, neg = fixture_texts(p["id"], p["func"], p["language"])
    p["positive"].parent.mkdir(parents=True, exist_ok=True)
    p["positive"].write_text(pos, encoding="utf-8")
    p["negative"].write_text(neg, encoding="utf-8")
    for script in DERIVED:
        subprocess.run([sys.executable, str(root / "scripts" / script)], cwd=root, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Start a new rule in FAMILY named NAME.")
    parser.add_argument("family")
    parser.add_argument("name", help="kebab-case; the detector function gets the same name with '_'")
    parser.add_argument("--dry-run", action="store_true", help="print the id and the files, write nothing")
    args = parser.parse_args(argv)
    try:
        p = plan(ROOT, args.family, args.name)
        files = [p["rule"], p["detector"], p["positive"], p["negative"]]
        print(f"{p['id']} {args.name} ({args.family}, {p['language']}):")
        for f in files:
            print(f"  {f.relative_to(ROOT)}")
        if args.dry_run:
            return 0
        write(ROOT, args.family, args.name, p)
    except NewRuleError as exc:
        print(f"new_rule: {exc}", file=sys.stderr)
        return 2
    print(f"Now fill in every {MARK} in those files (the rule's texts, the detector, the two fixture lines),\n"
          "then run: python -m pytest tests/test_fixtures.py --update-snapshots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
