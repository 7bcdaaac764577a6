"""What every benchmark shares: the sandbox, the private tmux server, statistics.

Imported by run.py and the figure modules, with the bench folder on ``sys.path`` (run.py
puts it there). Nothing here measures anything by itself.
"""

from __future__ import annotations

import math
import os
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

BENCH = Path(__file__).resolve().parent
PYTHON = sys.executable
SIZE = (100, 30)
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


# -- screens ----------------------------------------------------------------------------------


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
