"""The app's ground floor (``TuiAgentApp`` builds on it, through ``sending.SendingApp``):
its session, made after the first frame (or given ready), the ``Connection`` to the core,
the chat and the prompt it holds, the status on the prompt's border, and the messages that
keep the chat in order (a note said, a line sent).

Imports nothing of the core at run time (the app connects its session in ``app.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget

from .chat import ChatView
from .heap import Heap
from .prompt_standin import PromptStandIn, Typed

if TYPE_CHECKING:  # the core is imported after the first frame (see TuiAgentApp._connect)
    from ..core.extensions.commands import Completion
    from ..core.session.session import Session
    from .connected import Connection
    from .prompt import PromptArea
    from .status import StatusPart


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


class SessionApp(App[None]):
    """The session, the chat, the prompt and the status of ``TuiAgentApp`` (see there)."""

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
        awaits ``wait_for_session()``. (``TuiAgentApp`` connects a ready ``session``.)"""
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
        self.heap = Heap()
        self._chat = ChatView(
            id="chat", heap=self.heap, first_frame_drawn=lambda: self.first_frame_drawn
        )
        # the first frame shows the prompt's stand-in (Textual's TextArea is a tenth of the
        # instructions to it); _bring_prompt puts the prompt in its place right after
        self._standin: PromptStandIn | None = PromptStandIn(id="prompt")
        self._prompt: PromptArea | None = None
        self._held_keys: list[Typed] | None = None  # keys (and pastes) for the prompt as it comes
        self._replayed: Typed | None = None  # the held one the app handles now
        self.first_frame_drawn = False
        self._status_width = 0  # the prompt's width the status was last fitted to
        self._session: Session | None = None
        self._connection: Connection | None = None

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

    @property
    def chat(self) -> ChatView:
        return self._chat

    @property
    def prompt(self) -> PromptArea:
        """The prompt, from right after the first frame on (``_bring_prompt``); before
        that its stand-in is drawn and this raises."""
        if self._prompt is None:
            raise RuntimeError("the prompt comes right after the first frame")
        return self._prompt

    @property
    def prompt_ready(self) -> bool:
        """The prompt has taken its stand-in's place (right after the first frame)."""
        return self._prompt is not None

    @property
    def _prompt_box(self) -> PromptArea | PromptStandIn:
        """What is in the prompt's place: its stand-in in the first frame, then the prompt."""
        if self._prompt is not None:
            return self._prompt
        assert self._standin is not None
        return self._standin

    def typing(self) -> bool:
        """The user is typing in the prompt: streamed text waits (blocks.live.user_typing)."""
        return self._prompt_box.typing()

    def _make_prompt(self) -> PromptArea:
        from .prompt import PromptArea

        prompt = PromptArea(self._complete, id="prompt")
        prompt.find_files = self._find_files
        if self._connection is not None:  # a session given ready is connected already
            prompt.keep_history(self._connection.history)
        return prompt

    async def _bring_prompt(self) -> None:
        """Right after the first frame (``_load``): the prompt takes its stand-in's place
        (focused if the stand-in was, with its border's status). The keys typed into the
        stand-in, then those that come meanwhile (``on_event`` holds them), reach it in
        order through the app's key handling, one at a time (``_replay_keys``)."""
        standin = self._standin
        if standin is None or not standin.is_attached:
            return
        held: list[Typed] = []
        self._held_keys = held  # from now on the app keeps new keys for the prompt
        prompt = self._make_prompt()
        prompt.border_subtitle = standin.border_subtitle
        screen, parent = standin.screen, standin.parent
        assert isinstance(parent, Widget)
        siblings = list(parent.children)
        following = siblings[siblings.index(standin) + 1 :]
        focused = screen.focused is standin
        with self.batch_update():  # no frame without a prompt
            if focused:
                screen.set_focus(None)  # not on to the chat while the stand-in goes
            await standin.remove()  # after the keys on their way to it: it keeps them
            self._prompt, self._standin = prompt, None
            await parent.mount(prompt, before=following[0] if following else None)
            if focused:
                screen.set_focus(prompt)
        held[:0] = standin.kept
        self.run_worker(self._replay_keys(prompt), group="prompt-keys", exit_on_error=False)

    async def on_event(self, event: events.Event) -> None:
        """While the prompt comes and the stand-in's keys are replayed, new keys wait
        behind them (``_held_keys``)."""
        held = self._held_keys
        if (
            held is not None
            and isinstance(event, (events.Key, events.Paste))
            and not event.is_forwarded
            and event is not self._replayed
        ):
            held.append(event)
            return
        await super().on_event(event)

    async def _replay_keys(self, prompt: PromptArea) -> None:
        """The held keys, one at a time, each as the app handles a key typed: the app
        gives it to the prompt, and what the prompt leaves (Enter, Backspace: bindings)
        comes back up to the app's bindings before the next key goes."""
        held = self._held_keys
        while held:
            key = self._replayed = held.pop(0)
            self.post_message(key)
            for pump in (self, *prompt.ancestors_with_self):
                done = asyncio.Event()
                if pump.call_later(done.set):
                    await done.wait()
        self._held_keys = self._replayed = None

    def _live_chat(self) -> ChatView | None:
        """The chat, or None once the app is shutting down (events still arrive then).
        Kept, not queried: a query walks every widget, and a long chat has thousands (it
        was a fifth of the UI's time while a reply streamed)."""
        return self._chat if self._chat.is_attached else None

    def say(self, text: str, kind: str | None = None) -> None:
        """Queue a note behind the events already on their way, so the chat stays in order."""
        self.post_message(OutputNote(text, kind))

    async def on_user_line(self, message: UserLine) -> None:
        chat = self._live_chat()
        if chat is not None:
            await chat.add_user(message.text, message.chips)

    async def on_output_note(self, message: OutputNote) -> None:
        chat = self._live_chat()
        if chat is not None:
            await chat.add_note(message.text, message.kind)

    def refill_prompt(self, text: str) -> None:
        if not self.prompt.refill(text):
            self.notify("The prompt box was not empty: the undone prompt was not put back.")
        self.prompt.focus()

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
        "no sandbox", "mode: ", the context share; the mode, the primary agent ("agent:
        plan", after /agent), the subagents running ("2 subagents") and "working…" stay."""
        from .status import StatusPart  # with the session: after the first frame

        session = self.session
        try:
            model = session.provider.model
        except Exception as exc:
            model = f"? ({exc})"
        parts = [StatusPart((f"{session.extensions.provider_name} / {model}", model, ""), (20, 40))]
        use = session.conversation.budget.use(
            load=False
        )  # not the unread part of a resumed journal
        if use is not None:
            parts.append(StatusPart((use.label(), f"ctx {use.share:.0%}", ""), (30, 60)))
        parts.append(StatusPart((f"{session.conversation.usage.total_tokens} tokens", ""), (10,)))
        cost = self.cost_label()  # "" where no model used has a price: no cost, never $0
        if cost:
            parts.append(StatusPart((cost, ""), (25,)))
        parts.append(
            StatusPart((f"mode: {session.permissions.mode}", session.permissions.mode), (50,))
        )
        primary = session.agents.primary  # /agent NAME: the session is that agent
        if primary is not None:
            parts.append(StatusPart((f"agent: {primary.name}", primary.name), (50,)))
        # "sandbox" when on, "no sandbox" when wanted but missing; only after the first
        # frame (a resume draws this status before it): finding whether bubblewrap works
        # here starts it once, 15-20 ms
        sandbox = session.sandbox if self.first_frame_drawn else None
        if sandbox is None:
            pass
        elif sandbox.active:  # the usual state: gives way before the model's name
            parts.append(StatusPart(("sandbox", ""), (35,)))
        elif sandbox.settings.enabled:  # a warning: stays longer than the model's name
            parts.append(StatusPart(("no sandbox", ""), (45,)))
        subagents = len(session.agents.running)
        if subagents:  # while a turn's task calls run: as long as "working…" stays
            parts.append(StatusPart((f"{subagents} subagent{'s' if subagents > 1 else ''}",)))
        if session.busy:
            parts.append(StatusPart(("working…",)))
        return parts

    def cost_label(self) -> str:
        """The session's cost so far ("$0.0123"; "≥ …" when a model used has no price)."""
        session = self.session
        try:  # the bundled cost plugin's tally (tui_agent.pricing.tally), if it runs
            counted = session.extensions.kept("cost", _no_tally)
        except LookupError:
            return ""
        label: str = counted.cost(session.config.settings).label()
        return label

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
        prompt = self._prompt_box
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
        if self._prompt_box.outer_size.width != self._status_width:
            self.update_status()


def _no_tally() -> Any:
    raise LookupError("the cost plugin is not loaded: no tally")
