"""Runs ``tui-agent run`` against llmock, an outside chaos server, and reports what held.

    python scripts/chaos_check.py --llmock PATH/TO/llmock [--runs 20] [-- EXTRA LLMOCK FLAGS]

llmock is not a dependency: install it in a virtual environment of its own
(``python -m venv /tmp/llmock && /tmp/llmock/bin/pip install llmock``) and pass its
``llmock`` program. The script starts it twice on free ports of 127.0.0.1: once without
faults, for the whole answer of the prompt (``REFERENCE``), and once with the faults of
the README's "Reliability" section (``FAULTS``, or the flags after ``--``). Each run is
``tui-agent --yes run "read README.md and summarise it"`` in a fresh folder holding this
repository's README (the same path each time: llmock's answer depends on the tool result
that names it), with a home of its own (so no run learns from another's window
memory). A run holds when it exits 0 and its stdout is the whole answer, once. Then
``llmock report --json`` gives llmock's own verdict. Prints the figures; exits 1 when
fewer than ``--need`` runs held or llmock found an error.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from replay_dialects import home_env  # scripts/, beside this one

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "read README.md and summarise it"
FAULTS = [
    "--tool-mode", "auto",
    "--error-rate", "429=0.15", "--error-rate", "500=0.1", "--error-rate", "503=0.1",
    "--stream-fault", "disconnect=0.1", "--stream-fault", "truncate=0.1",
    "--stream-fault", "malformed=0.1", "--stream-fault", "stall=0.05",
    "--stream-stall-seconds", "3",
]  # fmt: skip
REFERENCE = ["--tool-mode", "auto"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(llmock: str, flags: list[str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [llmock, "serve", "--host", "127.0.0.1", "--port", str(port), *flags],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):  # up once it answers (llmock's own page: never a fault)
        try:
            urllib.request.urlopen(f"{url}/_llmock/verdict", timeout=1).close()
            return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"llmock did not start: see {log}")


def run_once(url: str, work: Path, index: int) -> tuple[int, str, str, float]:
    """One run in ``work/project``, made afresh: the same path every run, as llmock's answer
    depends on the last message (a tool's result names the folder)."""
    home = work / f"home-{index}"
    project = work / "project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    shutil.copy(ROOT / "README.md", project / "README.md")
    env = home_env(home)
    env["OPENAI_API_KEY"] = "sk-llmock-check"
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tui_agent", "--base-url", f"{url}/v1", "--yes", "run", PROMPT],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llmock", required=True, help="the llmock program")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--need", type=int, default=19, help="runs that must hold")
    parser.add_argument("--verbose", action="store_true", help="print every run's stderr")
    parser.add_argument("flags", nargs="*", help="llmock serve flags (after --)")
    args = parser.parse_args()
    flags = args.flags or FAULTS
    with tempfile.TemporaryDirectory(prefix="tui-agent-chaos-") as temp:
        work = Path(temp)
        reference, url = start(args.llmock, REFERENCE, work / "reference.log")
        try:
            code, answer, err, _ = run_once(url, work, 0)
        finally:
            reference.terminate()
            reference.wait()
        if code != 0 or not answer.strip():
            print(f"the run without faults failed ({code}):\n{err}", file=sys.stderr)
            return 1
        chaos, url = start(args.llmock, flags, work / "chaos.log")
        held = 0
        seconds: list[float] = []
        try:
            for index in range(1, args.runs + 1):
                code, out, err, took = run_once(url, work, index)
                seconds.append(took)
                ok = code == 0 and out == answer
                held += ok
                retries = sum(line.startswith("retrying") for line in err.splitlines())
                whole = "whole answer" if out == answer else "NOT whole"
                print(f"run {index:2}: exit {code}, {whole}, {retries} retries, {took:.1f} s")
                if not ok or args.verbose:
                    print("  " + "\n  ".join(err.strip().splitlines()))
            report = subprocess.run(
                [args.llmock, "report", "--url", url, "--json"], capture_output=True, text=True
            )
        finally:
            chaos.terminate()
            chaos.wait()
    verdict = json.loads(report.stdout or "{}")
    findings = verdict.get("findings", [])
    errors = [f for f in findings if f.get("severity") == "error"]
    warnings = [f for f in findings if f.get("severity") == "warning"]
    print(f"\nanswer: {answer.strip()!r}")
    print(f"held: {held} of {args.runs} (exit 0 with the whole answer, once)")
    median = sorted(seconds)[len(seconds) // 2]
    print(f"time per run: median {median:.1f} s, max {max(seconds):.1f} s")
    summary = {k: v for k, v in verdict.items() if k != "findings"}
    print(f"llmock report: {len(errors)} errors, {len(warnings)} warnings; {json.dumps(summary)}")
    for finding in findings:
        print(
            f"  {finding.get('severity')}: {finding.get('code')}: {finding.get('title')} "
            f"({finding.get('path')}, requests {finding.get('requests')})"
        )
    return 0 if held >= args.need and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
