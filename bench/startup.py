"""``startup`` and ``idle_rss``: tui-agent vs a bare Textual app (bare_app.py) in tmux."""

from __future__ import annotations

import time
from typing import Any

from common import BENCH, PYTHON, Sandbox, Tmux, log, median, ratio, rounded, rss_mb


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
