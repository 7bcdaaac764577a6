"""The session: the parts of one working session, wired together (see ``Session``).

``create_session`` is the one factory the TUI, ``tui-agent run`` and the tests share.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..agent import Agent
from ..checkpoints.controller import Checkpoints, load_from
from ..conversation import journal as journal_module
from ..conversation import mentions
from ..conversation.budget import Budget
from ..conversation.conversation import Conversation
from ..conversation.mentions import Expanded
from ..conversation.steering import Steer, Steering
from ..conversation.transcript import Transcript
from ..extensions.commands import Commands, is_command_line, parse_command
from ..extensions.extensions import Extensions
from ..extensions.plugins import LoadReport
from ..permissions.permissions import MODES
from ..project.config import Config
from ..project.workspace import Workspace
from ..protocol.approval import ApprovalRequest, Approver, Decision, headless_approver
from ..protocol.context import ToolContext
from ..protocol.events import (
    ClipboardRequested,
    CommandsChanged,
    ConversationReset,
    EventBus,
    ExitRequested,
    ModeChanged,
    ShellFinished,
    ShellOutput,
    ShellStarted,
    Steered,
    ThemeRequested,
    ToolCallFinished,
    ToolCallStarted,
    ToolsChanged,
)
from ..protocol.messages import Message, UserMessage, openai_dict
from ..protocol.output import Output
from ..providers import Provider
from ..sandbox import user_shell
from ..sandbox.user_shell import ShellRun
from ..tools.toolbox import Toolbox, ToolboxEvent, held_loop

if TYPE_CHECKING:
    from ..sandbox.sandbox import Sandbox

log = logging.getLogger("tui_agent.session")
T = TypeVar("T")

PLAN_PROMPT = (
    "\n\nYou are in plan mode: you are planning, not doing. Only tools that change nothing "
    "are available. Read what you need, then answer with a plan: the steps, the files each "
    "step changes and how to check the result. Change nothing; the user switches to another "
    "mode to carry the plan out."
)


def new_session_id() -> str:
    # os.urandom(3).hex() is secrets.token_hex(3), without importing hashlib and hmac
    return f"{datetime.now():%Y%m%d-%H%M%S}-{os.urandom(3).hex()}"


class Session:
    """Everything a plugin's setup function receives: the parts of one session, wired.

    The parts each do one job: ``workspace`` (the folder, its git root, trust),
    ``extensions`` (config, plugin and tool-file loading, what a load registered),
    ``transcript`` (the conversation and its journal), ``agent`` (the loop: provider,
    toolbox, transcript, events) and ``events`` (one typed stream the app and headless
    runs follow). The session's own names are the SPEC's plus a short set for plugins."""

    def __init__(
        self,
        directory: str | Path = ".",
        *,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        trust: bool = False,
        yes: bool = False,
    ) -> None:
        self.workspace = Workspace(directory, trusted=trust)
        self.id = new_session_id()
        self._mode = "allow-all" if yes else "ask"
        self.toolbox = Toolbox(context_factory=self._tool_context, hidden=self._hidden)
        self.commands = Commands()
        self.events = EventBus()  # agent events, tool calls and notes: one stream
        self.output = Output(bus=self.events)
        flags = {"provider": provider, "model": model, "base_url": base_url}
        self.extensions = Extensions(
            self.workspace,
            toolbox=self.toolbox,
            commands=self.commands,
            output=self.output,
            flags={k: v for k, v in flags.items() if v},
        )
        self.toolbox.listen(self._announce_call)
        self.commands.listen(lambda: self.events.emit(CommandsChanged()))
        # without a person to ask (the app replaces it with its dialog): allow-all allows
        self.approver: Approver = lambda request: headless_approver(self.yes)(request)
        self._unattended = self.approver  # needs no event loop of its own
        # the app's picker (``choose``); None where nobody can pick (headless runs)
        self.chooser: Callable[[str, list[str]], Awaitable[str | None]] | None = None
        self.transcript = Transcript(self.id, self.directory, self._journal_failed)
        self.budget = Budget(
            transcript=self.transcript,
            events=self.events,
            output=self.output,
            settings=lambda: self.config.settings,
            provider=lambda: self.provider,
            system_prompt=self.system_prompt,
            tools=self.extensions.offered_tools,
        )
        self.checkpoints = Checkpoints(
            worktree=lambda: self.worktree,
            transcript=self.transcript,
            events=self.events,
            output=self.output,
            settings=lambda: self.config.settings,
            forget=self.budget.forget,
        )
        self.steering = Steering()  # sent into the running turn (steer), not delivered yet
        self.agent = Agent(
            transcript=self.transcript,
            toolbox=self.toolbox,
            events=self.events,
            output=self.output,
            settings=lambda: self.config.settings,
            provider=lambda: self.provider,
            tools=self.extensions.offered_tools,
            system_prompt=self.system_prompt,
            tool_context=self._tool_context,
            budget=self.budget,
            before_tools=self.checkpoints.before_tools,
            steering=self.steering,
        )
        self._turn: asyncio.Task[Any] | None = None
        self.themes: list[str] = []
        self.exit_requested = False

    # -- the SPEC's names -------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        """The folder the session works in."""
        return self.workspace.directory

    @property
    def worktree(self) -> Path:
        """The git root above ``directory`` (or ``directory`` outside git)."""
        return self.workspace.worktree

    @property
    def sandbox(self) -> Sandbox:
        """The shell sandbox of the current settings (``core/sandbox/sandbox.py``): ``active``
        when ``[sandbox] enabled`` and bubblewrap works here, else ``reason`` says why not.
        ``execute`` and ``!command`` run inside it."""
        from ..sandbox.sandbox import Sandbox, session_tmp

        return Sandbox.of(self.config.settings, self.worktree, session_tmp(self.id), self.directory)

    @property
    def config(self) -> Config:
        """The settings of the current load (read-only) and what plugins registered."""
        return self.extensions.config

    @property
    def provider(self) -> Provider:
        """The LLM provider in use (plugins' ``config.provider`` entries beat the built-ins)."""
        return self.extensions.provider

    @property
    def conversation(self) -> Conversation:
        """The messages so far (``transcript.conversation``)."""
        return self.transcript.conversation

    def reload(self) -> LoadReport:
        """Re-read config, plugin files and tool files; rebuild toolbox and commands in place.
        ``await session.reload()`` also waits for async ``on_close`` work and setups."""
        return self.extensions.reload(self)

    def trust(self, remember: bool = True) -> LoadReport:
        """Trust this folder (remembered unless ``remember=False``) and load its code."""
        self.workspace.trust(remember)
        return self.reload()

    # -- the permission mode ----------------------------------------------------------------

    @property
    def mode(self) -> str:
        """The permission mode: "ask" (the rules as configured), "auto-edit" (write and
        edit inside the worktree need no asking), "plan" (only read-only tools are offered,
        and the model is told it is planning) or "allow-all" (every ask is allowed). Deny
        rules hold in every mode (the ``permissions`` plugin applies them)."""
        return self._mode

    def set_mode(self, mode: str) -> None:
        """Switch the permission mode (Shift+Tab cycles ask, auto-edit and plan)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
        if mode != self._mode:
            self._mode = mode
            self.events.emit(ModeChanged(mode))

    @property
    def yes(self) -> bool:
        """Every ``ask`` is allowed (``--yes``, or the allow-all mode)."""
        return self._mode == "allow-all"

    def system_prompt(self) -> str:
        """What the model is told first: the workspace's prompt, and in plan mode that it
        is planning."""
        prompt = self.workspace.system_prompt()
        if self.extensions.moments.start_context:  # what on_start functions said
            prompt += "\n\n" + self.extensions.moments.start_context
        return prompt + PLAN_PROMPT if self._mode == "plan" else prompt

    # -- the model ------------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return self.extensions.provider_name

    @property
    def model(self) -> str | None:
        return self.extensions.model

    def set_model(self, model: str | None = None, provider: str | None = None) -> None:
        """Switch model and/or provider for the rest of the session."""
        self.extensions.set_model(model, provider)

    async def complete(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """One reply to ``messages`` (typed or OpenAI dicts; the system prompt is added), no
        tools, the transcript untouched."""
        from ..providers.base import reply_text

        system = {"role": "system", "content": self.workspace.system_prompt()}
        return await reply_text(self.provider.stream([system, *map(openai_dict, messages)], []))

    # -- approvals --------------------------------------------------------------------------

    async def ask(self, request: ApprovalRequest) -> Decision:
        """Ask the user (the TUI's dialog, or the headless policy) about one tool call.

        A call that sync code made on the event loop's own thread (``toolbox.run`` from a
        sync command or hook) runs while that loop waits for it, so no dialog can open:
        refused at once, saying why, instead of waiting forever."""
        if self.approver is not self._unattended and held_loop() is not None:
            from ..protocol.errors import PermissionDenied

            raise PermissionDenied(
                f"Permission denied: {request.tool} needs approval, and no dialog can open "
                "while sync code holds the app's event loop (toolbox.run(...) called from a "
                "sync command or hook): make it `async def` and `await "
                f"session.toolbox.run(...)`, or allow {request.tool} in [permission]"
            )
        return await self.approver(request)

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        """Let the user pick one of ``options`` (the app shows a list under ``title``): the
        option picked, or None when it was dismissed or nobody can pick (headless runs;
        say what to type instead there)."""
        if self.chooser is None or not options or held_loop() is not None:
            return None  # nobody to pick, or sync code holds the loop the picker needs
        return await self.chooser(title, list(options))

    # -- conversation -----------------------------------------------------------------------

    def _journal_failed(self, text: str) -> None:
        self.output.say(text, kind="error")

    def record(self, message: Mapping[str, Any]) -> Message:
        """Append a message (typed, or an OpenAI dict) to the conversation and the journal
        (flushed at once); the typed message it became."""
        return self.transcript.record(message)

    def _announce_call(self, event: ToolboxEvent) -> None:
        """The toolbox's news goes on the session's events: every tool call, whoever made
        it (the chat and headless show it; the toolbox is the one source of call events),
        and every change of tools or hooks (the tools panel follows it)."""
        if event.kind == "call_started":
            args = dict(event.args) if event.args is not None else None
            raw = event.arguments
            if not raw and args is not None:
                raw = json.dumps(args, ensure_ascii=False, default=str)
            self.events.emit(ToolCallStarted(event.call_id, event.called_as, raw, args))
        elif event.kind == "call_finished" and event.result is not None:
            self.events.emit(
                ToolCallFinished(event.call_id, event.called_as, event.result, event.elapsed)
            )
        elif event.kind in ("tools", "hooks"):
            self.events.emit(ToolsChanged(event.kind, event.name))

    def _hidden(self, name: str) -> bool:
        return self.extensions.hidden(name)

    def _tool_context(self, call_id: str = "", message_id: str = "") -> ToolContext:
        return self.workspace.tool_context(self.id, call_id, message_id)

    def expand(self, prompt: str) -> Expanded:
        """``prompt`` with the files and folders its ``@path`` mentions name attached (see
        ``conversation/mentions.py`` for which ``@`` counts): ``.content`` is what the model gets,
        ``.attachments`` what was attached. Raises ``MentionError`` (nothing to send) for a
        path that is missing or outside the project."""
        return mentions.expand(prompt, self.directory, self.worktree)

    async def turn(self, prompt: str | Expanded) -> str:
        """Run one user turn to the final reply. ``cancel()`` stops it, transcript intact.
        A ``str`` is expanded first (``expand``: a bad ``@path`` raises ``MentionError``
        before anything is recorded); an ``Expanded`` is sent as it is. ``on_prompt``
        functions may stop it first (``PromptBlocked``: nothing recorded) or add context;
        ``on_stop`` functions may keep it going.

        What ``steer`` sent while it ran and its last reply no longer reached (that reply
        had no tool calls) starts the next turn at once, one turn per steer, in order
        (``Steered`` with ``next_turn``); the reply returned is the last turn's."""
        expanded = prompt if isinstance(prompt, Expanded) else self.expand(prompt)
        self._turn = asyncio.current_task()
        self.steering.open = True
        try:
            await self.ready()
            moments = self.extensions.moments
            await moments.started()  # the conversation's first turn: on_start functions
            content = await moments.submitted(expanded.prompt, expanded.content)
            reply = await self._one_turn(Steer(expanded.prompt, content))
            while (steer := self.steering.take_first()) is not None:
                self.events.emit(Steered(steer.prompt, steer.content, next_turn=True))
                reply = await self._one_turn(steer)
            return reply
        finally:
            self._turn = None
            self.steering.open = False

    async def _one_turn(self, prompt: Steer) -> str:
        """One turn of a prompt whose prompt functions ran, with its checkpoint."""
        self.checkpoints.start(prompt.prompt)
        try:
            outcome = await self.extensions.moments.until_stopped(self.agent.turn, prompt.content)
            return outcome.reply
        finally:
            await self._end_checkpoint()

    async def steer(self, prompt: str | Expanded) -> bool:
        """Send ``prompt`` into the running turn: the model gets it as a user message at the
        next step boundary, after the tool results of the reply streaming now and before
        its next request; when that reply has no tool calls, it is the next turn's prompt
        (see ``turn``). It is expanded and the ``on_prompt`` functions run now, as for a
        turn (``MentionError``, ``PromptBlocked``: nothing sent). False when no turn runs
        (a ``!command`` is no turn): nothing is done, send it as a turn instead. Until it
        is delivered ``steering`` holds it; after a cancel, take it back from there."""
        if not self.steering.open:
            return False
        expanded = prompt if isinstance(prompt, Expanded) else self.expand(prompt)
        content = await self.extensions.moments.submitted(expanded.prompt, expanded.content)
        if not self.steering.open:  # the turn ended while the prompt functions ran
            return False
        self.steering.add(Steer(expanded.prompt, content))
        return True

    async def shell(self, command: str, *, sandbox: bool = True) -> ShellRun:
        """Run ``command`` as the user typed it after ``!``: ``bash -c`` in the session's
        folder, no model and no approval (see ``sandbox/user_shell.py``), in the sandbox when it
        is on unless ``sandbox=False`` (``!!command``: the user's own choice, never the
        model's). Its output streams as
        ``ShellOutput`` events between ``ShellStarted`` and ``ShellFinished``; the command
        and its output (the end of a long one) are then recorded as a user message, so the
        next prompt can refer to them. ``cancel()`` kills it and everything it started;
        what it printed until then is recorded, and ``CancelledError`` goes on up."""
        self._turn = asyncio.current_task()
        box = self.sandbox if sandbox else None
        runner = user_shell.Runner(
            command,
            self.directory,
            lambda text: self.events.emit(ShellOutput(text)),
            sandbox=box,
        )
        try:
            self.events.emit(ShellStarted(command, outside=not sandbox and self.sandbox.active))
            try:
                run = await runner.run()
            except asyncio.CancelledError:
                run = await runner.stop()
                self._shell_done(run)
                raise
            except OSError as exc:  # bash could not start: nothing ran, nothing recorded
                failed = user_shell.ShellRun(command, f"could not run it: {exc}", None)
                self.events.emit(ShellFinished(failed))
                raise
            self._shell_done(run)
            if box is not None and box.restored:  # protected files put back, /tmp emptied
                self.output.say("Sandbox: " + " ".join(box.restored))
            if box is not None and box.active and not run.ok:
                why = box.why(run.output)
                if why is not None:
                    self.output.say(
                        f"That ran in the sandbox and may have failed because of it ({why}). "
                        f"To run it outside the sandbox: !!{command}"
                    )
            return run
        finally:
            self._turn = None

    def _shell_done(self, run: ShellRun) -> None:
        self.transcript.record(UserMessage(user_shell.message(run)))
        self.events.emit(ShellFinished(run))

    async def _end_checkpoint(self) -> None:
        """The turn's last snapshot, also after a cancel (a second cancel skips it)."""
        try:
            await self.checkpoints.end()
        except asyncio.CancelledError:
            pass
        except Exception:
            log.warning("checkpoint at the end of the turn failed", exc_info=True)

    # -- lifecycle: what a plugin's setup registers for one load ---------------------------

    async def ready(self) -> None:
        """Wait for the last load (its async part too), then run the ``on_turn`` functions
        (``tui-agent tools`` lists MCP tools this way); every turn starts with this."""
        await self.extensions.ready()

    def on_turn(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """Call ``fn()`` (sync or ``async``) at the start of every turn, before the model is
        asked anything (the MCP plugin waits there for its servers). Registrations belong
        to one load: ``reload()`` clears them and the setups register again."""
        return self.extensions.on_turn(fn)

    def on_close(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """Call ``fn()`` (sync or ``async``) when this load ends: the session closes (the app
        quits, a headless run ends) or ``reload()`` replaces the load (the new setups run
        after it finished). What must outlive a reload belongs in ``kept``."""
        return self.extensions.on_close(fn)

    def on_prompt(self, fn: Callable[[str], Any]) -> Callable[[str], Any]:
        """Call ``fn(prompt)`` (sync or ``async``; the prompt as typed) before a prompt is
        recorded: a text it returns is added to what the model gets (in a ``<hook-context>``
        block after the prompt); raising (``tui_agent.PromptBlocked``) stops the prompt,
        nothing is recorded or sent, and ``turn`` raises it. Belongs to one load."""
        self.extensions.moments.prompt.append(fn)
        return fn

    def on_stop(self, fn: Callable[[str, int], Any]) -> Callable[[str, int], Any]:
        """Call ``fn(reply, continued)`` when the model has finished a turn (not after an
        error, a cancel or ``max_steps``; ``continued``: how often this prompt's turn was
        kept going already). A text it returns keeps the turn going with it as the next
        user message, at most ``MAX_STOP_CONTINUATIONS`` (3) times. Belongs to one load."""
        self.extensions.moments.stop.append(fn)
        return fn

    def on_start(self, fn: Callable[[str], Any]) -> Callable[[str], Any]:
        """Call ``fn(source)`` before the first turn of a conversation (``source``:
        "startup", "resume" after ``resume()``, "clear" after ``clear()``): a text it
        returns is part of the system prompt for that conversation. Belongs to one load."""
        self.extensions.moments.start.append(fn)
        return fn

    def hide_tools(self, hidden: Callable[[str], bool]) -> Callable[[str], bool]:
        """Keep the tools for which ``hidden(name)`` is true from the model: they are not
        offered, and unknown-tool errors do not name them (the ``permissions`` plugin hides
        tools denied for every call). Belongs to one load, like ``on_turn``."""
        return self.extensions.hide_tools(hidden)

    def kept(self, key: str, make: Callable[[], T]) -> T:
        """Plugin state that outlives ``reload()``: the object ``make()`` returned the first
        time ``key`` was asked for, typed (the ``permissions`` plugin keeps its session
        allows this way)."""
        return self.extensions.kept(key, make)

    async def close(self) -> None:
        """Run the ``on_close`` functions once, newest first (failures are logged), then
        close the journal (a message recorded later opens it again)."""
        await self.extensions.close()
        self.transcript.journal.close()
        from ..sandbox import netproxy
        from ..sandbox.sandbox import (  # the sandbox's private /tmp, if it ran
            release_tmp,
            session_tmp,
        )

        netproxy.stop(session_tmp(self.id))  # its allowed-hosts proxy, if one ran
        release_tmp(session_tmp(self.id))

    def cancel(self) -> bool:
        """Cancel the running turn: the stream closes and running tools are cancelled.
        False when there is none, or it was cancelled already and is finishing up (its
        last checkpoint): a second Ctrl+C in ``run`` then quits at once."""
        task = self._turn
        if task is None or task.done() or task.cancelling():
            return False  # nothing to cancel, or cancelled already (it is finishing up)
        task.cancel()
        return True

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Make the current task the session's work for the ``with`` block: ``busy`` is
        true and ``cancel()`` cancels it. A Markdown command runs its ``!`` commands and
        its turn so, and Esc stops either."""
        self._turn = asyncio.current_task()
        try:
            yield
        finally:
            self._turn = None

    def clear(self) -> None:
        """Forget the conversation; later messages go to a new journal."""
        self.conversation.clear()
        self.id = new_session_id()
        self.transcript.new_journal(self.id)
        self.budget.forget()
        self.checkpoints.reset()
        self.extensions.moments.restart("clear")
        self.events.emit(ConversationReset("clear"))

    def sessions(self) -> list[journal_module.SessionInfo]:
        """Journaled sessions of this folder, newest first."""
        return journal_module.list_sessions(self.directory)

    def request_exit(self) -> None:
        """Ask the app to quit (``/exit``); headless runs end after the turn anyway."""
        self.exit_requested = True
        self.events.emit(ExitRequested())

    def request_theme(self, name: str) -> None:
        self.events.emit(ThemeRequested(name))

    def request_copy(self, text: str) -> None:
        """Ask the app to put ``text`` on the clipboard (``/copy``); it says when it did."""
        self.events.emit(ClipboardRequested(text))

    def resume(self, session_id: str | None = None) -> bool:
        """Load a journaled session (the last one of this folder without an id) and go on
        with it; False when there is none. ``Transcript.resume`` reads its newest messages
        first and the rest on the first use of the whole conversation."""
        path = Transcript.find(self.directory, session_id)
        if path is None:
            return False
        self.id = path.stem
        self.transcript.resume(path)
        load_from(path, self.checkpoints)
        self.budget.forget()
        self.extensions.moments.restart("resume")
        self.events.emit(ConversationReset("resume"))
        return True

    # -- running ----------------------------------------------------------------------------

    async def run_command_line(self, line: str) -> bool:
        """Run ``/name args`` typed at the prompt. False when the line is not a command.

        Unknown names list every command; a command that raises prints ``error: <message>``.
        """
        if not is_command_line(line):
            return False
        parsed = parse_command(line)
        if parsed is None:  # a bare "/": what there is to type
            self.output.say(f"Commands: {', '.join(self.commands.names) or '(none)'}")
            return True
        name, args = parsed
        try:
            ran = await self.commands.run(name, args)
        except Exception as exc:
            log.warning("command /%s failed", name, exc_info=True)
            self.output.say(f"error: {exc or type(exc).__name__}", kind="error")
            return True
        if not ran:
            names = ", ".join(self.commands.names) or "(none)"
            self.output.say(f"unknown command /{name}. Commands: {names}", kind="error")
        return True

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, directory={str(self.directory)!r})"


def create_session(
    directory: str | Path = ".",
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    trust: bool = False,
    yes: bool = False,
    load: bool = True,
) -> Session:
    """Build a session with config, plugins and tool files loaded (the TUI, ``run`` and tests).

    ``load=False`` leaves loading to the caller (``session.reload()``): the app does it
    right after its first frame, so start-up does not wait for plugins.
    """
    session = Session(
        directory, provider=provider, model=model, base_url=base_url, trust=trust, yes=yes
    )
    if load:
        session.reload()
    return session
