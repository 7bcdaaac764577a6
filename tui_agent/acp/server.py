"""``tui-agent acp``: the agent behind an ACP client (Zed, JetBrains, Neovim, toad, acpx).

One connection, any number of sessions, each a ``Session`` made by ``create_session``
in the folder the client names (its trust as the app's: an untrusted project's code is
not loaded, and the first thing the client hears of the session says so). A prompt runs
as a turn in a task of its own, so ``session/cancel`` cancels it as Esc does; when the
client goes away the running turns are cancelled, the sessions closed (journals
written, MCP servers stopped) and the process exits.

Capabilities are what works: ``session/load`` (a journal replayed as updates), text,
resource links and embedded resources in prompts (no images or audio: the models are
asked for text), MCP servers over stdio, and HTTP and SSE when the ``mcp`` package is
installed; ``session/set_mode`` with the permission modes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, schema

from ..core.conversation.mentions import MentionError
from ..core.extensions import prompt_commands
from ..core.extensions.commands import parse_command
from ..core.protocol import events as ev
from ..core.protocol.messages import AssistantMessage, ToolMessage, UserMessage
from ..core.session.session import Session, create_session
from . import prompt as prompts
from . import updates as up
from .files import EditorFiles
from .frontend import AcpFrontend
from .updates import Outbox, Updates

log = logging.getLogger("tui_agent.acp")

MODES = {
    "ask": "Ask before tools that change things, as the rules say",
    "auto-edit": "Edits inside the project without asking; the rest as the rules say",
    "plan": "Read-only: the model plans, nothing is changed",
    "allow-all": "Every ask is allowed (deny rules still hold)",
}
CLOSE_TIMEOUT = 5.0  # seconds a cancelled turn gets to end when the client is gone
SESSIONS_PAGE = 50  # sessions in one session/list answer
MODELS_TIMEOUT = 3.0  # seconds the server gets to list its models at session/new


@dataclass
class Settings:
    """What the command line gave ``tui-agent acp`` (every session gets it)."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    trust: bool = False
    yes: bool = False


@dataclass
class Live:
    """One ACP session: the tui-agent session, its updates, the prompt running."""

    id: str
    session: Session
    outbox: Outbox
    updates: Updates
    running: asyncio.Task[Any] | None = None
    cancelled: bool = False
    files: EditorFiles | None = None  # read and write through the editor
    models: list[str] = field(default_factory=list)  # what the server lists (/v1/models)
    stop_listening: list[Callable[[], None]] = field(default_factory=list)


def _mcp_table(servers: list[Any] | None) -> dict[str, Any]:
    """The client's MCP servers as ``[mcp.servers]`` tables: started like configured ones."""
    tables: dict[str, Any] = {}
    for server in servers or []:
        name = getattr(server, "name", "") or "client"
        if isinstance(server, schema.McpServerStdio):
            tables[name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {variable.name: variable.value for variable in server.env},
            }
        elif isinstance(server, schema.McpServerHttp | schema.McpServerSse):
            tables[name] = {
                "type": "sse" if isinstance(server, schema.McpServerSse) else "http",
                "url": server.url,
                "headers": {header.name: header.value for header in server.headers},
            }
        else:
            raise RequestError.invalid_params(
                {"mcpServers": f"{name}: MCP over ACP is not supported: use stdio, http or sse"}
            )
    return tables


def _commands(session: Session) -> schema.AvailableCommandsUpdate:
    available = []
    for shown, description in session.commands:
        name = shown.lstrip("/")
        template = prompt_commands.template_of(session, name)
        hint = template.argument_hint if template is not None else ""
        available.append(
            schema.AvailableCommand(
                name=name,
                description=description or name,
                input=schema.AvailableCommandInput(root=schema.UnstructuredCommandInput(hint=hint))
                if hint
                else None,
            )
        )
    return schema.AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=available
    )


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tui-agent")
    except metadata.PackageNotFoundError:
        from .. import __version__

        return __version__


def command_in(text: str) -> tuple[str, str | None] | None:
    """``(name, arguments)`` for a prompt that is a ``/name args`` line (as ``tui-agent
    run`` takes one), else None."""
    if not text.startswith("/"):
        return None
    parsed = parse_command(text)
    if parsed is None or "/" in parsed[0]:
        return None
    return parsed


class AcpAgent:
    """The ACP agent side (``acp.Agent``): the methods the client calls."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.client: Any = None
        self.sessions: dict[str, Live] = {}
        self.client_capabilities: schema.ClientCapabilities | None = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    # -- the connection --------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        self.client_capabilities = client_capabilities
        web = importlib.util.find_spec("mcp") is not None  # http and sse need the package
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=schema.McpCapabilities(http=web, sse=web),
                session_capabilities=schema.SessionCapabilities(
                    list=schema.SessionListCapabilities()
                ),
            ),
            agent_info=schema.Implementation(
                name="tui-agent", title="tui-agent", version=version()
            ),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no methods offered: the model's key is in the config or environment

    # -- sessions ----------------------------------------------------------------------------

    def _folder(self, cwd: str) -> Path:
        directory = Path(cwd)
        if not directory.is_absolute() or not directory.is_dir():
            raise RequestError.invalid_params({"cwd": f"not an absolute path to a folder: {cwd}"})
        return directory

    async def _open(self, directory: Path, mcp_servers: list[Any] | None) -> Live:
        settings = self.settings
        servers = _mcp_table(mcp_servers)
        session = create_session(
            directory,
            provider=settings.provider,
            model=settings.model,
            base_url=settings.base_url,
            trust=settings.trust,
            yes=settings.yes,
            load=False,
        )
        if servers:  # the client's, over any of the config's with that name
            session.extensions.flags["mcp"] = {"servers": servers}
        outbox = Outbox(self._send, session.id)
        live = Live(session.id, session, outbox, Updates(outbox, session.directory))
        session.frontend = AcpFrontend(
            self._ask, lambda: live.id, session.output, live.outbox.drain
        )
        live.files = self._editor_files(live)
        live.stop_listening.append(session.events.listen(live.updates.event))
        live.stop_listening.append(session.events.listen(self._commands_changed(live)))
        session.reload()
        await session.extensions.settled()
        if live.files is not None:
            live.files.apply()
        self.sessions[live.id] = live
        self._tell_about_load(live)
        return live

    async def _send(self, session_id: str, update: Any) -> None:
        await self.client.session_update(session_id=session_id, update=update)

    def _editor_files(self, live: Live) -> EditorFiles | None:
        """The editor's files, where the client offers them (``fs`` in its capabilities)."""
        fs = self.client_capabilities.fs if self.client_capabilities is not None else None
        reads = bool(fs is not None and fs.read_text_file)
        writes = bool(fs is not None and fs.write_text_file)
        if not reads and not writes:
            return None

        async def read(path: Path) -> str:
            answer = await self.client.read_text_file(session_id=live.id, path=str(path))
            return str(answer.content)

        async def write(path: Path, content: str) -> None:
            await self.client.write_text_file(session_id=live.id, path=str(path), content=content)

        files = EditorFiles(live.session, read if reads else None, write if writes else None)
        files.texts = live.updates.calls.written
        return files

    async def _ask(self, **request: Any) -> Any:
        return await self.client.request_permission(**request)

    def _commands_changed(self, live: Live) -> Callable[[Any], None]:
        """The commands, sent again once a burst of changes is over (a reload registers
        them one by one)."""
        pending: list[bool] = []

        def send() -> None:
            pending.clear()
            live.updates.put(_commands(live.session))

        loop = asyncio.get_running_loop()

        def changed(event: Any) -> None:
            if isinstance(event, ev.CommandsChanged) and not pending and live.id in self.sessions:
                pending.append(True)
                loop.call_soon_threadsafe(send)  # a plugin may register from a thread

        return changed

    def _tell_about_load(self, live: Live) -> None:
        """What the app would show as notes once a session loaded: skipped untrusted code
        (and how to trust the folder), load problems."""
        session = live.session
        lines: list[str] = []
        if session.extensions.skipped:
            project = session.workspace.project
            files = ", ".join(str(p.relative_to(project)) for p in session.extensions.skipped)
            lines.append(
                f"This folder's project code was not loaded: {project} is not trusted "
                f"({files}). To run it, trust the folder: `tui-agent trust` in it (or start "
                "`tui-agent acp --trust`), then open a new session."
            )
        for problem in session.extensions.problems:
            lines.append(f"problem: {problem}")
        if lines:
            live.updates.put(up.message("\n\n".join(lines) + "\n\n"))

    def _modes(self, live: Live) -> schema.SessionModeState:
        current = live.session.permissions.mode
        offered = [m for m in MODES if m != "allow-all" or current == "allow-all"]
        return schema.SessionModeState(
            current_mode_id=current,
            available_modes=[
                schema.SessionMode(id=m, name=m, description=MODES[m]) for m in offered
            ],
        )

    async def _list_models(self, live: Live) -> None:
        """The models the server lists, for the model option (bounded: a server that
        does not answer leaves the configured model alone in the list)."""
        try:
            live.models = await asyncio.wait_for(live.session.provider.models(), MODELS_TIMEOUT)
        except Exception:
            live.models = []

    def _options(self, live: Live) -> list[Any]:
        """The session's config options: the model (``/model`` in the app)."""
        try:
            current = live.session.provider.model or ""
        except Exception:
            return []
        names = sorted({*live.models, current} - {""})
        if not names:
            return []
        return [
            schema.SessionConfigOptionSelect(
                type="select",
                id="model",
                name="Model",
                category="model",
                description=f"The model of {live.session.extensions.provider_name}",
                current_value=current,
                options=[schema.SessionConfigSelectOption(value=n, name=n) for n in names],
            )
        ]

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        live = self._live(session_id)
        if config_id != "model" or not isinstance(value, str) or not value:
            raise RequestError.invalid_params({"configId": f"no such option: {config_id}"})
        live.session.extensions.set_model(model=value)
        return schema.SetSessionConfigOptionResponse(config_options=self._options(live))

    def _live(self, session_id: str) -> Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"sessionId": f"no such session: {session_id}"})
        return live

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> schema.NewSessionResponse:
        live = await self._open(self._folder(cwd), mcp_servers)
        await self._list_models(live)
        live.updates.put(_commands(live.session))
        live.outbox.start()  # after this answer: the client knows the session by then
        return schema.NewSessionResponse(
            session_id=live.id, modes=self._modes(live), config_options=self._options(live)
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> schema.LoadSessionResponse:
        directory = self._folder(cwd)
        if session_id in self.sessions:
            raise RequestError.invalid_params({"sessionId": f"already open: {session_id}"})
        from ..core.conversation.transcript import Transcript

        if Transcript.find(directory, session_id) is None:
            raise RequestError.resource_not_found(session_id)
        live = await self._open(directory, mcp_servers)
        session = live.session
        del self.sessions[live.id]
        if not session.conversation.resume(session_id):
            await session.close()
            raise RequestError.resource_not_found(session_id)
        live.id = live.outbox.session_id = session_id
        self.sessions[session_id] = live
        for update in replay(live):
            live.outbox.put(update)
        live.updates.put(_commands(session))
        live.outbox.start()
        await self._list_models(live)
        await live.outbox.drain()  # the whole conversation before the answer
        return schema.LoadSessionResponse(
            modes=self._modes(live), config_options=self._options(live)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> schema.ListSessionsResponse:
        """The journaled sessions (of ``cwd`` when given), newest first, a page at a time,
        with the titles the picker shows (a ``/rename`` title wins: ``titles``)."""
        from datetime import UTC, datetime

        from ..core.conversation.titles import list_summaries

        found = list_summaries(self._folder(cwd) if cwd else None)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = found[start : start + SESSIONS_PAGE]
        more = start + SESSIONS_PAGE < len(found)
        return schema.ListSessionsResponse(
            sessions=[
                schema.SessionInfo(
                    session_id=info.id,
                    cwd=info.directory,
                    title=info.title or None,
                    updated_at=datetime.fromtimestamp(info.modified, UTC).isoformat(),
                )
                for info in page
            ],
            next_cursor=str(start + SESSIONS_PAGE) if more else None,
        )

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> None:
        live = self._live(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": f"one of {', '.join(MODES)}"})
        live.session.permissions.set_mode(mode_id)  # ModeChanged: current_mode_update
        return None

    # -- prompts -----------------------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
        live = self._live(session_id)
        session = live.session
        if live.running is not None and not live.running.done():
            raise RequestError.invalid_request(
                {"details": "a prompt is running in this session: cancel it first"}
            )
        live.cancelled = False
        live.updates.finish_reason = None
        if live.files is not None:  # again, after a /reload made the tools anew
            live.files.apply()
        try:
            expanded = prompts.expand(prompt, session.directory, session.worktree)
        except MentionError as exc:
            raise RequestError.invalid_params({"prompt": str(exc)}) from None
        failed: list[str] = []

        def heard(event: Any) -> None:
            if isinstance(event, ev.TurnFinished) and event.error:
                failed.append(event.error)

        stop_hearing = session.events.listen(heard)
        line = command_in(expanded.prompt)
        work = self._command(live, *line) if line is not None else session.turn(expanded)
        live.running = task = asyncio.ensure_future(work)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the connection is closing
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
            raise
        finally:
            stop_hearing()
            live.running = None
        self._usage(live)
        await live.outbox.drain()
        if task.cancelled() or live.cancelled:
            return schema.PromptResponse(stop_reason="cancelled")
        error = task.exception()
        if isinstance(error, MentionError | prompt_commands.TemplateError):
            raise RequestError.invalid_params({"prompt": str(error)})
        if error is not None:
            log.warning("the prompt failed", exc_info=error)
            raise RequestError.internal_error({"details": str(error)})
        if failed:
            raise RequestError.internal_error({"details": failed[-1]})
        if live.updates.finish_reason == "length":
            return schema.PromptResponse(stop_reason="max_tokens")
        return schema.PromptResponse(stop_reason="end_turn")

    async def _command(self, live: Live, name: str, arguments: str | None) -> None:
        """``/name args``: a Markdown command's prompt is a turn; any other command runs
        without the model, what it says coming back as the agent's message."""
        session = live.session
        await session.extensions.settled()
        command = session.commands.get(name)
        if command is None:
            names = ", ".join(session.commands.names) or "(none)"
            live.updates.put(up.message(f"unknown command /{name}. Commands: {names}"))
            return
        template = prompt_commands.template_of(session, name)
        if template is not None:
            await prompt_commands.run_template(session, template, arguments)
            return
        await session.extensions.ready()  # not session.running(): /undo would wait for it
        try:
            await session.commands.run(name, arguments)
        except Exception as exc:
            session.output.say(f"error: {exc or type(exc).__name__}", kind="error")

    def _usage(self, live: Live) -> None:
        try:
            use = live.session.conversation.budget.use(load=False)
        except Exception:
            return
        if use is not None and use.window:
            live.outbox.put(
                schema.UsageUpdate(
                    session_update="usage_update", used=max(use.tokens, 0), size=use.window
                )
            )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is None:
            return  # a notification: nothing to answer
        if live.running is not None and not live.running.done():
            live.cancelled = True
            if not live.session.cancel():
                live.running.cancel()

    # -- the end -----------------------------------------------------------------------------

    def cancel_all(self) -> None:
        """The client is gone (its input ended): every running prompt is cancelled."""
        for live in self.sessions.values():
            if live.running is not None and not live.running.done():
                live.cancelled = True
                if not live.session.cancel():
                    live.running.cancel()

    async def close(self) -> None:
        """The client is gone: cancel what runs, close every session (journals, MCP
        servers), within ``CLOSE_TIMEOUT`` seconds."""
        running = []
        for live in self.sessions.values():
            live.outbox.gone = True
            if live.running is not None and not live.running.done():
                live.session.cancel() or live.running.cancel()
                running.append(live.running)
        if running:
            await asyncio.wait(running, timeout=CLOSE_TIMEOUT)
        for live in list(self.sessions.values()):
            for stop in live.stop_listening:
                stop()
            try:
                await asyncio.wait_for(live.session.close(), CLOSE_TIMEOUT)
            except Exception:
                log.warning("closing session %s failed", live.id, exc_info=True)
            live.session.conversation.journal.close()
            live.outbox.close()
        self.sessions.clear()


def replay(live: Live) -> list[Any]:
    """The journaled conversation as the updates that showed it: the user's prompts (as
    typed), the replies, each tool call with its result."""
    calls = live.updates.calls
    names: dict[str, tuple[str, Any]] = {}
    found: list[Any] = []
    for message in live.session.conversation.messages:
        if isinstance(message, UserMessage):
            if message.origin in ("prompt", "command", "steer"):
                found.append(up.user(message.prompt))
        elif isinstance(message, AssistantMessage):
            if message.text:
                found.append(up.message(message.text))
            for call in message.calls:
                args: Any = None
                try:
                    import json

                    args = json.loads(call.arguments) if call.arguments else {}
                except ValueError:
                    args = None
                names[call.id] = (call.name, args)
                start = calls.started(ev.ToolCallStarted(call.id, call.name, call.arguments, args))
                found.append(start)
        elif isinstance(message, ToolMessage):
            name, args = names.get(message.call_id, ("", None))
            found.append(
                calls.finished(ev.ToolCallFinished(message.call_id, name, message.result, 0))
            )
    return found
