"""What a sandboxed command costs (issue 29), and that the cheaper way keeps every
guarantee: the session's tmpfs holder is entered by a 212-byte static program (``hop``)
rather than nsenter, through descriptors opened once (never through its PID, which a
holder that died may have handed to another process), with nsenter where the hop cannot
run; the locale reaches the command through bwrap's ``--setenv`` (the hop's helpers start
in the C locale); HOME is bound read-only again only where the private /tmp would hide
it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import needs_bwrap

from tui_agent.core.sandbox import hop, private_tmp
from tui_agent.core.sandbox.private_tmp import release_tmp
from tui_agent.sandbox import Sandbox


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
    user, mount, net = holder.namespaces
    assert namespace(f"/proc/self/fd/{mount}") == namespace(f"/proc/{pid}/ns/mnt")
    assert namespace(f"/proc/self/fd/{user}") == namespace(f"/proc/{pid}/ns/user")
    assert namespace(f"/proc/self/fd/{net}") == namespace(f"/proc/{pid}/ns/net")
    assert namespace(f"/proc/self/fd/{mount}") != namespace("/proc/self/ns/mnt")
    assert namespace(f"/proc/self/fd/{net}") != namespace("/proc/self/ns/net")
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


def test_the_hops_machine_code_is_its_source() -> None:
    """``hop.CODE`` is what binutils make of ``hop.SOURCE`` (no unexplained bytes); the
    executable around it is one read-only, executable segment that starts at the code."""
    program = hop.elf()
    assert program[:4] == b"\x7fELF" and program[18] == 62 and len(program) == 120 + len(hop.CODE)
    assert int.from_bytes(program[24:32], "little") == hop.BASE + 120  # the entry: the code
    assert program[120:] == hop.CODE
    assembler, objcopy = shutil.which("as"), shutil.which("objcopy")
    if assembler is None or objcopy is None:
        pytest.fail("checking the hop's machine code needs binutils (apt-get install binutils)")
    with tempfile.TemporaryDirectory() as folder:
        source, made, code = (Path(folder) / name for name in ("hop.s", "hop.o", "hop.bin"))
        source.write_text(hop.SOURCE)
        subprocess.run([assembler, "--64", "-o", str(made), str(source)], check=True)
        subprocess.run([objcopy, "-O", "binary", "-j", ".text", str(made), str(code)], check=True)
        assert code.read_bytes() == hop.CODE


@needs_bwrap
def test_commands_enter_the_holder_without_nsenter(project: Path, tmp_path: Path) -> None:
    """With no nsenter on PATH, commands still run in the session's tmpfs (kept between
    them, and of tmp_size): the hop enters it."""
    tools = Path.home() / "bin"  # (HOME is in the sandbox; the real /tmp is not)
    tools.mkdir()
    for name in ("bwrap", "bash", "sh", "mount", "unshare", "stat", "cat", "head", "true"):
        found = shutil.which(name)
        assert found is not None, name
        (tools / name).symlink_to(found)
    script = (
        "import sys, subprocess; from pathlib import Path;"
        " from tui_agent.sandbox import Sandbox;"
        " box = Sandbox.of({'sandbox': {'tmp_size': '8M'}}, Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "def run(command):\n"
        "    with box.command(['bash', '-c', command], Path(sys.argv[1])) as (argv, env):\n"
        "        print(argv[0])\n"
        "        done = subprocess.run(argv, env=env, capture_output=True, text=True)\n"
        "    return done.stdout + done.stderr\n"
        "print(run('stat -f -c %T /tmp; echo kept > /tmp/k'), end='')\n"
        "print(run('cat /tmp/k; head -c 20M /dev/zero > /tmp/big'), end='')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(project), str(tmp_path / "session-tmp")],
        env={**os.environ, "PATH": str(tools)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("/proc/") and lines[2] == lines[0], lines  # the hop, twice
    assert lines[1] == "tmpfs" and lines[3] == "kept", lines
    assert "No space left on device" in lines[4], lines


@needs_bwrap
def test_where_the_hop_cannot_run_nsenter_enters(
    box: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A hop that fails (exit 3), or that the kernel will not run (a memfd where
    ``vm.memfd_noexec`` is 2: here a file that is not executable): nsenter enters."""
    failing = tmp_path / "failing-hop"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    not_run = tmp_path / "not-run-hop"
    not_run.write_bytes(hop.elf())
    not_run.chmod(0o644)
    for broken in (failing, not_run):
        release_tmp(tmp_path / "session-tmp")  # a new holder, which tries its hop
        caplog.clear()
        monkeypatch.setattr(hop, "program", lambda broken=broken: str(broken))
        said, argv = run(box, "echo kept > /tmp/marker; cat /tmp/marker; stat -f -c %T /tmp")
        assert said == "kept\ntmpfs\n", said
        assert os.path.basename(argv[0]) == "nsenter" and "--preserve-credentials" in argv
        assert "the namespace hop cannot run here" in caplog.text
        # it enters the session's network too, whose loopback is up (it refuses a port
        # nobody listens on; a loopback down is "Network is unreachable")
        said, argv = run(box, "exec 3<>/dev/tcp/127.0.0.1/9")
        assert any(a.startswith("--net=/proc/") for a in argv) and "--unshare-net" not in argv
        assert "Connection refused" in said, said
        said, _argv = run(box, "cat /tmp/marker")
        assert said == "kept\n", said


def test_the_hop_says_when_it_cannot_enter(tmp_path: Path) -> None:
    where = hop.program()
    if where is None:
        pytest.fail("no hop here (x86-64 Linux with memfd): the tests above cover nsenter")
    missing = str(tmp_path / "no-such-namespace")
    for argv in (
        [where, "2", missing, "/proc/self/ns/mnt", "/bin/true"],  # cannot be opened
        [where, "2", "/proc/self/ns/mnt", missing, "/bin/true"],  # (opened before any setns)
        [where, "1", "/proc/self/ns/user"],  # too few arguments: no program
        [where, "3", "/proc/self/ns/user", "/proc/self/ns/mnt", "/bin/true"],
        [where, "0", "/bin/true"],  # the count: one digit from 1 to 8
        [where, "9", *["/proc/self/ns/mnt"] * 9, "/bin/true"],
        [where, "12", "/proc/self/ns/mnt", "/bin/true"],
        [where, "/proc/self/ns/user", "/proc/self/ns/mnt", "/bin/true"],  # the old form
        [where],
    ):
        done = subprocess.run(argv, capture_output=True, text=True)
        assert done.returncode == 127, argv
        assert "cannot enter the sandbox's private /tmp" in done.stderr, argv


def test_masked_sockets_on_strings_keep_every_rule(project: Path, tmp_path: Path) -> None:
    """``masked_sockets`` (strings, each folder resolved once) masks a socket where it
    really is, not one ``unix_sockets`` allows, none under a hidden folder, none in the
    real /tmp outside what the sandbox binds in (the worktree there is)."""
    import socket as sockets

    base = Path(tempfile.mkdtemp(dir="/var/tmp"))
    made: list[sockets.socket] = []

    def listen(path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        made.append(sockets.socket(sockets.AF_UNIX))
        made[-1].bind(str(path))
        return path

    try:
        masked = listen(base / "a.sock")
        allowed = listen(base / "b.sock")
        listen(base / "secret" / "c.sock")
        (base / "link").symlink_to(base / "real", target_is_directory=True)
        through_link = listen(base / "real" / "d.sock")
        listen(base / "link" / "e.sock")  # the same folder: one entry, where it really is
        listen(tmp_path / "outside" / "f.sock")  # the real /tmp: not in the sandbox
        inside = listen(project / "g.sock")  # the worktree: bound in
        settings = {"unix_sockets": [str(allowed)], "hide": [str(base / "secret")]}
        box = Sandbox.of({"sandbox": settings}, project)
        found = set(box.masked_sockets())
        mine = {p for p in found if p.is_relative_to(base) or p.is_relative_to(tmp_path)}
        assert mine == {masked, through_link, base / "real" / "e.sock", inside.resolve()}, mine
    finally:
        for one in made:
            one.close()
        shutil.rmtree(base, ignore_errors=True)


def test_no_hop_on_another_architecture(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine code is x86-64's: elsewhere there is no hop (nsenter does it), and the
    one made here is a sealed, read-only memfd nobody can change."""
    where = hop.program()
    if where is None:
        pytest.fail("no hop here (x86-64 Linux with memfd)")
    assert Path(where).read_bytes() == hop.elf() and os.readlink(where).startswith("/memfd:")
    opened = os.open(where, os.O_WRONLY)
    try:
        with pytest.raises(PermissionError):
            os.write(opened, b"\xcc")  # sealed (F_SEAL_WRITE): not even this process
    finally:
        os.close(opened)
    with pytest.raises(PermissionError):
        os.truncate(where, 0)  # nor shrink it (F_SEAL_SHRINK)
    monkeypatch.setattr(hop, "_MADE", [])
    monkeypatch.setattr(hop.platform, "machine", lambda: "aarch64")
    assert hop.program() is None
