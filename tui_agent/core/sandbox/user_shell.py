"""``!command`` at the prompt: a shell command the user runs themselves, without the model.

The user typed it, so no permission rule is asked. It runs as the ``execute`` tool runs
the model's commands (``bash -c`` in the session's folder, in its own process group,
stdout and stderr merged, stdin empty; inside the sandbox when it is on: ``sandbox/sandbox.py``),
and cancelling kills the whole group. Its output
is kept as ``execute`` keeps it (``keep_tail``: past 2,000 lines or 50 KB the end, and
the whole text saved to a file), and the command with that output becomes a user message,
so the next prompt can refer to it::

    I ran `make test` in the shell (exit status 2):
    ```
    …output…
    ```

The message says it is one (``UserMessage.origin`` ``"shell"``) and keeps the run
(``"shell"``: command, exit status…); ``run_of`` gives the run back (the chat redraws a
resumed one as the block it was). ``parse`` reads the text of such a message, for journals
written before messages kept their origin (``journal.classify_legacy``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..protocol.messages import UserMessage, UserText
from ..protocol.records import ShellRun as ShellRun  # re-exported
from ..util.processes import let_go
from ..util.truncation import keep_tail

if TYPE_CHECKING:
    from .sandbox import Sandbox

READ_SIZE = 65536
MEMORY_CAP = 8 * 1024 * 1024  # bytes of output held at most; past it the oldest half goes
TERM_GRACE = 1.0  # seconds between SIGTERM and SIGKILL when cancelled
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_MESSAGE = re.compile(
    r"I ran (`+) ?(.*?) ?\1 in the shell \(([^()\n]*)\)"
    r"(?::\n(`{3,})\n(.*)\n\4|; it printed nothing\.)",
    re.S,
)


def command_of(line: str) -> str | None:
    """The command of a prompt line that starts with ``!`` (or ``!!``: ``outside``),
    stripped, else None."""
    if not line.startswith("!"):
        return None
    return line[2:].strip() if outside(line) else line[1:].strip()


def outside(line: str) -> bool:
    """``!!command``: the user runs it outside the sandbox (their own escape hatch)."""
    return line.startswith("!!")


def clean(text: str) -> str:
    """Output as plain text: colour and cursor escapes dropped, and of a line redrawn with
    carriage returns (a progress bar) only what it showed last."""
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    if "\r" not in text:
        return text
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def _code(text: str) -> str:
    """``text`` as inline Markdown code, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _head(run: ShellRun) -> str:
    return f"I ran {_code(run.command)} in the shell ({run.status})"


def kept(run: ShellRun) -> dict[str, Any]:
    """What a ``"shell"`` message keeps of ``run`` (its ``"shell"``): all but the output,
    which its text holds."""
    shell: dict[str, Any] = {"command": run.command, "exit_status": run.exit_status}
    if run.cancelled:
        shell.update(cancelled=True, elapsed=run.elapsed)
    return shell


def message(run: ShellRun) -> UserText:
    """The user message recording ``run`` for the model: its text, and (for the
    ``UserMessage`` made of it) the origin ``"shell"`` and the run (``kept``)."""
    head = _head(run)
    shell = kept(run)
    body = run.output.rstrip("\n")
    if not body.strip():
        return UserText(head + "; it printed nothing.", origin="shell", shell=shell)
    longest = max((len(r) for r in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return UserText(f"{head}:\n{fence}\n{body}\n{fence}", origin="shell", shell=shell)


def run_of(recorded: UserMessage) -> ShellRun | None:
    """The ``ShellRun`` a ``"shell"`` message recorded (from the run it keeps; its output
    is what the message's text holds after the line ``message`` wrote first), or None
    for any other message."""
    shell = recorded.get("shell")
    if recorded.origin != "shell" or not isinstance(shell, dict):
        return None
    command = shell.get("command")
    status = shell.get("exit_status")
    elapsed = shell.get("elapsed")
    run = ShellRun(
        command if isinstance(command, str) else "",
        "",
        status if isinstance(status, int) else None,
        cancelled=shell.get("cancelled") is True,
        elapsed=float(elapsed) if isinstance(elapsed, int | float) else 0.0,
    )
    text = recorded.text
    rest = text[len(_head(run)) :] if text.startswith(_head(run)) else ""
    if rest.startswith(":\n"):  # the output, fenced: the fence lines off
        fenced = rest[2:].split("\n")
        run = replace(run, output="\n".join(fenced[1:-1]))
    return run


def parse(text: str) -> ShellRun | None:
    """The ``ShellRun`` a message's text describes (``message``'s inverse, as far as the
    chat needs it), or None for any other message: for journals written before messages
    kept their origin (``journal.classify_legacy``)."""
    if not text.startswith("I ran `"):
        return None
    match = _MESSAGE.fullmatch(text)
    if match is None:
        return None
    _, command, status, _, output = match.groups()
    exit_status: int | None = None
    cancelled = status.startswith("cancelled")
    code = re.fullmatch(r"exit status (-?\d+)", status)
    if code is not None:
        exit_status = int(code.group(1))
    killed = re.fullmatch(r"killed by signal (\d+)", status)
    if killed is not None:
        exit_status = -int(killed.group(1))
    elapsed = re.fullmatch(r"cancelled after ([\d.]+) s", status)
    return ShellRun(
        command,
        output or "",
        exit_status,
        cancelled=cancelled,
        elapsed=float(elapsed.group(1)) if elapsed else 0.0,
    )


class Runner:
    """One ``!command`` running: ``await run()`` to its end; when the task running it is
    cancelled, ``await stop()`` kills its process group and gives what it printed."""

    def __init__(
        self,
        command: str,
        directory: Path,
        on_output: Callable[[str], None],
        sandbox: Sandbox | None = None,
    ) -> None:
        self.command = command
        self.directory = directory
        self.on_output = on_output
        self.sandbox = sandbox  # runs inside it when it is active
        self._cleanup = contextlib.ExitStack()
        self.started = time.monotonic()
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Future[None] | None = None
        self._chunks: list[bytes] = []
        self._held = 0
        self._dropped = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def run(self) -> ShellRun:
        argv: list[str] = ["bash", "-c", self.command]
        env = None
        if self.sandbox is not None:  # its private /tmp goes when the command has ended
            argv, env = self._cleanup.enter_context(self.sandbox.command(argv, self.directory))
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=str(self.directory),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        )
        try:
            try:
                self._process = await asyncio.shield(spawn)
            except asyncio.CancelledError:  # cancelled while it started: it starts, and
                self._process = await spawn  # stop() kills it (else it would run on)
                self._reader = asyncio.ensure_future(self._read())
                raise
            self._reader = asyncio.ensure_future(self._read())
            await asyncio.shield(self._reader)
        except asyncio.CancelledError:
            raise  # stop() kills it, then cleans up
        except BaseException:
            self._cleanup.close()
            raise
        self._cleanup.close()
        return self._result(cancelled=False)

    async def _read(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        while chunk := await process.stdout.read(READ_SIZE):
            self._keep(chunk)
            text = self._decoder.decode(chunk)
            if text:
                self.on_output(_ANSI.sub("", text))
        await process.wait()

    def _keep(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._held += len(chunk)
        while self._held > MEMORY_CAP and len(self._chunks) > 1:
            dropped = self._chunks.pop(0)
            self._held -= len(dropped)
            self._dropped += len(dropped)

    async def stop(self) -> ShellRun:
        """Kill the command and everything it started (SIGTERM, then SIGKILL after
        ``TERM_GRACE`` seconds), and give what it printed until then."""
        process = self._process
        if process is not None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, sig)
                if self._reader is None or await self._settled(TERM_GRACE):
                    break
            if self._reader is not None and not await self._settled(TERM_GRACE):
                self._reader.cancel()  # a process out of its group holds the pipe open
                let_go(process)
        self._cleanup.close()
        return self._result(cancelled=True)

    async def _settled(self, seconds: float) -> bool:
        reader = self._reader
        assert reader is not None
        with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(reader), seconds)
        return reader.done()

    def _result(self, *, cancelled: bool) -> ShellRun:
        text = clean(b"".join(self._chunks).decode("utf-8", errors="replace"))
        if self._dropped:
            text = f"[the first {self._dropped:,} bytes of output were not kept]\n" + text
        kept = keep_tail(text, "shell")
        process = self._process
        status = process.returncode if process is not None and not cancelled else None
        return ShellRun(
            self.command,
            str(kept["output"]),
            status,
            cancelled=cancelled,
            elapsed=time.monotonic() - self.started,
            full_output=kept.get("full_output"),
        )
