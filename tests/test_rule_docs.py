"""Rule documentation links: docs/rules/PTLnnn.md is generated from rules/ and current; the
link (default or the `docs-url` config key, validated as data) reaches SARIF helpUri and
the text report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO, run_portlint
from sarif_checks import validate

from portlint.core.rule_links import rule_url, validate_docs_url
from portlint.core.catalog import load_rules

KERNEL = "__global__ void k(float* out) { out[threadIdx.x % 32] = 1.0f; }\n"


def test_rule_pages_are_up_to_date():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "generate_rule_docs.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_every_rule_has_a_page_holding_its_documentation():
    folder = REPO / "docs" / "rules"
    index = (folder / "README.md").read_text(encoding="utf-8")
    for rid, rule in load_rules().items():
        page = (folder / f"{rid}.md").read_text(encoding="utf-8")
        assert rule.markdown_doc() in page, rid
        assert f"[{rid}]({rid}.md)" in index, rid


def test_default_link_is_the_repository_relative_page_and_the_page_exists():
    url = rule_url("PTL101")
    assert url == "docs/rules/PTL101.md"
    assert (REPO / url).is_file()


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("https://docs.example.org/portlint/core/catalog/", "https://docs.example.org/portlint/core/catalog/PTL101.md"),
        ("https://docs.example.org/portlint/core/catalog", "https://docs.example.org/portlint/core/catalog/PTL101.md"),
        ("https://docs.example.org/r/{id}.html", "https://docs.example.org/r/PTL101.html"),
        ("../portlint/docs/rules/{id}.md", "../portlint/docs/rules/PTL101.md"),
    ],
)
def test_templates_and_bases(template, expected):
    assert validate_docs_url(template) is None
    assert rule_url("PTL101", template) == expected


@pytest.mark.parametrize(
    "value",
    ["javascript:alert(1)", "http://docs.example.org/", "file:///etc/passwd", "https:///no-host", "//evil.example/x",
     "https://x.example/{name}", "https://x.example/\x1b[31m", "https://x.example/a b", "", "data:text/html,hi"],
)
def test_unsafe_or_malformed_docs_urls_are_refused(value):
    assert validate_docs_url(value) is not None


def test_docs_url_from_config_reaches_sarif_help_uri_and_text(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "portlint.toml").write_text('docs-url = "https://docs.example.org/portlint/core/catalog/{id}"\n')
    proc = run_portlint("scan", "k.cu", "--no-cache", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert validate(log) == []
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules and all(r["helpUri"] == f"https://docs.example.org/portlint/core/catalog/{r['id']}" for r in rules)
    text = run_portlint("scan", "k.cu", "--no-cache", cwd=tmp_path).stdout
    assert "docs: https://docs.example.org/portlint/core/catalog/PTL102" in text


def test_default_link_in_text_and_sarif(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL)
    text = run_portlint("scan", "k.cu", "--no-cache", "--isolated", cwd=tmp_path).stdout
    finding_lines = [ln for ln in text.splitlines() if ln.startswith("  targets:")]
    # no docs-url: the command that prints the page from the installed wheel, which works in
    # any tree (a relative docs/rules/PTLnnn.md exists only in portlint's own repository)
    assert finding_lines and all("; docs: `portlint rule PTL" in ln for ln in finding_lines)
    rule = finding_lines[0].split("`portlint rule ")[1].split("`")[0]
    page = run_portlint("rule", rule, cwd=tmp_path)
    assert page.returncode == 0 and page.stdout.startswith(f"# {rule}"), page.stdout[:200]
    log = json.loads(run_portlint("scan", "k.cu", "--no-cache", "--isolated", "--format", "sarif", cwd=tmp_path).stdout)
    # no documentation URL is configured or in portlint's metadata: helpUri is left out rather
    # than a relative docs/rules/PTLnnn.md that resolves nowhere a SARIF viewer looks
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules and all("helpUri" not in r for r in rules)
    assert all(r["help"]["markdown"].startswith(f"# {r['id']}") for r in rules)


def test_a_relative_docs_url_never_reaches_sarif(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "portlint.toml").write_text('docs-url = "../portlint/docs/rules/{id}.md"\n')
    log = json.loads(run_portlint("scan", "k.cu", "--no-cache", "--format", "sarif", cwd=tmp_path).stdout)
    assert validate(log) == []
    assert all("helpUri" not in r for r in log["runs"][0]["tool"]["driver"]["rules"])


def test_a_bad_docs_url_in_config_is_a_one_line_usage_error(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "portlint.toml").write_text('docs-url = "javascript:alert(1)"\n')
    proc = run_portlint("scan", "k.cu", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2
    assert "docs-url must be an https:// URL" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_text_docs_pointer_is_the_absolute_page_when_portlint_declares_a_documentation_url(tmp_path, monkeypatch):
    """With no docs-url configured, a Documentation URL in portlint's metadata gives the text
    output an absolute link to the page; without one it names `portlint rule PTLnnn`; never the
    relative docs/rules/PTLnnn.md, which resolves nowhere in the scanned repository."""
    from conftest import scan_paths

    from portlint.core import rule_links
    from portlint.core.config import Settings
    from portlint.output.formats.text import render_text

    (tmp_path / "k.cu").write_text(KERNEL)
    settings = Settings(root=tmp_path)
    result = scan_paths([tmp_path / "k.cu"], root=tmp_path)
    rules = sorted({f.rule_id for f in result.findings})
    assert rules

    def pointers() -> list[str]:
        text = render_text(result, settings, {"color": False, "show_source": False})
        return [ln.split("; docs: ", 1)[1] for ln in text.splitlines() if ln.startswith("  targets:")]

    monkeypatch.setattr(rule_links, "documentation_url", lambda: "https://portlint.example.org/docs/rules/{id}.md")
    assert sorted(set(pointers())) == [f"https://portlint.example.org/docs/rules/{r}.md" for r in rules]
    monkeypatch.setattr(rule_links, "documentation_url", lambda: None)
    assert sorted(set(pointers())) == [f"`portlint rule {r}`" for r in rules]
    assert not any("docs/rules/" in p for p in pointers())
