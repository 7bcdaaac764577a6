"""What the app sends to its session: a line from the prompt or the palette (a turn, a
``/command`` or a ``!command``), and the lines sent while work runs: queued (sent one at a
time when the work ends) or steered into the running turn. ``TuiAgentApp`` builds on it.

Imports nothing of the core at run time: the names of the core come through the app's
``Connection``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual import work
from textual.widget import Widget
from textual.worker import Worker, WorkerCancelled, WorkerFailed  # textual.app imports it

from .session_app import SessionApp, UserLine

if TYPE_CHECKING:
    from .prompt import PromptArea
    from .queue import QueuedPrompts


class SendingApp(SessionApp):
    """Lines sent, the queue and steering of ``TuiAgentApp`` (see there)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting: list[str] = []  # sent before the session was loaded: run in order then
        self._queue: list[str] = []  # sent while working: each sent when the work ends
        self._steering: list[str] = []  # steered, on their way into session.conversation.steering
        self._queue_view: QueuedPrompts | None = None  # mounted above the prompt when needed
        self._announced = False  # run_turn showed the prompt of the turn about to start

    def _make_prompt(self) -> PromptArea:
        prompt = super()._make_prompt()
        prompt.take_queued = self._take_last_queued  # Up in the empty prompt
        return prompt

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
        pending = (
            [steer.prompt for steer in session.conversation.steering.pending] if session else []
        )
        return (*pending, *self._steering)

    def show_queue(self) -> None:
        """The dimmed list above the prompt and the footer's Esc follow the queue."""
        steering, view = self.steering, self._queue_view
        box = self._prompt_box
        parent = box.parent
        if view is None and (steering or self._queue) and isinstance(parent, Widget):
            from .queue import QueuedPrompts  # the first frame goes without it

            view = self._queue_view = QueuedPrompts(id="queue")
            parent.mount(view, before=box)
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
        if not self.session_ready or not self.session.conversation.steering.open:
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
                self.prompt.put_back([line])
                return
            try:
                steered = await self.session.steer(expanded)
            except Exception as exc:  # an on_prompt function stopped it: nothing sent
                self.say(f"error: {exc}", "error")
                self.prompt.put_back([line])
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
        taken = [steer.prompt for steer in session.conversation.steering.take()] if session else []
        taken += self._queue
        self._queue.clear()
        self.show_queue()
        prompt = self._prompt
        if taken and prompt is not None and prompt.is_attached:
            prompt.put_back(taken)
            prompt.focus()
        return taken

    def _take_last_queued(self) -> str | None:
        """Up in the empty prompt: the last queued (else steered) prompt, for editing."""
        session = self._session
        if self._queue:
            taken: str | None = self._queue.pop()
        else:
            steer = session.conversation.steering.take_last() if session is not None else None
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
        self._queue[:0] = [steer.prompt for steer in session.conversation.steering.take()]
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
        if self.prompt.text.strip():
            self.prompt.action_submit(steer=True)
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

    # -- running: a command, a turn, a !command -------------------------------------------------

    @work(group="commands", exit_on_error=False)
    async def run_command(self, line: str) -> None:
        # a command answers in the chat only: follow the bottom again (a search or a
        # scroll up left the view above, and the answer would come below it); a prompt
        # sent while reading above leaves the view where it is
        chat = self._live_chat()
        if chat is not None:
            chat.anchor()
        self.post_message(UserLine(line))
        # a command still running after a moment (a Markdown command's !`…`) shows
        # "working…" and Esc, as a turn does
        shown = self.set_timer(0.2, self._show_working)
        cancelled = False
        try:
            await self.session.commands.run_line(line)
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
        if not self.screen_stack:  # the app is closing (the timer fired as it did)
            return
        self.update_status()
        self.refresh_bindings()

    @work(group="agent", exclusive=True, exit_on_error=False)
    async def run_turn(self, prompt: str) -> None:
        """A prompt, its ``@path`` attachments first: a path that cannot be attached is said
        in the chat and the prompt comes back into the box; nothing is sent then."""
        expanded = await self.connection.expand(prompt)
        if isinstance(expanded, str):
            self.say(f"error: {expanded}", "error")
            if not self.prompt.refill(prompt):
                self.notify("The prompt box was not empty: the prompt is in the history (Up).")
            return
        chips: tuple[str, ...] = tuple(attachment.label for attachment in expanded.attachments)
        images = [a.image for a in expanded.attachments if a.image is not None]
        if images:  # previewed under the chips where the terminal shows images
            from .blocks.image import Chips

            chips = Chips(chips, images)
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
