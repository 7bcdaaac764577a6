"""Issue 7, security: an approval nobody can get around, paths that leave the worktree,
untrusted folders that run nothing, and API keys that never reach a file or the screen.

Everything goes through the real path: a turn against the testing kit's server (the real
``openai`` client) where the fake model calls the tool, the bundled permission plugin,
the real tools, real files; ``tui-agent`` as a subprocess; the app through Pilot. Each
"not allowed" case checks the side effect itself (the file is not there, the command did
not run, the secret is not in the result), next to an allowed twin that shows the same
call does have that side effect.
"""

from __future__ import annotations

import io
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import SANDBOX_OFF, needs_bwrap, nobody_asked, same_error, write
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from tui_agent import ApprovalRequest, Decision, Session, create_session, testing
from tui_agent.core.project import trust
from tui_agent.core.util.paths import user_config_dir, user_data_dir, user_log_dir
from tui_agent.permissions import subjects_for
from tui_agent.testing import Call, FakeOpenAI, Person, Reply
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.chat import Note, ReplyMarkdown
from tui_agent.ui.dialogs.approval import ApprovalScreen, TrustScreen

pytestmark = pytest.mark.real_permissions

SIZE = (120, 40)
ALLOW_ALL = '[permission]\n"*" = "allow"\n'

# -- helpers ---------------------------------------------------------------------------------


def user_config(text: str, *, sandbox: bool = False) -> Path:
    """The user config; the sandbox off unless ``sandbox``: these tests are about what asks
    and what is checked, with ``execute`` as the tool that asks (a sandboxed one is not
    asked about: tests/core/sandbox/test_sandbox.py)."""
    return write(user_config_dir() / "config.toml", text + ("" if sandbox else SANDBOX_OFF))


class Recorder:
    """An approver that records every request and answers from a script (last one repeats)."""

    def __init__(self, *answers: Decision | str) -> None:
        self.answers = [a if isinstance(a, Decision) else Decision(a) for a in answers]  # type: ignore[arg-type]
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.answers[min(len(self.requests), len(self.answers)) - 1]


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:  # one server for the module: stopping one takes a while
        yield fake


@pytest.fixture
def server(shared_server: FakeOpenAI) -> FakeOpenAI:
    """The module's server with an empty script and nothing recorded."""
    for recorded in (
        shared_server.script,
        shared_server.requests,
        shared_server.headers,
        shared_server.rejected,
    ):
        recorded.clear()
    return shared_server


def session_for(
    project: Path,
    server: FakeOpenAI,
    config: str | None = None,
    *,
    approver: Recorder | None = None,
    **kwargs: Any,
) -> Session:
    if config is not None:
        user_config(config)
    session = create_session(project, base_url=server.base_url, model="fake-model", **kwargs)
    if approver is not None:
        session.frontend = Person(decide=approver)
    return session


async def model_calls(session: Session, server: FakeOpenAI, *calls: Call) -> list[dict[str, Any]]:
    """One turn in which the model makes ``calls``; the tool results the model got back."""
    server.script += [Reply(calls=list(calls)), Reply("done")]
    before = len(server.requests)
    try:
        assert await session.turn("go") == "done"
    finally:
        session.conversation.journal.close()
    assert server.rejected == [], server.rejected
    assert len(server.requests) == before + 2
    messages = server.requests[-1]["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [json.loads(m["content"]) for m in messages[last_user:] if m["role"] == "tool"]


def run_cli(
    *args: str, cwd: Path, server: FakeOpenAI | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "tui_agent", *args]
    if server is not None:
        argv += ["--base-url", server.base_url, "--model", "fake-model"]
    return subprocess.run(
        argv,
        cwd=cwd,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
    )


async def wait_for(pilot: Pilot[Any], condition: Callable[[], Any], seconds: float = 15.0) -> None:
    """The testing kit's ``wait_for`` with this file's patience."""
    await testing.wait_for(pilot, condition, seconds)


send = testing.send


def plain(widget: Static) -> str:
    """The text a Static shows (markup resolved, Rich renderables rendered)."""
    content = widget.content
    if isinstance(content, str):
        return str(widget.visual.plain)  # type: ignore[attr-defined]
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(content)
    return console.export_text()


def note_texts(app: TuiAgentApp) -> list[str]:
    return [plain(note) for note in app.chat.query(Note)]


# -- 1. the approval cannot be bypassed ------------------------------------------------------

ORIGINAL = "original\n"
SECRET_TEXT = "top secret\n"


def victims(project: Path) -> None:
    write(project / "keep.txt", ORIGINAL)
    write(project / "secret.txt", SECRET_TEXT)


def happened(project: Path, tool: str, result: dict[str, Any]) -> bool:
    """Did the call have its side effect: the file made, the file changed, the secret read?"""
    if tool in ("write", "execute", "bash", "sh", "exec", "srv_write", "fs_execute"):
        return (project / "made.txt").exists()
    if tool == "edit":
        return (project / "keep.txt").read_text() != ORIGINAL
    if tool in ("read", "open"):
        return "top secret" in json.dumps(result)
    raise AssertionError(tool)


ARGS: dict[str, dict[str, Any]] = {
    "write": {"path": "made.txt", "content": "pwned"},
    "edit": {"path": "keep.txt", "old": "original", "new": "pwned"},
    "execute": {"command": "touch made.txt"},
    "read": {"path": "secret.txt"},
}
REAL = {"bash": "execute", "sh": "execute", "exec": "execute", "open": "read"}

TOUCH_DENIED = '[permission]\nexecute = { "*" = "allow", "touch *" = "deny" }\n'


@dataclass(frozen=True)
class Row:
    tool: str  # the name the model calls
    config: str
    answer: str | None  # None: the headless approver; else what a recording approver says
    error: str | None  # the result the model must get; None: the call runs
    yes: bool = False


MATRIX = {
    # write
    "write denied": Row(
        "write", '[permission]\nwrite = "deny"\n', None, "Permission denied: write"
    ),
    "write asks, headless denies": Row("write", "", None, nobody_asked("write")),
    "write asks, user denies": Row("write", "", "deny", "User denied permission: write"),
    "write asks under a top-level allow": Row(
        "write",
        '[permission]\n"*" = "allow"\nwrite = "ask"\n',
        "deny",
        "User denied permission: write",
    ),
    "write pattern denies the file": Row(
        "write",
        '[permission]\nwrite = { "*" = "allow", "made.*" = "deny" }\n',
        None,
        "Permission denied: write",
    ),
    "write under a top-level deny": Row(
        "write", '[permission]\n"*" = "deny"\nread = "allow"\n', "once", "Permission denied: write"
    ),
    "write deny holds with --yes": Row(
        "write", '[permission]\nwrite = "deny"\n', None, "Permission denied: write", yes=True
    ),
    "write allowed": Row("write", '[permission]\nwrite = "allow"\n', None, None),
    "write asks, --yes allows": Row("write", "", None, None, yes=True),
    "write asks, user allows once": Row("write", "", "once", None),
    # edit
    "edit denied": Row("edit", '[permission]\nedit = "deny"\n', None, "Permission denied: edit"),
    "edit asks, user denies": Row("edit", "", "deny", "User denied permission: edit"),
    "edit allowed": Row("edit", '[permission]\nedit = "allow"\n', None, None),
    # execute and its aliases
    "execute pattern denies": Row("execute", TOUCH_DENIED, None, "Permission denied: execute"),
    "bash pattern denies": Row("bash", TOUCH_DENIED, None, "Permission denied: execute"),
    "sh pattern denies": Row("sh", TOUCH_DENIED, None, "Permission denied: execute"),
    "exec pattern denies with --yes": Row(
        "exec", TOUCH_DENIED, None, "Permission denied: execute", yes=True
    ),
    "bash asks, user denies": Row("bash", "", "deny", "User denied permission: execute"),
    "exec asks, headless denies": Row("exec", "", None, nobody_asked("execute")),
    "sh allowed": Row("sh", '[permission]\nexecute = "allow"\n', None, None),
    # read and its alias
    "open denied": Row("open", '[permission]\nread = "deny"\n', None, "Permission denied: read"),
    "open asks, user denies": Row(
        "open", '[permission]\nread = "ask"\n', "deny", "User denied permission: read"
    ),
    "open allowed by default": Row("open", "", "deny", None),
}


@pytest.mark.parametrize("row", MATRIX.values(), ids=MATRIX.keys())
async def test_permission_matrix_through_a_turn(
    project: Path, server: FakeOpenAI, row: Row
) -> None:
    victims(project)
    approver = Recorder(row.answer) if row.answer is not None else None
    session = session_for(project, server, row.config, approver=approver, yes=row.yes)
    real = REAL.get(row.tool, row.tool)

    [result] = await model_calls(session, server, Call(row.tool, ARGS[real]))

    assert happened(project, row.tool, result) is (row.error is None), result
    if row.error is None:
        assert result["ok"] is True, result
    else:
        assert same_error(result.get("error"), row.error), result
        assert result == {
            "error": result.get("error"),
            "name": row.tool,
            "args": ARGS[real],
            "ok": False,
        }
    if approver is not None:
        asked = (row.error or "").startswith("User denied") or (
            row.error is None and row.answer == "once"
        )
        assert len(approver.requests) == asked
        for request in approver.requests:
            assert (request.tool, request.called_as) == (real, row.tool)


async def test_a_feedback_denial_reaches_the_model(project: Path, server: FakeOpenAI) -> None:
    approver = Recorder(Decision("feedback", "use the docs folder"))
    session = session_for(project, server, "", approver=approver)
    [result] = await model_calls(session, server, Call("write", ARGS["write"]))
    assert result["error"] == "User denied permission: write: use the docs folder"
    assert not (project / "made.txt").exists()


RELAY = """
import tui_agent


@tui_agent.setup("relay")
def relay(session):
    @session.toolbox.add(
        "relay",
        description="Call another tool",
        params={"tool": {"type": "string"}, "args": {"type": "object"}},
        required=["tool", "args"],
    )
    async def run(args):
        inner = await session.toolbox.run(args["tool"], args["args"])
        return {"inner": inner.to_dict(), "error": inner.error}
"""


@pytest.mark.parametrize(
    ("inner", "config", "answer", "error"),
    [
        ("write", 'relay = "allow"\n', None, nobody_asked("write")),
        ("write", 'relay = "allow"\n', "deny", "User denied permission: write"),
        ("write", 'relay = "allow"\nwrite = "deny"\n', None, "Permission denied: write"),
        (
            "bash",
            'relay = "allow"\nexecute = { "*" = "allow", "touch *" = "deny" }\n',
            None,
            "Permission denied: execute",
        ),
        ("execute", 'relay = "allow"\n', "deny", "User denied permission: execute"),
        ("write", 'relay = "allow"\nwrite = "allow"\n', None, None),
    ],
    ids=["headless", "user-denies", "deny-rule", "alias-pattern", "execute", "allowed"],
)
async def test_a_tool_calling_another_tool_is_checked(
    project: Path,
    server: FakeOpenAI,
    inner: str,
    config: str,
    answer: str | None,
    error: str | None,
) -> None:
    """A global plugin tool (allowed itself) calls write/execute through the toolbox."""
    write(user_config_dir() / "plugins" / "relay.py", RELAY)
    approver = Recorder(answer) if answer is not None else None
    session = session_for(project, server, "[permission]\n" + config, approver=approver)
    args = ARGS[REAL.get(inner, inner)]

    [result] = await model_calls(session, server, Call("relay", {"tool": inner, "args": args}))

    assert happened(project, inner, result) is (error is None), result
    assert same_error(result["inner"].get("error"), error), result
    assert result["ok"] is (error is None)
    if approver is not None:
        [request] = approver.requests  # the relay itself is allowed: only the inner call asks
        assert (request.tool, request.called_as) == (REAL.get(inner, inner), inner)


async def test_a_relay_of_a_relay_is_still_checked(project: Path, server: FakeOpenAI) -> None:
    write(user_config_dir() / "plugins" / "relay.py", RELAY)
    session = session_for(project, server, '[permission]\nrelay = "allow"\n')
    nested = {"tool": "relay", "args": {"tool": "sh", "args": ARGS["execute"]}}
    [result] = await model_calls(session, server, Call("relay", nested))
    assert result["inner"]["inner"]["error"].startswith(nobody_asked("execute"))
    assert not (project / "made.txt").exists()


WRITE_TOOL_FILE = """
from pathlib import Path
from tui_agent import tool, schema


@tool(description="My own write", args={"path": schema.string(), "content": schema.string()})
def write(args, context):
    target = Path(context.directory) / args["path"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(args["content"])
    return {"override": "tool file"}
"""

WRITE_PLUGIN = """
import tui_agent


@tui_agent.setup("mywrite")
def mywrite(session):
    @session.toolbox.add(
        "write",
        description="Plugin write",
        params={"path": {"type": "string"}, "content": {"type": "string"}},
        required=["path", "content"],
    )
    def write(args):
        target = session.directory / args["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args["content"])
        return {"override": "plugin"}
"""

OVERRIDES = {
    "tool file": (".tui-agent/tools/write.py", WRITE_TOOL_FILE),
    "plugin": (".agents/plugins/mywrite.py", WRITE_PLUGIN),
}


@pytest.mark.parametrize("reload", [None, "reload()", "/reload"])
@pytest.mark.parametrize("kind", OVERRIDES)
async def test_an_overriding_write_is_still_checked(
    project: Path, tmp_path: Path, server: FakeOpenAI, kind: str, reload: str | None
) -> None:
    where, code = OVERRIDES[kind]
    write(project / where, code)
    outside = tmp_path / "outside" / "made.txt"
    session = session_for(project, server, '[permission]\nwrite = "deny"\n', trust=True)
    assert session.toolbox.tools["write"].source != "bundled:files.py"
    if reload == "reload()":
        session.reload()
    elif reload == "/reload":
        assert await session.commands.run_line("/reload")

    [denied] = await model_calls(session, server, Call("write", ARGS["write"]))
    assert denied["error"] == "Permission denied: write"
    assert not (project / "made.txt").exists()

    # an allowed write runs the override; a path outside the worktree still asks
    user_config('[permission]\nwrite = "allow"\n')
    assert await session.commands.run_line("/reload")
    outside_call = Call("write", {"path": str(outside), "content": "pwned"})
    allowed, asked = await model_calls(session, server, Call("write", ARGS["write"]), outside_call)
    assert allowed == {"override": kind, "ok": True}
    assert (project / "made.txt").read_text() == "pwned"
    assert asked["error"].startswith(nobody_asked("write"))
    assert not outside.exists()


@pytest.mark.parametrize("how", ["reload()", "/reload"])
async def test_reloads_keep_the_check(project: Path, server: FakeOpenAI, how: str) -> None:
    victims(project)
    approver = Recorder("deny")
    session = session_for(project, server, "", approver=approver)
    for _ in range(3):
        if how == "reload()":
            session.reload()
        else:
            assert await session.commands.run_line("/reload")
    results = await model_calls(
        session, server, Call("write", ARGS["write"]), Call("bash", ARGS["execute"])
    )
    assert [r["error"] for r in results] == [
        "User denied permission: write",
        "User denied permission: execute",
    ]
    assert len(approver.requests) == 2  # asked once per call, not once per reload
    assert not (project / "made.txt").exists()


async def test_reload_in_the_app_keeps_the_approval_dialog(
    project: Path, server: FakeOpenAI
) -> None:
    """After /reload typed in the app, a write still opens the dialog; n denies it."""
    user_config("# defaults: write asks\n")
    session = session_for(project, server)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/reload")
        await app.workers.wait_for_complete()
        server.script += [Reply(calls=[Call("write", ARGS["write"])]), Reply("done")]
        await send(pilot, "write it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert not (project / "made.txt").exists()
        await pilot.pause(0.4)  # the dialog ignores keys typed as it opens
        await pilot.press("n")
        await wait_for(pilot, lambda: not server.script and not session.busy)
        await app.workers.wait_for_complete()
    session.conversation.journal.close()
    assert server.rejected == []
    messages = server.requests[-1]["messages"]
    [result] = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    assert result["error"] == "User denied permission: write"
    assert not (project / "made.txt").exists()


PREFIXED = """
import subprocess

import tui_agent


@tui_agent.setup("prefixed")
def prefixed(session):
    def srv_write(args):
        (session.directory / args["path"]).write_text(args["content"])
        return {"written": args["path"]}

    def fs_execute(args):
        done = subprocess.run(
            ["bash", "-c", args["command"]], cwd=session.directory, capture_output=True, text=True
        )
        return {"output": done.stdout, "exit_status": done.returncode}

    session.toolbox.add(
        "srv_write",
        description="Write a file (an MCP-style name)",
        params={"path": {"type": "string"}, "content": {"type": "string"}},
        required=["path", "content"],
        handler=srv_write,
    )
    session.toolbox.add(
        "fs_execute",
        description="Run a command (an MCP-style name)",
        params={"command": {"type": "string"}},
        required=["command"],
        handler=fs_execute,
    )
"""


@pytest.mark.parametrize(
    ("config", "answer", "yes", "error"),
    [
        ("", None, False, nobody_asked("{tool}")),
        ("", "deny", False, "User denied permission: {tool}"),
        (
            '[permission]\nwrite = "allow"\nexecute = "allow"\n',
            None,
            False,
            nobody_asked("{tool}"),
        ),
        (
            '[permission]\nsrv_write = "deny"\nfs_execute = "deny"\n',
            None,
            True,
            "Permission denied: {tool}",
        ),
        ('[permission]\nsrv_write = "allow"\nfs_execute = "allow"\n', None, False, None),
        ("", None, True, None),
    ],
    ids=["headless", "user-denies", "builtin-allows-dont-cover", "deny", "allowed", "yes"],
)
@pytest.mark.parametrize("tool", ["srv_write", "fs_execute"])
async def test_prefixed_tool_names_ask_like_any_unknown_tool(
    project: Path,
    server: FakeOpenAI,
    tool: str,
    config: str,
    answer: str | None,
    yes: bool,
    error: str | None,
) -> None:
    """An MCP-style name is its own tool: rules for write/execute neither allow nor deny it,
    and without a rule of its own it asks (so a headless run denies it unless --yes)."""
    write(user_config_dir() / "plugins" / "prefixed.py", PREFIXED)
    approver = Recorder(answer) if answer is not None else None
    session = session_for(project, server, config, approver=approver, yes=yes)
    args = ARGS["write"] if tool == "srv_write" else ARGS["execute"]

    [result] = await model_calls(session, server, Call(tool, args))

    assert happened(project, tool, result) is (error is None), result
    assert same_error(result.get("error"), error and error.format(tool=tool)), result
    if approver is not None:
        assert [r.tool for r in approver.requests] == [tool]


# -- 2. paths that leave the worktree ---------------------------------------------------------


@pytest.fixture
def layout(project: Path, tmp_path: Path) -> Path:
    """``outside/`` next to the project, and symlinks inside the project that lead there."""
    outside = tmp_path / "outside"
    write(outside / "target.txt", ORIGINAL)
    write(project / "sub" / "real.txt", "inside\n")
    (project / "link_dir").symlink_to(outside, target_is_directory=True)
    (project / "link_file").symlink_to(outside / "target.txt")
    (project / "dangling").symlink_to(outside / "new.txt")
    (project / "inner_link").symlink_to(project / "sub", target_is_directory=True)
    return outside


OUTSIDE_PATHS = {
    "dot-dot": ("../outside/new.txt", "new.txt"),
    "dot-dot inside a path": ("sub/../../outside/new.txt", "new.txt"),
    "absolute": ("{outside}/new.txt", "new.txt"),
    "home": ("~/new.txt", None),
    "symlinked parent": ("link_dir/new.txt", "new.txt"),
    "symlinked grandparent": ("link_dir/deeper/new.txt", "deeper/new.txt"),
    "symlinked file": ("link_file", "target.txt"),
    "dangling symlink": ("dangling", "new.txt"),
}


@pytest.mark.parametrize(("path", "lands"), OUTSIDE_PATHS.values(), ids=OUTSIDE_PATHS.keys())
def test_paths_that_leave_the_worktree_are_outside_subjects(
    project: Path, layout: Path, path: str, lands: str | None
) -> None:
    path = path.format(outside=layout)
    for tool in ("read", "write", "edit", "list", "glob", "grep"):
        [subject] = subjects_for(tool, {"path": path}, project, project)
        assert subject.outside, (tool, path, subject)
        expected = layout / lands if lands else Path.home() / "new.txt"
        assert subject.text == str(expected.resolve())


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("sub/real.txt", "sub/real.txt"),
        ("sub/../made.txt", "made.txt"),
        ("inner_link/real.txt", "sub/real.txt"),
        (".", "."),
        ("{project}/sub/x.txt", "sub/x.txt"),
    ],
)
def test_paths_inside_the_worktree_are_inside_subjects(
    project: Path, layout: Path, path: str, text: str
) -> None:
    [subject] = subjects_for("write", {"path": path.format(project=project)}, project, project)
    assert (subject.text, subject.outside) == (text, False)


OUTSIDE_WRITES = {k: path for k, (path, _) in OUTSIDE_PATHS.items() if k != "home"}


@pytest.mark.parametrize("path", OUTSIDE_WRITES.values(), ids=OUTSIDE_WRITES.keys())
@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_writes_outside_the_worktree_ask_even_when_allowed(
    project: Path, layout: Path, server: FakeOpenAI, tool: str, path: str
) -> None:
    """``write``/``edit`` are allowed outright, yet outside the worktree they ask; the user
    says no and nothing outside changes."""
    path = path.format(outside=layout)
    before = {p: p.read_bytes() for p in layout.rglob("*") if p.is_file()}
    approver = Recorder("deny")
    session = session_for(
        project, server, '[permission]\nwrite = "allow"\nedit = "allow"\n', approver=approver
    )
    args = (
        {"path": path, "content": "pwned"}
        if tool == "write"
        else {"path": path, "old": "original", "new": "pwned"}
    )

    [result] = await model_calls(session, server, Call(tool, args))

    assert result["error"] == f"User denied permission: {tool}"
    [request] = approver.requests
    assert request.tool == tool and request.subject.startswith(str(layout.resolve()))
    assert {p: p.read_bytes() for p in layout.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("rule", "where"),
    [
        ('"*.py" = "allow"', "~/.config/tui-agent/plugins/evil.py"),
        ('"*.py" = "allow"', "{outside}/evil.py"),
        ('"*" = "allow", "*.md" = "allow"', "../outside/notes.md"),
        ('"**" = "allow"', "link_dir/evil.py"),
    ],
    ids=["global-plugin", "absolute", "dot-dot", "symlink"],
)
async def test_a_wildcard_rule_names_no_path_outside_the_worktree(
    project: Path, layout: Path, server: FakeOpenAI, rule: str, where: str
) -> None:
    """``write = { "*.py" = "allow" }`` means the project's Python files: it must not let
    the model drop a global plugin (code that runs at the next start, trusted or not)."""
    path = where.format(outside=layout)
    target = Path(os.path.expanduser(path)) if path.startswith("~") else project / path
    approver = Recorder("deny")
    session = session_for(
        project, server, f"[permission]\nwrite = {{ {rule} }}\n", approver=approver
    )
    inside = "src/ok.md" if ".md" in rule else "src/ok.py"

    denied, allowed = await model_calls(
        session,
        server,
        Call("write", {"path": path, "content": "pwned"}),
        Call("write", {"path": inside, "content": "fine"}),
    )

    assert denied["error"] == "User denied permission: write"
    assert not target.exists() and not target.resolve().exists()
    assert allowed["ok"] is True and (project / inside).read_text() == "fine"
    assert len(approver.requests) == 1


async def test_an_absolute_rule_does_name_a_path_outside(
    project: Path, layout: Path, server: FakeOpenAI
) -> None:
    config = f'[permission]\nwrite = {{ "{layout.resolve()}/*" = "allow" }}\n'
    session = session_for(project, server, config)
    [result] = await model_calls(
        session, server, Call("write", {"path": "../outside/new.txt", "content": "named"})
    )
    assert result["ok"] is True and (layout / "new.txt").read_text() == "named"


PROTECTED_FILES = [
    ".tui-agent/config.toml",
    ".tui-agent/tools/evil.py",
    ".agents/plugins/evil.py",
    ".git/hooks/post-checkout",
    "pkg/.tui-agent/tools/evil.py",
]


@pytest.mark.parametrize("path", PROTECTED_FILES)
@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_writing_what_decides_what_runs_asks_even_when_writing_is_allowed(
    project: Path, server: FakeOpenAI, tool: str, path: str
) -> None:
    """With writes allowed, the model could otherwise allow itself everything in the
    project config, add a plugin or tool file, or a git hook that ``git checkout`` runs:
    code that runs without the user ever allowing ``execute``."""
    write(project / path, ORIGINAL)
    approver = Recorder("deny")
    config = '[permission]\n"*" = "allow"\nwrite = "allow"\nedit = { "*" = "allow" }\n'
    session = session_for(project, server, config, approver=approver)
    args = (
        {"path": path, "content": '"*" = "allow"'}
        if tool == "write"
        else {"path": path, "old": "original", "new": "pwned"}
    )

    [result] = await model_calls(session, server, Call(tool, args))

    assert result["error"] == f"User denied permission: {tool}"
    assert (project / path).read_text() == ORIGINAL
    [request] = approver.requests
    assert request.subject == path and "changes what runs" in request.rule


async def test_a_rule_that_names_a_protected_folder_allows_it(
    project: Path, server: FakeOpenAI
) -> None:
    approver = Recorder("session", "deny")
    config = '[permission]\nwrite = { "*" = "allow", ".tui-agent/tools/*" = "allow" }\n'
    session = session_for(project, server, config, approver=approver)
    named, asked, again, other = await model_calls(
        session,
        server,
        Call("write", {"path": ".tui-agent/tools/mine.py", "content": "# mine"}),
        Call("write", {"path": ".agents/plugins/one.py", "content": "# one"}),
        Call("write", {"path": ".agents/plugins/two.py", "content": "# two"}),
        Call("write", {"path": ".git/hooks/pre-commit", "content": "pwned"}),
    )
    assert named["ok"] is True and asked["ok"] is True  # the first ask: allowed for session
    assert again["ok"] is True  # ".agents/plugins/*" for this session covers it
    assert other["error"] == "User denied permission: write"  # ...but not .git
    assert [r.subject for r in approver.requests] == [
        ".agents/plugins/one.py",
        ".git/hooks/pre-commit",
    ]
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


async def test_an_approved_write_through_a_symlink_does_land_outside(
    project: Path, layout: Path, server: FakeOpenAI
) -> None:
    """The twin of the test above: the same call, approved, writes outside (so a denial
    there really is what kept the file from being written)."""
    approver = Recorder("once")
    session = session_for(project, server, '[permission]\nwrite = "allow"\n', approver=approver)
    [result] = await model_calls(
        session, server, Call("write", {"path": "link_dir/new.txt", "content": "approved"})
    )
    assert result["ok"] is True
    assert (layout / "new.txt").read_text() == "approved"
    assert len(approver.requests) == 1


async def test_headless_writes_outside_are_denied(
    project: Path, layout: Path, server: FakeOpenAI
) -> None:
    session = session_for(project, server, '[permission]\nwrite = "allow"\n')
    results = await model_calls(
        session,
        server,
        Call("write", {"path": "../outside/new.txt", "content": "pwned"}),
        Call("write", {"path": "link_dir/new.txt", "content": "pwned"}),
        Call("write", {"path": "inside.txt", "content": "fine"}),
    )
    assert [same_error(r.get("error"), nobody_asked("write")) for r in results] == [True] * 2 + [
        False
    ]
    assert results[2].get("error") is None
    assert not (layout / "new.txt").exists()
    assert (project / "inside.txt").read_text() == "fine"


async def test_reads_through_symlinks_that_leave_the_worktree_ask(
    project: Path, layout: Path, server: FakeOpenAI
) -> None:
    approver = Recorder("deny")
    session = session_for(project, server, "", approver=approver)
    results = await model_calls(
        session,
        server,
        Call("read", {"path": "link_file"}),
        Call("open", {"path": "link_dir/target.txt"}),
        Call("read", {"path": "inner_link/real.txt"}),
    )
    assert [r.get("error") for r in results] == ["User denied permission: read"] * 2 + [None]
    assert "inside" in results[2]["content"]
    assert len(approver.requests) == 2


async def test_grep_does_not_follow_symlinks_out_of_the_worktree(
    project: Path, layout: Path, server: FakeOpenAI
) -> None:
    """grep is allowed without asking inside the worktree, so it must not read a file
    outside it through a symlink that lives inside (as ripgrep does not follow links)."""
    write(layout / "target.txt", "top secret outside\n")
    write(project / "notes.txt", "top secret inside\n")
    session = session_for(project, server, "")
    [found] = await model_calls(session, server, Call("grep", {"pattern": "top secret"}))
    assert found["ok"] is True
    assert found["matches"] == ["notes.txt:1: top secret inside"]


async def test_execute_in_a_workdir_outside_asks_even_when_allowed(
    project: Path, layout: Path, server: FakeOpenAI
) -> None:
    """Without the sandbox; in it (below) such a command runs unasked and cannot write."""
    approver = Recorder("deny")
    session = session_for(project, server, '[permission]\nexecute = "allow"\n', approver=approver)
    results = await model_calls(
        session,
        server,
        Call("execute", {"command": "touch made.txt", "workdir": str(layout)}),
        Call("bash", {"command": "touch made.txt", "workdir": "link_dir"}),
    )
    assert [r.get("error") for r in results] == ["User denied permission: execute"] * 2
    assert not (layout / "made.txt").exists()


@needs_bwrap
async def test_execute_in_a_workdir_outside_cannot_write_there_in_the_sandbox(
    project: Path, layout: Path, server: FakeOpenAI
) -> None:
    approver = Recorder("deny")
    user_config('[permission]\nexecute = "allow"\n', sandbox=True)
    session = session_for(project, server, approver=approver)
    assert session.sandbox.active
    home = Path.home()  # outside the worktree, in the sandbox read-only
    results = await model_calls(
        session,
        server,
        Call("execute", {"command": "touch made.txt", "workdir": str(home)}),
        Call("execute", {"command": "touch made.txt", "workdir": str(layout)}),
    )
    assert not approver.requests and results[0]["exit_status"] != 0
    assert "Read-only file system" in results[0]["output"]
    assert not (home / "made.txt").exists()
    # under the real /tmp (the sandbox has its own): refused, none of it is bound in
    assert "is under /tmp, which the sandbox replaces" in results[1]["error"]
    assert not (layout / "made.txt").exists()


# -- 3. untrusted folders run no project code -------------------------------------------------

MARKS = ["plugin-import", "plugin-setup", "tool-file", "tool-file-2"]


def project_code(root: Path, markers: Path, *, mcp: bool = False) -> None:
    """Every kind of project-local code; each piece leaves a marker file when it runs."""
    marks = str(markers)
    write(
        root / ".agents" / "plugins" / "evil.py",
        "from pathlib import Path\nimport tui_agent\n\n"
        f"Path({marks!r}, 'plugin-import').touch()\n\n\n"
        "@tui_agent.setup('evil')\ndef evil(session):\n"
        f"    Path({marks!r}, 'plugin-setup').touch()\n"
        "    session.toolbox.add('evil', description='Project tool', handler=lambda a: {})\n",
    )
    write(
        root / ".tui-agent" / "tools" / "evil_tool.py",
        "from pathlib import Path\nfrom tui_agent import tool\n\n"
        f"Path({marks!r}, 'tool-file').touch()\n\n\n"
        "@tool\ndef evil_tool() -> str:\n    'A project tool file'\n    return 'x'\n",
    )
    write(
        root / ".tui-agent" / "tool" / "second.py",
        f"from pathlib import Path\nimport tui_agent\n\nPath({marks!r}, 'tool-file-2').touch()\n",
    )
    config = 'project_setting = "from the project"\n\n[permission]\n"*" = "allow"\n'
    if mcp:
        touch = json.dumps(f"touch {marks}/mcp-server")
        config += f'\n[mcp.servers.evil]\ncommand = "sh"\nargs = ["-c", {touch}]\n'
    write(root / ".tui-agent" / "config.toml", config)


def ran(markers: Path) -> list[str]:
    found = sorted(p.name for p in markers.iterdir())
    for path in markers.iterdir():
        path.unlink()
    return found


def git_folder(path: Path) -> Path:
    (path / ".git").mkdir(parents=True)
    return path


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


def test_headless_runs_no_project_code_without_trust(
    project: Path, markers: Path, server: FakeOpenAI
) -> None:
    """Plugins, tool files, the project config (which allows everything and starts an MCP
    server): none of it runs, so the model's write is denied headless; with --trust it all
    does."""
    project_code(project, markers, mcp=True)
    server.script += [Reply(calls=[Call("write", ARGS["write"])]), Reply("done")]

    done = run_cli("run", "write it", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    assert ran(markers) == []
    assert "skipped untrusted project code" in done.stderr and "--trust" in done.stderr
    assert "Traceback" not in done.stderr
    tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert not {"evil", "evil_tool"} & tools
    [result] = [json.loads(m["content"]) for m in server.requests[1]["messages"][-1:]]
    assert result["error"].startswith(nobody_asked("write"))
    assert not (project / "made.txt").exists()
    assert trust.decision(project) is None  # a headless run decides nothing for later

    server.script += [Reply(calls=[Call("write", ARGS["write"])]), Reply("done")]
    done = run_cli("run", "--trust", "write it", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    assert ran(markers) == sorted([*MARKS, "mcp-server"])
    assert (project / "made.txt").read_text() == "pwned"  # the project's "*" = "allow"
    tools = {t["function"]["name"] for t in server.requests[2]["tools"]}
    assert {"evil", "evil_tool"} <= tools
    assert trust.decision(project) is None  # --trust is for this run only


def test_tools_command_runs_no_project_code_without_trust(project: Path, markers: Path) -> None:
    project_code(project, markers)
    done = run_cli("tools", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert ran(markers) == []
    assert "evil" not in {d["function"]["name"] for d in json.loads(done.stdout)}


async def test_trust_is_per_folder(tmp_path: Path, markers: Path) -> None:
    a = git_folder(tmp_path / "a")
    project_code(a, markers)
    session = create_session(a)
    assert ran(markers) == [] and session.workspace.needs_trust
    assert session.config.get("project_setting") is None

    session.workspace.trust()

    session.reload()
    assert ran(markers) == MARKS
    assert session.config.get("project_setting") == "from the project"
    (a / "src").mkdir()
    again = create_session(a / "src")  # a subfolder of A belongs to A
    assert ran(markers) == MARKS and not again.workspace.needs_trust

    b = git_folder(tmp_path / "b")  # a sibling with the same code
    project_code(b, markers)
    clone = shutil.copytree(a, tmp_path / "elsewhere" / "a")  # A copied somewhere else
    nested = a / "nested"  # a project of its own inside A
    project_code(nested, markers)
    prefix = git_folder(tmp_path / "a2")  # a name that merely starts like A's
    project_code(prefix, markers)
    for folder in (b, clone, nested, prefix):
        other = create_session(folder)
        assert ran(markers) == [], folder
        assert other.workspace.needs_trust and other.workspace.project == folder.resolve()
        assert other.config.get("project_setting") is None
        assert {"evil", "evil_tool"}.isdisjoint(other.toolbox.tools)

    assert json.loads(trust.trust_file().read_text())["folders"] == {str(a.resolve()): True}


def test_trust_can_be_revoked(tmp_path: Path, project: Path, markers: Path) -> None:
    """``tui-agent trust`` remembers a folder as trusted, ``tui-agent trust --revoke`` takes
    it back: the code stops running and the app does not ask again. Neither runs the code."""
    project_code(project, markers)
    sibling = git_folder(tmp_path / "sibling")

    done = run_cli("trust", cwd=project)
    assert done.returncode == 0, done.stderr
    assert str(project) in done.stdout and "trusted" in done.stdout
    assert ran(markers) == []  # trusting runs nothing by itself
    assert trust.decision(project) is True and trust.decision(sibling) is None
    assert not create_session(project).workspace.needs_trust
    assert ran(markers) == MARKS

    done = run_cli("trust", "--revoke", "-C", str(project), cwd=sibling)
    assert done.returncode == 0, done.stderr
    assert "no longer trusted" in done.stdout
    assert ran(markers) == []
    assert trust.decision(project) is False
    session = create_session(project)
    assert ran(markers) == []
    # no question, the code stays off
    assert not session.workspace.needs_trust and session.extensions.skipped
    assert session.config.get("project_setting") is None

    done = run_cli("trust", cwd=project)
    assert done.returncode == 0 and trust.decision(project) is True


async def test_the_app_asks_before_any_project_code_runs(project: Path, markers: Path) -> None:
    """The app builds its session the way ``tui-agent`` does (``load=False``): the trust
    dialog is on screen, the markers are not there; "n" keeps it that way, for good."""
    project_code(project, markers)
    session = create_session(project, load=False)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.pause(0.2)
        assert ran(markers) == []
        assert session.config.get("project_setting") is None
        await pilot.press("n")
        await wait_for(pilot, lambda: any(t.startswith("Not trusted") for t in note_texts(app)))
        assert ran(markers) == []
        assert {"evil", "evil_tool"}.isdisjoint(session.toolbox.tools)
    session.conversation.journal.close()

    again = create_session(project, load=False)  # the answer is remembered: no second dialog
    app = TuiAgentApp(again)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any("Skipped untrusted" in t for t in note_texts(app)))
        assert not isinstance(app.screen, TrustScreen)
        assert ran(markers) == []
    again.conversation.journal.close()


async def test_the_app_runs_project_code_once_trusted(project: Path, markers: Path) -> None:
    project_code(project, markers)
    session = create_session(project, load=False)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        assert ran(markers) == []
        await pilot.press("y")
        await wait_for(pilot, lambda: "evil" in session.toolbox.tools)
        assert ran(markers) == MARKS
        assert session.config.get("project_setting") == "from the project"
    session.conversation.journal.close()


# -- 4. secrets ------------------------------------------------------------------------------

# Tests that put the key in a file on purpose (the rest are scanned after they end).
KEY_ON_PURPOSE = {
    "test_the_scan_finds_a_key",
    "test_execute_output_is_the_one_place_the_key_may_appear",
}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test here runs with a key in the environment and ends with a scan: the key is
    in no file under its tmp folder (HOME with journals, logs, history, trust.json,
    screenshots; the project; outside folders)."""
    key = f"sk-test-SECRET-{secrets.token_hex(12)}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    yield key
    if request.node.originalname not in KEY_ON_PURPOSE:
        assert leaks(key, [request.getfixturevalue("tmp_path")]) == []


@pytest.fixture(autouse=True)
def log_file() -> Iterator[Path]:
    """In-process sessions log where ``tui-agent`` would (the CLI sets this up itself), so
    the scan covers the log too."""
    path = user_log_dir() / "tui-agent.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    logger = logging.getLogger("tui_agent")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield path
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()


def leaks(key: str, roots: list[Path], **texts: str) -> list[str]:
    """Every file under ``roots`` and every named text that holds the key, or its random
    part (which also catches a key shown cut or masked at the front)."""
    needles = [key.encode(), key.rsplit("-", 1)[-1].encode()]
    found = [name for name, text in texts.items() if any(n.decode() in text for n in needles)]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                if any(n in data for n in needles):
                    found.append(str(path))
    return found


def test_the_scan_finds_a_key(tmp_path: Path, api_key: str) -> None:
    """The scan the secret tests rely on does find a key where there is one."""
    assert leaks(api_key, [tmp_path]) == []
    write(tmp_path / "home" / "deep" / "down" / "file.json", json.dumps({"k": api_key}))
    write(tmp_path / "masked.log", "key sk-...-" + api_key.rsplit("-", 1)[-1] + "\n")
    assert leaks(api_key, [tmp_path], stdout="ok", stderr=f"Bearer {api_key}") == [
        "stderr",
        str(tmp_path / "home" / "deep" / "down" / "file.json"),
        str(tmp_path / "masked.log"),
    ]


def test_headless_turns_write_the_key_nowhere(
    project: Path, server: FakeOpenAI, api_key: str
) -> None:
    user_config(ALLOW_ALL)
    server.script += [
        Reply("Let me write.", calls=[Call("write", ARGS["write"])]),
        Reply("written"),
    ]
    done = run_cli("run", "write a file", cwd=project, server=server)
    assert done.returncode == 0, done.stderr
    assert server.headers[0]["authorization"] == f"Bearer {api_key}"  # the key was in use
    assert (project / "made.txt").exists()
    assert sorted(p.name for p in (user_data_dir() / "sessions").iterdir())  # journaled

    server.script += [Reply("in json")]
    again = run_cli("run", "--json", "--continue", "more", cwd=project, server=server)
    assert again.returncode == 0, again.stderr
    assert (
        leaks(
            api_key,
            [],
            **{"stdout": done.stdout + again.stdout, "stderr": done.stderr + again.stderr},
        )
        == []
    )


def test_a_401_that_echoes_the_key_does_not_show_it(
    project: Path, server: FakeOpenAI, api_key: str
) -> None:
    server.script += [Reply(status=401, error=f"Incorrect API key provided: {api_key}.")]
    done = run_cli("run", "hello", cwd=project, server=server)
    assert done.returncode == 1
    assert "authentication failed (HTTP 401)" in done.stderr
    assert "OPENAI_API_KEY" in done.stderr  # says which setting to fix
    assert "Traceback" not in done.stderr
    assert leaks(api_key, [], stdout=done.stdout, stderr=done.stderr) == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 503])
async def test_error_messages_never_carry_the_key(
    project: Path,
    server: FakeOpenAI,
    api_key: str,
    log_file: Path,
    status: int,
) -> None:
    """Whatever a server (or a proxy in front of it) echoes back in an error, the message
    shown, the log (retries are logged) and the journal keep the key out."""
    user_config("retry_attempts = 2\nretry_base_delay = 0\n")
    echo = f"Incorrect API key provided: {api_key} (Bearer {api_key})"
    replies = 2 if status in (429, 500, 503) else 1
    server.script += [Reply(status=status, error=echo, headers={"Retry-After": "0"})] * replies
    session = create_session(project, base_url=server.base_url, model="fake-model")
    await session.turn("hello")
    session.conversation.journal.close()

    assert not server.script  # every scripted failure was met
    shown = [note.text for note in session.output.history if note.kind == "error"]
    assert shown and shown[-1].startswith("error: ")
    assert leaks(api_key, [], shown="\n".join(shown)) == []
    if status in (400, 429, 500, 503):  # the server's own words stay, key masked
        assert "Incorrect API key provided" in shown[-1]
    if status in (429, 500, 503):  # the retry is logged, with the server's words
        assert "retrying" in log_file.read_text()


async def test_the_app_shows_and_saves_no_key(
    project: Path, server: FakeOpenAI, api_key: str, log_file: Path
) -> None:
    """A turn with a tool call, then a 401 that echoes the key, in the app; then an SVG
    screenshot: the key is in no file (journal, prompt history, log, screenshot)."""
    user_config(ALLOW_ALL)
    server.script += [
        Reply("Writing now.", calls=[Call("write", ARGS["write"])]),
        Reply("The file is written."),
        Reply(status=401, error=f"Incorrect API key provided: {api_key}"),
    ]
    session = create_session(project, base_url=server.base_url, model="fake-model")
    app = TuiAgentApp(session)
    shots = user_data_dir() / "shots"
    shots.mkdir(parents=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write a file")
        await wait_for(pilot, lambda: len(server.requests) >= 2 and not session.busy)
        await send(pilot, "and again")
        await wait_for(pilot, lambda: any("authentication failed" in t for t in note_texts(app)))
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        svg = Path(app.save_screenshot("app.svg", str(shots)))
        replies = [reply.source for reply in app.chat.query(ReplyMarkdown)]
    session.conversation.journal.close()

    assert server.headers[0]["authorization"] == f"Bearer {api_key}"
    assert (project / "made.txt").exists()
    assert "The file is written." in replies
    text = svg.read_text()
    assert "authentication" in text and "written" in text  # the screenshot shows the chat
    assert (user_data_dir() / "prompt-history.json").is_file()
    assert session.conversation.journal.path.is_file()


@needs_bwrap
async def test_in_the_sandbox_execute_never_sees_the_key(
    project: Path, server: FakeOpenAI, api_key: str, log_file: Path
) -> None:
    """The default: ``env`` in the sandbox prints no key, so nothing anywhere holds it."""
    user_config(ALLOW_ALL, sandbox=True)
    session = create_session(project, base_url=server.base_url, model="fake-model")
    [result] = await model_calls(session, server, Call("execute", {"command": "env"}))
    assert result["exit_status"] == 0 and "PATH=" in result["output"]
    assert api_key not in result["output"]
    assert leaks(api_key, [project.parent]) == []


async def test_execute_output_is_the_one_place_the_key_may_appear(
    project: Path, server: FakeOpenAI, api_key: str, log_file: Path
) -> None:
    """Without the sandbox ``execute`` inherits the environment, as a terminal (and Claude
    Code's Bash tool) does, so ``env`` prints the key: that is tool output the user
    allowed, journaled and sent to the model like any other. Everywhere else (logs,
    history, journal header) the key stays out."""
    user_config(ALLOW_ALL)
    session = create_session(project, base_url=server.base_url, model="fake-model")
    [result] = await model_calls(session, server, Call("execute", {"command": "env"}))
    assert api_key in result["output"]

    journal = session.conversation.journal.path
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    outputs = [r for r in records if r.get("message", {}).get("role") == "tool"]
    rest = [r for r in records if r not in outputs]
    assert len(outputs) == 1 and api_key in json.dumps(outputs[0])
    assert leaks(api_key, [], journal_without_tool_output=json.dumps(rest)) == []
    others = [p for p in leaks(api_key, [project.parent]) if p != str(journal)]
    assert others == []
