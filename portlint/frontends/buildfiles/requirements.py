"""Python dependencies as (requirement text, where it is) records, from requirements files,
pyproject.toml, setup.cfg, setup.py (read with `ast`, never run) and `pip install` lines.

A requirement is reduced to the forms the dependency table matches: the normalised name,
`name[extra]` for each extra, and `name+local` when its pin has a local version
(`torch==2.4.0+cu121`)."""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass

from portlint.core.model import Span

_REQ = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<rest>[^;]*)")
_LOCAL = re.compile(r"===?\s*[\w.!*]+\+(?P<local>[A-Za-z0-9.]+)")
# a wheel index that serves CUDA builds of torch: https://download.pytorch.org/whl/cu121
CUDA_INDEX = re.compile(r"/whl/(?:nightly/)?cu\d+\b")


@dataclass(frozen=True)
class Requirement:
    text: str
    span: Span


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def forms(text: str) -> tuple[str, ...]:
    """The forms of one requirement string the table's patterns are tried on; () if it is
    not a requirement (an option, a path, a URL)."""
    m = _REQ.match(text)
    if m is None or "://" in text.split(";")[0] or text.lstrip().startswith(("-", ".", "/")):
        return ()
    name = normalise(m.group("name"))
    out = [name]
    for extra in (m.group("extras") or "").split(","):
        if extra.strip():
            out.append(f"{name}[{normalise(extra.strip())}]")
    local = _LOCAL.search(m.group("rest") or "")
    if local:
        out.append(f"{name}+{local.group('local').lower()}")
    return tuple(out)


def _span(line: int, start: int, text: str) -> Span:
    return Span(line, start + 1, line, start + 1 + len(text))


def from_requirements_file(lines: list[str]) -> tuple[list[Requirement], list[Requirement]]:
    """(requirements, CUDA wheel index options) of a requirements file."""
    reqs, indexes = [], []
    for number, line in enumerate(lines, start=1):
        body = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].rstrip()
        stripped = body.strip()
        if not stripped:
            continue
        start = line.find(stripped)
        if stripped.startswith("-"):
            if CUDA_INDEX.search(stripped):
                indexes.append(Requirement(stripped, _span(number, start, stripped)))
            continue
        reqs.append(Requirement(stripped, _span(number, start, stripped)))
    return reqs, indexes


def _locate(lines: list[str], text: str, after: int) -> tuple[int, int] | None:
    """(0-based line, column) of the quoted string `text` at or after line `after`."""
    for quote in ('"', "'"):
        needle = quote + text + quote
        for i in range(after, len(lines)):
            col = lines[i].find(needle)
            if col >= 0:
                return i, col + 1
    return None


def from_pyproject(data: bytes, lines: list[str], on_error=None) -> list[Requirement]:
    """project.dependencies, project.optional-dependencies, build-system.requires and
    dependency-groups (PEP 735). A file that is not TOML holds none, and `on_error` (when
    given) is told why, so it is not skipped without a word."""
    try:
        doc = tomllib.loads(data.decode("utf-8", "replace"))
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        if on_error is not None:
            on_error(f"not valid TOML, its dependencies were not checked: {str(exc)[:200]}")
        return []
    strings: list[str] = []
    project = doc.get("project", {}) if isinstance(doc.get("project"), dict) else {}
    for value in (project.get("dependencies"), doc.get("build-system", {}).get("requires") if isinstance(doc.get("build-system"), dict) else None):
        if isinstance(value, list):
            strings.extend(v for v in value if isinstance(v, str))
    for table in (project.get("optional-dependencies"), doc.get("dependency-groups")):
        if isinstance(table, dict):
            for group in table.values():
                if isinstance(group, list):
                    strings.extend(v for v in group if isinstance(v, str))
    out, used = [], set()
    for s in strings:
        pos, found = 0, None
        while pos < len(lines):
            found = _locate(lines, s, pos)
            if found is None or found not in used:
                break
            pos, found = found[0] + 1, None
        if found is None:
            continue
        used.add(found)
        out.append(Requirement(s, _span(found[0] + 1, found[1], s)))
    return out


_CFG_KEYS = re.compile(r"^(install_requires|setup_requires|tests_require)\s*=\s*(.*)$")


def from_setup_cfg(lines: list[str]) -> list[Requirement]:
    """install_requires / setup_requires and every [options.extras_require] entry."""
    out = []
    section, in_list = "", False
    for number, line in enumerate(lines, start=1):
        line = re.split(r"\s[#;]", line, maxsplit=1)[0].rstrip()
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section, in_list = stripped[1:-1].strip(), False
            continue
        if not stripped or stripped.startswith(("#", ";")):
            continue
        indented = line[:1].isspace()
        if not indented:
            in_list = False
            if section == "options":
                m = _CFG_KEYS.match(stripped)
                if m:
                    in_list = True
                    rest = m.group(2).strip()
                    if rest:
                        out.append(Requirement(rest, _span(number, line.find(rest), rest)))
            elif section == "options.extras_require" and "=" in stripped:
                in_list = True
                rest = stripped.split("=", 1)[1].strip()
                if rest:
                    out.append(Requirement(rest, _span(number, line.find(rest), rest)))
            continue
        if in_list:
            out.append(Requirement(stripped, _span(number, line.find(stripped), stripped)))
    return out


_SETUP_KEYWORDS = {"install_requires", "setup_requires", "extras_require", "tests_require"}


def from_setup_py(module: ast.Module) -> list[tuple[str, ast.Constant]]:
    """String constants given to setup()'s requirement keywords (lists, tuples, dict values)."""
    out = []
    for node in ast.walk(module):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg not in _SETUP_KEYWORDS:
                continue
            values = kw.value.values if isinstance(kw.value, ast.Dict) else [kw.value]
            for v in values:
                elts = v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]
                out.extend((e.value, e) for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return out


def pip_install_arguments(command: str) -> list[tuple[str, int]]:
    """(argument, offset) of each requirement in `pip install ...` commands of a shell line,
    and of `--extra-index-url`/`--index-url` values (returned as the option=value text)."""
    out = []
    for m in re.finditer(r"\bpip3?\s+install\b", command):
        rest_start = m.end()
        end = len(command)
        for stop in ("&&", "||", ";", "|"):
            k = command.find(stop, rest_start)
            if k != -1:
                end = min(end, k)
        words = [(w.group(), w.start() + rest_start) for w in re.finditer(r"\S+", command[rest_start:end])]
        skip_next = False
        for i, (word, at) in enumerate(words):
            if skip_next:
                skip_next = False
                continue
            bare = word.strip("\"'")
            if bare in ("--extra-index-url", "--index-url", "-i", "-f", "--find-links"):
                if i + 1 < len(words):
                    out.append((f"{bare} {words[i + 1][0].strip(chr(34) + chr(39))}", at))
                skip_next = True
                continue
            if bare.startswith(("--extra-index-url=", "--index-url=")):
                out.append((bare, at))
                continue
            if bare in ("-r", "-c", "-e", "--requirement", "--constraint", "--target", "-t", "--prefix", "--root"):
                skip_next = True
                continue
            if bare.startswith("-"):
                continue
            out.append((bare, at + (1 if word[0] in "\"'" else 0)))
    return out
