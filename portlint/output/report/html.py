"""The migration report as one self-contained HTML page: inline CSS and SVG, no script, no
fonts or images from anywhere, the same bytes for the same input.

Tabs (a target per tab) are radio buttons and CSS; drill-down is <details>. The numbers a
test or a script may want are also in data- attributes (data-target, data-blockers, ...),
equal to the JSON form of the same Summary."""

from __future__ import annotations

import re
from portlint.output.escape import html_text as escape

from portlint.output.report.charts import Row, Segment, meter, stacked_bars
from portlint.output.report.summary import ALL, EFFORT_POINTS, KINDS, LEVELS, TARGET_NAMES, TOP_FILES, Summary, Tally

MAX_DIRECTORY_BARS = 25
MAX_RULE_BARS = 12
RULE_LABEL_CHARS = 44
VERDICT_TEXT = {"blocked": "Blocked", "runs, slowly": "Runs, slowly", "ready": "Ready"}

_CSS = """
:root{--ink:#1d2433;--muted:#5d6678;--line:#e3e7ee;--bg:#f5f7fa;--card:#fff;
--blockers:#d6455d;--slowdowns:#f0a431;--notes:#9aa6ba;
--mechanical:#8fd0c0;--local:#3f8fc0;--redesign:#263f80;--ok:#2f9e6e}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 28px 60px}
h1{font-size:26px;margin:0 0 4px;letter-spacing:-.01em}
h2{font-size:19px;margin:36px 0 12px}
h3{margin:0;font-size:18px}
a{color:#2a64b0;text-decoration:none}a:hover{text-decoration:underline}
code{font:12.5px ui-monospace,"DejaVu Sans Mono",monospace;background:#eef1f6;border-radius:3px;padding:0 3px}
.sub{color:var(--muted);margin:0}
.totals{display:flex;gap:28px;margin:18px 0 6px;flex-wrap:wrap}
.totals div{display:flex;flex-direction:column}.totals b{font-size:22px}.totals span{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(250px,1fr));gap:16px;margin-top:18px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 18px;border-top:5px solid var(--ok)}
.card.v-blocked{border-top-color:var(--blockers)}.card.v-slow{border-top-color:var(--slowdowns)}
.card-head{display:flex;flex-direction:column;gap:1px}
.hw{color:var(--muted);font-size:12px}
.verdict{display:inline-block;margin:10px 0 12px;padding:2px 10px;border-radius:99px;font-weight:600;font-size:13px;background:#e5f5ee;color:#1f7a52}
.v-blocked .verdict{background:#fbe6ea;color:#a8213a}.v-slow .verdict{background:#fdf1dc;color:#8a5a00}
.counts{display:grid;grid-template-columns:repeat(3,1fr);gap:6px;margin-bottom:12px}
.counts div{display:flex;flex-direction:column}.counts b{font-size:24px;line-height:1.1}
.counts span{font-size:12px;color:var(--muted)}
.k-blockers b{color:var(--blockers)}.k-slowdowns b{color:#c07c0a}.k-notes b{color:#6d7890}
.effort-line{display:flex;justify-content:space-between;align-items:baseline;margin-bottom:4px}
.effort-line b{font-size:18px}
.levels{font-size:12px;color:var(--muted);margin:4px 0 10px}
.ported{border-top:1px dashed var(--line);padding-top:8px;font-size:13px}
.ported b{color:var(--ok)}.most{font-size:13px;margin-top:8px;overflow-wrap:anywhere}.scope-note{font-size:12px;color:var(--muted);margin-top:6px}
svg.meter{display:block;width:100%;border-radius:5px;overflow:hidden}
svg .track{fill:#edf0f5}
.seg-blockers{fill:var(--blockers)}.seg-slowdowns{fill:var(--slowdowns)}.seg-notes{fill:var(--notes)}
.seg-mechanical{fill:var(--mechanical)}.seg-local{fill:var(--local)}.seg-redesign{fill:var(--redesign)}
svg text{font:12px system-ui,"DejaVu Sans",sans-serif;fill:var(--ink)}svg text.val{fill:var(--muted)}
svg.chart{max-width:100%;height:auto}
.legend{display:flex;gap:14px;flex-wrap:wrap;font-size:12px;color:var(--muted);margin:6px 0}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.sw.mechanical{background:var(--mechanical)}.sw.local{background:var(--local)}.sw.redesign{background:var(--redesign)}
.sw.blockers{background:var(--blockers)}.sw.slowdowns{background:var(--slowdowns)}.sw.notes{background:var(--notes)}
.tabs>input{position:absolute;opacity:0;pointer-events:none}
.tabs>label{display:inline-block;padding:6px 14px;margin-right:4px;border:1px solid var(--line);border-bottom:none;border-radius:8px 8px 0 0;background:#e9edf3;cursor:pointer;font-weight:600;color:var(--muted)}
.panel{display:none;background:var(--card);border:1px solid var(--line);border-radius:0 10px 10px 10px;padding:16px 18px}
.box{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 18px}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
.panel h3{font-size:14px;margin:4px 0 8px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
table{border-collapse:collapse;width:100%;background:var(--card)}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.03em}
td.path{overflow-wrap:anywhere}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;width:1%;white-space:nowrap}
.pill{display:inline-block;padding:0 7px;border-radius:99px;font-size:11.5px;font-weight:600;white-space:nowrap}
.pill.mechanical{background:#dcf1eb;color:#1e6b58}.pill.local{background:#dde9f5;color:#21527a}.pill.redesign{background:#dfe3f1;color:#263f80}
.t{display:inline-block;font-size:11px;padding:0 5px;border-radius:3px;margin:0 2px 2px 0;color:#fff;white-space:nowrap}
.t.error{background:var(--blockers)}.t.warning{background:var(--slowdowns);color:#3b2800}.t.note{background:var(--notes)}
details{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:6px 0}
details>summary{cursor:pointer;padding:8px 12px;display:flex;gap:12px;align-items:center;list-style:none}
details>summary::-webkit-details-marker{display:none}
details>summary::before{content:"▸";color:var(--muted);width:10px}details[open]>summary::before{content:"▾"}
details details{margin:6px 12px}
.sname{flex:1;font-weight:600;overflow-wrap:anywhere}.smeta{color:var(--muted);font-size:12.5px;white-space:nowrap}
.smeter{width:140px}
.finding td{font-size:13px}.rewrite{color:#34405a;font-size:12.5px}.fix{color:var(--ok);font-size:12px}
.rules td.why{font-size:12.5px;color:#34405a}
.rules details{border:none;margin:0;background:none}.rules details>summary{padding:0}
.doc{font-size:12.5px;color:#34405a;margin:6px 0 0}.doc p{margin:2px 0 6px}
.doc pre{font:12px ui-monospace,"DejaVu Sans Mono",monospace;background:#eef1f6;border-radius:6px;padding:8px 10px;overflow-x:auto;margin:4px 0 8px}
.rules td:first-child{min-width:210px}
@media print{.tabs>label,.tabs>input{display:none}.panel{display:block!important;margin-bottom:12px;border-radius:10px}
.panel::before{content:attr(data-title);font-weight:600;display:block;margin-bottom:6px}}
footer{margin-top:40px;color:var(--muted);font-size:12.5px;border-top:1px solid var(--line);padding-top:14px}
"""


def _rich(text: str) -> str:
    """Escape, then show `code` spans and line breaks."""
    out = escape(text)
    out = re.sub(r"`([^`\n]+)`", r"<code>\1</code>", out)
    return out.replace("\n", "<br>")


_FENCE = re.compile(r"^```[\w+-]*\n(.*?)^```\s*$", re.M | re.S)


def _prose(text: str) -> str:
    """A rule file's documentation: hard-wrapped paragraphs joined into lines (blank lines
    kept), fenced code blocks shown as they are."""
    out, pos = [], 0
    for m in list(_FENCE.finditer(text)) + [None]:
        chunk = text[pos: m.start() if m else len(text)]
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", chunk.strip())]
        out += [f"<p>{_rich(p)}</p>" for p in paragraphs if p]
        if m:
            out.append(f"<pre>{escape(m.group(1).rstrip())}</pre>")
            pos = m.end()
    return "".join(out)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _level_segments(t: Tally, points: bool) -> tuple[Segment, ...]:
    return tuple(
        Segment(level, "points" if points else "findings", getattr(t, level) * (EFFORT_POINTS[level] if points else 1))
        for level in reversed(LEVELS)
    )


def _data(**fields: object) -> str:
    return "".join(f' data-{k.replace("_", "-")}="{escape(str(v))}"' for k, v in fields.items())


def _card(s, summary: Summary, file_ids: dict[str, str]) -> str:
    t = s.tally
    css = {"blocked": "v-blocked", "runs, slowly": "v-slow"}.get(s.verdict, "v-ready")
    head = (
        f'<article class="card {css}"'
        + _data(target=s.target, verdict=s.verdict, blockers=t.blockers, slowdowns=t.slowdowns, notes=t.notes,
                points=t.points, mechanical=t.mechanical, local=t.local, redesign=t.redesign,
                ported=s.ported, hipify_renames=s.hipify_renames, diagnostics=s.diagnostics)
        + ">"
    )
    parts = [
        head,
        f'<div class="card-head"><h3>{escape(s.target)}</h3><span class="hw">{escape(TARGET_NAMES.get(s.target, ""))}</span></div>',
        f'<div class="verdict">{VERDICT_TEXT[s.verdict]}</div>',
        '<div class="counts">'
        + "".join(f'<div class="k-{k}"><b>{getattr(t, k)}</b><span>{k}</span></div>' for k in KINDS)
        + "</div>",
        f'<div class="effort-line"><span><b>{t.points}</b> effort points</span><span class="hw">{_plural(t.findings, "finding")}</span></div>',
        meter(_level_segments(t, points=True), caption=f"effort points on {s.target} by level"),
        '<div class="levels">' + " · ".join(f"{getattr(t, lv)} {lv}" for lv in reversed(LEVELS)) + "</div>",
    ]
    ported = [f"<b>{s.ported}</b> guarded {'site' if s.ported == 1 else 'sites'} already ported"] if s.target == "rocm" else []
    if s.target == "rocm":
        ported.append(f"<b>{s.hipify_renames}</b> mechanical hipify {'rename' if s.hipify_renames == 1 else 'renames'}")
    if ported:
        parts.append('<div class="ported">' + "<br>".join(ported) + "</div>")
    top = summary.top_files(s.target, 1)
    if top:
        g = top[0]
        parts.append(
            f'<div class="most">Most work: <a href="#{file_ids[g.key]}">{escape(g.key.rpartition("/")[2])}</a> '
            f'<span class="hw">({g.tally(s.target).points} pts)</span></div>'
        )
    if s.target != "rocm" and s.cuda_files:
        parts.append(
            f'<div class="scope-note">{_plural(s.cuda_files, "CUDA source file")} assessed for rocm only: '
            "their device code needs a rewrite for this target.</div>"
        )
    if s.diagnostics:
        parts.append(f'<div class="scope-note">{_plural(s.diagnostics, "portlint diagnostic")} (not porting work).</div>')
    parts.append("</article>")
    return "".join(parts)


def _compare(summary: Summary) -> str:
    """The targets side by side on one scale: which is nearest, and what kind of work."""
    rows = [
        Row(t, _level_segments(s.tally, points=True), f"{s.tally.points} pts · {s.tally.redesign} redesign")
        for t, s in summary.by_target.items()
    ]
    if not any(r.total for r in rows):
        return ""
    return (
        '<h2>Effort by target</h2><div class="box">' + _legend(kinds=False)
        + stacked_bars(rows, width=1100, label_chars=10, caption="effort points by target and level") + "</div>"
    )


def _legend(kinds: bool) -> str:
    levels = "".join(
        f'<span><i class="sw {lv}"></i>{lv} ({EFFORT_POINTS[lv]} pt{"s" if EFFORT_POINTS[lv] != 1 else ""})</span>'
        for lv in reversed(LEVELS)
    )
    sev = "".join(f'<span><i class="sw {k}"></i>{k}</span>' for k in KINDS) if kinds else ""
    return f'<div class="legend">{levels}{sev}</div>'


def _file_ids(summary: Summary) -> dict[str, str]:
    return {g.key: f"file-{i}" for i, g in enumerate(summary.files)}


def _rule_label(rule_id: str, name: str, chars: int = RULE_LABEL_CHARS) -> str:
    """`PTL905 accelerator-detection-by-cu…`: the id always shows, the name is cut at the end."""
    label = f"{rule_id} {name}"
    return label if len(label) <= chars else label[: chars - 1] + "…"


def _panel(summary: Summary, scope: str, file_ids: dict[str, str]) -> str:
    fam_rows = [
        Row(g.key, _level_segments(g.tally(scope), points=True), f"{g.tally(scope).points} pts")
        for g in summary.ranked(summary.families, scope)
    ]
    dirs = summary.ranked(summary.directories, scope)
    dir_index = {g.key: i for i, g in enumerate(summary.directories)}
    dir_rows = [
        Row(g.key, _level_segments(g.tally(scope), points=True), f"{g.tally(scope).points} pts", href=f"#dir-{dir_index[g.key]}")
        for g in dirs[:MAX_DIRECTORY_BARS]
    ]
    more = len(dirs) - len(dir_rows)
    label = "all targets" if scope == ALL else scope
    out = [f'<div class="panel" id="panel-{scope}" data-title="{escape(label)}">']
    if not fam_rows:
        out.append(f"<p>No findings for {escape(label)}.</p></div>")
        return "".join(out)
    rule_rows = [
        Row(_rule_label(g.key, summary.rule_rows[g.key].name), _level_segments(g.tally(scope), points=True),
            f"{g.tally(scope).points} pts", href=f"#rule-{g.key}")
        for g in summary.ranked(summary.rules, scope)[:MAX_RULE_BARS]
    ]
    out.append(_legend(kinds=False))
    out.append('<div class="grid2"><div><h3>By rule family</h3>')
    out.append(stacked_bars(fam_rows, width=540, label_chars=18, caption=f"effort by rule family, {label}"))
    out.append("</div><div><h3>Costliest rules</h3>")
    out.append(stacked_bars(rule_rows, width=560, label_chars=RULE_LABEL_CHARS, caption=f"effort by rule, {label}"))
    out.append("</div></div><h3>By directory</h3>")
    out.append(stacked_bars(dir_rows, width=1100, label_chars=72, caption=f"effort by directory, {label}"))
    if more > 0:
        word = "directory" if more == 1 else "directories"
        out.append(f'<p class="hw">and {more} more {word} with less effort (see the drill-down below).</p>')
    top = summary.top_files(scope)
    out.append(f"<h3>Top {min(TOP_FILES, len(top))} files by effort</h3>")
    out.append(
        '<table class="top"><thead><tr><th>#</th><th>file</th><th class="n">findings</th><th class="n">blockers</th>'
        '<th class="n">slowdowns</th><th class="n">redesign</th><th class="n">points</th><th>effort</th></tr></thead><tbody>'
    )
    for rank, g in enumerate(top, start=1):
        t = g.tally(scope)
        out.append(
            f"<tr{_data(scope=scope, file=g.key, points=t.points)}><td>{rank}</td>"
            f'<td class="path"><a href="#{file_ids[g.key]}">{escape(g.key)}</a></td><td class="n">{t.findings}</td>'
            f'<td class="n">{t.blockers}</td><td class="n">{t.slowdowns}</td><td class="n">{t.redesign}</td>'
            f'<td class="n"><b>{t.points}</b></td><td class="smeter">{meter(_level_segments(t, True), width=140, height=8)}</td></tr>'
        )
    out.append("</tbody></table></div>")
    return "".join(out)


def _tabs(summary: Summary, file_ids: dict[str, str]) -> tuple[str, str]:
    """The tab bar and a panel per scope, and the CSS that shows the checked tab's panel."""
    scopes = summary.scopes
    out = ['<div class="tabs">']
    for i, scope in enumerate(scopes):
        checked = " checked" if i == 0 else ""
        out.append(f'<input type="radio" name="scope" id="tab-{scope}"{checked}>')
    for scope in scopes:
        out.append(f'<label for="tab-{scope}">{"All targets" if scope == ALL else escape(scope)}</label>')
    for scope in scopes:
        out.append(_panel(summary, scope, file_ids))
    out.append("</div>")
    show = ",".join(f"#tab-{s}:checked~#panel-{s}" for s in scopes)
    # the label of the checked tab: the inputs come before all labels, so pair them by order
    label_rules = "".join(
        f".tabs>input:nth-of-type({i + 1}):checked~label:nth-of-type({i + 1}){{background:var(--card);color:var(--ink)}}"
        for i in range(len(scopes))
    )
    return f"{show}{{display:block}}{label_rules}", "".join(out)


def _target_badges(targets: dict[str, str]) -> str:
    return "".join(f'<span class="t {sev}" title="{sev} on {t}">{escape(t)}</span>' for t, sev in targets.items())


def _findings(summary: Summary, file_ids: dict[str, str]) -> str:
    by_file: dict[str, list] = {}
    for item in summary.items:
        by_file.setdefault(item.path, []).append(item)
    files = {g.key: g for g in summary.files}
    out = []
    for i, d in enumerate(summary.directories):
        t = d.tally(ALL)
        if not t.findings:
            continue
        out.append(
            f'<details id="dir-{i}"{_data(directory=d.key, findings=t.findings, points=t.points)}><summary>'
            f'<span class="sname">{escape(d.key)}/</span>'
            f'<span class="smeta">{_plural(d.files, "file")} · {_plural(t.findings, "finding")} · {_plural(t.blockers, "blocker")} · <b>{t.points}</b> pts</span>'
            f'<span class="smeter">{meter(_level_segments(t, True), width=140, height=8)}</span></summary>'
        )
        for path in sorted(p for p in by_file if (p.rpartition("/")[0] or ".") == d.key):
            ft = files[path].tally(ALL)
            out.append(
                f'<details id="{file_ids[path]}"{_data(path=path, findings=ft.findings, points=ft.points)}><summary>'
                f'<span class="sname">{escape(path.rpartition("/")[2])}</span>'
                f'<span class="smeta">{_plural(ft.findings, "finding")} · {_plural(ft.blockers, "blocker")} · <b>{ft.points}</b> pts</span></summary>'
                '<table><thead><tr><th class="n">line</th><th>rule</th><th>targets</th><th>effort</th><th>finding and rewrite</th></tr></thead><tbody>'
            )
            for item in by_file[path]:
                rewrite = f'<div class="rewrite">{_rich(item.rewrite)}</div>' if item.rewrite else ""
                fix = f'<div class="fix">fix ({_rich(item.fix)})</div>' if item.fix else ""
                out.append(
                    f'<tr class="finding"{_data(rule=item.rule, line=item.line, effort=item.effort)}>'
                    f'<td class="n">{item.line}</td><td><a href="#rule-{item.rule}">{item.rule}</a></td>'
                    f"<td>{_target_badges(item.targets)}</td><td><span class=\"pill {item.effort}\">{item.effort}</span></td>"
                    f"<td>{_rich(item.message)}{rewrite}{fix}</td></tr>"
                )
            out.append("</tbody></table></details>")
        out.append("</details>")
    return "".join(out) if out else "<p>No findings.</p>"


def _rules(summary: Summary) -> str:
    out = [
        '<table class="rules"><thead><tr><th>rule</th><th>targets</th><th class="n">findings</th>'
        '<th class="n">points</th><th>effort</th><th>why this effort, and the rule\'s documentation</th></tr></thead><tbody>'
    ]
    for g in summary.rules:
        r = summary.rule_rows[g.key]
        t = g.tally(ALL)
        out.append(
            f'<tr id="rule-{r.id}"{_data(rule=r.id, findings=t.findings, points=t.points)}>'
            f'<td><a href="{escape(r.source)}"><b>{r.id}</b></a><br><code>{escape(r.name)}</code></td>'
            f"<td>{_target_badges(r.severity)}</td><td class=\"n\">{t.findings}</td><td class=\"n\">{t.points}</td>"
            f'<td><span class="pill {r.effort}">{r.effort}</span></td>'
            f'<td class="why">{_rich(r.effort_why)}<details><summary><a>{_rich(r.summary)}</a></summary>'
            f'<div class="doc"><b>What it finds</b>{_prose(r.finds)}</div><div class="doc"><b>Portable rewrite</b>{_prose(r.rewrite)}</div>'
            f'<div class="doc">Source: <code>{escape(r.source)}</code> · <code>portlint rule {r.id}</code></div></details></td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def render_html(summary: Summary) -> str:
    total = summary.total()
    file_ids = _file_ids(summary)
    tab_css, tabs = _tabs(summary, file_ids)
    paths = ", ".join(summary.paths)
    head = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>portlint migration report: {escape(paths)}</title><style>{_CSS}{tab_css}</style></head><body><main>"
    )
    body = [
        head,
        # the targets once: the run header names them (and the releases); the plain list only without it
        f"<header><h1>Migration report</h1><p class=\"sub\">portlint {escape(summary.tool_version)} · <code>{escape(paths)}</code>"
        + ("" if summary.header else f" · targets: {escape(', '.join(summary.targets))}") + "</p>",
        f'<p class="sub run-header">{escape(summary.header)}</p>' if summary.header else "",
        f'<div class="totals"{_data(files=summary.files_scanned, findings=total.findings, points=total.points, suppressed=summary.suppressed)}>'
        f"<div><b>{summary.files_scanned}</b><span>files scanned</span></div>"
        f"<div><b>{total.findings}</b><span>findings</span></div>"
        f"<div><b>{total.points}</b><span>effort points</span></div>"
        f"<div><b>{total.redesign}</b><span>need a redesign</span></div>"
        f"<div><b>{summary.suppressed}</b><span>suppressed</span></div></div>"
        + (f'<p class="sub">{escape(summary.outside_library_line())}</p>' if summary.outside_library else "")
        + (f'<p class="sub">{_plural(summary.notices, "notice")} about files that could not be fully scanned '
           "(printed on stderr by the run).</p>" if summary.notices else "")
        + "</header>",
        '<section class="cards">' + "".join(_card(s, summary, file_ids) for s in summary.by_target.values()) + "</section>",
        _compare(summary),
        "<h2>Where the work is</h2>",
        tabs,
        "<h2>Findings by directory and file</h2>",
        _findings(summary, file_ids),
        "<h2>Rules that fired</h2>",
        _rules(summary),
        "<footer><p><b>How to read this.</b> A <i>blocker</i> will not compile, will not run, or computes a wrong result "
        "on that target; a <i>slowdown</i> runs but recompiles, syncs with the host or needs re-tuning; a <i>note</i> is "
        "worth knowing. <i>Already ported</i> counts findings in code an AMD build skips, beside a HIP branch. "
        "Effort comes from each rule's <code>[effort]</code> level: <i>mechanical</i> (hipify or a safe fix, "
        f"{EFFORT_POINTS['mechanical']} pt), <i>local</i> (a few lines at the site, {EFFORT_POINTS['local']} pts), "
        f"<i>redesign</i> (the kernel or step must change, {EFFORT_POINTS['redesign']} pts); a finding with a safe fix "
        "counts as mechanical. Points are relative weights, not hours; a finding that breaks several targets counts "
        "once under “All targets” and once on each target.</p></footer>",
        "</main></body></html>\n",
    ]
    return "".join(body)
