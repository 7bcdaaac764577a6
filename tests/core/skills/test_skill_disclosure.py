"""Progressive disclosure as the Agent Skills client guide lays it out: the catalog (name
and description) in the ``skill`` tool's description, the content wrapped in
``<skill_content>`` with the skill's folder and its files listed (not read), ``/name
ARGS`` by Claude Code's argument rules, and what a compaction keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, write

import tui_agent
from tui_agent import AssistantMessage, Result, ToolMessage, UserMessage
from tui_agent.core.skills.disclosure import MAX_RESOURCES, resources, with_arguments
from tui_agent.skills import (
    carry,
    catalog_tokens,
    content,
    held,
    loaded_names,
    parameters,
    prompt,
    read_skill,
    tool_description,
)
from tui_agent.testing import transcript_problem

SKILLS = FIXTURES / "skills"


def load(*parts: str) -> tui_agent.skills.Skill:
    skill = read_skill(SKILLS.joinpath(*parts, "SKILL.md"), source="user", place="x").skill
    assert skill is not None
    return skill


WEBAPP = load("anthropics", "webapp-testing")
MCP = load("anthropics", "mcp-builder")


def test_the_catalog_is_each_skills_name_and_description() -> None:
    """Tier 1: "Name + description", "Embed the catalog in the description of a dedicated
    skill-activation tool"; "constrain the name parameter to the set of valid skill names
    (e.g., as an enum)"."""
    text = tool_description([MCP, WEBAPP])
    assert f"- mcp-builder: {MCP.description}" in text
    assert f"- webapp-testing: {WEBAPP.description}" in text
    assert "Playwright" in text and "# Web Application Testing" not in text  # no body
    assert parameters([MCP, WEBAPP])["name"]["enum"] == ["mcp-builder", "webapp-testing"]


def test_the_catalogs_cost_in_tokens() -> None:
    """ "Each skill adds roughly 50-100 tokens to the catalog"; nothing without skills.
    (The README's figures: the tool's fixed part and each skill's line and enum entry.)"""
    assert catalog_tokens([]) == 0
    web, mcp, both = catalog_tokens([WEBAPP]), catalog_tokens([MCP]), catalog_tokens([MCP, WEBAPP])
    fixed = web + mcp - both
    assert 50 <= both - web <= 100 and 50 <= both - mcp <= 100, (both - web, both - mcp)
    assert 0 < fixed <= 120, fixed


def test_loading_gives_the_body_the_folder_and_the_files_not_their_text() -> None:
    """ "Skill directory: …", "Relative paths in this skill are relative to the skill
    directory", "<skill_resources>" listing files, which the client "should not eagerly
    read"."""
    text = content(WEBAPP)
    assert text.startswith('<skill_content name="webapp-testing">\n# Web Application Testing')
    assert text.endswith("</skill_content>")
    assert f"Skill directory: {WEBAPP.folder}" in text
    assert WEBAPP.folder.is_absolute()
    for name in ("scripts/with_server.py", "examples/console_logging.py", "LICENSE.txt"):
        assert f"<file>{name}</file>" in text
    assert "<file>SKILL.md</file>" not in text
    assert "def is_server_ready" not in text  # the script is listed, not read
    assert "name: webapp-testing" not in text  # the front matter is taken off


def test_a_large_folder_is_listed_up_to_a_cap(tmp_path: Path) -> None:
    """ "For large skill directories, consider capping the listing and noting that it may
    be incomplete"."""
    for n in range(MAX_RESOURCES + 7):
        write(tmp_path / "refs" / f"r{n:03d}.md", "x")
    write(tmp_path / ".git" / "HEAD", "x")
    files, more = resources(tmp_path)
    assert len(files) == MAX_RESOURCES and more == 7
    assert files[0] == "refs/r000.md"


@pytest.mark.parametrize(
    ("body", "arguments", "sent"),
    [
        ("Since $ARGUMENTS.", "v1.0 fast", "Since v1.0 fast."),
        ("A $0, B $1, C $2.", 'v1 "two words"', "A v1, B two words, C $2."),
        ("A $ARGUMENTS[1] B $ARGUMENTS[5].", "x y", "A y B ."),
        ("No placeholder.", "v1.0", "No placeholder.\n\nARGUMENTS: v1.0"),
        ("No placeholder.", "", "No placeholder."),
    ],
)
def test_arguments_go_in_by_claude_codes_rules(body: str, arguments: str, sent: str) -> None:
    """Claude Code: "$ARGUMENTS", "$ARGUMENTS[N]", "$N" (from 0); with no placeholder,
    "ARGUMENTS: <value>" is appended."""
    assert with_arguments(body, arguments) == sent


def test_a_slash_prompt_is_the_content_with_the_arguments() -> None:
    skill = load("made", "valid", "git-summary")
    text = prompt(skill, "v1.0")
    assert text.startswith('<skill_content name="git-summary">')
    assert "git log --oneline v1.0..HEAD" in text and "git diff --stat v1.0" in text


def conversation(*results: dict[str, object]) -> list[tui_agent.Message]:
    messages: list[tui_agent.Message] = [UserMessage("test the app")]
    for n, data in enumerate(results):
        call = tui_agent.Call(f"c{n}", "skill", json.dumps({"name": "webapp-testing"}))
        messages.append(AssistantMessage("", calls=[call]))
        messages.append(ToolMessage(f"c{n}", Result(data)))
    return messages


def test_carry_gives_a_pruned_skill_its_content_back() -> None:
    """Client guide: "exempt skill content from pruning"."""
    whole = conversation({"output": content(WEBAPP)})
    assert held(whole, "webapp-testing") and loaded_names(whole) == ["webapp-testing"]
    assert carry(whole, [WEBAPP]) == whole
    pruned = conversation({"output": "[pruned to save context …]", "pruned": True})
    assert not held(pruned, "webapp-testing")
    kept = carry(pruned, [WEBAPP])
    assert kept[:-1] == pruned[:-1]
    assert kept[-1].result["output"] == content(WEBAPP)
    assert kept[-1].result["note"] == "kept whole through a compaction"
    assert transcript_problem(kept) is None


def test_carry_puts_a_skill_summarised_away_after_the_summary() -> None:
    summary = UserMessage("Summary of the conversation so far: tests ran.", origin="summary")
    [carried] = carry([summary, UserMessage("go on")], [WEBAPP])[:1]
    assert carried.origin == "summary"
    assert carried.text.startswith(summary.text)
    assert carried.text.endswith(content(WEBAPP))
    assert held([carried], "webapp-testing")
    assert loaded_names([carried]) == ["webapp-testing"]  # a later compaction keeps it too
