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

This module owns ``apply_edit`` and ``apply_edits``. Beside it, re-exported here:
``edit_base`` (the types, the exact match, ``unified_diff``, lines and comparison keys)
and ``edit_ladder`` (the tolerant matchers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .edit_base import (
    ANCHOR_SIMILARITY,
    LINE_MATCHERS,
    MATCHERS,
    NO_NEWLINE,
    TAB,
    Applied,
    Edit,
    EditError,
    Key,
    _dominant_eol,
    _replace_exact,
    _to_eol,
    unified_diff,
)
from .edit_ladder import _tolerant, _unindented

# the names this module had before its split (issue 28), still imported from here
__all__ = [
    "ANCHOR_SIMILARITY",
    "LINE_MATCHERS",
    "MATCHERS",
    "NO_NEWLINE",
    "TAB",
    "Applied",
    "Edit",
    "EditError",
    "Key",
    "apply_edit",
    "apply_edits",
    "unified_diff",
]


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
