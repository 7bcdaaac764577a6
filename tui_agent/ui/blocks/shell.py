"""A ``!command`` in the chat: the command, a spinner with the time, its output as it
arrives, then ✔ or ✖ with the exit status. It looks like a tool call's block, with the
output shown rather than folded: the user ran it to see it.

Imported when the first ``!command`` starts (or a resumed conversation holds one), never
before the first frame.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from .live import SPINNER

if TYPE_CHECKING:
    from ...core.sandbox.user_shell import ShellRun


class ShellBlock(Vertical):
    """One ``!command``: live while it runs (``add``), final after ``finish``."""

    DEFAULT_CSS = """
    ShellBlock { height: auto; margin: 0 0 0 1; padding: 0 1; border-left: solid $secondary; }
    ShellBlock.failed { border-left: solid $error; }
    ShellBlock .header { height: auto; }
    ShellBlock .output { height: auto; color: $text; }
    ShellBlock .output.empty { display: none; }
    """

    INTERVAL = 0.1  # at most this often a redraw of the output while it streams
    LIVE_LINES = 200  # lines shown while it runs (the whole kept output once it ended)

    def __init__(self, command: str, run: ShellRun | None = None, *, outside: bool = False) -> None:
        super().__init__()
        self.command = command
        self.outside = outside  # a !!command: run outside the sandbox
        self.result: ShellRun | None = run
        self.started = time.monotonic()
        self.header = Static("", classes="header")
        self.output = Static("", classes="output empty", markup=False)
        self._parts: list[str] = []
        self._line_count = 0
        self._timer: Any = None
        self._scheduled = False

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.output

    def on_mount(self) -> None:
        if self.result is None:
            self._timer = self.set_interval(0.1, self._render_header)
        else:
            self._show_final(self.result)
        self._render_header()

    @property
    def text(self) -> str:
        """The output shown (the live tail while it runs)."""
        return "".join(self._parts) if self.result is None else self.result.output

    def add(self, text: str) -> None:
        """More output: kept to about ``LIVE_LINES`` lines, drawn at most every
        ``INTERVAL`` seconds."""
        self._parts.append(text)
        self._line_count += text.count("\n")
        if self._line_count > self.LIVE_LINES * 2:  # drop the oldest parts, keep the tail
            tail = "".join(self._parts).splitlines(keepends=True)[-self.LIVE_LINES :]
            self._parts, self._line_count = ["".join(tail)], len(tail)
        if not self._scheduled:
            self._scheduled = True
            self.set_timer(self.INTERVAL, self._draw_live)

    def _draw_live(self) -> None:
        self._scheduled = False
        if self.result is not None:
            return
        lines = "".join(self._parts).splitlines()[-self.LIVE_LINES :]
        self._set_output("\n".join(lines))

    def _set_output(self, text: str) -> None:
        self.output.update(text)
        self.output.set_class(not text.strip(), "empty")

    def finish(self, run: ShellRun) -> None:
        self.result = run
        if self._timer is not None:
            self._timer.stop()
        self._show_final(run)
        self._render_header()

    def _show_final(self, run: ShellRun) -> None:
        self._set_output(run.output.rstrip("\n"))
        self.set_class(not run.ok, "failed")

    def _render_header(self) -> None:
        run = self.result
        if run is None:
            elapsed = time.monotonic() - self.started
            mark: tuple[str, str] = (SPINNER[int(elapsed * 10) % len(SPINNER)], "")
            status = f"{elapsed:.1f}s"
        else:
            mark = ("✔", "green") if run.ok else ("✖", "red")
            status = run.status if not run.ok else f"{run.elapsed:.1f}s" * bool(run.elapsed)
        command = self.command if len(self.command) <= 200 else self.command[:200] + "…"
        bang = "!!" if self.outside else "!"
        where = " · outside the sandbox" if self.outside else ""
        self.header.update(
            Content.assemble(
                mark, " ", (bang, "dim"), (command, "bold"), " ", (status + where, "dim")
            )
        )
