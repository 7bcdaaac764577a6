"""Issue 26: command hooks get Claude Code's protocol, whole. Real hook scripts taken
verbatim from public repositories (``tests/fixtures/claude_hooks``, SOURCES.md) run as real
processes through the real agent (real turns against the testing kit's server, the
bundled plugins and tools); each expectation is what the script does in Claude Code.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import ALLOW_ALL, FIXTURES, write

from tui_agent import Session, create_session
from tui_agent.command_hooks import in_force
from tui_agent.core.util.paths import user_config_dir
from tui_agent.testing import Call, FakeOpenAI, Reply

HOOKS = FIXTURES / "claude_hooks"
PYTHON = shlex.quote(sys.executable)


def session_for(project: Path, server: FakeOpenAI) -> Session:
    return create_session(project, base_url=server.base_url, model="m", trust=True)


def settings(project: Path, hooks: dict[str, Any]) -> None:
    """The project's ``.claude/settings.json`` with this ``hooks`` section."""
    write(project / ".claude" / "settings.json", json.dumps({"hooks": hooks}, indent=2))


def command_hook(command: str, matcher: str = "", **extra: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}


def results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def notes(session: Session) -> list[str]:
    return [note.text for note in session.output.history]


def recorder(folder: Path, name: str, then: str = "") -> tuple[str, Path]:
    """A command that appends its stdin (one line) to ``<name>.jsonl``, then runs ``then``."""
    log = folder / f"{name}.jsonl"
    path = folder / f"{name}.sh"
    path.write_text(f'#!/bin/sh\ncat >> "{log}"\necho >> "{log}"\n{then}\n')
    path.chmod(0o755)
    return str(path), log


def recorded(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


# -- Claude Code's example validator ---------------------------------------------------------


async def test_claude_codes_bash_command_validator_blocks_grep_and_find_name(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    """Its docstring's settings (matcher ``Bash``): a command starting with ``grep`` (no
    pipe) or ``find DIR -name`` is refused with the rule's message on stderr, which the
    model gets; other commands, and other tools, pass."""
    validator = HOOKS / "bash_command_validator_example.py"
    settings(
        project,
        {"PreToolUse": [command_hook(f"{PYTHON} {shlex.quote(str(validator))}", "Bash")]},
    )
    (project / "a.txt").write_text("foo\n")
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "grep foo a.txt > found.txt"})]),
        Reply(calls=[Call("execute", {"command": "find . -name '*.txt' > listed.txt"})]),
        Reply(calls=[Call("execute", {"command": "grep foo a.txt | wc -l > counted.txt"})]),
        Reply(calls=[Call("read", {"path": "a.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("search")
    grep, find, piped, read = results(fake_openai.requests[-1])
    assert grep["error"] == (
        "• Use 'rg' (ripgrep) instead of 'grep' for better performance and features"
    )
    assert find["error"].startswith("• Use 'rg --files | rg pattern' or 'rg --files -g pattern'")
    assert not (project / "found.txt").exists() and not (project / "listed.txt").exists()
    assert piped["exit_status"] == 0 and (project / "counted.txt").read_text().strip() == "1"
    assert "foo" in read["content"]
    assert not [n for n in session.output.history if n.kind == "error"]


# -- a community guard hook ------------------------------------------------------------------


async def test_dislers_pre_tool_use_guard_blocks_rm_rf_and_env_files(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    """disler/claude-code-hooks-mastery's guard, as that repository's settings.json has it
    (matcher ``""``; ``uv run`` is only its launcher: the script needs nothing but Python):
    ``rm -rf`` and any ``.env`` access are refused with exit 2, the rest is logged to
    ``logs/pre_tool_use.json``."""
    guard = project / ".claude" / "hooks" / "pre_tool_use.py"
    guard.parent.mkdir(parents=True)
    shutil.copy(HOOKS / "disler" / "pre_tool_use.py", guard)
    settings(
        project,
        {
            "PreToolUse": [
                command_hook(f'{PYTHON} "$CLAUDE_PROJECT_DIR"/.claude/hooks/pre_tool_use.py')
            ]
        },
    )
    (project / "build").mkdir()
    (project / "build" / "out.o").write_text("object")
    (project / ".env").write_text("API_KEY=secret\n")
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "rm -rf build"})]),
        Reply(calls=[Call("read", {"path": ".env"})]),
        Reply(calls=[Call("execute", {"command": "cat .env > leaked.txt"})]),
        Reply(calls=[Call("write", {"path": ".env.sample", "content": "API_KEY=\n"})]),
        Reply(calls=[Call("execute", {"command": "echo fine > fine.txt"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("clean up")
    rm, read, cat, sample, fine = results(fake_openai.requests[-1])
    assert rm["error"] == "BLOCKED: Dangerous rm command detected and prevented"
    assert (project / "build" / "out.o").exists()
    env_error = (
        "BLOCKED: Access to .env files containing sensitive data is prohibited\n"
        "Use .env.sample for template files instead"
    )
    assert read["error"] == env_error and cat["error"] == env_error
    assert not (project / "leaked.txt").exists()
    assert "error" not in sample and (project / ".env.sample").read_text() == "API_KEY=\n"
    assert fine["exit_status"] == 0 and (project / "fine.txt").exists()
    logged = json.loads((project / "logs" / "pre_tool_use.json").read_text())
    assert [entry["tool_name"] for entry in logged] == ["Write", "Bash"]
    assert logged[0]["tool_input"] == {
        "file_path": str(project / ".env.sample"),
        "content": "API_KEY=\n",
    }
    assert logged[1]["tool_input"] == {"command": "echo fine > fine.txt"}


# -- hookify: a Claude Code plugin and its rule set --------------------------------------------


def install_plugin(project: Path, name: str) -> Path:
    """A Claude Code plugin folder dropped into the project's plugin folder, as is."""
    folder = project / ".agents" / "plugins" / name
    shutil.copytree(HOOKS / name, folder)
    return folder


async def test_hookify_plugin_and_its_example_rules_block_and_warn_as_in_claude_code(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    """hookify's hooks.json runs ``python3 ${CLAUDE_PLUGIN_ROOT}/hooks/pretooluse.py``
    for every tool; its example rules, copied to ``.claude/hookify.*.local.md`` as its
    README says: ``rm -rf`` is denied with the rule's message, an Edit adding
    ``console.log(`` and a write to ``.env`` are warned about and run."""
    install_plugin(project, "hookify")
    for rule in sorted((HOOKS / "hookify" / "examples").glob("*.local.md")):
        write(project / ".claude" / f"hookify.{rule.name}", rule.read_text())
    (project / "build").mkdir()
    (project / "app.js").write_text("function f(x) {\n  return x;\n}\n")
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "rm -rf build"})]),
        Reply(
            calls=[
                Call(
                    "edit",
                    {
                        "path": "app.js",
                        "old": "  return x;",
                        "new": "  console.log(x);\n  return x;",
                    },
                )
            ]
        ),
        Reply(calls=[Call("write", {"path": ".env", "content": "TOKEN=1\n"})]),
        Reply(calls=[Call("read", {"path": "app.js"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    assert {h.plugin_root for h in in_force(session).hooks} == {
        str(project / ".agents" / "plugins" / "hookify")
    }
    await session.turn("go")
    rm, edit, env, read = results(fake_openai.requests[-1])
    assert (project / "build").is_dir()
    assert "PreToolUse hook" in rm["error"] and "denied" in rm["error"].lower()
    said = "\n".join(notes(session))
    assert "**[block-dangerous-rm]**\n⚠️ **Dangerous rm command detected!**" in said
    assert "error" not in edit and "console.log(x);" in (project / "app.js").read_text()
    assert "**[warn-console-log]**\n🔍 **Console.log detected**" in said
    assert "error" not in env and (project / ".env").read_text() == "TOKEN=1\n"
    assert "**[warn-sensitive-files]**\n🔐 **Sensitive file detected**" in said
    assert "error" not in read
    assert "Hookify import error" not in said and "Hookify error" not in said


# -- ralph-wiggum: a Stop hook that reads transcript_path ----------------------------------------


async def test_ralph_wiggum_stop_hook_reads_the_transcript_and_loops_until_the_promise(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    """ralph-wiggum's setup script writes the loop's state; its Stop hook finds the last
    assistant turn in ``transcript_path`` (a ``"role":"assistant"`` line, text blocks in
    ``message.content``), and without ``<promise>DONE</promise>`` in it sends the same
    prompt back; with it, deletes the state and lets the turn end."""
    plugin = install_plugin(project, "ralph-wiggum")
    setup = plugin / "scripts" / "setup-ralph-loop.sh"
    prompt = "Make the flaky test pass"
    argv = ["bash", str(setup), prompt, "--completion-promise", "DONE", "--max-iterations", "5"]
    subprocess.run(argv, cwd=project, check=True, capture_output=True, timeout=30)
    state = project / ".claude" / "ralph-loop.local.md"
    assert state.is_file()
    fake_openai.script += [
        Reply("I looked at the test; it still fails sometimes."),
        Reply("Fixed the race in the fixture. <promise>DONE</promise>"),
    ]
    session = session_for(project, fake_openai)
    reply = await session.turn(prompt)
    assert reply == "Fixed the race in the fixture. <promise>DONE</promise>"
    assert len(fake_openai.requests) == 2
    last_user = [m for m in fake_openai.requests[1]["messages"] if m["role"] == "user"][-1]
    assert prompt in last_user["content"]
    assert not state.exists()  # the promise was found: the loop is over
    said = "\n".join(notes(session))
    assert "🔄 Ralph iteration 2 | To stop: output <promise>DONE</promise>" in said
    assert "No assistant messages found in transcript" not in said


# -- a formatter PostToolUse hook ------------------------------------------------------------


async def test_stranmas_auto_format_hook_formats_python_files_after_write_and_edit(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stranma/claude-code-python-template's formatter (PostToolUse, matcher ``Edit|Write``):
    for ``tool_name`` Edit or Write on a ``.py`` file it runs ``uv run ruff format`` and
    ``uv run ruff check --fix`` on ``tool_input.file_path``; other files are left alone.
    (No ``uv`` here: one on PATH runs the command in this Python environment, as ``uv
    run`` would in a project venv.)"""
    hook = project / ".claude" / "hooks" / "auto-format.sh"
    hook.parent.mkdir(parents=True)
    shutil.copy2(HOOKS / "stranma" / "auto-format.sh", hook)
    shims = tmp_path / "shims"
    shims.mkdir()
    uv = shims / "uv"
    uv.write_text('#!/bin/sh\n[ "$1" = run ] && shift\nexec "$@"\n')
    uv.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:{Path(sys.executable).parent}:{_path()}")
    settings(
        project,
        {
            "PostToolUse": [
                command_hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/auto-format.sh', "Edit|Write")
            ]
        },
    )
    fake_openai.script += [
        Reply(calls=[Call("write", {"path": "a.py", "content": "x=1\ny = [1,2 ,3]\n"})]),
        Reply(calls=[Call("write", {"path": "notes.md", "content": "x=1\n"})]),
        Reply(calls=[Call("edit", {"path": "a.py", "old": "y = [1, 2, 3]", "new": "z=( 4 )"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert (project / "a.py").read_text() == "x = 1\nz = 4\n"
    assert (project / "notes.md").read_text() == "x=1\n"


def _path() -> str:
    import os

    return os.environ.get("PATH", "")


# -- the protocol, field by field ------------------------------------------------------------


async def test_every_tool_reaches_hooks_under_claudes_name_and_field_names(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """tool_name and tool_input in Claude's names for every built-in that has a Claude
    counterpart; paths absolute, never normalised; Bash's timeout in milliseconds."""
    seen, log = recorder(tmp_path, "pre")
    settings(project, {"PreToolUse": [command_hook(seen)]})
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("one\ntwo\n")
    calls = [
        Call("read", {"path": "src/../src/a.py", "offset": 2, "limit": 1}),
        Call("write", {"path": "src/b.py", "content": "b\n"}),
        Call("edit", {"path": "src/a.py", "old": "one", "new": "uno", "replace_all": True}),
        Call("edit", {"path": "src/a.py", "edits": [{"old": "two", "new": "dos"}]}),
        Call("glob", {"pattern": "**/*.py", "path": "src"}),
        Call("grep", {"pattern": "dos", "include": "*.py", "ignore_case": True}),
        Call("list", {"depth": 1}),
        Call("execute", {"command": "true", "timeout": 5}),
    ]
    fake_openai.script += [Reply(calls=[call]) for call in calls] + [Reply("ok")]
    session = session_for(project, fake_openai)
    await session.turn("go")
    got = [(entry["tool_name"], entry["tool_input"]) for entry in recorded(log)]
    assert {entry["permission_mode"] for entry in recorded(log)} == {"default"}  # "ask"
    src = f"{project}/src"
    assert got == [
        ("Read", {"file_path": f"{src}/../src/a.py", "offset": 2, "limit": 1}),
        ("Write", {"file_path": f"{src}/b.py", "content": "b\n"}),
        (
            "Edit",
            {
                "file_path": f"{src}/a.py",
                "old_string": "one",
                "new_string": "uno",
                "replace_all": True,
            },
        ),
        (
            "MultiEdit",
            {"file_path": f"{src}/a.py", "edits": [{"old_string": "two", "new_string": "dos"}]},
        ),
        ("Glob", {"pattern": "**/*.py", "path": src}),
        (
            "Grep",
            {"pattern": "dos", "glob": "*.py", "-i": True, "output_mode": "content", "-n": True},
        ),
        ("LS", {"path": str(project), "depth": 1}),
        ("Bash", {"command": "true", "timeout": 5000}),
    ]
    assert (project / "src" / "a.py").read_text() == "uno\ndos\n"


async def test_tool_response_has_claudes_fields(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    seen, log = recorder(tmp_path, "post")
    settings(project, {"PostToolUse": [command_hook(seen)]})
    fake_openai.script += [
        Reply(calls=[Call("write", {"path": "a.txt", "content": "hello\n"})]),
        Reply(calls=[Call("edit", {"path": "a.txt", "old": "hello", "new": "bye"})]),
        Reply(calls=[Call("read", {"path": "a.txt"})]),
        Reply(calls=[Call("execute", {"command": "echo out; echo err >&2"})]),
        Reply(calls=[Call("glob", {"pattern": "*.txt"})]),
        Reply(calls=[Call("grep", {"pattern": "bye"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    write_, edit, read, bash, glob, grep = (entry["tool_response"] for entry in recorded(log))
    path = str(project / "a.txt")
    assert write_["filePath"] == path and write_["success"] is True
    assert write_["type"] == "create" and write_["content"] == "hello\n"
    assert edit["filePath"] == path and edit["oldString"] == "hello"
    assert edit["newString"] == "bye" and edit["replaceAll"] is False and edit["success"] is True
    assert read["type"] == "text"
    assert read["file"] == {
        "filePath": path,
        "content": "bye",
        "numLines": 1,
        "startLine": 1,
        "totalLines": 1,
    }
    assert bash["stdout"] == "out\nerr\n" and bash["stderr"] == ""  # ours merges them
    assert bash["interrupted"] is False and bash["exit_status"] == 0
    assert glob["filenames"] == [path] and glob["numFiles"] == 1 and glob["truncated"] is False
    assert grep["mode"] == "content" and grep["content"] == "a.txt:1: bye"
    assert grep["numFiles"] == 1 and grep["filenames"] == ["a.txt"]


async def test_updated_input_in_claudes_names_is_mapped_back(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    edit_out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {
                "file_path": str(project / "a.txt"),
                "old_string": "one",
                "new_string": "ONE",
                "replace_all": True,
            },
        }
    }
    bash_out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"command": "echo slow > slow.txt", "timeout": 2000},
        }
    }
    edit_hook = tmp_path / "edit.sh"
    edit_hook.write_text(f"#!/bin/sh\necho '{json.dumps(edit_out)}'\n")
    bash_hook = tmp_path / "bash.sh"
    bash_hook.write_text(f"#!/bin/sh\necho '{json.dumps(bash_out)}'\n")
    for hook in (edit_hook, bash_hook):
        hook.chmod(0o755)
    seen, log = recorder(tmp_path, "after")
    settings(
        project,
        {
            "PreToolUse": [
                command_hook(str(edit_hook), "Edit"),
                command_hook(str(bash_hook), "Bash"),
            ],
            "PostToolUse": [command_hook(seen)],
        },
    )
    (project / "a.txt").write_text("one one\n")
    fake_openai.script += [
        Reply(calls=[Call("edit", {"path": "a.txt", "old": "x", "new": "y"})]),
        Reply(calls=[Call("execute", {"command": "echo fast > fast.txt", "timeout": 30})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    assert (project / "a.txt").read_text() == "ONE ONE\n"
    assert (project / "slow.txt").exists() and not (project / "fast.txt").exists()
    edit, bash = recorded(log)
    assert edit["tool_input"]["old_string"] == "one" and edit["tool_input"]["replace_all"]
    assert bash["tool_input"] == {"command": "echo slow > slow.txt", "timeout": 2000}


# -- MCP tools go by their mcp__ alias ---------------------------------------------------------


async def test_an_mcp_tool_is_named_by_its_mcp_alias_and_claude_matchers_fire(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    seen, log = recorder(tmp_path, "mcp")
    settings(project, {"PreToolUse": [command_hook(seen, "mcp__git__.*")]})
    session = session_for(project, fake_openai)
    session.toolbox.add(
        "git_git_status",
        handler=lambda args: {"output": "clean"},
        description="status",
        params={"repo_path": {"type": "string"}},
        aliases=["mcp__git__git_status"],
    )
    fake_openai.script += [
        Reply(calls=[Call("git_git_status", {"repo_path": "."})]),
        Reply("ok"),
    ]
    await session.turn("status?")
    (entry,) = recorded(log)
    assert entry["tool_name"] == "mcp__git__git_status"
    assert entry["tool_input"] == {"repo_path": "."}


# -- "if", CLAUDE_PLUGIN_ROOT and CLAUDE_PROJECT_DIR --------------------------------------------


async def test_if_conditions_decide_which_calls_run_the_hook(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """``"if": "Bash(git commit:*)"`` runs the hook for ``git commit …`` only (a part of a
    compound command counts); ``"if": "Write(*.ts)"`` for TypeScript files only."""
    block = "echo 'no commits from the agent' >&2; exit 2"
    ts = "echo 'no TypeScript here' >&2; exit 2"
    hooks = {
        "PreToolUse": [
            command_hook(block, "Bash", **{"if": "Bash(git commit:*)"}),
            command_hook(ts, "Write|Edit", **{"if": "Write(*.ts)"}),
        ]
    }
    settings(project, hooks)
    fake_openai.script += [
        Reply(calls=[Call("execute", {"command": "echo hi > hi.txt"})]),
        Reply(calls=[Call("execute", {"command": "git commit -m wip"})]),
        Reply(calls=[Call("execute", {"command": "cd . && git commit -am wip"})]),
        Reply(calls=[Call("write", {"path": "src/app.ts", "content": "x"})]),
        Reply(calls=[Call("write", {"path": "src/app.py", "content": "x"})]),
        Reply("ok"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("go")
    await session.commands.run_line("/hooks")
    assert "| PreToolUse | `Bash` if `Bash(git commit:*)` |" in notes(session)[-1]
    hi, commit, compound, ts_write, py_write = results(fake_openai.requests[-1])
    assert hi["exit_status"] == 0 and (project / "hi.txt").exists()
    assert commit["error"] == "no commits from the agent"
    assert compound["error"] == "no commits from the agent"
    assert ts_write["error"] == "no TypeScript here" and not (project / "src" / "app.ts").exists()
    assert "error" not in py_write and (project / "src" / "app.py").exists()


def test_an_if_that_is_not_a_rule_is_a_load_problem_and_if_on_stop_is_said(
    project: Path, tmp_path: Path
) -> None:
    settings(project, {"PreToolUse": [command_hook("true", "Bash", **{"if": "Bash(git"})]})
    session = create_session(project, trust=True)
    (problem,) = session.extensions.config_problems
    assert "hooks.PreToolUse[0].hooks[0].if is not a permission rule" in problem.error
    assert in_force(session).hooks == []
    settings(project, {"Stop": [command_hook("true", **{"if": "Bash(git commit:*)"})]})
    session = create_session(project, trust=True)
    assert in_force(session).hooks == []
    assert any('Stop hook with "if"' in text for text in notes(session))


async def test_plugin_root_and_project_dir_expand_in_commands(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """``${CLAUDE_PLUGIN_ROOT}``: a user plugin's folder for its hooks/hooks.json, the
    folder of the settings file for the rest."""
    out = tmp_path / "roots.txt"
    line = f'echo "${{CLAUDE_PLUGIN_ROOT}}|${{CLAUDE_PROJECT_DIR}}" >> "{out}"'
    plugin = user_config_dir() / "plugins" / "tellroot"
    write(
        plugin / "hooks" / "hooks.json",
        json.dumps({"description": "x", "hooks": {"UserPromptSubmit": [command_hook(line)]}}),
    )
    settings(project, {"UserPromptSubmit": [command_hook(line)]})
    write(user_config_dir() / "config.toml", ALLOW_ALL)
    fake_openai.script += [Reply("ok")]
    session = session_for(project, fake_openai)
    await session.turn("hi")
    assert out.read_text().splitlines() == [
        f"{plugin}|{project}",
        f"{project / '.claude'}|{project}",
    ]


# -- transcript_path ---------------------------------------------------------------------------


async def test_transcript_path_is_a_claude_transcript_kept_in_step(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    copies = tmp_path / "copies"
    copies.mkdir()
    body = textwrap.dedent(
        f"""
        n=$(ls "{copies}" | wc -l)
        cp "$(jq -r .transcript_path)" "{copies}/$n.jsonl"
        """
    )
    hook = tmp_path / "copy.sh"
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)
    settings(project, {"Stop": [command_hook(str(hook))]})
    fake_openai.script += [
        Reply("first answer"),
        Reply("let me look", calls=[Call("execute", {"command": "echo hi"}, id="call-1")]),
        Reply("second answer"),
    ]
    session = session_for(project, fake_openai)
    await session.turn("one")
    await session.turn("two")
    first = [json.loads(line) for line in (copies / "0.jsonl").read_text().splitlines()]
    second_text = (copies / "1.jsonl").read_text()
    second = [json.loads(line) for line in second_text.splitlines()]
    assert [(e["type"], e["message"]["role"]) for e in first] == [
        ("user", "user"),
        ("assistant", "assistant"),
    ]
    assert first[0]["message"]["content"] == [{"type": "text", "text": "one"}]
    assert second[: len(first)] == first  # appended, not rewritten
    kinds = [block["type"] for e in second[2:] for block in e["message"]["content"]]
    assert kinds == ["text", "text", "tool_use", "tool_result", "text"]
    tool_use = second[3]["message"]["content"][1]
    assert tool_use == {
        "type": "tool_use",
        "id": "call-1",
        "name": "Bash",
        "input": {"command": "echo hi"},
    }
    result = second[4]["message"]["content"][0]
    assert result["tool_use_id"] == "call-1" and result["is_error"] is False
    assert [e["parentUuid"] for e in second[1:]] == [e["uuid"] for e in second[:-1]]
    assert {e["sessionId"] for e in second} == {session.id}
    last = [line for line in second_text.splitlines() if '"role":"assistant"' in line][-1]
    assert json.loads(last)["message"]["content"] == [{"type": "text", "text": "second answer"}]


@pytest.mark.parametrize(
    ("rule", "tool", "sent", "fits"),
    [
        ("Bash", "execute", {"command": "ls"}, True),
        ("Bash(npm run test:*)", "execute", {"command": "npm run test -- -k x"}, True),
        ("Bash(npm run test:*)", "execute", {"command": "npm run lint"}, False),
        ("Bash(git * main)", "execute", {"command": "git push origin main"}, True),
        ("Bash(ls *)", "execute", {"command": "lsof"}, False),
        ("Bash(rm -rf build)", "execute", {"command": "rm -rf build"}, True),
        ("execute(git commit:*)", "execute", {"command": "git commit"}, True),
        ("Edit(*.ts)", "edit", {"file_path": "/p/src/deep/a.ts"}, True),
        ("Edit(src/**)", "edit", {"file_path": "/p/src/deep/a.py"}, True),
        ("Edit(src/**)", "edit", {"file_path": "/p/lib/a.py"}, False),
        ("Read(//etc/**)", "read", {"file_path": "/etc/passwd"}, True),
        ("Write(*.ts)", "edit", {"file_path": "/p/a.ts"}, False),  # another tool
        ("Read", "glob", {"pattern": "*"}, False),
        ("mcp__git", "git_git_status", {}, True),
        ("mcp__git__git_status", "git_git_status", {}, True),
        ("mcp__github", "git_git_status", {}, False),
    ],
)
def test_if_rules_follow_claudes_permission_rule_syntax(
    rule: str, tool: str, sent: dict[str, Any], fits: bool
) -> None:
    from tui_agent.core.hooks.claude_names import claude_name, rule_matches, rule_problem

    assert rule_problem(rule) is None
    claude = claude_name(tool, sent, ["mcp__git__git_status"] if tool.startswith("git_") else [])
    assert rule_matches(rule, tool, claude, sent, Path("/p")) is fits
