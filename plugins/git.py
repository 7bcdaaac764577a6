"""The built-in ``git`` tool: read-mostly git commands in the session's folder."""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

import tui_agent

ALLOWED = ("status", "diff", "log", "show", "branch", "add", "restore", "stash", "checkout")
TIMEOUT = 60


@tui_agent.setup("git")
def git_setup(session: tui_agent.Session) -> None:
    @session.toolbox.add(
        "git",
        description=(
            "Run a git command in the session's folder. Allowed subcommands: "
            + ", ".join(ALLOWED)
            + ". Example args: `log --oneline -5`."
        ),
        params={
            "args": {
                "type": ["string", "array"],
                "items": {"type": "string"},
                "description": "Arguments after `git`, as a string or a list",
            }
        },
        required=["args"],
    )
    async def git(args: dict[str, Any]) -> dict[str, Any]:
        raw = args["args"]
        try:
            words = shlex.split(raw) if isinstance(raw, str) else [str(w) for w in raw]
        except ValueError as exc:
            return {"error": f"could not parse args: {exc}"}
        if not words:
            return {"error": f"no git subcommand given. Allowed: {', '.join(ALLOWED)}"}
        if words[0] not in ALLOWED:
            return {
                "error": f"git {words[0]} is not allowed here. Allowed: {', '.join(ALLOWED)}; "
                "use the execute tool for anything else"
            }
        writing = [w for w in words if w.startswith("--output") or w == "-o"]
        if writing:
            return {"error": f"{writing[0]} writes files; use the execute tool for that"}
        process = await asyncio.create_subprocess_exec(
            "git",
            "--no-pager",
            "-c",
            "color.ui=never",
            *words,
            cwd=str(session.directory),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(), TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            process.kill()
            await process.wait()
            raise
        text = out.decode("utf-8", errors="replace")
        if len(text) > 50_000:
            text = text[:50_000] + f"\n[cut: {len(text) - 50_000} more characters]"
        return {"exit_status": process.returncode, "output": text}
