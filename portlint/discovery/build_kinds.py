"""Which build file a path names, by its file name alone (no content needed, except a
shell script, which counts only when it calls nvcc)."""

from __future__ import annotations

from pathlib import PurePath

_EXACT = {
    "cmakelists.txt": "cmake",
    "makefile": "make",
    "gnumakefile": "make",
    "dockerfile": "docker",
    "containerfile": "docker",
    "pyproject.toml": "pyproject",
    "setup.cfg": "setupcfg",
}
_SUFFIXES = {".cmake": "cmake", ".mk": "make", ".dockerfile": "docker"}


def build_kind(path: str | PurePath, head: bytes = b"") -> str | None:
    """"cmake", "make", "docker", "requirements", "pyproject", "setupcfg", "shell" or None."""
    name = PurePath(path).name.lower()
    if name in _EXACT:
        return _EXACT[name]
    suffix = PurePath(name).suffix
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    if name.startswith(("dockerfile.", "containerfile.")):
        return "docker"
    if suffix in (".txt", ".in") and (name.startswith("requirements") or PurePath(path).parent.name.lower() == "requirements"):
        return "requirements"  # requirements*.txt, or any .txt/.in in a requirements/ folder
    if suffix == ".sh" and b"nvcc" in head:
        return "shell"
    return None


def is_build_name(path: str | PurePath) -> bool:
    """A name discovery keeps (a shell script is kept and decided by its content)."""
    return build_kind(path) is not None or PurePath(path).suffix.lower() == ".sh"
