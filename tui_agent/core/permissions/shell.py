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
# a redirection token: group 1 is its target when attached (">out", "2>/dev/null", "&>x")
_REDIRECT = re.compile(r"^(?:\d*|&)(?:>>?|<<?<?|>\||<>)&?(\S+)?$")
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
KEYWORDS = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "while",
    "until",
    "!",
    "coproc",
    "esac",
    "{",
    "}",
    "in",
    ";;",
}
# programs that run code they read from a file or stdin: their commands cannot be checked
OPAQUE = SHELLS | {"source", ".", "eval"}
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


def is_opaque(command: str) -> bool:
    """A shell reading a script file or stdin (``bash x.sh``, ``… | sh``) or ``source``:
    what it runs cannot be checked, so only an explicit rule may allow it."""
    words = command.split()
    return bool(words) and words[0] in OPAQUE


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


def _decode_ansi_c(text: str) -> str:
    """``$'rm'`` → ``'rm'`` so shlex sees the word the shell would."""

    def decode(match: re.Match[str]) -> str:
        try:
            value = match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
        except (UnicodeDecodeError, ValueError):
            value = match.group(1)
        return "'" + value.replace("'", "'\"'\"'") + "'"

    return _ANSI_C.sub(decode, text)


def _tokens(part: str) -> list[str]:
    part = _decode_ansi_c(part)
    try:
        tokens = shlex.split(part, comments=True)
    except ValueError:
        tokens = part.split()
    return [t.replace("__SUBST__", "").strip() for t in tokens]


def _skip_options(
    tokens: list[str], with_value: frozenset[str] | set[str] = frozenset()
) -> list[str]:
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        if tokens[i] == "--":
            return tokens[i + 1 :]
        i += 2 if tokens[i] in with_value else 1
    return tokens[i:]


def _shell_script(rest: list[str]) -> str | None:
    """The script of ``bash -c SCRIPT`` (also ``-lc``, ``-ec``, ``-o x -c``), else None."""
    for index, token in enumerate(rest):
        if token.startswith("-") and not token.startswith("--") and "c" in token[1:]:
            return rest[index + 1] if index + 1 < len(rest) else ""
        if not token.startswith(("-", "+")):
            return None
    return None


def _unwrap(tokens: list[str], depth: int) -> list[str]:
    """Drop wrappers, keywords, redirections and assignments; return the simple commands."""
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
        redirect = _REDIRECT.match(head)
        if redirect:
            tokens = tokens[1:] if redirect.group(1) else tokens[2:]
            continue
        if head in KEYWORDS:
            tokens = tokens[1:]
            continue
        if head in {"for", "select"}:
            return []  # the loop header runs nothing; its body is its own part
        if head == "case":
            after = next((i for i, t in enumerate(tokens) if t.endswith(")")), None)
            tokens = tokens[after + 1 :] if after is not None else []
            continue
        if head == "function" or head.endswith("()"):
            tokens = tokens[2:] if head == "function" else tokens[1:]
            continue
        if head.endswith(")") and head.count("(") < head.count(")") and len(tokens) > 1:
            tokens = tokens[1:]  # a case pattern like "a)"
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
        elif name in SHELLS and _shell_script(rest) is not None:
            script = _shell_script(rest) or ""
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
        tokens = [t for t in _tokens(part) if t not in ("__SUBST__", "")]
        commands.extend(_unwrap(tokens, depth))
    for sub in inner:
        commands.extend(split_commands(sub, depth + 1))
    return [c for c in commands if c]
