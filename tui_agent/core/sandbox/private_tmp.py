"""A session's private /tmp and its lifecycle: where it lives (``session_tmp``, under
the user cache), the tmpfs of ``tmp_size`` that holds it between commands (``_Holder``),
the size guard where no tmpfs can be held (``_SizeGuard``), the lock that marks it a live
session's (``_hold``), its removal when the session closes (``release_tmp``) and the
sweep of those left by sessions that never closed (``sweep_tmp``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..util import paths
from . import hop, netproxy
from .host import _children

log = logging.getLogger("tui_agent.sandbox")


def session_tmp(session_id: str) -> Path:
    """Where a session's private /tmp lives: under the user cache, so nothing is left in
    the real /tmp (``Session.close`` removes it; ``sweep_tmp`` those of sessions that
    ended without closing)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(paths.APP)) / "sandbox-tmp" / session_id


class _Holder:
    """A session's private /tmp as a tmpfs of ``tmp_size``, kept between its commands: the
    tmpfs is mounted over an empty folder (``ID.tmpfs``) in a mount namespace of its own,
    inside a user namespace (so no privilege is needed, root or not), held by a small
    process that lives while this one keeps its stdin open: a session's close, or
    tui-agent's end however it ends, lets it go and the kernel frees the tmpfs (nothing is
    left on disk). A command enters it (``hop.py``; nsenter where that cannot run), then
    bwrap binds the tmpfs at /tmp.

    It holds a network namespace too, with only its loopback (brought up once: ``net``
    says it is); a session's commands without network share it (``enter(net=True)``), as
    they share its /tmp, rather than each making one of its own (~0.7 ms a command here).

    Its namespaces are opened once, when it is ready (``namespaces``: descriptors kept
    until ``close``), and a command enters them through those descriptors
    (``/proc/TUI-AGENT/fd/N``), never through the holder's PID: a holder that died and
    whose PID now names another process can never be entered. The descriptors also keep
    the tmpfs while a command runs, however the holder ends."""

    # mount is named ($3), never looked up on PATH: a command can write a PATH folder
    SCRIPT = (
        '"$3" -t tmpfs -o "size=$1,mode=0700" tui-agent-tmp "$2" || exit 1; echo ready; read -r _'
    )

    def __init__(
        self,
        folder: Path,
        size: int,
        unshare: str | None,
        nsenter: str | None,
        sh: str | None = None,
        mount: str | None = None,
    ) -> None:
        """``unshare``, ``nsenter``, ``sh``, ``mount``: the programs, found where no
        sandboxed command can plant one (``Sandbox.program``)."""
        self.size = size
        self.mount = folder.with_name(folder.name + ".tmpfs")
        self.mount.mkdir(mode=0o700, exist_ok=True)
        self.hop = hop.program()  # the hop into its namespaces; None: nsenter's
        if unshare is None or sh is None or mount is None or (self.hop is None and nsenter is None):
            raise OSError("unshare, nsenter or mount (util-linux), or sh is missing")
        self.nsenter, self.sh = nsenter, sh
        self.process = subprocess.Popen(
            [
                *(unshare, "--user", "--map-root-user", "--mount", "--net"),
                *("--propagation", "slave"),
                *(sh, "-c", self.SCRIPT, "sh", str(size), str(self.mount), mount),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a Ctrl+C in the terminal is not its business
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline() != b"ready\n":  # it failed and ended
            assert self.process.stderr is not None
            why = self.process.stderr.read().decode(errors="replace").strip()
            self.process.wait()
            raise OSError(why or f"exit status {self.process.returncode}")
        self.namespaces: tuple[int, ...] = ()
        self.net = False
        try:
            self.namespaces = self._opened()
            self._check()
        except OSError:
            self.close()
            raise
        self.net = self._loopback()

    def _opened(self) -> tuple[int, ...]:
        """The holder's user, mount and network namespaces, opened while it is surely the holder:
        it is still alive after they are open (a PID is not reused before its process has
        ended and been waited for, and only ``alive`` waits for it)."""
        found: list[int] = []
        try:
            for kind in ("user", "mnt", "net"):
                found.append(
                    os.open(f"/proc/{self.process.pid}/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC)
                )
            if not self.alive:
                raise OSError("the tmpfs holder ended as it started")
            if os.fstat(found[1]).st_ino == os.stat("/proc/self/ns/mnt").st_ino:
                raise OSError("the tmpfs holder has no mount namespace of its own")
        except OSError:
            for fd in found:
                os.close(fd)
            raise
        return tuple(found)

    def _check(self) -> None:
        """Once: the hop enters them as commands will (``enter``), else nsenter does (a
        memfd the kernel will not run; nsenter cannot open this process's descriptors if
        it is not dumpable). What it runs then is ``sh -c :`` (found as ``program`` finds
        it: none a PATH folder could plant)."""
        why = ""
        for _ in range(2):
            try:
                done = subprocess.run(
                    [*self.enter(), self.sh, "-c", ":"],
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=10,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:  # a memfd it will not run
                why = str(exc)
            else:
                if done.returncode == 0:
                    return
                why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            if self.hop is None or self.nsenter is None:
                break
            log.warning("sandbox: the namespace hop cannot run here (%s): nsenter instead", why)
            self.hop = None
        raise OSError(f"cannot enter the tmpfs holder ({why})")

    def _loopback(self) -> bool:
        """Bring the network namespace's loopback up (as bwrap does in the one it makes),
        once: tui-agent's own Python, entered as a command is. False (commands then make
        their own namespace, as before) if that cannot be done here."""
        try:
            done = subprocess.run(
                [*self.enter(net=True), netproxy.interpreter(), "-I", "-S", "-c", LOOPBACK_UP],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=10,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = str(exc)
        else:
            if done.returncode == 0:
                return True
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        log.warning("sandbox: no shared loopback for the session's commands (%s)", why)
        return False

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def enter(self, net: bool = False) -> list[str]:
        """What runs bwrap inside the holder's namespaces (as the same user), its network
        namespace too when ``net``: the hop (``hop.py``), else nsenter, opening them through
        this process's descriptors (``/proc/PID/fd/N``: the hop is this process's child, so
        PID is this process while it runs)."""
        me = os.getpid()
        user, mount, network = (f"/proc/{me}/fd/{fd}" for fd in self.namespaces)
        if self.hop is not None:
            return [self.hop, "3", user, mount, network] if net else [self.hop, "2", user, mount]
        assert self.nsenter is not None
        entered = [self.nsenter, f"--user={user}", f"--mount={mount}"]
        return [*entered, *([f"--net={network}"] if net else []), "--preserve-credentials"]

    def close(self) -> None:
        for fd in self.namespaces:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.namespaces = ()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        with contextlib.suppress(OSError):
            self.mount.rmdir()


# run in the holder's network namespace: its loopback up (SIOCGIFFLAGS, SIOCSIFFLAGS with
# IFF_UP; the kernel then gives it 127.0.0.1 and ::1), as root of the holder's user namespace
LOOPBACK_UP = (
    "import fcntl, socket, struct\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "asked = struct.pack('16sH22x', b'lo', 0)\n"
    "flags = struct.unpack('16sH22x', fcntl.ioctl(s, 0x8913, asked))[1]\n"
    "fcntl.ioctl(s, 0x8914, struct.pack('16sH22x', b'lo', flags | 1))\n"
)

_HOLDERS: dict[Path, _Holder] = {}
_NO_HOLDER: list[str] = []  # why a tmpfs could not be held here (said once)


def _holder(folder: Path, size: int, program: Callable[[str], str | None]) -> _Holder | None:
    """The session's tmpfs holder (started on its first command, again if it died), or
    None where one cannot run (the private /tmp is then a folder, measured instead)."""
    held = _HOLDERS.get(folder)
    if held is not None and held.alive and held.size == size:
        return held
    if held is not None:
        held.close()  # a new size, or it died: a new, empty /tmp
        del _HOLDERS[folder]
    if _NO_HOLDER:
        return None
    try:
        found = [program(name) for name in ("unshare", "nsenter", "sh", "mount")]
        _HOLDERS[folder] = _Holder(folder, size, *found)
    except OSError as exc:
        _NO_HOLDER.append(str(exc))
        log.warning("sandbox: no tmpfs for the private /tmp (%s): its size is measured", exc)
        return None
    return _HOLDERS[folder]


class _SizeGuard(threading.Thread):
    """Measures a command's private /tmp while it runs and kills the command (bwrap's
    process group: everything inside goes with it) once it holds more than ``limit``."""

    def __init__(self, folder: Path, limit: int, args: list[str]) -> None:
        super().__init__(name="sandbox-tmp-size", daemon=True)
        self.folder, self.limit, self.args = folder, limit, args
        self.stop = threading.Event()
        self.over = 0

    def run(self) -> None:
        wait = 0.1
        while not self.stop.wait(wait):
            started = time.monotonic()
            used = _used(self.folder)
            if used > self.limit:
                self.over = used
                _kill_command(self.args)
                return
            wait = max(0.1, 5 * (time.monotonic() - started))


def _used(folder: Path) -> int:
    """Bytes of disk ``folder`` takes (blocks, so sparse files count as what they use)."""
    total = 0
    stack = [str(folder)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if stat.S_ISDIR(info.st_mode):
                stack.append(entry.path)
    return total


def _kill_command(args: list[str]) -> None:
    """Kill the bwrap started with ``args`` and its process group (``execute`` and
    ``!command`` start it in a session of its own, so its PID is the group's)."""
    wanted = "\0".join(args).encode() + b"\0"
    for entry in _children(Path("/proc")):
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cmdline").read_bytes() != wanted:
                continue
        except OSError:
            continue
        pid = int(entry.name)
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)  # its group, when it leads one
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)  # bwrap: --die-with-parent takes the rest


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.0f} MB"


_HELD: dict[Path, int] = {}  # the private /tmp folders this process's sessions use: locked


def _hold(folder: Path) -> None:
    """Mark ``folder`` as a live session's (a shared lock on ``FOLDER.lock`` for as long as
    this process holds it); the first time, remove those no live session holds."""
    import fcntl

    if folder in _HELD:
        return
    if not _HELD:
        sweep_tmp(folder.parent)
    lock = os.open(folder.with_name(folder.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_SH)
    _HELD[folder] = lock


def release_tmp(folder: Path) -> None:
    """The session is over: its private /tmp (its tmpfs) and lock go (``Session.close``)."""
    from .protection import release_stand_ins

    release_stand_ins(folder)  # the stand-ins it kept, if no one else keeps them
    holder = _HOLDERS.pop(folder, None)
    if holder is not None:
        holder.close()
    shutil.rmtree(folder, ignore_errors=True)
    lock = _HELD.pop(folder, None)
    if lock is not None:
        os.close(lock)
    with contextlib.suppress(OSError):
        folder.with_name(folder.name + ".lock").unlink()


def sweep_tmp(top: Path) -> list[Path]:
    """Remove the private /tmp folders under ``top`` that no live session holds (a
    session killed before it could close leaves its own); return them. One made by an
    older tui-agent (no lock file) goes when it has not changed for a day."""
    import fcntl

    removed = []
    for folder in _children(top):
        if folder.suffix in (".lock", ".tmpfs") or not folder.is_dir() or folder in _HELD:
            continue
        lock_path = folder.with_name(folder.name + ".lock")
        try:
            lock = os.open(lock_path, os.O_RDWR)
        except FileNotFoundError:
            try:
                stale = time.time() - folder.stat().st_mtime > 86400
            except OSError:
                continue
            if stale:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
            continue
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock)
            continue  # a live session's
        netproxy.stop(folder)
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            folder.with_name(folder.name + ".tmpfs").rmdir()  # its tmpfs went with it
        with contextlib.suppress(OSError):
            lock_path.unlink()
        os.close(lock)
        removed.append(folder)
    return removed


def _user_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir(paths.APP))


# the empty folder's stamp when it was last seen empty (``empty_folder``)
_EMPTY: dict[str, tuple[int, int, int]] = {}


def empty_folder() -> str | None:
    """An empty folder of tui-agent's own (``sandbox-empty`` in the user cache, which
    commands never see) that hidden folders and stand-ins are bound from read-only: one
    mount each for bwrap, where an empty tmpfs made read-only took two (~0.2 ms each,
    for every command). None where it cannot be made, is not this user's plain folder or
    holds anything: a tmpfs then, as before. Seen empty once, it is listed again only
    when its stamp changed."""
    folder = _user_cache() / "sandbox-empty"
    key = str(folder)
    try:
        found = os.lstat(key)
    except FileNotFoundError:
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(key, 0o555)
            found = os.lstat(key)
        except OSError:
            return None
    except OSError:
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
        return None
    stamp = (found.st_ino, found.st_mtime_ns, found.st_ctime_ns)
    if _EMPTY.get(key) == stamp:
        return key
    try:
        if os.listdir(key):
            return None
    except OSError:
        return None
    _EMPTY[key] = stamp
    return key
