"""The agents every session has: ``general`` (every tool) and ``explore`` (read-only, for
searches). A user's or project's agent file of the same name replaces one."""

from __future__ import annotations

from .definitions import AgentDefinition

GENERAL = AgentDefinition(
    name="general",
    description=(
        "Multi-step jobs: research, code searches, changes across files; reports back "
        "with a summary."
    ),
    instructions=(
        "You are a subagent doing one self-contained task for another agent. Work through "
        "it with the tools you have; do what the prompt asks and no more. When you are "
        "done, reply with a concise report of what you found or changed (files, lines, "
        "commands run and their outcome): that reply is all the other agent sees."
    ),
    mode="subagent",
)

EXPLORE = AgentDefinition(
    name="explore",
    description=(
        "Read-only and fast: finds files and code, answers questions about the codebase. "
        "Say how thorough to be."
    ),
    instructions=(
        "You are a read-only search agent. Find what the prompt asks for with glob, grep, "
        "list and read; you cannot change files or run commands. Search broadly first, "
        "then read only what matters. Reply with the answer and the evidence: file paths "
        "with line numbers and short quotes."
    ),
    tools=("read", "glob", "grep", "list"),
    mode="subagent",
)

BUNDLED = {agent.name: agent for agent in (GENERAL, EXPLORE)}
