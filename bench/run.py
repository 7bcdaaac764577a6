"""tui-agent benchmarks, each next to a baseline measured in the same run (issue 6).

    python bench/run.py            # a table
    python bench/run.py --json     # one JSON object
    python bench/run.py --only startup,dispatch

Every app this starts gets HOME and the XDG folders inside one temporary folder (removed
at the end), bytecode goes to a cache inside it too, and the only network used is the
testing kit's fake OpenAI server on 127.0.0.1. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import multiprocessing
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True  # nothing lands in bench/__pycache__ or the package

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402

PYTHON = sys.executable
SIZE = (100, 30)
KEYS = ["startup", "idle_rss", "stream_render", "input_latency", "dispatch", "load", "resume"]
FIELDS = {
    "startup": ["ours_ms", "bare_textual_ms", "ratio"],
    "idle_rss": ["ours_mb", "bare_textual_mb", "ratio"],
    "stream_render": [
        "tokens",
        "ui_cpu_s",
        "raw_cpu_s",
        "ratio",
        "first_1k_us_per_token",
        "last_1k_us_per_token",
        "linearity",
    ],
    "input_latency": ["p50_ms", "p95_ms"],
    "dispatch": [
        "direct_us",
        "thread_handoff_us",
        "sync_ten_hooks_us",
        "sync_overhead_ratio",
        "async_no_hooks_us",
        "async_ten_hooks_us",
    ],
    "load": ["files", "ms", "baseline_ms"],
    "resume": ["messages", "ms_to_interactive", "rss_mb"],
}
# (key, description, test) — from the issue; None when a figure is missing
GOALS: list[tuple[str, str, Callable[[dict[str, Any]], bool | None]]] = [
    ("startup", "ratio ≤ 1.15", lambda r: _le(r.get("ratio"), 1.15)),
    ("idle_rss", "ratio ≤ 1.5", lambda r: _le(r.get("ratio"), 1.5)),
    ("stream_render", "linearity ≤ 1.5", lambda r: _le(r.get("linearity"), 1.5)),
    ("stream_render", "ratio ≤ 5", lambda r: _le(r.get("ratio"), 5)),
    ("input_latency", "p95 ≤ 50 ms", lambda r: _le(r.get("p95_ms"), 50)),
    ("dispatch", "async_ten_hooks_us ≤ 30", lambda r: _le(r.get("async_ten_hooks_us"), 30)),
    ("dispatch", "sync_overhead_ratio ≤ 1.3", lambda r: _le(r.get("sync_overhead_ratio"), 1.3)),
    (
        "load",
        "ms − baseline_ms ≤ 300",
        lambda r: (
            None
            if r.get("ms") is None or r.get("baseline_ms") is None
            else r["ms"] - r["baseline_ms"] <= 300
        ),
    ),
    ("resume", "ms_to_interactive ≤ 1000", lambda r: _le(r.get("ms_to_interactive"), 1000)),
    ("resume", "rss_mb ≤ 200", lambda r: _le(r.get("rss_mb"), 200)),
]

STREAM_TOKENS = 20_000
# first/last 1k windows: the median of this many gated runs
GATED_RUNS = int(os.environ.get("BENCH_GATED_RUNS", "3"))
LATENCY_KEYS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # 52 distinct keys
RESUME_MESSAGES = 5_000
RESUME_MARKER = "zebra-quokka-5000"
LOAD_FILES = 250
UNSET = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TUI_AGENT_MODEL", "PYTHONDONTWRITEBYTECODE")
ISOLATED = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
    "PYTHONPYCACHEPREFIX",
)


def _le(value: Any, limit: float) -> bool | None:
    return None if value is None else value <= limit


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or not b:
        return None
    return a / b


def rounded(value: Any, digits: int) -> Any:
    return None if value is None else round(value, digits)


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile: a value that was really measured, never interpolated."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


# -- isolation --------------------------------------------------------------------------------


class Sandbox:
    """One temporary root; every app gets a home inside it (HOME and XDG_* point there)."""

    def __init__(self, keep: bool = False) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tui-agent-bench-"))
        self.keep = keep
        self.pycache = self.root / "pycache"
        self.pycache.mkdir()

    def home(self, name: str) -> Path:
        home = self.root / name / "home"
        for sub in (".config", ".local/share", ".local/state", ".cache", "run"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        (home / "run").chmod(0o700)
        return home

    def project(self, name: str) -> Path:
        folder = self.root / name / "project"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def env(self, home: Path) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in (*UNSET, "TMUX") and not k.startswith("XDG_")
        }
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local/share"),
            XDG_STATE_HOME=str(home / ".local/state"),
            XDG_CACHE_HOME=str(home / ".cache"),
            XDG_RUNTIME_DIR=str(home / "run"),
            PYTHONPYCACHEPREFIX=str(self.pycache),
        )
        return env

    def enter(self, home: Path) -> None:
        """Point this process at ``home`` (tui-agent reads the environment on every call)."""
        env = self.env(home)
        for key in list(os.environ):
            if key not in env:
                del os.environ[key]
        os.environ.update(env)

    def close(self) -> None:
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


# -- tmux -------------------------------------------------------------------------------------


class Tmux:
    """A private tmux server (its own socket inside the sandbox, no user config)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.socket = sandbox.root / "tmux.sock"
        self.env = sandbox.env(sandbox.home("tmux"))
        self.count = 0
        self.started = False

    def run(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def start(self) -> None:
        if self.started:
            return
        self.run("new-session", "-d", "-s", "keep", "-x", "100", "-y", "30", "sleep 86400")
        self.run("set-option", "-g", "status", "off")
        self.started = True

    def launch(self, argv: list[str], cwd: Path, home: Path) -> str:
        """Start ``argv`` in a new detached 100x30 session with HOME and XDG_* in ``home``;
        returns the session name. TERM and the rest come from tmux as usual."""
        self.start()
        self.count += 1
        name = f"b{self.count}"
        env = self.sandbox.env(home)
        unset = [f"-u{k}" for k in UNSET]
        assignments = [f"{k}={env[k]}" for k in ISOLATED]
        command = "exec " + shlex.join(["env", *unset, *assignments, *argv])
        self.run(
            "new-session", "-d", "-s", name, "-x", str(SIZE[0]), "-y", str(SIZE[1]),
            "-c", str(cwd), command,
        )  # fmt: skip
        return name

    def capture(self, name: str) -> str:
        return self.run("capture-pane", "-p", "-t", name, check=False)

    def wait_for(
        self, name: str, ready: Callable[[str], bool], started: float, timeout: float
    ) -> tuple[float | None, str]:
        """Poll the screen every few ms; seconds from ``started`` until ``ready(screen)``."""
        screen = ""
        while True:
            screen = self.capture(name)
            now = time.perf_counter()
            if ready(screen):
                return now - started, screen
            if now - started > timeout:
                return None, screen
            time.sleep(0.003)

    def app_pid(self, name: str) -> int | None:
        """The python process in the pane (the pane's own process or a descendant)."""
        text = self.run("display-message", "-p", "-t", name, "#{pane_pid}", check=False).strip()
        if not text.isdigit():
            return None
        todo = [int(text)]
        while todo:
            pid = todo.pop(0)
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if comm.startswith("python"):
                return pid
            todo.extend(_children(pid))
        return None

    def kill(self, name: str) -> None:
        pid = self.app_pid(name)
        self.run("kill-session", "-t", name, check=False)
        if pid is None:
            return
        deadline = time.perf_counter() + 5
        while Path(f"/proc/{pid}").exists() and time.perf_counter() < deadline:
            time.sleep(0.02)
        if Path(f"/proc/{pid}").exists():
            try:  # a process this bench started and tmux has already hung up on
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def close(self) -> None:
        if self.started:
            self.run("kill-server", check=False)
            self.started = False


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def rss_mb(pid: int | None) -> float | None:
    """VmRSS in MiB (1024 × 1024 bytes)."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


# -- startup and idle_rss ---------------------------------------------------------------------


def bench_startup(sandbox: Sandbox, tmux: Tmux, runs: int) -> dict[str, dict[str, Any]]:
    """Launch → first frame ("palette" in the footer), alternating ours and the bare app.

    The clock starts before ``tmux new-session`` and stops when ``capture-pane`` (polled
    every few ms) shows the marker, so both apps carry the same tmux overhead. Memory is
    VmRSS of the app's python process one second after its first frame.
    """
    home = sandbox.home("startup")
    folder = sandbox.project("startup")
    commands = {
        "ours": [PYTHON, "-m", "tui_agent"],
        "bare": [PYTHON, str(BENCH / "bare_app.py")],
    }
    times: dict[str, list[float]] = {"ours": [], "bare": []}
    memory: dict[str, list[float]] = {"ours": [], "bare": []}
    for run in range(runs + 1):  # run 0 is the warm-up (bytecode, file cache)
        order = ["ours", "bare"] if run % 2 == 0 else ["bare", "ours"]
        for kind in order:
            started = time.perf_counter()
            name = tmux.launch(commands[kind], folder, home)
            elapsed, screen = tmux.wait_for(name, lambda s: "palette" in s, started, 30)
            pid = tmux.app_pid(name)
            time.sleep(1.0)
            mem = rss_mb(pid)
            tmux.kill(name)
            if elapsed is None:
                raise RuntimeError(f"{kind}: no first frame within 30 s; screen:\n{screen}")
            if run > 0:
                times[kind].append(elapsed * 1000)
                if mem is not None:
                    memory[kind].append(mem)
        if run > 0:
            log(
                f"  startup run {run}: ours {times['ours'][-1]:.0f} ms, "
                f"bare {times['bare'][-1]:.0f} ms"
            )
    ours, bare = median(times["ours"]), median(times["bare"])
    ours_mb, bare_mb = median(memory["ours"]), median(memory["bare"])
    return {
        "startup": {
            "ours_ms": rounded(ours, 1),
            "bare_textual_ms": rounded(bare, 1),
            "ratio": rounded(ratio(ours, bare), 3),
        },
        "idle_rss": {
            "ours_mb": rounded(ours_mb, 1),
            "bare_textual_mb": rounded(bare_mb, 1),
            "ratio": rounded(ratio(ours_mb, bare_mb), 3),
        },
    }


# -- stream_render ----------------------------------------------------------------------------


def bench_stream(sandbox: Sandbox) -> dict[str, Any]:
    """A 20,000-token Markdown reply at full speed into the real app (Pilot), vs the bare
    ``openai`` client consuming the same stream. The server runs in its own process.

    CPU is ``time.process_time()`` of this process, in which the app runs. At full speed
    the client reads far ahead of the UI, so the clock read when the agent *emits* token N
    would time the network, not the chat pane. So further runs (fresh apps) are gated:
    after 0, 1,000, 19,000 and 20,000 tokens the server holds the rest until the app has
    handled what arrived and is idle, and the clock is read there. first_1k covers tokens
    0-999, last_1k tokens 19,000-19,999, each streamed at full speed into a settled app
    (medians of GATED_RUNS runs; batching makes single windows vary).
    ui_cpu_s comes from the first, ungated run: Enter → the whole reply rendered and the
    app idle (end of turn included).
    """
    home = sandbox.home("stream")
    folder = sandbox.project("stream")
    sandbox.enter(home)
    from stream_server import serve

    big = corpus.markdown_reply(STREAM_TOKENS)
    warm = corpus.markdown_reply(400, seed=1)
    raw_runs = 3
    replies = [(warm, False)] + [(big, False)] * raw_runs + [(warm, False), (big, False)]
    replies += [(warm, False), (big, True)] * GATED_RUNS
    context = multiprocessing.get_context("spawn")
    points = [0, 1000, STREAM_TOKENS - 1000, STREAM_TOKENS]
    gates = {n: context.Event() for n in points}
    arrived = {n: context.Event() for n in points}
    parent, child = context.Pipe()
    stop = context.Event()
    server = context.Process(target=serve, args=(replies, gates, arrived, child, stop), daemon=True)
    server.start()
    try:
        if not parent.poll(60):
            raise RuntimeError("the fake server did not start")
        base_url = parent.recv()
        raw = asyncio.run(_raw_stream(base_url, raw_runs))
        log(f"  raw client: {', '.join(f'{r:.3f}' for r in raw)} s CPU")
        ungated = asyncio.run(_ui_stream(folder, base_url, {}, {}))
        log(f"  UI, ungated: {ungated['ui_cpu_s']:.3f} s CPU")
        firsts: list[float] = []
        lasts: list[float] = []
        for run in range(GATED_RUNS):
            gated = asyncio.run(_ui_stream(folder, base_url, gates, arrived))
            for event in [*gates.values(), *arrived.values()]:
                event.clear()
            marks = gated["marks"]
            firsts.append((marks[1000] - marks[0]) / 1000 * 1e6)
            lasts.append((marks[STREAM_TOKENS] - marks[STREAM_TOKENS - 1000]) / 1000 * 1e6)
            middle = (marks[STREAM_TOKENS - 1000] - marks[1000]) / 18000 * 1e6
            log(
                f"  gated run {run + 1}: first_1k {firsts[-1]:.0f}, tokens 1,000-18,999"
                f" {middle:.0f}, last_1k {lasts[-1]:.0f} us/token; end of turn"
                f" {gated['end_s'] * 1000:.0f} ms; {gated['ui_cpu_s']:.1f} s CPU in all"
            )
    finally:
        for gate in gates.values():
            gate.set()
        stop.set()
        server.join(10)
        if server.is_alive():
            server.kill()
    first, last = median(firsts), median(lasts)
    raw_cpu = median(raw)
    return {
        "tokens": ungated["tokens"],
        "ui_cpu_s": rounded(ungated["ui_cpu_s"], 3),
        "raw_cpu_s": rounded(raw_cpu, 3),
        "ratio": rounded(ratio(ungated["ui_cpu_s"], raw_cpu), 2),
        "first_1k_us_per_token": rounded(first, 1),
        "last_1k_us_per_token": rounded(last, 1),
        "linearity": rounded(ratio(last, first), 3),
    }


async def _raw_stream(base_url: str, runs: int) -> list[float]:
    """The same request the app makes (streamed, usage included), no UI: CPU per reply."""
    import openai

    client = openai.AsyncOpenAI(api_key="bench", base_url=base_url, max_retries=0)
    results: list[float] = []
    for run in range(runs + 1):  # run 0 is the warm-up (short reply)
        started = time.process_time()
        stream = await client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        parts: list[str] = []
        count = 0
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                parts.append(chunk.choices[0].delta.content)
                count += 1
        elapsed = time.process_time() - started
        if run > 0:
            if count != STREAM_TOKENS:
                raise RuntimeError(f"raw client got {count} tokens, expected {STREAM_TOKENS}")
            results.append(elapsed)
    await client.close()
    return results


async def _ui_stream(
    folder: Path, base_url: str, gates: dict[int, Any], arrived: dict[int, Any]
) -> dict[str, Any]:
    from tui_agent import create_session
    from tui_agent.core import events as ev
    from tui_agent.ui.app import TuiAgentApp

    gc.collect()  # what earlier runs left behind is not collected on this run's clock
    session = create_session(folder, base_url=base_url, model="fake-model")
    app = TuiAgentApp(session)
    state: dict[str, Any] = {"tokens": 0, "finished": 0, "error": None}

    def listen(event: Any) -> None:
        if isinstance(event, ev.TextChunk):
            state["tokens"] += 1
        elif isinstance(event, ev.TurnFinished):
            state["finished"] += 1
            state["error"] = event.error

    gc_time = [0.0, 0]
    gc_started = [0.0]

    def gc_clock(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_started[0] = time.process_time()
        else:
            gc_time[0] += time.process_time() - gc_started[0]
            gc_time[1] += info.get("generation") == 2
            if info.get("generation") == 2 and os.environ.get("BENCH_GC_LOG"):
                log(
                    f"    full gc: {time.process_time() - gc_started[0]:.3f} s,"
                    f" frozen {gc.get_freeze_count()}, collected {info.get('collected')},"
                    f" tracked {len(gc.get_objects())}"
                )

    gc.callbacks.append(gc_clock)
    async with app.run_test(size=SIZE) as pilot:
        session.events.listen(listen)

        async def settle() -> None:
            """Until the app has handled everything and the process is idle: no text
            waits to be drawn (the chat draws a backlog in steps, with idle time between)
            and 50 ms pass with under 10 % CPU. (Not with ``pilot.pause()``: it posts a
            callback to every widget on the screen, so its own cost grows with the length
            of the chat and would be counted as the app's.)"""
            deadline = time.perf_counter() + 120
            while True:
                cpu, wall = time.process_time(), time.perf_counter()
                await asyncio.sleep(0.05)
                idle = time.process_time() - cpu < 0.1 * (time.perf_counter() - wall)
                if idle and pilot.app.chat.backlog() == 0:  # type: ignore[attr-defined]
                    return
                if wall > deadline:
                    raise RuntimeError("stream_render: the app never went idle")

        async def send(prompt: str) -> None:
            pilot.app.query_one("#prompt").text = prompt  # type: ignore[attr-defined]
            await pilot.press("enter")

        async def until(condition: Callable[[], bool], what: str, timeout: float) -> None:
            deadline = time.perf_counter() + timeout
            while not condition():
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"stream_render: timed out waiting for {what}")
                await asyncio.sleep(0.005)

        # warm-up turn: Markdown, code highlighting and the client are loaded and used once
        await send("warm up")
        await until(lambda: state["finished"] >= 1 and not session.busy, "the warm-up", 120)
        await settle()
        state["tokens"] = 0

        profiler: Any = None  # BENCH_PROFILE=prefix: a cProfile report per gated window
        profiling = False
        if os.environ.get("BENCH_PROFILE"):
            import cProfile

            profiler = cProfile.Profile()
        started = time.process_time()
        await send("go")
        marks: dict[int, float] = {}
        for n in sorted(gates):
            await until(lambda n=n: arrived[n].is_set() and state["tokens"] >= n, f"token {n}", 600)
            await settle()
            marks[n] = time.process_time()
            if n:
                log(
                    f"  UI handled {n} tokens: {marks[n] - started:.1f} s CPU since Enter"
                    f" ({gc_time[0]:.2f} s of it in {gc_time[1]} full garbage collections)"
                )
            if profiler is not None and profiling:
                profiler.disable()
                profiling = False
                import pstats

                with open(os.environ["BENCH_PROFILE"] + f".{n}.txt", "w") as out:
                    stats = pstats.Stats(profiler, stream=out)
                    stats.sort_stats("tottime").print_stats(40)
                    stats.sort_stats("cumulative").print_stats(80)
            if profiler is not None and n in (0, STREAM_TOKENS - 1000) and gates:
                profiler = cProfile.Profile()
                profiler.enable()
                profiling = True
            gates[n].set()
        await until(lambda: state["finished"] >= 2 and not session.busy, "the reply", 600)
        await settle()
        ended = time.process_time()
        client = getattr(session.provider, "_client", None)  # else it is closed after the loop
        if client is not None and hasattr(client, "close"):
            await client.close()
        if state["error"]:
            raise RuntimeError(f"stream_render: the turn failed: {state['error']}")
        if state["tokens"] != STREAM_TOKENS:
            raise RuntimeError(f"stream_render: {state['tokens']} tokens arrived")
        gc.callbacks.remove(gc_clock)
        return {
            "tokens": state["tokens"],
            "ui_cpu_s": ended - started,
            "marks": marks,
            "end_s": ended - marks[STREAM_TOKENS] if marks else None,
        }


# -- input_latency ----------------------------------------------------------------------------


def prompt_text(screen: str) -> str | None:
    """The text inside the prompt box: the last ╭…╮ / ╰…╯ box on screen."""
    lines = screen.splitlines()
    bottom = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith("╰")), None)
    if bottom is None:
        return None
    top = next((i for i in range(bottom - 1, -1, -1) if lines[i].startswith("╭")), None)
    if top is None:
        return None
    inner = [line.strip().strip("│").strip() for line in lines[top + 1 : bottom]]
    return "".join(inner)


def type_keys(tmux: Tmux, name: str, keys: str, rng: random.Random) -> list[float]:
    """Milliseconds from ``send-keys`` until each key shows at the end of the prompt."""
    typed = prompt_text(tmux.capture(name)) or ""
    latencies: list[float] = []
    for key in keys:
        want = typed + key
        sent = time.perf_counter()
        tmux.run("send-keys", "-t", name, "-l", key)
        elapsed, screen = tmux.wait_for(
            name, lambda s, w=want: (prompt_text(s) or "").endswith(w), sent, 10
        )
        if elapsed is None:
            raise RuntimeError(f"input_latency: key {key!r} not on screen after 10 s:\n{screen}")
        latencies.append(elapsed * 1000)
        typed = want
        time.sleep(rng.uniform(0.02, 0.08))  # typing pace, out of step with the stream
    return latencies


def bench_input_latency(sandbox: Sandbox, tmux: Tmux) -> dict[str, Any]:
    """Keys typed with ``tmux send-keys`` while a reply streams at ~200 tokens/s; time from
    the send until ``capture-pane`` shows the key in the prompt (tmux round trips included).
    """
    from tui_agent.testing import FakeOpenAI, Reply

    home = sandbox.home("latency")
    folder = sandbox.project("latency")
    text = corpus.markdown_reply(8000, seed=2)
    rng = random.Random(6)
    latencies: list[float] = []
    with FakeOpenAI([Reply(text, chunk_words=1, delay=0.005)]) as server:
        argv = [PYTHON, "-m", "tui_agent", "--base-url", server.base_url, "--model", "fake-model"]
        started = time.perf_counter()
        name = tmux.launch(argv, folder, home)
        try:
            elapsed, screen = tmux.wait_for(name, lambda s: "palette" in s, started, 30)
            if elapsed is None:
                raise RuntimeError(f"input_latency: the app did not start:\n{screen}")
            time.sleep(1.0)  # start-up finished
            floor = type_keys(tmux, name, LATENCY_KEYS[:20], rng)
            log(
                f"  idle app, no stream (the measuring floor): p50 "
                f"{percentile(floor, 50):.1f} ms, p95 {percentile(floor, 95):.1f} ms"
            )
            for _ in range(len(floor)):
                tmux.run("send-keys", "-t", name, "BSpace")
            tmux.wait_for(name, lambda s: prompt_text(s) == "", time.perf_counter(), 10)
            tmux.run("send-keys", "-t", name, "-l", "go")
            tmux.run("send-keys", "-t", name, "Enter")
            entered = time.perf_counter()
            elapsed, screen = tmux.wait_for(
                name, lambda s: "Step 1" in s, entered, 30
            )  # the reply's first heading
            if elapsed is None:
                raise RuntimeError(f"input_latency: the reply did not start:\n{screen}")
            time.sleep(1.5)  # a reply of some length already in the chat
            latencies = type_keys(tmux, name, LATENCY_KEYS, rng)
            # the server sleeps 5 ms before each of the 8,000 chunks: 40 s at the least
            if time.perf_counter() - entered >= 8000 * 0.005:
                log("  warning: the reply may have finished before the last key")
        finally:
            tmux.kill(name)
    log(f"  {len(latencies)} keys: min {min(latencies):.1f} ms, max {max(latencies):.1f} ms")
    return {
        "p50_ms": rounded(percentile(latencies, 50), 1),
        "p95_ms": rounded(percentile(latencies, 95), 1),
    }


# -- dispatch ---------------------------------------------------------------------------------


def bench_dispatch() -> dict[str, Any]:
    """``toolbox.run("t", {"x": 1})`` per call, median of batches, all in one event loop.

    direct = sync handler, no hooks (toolbox.run's plain path; the handler runs in a
    worker thread); ten hooks = 5 global (3 before, 2 after) + 5 for the tool (3 before,
    2 after); thread_handoff = a bare ``await asyncio.to_thread(noop)``.
    """
    return asyncio.run(_dispatch())


async def _dispatch() -> dict[str, Any]:
    from tui_agent import Toolbox

    def sync_handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"y": args["x"]}

    async def async_handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"y": args["x"]}

    def global_before(args: Any, tool_name: str = "") -> None:
        return None

    def global_after(args: Any, raw: Any, tool_name: str = "") -> None:
        return None

    def tool_before(args: Any) -> None:
        return None

    def tool_after(args: Any, raw: Any) -> None:
        return None

    def toolbox(handler: Callable[..., Any], hooks: bool) -> Any:
        box = Toolbox()
        box.add(
            "t",
            description="trivial",
            params={"x": {"type": "integer"}},
            required=["x"],
            handler=handler,
        )
        if hooks:
            for _ in range(3):
                box.before(None, global_before)
                box.before("t", tool_before)
            for _ in range(2):
                box.after(None, global_after)
                box.after("t", tool_after)
        return box

    def noop() -> None:
        return None

    boxes = {
        "direct_us": toolbox(sync_handler, False),
        "sync_ten_hooks_us": toolbox(sync_handler, True),
        "async_no_hooks_us": toolbox(async_handler, False),
        "async_ten_hooks_us": toolbox(async_handler, True),
    }
    for box in boxes.values():
        result = await box.run("t", {"x": 1})
        if not result.ok or result["y"] != 1:
            raise RuntimeError(f"dispatch: the trivial tool failed: {result.to_dict()}")

    def runner(name: str) -> Callable[[int], Any]:
        if name == "thread_handoff_us":

            async def handoff(n: int) -> None:
                for _ in range(n):
                    await asyncio.to_thread(noop)

            return handoff
        box = boxes[name]

        async def calls(n: int) -> None:
            for _ in range(n):
                await box.run("t", {"x": 1})

        return calls

    names = ["thread_handoff_us", *boxes]
    sizes = {
        "thread_handoff_us": 1000,
        "direct_us": 1000,
        "sync_ten_hooks_us": 1000,
        "async_no_hooks_us": 5000,
        "async_ten_hooks_us": 5000,
    }
    batches = 9
    per_call: dict[str, list[float]] = {name: [] for name in names}
    runners = {name: runner(name) for name in names}
    for name in names:  # warm-up: thread pool started, code paths hot
        await runners[name](sizes[name] // 5)
    for _ in range(batches):  # interleaved, so drift hits every figure alike
        for name in names:
            started = time.perf_counter()
            await runners[name](sizes[name])
            per_call[name].append((time.perf_counter() - started) / sizes[name] * 1e6)
    figures = {name: median(values) for name, values in per_call.items()}
    return {
        "direct_us": rounded(figures["direct_us"], 2),
        "thread_handoff_us": rounded(figures["thread_handoff_us"], 2),
        "sync_ten_hooks_us": rounded(figures["sync_ten_hooks_us"], 2),
        "sync_overhead_ratio": rounded(
            ratio(figures["sync_ten_hooks_us"], figures["thread_handoff_us"]), 3
        ),
        "async_no_hooks_us": rounded(figures["async_no_hooks_us"], 2),
        "async_ten_hooks_us": rounded(figures["async_ten_hooks_us"], 2),
    }


# -- load -------------------------------------------------------------------------------------

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


# -- resume -----------------------------------------------------------------------------------


def write_journal(path: Path, session_id: str, directory: Path, count: int) -> None:
    """A journal as tui_agent.core.journal writes it: a session header, then messages.

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


# -- output -----------------------------------------------------------------------------------


def goal_lines(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows = []
    for key, description, test in GOALS:
        if key not in results:
            continue
        outcome = test(results[key] or {})
        verdict = "n/a" if outcome is None else ("met" if outcome else "MISSED")
        rows.append((key, description, verdict))
    return rows


def table(results: dict[str, Any]) -> str:
    out = []
    width = max(len(f) for fields in FIELDS.values() for f in fields)
    for key in KEYS:
        if key not in results:
            continue
        out.append(key)
        values = results[key] or {}
        for field in FIELDS[key]:
            value = values.get(field)
            out.append(f"  {field:<{width}}  {'—' if value is None else value}")
    out.append("")
    out.append("goals")
    for key, description, verdict in goal_lines(results):
        out.append(f"  {key:<14} {description:<28} {verdict}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--only", default="", help="comma-separated keys: " + ",".join(KEYS))
    parser.add_argument("--runs", type=int, default=7, help="measured runs for startup/load")
    parser.add_argument("--keep-temp", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    wanted = [k.strip() for k in args.only.split(",") if k.strip()] or list(KEYS)
    unknown = [k for k in wanted if k not in KEYS]
    if unknown:
        parser.error(f"unknown key(s) {', '.join(unknown)}; choose from {', '.join(KEYS)}")
    if shutil.which("tmux") is None and {"startup", "idle_rss", "input_latency", "resume"} & set(
        wanted
    ):
        parser.error("tmux is needed for startup, idle_rss, input_latency and resume")

    sandbox = Sandbox(keep=args.keep_temp)
    sandbox.enter(sandbox.home("bench"))
    tmux = Tmux(sandbox)
    results: dict[str, Any] = {}
    failed = False
    began = time.perf_counter()
    log(f"temporary folder: {sandbox.root}")

    def step(keys: list[str], fn: Callable[[], dict[str, Any]], grouped: bool = False) -> None:
        nonlocal failed
        if not set(keys) & set(wanted):
            return
        log(f"{' + '.join(keys)} …")
        t0 = time.perf_counter()
        try:
            value = fn()
        except Exception as exc:
            failed = True
            log(f"{' + '.join(keys)} failed: {exc}")
            value = (
                {k: dict.fromkeys(FIELDS[k]) for k in keys}
                if grouped
                else dict.fromkeys(FIELDS[keys[0]])
            )
        for key in keys:
            if key in wanted:
                results[key] = value[key] if grouped else value
        log(f"{' + '.join(keys)} done in {time.perf_counter() - t0:.1f} s")

    try:
        # in-process figures first, before any thread of the bench itself exists
        step(["dispatch"], bench_dispatch)
        step(["stream_render"], lambda: bench_stream(sandbox))
        step(["load"], lambda: bench_load(sandbox, args.runs))
        step(["startup", "idle_rss"], lambda: bench_startup(sandbox, tmux, args.runs), True)
        step(["input_latency"], lambda: bench_input_latency(sandbox, tmux))
        step(["resume"], lambda: bench_resume(sandbox, tmux, 5))
    finally:
        tmux.close()
        sandbox.close()
    log(f"all done in {time.perf_counter() - began:.1f} s")
    ordered = {key: results[key] for key in KEYS if key in results}
    for key, description, verdict in goal_lines(ordered):
        log(f"goal {key}: {description}: {verdict}")
    if args.json:
        print(json.dumps(ordered, indent=2))
    else:
        print(table(ordered))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
