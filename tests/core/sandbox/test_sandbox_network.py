"""A session's commands without network share one network namespace, held by the
session's /tmp holder with only its loopback up (issue 29: making one for each command
cost ~0.7 ms of it). What must still hold, written as the commands a prompt-injected
model would send, run as root and as an ordinary user (uid 1000 through setpriv or su,
in a child process that makes the sandbox itself, as a user's session does):

- the host's 127.0.0.1 and its abstract Unix sockets stay out of reach;
- a command cannot take the shared loopback down for the commands after it;
- the loopback works (IPv4, and IPv6 exactly as in a namespace bwrap makes itself);
- ``network = true`` is the host's network; ``network = [hosts]`` (whose forwarder
  listens on a fixed port) still gets a namespace of its own for each command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import needs_bwrap
from test_sandbox_everyday import CODE, ORDINARY_UID, as_user, site_packages, user_python

# the child: makes the sandbox with a session's /tmp (so a holder), listens on the host's
# 127.0.0.1 and on an abstract socket, runs the commands and prints what each gave
CHILD = r"""
import json, os, shlex, site, socket, subprocess, sys
site.addsitedir(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from tui_agent.sandbox import Sandbox
from tui_agent.core.sandbox.private_tmp import release_tmp

project, tmp = Path(sys.argv[3]), Path(sys.argv[4])
python = os.path.realpath(sys.executable)
host = socket.socket()
host.bind(("127.0.0.1", 0))
host.listen()
name = "tui-agent-host-%d" % os.getpid()
abstract = socket.socket(socket.AF_UNIX)
abstract.bind("\0" + name)
abstract.listen()

LOOPBACK = '''
import socket
for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        server = socket.socket(family)
        server.bind((address, 0))
        server.listen()
        client = socket.create_connection((address, server.getsockname()[1]), timeout=5)
        accepted, _ = server.accept()
        client.sendall(b"x")
        print(address, accepted.recv(1).decode())
    except OSError as exc:
        print(address, type(exc).__name__)
'''
ABSTRACT = '''
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\\0" + sys.argv[1])
except OSError as exc:
    print("refused", type(exc).__name__)
else:
    print("REACHED")
'''
LOOPBACK_DOWN = '''
import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
asked = struct.pack("16sH22x", b"lo", 0)
flags = struct.unpack("16sH22x", fcntl.ioctl(s, 0x8913, asked))[1]
try:
    fcntl.ioctl(s, 0x8914, struct.pack("16sH22x", b"lo", flags & ~1))
except OSError as exc:
    print("kept", type(exc).__name__)
else:
    print("TAKEN DOWN")
'''

def run(settings, command):
    box = Sandbox.of({"sandbox": settings}, project, tmp)
    with box.command(["bash", "-c", command], project) as (argv, env):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    hop = argv[1] if argv[0].startswith("/proc/") else None
    return {"hop": hop, "own": "--unshare-net" in argv, "said": done.stdout + done.stderr,
            "status": done.returncode}

q = lambda code: python + " -I -S -c " + shlex.quote(code)
NET = "readlink /proc/self/ns/net; "
found = {"host": os.readlink("/proc/self/ns/net")}
try:
    found["first"] = run({}, NET + q(LOOPBACK))
    found["second"] = run({}, NET)
    port = host.getsockname()[1]
    found["host_tcp"] = run({}, "exec 3<>/dev/tcp/127.0.0.1/%d && echo REACHED" % port)
    found["host_abstract"] = run({}, q(ABSTRACT) + " " + name)
    found["down"] = run({}, q(LOOPBACK_DOWN))
    found["after_down"] = run({}, NET + q(LOOPBACK))
    found["network"] = run({"network": True}, NET)
    hosts = {"network": ["127.0.0.9"]}
    found["hosts_1"] = run(hosts, NET + q(LOOPBACK))
    found["hosts_2"] = run(hosts, NET)
finally:
    release_tmp(tmp)
print("FOUND " + json.dumps(found))
"""


def net(result: dict[str, object]) -> str:
    said = str(result["said"])
    assert result["status"] == 0 and said.startswith("net:["), result
    return said.splitlines()[0]


@needs_bwrap
@pytest.mark.parametrize("who", ["root", "user"])
def test_the_sessions_shared_network_keeps_the_host_out(who: str, tmp_path: Path) -> None:
    import shutil
    import tempfile

    uid = os.getuid() if who == "root" or os.getuid() != 0 else ORDINARY_UID
    base = Path(tempfile.mkdtemp(prefix="tui-agent-network-"))
    try:
        base.chmod(0o755)
        home, project = base / "home", base / "project"
        for folder in (home, project):
            folder.mkdir()
            os.chown(folder, uid, uid)
        env = [f"HOME={home}", "LANG=C.UTF-8", f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}"]
        env += [f"XDG_CACHE_HOME={home}/.cache", f"XDG_CONFIG_HOME={home}/.config"]
        env += [f"XDG_DATA_HOME={home}/.local/share", f"XDG_STATE_HOME={home}/.local/state"]
        python = sys.executable if uid == os.getuid() else user_python(uid, env, project)
        argv = ["/usr/bin/env", "-i", *env, python, "-I", "-S", "-B", "-c", CHILD]
        argv += [site_packages(), str(CODE), str(project), str(home / "session-tmp")]
        if uid != os.getuid():
            argv = as_user(uid, argv)
        done = subprocess.run(argv, cwd=base, capture_output=True, text=True, timeout=180)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    said = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, said
    line = next((x for x in done.stdout.splitlines() if x.startswith("FOUND ")), None)
    assert line is not None, said
    found = json.loads(line.removeprefix("FOUND "))

    # the commands of the session share one namespace, the holder's, not the host's: the
    # hop enters three namespaces and bwrap makes none
    shared = net(found["first"])
    assert net(found["second"]) == shared != found["host"], found
    for step in ("first", "second", "host_tcp", "host_abstract", "down", "after_down"):
        assert found[step]["hop"] == "3" and not found[step]["own"], (step, found[step])
    assert "127.0.0.1 x" in found["first"]["said"], found["first"]

    # the host stays out of reach
    assert found["host_tcp"]["status"] != 0, found["host_tcp"]
    assert "REACHED" not in found["host_tcp"]["said"], found["host_tcp"]
    assert found["host_abstract"]["said"].startswith("refused"), found["host_abstract"]
    # a command cannot take the loopback down for the next ones
    assert found["down"]["said"] == "kept PermissionError\n", found["down"]
    assert net(found["after_down"]) == shared, found["after_down"]
    assert found["after_down"]["said"].splitlines()[1:] == found["first"]["said"].splitlines()[1:]

    # network = true: the host's; allowed hosts: a namespace of the command's own, whose
    # loopback answers as the shared one does
    assert net(found["network"]) == found["host"], found["network"]
    assert found["network"]["hop"] == "2" and not found["network"]["own"], found["network"]
    first, second = net(found["hosts_1"]), net(found["hosts_2"])
    assert len({first, second, shared, found["host"]}) == 4, found
    assert found["hosts_1"]["own"] and found["hosts_1"]["hop"] == "2", found["hosts_1"]
    loopback = [x for x in found["hosts_1"]["said"].splitlines()[1:] if not x.startswith("net:")]
    assert loopback == found["first"]["said"].splitlines()[1:], (found["hosts_1"], found["first"])
