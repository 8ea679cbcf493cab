"""Property suite for the inputs a pull request controls (issue 26): SARIF shards,
baselines, configuration, .gitignore patterns, build files, file names, diff inputs.

Runs in CI with the rest of tests/ (.ci/run). Every property has a fixed seed (the same
examples on every run, so a failure reproduces) and a budget: a bounded number of examples
and a per-example deadline far above a linear-time answer (an exponential one blows it).
Speed itself is measured in bench/, not here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SEED = 26
FAST = settings(max_examples=150, deadline=10000, derandomize=True, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=60000, derandomize=True, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
names = st.text(st.characters(blacklist_characters="/\x00"), min_size=1, max_size=60).filter(lambda n: n not in (".", ".."))


class Bad(Exception):
    pass


# --- the one reader ---------------------------------------------------------------------

@seed(SEED)
@FAST
@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode) | st.builds(lambda v: json.dumps(v).encode(), json_values))
def test_reader_returns_bounded_json_or_its_error(tmp_path, data):
    from portlint.core.jsonfile import MAX_DEPTH, depth_of, read_json

    path = tmp_path / "doc.json"
    path.write_bytes(data)
    try:
        doc = read_json(path, Bad)
    except Bad as exc:
        assert "\n" not in str(exc)
        return
    assert depth_of(doc) <= MAX_DEPTH


@seed(SEED)
@FAST
@given(st.integers(1, 3000), st.sampled_from(["[", "{\"a\":"]))
def test_reader_refuses_deep_nesting_without_a_crash(tmp_path, depth, opener):
    from portlint.core.jsonfile import MAX_DEPTH, read_json

    closer = "]" if opener == "[" else "}"
    (tmp_path / "d.json").write_text(opener * depth + "1" + closer * depth)
    if depth <= MAX_DEPTH:
        read_json(tmp_path / "d.json", Bad)
    else:
        with pytest.raises(Bad):
            read_json(tmp_path / "d.json", Bad)


# --- baselines --------------------------------------------------------------------------

def _mutations(doc):
    """Strategy: `doc` with one value somewhere replaced by an arbitrary JSON value."""
    def paths(value, prefix=()):
        yield prefix
        if isinstance(value, dict):
            for k, v in value.items():
                yield from paths(v, prefix + (k,))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from paths(v, prefix + (i,))

    every = list(paths(doc))

    def apply(where, value):
        copy = json.loads(json.dumps(doc))
        if not where:
            return value
        target = copy
        for key in where[:-1]:
            target = target[key]
        target[where[-1]] = value
        return copy

    return st.builds(apply, st.sampled_from(every), json_values)


BASELINE = {"schema": "portlint-report", "findings": [
    {"path": "k.cu", "rule_id": "PTL201", "suppressed": False,
     "fingerprints": {"portlint/v1": "abc:1", "primaryLocationLineHash": "def:1"}}]}


@seed(SEED)
@FAST
@given(_mutations(BASELINE))
def test_baseline_loads_or_is_a_usage_error(tmp_path, doc):
    from portlint.findings.baseline import BaselineError, load_baseline

    (tmp_path / "b.json").write_text(json.dumps(doc))
    try:
        entries = load_baseline(tmp_path / "b.json")
    except BaselineError as exc:
        assert "b.json" in str(exc)
        return
    assert all(isinstance(path, str) and isinstance(fp, str) for path, fp in entries.counts)


# --- SARIF shards -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    from conftest import run_portlint

    root = tmp_path_factory.mktemp("shard")
    (root / "k.cu").write_text('__global__ void k(float* x) {\n  asm volatile("membar.gl;");\n}\n')
    assert run_portlint("scan", ".", "--format", "sarif", "-o", "a.sarif", "--exit-zero", "--no-cache", cwd=root).returncode == 0
    return json.loads((root / "a.sarif").read_text())


@seed(SEED)
@FAST
@given(data=st.data())
def test_merge_sarif_merges_or_is_a_usage_error(tmp_path, shard, data):
    from portlint.output.merge_sarif import MergeError, merge_files

    doc = data.draw(_mutations(shard))
    (tmp_path / "m.sarif").write_text(json.dumps(doc))
    try:
        text = merge_files([tmp_path / "m.sarif"])
    except MergeError as exc:
        assert "m.sarif" in str(exc) and "\n" not in str(exc)
        return
    merged = json.loads(text)
    assert len(merged["runs"]) == 1 and isinstance(merged["runs"][0]["results"], list)


# --- configuration ----------------------------------------------------------------------

toml_values = st.recursive(
    st.booleans().map(lambda b: "true" if b else "false") | st.integers(-10**6, 10**6).map(str)
    | st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12).map(json.dumps),
    lambda inner: st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
    max_leaves=8,
)
config_keys = st.sampled_from(["select", "ignore", "targets", "exclude", "fail-on", "max-file-size", "respect-gitignore",
                               "include-dirs", "amd-macros", "docs-url", "per-file-ignores", "unknown-key"])


@seed(SEED)
@FAST
@given(st.lists(st.tuples(config_keys, toml_values), max_size=5, unique_by=lambda kv: kv[0]))
def test_config_loads_or_is_a_usage_error_and_stays_in_the_tree(tmp_path, pairs):
    from portlint.core.config import ConfigError, Settings, load_config

    (tmp_path / "portlint.toml").write_text("".join(f"{k} = {v}\n" for k, v in pairs))
    try:
        s = load_config(tmp_path / "portlint.toml", Settings())
    except ConfigError as exc:
        assert "\n" not in str(exc).strip()
        return
    real = os.path.realpath(tmp_path)
    for d in s.include_dirs:
        assert os.path.realpath(os.path.join(real, d)).startswith(real)


# --- .gitignore patterns ----------------------------------------------------------------

@seed(SEED)
@FAST
@given(st.lists(st.text(st.sampled_from("*?a/b[]!\\#"), max_size=60), max_size=6),
       st.text(st.sampled_from("ab/."), min_size=1, max_size=250))
def test_kept_gitignore_patterns_match_within_the_deadline(patterns, name):
    from portlint.discovery.gitignore import IgnoreFile, bounded_patterns, linear_spec

    notices: list = []
    kept = bounded_patterns(patterns, ".gitignore", notices)
    try:
        spec = linear_spec(kept)  # the matcher discovery uses
    except Exception:  # an invalid pattern: discovery turns this into a notice
        return
    spec.match_file(name.strip("/") or "a")  # the deadline is the assertion
    git_kept = bounded_patterns(patterns, ".gitignore", notices, runs=True)
    names = [n.encode() for n in (name.strip("/") or "a").split("/") if n] or [b"a"]
    IgnoreFile.from_lines([ln.encode() for ln in git_kept]).verdict(names, False)  # .gitignore files' matcher


# --- build files ------------------------------------------------------------------------

cmake_commands = st.recursive(
    st.sampled_from(["project(x LANGUAGES CUDA)\n", "enable_language(HIP)\n", "message(STATUS hi)\n",
                     'set(CMAKE_CUDA_ARCHITECTURES "90")\n', "add_library(k k.cu)\n"]),
    lambda inner: st.tuples(st.sampled_from(["A", "USE_ROCM", "HIP_FOUND", 'GPU_LANG STREQUAL "CUDA"']), st.lists(inner, max_size=3))
    .map(lambda t: f"if({t[0]})\n" + "".join(t[1]) + "endif()\n"),
    max_leaves=30,
)


@seed(SEED)
@SLOW
@given(st.lists(cmake_commands, max_size=6).map("".join), st.integers(0, 600))
def test_cmake_files_never_lose_the_file(tmp_path, body, depth):
    from portlint.core.config import Settings
    from portlint.discovery.files import SourceFile
    from portlint.pipeline.engine import scan_source

    text = "if(A)\n" * depth + body + "endif()\n" * depth
    path = tmp_path / "CMakeLists.txt"
    settings = Settings(root=tmp_path, jobs=1, cache_dir=None)
    result = scan_source(SourceFile(path, "CMakeLists.txt", str(tmp_path)), text.encode(), settings)
    assert not [f for f in result.findings if f.rule_id == "PTL003"]


# --- file names: the writer and the escaper ---------------------------------------------

@seed(SEED)
@FAST
@given(names)
def test_writer_writes_exactly_the_named_file_or_refuses(tmp_path, name):
    from portlint.core.files import write_file

    folder = tmp_path / "w"
    folder.mkdir(exist_ok=True)
    for p in folder.iterdir():
        p.unlink()
    try:
        write_file(folder / name, b"data", root=folder)
    except (OSError, ValueError):
        assert sorted(os.listdir(folder)) == []
        return
    assert os.listdir(folder) == [name] and (folder / name).read_bytes() == b"data"
    assert sorted(os.listdir(tmp_path)) == ["w"]


@seed(SEED)
@FAST
@given(st.text(max_size=80))
def test_escaper_leaves_no_control_and_code_spans_hold(text):
    from portlint.output.escape import _CONTROLS, code_span, controls, diff_line, split_code_spans

    assert not _CONTROLS.search(controls(text))
    span = code_span(text)
    assert split_code_spans(span) == [(True, span)] and not _CONTROLS.search(span)
    line = diff_line(text + "\n")
    body = line[:-2] if line.endswith("\r\n") else line[:-1]  # a CRLF line keeps its ending
    assert line.endswith("\n") and not _CONTROLS.search(body)


# --- diff inputs ------------------------------------------------------------------------

@seed(SEED)
@FAST
@given(st.lists(st.sampled_from(["{", "}", "a", "b", "x = 1", ""]), max_size=80),
       st.lists(st.sampled_from(["{", "}", "a", "new", "x = 2", ""]), max_size=80))
def test_changed_lines_mark_every_line_the_base_never_had(old, new):
    from portlint.findings.changed_lines import _changed_against

    changed = _changed_against("".join(ln + "\n" for ln in old).encode(), "".join(ln + "\n" for ln in new).encode())
    assert all(1 <= n <= max(len(new), 1) for n in changed)
    for i, line in enumerate(new, start=1):
        if line not in old:
            assert i in changed


@seed(SEED)
@FAST
@given(st.lists(names, min_size=1, max_size=5))
def test_cat_file_answers_for_any_names(asked):
    from portlint.findings.changed_lines import _parse_batch

    out = b"".join(f"HEAD:{n} missing\n".encode("utf-8", "surrogateescape") for n in asked if "\n" not in n)
    count = sum(1 for n in asked if "\n" not in n)
    assert _parse_batch(out, count) == [None] * count
