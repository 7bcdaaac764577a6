"""Tolerant text replacement for the ``edit`` tool (issue 19).

Models write ``old`` from memory, and local ones get the whitespace slightly wrong: tabs
for spaces, a lost trailing space, another indentation level, CRLF, escaped quotes. With
exact matching only, each slip costs a round trip. So ``old`` is looked for exactly
first, then by a ladder of matchers, each looser than the one before (``MATCHERS``). The
first matcher that finds anything decides: one place is edited; several places are an
error, never a guess (a looser matcher would only find more of them).

The tolerant matchers compare whole lines and replace whole lines, writing ``new`` in the
file's terms: a line of ``new`` equal to a line of ``old`` is the file's line as it stands
(its indentation, trailing spaces, quotes), and the other lines are re-indented from the
nearest such line (tabs or spaces, the level, the file's indentation unit). The file's
line endings and final newline stay as they were.

Learnt from opencode's chain of replacers (line-trimmed, block anchors, whitespace- and
escape-normalised, indentation-flexible); unlike it, ``new`` is re-indented, a block
anchor needs the lines between to be similar and as many, and any second candidate refuses.
"""

from __future__ import annotations

import dataclasses
import difflib
import heapq
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

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


def apply_edit(
    text: str, old: str, new: str, replace_all: bool = False, where: str = "the file"
) -> Applied:
    """Replace ``old`` with ``new`` in ``text``, or raise ``EditError``.

    ``replace_all`` replaces every exact occurrence (line endings adapted); when there is
    none, the tolerant matchers may still apply it at one place, never at several.
    """
    if old == "":
        raise EditError("old is empty; use write to create or replace a whole file")
    eol = _dominant_eol(text)
    count = text.count(old)
    if count == 1 and not replace_all:
        indented = _unindented(text, old, new)
        if indented is not None:
            return indented
    if count:
        return _replace_exact(text, old, _to_eol(new, eol), count, replace_all, "exact", where)
    variants = {v for v in (_to_eol(old, "\n"), _to_eol(old, "\r\n")) if v != old}
    found = [(v, text.count(v)) for v in sorted(variants) if v in text]
    if len(found) == 1:
        variant, count = found[0]
        fixed = _to_eol(new, "\r\n" if "\r\n" in variant else "\n")
        return _replace_exact(text, variant, fixed, count, replace_all, "line-endings", where)
    if len(found) > 1 and not replace_all:
        total = sum(count for _, count in found)
        raise EditError(
            f"old text occurs {total} times in {where} (with either line ending); include "
            "more context to make it unique, or set replace_all"
        )
    applied = _tolerant(text, old, new, where)
    if replace_all:
        note = f"{applied.note}; replace_all: no exact occurrence, so only this one place"
        return dataclasses.replace(applied, note=note)
    return applied


def apply_edits(text: str, edits: Sequence[Edit], where: str = "the file") -> list[Applied]:
    """Apply ``edits`` in order, each to the text the one before left; all or nothing.

    Raises ``EditError`` naming the edit that failed (1-based) and why; the caller writes
    nothing then. The last ``Applied.text`` is the final text.
    """
    applied: list[Applied] = []
    for number, edit in enumerate(edits, 1):
        try:
            applied.append(apply_edit(text, edit.old, edit.new, edit.replace_all, where))
        except EditError as exc:
            if len(edits) == 1:
                raise
            raise EditError(f"edit {number} of {len(edits)} failed: {exc}") from None
        text = applied[-1].text
    return applied


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


# -- the tolerant ladder ------------------------------------------------------------------


class _File:
    """The text being edited, split once, with its keys computed on demand."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _split_text(text)
        self.eol = _dominant_eol(text)
        self._keys: dict[Key, list[str]] = {}
        self._style: tuple[bool, int] | None = None

    def keys(self, key: Key) -> list[str]:
        if key not in self._keys:
            self._keys[key] = [key(line.body) for line in self.lines]
        return self._keys[key]

    def style(self) -> tuple[bool, int]:
        """Whether indentation is in tabs, and its unit in columns."""
        if self._style is None:
            bodies = [line.body for line in self.lines[:5000]]
            tabs = sum(b.startswith("\t") for b in bodies)
            spaces = sum(b.startswith(" ") for b in bodies)
            self._style = (tabs > spaces, _unit(bodies) or TAB)
        return self._style


def _unit(lines: Iterable[str]) -> int | None:
    """The most common step between consecutive indentation widths, in columns."""
    steps: Counter[int] = Counter()
    previous: int | None = None
    for line in lines:
        if not line.strip():
            continue
        width = _width(_indent(line))
        if previous is not None and width > previous:
            steps[width - previous] += 1
        previous = width
    return steps.most_common(1)[0][0] if steps else None


def _tolerant(text: str, old: str, new: str, where: str) -> Applied:
    file = _File(text)
    want = _want(old, new)
    if want is not None:
        found = _line_ladder(file, want, where, LINE_MATCHERS)
        if found is not None:
            return found
    if "\n" not in old.strip("\r\n") and old.strip():
        found = _fragment(file, old, new, where)
        if found is not None:
            return found
    unescaped = _unescape(old)
    if unescaped != old:
        found = _transformed(file, unescaped, _unescape(new), where, "escapes")
        if found is not None:
            return found
    unnumbered = _unnumber(old)
    if unnumbered is not None:
        new = _unnumber(new) or new
        found = _transformed(file, unnumbered, new, where, "line-numbers")
        if found is not None:
            return found
    if want is not None and len(want.old) >= 3:
        found = _block_anchors(file, want, where)
        if found is not None:
            return found
    raise EditError(f"old text not found in {where}{_closest(file, old)}")


def _line_ladder(
    file: _File, want: _Want, where: str, matchers: list[tuple[str, Key]], label: str = ""
) -> Applied | None:
    plain = file.text.isascii() and all(line.isascii() for line in want.old)
    for name, key in matchers:
        if name == "unicode" and plain:
            continue
        wanted = [key(line) for line in want.old]
        keys = file.keys(key)
        n = len(wanted)
        starts = [
            i
            for i in range(len(keys) - n + 1)
            if keys[i] == wanted[0] and keys[i : i + n] == wanted
        ]
        if len(starts) == 1 and n == 1 and name == "whitespace":
            # one whole line, but the same tokens may sit inside other lines too
            spans = _fragment_spans(file.text, want.old[0])
            if len(spans) > 1:
                rows = [file.text.count("\n", 0, s) for s, _ in spans]
                raise _ambiguous(rows, 1, where, label or name)
        if len(starts) > 1:
            raise _ambiguous(starts, n, where, label or name)
        if starts:
            matched = name
            render = _render(file, want, starts[0])
            if name == "indentation" and not render.consistent:
                matched = "trimmed-lines"
            return _applied(file, want, starts[0], render.text, label or matched, matched)
    return None


def _span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _ambiguous(starts: list[int], n: int, where: str, matched: str) -> EditError:
    places = ", ".join(f"{s + 1}-{s + n}" if n > 1 else str(s + 1) for s in starts[:10])
    return EditError(
        f"old text is not in {where} as given, and {len(starts)} places match it "
        f"({matched}: {MATCHERS[matched].split(';')[0]}) at lines {places}; include more "
        "surrounding lines to make it unique"
    )


def _applied(
    file: _File, want: _Want, start: int, replacement: str, matched: str, how: str = ""
) -> Applied:
    lines = file.lines
    end = start + len(want.old) - 1
    begin = lines[start].start
    stop = lines[end].start + len(lines[end].body)
    if want.newline:
        stop += len(lines[end].eol)
    text = file.text[:begin] + replacement + file.text[stop:]
    note = f"old was not found exactly; matched {_span(start + 1, end + 1)} {MATCHERS[matched]}"
    if how and how != matched:
        note += f" (then {MATCHERS[how]})"
    return Applied(text, 1, matched, start + 1, end + 1, note)


@dataclass(frozen=True)
class _Rendered:
    text: str
    consistent: bool  # old's indentation maps onto the file's by one shift and scale


def _render(file: _File, want: _Want, start: int) -> _Rendered:
    """``new`` written in place of the file's lines ``start``… (as many as old has)."""
    block = file.lines[start : start + len(want.old)]
    bodies = [line.body for line in block]
    eol = block[0].eol or file.eol
    scale, consistent = _scale(want, bodies, file)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, want.old, want.new, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(bodies[a0:a1])
            continue
        for k in range(b1 - b0):  # read against the old line it replaces, else the one before
            ref = min(a0 + k, a1 - 1) if tag == "replace" else max(a0 - 1, 0)
            ref = _non_blank(want.old, ref)
            out.append(_reindent(want.new[b0 + k], want.old[ref], bodies[ref], scale, file))
    if want.delete:
        return _Rendered("", consistent)
    text = eol.join(out)
    if want.newline and block[-1].eol:
        text += block[-1].eol
    return _Rendered(text, consistent)


def _non_blank(lines: list[str], index: int) -> int:
    """``index``, or the nearest line before it (else after it) that is not blank."""
    order: list[int] = list(range(index, -1, -1)) + list(range(index + 1, len(lines)))
    return next((k for k in order if lines[k].strip()), index)


def _scale(want: _Want, bodies: list[str], file: _File) -> tuple[Fraction, bool]:
    """File columns per column of old's indentation, and whether one shift and one scale
    map every line of old onto the file's (else the lines only matched trimmed)."""
    pairs = [
        (_width(_indent(o)), _width(_indent(f)))
        for o, f in zip(want.old, bodies, strict=True)
        if o.strip()
    ]
    o0, f0 = pairs[0]
    old_unit = _unit([*want.old, *want.new]) or file.style()[1]
    by_units = Fraction(file.style()[1], old_unit)
    if all(o == o0 for o, _ in pairs):  # one level in old: only the units can say
        consistent = all(f == f0 for _, f in pairs)
        return (Fraction(1) if o0 == f0 else by_units), consistent
    do, df = next((o - o0, f - f0) for o, f in pairs if o != o0)
    scale = Fraction(df, do)
    if scale > 0 and all(f - f0 == scale * (o - o0) for o, f in pairs):
        return scale, True
    return by_units, False


def _reindent(line: str, old_ref: str, file_ref: str, scale: Fraction, file: _File) -> str:
    """``line`` of new, indented as the file indents the line of old it is read against."""
    if not line.strip():
        return ""
    mine, theirs, filed = _indent(line), _indent(old_ref), _indent(file_ref)
    rest = line[len(mine) :]
    if mine == theirs:
        return filed + rest
    delta = round((_width(mine) - _width(theirs)) * scale)
    if delta > 0:
        return filed + _spaces(delta, file) + rest
    return _spaces(max(_width(filed) + delta, 0), file) + rest


def _spaces(width: int, file: _File) -> str:
    tabs, _ = file.style()
    return "\t" * (width // TAB) + " " * (width % TAB) if tabs else " " * width


# -- a fragment of one line ---------------------------------------------------------------

_TOKEN = re.compile(r"\w+|[^\w\s]")


def _fragment_spans(text: str, old: str) -> list[tuple[int, int]]:
    """Where part of one line has old's tokens in order, with other spacing (``foo( a,b )``
    for ``foo(a, b)``): spaces optional next to punctuation, whole words only."""
    tokens = _TOKEN.findall(old)
    if not tokens:
        return []
    pattern = r"(?<!\w)" if _wordy(tokens[0][0]) else ""
    for before, token in zip([None, *tokens], tokens, strict=False):
        if before is not None:
            pattern += r"[ \t]+" if _wordy(before[-1]) and _wordy(token[0]) else r"[ \t]*"
        pattern += re.escape(token)
    pattern += r"(?!\w)" if _wordy(tokens[-1][-1]) else ""
    if old.endswith("\n"):
        pattern += r"[ \t]*\r?\n"
    return [m.span() for m in re.finditer(pattern, text)]


def _fragment(file: _File, old: str, new: str, where: str) -> Applied | None:
    spans = _fragment_spans(file.text, old)
    if not spans:
        return None
    rows = [file.text.count("\n", 0, s) for s, _ in spans]
    if len(spans) > 1:
        raise _ambiguous(rows, 1, where, "whitespace")
    # the spaces around old were not matched: the same ones around new go too
    lead, tail = _indent(old), old.rstrip("\r\n")[len(old.rstrip("\r\n").rstrip(" \t")) :]
    if lead and new.startswith(lead):
        new = new[len(lead) :]
    if tail and new.rstrip("\r\n").endswith(tail):
        ending = new[len(new.rstrip("\r\n")) :]
        new = new.rstrip("\r\n")[: -len(tail)] + ending
    begin, stop = spans[0]
    text = file.text[:begin] + _to_eol(new, file.eol) + file.text[stop:]
    line = rows[0] + 1
    note = f"old was not found exactly; matched on line {line} {MATCHERS['whitespace']}"
    return Applied(text, 1, "whitespace", line, line, note)


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"


# -- escapes ------------------------------------------------------------------------------

_ESCAPE = re.compile(r"\\([nt\"'\\])")
_ESCAPED = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def _unescape(value: str) -> str:
    """One level of backslash escapes undone, as a model double-escaping JSON writes them."""
    return _ESCAPE.sub(lambda m: _ESCAPED[m.group(1)], value)


def _transformed(file: _File, old: str, new: str, where: str, label: str) -> Applied | None:
    """``old`` and ``new`` rewritten by ``label`` (unescaped, unnumbered): exactly, else
    by the first line matchers."""
    count = file.text.count(old)
    if count > 1:
        raise EditError(
            f"old text is not in {where} as given, and occurs {count} times ({label}: "
            f"{MATCHERS[label]}); include more context to make it unique"
        )
    if count == 1:
        begin = file.text.find(old)
        text = file.text[:begin] + _to_eol(new, file.eol) + file.text[begin + len(old) :]
        line = file.text.count("\n", 0, begin) + 1
        last = line + old.count("\n") - (1 if old.endswith("\n") else 0)
        note = f"old was not found exactly; matched {_span(line, last)} {MATCHERS[label]}"
        return Applied(text, 1, label, line, last, note)
    want = _want(old, new)
    if want is None:
        return None
    return _line_ladder(file, want, where, LINE_MATCHERS[:3], label)


_NUMBERED = re.compile(r"^ *\d+\t")


def _unnumber(value: str) -> str | None:
    """``value`` without read's ``     12<tab>`` prefixes, when every line has one."""
    lines = value.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    if not lines or not all(_NUMBERED.match(line) for line in lines):
        return None
    rest = "\n" if value.endswith("\n") else ""
    return "\n".join(_NUMBERED.sub("", line, count=1) for line in lines) + rest


# -- old without its first line's indentation ---------------------------------------------


def _unindented(text: str, old: str, new: str) -> Applied | None:
    """``old`` found once, whole lines but the first without its indentation, and ``new``
    of several lines: taken literally, new's later lines would land at column 0, so they
    are indented as the file's lines (the indentation matcher's rendering)."""
    at = text.find(old)
    line_start = text.rfind("\n", 0, at) + 1
    end = at + len(old)
    if (
        at == line_start
        or text[line_start:at].strip(" \t")
        or not old.strip()
        or old[0] in "\r\n"
        or len(new.strip("\r\n").splitlines()) < 2
        or not (old.endswith("\n") or end == len(text) or text[end] in "\r\n")
    ):
        return None
    want = _want(old, new)
    if want is None:
        return None
    file = _File(text)
    start = text.count("\n", 0, at)
    applied = _applied(file, want, start, _render(file, want, start).text, "indentation")
    note = (
        f"old left out the indentation of line {start + 1}; new's lines were indented as the file's"
    )
    return dataclasses.replace(applied, note=note)


# -- block anchors ------------------------------------------------------------------------


def _block_anchors(file: _File, want: _Want, where: str) -> Applied | None:
    """First and last lines equal (spacing aside), as many lines between and similar."""
    keys = file.keys(_space_key)
    wanted = [_space_key(line) for line in want.old]
    n = len(wanted)
    middle = "\n".join(wanted[1:-1])
    fits: list[tuple[int, float]] = []
    for i in range(len(keys) - n + 1):
        if keys[i] != wanted[0] or keys[i + n - 1] != wanted[-1]:
            continue
        ratio = difflib.SequenceMatcher(
            None, "\n".join(keys[i + 1 : i + n - 1]), middle, autojunk=False
        ).ratio()
        if ratio >= ANCHOR_SIMILARITY:
            fits.append((i, ratio))
    if len(fits) > 1:
        raise _ambiguous([i for i, _ in fits], n, where, "block-anchors")
    if not fits:
        return None
    start, ratio = fits[0]
    applied = _applied(file, want, start, _render(file, want, start).text, "block-anchors")
    note = f"{applied.note} ({ratio:.0%}); lines of new equal to old's keep the file's text"
    return dataclasses.replace(applied, note=note)


# -- the closest text, for a retry --------------------------------------------------------


def _likely_windows(keys: list[str], old: list[str], n: int, keep: int = 20) -> list[int]:
    """The starts of the ``keep`` windows of ``n`` lines sharing most tokens with old: the
    only ones difflib compares (comparing every window took seconds on 20,000 lines)."""
    wanted = Counter(t for line in old for t in _TOKEN.findall(line))
    scores = [sum(1 for t in set(_TOKEN.findall(key)) if t in wanted) for key in keys]
    windows: list[tuple[int, int]] = []
    total = sum(scores[:n])
    for i in range(len(keys) - n + 1):
        if i:
            total += scores[i + n - 1] - scores[i - 1]
        windows.append((total, -i))
    return sorted(-i for _, i in heapq.nlargest(keep, windows))


def _closest(file: _File, old: str) -> str:
    """``; the closest lines are 4-6 (83% similar): …`` to copy from, or ``""``."""
    want = _want(old, "")
    if want is None or not file.lines:
        return ""
    keys = file.keys(_space_key)
    n = min(len(want.old), len(keys))
    target = "\n".join(_space_key(line) for line in want.old)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    best, best_at = 0.0, -1
    for i in _likely_windows(keys, want.old, n):
        matcher.set_seq1("\n".join(keys[i : i + n]))
        if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best:
            ratio = matcher.ratio()
            if ratio > best:
                best, best_at = ratio, i
    if best < 0.5:
        return "; nothing in it is close (read the file again)"
    shown = [
        f"{k + 1:>6}\t{file.lines[k].body[:200]}" for k in range(best_at, best_at + min(n, 20))
    ]
    return (
        f"; the closest is {_span(best_at + 1, best_at + n)} ({best:.0%} similar):\n"
        + "\n".join(shown)
        + "\ncopy old from the file as it is there, or read it again"
    )
