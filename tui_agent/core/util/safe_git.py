"""git as tui-agent runs it itself (search engines, the ``@`` picker, checkpoints, the
``git`` tool): with config and an environment under which no repository can make git
run a program.

Why: a sandboxed command can write a nested repository's config, a ``.git/commondir``
pointing at a folder of its own, a ``.git`` file pointing elsewhere, an ``include.path``;
git outside the sandbox then reads that config. Measured with git 2.39 (the keys that ran
a program for one of our commands): ``core.fsmonitor`` (every command that reads the
index: ``ls-files``, ``status``, ``diff``, ``add``…), hooks (``post-index-change``,
``reference-transaction``, ``post-checkout``), ``filter.<x>.clean/smudge/process`` with a
``.gitattributes`` line, ``diff.external``, ``diff.<x>.command/textconv``,
``merge.<x>.driver``, ``gpg.program`` with ``log.showSignature``, ``core.editor``
(``add -e``; with none set, the default ``vi`` waited for the timeout), a promisor remote's
``ext::`` URL (a lazy fetch), and a submodule's own config (``status``, ``diff``, ``add``,
``stash`` and ``checkout`` run git inside it).

- ``OPTIONS``: ``-c`` overrides on the command line, which win over every config file and
  include, and which git hands down to the git it starts in a submodule.
- ``environment()``: no inherited ``GIT_*`` variable (``GIT_DIR``, ``GIT_EXTERNAL_DIFF``,
  ``GIT_SSH_COMMAND``, ``GIT_ASKPASS``…) but those named; no prompt, no optional locks, no
  pager or editor, and no transport at all (``GIT_ALLOW_PROTOCOL`` empty: a repository's
  ``protocol.ext.allow`` would beat ``protocol.allow=never``); PATH without its folders
  inside the worktree.
- ``driver_overrides()``: the drivers a repository's own config names (``filter.<x>``,
  ``diff.<x>``, ``merge.<x>``; scope local or worktree, includes and redirections
  followed), emptied through ``GIT_CONFIG_COUNT`` (names may hold ``=``), for the
  repository and every repository checked out in it as a gitlink. The user's global and
  system drivers (git-lfs) stay.
- ``executable()``: git (or ripgrep) from PATH, but never from inside the worktree (a
  virtualenv's ``bin`` on PATH is writable from the sandbox).

An include cannot be turned off, nor can the ``.git/commondir`` or ``.git`` file a git
follows: what they bring is config like any other, and the ``-c`` overrides beat it.

``--no-ext-diff --no-textconv`` still go after ``diff``/``log``/``show`` (``DIFF_OPTIONS``):
an empty ``diff.<x>.textconv`` makes git fail instead of running nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

# (key, value) given with -c to every git we start; each stops one way to run a program
CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),  # "cat": git starts no pager at all
    ("core.editor", ":"),  # ":": git starts no editor
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty value clears the list
    ("diff.external", ""),  # git cannot run "" (it fails); --no-ext-diff skips it
    ("interactive.diffFilter", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("log.showSignature", "false"),
    ("commit.gpgSign", "false"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),  # a bare repository in a subfolder is not found
)
OPTIONS: tuple[str, ...] = tuple(arg for key, value in CONFIG for arg in ("-c", f"{key}={value}"))
# for the subcommands that take them (diff, log, show)
DIFF_OPTIONS: tuple[str, ...] = ("--no-ext-diff", "--no-textconv")
# set for every git we start
ENVIRONMENT: Mapping[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_ASKPASS": "",
    "GIT_ALLOW_PROTOCOL": "",  # no transport: not file, not ext::, not ssh
    "GIT_NO_LAZY_FETCH": "1",  # git 2.44+: no promisor fetch either
}
# inherited GIT_* variables that only name who commits or which user config to read
USER_VARIABLES = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
)
# config names (section, key) of drivers a repository defines under a name of its own
DRIVER_KEYS = frozenset(
    {
        ("filter", "clean"),
        ("filter", "smudge"),
        ("filter", "process"),
        ("diff", "command"),
        ("diff", "textconv"),
        ("merge", "driver"),
        ("hook", "command"),  # config-based hooks of newer git
    }
)
# where a sandboxed command can write config: the repository's (and its includes'), not
# the user's global or system config (its git-lfs filter keeps working)
REPOSITORY_SCOPES = frozenset({"local", "worktree"})
TIMEOUT = 10.0
MAX_DEPTH = 4  # gitlinks inside gitlinks followed for driver_overrides


def environment(
    base: Mapping[str, str] | None = None,
    keep: Iterable[str] = (),
    near: Path | None = None,
    **extra: str,
) -> dict[str, str]:
    """``base`` (the agent's environment) without ``GIT_*`` variables but those in
    ``keep``, with ``ENVIRONMENT`` and ``extra`` set. With ``near``, PATH loses its
    folders inside the worktree around it (see ``executable``): a program git runs by
    name (the user's own git-lfs filter, ssh) is never one a sandboxed command put there."""
    kept = set(keep)
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("GIT_") or k in kept}
    if near is not None and "PATH" in env:
        env["PATH"] = os.pathsep.join(_outside_path(env["PATH"], _worktree_tops(near)))
    env.update(ENVIRONMENT)
    env.update(extra)
    return env


def with_config(env: Mapping[str, str], pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``env`` with ``pairs`` as config (``GIT_CONFIG_COUNT``/``_KEY_n``/``_VALUE_n``):
    over the repository's own, under ``-c``, handed down to git in submodules."""
    out = dict(env)
    for n, (key, value) in enumerate(pairs):
        out[f"GIT_CONFIG_KEY_{n}"] = key
        out[f"GIT_CONFIG_VALUE_{n}"] = value
    if pairs:
        out["GIT_CONFIG_COUNT"] = str(len(pairs))
    return out


def argv(git: str, *args: str) -> list[str]:
    """``git`` with the hardening options, then ``args``."""
    return [git, *OPTIONS, *args]


def _inside(folder: str, tops: Sequence[str]) -> bool:
    return any(folder == top or folder.startswith(top + os.sep) for top in tops)


def _worktree_tops(near: Path) -> list[str]:
    """``near`` and each folder above it holding ``.git`` (a PATH entry under one can be
    written from the sandbox), but neither HOME nor a folder above it (a dotfiles
    repository would rule out ``~/.local/bin``)."""
    here = Path(os.path.abspath(near))
    home = Path(os.path.abspath(os.path.expanduser("~")))
    tops = [here]
    for folder in here.parents:
        if folder == home or home.is_relative_to(folder):
            break
        if os.path.lexists(folder / ".git"):
            tops.append(folder)
    return [os.path.realpath(top) for top in tops]


def _outside_path(path: str, tops: Sequence[str]) -> list[str]:
    """PATH's folders but relative ones (they mean the current folder) and those inside
    one of ``tops``."""
    return [
        entry
        for entry in path.split(os.pathsep)
        if entry and os.path.isabs(entry) and not _inside(os.path.realpath(entry), tops)
    ]


def executable(name: str = "git", near: Path | None = None) -> str | None:
    """``name`` from PATH, skipping relative entries and those inside ``near`` or a
    repository around it (a virtualenv's ``bin`` in the project is on PATH once it is
    activated, and a sandboxed command can write there)."""
    tops = _worktree_tops(near) if near is not None else []
    folders = _outside_path(os.environ.get("PATH", os.defpath), tops)
    return shutil.which(name, path=os.pathsep.join(folders)) if folders else None


def _run(git: str, args: Sequence[str], cwd: Path, env: Mapping[str, str]) -> bytes | None:
    try:
        done = subprocess.run(
            argv(git, *args),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _driver_names(out: bytes) -> list[str]:
    """The driver keys set in the repository's own config, from ``git config --list
    --show-scope --name-only -z`` (``scope NUL name NUL`` pairs)."""
    fields = out.split(b"\0")
    found = []
    for scope, raw in zip(fields[::2], fields[1::2], strict=False):
        name = raw.decode("utf-8", "surrogateescape")
        section, _, rest = name.partition(".")
        subsection, _, key = rest.rpartition(".")
        if (
            scope.decode() in REPOSITORY_SCOPES
            and subsection
            and (section.lower(), key.lower()) in DRIVER_KEYS
        ):
            found.append(name)
    return found


def driver_overrides(
    git: str, folder: Path, env: Mapping[str, str], gitlinks: bool = True
) -> list[tuple[str, str]]:
    """Every driver key set in the config of the repository at ``folder`` (its own
    files, includes and redirections followed, as git reads them; the user's global and
    system config are theirs) and, with ``gitlinks``, for the
    repositories checked out in its gitlinks (submodules, embedded repositories: git runs
    git there for ``status``, ``diff``, ``add``, ``stash``…), each with an empty value:
    git runs no filter, diff or merge program then (a required filter fails instead)."""
    names: dict[str, None] = {}
    seen: set[str] = set()

    def visit(repo: Path, depth: int) -> None:
        real = os.path.realpath(repo)
        if real in seen:
            return
        seen.add(real)
        listed = _run(git, ["config", "--list", "--show-scope", "--name-only", "-z"], repo, env)
        names.update(dict.fromkeys(_driver_names(listed or b"")))
        if not gitlinks or depth >= MAX_DEPTH:
            return
        staged = _run(git, ["ls-files", "--stage", "-z"], repo, env) or b""
        for entry in staged.split(b"\0"):
            if entry.startswith(b"160000 "):
                path = os.fsdecode(entry.partition(b"\t")[2])
                inner = repo / path
                if os.path.lexists(inner / ".git"):
                    visit(inner, depth + 1)

    visit(folder, 0)
    pairs: list[tuple[str, str]] = []
    for name in names:
        pairs.append((name, ""))
        if name.lower().startswith("filter."):  # an empty filter that is required fails
            pairs.append((name.rpartition(".")[0] + ".required", "false"))
    return list(dict.fromkeys(pairs))
