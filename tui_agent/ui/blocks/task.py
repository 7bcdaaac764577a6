"""A ``task`` call in the chat: the subagent at work, as one block. Its header names the
agent, the job and its state (a spinner, then ✔ with tokens and seconds, ✖, or
cancelled); its body is the child's steps, a line per tool call and its text, folded to
the last few lines while it runs and to its final message's first lines once done. Enter
or a click shows all of it, and folds it again.

Cheap by design, as several run at once: the body is one ``Static`` of plain lines (no
Markdown), drawn at most every ``INTERVAL`` and not while the user types (keys first,
``live.user_typing``)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from .live import SPINNER, user_typing

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from ...core.protocol.result import Result

ARG_KEYS = ("path", "command", "pattern", "query", "url", "file_path", "description")
ARG_WIDTH = 60


def short_args(args: dict[str, Any] | None, arguments: str = "") -> str:
    """A tool call's arguments in a few words: the value that says most (a path, a
    command, a pattern), else the arguments as JSON; one line, at most ``ARG_WIDTH``."""
    if isinstance(args, dict):
        value = next((args[k] for k in ARG_KEYS if isinstance(args.get(k), str)), None)
        text = value if value is not None else json.dumps(args, ensure_ascii=False)
    else:
        text = arguments
    text = " ".join(str(text).split())
    return text if len(text) <= ARG_WIDTH else text[: ARG_WIDTH - 1] + "…"


@dataclass
class ToolStep:
    """One of the child's tool calls: ``ok`` None while it runs."""

    call_id: str
    name: str
    args: str
    ok: bool | None = None
    error: str = ""
    agent: str = ""  # a grandchild's call (a subagent of the subagent): its agent


@dataclass
class TextStep:
    """The child's text (or thinking) between two tool calls, as it streamed."""

    parts: list[str] = field(default_factory=list)
    thinking: bool = False
    kind: str = ""  # a note's kind ("error", "warning", "note")


Step = ToolStep | TextStep


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class TaskBlock(Vertical, can_focus=True):
    """A ``task`` call and its subagent's live steps (see the module)."""

    DEFAULT_CSS = """
    TaskBlock {
        height: auto; margin: 0 0 1 1; padding: 0 1; border-left: solid $accent;
        pointer: pointer;
        &:focus { border-left: thick $accent; background: $boost; }
        &.failed { border-left: solid $error; }
        &.cancelled { border-left: solid $warning; }
    }
    TaskBlock .header { height: auto; }
    TaskBlock .body {
        height: auto; padding: 0 0 0 2; text-wrap: nowrap; text-overflow: ellipsis;
    }
    TaskBlock.open .body { text-wrap: wrap; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "fold", "Show or fold the subagent's steps", show=False)
    ]
    ALLOW_SELECT = False

    FOLDED = 4  # rows of the body while folded
    MAX_ROWS = 1000  # rows at most when open (the newest)
    INTERVAL = 0.1  # at most this often a redraw of the body, as for replies

    def __init__(
        self,
        call_id: str,
        agent: str,
        description: str,
        *,
        steps: list[Step] | None = None,
        result: Result | None = None,
        elapsed: float = 0.0,
    ) -> None:
        """A live block (``result`` None), or one of a resumed conversation: its ``steps``
        from the journal and its ``result``."""
        super().__init__()
        self.call_id = call_id
        self.agent = agent
        self.description = description
        self.model = ""
        self.steps: list[Step] = steps or []
        self.calls = {s.call_id: s for s in self.steps if isinstance(s, ToolStep)}
        self.started = time.monotonic()
        self.result: Result | None = None
        self.output = ""  # the child's final message, once the call has finished
        self.error = ""
        self.cancelled = False
        self.tokens = 0
        self.seconds: float | None = None
        self.collapsed = True
        self.header = Static("", classes="header", markup=False)
        self.body = Static("", classes="body", markup=False)
        self._timer: Any = None
        self._scheduled = False
        self._reply_from = len(self.steps)  # where the child's reply streaming now starts
        if result is not None:
            self._take(result, elapsed)

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.body

    def on_mount(self) -> None:
        self._draw()
        if self.result is None:
            self._timer = self.set_interval(0.1, self._draw_header)

    # -- what the subagent says -----------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.result is None

    def subagent_started(self, agent: str, description: str, model: str) -> None:
        self.agent, self.description, self.model = agent, description or self.description, model
        self._draw_header()

    def add_text(self, text: str, thinking: bool = False, kind: str = "") -> None:
        last = self.steps[-1] if self.steps else None
        if not (isinstance(last, TextStep) and last.thinking == thinking and last.kind == kind):
            last = TextStep(thinking=thinking, kind=kind)
            self.steps.append(last)
        last.parts.append(text)
        self._changed()

    def usage(self, total_tokens: int) -> None:
        """The child's tokens so far (all its requests)."""
        self.tokens = total_tokens
        self._draw_header()

    def reply_finished(self) -> None:
        """The child's reply streamed whole: a withdrawal no longer takes it back."""
        self._reply_from = len(self.steps)

    def withdraw(self) -> None:
        """The child's reply stopped before its end and is sent again (``ReplyWithdrawn``):
        its text so far is taken back, as the chat does with the session's own."""
        start = self._reply_from
        kept = [s for s in self.steps[start:] if not (isinstance(s, TextStep) and not s.kind)]
        self.steps[start:] = kept  # its calls and notes stay (a call runs after its reply)
        self._changed()

    def add_note(self, text: str, kind: str | None = None) -> None:
        self.add_text(text.rstrip("\n") + "\n", kind=kind or "note")

    def tool_started(self, call_id: str, name: str, args: str, agent: str = "") -> None:
        step = ToolStep(call_id, name, args, agent=agent if agent != self.agent else "")
        self.calls[call_id] = step
        self.steps.append(step)
        self._changed()

    def tool_finished(self, call_id: str, ok: bool, error: str = "") -> None:
        step = self.calls.get(call_id)
        if step is not None:
            step.ok, step.error = ok, _first_line(error)
            self._changed()

    def subagent_finished(
        self, *, tokens: int, seconds: float, error: str | None, cancelled: bool
    ) -> None:
        self.tokens, self.seconds = tokens, seconds
        self.cancelled = self.cancelled or cancelled
        if error:
            self.error = error
        self._draw_header()

    def finish(self, result: Result, elapsed: float) -> None:
        """The ``task`` call ended: its result holds the child's final message."""
        self._take(result, elapsed)
        if self._timer is not None:
            self._timer.stop()
        self._draw()

    def _take(self, result: Result, elapsed: float) -> None:
        self.result = result
        output, error = result.get("output"), result.error
        self.output = output if isinstance(output, str) else ""
        if isinstance(result.get("tokens"), int):
            self.tokens = result["tokens"]
        seconds = result.get("seconds")
        if isinstance(seconds, (int, float)):
            self.seconds = seconds
        elif self.seconds is None and elapsed:  # a resumed call without them: none shown
            self.seconds = elapsed
        if error:
            self.error = error
            self.cancelled = self.cancelled or "cancelled" in error.lower()
        for step in self.calls.values():  # a call cut off with its subagent
            if step.ok is None:
                step.ok = False
        self.set_class(self.cancelled, "cancelled")
        self.set_class(not self.cancelled and not result.ok, "failed")

    # -- folding --------------------------------------------------------------------------

    async def on_click(self) -> None:
        self.toggle()

    def action_fold(self) -> None:
        self.toggle()

    def toggle(self) -> None:
        self.collapsed = not self.collapsed
        self.set_class(not self.collapsed, "open")
        self._draw()

    # -- drawing --------------------------------------------------------------------------

    def _changed(self) -> None:
        if not self._scheduled and self.is_mounted:
            self._scheduled = True
            self.set_timer(self.INTERVAL, self._show)

    def _show(self) -> None:
        if user_typing(self):  # keys first: again a little later
            self.set_timer(self.INTERVAL, self._show)
            return
        self._draw()

    def _draw(self) -> None:
        self._scheduled = False
        self._draw_header()
        rows = self.rows()
        self.body.update(Content("\n").join(rows))
        self.body.display = bool(rows)

    def state(self) -> tuple[tuple[str, str], str]:
        """The header's mark and what it says of the state."""
        elapsed = time.monotonic() - self.started
        numbers = [f"{self.tokens:,} tokens"] if self.tokens else []
        if self.result is None and self.seconds is None:
            spinner = SPINNER[int(elapsed * 10) % len(SPINNER)]
            return (spinner, "$accent"), " · ".join([*numbers, f"{elapsed:.1f}s"])
        if self.seconds is not None:
            numbers.append(f"{self.seconds:.1f}s")
        if self.cancelled:
            return ("✖", "$warning"), " · ".join(["cancelled", *numbers])
        if self.error:
            return ("✖", "$error"), " · ".join(["error", *numbers])
        if self.result is None:  # the subagent ended; its call's result comes next
            return (SPINNER[int(elapsed * 10) % len(SPINNER)], "$accent"), numbers[-1]
        return ("✔", "$success"), " · ".join(numbers)

    def _draw_header(self) -> None:
        mark, state = self.state()
        calls = len(self.calls)
        failed = sum(step.ok is False for step in self.calls.values())
        tools = f" · {calls} tool call{'s' if calls != 1 else ''}" if calls else ""
        tools += f", {failed} failed" if failed else ""  # a folded block may hide them
        self.header.update(
            Content.assemble(
                mark,
                " ",
                (self.agent, "bold"),
                " ",
                self.description,
                " ",
                (f"{state}{tools}", "dim"),
            )
        )

    def step_rows(self) -> list[Content]:
        """Every step as lines: a tool call each, the text by its lines (blank ones left
        out: the block is a log, not the reply)."""
        rows: list[Content] = []
        for step in self.steps:
            if isinstance(step, ToolStep):
                rows.append(_tool_row(step))
                continue
            style = {"error": "$error", "warning": "$warning", "note": "dim italic"}.get(
                step.kind, "dim italic" if step.thinking else ""
            )
            for line in "".join(step.parts).splitlines():
                if line.strip():
                    rows.append(Content.styled(line, style) if style else Content(line))
        return rows

    def rows(self) -> list[Content]:
        """The body: folded, the last ``FOLDED`` rows while it runs and its final message's
        first ones once done (with how many more there are); open, all of them."""
        rows = self.step_rows()
        if not self.collapsed:
            if len(rows) > self.MAX_ROWS:
                hidden = len(rows) - self.MAX_ROWS
                rows = [_dim(f"⋮ {hidden} earlier lines not shown"), *rows[-self.MAX_ROWS :]]
            return [*rows, *self._error_rows()]
        if self.result is not None and self.output.strip():
            shown = [Content(line) for line in self.output.splitlines() if line.strip()]
            shown = shown[: self.FOLDED]
        else:
            shown = rows[-self.FOLDED :]
        more = len(rows) - len(shown)
        hint = [_dim(f"⋮ {more} more lines: Enter or a click shows them")] if more > 0 else []
        return [*hint, *shown, *self._error_rows()]

    def _error_rows(self) -> list[Content]:
        if self.error and not self.cancelled:
            return [Content.styled(_first_line(self.error), "$error")]
        return []


def _dim(text: str) -> Content:
    return Content.styled(text, "dim")


def _tool_row(step: ToolStep) -> Content:
    mark = {None: ("…", "dim"), True: ("✔", "$success"), False: ("✖", "$error")}[step.ok]
    who = (f"{step.agent}: ", "dim") if step.agent else ""
    error = (f" — {step.error}", "$error") if step.error else ""
    return Content.assemble(mark, " ", who, (step.name, "bold"), " ", (step.args, "dim"), error)
