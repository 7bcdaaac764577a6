"""The session's extensions: its config, plugin files, plugin packages and tool files,
loaded and reloaded.

One *load* reads the settings, imports the plugin files, runs their setups (which register
tools, hooks and commands, the load's ``on("turn")``/``on("close")`` functions and tool
filters) and registers the tool files. ``reload`` replaces the load: the replaced load's
``close`` functions finish before the new setups run, so a plugin that starts something
(a server, a watcher) stops it on ``close`` and starts it again in its setup.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .. import sandbox  # noqa: F401  (registers the [sandbox] table's check with config)
from ..hooks import reading  # noqa: F401  (registers the hooks table's check, the hook files)
from ..project import config as config_module
from ..project.config import Config
from ..project.workspace import Workspace
from ..protocol.output import Output
from ..providers import BUILTIN, Provider, ProviderError
from ..skills import finding  # noqa: F401  (registers the project's skill files as its code)
from ..tools.toolbox import Toolbox
from ..web import settings as _web  # noqa: F401  (registers [fetch] and [search] checks)
from . import (
    agent_plugins,  # noqa: F401  (registers Agent Plugins as project code)
    plugins,
    prompt_commands,
)
from .commands import Commands
from .moments import Moments
from .plugins import LoadProblem, LoadReport

if TYPE_CHECKING:
    from .host import PluginHost

log = logging.getLogger("tui_agent.extensions")
T = TypeVar("T")
Hook = Callable[[], Any]
Steps = Generator[Awaitable[Any], Any, None]


class Extensions:
    """Config, plugins and tool files for one session, and what the current load registered.

    ``flags`` are settings given by the caller (command-line flags, ``set_model``): they
    win over every file and the environment."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        toolbox: Toolbox,
        commands: Commands,
        output: Output,
        flags: dict[str, Any] | None = None,
    ) -> None:
        self.workspace = workspace
        self.toolbox = toolbox
        self.commands = commands
        self.output = output
        self.flags: dict[str, Any] = dict(flags or {})
        self.config = Config()
        self.providers: dict[str, config_module.Registration] = {}
        self.problems: list[LoadProblem] = []  # the last load's, config problems included
        self.config_problems: list[LoadProblem] = []
        self.skipped: list[Any] = []  # untrusted project code that was not loaded
        self.plugins: list[plugins.Plugin] = []  # the last load's, skipped ones included
        self.loaded = False
        self._modules: list[str] = []
        self._filters: list[Callable[[str], bool]] = []
        self._turn_hooks: list[Hook] = []
        self._close_hooks: list[Hook] = []
        self.moments = Moments(output)  # on("prompt" | "stop" | "start"): this load's
        self._kept: dict[str, object] = {}
        self._provider: Provider | None = None
        self._models: dict[str, Provider] = {}  # subagents' models (provider_for)
        self._pending: asyncio.Task[None] | None = None

    # -- loading ----------------------------------------------------------------------------

    def reload(self, session: PluginHost) -> LoadReport:
        """Replace the current load: run its ``on_close`` functions (newest first), re-read
        config, plugin files and tool files, and run the setups with ``session``.

        Everything runs at once, up to the first thing that must be awaited (an ``async``
        ``on_close`` function or setup). From there on, the rest runs in a task when an
        event loop is running (``await`` the report, or ``ready()``, to wait for it; the next
        turn does), else to the end before this returns."""
        report = LoadReport()
        report.pending = self._drive(self._load(session, report))
        return report

    def _load(self, session: PluginHost, report: LoadReport) -> Steps:
        previous = self._pending
        if previous is not None and not previous.done():
            yield previous  # one load at a time, in the order asked for
        hooks, self._close_hooks = self._close_hooks[::-1], []
        self._turn_hooks, self._filters = [], []
        self.moments.clear()
        for fn in hooks:
            try:
                value = fn()
                if inspect.isawaitable(value):
                    yield value
            except Exception as exc:
                self._hook_failed("close", fn, exc)
        config = Config(self._settings(report))
        folders = plugins.global_folders()
        self.skipped = []
        if self.workspace.trusted:
            folders += plugins.project_folders(self.workspace.project)
        else:
            self.skipped = self.workspace.project_code
        token = config_module.activate(config)
        try:
            plugins.import_plugins(folders, report)
        finally:
            config_module.deactivate(token)
        plugins.forget_modules(self._modules)
        report.plugins += [
            plugins.Plugin("project", path.name, str(path), "", skipped=True)
            for folder in plugins.project_folders(self.workspace.project)
            for path in self.skipped
            if folder.kind == "plugins" and path.parent == folder.path
        ]
        self.plugins = report.plugins
        self.config = config
        self.providers = plugins.provider_registrations(config)
        self._provider = None
        self._models = {}
        self.problems = report.problems  # the same list: problems found later show too
        self.toolbox.clear()
        self.toolbox.stats.clear()
        self.commands.clear()
        for registration in plugins.merged_registrations(config):
            yield from plugins.run_setup(session, registration, report)
        trusted = self.workspace.project if self.workspace.trusted else None
        prompt_commands.load(session, report, trusted)  # after the setups: theirs keep names
        plugins.load_tool_files(session, folders, report)
        self._modules = report.modules
        self.loaded = True
        for problem in report.problems:
            log.warning("load problem: %s", problem)

    def _drive(self, steps: Steps) -> asyncio.Task[None] | None:
        """Run ``steps`` to its first awaitable; the rest as described in ``reload``."""
        try:
            first = next(steps)
        except StopIteration:
            return None

        async def finish(awaitable: Awaitable[Any]) -> None:
            while True:
                try:
                    try:
                        value = await awaitable
                    except Exception as exc:
                        awaitable = steps.throw(exc)
                    else:
                        awaitable = steps.send(value)
                except StopIteration:
                    return

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(finish(first))
            return None
        task = loop.create_task(finish(first), name="load plugins")
        self._pending = task
        return task

    def _settings(self, report: LoadReport) -> dict[str, Any]:
        settings: dict[str, Any] = {}
        files = [config_module.user_config_file()]
        if self.workspace.trusted:
            files.append(self.workspace.config_file)
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

    async def settled(self) -> None:
        """Wait until the last load has finished (its async part included)."""
        task = self._pending
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            await task

    # -- what a load registers ----------------------------------------------------------------

    def on_turn(self, fn: Hook) -> Hook:
        self._turn_hooks.append(fn)
        return fn

    def on_close(self, fn: Hook) -> Hook:
        self._close_hooks.append(fn)
        return fn

    def hide_tools(self, hidden: Callable[[str], bool]) -> Callable[[str], bool]:
        self._filters.append(hidden)
        return hidden

    def hidden(self, name: str) -> bool:
        """A filter hides this tool. A filter that raises hides nothing (logged): a
        plugin's bug must not stop every request."""
        for hide in list(self._filters):
            try:
                if hide(name):
                    return True
            except Exception:
                log.warning("tool filter %r failed for %s", hide, name, exc_info=True)
        return False

    def offered_tools(self) -> list[dict[str, Any]]:
        """The tool definitions the model is offered: the toolbox's, minus hidden tools."""
        return self.toolbox.definitions(exclude=self.hidden)

    def kept(self, key: str, make: Callable[[], T]) -> T:
        """The object ``make()`` returned the first time ``key`` was asked for (every load
        of this session gets the same one)."""
        if key not in self._kept:
            self._kept[key] = make()
        return cast(T, self._kept[key])

    async def ready(self) -> None:
        """Wait for the last load, then run its ``on_turn`` functions."""
        await self.settled()
        await self._run(list(self._turn_hooks), "turn")

    async def close(self) -> None:
        """Wait for the last load, then run its ``on_close`` functions, newest first, once."""
        await self.settled()
        hooks, self._close_hooks = self._close_hooks[::-1], []
        await self._run(hooks, "close")

    async def _run(self, hooks: list[Hook], what: str) -> None:
        for fn in hooks:
            try:
                value = fn()
                if inspect.isawaitable(value):
                    await value
            except Exception as exc:
                self._hook_failed(what, fn, exc)

    def _hook_failed(self, what: str, fn: Hook, exc: Exception) -> None:
        log.warning("%s hook %r failed", what, fn, exc_info=exc)
        self.output.say(f"{what} hook failed: {exc or type(exc).__name__}", kind="error")

    # -- the model --------------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return config_module.default_provider(self.config.settings)

    @property
    def model(self) -> str | None:
        value = self.config.settings.get("model")
        return str(value) if value else None

    @property
    def provider(self) -> Provider:
        """The provider in use (plugins' ``config.provider`` entries beat the built-ins),
        made on first use."""
        if self._provider is None:
            name = self.provider_name
            registration = self.providers.get(name)
            factory = registration.fn if registration is not None else BUILTIN.get(name)
            if factory is None:
                known = ", ".join(self.provider_names())
                raise ProviderError(f"unknown provider {name!r}. Known providers: {known}")
            self._provider = factory(dict(self.config.settings))
        return self._provider

    def provider_for(self, model: str | None) -> Provider:
        """The provider for ``model`` (a subagent's): the one in use when ``model`` is None
        or the model in use, else one made like it with ``model`` (kept for this load)."""
        if not model or model == self.model:
            return self.provider
        made = self._models.get(model)
        if made is None:
            name = self.provider_name
            registration = self.providers.get(name)
            factory = registration.fn if registration is not None else BUILTIN.get(name)
            if factory is None:
                return self.provider  # raises, saying which providers are known
            made = self._models[model] = factory({**self.config.settings, "model": model})
        return made

    def provider_names(self) -> list[str]:
        return sorted({*BUILTIN, *self.providers})

    def set_model(self, model: str | None = None, provider: str | None = None) -> None:
        """Use ``model`` and/or ``provider`` from now on (later loads too)."""
        for key, value in (("model", model), ("provider", provider)):
            if value:
                self.flags[key] = value
                self.config.settings[key] = value
        self._provider = None
        self._models = {}
