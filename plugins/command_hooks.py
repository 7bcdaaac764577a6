"""Command hooks (``tui_agent.command_hooks``): shell commands in Claude Code's hook
protocol, read on every load and wired into the session.

Bundled plugins load by file name, so this setup runs before the ``permissions``
plugin's: the ``PreToolUse`` hooks come before the permission hook (a hook's "allow"
spares the user its question, its "deny" refuses first), and before the hooks of the
user's and the project's plugins. Problems in a hook file are the load's config problems
(``tui-agent run`` then stops: it never runs without hooks the user wrote); events and
hook types not run here are said once.
"""

from __future__ import annotations

from typing import Any

import tui_agent
from tui_agent.command_hooks import Engine, Loaded, PromptStopped, load


@tui_agent.setup("command_hooks")
def command_hooks(session: tui_agent.Session) -> None:
    found = load(session.workspace)
    session.extensions.kept("command_hooks", Loaded).hooks = found
    session.extensions.problems.extend(found.problems)  # the load's report
    session.extensions.config_problems.extend(found.problems)
    if found.ignored:
        session.output.say("command hooks not run here: " + "; ".join(found.ignored))
    engine = Engine(session, found)
    if found.for_event("PreToolUse"):
        session.toolbox.before(engine.pre_tool_use)
    if found.for_event("PostToolUse"):
        session.toolbox.after(engine.post_tool_use)
    if found.for_event("UserPromptSubmit"):

        async def prompt_submitted(prompt: str) -> Any:
            try:
                return await engine.prompt_submitted(prompt)
            except PromptStopped as stopped:
                raise tui_agent.PromptBlocked(str(stopped)) from None

        session.on("prompt", prompt_submitted)
    if found.for_event("Stop"):
        session.on("stop", engine.stopping)
    if found.for_event("SessionStart"):
        session.on("start", engine.session_started)
    if found.for_event("Notification") or found.for_event("SessionEnd"):
        session.on("close", engine.follow(session.events))  # SessionEnd: /clear's
    if found.for_event("SessionEnd"):
        session.on("end", engine.session_ended)
    if found.for_event("PreCompact"):
        session.on("compact", engine.compacting)
    if found.for_event("SubagentStop"):
        session.on("subagent_stop", engine.subagent_stopping)
