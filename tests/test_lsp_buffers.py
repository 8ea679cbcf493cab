"""portlint.server.buffers: a buffer is scanned from its text with the workspace's settings;
excludes apply; the settings follow an edited config file."""

from __future__ import annotations

import os

import pytest

from portlint.core.config import ConfigError
from portlint.server.buffers import SettingsCache, scan_buffer

KERNEL = "__global__ void k(float* out) {\n  int lane = threadIdx.x % 32;\n  out[lane] = 1.0f;\n}\n"


def ids(result):
    return sorted(f.rule_id for f in result.findings)


def test_the_text_is_scanned_not_the_file(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text("__global__ void k(float* out) { out[threadIdx.x] = 1.0f; }\n")
    settings = SettingsCache().for_document(path, [tmp_path])
    assert "PTL102" in ids(scan_buffer(path, KERNEL, settings))
    assert ids(scan_buffer(path, path.read_text(), settings)) == []


def test_configured_and_default_excludes_apply(tmp_path):
    (tmp_path / "portlint.toml").write_text('exclude = ["third_party/"]\n')
    cache = SettingsCache()
    for rel in ("third_party/k.cu", ".venv/lib/k.cu"):
        path = tmp_path / rel
        assert scan_buffer(path, KERNEL, cache.for_document(path, [tmp_path])).findings == [], rel
    path = tmp_path / "src" / "k.cu"
    assert "PTL102" in ids(scan_buffer(path, KERNEL, cache.for_document(path, [tmp_path])))


def test_an_edited_config_applies_to_the_next_analysis(tmp_path):
    config = tmp_path / "portlint.toml"
    config.write_text("fail-on = \"error\"\n")
    path = tmp_path / "k.cu"
    cache = SettingsCache()
    first = cache.for_document(path, [tmp_path])
    assert cache.for_document(path, [tmp_path]) is first  # unchanged: the same settings
    assert "PTL102" in ids(scan_buffer(path, KERNEL, first))
    config.write_text('ignore = ["PTL102"]\n')
    os.utime(config, ns=(1, 1))  # a different mtime even on a coarse clock
    second = cache.for_document(path, [tmp_path])
    assert second is not first and "PTL102" not in ids(scan_buffer(path, KERNEL, second))
    assert second.cache_dir is None, "the server must not write a cache"
    config.write_text('docs-url = "http://plain.example/"\n')
    os.utime(config, ns=(2, 2))
    with pytest.raises(ConfigError, match="docs-url"):
        cache.for_document(path, [tmp_path])


def test_a_buffer_over_the_size_limit_is_a_notice(tmp_path):
    (tmp_path / "portlint.toml").write_text("max-file-size = 64\n")
    path = tmp_path / "k.cu"
    result = scan_buffer(path, KERNEL, SettingsCache().for_document(path, [tmp_path]))
    assert result.findings == [] and "max-file-size" in result.notices[0].message


HELPERS = "def clip(x, limit):\n    if x > limit:\n        return limit\n    return x\n"
TRAIN = "import jax\n\nfrom pkg.helpers import clip\n\n\n@jax.jit\ndef step(x):\n    return clip(x, 1.0)\n"


def test_the_project_model_is_reused_between_analyses_and_follows_edits_on_disk(tmp_path, monkeypatch):
    """The server writes no cache: the model of unchanged files is kept in memory between
    analyses (built once), and a file changed on disk gives a new one."""
    from portlint.index import project

    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    helpers = tmp_path / "pkg/helpers.py"
    helpers.write_text(HELPERS)
    train = tmp_path / "pkg/train.py"
    train.write_text(TRAIN)
    runs = []
    real_run = project._Builder.run
    monkeypatch.setattr(project._Builder, "run", lambda self: (runs.append(1), real_run(self))[1])
    cache = SettingsCache()
    first = scan_buffer(helpers, HELPERS, cache.for_document(helpers, [tmp_path]))
    assert [(f.rule_id, f.span.start_line) for f in first.findings] == [("PTL801", 2)]
    again = scan_buffer(helpers, HELPERS + "\n", cache.for_document(helpers, [tmp_path]))
    assert [(f.rule_id, f.span.start_line) for f in again.findings] == [("PTL801", 2)]
    assert len(runs) == 1  # the second analysis took the model built by the first
    train.write_text(TRAIN.replace("return clip(x, 1.0)", "return x"))  # nothing reaches clip any more
    assert scan_buffer(helpers, HELPERS, cache.for_document(helpers, [tmp_path])).findings == []
    assert len(runs) == 2
