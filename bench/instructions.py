"""``instructions``: instructions executed to the first frame (callgrind), tui-agent vs the
bare Textual app, and a ``--resume`` of the 5,000-message journal ``resume.py`` writes.

python bench/instructions.py   # alone, prints the figures as JSON

Each program is first_frame.py under ``valgrind --tool=callgrind`` with
``PYTHONHASHSEED=0``, its bytecode cached by a first run outside valgrind: the count is
about the same from run to run (±2 %: how many refreshes the footer takes to show its
keys, and when the garbage collector runs, still vary; the median of ``RUNS`` is kept),
where the wall-clock start-up moves ±20 % with the machine's load. ``ratio`` is ours
over bare; ``resume_ratio`` a resume over ours. None (and the goal unmet) without
valgrind.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from common import BENCH, PYTHON, Sandbox, log, median, ratio, rounded
from resume import RESUME_MESSAGES, write_journal

PROGRAM = BENCH / "first_frame.py"
RUNS = 3  # the median of each
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def _count(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    subprocess.run([PYTHON, str(PROGRAM), *argv], cwd=cwd, env=env, check=True, timeout=120)
    out = cwd.parent / "callgrind.out"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    done = subprocess.run(
        [*valgrind, PYTHON, str(PROGRAM), *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind {' '.join(argv)}: exit {done.returncode}\n{done.stderr}")
    out.unlink(missing_ok=True)
    return int(found.group(1))


def bench_instructions(sandbox: Sandbox) -> dict[str, Any]:
    nothing: dict[str, Any] = {
        "ours_g": None,
        "bare_textual_g": None,
        "ratio": None,
        "resume_g": None,
        "resume_ratio": None,
    }
    if shutil.which("valgrind") is None:
        log("instructions: not measured (no valgrind)")
        return nothing
    home = sandbox.home("instructions")
    folder = sandbox.project("instructions")
    session_id = "20250101-090000-instructions"
    journal = home / ".local/share/tui-agent/sessions" / f"{session_id}.jsonl"
    write_journal(journal, session_id, folder, RESUME_MESSAGES)
    env = {**sandbox.env(home), "PYTHONHASHSEED": "0"}
    runs: dict[str, list[int]] = {"bare": [], "ours": [], "resume": []}
    for run in range(RUNS):  # interleaved: the machine's state changes alike for each
        for kind, argv in (
            ("bare", ["bare"]),
            ("ours", ["ours"]),
            ("resume", ["resume", session_id]),
        ):
            runs[kind].append(_count(argv, folder, env))
            log(f"  instructions run {run + 1} {kind}: {runs[kind][-1] / 1e9:.3f} G")
    counts = {kind: median(values) or 0 for kind, values in runs.items()}
    return {
        "ours_g": rounded(counts["ours"] / 1e9, 3),
        "bare_textual_g": rounded(counts["bare"] / 1e9, 3),
        "ratio": rounded(ratio(counts["ours"], counts["bare"]), 3),
        "resume_g": rounded(counts["resume"] / 1e9, 3),
        "resume_ratio": rounded(ratio(counts["resume"], counts["ours"]), 3),
    }


if __name__ == "__main__":
    box = Sandbox()
    try:
        print(json.dumps(bench_instructions(box)))
    finally:
        box.close()
