"""Issue 28: the core's layout holds. ``lint-imports`` checks the contracts in
pyproject.toml (no UI or Textual in the core, protocol and engines need nothing above
util, the layers); the import graph of the core has no cycle (``KNOWN_CYCLES`` is empty);
no core module is longer than ``MAX_CORE_LINES``.

Both count every import a module makes: at its top, inside functions and under
``if TYPE_CHECKING:`` (grimp, which import-linter is built on, reads them all).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest

import tui_agent

REPO = Path(tui_agent.__file__).resolve().parents[1]
CORE = "tui_agent.core"

# The import circles the core still has, each a set of modules that reach each other.
# Phase B of issue 28 broke the last one (config -> plugins -> command_hooks -> config, and
# every loader typed against the whole Session): the core has none. A circle that comes
# back fails test_no_import_cycle_in_the_core_beyond_the_known_ones; the machinery stays.
KNOWN_CYCLES: list[frozenset[str]] = []

# No module of the core grows past this many lines: split it by concern first.
MAX_CORE_LINES = 700


def lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    """The venv's ``lint-imports`` on the tui_agent these tests run (not an installed one)."""
    script = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    return subprocess.run(
        [str(script), "--no-cache", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_import_contracts_are_kept() -> None:
    done = lint_imports()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def cycles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def core_graph() -> dict[str, set[str]]:
    """Each core module -> the core modules it imports (TYPE_CHECKING imports included).
    grimp reads the tui_agent already imported, the one these tests run."""
    graph = grimp.build_graph("tui_agent", cache_dir=None)
    modules = {m for m in graph.modules if m == CORE or m.startswith(CORE + ".")}
    return {m: graph.find_modules_directly_imported_by(m) & modules for m in modules}


def unknown_cycles(found: list[frozenset[str]]) -> list[list[str]]:
    return [sorted(c) for c in found if not any(c <= known for known in KNOWN_CYCLES)]


def test_no_import_cycle_in_the_core_beyond_the_known_ones() -> None:
    assert tui_agent.__file__.startswith(str(REPO))
    wrong = unknown_cycles(cycles(core_graph()))
    assert not wrong, f"new or grown import cycles in the core: {wrong}"


def test_known_cycles_are_current() -> None:
    """A module that left its circle leaves the list, so the list only shrinks."""
    in_cycles = set().union(*cycles(core_graph()))
    stale = sorted(set().union(*KNOWN_CYCLES) - in_cycles)
    assert not stale, f"no longer in a cycle, remove them from KNOWN_CYCLES: {stale}"


def test_no_core_module_is_too_long() -> None:
    core = REPO / "tui_agent" / "core"
    long = {
        str(path.relative_to(REPO)): lines
        for path in sorted(core.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_CORE_LINES
    }
    assert not long, f"core modules over {MAX_CORE_LINES} lines, split them: {long}"


def test_no_import_cycle_anywhere_in_the_package() -> None:
    """The UI, the CLI, headless, MCP, the testing kit and the facades too, not only the
    core (TYPE_CHECKING imports and imports inside functions count)."""
    graph = grimp.build_graph("tui_agent", cache_dir=None)
    found = cycles({m: graph.find_modules_directly_imported_by(m) for m in graph.modules})
    assert not found, f"import cycles: {[sorted(c) for c in found]}"


def test_no_module_is_too_long() -> None:
    """Source modules (the package and the bundled plugins) stay under 700 lines, test
    modules under 1,500 (issue 28)."""
    limits = {"tui_agent": MAX_CORE_LINES, "plugins": MAX_CORE_LINES, "tests": 1500}
    long = {
        str(path.relative_to(REPO)): lines
        for folder, limit in limits.items()
        for path in sorted((REPO / folder).rglob("*.py"))
        if "fixtures" not in path.parts
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > limit
    }
    assert not long, f"modules over the limit, split them: {long}"


def test_the_parts_register_their_checks_and_project_code() -> None:
    """config and workspace import nothing above them: the sandbox and the command hooks
    register their tables' checks, and the loaders their project files, when the session's
    extensions import them; a table nobody registered is not checked."""
    from tui_agent.core import agents  # noqa: F401  (its files are project code too)
    from tui_agent.core.extensions import extensions  # noqa: F401  (imports the parts)
    from tui_agent.core.project import config, workspace

    assert {"sandbox", "hooks"} <= set(config.VALIDATORS)
    kept, problems = config.check_settings({"hooks": 3, "model": "m", "unchecked": object})
    assert list(kept) == ["model", "unchecked"]
    assert len(problems) == 1
    assert problems[0].startswith("hooks must be a table of hook events, each an array")
    orders = sorted(workspace._CODE_FINDERS.values())
    # plugins and tool files, Agent Plugins, commands, agents, skills, hooks
    assert orders == [10, 12, 20, 25, 27, 30]


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [{"a", "b"}]),
        (
            {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d", "e"}, "e": {"d"}},
            [{"a", "b", "c"}, {"d", "e"}],
        ),
    ],
)
def test_the_cycle_finder(graph: dict[str, set[str]], expected: list[set[str]]) -> None:
    assert sorted(map(sorted, cycles(graph))) == sorted(map(sorted, expected))
