"""Start-up speed by structure (issue 14): one module of the UI imports the core.

The app draws its first frame before any of the core is imported (``test_startup.py``
lists the modules that come before it). That rests on the structure checked here, read
from the source (the AST of every module under ``tui_agent/ui/``, keyed by its path
there: ``dialogs/approval.py``):

- ``connected.py`` is the one UI module that imports anything of tui-agent outside the UI
  (the core), so no other module can pull the core in early;
- ``connected`` itself is imported at one moment, when the app connects its session
  (``TuiAgentApp._connect``), and at the top of the modules that only come after that;
- one narrow door besides it, ``journaled.py``: the light part of the core a resume's
  first frame draws the journal's newest messages with, before the session is made
  (``JOURNALED``: exactly what it may import), and only ``resumed.py`` uses it.

Imports under ``if TYPE_CHECKING:`` are for annotations and never run: they are allowed
anywhere.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import tui_agent.ui

UI = Path(tui_agent.ui.__file__).parent
PACKAGE = "tui_agent.ui"
BRIDGE = "connected.py"

# the narrow door and what it may import of the core (the typed messages, the
# conversation, the journal's reader, a ``!command``'s record: none of them imports the
# session, the agent or the providers; test_startup.py checks what a resume's first
# frame imports)
JOURNALED = "journaled.py"
JOURNALED_IMPORTS = {
    "tui_agent.core.conversation.conversation",
    "tui_agent.core.conversation.journal",
    "tui_agent.core.protocol",  # its messages module
    "tui_agent.core.sandbox",  # its user_shell module
}

# UI modules still allowed to import the core themselves: empty it as they move to
# ``connected``.
EXCEPTIONS: set[str] = set()

# Modules imported only after the app has connected its session: they import
# ``connected`` at their top (``test_startup.py`` checks none comes before the first frame).
AFTER_CONNECT = {
    "dialogs/approval.py",
    "event_handlers.py",
    "pasted.py",
    "tools_panel.py",
}

# The functions that import ``connected`` when they run, each with why.
BRIDGE_IMPORTED_IN = {
    ("app.py", "TuiAgentApp._connect"): "the moment the app connects its session",
}


@dataclass(frozen=True)
class Import:
    line: int
    module: str  # absolute: ``from ..core.x import y`` in tui_agent.ui is tui_agent.core.x
    scope: str  # the function (qualified) that runs it, or "" at import time


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(node: ast.ImportFrom, package: str) -> list[str]:
    """The modules ``node`` may import: ``from .. import core`` imports tui_agent.core."""
    if node.level == 0:
        base = node.module or ""
    else:
        parts = package.split(".")
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    if node.module is None:
        return [f"{base}.{alias.name}" for alias in node.names]
    return [base]


def imports(source: str, package: str = PACKAGE) -> list[Import]:
    """Every import that runs, in ``source`` (a module of ``package``): statements outside
    ``if TYPE_CHECKING:`` and ``importlib.import_module``/``__import__`` of a literal name."""
    found: list[Import] = []

    def visit(node: ast.AST, scope: list[str], in_function: bool) -> None:
        where = ".".join(scope) if in_function else ""
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:  # the body is for the type checker only
                visit(child, scope, in_function)
            return
        if isinstance(node, ast.Import):
            found.extend(Import(node.lineno, alias.name, where) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend(Import(node.lineno, name, where) for name in _absolute(node, package))
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else None
            name = function.id if isinstance(function, ast.Name) else name
            first = node.args[0]
            if name in ("import_module", "__import__") and isinstance(first, ast.Constant):
                found.append(Import(node.lineno, str(first.value), where))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for child in node.body:
                visit(child, [*scope, node.name], True)
            return
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                visit(child, [*scope, node.name], in_function)
            return
        for inner in ast.iter_child_nodes(node):
            visit(inner, scope, in_function)

    visit(ast.parse(source), [], False)
    return found


def outside_the_ui(found: list[Import]) -> list[Import]:
    return [
        i
        for i in found
        if (i.module == "tui_agent" or i.module.startswith("tui_agent."))
        and not (i.module == PACKAGE or i.module.startswith(PACKAGE + "."))
    ]


def _package_of(path: Path) -> str:
    """The package a module of the UI is in: ``tui_agent.ui.dialogs`` for dialogs/x.py."""
    return ".".join([PACKAGE, *path.relative_to(UI).parent.parts])


def ui_modules() -> dict[str, list[Import]]:
    """Every module of the UI (sub-packages too), by its path under ``tui_agent/ui``."""
    return {
        path.relative_to(UI).as_posix(): imports(
            path.read_text(encoding="utf-8"), _package_of(path)
        )
        for path in sorted(UI.rglob("*.py"))
    }


def test_the_check_sees_every_import_that_runs_and_skips_type_checking_ones() -> None:
    """The checker itself, on a module with each kind of import."""
    source = textwrap.dedent(
        """
        import importlib
        import typing
        from typing import TYPE_CHECKING

        from . import chat
        from .connected import Note

        if TYPE_CHECKING:
            from ..core.session import Session
        if typing.TYPE_CHECKING:
            import tui_agent.core.toolbox
        else:
            from ..core import events
        if not TYPE_CHECKING:
            from ..core.result import Result

        def later():
            from ..core.commands import complete
            import tui_agent.core.agent as agent
            importlib.import_module("tui_agent.core.paths")

        class Screen:
            from .. import core

            async def shown(self):
                from .. import cli, headless
        """
    )
    found = imports(source)
    assert [(i.module, i.scope) for i in outside_the_ui(found)] == [
        ("tui_agent.core", ""),  # from ..core import events
        ("tui_agent.core.result", ""),
        ("tui_agent.core.commands", "later"),
        ("tui_agent.core.agent", "later"),
        ("tui_agent.core.paths", "later"),
        ("tui_agent.core", ""),
        ("tui_agent.cli", "Screen.shown"),
        ("tui_agent.headless", "Screen.shown"),
    ]
    assert [(i.module, i.scope) for i in found if i.module.startswith(PACKAGE)] == [
        ("tui_agent.ui.chat", ""),
        ("tui_agent.ui.connected", ""),
    ]
    assert not any("session" in i.module or "toolbox" in i.module for i in found)


def test_only_connected_imports_the_core() -> None:
    modules = ui_modules()
    assert BRIDGE in modules and {*EXCEPTIONS, *AFTER_CONNECT} <= set(modules)
    wrong = {
        f"{name}:{i.line} imports {i.module}"
        for name, found in modules.items()
        if name not in (BRIDGE, JOURNALED) and name not in EXCEPTIONS
        for i in outside_the_ui(found)
    }
    assert not wrong, f"import it through tui_agent/ui/{BRIDGE} instead: {sorted(wrong)}"


def test_the_narrow_door_imports_only_its_part_of_the_core_and_only_resumed_uses_it() -> None:
    modules = ui_modules()
    found = modules[JOURNALED]
    assert {i.module for i in outside_the_ui(found)} == JOURNALED_IMPORTS
    assert all(not i.scope for i in found)  # at its top: nothing else comes later
    assert not [i.module for i in found if i.module.startswith(("textual", PACKAGE))]
    users = {
        name
        for name, imported in modules.items()
        for i in imported
        if i.module == f"{PACKAGE}.{JOURNALED.removesuffix('.py')}"
    }
    assert users == {"resumed.py"}


def test_every_exception_still_imports_the_core() -> None:
    """An exception that is no longer needed must go, so the set only shrinks."""
    modules = ui_modules()
    stale = [name for name in EXCEPTIONS if not outside_the_ui(modules[name])]
    assert not stale, f"remove {stale} from EXCEPTIONS: they no longer import the core"


def test_connected_imports_the_core_and_nothing_of_the_ui() -> None:
    found = ui_modules()[BRIDGE]
    ours = [i.module for i in found if i.module.startswith("tui_agent")]
    assert ours and all(m.startswith("tui_agent.core") for m in ours), ours
    assert not [i.module for i in found if i.module.startswith("textual")]


def test_connected_is_imported_when_the_app_connects_and_after() -> None:
    """At the top of the modules that come after the app has connected its session, and
    otherwise only in the functions listed (the app's ``_connect``)."""
    at_top: set[str] = set()
    in_functions: set[tuple[str, str]] = set()
    for name, found in ui_modules().items():
        for i in found:
            if i.module == f"{PACKAGE}.{BRIDGE.removesuffix('.py')}":
                if i.scope:
                    in_functions.add((name, i.scope))
                else:
                    at_top.add(name)
    assert at_top == AFTER_CONNECT
    assert in_functions == set(BRIDGE_IMPORTED_IN)
