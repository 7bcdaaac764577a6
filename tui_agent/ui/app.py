"""The tui-agent app: chat, prompt, tools panel, approvals, palette, footer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.events import Click, Resize
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.worker import Worker, WorkerCancelled, WorkerFailed  # textual.app imports it

from .chat import ChatView
from .heap import Heap
from .palette import SlashCommands
from .prompt import CompletionMenu, PromptArea

if TYPE_CHECKING:  # the core is imported after the first frame (see TuiAgentApp._connect)
    from ..core.extensions.commands import Completion
    from ..core.protocol.approval import ApprovalRequest, Decision
    from ..core.protocol.output import Note
    from ..core.session.session import Session
    from .connected import Connection
    from .event_handlers import Handler
    from .queue import QueuedPrompts
    from .status import StatusPart
    from .tools_panel import ToolsPanel


class AgentEvent(Message):
    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class TextBatch(Message):
    """Consecutive text (or thinking) chunks: one message for many tokens, order kept."""

    def __init__(self, thinking: bool) -> None:
        super().__init__()
        self.thinking = thinking
        self.parts: list[str] = []


class OutputNote(Message):
    def __init__(self, text: str, kind: str | None) -> None:
        super().__init__()
        self.text = text
        self.kind = kind


class UserLine(Message):
    def __init__(self, text: str, chips: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.text = text
        self.chips = chips  # the labels of the @path attachments sent with it


class AppHeader(Widget):
    """The title bar as one widget (Textual's Header is four): the palette icon at the left
    (a click opens the command palette) and "title — folder" in the middle."""

    DEFAULT_CSS = """
    AppHeader { dock: top; width: 100%; height: 1; background: $panel; color: $foreground; }
    """

    ICON = " ⭘"
    SIDES = (8, 10)  # the icon's and the right-hand margin's widths, as in Textual's Header

    def on_mount(self) -> None:
        def changed() -> None:
            self.refresh()

        self.watch(self.app, "title", changed, init=False)
        self.watch(self.app, "sub_title", changed, init=False)

    def render(self) -> Text:
        left, right = self.SIDES
        middle = max(self.size.width - left - right, 0)
        title = Text(self.app.title, no_wrap=True)
        if self.app.sub_title:
            title.append(" — ").append(self.app.sub_title, style="dim")
        title.truncate(middle, overflow="ellipsis")
        title.align("center", middle)
        return Text.assemble(self.ICON.ljust(left), title, " " * right)

    async def on_click(self, event: Click) -> None:
        if event.x < self.SIDES[0]:
            event.stop()
            await self.run_action("app.command_palette")


class AppFooter(Footer):
    """The footer without the rebuilds that change nothing. Textual's re-creates all its
    keys on every bindings signal, and three come before the first frame (mount, focus,
    screen stack) with the same keys; each rebuild restyles every key several times."""

    def __init__(self) -> None:
        super().__init__()
        self._composed: tuple[Any, ...] | None = None

    def _shown(self) -> tuple[Any, ...]:
        """Everything ``Footer.compose`` reads."""
        bindings = tuple(
            (key, active.binding, active.enabled, active.tooltip)
            for key, active in self.screen.active_bindings.items()
        )
        flags = (self.compact, self.show_command_palette, self.combine_groups)
        return (bindings, flags, self.app.ENABLE_COMMAND_PALETTE)

    async def recompose(self) -> None:
        shown = self._shown()
        if self.children and shown == self._composed:
            return
        self._composed = shown
        await super().recompose()


class MainScreen(Screen[None]):
    """The default screen. The prompt takes the focus as the screen is composed: with the
    default (the first focusable widget, the chat) and then the prompt, the focus moved
    twice and the footer re-built its keys for each move before the first frame."""

    AUTO_FOCUS = "#prompt"


class TuiAgentApp(App[None]):
    TITLE = "tui-agent"
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {SlashCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+t", "toggle_tools", "Tools", id="app.tools"),
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
        **kwargs: Any,
    ) -> None:
        """Give the app a ready ``session``, or ``make_session`` and the ``directory`` it is
        for: then the app calls ``make_session()`` once, right after its first frame (in
        ``_load``), so the first frame waits for no part of the core. Until then
        ``session`` raises; what may come earlier (a line sent, the palette, Tab, Ctrl+T)
        awaits ``wait_for_session()``."""
        super().__init__(**kwargs)
        if (session is None) == (make_session is None):
            raise TypeError("TuiAgentApp takes a session or make_session (with directory)")
        if session is not None:
            directory = session.directory
        elif directory is None:
            raise TypeError("TuiAgentApp(make_session=...) needs the directory it is for")
        self.directory = directory
        self._make_session = make_session
        self._session_loaded = asyncio.Event()  # set by _load: the session is made and loaded
        self._waiting: list[str] = []  # lines sent before that, run in order after it
        self._approval_lock = asyncio.Lock()
        self._batch: TextBatch | None = None
        self._unsubscribe: list[Any] = []
        self.heap = Heap()
        self._chat = ChatView(
            id="chat", heap=self.heap, first_frame_drawn=lambda: self.first_frame_drawn
        )
        self._prompt = PromptArea(self._complete, id="prompt")
        self._prompt.find_files = self._find_files
        self._prompt.take_queued = self._take_last_queued
        self._queue: list[str] = []  # sent while working: each sent when the work ends
        self._steering: list[str] = []  # steered, on their way into session.steering
        self._queue_view: QueuedPrompts | None = None  # mounted above the prompt when needed
        self.first_frame_drawn = False
        self._tools: ToolsPanel | None = None  # mounted when first shown
        self._status_width = 0  # the prompt's width the status was last fitted to
        self._chunks: dict[type, bool] = {}  # text chunk classes, known once connected
        self._handlers: dict[type, Handler] = {}
        self._turn_started: type | None = None  # the core's TurnStarted, once connected
        self._steered: type | None = None  # the core's Steered, once connected
        self._announced = False  # run_turn showed the prompt of the turn about to start
        self._unheard: list[Note] = []  # notes said before the app listened (shown on load)
        self._session: Session | None = None
        self._connection: Connection | None = None
        if session is not None:
            self._connect(session)

    # -- layout -----------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield AppHeader()
        yield self._chat
        # the prompt's bottom border shows the status (update_status); the Tab-completion
        # menu and the queued prompts are mounted above the prompt when first needed and
        # the tools panel (docked right) when first shown: the first frame goes without them
        yield self._prompt
        yield AppFooter()

    @property
    def session(self) -> Session:
        """The session: the one given, or the one ``_load`` made after the first frame
        (before that this raises: await ``wait_for_session()`` instead)."""
        if self._session is None:
            raise RuntimeError(
                "the app makes its session after the first frame: await wait_for_session()"
            )
        return self._session

    @property
    def session_ready(self) -> bool:
        """The session is made and loaded (``wait_for_session`` returns at once)."""
        return self._session is not None and self._session.extensions.loaded

    async def wait_for_session(self) -> Session:
        """The session once it is made and loaded: at once when it is, else when ``_load``
        (right after the first frame) is done. Waits in a worker or a widget's handler,
        never in one of the app's own: the app's queue must run for ``_load`` to come."""
        if not self.session_ready:
            await self._session_loaded.wait()
        return self.session

    @property
    def connection(self) -> Connection:
        """What the app asks of the core about its session (``connected.Connection``), once
        connected (before that this raises, as ``session`` does)."""
        if self._connection is None:
            raise RuntimeError(
                "the app connects its session after the first frame: await wait_for_session()"
            )
        return self._connection

    async def _complete(self, line: str) -> Completion:
        """Tab completion for the prompt: a Tab pressed before the session is loaded waits."""
        await self.wait_for_session()
        return self.connection.complete(line)

    async def _find_files(self, query: str, fresh: bool) -> list[str]:
        """The ``@`` picker's files for ``query``, best first (waits for the session)."""
        await self.wait_for_session()
        return await self.connection.find_files(query, fresh)

    def _connect(self, session: Session) -> None:
        """The app becomes the session's approver and hears its events and output. The one
        moment the UI imports the core: ``connected`` (the one UI module that imports it)
        and the event handlers (which take their core names from it) are imported here."""
        from .connected import CHUNKS, Connection, events
        from .event_handlers import HANDLERS

        self._session = session
        self._connection = Connection(session)
        session.themes = sorted(self.available_themes)
        session.approver = self.approve
        session.chooser = self.choose
        self._chunks = CHUNKS  # chunk type -> thinking (batched: _on_core_event)
        self._handlers = HANDLERS  # every other event type -> what the app does with it
        self._turn_started = events.TurnStarted
        self._steered = events.Steered
        self._unsubscribe.append(session.events.listen(self._on_core_event))
        self._unheard = list(session.output.history)  # the rest comes with the events
        self._prompt.keep_history(self._connection.history)

    @property
    def chat(self) -> ChatView:
        return self._chat

    def typing(self) -> bool:
        """The user is typing in the prompt: streamed text waits (chat.user_typing)."""
        return self._prompt.typing()

    def _live_chat(self) -> ChatView | None:
        """The chat, or None once the app is shutting down (events still arrive then).
        Kept, not queried: a query walks every widget, and a long chat has thousands (it
        was a fifth of the UI's time while a reply streamed)."""
        return self._chat if self._chat.is_attached else None

    async def on_mount(self) -> None:
        self.sub_title = self.folder_label
        self.screen.screen_layout_refresh_signal.subscribe(self, self._layout_refreshed)
        self._prompt.focus()
        session = self._session  # None when deferred: made after the first frame
        if session is not None and session.conversation:  # resumed: its newest messages
            await self.chat.show_transcript(session.conversation)
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
        self.call_after_refresh(self._load)

    async def _load(self) -> None:
        """Right after the first frame: the one place the session is made (when the app was
        given ``make_session``), then plugins, tool files and config load; what waited
        for the session (``wait_for_session``) goes on after the load notes are shown."""
        session = self._session
        if session is None:
            assert self._make_session is not None
            session = self._make_session()
            self._connect(session)
        self.update_status()
        if not session.extensions.loaded:
            await session.reload()
            await self._after_load()
        self._session_loaded.set()

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
            await self._session.close()  # on_close hooks (MCP servers stop with the app)

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Tools panel", "Show or hide the tools table", self.action_toggle_tools)
        yield SystemCommand("Cancel turn", "Stop the running reply", self.action_cancel_turn)

    @property
    def folder_label(self) -> str:
        return self.label(self.directory)

    @staticmethod
    def label(folder: Path) -> str:
        """A folder as shown on screen: under HOME as ``~/…``."""
        try:
            return "~/" + folder.relative_to(Path.home()).as_posix()
        except ValueError:
            return str(folder)

    def status_parts(self) -> list[StatusPart]:
        """Provider / model, the context window's use, tokens, the permission mode, the
        sandbox, working: the status under the prompt (the folder is in the header), each
        part with its shorter forms and what they are worth (``status.fit_status``): the
        token count goes first, then the provider, the window's size, "sandbox", the model,
        "no sandbox", "mode: ", the context share; the mode and "working…" always stay."""
        from .status import StatusPart  # with the session: after the first frame

        session = self.session
        try:
            model = session.provider.model
        except Exception as exc:
            model = f"? ({exc})"
        parts = [StatusPart((f"{session.provider_name} / {model}", model, ""), (20, 40))]
        use = session.budget.use(load=False)  # not the unread part of a resumed journal
        if use is not None:
            parts.append(StatusPart((use.label(), f"ctx {use.share:.0%}", ""), (30, 60)))
        parts.append(StatusPart((f"{session.agent.tokens.total_tokens} tokens", ""), (10,)))
        parts.append(StatusPart((f"mode: {session.mode}", session.mode), (50,)))
        sandbox = session.sandbox  # "sandbox" when on, "no sandbox" when wanted but missing
        if sandbox.active:  # the usual state: gives way before the model's name
            parts.append(StatusPart(("sandbox", ""), (35,)))
        elif sandbox.settings.enabled:  # a warning: stays longer than the model's name
            parts.append(StatusPart(("no sandbox", ""), (45,)))
        if session.busy:
            parts.append(StatusPart(("working…",)))
        return parts

    @property
    def status(self) -> str:
        """The whole status, shortened for no width ("starting…" before the session)."""
        if self._session is None:
            return "starting…"
        from .status import SEPARATOR

        return SEPARATOR.join(text for part in self.status_parts() if (text := part.texts[0]))

    STATUS_MARGIN = 6  # the border's corners, a line and a blank each side of its label

    def update_status(self) -> None:
        """The status on the prompt's bottom border, shortened to its width (and again
        whenever that width changes: ``_layout_refreshed``)."""
        prompt = self._prompt
        if not prompt.is_attached:  # not while the app is shutting down
            return
        self._status_width = prompt.outer_size.width
        width = self._status_width - self.STATUS_MARGIN
        if self._session is None or width <= 0:  # not laid out yet: fitted once it is
            prompt.border_subtitle = self.status
            return
        from .status import fit_status

        prompt.border_subtitle = fit_status(self.status_parts(), width)

    def _layout_refreshed(self, screen: Screen[Any]) -> None:
        """The main screen was laid out again: a resize, the tools panel opened or closed.
        The status is fitted again when the prompt's width changed."""
        if self._prompt.outer_size.width != self._status_width:
            self.update_status()

    # -- trust --------------------------------------------------------------------------------

    def ask_trust(self) -> None:
        from .approval import TrustScreen  # the dialogs come after the first frame

        session = self.session
        project = session.workspace.project
        files = [str(p.relative_to(project)) for p in session.workspace.project_code]

        async def answered(trusted: bool | None) -> None:
            if trusted:
                report = await session.trust(remember=True)
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

        self.push_screen(TrustScreen(self.label(session.workspace.project), files), answered)

    # -- approvals ----------------------------------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> Decision:
        """The session's approver: one dialog at a time, the rest wait their turn."""
        from .approval import ask_approval  # the dialogs come after the first frame

        async with self._approval_lock:
            return await ask_approval(self, request)

    async def choose(self, title: str, options: list[str]) -> str | None:
        """The session's picker (``session.choose``): a list to pick from, or None."""
        from .choice import ask_choice  # after the first frame, like the dialogs

        return await ask_choice(self, title, options)

    def refill_prompt(self, text: str) -> None:
        if not self._prompt.refill(text):
            self.notify("The prompt box was not empty: the undone prompt was not put back.")
        self._prompt.focus()

    # -- input --------------------------------------------------------------------------------

    async def on_prompt_area_submitted(self, message: PromptArea.Submitted) -> None:
        if message.steer:
            self.steer_line(message.text)
        else:
            self.run_line(message.text)

    def run_line(self, line: str) -> None:
        """Run what was sent (the prompt's Enter, the palette): a ``/command`` or a turn.
        Before the session is made and loaded the line waits for it, in order."""
        if self._waiting or not self.session_ready:
            self._waiting.append(line)
            if len(self._waiting) == 1:
                self._run_waiting()
            return
        self._start_line(line)

    def _start_line(self, line: str) -> Worker[None] | None:
        """A ``/command`` runs at once, also while a turn runs (``/reload``, ``/context``;
        one that needs the turn to end says so); a prompt, a ``!command`` or a Markdown
        command (its prompt is a turn) sent while a turn runs waits for it to end."""
        connection = self.connection
        if connection.is_command(line) and not connection.makes_turn(line):
            return self.run_command(line)
        if self.working:
            self.queue_line(line)
            return None
        if connection.is_command(line):
            return self.run_command(line)
        command = self.connection.shell_command(line)
        if command is not None:
            return self.run_shell(command, self.connection.shell_outside(line))
        return self.run_turn(line)

    # -- the queue: what is sent while a turn runs -----------------------------------------------

    @property
    def working(self) -> bool:
        """A turn or ``!command`` runs, or is starting: a line sent now is queued."""
        if self._session is not None and self._session.busy:
            return True
        return any(w.group == "agent" and not w.is_finished for w in self.workers)

    @property
    def queued(self) -> tuple[str, ...]:
        """The prompts (and commands) waiting for the work to end, oldest first."""
        return tuple(self._queue)

    @property
    def steering(self) -> tuple[str, ...]:
        """The prompts sent into the running turn that the model has not got yet."""
        session = self._session
        pending = [steer.prompt for steer in session.steering.pending] if session else []
        return (*pending, *self._steering)

    def show_queue(self) -> None:
        """The dimmed list above the prompt and the footer's Esc follow the queue."""
        steering, view = self.steering, self._queue_view
        parent = self._prompt.parent
        if view is None and (steering or self._queue) and isinstance(parent, Widget):
            from .queue import QueuedPrompts  # the first frame goes without it

            view = self._queue_view = QueuedPrompts(id="queue")
            parent.mount(view, before=self._prompt)
        if view is not None:
            view.show(steering, self._queue)
        self.refresh_bindings()

    def queue_line(self, line: str) -> None:
        """``line`` waits for the running work to end; then the queue is sent in order."""
        self._queue.append(line)
        self.show_queue()

    def steer_line(self, line: str) -> None:
        """Ctrl+S: ``line`` into the running turn, which the model gets before its next
        request. With no turn running, or for a ``/command`` or ``!command`` (only prompts
        reach a turn), it is sent as Enter sends it."""
        if not self.session_ready or not self.session.steering.open:
            self.run_line(line)
            return
        if self.connection.is_command(line) or self.connection.shell_command(line) is not None:
            self.run_line(line)
            return
        self._steering.append(line)
        self.show_queue()
        self._steer(line)

    @work(group="steer", exit_on_error=False)
    async def _steer(self, line: str) -> None:
        """A steer's ``@path`` attachments are read first: a path that cannot be attached
        is said and the text comes back into the prompt box, as for a turn. If the turn
        ended meanwhile, the text is the next line sent."""
        steered = False
        try:
            expanded = await self.connection.expand(line)
            if isinstance(expanded, str):
                self.say(f"error: {expanded}", "error")
                self._prompt.put_back([line])
                return
            try:
                steered = await self.session.steer(expanded)
            except Exception as exc:  # an on_prompt function stopped it: nothing sent
                self.say(f"error: {exc}", "error")
                self._prompt.put_back([line])
                return
        finally:
            self._steering.remove(line)
            self.show_queue()
        if not steered:  # the turn is over: first in line
            self._queue.insert(0, line)
            self._send_next()

    def take_back(self) -> list[str]:
        """Everything steered (not delivered yet) and queued, out of the queue and into
        the prompt box, before what is typed there; nothing is sent."""
        session = self._session
        taken = [steer.prompt for steer in session.steering.take()] if session else []
        taken += self._queue
        self._queue.clear()
        self.show_queue()
        if taken and self._prompt.is_attached:
            self._prompt.put_back(taken)
            self._prompt.focus()
        return taken

    def _take_last_queued(self) -> str | None:
        """Up in the empty prompt: the last queued (else steered) prompt, for editing."""
        session = self._session
        if self._queue:
            taken: str | None = self._queue.pop()
        else:
            steer = session.steering.take_last() if session is not None else None
            taken = steer.prompt if steer is not None else None
        if taken is not None:
            self.show_queue()
        return taken

    def _work_ended(self, cancelled: bool) -> None:
        """A turn, ``!command`` or command ended. Cancelled: what was queued or steered
        comes back into the prompt box (nothing is sent); else what was steered too late
        for the turn, then the queue, is sent, one line at a time."""
        session = self._session
        if session is None or session.busy:  # another turn runs: its end sends the queue
            return
        if cancelled:
            if self.take_back():
                self.notify("Cancelled: the queued prompts are back in the prompt box.")
            return
        self._queue[:0] = [steer.prompt for steer in session.steering.take()]
        self.show_queue()
        if self._queue:
            self.call_later(self._send_next)

    def _send_next(self) -> None:
        if not self._queue or self._session is None or self._session.busy:
            return
        if self.working:  # the worker that ended is finishing: a moment later
            self.set_timer(0.02, self._send_next)
            return
        line = self._queue.pop(0)
        self.show_queue()
        self._start_line(line)

    def action_steer(self) -> None:
        """Ctrl+S: the prompt's text into the running turn (an empty prompt: the queue)."""
        if self._prompt.text.strip():
            self._prompt.action_submit(steer=True)
            return
        queued, self._queue = self._queue, []
        for line in queued:
            self.steer_line(line)
        self.show_queue()

    def action_unqueue(self) -> None:
        self.take_back()

    @work(group="waiting", exit_on_error=False)
    async def _run_waiting(self) -> None:
        """The lines sent before the session was ready, once it is: one after the other
        (a second prompt waits for the first turn instead of cancelling it)."""
        await self.wait_for_session()
        while self._waiting:
            worker = self._start_line(self._waiting[0])
            if worker is not None:
                try:
                    await worker.wait()
                except (WorkerCancelled, WorkerFailed):
                    pass  # said in the chat by the worker (run_turn, run_command)
            self._waiting.pop(0)

    def say(self, text: str, kind: str | None = None) -> None:
        """Queue a note behind the events already on their way, so the chat stays in order."""
        self.post_message(OutputNote(text, kind))

    @work(group="commands", exit_on_error=False)
    async def run_command(self, line: str) -> None:
        self.post_message(UserLine(line))
        # a command still running after a moment (a Markdown command's !`…`) shows
        # "working…" and Esc, as a turn does
        shown = self.set_timer(0.2, self._show_working)
        cancelled = False
        try:
            await self.session.run_command_line(line)
        except asyncio.CancelledError:  # Esc (a Markdown command's commands or turn)
            cancelled = True
            self.say("Cancelled.", "error")
            raise
        finally:
            shown.stop()
            self.update_status()
            self.refresh_bindings()  # a command may have run a turn: Cancel goes
            self._work_ended(cancelled)

    def _show_working(self) -> None:
        self.update_status()
        self.refresh_bindings()

    @work(group="agent", exclusive=True, exit_on_error=False)
    async def run_turn(self, prompt: str) -> None:
        """A prompt, its ``@path`` attachments first: a path that cannot be attached is said
        in the chat and the prompt comes back into the box; nothing is sent then."""
        expanded = await self.connection.expand(prompt)
        if isinstance(expanded, str):
            self.say(f"error: {expanded}", "error")
            if not self._prompt.refill(prompt):
                self.notify("The prompt box was not empty: the prompt is in the history (Up).")
            return
        chips = tuple(attachment.label for attachment in expanded.attachments)
        self.post_message(UserLine(prompt, chips))
        self.update_status()
        self._announced = True
        cancelled = False
        try:
            await self.session.turn(expanded)
        except asyncio.CancelledError:
            cancelled = True
            self.say("Cancelled.", "error")
            raise
        except Exception as exc:
            self.say(f"error: {exc}", "error")
        finally:
            self._announced = False
            self.update_status()
            self.refresh_bindings()  # Cancel leaves the footer
            self._work_ended(cancelled)

    @work(group="agent", exclusive=True, exit_on_error=False)
    async def run_shell(self, command: str, outside: bool = False) -> None:
        """A ``!command``: run by the session without the model; its block in the chat
        follows the session's events. Esc cancels it (the process group is killed).
        ``outside``: a ``!!command``, run outside the sandbox."""
        if not command:
            self.say("Type a shell command after ! (e.g. !git status).", "warning")
            return
        cancelled = False
        try:
            await self.session.shell(command, sandbox=not outside)
        except asyncio.CancelledError:
            cancelled = True
            raise  # the block says it was cancelled
        except Exception as exc:
            self.say(f"error: could not run the command: {exc}", "error")
        finally:
            self.update_status()
            self.refresh_bindings()
            self._work_ended(cancelled)

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

    async def on_user_line(self, message: UserLine) -> None:
        chat = self._live_chat()
        if chat is not None:
            await chat.add_user(message.text, message.chips)

    async def on_output_note(self, message: OutputNote) -> None:
        chat = self._live_chat()
        if chat is not None:
            await chat.add_note(message.text, message.kind)

    def on_option_list_option_selected(self, event: Any) -> None:
        """A click in the Tab-completion menu picks that entry."""
        if isinstance(event.option_list, CompletionMenu):
            event.stop()
            prompt = self.query_one(PromptArea)
            prompt.apply_completion(str(event.option.prompt))
            prompt.focus()

    # -- actions ------------------------------------------------------------------------------

    @property
    def tools_panel(self) -> ToolsPanel | None:
        """The tools panel, once it has been shown (Ctrl+T)."""
        return self._tools

    @property
    def prompt(self) -> PromptArea:
        return self._prompt

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
            return self._session is not None and self._session.steering.open
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
        current = session.mode
        following = cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else "ask"
        session.set_mode(following)

    def action_cancel_turn(self) -> None:
        if self._session is not None and self._session.cancel():
            self.notify("Cancelling…")

    def action_interrupt(self) -> None:
        """Ctrl+C: cancel the turn, or close the completion menu."""
        if self._session is not None and self._session.cancel():
            self.notify("Cancelling…")
        elif isinstance(self.focused, PromptArea):
            self.focused.hide_menu()


def run_app(app: TuiAgentApp) -> int:
    """Run ``app`` in the terminal until it quits (its session closes as it unmounts)."""
    app.run()
    return 0
