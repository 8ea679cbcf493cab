"""The scanned tree is hostile: a committed cache, symlinks and crafted paths must never make
portlint write outside the tree, rewrite a file it did not scan, or report what the files
do not say (docs/threat-model.md)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from conftest import run_portlint

from portlint.core.cache import Cache, write_entry
from portlint.core.config import Settings

# PTL102 has a safe fix (`% 32` -> `% warpSize`)
KERNEL = b"__global__ void k(int* out) {\n  int lane = threadIdx.x % 32;\n  out[lane] = 1;\n}\n"
CLEAN = b"__global__ void k(int* out) {\n  out[threadIdx.x] = 1;\n}\n"
VICTIM = b"// a file outside the checkout\nint keep = 1;\n"


def checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout `repo/` (with its own config, so it is the project root) and a folder
    beside it that nothing may touch."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "portlint.toml").write_text("")
    (outside / "victim.cu").write_bytes(VICTIM)
    return repo, outside


def forged_body(path: str, edit: list) -> bytes:
    finding = {
        "rule_id": "PTL102", "path": path, "span": edit[:4], "message": "forged", "severity": "error",
        "targets": {"rocm": "error"}, "confidence": "high", "suggestion": None, "suppressed": None,
        "suppression_kind": "", "snippet": "", "line_hash": "", "wide_lines": {},
        "fix": {"description": "forged", "applicability": "safe", "edits": [edit]},
    }
    return json.dumps({"findings": [finding], "notices": [], "counters": {}}).encode()


def key_for(repo: Path, name: str) -> tuple[Cache, str]:
    """The cache key the command line will look `name` up under: every input is public."""
    settings = Settings(root=repo.resolve())
    cache = Cache(repo.resolve() / ".portlint_cache", settings)
    real = repo.resolve() / name
    return cache, cache.key(name, real.read_bytes(), real)


def plant_public_entry(repo: Path, name: str, body: bytes) -> None:
    """What an attacker can commit: an entry whose check line is sha256(key + body)."""
    cache, key = key_for(repo, name)
    path = cache._path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(hashlib.sha256(key.encode() + b"\0" + body).hexdigest().encode() + b"\n" + body)


def plant_signed_entry(repo: Path, name: str, body: bytes) -> None:
    """An entry that passes this version's own check (as if the attacker had the key):
    what is left to stop it is re-binding and edit validation."""
    cache, key = key_for(repo, name)
    write_entry(cache.dir, key, body)


# ---- the cache --------------------------------------------------------------------------

def test_forged_cache_entry_cannot_redirect_fix_outside_the_tree(tmp_path):
    repo, outside = checkout(tmp_path)
    (repo / "a.cu").write_bytes(KERNEL)
    plant_public_entry(repo, "a.cu", forged_body("../outside/victim.cu", [2, 1, 2, 1, "system(\"id\");\n", ""]))
    proc = run_portlint("scan", ".", "--fix", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    assert (outside / "victim.cu").read_bytes() == VICTIM
    assert b"warpSize" in (repo / "a.cu").read_bytes()  # the real finding was found and fixed


def test_signed_entry_is_still_bound_to_the_file_scanned(tmp_path):
    repo, outside = checkout(tmp_path)
    (repo / "a.cu").write_bytes(CLEAN)
    plant_signed_entry(repo, "a.cu", forged_body("../outside/victim.cu", [2, 1, 2, 1, "system(\"id\");\n", "x"]))
    proc = run_portlint("scan", ".", "--fix", "--format", "json", cwd=repo)
    assert (outside / "victim.cu").read_bytes() == VICTIM
    assert (repo / "a.cu").read_bytes() == CLEAN  # the edit claims to replace "x": dropped
    paths = {f["path"] for f in json.loads(proc.stdout)["findings"]}
    assert paths <= {"a.cu"}, paths


def test_forged_entry_neither_hides_nor_adds_findings(tmp_path):
    repo, _ = checkout(tmp_path)
    (repo / "a.cu").write_bytes(KERNEL)
    (repo / "b.cu").write_bytes(CLEAN)
    truth = run_portlint("scan", ".", "--no-cache", "--format", "json", cwd=repo)
    plant_public_entry(repo, "a.cu", json.dumps({"findings": [], "notices": [], "counters": {}}).encode())
    plant_public_entry(repo, "b.cu", forged_body("b.cu", [1, 1, 1, 2, "_", "_"]))
    cached = run_portlint("scan", ".", "--format", "json", cwd=repo)
    assert json.loads(cached.stdout)["findings"] == json.loads(truth.stdout)["findings"]
    assert json.loads(truth.stdout)["findings"], "a.cu has a real finding"


def test_cache_folders_that_are_symlinks_are_not_written_through(tmp_path):
    repo, outside = checkout(tmp_path)
    (repo / "a.cu").write_bytes(KERNEL)
    cache, key = key_for(repo, "a.cu")
    cache.dir.mkdir()
    os.symlink(outside, cache.dir / key[:2])
    run_portlint("scan", ".", cwd=repo)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.cu"]


def test_cache_dir_that_is_a_symlink_is_not_used(tmp_path):
    repo, outside = checkout(tmp_path)
    (repo / "a.cu").write_bytes(KERNEL)
    os.symlink(outside, repo / ".portlint_cache")
    run_portlint("scan", ".", cwd=repo)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.cu"]


def test_cache_key_is_private_and_a_committed_key_is_refused(tmp_path, monkeypatch):
    import portlint.core.cache as cache_mod

    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    secret = cache_mod.entry_secret()
    key_file = home / "portlint" / "cache-key"
    assert secret is not None and len(secret) == 32 and key_file.read_bytes() == secret
    assert key_file.stat().st_mode & 0o777 == 0o600
    os.chmod(key_file, 0o644)  # what a key checked out of a repository looks like
    cache_mod._SECRETS.clear()
    assert cache_mod.entry_secret() is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other"))
    cache_mod._SECRETS.clear()
    assert cache_mod.entry_secret() not in (None, secret)  # another user: another key
    cache_mod._SECRETS.clear()


# ---- symlinks -----------------------------------------------------------------------------

def test_fix_never_writes_through_a_directory_symlink_out_of_the_tree(tmp_path):
    repo, outside = checkout(tmp_path)
    (outside / "k.cu").write_bytes(KERNEL)
    os.symlink("../outside", repo / "vendor")
    for extra in ((), ("--follow-symlinks",)):
        proc = run_portlint("scan", ".", "--fix", "--no-cache", *extra, cwd=repo)
        assert (outside / "k.cu").read_bytes() == KERNEL, proc.stderr
    plain = run_portlint("scan", ".", "--no-cache", "--format", "json", cwd=repo)
    assert json.loads(plain.stdout)["findings"] == []  # not followed by default
    followed = run_portlint("scan", ".", "--no-cache", "--follow-symlinks", "--format", "json", cwd=repo)
    assert {f["path"] for f in json.loads(followed.stdout)["findings"]} == {"vendor/k.cu"}


def test_fix_never_writes_through_a_file_symlink_out_of_the_tree(tmp_path):
    repo, outside = checkout(tmp_path)
    (outside / "k.cu").write_bytes(KERNEL)
    os.symlink("../outside/k.cu", repo / "k.cu")
    for args in ((".",), ("k.cu",), (".", "--follow-symlinks"), ("k.cu", "--follow-symlinks")):
        run_portlint("scan", *args, "--fix", "--no-cache", cwd=repo)
        assert (outside / "k.cu").read_bytes() == KERNEL, args
        assert (repo / "k.cu").is_symlink()


def test_named_path_that_is_a_symlink_out_of_the_working_directory(tmp_path):
    """`portlint scan src --fix` in CI, where a pull request replaced src/ by a symlink to
    the runner's home; and a file named through such a folder (what `find -L` lists)."""
    repo, outside = checkout(tmp_path)
    (outside / "k.cu").write_bytes(KERNEL)
    os.symlink("../outside", repo / "src")
    for args in (("src",), ("src/k.cu",), ("src", "--follow-symlinks"), ("src/k.cu", "--follow-symlinks")):
        proc = run_portlint("scan", *args, "--fix", "--no-cache", cwd=repo)
        assert (outside / "k.cu").read_bytes() == KERNEL, (args, proc.stderr)
    skipped = run_portlint("scan", "src", "--no-cache", cwd=repo)
    assert skipped.returncode == 0 and "outside the scanned tree" in skipped.stderr
    followed = run_portlint("scan", "src/k.cu", "--no-cache", "--follow-symlinks", cwd=repo)
    assert followed.returncode == 1 and "PTL102" in followed.stdout  # scanned when asked, never written


def test_symlink_inside_the_tree_is_written_through_and_stays_a_link(tmp_path):
    repo, _ = checkout(tmp_path)
    (repo / "src").mkdir()
    (repo / "src" / "real.cu").write_bytes(KERNEL)
    os.symlink("src/real.cu", repo / "alias.cu")
    run_portlint("scan", "alias.cu", "src", "--fix", "--no-cache", cwd=repo)
    assert (repo / "alias.cu").is_symlink() and os.readlink(repo / "alias.cu") == "src/real.cu"
    assert b"% warpSize" in (repo / "src" / "real.cu").read_bytes()


# ---- crafted paths ---------------------------------------------------------------------

def test_apply_fixes_ignores_findings_for_files_it_did_not_discover(tmp_path):
    from portlint.discovery.files import discover
    from portlint.output.fixes import apply_fixes
    from portlint.core.model import Edit, Finding, Fix, Severity, Span

    repo, outside = checkout(tmp_path)
    (repo / "a.cu").write_bytes(CLEAN)
    settings = Settings(root=repo)
    files, _ = discover([repo], settings)
    crafted = [
        Finding("PTL102", p, Span(1, 1, 1, 1), "m", Severity.ERROR, {"rocm": Severity.ERROR}, "high",
                fix=Fix("d", (Edit(Span(1, 1, 1, 1), "pwned "),)))
        for p in ("../outside/victim.cu", str(outside / "victim.cu"), "a.cu/../../outside/victim.cu")
    ]
    run = apply_fixes(crafted, settings, files, write=True)
    assert run.changed == 0
    assert (outside / "victim.cu").read_bytes() == VICTIM


def test_forged_edit_positions_are_dropped():
    from portlint.output.fixes import splice
    from portlint.core.model import Edit, Span

    data = b"int a = 32;\nint b = 32;\n"
    edits = [
        Edit(Span(9, 1, 9, 3), "X", ""),  # no such line
        Edit(Span(1, 40, 1, 41), "X", ""),  # past the end of the line
        Edit(Span(1, 11, 2, 1), "X", "32"),  # the span holds ";\n", not "32"
        Edit(Span(2, 9, 2, 11), "warpSize", "32"),  # genuine
    ]
    result = splice(data, [(e,) for e in edits])
    assert (result.dropped, result.fixes) == (3, 1)
    assert result.data == b"int a = 32;\nint b = warpSize;\n"
    # a fix is applied whole or not at all: one forged edit sinks the genuine one beside it
    both = splice(data, [(edits[2], edits[3])])
    assert (both.dropped, both.fixes, both.data) == (1, 0, data)


def test_hard_link_to_a_file_outside_is_replaced_not_written_through(tmp_path):
    repo, outside = checkout(tmp_path)
    (outside / "k.cu").write_bytes(KERNEL)
    os.link(outside / "k.cu", repo / "k.cu")  # what an unpacked archive can hold
    run_portlint("scan", ".", "--fix", "--no-cache", cwd=repo)
    assert (outside / "k.cu").read_bytes() == KERNEL
    assert b"% warpSize" in (repo / "k.cu").read_bytes()


def test_crafted_file_names_are_fixed_as_themselves(tmp_path):
    """Names that look like options, diff headers or traversal are only ever names."""
    repo, outside = checkout(tmp_path)
    names = ["--fix.cu", "-rf.cu", "a\nb.cu", "+++ b%2f..%2foutside%2fvictim.cu", "..cu"]
    for name in names:
        (repo / name).write_bytes(KERNEL)
    proc = run_portlint("scan", ".", "--fix", "--no-cache", cwd=repo)
    assert "fixed 5 findings" in proc.stderr, proc.stderr
    for name in names:
        assert (repo / name).read_bytes() == KERNEL.replace(b"% 32", b"% warpSize"), name
    assert (outside / "victim.cu").read_bytes() == VICTIM
    assert sorted(p.name for p in repo.iterdir()) == sorted(names + ["portlint.toml"])
