"""Glob matching: the one module that says whether a glob names a string.

Two readings of a glob live here, each named for where portlint meets it:

- `fits(text, pattern)`: the config's globs (rule selectors `PTL1*`, `per-file-ignores`
  and `roles` keys, a dependency's name patterns in rules/build) and a build file's
  listing with a variable in it. fnmatch's reading, case-sensitive everywhere: `*` is any
  run of characters, `/` included (so `**` is `*` and `tests/*` names `tests/a/b.py`), `?`
  one character, `[...]` a set (`[!...]` its complement), unless `brackets=False`, where
  `[` is itself (`jax[cuda*]`). A caller that ignores case folds both sides first.
  `covers(path, glob)`: a config path glob names the path, or names a folder the path
  lies below (`tests`, `tests/`). Paths are relative to the project root, so a leading
  `/` (gitignore's way to anchor, `/tests`) says nothing more and is dropped.
- `matching(files, pattern, recursive, star_crosses)`: a build's own globs (setup.py's
  `glob.glob`, CMake's `file(GLOB ...)`): `*`, `?` and sets stay inside one folder, `**/`
  crosses folders in a recursive glob, every `*` crosses them in CMake's GLOB_RECURSE.

`.gitignore` files and the `exclude` setting have a syntax of their own (anchoring,
negation, folder-only lines): discovery/gitignore.py matches them."""

from __future__ import annotations

import fnmatch


def fits(text: str, pattern: str, *, brackets: bool = True) -> bool:
    """Whether `pattern` (fnmatch's reading, case-sensitive) names all of `text`."""
    if not brackets:
        pattern = pattern.replace("[", "[[]")
    return fnmatch.fnmatchcase(text, pattern)


def covers(path: str, glob: str) -> bool:
    """Whether a config path glob names `path` (relative, POSIX) or a folder it lies below;
    `/tests` is `tests` (already anchored at the root)."""
    if glob.startswith("/") and not glob.startswith("//"):
        glob = glob[1:]
    return fits(path, glob) or fits(path, glob.rstrip("/") + "/*")


def matching(files: list[str], pattern: str, recursive: bool, star_crosses: bool = False) -> list[str]:
    """The files a glob pattern (relative to the project root) names: `*` and `?` stay inside
    one folder, `**/` crosses folders only in a recursive glob (Python's glob(recursive=True));
    in CMake's GLOB_RECURSE (`star_crosses`) every `*` crosses them.

    Matched by walking each name once with the set of pattern positions it can be at (no
    regex: a pattern of many stars against a long name backtracked for minutes), so a match
    costs the name's length times the pattern's."""
    tokens = _glob_tokens(pattern, recursive, star_crosses)
    return [f for f in files if _glob_match(tokens, f)]


# glob tokens: ("lit", c), ("one",) any character but "/", ("set", chars, negated), ("star",)
# any run without "/", ("any",) any run, ("dirs",) zero or more whole folders ("**/")
def _glob_tokens(pattern: str, recursive: bool, star_crosses: bool) -> tuple:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i) and recursive:
            out.append(("dirs",))
            i += 3
        elif pattern[i] == "*":
            out.append(("any",) if star_crosses or (recursive and pattern.startswith("**", i)) else ("star",))
            i += 2 if pattern.startswith("**", i) else 1
        elif pattern[i] == "?":
            out.append(("one",))
            i += 1
        elif pattern[i] == "[" and pattern.find("]", i + 2 if pattern.startswith(("[!", "[^"), i) else i + 1) >= 0:
            j = i + 1
            negated = pattern[j] in "!^"
            j += negated
            close = pattern.find("]", j + 1 if pattern[j] == "]" else j)
            body, chars = pattern[j:close], set()
            k = 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1] == "-":
                    chars.update(chr(c) for c in range(ord(body[k]), ord(body[k + 2]) + 1) if c - ord(body[k]) < 0x10000)
                    k += 3
                else:
                    chars.add(body[k])
                    k += 1
            out.append(("set", frozenset(chars), negated))
            i = close + 1
        else:
            out.append(("lit", pattern[i]))
            i += 1
    return tuple(out)


def _glob_closure(tokens: tuple, states: set) -> set:
    """The positions reachable without reading a character: a star, a run or `**/` may match
    nothing."""
    todo = list(states)
    while todo:
        k = todo.pop()
        if isinstance(k, int) and k < len(tokens) and tokens[k][0] in ("star", "any", "dirs") and k + 1 not in states:
            states.add(k + 1)
            todo.append(k + 1)
    return states


def _glob_match(tokens: tuple, name: str) -> bool:
    states = _glob_closure(tokens, {0})
    for ch in name:
        nxt = set()
        for k in states:
            if isinstance(k, tuple):  # inside a `**/` folder run: any character, "/" may end it
                nxt.add(k)
                if ch == "/":
                    nxt.add(k[0] + 1)
                continue
            if k >= len(tokens):
                continue
            tok = tokens[k]
            kind = tok[0]
            if kind == "lit":
                if ch == tok[1]:
                    nxt.add(k + 1)
            elif kind == "one":
                if ch != "/":
                    nxt.add(k + 1)
            elif kind == "set":
                if ch != "/" and ((ch in tok[1]) != tok[2]):
                    nxt.add(k + 1)
            elif kind == "star":
                if ch != "/":
                    nxt.add(k)
            elif kind == "any":
                nxt.add(k)
            elif kind == "dirs":
                nxt.add((k,))
                if ch == "/":
                    nxt.add(k + 1)
        if not nxt:
            return False
        states = _glob_closure(tokens, nxt)
    return len(tokens) in states
