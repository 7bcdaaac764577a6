"""The built-in ``execute`` tool (aliases bash, sh, exec): run a shell command.

The command runs with ``bash -c`` in its own process group, so a timeout or a cancelled
turn kills everything it started. Long output keeps its tail; the whole text is saved.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import tui_agent
from tui_agent.truncation import keep_tail

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600


def kill_group(process: asyncio.subprocess.Process) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        if sig is signal.SIGTERM:
            time.sleep(0.05)


@tui_agent.setup("execute")
def execute_setup(session: tui_agent.Session) -> None:
    @session.toolbox.add(
        "execute",
        description=(
            "Run a shell command with bash in the session's folder. stdout and stderr are "
            "merged; returns exit_status and output (long output keeps its end). Default "
            f"timeout {DEFAULT_TIMEOUT}s, at most {MAX_TIMEOUT}s."
        ),
        params={
            "command": {"type": "string", "description": "The bash command line"},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT,
                "description": f"Seconds before the command is killed (default {DEFAULT_TIMEOUT})",
            },
            "workdir": {
                "type": "string",
                "description": "Folder to run in (default: the session's)",
            },
        },
        required=["command"],
        aliases=["bash", "sh", "exec"],
    )
    async def execute(args: dict[str, Any], context: tui_agent.ToolContext) -> dict[str, Any]:
        base = Path(context.directory or session.directory)
        workdir = Path(os.path.expanduser(args.get("workdir") or "."))
        workdir = workdir if workdir.is_absolute() else base / workdir
        if not workdir.is_dir():
            return {"error": f"workdir is not a folder: {workdir}"}
        timeout = float(args.get("timeout") or DEFAULT_TIMEOUT)
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            args["command"],
            cwd=str(workdir),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        chunks: list[bytes] = []

        async def collect() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                chunks.append(chunk)
            await process.wait()

        reader = asyncio.ensure_future(collect())
        try:
            await asyncio.wait_for(asyncio.shield(reader), timeout)
        except TimeoutError:
            kill_group(process)
            await _settle(reader)
            output = b"".join(chunks).decode("utf-8", errors="replace")
            result = keep_tail(output, f"execute-{context.call_id or 'call'}")
            result["error"] = (
                f"timed out after {timeout:g}s; the command and every process it started "
                "were killed"
            )
            result["exit_status"] = process.returncode
            return result
        except asyncio.CancelledError:
            kill_group(process)
            await _settle(reader)
            raise
        output = b"".join(chunks).decode("utf-8", errors="replace")
        result = keep_tail(output, f"execute-{context.call_id or 'call'}")
        result["exit_status"] = process.returncode
        return result


async def _settle(reader: asyncio.Future[None]) -> None:
    try:
        await asyncio.wait_for(reader, 5)
    except (TimeoutError, asyncio.CancelledError, Exception):
        reader.cancel()
