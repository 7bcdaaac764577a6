"""What the sandbox keeps between commands to cost less (issue 29) never lets a command
see what a fresh look would hide: the home folder's credentials and the socket folders are
looked for again whenever a folder they are in changed (``host.remembered``: each folder's
inode, modification and change times), never kept when a folder changed just before the
look (the racy case) or is reached through a symbolic link; hidden folders and stand-ins
are bound from tui-agent's own empty folder, and only while it is empty.

Each test is the user's (or another program's) change between two commands of one
session, then what the model's next command would try: read the new credential, reach the
new socket. They run the real bubblewrap, as root (this machine and CI)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import needs_bwrap, write

from tui_agent.core.sandbox import host, private_tmp
from tui_agent.sandbox import Sandbox

SETTLE = 0.3  # seconds: SETTLED_NS here, so a test can wait for its folders to settle


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A short settling time and nothing remembered from other tests."""
    monkeypatch.setattr(host, "SETTLED_NS", int(SETTLE * 1e9))
    host._REMEMBERED.clear()
    yield
    host._REMEMBERED.clear()


def settle() -> None:
    time.sleep(SETTLE + 0.1)


def run(box: Sandbox, command: str) -> tuple[int, str, list[str]]:
    with box.command(["bash", "-c", command], box.worktree) as (argv, env):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    return done.returncode, done.stdout + done.stderr, argv


def hidden_kept() -> bool:
    return any(key[0] == "hidden" for key in host._REMEMBERED)


def warm(box: Sandbox) -> None:
    """A session's first commands: the first makes tui-agent's folders in the user cache
    (a change in the home folder), the next one, once that settled, keeps its look."""
    assert run(box, "true")[0] == 0
    settle()
    status, said, _ = run(box, "ls -A ~")
    assert status == 0, said
    assert hidden_kept()  # the look is kept: the next command does not repeat it


# -- the home folder's credentials ----------------------------------------------------------------


@needs_bwrap
def test_a_credential_made_between_commands_is_hidden_from_the_next(
    box: Sandbox, isolated_home: Path, settled: None
) -> None:
    (isolated_home / ".config").mkdir(exist_ok=True)
    warm(box)
    # the user runs `aws configure` meanwhile
    write(isolated_home / ".aws" / "credentials", "[default]\naws_secret_access_key = SECRET1\n")
    _status, said, argv = run(
        box, "cat ~/.aws/credentials; printf 'listed:%s;' \"$(ls -A ~/.aws)\""
    )
    assert "SECRET1" not in said and "listed:;" in said, said
    assert str(isolated_home / ".aws") in argv


@needs_bwrap
def test_a_credential_made_in_a_folder_a_pattern_lists_is_hidden_from_the_next(
    box: Sandbox, isolated_home: Path, settled: None
) -> None:
    """``~/.config/*/credentials*``: a tool's folder that was there already (its own stamp,
    not ~/.config's, changes when the file is made)."""
    tool = isolated_home / ".config" / "sometool"
    tool.mkdir(parents=True)
    write(tool / "settings.json", "{}\n")
    warm(box)
    write(tool / "credentials.json", '{"token": "SECRET2"}\n')
    _status, said, _ = run(
        box, "cat ~/.config/sometool/credentials.json; cat ~/.config/sometool/settings.json"
    )
    assert "SECRET2" not in said and "{}" in said, said


@needs_bwrap
def test_a_replaced_config_folder_is_looked_at_again(
    box: Sandbox, isolated_home: Path, settled: None
) -> None:
    config = isolated_home / ".config"
    (config / "other").mkdir(parents=True)
    warm(box)
    # another program puts a whole new ~/.config in place (a dotfiles manager's switch)
    fresh = isolated_home / ".config.new"
    write(fresh / "gh" / "hosts.yml", "github.com:\n  oauth_token: SECRET3\n")
    config.rename(isolated_home / ".config.old")
    fresh.rename(config)
    _status, said, _ = run(box, "cat ~/.config/gh/hosts.yml")
    assert "SECRET3" not in said, said


@needs_bwrap
def test_credentials_reached_through_a_link_are_never_remembered(
    box: Sandbox, isolated_home: Path, settled: None
) -> None:
    """~/.ssh a link to a folder elsewhere, through a second link: where it leads can change
    with no stamp the sandbox looks at changing, so the look is made every time."""
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        write(outside / "keys1" / "id_ed25519", "KEY-ONE\n")
        write(outside / "keys2" / "id_ed25519", "KEY-TWO\n")
        (outside / "current").symlink_to(outside / "keys1")
        (isolated_home / ".ssh").symlink_to(outside / "current")
        assert run(box, "true")[0] == 0  # (tui-agent's folders in the user cache made)
        settle()
        _status, said, _ = run(box, "cat ~/.ssh/id_ed25519")
        assert "KEY-ONE" not in said, said
        assert not hidden_kept()
        (outside / "current").unlink()
        (outside / "current").symlink_to(outside / "keys2")  # only /var/tmp/... changed
        _status, said, _ = run(box, "cat ~/.ssh/id_ed25519")
        assert "KEY-TWO" not in said, said
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_a_look_right_after_a_change_is_not_kept(tmp_path: Path) -> None:
    """The racy case: a folder changed within ``SETTLED_NS`` of the look may change again
    within the same tick of the file system's clock, with the same stamp: not kept then;
    kept once its folders settled, and given again while their stamps stay."""
    host._REMEMBERED.clear()
    folder = tmp_path / "f"
    folder.mkdir()
    looks: list[int] = []

    def look(folders: set[str]) -> list[str]:
        looks.append(1)
        folders.add(str(folder))
        return sorted(os.listdir(folder))

    assert host.remembered("t", look) == [] and "t" not in host._REMEMBERED
    assert host.remembered("t", look) == [] and len(looks) == 2  # looked again
    stamp = time.time() - 10
    os.utime(folder, (stamp, stamp))  # the change time stays recent: still not kept
    host.remembered("t", look)
    assert "t" not in host._REMEMBERED and len(looks) == 3
    try:
        old = host.SETTLED_NS
        host.SETTLED_NS = int(SETTLE * 1e9)
        time.sleep(SETTLE + 0.1)
        assert host.remembered("t", look) == [] and "t" in host._REMEMBERED
        assert host.remembered("t", look) == [] and len(looks) == 4  # given again
        (folder / "new").write_text("x")
        assert host.remembered("t", look) == ["new"] and len(looks) == 5
    finally:
        host.SETTLED_NS = old
        host._REMEMBERED.clear()


# -- the host's socket folders ------------------------------------------------------------------


@needs_bwrap
def test_a_socket_left_in_a_socket_folder_after_the_first_command_is_masked(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    """A container's server leaves a socket file in /run (its own network namespace, so
    /proc/net/unix does not list it) after the session's first command: the next one masks
    it."""
    base = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        (base / "containerd" / "s").mkdir(parents=True)
        monkeypatch.setattr(host, "SOCKET_FOLDERS", ((str(base), 3),))
        settle()
        assert run(box, "true")[0] == 0
        assert ("sockets", str(base), 3) in host._REMEMBERED
        made = socket.socket(socket.AF_UNIX)
        made.bind(str(base / "containerd" / "s" / "api.sock"))
        made.close()  # the file stays; no server in this namespace lists it
        _status, _said, argv = run(box, "true")
        at = argv.index(str(base / "containerd" / "s" / "api.sock"))
        assert argv[at - 2 : at] == ["--ro-bind", "/dev/null"], argv
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- the empty folder hidden folders and stand-ins are bound from ---------------------------------


@needs_bwrap
def test_hidden_folders_and_stand_ins_are_the_empty_folder_read_only(
    box: Sandbox, isolated_home: Path
) -> None:
    write(isolated_home / ".ssh" / "id_rsa", "PRIVATE\n")
    _status, said, argv = run(
        box,
        "ls -A ~/.ssh; touch ~/.ssh/x; mkdir .claude/commands; touch .tui-agent/config.toml; "
        "echo done",
    )
    empty = private_tmp.empty_folder()
    assert empty is not None
    assert argv[argv.index(str(isolated_home / ".ssh")) - 1] == empty
    assert "PRIVATE" not in said and "id_rsa" not in said and "done" in said
    assert said.count("Read-only file system") == 3, said
    assert os.listdir(empty) == []
    assert not (box.worktree / ".claude" / "commands").exists()


@needs_bwrap
def test_an_empty_folder_that_holds_something_is_not_used(
    box: Sandbox, isolated_home: Path
) -> None:
    write(isolated_home / ".ssh" / "id_rsa", "PRIVATE\n")
    empty = private_tmp.empty_folder()
    assert empty is not None
    os.chmod(empty, 0o755)
    Path(empty, "planted").write_text("x")
    _status, said, argv = run(box, "ls -A ~/.ssh .claude; echo done")
    assert "planted" not in said and "id_rsa" not in said and "done" in said, said
    assert empty not in argv
    at = argv.index(str(isolated_home / ".ssh"))
    assert argv[at - 1] == "--tmpfs", argv
