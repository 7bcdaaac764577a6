"""``/hooks``: the command hooks in force (``tui_agent.command_hooks``), each with its event,
matcher (and ``"if"``), command, timeout and the file it came from, and the project files
left out."""

from __future__ import annotations

from pathlib import Path

import tui_agent
from tui_agent.command_hooks import EVENTS, in_force


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a ``|`` in a command would end the cell."""
    return text.replace("|", "\\|").replace("\n", " ")


@tui_agent.setup("hooks")
def hooks(session: tui_agent.Session) -> None:
    def shown(path: str | Path) -> str:
        """A source file as the user would type it: inside the project relative to it,
        under the home folder with ``~``."""
        file = Path(path)
        for base, prefix in ((session.workspace.project, ""), (Path.home(), "~/")):
            try:
                return prefix + str(file.relative_to(base))
            except ValueError:
                continue
        return str(file)

    def describe() -> str:
        found = in_force(session)
        order = {event: index for index, event in enumerate(EVENTS)}
        lines: list[str] = []
        if found.hooks:
            lines += [
                "**Command hooks** (each event's run in this order)",
                "",
                "| Event | Matcher | Command | Timeout | Source |",
                "|---|---|---|---|---|",
            ]
            for hook in sorted(found.hooks, key=lambda h: order[h.event]):
                matcher = f"`{_cell(hook.matcher)}`" if hook.matcher not in ("", "*") else "all"
                if hook.condition:  # its "if" (Claude's permission-rule syntax)
                    matcher += f" if `{_cell(hook.condition)}`"
                lines.append(
                    f"| {hook.event} | {matcher} | `{_cell(hook.command)}` | "
                    f"{hook.timeout:g} s | {_cell(shown(hook.source))} |"
                )
        else:
            lines.append(
                "No command hooks. Add `[[hooks.PreToolUse]]` tables to config.toml, or a "
                "project's `.tui-agent/hooks.json` or `.claude/settings.json`, or put a Claude "
                "Code plugin's folder in a plugin folder (see the README, "
                '"Command hooks").'
            )
        if found.skipped:
            files = ", ".join(shown(p) for p in found.skipped)
            lines += ["", f"Not run, the folder is not trusted: {files} (`tui-agent trust`)."]
        if found.problems:
            lines += ["", "Not run, a file with a mistake runs none of its hooks:"]
            lines += [f"- {shown(p.path)}: {p.error}" for p in found.problems]
        if found.ignored:
            lines += ["", "Read but not run here:"]
            lines += [f"- {text}" for text in found.ignored]
        return "\n".join(lines)

    @session.commands.register(
        "hooks", description="Command hooks in force: event, matcher, command, source file"
    )
    def hooks_command(args: str | None) -> None:
        session.output.say(describe(), kind="markdown")
