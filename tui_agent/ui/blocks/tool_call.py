"""One tool call in the chat: its name and arguments, a spinner with the time while it
runs, then ✔ or ✖ and its result (folded)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from .live import SPINNER

if TYPE_CHECKING:
    from ...core.protocol.result import Result


def _pretty(value: Any) -> str:
    import json  # json and the core come after the first frame

    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


class ToolCallBlock(Vertical):
    """One tool call: name, arguments, a spinner with elapsed time, then ✔/✖ and the result."""

    DEFAULT_CSS = """
    ToolCallBlock { height: auto; margin: 0 0 0 1; padding: 0 1; border-left: solid $secondary; }
    ToolCallBlock.failed { border-left: solid $error; }
    ToolCallBlock .header { height: auto; }
    ToolCallBlock Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    ToolCallBlock .error-text { color: $error; }
    """

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: str,
        args: dict[str, Any] | None,
        result: Result | None = None,
        elapsed: float = 0.0,
    ) -> None:
        super().__init__()
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.args = args
        self.started = time.monotonic()
        self.finished: float | None = None if result is None else self.started + elapsed
        self.result: Result | None = result
        self.header = Static("", classes="header")
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        yield self.header
        if self.result is not None:
            yield from self._result_widgets(self.result)

    def on_mount(self) -> None:
        self._render_header()
        if self.result is None:
            self._timer = self.set_interval(0.1, self._render_header)
        elif not self.result.ok:
            self.add_class("failed")

    def _result_widgets(self, result: Result) -> list[Any]:
        from rich.syntax import Syntax

        widgets: list[Any] = []
        if not result.ok:
            widgets.append(Static(result.error or "", classes="error-text", markup=False))
        body = Syntax(_pretty(result.to_dict()), "json", word_wrap=True, theme="ansi_dark")
        widgets.append(Collapsible(Static(body), title="result", collapsed=True))
        return widgets

    def _args_text(self) -> str:
        import json

        text = self.arguments if self.args is None else json.dumps(self.args, ensure_ascii=False)
        return text if len(text) <= 200 else text[:200] + "…"

    def _render_header(self) -> None:
        elapsed = (self.finished or time.monotonic()) - self.started
        if self.result is None:
            mark: tuple[str, str] = (SPINNER[int(elapsed * 10) % len(SPINNER)], "")
        else:
            mark = ("✔", "green") if self.result.ok else ("✖", "red")
        self.header.update(  # no markup: a name or arguments with [brackets] show as they are
            Content.assemble(
                mark,
                " ",
                (self.tool_name, "bold"),
                " ",
                (self._args_text(), "dim"),
                " ",
                (f"{elapsed:.1f}s", "dim"),
            )
        )

    def finish(self, result: Result, elapsed: float) -> None:
        self.result = result
        self.finished = self.started + elapsed
        if self._timer is not None:
            self._timer.stop()
        self._render_header()
        if not result.ok:
            self.add_class("failed")
        self.mount_all(self._result_widgets(result))
