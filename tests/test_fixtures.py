"""Every fixture file against the expectations written in it, exhaustively: a finding the
fixture does not expect fails as surely as a missing one, and the rendered output (message,
caret, suggestion, fix) is compared with the snapshot beside it.

Each fixture runs with only its own family's rules (the folder under fixtures/) plus the
tool's rules, so a new rule never breaks another family's fixtures. Refresh the snapshots
after an intended change of output with one command:

    python -m pytest tests/test_fixtures.py --update-snapshots
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES, KNOWN_MISSES, REPO, scan_paths
from fixture_expectations import fixture_files, read_expectations, snapshot_path

from portlint.core.config import PRESETS, parse_targets, parse_versions

FILES = fixture_files(FIXTURES)


def family_of(path) -> str:
    return path.relative_to(FIXTURES).parts[0]


def family_selection(families: set[str]) -> tuple[str, ...]:
    """The default-enabled rules of these families and the tool's own rules."""
    from portlint.core.catalog import load_rules

    return tuple(rid for rid, r in load_rules().items() if r.default_enabled and r.family in families | {"tool"})


def fixture_families(path, exp) -> set[str]:
    """The fixture's own family, the families of every rule it names in an annotation (a
    fixture about how two families meet names both), and those of `families=` in its header."""
    from portlint.core.catalog import load_rules

    rules = load_rules()
    named = {rid for (_, rid) in list(exp.active) + list(exp.suppressed) + list(exp.todo) + list(exp.near_miss) + list(exp.related)}
    families = {family_of(path)} | {rules[rid].family for rid in named if rid in rules}
    return families | set(filter(None, exp.options.get("families", "").split(",")))


def _scan_fixture(path):
    exp = read_expectations(path)
    overrides = {}
    if "select" in exp.options:  # an explicit selection is taken as written
        sel = []
        for s in exp.options["select"].split(","):
            sel.extend(PRESETS.get(s, (s,)))
        overrides["select"] = tuple(sel)
    else:
        overrides["select"] = family_selection(fixture_families(path, exp))
    if "targets" in exp.options:
        overrides["targets"] = parse_targets(exp.options["targets"], "fixture")
    if "versions" in exp.options:  # releases the verdicts are judged against: rocm:6.1,jax:0.4
        overrides["versions"] = parse_versions(exp.options["versions"], "fixture")
    if "declared" in exp.options:  # the targets are declared (as --target does): scope by target
        overrides["declared_targets"] = True
    # the project is the repository (as its pyproject.toml makes it), in a git checkout or
    # not, so cross-file messages and snapshots name the same paths everywhere
    overrides["config_file"] = REPO / "pyproject.toml"
    return exp, scan_paths([path], **overrides), set(overrides["select"])


def render_snapshot(result) -> str:
    """The text report as a user sees it (paths relative to the repository), then the
    suppressed findings with their reasons and every fix's edits."""
    from portlint.core.config import Settings
    from portlint.output.formats.text import render_text

    text = render_text(result, Settings(root=REPO), {"color": False, "show_source": True})
    extra = []
    for f in sorted(result.findings, key=lambda f: f.sort_key()):
        if f.suppressed:
            folded = f" (with {len(f.related)} related)" if f.related else ""
            extra.append(f"suppressed {f.span.start_line}:{f.span.start_col} {f.rule_id}{folded}: {f.suppressed}")
    for f in sorted((m for top in result.findings for m in (top, *top.related)), key=lambda f: f.sort_key()):
        if f.fix is not None:
            for e in f.fix.edits:
                s = e.span
                extra.append(f"fix {f.rule_id} {s.start_line}:{s.start_col}-{s.end_line}:{s.end_col} -> {e.text!r}")
    return text + ("\n" + "\n".join(extra) + "\n" if extra else "")


def _check_expectations(path, exp, result, selection: set[str]) -> list[str]:
    errors = []
    from portlint.core.config import PRESETS

    enabled = {rid for sel in selection for rid in PRESETS.get(sel, (sel,))}
    from portlint.core.catalog import load_rules

    enabled = {rid for rid in load_rules() if any(rid.startswith(sel) for sel in enabled)}
    named = {rid for (_, rid) in list(exp.active) + list(exp.suppressed) + list(exp.todo) + list(exp.near_miss) + list(exp.related)}
    if named - enabled:
        errors.append(f"annotations name rules that do not run on this fixture (select them in the header): {sorted(named - enabled)}")
    active = [f for f in result.findings if not f.suppressed]
    got = Counter((f.span.start_line, f.rule_id) for f in active)
    got_suppressed = Counter((f.span.start_line, f.rule_id) for f in result.findings if f.suppressed)
    # a use site folded under a finding (portlint.findings.roots) is a `related:` line
    got_related = Counter((r.span.start_line, r.rule_id) for f in result.findings for r in f.related)
    for label, want, have in (("", exp.active, got), ("suppressed ", exp.suppressed, got_suppressed), ("related ", exp.related, got_related)):
        missing, unexpected = want - have, have - want
        if missing or unexpected:
            errors.append(f"{label}missing: {sorted(missing.elements())}  {label}unexpected: {sorted(unexpected.elements())}")
    got_cols = Counter((f.span.start_line, f.rule_id, f.span.start_col) for f in result.findings)
    wrong_cols = exp.columns - got_cols
    if wrong_cols:
        errors.append(f"column expected but not seen (line, rule, column): {sorted(wrong_cols.elements())}")
    promoted = [k for k in exp.todo if got[k] or got_suppressed[k] or got_related[k]]
    if promoted:
        errors.append(f"todo-expect now reported (promote it to expect): {sorted(promoted)}")
    loud = sorted(k for k in exp.near_miss if got[k] or got_suppressed[k] or got_related[k])
    if loud:
        errors.append(f"a near-miss line (ok:) reports its rule: {loud}")
    if errors:
        detail = "\n".join(f"  line {f.span.start_line}:{f.span.start_col} {f.rule_id}{' (suppressed)' if f.suppressed else ''} {f.message}"
                           + "".join(f"\n    related {r.span.start_line}:{r.span.start_col} {r.rule_id} {r.message}" for r in f.related)
                           for f in result.findings)
        errors.append(f"reported:\n{detail}")
    return errors


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_fixture_findings_match_expectations(path, request, monkeypatch):
    monkeypatch.chdir(REPO)  # the report shows paths relative to the working directory
    exp, result, selection = _scan_fixture(path)
    assert not [n for n in result.notices if n.level == "error"], result.notices
    assert not [f for f in result.findings if f.rule_id == "PTL003"], "a detector crashed"
    errors = _check_expectations(path, exp, result, selection)
    assert not errors, f"{path.relative_to(REPO)}\n" + "\n".join(errors)
    KNOWN_MISSES.extend(f"{path.relative_to(FIXTURES).as_posix()}:{line}:{rid}" for line, rid in exp.todo.elements())
    snap = snapshot_path(path)
    rendered = render_snapshot(result)
    if request.config.getoption("--update-snapshots"):
        snap.parent.mkdir(exist_ok=True)
        if not snap.exists() or snap.read_text(encoding="utf-8") != rendered:
            snap.write_text(rendered, encoding="utf-8")
        return
    assert snap.exists(), f"no snapshot {snap.relative_to(REPO)}: run python -m pytest tests/test_fixtures.py --update-snapshots"
    assert snap.read_text(encoding="utf-8") == rendered, (
        f"{snap.relative_to(REPO)} differs from the output; if the change is intended, run "
        "python -m pytest tests/test_fixtures.py --update-snapshots and review the diff"
    )


def test_no_snapshot_without_its_fixture():
    known = {snapshot_path(p) for p in FILES}
    stray = sorted(str(s.relative_to(REPO)) for s in FIXTURES.rglob("*.snap") if s not in known)
    assert not stray, f"snapshots whose fixture is gone (delete them): {stray}"


def test_every_rule_has_positive_and_negative_fixtures():
    """Each rule is expected somewhere, and its family has a file where it must stay quiet."""
    from portlint.core.catalog import load_rules

    expected_rules = Counter()
    families_with_negatives = set()
    for path in FILES:
        exp = read_expectations(path)
        for (_, rid), n in exp.active.items():
            expected_rules[rid] += n
        family = path.relative_to(FIXTURES).parts[0]
        if "negative" in path.name or "nearmiss" in path.name or "near_miss" in path.name:
            families_with_negatives.add(family)
    rules = load_rules()
    without_positive = [rid for rid, r in rules.items() if r.family != "tool" and rid not in expected_rules]
    assert not without_positive, f"rules with no positive fixture: {without_positive}"
    families = {r.family for r in rules.values() if r.family != "tool"}
    assert families <= families_with_negatives, f"families with no *negative* fixture: {sorted(families - families_with_negatives)}"


@pytest.mark.parametrize("path", [p for p in FILES if p.with_name(p.name.replace(p.suffix, ".fixed" + p.suffix)).exists()], ids=str)
def test_fixes_produce_the_fixed_file(path):
    from portlint.output.fixes import fixed_text

    exp, result, _ = _scan_fixture(path)
    fixed_path = path.with_name(path.name.replace(path.suffix, ".fixed" + path.suffix))
    new, count = fixed_text(path.read_text(encoding="utf-8"), result.findings, include_unsafe=True)
    assert count > 0
    assert new == fixed_path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", [p for p in FILES if p.with_name(p.name.replace(p.suffix, ".fixed" + p.suffix)).exists()], ids=str)
def test_fixes_are_idempotent(path):
    """The README's "a second --fix changes nothing": the fixed file, scanned with the same
    selection, has no fix left to apply."""
    import shutil
    import tempfile

    from portlint.output.fixes import fixed_text

    fixed_path = path.with_name(path.name.replace(path.suffix, ".fixed" + path.suffix))
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        copy = Path(tmp) / path.name  # the fixed text under the fixture's own name and header
        shutil.copy(fixed_path, copy)
        _, result, _ = _scan_fixture(copy)
        new, count = fixed_text(copy.read_text(encoding="utf-8"), result.findings, include_unsafe=True)
    assert count == 0 and new == fixed_path.read_text(encoding="utf-8"), [f.rule_id for f in result.findings if f.fix]
