"""``extensions``: what 50 Agent Skills and 10 Agent Plugins add at start-up (issue 31).

python bench/extensions.py   # alone, prints the figures as JSON

Two homes, the same empty project: one with nothing, one with ``SKILLS`` skills in
``~/.agents/skills`` and ``PLUGINS`` Agent Plugins in ``~/.agents/plugins`` (each a
``plugin.json``, one skill in ``skills/`` and an ``mcp.json`` with no servers, so no
process is started and only the reading is timed). Two figures, pair by pair, the order
alternating, run 0 a warm-up:

- ``first_frame_ms`` vs ``baseline_ms``: launch → first frame in tmux, as ``startup``
  measures it (the skills and plugins are read after the first frame, so this says that
  they stay off its path); ``added_ms`` is the difference of the medians.
- ``load_ms`` vs ``load_baseline_ms``: one ``create_session`` in a fresh process
  (load_session.py), which reads every skill and plugin: what they cost once the frame is
  there.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from common import BENCH, PYTHON, Sandbox, Tmux, log, median, rounded

SKILLS = 50
PLUGINS = 10
SCHEMA = "https://agent-plugins.org/schemas/1.0.0/{}.schema.json"

SKILL = """\
---
name: {name}
description: Benchmark skill {n}. Use when the user asks for benchmark task number {n}, to
  check how start-up grows with the skills a user has installed.
license: Apache-2.0
metadata:
  author: tui-agent-bench
  version: "1.0"
---

# Benchmark skill {n}

1. Read the file the user names.
2. Run `scripts/check.py` on it and report what it prints.
"""


def write_extensions(home: Path) -> None:
    """``SKILLS`` skills (with a script each) and ``PLUGINS`` Agent Plugins under ``home``."""
    skills = home / ".agents" / "skills"
    for n in range(SKILLS - PLUGINS):
        folder = skills / f"bench-skill-{n:02d}"
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL.format(name=folder.name, n=n))
        (folder / "scripts" / "check.py").write_text("print('ok')\n")
    plugins = home / ".agents" / "plugins"
    for n in range(PLUGINS):
        root = plugins / f"bench-plugin-{n:02d}"
        skill = root / "skills" / f"plugin-skill-{n:02d}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(SKILL.format(name=skill.name, n=100 + n))
        manifest = {
            "$schema": SCHEMA.format("plugin"),
            "name": root.name,
            "version": "1.0.0",
            "description": f"Benchmark Agent Plugin {n}",
            "keywords": ["bench"],
        }
        (root / "plugin.json").write_text(json.dumps(manifest, indent=2))
        servers = {"$schema": SCHEMA.format("mcp"), "mcpServers": {}}
        (root / "mcp.json").write_text(json.dumps(servers, indent=2))


def _load_ms(folder: Path, env: dict[str, str]) -> float:
    done = subprocess.run(
        [PYTHON, str(BENCH / "load_session.py"), str(folder)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"extensions: {done.stderr.strip()}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    if data["problems"]:
        raise RuntimeError(f"extensions: load problems: {data['problems'][:3]}")
    return float(data["ms"])


def _skills_seen(folder: Path, env: dict[str, str]) -> int:
    """How many skills ``tui-agent skills --json`` lists: the homes hold what they should."""
    done = subprocess.run(
        [PYTHON, "-m", "tui_agent", "skills", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"extensions: tui-agent skills: {done.stderr.strip()}")
    return len(json.loads(done.stdout))


def bench_extensions(sandbox: Sandbox, tmux: Tmux, runs: int) -> dict[str, Any]:
    homes = {"with": sandbox.home("extensions-with"), "none": sandbox.home("extensions-none")}
    write_extensions(homes["with"])
    folder = sandbox.project("extensions")
    envs = {kind: sandbox.env(home) for kind, home in homes.items()}
    seen = {kind: _skills_seen(folder, env) for kind, env in envs.items()}
    if seen["with"] - seen["none"] != SKILLS:
        raise RuntimeError(f"extensions: {seen} skills listed, expected {SKILLS} more with them")
    frames: dict[str, list[float]] = {"with": [], "none": []}
    loads: dict[str, list[float]] = {"with": [], "none": []}
    for run in range(runs + 1):  # run 0 is the warm-up (bytecode, file cache)
        order = ["with", "none"] if run % 2 == 0 else ["none", "with"]
        for kind in order:
            started = time.perf_counter()
            name = tmux.launch([PYTHON, "-m", "tui_agent"], folder, homes[kind])
            elapsed, screen = tmux.wait_for(name, lambda s: "palette" in s, started, 30)
            tmux.kill(name)
            if elapsed is None:
                raise RuntimeError(f"extensions {kind}: no first frame in 30 s:\n{screen}")
            loaded = _load_ms(folder, envs[kind])
            if run > 0:
                frames[kind].append(elapsed * 1000)
                loads[kind].append(loaded)
        if run > 0:
            log(
                f"  extensions run {run}: first frame {frames['with'][-1]:.0f} ms with, "
                f"{frames['none'][-1]:.0f} ms without; load {loads['with'][-1]:.1f} ms with, "
                f"{loads['none'][-1]:.1f} ms without"
            )
    frame, base = median(frames["with"]), median(frames["none"])
    load, load_base = median(loads["with"]), median(loads["none"])
    return {
        "skills": SKILLS,
        "plugins": PLUGINS,
        "first_frame_ms": rounded(frame, 1),
        "baseline_ms": rounded(base, 1),
        "added_ms": rounded(None if frame is None or base is None else frame - base, 1),
        "load_ms": rounded(load, 1),
        "load_baseline_ms": rounded(load_base, 1),
    }


if __name__ == "__main__":
    box = Sandbox()
    box.enter(box.home("bench"))
    multiplexer = Tmux(box)
    try:
        print(json.dumps(bench_extensions(box, multiplexer, 7)))
    finally:
        multiplexer.close()
        box.close()
