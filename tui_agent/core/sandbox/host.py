"""What the host offers the sandbox: whether bwrap runs here (``availability``, tried
once per process) and which options it knows, who the command is inside (``_identity``),
the host's Unix sockets a command could reach (``host_sockets``), and the path helpers
the sandbox reads its settings' paths with (``_expand``, ``_matched``, ``_children``).
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# host sockets that hand out more than the sandbox allows (a user's systemd and D-Bus,
# Docker): hidden, with the ssh agent's socket (SSH_AUTH_SOCK)
HOST_SOCKETS = ("/run/user/{uid}", "/run/docker.sock", "/var/run/docker.sock", "/run/podman")
# folders where servers of other namespaces (containers) leave sockets /proc/net/unix does
# not list: searched this deep for socket files to mask
SOCKET_FOLDERS = (("/run", 3), ("/var/run", 3))


_AVAILABILITY: dict[str, str | None] = {}


def availability(bwrap: str | None = None) -> str | None:
    """None when bwrap (``bwrap``, else the one on PATH) runs here, else why not (tried
    once per process: ~5 ms)."""
    if sys.platform == "darwin":
        return "macOS: the Seatbelt sandbox is not built yet"
    if not sys.platform.startswith("linux"):
        return f"no sandbox on {sys.platform}"
    bwrap = bwrap or shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if bwrap not in _AVAILABILITY:
        trial = [bwrap, *_identity(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        trial += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--", "true"]
        try:
            done = subprocess.run(trial, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _AVAILABILITY[bwrap] = f"bwrap cannot run here: {exc}"
        else:
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            _AVAILABILITY[bwrap] = None if done.returncode == 0 else f"bwrap cannot run here: {why}"
    return _AVAILABILITY[bwrap]


_HELP: dict[str, str] = {}


def _bwrap_has(option: str, bwrap: str) -> bool:
    """Whether ``bwrap`` (the sandbox's, never one from a PATH folder a command can write)
    knows ``option`` (``--size`` came in 0.6)."""
    if bwrap not in _HELP:
        try:
            done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
            _HELP[bwrap] = done.stdout + done.stderr
        except (OSError, subprocess.TimeoutExpired):
            _HELP[bwrap] = ""
    return f"{option} " in _HELP[bwrap]


def _identity(held: bool = False) -> list[str]:
    """Who the command is: no capabilities, in a user namespace of its own; as root, the
    unprivileged ``nobody`` there (bwrap run by root keeps every capability otherwise).
    ``held``: bwrap runs in a ``_Holder``'s user namespace, where tui-agent is root, so the
    user's own ids are named (bwrap would keep 0 otherwise)."""
    args = ["--unshare-user", "--cap-drop", "ALL"]
    if os.geteuid() == 0:
        args += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
    elif held:
        args += ["--uid", str(os.getuid()), "--gid", str(os.getgid())]
    return args


NOBODY = 65534


def _expand(path: str, home: Path) -> Path:
    return Path(_expanded(path, str(home)))


def _expanded(path: str, home: str) -> str:
    """``path`` from the settings with ``~`` and ``$XDG_CONFIG_HOME`` put in (a string:
    ``hidden`` expands some 35 of them for every command, and Path objects cost)."""
    if path.startswith("$XDG_CONFIG_HOME/"):
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        return os.path.join(base, path[len("$XDG_CONFIG_HOME/") :])
    if path == "~" or path.startswith("~/"):
        return os.path.join(home, path[2:])
    return path


def _matched(place: str, folders: set[str] | None = None) -> list[str]:
    """``place``, or what it names when a part has ``*`` (one level each); ``folders`` gets
    each folder listed and those above it (``remembered``)."""
    if "*" not in place:
        return [place]
    parts = Path(place).parts
    found = [parts[0]]
    for part in parts[1:]:
        if "*" in part:
            if folders is not None:
                for folder in found:
                    folders.update((folder, *_ancestors(folder)))
            found = [
                entry.path
                for folder in found
                for entry in _entries(folder)
                if fnmatch.fnmatchcase(entry.name, part)
            ]
        else:
            found = [os.path.join(folder, part) for folder in found]
    return found


def _exists(path: str) -> bool:
    """``Path(path).exists()`` on a string: False for a missing path or a dangling link;
    any other error (a folder it may not look into) is raised, as Path's is."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EBADF):
            return False
        raise
    except ValueError:  # a NUL in it
        return False
    return True


def _real_paths(places: list[str], seen: set[str] | None = None) -> list[str]:
    """``os.path.realpath`` of each of ``places`` that exists (``_exists``; a dangling link
    is left out). A last part that is not a link joins its folder's real path, each folder
    resolved once: ``hidden`` resolves some 35 paths under a few folders for every command,
    and realpath looks at every part of each. ``seen`` gets the folders the answer depends
    on (``remembered``): each place's, up to ``/``, and a place that is a link itself."""
    folders: dict[str, str] = {}
    found = []
    for place in places:
        folder, name = os.path.split(place)
        if seen is not None:
            seen.update(_ancestors(place))
        try:
            link = stat.S_ISLNK(os.lstat(place).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EBADF):
                continue
            raise
        except ValueError:  # a NUL in it
            continue
        if link or name in ("", ".", ".."):
            if seen is not None:
                seen.add(place)  # where it leads is not stamped: never kept
            if _exists(place):
                found.append(os.path.realpath(place))
            continue
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = os.path.realpath(folder)
        found.append(os.path.join(real, name))
    return found


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def _children(folder: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(folder)]
    except OSError:
        return []


# what the sandbox works out from folders' entries for every command (the home folder's
# credentials, the socket folders), kept while none of those folders changed: key ->
# (each folder's stamp, the result)
_REMEMBERED: dict[Hashable, tuple[dict[str, tuple[int, int, int] | None], Any]] = {}
# a folder changed less than this before the result was worked out may change again
# within the same tick of the file system's clock, unseen by its stamp: not kept then
SETTLED_NS = 2_000_000_000


class _Link(Exception):
    """A folder the result was read through is a symbolic link: where it leads can change
    with no stamp here changing, so the result is not kept."""


def _stamp(folder: str) -> tuple[int, int, int] | None:
    """What changes when an entry is added to ``folder``, removed or renamed, or the
    folder itself replaced: its inode, modification and change times (None: not there)."""
    try:
        found = os.lstat(folder)
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(found.st_mode):
        raise _Link(folder)
    return (found.st_ino, found.st_mtime_ns, found.st_ctime_ns)


def _ancestors(place: str) -> list[str]:
    """``place``'s folders, from its own up to ``/``."""
    found = []
    folder = os.path.dirname(place)
    while folder and folder not in found:
        found.append(folder)
        folder = os.path.dirname(folder)
    return found


def remembered(key: Hashable, work: Callable[[set[str]], T]) -> T:
    """``work(folders)``, which adds to ``folders`` every folder whose entries its result
    depends on; kept under ``key`` and given again while each of those folders has the same
    stamp (``_stamp``: one ``lstat`` each). Not kept when one of them changed in the
    ``SETTLED_NS`` before the work (the racy case: git's index has the same rule) or is a
    symbolic link. Only for folders no sandboxed command can write: the home folder and
    the host's socket folders, never the worktree."""
    held = _REMEMBERED.get(key)
    if held is not None:
        try:
            if all(_stamp(folder) == seen for folder, seen in held[0].items()):
                return held[1]  # type: ignore[no-any-return]
        except _Link:
            pass
    started = time.time_ns()
    folders: set[str] = set()
    result = work(folders)
    try:
        stamps = {folder: _stamp(folder) for folder in folders}
    except _Link:
        _REMEMBERED.pop(key, None)
        return result
    settled = started - SETTLED_NS
    if all(s is None or max(s[1], s[2]) < settled for s in stamps.values()):
        _REMEMBERED[key] = (stamps, result)
    else:
        _REMEMBERED.pop(key, None)
    return result


def host_sockets() -> list[Path]:
    """Unix sockets with a path that a command could connect to: those bound in this
    network namespace (``/proc/net/unix``), and socket files under ``SOCKET_FOLDERS``
    (servers in other namespaces, such as a container's, are not listed there)."""
    return [Path(name) for name in _host_sockets()]


def _host_sockets() -> list[str]:
    """``host_sockets`` as strings (for every command: a desktop has a hundred)."""
    found: list[str] = []
    try:
        with open("/proc/net/unix", "rb") as table:
            next(table, None)
            for line in table:
                fields = line.rstrip(b"\n").split(None, 7)
                if len(fields) == 8 and fields[7].startswith(b"/"):
                    found.append(os.fsdecode(fields[7]))
    except OSError:
        pass
    walked: set[tuple[str, int]] = set()
    for top, depth in SOCKET_FOLDERS:
        real = os.path.realpath(top)  # /var/run is most often a link to /run: walked once
        if (real, depth) not in walked:
            walked.add((real, depth))
            # walked again only when a folder in it changed (a new socket changes its
            # folder): ~0.3 ms a command otherwise, ~30 us to look at the stamps
            found += remembered(("sockets", real, depth), functools.partial(_walked, real, depth))
    sockets = []
    for name in dict.fromkeys(found):
        try:
            if stat.S_ISSOCK(os.lstat(name).st_mode):
                sockets.append(name)
        except OSError:
            continue
    return sockets


def _within(path: str, folders: list[str]) -> bool:
    """``Path(path).is_relative_to(folder)`` for one of ``folders`` (real paths, each
    ending with a slash: ``_folder``), on strings."""
    path += "/"
    return any(path.startswith(folder) for folder in folders)


def _folder(place: Path | str) -> str:
    """``place`` (a real path) as ``_within`` takes it."""
    text = str(place)
    return text if text.endswith("/") else text + "/"


def _walked(top: str, depth: int, folders: set[str]) -> list[str]:
    return _socket_files(top, depth, folders)


def _socket_files(top: str, depth: int, folders: set[str] | None = None) -> list[str]:
    """What under ``top`` (``depth`` levels) may be a socket; ``folders`` gets each folder
    listed (``remembered``)."""
    found = []
    if folders is not None:
        folders.update((top, *_ancestors(top)))
    try:
        entries = list(os.scandir(top))
    except OSError:
        return []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if depth > 1:
                    found += _socket_files(entry.path, depth - 1, folders)
            elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                found.append(entry.path)  # a socket, fifo or device: lstat tells later
        except OSError:
            continue
    return found


def _there(place: Path) -> bool:
    """``place.exists() or place.is_symlink()`` in one ``lstat`` (``protection`` asks
    it of some 20 paths for every command)."""
    try:
        os.lstat(place)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def _real_folder(place: Path) -> bool:
    """``place.is_dir() and not place.is_symlink()`` in one ``lstat``."""
    try:
        return stat.S_ISDIR(os.lstat(place).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _under_tmp(place: Path) -> bool:
    """Whether ``place``, as given or where it leads, is under /tmp (which the sandbox
    replaces with its private one)."""
    return place.is_relative_to("/tmp") or Path(os.path.realpath(place)).is_relative_to("/tmp")
