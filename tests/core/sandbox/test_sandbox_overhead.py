"""What a sandboxed command costs (issue 29), and that the cheaper way keeps every
guarantee: the session's tmpfs holder is entered through descriptors opened once (never
through its PID, which a holder that died may have handed to another process); the
locale reaches the command through bwrap's ``--setenv`` (nsenter and bwrap start in the C
locale); HOME is bound read-only again only where the private /tmp would hide it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import needs_bwrap

from tui_agent.core.sandbox import private_tmp
from tui_agent.core.sandbox.private_tmp import release_tmp
from tui_agent.sandbox import Sandbox


@pytest.fixture
def box(project: Path, tmp_path: Path) -> Iterator[Sandbox]:
    made = Sandbox.of({}, project, tmp_path / "session-tmp")
    assert made.active, made.reason
    yield made
    release_tmp(tmp_path / "session-tmp")


def run(box: Sandbox, command: str, environ: dict[str, str] | None = None) -> tuple[str, list[str]]:
    with box.command(["bash", "-c", command], box.worktree, environ) as (argv, env):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    return done.stdout + done.stderr, argv


def bwrap_at(argv: list[str]) -> int:
    return next(i for i, arg in enumerate(argv) if os.path.basename(arg) == "bwrap")


def namespace(path: str) -> int:
    return os.stat(path).st_ino


@needs_bwrap
def test_the_holder_is_entered_through_its_descriptors_not_its_pid(box: Sandbox) -> None:
    said, argv = run(box, "echo kept > /tmp/marker; cat /tmp/marker")
    assert said == "kept\n", said
    assert box.tmp is not None
    holder = private_tmp._HOLDERS[box.tmp]
    pid = holder.process.pid
    hop = argv[: bwrap_at(argv)]
    assert "--target" not in hop and not any(str(pid) in arg for arg in hop), hop
    # the descriptors are the holder's namespaces (not this process's)
    user, mount = holder.namespaces
    assert namespace(f"/proc/self/fd/{mount}") == namespace(f"/proc/{pid}/ns/mnt")
    assert namespace(f"/proc/self/fd/{user}") == namespace(f"/proc/{pid}/ns/user")
    assert namespace(f"/proc/self/fd/{mount}") != namespace("/proc/self/ns/mnt")
    # the PID now names another process, with a tmpfs of its own at the same place (as
    # when the holder died and its PID went to someone else): never entered
    decoy = subprocess.Popen(
        [
            *("unshare", "--user", "--map-root-user", "--mount", "sh", "-c"),
            'mount -t tmpfs decoy "$1" && touch "$1/DECOY" && echo ready && read -r _',
            *("sh", str(holder.mount)),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert decoy.stdout is not None and decoy.stdout.readline() == b"ready\n"
        holder.process.pid = decoy.pid  # alive (our child): the holder is kept
        said, _argv = run(box, "ls /tmp")
    finally:
        holder.process.pid = pid
        assert decoy.stdin is not None
        decoy.stdin.close()
        decoy.wait()
    # (the worktree, under the real /tmp here, has its mount point there too)
    assert "marker" in said.split() and "DECOY" not in said, said


@needs_bwrap
def test_a_holder_that_died_is_replaced_and_its_namespaces_let_go(box: Sandbox) -> None:
    said, _argv = run(box, "echo kept > /tmp/marker; cat /tmp/marker")
    assert said == "kept\n" and box.tmp is not None
    old = private_tmp._HOLDERS[box.tmp]
    old_pid = old.process.pid
    os.kill(old_pid, signal.SIGKILL)
    old.process.wait()
    # the next command gets a new holder, an empty /tmp (the old tmpfs is not entered:
    # its descriptors were closed)
    said, argv = run(box, "ls -A /tmp | grep -v pytest-of; echo new > /tmp/marker; cat /tmp/marker")
    assert said == "new\n", said
    new = private_tmp._HOLDERS[box.tmp]
    assert new is not old and new.process.pid != old_pid and old.namespaces == ()
    assert not any(str(old_pid) in arg for arg in argv[: bwrap_at(argv)])
    said, _argv = run(box, "cat /tmp/marker")  # and it is kept between commands again
    assert said == "new\n", said


@needs_bwrap
def test_the_locale_reaches_the_command_through_bwrap_not_the_environment(
    box: Sandbox,
) -> None:
    environ = {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "LC_TIME": "C",
        "LC_TERMINAL": "iTerm2",
    }
    with box.command(["true"], box.worktree, environ) as (argv, env):
        assert env is not None and "LANG" not in env and "LC_TIME" not in env
        assert env["LC_TERMINAL"] == "iTerm2"  # not a locale: stays a variable
        at = argv.index("--chdir")
        pairs = {tuple(argv[i : i + 3]) for i in range(at - 6, at, 3)}
        assert pairs == {("--setenv", "LANG", "C.UTF-8"), ("--setenv", "LC_TIME", "C")}, argv
    said, _argv = run(box, 'echo "$LANG $LC_TIME $LC_TERMINAL"', environ)
    assert said == "C.UTF-8 C iTerm2\n", said


@needs_bwrap
def test_home_is_read_only_with_or_without_its_own_bind(project: Path, tmp_path: Path) -> None:
    """HOME outside /tmp is read-only through ``--ro-bind / /`` (no bind of its own: one
    mount less for every command); under /tmp, where the private /tmp would hide it, it
    is bound back read-only."""
    for parent in ("/var/tmp", str(tmp_path)):
        home = Path(tempfile.mkdtemp(dir=parent))
        try:
            (home / "file").write_text("mine\n")
            box = Sandbox.of({}, project, tmp_path / "session-tmp")
            box.home = home
            said, argv = run(box, f"cat {home}/file; echo x > {home}/file; touch {home}/new")
            bound = any(
                argv[i : i + 3] == ["--ro-bind", str(home), str(home)] for i in range(len(argv))
            )
            assert bound == home.is_relative_to("/tmp"), argv
            assert said.startswith("mine\n") and said.count("Read-only file system") == 2, said
            assert (home / "file").read_text() == "mine\n" and not (home / "new").exists()
        finally:
            shutil.rmtree(home, ignore_errors=True)
            release_tmp(tmp_path / "session-tmp")
