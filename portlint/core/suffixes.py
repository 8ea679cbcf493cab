"""File suffixes by what they hold: the one table of them (lower case, with the dot).

Discovery decides a file's language from these, and every stage that asks "is this a CUDA
file, a C/C++ header, Python" asks here, so that a suffix added once counts everywhere."""

from __future__ import annotations

# CUDA and HIP sources: device code by their suffix alone
CUDA_SOURCES = frozenset({".cu", ".cuh", ".hip"})
# the files nvcc compiles as CUDA, with its runtime header included implicitly
NVCC_SOURCES = frozenset({".cu", ".cuh"})
# C and C++ sources and headers, which hold CUDA when their content says so
CXX_SOURCES = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp"})
# every file of the C family: what a compiler reads, an include reaches, a build lists
C_FAMILY = CUDA_SOURCES | CXX_SOURCES
# the C-family files that are only ever included, never compiled on their own
C_HEADERS = frozenset({".cuh", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp"})
PYTHON_SOURCES = frozenset({".py", ".pyi"})
PTX_SOURCES = frozenset({".ptx"})


def suffix_of(path: str) -> str:
    """The suffix of a POSIX or native path, lower case ('' when there is none)."""
    name = path.replace("\\", "/").rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""
