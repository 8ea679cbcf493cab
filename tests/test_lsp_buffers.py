"""portlint.lsp.buffers: a buffer is scanned from its text with the workspace's settings;
excludes apply; the settings follow an edited config file."""

from __future__ import annotations

import os

import pytest

from portlint.config import ConfigError
from portlint.lsp.buffers import SettingsCache, scan_buffer

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
