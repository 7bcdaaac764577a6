"""Issue 18, parts 3 and 4: command hooks in Claude Code's protocol, and ``/hooks``.

Real shell scripts in tmp_path, real turns through the real ``openai`` client against the
testing kit's server, the bundled plugins (the permission hook among them) and the real
tools: a refused call must leave the file it would have made unmade.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ALLOW_ALL, SANDBOX_OFF, write

from tui_agent import (
    ApprovalRequest,
    Decision,
    PromptBlocked,
    Session,
    create_session,
)
from tui_agent.command_hooks import CommandHook, in_force, parse
from tui_agent.core.util.paths import user_config_dir, user_data_dir
from tui_agent.testing import Call, FakeOpenAI, Person, Reply

# -- helpers ---------------------------------------------------------------------------------


def script(folder: Path, name: str, body: str) -> Path:
    """An executable shell script: ``body`` after ``#!/bin/sh``."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body).lstrip(), encoding="utf-8")
    path.chmod(0o755)
    return path


def user_hooks(toml: str, permissions: str = ALLOW_ALL) -> None:
    """The user's config.toml: ``permissions`` then the hook tables."""
    write(user_config_dir() / "config.toml", permissions + textwrap.dedent(toml))


def hook_table(event: str, command: str | Path, matcher: str = "", timeout: float = 60) -> str:
    return (
        f"\n[[hooks.{event}]]\nmatcher = {json.dumps(matcher)}\n"
        f"command = {json.dumps(str(command))}\ntimeout = {timeout}\n"
    )


def session_for(project: Path, server: FakeOpenAI, *, trust: bool = True) -> Session:
    return create_session(project, base_url=server.base_url, model="m", trust=trust)


def results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results a request sends back to the model."""
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def last_user(request: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user")


def errors(session: Session) -> list[str]:
    return [note.text for note in session.output.history if note.kind == "error"]


def recorded(path: Path) -> list[dict[str, Any]]:
    """What a recording hook saw: one JSON object per line."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recorder(folder: Path, name: str = "record.sh", then: str = "") -> tuple[Path, Path]:
    """A hook that appends its stdin (one line) to ``<name>.jsonl``, then runs ``then``."""
    log = folder / f"{name}.jsonl"
    body = f'cat >> "{log}"\necho >> "{log}"\n{then}'
    return script(folder, name, body), log


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (a container's PID 1 may leave zombies)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


# -- PreToolUse ------------------------------------------------------------------------------


async def test_pre_tool_use_gets_the_call_as_json_with_the_project_in_its_environment(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hook, log = recorder(
        tmp_path, then='echo "$CLAUDE_PROJECT_DIR|$TUI_AGENT_PROJECT_DIR|$PWD" > "$0.env"'
    )
    user_hooks(hook_table("PreToolUse", hook, "execute"))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "echo ran > ran.txt"}, id="call-7")]),
        Reply("done"),
    ]
    session = session_for(project, fake_openai)
    assert await session.turn("go") == "done"
    (seen,) = recorded(log)
    assert seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == "Bash"  # Claude's name for execute
    assert seen["tool_input"] == {"command": "echo ran > ran.txt"}
    assert seen["tool_use_id"] == "call-7"
    assert seen["session_id"] == session.id
    transcript = user_data_dir() / "claude-transcripts" / f"{session.id}.jsonl"
    assert seen["transcript_path"] == str(transcript)
    assert Path(seen["transcript_path"]).is_file()
    assert seen["cwd"] == str(project)
    env = Path(f"{hook}.env").read_text().strip()
    assert env == f"{project}|{project}|{project}"
    assert (project / "ran.txt").read_text() == "ran\n"  # exit 0: the call ran


async def test_pre_tool_use_exit_2_blocks_the_call_and_its_stderr_is_the_error(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hook = script(tmp_path, "guard.sh", "echo 'not in this repo: use the Makefile' >&2\nexit 2")
    user_hooks(hook_table("PreToolUse", hook, "Bash"))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch made.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert not (project / "made.txt").exists()
    (result,) = results(fake_openai.requests[1])
    assert result["error"] == "not in this repo: use the Makefile"
    assert not errors(session)  # a block is the hook's answer, not a failure


async def test_pre_tool_use_other_exit_codes_are_errors_for_the_user_and_the_call_runs(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hook = script(tmp_path, "broken.sh", "echo 'jq: command not found' >&2\nexit 127")
    user_hooks(hook_table("PreToolUse", hook))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch made.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert (project / "made.txt").exists()
    (said,) = errors(session)
    assert "PreToolUse hook failed (exit 127)" in said
    assert str(hook) in said and "jq: command not found" in said
    assert results(fake_openai.requests[1])[0]["exit_status"] == 0


@pytest.mark.parametrize(
    "output",
    [
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "writes to secrets/ are not allowed",
            },
            "systemMessage": "guard.sh refused a write",
        },
        {  # the older form Claude Code still reads
            "decision": "block",
            "reason": "writes to secrets/ are not allowed",
            "systemMessage": "guard.sh refused a write",
        },
    ],
)
async def test_deny_refuses_the_call_with_its_reason(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI, output: dict[str, Any]
) -> None:
    hook = script(tmp_path, "deny.sh", f"cat > /dev/null\necho '{json.dumps(output)}'")
    user_hooks(hook_table("PreToolUse", hook, "Write|Edit"))
    fake_openai.script += [
        Reply(calls=[Call("write", {"path": "secrets/key", "content": "x"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert not (project / "secrets").exists()
    assert results(fake_openai.requests[1])[0]["error"] == "writes to secrets/ are not allowed"
    assert "PreToolUse hook: guard.sh refused a write" in [n.text for n in session.output.history]


def allow_script(folder: Path) -> Path:
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    return script(folder, "allow.sh", f"echo '{json.dumps(out)}'")


@pytest.mark.real_permissions
async def test_allow_spares_the_permission_question_but_deny_rules_hold(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    # the sandbox off: a sandboxed execute would not be asked about at all
    rules = '[permission]\nexecute = { "*" = "ask", "rm *" = "deny" }\n' + SANDBOX_OFF
    (project / "keep.txt").write_text("keep")
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch one.txt"})]),
        Reply("ok"),
    ]
    # without the hook: "ask", and a headless session without --yes denies
    write(user_config_dir() / "config.toml", rules)
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision("deny")

    plain = session_for(project, fake_openai)
    plain.frontend = Person(decide=approver)
    await plain.turn("go")
    assert not (project / "one.txt").exists() and len(asked) == 1

    user_hooks(hook_table("PreToolUse", allow_script(tmp_path), "execute"), permissions=rules)
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch one.txt"})]),
        Reply(calls=[Call("execute", {"command": "rm keep.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    session.frontend = Person(decide=approver)
    await session.turn("go")
    assert (project / "one.txt").exists()  # allowed without asking
    assert len(asked) == 1
    assert (project / "keep.txt").exists()  # "rm *" = "deny" still holds
    assert results(fake_openai.requests[-1])[-1]["error"] == "Permission denied: execute"


async def test_ask_puts_the_call_to_the_user_with_the_hooks_reason(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "this touches the deploy folder",
        }
    }
    hook = script(tmp_path, "ask.sh", f"echo '{json.dumps(out)}'")
    user_hooks(hook_table("PreToolUse", hook, "execute"))  # the rules allow everything
    answers = ["deny", "once"]
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision(answers.pop(0))  # type: ignore[arg-type]

    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch first.txt"})]),
        Reply(calls=[Call("execute", {"command": "touch second.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    session.frontend = Person(decide=approver)
    await session.turn("go")
    assert [r.subject for r in asked] == ["this touches the deploy folder"] * 2
    assert asked[0].tool == "execute" and asked[0].args == {"command": "touch first.txt"}
    assert str(hook) in asked[0].rule
    assert not (project / "first.txt").exists()
    assert results(fake_openai.requests[1])[0]["error"] == "User denied permission: execute"
    assert (project / "second.txt").exists()


async def test_updated_input_replaces_the_arguments_checked_against_the_schema(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo rewritten > out.txt"},
        }
    }
    hook = script(tmp_path, "rewrite.sh", f"echo '{json.dumps(out)}'")
    seen, log = recorder(tmp_path, "after.sh")
    user_hooks(hook_table("PreToolUse", hook, "execute") + hook_table("PostToolUse", seen))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "echo original > out.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert (project / "out.txt").read_text() == "rewritten\n"
    (after,) = recorded(log)
    assert after["tool_input"] == {"command": "echo rewritten > out.txt"}


async def test_updated_input_that_does_not_fit_the_schema_stops_the_call(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": 5}}}
    hook = script(tmp_path, "bad.sh", f"echo '{json.dumps(out)}'")
    user_hooks(hook_table("PreToolUse", hook, "execute"))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch made.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert not (project / "made.txt").exists()
    (result,) = results(fake_openai.requests[1])
    assert "updatedInput that does not fit execute" in result["error"]
    assert "is not a string" in result["error"]


async def test_file_path_is_sent_as_claude_has_it_and_may_be_changed(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """Claude's scripts read ``tool_input.file_path`` (absolute, and not normalised: a
    validator's ``..`` check must see the ``..``), and an ``updatedInput`` that changes it
    moves the write."""
    moved = project / "moved.txt"
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"file_path": str(moved), "content": "hello"},
        }
    }
    seen, log = recorder(tmp_path, then=f"echo '{json.dumps(out)}'")
    user_hooks(hook_table("PreToolUse", seen, "Write"))
    fake_openai.script += [
        Reply(calls=[Call("write", {"path": "sub/../asked.txt", "content": "hello"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    (sent,) = recorded(log)
    assert sent["tool_name"] == "Write"
    assert sent["tool_input"] == {"file_path": f"{project}/sub/../asked.txt", "content": "hello"}
    assert moved.read_text() == "hello"
    assert not (project / "asked.txt").exists()


async def test_continue_false_stops_the_turn_with_its_reason(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    out = {"continue": False, "stopReason": "the build is red: fix it first"}
    hook = script(tmp_path, "stop.sh", f"echo '{json.dumps(out)}'")
    user_hooks(hook_table("PreToolUse", hook))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch made.txt"})]),
        Reply("never asked for"),
    ]
    session = session_for(project, fake_openai)
    with pytest.raises(BaseException) as raised:
        await session.turn("go")
    assert raised.type.__name__ == "CancelledError"
    assert not (project / "made.txt").exists()
    assert len(fake_openai.requests) == 1
    assert any("the build is red: fix it first" in text for text in errors(session))
    assert not session.busy


# -- PostToolUse -----------------------------------------------------------------------------


async def test_post_tool_use_block_and_context_reach_the_model_in_the_result(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    out = {
        "decision": "block",
        "reason": "ruff found 2 problems in a.py",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "ruff 0.5"},
    }
    seen, log = recorder(tmp_path, then=f"echo '{json.dumps(out)}'")
    lint = script(tmp_path, "lint.sh", "echo 'line 3: unused import' >&2\nexit 2")
    user_hooks(hook_table("PostToolUse", seen, "Write") + hook_table("PostToolUse", lint, "Write"))
    fake_openai.script += [
        Reply(calls=[Call("write", {"path": "a.py", "content": "import os\n"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert (project / "a.py").read_text() == "import os\n"  # the tool has run
    (result,) = results(fake_openai.requests[1])
    assert result["hook_feedback"] == "ruff found 2 problems in a.py\n\nline 3: unused import"
    assert result["additional_context"] == "ruff 0.5"
    (sent,) = recorded(log)
    assert sent["hook_event_name"] == "PostToolUse"
    assert sent["tool_response"]["bytes"] == len("import os\n")
    assert sent["tool_input"]["file_path"] == str(project / "a.py")


# -- UserPromptSubmit ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "echo 'no API keys in prompts' >&2\nexit 2",
        """echo '{"decision": "block", "reason": "no API keys in prompts"}'""",
        """echo '{"continue": false, "stopReason": "no API keys in prompts"}'""",
    ],
)
async def test_user_prompt_submit_blocks_the_turn_and_nothing_is_sent(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI, body: str
) -> None:
    hook = script(tmp_path, "no.sh", body)
    user_hooks(hook_table("UserPromptSubmit", hook))
    session = session_for(project, fake_openai)
    with pytest.raises(PromptBlocked, match="the prompt was not sent: no API keys in prompts"):
        await session.turn("my key is sk-123")
    assert fake_openai.requests == []
    assert len(session.conversation) == 0
    assert not session.checkpoints.list()


async def test_user_prompt_submit_context_goes_to_the_model_and_undo_still_finds_the_prompt(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    seen, log = recorder(tmp_path, then="echo 'Current branch: main'")
    out = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "TZ=UTC"}
    }
    as_json = script(tmp_path, "json.sh", f"echo '{json.dumps(out)}'")
    user_hooks(hook_table("UserPromptSubmit", seen) + hook_table("UserPromptSubmit", as_json))
    fake_openai.script += [Reply("fine")]
    session = session_for(project, fake_openai)
    await session.turn("what now?")
    (sent,) = recorded(log)
    assert sent["prompt"] == "what now?" and sent["hook_event_name"] == "UserPromptSubmit"
    content = last_user(fake_openai.requests[0])
    assert content.startswith("what now?\n\n<hook-context>\n")
    assert "Current branch: main\n\nTZ=UTC" in content
    undone = await session.checkpoints.undo()
    assert undone.prompt == "what now?"
    assert len(session.conversation) == 0  # the turn's messages went with it


# -- Stop ------------------------------------------------------------------------------------


async def test_stop_hook_keeps_the_turn_going_with_its_reason_within_the_same_turn(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    log = tmp_path / "stop.jsonl"
    hook = script(
        tmp_path,
        "stop.sh",
        f"""
        input=$(cat)
        echo "$input" >> "{log}"
        case "$input" in *'"last_assistant_message": "done"'*)
            echo 'run the tests first' >&2; exit 2;;
        esac
        """,
    )
    user_hooks(hook_table("Stop", hook))
    fake_openai.script += [Reply("hi"), Reply("done"), Reply("tests pass, done")]
    session = session_for(project, fake_openai)
    await session.turn("hello")
    assert await session.turn("fix it") == "tests pass, done"
    assert len(fake_openai.requests) == 3
    assert "run the tests first" in last_user(fake_openai.requests[2])
    first, second, third = recorded(log)
    assert first["stop_hook_active"] is False and first["last_assistant_message"] == "hi"
    assert second["stop_hook_active"] is False and second["last_assistant_message"] == "done"
    assert third["stop_hook_active"] is True
    assert any("run the tests first" in n.text for n in session.output.history)
    # the continuation belongs to its prompt's turn: rewind both, redo them one by one
    texts = [m.text for m in session.conversation]
    await session.checkpoints.rewind(1, code=False)
    assert len(session.conversation) == 0
    await session.checkpoints.redo()
    assert [m.text for m in session.conversation] == ["hello", "hi"]
    await session.checkpoints.redo()
    assert [m.text for m in session.conversation] == texts


async def test_a_stop_hook_that_always_blocks_is_stopped_after_three_continuations(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    out = {"decision": "block", "reason": "keep going"}
    hook = script(tmp_path, "again.sh", f"echo '{json.dumps(out)}'")
    user_hooks(hook_table("Stop", hook))
    fake_openai.responder = lambda body: Reply("again")
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert len(fake_openai.requests) == 4  # the reply, then 3 continuations
    assert any("kept it going 3 times" in text for text in errors(session))


# -- SessionStart ----------------------------------------------------------------------------


async def test_session_start_context_is_in_the_system_prompt_for_each_new_conversation(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    seen, log = recorder(tmp_path, then="echo 'Open issues: #12 flaky test'")
    user_hooks(hook_table("SessionStart", seen))
    fake_openai.responder = lambda body: Reply("ok")
    session = session_for(project, fake_openai)
    await session.turn("one")
    await session.turn("two")
    assert [r["source"] for r in recorded(log)] == ["startup"]  # once per conversation
    for request in fake_openai.requests:
        assert "Open issues: #12 flaky test" in request["messages"][0]["content"]
    journal = session.id
    session.conversation.clear()
    await session.turn("three")
    assert session.conversation.resume(journal)
    await session.turn("four")
    assert [r["source"] for r in recorded(log)] == ["startup", "clear", "resume"]


# -- running ---------------------------------------------------------------------------------


async def test_a_hook_that_hangs_is_killed_at_its_timeout_with_its_processes(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    pids = tmp_path / "pids"
    hook = script(tmp_path, "hang.sh", f'sleep 30 &\necho "$$ $!" > "{pids}"\nwait')
    user_hooks(hook_table("PreToolUse", hook, timeout=1))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch made.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    started = time.monotonic()
    await session.turn("go")
    assert time.monotonic() - started < 5
    assert (project / "made.txt").exists()  # a timeout blocks nothing
    (said,) = errors(session)
    assert "timed out after 1 s and was stopped" in said
    shell, sleeper = map(int, pids.read_text().split())
    deadline = time.monotonic() + 3
    while (alive(shell) or alive(sleeper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(shell) and not alive(sleeper)


async def test_cancelling_the_turn_kills_a_running_hook(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    import asyncio

    pids = tmp_path / "pids"
    hook = script(tmp_path, "slow.sh", f'sleep 30 &\necho "$$ $!" > "{pids}"\nwait')
    user_hooks(hook_table("PreToolUse", hook))
    fake_openai.script += [Reply(calls=[Call("execute", {"command": "touch made.txt"})])]
    session = session_for(project, fake_openai)
    turn = asyncio.create_task(session.turn("go"))
    for _ in range(200):
        if pids.exists() and pids.read_text().strip():
            break
        await asyncio.sleep(0.02)
    assert session.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    shell, sleeper = map(int, pids.read_text().split())
    deadline = time.monotonic() + 3
    while (alive(shell) or alive(sleeper)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not alive(shell) and not alive(sleeper)
    assert not (project / "made.txt").exists()
    assert session.conversation[-1].result.error == "cancelled by the user"


async def test_untrusted_project_hooks_never_run_and_are_reported_as_skipped(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    marker = tmp_path / "ran"
    hooks = {"PreToolUse": [{"command": f"touch {marker}"}]}
    write(project / ".tui-agent" / "hooks.json", json.dumps(hooks))
    write(project / ".claude" / "settings.json", json.dumps({"hooks": hooks}))
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "touch made.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai, trust=False)
    assert session.workspace.needs_trust
    await session.turn("go")
    assert (project / "made.txt").exists() and not marker.exists()
    skipped = {p.name for p in session.extensions.skipped}
    assert {"hooks.json", "settings.json"} <= skipped
    await session.commands.run_line("/hooks")
    shown = session.output.history[-1].text
    assert "not trusted" in shown and ".claude/settings.json" in shown
    session.workspace.trust(remember=False)
    session.reload()
    fake_openai.script += [Reply(calls=[Call("execute", {"command": "true"})]), Reply("ok")]
    await session.turn("again")
    assert marker.exists()


async def test_claude_settings_json_works_as_users_have_it(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """Claude's nested shape, ``$CLAUDE_PROJECT_DIR`` in the command, Claude's tool names
    in the matcher, other settings and events beside the hooks."""
    script(
        project / ".claude" / "hooks",
        "no-rm.sh",
        """
        command=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])'
        )
        case "$command" in *"rm "*) echo "rm is not allowed: $command" >&2; exit 2;; esac
        echo "$command" >> "$CLAUDE_PROJECT_DIR/.claude/seen.log"
        """,
    )
    settings = {
        "permissions": {"allow": ["Bash(npm run lint)"]},
        "env": {"FOO": "1"},
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/no-rm.sh',
                            "timeout": 30,
                        }
                    ],
                }
            ],
            "PermissionRequest": [{"hooks": [{"type": "command", "command": "log.sh"}]}],
        },
    }
    write(project / ".claude" / "settings.json", json.dumps(settings, indent=2))
    (project / "keep.txt").write_text("keep")
    fake_openai.script += [
        Reply(calls=[Call("read", {"path": "keep.txt"})]),
        Reply(calls=[Call("execute", {"command": "echo hi"})]),
        Reply(calls=[Call("execute", {"command": "rm keep.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert (project / ".claude" / "seen.log").read_text() == "echo hi\n"  # not for read
    assert (project / "keep.txt").exists()
    assert results(fake_openai.requests[-1])[-1]["error"] == "rm is not allowed: rm keep.txt"
    (hook,) = in_force(session).hooks
    assert hook.source == str(project / ".claude" / "settings.json") and hook.timeout == 30
    assert any("PermissionRequest" in note.text for note in session.output.history)


@pytest.mark.parametrize(
    ("matcher", "tool", "runs"),
    [
        ("Bash", "execute", True),
        ("execute", "execute", True),
        ("Write|Edit", "edit", True),
        ("MultiEdit", "edit", True),
        ("LS", "list", True),
        ("Read", "execute", False),
        ("exec", "execute", False),  # the whole name must match
        ("exec.*", "execute", True),
        ("*", "grep", True),
        ("", "mcp_github_search", True),
        ("mcp_.*", "mcp_github_search", True),
        ("bash", "execute", False),  # an alias: hooks match the real name
    ],
)
def test_matchers_take_our_names_and_claudes(matcher: str, tool: str, runs: bool) -> None:
    assert CommandHook("PreToolUse", "true", matcher).matches(tool) is runs


# -- configuration ---------------------------------------------------------------------------


def test_a_wrong_shape_in_config_is_a_config_problem_and_none_of_its_hooks_run(
    project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    user_hooks(f'\n[hooks.PreToolUse]\ncommand = "touch {marker}"\n')  # one bracket pair
    session = create_session(project, trust=True)
    (problem,) = session.extensions.config_problems
    assert problem.path == str(user_config_dir() / "config.toml")
    assert "hooks.PreToolUse must be an array of tables ([[hooks.PreToolUse]]" in problem.error
    assert in_force(session).hooks == []
    assert session.toolbox.hooks_for("execute") == (1, 0)  # the permission hook alone


def test_a_json_hooks_file_with_a_mistake_runs_none_of_its_hooks(project: Path) -> None:
    hooks = {"PreToolUse": [{"command": "true"}, {"matcher": "(", "command": "true"}]}
    write(project / ".tui-agent" / "hooks.json", json.dumps(hooks))
    session = create_session(project, trust=True)
    (problem,) = session.extensions.config_problems
    assert problem.path == str(project / ".tui-agent" / "hooks.json")
    assert "hooks.PreToolUse[1].matcher is not a valid regex" in problem.error
    assert in_force(session).hooks == []


def test_parse_takes_the_flat_and_the_nested_shape_and_says_what_it_does_not_run() -> None:
    hooks, problems, ignored = parse(
        {
            "PreToolUse": [
                {"matcher": "Bash", "command": "a.sh", "timeout": 5},
                {"matcher": "Edit", "hooks": [{"type": "command", "command": "b.sh"}]},
                {"hooks": [{"type": "prompt", "prompt": "is this safe?"}]},
            ],
            "SubagentStart": [{"hooks": [{"type": "command", "command": "c.sh"}]}],
        },
        "settings.json",
    )
    assert problems == []
    assert [(h.matcher, h.command, h.timeout) for h in hooks] == [
        ("Bash", "a.sh", 5.0),
        ("Edit", "b.sh", 60.0),
    ]
    assert len(ignored) == 2 and "SubagentStart" in ignored[1] and '"prompt"' in ignored[0]


# -- /hooks and the toolbox ------------------------------------------------------------------


def test_hooks_command_lists_each_hook_with_its_source(project: Path, tmp_path: Path) -> None:
    user_hooks(
        hook_table("PreToolUse", "jq -r .tool_input.command | grep -q rm", "execute|write")
        + hook_table("Stop", "./check.sh", timeout=5)
    )
    write(
        project / ".tui-agent" / "hooks.json",
        json.dumps({"hooks": {"PostToolUse": [{"matcher": "Write", "command": "fmt.sh"}]}}),
    )
    session = create_session(project, trust=True)
    import asyncio

    asyncio.run(session.commands.run_line("/hooks"))
    shown = session.output.history[-1].text
    rows = [line for line in shown.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [
        "| PreToolUse | `execute\\|write` | `jq -r .tool_input.command \\| grep -q rm` | 60 s "
        "| ~/.config/tui-agent/config.toml |",
        "| PostToolUse | `Write` | `fmt.sh` | 60 s | .tui-agent/hooks.json |",
        "| Stop | all | `./check.sh` | 5 s | ~/.config/tui-agent/config.toml |",
    ]


def test_tool_hooks_are_global_toolbox_hooks_ahead_of_the_permission_hook(
    project: Path,
) -> None:
    plain = create_session(project, trust=True)
    # the permission hook; the memory plugin's after hook (a subfolder's AGENTS.md)
    assert plain.toolbox.hooks_for("read") == (1, 1)
    user_hooks(hook_table("PreToolUse", "true", "Bash") + hook_table("PostToolUse", "true"))
    session = create_session(project, trust=True)
    assert session.toolbox.hooks_for("read") == (2, 2)  # global: in every tool's count
    first = session.toolbox.hooks["before"]["*"][0]
    assert first.__qualname__ == "Engine.pre_tool_use"
    assert os.environ.get("CLAUDE_PROJECT_DIR") is None  # set for the hook's process only


async def test_in_the_app_hooks_show_in_the_tools_panel_hooks_and_a_blocked_prompt(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    from textual.widgets import DataTable

    from tui_agent.testing import chat_text, run_app, send, turn_over, wait_for, wait_for_text

    block = script(tmp_path, "block.sh", "echo 'prompts about prod go to the on-call' >&2\nexit 2")
    user_hooks(
        hook_table("PreToolUse", "true", "Bash")
        + hook_table("PostToolUse", "true")
        + hook_table("UserPromptSubmit", block)
    )
    session = session_for(project, fake_openai)
    async with run_app(session, size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: session.extensions.loaded)
        await pilot.press("ctrl+t")
        await pilot.pause()
        table: DataTable[Any] = pilot.app.query_one("#tools-table", DataTable)
        # before: the permission hook, ours; after: ours, the memory plugin's
        assert str(table.get_cell("read", "hooks")) == "2/2"
        await send(pilot, "/hooks")
        await wait_for_text(pilot, "UserPromptSubmit")
        assert str(block) in chat_text(pilot.app)
        await send(pilot, "restart prod")
        await wait_for_text(pilot, "prompts about prod go to the on-call")
        await turn_over(pilot)
        assert "the prompt was not sent" in chat_text(pilot.app)
        assert fake_openai.requests == []


def test_tui_agent_run_stops_on_a_hooks_mistake_and_on_a_blocked_prompt(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    import subprocess
    import sys

    def run() -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "tui_agent", "run", "hi", "--base-url"]
        argv += [fake_openai.base_url, "--model", "m"]
        return subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=60)

    user_hooks('\n[hooks.PreToolUse]\ncommand = "true"\n')
    mistake = run()
    assert mistake.returncode == 2
    assert "hooks.PreToolUse must be an array of tables" in mistake.stderr
    user_hooks(hook_table("UserPromptSubmit", "echo 'not on Fridays' >&2; exit 2"))
    blocked = run()
    assert blocked.returncode == 1 and blocked.stdout == ""
    assert "the prompt was not sent: not on Fridays" in blocked.stderr
    assert fake_openai.requests == []
