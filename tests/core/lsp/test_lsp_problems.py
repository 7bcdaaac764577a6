"""Which problems an edit introduced (core/lsp/problems.py): a problem that was there
before, though its line moved or was edited, is not new; one more of a kind is."""

from __future__ import annotations

import pytest

from tui_agent.core.lsp.problems import introduced, listing, summary, wanted
from tui_agent.lsp import Problem


def undefined(line: int, name: str = "x", column: int = 5) -> Problem:
    return Problem(line, column, "error", "pyflakes", "", f"undefined name '{name}'")


def unused(line: int) -> Problem:
    return Problem(line, 1, "warning", "pyflakes", "", "'os' imported but unused")


OLD = "import os\n\ndef f():\n    x\n"


@pytest.mark.parametrize(
    ("before", "old", "after", "new", "want"),
    [
        # nothing before, one after: new
        ([], "def f():\n    pass\n", [undefined(2)], "def f():\n    x\n", [undefined(2)]),
        # the same problem, moved down by two added lines: not new
        ([undefined(4)], OLD, [undefined(6)], "import os\n\n\n\ndef f():\n    x\n", []),
        # the problem's own line edited (still the same kind): not new
        ([undefined(4)], OLD, [undefined(4, column=9)], "import os\n\ndef f():\n    y = x\n", []),
        # a second one of the same kind: one is new (the one on a new line)
        ([undefined(4)], OLD, [undefined(4), undefined(5)], OLD + "    x\n", [undefined(5)]),
        # a fix: nothing after, nothing new
        ([undefined(4)], OLD, [], "import os\n\ndef f():\n    pass\n", []),
        # another kind on the same line: new
        (
            [undefined(4)],
            OLD,
            [undefined(4), undefined(4, "y", 7)],
            "import os\n\ndef f():\n    x + y\n",
            [undefined(4, "y", 7)],
        ),
    ],
)
def test_introduced(
    before: list[Problem], old: str, after: list[Problem], new: str, want: list[Problem]
) -> None:
    assert introduced(before, old, after, new) == want


def test_wanted_keeps_errors_unless_warnings_are_asked_for() -> None:
    found = [unused(1), undefined(4), undefined(2)]
    assert wanted(found, warnings=False) == [undefined(2), undefined(4)]
    assert wanted(found, warnings=True) == [unused(1), undefined(2), undefined(4)]


def test_summary_and_listing_are_capped_and_1_based() -> None:
    found = [undefined(n) for n in range(1, 5)] + [unused(9)]
    assert summary(found) == "4 new errors, 1 new warning"
    assert summary(found[:1], new=False) == "1 error"
    assert listing(found, 2).splitlines() == [
        "1:5 error [pyflakes] undefined name 'x'",
        "2:5 error [pyflakes] undefined name 'x'",
        "… and 3 more",
    ]


def test_a_lsp_diagnostic_is_read_1_based_and_without_severity_as_an_error() -> None:
    from lsprotocol import types

    diagnostic = types.Diagnostic(
        range=types.Range(types.Position(0, 4), types.Position(0, 9)),
        message="bad\n  thing",
        code=42,
    )
    assert Problem.from_lsp(diagnostic) == Problem(1, 5, "error", "", "42", "bad thing")
