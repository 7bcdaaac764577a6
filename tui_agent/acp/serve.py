"""The ``tui-agent acp`` process: the protocol on its own copies of stdin and stdout,
logs on stderr (one line each) and in ``<log dir>/acp.log``, one client served until it
goes away."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

from .server import AcpAgent, Settings


def _protocol_fds() -> tuple[int, int]:
    """The protocol's own copies of stdin and stdout; fd 0 becomes /dev/null and fd 1 the
    stderr, so a plugin's ``print`` or a command a tool starts never writes into the
    protocol or reads the client's messages."""
    reading, writing = os.dup(0), os.dup(1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return reading, writing


def serve(settings: Settings) -> int:
    """Serve one client on stdin/stdout until it goes away; logs on stderr."""
    from acp.agent.connection import AgentSideConnection

    from .transport import stdio

    log = _logging()
    reading, writing = _protocol_fds()

    async def main() -> None:
        agent = AcpAgent(settings)
        transport = await stdio(reading, writing)
        transport.on_end = agent.cancel_all
        connection = AgentSideConnection(agent, transport, listening=False)  # type: ignore[arg-type]
        try:
            await connection.listen()
        finally:
            await agent.close()
            try:
                await connection.close()
            except (ConnectionError, OSError):
                pass  # the client is gone: nothing more to say to it

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        log.error("tui-agent acp stopped: %s", exc, exc_info=exc)
        return 1
    return 0


class _OneLine(logging.Formatter):
    """A problem as one line on stderr (an ACP client shows stderr as the agent's log);
    the traceback goes to the log file."""

    def formatException(self, ei: Any) -> str:
        return f"  ({ei[0].__name__}: {ei[1]})" if ei and ei[0] is not None else ""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text.replace("\n", " ")


def _logging() -> logging.Logger:
    """Warnings and errors on stderr, one line each; everything from INFO with its
    traceback in ``<log dir>/acp.log``."""
    root = logging.getLogger()
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(_OneLine("tui-agent acp: %(levelname)s %(name)s: %(message)s"))
    root.addHandler(stderr)
    root.setLevel(logging.INFO)
    try:
        from ..core.util.paths import user_log_dir

        folder = user_log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        file = logging.FileHandler(folder / "acp.log", encoding="utf-8")
    except OSError:
        pass
    else:
        file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(file)
    return logging.getLogger("tui_agent.acp")
