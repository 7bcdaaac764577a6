"""Language servers tell the model what its edit broke (issue 34).

After ``write`` and ``edit`` (one change or ``edits``), the file's language server is told
of the change and its diagnostics are awaited (``[diagnostics] wait``, 2 s); the tool's
result gains ``diagnostics``: the errors the change introduced (warnings too with
``[diagnostics] warnings = true``), or "no new problems", or why there are none
("unavailable: …", once per server). ``new_problems`` counts them for the app's block.

The ``diagnostics`` tool gives the current problems of a file, or of every open one;
``/lsp`` lists the servers (``/lsp restart`` stops them all: the next edit starts them).
Servers start on the first edit of a file they serve and stop when the session closes or
a reload replaces this load (``session.on("close")``). How they run: ``tui_agent.lsp``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import tui_agent
from tui_agent.lsp import DEFAULT_SCRUB, Holder, Servers, read_settings, scrubbed_env

EDITING = ("write", "edit")
REMEMBERED = 64  # old texts of calls whose after hook never came (a before hook refused)


@tui_agent.setup("lsp")
def lsp(session: tui_agent.Session) -> None:
    settings = read_settings(session.config)
    for problem in settings.problems:
        session.output.say(f"config: {problem}", kind="error")
    key = session.config.get("api_key")
    secrets = (key,) if isinstance(key, str) and key else ()
    env = scrubbed_env(os.environ, DEFAULT_SCRUB, secrets)  # no keys or tokens for servers
    servers = Servers(settings, session.workspace.project, env)
    session.extensions.kept("lsp", Holder).servers = servers
    session.on("close", servers.closing)  # a reload stops them before the next setup
    old_texts: dict[int, str | None] = {}

    def resolve(path: Any) -> Path:
        target = Path(os.path.expanduser(str(path or ".")))
        return (target if target.is_absolute() else session.directory / target).resolve()

    def remember(args: dict[str, Any]) -> None:
        if not isinstance(args.get("path"), str):
            return
        path = resolve(args["path"])
        if servers.spec_for(path) is None:
            return
        if len(old_texts) >= REMEMBERED:
            old_texts.clear()
        try:
            old_texts[id(args)] = path.read_text("utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            pass

    async def report(args: dict[str, Any], result: dict[str, Any]) -> None:
        if id(args) not in old_texts:
            return
        old_text = old_texts.pop(id(args))
        if "error" in result:
            return
        path = resolve(args["path"])
        try:
            new_text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            return
        try:
            check = await servers.check(path, old_text, new_text)
        except Exception as exc:  # never fails the edit, which is done
            result["diagnostics"] = f"unavailable: {type(exc).__name__}: {exc}"
            return
        if check.text:
            result["diagnostics"] = check.text
        if check.count is not None:
            result["new_problems"] = check.count

    for name in EDITING:
        session.toolbox.before(name, remember)
        session.toolbox.after(name, report)

    @session.toolbox.add(
        "diagnostics",
        description=(
            "The errors and warnings a language server reports now for a file (path), or "
            "for every file open in one (no path)."
        ),
        params={"path": {"type": "string", "description": "File to check (optional)"}},
    )
    async def diagnostics_tool(args: dict[str, Any]) -> dict[str, Any]:
        if args.get("path"):
            path = resolve(args["path"])
            if not path.is_file():
                return {"error": f"file not found: {args['path']}"}
            try:
                return {"diagnostics": await servers.current(path)}
            except UnicodeDecodeError:
                return {"error": f"{args['path']} is not UTF-8 text"}
        return {"diagnostics": await servers.current(None)}

    def table() -> str:
        lines = [
            "**Language servers**",
            "",
            "| Server | Root | State | Details |",
            "|---|---|---|---|",
        ]
        for row in servers.rows():
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
        if len(lines) == 4:
            lines.append("| (none on the PATH or configured) | | | |")
        if not settings.diagnostics.on:
            lines += ["", "Diagnostics after edits are off (`[diagnostics] on = false`)."]
        return "\n".join(lines)

    @session.commands.register(
        "lsp",
        description="Language servers: which run, for which root; /lsp restart",
        completions=["restart"],
    )
    async def lsp_command(args: str | None) -> None:
        verb = (args or "").strip()
        if verb not in ("", "restart"):
            raise ValueError("usage: /lsp [restart]")
        if verb == "restart":
            await servers.restart()
            session.output.say("Language servers stopped; the next edit starts them again.")
        session.output.say(table(), kind="markdown")
