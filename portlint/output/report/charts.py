"""Static SVG charts, written as plain templates: horizontal stacked bars and a meter.

Hand-written rather than drawn by a plotting library: the page must be self-contained and
byte-identical between runs (library SVG carries ids, dates and fonts of its own), the
report should not pull a large import into a linter, and a bar chart is a few rectangles
that anyone can restyle here. Colours come from CSS classes (`seg-*`), so the page's
stylesheet is the one place to change them. Every shape has a <title>: hovering shows the
number without any script."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

ROW_HEIGHT = 24
BAR_HEIGHT = 16
CHAR_WIDTH = 7.0  # average width of a 12px character, for label columns


@dataclass(frozen=True)
class Segment:
    css: str  # class suffix: seg-<css>
    label: str
    value: int


@dataclass(frozen=True)
class Row:
    label: str
    segments: tuple[Segment, ...]
    total_text: str
    href: str = ""

    @property
    def total(self) -> int:
        return sum(s.value for s in self.segments)


def _num(x: float) -> str:
    """A coordinate with at most one decimal, no trailing zeros (stable text)."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _clip(label: str, chars: int) -> str:
    """`label` in at most `chars` characters. A path keeps its first component and as many
    trailing ones as fit (`pkg/…/cast/mxfp8`), so two long paths stay told apart."""
    if len(label) <= chars:
        return label
    parts = label.split("/")
    if len(parts) > 2:
        head, tail = parts[0], []
        for part in reversed(parts[1:]):
            if len(head) + 3 + len("/".join([part, *tail])) > chars:
                break
            tail.insert(0, part)
        if tail and len(head) <= chars // 2:
            return f"{head}/…/{'/'.join(tail)}"
        if tail:
            return "…/" + "/".join(tail)
    return "…" + label[-(chars - 1):]


def stacked_bars(rows: list[Row], width: int = 720, label_chars: int = 34, caption: str = "") -> str:
    """One horizontal bar per row, split into its segments, scaled to the largest row."""
    if not rows:
        return ""
    longest = max(len(r.label) for r in rows)
    label_w = min(label_chars, max(8, longest)) * CHAR_WIDTH + 12
    value_w = 8 + CHAR_WIDTH * max(len(r.total_text) for r in rows)
    plot_w = max(120.0, width - label_w - value_w)
    scale = max(r.total for r in rows) or 1
    height = ROW_HEIGHT * len(rows) + 4
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(caption)}">'
    ]
    for i, row in enumerate(rows):
        y = 2 + i * ROW_HEIGHT
        text_y = _num(y + ROW_HEIGHT / 2 + 4)
        label = escape(_clip(row.label, label_chars))
        label_svg = f'<text class="lbl" x="{_num(label_w - 8)}" y="{text_y}" text-anchor="end">{label}<title>{escape(row.label)}</title></text>'
        if row.href:
            label_svg = f'<a href="{escape(row.href)}">{label_svg}</a>'
        out.append(label_svg)
        x = label_w
        bar_y = _num(y + (ROW_HEIGHT - BAR_HEIGHT) / 2)
        out.append(f'<rect class="track" x="{_num(label_w)}" y="{bar_y}" width="{_num(plot_w)}" height="{BAR_HEIGHT}" rx="3"/>')
        for seg in row.segments:
            if not seg.value:
                continue
            w = plot_w * seg.value / scale
            out.append(
                f'<rect class="seg-{seg.css}" x="{_num(x)}" y="{bar_y}" width="{_num(max(w, 1.5))}" height="{BAR_HEIGHT}">'
                f"<title>{escape(row.label)}: {seg.value} {escape(seg.label)}</title></rect>"
            )
            x += w
        out.append(f'<text class="val" x="{_num(x + 6)}" y="{text_y}">{escape(row.total_text)}</text>')
    out.append("</svg>")
    return "".join(out)


def meter(segments: tuple[Segment, ...], width: int = 260, height: int = 10, caption: str = "") -> str:
    """A thin full-width bar split by share (e.g. the effort levels of one target)."""
    total = sum(s.value for s in segments)
    out = [
        f'<svg class="meter" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(caption)}">',
        f'<rect class="track" x="0" y="0" width="{width}" height="{height}" rx="{height // 2}"/>',
    ]
    x = 0.0
    for seg in segments:
        if not seg.value or not total:
            continue
        w = width * seg.value / total
        out.append(
            f'<rect class="seg-{seg.css}" x="{_num(x)}" y="0" width="{_num(w)}" height="{height}">'
            f"<title>{seg.value} {escape(seg.label)}</title></rect>"
        )
        x += w
    out.append("</svg>")
    return "".join(out)
