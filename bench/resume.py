"""``resume``: ``python -m tui_agent --resume ID`` of a 5,000-message journal in tmux."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from common import PYTHON, Sandbox, Tmux, log, median, prompt_text, rounded, rss_mb

RESUME_MESSAGES = 5_000
RESUME_MARKER = "zebra-quokka-5000"


def write_journal(path: Path, session_id: str, directory: Path, count: int) -> None:
    """A journal as tui_agent.core.conversation.journal writes it: a session header, then messages.

    Turns of five messages: a question, an assistant message with two tool calls, their two
    results, and a Markdown answer. The last message is an answer with ``RESUME_MARKER``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "type": "session",
        "id": session_id,
        "directory": str(directory),
        "created": "2025-01-01T09:00:00",
    }
    lines = [json.dumps(header)]
    messages: list[dict[str, Any]] = []
    turn = 0
    while len(messages) < count:
        file = f"src/module_{turn % 97}.py"
        read_id, grep_id = f"call_{turn}_0", f"call_{turn}_1"
        messages += [
            {"role": "user", "content": f"Turn {turn}: why does `{file}` fail its test?"},
            {
                "role": "assistant",
                "content": f"Let me look at `{file}` and search for callers.",
                "tool_calls": [
                    {
                        "id": read_id,
                        "type": "function",
                        "function": {"name": "read", "arguments": json.dumps({"path": file})},
                    },
                    {
                        "id": grep_id,
                        "type": "function",
                        "function": {
                            "name": "grep",
                            "arguments": json.dumps({"pattern": f"helper_{turn}", "path": "src"}),
                        },
                    },
                ],
            },
            {
                "role": "tool",
                "tool_call_id": read_id,
                "content": json.dumps(
                    {
                        "output": "\n".join(
                            f"{i:>4}\tdef helper_{turn}_{i}(x):  return x * {i}"
                            for i in range(1, 13)
                        ),
                        "ok": True,
                    }
                ),
            },
            {
                "role": "tool",
                "tool_call_id": grep_id,
                "content": json.dumps(
                    {
                        "output": f"src/app.py:12: helper_{turn}(3)\n"
                        f"src/cli.py:40: helper_{turn}(4)",
                        "ok": True,
                    }
                ),
            },
            {
                "role": "assistant",
                "content": (
                    f"The test of `{file}` fails because **helper_{turn}** returns an int:\n\n"
                    f"- `src/app.py` passes `3`\n- `src/cli.py` passes `4`\n\n"
                    f"```python\nassert helper_{turn}(3) == 3.0\n```"
                ),
            },
        ]
        turn += 1
    messages = messages[:count]
    messages[-1] = {"role": "assistant", "content": f"All done: **{RESUME_MARKER}**."}
    lines += [json.dumps({"type": "message", "message": m}) for m in messages]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def bench_resume(sandbox: Sandbox, tmux: Tmux, runs: int) -> dict[str, Any]:
    """``python -m tui_agent --resume ID`` in tmux until the last message is on screen and
    the app is interactive (the prompt box and the footer drawn); RSS one second later.
    Each run resumes its own copy of the journal (resuming appends to it).
    """
    times: list[float] = []
    memory: list[float] = []
    for run in range(runs + 1):  # run 0 is the warm-up
        home = sandbox.home(f"resume-{run}")
        folder = sandbox.project(f"resume-{run}")
        session_id = f"20250101-090000-bench{run:02d}"
        journal = home / ".local/share/tui-agent/sessions" / f"{session_id}.jsonl"
        write_journal(journal, session_id, folder, RESUME_MESSAGES)

        def ready(screen: str) -> bool:
            return (
                RESUME_MARKER in screen and "palette" in screen and prompt_text(screen) is not None
            )

        started = time.perf_counter()
        argv = [PYTHON, "-m", "tui_agent", "--resume", session_id]
        name = tmux.launch(argv, folder, home)
        try:
            elapsed, screen = tmux.wait_for(name, ready, started, 120)
            if elapsed is None:
                raise RuntimeError(f"resume: the last message never showed up:\n{screen}")
            time.sleep(1.0)
            mem = rss_mb(tmux.app_pid(name))
        finally:
            tmux.kill(name)
        if run > 0:
            times.append(elapsed * 1000)
            if mem is not None:
                memory.append(mem)
            log(f"  resume run {run}: {elapsed * 1000:.0f} ms, {mem or 0:.0f} MiB")
    return {
        "messages": RESUME_MESSAGES,
        "ms_to_interactive": rounded(median(times), 1),
        "rss_mb": rounded(median(memory), 1),
    }
