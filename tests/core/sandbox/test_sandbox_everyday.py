"""The everyday work still runs in the sandbox (issue 25, "Done means"): git (status, add,
commit, stash and pop, switch, log, diff), ``make``, ``python -m pytest`` in the project's
venv, ``npm test``, and Python's multiprocessing and asyncio (Unix socketpairs and sockets
made inside: the sandbox may filter Unix sockets) through the real ``execute`` tool, with
the sandbox on by default and nobody asked. Each command must exit 0, and what it did is
checked from outside the sandbox.

Run as root (this machine and CI), in the test process, and as an ordinary user (uid
1000, through ``setpriv`` or ``su``) in a child process that makes the session itself.
Without either tool the ordinary-user test fails saying so; nothing is skipped.

Commands carry their own settings on their command line (``git -c user.name=...``, npm's
cache in the private /tmp): the sandbox's environment is becoming an allow-list, so what
the agent's environment holds may not reach them. Nothing here needs the network."""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import needs_bwrap, write

import tui_agent
from tui_agent import ApprovalRequest, Decision, create_session
from tui_agent.testing import Person

GIT = "git -c user.name=Everyday -c user.email=everyday@example.invalid"
# npm keeps its cache and debug logs in ~/.npm (read-only in the sandbox: it tries to make
# it, fails quietly and goes on); the private /tmp instead, and no update check (network)
NPM = "npm_config_cache=/tmp/npm-cache npm_config_update_notifier=false npm"
ORDINARY_UID = 1000
CODE = Path(tui_agent.__file__).parent.parent  # the tui_agent these tests run
XDG = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
}

MAKEFILE = "out/GREETING.txt: greeting.txt\n\tmkdir -p out\n\ttr a-z A-Z < greeting.txt > $@\n"
TINY_TEST = """\
import sys
from pathlib import Path


def test_runs_in_the_project_venv():
    assert Path(sys.prefix).name == ".venv" and sys.prefix != sys.base_prefix
"""
PACKAGE_JSON = {
    "name": "everyday",
    "version": "1.0.0",
    "private": True,
    "scripts": {"test": "node test.js"},
}
NODE_TEST = """\
const assert = require("assert");
assert.strictEqual(1 + 1, 2);
require("fs").writeFileSync("npm-ran.txt", process.env.npm_lifecycle_event + "\\n");
console.log("node test passed");
"""
# multiprocessing: a Pool with the default start method (fork up to 3.13) and with
# forkserver (an AF_UNIX listener in /tmp); its locks are POSIX semaphores in /dev/shm,
# which must stay writable. asyncio: its loop's self-pipe is a socketpair; a subprocess
# and a Unix server made and reached inside. Workers run builtins (abs): under -c,
# functions of __main__ do not reach forkserver's workers.
CONCURRENCY = """\
import asyncio, json, multiprocessing, os, socket, sys, tempfile

async def main():
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "print('child')", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await child.communicate()
    path = os.path.join(tempfile.mkdtemp(), "echo.sock")

    async def echo(reader, writer):
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()

    server = await asyncio.start_unix_server(echo, path)
    async with server:
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(b"ping\\n")
        await writer.drain()
        line = await reader.readline()
        writer.close()
    return out.decode().strip(), line.decode().strip()

if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        default = pool.map(abs, [-1, -2, -3])
    with multiprocessing.get_context("forkserver").Pool(2) as pool:
        forkserver = pool.map(abs, [-4, -5])
    child, echoed = asyncio.run(main())
    left, right = socket.socketpair()
    left.sendall(b"pair")
    found = {
        "start_method": multiprocessing.get_start_method(),
        "default": default,
        "forkserver": forkserver,
        "child": child,
        "echoed": echoed,
        "pair": right.recv(4).decode(),
    }
    with open("concurrency.json", "w") as file:
        json.dump(found, file)
    print("concurrency ok")
"""


def outside(project: Path, *argv: str) -> str:
    """Run ``argv`` in the project outside the sandbox (as the same user); its stdout."""
    done = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"outside: {shlex.join(argv)}\n{done.stdout}{done.stderr}"
    return done.stdout


def copy_with_requirements(name: str, source: Path, target: Path) -> None:
    """Copy distribution ``name`` and what it requires (as this Python reads the markers)
    from site-packages ``source`` to ``target``: how the project's venv gets pytest with no
    network (a .pth naming ``source`` would not do: it may sit under the real /tmp, which
    the sandbox replaces, as in a CI clone made there)."""
    from importlib.metadata import distributions

    from packaging.requirements import Requirement

    found = {
        d.metadata["Name"].lower().replace("_", "-"): d for d in distributions(path=[str(source)])
    }
    wanted, done = [name], set()
    while wanted:
        key = wanted.pop().lower().replace("_", "-")
        if key in done:
            continue
        done.add(key)
        dist = found[key]
        for relative in dist.files or []:
            if ".." in Path(relative).parts:
                continue  # a script in bin/: not needed
            copied = target / relative
            copied.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(str(dist.locate_file(relative))), copied)
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)


def prepare(project: Path, site_packages: str) -> None:
    """Outside, beforehand: ``git init``, the files, and the project's ``.venv`` (no pip,
    no network) with pytest copied in from ``site_packages``."""
    outside(project, "git", "init", "-q", "-b", "main")
    write(project / "hello.txt", "hello\n")
    write(project / "Makefile", MAKEFILE)
    write(project / "greeting.txt", "hello from make\n")
    write(project / "pytest.ini", "[pytest]\n")
    write(project / "test_tiny.py", TINY_TEST)
    write(project / "package.json", json.dumps(PACKAGE_JSON, indent=2) + "\n")
    write(project / "test.js", NODE_TEST)
    outside(project, sys.executable, "-m", "venv", "--without-pip", ".venv")
    python = str(project / ".venv" / "bin" / "python")
    purelib = outside(
        project, python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"
    )
    copy_with_requirements("pytest", Path(site_packages), Path(purelib.strip()))
    found = outside(project, python, "-c", "import pytest, sys; print(sys.prefix)")
    assert Path(found.strip()).name == ".venv", found


async def everyday_work(project: Path, site_packages: str) -> list[str]:
    """Prepare ``project``, then run the everyday commands in a session's sandbox, each
    checked from outside; the names of the steps done. Shared by the test process (root)
    and the ordinary user's child process."""
    prepare(project, site_packages)
    session = create_session(project)
    assert session.sandbox.active, f"the sandbox is off: {session.sandbox.reason}"
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision("deny")

    session.frontend = Person(decide=approver)
    done: list[str] = []

    async def inside(name: str, command: str) -> str:
        result = await session.toolbox.run("execute", {"command": command, "timeout": 60})
        said = result.to_dict()
        assert said.get("exit_status") == 0, (
            f"{name} failed in the sandbox: {command}\n{json.dumps(said, indent=1)}"
        )
        done.append(name)
        return str(said.get("output", ""))

    def git(*args: str) -> str:
        return outside(project, "git", *args)

    try:
        said = await inside("git status", "git status --porcelain --branch")
        assert "## No commits yet on main" in said and "?? hello.txt" in said, said
        assert said == git("status", "--porcelain", "--branch")

        await inside("git add", "git add hello.txt")
        assert git("diff", "--cached", "--name-only") == "hello.txt\n"

        await inside("git commit", f"{GIT} commit -q -m 'first commit'")
        assert (
            git("log", "--format=%s|%an|%ae") == "first commit|Everyday|everyday@example.invalid\n"
        )
        assert git("status", "--porcelain", "--", "hello.txt") == ""

        await inside("git stash", f"echo changed >> hello.txt && {GIT} stash -q")
        assert len(git("stash", "list").splitlines()) == 1
        assert (project / "hello.txt").read_text() == "hello\n"

        await inside("git stash pop", f"{GIT} stash pop -q")
        assert git("stash", "list") == ""
        assert (project / "hello.txt").read_text() == "hello\nchanged\n"

        said = await inside("git diff", "git diff")
        assert "+changed" in said and said == git("diff"), said

        await inside("git switch -c", "git switch -q -c feature")
        assert git("branch", "--show-current") == "feature\n"
        await inside("git commit on the branch", f"{GIT} commit -q -am 'on feature'")
        assert git("log", "-1", "--format=%s", "feature") == "on feature\n"
        await inside("git switch back", "git switch -q main")
        assert git("branch", "--show-current") == "main\n"
        assert (project / "hello.txt").read_text() == "hello\n"

        said = await inside("git log", "git log --all --format=%s")
        assert said == "on feature\nfirst commit\n" == git("log", "--all", "--format=%s"), said
        said = await inside("git diff of branches", "git diff main feature -- hello.txt")
        assert "+changed" in said and said == git("diff", "main", "feature", "--", "hello.txt")

        said = await inside("make", "make")
        assert (project / "out" / "GREETING.txt").read_text() == "HELLO FROM MAKE\n", said

        said = await inside(
            "pytest in the project venv",
            ". .venv/bin/activate && python -m pytest -q --junitxml=pytest-report.xml",
        )
        report = ElementTree.parse(project / "pytest-report.xml").getroot()
        suite = report if report.tag == "testsuite" else report[0]
        counts = {key: suite.get(key) for key in ("tests", "failures", "errors", "skipped")}
        assert counts == {"tests": "1", "failures": "0", "errors": "0", "skipped": "0"}, said

        said = await inside("npm test", f"{NPM} test")
        assert "node test passed" in said, said
        assert (project / "npm-ran.txt").read_text() == "test\n"

        said = await inside(
            "multiprocessing and asyncio", f".venv/bin/python -c {shlex.quote(CONCURRENCY)}"
        )
        found = json.loads((project / "concurrency.json").read_text())
        assert found == {
            "start_method": found["start_method"],
            "default": [1, 2, 3],
            "forkserver": [4, 5],
            "child": "child",
            "echoed": "ping",
            "pair": "pair",
        }, (found, said)
    finally:
        await session.close()
    assert not asked, f"sandboxed commands were asked about: {asked}"
    return done


STEPS = [
    "git status",
    "git add",
    "git commit",
    "git stash",
    "git stash pop",
    "git diff",
    "git switch -c",
    "git commit on the branch",
    "git switch back",
    "git log",
    "git diff of branches",
    "make",
    "pytest in the project venv",
    "npm test",
    "multiprocessing and asyncio",
]


def site_packages() -> str:
    """Where the interpreter running the tests has pytest (and tui_agent's dependencies)."""
    return sysconfig.get_path("purelib")


@needs_bwrap
@pytest.mark.real_permissions  # the defaults: sandboxed commands run unasked
async def test_everyday_work_in_the_sandbox_in_the_test_process(project: Path) -> None:
    """As the user running the tests: root on this machine and in CI."""
    assert await everyday_work(project, site_packages()) == STEPS


# -- as an ordinary user ------------------------------------------------------------------------

CHILD = """\
import asyncio, importlib.util, json, site, sys
from pathlib import Path

module_path, tests, code, site_packages, project = sys.argv[1:6]
site.addsitedir(site_packages)
sys.path[:0] = [code, tests]  # the tui_agent the tests run, first
spec = importlib.util.spec_from_file_location("everyday", module_path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
done = asyncio.run(module.everyday_work(Path(project), site_packages))
print("DONE " + json.dumps(done))
"""
# that a Python runs for the user with this test run's packages and code, and that the
# user can write the project
PROBE = """\
import os, site, sys
site.addsitedir(sys.argv[1])
sys.path.insert(0, sys.argv[2])
import pytest, tui_agent
assert os.access(sys.argv[3], os.W_OK | os.X_OK), "the project is not the user's"
print("%d.%d" % sys.version_info[:2])
"""


def as_user(uid: int, argv: list[str]) -> list[str]:
    """``argv`` run as ``uid``: through setpriv (no supplementary groups), or su."""
    if os.getuid() != 0:
        assert os.getuid() == uid, "only root can switch users"
        return argv
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]
    if shutil.which("su"):
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            pytest.fail(f"su needs a user name for uid {uid} and there is none (no setpriv)")
        return ["su", "-s", "/bin/sh", "-c", f"exec {shlex.join(argv)}", name]
    pytest.fail(
        f"neither setpriv nor su is here: cannot run the ordinary-user case as uid {uid}"
        " (apt-get install util-linux, which has setpriv)"
    )


def user_python(uid: int, env: list[str], project: Path) -> str:
    """A Python of this version that ``uid`` can run: the test interpreter when it can,
    else one of the same version. Root's interpreter may sit where an ordinary user cannot
    go (here: pyenv under a 0700 /root); a venv made from it would not run for the user.
    Started through ``env`` (not straight from setpriv, which still holds root's
    capabilities while it starts the program)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    base = getattr(sys, "_base_executable", sys.executable)
    candidates = [sys.executable, base, os.path.realpath(base)]
    candidates += [shutil.which(f"python{version}") or "", f"/usr/bin/python{version}"]
    tried = []
    for python in dict.fromkeys(c for c in candidates if c):
        argv = ["/usr/bin/env", "-i", *env, python, "-I", "-S", "-c", PROBE]
        argv += [site_packages(), str(CODE), str(project)]
        done = subprocess.run(as_user(uid, argv), capture_output=True, text=True, timeout=60)
        if done.returncode == 0 and done.stdout.strip() == version:
            return python
        tried.append(f"{python}: {(done.stdout + done.stderr).strip()[-300:]}")
    pytest.fail(
        f"no Python {version} that uid {uid} can run with these packages and this code"
        f" (or the project is not theirs):\n" + "\n".join(tried)
    )


@pytest.fixture
def user_folders() -> Iterator[Path]:
    """A folder the ordinary user can reach, for its HOME and project. Not in tmp_path:
    pytest makes /tmp/pytest-of-root and its runs 0700, so nothing in tmp_path is
    reachable for another user without opening those to everyone's tests; this one is
    our own, under the temp folder, and removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="tui-agent-everyday-"))
    try:
        base.chmod(0o755)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_bwrap
async def test_everyday_work_in_the_sandbox_as_an_ordinary_user(user_folders: Path) -> None:
    """uid 1000 when the tests run as root (setpriv or su), else the user running them:
    a child process makes the session and runs the same commands and checks."""
    uid = ORDINARY_UID if os.getuid() == 0 else os.getuid()
    home, project = user_folders / "home", user_folders / "project"
    for folder in (home, project):
        folder.mkdir()
        if os.getuid() == 0:
            os.chown(folder, uid, uid)
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = f"user{uid}"
    env = [f"HOME={home}", f"USER={name}", f"LOGNAME={name}", "LANG=C.UTF-8"]
    env += [f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}"]
    for var, sub in XDG.items():
        env.append(f"{var}={home}/{sub}")
    python = user_python(uid, env, project)
    argv = ["/usr/bin/env", "-i", *env, python, "-I", "-S", "-B", "-c", CHILD]
    argv += [__file__, str(Path(__file__).parents[2]), str(CODE), site_packages(), str(project)]
    done = subprocess.run(
        as_user(uid, argv), cwd=user_folders, capture_output=True, text=True, timeout=180
    )
    said = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, said
    assert f"DONE {json.dumps(STEPS)}" in done.stdout.splitlines(), said
    # it ran as that user: what the sandboxed commands made is theirs
    for made in ["concurrency.json", "npm-ran.txt", "out/GREETING.txt", ".git/COMMIT_EDITMSG"]:
        assert (project / made).stat().st_uid == uid, made
    log = subprocess.run(
        ["git", "-c", "safe.directory=*", "log", "--all", "--format=%s"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert log.stdout == "on feature\nfirst commit\n"


def tiny_wheel(folder: Path) -> Path:
    """A wheel built by hand (no network, no build backend): one module, ``tiny``."""
    import base64
    import hashlib
    import zipfile

    files = {
        "tiny/__init__.py": "ANSWER = 42\n",
        "tiny-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n",
        "tiny-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append("tiny-1.0.dist-info/RECORD,,")
    wheel = folder / "tiny-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("tiny-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


@needs_bwrap
@pytest.mark.real_permissions
async def test_pip_installs_into_the_project_venv_in_the_sandbox(project: Path) -> None:
    """pip (from ``python -m venv``'s own ensurepip, offline) installs a local wheel into
    the project's venv from inside the sandbox, and the module imports there."""
    subprocess.run([sys.executable, "-m", "venv", str(project / ".venv")], check=True)
    wheel = tiny_wheel(project)
    session = create_session(project)
    assert session.sandbox.active
    command = (
        "PIP_DISABLE_PIP_VERSION_CHECK=1 .venv/bin/python -m pip install -q --no-index"
        f" {wheel.name} && .venv/bin/python -c 'import tiny; print(tiny.ANSWER)'"
    )
    result = (await session.toolbox.run("execute", {"command": command})).to_dict()
    assert result["exit_status"] == 0 and result["output"].strip().endswith("42"), result
    installed = list((project / ".venv").glob("lib/python*/site-packages/tiny/__init__.py"))
    assert len(installed) == 1  # checked outside: it is in the project's venv
    await session.close()
