"""``lsp``: an ``edit`` of a 2,000-line Python file with diagnostics from a warm ``pylsp``
(plugins/lsp.py), p50 and p95, next to the same edit with diagnostics off; and the first
edit's cost, which starts the server and reads the file's problems before the change.

python bench/lsp.py [--runs N] [--lines N]   # alone, prints the figures as JSON

Most of a warm edit's time is the server's: pylsp lints 0.5 s after the last change (its
debounce), then pyflakes reads the file.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

from common import Sandbox, log, median, percentile, rounded

LINES = 2000
RUNS = 20


def make_module(lines: int) -> str:
    """About ``lines`` lines of ordinary Python: functions with a docstring and a loop."""
    out = ["import os", "import sys", "", ""]
    n = 0
    while len(out) < lines - 8:
        out += [
            f"def step_{n}(values: list[int]) -> int:",
            f'    """Step {n}: the sum of the values above {n}."""',
            "    total = 0",
            "    for value in values:",
            f"        if value > {n}:",
            "            total += value",
            f"    return total + len(os.sep) + len(sys.argv)  # LIMIT_{n}",
            "",
            "",
        ]
        n += 1
    return "\n".join(out) + "\n"


async def _edits(project: Path, runs: int, diagnostics: bool) -> tuple[float, list[float]]:
    from tui_agent import create_session

    config = Path.home() / ".config" / "tui-agent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[permission]\n"*" = "allow"\n' + f"[diagnostics]\non = {str(diagnostics).lower()}\n"
    )
    session = create_session(project, yes=True)
    took: list[float] = []
    try:
        for run in range(runs + 1):
            old, new = (f"# LIMIT_{run}\n", f"# limit {run}\n")
            t = time.perf_counter()
            result = await session.toolbox.run("edit", {"path": "big.py", "old": old, "new": new})
            took.append((time.perf_counter() - t) * 1000)
            if not result.ok:
                raise RuntimeError(f"lsp: edit failed: {result.error}")
            said = result.get("diagnostics")
            if diagnostics and said != "no new problems":
                raise RuntimeError(f"lsp: expected no new problems, got {said!r}")
            if not diagnostics and said is not None:
                raise RuntimeError("lsp: diagnostics ran though off")
    finally:
        await session.close()
    return took[0], took[1:]


def bench_lsp(sandbox: Sandbox, runs: int = RUNS, lines: int = LINES) -> dict[str, Any]:
    if shutil.which("pylsp") is None:
        raise RuntimeError(
            "lsp: pylsp is not on the PATH (pip install 'python-lsp-server[pyflakes]')"
        )
    sandbox.enter(sandbox.home("lsp"))
    project = sandbox.project("lsp")
    (project / "pyproject.toml").write_text('[project]\nname = "big"\nversion = "0"\n')
    (project / "big.py").write_text(make_module(lines))
    log(f"lsp: {runs} edits of a {lines}-line file, diagnostics off, then with pylsp")
    _, without = asyncio.run(_edits(project, runs, diagnostics=False))
    (project / "big.py").write_text(make_module(lines))
    first, warm = asyncio.run(_edits(project, runs, diagnostics=True))
    log(f"  first {first:.0f} ms, warm {[round(v) for v in warm]} ms")
    log(f"  off {[round(v, 1) for v in without]} ms")
    return {
        "lines": lines,
        "runs": runs,
        "first_ms": rounded(first, 0),
        "warm_p50_ms": rounded(median(warm), 0),
        "warm_p95_ms": rounded(percentile(warm, 95), 0),
        "off_p50_ms": rounded(median(without), 1),
    }


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--lines", type=int, default=LINES)
    args = parser.parse_args()
    box = Sandbox()
    try:
        print(json.dumps(bench_lsp(box, args.runs, args.lines)))
    finally:
        box.close()
