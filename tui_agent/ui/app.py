"""The tui-agent app: chat, prompt, tools panel, approvals, palette, footer.

``TuiAgentApp`` is built in three floors, each in its own module and each using only what
is below it: ``session_app.SessionApp`` (the session, the chat and prompt, the status),
``sending.SendingApp`` (lines sent: turns, commands, the queue, steering), and here the
app itself: the layout, connecting and loading the session, the core's events, the
dialogs, the key bindings. The frame's widgets (header, footer, screen) are in
``frame.py``; what the app offers the session as its frontend is ``frontend.AppFrontend``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.events import Event, Paste, Resize
from textual.screen import Screen
from textual.widgets import Footer

from .frame import AppFooter, AppHeader, MainScreen
from .heap import release_collections
from .palette import SlashCommands
from .sending import SendingApp
from .session_app import AgentEvent, TextBatch, UserLine

if TYPE_CHECKING:  # the core is imported after the first frame (see TuiAgentApp._connect)
    from ..core.conversation.transcript import Resumed
    from ..core.protocol.approval import ApprovalRequest, Decision
    from ..core.protocol.output import Note
    from ..core.session.session import Session
    from .event_handlers import Handler
    from .prompt import PromptArea
    from .search import SearchBar
    from .todo_view import TodoView
    from .tools_panel import ToolsPanel


class TuiAgentApp(SendingApp):
    TITLE = "tui-agent"
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {SlashCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+t", "toggle_tools", "Tools", id="app.tools"),
        Binding("ctrl+o", "toggle_todo", "Todo", show=False, id="app.todo"),
        Binding("ctrl+f", "search", "Find", show=False, id="app.search"),
        # priority: the prompt (a TextArea) would take Shift+Tab; dialogs keep it (check_action)
        Binding("shift+tab", "cycle_mode", "Mode", priority=True, id="app.mode"),
        # while a turn runs: Ctrl+S (Ctrl+Enter where the terminal tells it from Enter; in
        # tmux it does not) sends the prompt into the turn instead of queuing it
        Binding("ctrl+s,ctrl+enter", "steer", "Steer", id="app.steer"),
        # Esc takes queued prompts back into the prompt before it cancels anything
        Binding("escape", "unqueue", "Take back", id="app.unqueue"),
        Binding("escape", "cancel_turn", "Cancel", id="app.cancel"),  # shown while working
        Binding("ctrl+c", "interrupt", "Cancel", show=False, priority=True, id="app.cancel2"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(
        self,
        session: Session | None = None,
        *,
        make_session: Callable[[], Session] | None = None,
        directory: Path | None = None,
        resumed: Resumed | None = None,
        **kwargs: Any,
    ) -> None:
        """Give the app a ready ``session``, or ``make_session`` and the ``directory`` it is
        for: then the app calls ``make_session()`` once, right after its first frame (in
        ``_load``), so the first frame waits for no part of the core. Until then
        ``session`` raises; what may come earlier (a line sent, the palette, Tab, Ctrl+T)
        awaits ``wait_for_session()``. ``resumed``: the journal a resume continues, read
        (``read_resumed``): the first frame draws its newest messages, and the session
        ``make_session`` gives takes them over (``conversation.resume(path, read)``)."""
        super().__init__(session, make_session=make_session, directory=directory, **kwargs)
        self._resumed = resumed
        self._approval_lock = asyncio.Lock()
        self._batch: TextBatch | None = None
        self._unsubscribe: list[Any] = []
        self._tools: ToolsPanel | None = None  # mounted when first shown
        self._todo: TodoView | None = None  # mounted above the prompt when a list comes
        self._chunks: dict[type, bool] = {}  # text chunk classes, known once connected
        self._handlers: dict[type, Handler] = {}
        self._turn_started: type | None = None  # the core's TurnStarted, once connected
        self._steered: type | None = None  # the core's Steered, once connected
        self._unheard: list[Note] = []  # notes said before the app listened (shown on load)
        self.start_line: str | None = None  # run once loaded (`tui-agent --resume`: /resume)
        self._asking_trust = False  # the trust dialog is open: start_line waits for it
        self._search: SearchBar | None = None  # Ctrl+F: mounted above the prompt when first used
        if session is not None:
            self._connect(session)

    # -- layout -----------------------------------------------------------------------------

    async def on_event(self, event: Event) -> None:
        """A path of an image pasted into the prompt becomes its ``@`` mention
        (``pasted.py``)."""
        if (
            isinstance(event, Paste)
            and not event.is_forwarded
            and self._session is not None
            and self.focused is not None
            and self.focused is self._prompt
        ):
            from .pasted import pasted_image

            session = self._session
            event = pasted_image(event, session.directory, session.worktree)
        await super().on_event(event)

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield AppHeader()
        yield self._chat
        # the prompt's bottom border shows the status (update_status); the Tab-completion
        # menu and the queued prompts are mounted above the prompt when first needed and
        # the tools panel (docked right) when first shown: the first frame goes without them
        yield self._prompt_box  # its stand-in: the prompt comes after the first frame
        yield AppFooter()

    def _connect(self, session: Session) -> None:
        """The app becomes the session's frontend and hears its events and output. The one
        moment the UI imports the core: ``connected`` (the one UI module that imports it)
        and the event handlers (which take their core names from it) are imported here."""
        from .connected import CHUNKS, Connection, events
        from .event_handlers import HANDLERS
        from .frontend import AppFrontend

        self._session = session
        self._connection = Connection(session)
        session.frontend = AppFrontend(self)  # approvals, picks, /exit, /theme, /copy
        self._chunks = CHUNKS  # chunk type -> thinking (batched: _on_core_event)
        self._handlers = HANDLERS  # every other event type -> what the app does with it
        self._turn_started = events.TurnStarted
        self._steered = events.Steered
        self._unsubscribe.append(session.events.listen(self._on_core_event))
        self._unheard = list(session.output.history)  # the rest comes with the events
        if self._prompt is not None:  # else _make_prompt gives it the history
            self._prompt.keep_history(self._connection.history)

    async def on_mount(self) -> None:
        self.sub_title = self.folder_label
        self.screen.screen_layout_refresh_signal.subscribe(self, self._layout_refreshed)
        self._prompt_box.focus()
        session = self._session  # None when deferred: made after the first frame
        if session is not None and session.conversation:  # resumed: its newest messages
            from .resumed import show_transcript  # with the session (it is connected)

            await show_transcript(self.chat, session.conversation)
        elif self._resumed is not None:  # a resume whose session comes after this frame
            from .resumed import ChildRuns, show_transcript

            resumed = self._resumed
            await show_transcript(self.chat, resumed.conversation, ChildRuns(resumed.path))
        self.update_status()
        if session is not None and session.extensions.loaded:
            await self._after_load()
        self._load_after_first_frame()

    def _load_after_first_frame(self, rounds: int = 30) -> None:
        """Once the whole first frame is on screen, set ``first_frame_drawn`` (the chat
        shows the older part of a resumed conversation then) and start ``_load``. The footer
        fills in its keys a few refreshes after mount (bindings are published after a
        refresh, then it recomposes), and loading holds the event loop, so this waits until
        the keys are laid out (so drawn); after ``rounds`` refreshes without that it goes on
        anyway."""
        footers = self.query(Footer)
        keys = footers.first().children if footers else []
        if rounds > 0 and footers and not (keys and keys[-1].region):
            self.call_after_refresh(self._load_after_first_frame, rounds - 1)
            return
        self.first_frame_drawn = True
        release_collections()  # held by cli.start_app (ui/heap.py)
        self.call_after_refresh(self._load)

    async def _load(self) -> None:
        """Right after the first frame: the prompt in its stand-in's place, then the one
        place the session is made (when the app was given ``make_session``), then plugins,
        tool files and config load; what waited for the session (``wait_for_session``)
        goes on after the load notes are shown."""
        await self._bring_prompt()
        session = self._session
        if session is None:
            assert self._make_session is not None
            session = self._make_session()
            self._connect(session)
            self._resumed_taken(session)
        self.update_status()
        if not session.extensions.loaded:
            await session.reload()
            await self._after_load()
        self._session_loaded.set()
        self._run_start_line()

    def _resumed_taken(self, session: Session) -> None:
        """The session has taken over the conversation a resume's first frame drew
        (``Conversation.take``: the same messages): the chat's earlier ones come from the
        session's conversation now."""
        if self._resumed is None:
            return
        from .resumed import Earlier  # (imported with the first frame's drawing)

        drawn, self._resumed = self._resumed.conversation, None
        older = self.chat.older
        if isinstance(older, Earlier) and older.conversation is drawn:
            older.conversation = session.conversation

    def _run_start_line(self) -> None:
        """``start_line`` once the session is loaded and the trust question (if asked) is
        answered: the picker of ``tui-agent --resume`` never opens over the trust dialog."""
        if self.start_line and not self._asking_trust and self._session_loaded.is_set():
            self.run_line(self.start_line)
            self.start_line = None

    async def _after_load(self) -> None:
        session = self.session
        unheard, self._unheard = self._unheard, []
        for note in unheard:
            await self.chat.add_note(note.text, note.kind)
        for text, kind in self.connection.load_notes():
            await self.chat.add_note(text, kind)
        self.update_status()
        if session.workspace.needs_trust:
            self.ask_trust()

    async def on_unmount(self) -> None:
        self.heap.thaw()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self._session is not None:
            await self._session.close("prompt_input_exit")  # SessionEnd's reason; on_close hooks

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Tools panel", "Show or hide the tools table", self.action_toggle_tools)
        yield SystemCommand("Cancel turn", "Stop the running reply", self.action_cancel_turn)

    # -- trust --------------------------------------------------------------------------------

    def ask_trust(self) -> None:
        from .dialogs.approval import TrustScreen  # the dialogs come after the first frame

        session = self.session
        project = session.workspace.project
        files = [str(p.relative_to(project)) for p in session.workspace.project_code]

        async def answered(trusted: bool | None) -> None:
            if trusted:
                session.workspace.trust(remember=True)
                report = await session.reload()
                await self.chat.add_note(
                    f"Trusted {project}: loaded {len(report.plugin_files)} plugin files "
                    f"and {len(report.tool_files)} tool files."
                )
                for problem in report.problems:
                    await self.chat.add_note(f"plugin problem: {problem}", kind="error")
            else:
                session.workspace.distrust()
                await self.chat.add_note(
                    f"Not trusted: the project code in {project} stays off.", kind="error"
                )
            self.update_status()
            self._asking_trust = False
            self._run_start_line()

        self._asking_trust = True
        self.push_screen(TrustScreen(self.label(session.workspace.project), files), answered)

    # -- approvals ----------------------------------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> Decision:
        """The session's approver: one dialog at a time, the rest wait their turn."""
        from .dialogs.approval import ask_approval  # the dialogs come after the first frame

        async with self._approval_lock:
            return await ask_approval(self, request)

    async def choose(self, title: str, options: list[str]) -> str | None:
        """The session's picker (``session.frontend.choose``): a list to pick from, or None."""
        from .dialogs.choice import ask_choice  # after the first frame, like the dialogs

        return await ask_choice(self, title, options)

    # -- input --------------------------------------------------------------------------------

    async def on_prompt_area_submitted(self, message: PromptArea.Submitted) -> None:
        if message.steer:
            self.steer_line(message.text)
        else:
            self.run_line(message.text)

    # -- events from the core ----------------------------------------------------------------

    def _on_core_event(self, event: Any) -> None:
        """Coalesce text chunks while the UI is busy; any other event closes the batch, so
        everything reaches the chat in the order it happened."""
        thinking = self._chunks.get(type(event))
        if thinking is not None:
            batch = self._batch
            if batch is None or batch.thinking != thinking:
                batch = self._batch = TextBatch(thinking)
                self.post_message(batch)
            batch.parts.append(event.text)
            return
        self._batch = None
        if type(event) is self._turn_started:
            if self._announced:
                self._announced = False
            else:
                self._show_sent(event.prompt)
        elif type(event) is self._steered:  # shown where the model got it
            steered: Any = event
            chips = self.connection.sent(steered.content)[1]
            self.post_message(UserLine(steered.prompt, chips))
            self._announced = steered.next_turn  # its TurnStarted follows: shown already
        self.post_message(AgentEvent(event))

    def _show_sent(self, content: str) -> None:
        """A turn the app did not start from the prompt (a Markdown command's, a plugin's)
        shows what was sent as a typed prompt shows: the text, a chip per attachment."""
        self.post_message(UserLine(*self.connection.sent(content)))

    async def on_text_batch(self, message: TextBatch) -> None:
        if self._batch is message:
            self._batch = None
        text = "".join(message.parts)
        chat = self._live_chat()
        if chat is None:
            return
        if message.thinking:
            await chat.add_thinking(text)
        else:
            await chat.add_text(text)

    async def on_agent_event(self, message: AgentEvent) -> None:
        chat = self._live_chat()
        handler = self._handlers.get(type(message.event))
        if chat is not None and handler is not None:
            await handler(self, chat, message.event)
        if type(message.event) is self._steered:
            self.show_queue()  # delivered: it leaves the list

    def on_option_list_option_selected(self, event: Any) -> None:
        """A click in the Tab-completion menu picks that entry."""
        if event.option_list.id == "completions":
            event.stop()
            prompt = self.prompt
            prompt.apply_completion(str(event.option.prompt))
            prompt.focus()

    # -- actions ------------------------------------------------------------------------------

    @property
    def tools_panel(self) -> ToolsPanel | None:
        """The tools panel, once it has been shown (Ctrl+T)."""
        return self._tools

    async def action_toggle_tools(self) -> None:
        if self._session is None:  # pressed before the session is made: shown after
            self._toggle_tools_later()
            return
        await self._toggle_tools(self._session)

    @work(group="tools-panel", exit_on_error=False)
    async def _toggle_tools_later(self) -> None:
        await self._toggle_tools(await self.wait_for_session())

    async def _toggle_tools(self, session: Session) -> None:
        from .tools_panel import ToolsPanel  # its tables come after the first frame

        panel = self._tools
        if panel is None:  # the first time: made and docked at the right
            panel = self._tools = ToolsPanel(session.toolbox, id="tools")
            await self.screen.mount(panel)
        else:
            panel.display = not panel.display
        if panel.display:
            await panel.show()

    async def show_todo(self, summary: str, items: Sequence[tuple[str, str]]) -> None:
        """The model's todo list above the prompt (``TodoChanged``): mounted with the first
        list, above the queued prompts; hidden while empty."""
        if self._todo is None and items:
            from .todo_view import TodoView  # the first frame goes without it

            self._todo = TodoView(id="todo")
            await self.mount(self._todo, before=self._queue_view or self._prompt_box)
        if self._todo is not None:
            self._todo.show(summary, items)

    async def action_search(self) -> None:
        """Ctrl+F: the search bar above the prompt (``search.py``); not from a dialog."""
        if len(self.screen_stack) > 1:
            return
        if self._search is None:
            from .search import SearchBar  # the first frame goes without it

            self._search = SearchBar(self.chat, lambda: self._prompt_box.focus(), id="search")
            await self.mount(self._search, before=self._prompt_box)
        self._search.open()

    def action_toggle_todo(self) -> None:
        if self._todo is not None:
            self._todo.toggle()

    def on_resize(self, event: Resize) -> None:
        if self._tools is not None:
            self._tools.fit(event.size.height)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc cancels (and the footer shows it) only while a turn runs; when idle it is left
        to the focused widget (the prompt closes its menu with it)."""
        if action == "cancel_turn":
            return self._session is not None and self._session.busy
        if action in ("unqueue", "steer") and len(self.screen_stack) > 1:
            return False  # not from a dialog: the prompt is behind it
        if action == "unqueue":  # before Cancel: Esc takes the queue back first
            return bool(self._queue or self.steering)
        if action == "steer":
            return self._session is not None and self._session.conversation.steering.open
        if action == "cycle_mode":  # on the main screen only: a dialog moves its focus with it
            return len(self.screen_stack) <= 1
        return True

    def action_cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode of ask → auto-edit → plan → ask (allow-all,
        from --yes or /permissions mode allow-all, goes back to ask)."""
        session = self._session
        if session is None:
            return
        cycle = self.connection.modes
        current = session.permissions.mode
        following = cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else "ask"
        session.permissions.set_mode(following)

    def action_cancel_turn(self) -> None:
        if self._session is not None and self._session.cancel():
            self.notify("Cancelling…")

    def action_interrupt(self) -> None:
        """Ctrl+C: cancel the turn, or close the completion menu."""
        if self._session is not None and self._session.cancel():
            self.notify("Cancelling…")
        elif self._prompt is not None and self.focused is self._prompt:
            self._prompt.hide_menu()


def run_app(app: TuiAgentApp) -> int:
    """Run ``app`` in the terminal until it quits (its session closes as it unmounts)."""
    app.run()
    return 0
