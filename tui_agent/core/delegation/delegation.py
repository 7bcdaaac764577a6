"""``session.agents``: the agent definitions of this load and the subagents running.

``run`` is what the ``task`` tool does: the agent named runs as a child ``Agent`` with a
fresh transcript (the session's system prompt, the agent's instructions, the prompt), the
agent's tools among the session's (never ``todo``: the list is the main agent's; ``task``
only for an agent that may delegate), its model or the session's, its ``max_steps``. It
calls tools through the session's toolbox, so the permission rules, the approval dialog,
the sandbox and every hook apply to its calls exactly as to the session's own; each of
its calls carries the agent's name and the ``task`` call's id in its context
(``ToolContext.agent``, ``parent_call``), and its own events reach the session's wrapped
in ``SubagentEvent``. Its final message is the call's result.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..agents import AgentDefinition, AgentSet, load_agents
from ..conversation.budget import Budget
from ..protocol import events as ev
from ..protocol.context import ToolContext
from ..protocol.output import Output
from ..providers import Provider
from ..tools.toolbox import Toolbox
from .child import ChildTranscript

MAX_DEPTH = 3  # subagents that may delegate still stop at this depth
TASK = "task"
NOT_FOR_CHILDREN = frozenset({"todo"})  # the todo list is the main agent's


UntilStopped = Callable[
    [Callable[[str], Awaitable[ev.TurnFinished]], str, str, str], Awaitable[ev.TurnFinished]
]


@dataclass
class Running:
    """A subagent at work: for the ``task`` call it answers."""

    agent: AgentDefinition
    depth: int
    description: str
    started: float


class Delegation:
    """``definitions``: the agents of this load (read on first use after each load of
    tools: tui-agent's own agent files may name a plugin's tools). ``running``: the
    subagents at work, by the id of their ``task`` call."""

    def __init__(
        self,
        *,
        project: Callable[[], Path],
        trusted: Callable[[], bool],
        toolbox: Toolbox,
        events: ev.EventBus,
        settings: Callable[[], Mapping[str, Any]],
        provider_for: Callable[[str | None], Provider],
        providers: Callable[[], list[str]],
        offered_tools: Callable[[], list[dict[str, Any]]],
        system_prompt: Callable[[], str],
        tool_context: Callable[..., ToolContext],
        write: Callable[[Mapping[str, Any]], None],
        problems: Callable[[list[str]], None] = lambda found: None,
        home: Path | None = None,
        until_stopped: UntilStopped | None = None,
    ) -> None:
        self._project = project
        self._trusted = trusted
        self._toolbox = toolbox
        self._events = events
        self._settings = settings
        self._provider_for = provider_for
        self._providers = providers
        self._offered = offered_tools
        self._system_prompt = system_prompt
        self._tool_context = tool_context
        self._write = write
        self._problems = problems
        self.home = home
        # (turn, prompt, agent, call id) -> the run's last outcome: the SubagentStop moment
        self._until_stopped = until_stopped
        self._definitions: AgentSet | None = None
        self.running: dict[str, Running] = {}
        self._primary = ""  # the primary agent the session is (``use``), by name
        events.listen(self._heard)

    def _heard(self, event: object) -> None:
        if isinstance(event, ev.ToolsChanged) and event.kind == "tools":
            self._definitions = None  # a load: read the agent files again on next use

    @property
    def definitions(self) -> AgentSet:
        if self._definitions is None:
            tools = {name: tuple(tool.aliases) for name, tool in self._toolbox.tools.items()}
            self._definitions = load_agents(
                self._project(),
                trusted=self._trusted(),
                home=self.home,
                tools=tools,
                providers=self._providers(),
            )
            self._problems(self._definitions.problems)
        return self._definitions

    # -- the session's own agent ------------------------------------------------------------

    @property
    def primary(self) -> AgentDefinition | None:
        """The primary agent the session is now (``use``), or None: as configured."""
        return self.definitions.get(self._primary) if self._primary else None

    def use(self, name: str | None) -> AgentDefinition | None:
        """Make the primary agent ``name`` the session's own agent (its instructions join
        the system prompt, its tools are the ones offered, its model is used), or go back
        to none with None or "". Raises ``ValueError`` for an unknown or subagent-only
        one. The permission mode stays as it is."""
        if not name:
            agent = None
        else:
            agent = self.definitions.get(name)
            if agent is None or not agent.is_primary:
                known = ", ".join(a.name for a in self.definitions.primaries()) or "none"
                why = "is a subagent only" if agent is not None else "is unknown"
                raise ValueError(f"agent {name!r} {why}; the primary agents: {known}")
        changed = (agent.name if agent else "") != self._primary
        self._primary = agent.name if agent else ""
        if changed:
            self._events.emit(ev.AgentChanged(self._primary))
        return agent

    def offered(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``tools`` (the definitions the model would be offered) narrowed to the primary
        agent's, if there is one."""
        agent = self.primary
        if agent is None:
            return tools
        names = set(self.tool_names(agent, depth=0, as_primary=True))
        return [tool for tool in tools if tool["function"]["name"] in names]

    def allowed(self, tool: str) -> str | None:
        """Why the session's own agent may not call ``tool`` (outside its primary
        agent's tools), or None."""
        agent = self.primary
        if agent is None:
            return None
        real = self._toolbox.resolve(tool) or tool
        names = self.tool_names(agent, depth=0, as_primary=True)
        if real in names:
            return None
        return f'tool "{tool}" is not available to the agent {agent.name}: it may use ' + (
            ", ".join(sorted(names)) or "no tools"
        )

    def prompt(self) -> str:
        """The primary agent's part of the system prompt ("" without one)."""
        agent = self.primary
        if agent is None or not agent.instructions.strip():
            return ""
        return f'\n\n# Agent "{agent.name}"\n\n{agent.instructions.strip()}'

    def agent_of(self, call_id: str) -> str:
        """The name of the subagent answering the ``task`` call ``call_id`` ("" if none)."""
        running = self.running.get(call_id)
        return running.agent.name if running is not None else ""

    def describe(self) -> str:
        """The subagents, one line each, for the ``task`` tool's description."""
        return "\n".join(
            f"- {agent.name}: {agent.description}" for agent in self.definitions.subagents()
        )

    def tool_names(
        self, agent: AgentDefinition, depth: int = 1, *, as_primary: bool = False
    ) -> list[str]:
        """The session's tools ``agent`` gets as a subagent at ``depth`` (or as the
        session's own agent: ``todo`` and ``task`` as its tools say)."""
        tools = {name: tuple(tool.aliases) for name, tool in self._toolbox.tools.items()}
        names = agent.tool_names(tools)
        if as_primary:
            return names
        delegates = agent.can_delegate and depth < MAX_DEPTH
        return [
            name for name in names if name not in NOT_FOR_CHILDREN and (name != TASK or delegates)
        ]

    async def run(
        self,
        name: str,
        prompt: str,
        *,
        description: str = "",
        context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Run the subagent ``name`` on ``prompt`` for the ``task`` call of ``context``;
        its final message is ``output``, with its ``tokens``, ``seconds`` and ``steps``.
        A failure is an ``error``; a cancel cancels it (its transcript stays valid)."""
        context = context or self._tool_context()
        agent = self.definitions.get(name)
        if agent is None or not agent.is_subagent:
            known = ", ".join(a.name for a in self.definitions.subagents())
            why = "is not a subagent (mode: primary)" if agent is not None else "is unknown"
            return {"error": f"agent {name!r} {why}; the subagents are: {known}"}
        caller = self.running.get(context.parent_call)
        depth = 1 if caller is None else caller.depth + 1
        if caller is not None and (not caller.agent.can_delegate or depth > MAX_DEPTH):
            return {
                "error": f"the subagent {caller.agent.name} may not start subagents"
                + ("" if caller.agent.can_delegate else " (its agent file does not say delegate)")
            }
        call_id = context.call_id
        names = set(self.tool_names(agent, depth))
        bus = ev.EventBus()
        bus.listen(lambda event: self._events.emit(ev.SubagentEvent(call_id, name, event)))
        settings = self._settings
        steps = agent.max_steps

        def child_settings() -> Mapping[str, Any]:
            own: dict[str, Any] = {"max_steps": steps} if steps else {}
            if agent.model:  # its context window is looked up by its model
                own["model"] = agent.model
            return {**settings(), **own} if own else settings()

        def allowed(tool: str) -> str | None:
            real = self._toolbox.resolve(tool) or tool
            if real in names:
                return None
            return (
                f'tool "{tool}" is not available to the agent {name}: it may use '
                f"{', '.join(sorted(names)) or 'no tools'}"
            )

        def tool_context(call_id: str = "", message_id: str = "") -> ToolContext:
            made = self._tool_context(call_id=call_id, message_id=message_id)
            return dataclasses.replace(made, agent=name, parent_call=context.call_id)

        transcript = ChildTranscript(call_id, name, self._write)
        output = Output(bus=bus)

        def provider() -> Provider:
            return self._provider_for(agent.model)

        def tools() -> list[dict[str, Any]]:
            return [d for d in self._offered() if d["function"]["name"] in names]

        def system_prompt() -> str:
            return self._system_prompt() + instructions(agent)

        child = Agent(
            transcript=transcript,
            toolbox=self._toolbox,
            events=bus,
            output=output,
            settings=child_settings,
            provider=provider,
            tools=tools,
            system_prompt=system_prompt,
            tool_context=tool_context,
            allowed=allowed,
            parallel=lambda tool: self._toolbox.resolve(tool) == TASK,
            budget=Budget(  # a long search compacts as the session's conversation does
                transcript=transcript,
                events=bus,
                output=output,
                settings=child_settings,
                provider=provider,
                system_prompt=system_prompt,
                tools=tools,
            ),
        )
        started = time.monotonic()
        self.running[call_id] = Running(agent, depth, description, started)
        model = agent.model or str(settings().get("model") or "")
        self._events.emit(ev.SubagentStarted(call_id, name, description, model))
        outcome = ev.TurnFinished("", cancelled=True)
        try:
            if self._until_stopped is not None:
                outcome = await self._until_stopped(child.turn, prompt, name, call_id)
            else:
                outcome = await child.turn(prompt)
        except Exception as exc:  # a bug of the loop's: the call's error, the session goes on
            outcome = ev.TurnFinished("", error=f"{type(exc).__name__}: {exc}")
        finally:
            del self.running[call_id]
            seconds = round(time.monotonic() - started, 2)
            tokens = child.tokens.total_tokens
            self._events.emit(
                ev.SubagentFinished(
                    call_id,
                    name,
                    reply=outcome.reply,
                    error=outcome.error,
                    cancelled=outcome.cancelled,
                    tokens=tokens,
                    seconds=seconds,
                    steps=outcome.steps,
                )
            )
        result: dict[str, Any] = {"agent": name, "tokens": tokens, "seconds": seconds}
        result["steps"] = outcome.steps
        if outcome.error is not None:
            result["error"] = f"the subagent {name} stopped: {outcome.error}"
            if outcome.reply:
                result["output"] = outcome.reply
        else:
            result["output"] = outcome.reply or "(the subagent ended without a final message)"
        return result


def instructions(agent: AgentDefinition) -> str:
    """The subagent's part of its system prompt, after the session's."""
    text = (
        f'\n\n# Subagent "{agent.name}"\n\nYou are the subagent "{agent.name}"'
        f"{f' ({agent.description})' if agent.description else ''}, started by the main "
        "agent for one task. The user does not see your work: your final message is all "
        "the main agent gets back, so put in it what it needs (what you found, with file "
        "paths and line numbers; what you changed)."
    )
    body = agent.instructions.strip()
    return text + (f"\n\n{body}" if body else "")
