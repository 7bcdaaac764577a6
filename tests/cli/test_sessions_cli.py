"""Issue 35: ``tui-agent sessions [--all] [--json]`` and ``--resume`` with no id, run as
real subprocesses; the sessions are made by real ``tui-agent run``s against the testing
kit's fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tui_agent.cli import build_parser
from tui_agent.testing import FakeOpenAI, Reply


def tui_agent(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "160", "NO_COLOR": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def run_prompts(server: FakeOpenAI, folder: Path, *prompts: str) -> None:
    for prompt in prompts:
        done = tui_agent(
            "run", "--base-url", server.base_url, "--model", "fake-model", prompt, cwd=folder
        )
        assert done.returncode == 0, done.stderr


def test_sessions_lists_this_folders_sessions_and_json_has_every_field(
    project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with FakeOpenAI([Reply("Read auth.py first."), Reply("Elsewhere."), Reply("Sure.")]) as server:
        run_prompts(server, project, "where is the login code?")
        run_prompts(server, other, "a prompt in another folder")
        run_prompts(server, project, "rename the helpers\nand their tests")

    done = tui_agent("sessions", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [s["title"] for s in listed] == ["rename the helpers", "where is the login code?"]
    first = listed[1]
    assert first["turns"] == 1 and first["messages"] == 2
    assert first["model"] == "fake-model"
    assert first["directory"] == str(project)
    assert first["last_prompt"] == "where is the login code?"
    assert first["last_reply"] == "Read auth.py first."
    assert first["size"] == Path(first["path"]).stat().st_size
    assert set(first) >= {"id", "title", "named", "created", "modified"}

    table = tui_agent("sessions", cwd=project)
    assert table.returncode == 0, table.stderr
    assert "where is the login code?" in table.stdout and "fake-model" in table.stdout
    assert listed[0]["id"] in table.stdout
    assert "a prompt in another folder" not in table.stdout

    everywhere = tui_agent("sessions", "--all", "--json", cwd=project)
    titles = [s["title"] for s in json.loads(everywhere.stdout)]
    assert titles == [
        "rename the helpers",
        "a prompt in another folder",
        "where is the login code?",
    ]
    wide = tui_agent("sessions", "--all", cwd=project)
    assert "a prompt in another folder" in wide.stdout and "Folder" in wide.stdout
    assert "/other" in wide.stdout  # the folder (folded to fit)


def test_sessions_with_none_says_so_and_prints_an_empty_json_list(project: Path) -> None:
    done = tui_agent("sessions", cwd=project)
    assert (done.returncode, done.stdout) == (0, "")
    assert "No saved sessions" in done.stderr
    listed = tui_agent("sessions", "--json", cwd=project)
    assert (listed.returncode, json.loads(listed.stdout)) == (0, [])


def test_a_renamed_session_is_listed_by_its_name(project: Path) -> None:
    with FakeOpenAI([Reply("ok"), Reply("named.")]) as server:
        run_prompts(server, project, "first prompt")
        done = tui_agent(
            "--continue",
            "run",
            "--base-url",
            server.base_url,
            "/rename the parser job",
            cwd=project,
        )
    assert done.returncode == 0, done.stderr
    assert "the parser job" in done.stdout + done.stderr
    [session] = json.loads(tui_agent("sessions", "--json", cwd=project).stdout)
    assert (session["title"], session["named"]) == ("the parser job", True)


def test_resume_without_an_id_picks_in_the_app_and_is_refused_elsewhere(project: Path) -> None:
    assert build_parser().parse_args(["--resume"]).resume == ""  # the app: the picker
    assert build_parser().parse_args(["--resume", "ID"]).resume == "ID"
    assert build_parser().parse_args(["run", "--resume", "ID", "hi"]).resume == "ID"
    done = tui_agent("run", "--resume", cwd=project)
    assert done.returncode == 2
    assert "--resume needs an id here" in done.stderr and "tui-agent sessions" in done.stderr
    no_terminal = tui_agent("--resume", cwd=project)  # stdin is not a terminal
    assert no_terminal.returncode == 2
    assert "the app needs a terminal" in no_terminal.stderr


def test_resume_with_an_id_still_runs_a_prompt_in_that_session(project: Path) -> None:
    with FakeOpenAI([Reply("first"), Reply("second")]) as server:
        run_prompts(server, project, "remember the word cobalt")
        [made] = json.loads(tui_agent("sessions", "--json", cwd=project).stdout)
        done = tui_agent(
            "--resume", made["id"], "run", "--base-url", server.base_url, "which word?", cwd=project
        )
        assert done.returncode == 0, done.stderr
        sent = server.requests[-1]["messages"]
    assert any("cobalt" in str(m.get("content")) for m in sent)
    [again] = json.loads(tui_agent("sessions", "--json", cwd=project).stdout)
    assert (again["id"], again["turns"]) == (made["id"], 2)
