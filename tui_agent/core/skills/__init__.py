"""Agent Skills (agentskills.io): folders with a ``SKILL.md``, found where Claude Code,
Codex, opencode and tui-agent keep them, read and checked as the format says
(``reading``, ``finding``), disclosed progressively (``disclosure``: the catalog in the
``skill`` tool's description, the content when loaded, what a compaction keeps), their
``allowed-tools`` read as pre-approvals (``allowed``) and listed (``listing``). The
bundled ``plugins/skills.py`` wires them into a session.

May import: ``project`` (the trust registry of project code, ``LoadProblem``),
``protocol`` (messages, results), ``util``.
"""

from .allowed import Part, Rule, read_rule, read_rules
from .finding import Place, SkillSet, find_skills, plugin_place, project_places, user_places
from .reading import Reading, Skill, read_skill

__all__ = [
    "Part",
    "Place",
    "Reading",
    "Rule",
    "Skill",
    "SkillSet",
    "find_skills",
    "plugin_place",
    "project_places",
    "read_rule",
    "read_rules",
    "read_skill",
    "user_places",
]
