"""Every test runs with HOME and the XDG folders inside its own tmp_path, and no API keys."""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_agent.core.project import config as config_module
from tui_agent.core.sandbox.sandbox import availability

FIXTURES = Path(__file__).parent / "fixtures"

# every folder of tests on sys.path (issue 28): test modules are imported by their basename
# (pytest's default "prepend" import mode, no __init__.py under tests/), so basenames are
# unique across the folders, and a module imports another's helpers by that name
# (``from test_app import preview_text``) whichever was collected first or runs alone.
sys.path.extend(
    sorted(
        str(folder)
        for folder in {p.parent for p in Path(__file__).parent.rglob("*.py")}
        if "fixtures" not in folder.relative_to(Path(__file__).parent).parts
        and str(folder) not in sys.path
    )
)

pytest_plugins = ["tui_agent.testing"]


ALLOW_ALL = '[permission]\n"*" = "allow"\n'
SANDBOX_OFF = "\n[sandbox]\nenabled = false\n"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_permissions: run without the allow-all user config the other tests get"
    )


@pytest.fixture(autouse=True)
def old_session_names_fail() -> None:
    """Each test sees the Session's old names warn again (they warn once per process), and
    pyproject's filterwarnings makes that warning an error: no test uses an old name."""
    from tui_agent.core.session import legacy

    legacy._warned.clear()


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Path]:
    """HOME and XDG folders inside tmp_path. Unless marked ``real_permissions``, the user
    config allows every tool, so tests about other things are not stopped by the
    permission plugin (headless policy: deny what asks)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ]:
        monkeypatch.setenv(var, str(home / sub))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TUI_AGENT_MODEL"):
        monkeypatch.delenv(var, raising=False)
    config_module.reset_default_config()
    if request.node.get_closest_marker("real_permissions") is None:
        from tui_agent.core.util.paths import user_config_dir

        folder = user_config_dir()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(ALLOW_ALL)
    yield home
    config_module.reset_default_config()


@pytest.fixture
def box(project: Path, tmp_path: Path) -> Iterator[Any]:
    """The shell sandbox of a session on ``project`` with default settings, its private
    /tmp held between commands (as a session's); released after the test."""
    from tui_agent.core.sandbox.private_tmp import release_tmp
    from tui_agent.sandbox import Sandbox

    made = Sandbox.of({}, project, tmp_path / "session-tmp")
    assert made.active, made.reason
    yield made
    release_tmp(tmp_path / "session-tmp")


@pytest.fixture
def sandbox_off(isolated_home: Path) -> None:
    """The sandbox off in the user config (appended to what is there), for tests of the
    shell as it runs without bubblewrap (macOS, or bwrap missing) and of the approval
    flow with ``execute`` as the tool that asks: with the sandbox on, a sandboxed
    ``execute`` is not asked about (tests/core/sandbox/test_sandbox.py covers that)."""
    from tui_agent.core.util.paths import user_config_dir

    path = user_config_dir() / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text() if path.exists() else ""
    path.write_text(old + SANDBOX_OFF)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder (a git worktree) outside HOME."""
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    return root


@pytest.fixture
def user_config_dir(isolated_home: Path) -> Path:
    from tui_agent.core.util.paths import user_config_dir

    folder = user_config_dir()
    assert str(folder).startswith(str(isolated_home))
    return folder


WHY_NOT = availability()  # the shell sandbox (bubblewrap) here, or why not


def needs_bwrap(test: Any) -> Any:
    """These tests run the real bubblewrap: without it they fail, saying how to get it
    (.ci/run installs it), never skip."""

    def check() -> None:
        if WHY_NOT is not None:
            pytest.fail(f"no sandbox here: {WHY_NOT} (apt-get install bubblewrap)")

    if inspect.iscoroutinefunction(test):

        @functools.wraps(test)
        async def checked(*args: Any, **kwargs: Any) -> Any:
            check()
            return await test(*args, **kwargs)

        return checked

    @functools.wraps(test)
    def checked_sync(*args: Any, **kwargs: Any) -> Any:
        check()
        return test(*args, **kwargs)

    return checked_sync


def running(marker: str, *, first: bool = False) -> list[int]:
    """Host PIDs of the live processes whose command line holds ``marker`` (``first``:
    starts with it, so not bwrap's or bash's, which hold it too): found from outside the
    sandbox's PID namespace, where ``$$`` or ``$!`` would name other PIDs."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if (cmdline.startswith(marker) if first else marker in cmdline) and state not in "ZX":
            found.append(int(entry.name))
    return found


_SLEEPERS = itertools.count()


def sleeper(seconds: int = 30) -> str:
    """A ``sleep`` command line no other process has, for ``running`` to find."""
    return f"sleep {seconds}.{os.getpid()}{next(_SLEEPERS):04d}"


def nobody_asked(tool: str) -> str:
    """How a headless run (no --yes) refuses a call that would need asking: it says nobody
    was asked (what follows names the rule)."""
    return f"Permission denied: {tool} needs approval and nobody was asked (a headless run)"


def same_error(got: object, want: str | None) -> bool:
    """``got`` is the error ``want``; a ``nobody_asked`` one is the start of it."""
    if want is not None and want.startswith("Permission denied:") and "nobody was asked" in want:
        return isinstance(got, str) and got.startswith(want)
    return got == want


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
