"""Human-readable output: `path:line:col: ID severity message`, the source line with a caret
span, the suggested rewrite, and a summary per severity and per target."""

from __future__ import annotations

from portlint import lines as line_model
from portlint.model import TARGETS, Severity

_COLORS = {"error": "\033[31;1m", "warning": "\033[33;1m", "note": "\033[36m", "bold": "\033[1m", "dim": "\033[2m", "reset": "\033[0m"}


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_COLORS[style]}{text}{_COLORS['reset']}" if color else text


def render_text(result, settings, options) -> str:
    color = options.get("color", False)
    show_source = options.get("show_source", True)
    out: list[str] = []
    sources = _SourceCache(settings.root) if show_source else None
    active = [f for f in result.findings if not f.suppressed]
    for f in active:
        sev = f.severity.value
        head = f"{_paint(f'{f.path}:{f.span.start_line}:{f.span.start_col}:', 'bold', color)} {_paint(f.rule_id, 'bold', color)} {_paint(sev, sev, color)} {f.message}"
        out.append(head)
        targets = ", ".join(f"{t} {s.value}" for t, s in f.targets.items())
        out.append(_paint(f"  targets: {targets}; confidence: {f.confidence}", "dim", color))
        if sources is not None:
            text = sources.line(f.path, f.span.start_line)
            if text is not None:
                expanded = text.expandtabs(4)
                prefix = text[: f.span.start_col - 1].expandtabs(4)
                end = f.span.end_col if f.span.end_line == f.span.start_line else len(text) + 1
                width = max(1, len(text[: end - 1].expandtabs(4)) - len(prefix))
                out.append(f"  {f.span.start_line:>5} | {expanded}")
                out.append(f"        | {' ' * len(prefix)}{_paint('^' * width, sev, color)}")
        if f.fix is not None:
            out.append(f"  fix ({f.fix.applicability}): {f.fix.description}")
        if f.suggestion:
            lines = f.suggestion.rstrip().splitlines()
            out.append("  suggestion: " + lines[0])
            out.extend("    " + ln for ln in lines[1:])
        out.append("")
    for n in result.notices:
        out.append(f"{n.path}: {n.level}: {n.message}")
    if result.notices:
        out.append("")
    out.extend(summary_lines(result, active, color))
    return "\n".join(out) + "\n"


def summary_lines(result, active, color: bool) -> list[str]:
    files = result.files_scanned
    if not active:
        line = f"No portability problems found in {files} file{'s' if files != 1 else ''}."
    else:
        by_sev = {s: 0 for s in ("error", "warning", "note")}
        for f in active:
            by_sev[f.severity.value] += 1
        parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in by_sev.items() if n]
        line = f"Found {len(active)} problem{'s' if len(active) != 1 else ''} in {files} file{'s' if files != 1 else ''}: {', '.join(parts)}."
    lines = [_paint(line, "bold", color)]
    if active:
        per_target = []
        for t in TARGETS:
            hits = [f for f in active if t in f.targets]
            if hits:
                errors = sum(1 for f in hits if f.targets[t] is Severity.ERROR)
                per_target.append(f"{t} {len(hits)} ({errors} error{'s' if errors != 1 else ''})")
        lines.append("By target: " + ", ".join(per_target) + ".")
    suppressed = len(result.findings) - len(active)
    if suppressed:
        lines.append(f"{suppressed} finding{'s' if suppressed != 1 else ''} suppressed (inline comments or guarded branches already ported).")
    mech = result.counters.get("mechanical-ports", 0)
    if mech:
        lines.append(f"{mech} CUDA API use{'s' if mech != 1 else ''} port mechanically (hipify renames; see them with --select hipify).")
    fixable = sum(1 for f in active if f.fix is not None and f.fix.applicability == "safe")
    if fixable:
        lines.append(f"{fixable} finding{'s' if fixable != 1 else ''} with a safe fix (apply with --fix).")
    return lines


class _SourceCache:
    """Reads each reported file once, for the source excerpt (display only)."""

    def __init__(self, root):
        self.root = root
        self._files: dict[str, list[str] | None] = {}

    def line(self, path: str, line: int) -> str | None:
        if path not in self._files:
            from pathlib import Path

            p = Path(path)
            if not p.is_absolute():
                p = self.root / p
            try:
                self._files[path] = line_model.split_lines(line_model.decode(p.read_bytes()))
            except OSError:
                self._files[path] = None
        lines = self._files[path]
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1]
