"""Shell commands in a bubblewrap sandbox (Linux): the ``[sandbox]`` settings, whether
bwrap works here, and the ``bwrap`` command line that wraps ``bash -c``.

Why: the approval dialog alone is a thin wall. A prompt-injected model that gets one
command approved could read the provider's API key from the environment and send it
anywhere, or write outside the project. Inside the sandbox:

- the command runs without capabilities, in a user namespace of its own (``--unshare-user
  --cap-drop ALL``; as root, as ``nobody`` inside), so it cannot unmount or remount what
  hides and protects things, even when tui-agent runs as root (containers, CI);
- the whole filesystem is read-only, HOME included; the worktree, a private ``/tmp``
  (the session's own folder under the user cache, ``sandbox-tmp/SESSION``, kept between
  its commands and removed when it closes) and ``allow_write`` folders are writable;
- inside the worktree the files that decide what runs stay read-only: in ``.git`` the
  ``hooks``, ``config``, ``info``, ``commondir``, ``config.worktree``, ``worktrees``,
  ``remotes``, ``branches`` and each submodule's ``config`` and ``hooks`` (objects, refs,
  logs, the index and ``HEAD`` stay writable, so commits work); ``core.hooksPath`` inside
  the worktree; and the agents' config (``paths.AGENT_CONFIG``: ``.tui-agent``,
  ``.agents``, ``.claude``, ``.opencode``, ``.gemini``, ``.codex``, ``.vscode``,
  ``.mcp.json``) in the session's folder and every folder up to the worktree's top;
  ``.git`` is a mount point (cannot be renamed away), read-only if a file; folders not
  there yet (``.git`` too) get an empty read-only folder in their place, so a command
  cannot make them (removed by the last command on the worktree: ``_placeholders``); files
  not there yet (``.mcp.json``, ``.git/commondir``) that a command makes are moved aside
  when it ends (``_made_kept``), before anything reads them;
- a worktree that is HOME or above it (``/``) is not writable: dotfiles and tui-agent's
  own state would be;
- Unix sockets bound to a path outside (``/proc/net/unix``, and socket files under
  ``/run``) are masked, so a command cannot talk to the user's tmux, D-Bus or database
  servers; those in ``unix_sockets = [...]`` stay reachable. Its own sockets work;
- credential folders (``~/.ssh``, ``~/.aws``, ``~/.config/gcloud``, ``~/.gnupg``,
  tui-agent's config folder, ``hide = [...]``) are hidden behind an empty read-only
  folder (a file behind ``/dev/null``), where they really are, after the writable binds
  (so a worktree in HOME does not uncover them); so are host sockets that hand out more
  (``/run/user/UID``, Docker's, the ssh agent's);
- a ``workdir`` under the real /tmp outside the worktree is refused (``unseen``): none
  of the real /tmp is bound in;
- the environment is an allow-list (``ENV_PASSED`` and ``env = [...]``), minus any
  variable whose value holds the provider's key and those named in ``scrub_env``;
- no network unless ``network = true`` (a network namespace with only loopback, which is
  the sandbox's own: the host's 127.0.0.1 is not reachable either); ``network = ["pypi.org",
  "*.github.com"]`` lets http(s) reach those hosts only, through a proxy outside the
  sandbox (``core/sandbox/netproxy.py``);
- its own PID namespace (``--unshare-pid``) and ``--die-with-parent``: killing bwrap's
  process group, or the agent dying, kills every process the command started. No
  ``--new-session``: the command already runs in a session of its own with no terminal
  (``start_new_session``, stdin from /dev/null, and ``--dev`` has none of the host's
  ttys), so it cannot push keys into the user's terminal; and in bwrap's group, a
  cancel that comes while bwrap is still setting up reaches what it started too.

Nothing here imports Textual; bwrap is tried once per process (``availability``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..project import trust
from ..util import paths
from . import netproxy

log = logging.getLogger("tui_agent.sandbox")

# what under HOME holds credentials or what a user typed (histories): hidden inside the
# sandbox; "*" in a name is a pattern (fnmatch, one level); "$XDG_CONFIG_HOME/..." follows
# that variable wherever it points (its default ~/.config is listed too)
DEFAULT_HIDE = (
    "~/.ssh",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.gnupg",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "~/.config/gh",
    "$XDG_CONFIG_HOME/gcloud",
    "$XDG_CONFIG_HOME/gh",
    "$XDG_CONFIG_HOME/*/credentials*",
    "~/.config/*/credentials*",
    "~/.npmrc",
    "~/.yarnrc",
    "~/.yarnrc.yml",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.claude/.credentials.json",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.histfile",
    "~/.sh_history",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.lesshst",
    "~/.local/share/fish/fish_history",
)
# environment variable names (fnmatch, case-insensitive) a sandboxed command gets: an
# allow-list; ``env = [...]`` adds names or patterns. ``DEFAULT_SCRUB`` still drops names
# like these from what a pattern lets through (``env = ["*"]``), unless named exactly.
ENV_PASSED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "VIRTUAL_ENV",
    "VIRTUAL_ENV_PROMPT",
    "CONDA_*",
    "PYENV_*",
    "NVM_*",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GEM_HOME",
    "GEM_PATH",
)
DEFAULT_SCRUB = (
    "*_API_KEY",
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET",
    "*_SECRET_*",
    "*_PASSWORD",
    "*_PASSWD",
    "*_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
)
# a provider key this long is also looked for inside values (``AUTH="Bearer <key>"``);
# a shorter one (a local server's "ollama") only as a whole value
_SECRET_INSIDE = 12
# host sockets that hand out more than the sandbox allows (a user's systemd and D-Bus,
# Docker): hidden, with the ssh agent's socket (SSH_AUTH_SOCK)
HOST_SOCKETS = ("/run/user/{uid}", "/run/docker.sock", "/var/run/docker.sock", "/run/podman")
# folders where servers of other namespaces (containers) leave sockets /proc/net/unix does
# not list: searched this deep for socket files to mask
SOCKET_FOLDERS = (("/run", 3), ("/var/run", 3))
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
KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "enabled": (bool, "true or false"),
    "network": ((bool, list), "true, false or a list of hosts"),
    "auto_allow": (bool, "true or false"),
    "allow_write": (list, "a list of folders"),
    "hide": (list, "a list of paths"),
    "scrub_env": (list, "a list of variable name patterns"),
    "env": (list, "a list of variable names or patterns"),
    "unix_sockets": (list, "a list of socket paths"),
    "tmp_size": ((int, str), 'a size such as "512M" or "2G", or a number of bytes'),
}
DEFAULT_TMP_SIZE = 1 << 30  # the private /tmp: 1 GiB unless tmp_size says otherwise
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)
_ESCAPE = (
    "If it must run outside, call execute again with the same command and "
    '"sandbox": false (the user is asked), or ask the user to run it with !!command.'
)
# output that says the sandbox got in the way (checked only when the command failed)
_CAUSES = (
    (
        re.compile(r"device or resource busy", re.I),
        "a protected file: .git/config, .git/hooks and the agents' config folders cannot be "
        "changed in the sandbox (git config, git remote add and git init over them write "
        "there)",
    ),
    (re.compile(r"read-only file system", re.I), "a write outside the writable folders"),
    (
        re.compile(r"permission denied", re.I),
        "permission denied (maybe a hidden or read-only path)",
    ),
    (
        re.compile(
            r"network is unreachable|could not resolve host|temporary failure in name "
            r"resolution|name or service not known|failed to establish a new connection|"
            r"no address associated with hostname|getaddrinfo",
            re.I,
        ),
        "no network",
    ),
    (
        re.compile(
            r"not an allowed host|CONNECT tunnel failed|Tunnel connection failed|"
            r"HTTP Error 403: Forbidden|status code 403|ProxyError",
            re.I,
        ),
        "a host the sandbox does not allow",
    ),
    (
        re.compile(r"connection refused|no server running|error connecting to", re.I),
        "no network, and Unix sockets outside the sandbox are masked (allowed ones: "
        "[sandbox] unix_sockets)",
    ),
)
DEFAULT_ENABLED = True  # on where bwrap works (availability says why not elsewhere)


@dataclass(frozen=True)
class Settings:
    """``[sandbox]`` from config, with defaults."""

    enabled: bool = DEFAULT_ENABLED
    network: bool = False
    hosts: tuple[str, ...] = ()  # network = [hosts]: http(s) to these only, via the proxy
    auto_allow: bool = True
    allow_write: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    scrub_env: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # more variables passed (names or patterns)
    unix_sockets: tuple[str, ...] = ()  # sockets outside left reachable
    tmp_size: int = DEFAULT_TMP_SIZE  # bytes the private /tmp may hold

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> Settings:
        table = settings.get("sandbox")
        table = table if isinstance(table, Mapping) and not problems(table) else {}
        size = table.get("tmp_size")
        return cls(
            enabled=bool(table.get("enabled", DEFAULT_ENABLED)),
            network=table.get("network", False) is True,
            hosts=tuple(net) if isinstance(net := table.get("network"), list) else (),
            auto_allow=bool(table.get("auto_allow", True)),
            allow_write=tuple(table.get("allow_write", ())),
            hide=tuple(table.get("hide", ())),
            scrub_env=tuple(table.get("scrub_env", ())),
            env=tuple(table.get("env", ())),
            unix_sockets=tuple(table.get("unix_sockets", ())),
            tmp_size=DEFAULT_TMP_SIZE if size is None else parse_size(size) or DEFAULT_TMP_SIZE,
        )


def parse_size(value: Any) -> int | None:
    """Bytes from ``512M``, ``2G``, ``1.5GiB``, ``100k`` or a whole number; None if it is
    none of these (or not above zero)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    match = _SIZE.match(str(value))
    if match is None:
        return None
    power = " KMGT".index(match.group(2).upper() or " ")
    size = int(float(match.group(1)) * 1024**power)
    return size if size > 0 else None


def problems(table: Any) -> list[str]:
    """What is wrong with a ``[sandbox]`` table, said as config problems."""
    if not isinstance(table, Mapping):
        return ["sandbox must be a table ([sandbox])"]
    found = []
    for key, value in table.items():
        rule = KEYS.get(key)
        if rule is None:
            found.append(f"sandbox.{key} is not a sandbox setting ({', '.join(KEYS)})")
        elif (
            not isinstance(value, rule[0])
            or (isinstance(value, bool) and bool not in _types(rule[0]))
            or (isinstance(value, list) and not all(isinstance(i, str) and i for i in value))
            or (key == "tmp_size" and parse_size(value) is None)
        ):
            found.append(f"sandbox.{key} must be {rule[1]}")
    return found


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


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


def _bwrap_has(option: str) -> bool:
    """Whether this bwrap knows ``option`` (``--size`` came in 0.6)."""
    bwrap = shutil.which("bwrap") or "bwrap"
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


def scrubbed_env(
    environ: Mapping[str, str], patterns: tuple[str, ...], secrets: tuple[str, ...] = ()
) -> dict[str, str]:
    """``environ`` without variables named like ``patterns`` (case-insensitive) or whose
    value is one of ``secrets`` (the provider's key, whatever the variable is called)."""
    upper = [p.upper() for p in patterns]
    values = {s for s in secrets if s}
    return {
        name: value
        for name, value in environ.items()
        if value not in values and not any(fnmatch.fnmatchcase(name.upper(), p) for p in upper)
    }


def passed_env(
    environ: Mapping[str, str],
    names: tuple[str, ...] = (),
    scrub: tuple[str, ...] = (),
    secrets: tuple[str, ...] = (),
) -> dict[str, str]:
    """The variables of ``environ`` a sandboxed command gets: those ``ENV_PASSED`` or
    ``names`` name (case-insensitive patterns; ``DEFAULT_SCRUB`` names only when named
    exactly), minus ``scrub`` patterns, minus any whose value is a secret or, for a secret
    of 12 characters or more, holds one."""
    exact = {n.upper() for n in names if not any(c in n for c in "*?[")}
    allowed = [p.upper() for p in (*ENV_PASSED, *names)]
    secret = [p.upper() for p in DEFAULT_SCRUB]
    dropped = [p.upper() for p in scrub]
    long = [s for s in secrets if len(s) >= _SECRET_INSIDE]
    whole = {s for s in secrets if s}

    def passes(name: str, value: str) -> bool:
        upper = name.upper()
        if upper not in exact and (
            not any(fnmatch.fnmatchcase(upper, p) for p in allowed)
            or any(fnmatch.fnmatchcase(upper, p) for p in secret)
        ):
            return False
        if any(fnmatch.fnmatchcase(upper, p) for p in dropped):
            return False
        return value not in whole and not any(s in value for s in long)

    return {name: value for name, value in environ.items() if passes(name, value)}


def session_tmp(session_id: str) -> Path:
    """Where a session's private /tmp lives: under the user cache, so nothing is left in
    the real /tmp (``Session.close`` removes it; ``sweep_tmp`` those of sessions that
    ended without closing)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(paths.APP)) / "sandbox-tmp" / session_id


def _expand(path: str, home: Path) -> Path:
    if path.startswith("$XDG_CONFIG_HOME/"):
        base = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        return Path(base) / path[len("$XDG_CONFIG_HOME/") :]
    if path == "~" or path.startswith("~/"):
        return home / path[2:]
    return Path(path)


def _matches(place: Path) -> list[Path]:
    """``place``, or what it names when a part has ``*`` (one level each)."""
    if "*" not in str(place):
        return [place]
    parts = place.parts
    found = [Path(parts[0])]
    for part in parts[1:]:
        if "*" in part:
            found = [
                child
                for folder in found
                for child in _children(folder)
                if fnmatch.fnmatchcase(child.name, part)
            ]
        else:
            found = [folder / part for folder in found]
    return found


def _children(folder: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(folder)]
    except OSError:
        return []


def host_sockets() -> list[Path]:
    """Unix sockets with a path that a command could connect to: those bound in this
    network namespace (``/proc/net/unix``), and socket files under ``SOCKET_FOLDERS``
    (servers in other namespaces, such as a container's, are not listed there)."""
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
    for top, depth in SOCKET_FOLDERS:
        found += _socket_files(top, depth)
    sockets = []
    for name in dict.fromkeys(found):
        try:
            if stat.S_ISSOCK(os.lstat(name).st_mode):
                sockets.append(Path(name))
        except OSError:
            continue
    return sockets


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


@dataclass
class Protection:
    """What a command must not change in the worktree: ``kept`` exist and are bound
    read-only; ``stand_ins`` are missing folders that get an empty read-only one; ``watched``
    are missing files that, if a command makes one, are moved aside when it ends."""

    kept: list[Path] = field(default_factory=list)
    stand_ins: list[Path] = field(default_factory=list)
    watched: list[Path] = field(default_factory=list)


@dataclass
class Sandbox:
    """The sandbox for one session: ``active`` when enabled and bwrap works; ``reason``
    says why not otherwise. ``command(argv, workdir)`` gives the wrapped command.
    ``folder``: the session's folder (the agents' config is protected there and in each
    folder up to the worktree's top)."""

    settings: Settings
    worktree: Path
    secrets: tuple[str, ...] = ()
    reason: str | None = None
    home: Path = field(default_factory=Path.home)
    tmp: Path | None = None  # the session's /tmp (kept between its commands); None: one each
    restored: list[str] = field(default_factory=list)  # protected entries put back
    folder: Path | None = None
    prefix: Path = field(default_factory=lambda: Path(sys.prefix))  # tui-agent's Python

    @classmethod
    def of(
        cls,
        settings: Mapping[str, Any],
        worktree: Path,
        tmp: Path | None = None,
        folder: Path | None = None,
    ) -> Sandbox:
        """From a session's settings: its provider's key(s) are the secrets."""
        wanted = Settings.of(settings)
        secrets = [settings.get("api_key")]
        models = settings.get("models")
        if isinstance(models, Mapping):
            secrets += [t.get("api_key") for t in models.values() if isinstance(t, Mapping)]
        keys = tuple(s for s in secrets if isinstance(s, str) and s)
        made = cls(wanted, worktree, keys, None, tmp=tmp, folder=folder)
        bwrap = made.program("bwrap")  # never one a command could have planted
        if not wanted.enabled:
            made.reason = "off in config ([sandbox] enabled)"
        elif bwrap is None and shutil.which("bwrap") is not None:
            made.reason = "bwrap is found only in a folder the sandbox lets commands write"
        else:
            made.reason = availability(bwrap)
        return made

    @property
    def active(self) -> bool:
        return self.reason is None

    def program(self, name: str) -> str | None:
        """``name`` from PATH, skipping folders a sandboxed command can write (the worktree,
        ``allow_write``: an activated ``.venv/bin`` there is on PATH, and a ``bwrap`` or
        ``nsenter`` planted in it would run the next command outside) and relative ones."""
        writable = [self.worktree, *(_expand(p, self.home) for p in self.settings.allow_write)]
        real = [w.resolve() for w in writable]
        folders = [
            folder
            for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
            if os.path.isabs(folder)
            and not any(Path(folder).resolve().is_relative_to(w) for w in real)
        ]
        return shutil.which(name, path=os.pathsep.join(folders)) if folders else None

    @property
    def home_exposed(self) -> bool:
        """Whether the worktree is HOME or a folder above it (``/`` included): then it is
        not writable in the sandbox (dotfiles, tui-agent's own state)."""
        home, worktree = self.home.resolve(), self.worktree.resolve()
        return home.is_relative_to(worktree)

    def describe(self) -> str:
        """One line for ``/permissions`` and the start note."""
        if not self.active:
            return f"Sandbox: off — {self.reason}. Shell commands run as before."
        hosts = self.settings.hosts
        net = (
            "network on"
            if self.settings.network
            else f"network only to {', '.join(hosts)} (http and https, through a proxy)"
            if hosts
            else "no network"
        )
        asks = (
            "sandboxed commands need no approval"
            if self.settings.auto_allow
            else "commands asked as configured"
        )
        writes = (
            "nothing writable but a private /tmp: this folder is your home folder or above "
            "it (open a project folder)"
            if self.home_exposed
            else "writes only in the worktree, a private /tmp"
        )
        return (
            f"Sandbox: on (bubblewrap) — {writes}"
            f"{' and allow_write' if self.settings.allow_write else ''}; {net}; "
            f"secrets and credential folders hidden, Unix sockets outside masked; {asks}."
        )

    def hidden(self) -> list[Path]:
        """What the command must not see, as real paths (a symlinked ~/.aws is hidden
        where it leads): credentials, histories, tui-agent's config, state (sessions,
        checkpoints) and cache (other sessions' /tmp), host sockets."""
        places = [*DEFAULT_HIDE, *self.settings.hide]
        found = [m for p in places for m in _matches(_expand(p, self.home))]
        found += [paths.user_config_dir(), paths.user_data_dir(), _user_cache()]
        found += [Path(p.format(uid=os.getuid())) for p in HOST_SOCKETS]
        agent = os.environ.get("SSH_AUTH_SOCK")
        if agent:
            found.append(Path(agent))
        real = [p.resolve() for p in found if p.exists()]  # a dangling link: nothing to hide
        seen = self._seen()
        kept = [
            p  # under the real /tmp and not bound in: not there to hide
            for p in real
            if not p.is_relative_to("/tmp") or any(p.is_relative_to(s) for s in seen)
        ]
        # a hidden folder covers what is below it (bwrap could not mount there)
        return [
            p for p in dict.fromkeys(kept) if not any(p != o and p.is_relative_to(o) for o in kept)
        ]

    def _seen(self) -> list[Path]:
        extra = [_expand(p, self.home) for p in self.settings.allow_write]
        return [s.resolve() for s in [self.home, self.worktree, *extra]]

    def levels(self) -> list[Path]:
        """Where the agents' config is protected: the worktree's top, each folder from it
        down to the session's folder, and every trusted folder inside the worktree (a
        sub-project whose config a later session started there would load)."""
        top = self.worktree
        found = [top]
        if self.folder is not None and self.folder != top and self.folder.is_relative_to(top):
            for part in self.folder.relative_to(top).parts:
                found.append(found[-1] / part)
        real = top.resolve()
        for folder in trust.trusted_folders():
            if folder.is_relative_to(real) and folder != real and folder.is_dir():
                found.append(top / folder.relative_to(real))
        return list(dict.fromkeys(found))

    def protected(self) -> list[Path]:
        """The worktree's paths that decide what runs, those there and the folders that
        could be made (``protection``)."""
        made = self.protection()
        return [*made.kept, *made.stand_ins]

    def protection(self) -> Protection:
        """What a command must not change: in a ``.git`` folder ``GIT_PROTECTED`` and each
        submodule's ``config`` and ``hooks``; a missing ``.git`` (no ``git init`` in the
        sandbox; a ``.git`` file, as in a linked worktree, is itself read-only); the
        agents' config at every level; ``core.hooksPath`` inside the worktree."""
        made = Protection()
        git = self.worktree / ".git"

        def place(path: Path, folder: bool) -> None:
            if path.exists() or path.is_symlink():
                made.kept.append(path)
            elif folder:
                made.stand_ins.append(path)
            else:
                made.watched.append(path)

        if git.is_dir() and not git.is_symlink():
            for name in GIT_PROTECTED:
                place(git / name, name in GIT_STAND_INS or name not in GIT_FILES)
            for module in _modules(git / "modules"):
                for name in ("config", "hooks"):
                    if (module / name).exists():
                        made.kept.append(module / name)
                for name in GIT_FILES:
                    place(module / name, False)
        else:
            place(git, True)
        for level in self.levels():
            for name in paths.AGENT_CONFIG:
                place(level / name, name not in paths.AGENT_CONFIG_FILES)
        hooks = self._hooks_path(git)
        if hooks is not None:
            place(hooks, True)
        # the Python environment running tui-agent, when it is the project's own .venv: a
        # .pth file or a changed script there would run at tui-agent's next start
        prefix = self.prefix.resolve()
        if prefix.is_relative_to(self.worktree.resolve()) and prefix != self.worktree.resolve():
            made.kept.append(self.worktree / prefix.relative_to(self.worktree.resolve()))
        # no stand-ins for a missing .git/remotes or branches (old-style remotes: read only
        # when a command names one)
        made.stand_ins = [p for p in made.stand_ins if p.parent != git or p.name in GIT_STAND_INS]
        for part in ("kept", "stand_ins", "watched"):
            setattr(made, part, list(dict.fromkeys(getattr(made, part))))
        return made

    def _hooks_path(self, git: Path) -> Path | None:
        """``core.hooksPath`` from ``.git/config`` when it points inside the worktree
        (husky's ``.husky/_``): git runs what is there."""
        try:
            text = (git / "config").read_text(errors="replace")
        except OSError:
            return None
        match = _HOOKS_PATH.search(text)
        if match is None:
            return None
        place = Path(os.path.expanduser(match.group(1).strip('"')))
        place = place if place.is_absolute() else self.worktree / place
        inside = place.resolve().is_relative_to(self.worktree.resolve())
        return place if inside and (place.exists() or place.parent.is_dir()) else None

    def unseen(self, workdir: Path) -> str | None:
        """Why ``workdir`` cannot be a sandboxed command's folder, or None: the real /tmp
        is not in the sandbox (its own /tmp is), and binding any of it would bring in
        what lives there (other programs' sockets)."""
        real = workdir.resolve()
        if not real.is_relative_to("/tmp") or any(real.is_relative_to(p) for p in self._seen()):
            return None
        return (
            f"workdir {workdir} is under /tmp, which the sandbox replaces with a private "
            "one: use a folder in the worktree, or run it outside the sandbox "
            '("sandbox": false, asked)'
        )

    @property
    def proxied(self) -> bool:
        """Whether commands get out through the allowed-hosts proxy."""
        return bool(self.settings.hosts) and not self.settings.network

    def env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        environ = os.environ if environ is None else environ
        env = passed_env(environ, self.settings.env, self.settings.scrub_env, self.secrets)
        env["TMPDIR"] = "/tmp"
        if self.proxied:
            env |= netproxy.proxy_env()
        return env

    def masked_sockets(self, hidden: list[Path] | None = None) -> list[Path]:
        """The host's Unix sockets a command would otherwise reach: not those in
        ``unix_sockets``, under a ``hidden`` folder, or in the real /tmp (not bound in)."""
        allowed = {_expand(p, self.home).resolve() for p in self.settings.unix_sockets}
        hidden = self.hidden() if hidden is None else hidden
        seen = self._seen()
        found = []
        for socket in host_sockets():
            real = socket.parent.resolve() / socket.name
            if real in allowed or any(real.is_relative_to(h) for h in hidden):
                continue
            if real.is_relative_to("/tmp") and not any(real.is_relative_to(s) for s in seen):
                continue
            found.append(real)
        return list(dict.fromkeys(found))

    def arguments(
        self,
        argv: list[str],
        workdir: Path,
        private_tmp: Path | None,
        proxy: Path | None = None,
        holder: _Holder | None = None,
        made: Protection | None = None,
    ) -> list[str]:
        """The bwrap command line running ``argv`` in ``workdir``; mounts in order, later
        over earlier. /tmp: the ``holder``'s tmpfs (a session's, kept between commands),
        else ``private_tmp`` bound in, else (None) a tmpfs of ``tmp_size`` for this command.
        ``proxy``: the allowed-hosts proxy's socket, bound into /tmp, and ``argv`` started
        behind the forwarder. ``made``: the protection ``command`` worked out already."""
        bwrap = self.program("bwrap") or "/usr/bin/bwrap"
        args = [*(holder.enter() if holder else []), bwrap, *_identity(holder is not None)]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if holder is not None:
            args += ["--bind", str(holder.mount), "/tmp"]
        elif private_tmp is not None:
            args += ["--bind", str(private_tmp), "/tmp"]
        else:
            args += ["--size", str(self.settings.tmp_size), "--tmpfs", "/tmp"]
        if proxy is not None:
            args += ["--bind", str(proxy), netproxy.INSIDE]
            python = netproxy.interpreter()
            if Path(python).is_relative_to("/tmp"):  # hidden by the private /tmp otherwise
                args += ["--ro-bind", sys.base_prefix, sys.base_prefix]
            argv = netproxy.forwarder_argv(python, argv)
        home = str(self.home)
        if self.home.is_dir():  # read-only again: it may sit under the private /tmp
            args += ["--ro-bind", home, home]
        exposed = self.home_exposed
        writable = [] if exposed else [self.worktree]
        writable += [_expand(p, self.home) for p in self.settings.allow_write]
        for place in writable:
            if place.is_dir():
                args += ["--bind", str(place), str(place)]
        git = self.worktree / ".git"
        if not exposed and git.is_dir() and not git.is_symlink():  # cannot be renamed away
            args += ["--bind", str(git), str(git)]
        hidden = self.hidden()
        for place in hidden:  # after the writable binds, so none uncovers them
            if place.is_dir():
                args += ["--tmpfs", str(place), "--remount-ro", str(place)]
            else:
                args += ["--ro-bind", "/dev/null", str(place)]
        if not exposed:
            made = made or self.protection()
            for place in made.kept:
                if place.is_symlink() and not place.exists():
                    continue  # a dangling link: nothing there to protect (_links_kept keeps it)
                args += ["--ro-bind", str(place), str(place)]
            for place in made.stand_ins:  # an empty read-only folder keeps it from being made
                args += ["--tmpfs", str(place), "--remount-ro", str(place)]
        for place in self.masked_sockets(hidden):  # connect() finds no server there
            args += ["--ro-bind", "/dev/null", str(place)]
        if not self.settings.network:
            args.append("--unshare-net")
        args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent"]
        args += ["--chdir", str(workdir), "--", *argv]
        return args

    @contextlib.contextmanager
    def command(
        self, argv: list[str], workdir: Path, environ: Mapping[str, str] | None = None
    ) -> Iterator[tuple[list[str], dict[str, str] | None]]:
        """``(argv, env)`` to start: wrapped in bwrap with a passed environment when
        active, else as given (env None: the agent's own). Without a session's ``tmp``
        the private /tmp is made for this command and removed when the block ends."""
        if not self.active:
            yield argv, None
            return
        made = Protection() if self.home_exposed else self.protection()
        with (
            _placeholders(self.worktree, made.stand_ins),
            self._links_kept(made.kept),
            self._made_kept(made.watched),
        ):
            if self.tmp is not None:
                self.tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
                _hold(self.tmp)
                holder = _holder(self.tmp, self.settings.tmp_size, self.program)
                proxy = self._proxy(self.tmp)  # kept for the session: stop_proxy
                if holder is not None:  # a tmpfs of tmp_size: the kernel holds the line
                    args = self.arguments(argv, workdir, None, proxy, holder, made)
                    yield args, self.env(environ)
                    return
                self._within_size(self.tmp, before=True)  # no tmpfs here: measured
                args = self.arguments(argv, workdir, self.tmp, proxy, made=made)
                with self._size_guard(self.tmp, args):
                    yield args, self.env(environ)
                return
            private = Path(tempfile.mkdtemp(prefix="tui-agent-sandbox-"))  # the proxy's
            try:
                proxy = self._proxy(private)
                if _bwrap_has("--size"):  # a tmpfs of tmp_size for this command
                    yield self.arguments(argv, workdir, None, proxy, made=made), self.env(environ)
                    return
                args = self.arguments(argv, workdir, private, proxy, made=made)  # bwrap < 0.6
                with self._size_guard(private, args):
                    yield args, self.env(environ)
            finally:
                netproxy.stop(private)
                shutil.rmtree(private, ignore_errors=True)

    @contextlib.contextmanager
    def _size_guard(self, folder: Path, args: list[str]) -> Iterator[None]:
        """While the command runs, its private /tmp is measured (every 0.1 s, less often
        when measuring takes long) and the command killed when it holds more than
        ``tmp_size``; then /tmp is emptied and ``restored`` says so."""
        guard = _SizeGuard(folder, self.settings.tmp_size, args)
        guard.start()
        try:
            yield
        finally:
            guard.stop.set()
            guard.join()
            used = guard.over or _used(folder)  # also what it wrote after the last look
            if used > self.settings.tmp_size:
                self._within_size(folder, before=False, used=used)

    def _within_size(self, folder: Path, *, before: bool, used: int | None = None) -> None:
        """Empty ``folder`` if it holds more than ``tmp_size`` (or ``used`` says it did)."""
        used = _used(folder) if used is None else used
        if used <= self.settings.tmp_size:
            return
        for child in _children(folder):
            if child.name == netproxy.SOCKET_NAME:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    child.unlink()
        limit = _mb(self.settings.tmp_size)
        self.restored.append(
            f"the private /tmp held {_mb(used)} (more than tmp_size, {limit}): it was emptied"
            if before
            else f"the private /tmp went over tmp_size ({_mb(used)} > {limit}): the command "
            "was stopped and /tmp emptied; write big files in the worktree"
        )
        log.warning("sandbox: %s", self.restored[-1])

    def _proxy(self, key: Path) -> Path | None:
        return netproxy.ensure(key, self.settings.hosts).path if self.proxied else None

    @contextlib.contextmanager
    def _links_kept(self, places: list[Path]) -> Iterator[None]:
        """A protected entry that is a symlink (``.claude -> .agents``) is read-only where
        it leads, but the link itself lives in the writable worktree: if a command
        replaced it, what it put there is moved aside (``NAME.replaced-in-sandbox-N``,
        which nothing loads) and the link is put back; ``restored`` says so."""
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
                self.restored.append(
                    f"{place.name} is a protected link to {target}: the command replaced it; "
                    f"it was put back ({what})"
                )
                log.warning("sandbox: %s", self.restored[-1])

    @contextlib.contextmanager
    def _made_kept(self, places: list[Path]) -> Iterator[None]:
        """Protected files that were not there (``.mcp.json``, ``.git/commondir``) cannot
        have a stand-in (git dies on an empty ``commondir``): one that a command made is
        moved aside when it ends (``NAME.made-in-sandbox-N``, which nothing reads), before
        tui-agent or the user's git reads it; ``restored`` says so."""
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
                shown = _shown(place, self.worktree)
                self.restored.append(
                    f"{shown} is protected (it decides what runs) and cannot be made in the "
                    f"sandbox: the command's one was moved to {aside.name} (nothing reads it). "
                    "Make it outside the sandbox: the write tool (which asks) or !!command"
                )
                log.warning("sandbox: %s", self.restored[-1])

    def why(self, output: str) -> str | None:
        """What in a failed sandboxed command's ``output`` looks like the sandbox's doing,
        naming the rule (a hidden path, the private /tmp, a read-only home folder), or None."""
        reasons = []
        what = caused(output)
        if self.home_exposed and re.search(r"read-only file system", output, re.I):
            what = (
                f"the session's folder ({self.worktree}) is your home folder or above it, so "
                "the sandbox keeps it read-only: start tui-agent in a project folder"
            )
        if re.search(r"no space left on device", output, re.I):
            reasons.append(
                f"no space left: the private /tmp holds at most tmp_size "
                f"({_mb(self.settings.tmp_size)}); write big files in the worktree"
            )
        for name in re.findall(r"(\S+?)['\"]?: No such file or directory", output):
            name = name.strip("'\"`:")
            if name and self._is_hidden(name):
                reasons.append(f"{name} is hidden in the sandbox (credentials and histories)")
            elif (name == "/tmp" or name.startswith("/tmp/")) and not any(
                Path(name).is_relative_to(s) for s in self._seen()
            ):
                reasons.append(
                    f"{name} is in /tmp: the sandbox has a private /tmp of its own, the real "
                    "one is not visible (use a folder in the worktree)"
                )
        found = list(dict.fromkeys([*([what] if what else []), *reasons]))
        return "; ".join(found) or None

    def note(self, output: str) -> str | None:
        """The note for a failed sandboxed command's ``output`` when the sandbox may be
        why: what got in the way, naming the rule, and the way out; or None."""
        said = self.why(output)
        if said is None:
            return None
        return (
            f"this ran in the sandbox and may have failed because of it ({said}). In the "
            "sandbox writes are allowed only in the worktree and /tmp, there is no network "
            "(or only to the hosts the user allowed), credentials are hidden and Unix "
            f"sockets outside are masked. {_ESCAPE}"
        )

    def _is_hidden(self, name: str) -> bool:
        place = Path(os.path.expanduser(name))
        if not place.is_absolute():
            return False
        try:
            real = place.parent.resolve() / place.name
        except OSError:
            return False
        return any(real == h or real.is_relative_to(h) for h in self.hidden())


class _Holder:
    """A session's private /tmp as a tmpfs of ``tmp_size``, kept between its commands: the
    tmpfs is mounted over an empty folder (``ID.tmpfs``) in a mount namespace of its own,
    inside a user namespace (so no privilege is needed, root or not), held by a small
    process that lives while this one keeps its stdin open: a session's close, or
    tui-agent's end however it ends, lets it go and the kernel frees the tmpfs (nothing is
    left on disk). A command enters it with nsenter, then bwrap binds the tmpfs at /tmp."""

    SCRIPT = (
        'mount -t tmpfs -o "size=$1,mode=0700" tui-agent-tmp "$2" || exit 1; echo ready; read -r _'
    )

    def __init__(self, folder: Path, size: int, unshare: str | None, nsenter: str | None) -> None:
        self.size = size
        self.mount = folder.with_name(folder.name + ".tmpfs")
        self.mount.mkdir(mode=0o700, exist_ok=True)
        if unshare is None or nsenter is None:
            raise OSError("unshare or nsenter (util-linux) is missing")
        self.nsenter = nsenter
        self.process = subprocess.Popen(
            [
                *(unshare, "--user", "--map-root-user", "--mount", "--propagation", "slave"),
                *("sh", "-c", self.SCRIPT, "sh", str(size), str(self.mount)),
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

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def enter(self) -> list[str]:
        """What runs bwrap inside the holder's namespaces (as the same user)."""
        target = str(self.process.pid)
        return [self.nsenter, "--target", target, "--user", "--mount", "--preserve-credentials"]

    def close(self) -> None:
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
        _HOLDERS[folder] = _Holder(folder, size, program("unshare"), program("nsenter"))
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


def _user_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir(paths.APP))


@contextlib.contextmanager
def _placeholders(worktree: Path, places: list[Path]) -> Iterator[None]:
    """Protected paths that did not exist get an empty folder in the worktree (bwrap's
    mount point for the read-only stand-in). They are removed when the last sandboxed
    command on this worktree ends, in any tui-agent process: every command holds a shared
    ``flock`` on the worktree's lock file while it runs, and the one that can then take it
    exclusively removes the stand-ins recorded in the state file (the folders it names
    that are still empty). A folder the user made is never in that file."""
    import fcntl
    import hashlib

    import platformdirs

    folder = Path(platformdirs.user_cache_dir(paths.APP)) / "sandbox-locks"
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(str(worktree.resolve()).encode()).hexdigest()[:24]
    with open(folder / f"{name}.lock", "a+") as users:
        fcntl.flock(users, fcntl.LOCK_SH)
        if places:
            _record(folder / f"{name}.state", lambda made: made | {str(p) for p in places})
        try:
            yield
        finally:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pass  # another command still runs on this worktree: the last one cleans
            else:
                _record(folder / f"{name}.state", _remove_stand_ins)


def _record(state: Path, change: Any) -> None:
    """Read, change and write the set of stand-in folders, under an exclusive lock."""
    import fcntl

    with open(state, "a+") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        file.seek(0)
        made = {line for line in file.read().splitlines() if line}
        kept = change(made)
        file.seek(0)
        file.truncate()
        file.write("".join(f"{line}\n" for line in sorted(kept)))


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


def caused(output: str) -> str | None:
    """What in a failed sandboxed command's output looks like the sandbox's doing, or
    None."""
    for pattern, what in _CAUSES:
        if pattern.search(output):
            return what
    return None


def hint(output: str) -> str | None:
    """The note added to a failed sandboxed command's result when the sandbox may be why,
    telling the model the way out (``Sandbox.note`` also names hidden paths and the
    private /tmp)."""
    what = caused(output)
    if what is None:
        return None
    return (
        f"this ran in the sandbox and may have failed because of it ({what}): writes are "
        "allowed only in the worktree and /tmp, there is no network (or only to the hosts "
        f"the user allowed), and credentials are hidden. {_ESCAPE}"
    )
