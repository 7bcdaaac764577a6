"""What every place that runs a command needs when it gives up on one."""

from __future__ import annotations

import asyncio


def let_go(process: asyncio.subprocess.Process) -> None:
    """Close our ends of ``process``'s pipes once it has been killed and we stop reading.

    A process that left the group (``setsid``, a daemon) can hold a pipe open after the
    kill; without this the reading end stays open until the garbage collector closes it,
    perhaps after the event loop has closed ("Exception ignored … Event loop is closed").
    asyncio keeps the transport private; it has been ``_transport`` since Python 3.4."""
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()
