"""The shell sandbox (issue 20) with the real bubblewrap: ``execute`` and ``!command``
write only inside the worktree and a private /tmp, see HOME read-only and no credential
folders, get no network and no secrets unless allowed; timeouts and cancels leave no
process; sandboxed commands need no approval, deny rules hold, ``"sandbox": false`` asks.

The sandbox is on by default: these sessions get it from no ``[sandbox]`` table at all.
Without bwrap the tests that need it fail, saying how to get it (``.ci/run`` installs it);
none is skipped."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import needs_bwrap, running, write

from tui_agent import ApprovalRequest, Decision, Session, create_session
from tui_agent.core.sandbox import netproxy
from tui_agent.core.sandbox.sandbox import scrubbed_env
from tui_agent.core.util.paths import user_config_dir
from tui_agent.sandbox import Sandbox, caused
from tui_agent.testing import Call, FakeOpenAI, Person, Reply

ON = '[permission]\n"*" = "allow"\n'  # no [sandbox] table: on by default


def configure(text: str) -> None:
    write(user_config_dir() / "config.toml", text)


@pytest.fixture
def session(project: Path) -> Iterator[Session]:
    configure(ON)
    made = create_session(project)
    assert made.sandbox.active, made.sandbox.reason
    yield made
    made.conversation.journal.close()


async def run(session: Session, command: str, **more: Any) -> dict[str, Any]:
    return (await session.toolbox.run("execute", {"command": command, **more})).to_dict()


class Recorder:
    """An approver that records every request and gives one answer."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return Decision(self.answer)  # type: ignore[arg-type]


# -- the pure parts ----------------------------------------------------------------------------


def test_the_environment_is_an_allow_list_without_the_key() -> None:
    env = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "VIRTUAL_ENV": "/p/.venv",
        "OPENAI_API_KEY": "sk-1234567890abcdef",
        "GITHUB_TOKEN": "t",
        "PGPASSWORD": "pw",
        "SECRET_KEY": "django",
        "DATABASE_URL": "postgres://u:pw@db/x",
        "OPENAI_KEY": "o",
        "TOKEN": "t",
        "AUTH_HEADER": "Bearer sk-1234567890abcdef",
        "RENAMED_KEY": "sk-1234567890abcdef",
        "TOKENIZER": "keep?",
        "MY_SETTING": "1",
        "CONDA_PREFIX": "/c",
    }
    key = {"api_key": "sk-1234567890abcdef"}
    kept = Sandbox.of(key, Path("/")).env(env)
    assert kept == {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "VIRTUAL_ENV": "/p/.venv",
        "CONDA_PREFIX": "/c",
        "TMPDIR": "/tmp",
    }
    # env = [...] adds names and patterns; a secret-looking name only when named exactly;
    # a value holding the key never passes; scrub_env still drops
    more = {**key, "sandbox": {"env": ["MY_*", "TOKEN", "AUTH_*", "*_URL"], "scrub_env": ["DATA*"]}}
    kept = Sandbox.of(more, Path("/")).env(env)
    assert kept["MY_SETTING"] == "1" and kept["TOKEN"] == "t"
    assert "AUTH_HEADER" not in kept and "DATABASE_URL" not in kept
    assert "GITHUB_TOKEN" not in kept and "PGPASSWORD" not in kept
    # a short key (a local server's) is matched only as a whole value
    short = Sandbox.of({"api_key": "ollama"}, Path("/")).env({"PATH": "/opt/ollama/bin", "X": "o"})
    assert short["PATH"] == "/opt/ollama/bin"
    assert scrubbed_env({"X_CUSTOM": "1", "Y": "2"}, ("x_*",)) == {"Y": "2"}


def test_settings_problems_and_defaults(project: Path) -> None:
    configure('[sandbox]\nenabled = "yes"\nnetwork = true\n')
    made = create_session(project)
    problems = [str(p) for p in made.extensions.config_problems]
    assert any("sandbox.enabled must be true or false" in p for p in problems), problems
    # the whole table is dropped, the defaults apply: on, no network
    assert made.sandbox.settings.enabled and not made.sandbox.settings.network
    made.conversation.journal.close()
    for bad in ['"yes"', '["pypi.org", 1]', '[""]']:
        configure(f"[sandbox]\nnetwork = {bad}\n")
        made = create_session(project)
        problems = [str(p) for p in made.extensions.config_problems]
        assert any("network must be true, false or a list of hosts" in p for p in problems)
        assert not made.sandbox.settings.network and not made.sandbox.settings.hosts
        made.conversation.journal.close()
    configure('[sandbox]\nnetwork = ["pypi.org"]\n')
    hosts = create_session(project)
    assert hosts.sandbox.settings.hosts == ("pypi.org",) and hosts.sandbox.proxied
    hosts.conversation.journal.close()
    configure("[sandbox]\nenabled = false\n")
    off = create_session(project)
    assert not off.sandbox.active and "off in config" in str(off.sandbox.reason)
    off.conversation.journal.close()


def test_caused() -> None:
    assert caused("touch: cannot touch '/etc/x': Read-only file system") is not None
    assert caused("curl: (6) Could not resolve host: example.com") == "no network"
    assert caused("all fine") is None


# -- files ------------------------------------------------------------------------------------


@needs_bwrap
async def test_writes_only_inside_the_worktree_and_tmp(
    session: Session, project: Path, isolated_home: Path
) -> None:
    outside = isolated_home / "outside"  # HOME, as all but the worktree and /tmp: read-only
    outside.mkdir()
    result = await run(session, f"echo no > {outside}/x")
    assert result["exit_status"] != 0 and not (outside / "x").exists()
    assert "Read-only file system" in result["output"]
    assert '"sandbox": false' in result["sandbox"]  # the model is told about the hatch
    result = await run(session, "echo yes > inside.txt && echo t > /tmp/t && cat /tmp/t")
    assert result["exit_status"] == 0 and result["output"] == "t\n", result
    assert (project / "inside.txt").read_text() == "yes\n"
    assert "sandbox" not in result
    # the private /tmp lasts the session: the next command sees /tmp/t, the real /tmp not
    assert (await run(session, "cat /tmp/t"))["output"] == "t\n"
    assert not Path("/tmp/t").exists() or Path("/tmp/t").read_text() != "t\n"
    await session.close()
    assert not session.sandbox.tmp or not session.sandbox.tmp.exists()


@needs_bwrap
async def test_protected_folders_and_home_are_read_only(
    session: Session, project: Path, isolated_home: Path
) -> None:
    (project / ".git" / "hooks").mkdir()
    (project / ".tui-agent").mkdir()
    (project / ".agents").mkdir()
    (project / ".claude").mkdir()
    write(isolated_home / ".ssh" / "id_ed25519", "PRIVATE KEY\n")
    write(isolated_home / "notes.txt", "mine\n")
    session.reload()
    for target in [
        project / ".git" / "hooks" / "pre-commit",
        project / ".tui-agent" / "config.toml",
        project / ".agents" / "x.py",
        project / ".claude" / "settings.json",
        isolated_home / "new.txt",
    ]:
        result = await run(session, f"echo evil > {target}")
        assert result["exit_status"] != 0 and not target.exists(), target
    result = await run(session, "cat ~/notes.txt; cat ~/.ssh/id_ed25519; ls -A ~/.ssh | wc -l")
    assert "mine" in result["output"] and "PRIVATE KEY" not in result["output"]
    assert result["output"].endswith("0\n")
    config = user_config_dir() / "config.toml"  # tui-agent's own config is hidden too
    assert "allow" not in (await run(session, f"cat {config}"))["output"]
    assert (await run(session, "echo ok > ok.txt"))["exit_status"] == 0


@needs_bwrap
async def test_protected_folders_not_there_yet_cannot_be_made(
    session: Session, project: Path
) -> None:
    """A trusted folder with no .tui-agent/ yet: a command must not plant a plugin there
    (it would load at the next start). Nothing is left behind in the worktree: the
    session's empty stand-ins (not .tui-agent's) go when it ends."""
    before = sorted(p.name for p in project.rglob("*"))

    def left() -> list[str]:
        """What is there now that was not before: only the session's stand-ins, empty."""
        new = sorted({p.name for p in project.rglob("*")} - set(before))
        assert not [p for p in project.rglob("*") if p.parent.name in new], new
        return new

    # kept by the session until it ends; .git/hooks, info and worktrees in the empty .git
    kept = sorted({".agents", ".claude", ".opencode", ".gemini", ".codex", ".vscode"})
    kept = sorted([*kept, "hooks", "info", "worktrees"])

    for command in [
        "mkdir -p .tui-agent/plugins && echo evil > .tui-agent/plugins/x.py",
        "mkdir -p .agents/tools && echo evil > .agents/tools/x.py",
        "mkdir .claude; echo '{}' > .claude/settings.json",
        "mkdir .git/hooks; echo evil > .git/hooks/pre-commit",
        "rm -rf .tui-agent && mkdir .tui-agent && touch .tui-agent/config.toml",
    ]:
        result = await run(session, command)
        assert result["exit_status"] != 0, (command, result)
    assert left() == kept
    # two commands at once share the placeholders: the first to end leaves them in place
    slow = asyncio.ensure_future(run(session, "sleep 1; mkdir .tui-agent/x"))
    await asyncio.sleep(0.3)
    assert (await run(session, "true"))["exit_status"] == 0
    assert (await slow)["exit_status"] != 0 and not (project / ".tui-agent" / "x").exists()
    assert left() == kept
    # what the user makes themselves later is theirs: not touched
    (project / ".tui-agent").mkdir()
    assert (await run(session, "true"))["exit_status"] == 0
    assert (project / ".tui-agent").is_dir()
    await session.close()
    assert sorted(p.name for p in project.rglob("*")) == sorted([*before, ".tui-agent"])


def sandboxed(box: Sandbox, command: str, workdir: Path | None = None) -> tuple[int, str]:
    """Run ``command`` in ``box`` (no session): exit status and output."""
    with box.command(["bash", "-c", command], workdir or box.worktree) as (argv, env):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    return done.returncode, done.stdout + done.stderr


@needs_bwrap
def test_git_cannot_be_renamed_replaced_or_made(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    box = Sandbox.of({}, repo)
    status, said = sandboxed(box, "mv .git .git-old || echo refused; git status --short | wc -l")
    assert "refused" in said and (repo / ".git" / "HEAD").is_file()
    assert not (repo / ".git-old").exists()
    # the files that run code: read-only; the rest of .git works (a commit)
    status, said = sandboxed(
        box,
        "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x && echo committed;"
        " git config core.fsmonitor 'echo PWNED' || echo config-refused",
    )
    assert "committed" in said and "config-refused" in said, said
    assert "PWNED" not in (repo / ".git" / "config").read_text()
    # core.hooksPath inside the worktree (husky): protected like .git/hooks
    subprocess.run(["git", "-C", str(repo), "config", "core.hooksPath", ".husky/_"], check=True)
    (repo / ".husky" / "_").mkdir(parents=True)
    status, said = sandboxed(box, "echo evil > .husky/_/pre-commit")
    assert status != 0 and not (repo / ".husky" / "_" / "pre-commit").exists()
    # a linked worktree's .git file is read-only
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    before = (linked / ".git").read_text()
    status, said = sandboxed(Sandbox.of({}, linked), "echo 'gitdir: /evil' > .git; rm -f .git")
    assert status != 0 and (linked / ".git").read_text() == before
    # no repository: no git init (its hooks would run at the user's next git command)
    plain = tmp_path / "plain"
    plain.mkdir()
    status, said = sandboxed(Sandbox.of({}, plain), "git init -q . && echo made")
    assert "made" not in said and not (plain / ".git").exists(), said


@needs_bwrap
async def test_a_protected_link_replaced_is_put_back(session: Session, project: Path) -> None:
    """.claude -> .agents: read-only where it leads; the link itself sits in the writable
    worktree, so a replacement is moved aside (nothing loads it) and the link restored."""
    write(project / ".agents" / "plugins" / "mine.py", "# mine\n")
    (project / ".claude").symlink_to(".agents")
    (project / ".opencode").symlink_to("nowhere")  # a dangling protected link: no mount
    session.reload()
    blocked = await run(session, "echo evil > .claude/plugins/mine.py")
    assert blocked["exit_status"] != 0
    result = await run(
        session, "rm .claude && mkdir -p .claude/plugins && echo evil > .claude/plugins/x.py"
    )
    assert result["exit_status"] == 0  # the sandbox let it happen, then undid it
    assert os.readlink(project / ".claude") == ".agents"
    assert not (project / ".agents" / "plugins" / "x.py").exists()
    aside = project / ".claude.replaced-in-sandbox-1"
    assert (aside / "plugins" / "x.py").read_text() == "evil\n"
    assert "protected link" in result["sandbox"] and aside.name in result["sandbox"]
    assert (project / ".agents" / "plugins" / "mine.py").read_text() == "# mine\n"
    assert "protected link" not in json.dumps(await run(session, "true"))  # said once
    assert os.readlink(project / ".opencode") == "nowhere"
    assert not (project / "nowhere").exists()


@needs_bwrap
def test_hidden_paths_stay_hidden_inside_the_worktree(tmp_path: Path, isolated_home: Path) -> None:
    """Started in HOME (the worktree), ~/.ssh and the config folder are still hidden; so is
    a hide = [...] path inside the worktree; a symlinked credential folder is hidden where
    it leads, and does not stop commands from running."""
    write(isolated_home / ".ssh" / "id_rsa", "KEY\n")
    write(isolated_home / "dotfiles" / "aws" / "credentials", "AWSKEY\n")
    (isolated_home / ".aws").symlink_to(isolated_home / "dotfiles" / "aws")
    write(user_config_dir() / "config.toml", 'api_key = "sk-in-config"\n')
    write(isolated_home / ".env", "ENVSECRET\n")
    box = Sandbox.of({"sandbox": {"hide": ["~/.env"]}}, isolated_home)
    _, said = sandboxed(
        box,
        f"cat ~/.ssh/id_rsa; cat ~/.aws/credentials; cat {user_config_dir()}/config.toml;"
        " cat .env; echo x > ~/.ssh/new; echo ran",
    )
    assert "ran" in said, said
    for secret in ["KEY", "sk-in-config", "ENVSECRET"]:  # "KEY" covers "AWSKEY" too
        assert secret not in said, (secret, said)
    assert not (isolated_home / ".ssh" / "new").exists()


@needs_bwrap
def test_the_ssh_agent_is_out_of_reach(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = isolated_home / "agent.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(agent))
    listener.listen()
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    project = tmp_path / "p"
    project.mkdir()
    probe = (
        f"{PYTHON} -I -c \"import os, socket; print('env', os.environ.get('SSH_AUTH_SOCK'));"
        f" s = socket.socket(socket.AF_UNIX); s.connect('{agent}'); print('reached')\""
    )
    try:
        _, said = sandboxed(Sandbox.of({}, project), probe)
    finally:
        listener.close()
    assert "env None" in said and "reached" not in said, said


@needs_bwrap
def test_stand_ins_are_shared_between_tui_agent_processes(project: Path) -> None:
    """This process's command made the stand-ins and ends first, while another process's
    command still runs: the stand-in must stay (pulling it would let that one make
    .agents/), and the last command to end removes it."""
    mine = Sandbox.of({}, project).command(["bash", "-c", "sleep 0.8"], project)
    argv, env = mine.__enter__()
    first = subprocess.Popen(argv, env=env)
    time.sleep(0.3)  # bwrap has made its stand-ins
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; from pathlib import Path;"
            " from tui_agent.sandbox import Sandbox;"
            f" box = Sandbox.of({{}}, Path({str(project)!r}));"
            " cm = box.command(['bash', '-c', 'sleep 1.5; mkdir -p .agents/x'], box.worktree);"
            " argv, env = cm.__enter__(); print('started', flush=True);"
            " done = subprocess.run(argv, env=env); cm.__exit__(None, None, None);"
            " print('other', done.returncode)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdout is not None and other.stdout.readline() == "started\n"
    assert first.wait(10) == 0
    mine.__exit__(None, None, None)  # ends first
    out, _ = other.communicate(timeout=30)
    assert out.strip() == "other 1" and not (project / ".agents" / "x").exists()
    assert sorted(p.name for p in project.iterdir()) == [".git"]  # the last one cleaned up


@needs_bwrap
async def test_user_shell_runs_in_the_sandbox(
    session: Session, project: Path, isolated_home: Path
) -> None:
    outside = isolated_home / "typed.txt"
    done = await session.shell(f"echo y > inside.txt; echo x > {outside}")
    assert not outside.exists() and (project / "inside.txt").exists()
    assert "Read-only file system" in done.output
    # the user is told how to run it outside: !!command, their own escape hatch
    [note] = [n.text for n in session.output.history if "!!" in n.text]
    assert "a write outside the writable folders" in note
    assert f"!!echo y > inside.txt; echo x > {outside}" in note
    done = await session.shell(f"echo x > {outside}", sandbox=False)
    assert done.ok and outside.read_text() == "x\n"
    # a failure that is not the sandbox's doing gets no such note
    await session.shell("exit 3")
    assert len([n for n in session.output.history if "!!" in n.text]) == 1


def test_a_double_bang_line_runs_outside() -> None:
    from tui_agent.core.sandbox import user_shell

    assert user_shell.command_of("!!git push") == "git push"
    assert user_shell.outside("!!git push") and not user_shell.outside("!git push")
    assert user_shell.command_of("!git push") == "git push"
    assert user_shell.command_of("!! ") == "" and user_shell.command_of("git") is None


# -- network and secrets -----------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers "hello" to each connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.sendall(b"hello\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
async def test_network_only_when_allowed(project: Path, server: int, network: bool) -> None:
    configure(ON + f"[sandbox]\nnetwork = {str(network).lower()}\n")
    session = create_session(project)
    command = f"exec 3<>/dev/tcp/127.0.0.1/{server} && head -1 <&3"
    result = await run(session, command)
    if network:
        assert result["output"] == "hello\n" and result["exit_status"] == 0
    else:
        assert result["exit_status"] != 0 and "hello" not in result["output"]
    session.conversation.journal.close()


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {self.server.server_address[0]} {self.path}\n".encode()
        if self.path == "/host":  # what the server was told it is
            body = f"host={self.headers.get('Host')}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def web() -> Iterator[dict[str, int]]:
    """HTTP servers on 127.0.0.2 and 127.0.0.3 (loopback too, but not "localhost"): address
    → port."""
    servers = [http.server.ThreadingHTTPServer((ip, 0), Hello) for ip in ("127.0.0.2", "127.0.0.3")]
    for one in servers:
        threading.Thread(target=one.serve_forever, daemon=True).start()
    yield {str(one.server_address[0]): int(one.server_address[1]) for one in servers}
    for one in servers:
        one.shutdown()
        one.server_close()


PYTHON = os.path.realpath(sys.executable)  # the venv may sit under the hidden /tmp


def fetch(url: str, tunnel: bool = False) -> str:
    """A command fetching ``url`` with Python through the proxy variables (``tunnel``:
    by CONNECT, as https does)."""
    if tunnel:
        host, port, path = url.removeprefix("http://").replace("/", ":", 1).split(":")
        code = (
            "import http.client, os, urllib.parse as u\n"
            "proxy = u.urlsplit(os.environ['HTTPS_PROXY'])\n"
            "c = http.client.HTTPConnection(proxy.hostname, proxy.port)\n"
            f"c.set_tunnel({host!r}, {port})\n"
            f"c.request('GET', '/{path}')\n"
            "print(c.getresponse().read().decode(), end='')"
        )
    else:
        code = f"import urllib.request as r; print(r.urlopen({url!r}).read().decode(), end='')"
    return f"{PYTHON} -I -c {shlex.quote(code)}"


@needs_bwrap
async def test_only_the_allowed_hosts_are_reachable(project: Path, web: dict[str, int]) -> None:
    configure(ON + '[sandbox]\nnetwork = ["127.0.0.2:*"]\n')  # the servers' ports are random
    session = create_session(project)
    allowed, other = web["127.0.0.2"], web["127.0.0.3"]
    assert "network only to 127.0.0.2:*" in session.sandbox.describe()
    assert "network only to 127.0.0.2:*" in session.toolbox.tools["execute"].description
    plain = await run(session, fetch(f"http://127.0.0.2:{allowed}/plain"))
    assert plain["output"] == "hello from 127.0.0.2 /plain\n", plain
    tunnel = await run(session, fetch(f"http://127.0.0.2:{allowed}/tunnel", tunnel=True))
    assert tunnel["output"] == "hello from 127.0.0.2 /tunnel\n", tunnel
    for refused in (
        await run(session, fetch(f"http://127.0.0.3:{other}/no")),
        await run(session, fetch(f"http://127.0.0.3:{other}/no", tunnel=True)),
    ):
        assert refused["exit_status"] != 0 and "hello" not in refused["output"], refused
        assert "a host the sandbox does not allow" in refused.get("sandbox", ""), refused
    assert "403" in refused["output"]
    # no way around the proxy: no route out of the sandbox
    direct = await run(session, f"exec 3<>/dev/tcp/127.0.0.2/{allowed} && head -1 <&3")
    assert direct["exit_status"] != 0 and "hello" not in direct["output"]
    # the user's !command gets the same
    done = await session.shell(fetch(f"http://127.0.0.2:{allowed}/typed"))
    assert done.output == "hello from 127.0.0.2 /typed\n"
    # a /reload with other hosts: the proxy follows
    configure(ON + f'[sandbox]\nnetwork = ["127.0.0.3:{other}"]\n')
    await session.reload()
    moved = await run(session, fetch(f"http://127.0.0.3:{other}/now"))
    assert moved["output"] == "hello from 127.0.0.3 /now\n", moved
    assert "403" in (await run(session, fetch(f"http://127.0.0.2:{allowed}/x")))["output"]
    [proxy] = [p for k, p in netproxy._RUNNING.items() if k == session.sandbox.tmp]
    await session.close()
    assert not proxy.path.parent.exists()  # stopped with the session


def test_host_patterns() -> None:
    hosts = ("pypi.org", "*.github.com", "[::1]", "example.com:8080", "127.0.0.9:*")
    assert netproxy.allowed("PyPI.org.", hosts) and netproxy.allowed("pypi.org", hosts, 80)
    assert netproxy.allowed("api.github.com", hosts) and netproxy.allowed("a.b.github.com", hosts)
    assert not netproxy.allowed("github.com", hosts)  # *.x is under x, not x itself
    assert not netproxy.allowed("evilgithub.com", hosts)
    assert not netproxy.allowed("pypi.org.evil.com", hosts)
    assert netproxy.allowed("::1", hosts)
    # ports: 80 and 443 unless the pattern names one (or *)
    assert not netproxy.allowed("pypi.org", hosts, 22)
    assert not netproxy.allowed("api.github.com", hosts, 22)
    assert netproxy.allowed("example.com", hosts, 8080)
    assert not netproxy.allowed("example.com", hosts, 443)
    assert netproxy.allowed("127.0.0.9", hosts, 5432)
    # names that are not plain DNS names or IP literals are refused before any match
    for trick in ["127.0.0.2\x00.github.com", "a b.github.com", "x@api.github.com", "é.github.com"]:
        assert not netproxy.allowed(trick, hosts), trick
    assert netproxy._target("CONNECT pypi.org:443 HTTP/1.1") == ("CONNECT", "pypi.org", 443, "")
    assert netproxy._target("GET http://u:p@h.org/a?b HTTP/1.0") == ("GET", "h.org", 80, "/a?b")
    assert netproxy._target("GET http://[::1]:8080/x HTTP/1.1") == ("GET", "[::1]", 8080, "/x")
    for unusable in ["GET /relative HTTP/1.1", "CONNECT nohost HTTP/1.1", "GET https://h/ HTTP/1"]:
        assert netproxy._target(unusable) is None


def test_the_proxy_closes_a_plain_connection_after_one_request(web: dict[str, int]) -> None:
    """A kept-alive connection cannot carry a second request to a host not allowed."""
    proxy = netproxy.HostProxy(("127.0.0.2:*",))
    proxy.start()
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(proxy.path))
            first = f"GET http://127.0.0.2:{web['127.0.0.2']}/one HTTP/1.1\r\nHost: x\r\n\r\n"
            second = f"GET http://127.0.0.3:{web['127.0.0.3']}/two HTTP/1.1\r\nHost: y\r\n\r\n"
            conn.sendall((first + second).encode())
            conn.settimeout(5)
            got = b""
            while data := conn.recv(65536):
                got += data
        assert b"hello from 127.0.0.2 /one" in got and b"127.0.0.3" not in got
        assert got.count(b"HTTP/1.") == 1
    finally:
        proxy.close()
    assert not proxy.path.parent.exists()


def proxy_says(proxy: netproxy.HostProxy, request: bytes) -> bytes:
    """What ``proxy`` answers to ``request`` sent on one connection, to the end."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(proxy.path))
        conn.sendall(request)
        conn.settimeout(5)
        got = b""
        while data := conn.recv(65536):
            got += data
    return got


def test_the_proxy_connects_only_to_the_name_it_checked(web: dict[str, int]) -> None:
    """A NUL byte in the name would match *.github.com, and C would stop reading at it
    and connect to 127.0.0.2; a bad port must not kill the connection's thread; a plain
    request's Host is the checked host's."""
    port = web["127.0.0.2"]
    proxy = netproxy.HostProxy(("*.github.com:*", "127.0.0.2:*"))
    proxy.start()
    try:
        for request in [
            f"GET http://127.0.0.2\x00.github.com:{port}/ HTTP/1.1\r\n\r\n",
            f"CONNECT 127.0.0.2\x00.github.com:{port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
        ]:
            answer = proxy_says(proxy, request.encode("latin-1"))
            assert answer.startswith(b"HTTP/1.1 403") and b"hello" not in answer, answer
        assert proxy_says(proxy, b"CONNECT pypi.org:\xc2\xb2 HTTP/1.1\r\n\r\n").startswith(
            b"HTTP/1.1 400"
        )
        fronted = f"GET http://127.0.0.2:{port}/host HTTP/1.1\r\nHost: evil.example\r\n\r\n"
        assert f"host=127.0.0.2:{port}".encode() in proxy_says(proxy, fronted.encode())
        assert proxy.running
    finally:
        proxy.close()
    assert not proxy.running


def test_a_proxy_that_stopped_is_started_again(tmp_path: Path) -> None:
    first = netproxy.ensure(tmp_path, ("pypi.org",))
    assert netproxy.ensure(tmp_path, ("pypi.org",)) is first
    first.close()  # as if its thread had died
    second = netproxy.ensure(tmp_path, ("pypi.org",))
    assert second is not first and second.running
    netproxy.stop(tmp_path)
    assert not second.running


@needs_bwrap
async def test_secrets_do_not_reach_the_command(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-the-key-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-token")
    monkeypatch.setenv("INNOCENT", key)  # the key's value under another name
    monkeypatch.setenv("AUTH_HEADER", f"Bearer {key}")  # the key inside a value
    # names no pattern list catches (the attack pass got each of these through)
    for name in ("PGPASSWORD", "SECRET_KEY", "DATABASE_URL", "OPENAI_KEY", "TOKEN", "PLAIN"):
        monkeypatch.setenv(name, f"canary-{name}")
    configure(ON + '[sandbox]\nenv = ["PLAIN"]\n')
    session = create_session(project)
    output = (await run(session, "env"))["output"]
    assert "PLAIN=canary-PLAIN" in output and "\nPATH=" in f"\n{output}"  # passed
    assert "canary-" not in output.replace("canary-PLAIN", "")
    assert key not in output and "ghp-token" not in output
    assert "GITHUB_TOKEN" not in output and "OPENAI_API_KEY" not in output
    # outside the sandbox (asked, and allowed here) the environment is the agent's own
    session.frontend = Person(decide=Recorder("once"))
    outside = (await run(session, "env", sandbox=False))["output"]
    assert "GITHUB_TOKEN=ghp-token" in outside
    session.conversation.journal.close()


# -- processes ---------------------------------------------------------------------------------


async def gone(marker: str, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while running(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return not running(marker)


@needs_bwrap
async def test_a_timeout_kills_everything_in_the_sandbox(session: Session) -> None:
    marker = f"sleep 4141.{os.getpid()}"  # this run's only
    result = await run(session, f"({marker}; true) & {marker}; true", timeout=0.5)
    assert "timed out" in result["error"]
    assert await gone(marker), running(marker)


@needs_bwrap
async def test_a_cancel_kills_everything_in_the_sandbox(session: Session) -> None:
    marker = f"sleep 4242.{os.getpid()}"  # this run's only
    task = asyncio.ensure_future(run(session, f"({marker}; true) & setsid {marker}; true"))
    deadline = time.monotonic() + 5
    while len(running(marker)) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert len(running(marker)) >= 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(marker), running(marker)


@needs_bwrap
@pytest.mark.parametrize("how", ["execute", "!command"])
async def test_a_cancel_while_the_sandbox_starts_leaves_nothing(session: Session, how: str) -> None:
    """Esc right after the call: bwrap may be setting up, or not even started yet."""
    for n, delay in enumerate([0, 0, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05]):
        marker = f"sleep 4444.{os.getpid()}{n}"
        command = f"exec {marker}"
        run_it = run(session, command) if how == "execute" else session.shell(command)
        task = asyncio.ensure_future(run_it)
        await asyncio.sleep(delay)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
        assert await gone(marker, 2), (delay, running(marker))


@needs_bwrap
async def test_a_cancelled_user_shell_command_leaves_nothing(session: Session) -> None:
    marker = f"sleep 4343.{os.getpid()}"  # this run's only
    task = asyncio.ensure_future(session.shell(f"({marker}; true) & {marker}; true"))
    deadline = time.monotonic() + 5
    while not running(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert session.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(marker), running(marker)


# -- approvals: real turns against FakeOpenAI ---------------------------------------------------


@needs_bwrap
@pytest.mark.real_permissions
async def test_sandboxed_commands_need_no_approval_deny_holds_and_the_hatch_asks(
    project: Path, tmp_path: Path
) -> None:
    configure('[permission.execute]\n"rm *" = "deny"\n')
    write(project / "x", "precious\n")
    outside = tmp_path / "home" / "out.txt"  # HOME: read-only in the sandbox
    calls = [
        Call("execute", {"command": "echo made > made.txt"}),
        Call("execute", {"command": "rm x"}),
        Call("execute", {"command": f"echo out > {outside}"}),
        Call("execute", {"command": f"echo out > {outside}", "sandbox": False}),
    ]
    replies = [Reply(calls=[c]) for c in calls] + [Reply("done")]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        approver = Recorder("deny")
        session.frontend = Person(decide=approver)
        assert await session.turn("go") == "done"
    results = [
        json.loads(m["content"]) for m in server.requests[-1]["messages"] if m["role"] == "tool"
    ]
    assert (project / "made.txt").read_text() == "made\n"  # no approval asked for it
    assert results[0]["exit_status"] == 0
    assert results[1]["error"] == "Permission denied: execute"
    assert (project / "x").exists()
    assert "sandbox" in results[2] and not outside.exists()
    assert results[3]["error"].startswith("User denied permission: execute")
    [request] = approver.requests  # only the escape hatch asked
    assert request.args["sandbox"] is False and "OUTSIDE the sandbox" in request.rule
    assert not outside.exists()
    # allowed, it runs outside: the write lands
    session.frontend = Person(decide=Recorder("once"))
    result = await run(session, f"echo out > {outside}", sandbox=False)
    assert result["exit_status"] == 0 and outside.read_text() == "out\n"
    session.conversation.journal.close()


@needs_bwrap
@pytest.mark.real_permissions
async def test_the_hatch_asks_even_in_allow_all_mode(project: Path) -> None:
    configure("# defaults: the sandbox on\n")
    session = create_session(project)
    session.permissions.set_mode("allow-all")
    approver = Recorder("deny")
    session.frontend = Person(decide=approver)
    assert (await run(session, "true"))["exit_status"] == 0
    assert not approver.requests
    assert "User denied" in (await run(session, "true", sandbox=False))["error"]
    assert len(approver.requests) == 1
    session.conversation.journal.close()


@needs_bwrap
@pytest.mark.real_permissions
async def test_modes_with_the_sandbox(project: Path) -> None:
    """ask and auto-edit run sandboxed commands unasked; plan refuses them all the same."""
    configure("# defaults: the sandbox on\n")
    session = create_session(project)
    approver = Recorder("deny")
    session.frontend = Person(decide=approver)
    session.permissions.set_mode("auto-edit")
    assert (await run(session, "echo edit > edit.txt"))["exit_status"] == 0
    assert (project / "edit.txt").read_text() == "edit\n" and not approver.requests
    session.permissions.set_mode("plan")
    refused = await run(session, "echo plan > plan.txt")
    assert "plan mode" in refused["error"] and not (project / "plan.txt").exists()
    assert "plan mode" in (await run(session, "true", sandbox=False))["error"]
    assert not approver.requests  # refused, not asked
    session.conversation.journal.close()


@needs_bwrap
@pytest.mark.real_permissions
async def test_auto_allow_false_asks_as_configured(project: Path) -> None:
    configure("[sandbox]\nenabled = true\nauto_allow = false\n")
    session = create_session(project)
    approver = Recorder("once")
    session.frontend = Person(decide=approver)
    assert (await run(session, "echo hi"))["output"] == "hi\n"
    assert len(approver.requests) == 1
    session.conversation.journal.close()


@needs_bwrap
async def test_permissions_command_and_tool_describe_the_sandbox(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_SECRET_THING", "x")
    await session.commands.run_line("/permissions")
    said = "\n".join(n.text for n in session.output.history)
    assert "Sandbox: on (bubblewrap)" in said and "no network" in said
    [passed] = [line for line in said.splitlines() if line.startswith("Environment passed")]
    assert "PATH" in passed and "HOME" in passed and "SOME_SECRET_THING" not in passed
    assert "sandbox" in session.toolbox.tools["execute"].params
    assert "runs in a sandbox" in session.toolbox.tools["execute"].description


async def test_without_bwrap_one_note_and_commands_run_as_before(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"  # a PATH with bash and env but no bwrap
    bin_dir.mkdir()
    for tool in ("bash", "env"):
        (bin_dir / tool).symlink_to(f"/usr/bin/{tool}")
    monkeypatch.setenv("PATH", str(bin_dir))
    configure(ON)
    session = create_session(project)
    assert not session.sandbox.active
    assert "bubblewrap (bwrap) is not installed" in str(session.sandbox.reason)
    session.reload()
    notes = [n.text for n in session.output.history if "Sandbox: off" in n.text]
    assert len(notes) == 1, notes
    await session.commands.run_line("/permissions")
    assert "Sandbox: off — bubblewrap (bwrap) is not installed" in session.output.history[-1].text
    outside = tmp_path / "written.txt"  # as today: nothing confines the command
    result = await run(session, f"echo hi > {outside}")
    assert result["exit_status"] == 0 and outside.exists() and "sandbox" not in result
    session.conversation.journal.close()


# -- the app -----------------------------------------------------------------------------------


@needs_bwrap
@pytest.mark.real_permissions
async def test_the_app_runs_sandboxed_commands_unasked_and_the_dialog_says_outside(
    project: Path, isolated_home: Path
) -> None:
    from textual.widgets import Static

    from tui_agent.testing import run_app, send, turn_over, wait_for
    from tui_agent.ui.blocks.shell import ShellBlock
    from tui_agent.ui.dialogs.approval import ApprovalScreen

    configure("[sandbox]\nenabled = true\n")
    outside = isolated_home / "outside.txt"
    script = [
        Reply(calls=[Call("execute", {"command": "echo in > made.txt"})]),
        Reply(calls=[Call("execute", {"command": f"echo x > {outside}", "sandbox": False})]),
        Reply("done"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        async with run_app(session, size=(80, 24)) as pilot:
            app = pilot.app
            # on the prompt's border, once the first frame is drawn (bwrap is tried then)
            await wait_for(pilot, lambda: app.status.endswith("sandbox"))
            await send(pilot, "go")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            assert (project / "made.txt").read_text() == "in\n"  # ran without a dialog
            screen = app.screen
            warning = str(screen.query_one("#approval-outside", Static).render())
            assert "runs OUTSIDE the sandbox" in warning
            await wait_for(pilot, lambda: screen.armed)
            await pilot.press("n")
            await turn_over(pilot)
            assert not outside.exists()
            # the user's own !!command runs outside, and its block says so
            await send(pilot, f"!!echo mine > {outside}")
            await wait_for(pilot, lambda: outside.is_file())
            await turn_over(pilot)
            header = str(app.query(ShellBlock).last().header.render())
            assert header.startswith("✔ !!echo mine") and "outside the sandbox" in header
    assert outside.read_text() == "mine\n"
    session.conversation.journal.close()
