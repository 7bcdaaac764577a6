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
  cannot make them (removed when no command runs on the worktree and, but for ``.git``
  and ``.tui-agent``, no session that made them lives: ``_placeholders``); files
  not there yet (``.mcp.json``, ``.git/commondir``) that a command makes are moved aside
  when it ends (``made_kept``), before anything reads them;
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
  the session's own, held with its /tmp and shared by its commands, or the command's own
  without a holder: the host's 127.0.0.1 is not reachable either); ``network = ["pypi.org",
  "*.github.com"]`` lets http(s) reach those hosts only, through a proxy outside the
  sandbox (``core/sandbox/netproxy.py``);
- its own PID namespace (``--unshare-pid``) and ``--die-with-parent``: killing bwrap's
  process group, or the agent dying, kills every process the command started. No
  ``--new-session``: the command already runs in a session of its own with no terminal
  (``start_new_session``, stdin from /dev/null, and ``--dev`` has none of the host's
  ttys), so it cannot push keys into the user's terminal; and in bwrap's group, a
  cancel that comes while bwrap is still setting up reaches what it started too.

Nothing here imports Textual; bwrap is tried once per process (``availability``).

This module owns the ``Sandbox`` class (one session's sandbox: the bwrap command line,
what it hides and protects, the notes on a failure). The rest lives beside it and is
re-exported here: ``settings`` (the ``[sandbox]`` table), ``environment`` (the variables
a command gets), ``host`` (bwrap's availability, host sockets, path helpers),
``protection`` (``.git`` and the agents' config, stand-ins), ``private_tmp`` (the
session's /tmp and its lifecycle), ``hop`` (the small program that enters its tmpfs
holder) and ``diagnosis`` (``caused``, ``hint``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..project import trust
from ..util import paths
from . import netproxy
from .diagnosis import _ESCAPE, caused, hint
from .environment import DEFAULT_SCRUB, ENV_PASSED, LOCALE, passed_env, scrubbed_env
from .host import (
    HOST_SOCKETS,
    NOBODY,
    SOCKET_FOLDERS,
    _bwrap_has,
    _children,
    _expand,
    _expanded,
    _folder,
    _host_sockets,
    _identity,
    _matched,
    _real_folder,
    _real_paths,
    _there,
    _under_tmp,
    _within,
    availability,
    host_sockets,
    remembered,
)
from .private_tmp import _HELD as _HELD  # tests look at the held folders
from .private_tmp import (
    _hold,
    _Holder,
    _holder,
    _mb,
    _SizeGuard,
    _used,
    _user_cache,
    empty_folder,
    release_tmp,
    session_tmp,
    sweep_tmp,
)
from .protection import (
    _HOOKS_PATH,
    GIT_FILES,
    GIT_PROTECTED,
    GIT_STAND_INS,
    PROTECTED,
    Protection,
    _modules,
    _placeholders,
    links_kept,
    made_kept,
)
from .settings import (
    DEFAULT_ENABLED,
    DEFAULT_HIDE,
    DEFAULT_TMP_SIZE,
    KEYS,
    Settings,
    parse_size,
    problems,
)

# the names this module had before its split (issue 28), still imported from here
__all__ = [
    "DEFAULT_ENABLED",
    "DEFAULT_HIDE",
    "DEFAULT_SCRUB",
    "DEFAULT_TMP_SIZE",
    "ENV_PASSED",
    "GIT_FILES",
    "GIT_PROTECTED",
    "GIT_STAND_INS",
    "HOST_SOCKETS",
    "KEYS",
    "NOBODY",
    "PROTECTED",
    "SOCKET_FOLDERS",
    "Protection",
    "Sandbox",
    "Settings",
    "availability",
    "caused",
    "hint",
    "host_sockets",
    "parse_size",
    "passed_env",
    "problems",
    "release_tmp",
    "scrubbed_env",
    "session_tmp",
    "sweep_tmp",
]

log = logging.getLogger("tui_agent.sandbox")
# Sandbox.program's answers, for this process (a session makes a Sandbox for each
# command): re-checked on each use; a PATH search resolves every folder on it
_PROGRAMS: dict[tuple[object, ...], str] = {}


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
        search = os.environ.get("PATH", os.defpath)
        key = (name, search, tuple(writable))
        found = _PROGRAMS.get(key)
        # remembered for the same PATH and writable folders, and checked again each time
        # (cheaply: one folder resolved, not every PATH entry) that the program is still
        # there and its folder, wherever it now leads, is not one a command can write
        if found is not None and os.access(found, os.X_OK) and not os.path.isdir(found):
            where = Path(found).parent.resolve()
            if not any(where.is_relative_to(w) for w in real):
                return found
        folders = [
            folder
            for folder in search.split(os.pathsep)
            if os.path.isabs(folder)
            and not any(Path(folder).resolve().is_relative_to(w) for w in real)
        ]
        found = shutil.which(name, path=os.pathsep.join(folders)) if folders else None
        if found is None:
            _PROGRAMS.pop(key, None)
        else:
            _PROGRAMS[key] = found
        return found

    @property
    def home_exposed(self) -> bool:
        """Whether the worktree is HOME or a folder above it (``/`` included): then it is
        not writable in the sandbox (dotfiles, tui-agent's own state)."""
        home, worktree = os.path.realpath(self.home), os.path.realpath(self.worktree)
        return _within(home, [_folder(worktree)])

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

    def hidden(self, seen: list[Path] | None = None) -> list[Path]:
        """What the command must not see, as real paths (a symlinked ~/.aws is hidden
        where it leads): credentials, histories, tui-agent's config, state (sessions,
        checkpoints) and cache (other sessions' /tmp), host sockets. ``seen``: ``_seen()``."""
        home = str(self.home)
        patterns = (*DEFAULT_HIDE, *self.settings.hide)

        def credentials(folders: set[str]) -> list[str]:
            matched = [m for p in patterns for m in _matched(_expanded(p, home), folders)]
            return _real_paths(matched, folders)

        # as real paths (strings until then: this runs for every command); a dangling link:
        # nothing to hide. The home folder's are looked for again only when a folder they
        # are in changed (``remembered``: ~0.25 ms a command otherwise)
        key = ("hidden", home, patterns, os.environ.get("XDG_CONFIG_HOME"))
        found = list(remembered(key, credentials))
        others = [str(paths.user_config_dir()), str(paths.user_data_dir()), str(_user_cache())]
        others += [p.format(uid=os.getuid()) for p in HOST_SOCKETS]
        agent = os.environ.get("SSH_AUTH_SOCK")
        if agent:
            others.append(agent)
        found += _real_paths(others)
        seen_in = [_folder(s) for s in (self._seen() if seen is None else seen)]
        kept = {
            p: _folder(p)  # under the real /tmp and not bound in: not there to hide
            for p in found
            if not _within(p, ["/tmp/"]) or _within(p, seen_in)
        }
        # a hidden folder covers what is below it (bwrap could not mount there)
        return [
            Path(p) for p in kept if not any(p != o and _within(p, [f]) for o, f in kept.items())
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
            if _there(path):
                made.kept.append(path)
            elif folder:
                made.stand_ins.append(path)
            else:
                made.watched.append(path)

        if _real_folder(git):
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
        top = self.worktree.resolve()  # (once: realpath looks at every part, each time)
        if prefix.is_relative_to(top) and prefix != top:
            made.kept.append(self.worktree / prefix.relative_to(top))
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

    def masked_sockets(
        self, hidden: list[Path] | None = None, seen: list[Path] | None = None
    ) -> list[Path]:
        """The host's Unix sockets a command would otherwise reach: not those in
        ``unix_sockets``, under a ``hidden`` folder, or in the real /tmp (not bound in)."""
        allowed = {str(_expand(p, self.home).resolve()) for p in self.settings.unix_sockets}
        hidden = self.hidden(seen) if hidden is None else hidden
        covered = [_folder(h) for h in hidden]
        seen_in = [_folder(s) for s in (self._seen() if seen is None else seen)]
        # on strings, each folder resolved once: a desktop has a hundred sockets, and this
        # runs for every command
        found = []
        folders: dict[str, str] = {}
        for socket in _host_sockets():
            parent, name = os.path.split(socket)
            folder = folders.get(parent)
            if folder is None:
                folder = folders[parent] = os.path.realpath(parent)
            real = os.path.join(folder, name)
            if real in allowed or _within(real, covered):
                continue
            if _within(real, ["/tmp/"]) and not _within(real, seen_in):
                continue
            found.append(real)
        return [Path(p) for p in dict.fromkeys(found)]

    def arguments(
        self,
        argv: list[str],
        workdir: Path,
        private_tmp: Path | None,
        proxy: Path | None = None,
        holder: _Holder | None = None,
        made: Protection | None = None,
        locale: Mapping[str, str] | None = None,
    ) -> list[str]:
        """The bwrap command line running ``argv`` in ``workdir``; mounts in order, later
        over earlier. /tmp: the ``holder``'s tmpfs (a session's, kept between commands),
        else ``private_tmp`` bound in, else (None) a tmpfs of ``tmp_size`` for this command.
        ``proxy``: the allowed-hosts proxy's socket, bound into /tmp, and ``argv`` started
        behind the forwarder. ``made``: the protection ``command`` worked out already.
        ``locale``: the command's locale variables, set by bwrap (``--setenv``) rather than
        passed in the environment: bwrap (and nsenter, where it does the hop) then starts
        in the C locale and reads no locale files (0.3-0.5 ms a program here, for every
        command)."""
        bwrap = self.program("bwrap") or "/usr/bin/bwrap"
        # no network: the session's (its holder's: loopback only), else the command's own
        # (the allowed-hosts forwarder listens on a fixed port: one each)
        shared = bool(holder and holder.net and not self.settings.network and proxy is None)
        args = [*(holder.enter(shared) if holder else []), bwrap, *_identity(holder is not None)]
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
        if _under_tmp(self.home) and self.home.is_dir():  # the private /tmp covered it
            args += ["--ro-bind", home, home]  # (elsewhere --ro-bind / / has it read-only)
        exposed = self.home_exposed
        writable = [] if exposed else [self.worktree]
        writable += [_expand(p, self.home) for p in self.settings.allow_write]
        for place in writable:
            if place.is_dir():
                args += ["--bind", str(place), str(place)]
        git = self.worktree / ".git"
        if not exposed and git.is_dir() and not git.is_symlink():  # cannot be renamed away
            args += ["--bind", str(git), str(git)]
        seen = self._seen()  # resolved once for both
        hidden = self.hidden(seen)
        empty = empty_folder()

        def blank(place: Path) -> list[str]:  # an empty read-only folder there
            if empty is None:
                return ["--tmpfs", str(place), "--remount-ro", str(place)]
            return ["--ro-bind", empty, str(place)]

        for place in hidden:  # after the writable binds, so none uncovers them
            if place.is_dir():
                args += blank(place)
            else:
                args += ["--ro-bind", "/dev/null", str(place)]
        if not exposed:
            made = made or self.protection()
            for place in made.kept:
                if place.is_symlink() and not place.exists():
                    continue  # a dangling link: nothing there to protect (links_kept keeps it)
                args += ["--ro-bind", str(place), str(place)]
            for place in made.stand_ins:  # an empty read-only folder keeps it from being made
                args += blank(place)
        for place in self.masked_sockets(hidden, seen):  # connect() finds no server there
            args += ["--ro-bind", "/dev/null", str(place)]
        if not self.settings.network and not shared:
            args.append("--unshare-net")
        args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent"]
        for name, value in (locale or {}).items():
            args += ["--setenv", name, value]
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

        def wrapped(
            private_tmp: Path | None, proxy: Path | None, holder: _Holder | None = None
        ) -> tuple[list[str], dict[str, str]]:
            env = self.env(environ)
            locale = {name: env.pop(name) for name in LOCALE if name in env}
            args = self.arguments(argv, workdir, private_tmp, proxy, holder, made, locale)
            return args, env

        with (
            _placeholders(self.worktree, made.stand_ins, self.tmp),
            links_kept(made.kept, self.restored),
            made_kept(made.watched, self.worktree, self.restored),
        ):
            if self.tmp is not None:
                self.tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
                _hold(self.tmp)
                holder = _holder(self.tmp, self.settings.tmp_size, self.program)
                proxy = self._proxy(self.tmp)  # kept for the session: stop_proxy
                if holder is not None:  # a tmpfs of tmp_size: the kernel holds the line
                    yield wrapped(None, proxy, holder)
                    return
                self._within_size(self.tmp, before=True)  # no tmpfs here: measured
                args, env = wrapped(self.tmp, proxy)
                with self._size_guard(self.tmp, args):
                    yield args, env
                return
            private = Path(tempfile.mkdtemp(prefix="tui-agent-sandbox-"))  # the proxy's
            try:
                proxy = self._proxy(private)
                if _bwrap_has("--size", self.program("bwrap") or "/usr/bin/bwrap"):
                    yield wrapped(None, proxy)  # a tmpfs of tmp_size for this command
                    return
                args, env = wrapped(private, proxy)  # bwrap < 0.6
                with self._size_guard(private, args):
                    yield args, env
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
