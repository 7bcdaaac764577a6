"""Replays recorded provider streams through ``tui-agent run --json`` and checks each result.

    python scripts/replay_dialects.py [FOLDER]

FOLDER (default: ``../shared/dialects`` beside the repository) holds ``NAME.chunks.jsonl``
files, one chunk object per line, and ``expected.json``. Each file is served by the
testing kit's fake server as ``data: <line>`` events followed by ``data: [DONE]``; a
second, empty reply answers the request that follows tool calls. Compared per file: the
text, the reasoning, the tool calls (id, name, arguments), the usage of the reply, the
error (expected text contained in ours), the finish reason (the last one the server
sent), the notes (``note`` events that are not errors) and the exit code. Prints a table;
exits 1 if any file differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tui_agent.testing import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[1]


def home_env(home: Path) -> dict[str, str]:
    """This environment without the user's model settings, with ``home`` as HOME and its
    folders as the XDG folders: a run that reads and writes nothing of the user's."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "TUI_AGENT_", "XDG_"))
    }
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"))
    env.update(XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"))
    env.update(XDG_CACHE_HOME=str(home / "cache"))
    return env


def run(lines: list[str], home: Path) -> tuple[int, list[dict[str, Any]], str]:
    script = [Reply(chunks=lines), Reply("", usage=None)]
    with FakeOpenAI(script, strict=False) as server:
        env = home_env(home)
        argv = ["run", "--json", "--yes", "--model", "replay", "--base-url", server.base_url]
        done = subprocess.run(
            [sys.executable, "-m", "tui_agent", *argv, "hi"],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, events, done.stderr


def result(code: int, events: list[dict[str, Any]]) -> dict[str, Any]:
    first: list[dict[str, Any]] = []  # the recorded reply's events, not the follow-up's
    for event in events:
        first.append(event)
        if event["type"] == "reply_finished" or event["type"] == "done":
            break
    usage = [e for e in first if e["type"] == "usage"]
    done = [e for e in events if e["type"] == "done"]
    calls = [e for e in events if e["type"] == "tool_call"]
    return {
        "text": "".join(e["text"] for e in first if e["type"] == "text"),
        "reasoning": "".join(e["text"] for e in first if e["type"] == "thinking"),
        "tool_calls": [
            {"id": c["call_id"], "name": c["name"], "arguments": json.loads(c["arguments"])}
            for c in calls
        ],
        "usage": {k: usage[-1][k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        if usage
        else None,
        "error": done[-1].get("error") if done else "no done event",
        "finish_reason": next(
            (e["finish_reason"] for e in first if e["type"] == "reply_finished"), None
        ),
        "notes": [e["text"] for e in events if e["type"] == "note" and e["kind"] != "error"],
        "exit_code": code,
    }


def differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    out = []
    for key in ("text", "reasoning", "usage", "notes", "exit_code"):
        if got[key] != want[key]:
            out.append(f"{key}: {got[key]!r:.120} != {want[key]!r:.120}")
    want_calls = [
        {"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in want["tool_calls"]
    ]
    if got["tool_calls"] != want_calls:
        out.append(f"tool_calls: {got['tool_calls']} != {want_calls}")
    if want["error"] is None:
        if got["error"] is not None:
            out.append(f"error: {got['error']!r}")
    elif not got["error"] or want["error"] not in got["error"]:
        out.append(f"error: {got['error']!r} does not contain {want['error']!r}")
    last = (want["finish_reasons"] or [None])[-1] if want["error"] is None else None
    if got["finish_reason"] != last:
        out.append(f"finish_reason: {got['finish_reason']!r} != {last!r}")
    return out


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "dialects"
    expected = json.loads((folder / "expected.json").read_text())
    failed = 0
    print(f"| {'file':40} | result | text | reasoning | calls | usage | finish | exit |")
    print(f"|{'-' * 42}|--------|------|-----------|-------|-------|--------|------|")
    for name, want in expected.items():
        lines = (folder / f"{name}.chunks.jsonl").read_text().splitlines()
        with tempfile.TemporaryDirectory() as tmp:
            code, events, stderr = run([line for line in lines if line.strip()], Path(tmp))
        got = result(code, events)
        problems = differences(got, want)
        failed += bool(problems)
        usage = got["usage"]["prompt_tokens"] if got["usage"] else "-"
        print(
            f"| {name:40} | {'FAIL' if problems else 'ok':6} | {len(got['text']):4} "
            f"| {len(got['reasoning']):9} | {len(got['tool_calls']):5} | {usage!s:5} "
            f"| {got['finish_reason']!s:6} | {code:4} |"
        )
        for problem in problems:
            print(f"    {problem}")
        if problems and stderr.strip():
            print("    stderr: " + stderr.strip().replace("\n", "\n            "))
    print(f"\n{len(expected) - failed} of {len(expected)} match expected.json")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
