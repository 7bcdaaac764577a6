"""What the edit matchers share: the edit and its result (``Edit``, ``Applied``,
``EditError``, the ``MATCHERS`` that name how ``old`` was found), the exact replacement
and the diff (``unified_diff``), a text's lines and line endings, and the comparison
keys the tolerant line matchers use (``LINE_MATCHERS``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MATCHERS: dict[str, str] = {
    "exact": "old occurs as given",
    "line-endings": "old had other line endings than the file (CRLF/LF)",
    "trailing-whitespace": "ignoring whitespace at the ends of lines",
    "indentation": "ignoring indentation; new was re-indented to the file's",
    "trimmed-lines": (
        "comparing lines without their indentation (old's did not follow the file's "
        "structure); new was re-indented line by line"
    ),
    "whitespace": "ignoring how much whitespace there is inside lines and around punctuation",
    "unicode": "treating typographic quotes, dashes and non-breaking spaces as plain ones",
    "escapes": "reading \\n, \\t, \\\", \\' and \\\\ in old and new as the characters they escape",
    "line-numbers": "leaving out the line numbers that read puts before each line",
    "block-anchors": "its first and last lines matching and the lines between similar",
}
ANCHOR_SIMILARITY = 0.7  # the lines between two anchors, as difflib's ratio
TAB = 4  # columns a tab counts for when indentation is compared


class EditError(ValueError):
    """Why an edit was not applied, worded for the model (what to send instead)."""


@dataclass(frozen=True)
class Edit:
    old: str
    new: str
    replace_all: bool = False


@dataclass(frozen=True)
class Applied:
    """One applied edit: the whole new text and how ``old`` was found."""

    text: str
    replacements: int
    matched: str  # a key of MATCHERS
    first_line: int  # 1-based, in the text before, of the first place replaced
    last_line: int
    note: str = ""


# -- exact --------------------------------------------------------------------------------


NO_NEWLINE = "\\ No newline at end of file\n"


def _patch_lines(text: str) -> list[str]:
    """``text`` cut after each ``\n`` only, as ``patch`` reads a file: a CR (lone or in
    CRLF), form feed or U+2028 stays inside its line (``str.splitlines`` would cut there)."""
    lines = text.split("\n")
    cut = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        cut.append(lines[-1])
    return cut


def unified_diff(old: str, new: str, path: str, *, context: int = 3) -> str:
    """A unified diff from ``old`` to ``new`` that ``patch -p1`` applies: ``--- a/path`` and
    ``+++ b/path``, lines cut at ``\n`` only, and a last line without a newline followed by
    ``\\ No newline at end of file`` (as ``diff -u`` and git write it). Empty when equal."""
    out: list[str] = []
    for line in difflib.unified_diff(
        _patch_lines(old), _patch_lines(new), f"a/{path}", f"b/{path}", n=context
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + NO_NEWLINE)
    return "".join(out)


def _replace_exact(
    text: str, old: str, new: str, count: int, replace_all: bool, matched: str, where: str
) -> Applied:
    starts = _occurrences(text, old)
    if count > 1 and not replace_all:
        at = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts[:10])
        raise EditError(
            f"old text occurs {count} times in {where} (at lines {at}); include more "
            "context to make it unique, or set replace_all"
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    first = text.count("\n", 0, starts[0]) + 1
    last = first + old.count("\n") - (1 if old.endswith("\n") else 0)
    note = "" if matched == "exact" else f"old was not found exactly; {MATCHERS[matched]}"
    return Applied(updated, count if replace_all else 1, matched, first, last, note)


def _occurrences(text: str, old: str) -> list[int]:
    starts, at = [], text.find(old)
    while at >= 0:
        starts.append(at)
        at = text.find(old, at + len(old))
    return starts


def _dominant_eol(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def _to_eol(value: str, eol: str) -> str:
    flat = value.replace("\r\n", "\n")
    return flat.replace("\n", eol) if eol != "\n" else flat


# -- lines --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    start: int  # offset in the text
    body: str  # without its line ending
    eol: str  # "\n", "\r\n" or "" (the last line, without a final newline)


def _split_text(text: str) -> list[_Line]:
    lines: list[_Line] = []
    pos = 0
    while pos < len(text):
        end = text.find("\n", pos)
        if end < 0:
            lines.append(_Line(pos, text[pos:], ""))
            break
        body, eol = text[pos:end], "\n"
        if body.endswith("\r"):
            body, eol = body[:-1], "\r\n"
        lines.append(_Line(pos, body, eol))
        pos = end + 1
    return lines


@dataclass(frozen=True)
class _Want:
    """``old`` and ``new`` as lines, blank lines at old's edges left out."""

    old: list[str]
    new: list[str]
    newline: bool  # old ends with a line ending: the replaced lines' last ending goes too
    delete: bool  # new is empty: the lines go


def _want(old: str, new: str) -> _Want | None:
    old_lines, old_nl = _split_value(old)
    new_lines, _ = _split_value(new)
    lead = _blank_run(old_lines)
    if lead == len(old_lines):
        return None  # only whitespace: nothing to anchor lines on
    trail = _blank_run(reversed(old_lines))
    old_lines = old_lines[lead : len(old_lines) - trail]
    # the same blank edges on new go with them (the file may have fewer)
    new_lines = new_lines[min(lead, _blank_run(new_lines)) :]
    cut = min(trail, _blank_run(reversed(new_lines)), max(len(new_lines) - 1, 0))
    new_lines = new_lines[: len(new_lines) - cut]
    return _Want(old_lines, new_lines, old_nl or trail > 0, new == "")


def _split_value(value: str) -> tuple[list[str], bool]:
    flat = value.replace("\r\n", "\n")
    ends = flat.endswith("\n")
    return (flat[:-1] if ends else flat).split("\n"), ends


def _blank_run(lines: Iterable[str]) -> int:
    run = 0
    for line in lines:
        if line.strip():
            break
        run += 1
    return run


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _width(indent: str) -> int:
    return len(indent.expandtabs(TAB))


# -- comparison keys ----------------------------------------------------------------------

_PUNCT_SPACE = re.compile(r" (?=[^\w\s])|(?<=[^\w\s]) ")
_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2026": "...",
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
    }
)


def _rstrip_key(line: str) -> str:
    return line.rstrip()


def _strip_key(line: str) -> str:
    return line.strip()


def _space_key(line: str) -> str:
    collapsed = " ".join(line.split())
    return _PUNCT_SPACE.sub("", collapsed) if " " in collapsed else collapsed


def _unicode_key(line: str) -> str:
    return _space_key(line.translate(_TYPOGRAPHIC))


Key = Callable[[str], str]
LINE_MATCHERS: list[tuple[str, Key]] = [
    ("trailing-whitespace", _rstrip_key),
    ("indentation", _strip_key),
    ("whitespace", _space_key),
    ("unicode", _unicode_key),
]
