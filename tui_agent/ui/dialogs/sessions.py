"""The session picker behind ``/resume`` with no id and ``tui-agent --resume``: this
folder's sessions (every folder's with Tab), newest first, each with its title, when,
turns, model and size; typing filters; the highlighted one's last exchange shows below;
Enter (or a click) picks it, Esc cancels.

Imported at the first pick, after the first frame. It reads the sessions through the
function it is given (``session.conversation.sessions``), so it needs nothing of the
core; what it shows of each is a ``SessionSummary`` (``core/conversation/titles.py``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option


class Summary(Protocol):
    """What the picker shows of a session (``titles.SessionSummary`` is one)."""

    id: str
    directory: str
    title: str
    modified: float
    turns: int
    model: str
    size: int
    last_prompt: str
    last_reply: str

    @property
    def size_label(self) -> str: ...

    def matches(self, query: str) -> bool: ...


Lister = Callable[[bool], Sequence[Any]]  # everywhere -> summaries, newest first


async def ask_session(
    app: App[Any], sessions: Lister, current: str = "", folder: str = ""
) -> Summary | None:
    """Show the picker and wait: the session picked, or None when it was dismissed (or
    the wait was cancelled; the picker goes)."""
    future: asyncio.Future[Summary | None] = asyncio.get_running_loop().create_future()

    def done(picked: Summary | None) -> None:
        if not future.done():
            future.set_result(picked)

    app.push_screen(SessionPicker(sessions, current, folder), done)
    try:
        return await future
    except asyncio.CancelledError:
        if isinstance(app.screen, SessionPicker):
            app.screen.dismiss(None)
        raise


def when_text(modified: float, now: float | None = None) -> str:
    """How long ago, short: "now", "12 min", "3 h", "5 d", then the date."""
    ago = (time.time() if now is None else now) - modified
    if ago < 60:
        return "now"
    if ago < 3600:
        return f"{int(ago // 60)} min"
    if ago < 86400:
        return f"{int(ago // 3600)} h"
    if ago < 7 * 86400:
        return f"{int(ago // 86400)} d"
    return time.strftime("%Y-%m-%d", time.localtime(modified))


def short_folder(directory: str) -> str:
    home = str(Path.home())
    if directory == home or directory.startswith(home + "/"):
        return "~" + directory[len(home) :]
    return directory


def _fit(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


class SessionPicker(ModalScreen["Summary | None"]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", id="sessions.cancel"),
        Binding("tab", "toggle_all", "All folders", priority=True, id="sessions.all"),
        Binding("down", "move(1)", "Next", show=False, priority=True),
        Binding("up", "move(-1)", "Previous", show=False, priority=True),
        Binding("pagedown", "move(10)", "Page down", show=False, priority=True),
        Binding("pageup", "move(-10)", "Page up", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > Vertical {
        width: 94%; max-width: 120; height: 90%; max-height: 40;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    SessionPicker #sessions-title { text-style: bold; width: 1fr; }
    SessionPicker #sessions-filter {
        border: none; height: 1; padding: 0 1; margin: 1 0 0 0; background: $boost;
    }
    SessionPicker #sessions-list { height: 1fr; min-height: 3; border: none; padding: 0; }
    SessionPicker #sessions-preview {
        height: auto; max-height: 40%; border-top: solid $panel-lighten-2; padding: 0 1;
    }
    SessionPicker .hint { color: $text-muted; }
    """

    def __init__(self, sessions: Lister, current: str = "", folder: str = "") -> None:
        super().__init__()
        self.sessions = sessions
        self.current = current
        self.folder = folder
        self.everywhere = False
        self.found: list[Summary] = []  # this scope's sessions
        self.shown: list[Summary] = []  # those the filter keeps, in the list's order

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("", id="sessions-title", markup=False)
            yield Input(placeholder="type to filter", id="sessions-filter")
            yield OptionList(id="sessions-list")
            yield Static("", id="sessions-preview", markup=False)
            yield Label(
                "↑↓ move · Enter resumes · Tab this folder/all folders · Esc cancels",
                classes="hint",
                markup=False,
            )

    def on_mount(self) -> None:
        self._read()
        self.query_one(Input).focus()

    def _read(self) -> None:
        self.found = list(self.sessions(self.everywhere))
        where = "all folders" if self.everywhere else f"this folder ({short_folder(self.folder)})"
        if not self.folder and not self.everywhere:
            where = "this folder"
        count = len(self.found)
        noun = "session" if count == 1 else "sessions"
        self.query_one("#sessions-title", Label).update(
            f"Resume a session · {where} · {count} {noun}"
        )
        self._filter()

    def _filter(self, keep: str | None = None) -> None:
        query = self.query_one(Input).value
        self.shown = [s for s in self.found if s.matches(query)]
        self._draw(keep)

    def _draw(self, keep: str | None = None) -> None:
        options = self.query_one(OptionList)
        width = max(options.size.width or self.app.size.width - 10, 30) - 2
        rows = [
            Option(self._row(summary, width), id=f"s{index}")
            for index, summary in enumerate(self.shown)
        ]
        options.clear_options()
        options.add_options(rows)
        if self.shown:
            ids = [s.id for s in self.shown]
            options.highlighted = ids.index(keep) if keep in ids else 0
        self._preview()

    def _row(self, summary: Summary, width: int) -> Content:
        model = _fit(summary.model or "?", 18)
        turns = f"{summary.turns} turn" + ("s" if summary.turns != 1 else "")
        if getattr(summary, "partial", False):  # a huge journal: its start and end read
            turns = f"≥{turns}"
        meta = (
            f"{when_text(summary.modified):>10}  {turns:>9}  {model:<18}  {summary.size_label:>6}"
        )
        if width < 90:  # narrow: the model goes to the preview
            meta = f"{when_text(summary.modified):>10}  {turns:>9}  {summary.size_label:>6}"
        room = max(width - len(meta) - 1, 10)
        title = summary.title or "(empty)"
        suffix = " (current)" if summary.id == self.current else ""
        folder = ""
        if self.everywhere:  # its end: the folder's own name says most
            where = short_folder(summary.directory)
            most = max(min(24, room // 3), 8)
            folder = "  " + (where if len(where) <= most else "…" + where[-(most - 1) :])
        head = _fit(title, max(room - len(suffix) - len(folder), 8))
        extra = (suffix + folder)[: max(room - len(head), 0)]
        padding = " " * max(room - len(head) - len(extra), 0)
        return Content.assemble(
            (head, "bold" if summary.id != self.current else "italic"),
            (extra, "dim"),
            padding,
            " ",
            (meta, "dim"),
        )

    def _preview(self) -> None:
        preview = self.query_one("#sessions-preview", Static)
        picked = self.highlighted()
        if picked is None:
            if self.found:
                preview.update(Content("No session matches the filter."))
            elif self.everywhere:
                preview.update(Content("No saved sessions yet."))
            else:
                preview.update(
                    Content("No saved sessions for this folder yet: Tab shows every folder's.")
                )
            return
        lines: list[str | tuple[str, str]] = [
            (picked.id, "dim"),
            (f" · {picked.model or 'model not recorded'}", "dim"),
            (f" · {short_folder(picked.directory)}", "dim"),
            "\n",
        ]
        if picked.last_prompt:
            lines += [("you ▸ ", "bold $text-accent"), _fit(picked.last_prompt, 400), "\n"]
        if picked.last_reply:
            lines += [("reply ▸ ", "bold $text-success"), picked.last_reply.strip()]
        if not picked.last_prompt and not picked.last_reply:
            lines.append(("(no exchange yet)", "dim"))
        preview.update(Content.assemble(*lines))

    def highlighted(self) -> Summary | None:
        index = self.query_one(OptionList).highlighted
        if index is None or not 0 <= index < len(self.shown):
            return None
        return self.shown[index]

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._filter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        picked = self.highlighted()
        if picked is not None:
            self.dismiss(picked)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._preview()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.shown):
            self.dismiss(self.shown[event.option_index])

    def on_resize(self, event: Resize) -> None:
        picked = self.highlighted()
        self.call_after_refresh(self._draw, picked.id if picked else None)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if not self.shown:
            return
        current = options.highlighted or 0
        options.highlighted = min(max(current + step, 0), len(self.shown) - 1)

    def action_toggle_all(self) -> None:
        picked = self.highlighted()
        self.everywhere = not self.everywhere
        self._read()
        if picked is not None:
            self._filter(picked.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
