"""Reading a ``SKILL.md`` as the Agent Skills specification says (agentskills.io, and its
reference validator ``skills-ref``): real skills from anthropics/skills read whole, each
broken rule one load problem naming the file and line, and Claude Code's fields read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, write

from tui_agent.skills import read_skill

SKILLS = FIXTURES / "skills"


def test_the_anthropics_skills_read_whole() -> None:
    """ "The name and description fields are loaded at startup"; the body is "the
    Markdown body after the frontmatter"."""
    path = SKILLS / "anthropics" / "webapp-testing" / "SKILL.md"
    reading = read_skill(path, source="user", place="~/.agents/skills")
    assert reading.problems == [] and reading.notes == []
    skill = reading.skill
    assert skill is not None
    assert skill.name == "webapp-testing"
    assert skill.description.startswith("Toolkit for interacting with and testing local web")
    assert skill.license == "Complete terms in LICENSE.txt"
    assert skill.body.startswith("# Web Application Testing")
    assert "---" not in skill.body.splitlines()[0]
    assert skill.size == path.stat().st_size == 3913
    assert skill.folder == path.parent
    assert (skill.model_invocable, skill.user_invocable, skill.allowed_tools) == (True, True, ())


@pytest.mark.parametrize(
    ("folder", "line", "said"),
    [
        # "Must not contain consecutive hyphens (--)"
        ("bad-name", 2, "the name 'bad--name' must not hold two hyphens in a row"),
        # "May only contain unicode lowercase alphanumeric characters"
        ("Bad-Case", 2, "the name 'Bad-Case' must be lowercase"),
        # description: "Must be 1-1024 characters"
        ("long-description", 3, "description is 1039 characters: at most 1024"),
        ("no-description", 2, "no description: the model could not know when to use it"),
        # name: "Must match the parent directory name"
        ("wrong-folder", 2, "the name 'right-name' must be the folder's name (wrong-folder)"),
        ("bad-yaml", 4, "the front matter is not valid YAML"),
    ],
)
def test_each_broken_rule_is_one_problem_with_file_and_line(
    folder: str, line: int, said: str
) -> None:
    path = SKILLS / "made" / "invalid" / folder / "SKILL.md"
    reading = read_skill(path, source="project", place=".agents/skills")
    assert reading.skill is None
    [problem] = reading.problems
    assert problem.path == f"{path}:{line}"
    assert problem.error.startswith(said), problem.error


def test_an_unquoted_colon_is_read_as_other_clients_read_it() -> None:
    """Client guide: "Consider a fallback that wraps such values in quotes"."""
    path = SKILLS / "made" / "valid" / "colon-fallback" / "SKILL.md"
    reading = read_skill(path, source="user", place="~/.agents/skills")
    assert reading.problems == []
    assert reading.skill is not None
    assert reading.skill.description.startswith("Use this skill when: the user asks")
    assert "read as a quoted string" in reading.notes[0]


def test_claude_codes_fields_are_honoured() -> None:
    """Claude Code's ``allowed-tools`` (a space list of its permission rules),
    ``argument-hint``, ``disable-model-invocation`` and ``user-invocable``."""
    valid = SKILLS / "made" / "valid"
    summary = read_skill(valid / "git-summary" / "SKILL.md", source="user", place="x").skill
    assert summary is not None
    assert summary.allowed_tools == ("Bash(git log:*)", "Bash(git diff:*)", "Read")
    assert summary.argument_hint == "[REVISION]"
    deploy = read_skill(valid / "deploy" / "SKILL.md", source="user", place="x").skill
    assert deploy is not None and not deploy.model_invocable and deploy.user_invocable
    style = read_skill(valid / "house-style" / "SKILL.md", source="user", place="x").skill
    assert style is not None and style.model_invocable and not style.user_invocable


@pytest.mark.parametrize(
    ("front", "said"),
    [
        ("name: x-skill\ndescription: d\ncompatibility: " + "c" * 501, "compatibility must be"),
        ("name: x-skill\ndescription: d\nmetadata: just text", "metadata must be a map"),
        ("name: x-skill\ndescription: d\nallowed-tools: {Read: true}", "allowed-tools must be"),
        ("name: -x-skill\ndescription: d", "must not start or end with a hyphen"),
        ("name: x_skill\ndescription: d", "may hold only letters, digits and hyphens"),
        ("name: " + "x" * 65 + "\ndescription: d", "is 65 characters: at most 64"),
        ("description: d", "no name: the spec requires one"),
    ],
)
def test_the_other_rules_of_the_spec(tmp_path: Path, front: str, said: str) -> None:
    path = write(tmp_path / "x-skill" / "SKILL.md", f"---\n{front}\n---\nBody.\n")
    reading = read_skill(path, source="user", place="x")
    assert reading.skill is None
    assert any(said in p.error for p in reading.problems), reading.problems


def test_a_file_without_front_matter_is_a_problem_on_line_1(tmp_path: Path) -> None:
    path = write(tmp_path / "plain" / "SKILL.md", "# Just Markdown\n")
    [problem] = read_skill(path, source="user", place="x").problems
    assert problem.path.endswith("SKILL.md:1") and "no front matter" in problem.error


def test_in_claude_codes_folders_a_missing_name_is_the_folders(tmp_path: Path) -> None:
    """Claude Code: "name: … If omitted, uses the directory name"."""
    path = write(tmp_path / "explain-code" / "SKILL.md", "---\ndescription: Explains.\n---\nHi\n")
    assert read_skill(path, source="project", place=".agents/skills").skill is None
    reading = read_skill(path, source="project", place=".claude/skills", claude=True)
    assert reading.skill is not None and reading.skill.name == "explain-code"
    assert "no name: the folder's (explain-code)" in reading.notes[0]


def test_unicode_lowercase_names_pass_as_the_reference_validator_lets_them(
    tmp_path: Path,
) -> None:
    """skills-ref: "Skill names support i18n characters (Unicode letters) plus hyphens"."""
    shutil.rmtree(tmp_path, ignore_errors=True)
    path = write(tmp_path / "résumé" / "SKILL.md", "---\nname: résumé\ndescription: d\n---\n")
    skill = read_skill(path, source="user", place="x").skill
    assert skill is not None and skill.name == "résumé"


def test_a_windows_file_reads_too(tmp_path: Path) -> None:
    """A byte-order mark and CRLF line ends (what Windows editors write)."""
    text = "\ufeff---\r\nname: crlf\r\ndescription: Written on Windows.\r\n---\r\nBody.\r\n"
    path = tmp_path / "crlf" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(text.encode("utf-8"))
    reading = read_skill(path, source="user", place="x")
    assert reading.problems == []
    assert reading.skill is not None and reading.skill.body == "Body."
