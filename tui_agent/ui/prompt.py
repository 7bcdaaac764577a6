"""The prompt: multi-line, Enter sends, Ctrl+J inserts a newline, Up/Down history,
Tab completion with a dropdown (command names, a command's completions, file names), long
pastes shown as one placeholder line, Ctrl+G for the user's own editor.

It comes right after the first frame (``prompt_standin`` draws the empty prompt in it and
keeps the keys typed meanwhile), before the core is imported: completions come from the
app (``complete``, awaited) and the history's file from the app's connection
(``keep_history``)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList, TextArea

from .prompt_standin import SHOWN_BINDINGS, TYPING

if TYPE_CHECKING:
    from ..core.extensions.commands import Completion
    from .connected import PromptHistory


class CompletionMenu(OptionList):
    """The Tab-completion dropdown under the prompt."""

    DEFAULT_CSS = """
    CompletionMenu {
        display: none;
        height: auto;
        max-height: 10;
        border: round $accent;
        margin: 0 1;
    }
    CompletionMenu.visible { display: block; }
    """


class PromptArea(TextArea):
    BINDINGS: ClassVar[list[BindingType]] = [
        *SHOWN_BINDINGS,  # ctrl+j: Newline (the stand-in of the first frame shows them too)
        Binding("enter", "submit", "Send", id="prompt.send", show=False, priority=False),
        Binding("ctrl+g", "edit", "Editor", id="prompt.editor", show=False),
    ]

    DEFAULT_CSS = """
    PromptArea {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $primary;
        border-subtitle-color: $text-muted;
        padding: 0 1;
    }
    PromptArea:focus { border: round $accent; }
    """

    class Submitted(Message):
        """``steer``: sent into the running turn (Ctrl+S), not queued after it."""

        def __init__(self, text: str, steer: bool = False) -> None:
            super().__init__()
            self.text = text
            self.steer = steer

    def __init__(self, complete: Callable[[str], Awaitable[Completion]], **kwargs: object) -> None:
        """``complete(line)`` is awaited for Tab's candidates: the app makes its session
        after the first frame, and a Tab pressed before waits for it."""
        super().__init__(soft_wrap=True, show_line_numbers=False, **kwargs)  # type: ignore[arg-type]
        self.complete = complete
        self.prompt_history: list[str] = []  # earlier prompts, oldest first
        self._kept: PromptHistory | None = None  # where they are saved (keep_history)
        self.typed_at = -1e9  # time.monotonic() of the last key
        self._history_index: int | None = None
        self._draft = ""
        self._completion_start = 0
        self.menu: CompletionMenu | None = None
        # the @ picker: the app's find_files(query, fresh) gives the files, best first
        self.find_files: Callable[[str, bool], Awaitable[list[str]]] | None = None
        self._picking = False  # an @ mention is being typed: the menu follows it
        self._picked_query: str | None = None  # the query the menu was last asked for
        self.pastes: dict[str, str] = {}  # placeholder -> the long paste it stands for
        # the app's queue: Up in an empty prompt takes its last prompt back for editing
        self.take_queued: Callable[[], str | None] | None = None

    def keep_history(self, kept: PromptHistory) -> None:
        """Where the history lives, given by the app when it connects its session: the
        saved prompts come before any sent until then, and every prompt sent is saved."""
        sent, self._kept = self.prompt_history, kept
        saved = kept.load()
        if saved and sent and saved[-1] == sent[0]:
            sent = sent[1:]
        self.prompt_history = saved + sent
        if sent:
            kept.save(self.prompt_history)

    # -- keys -----------------------------------------------------------------------------

    TYPING = TYPING  # seconds after a key during which the user counts as typing

    def typing(self) -> bool:
        """A key came in the last ``TYPING`` seconds (streamed text waits then)."""
        return time.monotonic() - self.typed_at < self.TYPING

    async def _on_key(self, event: events.Key) -> None:
        self.typed_at = time.monotonic()
        menu = self.menu
        if menu is not None and menu.has_class("visible"):
            if event.key in ("down", "up"):
                event.stop()
                event.prevent_default()
                if event.key == "down":
                    menu.action_cursor_down()
                else:
                    menu.action_cursor_up()
                return
            if event.key in ("enter", "tab"):
                event.stop()
                event.prevent_default()
                index = menu.highlighted if menu.highlighted is not None else 0
                self.apply_completion(str(menu.get_option_at_index(index).prompt))
                return
            if event.key == "escape":
                event.stop()
                event.prevent_default()
                self.close_picker()
                self.hide_menu()
                return
            if not self._picking:  # the picker follows the text (_picker_changed)
                self.hide_menu()
        elif event.key == "escape" and self._picking:
            self.close_picker()
        if event.key == "enter":
            # no newline (TextArea's handler is prevented); the "enter" binding submits.
            # Bindings run once a key has come up to the app, so Enter waits behind the
            # keys typed before it (the Backspaces of a burst are TextArea bindings):
            # submitted here at once, it sent the text as it was before them
            event.prevent_default()
            return
        if event.key == "tab":
            event.stop()
            event.prevent_default()
            await self.action_complete()
            return
        if event.key == "up" and not self.text and self.take_queued is not None:
            queued = self.take_queued()
            if queued is not None:
                event.stop()
                event.prevent_default()
                self._history_index = None
                self._show(queued)
                return
        if event.key == "up" and self.cursor_location[0] == 0 and self.prompt_history:
            event.stop()
            event.prevent_default()
            self.history_back()
            return
        if event.key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            if self._history_index is not None:
                event.stop()
                event.prevent_default()
                self.history_forward()
                return
        await super()._on_key(event)
        if event.character == "@":
            self.open_picker()

    def action_newline(self) -> None:
        self.insert("\n")

    def action_submit(self, steer: bool = False) -> None:
        """Enter (``steer``: Ctrl+S, into the running turn): the text goes to the app and
        into the history; the prompt empties."""
        text = self.sent_text()
        if not text.strip():
            return
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
            if self._kept is not None:
                self._kept.save(self.prompt_history)
        self._history_index = None
        self.text = ""
        self.pastes.clear()
        self.typed_at = -1e9  # sent: not typing (the reply it starts is drawn at once)
        self.post_message(self.Submitted(text, steer))

    # -- long pastes and the external editor ----------------------------------------------

    PASTE_LINES = 20  # a paste of more lines shows as a placeholder

    async def _on_paste(self, event: events.Paste) -> None:
        """A paste of more than ``PASTE_LINES`` lines shows as one placeholder line,
        ``[pasted 120 lines]``, so the prompt stays readable; what is sent has the whole
        paste in its place (``sent_text``). Deleting or editing the placeholder drops it."""
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n") + (not text.endswith("\n"))
        if self.read_only or lines <= self.PASTE_LINES:
            return  # TextArea inserts it as it is
        event.prevent_default()
        event.stop()
        label, number = f"[pasted {lines} lines]", 1
        while label in self.pastes or label in self.text:
            number += 1
            label = f"[pasted {lines} lines #{number}]"
        self.pastes[label] = text
        self.move_cursor(self.replace(label, *self.selection).end_location)
        self.typed_at = time.monotonic()

    def sent_text(self) -> str:
        """The prompt's text with every paste placeholder still in it replaced by its
        paste: what is sent, kept in the history and given to the editor."""
        if not self.pastes:
            return self.text
        pattern = "|".join(re.escape(label) for label in self.pastes)
        return re.sub(pattern, lambda found: self.pastes[found.group()], self.text)

    def action_edit(self) -> None:
        """Ctrl+G: the prompt's whole text (pastes in full) in ``$VISUAL``, ``$EDITOR`` or
        ``vi`` (``editor.py``); what the editor saved comes back into the prompt."""
        import contextlib
        import tempfile

        from .editor import editor_command, run_editor

        command = editor_command()
        if not command:
            self.app.notify("No editor: set $VISUAL or $EDITOR.", severity="warning")
            return
        handle, name = tempfile.mkstemp(prefix="tui-agent-prompt-", suffix=".md")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(self.sent_text())
            outcome = run_editor(self.app, name)
            if outcome != 0:
                why = outcome if isinstance(outcome, str) else f"{command} exited with {outcome}"
                self.app.notify(f"{why}: the prompt is unchanged.", severity="warning")
                return
            try:
                with open(name, encoding="utf-8", errors="replace") as file:
                    edited = file.read().rstrip("\n")
            except OSError as exc:
                self.app.notify(f"could not read what the editor saved: {exc}", severity="error")
                return
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)
        self.pastes.clear()
        self._history_index = None
        self._show(edited)
        self.focus()

    # -- history --------------------------------------------------------------------------

    def history_back(self) -> None:
        if self._history_index is None:
            self._draft = self.text
            self._history_index = len(self.prompt_history)
        if self._history_index > 0:
            self._history_index -= 1
            self._show(self.prompt_history[self._history_index])

    def history_forward(self) -> None:
        if self._history_index is None:
            return
        self._history_index += 1
        if self._history_index >= len(self.prompt_history):
            self._history_index = None
            self._show(self._draft)
        else:
            self._show(self.prompt_history[self._history_index])

    def refill(self, text: str) -> bool:
        """Put ``text`` back for editing (a prompt /undo took back), unless something is
        typed already; True when it was put back."""
        if self.text.strip():
            return False
        self._show(text)
        return True

    def put_back(self, texts: list[str]) -> None:
        """Prompts taken back from the queue, for editing: before what is typed, a blank
        line between each."""
        typed = self.text
        self._history_index = None
        self._show("\n\n".join([*texts, typed] if typed.strip() else texts))

    def _show(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    # -- completion -----------------------------------------------------------------------

    async def action_complete(self) -> None:
        if self.find_files is not None and self.mention_query() is not None:
            self.open_picker(fill=False)  # Tab in an @mention: the picker, fuzzy
            query = self.mention_query()
            if query is not None:
                await self._fill_picker(query[1], fresh=True, take_single=True)
            return
        row, column = self.cursor_location
        lines = self.text.split("\n")
        line = lines[row][:column]
        found = await self.complete(line)
        self._completion_start = found.start
        candidates = found.candidates
        if not candidates:
            self.app.bell()
            return
        if len(candidates) == 1:
            self.apply_completion(candidates[0])
            return
        prefix = os.path.commonprefix(candidates)  # noqa: RUF071 - text, not paths
        if len(prefix) > len(line) - found.start:
            self.apply_completion(prefix, final=False)
        await self._show_menu(candidates)

    async def _show_menu(self, candidates: list[str]) -> None:
        menu = self.menu
        if menu is None and self.parent is not None:  # the first dropdown: above the prompt
            menu = self.menu = CompletionMenu(id="completions")
            await self.parent.mount(menu, before=self)
        if menu is not None:
            menu.clear_options()
            menu.add_options(candidates)
            menu.highlighted = 0
            menu.add_class("visible")

    def apply_completion(self, candidate: str, final: bool = True) -> None:
        if self._picking:
            self._apply_mention(candidate)
            return
        row, column = self.cursor_location
        start = (row, self._completion_start)
        suffix = " " if final and not candidate.endswith("/") else ""
        self.replace(candidate + suffix, start, (row, column))
        self.hide_menu()

    def hide_menu(self) -> None:
        if self.menu is not None:
            self.menu.remove_class("visible")

    def commands_changed(self, complete: Callable[[str], Completion]) -> None:
        """The command registry changed, maybe while the menu is open: its candidates are
        worked out again with ``complete`` for the line as it is now (the menu closes when
        none is left)."""
        menu = self.menu
        if menu is None or not menu.has_class("visible"):
            return
        row, column = self.cursor_location
        found = complete(self.text.split("\n")[row][:column])
        if not found.candidates:
            self.hide_menu()
            return
        self._completion_start = found.start
        highlighted = menu.highlighted or 0
        menu.clear_options()
        menu.add_options(found.candidates)
        menu.highlighted = min(highlighted, len(found.candidates) - 1)

    # -- the @ picker -----------------------------------------------------------------------

    _MENTION = re.compile(r'(?<![^\s(\[{<])@(?:"([^"\n]*)|([^\s"`]*))$')

    def mention_query(self) -> tuple[int, str] | None:
        """The ``@`` mention the cursor is at the end of: (the column after its ``@``, what
        is typed after it, an opening quote left out), or None. ``@`` counts at the start
        or after a space or an opening bracket, as when the prompt is sent."""
        row, column = self.cursor_location
        found = self._MENTION.search(self.document.get_line(row)[:column])
        if found is None:
            return None
        quoted = found.group(1)
        return found.start() + 1, quoted if quoted is not None else found.group(2)

    def open_picker(self, fill: bool = True) -> None:
        """An ``@`` was typed (or Tab pressed after one): the menu offers the project's
        files and follows what is typed after it, until Esc, a space, or a pick."""
        if self.find_files is None or self.mention_query() is None:
            return
        self._picking = True
        self._picked_query = None
        if fill:
            self._refresh_picker(fresh=True)

    def close_picker(self) -> None:
        if self._picking:
            self._picking = False
            self._picked_query = None
            self.hide_menu()

    def _picker_changed(self) -> None:
        if not self._picking:
            return
        found = self.mention_query()
        if found is None:
            self.close_picker()
        elif found[1] != self._picked_query:
            self._refresh_picker(fresh=False)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._picker_changed()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._picker_changed()

    def _refresh_picker(self, fresh: bool) -> None:
        found = self.mention_query()
        if found is None:
            return
        self._picked_query = found[1]
        self.run_worker(
            self._fill_picker(found[1], fresh),
            group="mention-picker",
            exclusive=True,
            exit_on_error=False,
        )

    async def _fill_picker(self, query: str, fresh: bool, take_single: bool = False) -> None:
        """The menu for ``query``, unless the mention changed meanwhile (a newer key asked
        again); no match hides it (typing on may find some)."""
        if self.find_files is None:
            return
        candidates = await self.find_files(query, fresh)
        found = self.mention_query()
        if not self._picking or found is None or found[1] != query:
            return
        self._picked_query = query
        self._completion_start = found[0]
        if not candidates:
            self.hide_menu()
        elif take_single and len(candidates) == 1:
            self._apply_mention(candidates[0])
        else:
            await self._show_menu(candidates)

    def _apply_mention(self, path: str) -> None:
        """Put the picked ``path`` after the ``@`` (quoted when it has a space). A file ends
        the mention with a space; a folder keeps the picker open inside it."""
        row, column = self.cursor_location
        quoted = f'"{path}"' if any(char.isspace() for char in path) else path
        folder = path.endswith("/") and quoted == path
        self.replace(quoted + ("" if folder else " "), (row, self._completion_start), (row, column))
        self.hide_menu()
        if not folder:
            self.close_picker()
