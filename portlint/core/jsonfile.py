"""The one way portlint reads a document it does not trust (a baseline, SARIF shards,
configuration, `pyproject.toml`, compile_commands.json, `.gitignore` files).

- `read_bytes`: regular files only, opened non-blocking (a FIFO never hangs the open, and
  is refused after it), a symlink to `/dev/zero` is a character device and refused, and at
  most `limit` bytes are read whatever the file says its size is.
- `read_json` / `read_toml`: the text parsed with bounded nesting (`MAX_DEPTH`) and bounded
  integers (`MAX_INT_DIGITS` digits; NaN and Infinity refused), every failure one line
  naming the file.
- `expect`: a type check of one value of the parsed document, before it is used.

Every failure raises the caller's error type with a one-line message."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

MAX_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 64
MAX_INT_DIGITS = 40

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _shown(path, label: str) -> str:
    return f"{label} {path}" if label else str(path)


def read_bytes(path: Path, error: type[Exception], label: str = "", limit: int = MAX_BYTES) -> bytes:
    """The bytes of regular file `path`, at most `limit` of them, or `error(message)`."""
    shown = _shown(path, label)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise error(f"cannot read {shown}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"cannot read {shown}: not a regular file")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise error(f"cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise error(f"{shown} is larger than {limit} bytes")
    return data


def read_text(path: Path, error: type[Exception], label: str = "", limit: int = MAX_BYTES) -> str:
    shown = _shown(path, label)
    data = read_bytes(path, error, label, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{shown} is not UTF-8 text: {exc}") from None
    return text[1:] if text.startswith("\ufeff") else text


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {digits} digits")
    return int(text)


def _constant(name: str):
    raise ValueError(f"{name} is not a JSON number portlint accepts")


def depth_of(doc, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a parsed document, counted without recursion; stops once it
    passes `limit` (returns limit + 1)."""
    deepest = 0
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return limit + 1
            deepest = max(deepest, depth)
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def parse_json(text: str, error: type[Exception], shown: str) -> object:
    try:
        doc = json.loads(text, parse_int=_int, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise error(f"{shown} is not JSON: {exc}") from None
    except RecursionError:
        raise error(f"{shown} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise error(f"{shown} is refused: {exc}") from None
    if depth_of(doc) > MAX_DEPTH:
        raise error(f"{shown} is nested more than {MAX_DEPTH} levels deep")
    return doc


def read_json(path: Path, error: type[Exception], label: str = "", limit: int = MAX_BYTES) -> object:
    """The parsed JSON document at `path`, or `error(message)` when it cannot be read, is
    not a bounded JSON document (size, depth, integers)."""
    return parse_json(read_text(path, error, label, limit), error, _shown(path, label))


def parse_toml(text: str, error: type[Exception], shown: str) -> dict:
    import tomllib

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{shown}: invalid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{shown} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # an integer beyond the interpreter's digit limit
        raise error(f"{shown} is refused: {exc}") from None
    if depth_of(doc) > MAX_DEPTH:
        raise error(f"{shown} is nested more than {MAX_DEPTH} levels deep")
    return doc


def read_toml(path: Path, error: type[Exception], label: str = "", limit: int = 16 * 1024 * 1024) -> dict:
    return parse_toml(read_text(path, error, label, limit), error, _shown(path, label))


_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer", bool: "true or false"}


def expect(value, kind, error: type[Exception], where: str):
    """`value` when it is of `kind` (a type or a tuple of types; bool is not an int here),
    else `error("<where> must be <kind>")`."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        names = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise error(f"{where} must be {names}, not {type(value).__name__}")
    return value
