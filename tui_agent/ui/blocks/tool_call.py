"""One tool call in the chat: its name and arguments, a spinner with the time while it
runs, then ✔ or ✖ and its result (folded: ``ResultFold``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from .live import SPINNER

if TYPE_CHECKING:
    from ...core.protocol.result import Result


TODO_NAMES = frozenset({"todo", "todowrite", "TodoWrite", "todo_write", "write_todos"})


def _pretty(value: Any) -> str:
    import json  # json and the core come after the first frame

    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def diagnostics_mark(result: Result | None) -> tuple[str, str] | None:
    """What a language server said of an edit (plugins/lsp.py; headless shows the same:
    core/lsp/problems.py ``result_mark``): ✔ no new problems, ⚠ 2 new errors, or
    diagnostics unavailable; None when it said nothing."""
    if result is None or not result.ok:
        return None
    count, text = result.get("new_problems"), result.get("diagnostics")
    if isinstance(count, int) and isinstance(text, str):
        if count == 0:
            return ("✔ no new problems", "green")
        return ("⚠ " + text.split("\n", 1)[0].rsplit(" (", 1)[0], "yellow")
    if isinstance(text, str) and text.startswith("unavailable"):
        return ("diagnostics unavailable", "dim")
    return None


class ResultFold(Static, can_focus=True):
    """A tool call's result, folded: one line ("▶ result") that a click or Enter opens
    into the result as JSON below it (``body``, made when first opened), and closes
    again. Lighter than Textual's Collapsible (a title, a container and the body, each
    styled): a resumed screen holds several, a long session hundreds."""

    DEFAULT_CSS = """
    ResultFold {
        width: auto; height: auto; padding: 0 1; pointer: pointer;
        text-style: $block-cursor-blurred-text-style; color: $block-cursor-blurred-foreground;
        &:hover { background: $block-hover-background; color: $foreground; }
        &:focus {
            text-style: $block-cursor-text-style; background: $block-cursor-background;
            color: $block-cursor-foreground;
        }
    }
    ResultFold.body { width: 1fr; padding: 0 0 0 2; pointer: default; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "fold", "Open or close the result", show=False)
    ]
    ALLOW_SELECT = False

    def __init__(self, result: Result, title: str = "result") -> None:
        super().__init__(f"▶ {title}", markup=False)
        self.result = result
        self.title = title
        self.collapsed = True
        self.body: Static | None = None

    async def on_click(self) -> None:
        await self.toggle()

    async def action_fold(self) -> None:
        await self.toggle()

    async def toggle(self) -> None:
        self.collapsed = not self.collapsed
        self.update(f"{'▶' if self.collapsed else '▼'} {self.title}")
        if self.body is None and not self.collapsed:
            from rich.syntax import Syntax

            text = _pretty(self.result.to_dict())
            body = Syntax(text, "json", word_wrap=True, theme="ansi_dark")
            self.body = Static(body, classes="body")
            if isinstance(self.parent, Widget):
                await self.parent.mount(self.body, after=self)
        elif self.body is not None:
            self.body.display = not self.collapsed


class ToolCallBlock(Vertical):
    """One tool call: name, arguments, a spinner with elapsed time, then ✔/✖ and the result."""

    DEFAULT_CSS = """
    ToolCallBlock { height: auto; margin: 0 0 0 1; padding: 0 1; border-left: solid $secondary; }
    ToolCallBlock.failed { border-left: solid $error; }
    ToolCallBlock .header { height: auto; }
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
        widgets: list[Any] = []
        if not result.ok:
            widgets.append(Static(result.error or "", classes="error-text", markup=False))
        widgets.append(ResultFold(result))
        return widgets

    def _args_text(self) -> str:
        import json

        todos = self.args.get("todos") if isinstance(self.args, dict) else None
        if self.tool_name in TODO_NAMES and isinstance(todos, list):  # the list, in a line
            items = [item for item in todos if isinstance(item, dict)]
            done = sum(item.get("status") == "completed" for item in items)
            now = next(
                (
                    item.get("activeForm") or item.get("content")
                    for item in items
                    if item.get("status") == "in_progress"
                ),
                None,
            )
            return f"{done}/{len(items)} done" + (f" · ▶ {now}" if now else "")
        text = self.arguments if self.args is None else json.dumps(self.args, ensure_ascii=False)
        return text if len(text) <= 200 else text[:200] + "…"

    def _render_header(self) -> None:
        elapsed = (self.finished or time.monotonic()) - self.started
        if self.result is None:
            mark: tuple[str, str] = (SPINNER[int(elapsed * 10) % len(SPINNER)], "")
        else:
            mark = ("✔", "green") if self.result.ok else ("✖", "red")
        diagnostics = diagnostics_mark(self.result)
        self.header.update(  # no markup: a name or arguments with [brackets] show as they are
            Content.assemble(
                mark,
                " ",
                (self.tool_name, "bold"),
                " ",
                (self._args_text(), "dim"),
                " ",
                (f"{elapsed:.1f}s", "dim"),
                *([" ", diagnostics] if diagnostics else []),
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
