"""Issue 4 / SPEC §2: the bundled tools (plugins/files.py, execute.py, git.py) through
``session.toolbox.run``, as the model would call them. Permissions are allowed for every
tool by the conftest user config; they are tested elsewhere."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import running, write

from tui_agent import create_session

BUNDLED = ["read", "write", "edit", "glob", "grep", "list", "execute", "git"]
GIT_ALLOWED = "status, diff, log, show, branch, add, restore, stash, checkout"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}
NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")


async def run(session: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return (await session.toolbox.run(name, args)).to_dict()


def numbered(content: str) -> list[tuple[int, str]]:
    rows = []
    for line in content.splitlines():
        match = NUMBERED.match(line)
        assert match, f"not a numbered line: {line!r}"
        rows.append((int(match.group(1)), match.group(2)))
    return rows


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=test@example.com", "-c", "user.name=Test", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository (``git init``), outside HOME."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


# -- read -----------------------------------------------------------------------------------


async def test_read_numbers_lines(project: Path) -> None:
    write(project / "a.txt", "first\nsecond\n\tthird\n")
    session = create_session(project)
    result = await run(session, "read", {"path": "a.txt"})
    assert result["ok"], result
    assert numbered(result["content"]) == [(1, "first"), (2, "second"), (3, "\tthird")]
    assert "note" not in result


@pytest.mark.parametrize(
    ("lines", "args", "first", "last", "note"),
    [
        (30, {"offset": 10, "limit": 5}, 10, 14, "showing lines 10-14 of 30"),
        (30, {"offset": 25}, 25, 30, None),
        (30, {"limit": 3}, 1, 3, "showing lines 1-3 of 30"),
        (2500, {}, 1, 2000, "showing lines 1-2000 of 2500"),
        (2500, {"offset": 2001}, 2001, 2500, None),
        (2000, {}, 1, 2000, None),
    ],
)
async def test_read_offset_limit_and_note(
    project: Path,
    lines: int,
    args: dict[str, int],
    first: int,
    last: int,
    note: str | None,
) -> None:
    write(project / "big.txt", "".join(f"line {i}\n" for i in range(1, lines + 1)))
    session = create_session(project)
    result = await run(session, "read", {"path": "big.txt", **args})
    assert result["ok"], result
    rows = numbered(result["content"])
    assert rows == [(i, f"line {i}") for i in range(first, last + 1)]
    if note is None:
        assert "note" not in result
    else:
        assert note in result["note"]


async def test_read_cuts_long_lines(project: Path) -> None:
    write(project / "long.txt", "short\n" + "x" * 5000 + "\nend\n")
    session = create_session(project)
    result = await run(session, "read", {"path": "long.txt"})
    assert result["ok"], result
    rows = numbered(result["content"])
    assert [n for n, _ in rows] == [1, 2, 3]
    assert rows[0][1] == "short" and rows[2][1] == "end"
    cut = rows[1][1]
    assert cut.startswith("x" * 2000)
    assert not cut.startswith("x" * 2001)
    assert "cut" in cut and "3000" in cut  # says how much was cut


async def test_read_refuses_binary(project: Path) -> None:
    (project / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary\x00data")
    session = create_session(project)
    result = await run(session, "read", {"path": "blob.bin"})
    assert not result["ok"]
    assert "binary" in result["error"]
    assert "content" not in result


async def test_read_missing_file_suggests_close_names(project: Path) -> None:
    write(project / "config.yaml", "a: 1\n")
    write(project / "src" / "settings.py", "X = 1\n")
    session = create_session(project)
    result = await run(session, "read", {"path": "config.yml"})
    assert not result["ok"]
    assert "not found" in result["error"]
    assert "config.yaml" in result["error"]
    nested = await run(session, "read", {"path": "src/setings.py"})
    assert not nested["ok"]
    assert "src/settings.py" in nested["error"]


async def test_read_of_an_empty_folder_lists_nothing(project: Path) -> None:
    """A folder is listed, not refused (issue 19; tests/core/engines/test_tolerant_edit.py has
    more)."""
    (project / "docs").mkdir()
    session = create_session(project)
    result = await run(session, "read", {"path": "docs"})
    assert result["ok"], result
    assert result["folder"] is True and result["entries"] == [] and result["count"] == 0
    assert "docs is a folder" in result["note"]


async def test_read_alias_open(project: Path) -> None:
    write(project / "a.txt", "hello\n")
    session = create_session(project)
    assert session.toolbox.aliases["open"] == "read"
    result = await run(session, "open", {"path": "a.txt"})
    assert result["ok"], result
    assert numbered(result["content"]) == [(1, "hello")]


# -- write and edit -------------------------------------------------------------------------


async def test_write_creates_parent_folders_and_returns_bytes(project: Path) -> None:
    session = create_session(project)
    text = "héllo wörld\n"
    result = await run(session, "write", {"path": "deep/er/file.txt", "content": text})
    assert result["ok"], result
    assert result["bytes"] == len(text.encode("utf-8")) == 14
    assert (project / "deep" / "er" / "file.txt").read_text(encoding="utf-8") == text
    again = await run(session, "write", {"path": "deep/er/file.txt", "content": "x"})
    assert again["bytes"] == 1
    assert (project / "deep" / "er" / "file.txt").read_text() == "x"


async def test_edit_unique_replacement_returns_unified_diff(project: Path) -> None:
    path = write(project / "f.py", "def a():\n    return 1\n\ndef b():\n    return 2\n")
    session = create_session(project)
    result = await run(
        session, "edit", {"path": "f.py", "old": "    return 1\n", "new": "    return 10\n"}
    )
    assert result["ok"], result
    assert path.read_text() == "def a():\n    return 10\n\ndef b():\n    return 2\n"
    diff = result["diff"].splitlines()
    assert diff[0].startswith("--- ") and "f.py" in diff[0]
    assert diff[1].startswith("+++ ") and "f.py" in diff[1]
    assert any(line.startswith("@@ ") for line in diff)
    assert "-    return 1" in diff
    assert "+    return 10" in diff
    assert "-    return 2" not in diff and "+    return 2" not in diff


@pytest.mark.parametrize(
    ("old", "extra", "expected"),
    [
        ("not there", {}, "not found"),
        ("x = 1", {}, "3 times"),
        ("", {}, "empty"),
        ("", {"replace_all": True}, "empty"),
    ],
)
async def test_edit_failures_leave_the_file_alone(
    project: Path, old: str, extra: dict[str, Any], expected: str
) -> None:
    original = "x = 1\ny = 2\nx = 1\nx = 1\n"
    path = write(project / "f.py", original)
    session = create_session(project)
    result = await run(session, "edit", {"path": "f.py", "old": old, "new": "z", **extra})
    assert not result["ok"]
    assert expected in result["error"]
    assert path.read_text() == original


async def test_edit_replace_all(project: Path) -> None:
    path = write(project / "f.py", "x = 1\ny = 2\nx = 1\nx = 1\n")
    session = create_session(project)
    result = await run(
        session, "edit", {"path": "f.py", "old": "x = 1", "new": "x = 9", "replace_all": True}
    )
    assert result["ok"], result
    assert path.read_text() == "x = 9\ny = 2\nx = 9\nx = 9\n"
    assert result["replacements"] == 3
    assert result["diff"].count("\n+x = 9") == 3


async def test_edit_keeps_crlf_line_endings(project: Path) -> None:
    """Only the replaced text changes: the other lines stay byte for byte as they were,
    as the returned diff (one changed line) says."""
    path = project / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    session = create_session(project)
    result = await run(session, "edit", {"path": "win.txt", "old": "two", "new": "TWO"})
    assert result["ok"], result
    assert "-two" in result["diff"] and "+TWO" in result["diff"]
    assert path.read_bytes() == b"one\r\nTWO\r\nthree\r\n"


async def test_edit_missing_file(project: Path) -> None:
    session = create_session(project)
    result = await run(session, "edit", {"path": "nope.py", "old": "a", "new": "b"})
    assert not result["ok"]
    assert "not found" in result["error"]
    assert not (project / "nope.py").exists()


# -- glob, grep, list -----------------------------------------------------------------------


def tree(root: Path) -> None:
    write(root / "README.md", "# readme\nTODO: top\n")
    write(root / "docs" / "guide.md", "guide\n")
    write(root / "src" / "app.py", "def main():\n    return 1  # TODO: fix\n")
    write(root / "src" / "pkg" / "util.py", "def helper(x):\n    return x\n")
    write(root / "src" / "pkg" / "notes.txt", "TODO: notes\n")
    write(root / "setup.py", "from setuptools import setup\n")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"pattern": "**/*.py"}, ["setup.py", "src/app.py", "src/pkg/util.py"]),
        ({"pattern": "*.md"}, ["README.md", "docs/guide.md"]),
        ({"pattern": "src/*.py"}, ["src/app.py"]),
        ({"pattern": "*.py", "path": "src/pkg"}, ["src/pkg/util.py"]),
        ({"pattern": "**/*.py", "path": "src"}, ["src/app.py", "src/pkg/util.py"]),
        ({"pattern": "*.rs"}, []),
    ],
)
async def test_glob(project: Path, args: dict[str, str], expected: list[str]) -> None:
    tree(project)
    session = create_session(project)
    result = await run(session, "glob", args)
    assert result["ok"], result
    assert sorted(result["files"]) == expected
    assert result["count"] == len(expected)
    assert "note" not in result


async def test_glob_path_must_be_a_folder(project: Path) -> None:
    session = create_session(project)
    result = await run(session, "glob", {"pattern": "*", "path": "missing"})
    assert not result["ok"]
    assert "missing" in result["error"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"pattern": "TODO"},
            [
                "README.md:2: TODO: top",
                "src/app.py:2:     return 1  # TODO: fix",
                "src/pkg/notes.txt:1: TODO: notes",
            ],
        ),
        ({"pattern": "TODO", "include": "*.py"}, ["src/app.py:2:     return 1  # TODO: fix"]),
        ({"pattern": r"^def \w+\(x\)"}, ["src/pkg/util.py:1: def helper(x):"]),
        ({"pattern": "TODO", "path": "src/pkg"}, ["src/pkg/notes.txt:1: TODO: notes"]),
        ({"pattern": "def", "path": "src/app.py"}, ["src/app.py:1: def main():"]),
        ({"pattern": "nothing-matches-this"}, []),
    ],
)
async def test_grep(project: Path, args: dict[str, str], expected: list[str]) -> None:
    tree(project)
    session = create_session(project)
    result = await run(session, "grep", args)
    assert result["ok"], result
    assert sorted(result["matches"]) == sorted(expected)
    assert result["count"] == len(expected)


async def test_grep_invalid_regex_is_an_error(project: Path) -> None:
    tree(project)
    session = create_session(project)
    result = await run(session, "grep", {"pattern": "def (unclosed"})
    assert not result["ok"]
    assert "invalid regular expression" in result["error"]


async def test_grep_skips_binary_files(project: Path) -> None:
    write(project / "text.txt", "needle in text\n")
    (project / "data.bin").write_bytes(b"\x00\x01needle in binary\n\x00")
    session = create_session(project)
    result = await run(session, "grep", {"pattern": "needle"})
    assert result["ok"], result
    assert result["matches"] == ["text.txt:1: needle in text"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"depth": 1}, ["README.md", "docs/", "setup.py", "src/"]),
        (
            {},
            ["README.md", "docs/", "docs/guide.md", "setup.py", "src/", "src/app.py", "src/pkg/"],
        ),
        (
            {"depth": 3},
            [
                "README.md",
                "docs/",
                "docs/guide.md",
                "setup.py",
                "src/",
                "src/app.py",
                "src/pkg/",
                "src/pkg/notes.txt",
                "src/pkg/util.py",
            ],
        ),
        ({"path": "src", "depth": 1}, ["app.py", "pkg/"]),
    ],
)
async def test_list_depth(project: Path, args: dict[str, Any], expected: list[str]) -> None:
    tree(project)
    session = create_session(project)
    result = await run(session, "list", args)
    assert result["ok"], result
    assert result["entries"] == expected


async def test_search_tools_respect_gitignore(repo: Path) -> None:
    tree(repo)
    write(repo / ".gitignore", "build/\n*.log\nsecret.py\n")
    write(repo / "build" / "gen.py", "# TODO: generated\n")
    write(repo / "debug.log", "TODO: log\n")
    write(repo / "src" / "secret.py", "TODO = 'hidden'\n")
    git(repo, "add", "README.md")  # tracked and untracked files both count
    session = create_session(repo)

    globbed = await run(session, "glob", {"pattern": "**/*.py"})
    assert sorted(globbed["files"]) == ["setup.py", "src/app.py", "src/pkg/util.py"]
    everything = await run(session, "glob", {"pattern": "**/*"})
    assert "debug.log" not in everything["files"]
    assert not any(f.startswith("build/") for f in everything["files"])

    grepped = await run(session, "grep", {"pattern": "TODO"})
    files = {m.split(":", 1)[0] for m in grepped["matches"]}
    assert files == {"README.md", "src/app.py", "src/pkg/notes.txt"}

    listed = await run(session, "list", {"depth": 3})
    assert "build/" not in listed["entries"]
    assert "debug.log" not in listed["entries"]
    assert "src/secret.py" not in listed["entries"]
    assert "src/app.py" in listed["entries"] and ".gitignore" in listed["entries"]


async def test_search_tools_cap_at_100_and_say_so(repo: Path) -> None:
    for i in range(150):
        write(repo / "many" / f"f{i:03}.txt", f"match {i}\n")
    session = create_session(repo)

    globbed = await run(session, "glob", {"pattern": "**/*.txt"})
    assert len(globbed["files"]) == 100
    assert globbed["count"] == 150
    assert "100" in globbed["note"] and "150" in globbed["note"]

    grepped = await run(session, "grep", {"pattern": r"match \d+"})
    assert len(grepped["matches"]) == 100
    assert "100" in grepped["note"] and "150" in grepped["note"]

    listed = await run(session, "list", {"path": "many"})
    assert len(listed["entries"]) == 100
    assert "100" in listed["note"] and "150" in listed["note"]

    small = await run(session, "glob", {"pattern": "many/f00*.txt"})
    assert small["count"] == 10 and "note" not in small


# -- execute --------------------------------------------------------------------------------


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a reaped-later corpse is dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_dead(pids: list[int], seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def family(pid_file: Path) -> str:
    """bash starting two background sleeps, a nested bash with its own sleep, then waiting.
    Every PID goes into ``pid_file`` (the shell's own last, then ``READY``)."""
    return (
        f"sleep 30 & echo $! >> {pid_file}; "
        f"sleep 30 & echo $! >> {pid_file}; "
        f"bash -c 'sleep 30 & echo $! >> {pid_file}; wait' & echo $! >> {pid_file}; "
        f"echo $$ >> {pid_file}; sleep 0.2; echo READY >> {pid_file}; wait"
    )


def read_pids(pid_file: Path) -> list[int]:
    return [int(w) for w in pid_file.read_text().split() if w.isdigit()]


@pytest.fixture
def reap_leftovers() -> Any:
    """Kill any recorded process a failing test left behind (by PID, never by name)."""
    started: list[int] = []
    yield started
    for pid in started:
        if alive(pid):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


async def test_execute_exit_status_and_merged_output(project: Path) -> None:
    session = create_session(project)
    result = await run(session, "execute", {"command": "echo out; echo err >&2; echo out2; exit 3"})
    assert result["exit_status"] == 3
    assert result["output"] == "out\nerr\nout2\n"
    ok = await run(session, "execute", {"command": "printf hi"})
    assert ok["ok"] and ok["exit_status"] == 0 and ok["output"] == "hi"


@pytest.mark.parametrize(("workdir", "sub"), [(None, ""), ("sub", "sub"), ("ABS", "sub/deeper")])
async def test_execute_workdir(project: Path, workdir: str | None, sub: str) -> None:
    (project / "sub" / "deeper").mkdir(parents=True)
    session = create_session(project)
    args: dict[str, Any] = {"command": "pwd -P"}
    if workdir == "ABS":
        args["workdir"] = str(project / "sub" / "deeper")
    elif workdir is not None:
        args["workdir"] = workdir
    result = await run(session, "execute", args)
    assert result["ok"], result
    expected = (project / sub).resolve() if sub else project.resolve()
    assert result["output"].strip() == str(expected)


async def test_execute_workdir_must_exist(project: Path) -> None:
    session = create_session(project)
    result = await run(session, "execute", {"command": "touch made", "workdir": "nowhere"})
    assert not result["ok"]
    assert "nowhere" in result["error"]
    assert not (project / "made").exists()


@pytest.mark.parametrize("name", ["execute", "bash", "sh", "exec"])
async def test_execute_aliases(project: Path, name: str) -> None:
    session = create_session(project)
    if name != "execute":
        assert session.toolbox.aliases[name] == "execute"
    result = await run(session, name, {"command": "echo via-$((20 + 22))"})
    assert result["ok"], result
    assert result["output"] == "via-42\n"
    assert result["exit_status"] == 0


def orphan(pid_file: Path) -> str:
    """bash leaves a background sleep holding the output pipe and exits at once."""
    return f"sleep 30 & echo $! >> {pid_file}; echo started"


@pytest.mark.parametrize(("command", "count"), [(family, 5), (orphan, 1)])
@pytest.mark.usefixtures("sandbox_off")  # the kill without bwrap
async def test_execute_timeout_kills_the_whole_process_group(
    project: Path, tmp_path: Path, reap_leftovers: list[int], command: Any, count: int
) -> None:
    pid_file = tmp_path / "pids.txt"
    session = create_session(project)
    started = time.monotonic()
    result = await run(session, "execute", {"command": command(pid_file), "timeout": 1})
    elapsed = time.monotonic() - started
    pids = read_pids(pid_file)
    reap_leftovers.extend(pids)
    assert len(pids) == count, pid_file.read_text()
    assert elapsed < 10
    assert not result["ok"]
    assert "timed out" in result["error"]
    assert wait_dead(pids) == []


@pytest.mark.usefixtures("sandbox_off")  # setsid: out of the group, holding the pipe
async def test_a_cancel_after_a_timeout_is_not_lost(project: Path) -> None:
    """Past its timeout the command is killed and the output read for up to 5 s more (a
    process out of the group can hold the pipe): a cancel then still cancels, and our end
    of the pipe is closed then (not left to the garbage collector)."""
    session = create_session(project)
    marker = f"sleep 8.{os.getpid()}46"
    open_before = set(os.listdir("/proc/self/fd"))
    task = asyncio.ensure_future(
        session.toolbox.run("execute", {"command": f"setsid {marker} & sleep 30", "timeout": 0.5})
    )
    try:
        await asyncio.sleep(1.5)
        assert not task.done()  # reading what is left
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
        assert running(marker)  # it still holds the pipe's other end
        await asyncio.sleep(0.05)
        assert set(os.listdir("/proc/self/fd")) <= open_before
    finally:
        for pid in running(marker):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.usefixtures("sandbox_off")  # the kill without bwrap (test_sandbox: with)
async def test_a_cancel_while_the_command_starts_leaves_nothing(project: Path) -> None:
    """Esc right after the call: the process may not have been started yet."""
    session = create_session(project)
    for n, delay in enumerate([0, 0, 0.001, 0.002, 0.005, 0.01]):
        marker = f"sleep 4545.{os.getpid()}{n}"
        task = asyncio.ensure_future(session.toolbox.run("execute", {"command": f"exec {marker}"}))
        await asyncio.sleep(delay)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
        deadline = time.monotonic() + 2
        while running(marker) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not running(marker), delay


@pytest.mark.usefixtures("sandbox_off")  # the kill without bwrap
async def test_cancel_kills_the_child_processes(
    project: Path, tmp_path: Path, reap_leftovers: list[int]
) -> None:
    pid_file = tmp_path / "pids.txt"
    session = create_session(project)
    task = asyncio.ensure_future(
        session.toolbox.run("execute", {"command": family(pid_file), "timeout": 60})
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if pid_file.exists() and "READY" in pid_file.read_text():
            break
        await asyncio.sleep(0.05)
    pids = read_pids(pid_file)
    reap_leftovers.extend(pids)
    assert len(pids) == 5, pid_file.read_text() if pid_file.exists() else "no pid file"
    assert all(alive(p) for p in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert wait_dead(pids) == []


@pytest.mark.parametrize(
    ("command", "total_lines"),
    [
        ("seq 1 3000", 3000),  # over 2,000 lines
        ("for i in $(seq 1 1000); do printf '%0100d\\n' $i; done", 1000),  # over 50 KB
    ],
)
async def test_execute_long_output_keeps_the_tail_and_saves_the_rest(
    project: Path, command: str, total_lines: int
) -> None:
    session = create_session(project)
    expected = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, check=True
    ).stdout
    assert len(expected.splitlines()) == total_lines
    result = await run(session, "execute", {"command": command})
    assert result["ok"], {k: v for k, v in result.items() if k != "output"}
    assert result["exit_status"] == 0
    assert result["truncated"] is True
    output = result["output"]
    saved = Path(result["full_output"])
    assert saved.is_file()
    assert saved.read_text(encoding="utf-8") == expected
    assert str(saved) in output
    body = output.splitlines()
    kept = [line for line in body if not line.startswith("[")]
    assert kept == expected.splitlines()[-len(kept) :]  # the tail, in order, up to the end
    assert len(kept) <= 2000
    assert len("\n".join(kept).encode()) <= 50 * 1024
    cut_lines = total_lines - len(kept)
    assert cut_lines > 0
    assert f"{cut_lines} lines" in output  # says how much was cut
    cut_bytes = len(expected.encode()) - len("".join(f"{k}\n" for k in kept).encode())
    assert f"{cut_bytes} bytes" in output


async def test_execute_short_output_is_not_truncated(project: Path) -> None:
    session = create_session(project)
    result = await run(session, "execute", {"command": "seq 1 2000"})
    assert result["output"] == "".join(f"{i}\n" for i in range(1, 2001))
    assert "full_output" not in result and not result.get("truncated")


@pytest.mark.parametrize(("timeout", "ok"), [(601, False), (1000, False), (0, False), (600, True)])
async def test_execute_timeout_bounds_are_validated(
    project: Path, timeout: float, ok: bool
) -> None:
    session = create_session(project)
    result = await run(session, "execute", {"command": "echo ran", "timeout": timeout})
    assert result["ok"] is ok
    if ok:
        assert result["output"] == "ran\n"
    else:
        assert "/timeout" in result["error"]
        assert "output" not in result


# -- git ------------------------------------------------------------------------------------


@pytest.fixture
def committed(repo: Path) -> Path:
    write(repo / "a.txt", "one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "first commit")
    return repo


@pytest.mark.parametrize("as_list", [False, True])
async def test_git_allowed_subcommands(committed: Path, as_list: bool) -> None:
    session = create_session(committed)

    def args(text: str) -> Any:
        return text.split() if as_list else text

    log = await run(session, "git", {"args": args("log --oneline -5")})
    assert log["ok"] and log["exit_status"] == 0, log
    assert "first commit" in log["output"]

    write(committed / "a.txt", "one\ntwo\n")
    write(committed / "new.txt", "new\n")
    diff = await run(session, "git", {"args": args("diff")})
    assert diff["exit_status"] == 0
    assert "+two" in diff["output"] and "a.txt" in diff["output"]

    status = await run(session, "git", {"args": args("status --porcelain")})
    assert status["output"].splitlines() == [" M a.txt", "?? new.txt"]

    added = await run(session, "git", {"args": args("add new.txt")})
    assert added["ok"] and added["exit_status"] == 0, added
    after = await run(session, "git", {"args": args("status --porcelain")})
    assert after["output"].splitlines() == [" M a.txt", "A  new.txt"]


async def test_git_args_list_keeps_spaces_in_one_argument(committed: Path) -> None:
    session = create_session(committed)
    result = await run(session, "git", {"args": ["log", "--format=%s :: done", "-1"]})
    assert result["output"] == "first commit :: done\n"
    quoted = await run(session, "git", {"args": "log '--format=%s :: done' -1"})
    assert quoted["output"] == "first commit :: done\n"


@pytest.mark.parametrize(
    "args",
    [
        "push origin main",
        "commit -m x",
        "reset --hard HEAD~1",
        ["commit", "-am", "x"],
        "clean -fdx",
        "-c core.pager=rm status",
        "",
        [],
    ],
)
async def test_git_refuses_other_subcommands_with_the_allowed_list(
    committed: Path, args: Any
) -> None:
    session = create_session(committed)
    head = git(committed, "rev-parse", "HEAD")
    result = await run(session, "git", {"args": args})
    assert not result["ok"]
    assert GIT_ALLOWED in result["error"]
    assert git(committed, "rev-parse", "HEAD") == head
    assert git(committed, "log", "--format=%s") == "first commit\n"


# -- descriptions and definitions ----------------------------------------------------------


async def test_every_bundled_tool_is_described_and_offered(project: Path) -> None:
    session = create_session(project)
    definitions = {d["function"]["name"]: d for d in session.toolbox.definitions()}
    offered = {d["function"]["name"] for d in session.extensions.offered_tools()}
    for name in BUNDLED:
        assert name in session.toolbox.tools, name
        assert len(session.toolbox.tools[name].description.strip()) > 20, name
        definition = definitions[name]
        assert definition["type"] == "function"
        assert definition["function"]["description"] == session.toolbox.tools[name].description
        assert definition["function"]["parameters"]["type"] == "object"
        assert name in offered
    for alias in ["open", "bash", "sh", "exec"]:
        assert alias not in definitions


async def test_read_offset_past_the_end_says_so(project: Path) -> None:
    write(project / "short.txt", "a\nb\n")
    session = create_session(project)
    result = await run(session, "read", {"path": "short.txt", "offset": 10})
    assert result["content"] == ""
    assert result["note"] == "offset 10 is past the end: the file has 2 lines"


@pytest.mark.parametrize("args", ["diff --output=../x.txt", ["log", "--output", "y"], "show -o z"])
async def test_git_refuses_options_that_write_files(repo: Path, args: Any) -> None:
    session = create_session(repo)
    result = await run(session, "git", {"args": args})
    assert result["ok"] is False and "writes files" in result["error"]
    assert not (repo.parent / "x.txt").exists() and not (repo / "y").exists()


@pytest.mark.parametrize(
    ("text", "truncated"),
    [
        ("short\n", False),
        ("x\n" * 2000, False),
        ("x\n" * 2001, True),
        ("y" * (50 * 1024 + 1), True),
        ("é" * 30_000 + "\n" + "tail\n", True),
    ],
)
def test_keep_tail_rule(text: str, truncated: bool) -> None:
    from tui_agent.truncation import MAX_BYTES, keep_tail

    result = keep_tail(text, "test")
    assert bool(result.get("truncated")) is truncated
    if truncated:
        saved = Path(result["full_output"])
        assert saved.read_text(encoding="utf-8") == text
        shown = result["output"].split("]\n", 1)[1]
        assert text.endswith(shown) and len(shown.encode()) <= MAX_BYTES
        assert str(saved) in result["output"]
    else:
        assert result == {"output": text}
