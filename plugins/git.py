"""The built-in ``git`` tool: read-mostly git commands in the session's folder.

Every run has tui_agent.safe_git's hardening: ``-c`` overrides and an environment under
which the repository's config (or a nested repository's, a submodule's, an include, a
``.git/commondir`` or ``.git`` file redirect) runs no program: no fsmonitor, hook, pager,
editor, credential helper, transport, and the repository's own filter, diff and merge
drivers emptied; ``diff``, ``log`` and ``show`` get ``--no-ext-diff --no-textconv``.

With the sandbox on it runs inside it, as ``execute`` does (a hidden ``~/.ssh`` stays
hidden from ``git diff --no-index``), its process group killed on a timeout or a cancel;
there the sandbox's environment applies (no ``GIT_*`` variable passes), so the ``-c``
overrides hold and anything else a repository names runs inside the sandbox.
With the sandbox off, arguments that reach outside the project are refused: ``--no-index``,
``--pathspec-from-file``, and any path (or ``--option=path``) that resolves outside the
worktree (``git diff /dev/null FILE`` is a ``--no-index`` diff without the flag). Options
before the subcommand (``-C``, ``-c``, ``--git-dir``, ``--work-tree``, ``--exec-path``,
``--config-env``…) are always refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from pathlib import Path
from typing import Any

import tui_agent
from tui_agent import safe_git

ALLOWED = ("status", "diff", "log", "show", "branch", "add", "restore", "stash", "checkout")
DIFFING = ("diff", "log", "show")  # they take --no-ext-diff --no-textconv
# they run git inside submodules and embedded repositories (log and show only when asked)
RECURSING = ("status", "diff", "add", "restore", "stash", "checkout")
TIMEOUT = 60
CUT = 50_000
# before the subcommand: each points git at another folder, config or program
REACHING = (
    "-C",
    "-c",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--exec-path",
    "--namespace",
    "--super-prefix",
)
OUTSIDE_SANDBOX = (
    "the git tool runs outside the sandbox here, so it reads only the project: "
    "use the execute tool (asked) for anything else"
)


def refusal(words: list[str], directory: Path, worktree: Path, sandboxed: bool) -> str | None:
    """Why these arguments are refused, in one line, or None."""
    first = words[0]
    if first.startswith("-"):
        name = first.split("=", 1)[0]
        if name in REACHING or name.startswith("-c"):
            return (
                f"git {name} before the subcommand is refused: it points git at another "
                f"folder, config or program than the project's. Allowed: {', '.join(ALLOWED)}"
            )
        return f"git options go after the subcommand ({first}). Allowed: {', '.join(ALLOWED)}"
    if first not in ALLOWED:
        return (
            f"git {first} is not allowed here. Allowed: {', '.join(ALLOWED)}; "
            "use the execute tool for anything else"
        )
    for word in words[1:]:
        if word == "--output" or word.startswith("--output=") or word == "-o":
            return f"{word} writes files; use the execute tool for that"
    if sandboxed:
        return None
    top = os.path.realpath(worktree)
    options = True
    for word in words[1:]:
        if options and word == "--no-index":
            return f"--no-index is refused: it reads any file on the machine; {OUTSIDE_SANDBOX}"
        if options and word.startswith("--pathspec-from-file"):
            return f"{word} is refused: it reads a file that may be anywhere; {OUTSIDE_SANDBOX}"
        if options and word == "--":
            options = False
            continue
        if not options or not word.startswith("-"):
            path = word
        elif word.startswith("--") and "=" in word:
            path = word.split("=", 1)[1]
        elif word.startswith("-O") and len(word) > 2:  # diff's order file
            path = word[2:]
        else:
            continue
        real = os.path.realpath(os.path.join(directory, path))
        if real != top and not real.startswith(top + os.sep):
            return f"{path} is outside the project ({worktree}); {OUTSIDE_SANDBOX}"
    return None


def _kill_group(process: asyncio.subprocess.Process) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return


async def _run(argv: list[str], env: dict[str, str] | None, cwd: Path) -> tuple[int | None, str]:
    """Run ``argv`` in its own process group to its end; on a timeout or a cancel the
    group is killed (in the sandbox that is bwrap and everything inside) and it raises."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    )
    try:
        process = await asyncio.shield(spawn)
    except asyncio.CancelledError:  # cancelled while it started: killed once it has
        started = await spawn
        _kill_group(started)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(started.communicate(), 5)
        raise
    try:
        out, _ = await asyncio.wait_for(process.communicate(), TIMEOUT)
    except (TimeoutError, asyncio.CancelledError):
        _kill_group(process)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(process.wait(), 5)
        transport = getattr(process, "_transport", None)  # our pipe end, closed now
        if transport is not None:
            transport.close()
        raise
    return process.returncode, out.decode("utf-8", errors="replace")


@tui_agent.setup("git")
def git_setup(session: tui_agent.Session) -> None:
    @session.toolbox.add(
        "git",
        description=(
            "Run a git command in the session's folder. Allowed subcommands: "
            + ", ".join(ALLOWED)
            + ". Example args: `log --oneline -5`."
        ),
        params={
            "args": {
                "type": ["string", "array"],
                "items": {"type": "string"},
                "description": "Arguments after `git`, as a string or a list",
            }
        },
        required=["args"],
    )
    async def git(args: dict[str, Any]) -> dict[str, Any]:
        raw = args["args"]
        try:
            words = shlex.split(raw) if isinstance(raw, str) else [str(w) for w in raw]
        except ValueError as exc:
            return {"error": f"could not parse args: {exc}"}
        if not words:
            return {"error": f"no git subcommand given. Allowed: {', '.join(ALLOWED)}"}
        sandbox = session.sandbox
        directory = Path(session.directory)
        refused = refusal(words, directory, Path(session.worktree), sandbox.active)
        if refused is not None:
            return {"error": refused}
        program = safe_git.executable("git", Path(session.worktree))
        if program is None:
            return {"error": "git is not installed (not found on PATH)"}
        env = safe_git.environment(keep=safe_git.USER_VARIABLES, near=Path(session.worktree))
        inside = words[0] in RECURSING or any(w.startswith("--submodule") for w in words)
        drivers = await asyncio.to_thread(
            safe_git.driver_overrides, program, directory, env, inside
        )
        env = safe_git.with_config(env, drivers)
        extra = safe_git.DIFF_OPTIONS if words[0] in DIFFING else ()
        argv = safe_git.argv(program, "--no-pager", "-c", "color.ui=never", words[0])
        argv += [*extra, *words[1:]]
        note = None
        if not sandbox.active:
            status, text = await _run(argv, env, directory)
        else:
            unseen = sandbox.unseen(directory)
            if unseen is not None:
                return {"error": unseen}
            with sandbox.command(argv, directory, env) as (wrapped, wrapped_env):
                status, text = await _run(wrapped, wrapped_env, directory)
            note = sandbox.note(text) if status != 0 else None
            if sandbox.restored:  # a protected link the command replaced, put back
                note = " ".join([*sandbox.restored, note or ""]).strip()
                sandbox.restored.clear()
        if len(text) > CUT:
            text = text[:CUT] + f"\n[cut: {len(text) - CUT} more characters]"
        result: dict[str, Any] = {"exit_status": status, "output": text}
        if note:
            result["sandbox"] = note
        return result
