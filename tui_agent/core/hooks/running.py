"""Command hooks, run: one hook's command in Claude Code's protocol (``command_hooks.py``
says how), its process group killed on a timeout or a cancel."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..util.processes import let_go
from .reading import CommandHook


@dataclass
class Outcome:
    """How one run went: ``code`` None when it did not finish (``problem`` says why)."""

    hook: CommandHook
    code: int | None
    stdout: str = ""
    stderr: str = ""
    problem: str = ""
    data: dict[str, Any] | None = None  # stdout as JSON, when exit 0 and it starts with {

    @property
    def reason(self) -> str:
        """What exit 2 says: its stderr."""
        return self.stderr.strip()


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run(hook: CommandHook, payload: Mapping[str, Any], cwd: Path, project: Path) -> Outcome:
    """Run ``hook`` with ``payload`` as JSON on stdin; never raises but for a cancel, which
    kills the hook's process group first."""
    env = dict(os.environ)
    env["CLAUDE_PROJECT_DIR"] = env["TUI_AGENT_PROJECT_DIR"] = str(project)
    env["CLAUDE_PLUGIN_ROOT"] = hook.plugin_root or (
        str(Path(hook.source).parent) if hook.source else str(project)
    )
    data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return Outcome(hook, None, problem=f"could not start: {exc}")
    try:
        out, err = await asyncio.wait_for(process.communicate(data), hook.timeout)
    except TimeoutError:
        _kill(process)
        let_go(process)  # first: the wait waits for the pipes, which an escaped process holds
        await process.wait()
        return Outcome(hook, None, problem=f"timed out after {hook.timeout:g} s and was stopped")
    except asyncio.CancelledError:
        _kill(process)
        let_go(process)
        raise
    outcome = Outcome(
        hook, process.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    )
    text = outcome.stdout.strip()
    if outcome.code == 0 and text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            outcome.problem = f"printed output that starts with {{ but is not JSON ({exc})"
        else:
            outcome.data = parsed if isinstance(parsed, dict) else None
    return outcome
