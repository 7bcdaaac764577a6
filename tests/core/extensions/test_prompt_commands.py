"""Issue 18, Markdown commands: prompt templates in ``.md`` files run as slash commands.

The folders (user, ``.tui-agent``, ``.claude``, ``.opencode``), names, front matter, the
template's parts ($ARGUMENTS, $1…$9, @path, !`command`), template errors that send
nothing, trust, clashes and /reload; real turns through the real openai client against the
testing kit's server, and the real app under Pilot."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from conftest import write

import tui_agent
from tui_agent import create_session
from tui_agent.core.extensions import prompt_commands
from tui_agent.core.extensions.commands import complete
from tui_agent.testing import (
    FakeOpenAI,
    Reply,
    chat_text,
    run_app,
    send,
    wait_for,
    wait_for_text,
)

REVIEW = """\
---
description: "Review a file for bugs"
argument-hint: [file] [focus]
allowed-tools:
  - Bash(git diff:*)
  - Read
model: claude-3-5-haiku-20241022
---
Review $0 with care, above all $1.
"""


def sent(server: FakeOpenAI) -> list[str]:
    """The last user message of every request the server got."""
    return [
        next(m["content"] for m in reversed(r["messages"]) if m["role"] == "user")
        for r in server.requests
    ]


def notes(session: tui_agent.Session) -> list[str]:
    return [note.text for note in session.output.history]


def errors(session: tui_agent.Session) -> list[str]:
    return [note.text for note in session.output.history if note.kind == "error"]


async def run(session: tui_agent.Session, line: str) -> None:
    assert await session.commands.run_line(line)


def user_command(name: str, text: str) -> Path:
    from tui_agent.core.util.paths import user_config_dir

    return write(user_config_dir() / "commands" / name, text)


# -- folders and names ------------------------------------------------------------------------


async def test_a_user_command_sends_its_prompt_as_a_turn(project: Path) -> None:
    user_command("hello.md", "Say hello to $ARGUMENTS.\n")
    async with FakeOpenAI([Reply("Hello, world!")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        assert "/hello" in session.commands.names

        await run(session, "/hello the whole world")

        assert sent(server) == ["Say hello to the whole world."]
        messages = session.conversation.messages
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert messages[0]["content"] == "Say hello to the whole world."
        assert messages[1]["content"] == "Hello, world!"
        assert errors(session) == []


@pytest.mark.parametrize(
    "folder",
    [".tui-agent/commands", ".claude/commands", ".opencode/command", ".opencode/commands"],
)
async def test_each_project_folder_gives_commands(project: Path, folder: str) -> None:
    write(project / folder / "explain.md", "Explain $ARGUMENTS simply.\n")
    async with FakeOpenAI([Reply("It is simple.")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        label = folder.split("/")[0]
        assert (
            session.commands.get("explain").description == f"Explain $ARGUMENTS simply. ({label})"
        )

        await run(session, "/explain monads")

        assert sent(server) == ["Explain monads simply."]


async def test_sub_folders_give_folder_colon_name(project: Path) -> None:
    write(project / ".claude" / "commands" / "git" / "commit.md", "Write a commit message.\n")
    write(project / ".claude" / "commands" / "a" / "b" / "deep.md", "Deep.\n")
    write(project / ".claude" / "commands" / ".hidden" / "no.md", "Not a command.\n")
    write(project / ".claude" / "commands" / "notes.txt", "Not a command.\n")
    session = create_session(project, trust=True)

    markdown = {n for n, _ in session.commands if session.commands.get(n).source == "markdown"}
    assert markdown == {"/git:commit", "/a:b:deep", "/init"}  # /init: the bundled one


async def test_a_project_in_a_parent_folder_is_found_by_its_command_folder(project: Path) -> None:
    write(project / ".claude" / "commands" / "up.md", "From the top.\n")
    inner = project / "src" / "pkg"
    inner.mkdir(parents=True)
    session = create_session(inner, trust=True)

    assert session.workspace.project == project
    assert "/up" in session.commands.names


# -- front matter -----------------------------------------------------------------------------


async def test_front_matter_shows_in_help_palette_listing_and_completion(project: Path) -> None:
    write(project / ".claude" / "commands" / "review.md", REVIEW)
    session = create_session(project, trust=True)

    described = dict(session.commands)["/review"]
    assert described == "Review a file for bugs — /review [file] [focus] (.claude)"
    await run(session, "/help")
    assert (
        "| `/review` | Review a file for bugs — /review [file] [focus] (.claude) |"
        in notes(session)[-1]
    )
    assert complete("/rev", session.commands).candidates == ["/review"]
    assert session.extensions.problems == []  # allowed-tools and model: ignored, no problem


def test_front_matter_parsing() -> None:
    meta, body = prompt_commands.parse(
        "---\n"
        "description: 'It''s quoted' # a comment\n"
        'argument-hint: "[pr] \\"x\\""\n'
        "plain: value # a comment\n"
        "Folded: >\n"
        "  one\n"
        "  two\n"
        "tools:\n"
        "  - Bash\n"
        "---\n"
        "\n"
        "The body.\n"
    )
    assert meta == {
        "description": "It's quoted",
        "argument-hint": '[pr] "x"',
        "plain": "value",
        "folded": "one two",
        "tools": "",
    }
    assert body == "The body.\n"
    assert prompt_commands.parse("No front matter.\n---\n") == ({}, "No front matter.\n---\n")
    with pytest.raises(ValueError, match="never closed"):
        prompt_commands.parse("---\ndescription: x\nbody\n")


async def test_a_file_whose_front_matter_is_not_closed_is_a_load_problem(project: Path) -> None:
    bad = write(project / ".claude" / "commands" / "bad.md", "---\ndescription: x\nBody.\n")
    session = create_session(project, trust=True)

    assert "/bad" not in session.commands.names
    [problem] = session.extensions.problems
    assert problem.path == str(bad) and "never closed" in problem.error


async def test_without_a_description_the_first_line_is_shown(project: Path) -> None:
    write(project / ".tui-agent" / "commands" / "t.md", "\n# Write the tests\n\nFor $1.\n")
    session = create_session(project, trust=True)

    assert dict(session.commands)["/t"] == "Write the tests (.tui-agent)"


# -- the template -----------------------------------------------------------------------------


async def test_arguments_and_positional_words(project: Path) -> None:
    write(project / ".claude" / "commands" / "review.md", REVIEW)
    write(project / ".claude" / "commands" / "nine.md", "$0|$1|$2|$9|$ARGUMENTS\n")
    write(project / ".claude" / "commands" / "plain.md", "Summarise the project.\n")
    script = [Reply("ok"), Reply("ok"), Reply("ok"), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, '/review src/app.py "error handling"')
        await run(session, "/nine a 'b c'")
        await run(session, "/plain in two lines")
        await run(session, "/plain")

        assert sent(server) == [
            "Review src/app.py with care, above all error handling.",
            "a|b c|$2|$9|a 'b c'",  # Claude Code: from 0; one past the last word kept
            "Summarise the project.\n\nARGUMENTS: in two lines",  # not lost without a $
            "Summarise the project.",
        ]


async def test_unbalanced_quotes_are_an_error_and_nothing_is_sent(project: Path) -> None:
    write(project / ".claude" / "commands" / "review.md", REVIEW)
    async with FakeOpenAI([Reply("never")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, '/review "src/app.py')

        assert server.requests == []
        [error] = errors(session)
        assert error.startswith("error: /review (.claude/commands/review.md): the arguments")
        assert "No closing quotation" in error and "Nothing was sent." in error


async def test_at_path_attaches_the_file(project: Path) -> None:
    (project / "notes.md").write_text("# Notes\nbuy milk\n")
    write(project / ".claude" / "commands" / "todo.md", "Turn @notes.md into tasks for $0.\n")
    async with FakeOpenAI([Reply("1. buy milk")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/todo @me")

        [message] = sent(server)
        assert message == (
            "Turn @notes.md into tasks for @me.\n\n"
            "Attached file: notes.md (2 lines)\n```md\n# Notes\nbuy milk\n```"
        )


async def test_a_missing_at_path_is_an_error_and_nothing_is_sent(project: Path) -> None:
    write(
        project / ".claude" / "commands" / "todo.md", "Turn @notes.md into tasks.\n!`touch ran`\n"
    )
    async with FakeOpenAI([Reply("never")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/todo")

        assert server.requests == []
        assert session.conversation.messages == []
        assert not (project / "ran").exists()  # the file is read before any command runs
        [error] = errors(session)
        assert error.startswith("error: /todo (.claude/commands/todo.md): @notes.md: no such file")
        assert "Nothing was sent." in error


async def test_a_command_puts_its_output_in_the_prompt(project: Path) -> None:
    (project / "a b.txt").write_text("x\n")
    write(
        project / ".claude" / "commands" / "where.md",
        "Folder: !`pwd`\nWords: !`printf '%s;' $0 $1`\nMail: !`echo someone@example.com`\n",
    )
    async with FakeOpenAI([Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/where 'a b.txt' $HOME")

        assert sent(server) == [
            f"Folder: {project.resolve()}\nWords: a b.txt;$HOME;\nMail: someone@example.com"
        ]


async def test_arguments_never_become_commands(project: Path) -> None:
    write(project / ".claude" / "commands" / "say.md", "Say: $ARGUMENTS\n")
    async with FakeOpenAI([Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/say !`touch pwned`")

        assert sent(server) == ["Say: !`touch pwned`"]
        assert not (project / "pwned").exists()


async def test_a_failing_command_is_an_error_and_nothing_is_sent(project: Path) -> None:
    write(
        project / ".claude" / "commands" / "fail.md",
        "Before: !`echo fine`\nThen: !`echo oops >&2; exit 3`\n",
    )
    async with FakeOpenAI([Reply("never")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/fail")

        assert server.requests == []
        assert session.conversation.messages == []
        assert errors(session) == [
            "error: /fail (.claude/commands/fail.md): !`echo oops >&2; exit 3` failed with "
            "exit status 3: oops. Nothing was sent."
        ]


async def test_a_command_that_hangs_is_stopped_at_its_timeout(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prompt_commands, "COMMAND_TIMEOUT", 0.5)
    write(project / ".claude" / "commands" / "hang.md", "!`(sleep 1; touch late) & sleep 30`\n")
    async with FakeOpenAI([Reply("never")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/hang")

        assert server.requests == []
        assert errors(session) == [
            "error: /hang (.claude/commands/hang.md): !`(sleep 1; touch late) & sleep 30` did "
            "not finish in 0.5 s and was stopped. Nothing was sent."
        ]
        await asyncio.sleep(1.5)
        assert not (project / "late").exists()  # what it started was stopped too


# -- trust, clashes, reload -------------------------------------------------------------------


async def test_an_untrusted_project_has_no_commands_and_they_are_skipped(project: Path) -> None:
    files = [
        write(project / ".claude" / "commands" / "x.md", "!`touch ran`\n"),
        write(project / ".opencode" / "command" / "y.md", "Y\n"),
    ]
    user_command("mine.md", "Mine.\n")
    session = create_session(project)

    assert "/x" not in session.commands and "/y" not in session.commands
    assert "/mine" in session.commands  # the user's own folder needs no trust
    assert sorted(session.extensions.skipped) == sorted(files)
    assert session.workspace.needs_trust is True

    session.workspace.trust(remember=False)

    await session.reload()
    assert "/x" in session.commands and "/y" in session.commands
    assert session.extensions.skipped == []


async def test_project_commands_win_over_the_users_and_the_clash_is_said(project: Path) -> None:
    user_command("review.md", "The user's review.\n")
    write(project / ".opencode" / "command" / "review.md", "opencode's review.\n")
    write(project / ".claude" / "commands" / "review.md", "Claude's review.\n")
    async with FakeOpenAI([Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/review")

        assert sent(server) == ["Claude's review."]
        said = [n for n in notes(session) if n.startswith("Markdown command")]
        assert said == [
            "Markdown command /review (.claude/commands/review.md) is used; "
            "/review (.opencode/command/review.md) has the same name.",
            "Markdown command /review (.claude/commands/review.md) is used; "
            "/review (~/.config/tui-agent/commands/review.md) has the same name.",
        ]


GREET_PLUGIN = """\
import tui_agent


@tui_agent.setup("greet")
def greet(session):
    session.commands.register("greet", description="Greet", handler=lambda: None)
"""


async def test_a_plugins_command_keeps_its_name(project: Path) -> None:
    from tui_agent.core.util.paths import user_config_dir

    write(user_config_dir() / "plugins" / "greet.py", GREET_PLUGIN)
    greet_file = write(project / ".claude" / "commands" / "greet.md", "Greet me.\n")
    session = create_session(project, trust=True)

    assert session.commands.get("greet").source != "markdown"
    [problem] = session.extensions.problems
    assert problem.path == str(greet_file)
    assert "/greet is already a command (from user:greet.py)" in problem.error
    assert "rename the file" in problem.error


async def test_reload_reads_the_files_again(project: Path) -> None:
    folder = project / ".tui-agent" / "commands"
    write(folder / "one.md", "One.\n")
    session = create_session(project, trust=True)
    assert "/one" in session.commands and "/two" not in session.commands

    write(folder / "two.md", "---\ndescription: The second\n---\nTwo.\n")
    (folder / "one.md").unlink()
    await run(session, "/reload")

    assert "/one" not in session.commands
    assert dict(session.commands)["/two"] == "The second (.tui-agent)"


# -- the app ----------------------------------------------------------------------------------


async def test_in_the_app_a_command_shows_the_prompt_it_sent(project: Path) -> None:
    (project / "a.py").write_text("print('hi')\n")
    write(
        project / ".claude" / "commands" / "review.md",
        "---\ndescription: Review\n---\nReview @a.py for $ARGUMENTS.\n",
    )
    async with FakeOpenAI([Reply("Looks fine.")]) as server:
        session = create_session(
            project, base_url=server.base_url, model="m", trust=True, load=False
        )
        async with run_app(session) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)
            await send(pilot, "/review typos")
            text = await wait_for_text(pilot, "Looks fine.")
            await wait_for(pilot, lambda: not session.busy)

        assert sent(server) == [
            "Review @a.py for typos.\n\nAttached file: a.py (1 line)\n```py\nprint('hi')\n```"
        ]
        shown = text.index("/review typos")
        prompt = text.index("Review @a.py for typos.", shown)
        assert "📎 a.py (1 line)" in text[prompt:]
        assert prompt < text.index("Looks fine.")
        assert "print('hi')" not in text  # the file's text is sent, not shown
        session.conversation.journal.close()


async def test_in_the_app_escape_cancels_a_commands_turn(project: Path) -> None:
    write(project / ".claude" / "commands" / "slow.md", "Talk slowly.\n")
    slow = Reply(" ".join(f"word{n}" for n in range(60)), delay=0.1)
    async with FakeOpenAI([slow]) as server:
        session = create_session(
            project, base_url=server.base_url, model="m", trust=True, load=False
        )
        async with run_app(session) as pilot:
            app = pilot.app
            await wait_for(pilot, lambda: session.extensions.loaded)
            await send(pilot, "/slow")
            await wait_for_text(pilot, "word1")
            assert session.busy
            await pilot.press("escape")
            await wait_for(pilot, lambda: not session.busy)
            await app.workers.wait_for_complete()
            await wait_for_text(pilot, "Cancelled.")
            assert "word59" not in chat_text(app)  # type: ignore[arg-type]
        session.conversation.journal.close()


# -- the README's example ---------------------------------------------------------------------


def readme_example() -> str:
    text = (Path(tui_agent.__file__).resolve().parents[1] / "README.md").read_text()
    part = text[text.index("### Markdown commands") :]
    start = part.index("```markdown\n") + len("```markdown\n")
    return part[start : part.index("```\n", start)]


async def test_the_readme_example_runs_as_written(project: Path) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)

    (project / ".git").rmdir()
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "0")
    write(project / "src" / "app.py", "x = 1\n")
    git("add", "src/app.py")
    (project / "src" / "app.py").write_text("x = 2\n")
    write(project / ".claude" / "commands" / "review.md", readme_example())
    async with FakeOpenAI([Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        assert dict(session.commands)["/review"] == (
            "Review a file for bugs — /review FILE [FOCUS] (.claude)"
        )

        await run(session, '/review src/app.py "error handling"')

        [message] = sent(server)
        assert message.startswith(
            "Review @src/app.py for bugs, above all error handling. What changed in it:\n"
            "diff --git a/src/app.py b/src/app.py\n"
        )
        assert "\n-x = 1\n+x = 2\n\nAttached file: src/app.py (1 line)\n```py\nx = 2\n```" in (
            message
        )


async def test_in_the_app_escape_stops_a_commands_shell_command(project: Path) -> None:
    write(project / ".claude" / "commands" / "hang.md", "!`(sleep 2; touch late) & sleep 30`\n")
    async with FakeOpenAI([Reply("never")]) as server:
        session = create_session(
            project, base_url=server.base_url, model="m", trust=True, load=False
        )
        async with run_app(session) as pilot:
            app = pilot.app
            await wait_for(pilot, lambda: session.extensions.loaded)
            await send(pilot, "/hang")
            await wait_for(pilot, lambda: session.busy)
            prompt = app.query_one("#prompt")
            await wait_for(pilot, lambda: "working…" in str(prompt.border_subtitle))
            await pilot.press("escape")
            await wait_for(pilot, lambda: not session.busy, timeout=3)
            await app.workers.wait_for_complete()
            await wait_for_text(pilot, "Cancelled.")
            await asyncio.sleep(2.5)
        assert not (project / "late").exists()
        assert server.requests == []
        session.conversation.journal.close()


async def test_the_palette_shows_the_description_and_argument_hint(project: Path) -> None:
    from textual.command import CommandList, CommandPalette

    write(project / ".claude" / "commands" / "review.md", REVIEW.replace("[file]", "FILE [F]"))
    session = create_session(project, trust=True, load=False)
    async with run_app(session) as pilot:
        app = pilot.app
        await wait_for(pilot, lambda: session.extensions.loaded)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"review")

        def shown() -> list[str]:
            if not isinstance(app.screen, CommandPalette):
                return []
            options = app.screen.query_one(CommandList)
            prompts = [options.get_option_at_index(i).prompt for i in range(options.option_count)]
            return [str(getattr(p, "plain", p)) for p in prompts]

        await wait_for(pilot, lambda: any("/review" in text for text in shown()))
        [text] = [text for text in shown() if "/review" in text]
        assert "Review a file for bugs — /review FILE [F] [focus] (.claude)" in text
    session.conversation.journal.close()


# -- issue 26: real command files, user-level folders, bundled names, quoting, headless ------
# The files in tests/fixtures/commands/ are taken verbatim from public repositories
# (tests/fixtures/commands/SOURCES.md); each expectation is written from the documentation
# of the agent they were written for.

FIXTURES = Path(__file__).parents[2] / "fixtures" / "commands"
CLAUDE_FILES = FIXTURES / "claude-code"
OPENCODE_FILES = FIXTURES / "opencode"
COMMIT_COMMANDS = ["git status", "git diff HEAD", "git branch --show-current"]
COMMIT_COMMANDS.append("git log --oneline -10")


def copy_fixture(source: Path, target: Path) -> Path:
    return write(target, source.read_text(encoding="utf-8"))


def body_of(source: Path) -> str:
    """The file without its front matter: what Claude Code and opencode send."""
    return source.read_text(encoding="utf-8").split("---\n", 2)[2]


def shell(command: str, cwd: Path) -> str:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True)
    return done.stdout


def git_project(project: Path) -> None:
    """A git repository with one commit, a staged change and an unstaged one."""

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)

    if (project / ".git").is_dir() and not any((project / ".git").iterdir()):
        (project / ".git").rmdir()
    git("init", "-q", "-b", "main")
    write(project / "src" / "app.py", "x = 1\n")
    write(project / "README.md", "# app\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "First commit")
    (project / "src" / "app.py").write_text("x = 2\n")
    (project / "README.md").write_text("# app\n\nNow with a README.\n")
    git("add", "README.md")


def home() -> Path:
    return Path.home()


async def test_claude_user_commands_are_read_from_the_home_folder(project: Path) -> None:
    # Claude Code: "Personal commands: ~/.claude/commands/"; each !`command` is replaced by
    # its output before the prompt is sent.
    git_project(project)
    copy_fixture(CLAUDE_FILES / "commit.md", home() / ".claude" / "commands" / "commit.md")
    async with FakeOpenAI([Reply("Committed.")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")  # untrusted
        assert dict(session.commands)["/commit"] == "Create a git commit (~/.claude)"

        await run(session, "/commit")

        body = body_of(CLAUDE_FILES / "commit.md")
        for command in COMMIT_COMMANDS:
            body = body.replace(f"!`{command}`", shell(command, project).rstrip("\n"))
        assert sent(server) == [body.strip()]
        assert "Changes to be committed" in sent(server)[0]
        assert errors(session) == []


@pytest.mark.parametrize("folder", ["command", "commands"])
async def test_opencode_user_commands_are_read_from_its_config_folder(
    project: Path, folder: str
) -> None:
    # opencode: "Global: ~/.config/opencode/commands/" (and the older command/); $ARGUMENTS
    # is what was typed; each !`command` is replaced by its output, as it is.
    git_project(project)
    source = OPENCODE_FILES / "review-uncommitted.md"
    copy_fixture(source, home() / ".config" / "opencode" / folder / "review-uncommitted.md")
    async with FakeOpenAI([Reply("Reviewed.")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        assert dict(session.commands)["/review-uncommitted"].endswith("(~/.config/opencode)")

        await run(session, "/review-uncommitted src/app.py")

        body = body_of(source).replace("$ARGUMENTS", "src/app.py")
        for command in [
            "git status --short",
            "git diff --stat --cached",
            "git diff --stat",
            "git diff --cached",
            "git diff",
        ]:
            body = body.replace(f"!`{command}`", shell(command, project), 1)
        assert sent(server) == [body.strip()]
        assert "+Now with a README." in sent(server)[0] and "-x = 1" in sent(server)[0]


async def test_an_opencode_file_with_shell_examples_in_its_prose_is_sent_as_opencode_sends_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # opencode runs each !`…` of the prose and sends the prompt even when one fails (its
    # output, empty then, goes in); here `agentic metadata` is no command at all. Code
    # (a fenced block, an inline code span) is text.
    git_project(project)
    bin_folder = tmp_path / "bin"
    fake_npm = write(bin_folder / "npm", "#!/bin/sh\necho fake npm $1\n")
    fake_npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}:{os.environ['PATH']}")
    source = OPENCODE_FILES / "review_command.md"
    copy_fixture(source, home() / ".config" / "opencode" / "commands" / "review_command.md")
    async with FakeOpenAI([Reply("Reviewed.")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")

        await run(session, "/review_command .opencode/command/x.md")

        assert errors(session) == []
        [prompt] = sent(server)
        status = shell("git status", project)
        assert f"(e.g., fake npm test\n, {status} )" in prompt
        assert 'Verify use of opencode "" syntax' in prompt  # `command` alone prints nothing
        assert "- Understand that  or similar commands" in prompt
        assert "<git-status>\n!`git status --porcelain`\n</git-status>" in prompt  # code
        assert "`<git-status> !`git status` </git-status>`" in prompt  # inline code
        assert "<file>\n.opencode/command/x.md\n</file>" in prompt
        assert "$ARGUMENTS" not in prompt


async def test_arguments_in_a_command_are_quoted_for_the_shell(project: Path) -> None:
    # the attack: an argument put into a !`…` command must never become shell syntax
    write(project / ".tui-agent" / "commands" / "inj.md", "Echo: !`echo $ARGUMENTS`\n")
    write(project / ".claude" / "commands" / "inj0.md", "First: !`echo $0 $ARGUMENTS[1]`\n")
    write(project / ".opencode" / "command" / "inj1.md", "Echo: !`echo $1 -- $ARGUMENTS`\n")
    script = [Reply("ok"), Reply("ok"), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/inj hi; touch X")
        await run(session, "/inj0 '$(touch Y)' `touch Z`")
        await run(session, "/inj1 a;touch W")

        assert not any((project / name).exists() for name in "XYZW")
        assert sent(server) == [
            "Echo: hi; touch X",
            "First: $(touch Y) `touch",
            "Echo: a;touch W -- a;touch W",
        ]
        assert errors(session) == []


async def test_a_bang_fenced_block_runs_as_one_script_with_its_arguments_quoted(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Claude Code: a ```! block runs before the prompt is sent and its output replaces it.
    # ralph-loop.md passes $ARGUMENTS to the plugin's script; the script here is a stand-in
    # that prints each argument it got.
    root = tmp_path / "ralph-plugin"
    script = write(
        root / "scripts" / "setup-ralph-loop.sh", '#!/bin/bash\nfor a; do echo "[$a]"; done\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(root))
    source = CLAUDE_FILES / "ralph-loop.md"
    copy_fixture(source, home() / ".claude" / "commands" / "ralph-loop.md")
    async with FakeOpenAI([Reply("Looping.")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        assert dict(session.commands)["/ralph-loop"] == (
            "Start Ralph Wiggum loop in current session — /ralph-loop PROMPT "
            "[--max-iterations N] [--completion-promise TEXT] (~/.claude)"
        )

        await run(
            session, '/ralph-loop "Refactor the cache layer" --max-iterations 20; touch pwned'
        )

        body = body_of(source)
        block = '```!\n"${CLAUDE_PLUGIN_ROOT}/scripts/setup-ralph-loop.sh" $ARGUMENTS\n```'
        output = "[Refactor the cache layer]\n[--max-iterations]\n[20;]\n[touch]\n[pwned]"
        assert block in body
        assert sent(server) == [body.replace(block, output).strip()]
        assert not (project / "pwned").exists()


async def test_positional_arguments_follow_each_agents_rules(project: Path) -> None:
    # Claude Code: $ARGUMENTS[N] and $N from 0; a $N past the last word is kept as written,
    # an $ARGUMENTS[N] past it is empty. opencode: $1 is the first word and the highest
    # placeholder takes the rest; with no placeholder the arguments follow a blank line.
    write(
        project / ".claude" / "commands" / "pos.md",
        "$0|$1|$ARGUMENTS[0]|$ARGUMENTS[1]|$ARGUMENTS[5]|$5|$ARGUMENTS\n",
    )
    write(project / ".opencode" / "command" / "oc.md", "First $1, rest $2. All: $ARGUMENTS\n")
    write(project / ".opencode" / "command" / "bare.md", "Tidy up.\n")
    script = [Reply("ok"), Reply("ok"), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/pos a 'b c'")
        await run(session, "/oc a b c")
        await run(session, "/bare src tests")

        assert sent(server) == [
            "a|b c|a|b c||$5|a 'b c'",
            "First a, rest b c. All: a b c",
            "Tidy up.\n\nsrc tests",
        ]


async def test_a_bang_inside_inline_code_or_a_code_block_is_not_a_command(project: Path) -> None:
    # the lines of anthropics/claude-code#22363 and #25792: `!` inside inline code is text
    text = (
        "**Important:** When message ends with `!`, use single quotes or `$'...'` to avoid "
        "bash history expansion.\n"
        "`!!` x `y` z\n"
        "Example:\n```markdown\nBranch: !`touch ran`\n```\n"
        "Now: !`echo run`\n"
    )
    write(project / ".claude" / "commands" / "doc.md", text)
    async with FakeOpenAI([Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)

        await run(session, "/doc")

        assert errors(session) == []
        assert sent(server) == [text.replace("!`echo run`", "run").strip()]
        assert not (project / "ran").exists()


async def test_a_markdown_command_may_replace_a_bundled_one(project: Path) -> None:
    # opencode: "a later definition can override a built-in ... command with the same name"
    source = CLAUDE_FILES / "help.md"  # hookify's /help
    copy_fixture(source, home() / ".claude" / "commands" / "help.md")
    async with FakeOpenAI([Reply("Hookify is…")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        assert session.commands.get("help").source == "markdown"
        assert dict(session.commands)["/help"] == (
            "Get help with the hookify plugin (~/.claude; replaces the bundled /help)"
        )
        replaced = [n for n in notes(session) if "replaces the bundled" in n]
        assert replaced == [
            "Markdown command /help (~/.claude/commands/help.md) replaces the bundled /help."
        ]
        assert session.extensions.problems == []

        await run(session, "/help")
        await run(session, "/reload")

        assert sent(server) == [body_of(source).strip()]
        assert len([n for n in notes(session) if "replaces the bundled" in n]) == 1  # once


async def test_help_marks_a_command_that_replaces_a_bundled_one(project: Path) -> None:
    write(project / ".opencode" / "command" / "export.md", "Export the conversation to $1.\n")
    session = create_session(project, trust=True)

    await run(session, "/help")

    [table] = [n for n in notes(session) if n.startswith("| Command |")]
    assert (
        "| `/export` | Export the conversation to $1. (.opencode; replaces the bundled "
        "/export) |" in table
    )


# -- headless: `tui-agent run "/name args"` ---------------------------------------------------


def run_cli(
    *args: str, cwd: Path, server: FakeOpenAI | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    import sys

    argv = [sys.executable, "-m", "tui_agent", *args]
    if server is not None:
        argv += ["--base-url", server.base_url, "--model", "fake-model"]
    return subprocess.run(
        argv,
        cwd=cwd,
        env=dict(os.environ),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_headless_run_expands_a_markdown_command_and_sends_it(project: Path) -> None:
    # `claude -p "/commit"` runs the command: its prompt goes to the model as a turn
    git_project(project)
    copy_fixture(CLAUDE_FILES / "commit.md", project / ".claude" / "commands" / "commit.md")
    with FakeOpenAI([Reply("Committed as abc123.")]) as server:
        done = run_cli("--trust", "run", "/commit", cwd=project, server=server, stdin="Be brief.")

        assert done.returncode == 0, done.stderr
        assert done.stdout == "Committed as abc123.\n"
        body = body_of(CLAUDE_FILES / "commit.md")
        for command in COMMIT_COMMANDS:
            body = body.replace(f"!`{command}`", shell(command, project).rstrip("\n"))
        assert sent(server) == [body.strip() + "\n\nBe brief."]  # stdin at the end


def test_headless_run_runs_a_bundled_command_without_the_model(project: Path) -> None:
    with FakeOpenAI([Reply("never")]) as server:
        done = run_cli("run", "/help", cwd=project, server=server)

        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("| Command | Description |\n")
        assert "| `/help` | List every command with its description |" in done.stdout
        assert server.requests == []


def test_headless_run_reports_an_unknown_command_and_sends_nothing(project: Path) -> None:
    with FakeOpenAI([Reply("a path"), Reply("never")]) as server:
        unknown = run_cli("run", "/nosuch", "thing", cwd=project, server=server)
        path = run_cli("run", "/etc/hosts: what is it?", cwd=project, server=server)

        assert unknown.returncode == 2
        assert "tui-agent: unknown command /nosuch. Commands: " in unknown.stderr
        assert path.returncode == 0, path.stderr
        assert sent(server) == ["/etc/hosts: what is it?"]  # a path is a prompt


def test_headless_run_stops_when_a_commands_prompt_cannot_be_made(project: Path) -> None:
    write(project / ".claude" / "commands" / "fail.md", "Then: !`echo oops >&2; exit 3`\n")
    with FakeOpenAI([Reply("never")]) as server:
        done = run_cli("--trust", "run", "/fail", cwd=project, server=server)

        assert done.returncode == 2
        assert (
            "tui-agent: error: /fail (.claude/commands/fail.md): !`echo oops >&2; exit 3` "
            "failed with exit status 3: oops. Nothing was sent." in done.stderr
        )
        assert server.requests == []


def test_headless_run_json_says_which_command_ran(project: Path) -> None:
    import json

    with FakeOpenAI([Reply("never")]) as server:
        done = run_cli("run", "--json", "/clear", cwd=project, server=server)

        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()]
        assert events[0] == {"type": "command", "name": "clear", "arguments": ""}
        assert {"type": "note", "kind": None, "text": "Conversation cleared."} in events
        assert server.requests == []


async def test_a_project_in_the_home_folder_reads_each_file_once(project: Path) -> None:
    # the home folder as the project: ~/.claude/commands is its .claude/commands too
    copy_fixture(CLAUDE_FILES / "commit.md", home() / ".claude" / "commands" / "commit.md")
    source = OPENCODE_FILES / "review-uncommitted.md"
    copy_fixture(source, home() / ".config" / "opencode" / "command" / "review-uncommitted.md")
    session = create_session(home(), trust=True)

    assert dict(session.commands)["/commit"] == "Create a git commit (.claude)"
    assert dict(session.commands)["/review-uncommitted"].endswith("(~/.config/opencode)")
    assert [n for n in notes(session) if "has the same name" in n] == []
