"""Where each rule's documentation lives: one page per rule, `docs/rules/PTLnnn.md`,
generated from rules/ by scripts/generate_rule_docs.py.

The link shown in text output and written as SARIF `helpUri` comes from a URL template:
by default the repository-relative path of the page; the `docs-url` config key replaces it
with where a team publishes the pages. A config file is data from the scanned tree, so the
value is checked before it reaches a report: an `https://` URL with a host, or a relative
path, nothing else (no `javascript:`, `file:`, `http:`, control characters or spaces)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

RULE_DOCS_DIR = "docs/rules"
DEFAULT_DOCS_URL = RULE_DOCS_DIR + "/{id}.md"
_ALLOWED = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%{}]+")


def page_name(rule_id: str) -> str:
    """The file name of a rule's page under docs/rules/."""
    return f"{rule_id}.md"


def validate_docs_url(value: str) -> str | None:
    """Why `value` is not an acceptable docs-url (None when it is)."""
    if not value or not _ALLOWED.fullmatch(value):
        return "must be an https:// URL or a relative path, without spaces or control characters"
    if value.count("{") != value.count("}") or ("{" in value and "{id}" not in value) or value.replace("{id}", "").count("{"):
        return "may hold only the placeholder {id}"
    parts = urlsplit(value.replace("{id}", "PTL000"))
    if parts.scheme:
        if parts.scheme.lower() != "https" or not parts.netloc:
            return f"must be an https:// URL with a host or a relative path, not a {parts.scheme}: URL"
    elif value.startswith("//"):
        return "must be an https:// URL or a relative path, not a scheme-relative //host URL"
    return None


def rule_url(rule_id: str, template: str | None = None) -> str:
    """The documentation link of `rule_id`. A template with `{id}` is filled in; one without
    is a base (a folder URL) to which the page name is added."""
    template = template or DEFAULT_DOCS_URL
    if "{id}" in template:
        return template.replace("{id}", rule_id)
    return template.rstrip("/") + "/" + page_name(rule_id)


def is_absolute(url: str) -> bool:
    return urlsplit(url).scheme.lower() == "https"


@lru_cache(maxsize=1)
def documentation_url() -> str | None:
    """The `Documentation` entry of portlint's own `[project.urls]` (its installed metadata),
    as a base for the rule pages, or None when the package declares none."""
    from importlib import metadata

    try:
        entries = metadata.metadata("portlint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        url = url.strip()
        if label.strip().lower() in ("documentation", "docs") and validate_docs_url(url) is None and is_absolute(url):
            return url.rstrip("/") + "/rules/{id}.md" if "{id}" not in url else url
    return None


def absolute_rule_url(rule_id: str, template: str | None = None) -> str | None:
    """A link a reader outside the repository can open: the `docs-url` template when it is an
    https:// URL, else the Documentation URL of portlint's metadata; None when neither is
    (SARIF `helpUri` is then left out rather than a relative path that resolves nowhere)."""
    for candidate in (template, documentation_url()):
        if candidate and is_absolute(candidate):
            return rule_url(rule_id, candidate)
    return None


def shipped_docs_dir() -> Path | None:
    """The rule pages and JSON schemas shipped with portlint: the wheel's `portlint/_docs`
    (pyproject package-data), or docs/ in a source checkout."""
    here = Path(__file__).resolve().parent.parent
    for folder in (here / "_docs", here.parent / "docs"):
        if (folder / "rules").is_dir():
            return folder
    return None


def shipped_rule_page(rule_id: str) -> Path | None:
    """The installed page of `rule_id`, when it is there."""
    folder = shipped_docs_dir()
    page = folder / "rules" / page_name(rule_id) if folder else None
    return page if page is not None and page.is_file() else None


def editor_rule_url(rule_id: str, template: str | None = None) -> str | None:
    """The link an editor opens (LSP codeDescription.href, which must be a URI): the absolute
    URL, else the shipped page as a file: URI."""
    url = absolute_rule_url(rule_id, template)
    if url:
        return url
    page = shipped_rule_page(rule_id)
    return page.as_uri() if page else None
