"""The built-in ``execute`` tool (aliases bash, sh, exec): run a shell command.

The command runs with ``bash -c`` in its own process group, so a timeout or a cancelled
turn kills everything it started. Long output keeps its tail; the whole text is saved.

With the sandbox on (``[sandbox]``, ``tui_agent.sandbox``) the command runs inside
bubblewrap, and the tool takes ``"sandbox": false`` to run one outside it: the permission
plugin always asks the user about that. A sandboxed command that fails in a way the
sandbox may have caused gets a ``sandbox`` note in its result saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
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


SANDBOX_HELP = (
    " It runs in a sandbox: writes only inside the worktree and /tmp, {network}, "
    "credentials and secret environment variables hidden. When a command fails because "
    'of the sandbox, call again with "sandbox": false to run it outside (the user is asked).'
)


def sandbox_help(settings: Any) -> str:
    """What the model is told about the sandbox, with its network as configured."""
    if settings.network:
        network = "network on"
    elif settings.hosts:
        network = f"network only to {', '.join(settings.hosts)} (http and https)"
    else:
        network = "no network"
    return SANDBOX_HELP.format(network=network)


@tui_agent.setup("execute")
def execute_setup(session: tui_agent.Session) -> None:
    sandbox = session.sandbox
    noted: dict[str, bool] = session.extensions.kept("sandbox-noted", dict)
    if sandbox.settings.enabled and not sandbox.active and not noted.get("unavailable"):
        noted["unavailable"] = True  # once per session, not at each /reload
        session.output.say(sandbox.describe())
    params: dict[str, Any] = {}
    if sandbox.active:
        params["sandbox"] = {
            "type": "boolean",
            "description": "false: run outside the sandbox, only after it got in the way; "
            "the user is asked",
        }

    @session.toolbox.add(
        "execute",
        description=(
            "Run a shell command with bash in the session's folder. stdout and stderr are "
            "merged; returns exit_status and output (long output keeps its end). Default "
            f"timeout {DEFAULT_TIMEOUT}s, at most {MAX_TIMEOUT}s."
            + (sandbox_help(sandbox.settings) if sandbox.active else "")
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
            **params,
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
        inside = sandbox.active and args.get("sandbox") is not False
        command = ["bash", "-c", args["command"]]
        if not inside:
            return await _run(command, None, workdir, timeout, context)
        unseen = sandbox.unseen(workdir)
        if unseen is not None:
            return {"error": unseen}
        with sandbox.command(command, workdir) as (argv, env):
            result = await _run(argv, env, workdir, timeout, context)
        if inside and result.get("exit_status") != 0 and "error" not in result:
            note = sandbox.note(str(result.get("output", "")))
            if note is not None:
                result["sandbox"] = note
        if sandbox.restored:  # a protected link the command replaced, put back
            result["sandbox"] = " ".join([*sandbox.restored, result.get("sandbox", "")]).strip()
            sandbox.restored.clear()
        return result


async def _run(
    argv: list[str],
    env: dict[str, str] | None,
    workdir: Path,
    timeout: float,
    context: tui_agent.ToolContext,
) -> dict[str, Any]:
    """Run ``argv`` to its end or ``timeout``, killing its process group on a timeout or
    a cancel (in the sandbox that kills bwrap, and with it every process inside)."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=str(workdir),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    )
    try:
        process = await asyncio.shield(spawn)
    except asyncio.CancelledError:  # cancelled while it started: killed once it has
        started = await spawn
        kill_group(started)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(started.communicate(), 5)
        raise
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
        await _settle(reader, process)
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # cancelled while it settled
            raise asyncio.CancelledError from None
        output = b"".join(chunks).decode("utf-8", errors="replace")
        result = keep_tail(output, f"execute-{context.call_id or 'call'}")
        result["error"] = (
            f"timed out after {timeout:g}s; the command and every process it started were killed"
        )
        result["exit_status"] = process.returncode
        return result
    except asyncio.CancelledError:
        kill_group(process)
        await _settle(reader, process)
        raise
    output = b"".join(chunks).decode("utf-8", errors="replace")
    result = keep_tail(output, f"execute-{context.call_id or 'call'}")
    result["exit_status"] = process.returncode
    return result


async def _settle(reader: asyncio.Future[None], process: asyncio.subprocess.Process) -> None:
    """Read what is left for up to 5 s; past that (a process out of the group holds the
    pipe) stop reading and close our end of it now, not when the garbage collector does."""
    try:
        await asyncio.wait_for(reader, 5)
    except (TimeoutError, asyncio.CancelledError, Exception):
        reader.cancel()
        transport = getattr(process, "_transport", None)  # asyncio keeps it private
        if transport is not None:
            transport.close()
