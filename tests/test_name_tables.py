"""The NVIDIA-only name tables (rules/<family>/names*.toml) and their one matcher."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import scan_paths

from portlint.frontends.cuda import name_tables
from portlint.core.catalog import RuleError


def test_every_row_names_its_source_and_version():
    rows = name_tables.load_tables()
    assert len(rows) > 40
    for row in rows:
        assert row.source and row.since, row
        assert "{" not in row.advise("x"), row.advice


def test_every_table_name_passes_its_detectors_prefilter():
    """A detector runs only on files holding one of its tokens: a table name the tokens miss
    would never be reported."""
    from portlint.frontends.cuda.symbols import _split_alternatives
    from portlint.core.registry import detectors_for

    for row in name_tables.load_tables():
        (det,) = detectors_for({row.rule})
        tokens = [t.decode() if isinstance(t, bytes) else t for t in det.tokens or ()]
        for name in row.names:
            assert any(t in name for t in tokens), (row.rule, name)
        if row.pattern is not None:
            # each alternative of the pattern holds a token literally (so every match does)
            for alt in _split_alternatives(row.pattern.pattern):
                for literal in _expand(alt.replace("\\b", "")):
                    assert any(t in literal.replace("\\", "") for t in tokens), (row.rule, alt, literal)


_GROUP = re.compile(r"\(\?:([\w|]+)\)")


def _expand(alt: str) -> list[str]:
    """The alternative with each group of plain words `(?:a|b)` spelt out both ways."""
    m = _GROUP.search(alt)
    if m is None:
        return [alt]
    return [x for word in m.group(1).split("|") for x in _expand(alt[: m.start()] + word + alt[m.end() :])]


def _bad_table(tmp_path, monkeypatch, row: str):
    copy = tmp_path / "rules"
    shutil.copytree(name_tables.rules_root(), copy)
    path = copy / "cuda_hopper" / "names.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + row, encoding="utf-8")
    monkeypatch.setattr(name_tables, "rules_root", lambda: copy)
    name_tables._load.cache_clear()
    try:
        with pytest.raises(RuleError) as err:
            name_tables.load_tables()
    finally:
        name_tables._load.cache_clear()
    return str(err.value)


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ('[[name]]\nrule = "PTL401"\nnames = ["x_y"]\nadvice = "a"\nsince = "1"\nsource = "s"\n', "not a rule of the cuda_hopper family"),
        ('[[name]]\nrule = "PTL301"\nnames = ["x_y"]\nadvice = "a"\nsource = "s"\n', "source and since are required"),
        ('[[name]]\nrule = "PTL301"\nnames = ["x_y"]\npattern = "x"\nadvice = "a"\nsince = "1"\nsource = "s"\n', "either names or pattern"),
        ('[[name]]\nrule = "PTL301"\nnames = ["x y"]\nadvice = "a"\nsince = "1"\nsource = "s"\n', "not identifiers"),
        ('[[name]]\nrule = "PTL301"\nnames = ["x_y"]\nadvice = "{nope}"\nsince = "1"\nsource = "s"\n', "does not define"),
    ],
)
def test_a_malformed_row_is_refused(tmp_path, monkeypatch, row, error):
    assert error in _bad_table(tmp_path, monkeypatch, row)


def test_qualified_names_match_inside_a_longer_chain(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(
        "#include <cute/tensor.hpp>\n"
        "__device__ void f() {\n"
        "  cute::cluster_sync();\n"  # a qualified table name
        "  nvcuda::wmma::fragment<int, 16, 16, 16, int> frag;\n"  # a qualified prefix of the chain
        "}\n",
        encoding="utf-8",
    )
    result = scan_paths([src], root=tmp_path, select=("PTL304", "PTL403"))
    assert sorted((f.span.start_line, f.rule_id, f.span.start_col) for f in result.findings) == [(3, "PTL304", 3), (4, "PTL403", 3)]
