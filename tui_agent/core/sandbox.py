"""Shell commands in a bubblewrap sandbox (Linux): the ``[sandbox]`` settings, whether
bwrap works here, and the ``bwrap`` command line that wraps ``bash -c``.

Why: the approval dialog alone is a thin wall. A prompt-injected model that gets one
command approved could read the provider's API key from the environment and send it
anywhere, or write outside the project. Inside the sandbox:

- the whole filesystem is read-only, HOME included; the worktree, a private ``/tmp``
  (the session's own folder under the user cache, ``sandbox-tmp/SESSION``, kept between
  its commands and removed when it closes) and ``allow_write`` folders are writable;
- inside the worktree the files that decide what runs stay read-only: ``.git/hooks``,
  ``.git/config``, ``.tui-agent/``, ``.agents/``, and ``.claude/`` and ``.opencode/``
  (their commands and hooks load in a trusted folder), and ``core.hooksPath`` inside the
  worktree; ``.git`` is a mount point (cannot be renamed away), read-only if a file;
  those not there yet (``.git`` too) get an empty read-only folder in their place, so a
  command cannot make them (removed by the last command on the worktree: ``_placeholders``);
- credential folders (``~/.ssh``, ``~/.aws``, ``~/.config/gcloud``, ``~/.gnupg``,
  tui-agent's config folder, ``hide = [...]``) are hidden behind an empty read-only
  folder (a file behind ``/dev/null``), where they really are, after the writable binds
  (so a worktree in HOME does not uncover them); so are host sockets that hand out more
  (``/run/user/UID``, Docker's, the ssh agent's);
- a ``workdir`` under the real /tmp outside the worktree is refused (``unseen``): none
  of the real /tmp is bound in;
- the environment loses the provider's API key (by value, whatever its name) and every
  variable named like ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, and
  ``SSH_AUTH_SOCK`` (``scrub_env = [...]`` adds patterns);
- no network unless ``network = true`` (a network namespace with only loopback, which is
  the sandbox's own: the host's 127.0.0.1 is not reachable either); ``network = ["pypi.org",
  "*.github.com"]`` lets http(s) reach those hosts only, through a proxy outside the
  sandbox (``core/netproxy.py``);
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
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import netproxy, paths

log = logging.getLogger("tui_agent.sandbox")

# folders under HOME that hold credentials: hidden inside the sandbox
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
)
# environment variable names (fnmatch, case-insensitive) never passed to a sandboxed command
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
# host sockets that hand out more than the sandbox allows (a user's systemd and D-Bus,
# Docker): hidden, with the ssh agent's socket (SSH_AUTH_SOCK)
HOST_SOCKETS = ("/run/user/{uid}", "/run/docker.sock", "/var/run/docker.sock", "/run/podman")
# inside the worktree: what decides what runs next (git hooks, our config and plugins);
# .git itself cannot be renamed or replaced either (a mount point; read-only if a file,
# as in a linked worktree; a stand-in if missing), and core.hooksPath is protected too
PROTECTED = (".git/hooks", ".git/config", ".tui-agent", ".agents", ".claude", ".opencode")
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.I | re.M)
KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "enabled": (bool, "true or false"),
    "network": ((bool, list), "true, false or a list of hosts"),
    "auto_allow": (bool, "true or false"),
    "allow_write": (list, "a list of folders"),
    "hide": (list, "a list of paths"),
    "scrub_env": (list, "a list of variable name patterns"),
}
# output that says the sandbox got in the way (checked only when the command failed)
_CAUSES = (
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

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> Settings:
        table = settings.get("sandbox")
        table = table if isinstance(table, Mapping) and not problems(table) else {}
        return cls(
            enabled=bool(table.get("enabled", DEFAULT_ENABLED)),
            network=table.get("network", False) is True,
            hosts=tuple(net) if isinstance(net := table.get("network"), list) else (),
            auto_allow=bool(table.get("auto_allow", True)),
            allow_write=tuple(table.get("allow_write", ())),
            hide=tuple(table.get("hide", ())),
            scrub_env=tuple(table.get("scrub_env", ())),
        )


def problems(table: Any) -> list[str]:
    """What is wrong with a ``[sandbox]`` table, said as config problems."""
    if not isinstance(table, Mapping):
        return ["sandbox must be a table ([sandbox])"]
    found = []
    for key, value in table.items():
        rule = KEYS.get(key)
        if rule is None:
            found.append(f"sandbox.{key} is not a sandbox setting ({', '.join(KEYS)})")
        elif not isinstance(value, rule[0]) or (
            isinstance(value, list) and not all(isinstance(item, str) and item for item in value)
        ):
            found.append(f"sandbox.{key} must be {rule[1]}")
    return found


_AVAILABILITY: dict[str, str | None] = {}


def availability() -> str | None:
    """None when bwrap runs here, else why not (tried once per process: ~5 ms)."""
    if sys.platform == "darwin":
        return "macOS: the Seatbelt sandbox is not built yet"
    if not sys.platform.startswith("linux"):
        return f"no sandbox on {sys.platform}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if bwrap not in _AVAILABILITY:
        trial = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        trial += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--", "true"]
        try:
            done = subprocess.run(trial, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _AVAILABILITY[bwrap] = f"bwrap cannot run here: {exc}"
        else:
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            _AVAILABILITY[bwrap] = None if done.returncode == 0 else f"bwrap cannot run here: {why}"
    return _AVAILABILITY[bwrap]


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


def session_tmp(session_id: str) -> Path:
    """Where a session's private /tmp lives: under the user cache, so nothing is left in
    the real /tmp (``Session.close`` removes it)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(paths.APP)) / "sandbox-tmp" / session_id


def _expand(path: str, home: Path) -> Path:
    if path == "~" or path.startswith("~/"):
        return home / path[2:]
    return Path(path)


@dataclass
class Sandbox:
    """The sandbox for one session: ``active`` when enabled and bwrap works; ``reason``
    says why not otherwise. ``command(argv, workdir)`` gives the wrapped command."""

    settings: Settings
    worktree: Path
    secrets: tuple[str, ...] = ()
    reason: str | None = None
    home: Path = field(default_factory=Path.home)
    tmp: Path | None = None  # the session's /tmp (kept between its commands); None: one each
    restored: list[str] = field(default_factory=list)  # protected links put back (_links_kept)

    @classmethod
    def of(cls, settings: Mapping[str, Any], worktree: Path, tmp: Path | None = None) -> Sandbox:
        """From a session's settings: its provider's key(s) are the secrets."""
        wanted = Settings.of(settings)
        secrets = [settings.get("api_key")]
        models = settings.get("models")
        if isinstance(models, Mapping):
            secrets += [t.get("api_key") for t in models.values() if isinstance(t, Mapping)]
        reason = availability() if wanted.enabled else "off in config ([sandbox] enabled)"
        keys = tuple(s for s in secrets if isinstance(s, str) and s)
        return cls(wanted, worktree, keys, reason, tmp=tmp)

    @property
    def active(self) -> bool:
        return self.reason is None

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
        return (
            f"Sandbox: on (bubblewrap) — writes only in the worktree, a private /tmp"
            f"{' and allow_write' if self.settings.allow_write else ''}; {net}; "
            f"secrets and credential folders hidden; {asks}."
        )

    def hidden(self) -> list[Path]:
        """What the command must not see, as real paths (a symlinked ~/.aws is hidden
        where it leads): credential folders, tui-agent's config, host sockets."""
        places = [*DEFAULT_HIDE, *self.settings.hide]
        found = [_expand(p, self.home) for p in places] + [paths.user_config_dir()]
        found += [Path(p.format(uid=os.getuid())) for p in HOST_SOCKETS]
        agent = os.environ.get("SSH_AUTH_SOCK")
        if agent:
            found.append(Path(agent))
        real = [p.resolve() for p in found if p.exists()]  # a dangling link: nothing to hide
        extra = [_expand(p, self.home) for p in self.settings.allow_write]
        seen = [s.resolve() for s in [self.home, self.worktree, *extra]]
        return list(
            dict.fromkeys(  # under the real /tmp and not bound in: not there to hide
                p
                for p in real
                if not p.is_relative_to("/tmp") or any(p.is_relative_to(s) for s in seen)
            )
        )

    def protected(self) -> list[Path]:
        """The worktree's paths that decide what runs: those that exist, and those that
        could be made: a missing ``.git`` (no ``git init`` in the sandbox), ``hooks`` and
        ``config`` in a ``.git`` folder (a ``.git`` file, as in a linked worktree, is
        itself read-only), the config folders, and ``core.hooksPath`` inside the worktree."""
        git = self.worktree / ".git"
        found = []
        if git.is_dir() and not git.is_symlink():
            found += [git / "hooks", git / "config"]
        else:
            found.append(git)
        found += [self.worktree / name for name in PROTECTED if not name.startswith(".git/")]
        hooks = self._hooks_path(git)
        if hooks is not None:
            found.append(hooks)
        return list(dict.fromkeys(found))

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
        extra = [_expand(p, self.home) for p in self.settings.allow_write]
        seen = [self.worktree, self.home, *extra]
        if not real.is_relative_to("/tmp") or any(real.is_relative_to(p.resolve()) for p in seen):
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
        env = scrubbed_env(environ, DEFAULT_SCRUB + self.settings.scrub_env, self.secrets)
        env["TMPDIR"] = "/tmp"
        if self.proxied:
            env |= netproxy.proxy_env()
        return env

    def arguments(
        self, argv: list[str], workdir: Path, private_tmp: Path, proxy: Path | None = None
    ) -> list[str]:
        """The bwrap command line running ``argv`` in ``workdir``; mounts in order, later
        over earlier. ``proxy``: the allowed-hosts proxy's socket, bound into /tmp, and
        ``argv`` started behind the forwarder."""
        bwrap = shutil.which("bwrap") or "bwrap"
        args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--bind", str(private_tmp), "/tmp"]
        if proxy is not None:
            args += ["--bind", str(proxy), netproxy.INSIDE]
            python = netproxy.interpreter()
            if Path(python).is_relative_to("/tmp"):  # hidden by the private /tmp otherwise
                args += ["--ro-bind", sys.base_prefix, sys.base_prefix]
            argv = netproxy.forwarder_argv(python, argv)
        home = str(self.home)
        if self.home.is_dir():  # read-only again: it may sit under the private /tmp
            args += ["--ro-bind", home, home]
        writable = [self.worktree] + [_expand(p, self.home) for p in self.settings.allow_write]
        for place in writable:
            if place.is_dir():
                args += ["--bind", str(place), str(place)]
        git = self.worktree / ".git"
        if git.is_dir() and not git.is_symlink():  # a mount point: cannot be renamed away
            args += ["--bind", str(git), str(git)]
        for place in self.hidden():  # after the writable binds, so none uncovers them
            if place.is_dir():
                args += ["--tmpfs", str(place), "--remount-ro", str(place)]
            else:
                args += ["--ro-bind", "/dev/null", str(place)]
        for place in self.protected():
            if place.is_symlink() and not place.exists():
                continue  # a dangling link: nothing there to protect (_links_kept keeps it)
            if place.exists():
                args += ["--ro-bind", str(place), str(place)]
            else:  # not there yet: an empty read-only folder keeps it from being made
                args += ["--tmpfs", str(place), "--remount-ro", str(place)]
        if not self.settings.network:
            args.append("--unshare-net")
        args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent"]
        args += ["--chdir", str(workdir), "--", *argv]
        return args

    @contextlib.contextmanager
    def command(
        self, argv: list[str], workdir: Path, environ: Mapping[str, str] | None = None
    ) -> Iterator[tuple[list[str], dict[str, str] | None]]:
        """``(argv, env)`` to start: wrapped in bwrap with a scrubbed environment when
        active, else as given (env None: the agent's own). Without a session's ``tmp``
        the private /tmp is made for this command and removed when the block ends."""
        if not self.active:
            yield argv, None
            return
        protected = self.protected()
        missing = [p for p in protected if not p.exists() and not p.is_symlink()]
        with _placeholders(self.worktree, missing), self._links_kept(protected):
            if self.tmp is not None:
                self.tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
                proxy = self._proxy(self.tmp)  # kept for the session: stop_proxy
                yield self.arguments(argv, workdir, self.tmp, proxy), self.env(environ)
                return
            private = Path(tempfile.mkdtemp(prefix="tui-agent-sandbox-"))
            try:
                proxy = self._proxy(private)
                yield self.arguments(argv, workdir, private, proxy), self.env(environ)
            finally:
                netproxy.stop(private)
                shutil.rmtree(private, ignore_errors=True)

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
                        aside = _free_name(place)
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


def _free_name(place: Path) -> Path:
    for n in range(1, 1000):
        aside = place.with_name(f"{place.name}.replaced-in-sandbox-{n}")
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
    """The note added to a failed sandboxed ``execute`` result when the sandbox may be
    why, telling the model about the escape hatch."""
    what = caused(output)
    if what is None:
        return None
    return (
        f"this ran in the sandbox and may have failed because of it ({what}): writes are "
        "allowed only in the worktree and /tmp, there is no network (or only to the hosts "
        "the user allowed), and credentials are hidden. If it must run outside, call "
        "execute again with the same command and "
        '"sandbox": false; the user is asked to approve that.'
    )
