"""Issue 34: language servers' diagnostics after edits (plugins/lsp.py), with the
real python-lsp-server (pylsp, the test extra) on a real project folder: this project's
own ``pyproject.toml`` and one of its modules, copied into the test's folder. The servers
that fail are real processes too: a missing command, one that exits at once, one that
never answers."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import tui_agent
from tui_agent import create_session
from tui_agent.core.util.paths import user_config_dir
from tui_agent.lsp import servers_of
from tui_agent.testing import Call, FakeOpenAI, Reply

REPO = Path(__file__).resolve().parents[2]
MODULE = "src/demo/problems.py"
SOURCE = REPO / "tui_agent/core/lsp/problems.py"
FIX_LINE = '    return ", ".join(parts)'


@pytest.fixture
def real_project(project: Path) -> Path:
    """A Python project as users have them: pyproject.toml and a package under src/."""
    (project / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    module = project / MODULE
    module.parent.mkdir(parents=True)
    module.write_text(SOURCE.read_text())
    (module.parent / "__init__.py").write_text("")
    return project


def configure(text: str) -> None:
    path = user_config_dir() / "config.toml"
    path.write_text(path.read_text() + "\n" + text)


@pytest.fixture
async def sessions() -> AsyncIterator[list[tui_agent.Session]]:
    made: list[tui_agent.Session] = []
    yield made
    for session in made:
        await session.close()


def open_session(project: Path, made: list[tui_agent.Session]) -> tui_agent.Session:
    session = create_session(project)
    made.append(session)
    return session


async def call(session: tui_agent.Session, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return (await session.toolbox.run(name, args)).to_dict()


def line_of(path: Path, text: str) -> int:
    """The 1-based number ``read`` shows for the line holding ``text``."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except OSError:
        return False
    return state not in "ZX"


def pids(session: tui_agent.Session) -> list[int]:
    servers = servers_of(session)
    assert servers is not None
    return [s.process.pid for s in servers.running.values() if s.process is not None]


async def test_an_edit_gets_the_errors_it_introduced_and_a_fix_gets_none(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    session = open_session(real_project, sessions)
    broken = FIX_LINE.replace("parts)", "partz)")
    result = await call(session, "edit", {"path": MODULE, "old": FIX_LINE, "new": broken})
    assert result["ok"] is True and result["replacements"] == 1
    line = line_of(real_project / MODULE, "partz")
    column = broken.index("partz") + 1
    assert result["diagnostics"] == (
        f"1 new error (pylsp):\n{line}:{column} error [pyflakes] undefined name 'partz'"
    )
    assert result["new_problems"] == 1
    fixed = await call(session, "edit", {"path": MODULE, "old": broken, "new": FIX_LINE})
    assert fixed["diagnostics"] == "no new problems" and fixed["new_problems"] == 0
    # write: a new file with an error, then the same file made right
    made = await call(session, "write", {"path": "src/demo/new.py", "content": "print(nam)\n"})
    assert made["created"] is True
    assert made["diagnostics"].endswith("1:7 error [pyflakes] undefined name 'nam'")
    again = await call(session, "write", {"path": "src/demo/new.py", "content": "print(1)\n"})
    assert again["diagnostics"] == "no new problems"
    # edits (several changes in one call, all or none)
    edits = [{"old": FIX_LINE, "new": broken}, {"old": "def plural(", "new": "def plural_("}]
    many = await call(session, "edit", {"path": MODULE, "edits": edits})
    uses = (real_project / MODULE).read_text().count("plural(")  # summary calls it
    assert many["edits"] == 2 and many["new_problems"] == 1 + uses
    assert many["diagnostics"].startswith(f"{1 + uses} new errors (pylsp):\n")
    assert many["diagnostics"].count("undefined name 'plural'") == uses
    # a file no server serves: the result is as it always was
    text = await call(session, "write", {"path": "notes.txt", "content": "hello\n"})
    assert "diagnostics" not in text and "new_problems" not in text


async def test_a_problem_that_was_there_before_is_not_new(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    module = real_project / MODULE
    module.write_text(module.read_text() + "\n\ndef legacy():\n    return undefined_before\n")
    session = open_session(real_project, sessions)
    edit = {
        "path": MODULE,
        "old": "from typing import Any\n",
        "new": "from typing import Any\n\nLIMIT = 3\n",
    }
    result = await call(session, "edit", edit)  # two lines added above the old error
    assert result["diagnostics"] == "no new problems" and result["new_problems"] == 0
    # its own line edited, the same problem: still not new
    edit = {"path": MODULE, "old": "return undefined_before", "new": "return (undefined_before)"}
    result = await call(session, "edit", edit)
    assert result["diagnostics"] == "no new problems"
    # the diagnostics tool shows it, where it is now
    listed = await call(session, "diagnostics", {"path": MODULE})
    line = line_of(module, "undefined_before")
    assert listed["diagnostics"] == (
        f"1 error (pylsp):\n{line}:13 error [pyflakes] undefined name 'undefined_before'"
    )
    every = await call(session, "diagnostics", {})
    assert every["diagnostics"].startswith(f"{module}: 1 error\n{line}:13 error")
    missing = await call(session, "diagnostics", {"path": "nothing.py"})
    assert missing["error"] == "file not found: nothing.py"


async def test_warnings_when_asked_for(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    configure("[diagnostics]\nwarnings = true\nmax = 1\n")
    session = open_session(real_project, sessions)
    new = "import os\nimport sys\nfrom collections import Counter\n"
    result = await call(
        session, "edit", {"path": MODULE, "old": "from collections import Counter\n", "new": new}
    )
    assert result["new_problems"] == 2
    assert result["diagnostics"].startswith("2 new warnings (pylsp):\n")
    assert "'os' imported but unused" in result["diagnostics"]
    assert result["diagnostics"].endswith("… and 1 more")


FAILING = {
    "missing": (["no-such-language-server"], "command not found: no-such-language-server"),
    "exits": (
        [
            sys.executable,
            "-c",
            "import sys; print('cannot start: no workspace', file=sys.stderr); sys.exit(3)",
        ],
        "exited at once (code 3): cannot start: no workspace",
    ),
    "hangs": (
        [sys.executable, "-c", "import time; time.sleep(120)"],
        "did not answer initialize within 1 s",
    ),
}


@pytest.mark.parametrize("kind", FAILING)
async def test_a_server_that_cannot_serve_never_fails_the_edit(
    kind: str, real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    command, why = FAILING[kind]
    configure(
        "[diagnostics]\nstartup_timeout = 1\n"
        f'[lsp.broken]\ncommand = {json.dumps(command)}\nextensions = [".py"]\n'
    )
    session = open_session(real_project, sessions)
    broken = FIX_LINE.replace("parts)", "partz)")
    result = await call(session, "edit", {"path": MODULE, "old": FIX_LINE, "new": broken})
    assert result["ok"] is True and "partz" in (real_project / MODULE).read_text()
    assert result["diagnostics"].startswith(f"unavailable: broken {why}")
    assert "new_problems" not in result
    # said once: the next edit's result is the plain one
    again = await call(session, "edit", {"path": MODULE, "old": broken, "new": FIX_LINE})
    assert again["ok"] is True and "diagnostics" not in again
    left = pids(session)
    assert all(not alive(pid) for pid in left)  # the hanging one was killed
    await session.commands.run("lsp")
    table_text = session.output.history[-1].text
    assert "| broken |" in table_text and "| failed |" in table_text


async def test_a_server_that_dies_later_is_said_once(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    session = open_session(real_project, sessions)
    first = await call(
        session,
        "edit",
        {"path": MODULE, "old": "LIMIT", "new": "LIMIT"}
        | {"old": "def plural(", "new": "def plural("},
    )
    assert first["diagnostics"] == "no new problems"
    [pid] = pids(session)
    os.kill(pid, 9)
    for _ in range(100):
        if not alive(pid):
            break
        await asyncio.sleep(0.02)
    result = await call(
        session, "edit", {"path": MODULE, "old": "def plural(", "new": "def plural_("}
    )
    assert result["ok"] is True
    assert result["diagnostics"].startswith("unavailable: pylsp exited (code -9)")
    await session.commands.run("lsp", "restart")
    back = await call(
        session, "edit", {"path": MODULE, "old": "def plural_(", "new": "def plural("}
    )
    assert back["diagnostics"] == "no new problems"


async def test_reload_and_close_stop_the_servers(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    session = open_session(real_project, sessions)
    edit = {"path": MODULE, "old": "def plural(", "new": "def plural("}
    assert (await call(session, "edit", edit))["diagnostics"] == "no new problems"
    [first] = pids(session)
    assert alive(first)
    await session.commands.run("lsp")
    listed = session.output.history[-1].text
    assert f"| pylsp | {real_project} | running | 1 file open |" in listed
    await session.reload()
    assert not alive(first)
    assert (await call(session, "edit", edit))["diagnostics"] == "no new problems"
    [second] = pids(session)
    assert second != first and alive(second)
    await session.close()
    sessions.remove(session)
    assert not alive(second)


async def test_a_turn_gives_the_model_the_new_error(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    broken = FIX_LINE.replace("parts)", "partz)")
    replies = [
        Reply(calls=[Call("edit", {"path": MODULE, "old": FIX_LINE, "new": broken})]),
        Reply("fixed later"),
    ]
    async with FakeOpenAI(replies) as server:
        session = create_session(real_project, base_url=server.base_url, model="m")
        sessions.append(session)
        assert await session.turn("break it") == "fixed later"
    [tool] = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    result = json.loads(tool["content"])
    assert "undefined name 'partz'" in result["diagnostics"] and result["new_problems"] == 1


async def test_servers_get_the_users_environment_without_its_secrets(
    real_project: Path,
    sessions: list[tui_agent.Session],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEMO_API_KEY", "sk-demo-123456789")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_demo")
    monkeypatch.setenv("KEEP_ME", "yes")
    seen = tmp_path / "env.json"
    script = f"import json, os, sys; open({str(seen)!r}, 'w').write(json.dumps(dict(os.environ)))"
    command = json.dumps([sys.executable, "-c", script + "; sys.exit(1)"])
    configure(f'[lsp.env]\ncommand = {command}\nextensions = [".py"]\n')
    session = open_session(real_project, sessions)
    result = await call(
        session, "edit", {"path": MODULE, "old": "def plural(", "new": "def plural("}
    )
    assert result["diagnostics"].startswith("unavailable: env exited at once (code 1)")
    env = json.loads(seen.read_text())
    assert env["KEEP_ME"] == "yes" and env["HOME"] == os.environ["HOME"]
    assert "DEMO_API_KEY" not in env and "GITHUB_TOKEN" not in env
    assert os.environ["DEMO_API_KEY"]  # still ours


def test_built_in_servers_that_would_run_project_code_are_told_not_to() -> None:
    from tui_agent.lsp import BUILTINS

    specs = {spec.name: spec for spec in BUILTINS}
    rust = specs["rust-analyzer"].initialization_options
    assert rust["cargo"]["buildScripts"]["enable"] is False
    assert rust["procMacro"]["enable"] is False and rust["checkOnSave"] is False
    assert dict(specs["gopls"].env) == {"GOTOOLCHAIN": "local"}


SILENT = """\
from pygls.lsp.server import LanguageServer

LanguageServer("silent", "1").start_io()  # answers initialize; never publishes diagnostics
"""


async def test_a_server_that_sends_no_diagnostics_leaves_the_edit_correct(
    real_project: Path, sessions: list[tui_agent.Session], tmp_path: Path
) -> None:
    script = tmp_path / "silent.py"
    script.write_text(SILENT)
    command = json.dumps([sys.executable, str(script)])
    configure(
        f'[diagnostics]\nwait = 0.3\n[lsp.silent]\ncommand = {command}\nextensions = [".py"]\n'
    )
    session = open_session(real_project, sessions)
    broken = FIX_LINE.replace("parts)", "partz)")
    result = await call(session, "edit", {"path": MODULE, "old": FIX_LINE, "new": broken})
    assert result["ok"] is True and "partz" in (real_project / MODULE).read_text()
    assert result["diagnostics"] == "unavailable: silent sent no diagnostics within 0.3 s"
    assert "new_problems" not in result
    [pid] = pids(session)
    await session.close()
    sessions.remove(session)
    assert not alive(pid)


async def test_one_server_per_root_and_no_more_than_the_limit(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    sub = real_project / "tools" / "helper"
    (sub / "pyproject.toml").parent.mkdir(parents=True)
    (sub / "pyproject.toml").write_text('[project]\nname = "helper"\nversion = "0"\n')
    (sub / "run.py").write_text("print('helper')\n")
    session = open_session(real_project, sessions)
    servers = servers_of(session)
    assert servers is not None
    servers.limit = 1
    edit = {"path": MODULE, "old": "def plural(", "new": "def plural("}
    assert (await call(session, "edit", edit))["diagnostics"] == "no new problems"
    other = {"path": "tools/helper/run.py", "old": "'helper'", "new": "helper"}
    result = await call(session, "edit", other)
    assert result["ok"] is True
    assert result["diagnostics"].startswith("unavailable: pylsp 1 language servers run already")
    servers.limit = 2
    await session.commands.run("lsp", "restart")
    assert (await call(session, "edit", edit))["diagnostics"] == "no new problems"
    back = {"path": "tools/helper/run.py", "old": "print(helper)", "new": "print(helper_)"}
    result = await call(session, "edit", back)
    assert "undefined name 'helper_'" in result["diagnostics"]
    assert "undefined name 'helper'\n" not in result["diagnostics"] + "\n"  # there before
    roots = sorted(str(root) for _, root in servers.running)
    assert roots == [str(real_project), str(sub)]


async def test_off_and_a_mistake_in_the_tables(
    real_project: Path, sessions: list[tui_agent.Session]
) -> None:
    configure('[diagnostics]\non = false\n[lsp.mine]\ncommand = ["x"]\nextensions = ["py"]\n')
    session = open_session(real_project, sessions)
    said = "\n".join(note.text for note in session.output.history)
    assert (
        'config: lsp.mine.extensions must be a list of suffixes with the dot, e.g. [".py"]' in said
    )
    result = await call(session, "edit", {"path": MODULE, "old": FIX_LINE, "new": FIX_LINE + " "})
    assert result["ok"] is True and "diagnostics" not in result
    assert pids(session) == []  # no server started
    listed = await call(session, "diagnostics", {"path": MODULE})
    assert listed["diagnostics"] == "no language server serves problems.py (see /lsp)"
    await session.commands.run("lsp")
    assert "Diagnostics after edits are off" in session.output.history[-1].text
