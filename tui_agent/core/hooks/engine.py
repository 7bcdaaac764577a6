"""Command hooks, wired: the engine that runs one load's hooks at a session's moments
(``command_hooks.py`` says how). The bundled plugin ``command_hooks`` registers its
methods: ``pre_tool_use`` and ``post_tool_use`` as global toolbox hooks,
``prompt_submitted``, ``stopping`` and ``session_started`` with ``session.on``.

``follow`` runs ``Notification`` on the session's ``Attention`` events; ``session_ended``,
``compacting`` and ``subagent_stopping`` are registered for the moments "end", "compact"
and "subagent_stop".

It uses of the session only ``HookHost``: what a plugin host offers the hooks.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..project.workspace import Workspace
from ..protocol.approval import ApprovalRequest, Decision
from ..protocol.errors import PermissionDenied
from ..protocol.events import Attention, ConversationReset, EventBus
from ..protocol.messages import Message
from ..protocol.output import Output
from ..tools.toolbox import CallInfo, Toolbox, current_call
from .claude_names import claude_input, claude_name, claude_response, our_input, rule_matches
from .claude_transcript import ClaudeTranscript
from .reading import KEEP_STDERR, PERMISSION_MODES, CommandHook, HookSet
from .running import Outcome, run

log = logging.getLogger("tui_agent.command_hooks")
T = TypeVar("T")


class PromptStopped(Exception):
    """A ``UserPromptSubmit`` hook stopped the prompt (the message says why); the plugin
    raises it as ``tui_agent.PromptBlocked``."""


class Kept(Protocol):
    """``session.extensions``: state that outlives a reload."""

    def kept(self, key: str, make: Callable[[], T]) -> T: ...


class Asking(Protocol):
    """``session.permissions``: the mode, and the user asked about one call."""

    @property
    def mode(self) -> str: ...

    async def ask(self, request: ApprovalRequest) -> Decision: ...


class Messages(Protocol):
    """``session.conversation``: its messages."""

    @property
    def messages(self) -> Sequence[Message]: ...


class HookHost(Protocol):
    """What the command hooks use of a session (a part of ``extensions.host.PluginHost``)."""

    @property
    def id(self) -> str: ...

    @property
    def directory(self) -> Path: ...

    @property
    def workspace(self) -> Workspace: ...

    @property
    def toolbox(self) -> Toolbox: ...

    @property
    def output(self) -> Output: ...

    @property
    def extensions(self) -> Kept: ...

    @property
    def permissions(self) -> Asking: ...

    @property
    def conversation(self) -> Messages: ...

    def cancel(self) -> bool: ...


def _specific(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    value = (data or {}).get("hookSpecificOutput")
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


class Engine:
    """The hooks of one load, wired into one session."""

    def __init__(self, session: HookHost, hooks: HookSet) -> None:
        self.session = session
        self.hooks = hooks

    # -- running one event ------------------------------------------------------------------

    def _payload(self, event: str, **fields: Any) -> dict[str, Any]:
        session = self.session
        return {
            "session_id": session.id,
            "transcript_path": str(self._transcript()),
            "cwd": str(session.directory),
            "permission_mode": PERMISSION_MODES.get(
                session.permissions.mode, session.permissions.mode
            ),
            "hook_event_name": event,
            **fields,
        }

    def _transcript(self) -> Path:
        """The Claude-format transcript, brought in step with the conversation now."""
        session = self.session
        return session.extensions.kept("claude_transcript", ClaudeTranscript).sync(
            session.id, session.conversation.messages, session.directory, self._aliases
        )

    def _aliases(self, tool_name: str) -> list[str]:
        tool = self.session.toolbox.tools.get(tool_name)
        return list(tool.aliases) if tool is not None else []

    def _tool_hooks(
        self, event: str, tool_name: str, args: Mapping[str, Any]
    ) -> tuple[list[CommandHook], str]:
        """The hooks of ``event`` whose matcher and ``"if"`` take this call, and the
        tool's Claude name."""
        claude = claude_name(tool_name, args, self._aliases(tool_name))
        hooks = [h for h in self.hooks.for_event(event) if h.matches(tool_name, claude)]
        if any(h.condition for h in hooks):
            sent = claude_input(tool_name, args, self.session.directory)
            hooks = [
                h
                for h in hooks
                if not h.condition
                or rule_matches(h.condition, tool_name, claude, sent, self.session.directory)
            ]
        return hooks, claude

    async def _run(self, hook: CommandHook, payload: Mapping[str, Any]) -> Outcome | None:
        """The hook's outcome, or None when it failed without blocking (said to the user).
        Its ``systemMessage`` is said too."""
        outcome = await run(hook, payload, self.session.directory, self.session.workspace.project)
        say = self.session.output.say
        if outcome.problem:
            say(f"{hook.event} hook {outcome.problem}: {hook.command}", kind="error")
            return None
        if outcome.code not in (0, 2):
            detail = outcome.stderr.strip()[-KEEP_STDERR:]
            say(
                f"{hook.event} hook failed (exit {outcome.code}): {hook.command}"
                + (f"\n{detail}" if detail else ""),
                kind="error",
            )
            return None
        message = _text((outcome.data or {}).get("systemMessage"))
        if message:
            say(f"{hook.event} hook: {message}")
        return outcome

    def _stops(self, outcome: Outcome) -> str | None:
        """``continue: false``: the reason to stop (its ``stopReason``), said to the user."""
        data = outcome.data or {}
        if data.get("continue") is not False:
            return None
        reason = _text(data.get("stopReason")) or f"{outcome.hook.event} hook stopped the turn"
        self.session.output.say(f"{reason} ({outcome.hook.command})", kind="error")
        return reason

    def _tool_input(self, tool_name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the hook sees them: Claude's names (``claude_names``)."""
        return claude_input(tool_name, args, self.session.directory)

    def _replace_input(
        self,
        hook: CommandHook,
        tool_name: str,
        args: dict[str, Any],
        sent: Mapping[str, Any],
        updated: Any,
    ) -> None:
        """``updatedInput``: the call's arguments become it, checked against the tool's
        schema again; one that does not fit stops the call (its error says why)."""
        where = f"PreToolUse hook {hook.command!r} gave updatedInput"
        if not isinstance(updated, Mapping):
            raise ValueError(f"{where} that is not a JSON object: {updated!r}")
        new = our_input(tool_name, updated, args, sent)
        tool = self.session.toolbox.tools.get(tool_name)
        problem = tool.problem(new) if tool is not None else None
        if problem is not None:
            raise ValueError(f"{where} that does not fit {tool_name}: {problem}")
        args.clear()
        args.update(new)

    async def _end_turn(self) -> None:
        """``continue: false`` in a tool event: the turn ends here, as if Esc was pressed
        (the call's result says it was cancelled; the transcript stays valid)."""
        if self.session.cancel():
            await asyncio.sleep(0)  # the cancel arrives now, before anything else is asked

    # -- the events ---------------------------------------------------------------------------

    async def pre_tool_use(self, args: dict[str, Any], tool_name: str) -> None:
        """Before a call (and before the permission hook). Decisions: deny (or exit 2)
        refuses at once; ask puts the call to the user; allow spares the user the
        permission hook's question (its deny rules and plan mode still hold)."""
        hooks, claude = self._tool_hooks("PreToolUse", tool_name, args)
        if not hooks:
            return
        call = current_call()
        call_id = _call_id(call)
        allowed: list[CommandHook] = []
        asking: list[tuple[CommandHook, str]] = []
        for hook in hooks:
            sent = self._tool_input(tool_name, args)
            payload = self._payload(
                "PreToolUse", tool_name=claude, tool_input=sent, tool_use_id=call_id
            )
            outcome = await self._run(hook, payload)
            if outcome is None:
                continue
            if outcome.code == 2:
                raise PermissionDenied(
                    outcome.reason or f"blocked by the PreToolUse hook {hook.command!r}"
                )
            stop = self._stops(outcome)
            if stop is not None:
                await self._end_turn()
                raise PermissionDenied(stop)  # not in a turn: this call is refused
            data = outcome.data or {}
            specific = _specific(data)
            decision = specific.get("permissionDecision")
            reason = _text(specific.get("permissionDecisionReason"))
            legacy = {"approve": "allow", "block": "deny"}.get(str(data.get("decision")))
            if decision is None and legacy is not None:
                decision, reason = legacy, _text(data.get("reason"))
            if decision == "deny":
                raise PermissionDenied(
                    reason or f"Permission denied by the PreToolUse hook {hook.command!r}"
                )
            if "updatedInput" in specific:
                self._replace_input(hook, tool_name, args, sent, specific["updatedInput"])
            if decision == "allow":
                allowed.append(hook)
            elif decision == "ask":
                asking.append((hook, reason))
            elif decision is not None:
                self.session.output.say(
                    f"PreToolUse hook {hook.command!r}: unknown permissionDecision "
                    f"{decision!r} (allow, deny or ask); ignored",
                    kind="error",
                )
        if asking:
            await self._ask(tool_name, args, asking, call)
        elif allowed and call is not None:
            call.approvals.append(f"PreToolUse hook {allowed[0].command!r}")

    async def _ask(
        self,
        tool_name: str,
        args: Mapping[str, Any],
        asking: list[tuple[CommandHook, str]],
        call: CallInfo | None,
    ) -> None:
        """A hook's ``ask``: the user decides about this one call (for session and always
        allow it once: the hook is asked again next time)."""
        hook, reason = asking[0]
        request = ApprovalRequest(
            tool=tool_name,
            called_as=call.called_as if call is not None else tool_name,
            args=dict(args),
            subject=reason or f"the PreToolUse hook {hook.command!r} asks",
            rule=f"PreToolUse hook {hook.command!r}: ask",
            session_pattern="",
        )
        decision = await self.session.permissions.ask(request)
        if not decision.allowed and decision.unasked:
            raise PermissionDenied(
                f"Permission denied: {tool_name}: a PreToolUse hook asks ({reason or hook.command})"
                " and nobody was asked (a headless run): run with --yes to allow what hooks ask"
            )
        if not decision.allowed:
            message = f"User denied permission: {tool_name}"
            if decision.choice == "feedback" and decision.feedback.strip():
                message += f": {decision.feedback.strip()}"
            raise PermissionDenied(message)
        if call is not None:
            call.approvals.append(f"the user, asked by the PreToolUse hook {hook.command!r}")

    async def post_tool_use(
        self, args: dict[str, Any], result: dict[str, Any], tool_name: str
    ) -> None:
        """After a call: ``decision: "block"`` (or exit 2) puts its reason in the result as
        ``hook_feedback``; ``additionalContext`` goes in as ``additional_context``. The
        tool has run: its result stays as it is otherwise."""
        hooks, claude = self._tool_hooks("PostToolUse", tool_name, args)
        if not hooks:
            return
        call_id = _call_id(current_call())
        feedback: list[str] = []
        context: list[str] = []
        for hook in hooks:
            payload = self._payload(
                "PostToolUse",
                tool_name=claude,
                tool_input=self._tool_input(tool_name, args),
                tool_response=claude_response(tool_name, args, result, self.session.directory),
                tool_use_id=call_id,
            )
            outcome = await self._run(hook, payload)
            if outcome is None:
                continue
            if outcome.code == 2:
                feedback.append(outcome.reason or f"the PostToolUse hook {hook.command!r} objects")
                continue
            data = outcome.data or {}
            if data.get("decision") == "block":
                reason = _text(data.get("reason"))
                feedback.append(reason or f"the PostToolUse hook {hook.command!r} objects")
            extra = _text(_specific(data).get("additionalContext"))
            if extra:
                context.append(extra)
            if self._stops(outcome) is not None:
                await self._end_turn()
                break
        if feedback:
            result["hook_feedback"] = "\n\n".join(feedback)
        if context:
            result["additional_context"] = "\n\n".join(context)

    async def prompt_submitted(self, prompt: str) -> str | None:
        """Before a prompt is recorded: exit 2, ``decision: "block"`` or ``continue:
        false`` stop it (nothing is sent); ``additionalContext``, or plain stdout, is
        added to what the model gets."""
        texts: list[str] = []
        for hook in self.hooks.for_event("UserPromptSubmit"):
            outcome = await self._run(hook, self._payload("UserPromptSubmit", prompt=prompt))
            if outcome is None:
                continue
            if outcome.code == 2:
                raise PromptStopped(self._blocked(hook, outcome.reason))
            stop = self._stops(outcome)
            if stop is not None:
                raise PromptStopped(self._blocked(hook, stop))
            if outcome.data is not None:
                if outcome.data.get("decision") == "block":
                    raise PromptStopped(self._blocked(hook, _text(outcome.data.get("reason"))))
                text = _text(_specific(outcome.data).get("additionalContext"))
            else:
                text = outcome.stdout.strip()
            if text:
                texts.append(text)
        return "\n\n".join(texts) or None

    @staticmethod
    def _blocked(hook: CommandHook, reason: str) -> str:
        reason = reason or "blocked"
        return f"the prompt was not sent: {reason} (UserPromptSubmit hook {hook.command!r})"

    async def stopping(self, reply: str, continued: int) -> str | None:
        """When the model has finished a turn: exit 2 or ``decision: "block"`` with a
        ``reason`` keeps the turn going with that reason (``stop_hook_active`` is true on
        the turns it kept going; the session allows a few)."""
        reasons: list[str] = []
        for hook in self.hooks.for_event("Stop"):
            payload = self._payload(
                "Stop", stop_hook_active=continued > 0, last_assistant_message=reply
            )
            outcome = await self._run(hook, payload)
            if outcome is None:
                continue
            if outcome.code == 2:
                reason = outcome.reason
            elif outcome.data is not None and outcome.data.get("decision") == "block":
                reason = _text(outcome.data.get("reason"))
            else:
                continue
            if self._stops(outcome) is not None:
                return None
            reasons.append(reason or f"the Stop hook {hook.command!r} asks to go on")
        if reasons:
            self.session.output.say("Stop hook: " + "\n\n".join(reasons) + " (the turn goes on)")
        return "\n\n".join(reasons) or None

    async def session_started(self, source: str) -> str | None:
        """Before the first turn of a conversation (``source``: startup, resume, clear):
        ``additionalContext``, or plain stdout, becomes part of the system prompt."""
        texts: list[str] = []
        for hook in self.hooks.for_event("SessionStart"):
            if not hook.matches(source):
                continue
            outcome = await self._run(hook, self._payload("SessionStart", source=source))
            if outcome is None:
                continue
            if outcome.code == 2:
                if outcome.reason:
                    self.session.output.say(
                        f"SessionStart hook {hook.command!r}: {outcome.reason}", kind="error"
                    )
                continue
            if outcome.data is not None:
                text = _text(_specific(outcome.data).get("additionalContext"))
            else:
                text = outcome.stdout.strip()
            if text:
                texts.append(text)
        return "\n\n".join(texts) or None

    # -- the events that decide nothing (Claude: exit 2 shows stderr to the user only) ---------

    async def _tell(self, event: str, subject: str, **fields: Any) -> None:
        """Run the hooks of ``event`` whose matcher takes ``subject``: their exit 2 (its
        stderr) is said to the user; nothing else follows from them."""
        for hook in self.hooks.for_event(event):
            if not hook.matches(subject):
                continue
            outcome = await self._run(hook, self._payload(event, **fields))
            if outcome is not None and outcome.code == 2:
                self.session.output.say(
                    f"{event} hook {hook.command!r}: {outcome.reason or 'exit 2'}", kind="error"
                )

    async def notification(self, kind: str, tool: str = "") -> None:
        """The person is needed (``Attention``): "approval" is Claude's
        ``permission_prompt``, "done" (the prompt waits) its ``idle_prompt``."""
        kind = NOTIFICATION_TYPES.get(kind, kind)
        if kind == "permission_prompt":
            message = f"tui-agent needs your permission to use {claude_name(tool) or 'a tool'}"
        else:
            message = "tui-agent is waiting for your input"
        await self._tell(
            "Notification", kind, message=message, title="tui-agent", notification_type=kind
        )

    async def session_ended(self, reason: str) -> None:
        """The session closes (``reason``: Claude's ``prompt_input_exit`` when the user
        quits the app, ``other`` for runs and ACP)."""
        await self._tell("SessionEnd", reason, reason=reason)

    async def compacting(self, trigger: str, instructions: str) -> None:
        """Before a compaction: ``trigger`` "manual" (``/compact``, whose text is the
        ``custom_instructions``) or "auto"; the compaction goes on whatever they say."""
        await self._tell("PreCompact", trigger, trigger=trigger, custom_instructions=instructions)

    async def subagent_stopping(
        self, agent: str, call_id: str, reply: str, continued: int
    ) -> str | None:
        """A subagent finished its task: exit 2 (stderr) or ``decision: "block"`` with a
        ``reason`` keeps it going with that reason, as ``Stop`` does for the session
        (``stop_hook_active`` is true on the runs it kept going)."""
        reasons: list[str] = []
        for hook in self.hooks.for_event("SubagentStop"):
            if not hook.matches(agent):
                continue
            payload = self._payload(
                "SubagentStop",
                stop_hook_active=continued > 0,
                agent_id=call_id,
                agent_type=agent,
                last_assistant_message=reply,
            )
            outcome = await self._run(hook, payload)
            if outcome is None:
                continue
            if self._stops(outcome) is not None:  # its stopReason is said; it ends now
                return None
            if outcome.code == 2:
                reason = outcome.reason
            elif outcome.data is not None and outcome.data.get("decision") == "block":
                reason = _text(outcome.data.get("reason"))
            else:
                continue
            reasons.append(reason or f"the SubagentStop hook {hook.command!r} asks to go on")
        if reasons:
            self.session.output.say(
                f"SubagentStop hook: {chr(10).join(reasons)} (the subagent {agent} goes on)"
            )
        return "\n\n".join(reasons) or None

    def cleared(self, ended: str, messages: Sequence[Message]) -> Awaitable[None]:
        """``/clear`` ended conversation ``ended``: ``SessionEnd`` with reason "clear", its
        payload that conversation's (its id, its transcript, written now: the session
        has a new one already)."""
        transcript = self.session.extensions.kept("claude_transcript_ended", ClaudeTranscript)
        path = transcript.sync(ended, messages, self.session.directory, self._aliases)
        return self._tell(
            "SessionEnd", "clear", reason="clear", session_id=ended, transcript_path=str(path)
        )

    def follow(self, events: EventBus) -> Callable[[], Awaitable[None]]:
        """Run the ``Notification`` hooks on each ``Attention`` of ``events``, and
        ``SessionEnd`` when ``/clear`` ends a conversation (``ConversationReset``), beside
        the session's work (they decide nothing). Returns what stops it: it stops
        listening, waits a little for the hooks still running, then stops them."""
        running: set[asyncio.Task[None]] = set()

        def heard(event: object) -> None:
            if isinstance(event, Attention):
                work: Awaitable[None] = self.notification(event.kind, event.tool)
            elif isinstance(event, ConversationReset) and event.reason == "clear" and event.ended:
                if not self.hooks.for_event("SessionEnd"):
                    return
                work = self.cleared(event.ended, event.ended_messages)
            else:
                return
            try:
                task = asyncio.get_running_loop().create_task(_awaited(work))
            except RuntimeError:  # no loop runs here: nobody waits either
                if inspect.iscoroutine(work):
                    work.close()
                return
            running.add(task)
            task.add_done_callback(running.discard)

        unlisten = events.listen(heard)

        async def stop() -> None:
            unlisten()
            if running:
                _, late = await asyncio.wait(set(running), timeout=NOTIFICATION_GRACE)
                for task in late:
                    task.cancel()
                await asyncio.gather(*late, return_exceptions=True)

        return stop


async def _awaited(work: Awaitable[None]) -> None:
    await work


NOTIFICATION_TYPES = {"approval": "permission_prompt", "done": "idle_prompt"}
NOTIFICATION_GRACE = 5.0  # seconds a closing load waits for Notification hooks still running


class Loaded:
    """The hooks of the session's current load (``in_force``)."""

    def __init__(self) -> None:
        self.hooks = HookSet()


def in_force(session: HookHost) -> HookSet:
    """The command hooks the session's current load runs (``/hooks`` lists them)."""
    return session.extensions.kept("command_hooks", Loaded).hooks


def _call_id(call: CallInfo | None) -> str:
    """The running tool call's id (the hooks' ``tool_use_id``), "" outside a call."""
    return call.context.call_id if call is not None and call.context is not None else ""
