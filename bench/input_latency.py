"""``input_latency``: keys typed with ``tmux send-keys`` while a reply streams, and while
four subagents stream side by side (``task_p95_ms``)."""

from __future__ import annotations

import random
import time
from typing import Any

import corpus
from common import PYTHON, Sandbox, Tmux, log, percentile, prompt_text, rounded

LATENCY_KEYS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # 52 distinct keys


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


def _started(tmux: Tmux, base_url: str, folder: Any, home: Any) -> str:
    """The app in a tmux window against ``base_url``, started and settled: its name."""
    argv = [PYTHON, "-m", "tui_agent", "--base-url", base_url, "--model", "fake-model"]
    started = time.perf_counter()
    name = tmux.launch(argv, folder, home)
    elapsed, screen = tmux.wait_for(name, lambda s: "palette" in s, started, 30)
    if elapsed is None:
        tmux.kill(name)
        raise RuntimeError(f"input_latency: the app did not start:\n{screen}")
    time.sleep(1.0)  # start-up finished
    return name


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
        name = _started(tmux, server.base_url, folder, home)
        try:
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
    during_tasks = _during_tasks(sandbox, tmux, rng)
    return {
        "p50_ms": rounded(percentile(latencies, 50), 1),
        "p95_ms": rounded(percentile(latencies, 95), 1),
        "task_p50_ms": rounded(percentile(during_tasks, 50), 1),
        "task_p95_ms": rounded(percentile(during_tasks, 95), 1),
    }


CHILDREN = 4


def _during_tasks(sandbox: Sandbox, tmux: Tmux, rng: random.Random) -> list[float]:
    """The same keys while a reply's ``CHILDREN`` task calls run: four subagents, each
    streaming a 2,000-token reply at ~100 tokens/s into its block, side by side."""
    from tui_agent.testing import Call, FakeOpenAI, Reply

    home = sandbox.home("latency-tasks")
    folder = sandbox.project("latency-tasks")
    calls = [
        Call("task", {"description": f"job {n}", "prompt": f"job number {n}"})
        for n in range(CHILDREN)
    ]
    with FakeOpenAI([Reply(calls=calls), Reply("All four are done.")]) as server:
        for n in range(CHILDREN):
            child = corpus.markdown_reply(2000, seed=10 + n)
            server.when(f"job number {n}", [Reply(child, chunk_words=1, delay=0.01)])
        name = _started(tmux, server.base_url, folder, home)
        try:
            tmux.run("send-keys", "-t", name, "-l", "go")
            tmux.run("send-keys", "-t", name, "Enter")
            entered = time.perf_counter()
            while len(server.requests) < 1 + CHILDREN:  # the parent's, then each child's
                if time.perf_counter() - entered > 30:
                    raise RuntimeError("input_latency: the subagents did not start")
                time.sleep(0.05)
            time.sleep(1.5)  # their blocks have some text already
            latencies = type_keys(tmux, name, LATENCY_KEYS, rng)
            if time.perf_counter() - entered >= 2000 * 0.01:
                log("  warning: the subagents may have finished before the last key")
        finally:
            tmux.kill(name)
    log(
        f"  during {CHILDREN} subagents: p50 {percentile(latencies, 50):.1f} ms,"
        f" p95 {percentile(latencies, 95):.1f} ms, max {max(latencies):.1f} ms"
    )
    return latencies
