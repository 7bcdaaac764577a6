"""tui-agent benchmarks, each next to a baseline measured in the same run (issue 6).

    python bench/run.py            # a table
    python bench/run.py --json     # one JSON object
    python bench/run.py --only startup,dispatch

Every app this starts gets HOME and the XDG folders inside one temporary folder (removed
at the end), bytecode goes to a cache inside it too, and the only network used is the
testing kit's fake OpenAI server on 127.0.0.1. Progress goes to stderr.

This file is the entry point: arguments, the figures in order, goals, the table and
``--json``. Each figure is measured in a module of its own next to it (startup.py for
startup and idle_rss, instructions.py with first_frame.py, stream_render.py,
input_latency.py, dispatch.py, load.py, resume.py, soak.py, checkpoint.py, search.py,
edit_corpus.py, lsp.py); common.py holds the sandbox, tmux and statistics helpers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True  # nothing lands in bench/__pycache__ or the package

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

# one module per figure; common.py holds the sandbox, tmux and statistics helpers
from checkpoint import bench_checkpoint  # noqa: E402
from common import Sandbox, Tmux, log  # noqa: E402
from dispatch import bench_dispatch  # noqa: E402
from edit_corpus import bench_edit  # noqa: E402
from extensions import bench_extensions  # noqa: E402
from input_latency import bench_input_latency  # noqa: E402
from instructions import bench_instructions  # noqa: E402
from load import bench_load  # noqa: E402
from lsp import bench_lsp  # noqa: E402
from resume import bench_resume  # noqa: E402
from sandbox import bench_sandbox  # noqa: E402
from search import bench_search  # noqa: E402
from soak import bench_soak  # noqa: E402
from startup import bench_startup  # noqa: E402
from stream_render import bench_stream  # noqa: E402

KEYS = [
    "startup",
    "instructions",
    "idle_rss",
    "stream_render",
    "input_latency",
    "dispatch",
    "load",
    "extensions",
    "resume",
    "soak",
    "checkpoint",
    "sandbox",
    "search",
    "edit",
    "lsp",
]
FIELDS = {
    "startup": ["ours_ms", "bare_textual_ms", "ratio"],
    "instructions": ["ours_g", "bare_textual_g", "ratio", "resume_g", "resume_ratio"],
    "idle_rss": ["ours_mb", "bare_textual_mb", "ratio"],
    "stream_render": [
        "tokens",
        "ui_cpu_s",
        "raw_cpu_s",
        "ratio",
        "first_1k_us_per_token",
        "last_1k_us_per_token",
        "linearity",
        "linearity_as_read",
    ],
    "input_latency": ["p50_ms", "p95_ms", "task_p50_ms", "task_p95_ms"],
    "dispatch": [
        "direct_us",
        "thread_handoff_us",
        "sync_ten_hooks_us",
        "sync_overhead_ratio",
        "async_no_hooks_us",
        "async_ten_hooks_us",
    ],
    "load": ["files", "ms", "baseline_ms"],
    "extensions": [
        "skills",
        "plugins",
        "first_frame_ms",
        "baseline_ms",
        "added_ms",
        "load_ms",
        "load_baseline_ms",
    ],
    "resume": ["messages", "ms_to_interactive", "rss_mb"],
    "soak": ["turns", "failed", "rejected", "rss_growth", "turn_ms_ratio", "compactions"],
    "checkpoint": ["files", "first_ms", "incremental_ms", "baseline_ms"],
    "sandbox": ["bare_ms", "sandboxed_ms", "overhead_ms", "hosts_ms"],
    "search": ["files", "ours_ms", "baseline_ms", "ratio", "glob_ratio", "real_grep_ratio"],
    "edit": ["cases", "one_target", "applied", "refused", "wrong"],
    "lsp": ["lines", "runs", "first_ms", "warm_p50_ms", "warm_p95_ms", "off_p50_ms"],
}
# (key, description, test) — from the issues (6, then 29's tighter ones); None when a
# figure is missing
GOALS: list[tuple[str, str, Callable[[dict[str, Any]], bool | None]]] = [
    ("startup", "ratio ≤ 1.15", lambda r: _le(r.get("ratio"), 1.15)),
    ("instructions", "ratio ≤ 1.10", lambda r: _le(r.get("ratio"), 1.10)),
    ("idle_rss", "ratio ≤ 1.5", lambda r: _le(r.get("ratio"), 1.5)),
    ("stream_render", "linearity ≤ 1.1", lambda r: _le(r.get("linearity"), 1.1)),
    ("stream_render", "ratio ≤ 2.5", lambda r: _le(r.get("ratio"), 2.5)),
    ("input_latency", "p95 ≤ 50 ms", lambda r: _le(r.get("p95_ms"), 50)),
    ("input_latency", "task_p95 ≤ 50 ms", lambda r: _le(r.get("task_p95_ms"), 50)),
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
    ("extensions", "added_ms ≤ 50", lambda r: _le(r.get("added_ms"), 50)),
    ("resume", "ms_to_interactive ≤ 500", lambda r: _le(r.get("ms_to_interactive"), 500)),
    ("resume", "rss_mb ≤ 200", lambda r: _le(r.get("rss_mb"), 200)),
    ("soak", "failed = 0", lambda r: _le(r.get("failed"), 0)),
    ("soak", "rejected ≤ 3", lambda r: _le(r.get("rejected"), 3)),
    ("soak", "rss_growth ≤ 0.20", lambda r: _le(r.get("rss_growth"), 0.20)),
    ("soak", "turn_ms_ratio ≤ 1.3", lambda r: _le(r.get("turn_ms_ratio"), 1.3)),
    ("checkpoint", "first_ms ≤ 3000", lambda r: _le(r.get("first_ms"), 3000)),
    ("checkpoint", "incremental_ms ≤ 300", lambda r: _le(r.get("incremental_ms"), 300)),
    ("sandbox", "overhead_ms ≤ 10", lambda r: _le(r.get("overhead_ms"), 10)),
    ("search", "ratio ≤ 2", lambda r: _le(r.get("ratio"), 2)),
    ("search", "glob_ratio ≤ 1.5", lambda r: _le(r.get("glob_ratio"), 1.5)),
    ("search", "real_grep_ratio ≤ 2", lambda r: _le(r.get("real_grep_ratio"), 2)),
    ("edit", "wrong = 0", lambda r: _le(r.get("wrong"), 0)),
    ("lsp", "warm_p95_ms ≤ 1500", lambda r: _le(r.get("warm_p95_ms"), 1500)),
    (
        "edit",
        "applied ≥ 90% of one_target",
        lambda r: (
            None
            if r.get("applied_one_target") is None or not r.get("one_target")
            else r["applied_one_target"] >= 0.9 * r["one_target"]
        ),
    ),
]


def _le(value: Any, limit: float) -> bool | None:
    return None if value is None else value <= limit


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
    on_screen = {"startup", "idle_rss", "input_latency", "resume", "extensions"}
    if shutil.which("tmux") is None and on_screen & set(wanted):
        parser.error("tmux is needed for " + ", ".join(sorted(on_screen)))

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
        # before checkpoint and edit: the 10,000 files they write are still going to the
        # disk for a while, and each sandboxed command makes and removes the mount points
        # of its stand-ins there (16 directory operations, ~1 ms each on that busy disk,
        # ~0.1 ms on an idle one): 10 ms of overhead alone became 16-24 ms after them
        step(["sandbox"], lambda: bench_sandbox(sandbox))
        step(["checkpoint"], lambda: bench_checkpoint(sandbox))
        step(["edit"], lambda: bench_edit(sandbox))
        step(["search"], lambda: bench_search(sandbox))
        step(["lsp"], lambda: bench_lsp(sandbox))
        step(["startup", "idle_rss"], lambda: bench_startup(sandbox, tmux, args.runs), True)
        step(["input_latency"], lambda: bench_input_latency(sandbox, tmux))
        step(["extensions"], lambda: bench_extensions(sandbox, tmux, args.runs))
        step(["instructions"], lambda: bench_instructions(sandbox))
        step(["resume"], lambda: bench_resume(sandbox, tmux, 5))
        step(["soak"], lambda: bench_soak(sandbox))
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
