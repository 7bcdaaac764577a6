"""Checkpoints in the session (issue 16): /undo, /redo, /rewind, /diff, ``tui-agent undo``,
through real turns (the real openai client against the testing kit's server, the bundled
write/edit/execute tools, real git for the shadow store) and the user's own repository
checked untouched."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.checkpoints import CheckpointError, HandEdited
from tui_agent.core.project.config import user_config_file
from tui_agent.events import CheckpointTaken, Rewound
from tui_agent.testing import Call, FakeOpenAI, Reply, transcript_problem

BINARY = bytes(range(256)) * 8 + b"\x00\x00end"


def git(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    done = subprocess.run(
        ["git", *args], cwd=folder, capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with a commit, an ignored file, an untracked file and a
    stash entry."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root / ".gitignore", "build/\n*.log\n")
    write(root / "a.txt", "alpha\n")
    write(root / "b.txt", "bravo\n")
    write(root / "src" / "main.py", "print('hello')\n")
    (root / "blob.bin").write_bytes(BINARY)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    write(root / "a.txt", "alpha, stashed change\n")
    git(root, "stash", "-q")
    write(root / "build" / "out.o", "ignored build output\n")
    write(root / "debug.log", "ignored log\n")
    write(root / "notes.md", "untracked notes\n")
    return root


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but the user's .git, with its bytes."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/") or not path.is_file():
            continue
        found[rel] = path.read_bytes()
    return found


def git_state(root: Path) -> dict[str, Any]:
    """What must never change in the user's repository: every file of .git (bytes and
    mtime), HEAD, refs, the stash, the index, the config and the object count."""
    files = {}
    for path in sorted((root / ".git").rglob("*")):
        if path.is_file():
            stat = path.stat()
            files[path.relative_to(root).as_posix()] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                stat.st_mtime_ns,
            )
    return {
        "files": files,
        "head": git(root, "rev-parse", "HEAD"),
        "refs": git(root, "for-each-ref"),
        "stash": git(root, "stash", "list"),
        "objects": git(root, "count-objects", "-v"),
        "config": (root / ".git" / "config").read_bytes(),
    }


def edit_turn(server: FakeOpenAI) -> None:
    """One turn that writes, edits and runs rm/mv/echo > through execute."""
    server.script += [
        Reply(
            "Changing things.",
            calls=[
                Call("write", {"path": "new.txt", "content": "brand new\n"}),
                Call("edit", {"path": "src/main.py", "old": "hello", "new": "goodbye"}),
                Call(
                    "execute",
                    {
                        "command": "rm b.txt && mv notes.md docs.md && echo shell > shell.txt"
                        " && printf '\\001\\002' >> blob.bin && mkdir -p deep/er"
                        " && echo x > deep/er/file.txt"
                    },
                ),
            ],
        ),
        Reply("Done."),
    ]


def session_for(folder: Path, server: FakeOpenAI, **kwargs: Any) -> Any:
    return create_session(folder, base_url=server.base_url, model="m", yes=True, **kwargs)


async def run(session: Any, line: str) -> list[str]:
    """Run a command line; the notes it said (errors prefixed "error: ")."""
    start = len(session.output.history)
    assert await session.commands.run_line(line)
    return [note.text for note in list(session.output.history)[start:]]


# -- undo and redo ---------------------------------------------------------------------------


async def test_undo_restores_every_file_of_a_turn_and_redo_reapplies_it(repo: Path) -> None:
    before_files = tree_state(repo)
    before_git = git_state(repo)
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        taken: list[Any] = []
        session.events.listen(lambda e: taken.append(e) if isinstance(e, CheckpointTaken) else None)
        edit_turn(server)
        assert await session.turn("change the files") == "Done."
        after_files = tree_state(repo)
        assert after_files != before_files
        assert (repo / "shell.txt").read_text() == "shell\n"
        assert not (repo / "b.txt").exists()
        [event] = taken
        assert event.checkpoint.turn == 1 and event.checkpoint.snapshots is not None

        said = await run(session, "/undo")
        assert tree_state(repo) == before_files  # byte for byte, untracked and binary too
        assert not (repo / "deep").exists()  # folders the turn made are gone
        assert "Undid turn 1" in said[-1] and "shell.txt" in said[-1]
        assert session.conversation.messages == []  # the turn is out of the conversation

        said = await run(session, "/redo")
        assert tree_state(repo) == after_files
        assert "Redid turn 1" in said[-1]
        assert [m.role for m in session.conversation.messages][:2] == ["user", "assistant"]
        assert transcript_problem(session.conversation.messages) is None
    assert git_state(repo) == before_git  # the user's repository never changed


async def test_repeated_undo_walks_back_and_a_new_turn_ends_redo(repo: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        states = [tree_state(repo)]
        for n in range(3):
            server.script += [
                Reply(calls=[Call("write", {"path": "a.txt", "content": f"version {n}\n"})]),
                Reply(f"wrote {n}"),
            ]
            await session.turn(f"write version {n}")
            states.append(tree_state(repo))
        server.script.append(Reply("just talk"))
        await session.turn("no tools this time")
        states.append(tree_state(repo))

        await run(session, "/undo")  # the chat turn: its messages only
        assert tree_state(repo) == states[3]
        assert session.conversation.messages[-1].text == "wrote 2"
        for n in (2, 1):
            await run(session, "/undo")
            assert tree_state(repo) == states[n]
        assert [m.text for m in session.conversation.messages if m.role == "user"] == [
            "write version 0"
        ]
        await run(session, "/redo")
        assert tree_state(repo) == states[2]
        assert (repo / "a.txt").read_text() == "version 1\n"

        server.script += [Reply("a new direction")]
        await session.turn("something else")
        said = await run(session, "/redo")
        assert said[-1].startswith("error: nothing to redo")
        assert tree_state(repo) == states[2]


async def test_undo_does_not_overwrite_a_file_changed_by_hand(repo: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        edit_turn(server)
        await session.turn("change the files")
        write(repo / "new.txt", "my own words\n")  # by hand, after the turn
        write(repo / "a.txt", "also mine\n")  # not the turn's file: never touched
        changed = tree_state(repo)
        said = await run(session, "/undo")
        assert said[-1].startswith("error: not done: 1 file changed since the agent's turn")
        assert "new.txt" in said[-1] and "/undo --force" in said[-1]
        assert tree_state(repo) == changed  # nothing was restored
        assert session.conversation.messages  # nor the conversation cut
        with pytest.raises(HandEdited) as caught:
            await session.checkpoints.undo()
        assert caught.value.files == ("new.txt",)

        await run(session, "/undo --force")
        assert not (repo / "new.txt").exists()
        assert (repo / "a.txt").read_text() == "also mine\n"
        assert (repo / "b.txt").read_text() == "bravo\n"


async def test_ignored_files_are_never_snapshotted_or_touched(repo: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        server.script += [
            Reply(
                calls=[
                    Call(
                        "execute",
                        {
                            "command": "echo again >> debug.log && "
                            "echo new > build/new.o && echo t > t.txt"
                        },
                    )
                ]
            ),
            Reply("ok"),
        ]
        await session.turn("touch ignored files")
        await run(session, "/undo")
        # ignored files are not the checkpoint's: they stay as the turn left them
        assert (repo / "debug.log").read_text() == "ignored log\nagain\n"
        assert (repo / "build" / "new.o").read_text() == "new\n"
        assert not (repo / "t.txt").exists()


async def test_a_folder_that_is_not_a_git_repository(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    write(folder / "one.txt", "one\n")
    (folder / "data.bin").write_bytes(BINARY)
    before = tree_state(folder)
    with FakeOpenAI() as server:
        session = session_for(folder, server)
        server.script += [
            Reply(calls=[Call("execute", {"command": "rm one.txt; printf 'zz' > data.bin"})]),
            Reply("ok"),
        ]
        await session.turn("break things")
        assert tree_state(folder) != before
        await run(session, "/undo")
        assert tree_state(folder) == before
        assert not (folder / ".git").exists()  # no repository appeared in the user's folder


async def test_continue_then_undo_and_the_cli_undo(repo: Path) -> None:
    before = tree_state(repo)
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        edit_turn(server)
        await session.turn("change the files")
        server.script += [
            Reply(calls=[Call("write", {"path": "second.txt", "content": "2\n"})]),
            Reply("second done"),
        ]
        await session.turn("second turn")
        await session.close()
        after_first = {k: v for k, v in tree_state(repo).items() if k != "second.txt"}

        resumed = session_for(repo, server)
        assert resumed.conversation.resume()  # --continue
        said = await run(resumed, "/undo")
        assert "Undid turn 2" in said[-1]
        assert tree_state(repo) == after_first
        await resumed.close()

    # tui-agent undo: the folder's last session, its last turn left (the first)
    done = subprocess.run(
        [sys.executable, "-m", "tui_agent", "undo"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Undid turn 1" in done.stdout and "new.txt" in done.stdout
    assert "Its prompt was: change the files" in done.stdout
    assert tree_state(repo) == before
    again = subprocess.run(
        [sys.executable, "-m", "tui_agent", "undo"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 1 and "nothing to undo" in again.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "tui_agent", "undo", "--session", "nope"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "could not find session nope" in missing.stderr


async def test_continue_after_undo_goes_on_without_the_turn(repo: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        server.script += [Reply("first answer"), Reply("second answer")]
        await session.turn("first")
        await session.turn("second")
        await run(session, "/undo")
        await session.close()
        resumed = session_for(repo, server)
        assert resumed.conversation.resume()
        assert [m.text for m in resumed.conversation.messages] == ["first", "first answer"]
        said = await run(resumed, "/redo")  # the undone turn can be redone after a resume
        assert "Redid turn 2" in said[-1]
        assert [m.text for m in resumed.conversation.messages][-1] == "second answer"


async def test_rewind_code_only_conversation_only_and_both(repo: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        states = [tree_state(repo)]
        for n in range(3):
            server.script += [
                Reply(calls=[Call("write", {"path": f"f{n}.txt", "content": f"{n}\n"})]),
                Reply(f"done {n}"),
            ]
            await session.turn(f"turn {n}")
            states.append(tree_state(repo))
        said = await run(session, "/rewind")  # headless: no picker, a table of turns
        assert "| 2 | turn 1 |" in said[-1] and "/rewind TURN" in said[-1]

        await run(session, "/rewind 3 conversation")
        assert tree_state(repo) == states[3]
        assert [m.text for m in session.conversation.messages if m.role == "user"] == [
            "turn 0",
            "turn 1",
        ]
        await run(session, "/redo")
        assert len([m for m in session.conversation.messages if m.role == "user"]) == 3

        await run(session, "/rewind 2 code")
        assert tree_state(repo) == states[1]
        assert len([m for m in session.conversation.messages if m.role == "user"]) == 3

        await run(session, "/redo")
        await run(session, "/redo")
        assert tree_state(repo) == states[3]
        seen: list[Any] = []
        session.events.listen(lambda e: seen.append(e) if isinstance(e, Rewound) else None)
        await run(session, "/rewind 1 both")
        assert tree_state(repo) == states[0]
        assert session.conversation.messages == []
        assert seen[-1].restored.turns == (1, 2, 3) and seen[-1].restored.prompt == "turn 0"


async def test_diff_shows_the_sessions_and_the_last_turns_changes(repo: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        said = await run(session, "/diff")
        assert said[-1].startswith("error: no changes to show")
        edit_turn(server)
        await session.turn("change the files")
        server.script += [
            Reply(calls=[Call("write", {"path": "a.txt", "content": "alpha 2\n"})]),
            Reply("ok"),
        ]
        await session.turn("second")
        whole = (await run(session, "/diff"))[-1]
        last = (await run(session, "/diff last"))[-1]
        assert whole.startswith("```diff") and "-print('hello')" in whole
        assert "+alpha 2" in whole and "+brand new" in whole
        assert "+alpha 2" in last and "brand new" not in last


async def test_a_bad_checkpoints_setting_is_a_config_problem(repo: Path) -> None:
    write(user_config_file(), 'checkpoints = "no"\n')
    session = create_session(repo)
    problems = [str(p) for p in session.extensions.config_problems]
    assert any("checkpoints must be true or false" in p for p in problems), problems
    assert session.checkpoints.enabled  # the default applies


async def test_checkpoints_can_be_turned_off(repo: Path) -> None:
    write(user_config_file(), 'checkpoints = false\n\n[permission]\n"*" = "allow"\n')
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        edit_turn(server)
        await session.turn("change the files")
        assert (repo / "new.txt").exists()
        said = await run(session, "/undo")  # the messages only: no snapshot was taken
        assert "no file to restore" in said[-1]
        assert (repo / "new.txt").exists()
        with pytest.raises(CheckpointError):
            await session.checkpoints.diff()


# -- in the app ------------------------------------------------------------------------------


async def test_undo_in_the_app_redraws_the_chat_and_gives_the_prompt_back(repo: Path) -> None:
    from tui_agent.testing import chat_text, run_app, send, turn_over, wait_for

    with FakeOpenAI() as server:
        session = session_for(repo, server)
        async with run_app(session) as pilot:
            server.script += [Reply("first answer")]
            await send(pilot, "a first question")
            await turn_over(pilot)
            edit_turn(server)
            await send(pilot, "change the files please")
            await turn_over(pilot)
            assert "Done." in chat_text(pilot.app)
            await send(pilot, "/undo")
            prompt = pilot.app.query_one("#prompt")
            await wait_for(pilot, lambda: prompt.text == "change the files please")
            await wait_for(pilot, lambda: "change the files please" not in chat_text(pilot.app))
            assert "a first question" in chat_text(pilot.app)
            assert not (repo / "new.txt").exists()
            assert (repo / "b.txt").read_text() == "bravo\n"


async def test_rewind_in_the_app_is_a_picker(repo: Path) -> None:
    from tui_agent.testing import chat_text, run_app, send, turn_over, wait_for

    with FakeOpenAI() as server:
        session = session_for(repo, server)
        async with run_app(session, size=(100, 36)) as pilot:
            for n in range(3):
                server.script += [
                    Reply(calls=[Call("write", {"path": f"f{n}.txt", "content": f"{n}\n"})]),
                    Reply(f"done {n}"),
                ]
                await send(pilot, f"turn {n}")
                await turn_over(pilot)
            await send(pilot, "/rewind")
            await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "ChoiceScreen")
            options = pilot.app.screen.options
            assert options[0].startswith("3. turn 2") and options[-1].startswith("1. turn 0")
            await pilot.press("down", "enter")  # turn 2 ("turn 1")
            await wait_for(pilot, lambda: "what?" in pilot.app.screen.title_text)
            assert pilot.app.screen.options == [
                "code and conversation",
                "conversation only",
                "code only",
            ]
            await pilot.press("down", "down", "enter")  # code only
            await wait_for(pilot, lambda: "Rewound turns 2, 3" in chat_text(pilot.app))
            assert not (repo / "f1.txt").exists() and not (repo / "f2.txt").exists()
            assert (repo / "f0.txt").exists()
            assert len([m for m in session.conversation.messages if m.role == "user"]) == 3
            await send(pilot, "/rewind")
            await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "ChoiceScreen")
            await pilot.press("escape")  # dismissed: nothing happens
            await wait_for(pilot, lambda: type(pilot.app.screen).__name__ != "ChoiceScreen")
            assert (repo / "f0.txt").exists()
