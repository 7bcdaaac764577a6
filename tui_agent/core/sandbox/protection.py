"""What the sandbox protects in the worktree (``PROTECTED``): the files of ``.git`` and
the agents' config that decide what runs (``GIT_PROTECTED``, ``Protection``), the
read-only stand-ins for those missing and their removal by the last command on a
worktree or, for those a session keeps between its commands, when it ends
(``_placeholders``, ``release_stand_ins``), what a command replaced or made among them
put right when it ends (``links_kept``, ``made_kept``), and the names those are moved
aside to (``_free_name``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..util import paths
from .host import _children

log = logging.getLogger("tui_agent.sandbox")

# inside .git, what decides what runs or where git reads its config: read-only (objects,
# refs, logs, index, HEAD and the other state files stay writable: commits work)
GIT_PROTECTED = (
    "hooks",
    "config",
    "info",
    "commondir",
    "config.worktree",
    "worktrees",
    "remotes",
    "branches",
)
GIT_STAND_INS = ("hooks", "info", "worktrees")  # folders: an empty read-only one if missing
GIT_FILES = ("config", "commondir", "config.worktree")  # files: one made is moved aside
# what the sandbox protects, for the README and plugins; the agents' config at every level
# from the session's folder up to the worktree's top, core.hooksPath inside the worktree
PROTECTED = (
    *(f".git/{name}" for name in GIT_PROTECTED),
    ".git/modules/*/config",
    ".git/modules/*/hooks",
    *paths.AGENT_CONFIG,
)
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.I | re.M)


@dataclass
class Protection:
    """What a command must not change in the worktree: ``kept`` exist and are bound
    read-only; ``stand_ins`` are missing folders that get an empty read-only one; ``watched``
    are missing files that, if a command makes one, are moved aside when it ends."""

    kept: list[Path] = field(default_factory=list)
    stand_ins: list[Path] = field(default_factory=list)
    watched: list[Path] = field(default_factory=list)


def _modules(folder: Path, depth: int = 3) -> list[Path]:
    """A repository's submodule git folders (``.git/modules/NAME``, nested ones too)."""
    found: list[Path] = []
    if depth == 0:
        return found
    for child in _children(folder):
        if child.is_dir() and not child.is_symlink():
            if (child / "HEAD").exists():
                found.append(child)
                found += _modules(child / "modules", depth - 1)
            else:  # a submodule name with a slash: modules/a/b
                found += _modules(child, depth - 1)
    return found


def _shown(place: Path, worktree: Path) -> str:
    return str(place.relative_to(worktree)) if place.is_relative_to(worktree) else str(place)


# stand-ins that stay one command's: an empty ``.git`` or ``.tui-agent`` marks a
# repository or a project to tui-agent (``find_worktree``, ``project_root``) and to other
# tools, so a session started meanwhile below one would take the wrong folder. The rest
# (``.claude``, ``.vscode``, ``.git/hooks``…: empty, they change nothing for git or
# anything that reads them) a session keeps until it ends (``_kept``, ``release_stand_ins``)
PER_COMMAND = (".git", ".tui-agent")


def _lock_files(worktree: Path) -> Path:
    """The worktree's lock files, without their suffix: ``.lock`` (held shared by every
    running command), ``.state`` (stand-ins one command made), ``.sessions`` (held shared
    by every session that keeps stand-ins) and ``.kept`` (the stand-ins sessions keep)."""
    import hashlib

    import platformdirs

    folder = Path(platformdirs.user_cache_dir(paths.APP)) / "sandbox-locks"
    real = os.path.realpath(worktree)
    known = _LOCKS.get((folder, real))
    if known is not None and os.path.isdir(folder):
        return known
    folder.mkdir(parents=True, exist_ok=True)
    base = _LOCKS[(folder, real)] = folder / hashlib.sha256(real.encode()).hexdigest()[:24]
    return base


# the lock files' names, by their folder and the worktree's real path (each command asks)
_LOCKS: dict[tuple[Path, str], Path] = {}


# the sessions that keep stand-ins: (session's /tmp, lock files) -> the ``.sessions``
# descriptor it holds shared, and the stand-ins recorded for it
_KEPT: dict[tuple[Path, Path], tuple[int, set[str]]] = {}


@contextlib.contextmanager
def _placeholders(
    worktree: Path, places: list[Path], session: Path | None = None
) -> Iterator[None]:
    """Protected paths that did not exist get an empty folder in the worktree (bwrap's
    mount point for the read-only stand-in). They are removed when the last sandboxed
    command on this worktree ends, in any tui-agent process: every command holds a shared
    ``flock`` on the worktree's lock file while it runs, and the one that can then take it
    exclusively removes the stand-ins recorded in the state file (the folders it names
    that are still empty). A folder the user made is never in that file.

    A ``session`` (its private /tmp names it) keeps those not ``PER_COMMAND`` until it
    ends: made by its first command that needs them (16 folder operations fewer for each
    later command, ~1 ms each while the disk is busy), removed when no command runs and
    no session keeps stand-ins on the worktree (``release_stand_ins``, or a command's end)."""
    import fcntl

    base = _lock_files(worktree)
    kept = [p for p in places if session is not None and p.name not in PER_COMMAND]
    if kept:
        assert session is not None
        _kept(session, base, kept)
    mine = [p for p in places if session is None or p.name in PER_COMMAND]
    with open(base.with_suffix(".lock"), "a+") as users:
        fcntl.flock(users, fcntl.LOCK_SH)
        if mine:
            _record(base.with_suffix(".state"), lambda made: made | {str(p) for p in mine})
        try:
            yield
        finally:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pass  # another command still runs on this worktree: the last one cleans
            else:
                _record(base.with_suffix(".state"), _remove_stand_ins)
                _sessions_over(base)


def _kept(session: Path, base: Path, places: list[Path]) -> None:
    """Record ``places`` as stand-ins ``session`` keeps, holding the worktree's
    ``.sessions`` lock shared from its first (nobody removes them while it is held)."""
    import fcntl

    held = _KEPT.get((session, base))
    if held is None:
        fd = os.open(base.with_suffix(".sessions"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        fcntl.flock(fd, fcntl.LOCK_SH)
        held = _KEPT[(session, base)] = (fd, set())
    new = {str(p) for p in places} - held[1]
    if new:  # recorded before bwrap makes them
        _record(base.with_suffix(".kept"), lambda made: made | new)
        held[1].update(new)


def _sessions_over(base: Path) -> None:
    """With no command running (the caller holds ``.lock`` exclusively): if no session
    keeps stand-ins either, remove those sessions kept (one that ended without closing
    left its own)."""
    import fcntl

    sessions = base.with_suffix(".sessions")
    try:
        fd = os.open(sessions, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return  # no session ever kept any here
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass  # a session still keeps them: it removes them when it ends
    else:
        _record(base.with_suffix(".kept"), _remove_stand_ins)
    finally:
        os.close(fd)


def release_stand_ins(session: Path) -> None:
    """``session`` is over: it keeps its stand-ins no longer; they are removed now if no
    command runs and no other session keeps stand-ins on the worktree, else later by
    whichever ends last (``release_tmp``)."""
    import fcntl

    for key in [k for k in _KEPT if k[0] == session]:
        fd, _places = _KEPT.pop(key)
        os.close(fd)
        base = key[1]
        with open(base.with_suffix(".lock"), "a+") as users:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a command runs: the last one to end removes them
            _record(base.with_suffix(".state"), _remove_stand_ins)
            _sessions_over(base)


def _record(state: Path, change: Any) -> None:
    """Read, change and write the set of stand-in folders, under an exclusive lock."""
    import fcntl

    # read-write, not append: the new text is written from the start
    with open(os.open(state, os.O_RDWR | os.O_CREAT, 0o666), "r+b") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        made = {os.fsdecode(line) for line in file.read().splitlines() if line}
        kept = change(made)
        if kept == made:
            return  # nothing to write (no rewrite, no flush)
        # written over the old text, then cut where it ends; never cut to 0 bytes: ext4
        # flushes a file truncated to nothing (~1-2 ms a command), so an empty set is a
        # blank line (blank lines are skipped when read)
        file.seek(0)
        file.write(b"".join(os.fsencode(line) + b"\n" for line in sorted(kept)) or b"\n")
        file.truncate(file.tell())


def _remove_stand_ins(made: set[str]) -> set[str]:
    for place in made:
        with contextlib.suppress(OSError):  # not empty (the user's now), or gone
            Path(place).rmdir()
    return set()


def _free_name(place: Path, kind: str = "replaced") -> Path:
    for n in range(1, 1000):
        aside = place.with_name(f"{place.name}.{kind}-in-sandbox-{n}")
        if not (aside.exists() or aside.is_symlink()):
            return aside
    raise OSError(f"no free name beside {place}")


@contextlib.contextmanager
def links_kept(places: list[Path], restored: list[str]) -> Iterator[None]:
    """A protected entry that is a symlink (``.claude -> .agents``) is read-only where it
    leads, but the link itself lives in the writable worktree: if a command replaced it,
    what it put there is moved aside (``NAME.replaced-in-sandbox-N``, which nothing loads)
    and the link is put back; ``restored`` says so."""
    links = {p: os.readlink(p) for p in places if p.is_symlink()}
    try:
        yield
    finally:
        for place, target in links.items():
            if place.is_symlink() and os.readlink(place) == target:
                continue
            try:
                if place.exists() or place.is_symlink():
                    aside = _free_name(place, "replaced")
                    place.rename(aside)
                    what = f"moved what the command put there to {aside.name}"
                else:
                    what = "it had been removed"
                place.symlink_to(target)
            except OSError as exc:
                log.warning("sandbox: could not restore %s: %s", place, exc)
                continue
            restored.append(
                f"{place.name} is a protected link to {target}: the command replaced it; "
                f"it was put back ({what})"
            )
            log.warning("sandbox: %s", restored[-1])


@contextlib.contextmanager
def made_kept(places: list[Path], worktree: Path, restored: list[str]) -> Iterator[None]:
    """Protected files that were not there (``.mcp.json``, ``.git/commondir``) cannot have
    a stand-in (git dies on an empty ``commondir``): one that a command made is moved aside
    when it ends (``NAME.made-in-sandbox-N``, which nothing reads), before tui-agent or the
    user's git reads it; ``restored`` says so."""
    try:
        yield
    finally:
        for place in places:
            if not (place.exists() or place.is_symlink()):
                continue
            try:
                aside = _free_name(place, "made")
                place.rename(aside)
            except OSError as exc:
                log.warning("sandbox: could not move %s aside: %s", place, exc)
                continue
            restored.append(
                f"{_shown(place, worktree)} is protected (it decides what runs) and cannot be "
                f"made in the sandbox: the command's one was moved to {aside.name} (nothing "
                "reads it). Make it outside the sandbox: the write tool (which asks) or "
                "!!command"
            )
            log.warning("sandbox: %s", restored[-1])
