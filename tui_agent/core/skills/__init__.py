"""Agent Skills (agentskills.io): folders with a ``SKILL.md``, found where Claude Code,
Codex, opencode and tui-agent keep them, read and checked as the format says."""
