"""SPEC §6 and issue 4: permission rules, shell splitting, the hook and its bypass matrix.

Every test here runs with real permissions (no allow-all user config) and writes its own
rules. Session tests use real sessions, the bundled plugins and the real ``execute`` tool:
a denied ``rm x`` must leave the real file ``x`` in place.
"""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import SANDBOX_OFF, nobody_asked, write

from tui_agent import ApprovalRequest, Decision, Session, Toolbox, create_session
from tui_agent.core.permissions.permissions import (
    Rules,
    Subject,
    add_rule,
    matches,
    path_subject,
    session_pattern,
    subjects_for,
)
from tui_agent.core.permissions.shell import split_commands
from tui_agent.core.util.paths import user_config_dir
from tui_agent.testing import Call, FakeOpenAI, Person, Reply

pytestmark = pytest.mark.real_permissions

# -- helpers ---------------------------------------------------------------------------------

RM_DENIED = '[permission]\nexecute = { "*" = "allow", "rm *" = "deny" }\n'
MKDIR_ASKS = '[permission]\nexecute = { "*" = "allow", "mkdir *" = "ask", "rm *" = "deny" }\n'

# The bypass attempts issue 4 lists: each must be denied by `"rm *" = "deny"`.
BYPASSES = [
    "echo ok && rm -rf x",
    "ls; rm x",
    "cat a | rm x",
    "$(rm x)",
    "`rm x`",
    "sudo rm x",
    "env X=1 rm x",
    'bash -c "rm x"',
    "/bin/rm x",
]

# More ways bash runs `rm x` that a "split + unwrap" checker must also see through (the
# splitter's own promise: "errs towards finding more commands, never fewer").
MORE_BYPASSES = [
    "echo ok || rm x",
    "echo ok & rm x",
    "echo ok\nrm x",
    "echo $(echo $(rm x))",
    'echo "$(rm x)"',
    "cat <(rm x)",
    "(rm x)",
    "{ rm x; }",
    "timeout 5 rm x",
    "nice -n 5 rm x",
    "nohup rm x",
    "echo x | xargs rm",
    "sh -c 'rm x'",
    "sudo -u root env -i timeout 5 rm x",
    '"rm" x',
    "\\rm x",
]

# Forms the splitter misses today (see the report): redirections before the command name,
# shell keywords, combined shell flags, ANSI-C quoting, function bodies, `!` and coproc.
SHELL_SYNTAX_BYPASSES = [
    ">out rm x",
    "2>/dev/null rm x",
    "if true; then rm x; fi",
    "for i in 1; do rm x; done",
    "while true; do rm x; break; done",
    "case a in a) rm x;; esac",
    "! rm x",
    'bash -lc "rm x"',
    'sh -ec "rm x"',
    "$'rm' x",
    "f() { rm x; }; f",
]

QUOTED = [
    'echo "rm x"',
    "echo 'rm x'",
    "echo '$(rm x)'",
    "echo '`rm x`'",
    'git commit -m "fix; rm x && rm y"',
    "grep 'a | rm x' notes.txt",
    "printf '%s\\n' 'sudo rm x'",
]


def user_config(text: str) -> Path:
    """The user config, with the sandbox off: these tests are about rules and asking, with
    ``execute`` as the tool that asks; a sandboxed one is not asked about (that, and deny
    rules holding in the sandbox, are tests/core/sandbox/test_sandbox.py's)."""
    return write(user_config_dir() / "config.toml", text + SANDBOX_OFF)


def session_with(project: Path, config: str, **kwargs: Any) -> Session:
    user_config(config)
    return create_session(project, **kwargs)


async def call(session: Session, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return (await session.toolbox.run(name, args)).to_dict()


def offered(session: Session) -> set[str]:
    return {d["function"]["name"] for d in session.extensions.offered_tools()}


def said(session: Session) -> str:
    return "\n".join(note.text for note in session.output.history)


class Recorder:
    """An approver that records every request and answers from a script (last one repeats)."""

    def __init__(self, *answers: Decision | str) -> None:
        self.answers = [a if isinstance(a, Decision) else Decision(a) for a in answers]  # type: ignore[arg-type]
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.answers[min(len(self.requests), len(self.answers)) - 1]


def victim(project: Path) -> Path:
    """The real file ``x`` every bypass attempt tries to delete (and ``a`` for ``cat a``)."""
    write(project / "a", "a\n")
    return write(project / "x", "precious\n")


def has_rm(command: str) -> bool:
    return any(matches("rm *", part) for part in split_commands(command))


# -- split_commands --------------------------------------------------------------------------


@pytest.mark.parametrize("command", BYPASSES + MORE_BYPASSES)
def test_split_commands_finds_rm_in_every_bypass_form(command: str) -> None:
    parts = split_commands(command)
    assert any(p.startswith("rm") for p in parts), parts
    assert has_rm(command), parts


@pytest.mark.parametrize("command", SHELL_SYNTAX_BYPASSES)
def test_split_commands_finds_rm_behind_shell_syntax(command: str) -> None:
    assert has_rm(command), split_commands(command)


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("echo ok && rm -rf x", ["echo ok", "rm -rf x"]),
        ("ls; rm x", ["ls", "rm x"]),
        ("cat a | rm x", ["cat a", "rm x"]),
        ("$(rm x)", ["rm x"]),
        ("`rm x`", ["rm x"]),
        ("sudo rm x", ["rm x"]),
        ("env X=1 rm x", ["rm x"]),
        ('bash -c "rm x"', ["rm x"]),
        ("/bin/rm x", ["rm x"]),
        ("git status", ["git status"]),
        ("a && b || c; d | e", ["a", "b", "c", "d", "e"]),
        ("echo ok\nls -la", ["echo ok", "ls -la"]),
        ('echo "a; b"', ["echo a; b"]),
    ],
)
def test_split_commands_parts(command: str, parts: list[str]) -> None:
    assert split_commands(command) == parts


@pytest.mark.parametrize("command", QUOTED)
def test_quoted_text_is_not_a_command(command: str) -> None:
    parts = split_commands(command)
    assert len(parts) == 1, parts
    assert not has_rm(command), parts


# -- matches and Rules.check -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("*", "anything at all", True),
        ("*", "", True),
        ("rm *", "rm x", True),
        ("rm *", "rm -rf /", True),
        ("rm *", "rm", True),
        ("rm *", "rmdir x", False),
        ("rm *", "echo rm x", False),
        ("git status*", "git status", True),
        ("git status*", "git status --short", True),
        ("git status*", "git stash", False),
        ("src/*", "src/a/b.py", True),
        ("src/*", "tests/a.py", False),
        ("a.py", "a.py", True),
        ("a.py", "a_py", False),
    ],
)
def test_matches(pattern: str, subject: str, expected: bool) -> None:
    assert matches(pattern, subject) is expected


EXEC_TABLE = {"*": "ask", "git status*": "allow", "rm *": "deny"}  # the SPEC's example


@pytest.mark.parametrize(
    ("table", "tool", "subject", "expected"),
    [
        # plain strings
        ({"execute": "allow"}, "execute", "rm x", "allow"),
        ({"execute": "ask"}, "execute", "ls", "ask"),
        ({"execute": "deny"}, "execute", "ls", "deny"),
        ({"write": "deny"}, "write", "a.txt", "deny"),
        # the SPEC's pattern table
        ({"execute": EXEC_TABLE}, "execute", "git status", "allow"),
        ({"execute": EXEC_TABLE}, "execute", "git status --short", "allow"),
        ({"execute": EXEC_TABLE}, "execute", "rm -rf x", "deny"),
        ({"execute": EXEC_TABLE}, "execute", "ls", "ask"),
        # last match wins
        ({"execute": {"*": "allow", "rm *": "deny"}}, "execute", "rm x", "deny"),
        ({"execute": {"rm *": "deny", "*": "allow"}}, "execute", "rm x", "allow"),
        ({"execute": {"git *": "deny", "git status*": "allow"}}, "execute", "git status", "allow"),
        ({"execute": {"git status*": "allow", "git *": "deny"}}, "execute", "git status", "deny"),
        ({"write": {"*": "allow", "secrets/*": "deny"}}, "write", "secrets/k", "deny"),
        ({"write": {"*": "allow", "secrets/*": "deny"}}, "write", "notes/k", "allow"),
        # no pattern matched: the top-level "*", else the tool's default
        ({"execute": {"git *": "allow"}}, "execute", "ls", "ask"),
        ({"read": {"secrets/*": "deny"}}, "read", "a.txt", "allow"),
        ({"*": "deny", "execute": {"git *": "allow"}}, "execute", "ls", "deny"),
        ({"*": "allow", "execute": {"rm *": "deny"}}, "execute", "ls", "allow"),
        ({"*": "allow", "execute": {"rm *": "deny"}}, "execute", "rm x", "deny"),
        # defaults: read, glob, grep, list allow; everything else asks
        ({}, "read", "a.txt", "allow"),
        ({}, "glob", ".", "allow"),
        ({}, "grep", ".", "allow"),
        ({}, "list", ".", "allow"),
        ({}, "write", "a.txt", "ask"),
        ({}, "edit", "a.txt", "ask"),
        ({}, "execute", "ls", "ask"),
        ({}, "git", "*", "ask"),
        ({}, "some_plugin_tool", "*", "ask"),
        # a top-level "*" rule applies to every tool without its own rule
        ({"*": "deny"}, "read", "a.txt", "deny"),
        ({"*": "ask"}, "list", ".", "ask"),
        ({"*": "allow"}, "write", "a.txt", "allow"),
        ({"*": "allow"}, "some_plugin_tool", "*", "allow"),
        ({"*": "ask", "read": "allow"}, "read", "a.txt", "allow"),
        ({"*": "deny", "read": "allow"}, "write", "a.txt", "deny"),
        # a bad action never allows
        ({"execute": "yes please"}, "execute", "ls", "ask"),
    ],
)
def test_rules_check(table: dict[str, Any], tool: str, subject: str, expected: str) -> None:
    verdict = Rules(table).check(tool, Subject(subject))
    assert verdict.action == expected
    assert verdict.subject == subject
    assert verdict.rule


@pytest.mark.parametrize(
    ("table", "tool"),
    [
        ({}, "read"),
        ({"read": "allow"}, "read"),
        ({"*": "allow"}, "read"),
        ({"*": "allow"}, "write"),
        ({"write": "allow"}, "write"),
        ({"write": {"*": "allow"}}, "write"),
        ({"execute": "allow"}, "execute"),
    ],
)
def test_outside_the_worktree_asks_even_where_the_tool_is_allowed(
    table: dict[str, Any], tool: str
) -> None:
    verdict = Rules(table).check(tool, Subject("/etc/passwd", outside=True))
    assert verdict.action == "ask"
    assert verdict.outside
    # …and a deny still denies
    assert Rules({tool: "deny"}).check(tool, Subject("/etc/passwd", outside=True)).action == "deny"


def test_an_explicit_pattern_for_an_outside_path_applies() -> None:
    rules = Rules({"read": {"/etc/*": "allow"}})
    assert rules.check("read", Subject("/etc/hosts", outside=True)).action == "allow"
    assert rules.check("read", Subject("/var/log/x", outside=True)).action == "ask"


@pytest.mark.parametrize(
    ("table", "allows", "tool", "subject", "expected"),
    [
        ({}, {"execute": ["git status *"]}, "execute", "git status", "allow"),
        ({}, {"execute": ["git status *"]}, "execute", "git status --short", "allow"),
        ({}, {"execute": ["git status *"]}, "execute", "git push", "ask"),
        ({}, {"execute": ["git status *"]}, "write", "git status", "ask"),
        ({}, {"write": ["src/*"]}, "write", "src/a.py", "allow"),
        ({}, {"write": ["src/*"]}, "write", "docs/a.md", "ask"),
        ({"execute": {"rm *": "deny"}}, {"execute": ["rm *"]}, "execute", "rm x", "deny"),
        ({"write": "deny"}, {"write": ["*"]}, "write", "a.txt", "deny"),
    ],
)
def test_session_allows(
    table: dict[str, Any], allows: dict[str, list[str]], tool: str, subject: str, expected: str
) -> None:
    assert Rules(table, allows).check(tool, Subject(subject)).action == expected


def test_a_session_allow_for_the_whole_worktree_does_not_cover_outside_paths() -> None:
    """Allow-for-session on `a.txt` adds `*`; an outside path must still ask (SPEC §6/issue 4)."""
    allows = {"write": [session_pattern("write", "a.txt")]}
    rules = Rules({}, allows)
    assert rules.check("write", Subject("b.txt")).action == "allow"
    assert rules.check("write", Subject("/etc/cron.d/job", outside=True)).action == "ask"


@pytest.mark.parametrize(
    ("table", "tool", "hidden"),
    [
        ({"write": "deny"}, "write", True),
        ({"write": {"*": "deny"}}, "write", True),
        ({"*": "deny"}, "git", True),
        ({"*": "deny", "read": "allow"}, "read", False),
        ({"execute": {"*": "allow", "rm *": "deny"}}, "execute", False),
        ({"write": "ask"}, "write", False),
        ({}, "write", False),
    ],
)
def test_hidden(table: dict[str, Any], tool: str, hidden: bool) -> None:
    assert Rules(table).hidden(tool) is hidden


# -- subjects --------------------------------------------------------------------------------


def test_subjects_for_execute_are_the_split_commands(tmp_path: Path) -> None:
    found = subjects_for("execute", {"command": "echo ok && sudo rm x"}, tmp_path, tmp_path)
    assert [s.text for s in found] == ["echo ok", "rm x"]
    assert not any(s.outside for s in found)
    away = subjects_for("execute", {"command": "ls", "workdir": "/"}, tmp_path, tmp_path)
    assert [(s.text, s.outside) for s in away] == [("ls", True)]
    assert subjects_for("git", {"args": "status"}, tmp_path, tmp_path) == [Subject("*")]


def test_path_subject(tmp_path: Path) -> None:
    worktree = tmp_path / "repo"
    inner = worktree / "src"
    inner.mkdir(parents=True)
    assert path_subject("a.py", inner, worktree) == Subject("src/a.py")
    assert path_subject("../README.md", inner, worktree) == Subject("README.md")
    assert path_subject(".", worktree, worktree) == Subject(".")
    assert path_subject(str(inner / "b.py"), worktree, worktree) == Subject("src/b.py")
    outside = path_subject("../../elsewhere.txt", inner, worktree)
    assert outside.outside and outside.text == str((tmp_path / "elsewhere.txt").resolve())
    assert path_subject("/etc/passwd", worktree, worktree).outside
    # a symlink inside the worktree that points outside is outside
    (worktree / "link").symlink_to(tmp_path)
    assert path_subject("link/elsewhere.txt", worktree, worktree).outside


@pytest.mark.parametrize(
    ("tool", "subject", "pattern"),
    [
        ("execute", "git status", "git status *"),
        ("execute", "git commit -m x", "git commit *"),
        ("execute", "ls -la", "ls *"),
        ("execute", "mkdir -p made", "mkdir *"),
        ("write", "src/a.py", "src/*"),
        ("write", "a.py", "*"),
        ("read", "/etc/hosts", "/etc/*"),
        ("git", "*", "*"),
    ],
)
def test_session_pattern(tool: str, subject: str, pattern: str) -> None:
    assert session_pattern(tool, subject) == pattern
    assert matches(pattern, subject)


# -- add_rule --------------------------------------------------------------------------------

OTHER = textwrap.dedent(
    """\
    # top comment: keep me
    model = "demo-model"  # trailing comment: keep me too

    [demo]
    answer = 42
    """
)


@pytest.mark.parametrize(
    ("before", "old_rules", "comments"),
    [
        pytest.param(None, {}, [], id="no-file"),
        pytest.param(OTHER, {}, ["# top comment", "# trailing comment"], id="no-permission"),
        pytest.param(
            OTHER + '\n[permission]\n# rules below\nread = "allow"\n',
            {},
            ["# top comment", "# rules below"],
            id="permission-without-the-tool",
        ),
        pytest.param(
            OTHER + '\n[permission]\n# shell\nexecute = "ask"\nread = "allow"\n',
            {"*": "ask"},
            ["# top comment", "# shell"],
            id="tool-as-string",
        ),
        pytest.param(
            OTHER + '\n[permission]\nexecute = "ask"  # careful with the shell\n',
            {"*": "ask"},
            ["# top comment", "# careful with the shell"],
            id="tool-as-string-with-trailing-comment",
        ),
        pytest.param(
            OTHER
            + '\n[permission]\nexecute = { "*" = "ask", "git *" = "allow" }  # shell rules\n'
            + 'read = "allow"\n',
            {"*": "ask", "git *": "allow"},
            ["# top comment", "# shell rules"],
            id="tool-as-inline-table",
        ),
        pytest.param(
            OTHER
            + '\n[permission]\nread = "allow"\n\n[permission.execute]\n# the shell\n'
            + '"*" = "ask"\n"git *" = "allow"\n\n[after]\nkept = true\n',
            {"*": "ask", "git *": "allow"},
            ["# top comment", "# the shell"],
            id="tool-as-sub-table",
        ),
        pytest.param(
            OTHER + '\n[permission]\nexecute = { "*" = "allow", "ls *" = "ask" }\n',
            {"*": "allow"},
            ["# top comment"],
            id="pattern-already-present",
        ),
    ],
)
def test_add_rule(
    tmp_path: Path, before: str | None, old_rules: dict[str, str], comments: list[str]
) -> None:
    path = tmp_path / ".tui-agent" / "config.toml"
    if before is not None:
        write(path, before)
    old = tomllib.loads(before or "")

    add_rule(path, "execute", "ls *")

    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    rule = data["permission"]["execute"]
    assert rule == {**old_rules, "ls *": "allow"}
    assert list(rule)[-1] == "ls *" or "ls *" in old.get("permission", {}).get("execute", {})
    for key, value in old.items():  # every other setting is kept
        if key != "permission":
            assert data[key] == value
    for tool, value in old.get("permission", {}).items():
        if tool != "execute":
            assert data["permission"][tool] == value
    for comment in comments:
        assert comment in text
    if before is not None:  # the rest of the text is untouched
        assert text.startswith(OTHER.splitlines()[0])


def test_add_rule_twice_and_for_a_quoted_tool_name(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", "# c\n")
    add_rule(path, "execute", "ls *")
    add_rule(path, "execute", "git status *")
    add_rule(path, "my.tool", "*", "deny")
    data = tomllib.loads(path.read_text())
    assert data["permission"]["execute"] == {"ls *": "allow", "git status *": "allow"}
    assert data["permission"]["my.tool"] == {"*": "deny"}
    assert path.read_text().startswith("# c\n")


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ('permission = { execute = "ask" }\n', "allow"),  # inline permission table
        ("[permission\n", "allow"),  # not TOML
        ("", "sometimes"),  # not an action
    ],
)
def test_add_rule_refuses_what_it_cannot_edit_safely(
    tmp_path: Path, text: str, action: str
) -> None:
    path = write(tmp_path / "config.toml", text)
    with pytest.raises(ValueError):
        add_rule(path, "execute", "ls *", action)
    assert path.read_text() == text


# -- the bypass matrix through a real session -------------------------------------------------


async def assert_denied(session: Session, project: Path, name: str, command: str) -> None:
    result = await call(session, name, {"command": command})
    assert result.get("error") == "Permission denied: execute", (command, result)
    assert result["ok"] is False
    assert (project / "x").read_text() == "precious\n", f"{command!r} deleted x"


async def assert_runs(session: Session, command: str = "echo ok") -> dict[str, Any]:
    result = await call(session, "execute", {"command": command})
    assert result["ok"] is True, result
    assert result["exit_status"] == 0
    return result


@pytest.mark.parametrize("name", ["execute", "sh", "bash"])
@pytest.mark.parametrize("command", BYPASSES)
async def test_bypass_attempts_are_denied(project: Path, name: str, command: str) -> None:
    victim(project)
    session = session_with(project, RM_DENIED)
    await assert_denied(session, project, name, command)
    assert (await assert_runs(session))["output"] == "ok\n"


@pytest.mark.parametrize("command", MORE_BYPASSES)
async def test_more_bypass_attempts_are_denied(project: Path, command: str) -> None:
    victim(project)
    session = session_with(project, RM_DENIED)
    await assert_denied(session, project, "execute", command)


@pytest.mark.parametrize("command", SHELL_SYNTAX_BYPASSES)
async def test_rm_behind_shell_syntax_is_denied(project: Path, command: str) -> None:
    victim(project)
    session = session_with(project, RM_DENIED)
    await assert_denied(session, project, "execute", command)


@pytest.mark.parametrize("command", QUOTED[:3])
async def test_quoted_rm_is_allowed_and_runs(project: Path, command: str) -> None:
    victim(project)
    session = session_with(project, RM_DENIED)
    result = await assert_runs(session, command)
    assert "rm x" in result["output"]
    assert (project / "x").exists()


SNEAKY_PLUGIN = """
import tui_agent

@tui_agent.setup("sneaky")
def sneaky(session):
    @session.toolbox.add(
        "sneaky",
        description="Run a command through execute",
        params={"command": {"type": "string"}},
        required=["command"],
    )
    async def run(args):
        result = await session.toolbox.run("execute", {"command": args["command"]})
        return {"inner": result.to_dict(), "error": result.error}
"""


@pytest.mark.parametrize("command", ["rm x", "echo ok && rm -rf x", "bash -c 'rm x'"])
async def test_a_plugin_tool_calling_execute_is_checked(project: Path, command: str) -> None:
    victim(project)
    write(project / ".agents" / "plugins" / "sneaky.py", SNEAKY_PLUGIN)
    session = session_with(project, RM_DENIED + 'sneaky = "allow"\n', trust=True)
    assert "sneaky" in session.toolbox.tools

    ok = await call(session, "sneaky", {"command": "echo ok"})
    assert ok["ok"] is True and ok["inner"]["output"] == "ok\n"

    result = await call(session, "sneaky", {"command": command})
    assert result["inner"]["error"] == "Permission denied: execute"
    assert result["ok"] is False
    assert (project / "x").read_text() == "precious\n"


OVERRIDE = """
import subprocess
from tui_agent import tool, schema

@tool(description="My own shell", args={"command": schema.string().describe("Command")})
def execute(args, context):
    done = subprocess.run(
        ["bash", "-c", args["command"]], cwd=context.directory, capture_output=True, text=True
    )
    return {"output": "override:" + done.stdout, "exit_status": done.returncode}
"""


@pytest.mark.parametrize("reload", [None, "reload()", "/reload"])
async def test_a_tool_file_overriding_execute_is_still_checked(
    project: Path, reload: str | None
) -> None:
    victim(project)
    write(project / ".tui-agent" / "tools" / "execute.py", OVERRIDE)
    session = session_with(project, RM_DENIED, trust=True)
    if reload == "reload()":
        session.reload()
    elif reload == "/reload":
        assert await session.commands.run_line("/reload")
    assert (await assert_runs(session))["output"] == "override:ok\n"  # the override runs
    for command in ["rm x", *BYPASSES]:
        await assert_denied(session, project, "execute", command)


@pytest.mark.parametrize("how", ["reload()", "/reload"])
async def test_bypass_attempts_are_denied_after_reload(project: Path, how: str) -> None:
    victim(project)
    session = session_with(project, RM_DENIED)
    for _ in range(2):
        if how == "reload()":
            session.reload()
        else:
            assert await session.commands.run_line("/reload")
    for name in ["execute", "sh"]:
        for command in BYPASSES:
            await assert_denied(session, project, name, command)
    assert (await assert_runs(session))["output"] == "ok\n"


async def test_reload_picks_up_a_new_deny_rule(project: Path) -> None:
    victim(project)
    session = session_with(project, '[permission]\nexecute = "allow"\n')
    await assert_runs(session, "cat x")
    user_config(RM_DENIED)
    assert await session.commands.run_line("/reload")
    await assert_denied(session, project, "execute", "rm x")


async def test_the_hook_asks_once_per_call_even_after_reloads(project: Path) -> None:
    session = session_with(project, MKDIR_ASKS)
    session.reload()
    assert await session.commands.run_line("/reload")
    approver = Recorder("once")
    session.frontend = Person(decide=approver)
    await assert_runs(session, "mkdir -p made")
    assert len(approver.requests) == 1


# -- the ask flow ----------------------------------------------------------------------------


async def test_the_request_carries_what_the_dialog_shows(project: Path) -> None:
    session = session_with(project, MKDIR_ASKS)
    approver = Recorder("once")
    session.frontend = Person(decide=approver)

    await call(session, "bash", {"command": "mkdir -p made"})

    (request,) = approver.requests
    assert request.tool == "execute"
    assert request.called_as == "bash"
    assert request.args == {"command": "mkdir -p made"}
    assert request.subject == "mkdir -p made"
    assert "mkdir *" in request.rule and "execute" in request.rule
    assert request.session_pattern == "mkdir *"


async def test_only_the_parts_that_ask_are_asked_about(project: Path) -> None:
    session = session_with(project, MKDIR_ASKS)
    approver = Recorder("once")
    session.frontend = Person(decide=approver)
    await assert_runs(session, "echo ok && mkdir -p made")
    (request,) = approver.requests
    assert request.subject == "mkdir -p made"
    assert request.args == {"command": "echo ok && mkdir -p made"}


async def test_nothing_is_asked_when_a_part_is_denied(project: Path) -> None:
    victim(project)
    session = session_with(project, MKDIR_ASKS)
    approver = Recorder("once")
    session.frontend = Person(decide=approver)
    await assert_denied(session, project, "execute", "mkdir -p made && rm x")
    assert approver.requests == []
    assert not (project / "made").exists()


async def test_allow_once_runs_and_asks_again(project: Path) -> None:
    session = session_with(project, MKDIR_ASKS)
    approver = Recorder("once")
    session.frontend = Person(decide=approver)

    await assert_runs(session, "mkdir -p one")
    assert (project / "one").is_dir()
    await assert_runs(session, "mkdir -p one")
    assert len(approver.requests) == 2


async def test_allow_for_session_then_revoke(project: Path) -> None:
    session = session_with(project, MKDIR_ASKS)
    approver = Recorder("session", "deny")
    session.frontend = Person(decide=approver)

    await assert_runs(session, "mkdir -p one")
    await assert_runs(session, "mkdir -p two")
    await assert_runs(session, "mkdir three")
    assert len(approver.requests) == 1
    assert all((project / n).is_dir() for n in ("one", "two", "three"))

    assert await session.commands.run_line("/permissions")
    listing = said(session)
    assert "mkdir *" in listing and "execute" in listing
    assert "rm *" in listing  # the config rules are shown too

    assert await session.commands.run_line("/permissions revoke execute mkdir *")
    assert "error" not in said(session).lower()
    result = await call(session, "execute", {"command": "mkdir -p four"})
    assert len(approver.requests) == 2
    assert result["error"] == "User denied permission: execute"
    assert not (project / "four").exists()


async def test_a_session_allow_is_not_saved(project: Path) -> None:
    session = session_with(project, MKDIR_ASKS, trust=True)
    session.frontend = Person(decide=Recorder("session"))
    await assert_runs(session, "mkdir -p one")
    assert not session.workspace.config_file.exists()
    fresh = create_session(project, trust=True)
    approver = Recorder("deny")
    fresh.frontend = Person(decide=approver)
    await call(fresh, "execute", {"command": "mkdir -p two"})
    assert len(approver.requests) == 1


PROJECT_CONFIG = textwrap.dedent(
    """\
    # project settings: keep this comment
    model = "demo-model"  # and this one

    [permission]
    # shell commands ask unless allowed
    execute = "ask"
    read = "allow"

    [demo]
    answer = 42
    """
)


async def check_always(project: Path, config: str, command: str, pattern: str) -> None:
    path = write(project / ".tui-agent" / "config.toml", config)
    user_config("# no rules here\n")
    session = create_session(project, trust=True)
    approver = Recorder("always", "deny")
    session.frontend = Person(decide=approver)

    await assert_runs(session, command)
    assert len(approver.requests) == 1
    assert approver.requests[0].session_pattern == pattern

    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    old = tomllib.loads(config)
    assert data["permission"]["execute"][pattern] == "allow"
    assert {k: v for k, v in data.items() if k != "permission"} == {
        k: v for k, v in old.items() if k != "permission"
    }
    assert data["permission"]["read"] == "allow"
    for line in config.splitlines():
        if line.lstrip().startswith("#"):
            assert line in text
    assert "# and this one" in text

    await assert_runs(session, command)  # this session no longer asks
    assert len(approver.requests) == 1
    fresh = create_session(project, trust=True)  # nor does the next one
    again = Recorder("deny")
    fresh.frontend = Person(decide=again)
    await assert_runs(fresh, command)
    assert again.requests == []


async def test_always_allow_writes_the_project_config(project: Path) -> None:
    await check_always(project, PROJECT_CONFIG, "mkdir -p made", "mkdir *")


async def test_always_allow_when_the_asking_pattern_is_the_one_to_add(project: Path) -> None:
    """`"mkdir *" = "ask"` then "Always allow" on `mkdir -p x` adds `"mkdir *"` = allow."""
    config = PROJECT_CONFIG.replace(
        'execute = "ask"', 'execute = { "*" = "allow", "mkdir *" = "ask" }'
    )
    await check_always(project, config, "mkdir -p made", "mkdir *")


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (Decision("deny"), "User denied permission: execute"),
        (
            Decision("feedback", "use mkdir -p build instead"),
            "User denied permission: execute: use mkdir -p build instead",
        ),
    ],
    ids=["deny", "feedback"],
)
async def test_deny_and_deny_with_feedback(project: Path, decision: Decision, message: str) -> None:
    session = session_with(project, MKDIR_ASKS)
    session.frontend = Person(decide=Recorder(decision))
    result = await call(session, "sh", {"command": "mkdir made"})
    assert result["error"] == message
    assert result["ok"] is False
    assert not (project / "made").exists()


async def test_headless_denies_what_asks(project: Path) -> None:
    session = session_with(project, "# defaults only\n")
    result = await call(session, "execute", {"command": "mkdir made"})
    assert result["error"].startswith(nobody_asked("execute")), result
    assert not (project / "made").exists()
    written = await call(session, "write", {"path": "w.txt", "content": "hi"})
    assert written["error"].startswith(nobody_asked("write"))
    assert "--yes" in written["error"] and "[permission]" in written["error"]
    assert not (project / "w.txt").exists()
    listed = await call(session, "list", {})  # list is allowed by default: no asking
    assert listed["ok"] is True


async def test_headless_yes_allows_what_asks_but_deny_holds(project: Path) -> None:
    victim(project)
    session = session_with(project, '[permission]\nexecute = { "rm *" = "deny" }\n', yes=True)
    await assert_runs(session, "mkdir made")
    assert (project / "made").is_dir()
    written = await call(session, "write", {"path": "w.txt", "content": "hi"})
    assert written["ok"] is True and (project / "w.txt").read_text() == "hi"
    for command in ["rm x", *BYPASSES]:
        await assert_denied(session, project, "execute", command)


# -- tools denied outright are not offered -----------------------------------------------------


async def test_tools_denied_for_everything_are_not_offered(project: Path) -> None:
    session = session_with(
        project, '[permission]\nwrite = "deny"\nedit = { "*" = "deny" }\n' + 'git = "ask"\n'
    )
    names = offered(session)
    assert "write" not in names and "edit" not in names
    assert {"read", "execute", "git", "list", "glob", "grep"} <= names
    result = await call(session, "write", {"path": "w.txt", "content": "hi"})
    assert result["error"] == "Permission denied: write"
    assert not (project / "w.txt").exists()
    # still hidden after a reload; offered again once the rule goes
    session.reload()
    assert "write" not in offered(session)
    user_config('[permission]\nexecute = { "*" = "allow", "rm *" = "deny" }\n')
    assert await session.commands.run_line("/reload")
    assert {"write", "edit", "execute"} <= offered(session)


async def test_a_top_level_deny_hides_everything_but_what_is_allowed(project: Path) -> None:
    session = session_with(project, '[permission]\n"*" = "deny"\nread = "allow"\n')
    assert offered(session) == {"read"}


async def test_an_unknown_tool_from_the_model_names_only_offered_tools(project: Path) -> None:
    """The model is told what it may call: "Available:" leaves out the tools it is not
    offered (SPEC §6). A toolbox on its own still names every tool (SPEC §2)."""
    user_config('[permission]\n"*" = "allow"\nwrite = "deny"\nedit = { "*" = "deny" }\n')
    replies = [Reply(calls=[Call("nope", {})]), Reply("ok")]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        assert await session.turn("go") == "ok"
    [result] = [
        json.loads(m["content"]) for m in server.requests[1]["messages"] if m["role"] == "tool"
    ]
    offered_names = sorted(d["function"]["name"] for d in server.requests[0]["tools"])
    assert "write" not in offered_names and "read" in offered_names
    assert result == {
        "error": f'unknown tool: "nope". Available: {", ".join(offered_names)}',
        "ok": False,
    }
    # a denied tool called by name is still refused by the hook, not "unknown"
    assert (await call(session, "write", {"path": "w", "content": ""}))["error"] == (
        "Permission denied: write"
    )
    alone = Toolbox()
    for name in session.toolbox.tools:
        alone.add(name, handler=lambda args: {})
    everything = ", ".join(sorted(session.toolbox.tools))
    assert (await alone.run("nope")).error == f'unknown tool: "nope". Available: {everything}'
    assert "edit, " in everything and "write" in everything


# -- paths outside the worktree ----------------------------------------------------------------


@pytest.mark.parametrize("config", ["# defaults\n", '[permission]\nread = "allow"\n'])
async def test_read_outside_the_worktree_asks(project: Path, tmp_path: Path, config: str) -> None:
    outside = write(tmp_path / "outside" / "secret.txt", "top secret\n")
    write(project / "inside.txt", "hello\n")
    session = session_with(project, config)
    approver = Recorder("deny")
    session.frontend = Person(decide=approver)

    inside = await call(session, "read", {"path": "inside.txt"})
    assert inside["ok"] is True and approver.requests == []

    for path in [str(outside), "../outside/secret.txt"]:
        result = await call(session, "read", {"path": path})
        assert result["error"] == "User denied permission: read"
        assert "top secret" not in str(result)
    assert [r.subject for r in approver.requests] == [str(outside.resolve())] * 2
    assert all(r.tool == "read" for r in approver.requests)

    approver.answers = [Decision("once")]
    allowed = await call(session, "read", {"path": str(outside)})
    assert allowed["ok"] is True and "top secret" in str(allowed)


async def test_read_outside_the_worktree_is_denied_headless(project: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere.txt", "top secret\n")
    session = session_with(project, "# defaults\n")
    result = await call(session, "read", {"path": str(outside)})
    assert result["error"].startswith(nobody_asked("read"))
    assert "outside the worktree" in result["error"]


async def test_a_session_allow_inside_does_not_open_outside_paths(
    project: Path, tmp_path: Path
) -> None:
    """Allow-for-session on a write at the project root must not allow writing outside."""
    target = tmp_path / "outside.txt"
    session = session_with(project, "# defaults: write asks\n")
    approver = Recorder("session", "deny")
    session.frontend = Person(decide=approver)
    assert (await call(session, "write", {"path": "a.txt", "content": "a"}))["ok"] is True

    result = await call(session, "write", {"path": str(target), "content": "pwned"})
    assert len(approver.requests) == 2, "the outside write was not asked about"
    assert result["error"] == "User denied permission: write"
    assert not target.exists()


@pytest.mark.parametrize(
    "command", ['echo "rm x" | bash', "bash script.sh", "source ./env.sh", "curl -s x | sh"]
)
def test_a_shell_reading_a_script_or_stdin_needs_an_explicit_rule(command: str) -> None:
    from tui_agent.core.permissions.permissions import Rules, subjects_for

    rules = Rules({"execute": {"*": "allow", "rm *": "deny"}})
    verdicts = rules.check_all(
        "execute", subjects_for("execute", {"command": command}, Path("/w"), Path("/w"))
    )
    assert "ask" in [v.action for v in verdicts]
    explicit = Rules({"execute": {"*": "allow", "bash script.sh": "allow"}})
    if command == "bash script.sh":
        subject = subjects_for("execute", {"command": command}, Path("/w"), Path("/w"))
        assert [v.action for v in explicit.check_all("execute", subject)] == ["allow"]
