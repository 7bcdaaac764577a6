"""``sandbox``: the cost of running a shell command in the bubblewrap sandbox
(core/sandbox/sandbox.py) rather than bare, for a trivial command (``bash -c true``).

python bench/sandbox.py [--runs N]   # alone, prints the figures as JSON

Both sides start the process as ``execute`` does (``bash -c``, its own session, output
piped), taking turns; the sandboxed side also builds the bwrap command line and the
scrubbed environment each time, in a session (its private /tmp held by a tmpfs holder,
started by a first round that is not counted; then 2.2 s pass and the disk is synced, as
before a session's later commands: see the loop). ``sandboxed_ms`` is None (and the goal
unmet) without bwrap.
``hosts_ms``: the same with ``network = [hosts]``, the command started behind the
allowed-hosts forwarder (a Python started inside the sandbox; the proxy outside is
already running after the first command, as it is in a session). Information, no goal.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from common import Sandbox, log, median, rounded

from tui_agent.core.sandbox import host, netproxy
from tui_agent.sandbox import Sandbox as ShellSandbox
from tui_agent.sandbox import availability

RUNS = 40


def _once(argv: list[str], env: dict[str, str] | None, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=True,
        start_new_session=True,
    )
    return (time.perf_counter() - started) * 1000


def bench_sandbox(box: Sandbox, runs: int = RUNS) -> dict[str, Any]:
    project = box.project("sandbox")
    command = ["bash", "-c", "true"]
    why = availability()
    if why is not None:
        log(f"sandbox: not measured ({why})")
        bare = [_once(command, None, project) for _ in range(runs)]
        nothing = {"sandboxed_ms": None, "overhead_ms": None, "hosts_ms": None}
        return {"bare_ms": rounded(median(bare), 2), **nothing}
    shell = ShellSandbox.of({"sandbox": {"enabled": True}}, project, box.root / "sandbox-tmp")
    hosts = ShellSandbox.of(
        {"sandbox": {"enabled": True, "network": ["pypi.org"]}}, project, box.root / "hosts-tmp"
    )
    # bare and sandboxed runs take turns (the bare ones all first measured a quieter or
    # busier moment than the sandboxed ones on a shared machine); the first round starts
    # the session's tmpfs holder and the proxy, as a session's first command does: not counted
    bare: list[float] = []
    sandboxed: list[float] = []
    proxied: list[float] = []
    for round_ in range(runs + 1):
        if round_ == 1:
            # a session's later commands: its home folder has not changed for a while, so
            # what the sandbox looked for there is kept (``host.remembered`` keeps nothing a
            # folder changed less than SETTLED_NS before; this bench's HOME and the first
            # round's folders in the user cache are seconds old); and nothing earlier
            # benches wrote is still going to the disk while this one makes and removes its
            # stand-ins (16-24 ms of "overhead" after the checkpoint bench's 10,000 files)
            time.sleep(host.SETTLED_NS / 1e9 + 0.2)
            os.sync()
        plain = _once(command, None, project)
        spent = []
        for shell_box in (shell, hosts):
            started = time.perf_counter()
            with shell_box.command(command, project) as (argv, env):
                _once(argv, env, project)
            spent.append((time.perf_counter() - started) * 1000)
        if round_:
            bare.append(plain)
            sandboxed.append(spent[0])
            proxied.append(spent[1])
    netproxy.stop(box.root / "hosts-tmp")
    bare_ms, sandboxed_ms, hosts_ms = median(bare), median(sandboxed), median(proxied)
    assert bare_ms is not None and sandboxed_ms is not None and hosts_ms is not None
    return {
        "bare_ms": rounded(bare_ms, 2),
        "sandboxed_ms": rounded(sandboxed_ms, 2),
        "overhead_ms": rounded(sandboxed_ms - bare_ms, 2),
        "hosts_ms": rounded(hosts_ms, 2),
    }


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    box = Sandbox()
    try:
        box.enter(box.home("bench"))
        print(json.dumps(bench_sandbox(box, args.runs)))
    finally:
        box.close()
