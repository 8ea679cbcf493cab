"""One finding per root cause: the uses of one construct are folded into one finding.

A rule whose file says `fold = "root"` reports each use as usual, and its detector names the
construct each finding stems from (`Finding.root`: "cuDNN" for every cuDNN name of a file,
"mask constant FULL_MASK" for every `*_sync` call passing that `#define`), marking the
finding *at* the construct (`root_site`: the `#include <cudnn.h>`, the `#define`). This step
then keeps, per file, rule and root, one finding and puts the others in its `related` list
(each keeps its own message, span and fix):

- the primary is the first root-site finding, or, when the root is not in this file (the
  header that includes cuDNN, a mask constant from another header), the first use;
- a use suppressed by its own comment (or a guard) stays a finding of its own, suppressed,
  and is not a member: the comment removes that use from the group only;
- a root suppressed by a comment (`portlint: ignore[...]` on the `#include`) takes the whole
  group with it: every use is folded under it and is suppressed with it;
- a root suppressed by a guard (the include sits in a branch AMD skips) is not the cause of
  the uses left active elsewhere: they fold under the first of them.

Rules without the key are untouched (their findings may carry a root, which is then unused).
Fixes stay per use: `--fix` applies the primary's fix and each related finding's
(portlint.output.fixes), so a folded group fixes what its findings fixed one by one. The
primary's severity on each target is the worst of its members'.

The fingerprint of a primary that is a use (no root site in the file) is computed from the
root, not the use's text (portlint.findings.fingerprint), so adding a use before it keeps
the value; a root-site primary keeps its own text's fingerprint."""

from __future__ import annotations

from functools import lru_cache

from portlint.core.catalog import load_rules
from portlint.core.model import Finding


@lru_cache(maxsize=1)
def folding_rules() -> frozenset[str]:
    """The ids of the rules whose findings fold by root (`fold = "root"` in their file)."""
    return frozenset(rid for rid, rule in load_rules().items() if rule.fold == "root")


def folds(f: Finding) -> bool:
    """Does `f` belong to a group: a rule that folds, and a root named by its detector?"""
    return bool(f.root) and f.rule_id in folding_rules()


def fold_roots(findings: list[Finding], by_comment: set[int] = frozenset()) -> list[Finding]:
    """`findings` (one file's) with each root's uses folded into one finding.

    `by_comment` holds the id() of the findings an inline comment suppresses (as opposed to
    a guard or the config): such a root suppresses its group."""
    rules = folding_rules()
    if not rules or not any(f.root and f.rule_id in rules for f in findings):
        return findings
    out: list[Finding] = []
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for f in findings:
        if f.root and f.rule_id in rules:
            groups.setdefault((f.path, f.rule_id, f.root), []).append(f)
        else:
            out.append(f)
    for members in groups.values():
        out.extend(_fold(sorted(members, key=Finding.sort_key), by_comment))
    return out


def _fold(members: list[Finding], by_comment) -> list[Finding]:
    """One group's findings after folding: the primary and the members kept apart."""
    sites = [m for m in members if m.root_site]
    root = sites[0] if sites else None
    if root is not None and root.suppressed and id(root) in by_comment:
        # the comment on the root silences the group: its uses, active or not, go with it
        # (a use with a suppression of its own keeps it, and stays apart)
        rest = [m for m in members if m is not root]
        folded = [m for m in rest if not m.suppressed]
        apart = [m for m in rest if m.suppressed]
        for m in folded:
            m.suppressed, m.suppression_kind = root.suppressed, root.suppression_kind
        return [_primary(root, folded)] + apart
    active = [m for m in members if not m.suppressed]
    apart = [m for m in members if m.suppressed]
    if not active:
        return apart
    primary = root if root is not None and not root.suppressed else active[0]
    return [_primary(primary, [m for m in active if m is not primary])] + apart


def _primary(primary: Finding, related: list[Finding]) -> Finding:
    primary.related = related
    for m in related:
        for target, sev in m.targets.items():
            if target in primary.targets and sev.rank > primary.targets[target].rank:
                primary.targets[target] = sev
    if primary.targets:
        primary.severity = max(primary.targets.values(), key=lambda s: s.rank)
    return primary


def fold_under(primary: Finding, findings: list[Finding], target: str) -> list[Finding]:
    """`findings` with every active one whose only target is `target` folded under
    `primary` (its `related`, each keeping its own location, message and fix); one with
    other targets too loses `target` and stays a finding of its own. The primary keeps its
    own severity: the folded findings are the reason it exists, not a worse form of it
    (a file its package's ROCm build never compiles, rule PTL057)."""
    out: list[Finding] = []
    folded: list[Finding] = []
    for f in findings:
        if f is primary or f.suppressed or target not in f.targets or f.rule_id.startswith("PTL00"):
            out.append(f)
        elif set(f.targets) == {target}:
            folded.append(f)
            folded.extend(f.related)
            f.related = []
        else:
            del f.targets[target]
            f.severity = max(f.targets.values(), key=lambda s: s.rank)
            out.append(f)
    primary.related = sorted(primary.related + folded, key=Finding.sort_key)
    return out


def related_count(f: Finding) -> int:
    """How many use sites are folded under `f` (0 for a finding of its own)."""
    return len(f.related)


def more_uses(f: Finding) -> str:
    """`and 17 more uses` for a folded finding, "" for one with no related sites."""
    n = len(f.related)
    if not n:
        return ""
    if any(r.rule_id != f.rule_id for r in f.related):
        return f"and {n} more finding{'s' if n != 1 else ''}"
    return f"and {n} more use{'s' if n != 1 else ''}"
