from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(Path(__file__).resolve().parent))

# The fetched third-party trees of the real-code sets are data to scan, never tests to run:
# collecting them would import untrusted code.
collect_ignore_glob = ["realcode/*/trees", "realcode/*/work"]


@pytest.fixture(autouse=True, scope="session")
def _private_cache_key_dir(tmp_path_factory):
    """The cache's per-user secret lives in the user cache directory: tests (and the
    command lines they start, which inherit the environment) get a fresh one of their own."""
    import os

    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))


def run_portlint(*args: str, cwd: Path | None = None, input: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real command line in a subprocess (exit codes and streams as a user sees them)."""
    import os

    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "portlint", *args],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        input=input,
        env=full_env,
        timeout=300,
    )


def run_portlint_bytes(*args: str, cwd: Path, timeout: float = 120, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The real command line with this checkout's portlint, streams kept as bytes (a hostile
    file name need not be UTF-8); `stdin` is piped in (else stdin is inherited)."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "portlint", *args], cwd=cwd, capture_output=True,
                          env=env, timeout=timeout, input=stdin)


def scan_paths(paths, **overrides):
    """Scan in-process and return the ScanResult (fast path for fixture tests)."""
    from portlint.core.config import Settings
    from portlint.discovery.files import discover
    from portlint.pipeline.engine import scan_files

    settings = Settings(root=overrides.pop("root", REPO), jobs=1)
    for key, value in overrides.items():
        setattr(settings, key, value)
    files, notices = discover([Path(p) for p in paths], settings)
    result = scan_files(files, settings)
    result.notices = notices + result.notices
    return result


def _missing(what: str) -> None:
    """Skip with a reason, or fail in CI (PORTLINT_REQUIRE_ORACLES=1), where oracles must run."""
    import os

    message = f"{what} is not installed (.ci/run installs it; see README)"
    if os.environ.get("PORTLINT_REQUIRE_ORACLES"):
        pytest.fail(message)
    pytest.skip(message)


def require_tool(name: str) -> str:
    """Path of an oracle executable (nvcc, hipcc, pre-commit ...)."""
    path = shutil.which(name)
    if path is None:
        _missing(name)
    return path


def require_module(name: str):
    """Import an oracle Python package (jax, torch)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        _missing(f"the Python package {name}")


@pytest.fixture
def repo() -> Path:
    return REPO


def around_owner(check, allowed: dict[str, str], owners: tuple[str, ...] = ()) -> tuple[dict[str, list[str]], list[str]]:
    """For a test that one concept lives in one module: the portlint modules (POSIX paths
    from the repository root) other than `owners` where `check(path)` finds code doing it
    themselves and that `allowed` (module -> why) does not list, with what was found; and the
    `allowed` modules that no longer do it (their entry is to go)."""
    found = {}
    for path in sorted((REPO / "portlint").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        hits = [] if rel in owners else check(path)
        if hits and rel not in allowed:
            found[rel] = hits
    stale = [m for m in allowed if not check(REPO / m)]
    return found, stale


def pytest_addoption(parser):
    parser.addoption(
        "--update-snapshots", action="store_true", default=False,
        help="rewrite the fixtures' __snapshots__/*.snap files from the current output (tests/test_fixtures.py)",
    )


# Known misses (`todo-expect:` in fixtures) seen by tests/test_fixtures.py, for the summary.
KNOWN_MISSES: list[str] = []


def pytest_terminal_summary(terminalreporter):
    if KNOWN_MISSES:
        terminalreporter.write_line(f"fixtures: {len(KNOWN_MISSES)} known miss(es) recorded by todo-expect: {', '.join(sorted(KNOWN_MISSES))}")


# the longest tests (whole-package scans of the labelled sets, minutes each) go first, so
# pytest-xdist's two workers run them beside the many short ones instead of alone at the end
# (the full suite's CPU/wall was 1.3 with them last)
_LONG_FIRST = ("test_realcode.py::test_recall_and_trap_rate", "test_realcode_judged.py::test_false_findings_do_not_return",
               "test_oracle_rewrites.py::")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: 0 if any(k in item.nodeid for k in _LONG_FIRST) else 1)  # stable: order kept within each
