"""NVIDIA-only names as data: the tables in `rules/<family>/names*.toml`, and one matcher.

A table row (`[[name]]`) gives a rule id and either exact `names` (identifiers, possibly
qualified such as `cute::cluster_sync`) or a `pattern` (a regex, for name families such as
`SM90_64x128x16_F16BF16BF16_SS`), the `advice` shown with a finding, where the names come
from (`source`) and since when they exist (`since`). Optional keys: `capture` (the regex
group that names the construct), `kind` (a label a detector selects rows by), `advice_for`
(advice per name), `bare` (a regex removed from the name to give `{bare}` in the advice).
Advice texts may use `{key}` for the entries of the family's `[advice]` table, `{name}` and
`{since}`.
`names.toml` is written by hand; `names-*.toml` files are derived from public headers by
scripts/derive_name_tables.py and say so in their `generated` key.

Exact names are looked up in a dictionary for each identifier of the file, so a table of
thousands of names costs one pass over the file; patterns run as regexes, each after a
cheap substring test."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from portlint.core.catalog import RuleError, rules_root

FAMILIES = ("cuda_ptx", "cuda_hopper", "cuda_async", "collectives", "cuda_libraries", "cuda_warp")
_ROW_KEYS = {"rule", "names", "pattern", "capture", "kind", "advice", "advice_for", "bare", "since", "source"}
_FIELD = re.compile(r"\{(\w+)\}")
# an identifier with its qualifiers: `cute::cluster_sync`, `cutlass::arch::Sm90`
_QUALIFIED = re.compile(r"(?<![\w:])(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*")


@dataclass(frozen=True)
class Entry:
    """One row of a name table."""

    rule: str
    advice: str
    source: str
    since: str
    names: frozenset[str] = frozenset()
    pattern: re.Pattern | None = None
    capture: int = 0
    kind: str = ""
    advice_for: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    bare: re.Pattern | None = None

    def advise(self, name: str) -> str:
        text = self.advice_for.get(name, self.advice)
        bare = self.bare.sub("", name) if self.bare is not None else name
        return text.replace("{name}", name).replace("{bare}", bare).replace("{since}", self.since)


def _advice_text(text: str, shared: dict[str, str], where: str) -> str:
    def fill(m: re.Match) -> str:
        key = m.group(1)
        if key in ("name", "bare", "since"):
            return m.group(0)
        if key not in shared:
            raise RuleError(f"{where}: advice uses {{{key}}}, which the [advice] table does not define")
        return shared[key]

    return _FIELD.sub(fill, text)


def _parse_rows(data: dict, shared: dict[str, str], family: str, where: str) -> list[Entry]:
    from portlint.core.catalog import load_rules

    rules = load_rules()
    out = []
    for i, row in enumerate(data.get("name", ()), 1):
        at = f"{where} row {i}"
        extra = set(row) - _ROW_KEYS
        if extra:
            raise RuleError(f"{at}: unknown keys {sorted(extra)}")
        rid = row.get("rule", "")
        if rid not in rules or rules[rid].family != family:
            raise RuleError(f"{at}: {rid!r} is not a rule of the {family} family")
        if not isinstance(row.get("advice"), str) or not row["advice"].strip():
            raise RuleError(f"{at}: advice is missing")
        if not row.get("source") or not row.get("since"):
            raise RuleError(f"{at}: source and since are required (where the names come from, since when)")
        names, pattern = row.get("names", []), row.get("pattern")
        if bool(names) == bool(pattern):
            raise RuleError(f"{at}: give either names or pattern")
        try:
            compiled = re.compile(pattern) if pattern else None
            bare = re.compile(row["bare"]) if "bare" in row else None
        except re.error as exc:
            raise RuleError(f"{at}: bad regex: {exc}") from None
        bad = [n for n in names if not _QUALIFIED.fullmatch(n)]
        if bad:
            raise RuleError(f"{at}: not identifiers: {bad[:3]}")
        out.append(
            Entry(
                rule=rid,
                advice=_advice_text(row["advice"], shared, at),
                source=row["source"],
                since=row["since"],
                names=frozenset(names),
                pattern=compiled,
                capture=int(row.get("capture", 0)),
                kind=row.get("kind", ""),
                advice_for={k: _advice_text(v, shared, at) for k, v in row.get("advice_for", {}).items()},
                bare=bare,
            )
        )
    return out


def shared_advice(family: str, key: str) -> str:
    """An entry of the family's `[advice]` table (detectors open asm findings with it)."""
    return _load()[1][family][key]


def load_tables() -> tuple[Entry, ...]:
    """Every row of every family's name tables, in file order (names.toml first)."""
    return _load()[0]


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[Entry, ...], dict[str, dict[str, str]]]:
    import tomllib

    entries: list[Entry] = []
    advice: dict[str, dict[str, str]] = {}
    for family in FAMILIES:
        folder = rules_root() / family
        files = sorted(folder.glob("names*.toml"), key=lambda p: (p.name != "names.toml", p.name))
        shared: dict[str, str] = {}
        parsed = []
        for path in files:
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise RuleError(f"{path}: {exc}") from None
            shared.update(data.get("advice", {}))
            parsed.append((path, data))
        for path, data in parsed:
            entries.extend(_parse_rows(data, shared, family, f"{family}/{path.name}"))
        advice[family] = shared
    return tuple(entries), advice


def entries_for(rule_id: str, kinds: tuple[str, ...] | None = None) -> list[Entry]:
    return [e for e in load_tables() if e.rule == rule_id and (kinds is None or e.kind in kinds)]


@lru_cache(maxsize=1)
def _exact_index() -> dict[str, Entry]:
    index: dict[str, Entry] = {}
    for e in load_tables():
        for n in e.names:
            index.setdefault(n, e)  # first row wins: names.toml before the derived tables
    return index


@lru_cache(maxsize=256)
def _needles(pattern: str) -> tuple[str, ...] | None:
    """Strings one of which a match of a table pattern contains (the patterns are compiled
    without flags, so the source says everything): what the source text shows, else what
    the parse tree shows (the patterns whose every branch starts with `\\b(?:a|b)`)."""
    from portlint.frontends.cuda.symbols import literal_needles, required_literals

    needles = literal_needles(pattern)
    return needles if needles is not None else required_literals(pattern)


_IDENT = re.compile(r"[A-Za-z_]\w*")


def _last_identifier(text: str) -> str:
    idents = _IDENT.findall(text)
    return idents[-1] if idents else ""


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    name: str
    entry: Entry


_WORD = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=1)
def _names_by_part() -> dict[str, tuple[str, ...]]:
    """identifier -> the table names whose last part it is."""
    out: dict[str, list[str]] = {}
    for n in _exact_index():
        out.setdefault(n.rsplit("::", 1)[-1], []).append(n)
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=512)
def _finder(names: tuple[str, ...]) -> re.Pattern:
    """A regex for exactly these names (qualified ones also inside a longer chain)."""
    alts = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(r"(?<!\w)(?:" + alts + r")(?!\w)")


def _hits(ctx, rule_id: str) -> list[Hit]:
    """Table matches of one rule in the file's code (not comments or strings), without the
    names the file defines itself; computed once per file and rule."""
    from portlint.frontends.cuda.symbols import code_text

    memo = ctx.fact(_memo)
    if rule_id in memo:
        return memo[rule_id]
    ct = ctx.fact(code_text)
    code = ct.code
    hits = [h for h in ctx.fact(_exact_hits) if h.entry.rule == rule_id]
    for e in load_tables():
        if e.rule != rule_id or e.pattern is None:
            continue
        needles = _needles(e.pattern.pattern)
        if needles is not None and not any(n in code for n in needles):
            continue
        for m in e.pattern.finditer(code):
            hits.append(Hit(m.start(e.capture), m.end(e.capture), m.group(e.capture), e))
    own = ct.own_names
    if own:
        hits = [h for h in hits if h.name not in own and _last_identifier(h.name) not in own]
    hits.sort(key=lambda h: (h.start, -h.end))
    memo[rule_id] = hits
    return hits


def _memo(ctx) -> dict:
    return {}


def _exact_hits(ctx) -> list[Hit]:
    """ctx.fact(_exact_hits): the exact-name matches of every table in the file's code. The
    file's identifiers are collected once (in C); only the table names all of whose parts
    occur are then searched for."""
    from portlint.frontends.cuda.symbols import code_text

    code = ctx.fact(code_text).code
    words = set(_WORD.findall(code))
    by_part = _names_by_part()
    present = tuple(sorted(n for w in words & by_part.keys() for n in by_part[w] if all(p in words for p in n.split("::"))))
    if not present:
        return []
    index = _exact_index()
    return [Hit(m.start(), m.end(), m.group(0), index[m.group(0)]) for m in _finder(present).finditer(code)]


def lines_with_names(ctx, exclude: tuple[str, ...] = (), exclude_kinds: tuple[str, ...] = ()) -> set[int]:
    """Lines holding a name of the tables, leaving out the rows of the `exclude` rules and
    of the `exclude_kinds` (PTL205: NVIDIA-only code inside an #if group)."""
    from portlint.frontends.cuda.symbols import code_text

    ct = ctx.fact(code_text)
    rules = sorted({e.rule for e in load_tables()} - set(exclude))
    return {ct.line_of(h.start) for rid in rules for h in _hits(ctx, rid) if h.entry.kind not in exclude_kinds}


def first_per_line(ctx, rule_id: str, kinds: tuple[str, ...] | None = None, skip=(), extra=()):
    """(span, name, advisor) for the rule's rows, the first match of each line, skipping
    matches inside the `skip` offset ranges; `extra` NameRules (patterns a detector builds
    from the file itself) take part on the same terms. An advisor has `advise(name)`."""
    from portlint.frontends.cuda.symbols import code_text, name_hits

    ct = ctx.fact(code_text)
    ranges = sorted(skip)
    starts = [a for a, _ in ranges]

    def skipped(pos: int) -> bool:
        i = bisect_right(starts, pos) - 1
        return i >= 0 and pos < ranges[i][1]

    found: dict[int, tuple[int, object, str, object]] = {}
    for h in _hits(ctx, rule_id):
        if kinds is not None and h.entry.kind not in kinds:
            continue
        if ranges and skipped(h.start):
            continue
        line = ct.line_of(h.start)
        if line not in found or h.start < found[line][0]:
            found[line] = (h.start, ct.span(h.start, h.end), h.name, h.entry)
    if extra:
        for span, name, rule in name_hits(ctx, extra, list(ranges)):
            start = ct.offset(span.start_line, span.start_col)
            if span.start_line not in found or start < found[span.start_line][0]:
                found[span.start_line] = (start, span, name, rule)
    return [(span, name, advisor) for _, (_, span, name, advisor) in sorted(found.items())]
