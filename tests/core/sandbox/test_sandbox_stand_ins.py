"""The stand-ins a session keeps between its commands (issue 29): the empty read-only
folders standing in for missing protected ones (``.claude``, ``.vscode``, ``.git/hooks``…)
are made by a session's first command and stay until it ends, not made and removed by
each command. Each test is an attack a prompt-injected model could send, or the way a
session ends; each fails if the stand-ins are pulled too early, left behind, or if a
kept one lets a command through. ``.git`` and ``.tui-agent`` stay one command's: an
empty one marks a repository or a project (``find_worktree``, ``project_root``).

Also: ``hidden`` resolving each folder once gives what realpath gives."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import needs_bwrap, write

from tui_agent.core.sandbox import protection
from tui_agent.core.sandbox.private_tmp import release_tmp
from tui_agent.core.util import paths
from tui_agent.sandbox import Sandbox

KEPT = sorted(n for n in paths.AGENT_CONFIG if n not in (*paths.AGENT_CONFIG_FILES, ".tui-agent"))


def run(box: Sandbox, command: str) -> tuple[int, str]:
    with box.command(["bash", "-c", command], box.worktree) as (argv, env):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


def entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A project with no .git and no agents' config: every protected folder is missing."""
    made = tmp_path / "folder"
    write(made / "main.py", "print('hi')\n")
    return made


def session(folder: Path, tmp: Path) -> Sandbox:
    box = Sandbox.of({}, folder, tmp)
    assert box.active, box.reason
    return box


@needs_bwrap
def test_a_session_keeps_its_stand_ins_and_they_still_hold(folder: Path, tmp_path: Path) -> None:
    box = session(folder, tmp_path / "session-tmp")
    try:
        status, said = run(box, "mkdir .claude/x || mkdir .git || mkdir .tui-agent || exit 3")
        assert status == 3, said
        # kept, empty, between commands; .git and .tui-agent went with the command
        assert entries(folder) == sorted([*KEPT, "main.py"])
        assert all(entries(folder / name) == [] for name in KEPT)
        # the command can neither remove nor replace a kept one, nor write in it
        status, said = run(
            box,
            "rmdir .claude; rm -rf .vscode; mv .gemini g; ln -sfn /tmp .codex;"
            " echo '{}' > .claude/settings.json; mkdir -p .agents/plugins; true",
        )
        assert entries(folder) == sorted([*KEPT, "main.py"]), said
        assert all(entries(folder / name) == [] for name in KEPT), said
        # outside the sandbox, between commands: one is removed, one becomes a link to a
        # writable folder (as a user's !!command might); the next command gets through
        # neither
        evil = folder / "evil"
        evil.mkdir()
        (folder / ".claude").rmdir()
        (folder / ".vscode").rmdir()
        (folder / ".vscode").symlink_to("evil")
        status, said = run(
            box,
            "mkdir -p .claude && echo '{}' > .claude/settings.json;"
            " echo '{}' > .vscode/tasks.json; ls .claude .vscode; exit 7",
        )
        assert status == 7, said
        assert entries(evil) == [] and entries(folder / ".claude") == [], said
    finally:
        release_tmp(tmp_path / "session-tmp")
    # the session is over: its empty stand-ins go, the user's link stays
    assert entries(folder) == [".vscode", "evil", "main.py"]
    assert os.readlink(folder / ".vscode") == "evil"


@needs_bwrap
def test_stand_ins_stay_while_a_session_that_made_them_lives(folder: Path, tmp_path: Path) -> None:
    """The second session finds the first's stand-ins there (protected as any folder
    that is there); the first ending removes them (no command runs), the second's next
    command makes its own, as well kept until it ends."""
    first = session(folder, tmp_path / "first-tmp")
    second = session(folder, tmp_path / "second-tmp")
    assert run(first, "true")[0] == 0
    status, said = run(second, "mkdir -p .agents/plugins || exit 5")
    assert status == 5, said
    assert run(Sandbox.of({}, folder), "true")[0] == 0  # a command's end: the first keeps them
    assert entries(folder) == sorted([*KEPT, "main.py"])
    release_tmp(tmp_path / "first-tmp")
    assert entries(folder) == ["main.py"]
    status, said = run(second, "mkdir -p .agents/plugins || exit 5")
    assert status == 5, said
    assert entries(folder) == sorted([*KEPT, "main.py"])
    release_tmp(tmp_path / "second-tmp")
    assert entries(folder) == ["main.py"]


@needs_bwrap
def test_a_session_ending_does_not_pull_a_stand_in_from_a_running_command(
    folder: Path, tmp_path: Path
) -> None:
    """Another command (here one with no session) runs while the session that made the
    stand-ins ends: removing one would uncover the folder to that command, which could
    then make ``.claude/`` (rmdir of a mount point in another namespace detaches it)."""
    box = session(folder, tmp_path / "session-tmp")
    assert run(box, "true")[0] == 0
    other = Sandbox.of({}, folder)
    block = other.command(["bash", "-c", "sleep 1; mkdir -p .claude/x"], folder)
    argv, env = block.__enter__()
    started = subprocess.Popen(argv, env=env)
    try:
        for _ in range(300):  # bwrap has set up (it made that command's .git)
            if (folder / ".git").exists():
                break
            time.sleep(0.01)
        time.sleep(0.1)
        release_tmp(tmp_path / "session-tmp")  # while the other command runs
        # (with that command's own .git and .tui-agent)
        assert entries(folder) == sorted([*KEPT, ".git", ".tui-agent", "main.py"])
        assert started.wait(30) != 0
    finally:
        block.__exit__(None, None, None)
    assert not (folder / ".claude").exists()
    assert entries(folder) == ["main.py"]  # that command ended last: it removed them


@needs_bwrap
def test_a_session_that_never_closed_leaves_nothing_for_long(folder: Path, tmp_path: Path) -> None:
    """A session killed between commands (it never ends cleanly) leaves its stand-ins:
    empty folders that change nothing for git, removed by the next command that ends
    when no session keeps any (or the next session's end)."""
    script = (
        "import os, subprocess, sys; from pathlib import Path;"
        " from tui_agent.sandbox import Sandbox;"
        " box = Sandbox.of({}, Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "with box.command(['true'], box.worktree) as (argv, env):\n"
        "    subprocess.run(argv, env=env, check=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(folder), str(tmp_path / "dead-tmp")], timeout=60
    )
    assert done.returncode == -9
    assert entries(folder) == sorted([*KEPT, "main.py"])
    assert subprocess.run(["git", "-C", str(folder), "status"], capture_output=True).returncode
    assert run(Sandbox.of({}, folder), "true")[0] == 0
    assert entries(folder) == ["main.py"]


@needs_bwrap
def test_a_kept_stand_in_the_user_filled_is_theirs(folder: Path, tmp_path: Path) -> None:
    box = session(folder, tmp_path / "session-tmp")
    assert run(box, "true")[0] == 0
    write(folder / ".claude" / "settings.json", "{}\n")  # the user, between commands
    status, said = run(box, "echo '{\"x\": 1}' > .claude/settings.json || exit 4")
    assert status == 4, said
    release_tmp(tmp_path / "session-tmp")
    assert entries(folder) == [".claude", "main.py"]
    assert (folder / ".claude" / "settings.json").read_text() == "{}\n"


def test_only_git_and_tui_agent_stay_one_commands() -> None:
    assert protection.PER_COMMAND == (".git", ".tui-agent")


def test_hidden_gives_the_real_paths_realpath_gives(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hidden`` (each folder resolved once, the last part joined when it is no link) is
    what realpath of every path that exists gives: links at the end and on the way, a
    dangling link, a loop, ``..``, a file below a hidden folder, a path through a file."""
    home = isolated_home
    write(home / "dotfiles" / "ssh" / "id_rsa", "KEY\n")
    (home / ".ssh").symlink_to(home / "dotfiles" / "ssh")  # a link at the end
    write(home / "elsewhere" / "config" / "gh" / "hosts.yml", "token\n")
    (home / ".config").mkdir(exist_ok=True)
    os.rename(home / ".config", home / "config-was")
    (home / ".config").symlink_to(home / "elsewhere" / "config")  # a link on the way
    (home / ".aws").symlink_to(home / "nowhere")  # dangling
    (home / ".kube").symlink_to(home / ".kube")  # a loop
    write(home / ".netrc", "machine x\n")
    write(home / "a" / "b" / "secret", "x\n")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    hide = [
        str(home / "a" / "b" / ".." / "b" / "secret"),
        str(home / "a"),
        str(home / ".netrc" / "x"),  # through a file
        "~/.ssh/id_rsa",
    ]
    box = Sandbox.of({"sandbox": {"hide": hide}}, tmp_path / "project")
    from tui_agent.core.sandbox.host import _expanded, _matched
    from tui_agent.core.sandbox.settings import DEFAULT_HIDE

    found = [m for p in (*DEFAULT_HIDE, *hide) for m in _matched(_expanded(p, str(home)))]
    expected = [Path(os.path.realpath(p)) for p in found if os.path.exists(p)]
    got = box.hidden()
    mine = [p for p in got if p.is_relative_to(home.resolve())]
    want = [
        p
        for p in dict.fromkeys(expected)
        if not any(p != o and p.is_relative_to(o) for o in expected)
    ]
    assert mine == want, (mine, want)
    assert home.resolve() / "dotfiles" / "ssh" in mine
    assert home.resolve() / "elsewhere" / "config" / "gh" in mine
    assert home.resolve() / "a" in mine and home.resolve() / "a" / "b" / "secret" not in mine
