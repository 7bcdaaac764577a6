"""Glob patterns, for the glob tool's pattern and grep's ``include``: the regular
expression a glob means (``glob_regex``, ``glob_matcher``) and the simple globs an engine
can be handed directly (``pushdown``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .ignore_rules import glob_class

# -- glob patterns (the glob tool's pattern, grep's include) -------------------------------


def glob_regex(pattern: str) -> str:
    """A glob over paths relative to the searched folder: ``*`` and ``?`` within a name,
    ``**`` across folders (``**/`` also none), ``[a-z]``/``[!a-z]``, ``{a,b}``, ``\\``
    escapes. Case matters."""
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            i, text = glob_class(pattern, i)
            out.append(text)
        elif char == "{":
            depth += 1
            out.append("(?:")
            i += 1
        elif char == "}" and depth:
            depth -= 1
            out.append(")")
            i += 1
        elif char == "," and depth:
            out.append("|")
            i += 1
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    if depth:  # an unclosed "{": read the pattern again with braces as plain characters
        return glob_regex(pattern.replace("{", "\\{").replace("}", "\\}"))
    return "".join(out)


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a relative path matches ``pattern``; a pattern without ``/`` (and not
    starting with ``**``) is matched against the file's name, wherever it is."""
    pattern = pattern.removeprefix("./")
    regex = re.compile(glob_regex(pattern), re.DOTALL)
    if "/" not in pattern and not pattern.startswith("**"):
        return lambda path: regex.fullmatch(path[path.rfind("/") + 1 :]) is not None
    return lambda path: regex.fullmatch(path) is not None


PLAIN = r"[\w.*?+-]"  # characters every engine's globs read alike
SIMPLE_GLOB = re.compile(
    rf"(?:(?:\*\*|{PLAIN}+)/)*{PLAIN}*(?:\{{{PLAIN}*(?:,{PLAIN}*)+\}})?{PLAIN}*"
)


@dataclass(frozen=True)
class Pushdown:
    """A glob the engines can filter by themselves, so fewer names come back: ripgrep's
    ``--type-add`` takes a file name glob (and, unlike ``--glob``, keeps the ignore
    rules), git a ``:(glob)`` pathspec. Our own matcher still decides; these only narrow
    (so they may only be built where they take at least what ours takes)."""

    names: list[str] | None  # for ripgrep: name globs, when the glob is about names only
    pathspecs: list[str]  # for git


def pushdown(pattern: str | None) -> Pushdown | None:
    """The pushdown of a glob with plain characters, ``*``, ``?``, ``**`` as a whole
    folder and at most one ``{a,b}``; None for any other."""
    if not pattern:
        return None
    pattern = pattern.removeprefix("./")
    if not SIMPLE_GLOB.fullmatch(pattern) or "**" in pattern.replace("**/", ""):
        return None
    expanded = [pattern]
    if "{" in pattern:
        head, rest = pattern.split("{", 1)
        body, tail = rest.split("}", 1)
        expanded = [head + part + tail for part in body.split(",")]
    bare = [p.removeprefix("**/") for p in expanded]
    if not all(bare) or any(p.endswith("/") for p in expanded):
        return None
    names = bare if all("/" not in p for p in bare) else None
    specs = [f":(glob){p if '/' in p else '**/' + p}" for p in expanded]
    return Pushdown(names, specs)
