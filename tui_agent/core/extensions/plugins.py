"""Finding and loading plugin files and tool files, with every failure reported, never fatal."""

from __future__ import annotations

import ast
import asyncio
import inspect
import itertools
import logging
import sys
import types
from collections.abc import Awaitable, Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..project import config as config_module
from ..project import workspace as workspace_module
from ..project.config import LoadProblem as LoadProblem
from ..tools import tool_files as tool_files_module
from ..tools.tool_files import tool_names
from ..util import paths
from . import packages as packages_module

if TYPE_CHECKING:
    from .host import PluginHost

log = logging.getLogger("tui_agent.plugins")
_COUNTER = itertools.count(1)


@dataclass(frozen=True)
class Folder:
    scope: str
    path: Path
    kind: str  # "plugins", "tools", or "packages" (installed packages' place in the order)


@dataclass(frozen=True)
class Plugin:
    """A plugin a load read or skipped (``tui-agent plugins`` lists them): a file, or an
    installed package's entry point (``package``; ``setups`` are the names it registered,
    ``failed`` why it could not be loaded)."""

    scope: str  # bundled, package, home, user, project
    name: str  # the file's name, or the entry point's
    source: str  # the file's path, or name==version
    origin: str  # the source its tools and commands carry
    package: packages_module.Package | None = None
    setups: tuple[str, ...] = ()
    failed: str = ""
    skipped: bool = False


@dataclass
class LoadReport:
    """What a load did. ``tool_files`` are the tool-folder files imported (or that failed
    to); ``no_tools`` the ones that gave no tool and no problem (helper scripts, which are
    not imported, and files without ``tool(...)``), each named in a plain note (``notes``,
    also said on ``session.output``): a helper script is intended, so not an error."""

    problems: list[LoadProblem] = field(default_factory=list)
    plugin_files: list[Path] = field(default_factory=list)
    plugins: list[Plugin] = field(default_factory=list)
    tool_files: list[Path] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    no_tools: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pending: asyncio.Task[None] | None = field(default=None, compare=False, repr=False)

    def __await__(self) -> Generator[Any, None, LoadReport]:
        """``await session.reload()`` waits for what the load could not finish at once
        (the replaced load's async ``on_close`` work, ``async`` setups and what comes
        after them), then gives the report."""
        if self.pending is not None:
            yield from self.pending.__await__()
        return self


def project_folders(project: Path) -> list[Folder]:
    """Project plugins (unless the project is HOME, whose ``.agents`` is already loaded)
    and project tool folders."""
    plugins = [Folder("project", project / ".agents" / "plugins", "plugins")]
    if project.resolve() == Path.home().resolve():
        plugins = []
    return [
        *plugins,
        Folder("project-tool", project / ".tui-agent" / "tools", "tools"),
        Folder("project-tool", project / ".tui-agent" / "tool", "tools"),
    ]


def global_folders() -> list[Folder]:
    return [
        Folder("bundled", paths.bundled_plugins_dir(), "plugins"),
        Folder("package", Path(), "packages"),
        Folder("home", paths.home_plugins_dir(), "plugins"),
        Folder("user", paths.user_config_dir() / "plugins", "plugins"),
        Folder("user-tool", paths.user_config_dir() / "tools", "tools"),
    ]


def python_files(folder: Path) -> list[Path]:
    """``*.py`` in a folder, sorted by name; ``_private.py`` and dot files are skipped."""
    try:
        return sorted(
            (
                p
                for p in folder.iterdir()
                if p.suffix == ".py" and p.name[0] not in "._" and p.is_file()
            ),
            key=lambda p: p.name,
        )
    except OSError:
        return []


def _project_code_files(project: Path) -> list[Path]:
    """The project's plugin and tool files (``Workspace.project_code`` asks)."""
    return [file for folder in project_folders(project) for file in python_files(folder.path)]


workspace_module.register_project_code(_project_code_files, order=10)


def origin(folder: Folder, file: Path) -> str:
    return f"{folder.scope}:{file.name}"


def exec_file(
    path: Path, origin_name: str, report: LoadReport, source: bytes | ast.Module | None = None
) -> types.ModuleType | None:
    """Run one Python file as a fresh module; failures become a ``LoadProblem``.

    The source (or its syntax tree, when the caller has parsed it already) is compiled on
    every load (no bytecode cache), so an edit is always seen.
    """
    module_name = f"tui_agent_plugins._{next(_COUNTER)}_{path.stem}"
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    token = config_module.loading(origin_name, str(path))
    try:
        if source is None:
            source = path.read_bytes()
        code = compile(source, str(path), "exec", dont_inherit=True)
        sys.modules[module_name] = module
        report.modules.append(module_name)
        exec(code, module.__dict__)
    except BaseException as exc:  # a plugin must never take the app down, not even sys.exit
        if isinstance(exc, KeyboardInterrupt):
            raise
        sys.modules.pop(module_name, None)
        report.problems.append(LoadProblem(str(path), describe(exc)))
        log.warning("could not load %s", path, exc_info=exc)
        return None
    finally:
        config_module.done_loading(token)
    return module


def describe(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def import_plugins(folders: Iterable[Folder], report: LoadReport) -> None:
    for folder in folders:
        if folder.kind == "packages":
            import_packages(report)
        if folder.kind != "plugins":
            continue
        for file in python_files(folder.path):
            report.plugin_files.append(file)
            report.plugins.append(Plugin(folder.scope, file.name, str(file), origin(folder, file)))
            config = config_module.current_config()
            setups, providers = dict(config.setups), dict(config.providers)
            if exec_file(file, origin(folder, file), report) is None:
                # a file that failed half-way keeps none of its registrations
                config.setups, config.providers = setups, providers


def import_packages(report: LoadReport) -> None:
    """Load the installed packages' entry points (``packages.installed()``): a module is
    run like a plugin file, a function is registered as a setup under the entry point's
    name. One that fails keeps none of its registrations and is reported with its
    distribution and version; the others load."""
    try:
        found = packages_module.installed()
    except Exception as exc:  # a damaged distribution's metadata: no package loads
        report.problems.append(LoadProblem(f"entry points {packages_module.GROUP}", describe(exc)))
        log.warning("could not read the installed entry points", exc_info=exc)
        return
    config = config_module.current_config()
    for package in found:
        setups, providers = dict(config.setups), dict(config.providers)
        token = config_module.loading(package.origin, package.source)
        failed = ""
        try:
            if package.attr is None:
                packages_module.run_module(package.module)
            else:
                config.setup(package.name, packages_module.load_object(package))
        except BaseException as exc:  # as for a file: not even sys.exit takes the app down
            if isinstance(exc, KeyboardInterrupt):
                raise
            config.setups, config.providers = setups, providers
            failed = f"entry point {package.name} = {package.value}: {describe(exc)}"
            report.problems.append(LoadProblem(package.source, failed))
            log.warning("could not load %s (%s)", package.source, package.name, exc_info=exc)
        finally:
            config_module.done_loading(token)
        registered = tuple(n for n, r in config.setups.items() if setups.get(n) is not r)
        report.plugins.append(
            Plugin(
                "package",
                package.name,
                package.source,
                package.origin,
                package=package,
                setups=registered,
                failed=failed,
            )
        )


def plugin_errors(plugin: Plugin, problems: Iterable[LoadProblem]) -> list[str]:
    """What went wrong with one plugin: its import, and any of its setups that raised."""
    if plugin.package is None:
        return [
            p.error if not p.setup else f"setup {p.setup!r}: {p.error}"
            for p in problems
            if p.path == plugin.source
        ]
    setups = [
        f"setup {p.setup!r}: {p.error}"
        for p in problems
        if p.path == plugin.source and p.setup and p.setup in plugin.setups
    ]
    return [plugin.failed, *setups] if plugin.failed else setups


def run_setup(
    session: PluginHost, registration: config_module.Registration, report: LoadReport
) -> Generator[Awaitable[Any], Any, None]:
    """Call one setup with the session; one that raises is rolled back and reported. An
    ``async`` setup's coroutine is yielded, to be awaited by whoever drives the load
    (``Extensions.reload``), and rolled back the same way if it raises."""
    label, path = registration.origin, registration.path
    toolbox_snapshot = session.toolbox.snapshot()
    commands_snapshot = session.commands.snapshot()
    session.toolbox.source = session.commands.source = label
    try:
        value = registration.fn(session)
        if inspect.isawaitable(value):
            yield value
    except Exception as exc:
        session.toolbox.restore(toolbox_snapshot)
        session.commands.restore(commands_snapshot)
        report.problems.append(LoadProblem(path or label, describe(exc), registration.name))
        log.warning("setup %s from %s failed", registration.name, path or label, exc_info=exc)
    finally:
        session.toolbox.source = session.commands.source = "api"


def load_tool_files(session: PluginHost, folders: Iterable[Folder], report: LoadReport) -> None:
    """Import the tool files (those that import ``tui_agent``), register their tools, and
    report what only looks like a tool; files that give nothing are named in notes."""
    helpers: list[Path] = []
    empty: list[Path] = []
    scripts: list[Path] = []
    for folder in folders:
        if folder.kind != "tools":
            continue
        scripts += tool_files_module.script_files(folder.path)
        for file in python_files(folder.path):
            try:
                scanned = tool_files_module.scan(file.read_bytes(), str(file))
            except Exception as exc:  # unreadable, or not Python: reported as an import would
                report.tool_files.append(file)
                report.problems.append(LoadProblem(str(file), describe(exc)))
                continue
            if not scanned.is_tool_file:
                helpers.append(file)
                continue
            report.tool_files.append(file)
            if not _register_tool_file(session, folder, file, scanned.tree, report):
                empty.append(file)
    _note_no_tools(session, report, helpers, empty)
    project = session.workspace.project
    for name in tool_files_module.OPENCODE_TOOL_FOLDERS:
        scripts += tool_files_module.script_files(project / name)
    _note_scripts(session, report, scripts)


def _note_scripts(session: PluginHost, report: LoadReport, scripts: list[Path]) -> None:
    """TypeScript/JavaScript tool files (a tool folder's, and a project's ``.opencode/tool``,
    ``.opencode/tools`` and ``.dropstone/tools``): never loaded, so one note per load names
    them and says where the porting table is."""
    if not scripts:
        return
    note = tool_files_module.script_note([_shown(session, file) for file in scripts])
    report.notes.append(note)
    log.info("%s", note)
    session.output.say(note)


def _shown(session: PluginHost, file: Path) -> str:
    try:
        return str(file.relative_to(session.workspace.project))
    except ValueError:
        return str(file)


def _register_tool_file(
    session: PluginHost, folder: Folder, file: Path, tree: ast.Module, report: LoadReport
) -> bool:
    """False when the file gave neither a tool nor a problem."""
    problems = len(report.problems)
    module = exec_file(file, origin(folder, file), report, tree)
    if module is None:
        return True
    namespace = vars(module)
    unreadable: list[str] = []
    found = tool_names(file.stem, namespace, unreadable)
    report.problems += [LoadProblem(str(file), text) for text in unreadable]
    report.problems += [
        LoadProblem(str(file), shape.message())
        for shape in tool_files_module.lookalikes(file.stem, namespace)
    ]
    session.toolbox.source = origin(folder, file)
    try:
        for name, spec in found:
            try:
                aliases = _replaced_aliases(session, name, file, report)
                session.toolbox.add(
                    name,
                    description=spec.description,
                    params=spec.params,
                    required=spec.required,
                    aliases=aliases,
                    handler=spec.handler(),
                )
            except (ValueError, TypeError) as exc:
                report.problems.append(LoadProblem(str(file), describe(exc)))
    finally:
        session.toolbox.source = "api"
    return bool(found) or len(report.problems) > problems


def _replaced_aliases(
    session: PluginHost, name: str, file: Path, report: LoadReport
) -> list[str] | None:
    """A tool file's tool named like another tool's alias (``bash.py``, ``bash`` being the
    built-in ``execute``'s) replaces that tool, as the Dropstone page's ``bash.ts`` replaces
    its built-in ``bash``: the old tool is removed, and its name and its other aliases lead
    to the new one (the aliases to give it). None when ``name`` is no alias (a tool of that
    name, if any, is replaced by ``toolbox.add`` and keeps its aliases)."""
    toolbox = session.toolbox
    old = toolbox.aliases.get(name)
    if old is None or name in toolbox.tools or old not in toolbox.tools:
        return None
    replaced = toolbox.tools[old]
    aliases = [old, *(alias for alias in replaced.aliases if alias != name)]
    toolbox.remove(old)
    note = (
        f"{_shown(session, file)}: the tool {name} replaces {old} ({replaced.source}), whose "
        f"alias it is; {', '.join(aliases)} now lead to {name}."
    )
    report.notes.append(note)
    log.info("%s", note)
    session.output.say(note)
    return aliases


def _note_no_tools(
    session: PluginHost, report: LoadReport, helpers: list[Path], empty: list[Path]
) -> None:
    def shown(files: list[Path]) -> str:
        names = []
        for file in files:
            try:
                names.append(str(file.relative_to(session.workspace.project)))
            except ValueError:
                names.append(str(file))
        return ", ".join(names)

    notes: list[str] = []
    if helpers:
        they = "it does" if len(helpers) == 1 else "they do"
        notes.append(
            f"No tools in {shown(helpers)}: not imported, as {they} not import tui_agent "
            "(fine for a helper script that a tool runs; a tool file needs "
            "`from tui_agent import tool`)."
        )
    if empty:
        notes.append(
            f"No tools in {shown(empty)}: nothing made with tui_agent.tool(...) at the top level."
        )
    report.no_tools += [*helpers, *empty]
    report.notes += notes
    for note in notes:
        log.info("%s", note)
        session.output.say(note)


def forget_modules(names: Iterable[str]) -> None:
    for name in names:
        sys.modules.pop(name, None)


def merged_registrations(config: config_module.Config) -> list[config_module.Registration]:
    """Setups from files, then programmatic ones (``tui_agent.setup`` outside any plugin)."""
    registrations: dict[str, config_module.Registration] = dict(config.setups)
    for name, registration in config_module.default_config().setups.items():
        registrations.pop(name, None)
        registrations[name] = registration
    return list(registrations.values())


def provider_registrations(config: config_module.Config) -> dict[str, Any]:
    providers = dict(config.providers)
    providers.update(config_module.default_config().providers)
    return providers
