"""Built-in slash commands that need nothing but the session: /help, /tools, /reload."""

from __future__ import annotations

import tui_agent
from tui_agent.describe import tool_markdown, tools_markdown


@tui_agent.setup("commands")
def commands(session: tui_agent.Session) -> None:
    say = session.output.say

    @session.commands.register("help", description="List every command with its description")
    def help_command(args: str | None) -> None:
        lines = ["| Command | Description |", "|---|---|"]
        lines += [f"| `{name}` | {description} |" for name, description in session.commands]
        say("\n".join(lines), kind="markdown")

    @session.commands.register(
        "tools",
        description="Show the tools (or one tool's parameters: /tools NAME)",
        completions=lambda: sorted([*session.toolbox.tools, *session.toolbox.aliases]),
    )
    def tools_command(args: str | None) -> None:
        if not args:
            say(tools_markdown(session.toolbox), kind="markdown")
            return
        if session.toolbox.resolve(args) is None:
            available = ", ".join(sorted(session.toolbox.tools)) or "(none)"
            raise ValueError(f'unknown tool "{args}". Available: {available}')
        say(tool_markdown(session.toolbox.tool_for(args)), kind="markdown")

    @session.commands.register(
        "reload", description="Re-read plugins, tool files and config without restarting"
    )
    def reload_command(args: str | None) -> None:
        report = session.reload()
        say(
            f"Reloaded {len(report.plugin_files)} plugin files and {len(report.tool_files)} "
            f"tool files: {len(session.toolbox.tools)} tools, {len(session.commands)} commands."
        )
        for problem in report.problems:
            say(f"plugin problem: {problem}", kind="error")
