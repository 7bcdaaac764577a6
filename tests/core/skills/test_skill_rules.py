"""``allowed-tools``: "A space-separated string of tools that are pre-approved to run"
(the spec; Claude Code's permission-rule syntax: ``Bash(git:*)``, ``Read``,
``Edit(src/**)``, ``mcp__server``). Read into tui-agent's tools and the permission rules'
patterns; a compound command is pre-approved only when every part of it fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.command_hooks import CLAUDE_TOOL_NAMES
from tui_agent.permissions import matches, subjects_for
from tui_agent.skills import Part, Rule, read_rules

OURS = ["read", "write", "edit", "execute", "grep", "glob", "mcp_github_issue", "skill"]
ROOT = Path("/work/project")


def fits(word: str, tool: str, args: dict[str, object], aliases: tuple[str, ...] = ()) -> bool:
    [rule], notes = read_rules([word], CLAUDE_TOOL_NAMES, OURS)
    assert notes == []
    parts = [Part(s.text, s.opaque) for s in subjects_for(tool, args, ROOT, ROOT)]
    return rule.fits(tool, aliases, parts, matches)


@pytest.mark.parametrize(
    ("word", "tool", "args", "expected"),
    [
        ("Bash(git:*)", "execute", {"command": "git status"}, True),
        ("Bash(git:*)", "execute", {"command": "git"}, True),
        ("Bash(git:*)", "execute", {"command": "gitk --all"}, False),  # a word, not a prefix
        ("Bash(git:*)", "execute", {"command": "git log && rm -rf build"}, False),
        ("Bash(git:*)", "execute", {"command": "git log | sh"}, False),  # sh reads stdin
        ("Bash(git:*)", "execute", {"command": "echo $(rm -rf x) && git log"}, False),
        ("Bash(git log:*)", "execute", {"command": "git log --oneline v1..HEAD"}, True),
        ("Bash(git log:*)", "execute", {"command": "git push"}, False),
        ("Bash(npm run *)", "execute", {"command": "npm run test"}, True),
        ("Bash(make)", "execute", {"command": "make"}, True),
        ("Bash(make)", "execute", {"command": "make install"}, False),
        ("Bash", "execute", {"command": "anything at all"}, True),
        ("Bash(git:*)", "read", {"path": "a.txt"}, False),
        ("Read", "read", {"path": "/etc/hosts"}, True),
        ("Edit(src/**)", "edit", {"path": "src/a/b.py"}, True),
        ("Edit(src/**)", "edit", {"path": "tests/b.py"}, False),
        ("Edit(*.md)", "edit", {"path": "docs/deep/x.md"}, True),  # a bare name: any depth
        ("Edit(/docs/*.md)", "edit", {"path": "docs/x.md"}, True),
        ("Write(Makefile)", "write", {"path": "sub/Makefile"}, True),
        ("Write(Makefile)", "write", {"path": "sub/Makefile.bak"}, False),
        ("mcp__github", "mcp_github_issue", {}, True),
        ("mcp__github__issue", "mcp_github_issue", {}, True),
        ("mcp__gitlab", "mcp_github_issue", {}, False),
        ("skill", "skill", {"name": "x"}, True),  # one of ours, by its own name
    ],
)
def test_a_rule_fits_the_calls_it_names(
    word: str, tool: str, args: dict[str, object], expected: bool
) -> None:
    aliases = ("mcp__github__issue",) if tool.startswith("mcp_") else ()
    assert fits(word, tool, args, aliases) is expected


def test_words_that_name_nothing_here_are_notes() -> None:
    rules, notes = read_rules(
        ["Read", "WebSearch", "Grep(*.py)", "mcp__x(y)", "Bash(git:*)"], CLAUDE_TOOL_NAMES, OURS
    )
    assert rules == [Rule("Read", "read"), Rule("Bash(git:*)", "execute", "git *")]
    assert notes == [
        "WebSearch: no such tool here",
        "Grep(*.py): a pattern on Grep is not decided here (write Grep for all of it)",
        "mcp__x(y): an MCP tool takes no pattern",
    ]
