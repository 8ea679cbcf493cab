"""The build family's data tables (rules/build/*.toml), read once per process."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache

from portlint.core.globs import fits
from portlint.core.model import TARGETS
from portlint.core.catalog import RuleError, rules_root

STATUSES = ("missing", "drop", "available")
HIPCC_BEHAVIOURS = ("rejected", "ignored", "misread")


def _load(name: str) -> dict:
    path = rules_root() / "build" / name
    with open(path, "rb") as fh:
        return tomllib.load(fh)


@dataclass(frozen=True)
class NvccFlag:
    flag: str
    match: str  # "exact" | "prefix"
    hipcc: str  # what hipcc does with it (HIPCC_BEHAVIOURS)
    probe: tuple[str, ...]
    counterpart: str
    # the HIP build needs nothing in its place (the option only tunes nvcc's own passes or turns
    # on what clang does by default): where it reaches nvcc alone, a port has nothing to do
    nothing_to_carry: bool = False

    def matches(self, token: str) -> bool:
        if self.match == "exact":
            return token == self.flag
        return token.startswith(self.flag)


@lru_cache(maxsize=1)
def nvcc_flags() -> tuple[NvccFlag, ...]:
    out = []
    for row in _load("nvcc-flags.toml")["flag"]:
        if row.get("match") not in ("exact", "prefix") or row.get("hipcc") not in HIPCC_BEHAVIOURS:
            raise RuleError(f"rules/build/nvcc-flags.toml: bad row {row}")
        out.append(NvccFlag(row["flag"], row["match"], row["hipcc"], tuple(row["probe"]), row["counterpart"],
                            bool(row.get("nothing_to_carry", False))))
    return tuple(out)


@lru_cache(maxsize=8192)  # asked of every token of every string of a build file, often the same
def nvcc_flag(token: str) -> NvccFlag | None:
    return next((f for f in nvcc_flags() if f.matches(token)), None)


@lru_cache(maxsize=1)
def cmake_targets() -> dict[str, tuple[str, str]]:
    """`CUDA::name` suffix -> (ROCm target, package to find)."""
    out = {}
    for row in _load("cmake-targets.toml")["target"]:
        for name in row["cuda"]:
            out[name] = (row["rocm"], row["package"])
    return out


@dataclass(frozen=True)
class Availability:
    status: str
    counterpart: str


@dataclass(frozen=True)
class Dependency:
    patterns: tuple[str, ...]
    what: str
    source: str
    checked: str
    targets: dict[str, Availability]

    def matches(self, forms: tuple[str, ...]) -> bool:
        # `[` in a pattern is the extra's bracket (`jax[cuda*]`), not a character class
        return any(fits(form, p, brackets=False) for form in forms for p in self.patterns)


@lru_cache(maxsize=1)
def dependencies() -> tuple[Dependency, ...]:
    out = []
    for row in _load("dependencies.toml")["dependency"]:
        targets = {}
        for t in TARGETS:
            if t in row:
                cell = row[t]
                if cell.get("status") not in STATUSES or not cell.get("counterpart"):
                    raise RuleError(f"rules/build/dependencies.toml: {row['patterns']} {t}: bad entry {cell}")
                targets[t] = Availability(cell["status"], cell["counterpart"])
        out.append(Dependency(tuple(row["patterns"]), row["what"], row["source"], row["checked"], targets))
    return tuple(out)


def dependency_for(forms: tuple[str, ...]) -> Dependency | None:
    return next((d for d in dependencies() if d.matches(forms)), None)
