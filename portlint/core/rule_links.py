"""Where each rule's documentation lives: one page per rule, `docs/rules/PTLnnn.md`,
generated from rules/ by scripts/generate_rule_docs.py.

The link shown in text output and written as SARIF `helpUri` comes from a URL template:
by default the repository-relative path of the page; the `docs-url` config key replaces it
with where a team publishes the pages. A config file is data from the scanned tree, so the
value is checked before it reaches a report: an `https://` URL with a host, or a relative
path, nothing else (no `javascript:`, `file:`, `http:`, control characters or spaces)."""

from __future__ import annotations

import re
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
