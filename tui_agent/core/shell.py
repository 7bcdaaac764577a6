"""Split a shell command line into the simple commands it would run.

Used by the permission hook: ``echo ok && rm -rf x`` is two commands, ``$(rm x)`` and
`` `rm x` `` are commands, ``sudo``/``env``/``timeout``/``bash -c "…"`` are unwrapped.
It errs towards finding more commands, never fewer: anything it cannot parse stays in.
"""

from __future__ import annotations

import re
import shlex

SEPARATORS = ("&&", "||", ";", "|", "&", "\n")
SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "fish"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_DEPTH = 8


def _substitutions(text: str) -> tuple[str, list[str]]:
    """Pull ``$(…)``, ``<(…)``, ``>(…)`` and backtick bodies out (outside single quotes)."""
    out: list[str] = []
    inner: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        c = text[i]
        if quote == "'":
            out.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(text[i : i + 2])
            i += 2
            continue
        if c == "'" and quote is None:
            quote = "'"
            out.append(c)
            i += 1
            continue
        if c == '"':
            quote = None if quote == '"' else '"'
            out.append(c)
            i += 1
            continue
        if c in "$<>" and i + 1 < n and text[i + 1] == "(" and not text.startswith("$((", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                j += 1
            inner.append(text[i + 2 : j - 1] if depth == 0 else text[i + 2 :])
            out.append(" __SUBST__ ")
            i = j
            continue
        if c == "`":
            j = text.find("`", i + 1)
            j = n if j == -1 else j
            inner.append(text[i + 1 : j])
            out.append(" __SUBST__ ")
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), inner


def _split_top(text: str) -> list[str]:
    """Split on unquoted ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            current.append(c)
            if c == "\\" and quote == '"' and i + 1 < n:
                current.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            current.append(text[i : i + 2])
            i += 2
            continue
        if c in "'\"":
            quote = c
            current.append(c)
            i += 1
            continue
        if text.startswith(("&&", "||"), i):
            parts.append("".join(current))
            current = []
            i += 2
            continue
        if c in ";|&\n" and not (c == "&" and i + 1 < n and text[i + 1] == ">"):
            if c == "&" and current and current[-1] in "<>":
                current.append(c)
                i += 1
                continue
            parts.append("".join(current))
            current = []
            i += 1
            continue
        current.append(c)
        i += 1
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _tokens(part: str) -> list[str]:
    try:
        return shlex.split(part, comments=True)
    except ValueError:
        return part.split()


def _skip_options(
    tokens: list[str], with_value: frozenset[str] | set[str] = frozenset()
) -> list[str]:
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        if tokens[i] == "--":
            return tokens[i + 1 :]
        i += 2 if tokens[i] in with_value else 1
    return tokens[i:]


def _unwrap(tokens: list[str], depth: int) -> list[str]:
    """Drop wrappers and assignments; return the simple commands left (as strings)."""
    while tokens:
        head = tokens[0].lstrip("({").strip()
        if not head:
            tokens = tokens[1:]
            continue
        if head in {"}", ")"}:
            tokens = tokens[1:]
            continue
        if _ASSIGNMENT.match(head):
            tokens = tokens[1:]
            continue
        name = head.rsplit("/", 1)[-1]
        rest = tokens[1:]
        if name == "sudo":
            tokens = _skip_options(rest, {"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"})
        elif name == "env":
            rest = _skip_options(rest, {"-u", "-C", "-S", "--unset", "--chdir"})
            while rest and _ASSIGNMENT.match(rest[0]):
                rest = rest[1:]
            tokens = rest
        elif name == "timeout":
            rest = _skip_options(rest, {"-k", "-s", "--kill-after", "--signal"})
            tokens = rest[1:] if rest else rest
        elif name == "nice":
            tokens = _skip_options(rest, {"-n", "--adjustment"})
        elif name in {"nohup", "command", "exec", "time", "builtin", "stdbuf", "doas"}:
            tokens = _skip_options(rest, {"-u", "-i", "-o", "-e"})
        elif name == "xargs":
            tokens = _skip_options(
                rest, {"-n", "-P", "-I", "-L", "-s", "-d", "-E", "-a", "--max-args", "--max-procs"}
            )
        elif name in SHELLS and "-c" in rest:
            script = rest[rest.index("-c") + 1] if rest.index("-c") + 1 < len(rest) else ""
            if depth >= MAX_DEPTH:
                return [" ".join(tokens)]
            return split_commands(script, depth + 1) or [" ".join(tokens)]
        elif name in {"eval"}:
            if depth >= MAX_DEPTH:
                return [" ".join(tokens)]
            return split_commands(" ".join(rest), depth + 1) or [" ".join(tokens)]
        else:
            cleaned = [name, *rest]
            while cleaned and cleaned[-1] in {"}", ")"}:
                cleaned.pop()
            if (
                cleaned
                and cleaned[-1].endswith(")")
                and cleaned[-1].count("(") < cleaned[-1].count(")")
            ):
                cleaned[-1] = cleaned[-1].rstrip(")")
            return [" ".join(c for c in cleaned if c)] if cleaned else []
        if not tokens:
            return [name]
    return []


def split_commands(command: str, depth: int = 0) -> list[str]:
    """The simple commands in ``command``, wrappers removed, in order of appearance."""
    if depth > MAX_DEPTH:
        return [command]
    body, inner = _substitutions(command)
    commands: list[str] = []
    for part in _split_top(body):
        tokens = [t for t in _tokens(part) if t != "__SUBST__"]
        commands.extend(_unwrap(tokens, depth))
    for sub in inner:
        commands.extend(split_commands(sub, depth + 1))
    return [c for c in commands if c]
