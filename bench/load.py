"""``load``: ``create_session`` with 250 plugin and tool files vs none (load_session.py)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from common import BENCH, PYTHON, Sandbox, log, median, rounded

LOAD_FILES = 250

PLUGIN_FILE = """\
import tui_agent


@tui_agent.setup("bench_plugin_{n}")
def setup(session):
    @session.toolbox.add(
        "plugin_tool_{n}",
        description="Benchmark plugin tool {n}: echo a number and a label",
        params={{
            "x": {{"type": "integer", "description": "a number"}},
            "label": {{"type": "string", "description": "a label"}},
        }},
        required=["x"],
    )
    def run(args):
        return {{"x": args["x"], "label": args.get("label", "")}}
"""

TOOL_FILE_SCHEMA = """\
from tui_agent import schema, tool


@tool(
    description="Benchmark tool file {n}: echo a query",
    args={{
        "query": schema.string().describe("what to echo"),
        "limit": schema.integer().optional(),
    }},
)
async def default(args, context):
    return {{"query": args["query"], "limit": args.get("limit")}}
"""

TOOL_FILE_SIGNATURE = """\
from typing import Annotated

from tui_agent import tool


@tool(description="Benchmark tool file {n}: add two numbers")
def add(a: Annotated[float, "first number"], b: Annotated[float, "second number"]) -> float:
    return a + b
"""


def bench_load(sandbox: Sandbox, runs: int) -> dict[str, Any]:
    """``create_session(folder)`` with 125 plugin files (``~/.agents/plugins``) and 125 tool
    files (``<user config dir>/tools``) vs none. Each measurement is a fresh process that
    imports tui_agent first and then times only ``create_session`` (see load_session.py).
    """
    loaded = sandbox.home("load-files")
    empty = sandbox.home("load-none")
    plugins = loaded / ".agents" / "plugins"
    tools = loaded / ".config" / "tui-agent" / "tools"
    plugins.mkdir(parents=True)
    tools.mkdir(parents=True)
    half = LOAD_FILES // 2
    for n in range(half):
        (plugins / f"bench_plugin_{n:03d}.py").write_text(PLUGIN_FILE.format(n=n))
    for n in range(LOAD_FILES - half):
        template = TOOL_FILE_SCHEMA if n % 2 == 0 else TOOL_FILE_SIGNATURE
        (tools / f"bench_tool_{n:03d}.py").write_text(template.format(n=n))
    folders = {"files": sandbox.project("load-files"), "none": sandbox.project("load-none")}
    homes = {"files": loaded, "none": empty}
    times: dict[str, list[float]] = {"files": [], "none": []}
    tool_counts: dict[str, int] = {}
    for run in range(runs + 1):  # run 0 is the warm-up
        order = ["files", "none"] if run % 2 == 0 else ["none", "files"]
        for kind in order:
            done = subprocess.run(
                [PYTHON, str(BENCH / "load_session.py"), str(folders[kind])],
                capture_output=True,
                text=True,
                env=sandbox.env(homes[kind]),
                cwd=folders[kind],
                check=False,
                timeout=120,
            )
            if done.returncode != 0:
                raise RuntimeError(f"load: {done.stderr.strip()}")
            data = json.loads(done.stdout.strip().splitlines()[-1])
            if data["problems"]:
                raise RuntimeError(f"load: plugin problems: {data['problems'][:3]}")
            tool_counts[kind] = data["tools"]
            if run > 0:
                times[kind].append(data["ms"])
    added = tool_counts["files"] - tool_counts["none"]
    if added != LOAD_FILES:
        raise RuntimeError(f"load: the files added {added} tools, expected {LOAD_FILES}")
    log(f"  tools: {tool_counts['none']} without the files, {tool_counts['files']} with them")
    return {
        "files": LOAD_FILES,
        "ms": rounded(median(times["files"]), 1),
        "baseline_ms": rounded(median(times["none"]), 1),
    }
