"""``checkpoint``: snapshots of a 10,000-file repository (checkpoints/store.py) vs ``git status``.

python bench/checkpoint.py [--files N] [--runs N]   # alone, prints the figures as JSON
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

from common import Sandbox, log, median, rounded

CHECKPOINT_FILES = 10_000
IGNORED_FILES = 500
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def _git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _text(rng: random.Random) -> str:
    """About 1–4 KB of source-like lines."""
    size = rng.randint(1024, 4096)
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(
            f"{rng.choice(WORDS)}_{rng.randrange(1000)} = " + " ".join(rng.choices(WORDS, k=6))
        )
    return "\n".join(lines) + "\n"


def _source(root: Path, n: int) -> Path:
    return root / f"pkg_{n % 20:02d}" / f"mod_{n // 20 % 10}" / f"file_{n:05d}.py"


def make_repository(root: Path, files: int, ignored: int) -> None:
    """``files`` files in nested folders (20 × 10 folders of 50 at 10,000), a ``.gitignore``
    ignoring ``generated/`` with ``ignored`` more, git-initialised, everything committed."""
    rng = random.Random(16)
    root.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        path = _source(root, n)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_text(rng))
    for n in range(ignored):
        path = root / "generated" / f"part_{n % 5}" / f"out_{n:04d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_text(rng))
    (root / ".gitignore").write_text("generated/\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bench")


def _step(root: Path, run: int, files: int) -> None:
    """One incremental turn: three files changed, one added, one deleted (from the end)."""
    for k in range(3):
        with _source(root, run * 7 + k * 1013).open("a") as handle:
            handle.write(f"changed_{run}_{k} = True\n")
    (root / "pkg_00" / f"added_{run}.py").write_text(f"added = {run}\n")
    _source(root, files - 1 - run).unlink()


def bench_checkpoint(
    sandbox: Sandbox, runs: int = 5, files: int = CHECKPOINT_FILES
) -> dict[str, Any]:
    """``CheckpointStore.snapshot_sync()`` of the repository: ``first_ms`` into a fresh
    store (a new store folder per run), ``incremental_ms`` after 3 changed, 1 added and 1
    deleted file (one store, a step per run); ``baseline_ms`` is ``git status --porcelain``
    on the same tree in the same run. Medians of ``runs``, after one warm-up of each."""
    from tui_agent.core.checkpoints.store import CheckpointStore

    root = sandbox.project("checkpoint")
    t0 = time.perf_counter()
    make_repository(root, files, IGNORED_FILES)
    took = time.perf_counter() - t0
    log(f"  a repository of {files} files (+{IGNORED_FILES} ignored) in {took:.1f} s")
    stores = sandbox.root / "checkpoint" / "stores"

    first: list[float] = []
    for run in range(runs + 1):
        store = CheckpointStore(root, stores / f"fresh-{run}")
        t = time.perf_counter()
        snapshot = store.snapshot_sync()
        if run > 0:
            first.append((time.perf_counter() - t) * 1000)
    stored = len(store.files_sync(snapshot.tree))
    if stored != files + 1:  # and the .gitignore
        raise RuntimeError(f"checkpoint: the snapshot holds {stored} files, expected {files + 1}")

    incremental: list[float] = []
    baseline: list[float] = []
    before = snapshot.tree
    for run in range(runs + 1):
        _step(root, run, files)
        t = time.perf_counter()
        after = store.snapshot_sync()
        took = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        _git(root, "status", "--porcelain")
        status = (time.perf_counter() - t) * 1000
        changes = store.changes_sync(before, after.tree)
        if len(changes) != 5:
            raise RuntimeError(f"checkpoint: a step changed {len(changes)} paths, expected 5")
        before = after.tree
        if run > 0:
            incremental.append(took)
            baseline.append(status)
    log(f"  first {[round(v) for v in first]} ms, incremental {[round(v) for v in incremental]} ms")
    log(f"  git status {[round(v) for v in baseline]} ms")
    return {
        "files": files,
        "first_ms": rounded(median(first), 1),
        "incremental_ms": rounded(median(incremental), 1),
        "baseline_ms": rounded(median(baseline), 1),
    }


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=CHECKPOINT_FILES)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    box = Sandbox()
    try:
        box.enter(box.home("bench"))
        print(json.dumps(bench_checkpoint(box, args.runs, args.files)))
    finally:
        box.close()
