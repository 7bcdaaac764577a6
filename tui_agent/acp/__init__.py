"""``tui-agent acp``: the third frontend, beside the app (``ui/``) and ``tui-agent run``
(``headless.py``): an ACP client (an editor) drives sessions over stdio with the
Agent Client Protocol (the ``agent-client-protocol`` package: ``pip install
'tui-agent[acp]'``).

It implements what the others do: the session's events mapped to updates
(``updates.py``, with ``tool_calls.py`` for kinds, titles, locations and diffs), the
frontend protocol (``frontend.py``: approval through ``session/request_permission``),
prompts from content blocks (``prompt.py``), and the methods (``server.py``). Only
``cmd_acp`` imports it: the app and ``run`` never load ``acp`` or pydantic.

May import the core and the public modules; never Textual or ``tui_agent.ui``."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from .server import AcpAgent, Settings

__all__ = ["AcpAgent", "Settings", "serve"]


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

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("tui-agent acp: %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    reading, writing = _protocol_fds()

    async def main() -> None:
        agent = AcpAgent(settings)
        transport = await stdio(reading, writing)
        connection = AgentSideConnection(agent, transport, listening=False)  # type: ignore[arg-type]
        try:
            await connection.listen()
        finally:
            await agent.close()
            await connection.close()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        return 130
    return 0
