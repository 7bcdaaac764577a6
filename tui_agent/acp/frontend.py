"""The editor as the session's frontend (``core/protocol/frontend.py``), as ``AppFrontend``
is the app: a call that needs approval is asked through ``session/request_permission``;
what needs the app's screen (a theme, the clipboard, a picker) says so instead.

Our answers map to ACP's options: allow once (``allow_once``), allow for this session
and always allow (saved in the project's config: both ``allow_always``), reject
(``reject_once``). A request the client answers ``cancelled`` (its ``session/cancel``),
or that cannot be sent (the client is gone), is a rejection: the call fails and the turn
ends as the cancel says."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from itertools import count
from typing import TYPE_CHECKING, Any

from acp import schema

from ..core.protocol.approval import ApprovalRequest, Decision
from ..core.tools.calls import current_call
from . import tool_calls

if TYPE_CHECKING:
    from ..core.protocol.output import Output

log = logging.getLogger("tui_agent.acp")
Ask = Callable[..., Awaitable[Any]]
CHOICES = ("once", "session", "always")
_numbers = count(1)


def options(request: ApprovalRequest) -> list[schema.PermissionOption]:
    pattern = request.session_pattern or "*"
    return [
        schema.PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
        schema.PermissionOption(
            option_id="session",
            name=f"Allow {request.tool} {pattern} for this session",
            kind="allow_always",
        ),
        schema.PermissionOption(
            option_id="always",
            name=f"Always allow {request.tool} {pattern} (saved in .tui-agent/config.toml)",
            kind="allow_always",
        ),
        schema.PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
    ]


class AcpFrontend:
    """One ACP session's person: the editor's user, asked through the client."""

    interactive = True
    themes: Sequence[str] = ()

    def __init__(
        self,
        ask: Ask,
        session_id: Callable[[], str],
        output: Output,
        sent: Callable[[], Awaitable[None]],
    ) -> None:
        self._ask = ask  # the connection's request_permission
        self._session_id = session_id
        self._sent = sent  # the updates so far sent: the call's card before its question
        self._output = output
        self.exit_requested = False

    async def approve(self, request: ApprovalRequest) -> Decision:
        call = current_call()
        context = call.context if call is not None else None
        call_id = context.call_id if context is not None and context.call_id else ""
        call_id = call_id or f"ask-{next(_numbers)}"
        title = tool_calls.title(request.tool, request.args)
        if request.agent:
            title = f"[{request.agent}] {title}"
        update = schema.ToolCallUpdate(
            tool_call_id=call_id,
            title=title,
            kind=tool_calls.kind(request.tool),
            status="pending",
            raw_input=request.args,
        )
        try:
            await self._sent()
            response = await self._ask(
                session_id=self._session_id(), tool_call=update, options=options(request)
            )
        except (ConnectionError, OSError) as exc:
            log.info("permission not asked: %s", exc)
            return Decision("deny", unasked=True)
        outcome = response.outcome
        choice = getattr(outcome, "option_id", None)
        if choice in CHOICES:
            return Decision(choice)
        return Decision("deny")

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        return None  # no picker through ACP: the command says what to type instead

    def exit(self) -> None:
        self.exit_requested = True
        self._output.say("/exit: close the session in the editor to end it.")

    def theme(self, name: str) -> None:
        self._output.say(f"/theme {name} changes the app's look; the editor has its own.")

    def copy(self, text: str) -> None:
        self._output.say("/copy needs the app's clipboard; select the text in the editor.")
