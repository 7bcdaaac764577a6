"""Public: Agent Skills (agentskills.io): finding and reading ``SKILL.md`` folders
(``find_skills``, ``read_skill``, a ``SkillSet`` of ``Skill``s with its problems), what the
model and the user get (the ``skill`` tool's description and parameters, a skill's content,
a ``/name ARGS`` prompt), what a compaction keeps (``carry``), ``allowed-tools`` read as
pre-approvals (``read_rules``, ``Rule``, ``Part``) and the listing ``/skills`` and
``tui-agent skills`` show. The bundled ``plugins/skills.py`` wires them into a session."""

from .core.skills.allowed import Part, Rule, read_rules
from .core.skills.disclosure import (
    ALIASES,
    TOOL,
    already_loaded,
    carry,
    catalog_tokens,
    content,
    held,
    loaded_names,
    parameters,
    prompt,
    result,
    tool_description,
)
from .core.skills.finding import Place, SkillSet, find_skills, plugin_place, project_files
from .core.skills.listing import as_data, how, shown_path, skills_markdown, summary
from .core.skills.reading import Skill, read_skill

__all__ = [
    "ALIASES",
    "TOOL",
    "Part",
    "Place",
    "Rule",
    "Skill",
    "SkillSet",
    "already_loaded",
    "as_data",
    "carry",
    "catalog_tokens",
    "content",
    "find_skills",
    "held",
    "how",
    "loaded_names",
    "parameters",
    "plugin_place",
    "project_files",
    "prompt",
    "read_rules",
    "read_skill",
    "result",
    "shown_path",
    "skills_markdown",
    "summary",
    "tool_description",
]
