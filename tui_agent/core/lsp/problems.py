"""Diagnostics as the model reads them, and which of them a change introduced.

Positions are 1-based, as ``read`` numbers lines (the server's column counts UTF-16 code
units: the same as characters outside the astral planes).

"Introduced" is a multiset difference, as positions move when lines are added above a
problem: a problem after the change matches one from before with the same severity,
source, code, message and line text; those left match one with the same severity,
source, code and message anywhere (a pre-existing problem whose line was edited). What
still has no match is new. A change that fixes one problem and makes the same one on
another line is therefore not reported (nothing new in kind).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


@dataclass(frozen=True)
class Problem:
    line: int
    column: int
    severity: str
    source: str
    code: str
    message: str

    def shown(self) -> str:
        origin = " ".join(part for part in (self.source, self.code) if part)
        origin = f" [{origin}]" if origin else ""
        return f"{self.line}:{self.column} {self.severity}{origin} {self.message}"

    @classmethod
    def from_lsp(cls, diagnostic: Any) -> Problem:
        """A lsprotocol ``Diagnostic``; no severity counts as an error."""
        start = diagnostic.range.start
        severity = getattr(diagnostic.severity, "value", diagnostic.severity)
        code = diagnostic.code
        return cls(
            line=start.line + 1,
            column=start.character + 1,
            severity=SEVERITIES.get(severity or 1, "error"),
            source=diagnostic.source or "",
            code="" if code is None else str(code),
            message=" ".join(str(diagnostic.message).split()),
        )


def _kind(problem: Problem) -> tuple[str, str, str, str]:
    return (problem.severity, problem.source, problem.code, problem.message)


def _line(lines: list[str], number: int) -> str:
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


def introduced(
    before: list[Problem], old_text: str, after: list[Problem], new_text: str
) -> list[Problem]:
    """The problems of ``after`` (for ``new_text``) that ``before`` (for ``old_text``) did
    not have, in ``after``'s order."""
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    exact = Counter((_kind(p), _line(old_lines, p.line)) for p in before)
    left: list[Problem] = []
    for problem in after:
        key = (_kind(problem), _line(new_lines, problem.line))
        if exact[key] > 0:
            exact[key] -= 1
        else:
            left.append(problem)
    loose: Counter[tuple[str, str, str, str]] = Counter()
    for (kind, _), count in exact.items():
        loose[kind] += count
    new: list[Problem] = []
    for problem in left:
        if loose[_kind(problem)] > 0:
            loose[_kind(problem)] -= 1
        else:
            new.append(problem)
    return new


def wanted(problems: list[Problem], warnings: bool) -> list[Problem]:
    """Errors, and warnings when asked for; sorted by position."""
    kept = {"error", "warning"} if warnings else {"error"}
    return sorted((p for p in problems if p.severity in kept), key=lambda p: (p.line, p.column))


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(problems: list[Problem], new: bool = True) -> str:
    """``"2 new errors, 1 new warning"`` (``new=False``: ``"2 errors"``); ``""`` for none."""
    adjective = "new " if new else ""
    counts = Counter(p.severity for p in problems)
    parts = [plural(counts[s], adjective + s) for s in ("error", "warning") if counts[s]]
    others = sum(n for s, n in counts.items() if s not in ("error", "warning"))
    if others:
        parts.append(plural(others, adjective + "problem"))
    return ", ".join(parts)


def listing(problems: list[Problem], limit: int) -> str:
    """One problem a line, at most ``limit``, then how many more."""
    lines = [p.shown() for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"… and {len(problems) - limit} more")
    return "\n".join(lines)


def result_mark(result: Mapping[str, Any]) -> tuple[str, str] | None:
    """What the app's edit block and headless's tool line show of an edit's diagnostics,
    with a style: ✔ no new problems, ⚠ 2 new errors, diagnostics unavailable; None when
    the result has none (a file no server serves, a failed edit)."""
    if result.get("ok") is False or "error" in result:
        return None
    count, text = result.get("new_problems"), result.get("diagnostics")
    if isinstance(count, int) and isinstance(text, str):
        if count == 0:
            return ("✔ no new problems", "green")
        return ("⚠ " + text.split("\n", 1)[0].rsplit(" (", 1)[0], "yellow")
    if isinstance(text, str) and text.startswith("unavailable"):
        return ("diagnostics unavailable", "dim")
    return None
