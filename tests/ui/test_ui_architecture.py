"""The UI's layout (issue 28): no import cycle among its modules, and no module too long.

Imports under ``if TYPE_CHECKING:`` count: a cycle of annotations is a cycle of
knowledge (the cures: a Protocol for what a module needs of the other, as
``event_handlers.AgentApp``, ``palette.PaletteApp`` and ``blocks.reply.ReplyHost`` are,
or a shared piece moved down into a module of its own, as ``blocks.live``)."""

from __future__ import annotations

from pathlib import Path

import grimp

import tui_agent.ui

UI = Path(tui_agent.ui.__file__).parent
PACKAGE = "tui_agent.ui"
MAX_LINES = 700


def cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """The strongly connected components of more than one module among ``modules``
    (Tarjan), each sorted: every one is an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & modules):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

    class Graph:
        def find_modules_directly_imported_by(self, module: str) -> set[str]:
            return edges.get(module, set())

    assert cycles(Graph(), {"a", "b", "c", "d"}) == [["a", "b", "c"]]  # type: ignore[arg-type]


def test_no_import_cycle_among_the_ui_modules() -> None:
    graph = grimp.build_graph("tui_agent")  # TYPE_CHECKING imports included
    ui = {m for m in graph.modules if m == PACKAGE or m.startswith(PACKAGE + ".")}
    assert len(ui) > 10
    assert cycles(graph, ui) == []


def test_every_ui_module_is_under_the_line_limit() -> None:
    long = {
        path.relative_to(UI).as_posix(): lines
        for path in UI.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= MAX_LINES
    }
    assert not long, f"split these UI modules (at most {MAX_LINES - 1} lines): {long}"
