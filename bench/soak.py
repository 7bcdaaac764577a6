"""``soak``: 300 turns of ``await session.turn(...)`` against a 16k-token window.

Each turn the model (the testing kit's fake server, with a ``responder``) calls the bundled
``read`` tool on a ~4k-token file of a temporary project, then answers in one line; a
summary request (the budget's, its system message "You summarise a conversation …") gets
a short summary. The window is known from the ``context_window = 16384`` setting in the
user's config.toml, so what is measured is the proactive path (compaction before a request
passes ``compact_at``); the server refuses a request over 16,384 tokens as OpenAI does
(HTTP 400 ``context_length_exceeded``), and every one it refused counts as ``rejected``.

The session runs in a process of its own (``python bench/soak.py PROJECT``; run.py starts
it with the sandbox's HOME and XDG folders), and the fake server in a spawned child of that
process, so the RSS and the turn times are the session's alone: the server keeps every
request body it gets, which is not the session's memory. The figures:

- ``turns``: turns run; ``failed``: turns whose ``TurnFinished`` had an error, or that raised
- ``rejected``: requests the server refused (over the limit, or an invalid transcript)
- ``rss_growth``: (RSS after turn 300 − RSS after turn 50) / RSS after turn 50
- ``turn_ms_ratio``: mean wall time of the last 50 turns / of the first 50
- extras: compactions (by reason), requests and summary requests, the final conversation
  length, RSS and mean turn times, the largest request the server saw

``BENCH_SOAK_PROFILE=/tmp/soak.txt`` writes a cProfile report of the turns (cumulative);
``BENCH_SOAK_TRACEMALLOC=1`` logs the allocation sites that grew most from turn 50 to the
end (both slow the run down, so the figures of such a run are not the bench's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from common import PYTHON, Sandbox, log, rounded  # noqa: E402

SOAK_TURNS = 300
SOAK_WINDOW = 16_384
FILE_TOKENS = 4_000  # each file's size on disk, by the fake's count (characters / 4)
FILES = 5  # the turns read these in turn
EDGE = 50  # turns: the first and last this many are compared
SUMMARY_SYSTEM_START = "You summarise a conversation"
SUMMARY = (
    "The user asks, turn after turn, what one module of src/ does; the agent reads it with "
    "the read tool and answers in one line. Modules read so far: module_0.py to module_4.py, "
    "each a list of small pure functions (scale, clamp, pick) with no side effects. Nothing "
    "was changed, no command was run, no error is open; next: the user's next question."
)


# -- the fake model (in the server's process) ------------------------------------------------


def respond(body: dict[str, Any]) -> Any:
    """The fake model: a summary for a summary request, a short answer after a tool
    result, else a ``read`` of the file the user named."""
    from tui_agent.testing import Call, Reply

    messages = body.get("messages") or []
    first = messages[0] if messages else {}
    if first.get("role") == "system" and str(first.get("content", "")).startswith(
        SUMMARY_SYSTEM_START
    ):
        return Reply(SUMMARY)
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return Reply("It defines small pure helpers (scale, clamp, pick); nothing to change.")
    prompt = str(last.get("content", ""))
    name = next((w for w in prompt.split() if w.startswith("src/")), "src/module_0.py")
    return Reply(calls=[Call("read", {"path": name.rstrip(".,:;?")})])


def serve(limit: int, conn: Any, stop: Any) -> None:
    """The fake server with ``respond``; sends ``base_url`` on ``conn``, then, once ``stop``
    is set, what it saw."""
    from tui_agent.testing import FakeOpenAI, count_tokens

    with FakeOpenAI(context_limit=limit, responder=respond) as server:
        conn.send(server.base_url)
        stop.wait()
        summaries = sum(
            1
            for body in server.requests
            if str((body.get("messages") or [{}])[0].get("content", "")).startswith(
                SUMMARY_SYSTEM_START
            )
        )
        conn.send(
            {
                "requests": len(server.requests),
                "summary_requests": summaries,
                "overflowed": list(server.overflowed),
                "invalid": list(server.rejected),
                "largest_request": max((count_tokens(r) for r in server.requests), default=0),
            }
        )


# -- the session (in this process) -----------------------------------------------------------


def rss_bytes() -> int:
    """This process's resident set now (``/proc/self/statm``)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def write_files(project: Path, file_tokens: int) -> list[str]:
    """``FILES`` Python modules of about ``file_tokens`` tokens each (characters / 4)."""
    names = []
    for n in range(FILES):
        lines: list[str] = [f'"""Helpers of module {n}."""', ""]
        i = 0
        while sum(len(line) + 1 for line in lines) < file_tokens * 4 - 80:
            lines += [
                f"def scale_{n}_{i}(value: float, factor: float = {i}.5) -> float:",
                f"    return clamp_{n}(value * factor, low=-{i}, high={i + 100})",
                "",
            ]
            i += 1
        path = project / "src" / f"module_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        names.append(f"src/module_{n}.py")
    return names


async def soak_turns(
    project: Path, base_url: str, turns: int, names: list[str], profile: str = ""
) -> dict[str, Any]:
    """``turns`` turns of a headless session on ``project``; per-turn figures."""
    import tui_agent
    import tui_agent.events as events

    session = tui_agent.create_session(project, base_url=base_url, model="fake-model", yes=True)
    failed: list[str] = []
    compactions: dict[str, int] = {}
    finished: list[Any] = []

    def follow(event: Any) -> None:
        if isinstance(event, events.TurnFinished):
            finished.append(event)
        elif isinstance(event, events.Compacted):
            compactions[event.reason] = compactions.get(event.reason, 0) + 1

    session.events.listen(follow)
    times: list[float] = []
    rss: dict[int, int] = {}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    trace = bool(os.environ.get("BENCH_SOAK_TRACEMALLOC"))
    snapshot = None
    if trace:
        import tracemalloc

        tracemalloc.start(12)
    try:
        for turn in range(1, turns + 1):
            finished.clear()
            prompt = f"Turn {turn}: what does {names[turn % len(names)]} do?"
            started = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            problem = None
            try:
                await session.turn(prompt)
            except Exception as exc:  # a turn that raised counts as failed
                problem = f"raised {type(exc).__name__}: {exc}"
            finally:
                if profiler is not None:
                    profiler.disable()
            times.append(time.perf_counter() - started)
            if problem is None:
                ends = [e.error or ("cancelled" if e.cancelled else "") for e in finished]
                problem = next((p for p in ends if p), None if ends else "no TurnFinished")
            if problem is not None:
                failed.append(f"turn {turn}: {problem}")
            if turn % EDGE == 0 or turn == turns:
                rss[turn] = rss_bytes()
                log(
                    f"  soak turn {turn}: {sum(times[-EDGE:]) / len(times[-EDGE:]) * 1000:.1f} ms"
                    f"/turn, RSS {rss[turn] / 2**20:.1f} MiB, "
                    f"{len(session.conversation.messages)} messages, compactions {compactions}"
                )
            if trace and turn == min(EDGE, turns):
                import tracemalloc

                snapshot = tracemalloc.take_snapshot()
    finally:
        await session.close()
    if trace and snapshot is not None:
        import tracemalloc

        grown = tracemalloc.take_snapshot().compare_to(snapshot, "traceback")
        for stat in grown[:8]:
            log(f"  grew {stat.size_diff / 1024:+.0f} KiB in {stat.count_diff:+d} blocks at:")
            for line in stat.traceback.format()[-8:]:
                log(f"    {line}")
        tracemalloc.stop()
    if profiler is not None:
        import pstats

        with open(profile, "w", encoding="utf-8") as out:
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(60)
        log(f"  profile written to {profile}")
    edge = min(EDGE, max(1, turns // 2))
    first, last = times[:edge], times[-edge:]
    first_ms = sum(first) / len(first) * 1000
    last_ms = sum(last) / len(last) * 1000
    start_rss = rss.get(EDGE) or min(rss.values())
    end_rss = rss[max(rss)]
    return {
        "turns": len(times),
        "failed": len(failed),
        "failures": failed[:5],
        "compactions": sum(compactions.values()),
        "compactions_by_reason": compactions,
        "final_messages": len(session.conversation.messages),
        "first_ms": first_ms,
        "last_ms": last_ms,
        "rss_start": start_rss,
        "rss_end": end_rss,
        "seconds": sum(times),
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def write_config(window: int) -> Path:
    """``context_window = window`` in the user's config.toml (HOME/XDG say where)."""
    from tui_agent.core.project.config import user_config_file

    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"context_window = {window}\n", encoding="utf-8")
    return path


def run_soak(
    project: Path,
    turns: int = SOAK_TURNS,
    window: int = SOAK_WINDOW,
    file_tokens: int = FILE_TOKENS,
    profile: str = "",
) -> dict[str, Any]:
    """The soak in this process, the server in a spawned one; the figures as a dict."""
    write_config(window)
    names = write_files(project, file_tokens)
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    stop = context.Event()
    server = context.Process(target=serve, args=(window, child, stop), daemon=True)
    server.start()
    try:
        if not parent.poll(60):
            raise RuntimeError("soak: the fake server did not start")
        base_url = parent.recv()
        figures = asyncio.run(soak_turns(project, base_url, turns, names, profile))
        stop.set()
        if not parent.poll(60):
            raise RuntimeError("soak: the fake server did not report")
        seen = parent.recv()
    finally:
        stop.set()
        server.join(10)
        if server.is_alive():
            server.kill()
    rejected = len(seen["overflowed"]) + len(seen["invalid"])
    return {
        "turns": figures["turns"],
        "failed": figures["failed"],
        "rejected": rejected,
        "rss_growth": round((figures["rss_end"] - figures["rss_start"]) / figures["rss_start"], 3),
        "turn_ms_ratio": round(figures["last_ms"] / figures["first_ms"], 3),
        "compactions": figures["compactions"],
        "compactions_by_reason": figures["compactions_by_reason"],
        "requests": seen["requests"],
        "summary_requests": seen["summary_requests"],
        "largest_request": seen["largest_request"],
        "final_messages": figures["final_messages"],
        "first_turn_ms": round(figures["first_ms"], 2),
        "last_turn_ms": round(figures["last_ms"], 2),
        "rss_start_mb": round(figures["rss_start"] / 2**20, 1),
        "rss_end_mb": round(figures["rss_end"] / 2**20, 1),
        "seconds": round(figures["seconds"], 1),
        "failures": figures["failures"],
        "overflowed": seen["overflowed"][:5],
        "invalid": seen["invalid"][:3],
    }


# -- run.py's entry ---------------------------------------------------------------------------


def bench_soak(sandbox: Sandbox) -> dict[str, Any]:
    """``python bench/soak.py PROJECT`` with a home of its own; its last stdout line is the
    figures."""
    home = sandbox.home("soak")
    project = sandbox.project("soak")
    env = sandbox.env(home)
    done = subprocess.run(
        [PYTHON, str(BENCH / "soak.py"), str(project)],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        check=False,
        timeout=900,
    )
    for line in done.stderr.splitlines():
        if "soak" in line or "grew" in line or "profile" in line:
            log(line.split("] ", 1)[-1])
    if done.returncode != 0:
        raise RuntimeError(f"soak: {done.stderr.strip()[-2000:]}")
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if data.get("failures"):
        log(f"  soak failures: {data['failures']}")
    if data.get("overflowed") or data.get("invalid"):
        log(f"  soak refused: over the limit {data['overflowed']}, invalid {data['invalid']}")
    data["rss_growth"] = rounded(data.get("rss_growth"), 3)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description="the soak figure, in this process")
    parser.add_argument("project")
    parser.add_argument("--turns", type=int, default=SOAK_TURNS)
    parser.add_argument("--window", type=int, default=SOAK_WINDOW)
    parser.add_argument("--file-tokens", type=int, default=FILE_TOKENS)
    args = parser.parse_args()
    figures = run_soak(
        Path(args.project),
        args.turns,
        args.window,
        args.file_tokens,
        os.environ.get("BENCH_SOAK_PROFILE", ""),
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
