"""The agents every session has: ``general`` (every tool) and ``explore`` (read-only, for
searches). A user's or project's agent file of the same name replaces one."""

from __future__ import annotations

from .definitions import AgentDefinition

GENERAL = AgentDefinition(
    name="general",
    description=(
        "General-purpose agent for multi-step tasks: researching complex questions, "
        "searching code and making changes across files. Use it for a self-contained job "
        "whose intermediate steps the main conversation does not need; it reports back "
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
        "Fast, read-only agent for finding files and code: searches by file name and "
        "content and answers questions about the codebase without changing anything. Say "
        "how thorough it should be (a quick lookup or a thorough survey)."
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
