"""Where skills are found: the folders of the issue (Claude Code's, opencode's, the
``.agents`` convention, tui-agent's), project over user over Agent Plugins, immediate
children only, an untrusted project's skipped as project code, a plugin's skill kept
inside its plugin."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, write

from tui_agent.core.project.workspace import Workspace
from tui_agent.skills import find_skills, plugin_place

SKILLS = FIXTURES / "skills"


def skill(folder: Path, name: str, description: str = "Does a thing.") -> Path:
    return write(
        folder / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\n"
    )


@pytest.mark.parametrize(
    "place",
    [
        ".agents/skills",
        ".claude/skills",
        ".opencode/skill",
        ".opencode/skills",
        ".tui-agent/skills",
    ],
)
def test_each_project_folder_is_read_when_trusted(project: Path, place: str) -> None:
    skill(project / place, "lint-fix")
    found = find_skills(project, trusted=True)
    assert list(found.skills) == ["lint-fix"]
    assert found.skills["lint-fix"].source == "project"
    assert found.skills["lint-fix"].place == place


@pytest.mark.parametrize(
    "place",
    [
        ".agents/skills",
        ".claude/skills",
        ".config/tui-agent/skills",
        ".config/opencode/skills",  # opencode's ($XDG_CONFIG_HOME/opencode)
        ".config/opencode/skill",
    ],
)
def test_each_user_folder_is_read(isolated_home: Path, place: str) -> None:
    skill(isolated_home / place, "lint-fix")
    found = find_skills(None, trusted=False)
    assert found.skills["lint-fix"].source == "user"
    assert found.skills["lint-fix"].place == f"~/{place}"


def test_an_untrusted_projects_skills_are_skipped_project_code(project: Path) -> None:
    """Client guide: "Consider gating project-level skill loading on a trust check"."""
    path = skill(project / ".agents" / "skills", "lint-fix")
    found = find_skills(project, trusted=False)
    assert found.skills == {}
    assert found.skipped == [
        f"{path}: the project is not trusted (tui-agent trust): its skills are not loaded"
    ]
    workspace = Workspace(project)
    assert workspace.project == project
    assert path in workspace.project_code and workspace.needs_trust


def test_project_beats_user_beats_plugin_and_each_clash_is_a_note(
    project: Path, isolated_home: Path, tmp_path: Path
) -> None:
    """Client guide: "project-level skills override user-level skills … Log a warning
    when a collision occurs"."""
    mine = skill(project / ".claude" / "skills", "review", "The project's review.")
    users = skill(isolated_home / ".agents" / "skills", "review", "The user's review.")
    plugin = tmp_path / "plugin"
    theirs = skill(plugin / "skills", "review", "The plugin's review.")
    skill(plugin / "skills", "deploy")
    found = find_skills(
        project, trusted=True, plugins=[plugin_place("ops", plugin / "skills", plugin)]
    )
    assert found.skills["review"].path == mine
    assert found.skills["deploy"].source == "plugin:ops"
    assert found.notes == [
        f"skill review: {mine} is used; {users} has the same name",
        f"skill review: {mine} is used; {theirs} has the same name",
    ]


def test_only_immediate_children_with_a_skill_md(isolated_home: Path) -> None:
    """ "look for subdirectories containing a file named exactly SKILL.md"; "Clients MUST
    NOT recursively search deeper descendants" (Agent Plugins §7.1)."""
    folder = isolated_home / ".agents" / "skills"
    skill(folder, "top")
    skill(folder / "group", "deeper")
    write(folder / "README.md", "not a skill")
    write(folder / "lower" / "skill.md", "---\nname: lower\ndescription: d\n---\n")
    skill(folder, ".hidden")
    assert list(find_skills(None, trusted=False).skills) == ["top"]


def test_a_plugin_skill_outside_its_plugin_is_skipped(tmp_path: Path) -> None:
    """Agent Plugins 1.0 §4.1: "If a discovered SKILL.md does not resolve within the
    plugin root, the client MUST skip that skill"."""
    outside = skill(tmp_path / "elsewhere", "escape")
    plugin = tmp_path / "plugin"
    (plugin / "skills" / "escape").mkdir(parents=True)
    (plugin / "skills" / "escape" / "SKILL.md").symlink_to(outside)
    skill(plugin / "skills", "stays")
    found = find_skills(None, trusted=False, plugins=[plugin_place("p", plugin / "skills", plugin)])
    assert list(found.skills) == ["stays"]
    [problem] = found.problems
    assert problem.path == str(plugin / "skills" / "escape" / "SKILL.md")
    assert "outside the plugin's folder" in problem.error


def test_bad_skills_are_problems_and_the_others_load(project: Path) -> None:
    """ "a bad one is a load problem with the file and line, the others still load"."""
    folder = project / ".agents" / "skills"
    shutil.copytree(SKILLS / "made" / "invalid", folder)
    shutil.copytree(SKILLS / "anthropics" / "webapp-testing", folder / "webapp-testing")
    found = find_skills(project, trusted=True)
    assert list(found.skills) == ["webapp-testing"]
    assert len(found.problems) == 6
    assert {Path(p.path.rsplit(":", 1)[0]).parent.name for p in found.problems} == {
        "Bad-Case", "bad-name", "bad-yaml", "long-description", "no-description", "wrong-folder"
    }  # fmt: skip


def test_a_project_in_the_home_folder_reads_each_skill_once(isolated_home: Path) -> None:
    skill(isolated_home / ".claude" / "skills", "once")
    found = find_skills(isolated_home, trusted=True)
    assert found.skills["once"].source == "project" and found.notes == []
