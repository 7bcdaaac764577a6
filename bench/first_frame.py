"""The program ``instructions.py`` runs under callgrind: one app to its first frame, then out.

    python bench/first_frame.py bare        # bare_app.py's app
    python bench/first_frame.py ours        # ``python -m tui_agent``, as cli.start_app makes it
    python bench/first_frame.py resume ID   # ``python -m tui_agent --resume ID``

Textual's headless driver (``run_test``) stands in for the terminal, the same for each.
Each stops at the moment its whole first frame is on screen, footer keys included (the
"palette" that ``startup.py`` waits for in tmux): the bare app by the same test as ours;
ours when it calls ``_load``, right after that frame, where a resume's frame must show
the newest message of the journal. There it leaves at once (``os._exit``), so
neither what the app does after that moment nor Python's shutdown is counted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

SIZE = (100, 30)


def bare() -> None:
    import asyncio

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bare_app import BareApp
    from textual.widgets import Footer

    class Timed(BareApp):
        def on_mount(self) -> None:
            self.call_after_refresh(self.drawn)

        def drawn(self) -> None:
            """As ours decides its first frame is on screen (``_load_after_first_frame``):
            the footer's keys laid out (the marker ``startup.py`` waits for in tmux)."""
            keys = self.query_one(Footer).children
            if keys and keys[-1].region:
                os._exit(0)
            self.call_after_refresh(self.drawn)

    async def run() -> None:
        async with Timed().run_test(size=SIZE) as pilot:
            for _ in range(2000):
                await pilot.pause(0.01)
        raise SystemExit("the first frame never came")

    asyncio.run(run())


def ours(resume: str | None) -> None:
    """``tui-agent`` (``--resume ID``) in the order ``cli.main`` and ``cli.start_app`` go:
    the command line, collections held, then Textual and the app (asyncio comes with it)."""
    from tui_agent import cli

    args = cli.build_parser().parse_args(["--resume", resume]) if resume else cli.no_arguments()
    from tui_agent.ui.heap import hold_collections

    hold_collections()
    import asyncio

    from tui_agent.ui.app import TuiAgentApp

    folder = Path.cwd()
    app: Any
    resumed = cli.read_resume(folder, resume) if resume else None  # for the first frame
    if resume and resumed is None:
        raise SystemExit(f"no session {resume}")
    make = lambda: cli.new_session(args, load=False)  # noqa: E731
    app = TuiAgentApp(make_session=make, directory=folder, resumed=resumed)

    async def first_frame_drawn() -> None:  # what the app calls right after its first frame
        if resume and not _newest_shown(app):
            raise SystemExit("the first frame did not show the newest message")
        os._exit(0)

    async def run() -> None:
        app._load = first_frame_drawn
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(2000):
                await pilot.pause(0.01)
        raise SystemExit("the first frame never came")

    asyncio.run(run())


def _newest_shown(app: Any) -> bool:
    from tui_agent.ui.chat import ChatView

    chat = app.query_one(ChatView)
    return any("zebra-quokka" in str(getattr(w, "_markdown", "")) for w in chat.children)


if __name__ == "__main__":
    kind = sys.argv[1]
    bare() if kind == "bare" else ours(sys.argv[2] if kind == "resume" else None)
