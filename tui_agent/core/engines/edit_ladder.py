"""The tolerant ladder (``_tolerant``): the matchers tried, each looser than the one
before, when ``old`` is not in the text as given: whole lines by comparison keys, a
fragment of one line, escapes and line numbers read out of ``old``, ``old`` without its
first line's indentation, block anchors; ``new`` re-indented to the file's terms; and the
closest text, named in the error for a retry.
"""

from __future__ import annotations

import dataclasses
import difflib
import heapq
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from .edit_base import (
    ANCHOR_SIMILARITY,
    LINE_MATCHERS,
    MATCHERS,
    TAB,
    Applied,
    EditError,
    Key,
    _dominant_eol,
    _indent,
    _space_key,
    _split_text,
    _to_eol,
    _Want,
    _want,
    _width,
)

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
