"""`--baseline FILE`: leave out the findings an earlier `--format json` report already had.

A finding is matched by its `portlint/v1` fingerprint (rule, path and the normalised matched
text: it survives line moves and edits elsewhere in the file). Fingerprints are counted, not
just looked up: a baseline holding a construct twice absorbs two of the current findings
with that fingerprint, so a third identical one is new. Which of three identical findings
is the new one is decided by their surroundings: findings whose `primaryLocationLineHash`
(the line and the text after it) is also the baseline's are matched first, the rest in
report order. Only active findings are matched,
and only the baseline's active entries count (a report written with
`--sarif-include-suppressed` also lists suppressed ones).

A baselined finding stays in the result, marked suppressed (kind "external") with
`baseline_state` "unchanged", so SARIF and JSON with `--sarif-include-suppressed` can show
it; every other active finding is "new".

A finding that folds the uses of one root (portlint.findings.roots: the `#include <cudnn.h>`
with every cuDNN call of the file in its `related` list) is matched by its primary, and then
its uses by theirs: the baseline's `related` entries are counted by their `fingerprint`
(rule, path and the use's text, no line), so moving a use changes nothing while a use the
baseline did not have makes the finding "new", reported with those new uses only. A report
written before uses had fingerprints is counted by the uses' messages. An entry of the baseline for a file this scan
read that matched nothing is stale (the problem was fixed since): it is counted, so the
baseline can be refreshed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from portlint.core.jsonfile import expect, read_json
from portlint.core.names import KEY_ESCAPE, name_key, name_text
from portlint.findings.fingerprint import portlint_fingerprint, use_fingerprint


class BaselineError(Exception):
    """The baseline file cannot be used (one line, for the command line)."""


@dataclass(frozen=True)
class BaselineEntries:
    name: str  # the file, as named on the command line
    counts: Counter  # (path, base fingerprint) -> how many active findings the report had
    contexts: Counter  # (path, base fingerprint, line hash without its `:k`) -> how many
    # the report's paths are `name_key`'s (one to one); a report from before `path_escape`
    # wrote them with `name_text` (`\\xNN`, `%` as it is), and is matched that way
    keyed: bool = True
    # (path, base fingerprint) -> the folded uses of the report's findings with that key,
    # counted by the use's fingerprint (by its message in a report from before they had one)
    uses: dict = None

    def path_of(self, path) -> str:
        """`path` spelled as this baseline's report spells it."""
        return name_key(path) if self.keyed else name_text(path)


@dataclass(frozen=True)
class BaselineOutcome:
    baselined: int
    stale: int


def _base(fingerprint: str) -> str:
    """A `portlint/v1` value without the `:k` that numbers repeats within a file."""
    return fingerprint.split(":", 1)[0]


def load_baseline(path: Path) -> BaselineEntries:
    doc = read_json(path, BaselineError, "the baseline")
    if not isinstance(doc, dict) or doc.get("schema") != "portlint-report" or not isinstance(doc.get("findings"), list):
        raise BaselineError(f"the baseline {path} is not a portlint `--format json` report")
    counts: Counter = Counter()
    contexts: Counter = Counter()
    uses: dict = {}
    for i, item in enumerate(doc["findings"]):
        where = f"the baseline {path}: findings[{i}]"
        expect(item, dict, BaselineError, where)
        if item.get("suppressed"):
            continue
        prints = expect(item.get("fingerprints"), dict, BaselineError, f"{where}.fingerprints")
        key = (expect(item.get("path"), str, BaselineError, f"{where}.path"),
               _base(expect(prints.get("portlint/v1"), str, BaselineError, f"{where}.fingerprints.portlint/v1")))
        line_hash = prints.get("primaryLocationLineHash")
        line_hash = expect("" if line_hash is None else line_hash, str, BaselineError, f"{where}.fingerprints.primaryLocationLineHash")
        counts[key] += 1
        contexts[(*key, _base(line_hash))] += 1
        related = item.get("related") or []
        expect(related, list, BaselineError, f"{where}.related")
        for j, use in enumerate(related):
            expect(use, dict, BaselineError, f"{where}.related[{j}]")
            mark = use.get("fingerprint")
            mark = ("use", mark) if isinstance(mark, str) else ("message", str(use.get("message", "")))
            uses.setdefault(key, Counter())[mark] += 1
    return BaselineEntries(str(path), counts, contexts, doc.get("path_escape") == KEY_ESCAPE, uses)


def apply_baseline(findings, entries: BaselineEntries, scanned_paths) -> BaselineOutcome:
    """Mark each active finding of `findings` "unchanged" while the baseline still has an
    unmatched entry with its fingerprint (those with the baseline's surroundings first,
    then in report order), else "new"."""
    left = Counter(entries.counts)
    contexts = Counter(entries.contexts)
    active = [f for f in findings if not f.suppressed]
    # the report wrote each path as a key (a name that is not UTF-8 with its bytes as %NN)
    keys = {id(f): (entries.path_of(f.path), portlint_fingerprint(f)) for f in active}
    taken: set[int] = set()
    # 1. same construct, same surroundings; 2. same construct, in report order
    for f in active:
        context = (*keys[id(f)], _base(f.line_hash or ""))
        if contexts[context] > 0 and left[keys[id(f)]] > 0:
            contexts[context] -= 1
            left[keys[id(f)]] -= 1
            taken.add(id(f))
    for f in active:
        if id(f) not in taken and left[keys[id(f)]] > 0:
            left[keys[id(f)]] -= 1
            taken.add(id(f))
    # a matched root whose uses the baseline did not all have is new, with the new uses
    pools = {key: Counter(c) for key, c in (entries.uses or {}).items()}
    for f in active:
        if id(f) in taken and f.related:
            pool = pools.setdefault(keys[id(f)], Counter())
            fresh = []
            for use in f.related:
                mark = next((m for m in (("use", use_fingerprint(use)), ("message", use.message)) if pool[m] > 0), None)
                if mark is None:
                    fresh.append(use)
                else:
                    pool[mark] -= 1
            if fresh:
                taken.discard(id(f))
                f.related = fresh
    for f in active:
        if id(f) in taken:
            f.suppressed = f"in the baseline {entries.name}"
            f.suppression_kind = "external"
            f.baseline_state = "unchanged"
        else:
            f.baseline_state = "new"
    baselined = len(taken)
    scanned = {entries.path_of(p) for p in scanned_paths}
    stale = sum(n for (path, _), n in left.items() if path in scanned and n > 0)
    return BaselineOutcome(baselined, stale)
