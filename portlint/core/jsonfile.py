"""The one way portlint parses a document it does not trust (a baseline, SARIF shards,
configuration, `pyproject.toml`, compile_commands.json), read by `core.files.read_text`
(regular files only, opened without blocking, at most `limit` bytes).

- `read_json` / `read_toml`: the text parsed with bounded nesting (`MAX_DEPTH`) and bounded
  integers (`MAX_INT_DIGITS` digits; NaN and Infinity refused), every failure one line
  naming the file.
- `expect`: a type check of one value of the parsed document, before it is used.

Every failure raises the caller's error type with a one-line message."""

from __future__ import annotations

import json
from pathlib import Path

from portlint.core.files import MAX_BYTES, shown_as, read_text

MAX_DEPTH = 64
MAX_INT_DIGITS = 40


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
    return parse_json(read_text(path, error, label, limit), error, shown_as(path, label))


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
    return parse_toml(read_text(path, error, label, limit), error, shown_as(path, label))


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
