"""What the host offers the sandbox: whether bwrap runs here (``availability``, tried
once per process) and which options it knows, who the command is inside (``_identity``),
the host's Unix sockets a command could reach (``host_sockets``), and the path helpers
the sandbox reads its settings' paths with (``_expand``, ``_matched``, ``_children``).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

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


def _matched(place: str) -> list[str]:
    """``place``, or what it names when a part has ``*`` (one level each)."""
    if "*" not in place:
        return [place]
    parts = Path(place).parts
    found = [parts[0]]
    for part in parts[1:]:
        if "*" in part:
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


def _real_paths(places: list[str]) -> list[str]:
    """``os.path.realpath`` of each of ``places`` that exists (``_exists``; a dangling link
    is left out). A last part that is not a link joins its folder's real path, each folder
    resolved once: ``hidden`` resolves some 35 paths under a few folders for every command,
    and realpath looks at every part of each."""
    folders: dict[str, str] = {}
    found = []
    for place in places:
        folder, name = os.path.split(place)
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
            found += _socket_files(top, depth)
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


def _socket_files(top: str, depth: int) -> list[str]:
    found = []
    try:
        entries = list(os.scandir(top))
    except OSError:
        return []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if depth > 1:
                    found += _socket_files(entry.path, depth - 1)
            elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                found.append(entry.path)  # a socket, fifo or device: lstat tells later
        except OSError:
            continue
    return found
