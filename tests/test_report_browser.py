"""The migration report as a person sees it: headless Chromium (Debian's `chromium`, which
.ci/run installs) opens the fixtures report from disk, with background networking off and
a page that forbids every load, takes a screenshot and dumps the DOM it built."""

from __future__ import annotations

import json
import subprocess
import tempfile

import pytest

from conftest import require_tool, run_portlint
from htmltree import parse_html

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
)
WIDTH, HEIGHT = 1280, 1400


def chromium(*args: str) -> subprocess.CompletedProcess:
    exe = require_tool("chromium")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    html, data = tmp / "report.html", tmp / "report.json"
    for fmt, out in (("html", html), ("json", data)):
        proc = run_portlint("report", "fixtures/", "--format", fmt, "-o", str(out), "--no-cache")
        assert proc.returncode == 0, proc.stderr
    return html, json.loads(data.read_text(encoding="utf-8"))


@pytest.mark.oracle
def test_the_screenshot_is_not_blank(page, tmp_path):
    from PIL import Image

    html, _ = page
    png = tmp_path / "shot.png"
    proc = chromium(f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}", html.as_uri())
    assert png.is_file(), proc.stderr[-2000:]
    with Image.open(png) as img:
        assert img.size == (WIDTH, HEIGHT)
        rgb = img.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 20)
        # content all the way down: every 100-pixel band holds text or chart colours
        bands = [len(rgb.crop((0, y, WIDTH, y + 100)).getcolors(maxcolors=1 << 20)) for y in range(0, HEIGHT, 100)]
    assert colours is not None and len(colours) > 200, "the page rendered as a handful of flat colours"
    # a blank or unstyled page is mostly one colour; the report has cards, bars and text throughout
    share = max(colours)[0] / (WIDTH * HEIGHT)
    assert share < 0.8, f"{share:.0%} of the screenshot is the background colour {max(colours)[1]}"
    assert min(bands) > 20, f"a band of the screenshot is nearly empty: colours per band {bands}"
    # the effort colours of the bar charts (redesign navy, local blue) and the blocker red are on screen
    on_screen = {c for _, c in colours}
    assert {(0x26, 0x3F, 0x80), (0x3F, 0x8F, 0xC0), (0xD6, 0x45, 0x5D)} <= on_screen
    dark = sum(n for n, c in colours if sum(c) < 200)
    assert dark > 5000, "hardly any dark (text) pixels"


@pytest.mark.oracle
def test_the_numbers_shown_equal_the_json_report(page):
    html, report = page
    proc = chromium("--dump-dom", html.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = parse_html(proc.stdout)
    cards = dom.find_all("article", cls="card")
    assert [c.attrs["data-target"] for c in cards] == list(report["by_target"])
    for card in cards:
        t = card.attrs["data-target"]
        row = report["by_target"][t]
        shown = {
            div.attrs["class"][2:]: int(div.find_all("b")[0].text())
            for div in card.find_all("div")
            if div.attrs.get("class", "").startswith("k-")
        }
        assert shown == {k: row[k] for k in ("blockers", "slowdowns", "notes")}, t
        assert card.find_all("div", cls="effort-line")[0].text().startswith(f"{row['points']} effort points"), t
        assert card.find_all("div", cls="verdict")[0].text().lower() == row["verdict"], t
        if t == "rocm":
            ported = card.find_all("div", cls="ported")[0].text()
            assert f"{row['already_ported']} guarded" in ported and f"{row['hipify_renames']} mechanical hipify" in ported
    totals = dom.find_all("div", cls="totals")[0]
    numbers = [int(b.text()) for b in totals.find_all("b")]
    assert numbers[:3] == [report["files_scanned"], report["total"]["findings"], report["total"]["points"]]
    # the drill-down holds every finding, each file with its JSON effort
    assert len(dom.find_all("tr", cls="finding")) == report["total"]["findings"]
    by_file = {r["path"]: r for r in report["by_file"]}
    files = [d for d in dom.find_all("details") if "data-path" in d.attrs]
    assert {d.attrs["data-path"]: int(d.attrs["data-points"]) for d in files} == {p: r["points"] for p, r in by_file.items()}
    # exactly one tab panel is displayed at a time is CSS's job; each has its own top-20 table
    assert len(dom.find_all("div", cls="panel")) == 1 + len(report["by_target"])
