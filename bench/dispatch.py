"""``dispatch``: the cost of ``toolbox.run`` per call, with and without hooks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from common import median, ratio, rounded


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
