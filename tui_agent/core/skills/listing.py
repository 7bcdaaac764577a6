"""The skills as ``/skills`` and ``tui-agent skills`` show them: one row each (name,
source, description, size) and what finding them said (problems, notes, skipped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .disclosure import CHARS_PER_TOKEN, content, resources
from .finding import SkillSet
from .reading import Skill


def shown_path(path: Path, project: Path | None = None) -> str:
    """A path relative to ``project`` when in it, else with the home folder as ``~``."""
    if project is not None and path.is_relative_to(project):
        return str(path.relative_to(project))
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + "/") else text


def summary(skill: Skill, limit: int = 120) -> str:
    """The description's first sentence, cut to ``limit`` characters."""
    text = skill.description
    end = text.find(". ")
    if 0 < end < limit:
        text = text[: end + 1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tokens(skill: Skill) -> int:
    """About how many tokens loading it puts in the conversation (four characters a
    token, the session's estimate)."""
    return (len(content(skill)) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def size_text(skill: Skill) -> str:
    """``3.9 KB, 5 files, ~1,000 tokens``: SKILL.md, the other files, what loading costs."""
    files, more = resources(skill.folder)
    count = len(files) + more
    kb = f"{skill.size / 1024:.1f} KB"
    return f"{kb}, {count} file{'s' if count != 1 else ''}, ~{tokens(skill):,} tokens"


def how(skill: Skill) -> str:
    """Who may use it: the model, ``/name``, or both."""
    ways = []
    if skill.model_invocable:
        ways.append("model")
    if skill.user_invocable:
        ways.append(f"/{skill.name}")
    return " and ".join(ways) or "nobody (hidden from the model, no /command)"


def row(skill: Skill) -> dict[str, Any]:
    """One skill as plain data (``--json``)."""
    files, more = resources(skill.folder)
    return {
        "name": skill.name,
        "description": skill.description,
        "source": skill.source,
        "place": skill.place,
        "path": str(skill.path),
        "folder": str(skill.folder),
        "size": skill.size,
        "files": len(files) + more,
        "tokens": tokens(skill),
        "model_invocable": skill.model_invocable,
        "user_invocable": skill.user_invocable,
        "allowed_tools": list(skill.allowed_tools),
        "argument_hint": skill.argument_hint,
        "license": skill.license,
        "compatibility": skill.compatibility,
        "metadata": dict(skill.metadata),
    }


def as_data(found: SkillSet) -> list[dict[str, Any]]:
    """Every skill as plain data, by name."""
    return [row(skill) for skill in sorted(found.skills.values(), key=lambda s: s.name)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def skills_markdown(
    found: SkillSet,
    project: Path | None = None,
    *,
    catalog_tokens: int | None = None,
    taken: dict[str, str] | None = None,
) -> str:
    """``/skills``: the skills, one item each, then the problems, notes and skipped files.
    ``catalog_tokens``: what the ``skill`` tool's description costs each request;
    ``taken``: skill name → the command that holds its ``/name``."""
    taken = taken or {}
    if not found.skills:
        lines = [
            "No skills. A skill is a folder with a SKILL.md (name, description, then "
            "instructions) in .agents/skills/, .claude/skills/, .tui-agent/skills/, "
            "~/.agents/skills/, ~/.claude/skills/ or ~/.config/tui-agent/skills/."
        ]
    else:
        # a list, not a table: in the chat a long source or path squeezed the descriptions
        # of a table to a word a line
        lines = []
        for skill in sorted(found.skills.values(), key=lambda s: s.name):
            used = how(skill)
            if skill.name in taken:
                used += f" (/{skill.name} is {taken[skill.name]}'s)"
            lines.append(
                f"- **{skill.name}** — {_cell(summary(skill))}  \n"
                f"  {_cell(skill.source)} `{shown_path(skill.folder, project)}` · "
                f"{size_text(skill)} · {_cell(used)}"
            )
        if catalog_tokens is not None:
            lines += [
                "",
                f"The catalog (the skill tool's description): ~{catalog_tokens:,} "
                "tokens in every request.",
            ]
    extra = [f"- problem: {_cell(str(p))}" for p in found.problems]
    extra += [f"- note: {_cell(n)}" for n in found.notes]
    extra += [f"- note: {_cell(n)}" for s in found.skills.values() for n in s.notes]
    extra += [f"- not loaded: {_cell(s)}" for s in found.skipped]
    if extra:
        lines += ["", *extra]
    return "\n".join(lines)
