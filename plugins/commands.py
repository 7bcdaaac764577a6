"""Built-in slash commands: /help, /tools, /reload, /exit, /clear, /compact, /context,
/model, /provider, /sessions, /resume, /rename, /theme."""

from __future__ import annotations

import asyncio
import json
import logging
import shlex
from datetime import datetime

import tui_agent
from tui_agent.budget import estimate, text_tokens
from tui_agent.describe import tool_markdown, tools_markdown

log = logging.getLogger("tui_agent.commands")


def _tool_name(definition: dict[str, object]) -> object:
    """The name in an OpenAI tool definition."""
    function = definition.get("function")
    return function.get("name") if isinstance(function, dict) else None


@tui_agent.setup("commands")
def commands(session: tui_agent.Session) -> None:
    say = session.output.say

    @session.commands.register("help", description="List every command with its description")
    def help_command(args: str | None) -> None:
        lines = ["| Command | Description |", "|---|---|"]
        lines += [  # a | in a description would end its cell
            f"| `{name}` | {description.replace('|', chr(92) + '|')} |"
            for name, description in session.commands
        ]
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
    async def reload_command(args: str | None) -> None:
        report = await session.reload()  # async on_close work and setups finish first
        say(
            f"Reloaded {len(report.plugin_files)} plugin files and {len(report.tool_files)} "
            f"tool files: {len(session.toolbox.tools)} tools, {len(session.commands)} commands."
        )
        for problem in report.problems:
            kind = "config" if problem in session.extensions.config_problems else "plugin"
            say(f"{kind} problem: {problem}", kind="error")


@tui_agent.setup("session-commands")
def session_commands(session: tui_agent.Session) -> None:
    say = session.output.say
    models: list[str] = []
    fetching: list[asyncio.Task[None]] = []

    def exit_command() -> None:
        session.frontend.exit()

    session.commands.register("exit", description="Quit tui-agent", handler=exit_command)
    session.commands.register("quit", description="Quit tui-agent", handler=exit_command)

    @session.commands.register("clear", description="Start a fresh conversation")
    def clear_command(args: str | None) -> None:
        session.conversation.clear()
        say("Conversation cleared.")

    @session.commands.register(
        "compact",
        description="Make the conversation smaller: prune old tool results and summarise "
        "older turns (/compact FOCUS: what the summary should keep)",
    )
    async def compact_command(args: str | None) -> None:
        if not session.conversation.messages:
            say("Nothing to compact yet.")
            return
        done = await session.conversation.budget.compact("command", force=True, focus=args or "")
        if done is None:
            say("Nothing to compact: the conversation is already as small as it gets.")

    @session.commands.register(
        "context", description="Show what the context window holds, estimated, by part"
    )
    def context_command(args: str | None) -> None:
        messages = session.conversation.messages
        budget = session.conversation.budget
        use = budget.use()
        assert use is not None
        parts: dict[str, tuple[int, int]] = {}
        for message in messages:
            count, tokens = parts.get(message.role, (0, 0))
            parts[message.role] = (count + 1, tokens + estimate(message))
        system = text_tokens(session.workspace.system_prompt())
        offered = session.extensions.offered_tools()
        tools = text_tokens(json.dumps(offered)) if offered else 0
        lines = [
            f"**Context: {use.tokens:,} of {use.window:,} tokens ({use.share:.0%})**, "
            f"compacting at {budget.compact_at:.0%}; the window is from: {use.source}",
            "",
            "| Part | Messages | Tokens (estimated) |",
            "|---|---|---|",
            f"| System prompt | | {system:,} |",
        ]
        memory = session.workspace.memory
        for file in memory.files():  # part of the system prompt, each on its own row
            name = memory.shown(file.path).replace("|", chr(92) + "|")
            lines.append(f"| ↳ memory file {name} ({file.scope}) | | {text_tokens(file.text):,} |")
        lines.append(f"| Tool definitions | {len(offered)} tools | {tools:,} |")
        skill = next((tool for tool in offered if _tool_name(tool) == "skill"), None)
        if skill is not None:  # the skills catalog is the skill tool's description
            catalog = text_tokens(json.dumps(skill))
            lines.append(f"| ↳ skills catalog (the `skill` tool) | | {catalog:,} |")
        for role, (count, tokens) in parts.items():
            lines.append(f"| {role.capitalize()} messages | {count} | {tokens:,} |")
        used = session.conversation.usage
        lines += [
            "",
            f"Tokens the provider reported so far: {used.prompt_tokens:,} in, "
            f"{used.completion_tokens:,} out. Model: {session.extensions.provider_name} / "
            f"{session.provider.model}.",
        ]
        say("\n".join(lines), kind="markdown")

    async def fetch_models() -> None:
        try:
            models[:] = await session.provider.models()
        finally:
            fetching.clear()

    def model_completions() -> list[str]:
        if not models and not fetching:
            try:
                fetching.append(asyncio.get_running_loop().create_task(fetch_models()))
            except RuntimeError:
                pass
        return sorted({*models, session.provider.model})

    @session.commands.register(
        "model",
        description="Show or switch the model: /model NAME",
        completions=model_completions,
    )
    async def model_command(args: str | None) -> None:
        if args:
            session.extensions.set_model(model=args)
            say(f"Model: {session.extensions.provider_name} / {args}")
            return
        await fetch_models()
        current = session.provider.model
        listed = ", ".join(f"**{m}**" if m == current else m for m in models) or "(none listed)"
        say(
            f"Model: {session.extensions.provider_name} / {current}\n\nAvailable: {listed}",
            kind="markdown",
        )

    @session.commands.register(
        "provider",
        description="Show or switch the provider: /provider NAME",
        completions=session.extensions.provider_names,
    )
    def provider_command(args: str | None) -> None:
        if not args:
            known = ", ".join(session.extensions.provider_names())
            say(f"Provider: {session.extensions.provider_name}. Known: {known}")
            return
        if args not in session.extensions.provider_names():
            known = ", ".join(session.extensions.provider_names())
            raise ValueError(f"unknown provider {args!r}. Known: {known}")
        session.extensions.set_model(provider=args)
        models.clear()
        fetching.clear()
        say(f"Provider: {args} / {session.provider.model}")

    @session.commands.register(
        "sessions", description="List this folder's saved sessions (/sessions all: every folder's)"
    )
    def sessions_command(args: str | None) -> None:
        everywhere = (args or "").strip() == "all"
        found = session.conversation.sessions(everywhere=everywhere)
        if not found:
            say("No saved sessions" + ("" if everywhere else " for this folder") + " yet.")
            return
        lines = ["| Id | Title | When | Turns | Model | Size |", "|---|---|---|---|---|---|"]
        for info in found[:30]:
            when = datetime.fromtimestamp(info.modified).strftime("%Y-%m-%d %H:%M")
            title = info.title.replace("|", "\\|") or "(empty)"
            if everywhere:
                title += f" ({info.directory})".replace("|", "\\|")
            marker = " (current)" if info.id == session.id else ""
            turns = f"≥{info.turns}" if info.partial else str(info.turns)  # a huge journal
            lines.append(
                f"| `{info.id}`{marker} | {title} | {when} | {turns} | "
                f"{info.model or '?'} | {info.size_label} |"
            )
        more = f"\n\n{len(found) - 30} more: `tui-agent sessions`." if len(found) > 30 else ""
        say(
            "\n".join(lines) + more + "\n\nResume one with `/resume ID`, or `/resume` to pick.",
            kind="markdown",
        )

    @session.commands.register(
        "resume",
        description="Resume a saved session: /resume ID, or /resume to pick one",
        completions=lambda: [info.id for info in session.conversation.sessions()],
    )
    async def resume_command(args: str | None) -> None:
        session_id = (args or "").strip()
        if not session_id:
            pick = getattr(session.frontend, "pick_session", None)
            if not (callable(pick) and session.frontend.interactive):
                raise ValueError("usage: /resume ID (see /sessions)")
            picked = await pick(session.conversation.sessions, session.id)
            if picked is None:
                return
            session_id = picked.id
            if picked.directory != str(session.directory):
                say(
                    f"Session {picked.id} was started in {picked.directory}: run it there "
                    f"with `tui-agent -C {shlex.quote(picked.directory)} --resume "
                    f"{picked.id}` (its tools would run in this folder here).",
                    kind="markdown",
                )
                return
        if session_id == session.id:
            say(f"{session_id} is the session you are in.")
            return
        if not session.conversation.resume(session_id):
            raise ValueError(f"no saved session {session_id!r} (see /sessions)")
        title = session.conversation.title
        say(
            f"Resumed {session_id}"
            + (f" ({title})" if title else "")
            + f": {len(session.conversation)} messages."
        )

    asked: set[str] = set()  # the conversations whose title the model was asked for
    titling: set[asyncio.Task[None]] = set()

    async def title_by_model(reply: str, continued: bool) -> None:
        """``[sessions] model_titles = true`` (the session's model) or ``"MODEL"`` (that
        one, a cheaper model on the same server): after the first turn of a conversation
        the model gives it a title (one request; a name given with /rename stays)."""
        table = session.config.get("sessions")
        conversation = session.conversation
        wanted = table.get("model_titles") if isinstance(table, dict) else None
        if not (wanted is True or (isinstance(wanted, str) and wanted.strip())):
            return
        if conversation.deferred or conversation.titled_by or conversation.id in asked:
            return
        asked.add(conversation.id)

        async def ask() -> None:
            try:
                cheap = wanted.strip() if isinstance(wanted, str) else None
                provider = session.extensions.provider_for(cheap) if cheap else None
                await conversation.title_from_model(provider)
            except Exception:  # a title is not worth a failed turn: the first prompt stays
                log.warning("no title from the model", exc_info=True)

        if session.frontend.interactive:  # the app goes on; a run waits for it
            task = asyncio.get_running_loop().create_task(ask())
            titling.add(task)
            task.add_done_callback(titling.discard)
        else:
            await ask()

    session.on("stop", title_by_model)

    @session.commands.register(
        "rename", description="Name this session: /rename TITLE (shown by /resume and /sessions)"
    )
    def rename_command(args: str | None) -> None:
        title = session.conversation.rename(args or "")
        say(f"This session is now called: {title}")

    @session.commands.register(
        "theme",
        description="Switch the colour theme: /theme NAME",
        completions=lambda: list(session.frontend.themes),
    )
    def theme_command(args: str | None) -> None:
        if not args:
            say(f"Themes: {', '.join(session.frontend.themes) or '(none in this mode)'}")
            return
        if session.frontend.themes and args not in session.frontend.themes:
            raise ValueError(
                f"unknown theme {args!r}. Themes: {', '.join(session.frontend.themes)}"
            )
        session.frontend.theme(args)
