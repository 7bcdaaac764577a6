"""The session: the parts of one working session, wired together (see ``Session``).

``create_session`` is the one factory the TUI, ``tui-agent run`` and the tests share.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ..agent import Agent
from ..checkpoints.controller import Checkpoints, load_from
from ..conversation.budget import Budget
from ..conversation.mentions import Expanded
from ..conversation.steering import Steer
from ..delegation import Delegation
from ..extensions.commands import Commands
from ..extensions.extensions import Extensions
from ..extensions.plugins import LoadReport
from ..project.config import Config, LoadProblem
from ..project.workspace import Workspace
from ..protocol.context import ToolContext
from ..protocol.events import (
    Attention,
    CommandsChanged,
    EventBus,
    ShellFinished,
    ShellOutput,
    ShellStarted,
    Steered,
    ToolCallFinished,
    ToolCallStarted,
    ToolsChanged,
)
from ..protocol.frontend import Frontend, Unattended
from ..protocol.messages import UserMessage
from ..protocol.output import Output
from ..providers import Provider
from ..sandbox import user_shell
from ..sandbox.user_shell import ShellRun
from ..tools.toolbox import Toolbox, ToolboxEvent
from . import legacy
from .conversation import SessionConversation
from .parts import Guarded, Permissions

if TYPE_CHECKING:
    from ..sandbox.sandbox import Sandbox

log = logging.getLogger("tui_agent.session")
F = TypeVar("F", bound=Callable[..., Any])
MOMENTS = ("turn", "close", "prompt", "stop", "start", "compact", "subagent_stop", "end")

PLAN_PROMPT = (
    "\n\nYou are in plan mode: you are planning, not doing. Only tools that change nothing "
    "are available. Read what you need, then answer with a plan: the steps, the files each "
    "step changes and how to check the result. Change nothing; the user switches to another "
    "mode to carry the plan out."
)


class Session:
    """Everything a plugin's setup function receives: the parts of one session, wired.

    Its names are few (README "The session"): the parts, each doing one job
    (``workspace``, ``config``, ``extensions``, ``permissions``, ``sandbox``, ``toolbox``,
    ``commands``, ``conversation``, ``checkpoints``, ``events``, ``output``,
    ``frontend``), the SPEC's ``provider``, ``directory``, ``worktree`` and ``id``, the
    actions (``turn``, ``steer``, ``shell``, ``cancel``, ``busy``, ``running``) and the
    lifecycle (``reload``, ``close``, ``on``). The names it had before warn once and
    still work (``legacy.py``)."""

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
        self.toolbox = Toolbox(context_factory=self._tool_context, hidden=self._hidden)
        self.events = EventBus()  # agent events, tool calls and notes: one stream
        self.output = Output(bus=self.events)
        self.commands = Commands(output=self.output)
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
        self._frontend = Guarded(Unattended(lambda: self.permissions.yes))
        self.permissions = Permissions(self.events, lambda: self._frontend, yes)
        self.conversation = SessionConversation(
            self.workspace.directory,
            events=self.events,
            on_failure=self._journal_failed,
            worktree=lambda: self.worktree,
            system_prompt=self._own_prompt,
            base_prompt=self.workspace.system_prompt,
            provider=lambda: self.provider,
        )
        budget = Budget(
            transcript=self.conversation,
            events=self.events,
            output=self.output,
            settings=lambda: self.config.settings,
            provider=lambda: self.provider,
            system_prompt=self._own_prompt,
            tools=self._offered_tools,
            before_compact=lambda trigger, focus: self.extensions.moments.compacting(
                trigger, focus
            ),
        )
        self.conversation.budget = budget
        self.checkpoints = Checkpoints(
            worktree=lambda: self.worktree,
            transcript=self.conversation,
            events=self.events,
            output=self.output,
            settings=lambda: self.config.settings,
            forget=budget.forget,
        )
        self.conversation.on_reset.append(self._conversation_reset)
        self._agent = Agent(
            transcript=self.conversation,
            toolbox=self.toolbox,
            events=self.events,
            output=self.output,
            settings=lambda: self.config.settings,
            provider=self._own_provider,
            tools=self._offered_tools,
            system_prompt=self._own_prompt,
            tool_context=self._tool_context,
            budget=budget,
            before_tools=self.checkpoints.before_tools,
            steering=self.conversation.steering,
        )
        self.agents = Delegation(
            project=lambda: self.workspace.project,
            trusted=lambda: self.workspace.trusted,
            toolbox=self.toolbox,
            events=self.events,
            settings=lambda: self.config.settings,
            provider_for=self.extensions.provider_for,
            providers=lambda: [self.extensions.provider_name],
            offered_tools=self.extensions.offered_tools,
            system_prompt=self._system_prompt,
            tool_context=self._tool_context,
            write=lambda record: self.conversation.journal.write_record(record),
            problems=self._agent_problems,
            until_stopped=lambda *run: self.extensions.moments.subagent_until_stopped(*run),
        )
        self._agent.parallel = lambda name: self.toolbox.resolve(name) == "task"
        self._agent.allowed = self.agents.allowed  # a primary agent's tools (/agent)
        self.conversation._usage = lambda: self._agent.tokens
        self._turn: asyncio.Task[Any] | None = None

    # -- the parts the SPEC names, and the frontend ---------------------------------------

    @property
    def id(self) -> str:
        """The conversation's journal id (a new one after ``conversation.clear()``)."""
        return self.conversation.id

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
        """The shell sandbox of the current settings (``core/sandbox/``): ``active`` when
        ``[sandbox] enabled`` and bubblewrap works here, else ``reason`` says why not.
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
    def frontend(self) -> Guarded:
        """Who the person is: the app's dialogs and actions, or (headless, tests) a policy.
        ``approve(request)``, ``choose(title, options)`` (None where nobody can pick),
        ``exit()``, ``theme(name)``, ``copy(text)``, ``themes``, ``interactive``. The app
        sets its own: ``session.frontend = AppFrontend(app)``."""
        return self._frontend

    @frontend.setter
    def frontend(self, frontend: Frontend) -> None:
        self._frontend = frontend if isinstance(frontend, Guarded) else Guarded(frontend)

    # -- lifecycle ----------------------------------------------------------------------------

    def reload(self) -> LoadReport:
        """Re-read config, plugin files and tool files; rebuild toolbox and commands in place.
        ``await session.reload()`` also waits for async ``close`` work and setups."""
        return self.extensions.reload(self)

    @overload
    def on(self, moment: str) -> Callable[[F], F]: ...
    @overload
    def on(self, moment: str, fn: F) -> F: ...
    def on(self, moment: str, fn: F | None = None) -> F | Callable[[F], F]:
        """Call ``fn`` (sync or ``async``) at a moment of this load (``reload()`` clears
        them, the setups register again); also a decorator, ``@session.on("prompt")``.

        - ``"turn"``: ``fn()`` at the start of every turn, before the model is asked
          anything (the MCP plugin waits there for its servers).
        - ``"close"``: ``fn()`` when the load ends (the session closes, or ``reload()``
          replaces it); what must outlive a reload belongs in ``extensions.kept``.
        - ``"prompt"``: ``fn(prompt)`` before a prompt is recorded: a text it returns is
          added to what the model gets (a ``<hook-context>`` block after the prompt);
          raising (``tui_agent.PromptBlocked``) stops the prompt, nothing is recorded.
        - ``"stop"``: ``fn(reply, continued)`` when the model finished a turn (not after an
          error, a cancel or ``max_steps``): a text returned keeps the turn going with it
          as the next user message, at most ``MAX_STOP_CONTINUATIONS`` (3) times.
        - ``"start"``: ``fn(source)`` before a conversation's first turn ("startup",
          "resume", "clear"): a text returned joins the system prompt.
        - ``"compact"``: ``fn(trigger, instructions)`` before a compaction ("manual" for
          ``/compact`` and what was typed after it, "auto" when the window fills).
        - ``"subagent_stop"``: ``fn(agent, call_id, reply, continued)`` when a subagent
          finished its task: a text returned keeps it going, as ``"stop"`` does.
        - ``"end"``: ``fn(reason)`` once, when the session closes (``close(reason)``)."""
        if fn is None:
            return lambda f: self.on(moment, f)
        extensions = self.extensions
        if moment == "turn":
            extensions.on_turn(fn)
        elif moment == "close":
            extensions.on_close(fn)
        elif moment in ("prompt", "stop", "start", "compact", "subagent_stop", "end"):
            getattr(extensions.moments, moment).append(fn)
        else:
            raise ValueError(f"unknown moment {moment!r}: one of {', '.join(MOMENTS)}")
        return fn

    async def close(self, reason: str = "other") -> None:
        """Run the ``end`` functions with ``reason`` (Claude's SessionEnd reasons: the app
        says "prompt_input_exit"; runs and ACP "other"), then the ``close`` functions once,
        newest first (failures are logged), then close the journal (a message recorded
        later opens it again)."""
        await self.extensions.settled()
        await self.extensions.moments.ending(reason)
        await self.extensions.close()
        self.conversation.journal.close()
        from ..sandbox import netproxy
        from ..sandbox.sandbox import (  # the sandbox's private /tmp, if it ran
            release_tmp,
            session_tmp,
        )

        netproxy.stop(session_tmp(self.id))  # its allowed-hosts proxy, if one ran
        release_tmp(session_tmp(self.id))

    # -- actions ------------------------------------------------------------------------------

    async def turn(self, prompt: str | Expanded) -> str:
        """Run one user turn to the final reply. ``cancel()`` stops it, transcript intact.
        A ``str`` is expanded first (``conversation.expand``: a bad ``@path`` raises
        ``MentionError`` before anything is recorded); an ``Expanded`` is sent as it is.
        ``prompt`` functions (``on("prompt", fn)``) may stop it first (``PromptBlocked``:
        nothing recorded) or add context; ``stop`` functions may keep it going.

        What ``steer`` sent while it ran and its last reply no longer reached (that reply
        had no tool calls) starts the next turn at once, one turn per steer, in order
        (``Steered`` with ``next_turn``); the reply returned is the last turn's."""
        expanded = prompt if isinstance(prompt, Expanded) else self.conversation.expand(prompt)
        steering = self.conversation.steering
        self._turn = asyncio.current_task()
        steering.open = True
        try:
            await self.extensions.ready()
            moments = self.extensions.moments
            await moments.started()  # the conversation's first turn: start functions
            content = await moments.submitted(expanded.prompt, expanded.content)
            reply = await self._one_turn(Steer(expanded.prompt, content))
            while (steer := steering.take_first()) is not None:
                self.events.emit(Steered(steer.prompt, steer.content, next_turn=True))
                reply = await self._one_turn(steer)
            if self.frontend.interactive:  # the prompt waits for the person
                self.events.emit(Attention("done", "tui-agent is waiting for your input"))
            return reply
        finally:
            self._turn = None
            steering.open = False

    async def _one_turn(self, prompt: Steer) -> str:
        """One turn of a prompt whose prompt functions ran, with its checkpoint."""
        self.checkpoints.start(prompt.prompt)
        try:
            outcome = await self.extensions.moments.until_stopped(self._agent.turn, prompt.content)
            return outcome.reply
        finally:
            await self._end_checkpoint()

    async def steer(self, prompt: str | Expanded) -> bool:
        """Send ``prompt`` into the running turn: the model gets it as a user message at the
        next step boundary, after the tool results of the reply streaming now and before
        its next request; when that reply has no tool calls, it is the next turn's prompt
        (see ``turn``). It is expanded and the ``prompt`` functions run now, as for a
        turn (``MentionError``, ``PromptBlocked``: nothing sent). False when no turn runs
        (a ``!command`` is no turn): nothing is done, send it as a turn instead. Until it
        is delivered ``conversation.steering`` holds it; after a cancel, take it back there."""
        steering = self.conversation.steering
        if not steering.open:
            return False
        expanded = prompt if isinstance(prompt, Expanded) else self.conversation.expand(prompt)
        content = await self.extensions.moments.submitted(expanded.prompt, expanded.content)
        if not steering.open:  # the turn ended while the prompt functions ran
            return False
        steering.add(Steer(expanded.prompt, content))
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
        self.conversation.record(UserMessage(user_shell.message(run)))
        self.events.emit(ShellFinished(run))

    async def _end_checkpoint(self) -> None:
        """The turn's last snapshot, also after a cancel (a second cancel skips it)."""
        try:
            await self.checkpoints.end()
        except asyncio.CancelledError:
            pass
        except Exception:
            log.warning("checkpoint at the end of the turn failed", exc_info=True)

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

    # -- what the parts are told -------------------------------------------------------------

    def _system_prompt(self) -> str:
        """What the model is told first: the workspace's prompt, what ``start`` functions
        said, and in plan mode that it is planning. (A subagent's adds its own part.)"""
        prompt = self.workspace.system_prompt()
        if self.extensions.moments.start_context:  # what start functions said
            prompt += "\n\n" + self.extensions.moments.start_context
        return prompt + PLAN_PROMPT if self.permissions.mode == "plan" else prompt

    def _own_prompt(self) -> str:
        """The session's own agent's system prompt: with its primary agent's instructions."""
        return self._system_prompt() + self.agents.prompt()

    def _offered_tools(self) -> list[dict[str, Any]]:
        """The tools the session's own agent is offered (its primary agent's, if any)."""
        return self.agents.offered(self.extensions.offered_tools())

    def _own_provider(self) -> Provider:
        primary = self.agents.primary
        return self.extensions.provider_for(primary.model if primary is not None else None)

    def _conversation_reset(self, source: str, journal: Path | None) -> None:
        """A conversation cleared (``journal`` None) or resumed from ``journal``."""
        if journal is None:
            self.checkpoints.reset()
        else:
            load_from(journal, self.checkpoints)
        self.conversation.budget.forget()
        self.extensions.moments.restart(source)

    def _journal_failed(self, text: str) -> None:
        self.output.say(text, kind="error")

    def _announce_call(self, event: ToolboxEvent) -> None:
        """The toolbox's news goes on the session's events: every tool call, whoever made
        it (the chat and headless show it; the toolbox is the one source of call events),
        and every change of tools or hooks (the tools panel follows it)."""
        if event.kind == "call_started":
            args = dict(event.args) if event.args is not None else None
            raw = event.arguments
            if not raw and args is not None:
                raw = json.dumps(args, ensure_ascii=False, default=str)
            parent = event.parent
            agent = (self.agents.agent_of(parent) or "main") if parent else "main"
            self.events.emit(
                ToolCallStarted(event.call_id, event.called_as, raw, args, parent, agent)
            )
        elif event.kind == "call_finished" and event.result is not None:
            parent = event.parent
            agent = (self.agents.agent_of(parent) or "main") if parent else "main"
            self.events.emit(
                ToolCallFinished(
                    event.call_id, event.called_as, event.result, event.elapsed, parent, agent
                )
            )
        elif event.kind in ("tools", "hooks"):
            self.events.emit(ToolsChanged(event.kind, event.name))

    def _agent_problems(self, problems: list[str]) -> None:
        """Agent files that did not read well are load problems, shown as plugins' are."""
        known = self.extensions.problems
        for problem in problems:
            where, _, error = problem.partition(": ")
            found = LoadProblem(where, error or problem)
            if found not in known:  # the files are read again after a plugin adds a tool
                known.append(found)

    def _hidden(self, name: str) -> bool:
        return self.extensions.hidden(name)

    def _tool_context(self, call_id: str = "", message_id: str = "") -> ToolContext:
        return self.workspace.tool_context(self.id, call_id, message_id)

    # -- the names before issue 28 (one release) ----------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in legacy.MOVED:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        legacy.warn(name)
        return legacy.resolve(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in legacy.SETTABLE:
            legacy.assign(self, name, value)
        else:
            super().__setattr__(name, value)

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
