"""`tui-agent acp` on stdin and stdout that are no pipes (issue 32): a file of requests, a
file for the answers, /dev/null. Every request read is answered, and the process ends."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from acp_harness import acp_argv, acp_env

from tui_agent.testing import FakeOpenAI

REQUESTS = [
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}',
    "not json",
    '{"jsonrpc":"2.0","id":2,"method":"session/teleport","params":{}}',
]


def test_requests_from_a_file_answers_in_a_file(
    project: Path, model: FakeOpenAI, tmp_path: Path
) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text("\n".join(REQUESTS) + "\n")
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            acp_argv(model),
            cwd=project,
            env=acp_env(),
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in answers.read_text().splitlines()]
    by_id = {message["id"]: message for message in got}
    assert by_id[1]["result"]["protocolVersion"] == 1
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32700
    assert b"Traceback" not in done.stderr


def test_dev_null_ends_at_once(project: Path, model: FakeOpenAI) -> None:
    done = subprocess.run(
        acp_argv(model),
        cwd=project,
        env=acp_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr
