"""Fixtures for the ACP tests; the helpers are in acp_harness.py (see its docstring)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from acp_harness import RawAgent, acp_argv

from tui_agent.testing import FakeOpenAI

_ROOT_CONFTEST = str(Path(__file__).parents[1] / "conftest.py")


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    """Keep ``from conftest import write`` in the other folders' tests meaning
    tests/conftest.py: pytest imports this file as ``conftest`` too (no __init__.py under
    tests/), replacing the root one in sys.modules; registering this plugin replays the
    hook for the plugins already registered, the root conftest among them."""
    if getattr(plugin, "__file__", None) == _ROOT_CONFTEST:
        sys.modules["conftest"] = plugin  # type: ignore[assignment]


@pytest.fixture(scope="module")
def _module_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:  # one per module: stopping one takes ~0.5 s
        yield fake


@pytest.fixture
def model(_module_model: FakeOpenAI) -> FakeOpenAI:
    """The module's FakeOpenAI, with an empty script and nothing recorded."""
    fake = _module_model
    fake.script.clear()
    fake.requests.clear()
    fake.headers.clear()
    fake.routes.clear()
    fake.rejected.clear()
    fake.responder = None
    return fake


@pytest.fixture
def agent_stderr(tmp_path: Path) -> Path:
    """Where the spawned agent's stderr goes (read it in assertions' messages)."""
    return tmp_path / "agent-stderr.log"


@pytest.fixture
def raw_agent(
    project: Path, model: FakeOpenAI, agent_stderr: Path
) -> Iterator[Callable[..., RawAgent]]:
    """``raw_agent(*extra_flags)`` spawns `tui-agent acp` in ``project``; all are closed
    (then killed if still there) at the end."""
    started: list[RawAgent] = []

    def start(*extra: str) -> RawAgent:
        agent = RawAgent(acp_argv(model, *extra), project, agent_stderr)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        if agent.process.poll() is None:
            agent.close(timeout=5)
