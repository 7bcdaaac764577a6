"""Where skills are found and which one wins a name.

A skill is an immediate child folder of a skills folder holding a file named exactly
``SKILL.md`` (nothing deeper is searched; dot folders are skipped). Folders, in the order
that wins a name clash (the first found keeps the name; the others are notes)::

    project   .tui-agent/skills  .agents/skills  .claude/skills  .opencode/skills
              .opencode/skill                      (a trusted project's only)
    user      ~/.config/tui-agent/skills  ~/.agents/skills  ~/.claude/skills
              ~/.config/opencode/skills  ~/.config/opencode/skill  ($XDG_CONFIG_HOME/opencode)
    plugins   <Agent Plugin>/skills               (source ``plugin:<name>``)

Project beats user (the convention the Agent Skills client guide calls universal), and
both beat the skills of Agent Plugins. A project's skills are project code: they wait for
the folder to be trusted (``register_project_code``), since a skill's instructions steer
the model and its scripts run; an untrusted project's are listed in ``SkillSet.skipped``.
A plugin's ``SKILL.md`` that resolves outside the plugin's root is skipped (Agent Plugins
1.0 §4.1).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..project.config import LoadProblem
from ..project.workspace import register_project_code
from ..util import paths
from .reading import FILE, Skill, read_skill

UNTRUSTED = "the project is not trusted (tui-agent trust): its skills are not loaded"
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})


@dataclass(frozen=True)
class Place:
    """A folder of skill folders: where it is, whose (``source``), how lists name it
    (``label``), whether it is Claude Code's (a missing ``name`` is the folder's there)
    and, for an Agent Plugin's, the plugin's root (a skill must stay inside it)."""

    path: Path
    source: str
    label: str
    claude: bool = False
    root: Path | None = None


@dataclass
class SkillSet:
    """The skills by name (project's, then user's, then plugins': the first found of a
    name keeps it), the problems found (``path:line``), notes (the skills a name clash
    shadowed; each skill keeps its own, ``Skill.notes``) and what was not loaded and why
    (``skipped``)."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[LoadProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def __len__(self) -> int:
        return len(self.skills)

    def for_model(self) -> list[Skill]:
        """The skills the model may load (not ``disable-model-invocation``), by name."""
        return sorted((s for s in self.skills.values() if s.model_invocable), key=_name)

    def for_user(self) -> list[Skill]:
        """The skills the user may run as ``/name`` (not ``user-invocable: false``)."""
        return sorted((s for s in self.skills.values() if s.user_invocable), key=_name)


def _name(skill: Skill) -> str:
    return skill.name


def project_places(project: Path) -> list[Place]:
    """The project's folders, the one that wins a name clash first."""
    return [
        Place(project / ".tui-agent" / "skills", "project", ".tui-agent/skills"),
        Place(project / ".agents" / "skills", "project", ".agents/skills"),
        Place(project / ".claude" / "skills", "project", ".claude/skills", claude=True),
        Place(project / ".opencode" / "skills", "project", ".opencode/skills"),
        Place(project / ".opencode" / "skill", "project", ".opencode/skill"),
    ]


def user_places(home: Path | None = None) -> list[Place]:
    """The user's folders, the one that wins a name clash first. ``home`` stands for the
    home folder (tests); without it, tui-agent's own config folder and ``~``."""
    base = home if home is not None else Path.home()
    ours = (
        home / ".config" / "tui-agent" / "skills"
        if home is not None
        else paths.user_config_dir() / "skills"
    )
    xdg = os.environ.get("XDG_CONFIG_HOME")
    opencode = (base / ".config" if home is not None or not xdg else Path(xdg)) / "opencode"
    return [
        Place(ours, "user", "~/.config/tui-agent/skills"),
        Place(base / ".agents" / "skills", "user", "~/.agents/skills"),
        Place(base / ".claude" / "skills", "user", "~/.claude/skills", claude=True),
        Place(opencode / "skills", "user", "~/.config/opencode/skills"),
        Place(opencode / "skill", "user", "~/.config/opencode/skill"),
    ]


def plugin_place(name: str, folder: Path, root: Path) -> Place:
    """An Agent Plugin's ``skills/`` folder (``root``: the plugin's, resolved)."""
    return Place(folder, f"plugin:{name}", f"plugin {name}", root=root)


def skill_files(folder: Path) -> list[Path]:
    """``<child>/SKILL.md`` for each immediate child folder of ``folder`` that has one,
    sorted by folder name (dot folders, ``node_modules`` skipped)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name in SKIPPED_FOLDERS:
            continue
        candidate = Path(entry.path) / FILE
        try:
            if entry.is_dir() and candidate.is_file():
                found.append(candidate)
        except OSError:
            continue
    return found


def project_files(project: Path) -> list[Path]:
    """The project's ``SKILL.md`` files: project code that waits for trust."""
    return [file for place in project_places(project) for file in skill_files(place.path)]


register_project_code(project_files, order=27)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except (OSError, ValueError):
        return False
    return True


def find_skills(
    project: Path | None,
    *,
    trusted: bool,
    plugins: Sequence[Place] = (),
    home: Path | None = None,
) -> SkillSet:
    """Every skill: ``project``'s folders' when ``trusted`` (else they are listed as
    skipped), the user's, then the Agent Plugins' (``plugins``: ``plugin_place``s, a
    plugin of an untrusted project left out by whoever found them). ``home`` stands for
    the home folder (tests)."""
    found = SkillSet()
    places: list[Place] = []
    if project is not None:
        if trusted:
            places += project_places(project)
        else:
            found.skipped += [f"{file}: {UNTRUSTED}" for file in project_files(project)]
    places += user_places(home)
    places += plugins
    seen: set[Path] = set()  # a project in the home folder: ~/.claude is both
    for place in places:
        for file in skill_files(place.path):
            real = file.resolve()
            if real in seen:
                continue
            seen.add(real)
            if place.root is not None and not _inside(file, place.root):
                found.problems.append(
                    LoadProblem(
                        str(file), f"resolves outside the plugin's folder {place.root}: skipped"
                    )
                )
                continue
            reading = read_skill(file, source=place.source, place=place.label, claude=place.claude)
            found.problems += reading.problems  # (its notes stay the skill's)
            skill = reading.skill
            if skill is None:
                continue
            winner = found.skills.get(skill.name)
            if winner is not None:
                found.notes.append(
                    f"skill {skill.name}: {winner.path} is used; {file} has the same name"
                )
                continue
            found.skills[skill.name] = skill
    return found
