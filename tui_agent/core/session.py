"""The session: one folder, its config, toolbox, commands and conversation.

``create_session`` is the one factory the TUI, ``tui-agent run`` and the tests share.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from . import config as config_module
from . import journal as journal_module
from . import plugins, trust
from .agent import Agent
from .approval import ApprovalRequest, Approver, Decision, headless_approver
from .commands import Commands, is_command_line, parse_command
from .config import Config
from .context import ToolContext, find_worktree
from .conversation import Conversation, repair, starts_cleanly
from .events import (
    ConversationReset,
    EventBus,
    ExitRequested,
    ThemeRequested,
    ToolCallFinished,
    ToolCallStarted,
)
from .output import Output
from .plugins import LoadProblem, LoadReport
from .prompt import system_prompt
from .providers import BUILTIN, Provider, ProviderError
from .toolbox import Toolbox, ToolboxEvent
from .transcript import Transcript

log = logging.getLogger("tui_agent.session")
T = TypeVar("T")


def new_session_id() -> str:
    # os.urandom(3).hex() is secrets.token_hex(3), without importing hashlib and hmac
    return f"{datetime.now():%Y%m%d-%H%M%S}-{os.urandom(3).hex()}"


class Session:
    """Everything a plugin's setup function receives."""

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
        self.directory = Path(directory).expanduser().resolve()
        if not self.directory.is_dir():
            raise NotADirectoryError(f"not a folder: {self.directory}")
        self.worktree = find_worktree(self.directory)
        self.project = plugins.project_root(self.directory, self.worktree)
        self.id = new_session_id()
        self.yes = yes
        self.flags: dict[str, Any] = {
            k: v
            for k, v in {"provider": provider, "model": model, "base_url": base_url}.items()
            if v
        }
        self.trust_flag = trust
        self.toolbox = Toolbox(context_factory=self.tool_context, hidden=self.hidden)
        self.commands = Commands()
        self.events = EventBus()  # agent events, tool calls and notes: one stream
        self.output = Output(bus=self.events)
        self.config = Config()
        self.providers: dict[str, Any] = {}
        self.problems: list[LoadProblem] = []
        self.config_problems: list[LoadProblem] = []  # also in problems
        self.skipped: list[Path] = []
        self._modules: list[str] = []
        self.toolbox.listen(self._announce_call)
        self.approver: Approver = headless_approver(yes)
        self.tool_filters: list[Callable[[str], bool]] = []
        self._turn_hooks: list[Callable[[], Any]] = []
        self._close_hooks: list[Callable[[], Any]] = []
        self._closing: set[asyncio.Task[None]] = set()  # a replaced load's on_close work
        self.transcript = Transcript(self.id, self.directory, self._journal_failed)
        self.agent = Agent(
            transcript=self.transcript,
            toolbox=self.toolbox,
            events=self.events,
            output=self.output,
            settings=lambda: self.config.settings,
            provider=lambda: self.provider,
            tools=self.offered_tools,
            system_prompt=self.system_prompt,
            tool_context=self.tool_context,
        )
        self._provider: Provider | None = None
        self._turn: asyncio.Task[Any] | None = None
        self.state: dict[str, Any] = {}
        self.loaded = False
        self.themes: list[str] = []
        self.exit_requested = False

    # -- trust ------------------------------------------------------------------------------

    @property
    def project_code(self) -> list[Path]:
        return plugins.project_code(self.project)

    @property
    def trusted(self) -> bool:
        return self.trust_flag or trust.decision(self.project) is True

    @property
    def needs_trust(self) -> bool:
        """Project code exists and nobody has said yes or no for this folder yet."""
        return not self.trusted and trust.decision(self.project) is None and bool(self.project_code)

    def trust(self, remember: bool = True) -> LoadReport:
        """Trust this folder (remembered unless ``remember=False``) and load its code."""
        if remember:
            trust.remember(self.project, True)
        self.trust_flag = True
        return self.reload()

    def distrust(self) -> None:
        """Remember that this folder's code must not run."""
        trust.remember(self.project, False)
        self.trust_flag = False

    # -- loading ----------------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return config_module.default_provider(self.config.settings)

    @property
    def model(self) -> str | None:
        value = self.config.settings.get("model")
        return str(value) if value else None

    def _settings(self, report: LoadReport) -> dict[str, Any]:
        settings: dict[str, Any] = {}
        files = [config_module.user_config_file()]
        if self.trusted:
            files.append(config_module.project_config_file(self.project))
        self.config_problems = []
        for file in files:
            if not file.is_file():
                continue
            try:
                data, problems = config_module.check_settings(config_module.read_toml(file))
            except (OSError, ValueError) as exc:
                problems = [plugins.describe(exc)]
            else:
                settings = config_module.deep_merge(settings, data)
            self.config_problems += [LoadProblem(str(file), text) for text in problems]
        report.problems += self.config_problems
        settings = config_module.deep_merge(settings, config_module.env_settings())
        return config_module.deep_merge(settings, self.flags)

    def reload(self) -> LoadReport:
        """Re-read config, plugin files and tool files; rebuild toolbox and commands in place."""
        report = LoadReport()
        config = Config(self._settings(report))
        folders = plugins.global_folders()
        local = plugins.project_folders(self.project)
        self.skipped = []
        if self.trusted:
            folders += local
        else:
            self.skipped = self.project_code
        token = config_module.activate(config)
        try:
            plugins.import_plugins(folders, report)
        finally:
            config_module.deactivate(token)
        plugins.forget_modules(self._modules)
        self.config = config
        self.providers = plugins.provider_registrations(config)
        self._provider = None
        self.tool_filters.clear()
        self._turn_hooks.clear()
        self._retire(self._close_hooks[::-1])  # the previous load's, before the new one
        self._close_hooks = []
        self.toolbox.clear()
        self.toolbox.stats.clear()
        self.commands.clear()
        plugins.run_setups(self, plugins.merged_registrations(config), report)
        plugins.load_tool_files(self, folders, report)
        self._modules = report.modules
        self.problems = report.problems
        self.loaded = True
        for problem in report.problems:
            log.warning("load problem: %s", problem)
        return report

    # -- provider ---------------------------------------------------------------------------

    @property
    def provider(self) -> Provider:
        """The LLM provider in use (plugins' ``config.provider`` entries beat the built-ins)."""
        if self._provider is None:
            name = self.provider_name
            registration = self.providers.get(name)
            factory = registration.fn if registration is not None else BUILTIN.get(name)
            if factory is None:
                known = ", ".join(sorted({*BUILTIN, *self.providers}))
                raise ProviderError(f"unknown provider {name!r}. Known providers: {known}")
            self._provider = factory(dict(self.config.settings))
        return self._provider

    def provider_names(self) -> list[str]:
        return sorted({*BUILTIN, *self.providers})

    async def complete(self, messages: list[dict[str, Any]]) -> str:
        """One reply to ``messages`` (system prompt added), no tools, transcript untouched."""
        from .providers.base import Text

        request = [{"role": "system", "content": self.system_prompt()}, *messages]
        parts: list[str] = []
        stream = self.provider.stream(request, [])
        try:
            async for event in stream:
                if isinstance(event, Text):
                    parts.append(event.text)
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                await closer()
        return "".join(parts)

    def set_provider(self, name: str) -> None:
        self.set_model(provider=name)

    def set_model(self, model: str | None = None, provider: str | None = None) -> None:
        """Switch model and/or provider for the rest of the session."""
        if model:
            self.flags["model"] = model
            self.config.settings["model"] = model
        if provider:
            self.flags["provider"] = provider
            self.config.settings["provider"] = provider
        self._provider = None

    # -- approvals --------------------------------------------------------------------------

    async def ask(self, request: ApprovalRequest) -> Decision:
        """Ask the user (the TUI's dialog, or the headless policy) about one tool call."""
        return await self.approver(request)

    # -- conversation -----------------------------------------------------------------------

    def _journal_failed(self, text: str) -> None:
        self.output.say(text, kind="error")

    @property
    def conversation(self) -> Conversation:
        """The messages so far (``transcript.conversation``)."""
        return self.transcript.conversation

    @property
    def journal(self) -> journal_module.Journal:
        """Where this session's messages are saved (``transcript.journal``)."""
        return self.transcript.journal

    def record(self, message: dict[str, Any]) -> None:
        """Append a message to the conversation and the journal (flushed at once)."""
        self.transcript.record(message)

    def system_prompt(self) -> str:
        return system_prompt(self.directory, self.worktree)

    def request_messages(self) -> list[dict[str, Any]]:
        return self.transcript.request(self.system_prompt())

    def _announce_call(self, event: ToolboxEvent) -> None:
        """Every tool call, whoever made it, goes on the session's events (the chat and
        headless show it): the toolbox is the one source of call events."""
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

    def hidden(self, name: str) -> bool:
        """A tool filter hides this tool (denied for every call): it is not offered to the
        model, and the model's unknown-tool errors do not name it. A filter that raises
        hides nothing (logged): a plugin's bug must not stop every request."""
        for hide in list(self.tool_filters):
            try:
                if hide(name):
                    return True
            except Exception:
                log.warning("tool filter %r failed for %s", hide, name, exc_info=True)
        return False

    def offered_tools(self) -> list[dict[str, Any]]:
        """Definitions sent to the model, minus tools a filter hides (denied outright)."""
        return self.toolbox.definitions(exclude=self.hidden)

    async def turn(self, prompt: str) -> str:
        """Run one user turn to the final reply. ``cancel()`` stops it, transcript intact."""
        self._turn = asyncio.current_task()
        try:
            await self.ready()
            return await self.agent.turn(prompt)
        finally:
            self._turn = None

    # -- lifecycle hooks --------------------------------------------------------------------

    async def ready(self) -> None:
        """Run the ``on_turn`` functions now (``tui-agent tools`` lists MCP tools this way),
        after the previous load's ``on_close`` work has finished."""
        await self._retired()
        await self._run_hooks(self._turn_hooks, "turn")

    def _retire(self, hooks: list[Callable[[], Any]]) -> None:
        """Run the ``on_close`` functions of a load that ``reload()`` replaces, in order:
        at once when no event loop runs, else as a task that the next turn, ``ready()``
        and ``close()`` wait for (``reload()`` itself stays sync)."""
        if not hooks:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self._run_hooks(hooks, "close"))
            return
        task = loop.create_task(self._run_hooks(hooks, "close"), name="retire the last load")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _retired(self) -> None:
        """Wait for the previous loads' ``on_close`` work still running (``_retire``)."""
        if self._closing:
            await asyncio.gather(*list(self._closing))

    def on_turn(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """Call ``fn()`` (sync or ``async``) at the start of every turn, before the model is
        asked anything: the place to finish work a sync setup could only begin (the MCP
        plugin waits there for its servers). Like ``tool_filters``, registrations belong to
        one load: ``reload()`` clears them and the setups register again."""
        self._turn_hooks.append(fn)
        return fn

    def kept(self, key: str, make: Callable[[], T]) -> T:
        """Plugin state that outlives ``reload()``: the object ``make()`` returned the first
        time ``key`` was asked for (typed; it is stored in ``state``). The ``permissions``
        plugin keeps its session allows this way, ``mcp`` its running servers."""
        if key not in self.state:
            self.state[key] = make()
        return cast(T, self.state[key])

    def hide_tools(self, hidden: Callable[[str], bool]) -> Callable[[str], bool]:
        """Keep the tools for which ``hidden(name)`` is true from the model: they are not
        offered, and unknown-tool errors do not name them (the ``permissions`` plugin hides
        tools denied for every call). Belongs to one load, like ``on_turn``."""
        self.tool_filters.append(hidden)
        return hidden

    def on_close(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """Call ``fn()`` (sync or ``async``) when the session closes (the app quits, a
        headless run ends). Cleared by ``reload()`` like ``on_turn``; what must outlive a
        reload belongs in ``session.kept``."""
        self._close_hooks.append(fn)
        return fn

    async def close(self) -> None:
        """Run the ``on_close`` functions once, newest first (failures are logged), then
        close the journal (a message recorded later opens it again)."""
        hooks, self._close_hooks = self._close_hooks[::-1], []
        await self._retired()
        await self._run_hooks(hooks, "close")
        self.journal.close()

    async def _run_hooks(self, hooks: list[Callable[[], Any]], what: str) -> None:
        for fn in list(hooks):
            try:
                value = fn()
                if inspect.isawaitable(value):
                    await value
            except Exception as exc:
                log.warning("%s hook %r failed", what, fn, exc_info=True)
                self.output.say(f"{what} hook failed: {exc or type(exc).__name__}", kind="error")

    def cancel(self) -> bool:
        """Cancel the running turn: the stream closes and running tools are cancelled."""
        task = self._turn
        if task is None or task.done():
            return False
        task.cancel()
        return True

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    def clear(self) -> None:
        """Forget the conversation; later messages go to a new journal."""
        self.conversation.clear()
        self.id = new_session_id()
        self.transcript.new_journal(self.id)
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

    @property
    def project_config_path(self) -> Path:
        return config_module.project_config_file(self.project)

    @property
    def tokens(self) -> int:
        return self.agent.tokens.total_tokens

    def resume(self, session_id: str | None = None) -> bool:
        """Load a journaled session (the last one of this folder without an id). The newest
        ``RESUME_FIRST`` messages are read at once, the rest on the first use of the whole
        conversation (``Conversation.defer``): the app draws the newest ones first."""
        if session_id is None:
            found = journal_module.list_sessions(self.directory)
            if not found:
                return False
            path = found[0].path
        else:
            located = journal_module.find_session(session_id)
            if located is None:
                return False
            path = located
        lines = journal_module.read_lines(path)
        cut, newest = self._newest_messages(path, lines)
        self.id = path.stem
        self.transcript.new_journal(self.id)
        interrupted = "interrupted: the session ended before this call finished"
        self.conversation.clear()
        for message in repair(newest, interrupted):  # a damaged journal still resumes
            self.conversation.append(message)
        if cut:
            first = newest[0]

            def earlier() -> list[dict[str, Any]]:
                records = journal_module.parse_records(path, lines[:cut])
                older = journal_module.messages_of(records)
                # what repairing the whole journal gives before ``first``: it starts cleanly
                return repair([*older, first], interrupted)[:-1]

            self.conversation.defer(earlier)
        self.transcript.close_open_calls(interrupted)
        self.events.emit(ConversationReset("resume"))
        return True

    RESUME_FIRST = 64  # journaled messages read before the rest (resume)

    def _newest_messages(
        self, path: Path, lines: list[tuple[int, str]]
    ) -> tuple[int, list[dict[str, Any]]]:
        """``(cut, messages)``: the messages of ``lines[cut:]``, at least ``RESUME_FIRST``
        of them unless the journal holds fewer, the first one starting cleanly (nothing
        before it changes how ``repair`` treats it and what follows) unless ``cut`` is 0."""
        found: list[dict[str, Any]] = []  # newest first
        cut = len(lines)
        while cut > 0 and not (len(found) >= self.RESUME_FIRST and starts_cleanly(found[-1])):
            cut -= 1
            records = journal_module.parse_records(path, lines[cut : cut + 1])
            found += reversed(journal_module.messages_of(records))
        return cut, found[::-1]

    # -- running ----------------------------------------------------------------------------

    def tool_context(self, call_id: str = "", message_id: str = "") -> ToolContext:
        return ToolContext(
            agent="main",
            session_id=self.id,
            message_id=message_id,
            directory=str(self.directory),
            worktree=str(self.worktree),
            call_id=call_id,
        )

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
