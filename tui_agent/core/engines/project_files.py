"""The project's files for the prompt's ``@`` picker: listed once, kept a few seconds, and
ranked by a fuzzy match as the user types.

Inside a git repository the list is git's (``git ls-files --cached --others
--exclude-standard``: tracked files and untracked ones that no ignore rule hides), which
takes a few tens of milliseconds for 10,000 files. Elsewhere a walk of the folder honours
``.gitignore`` files minimally (names and simple paths; ``!`` exceptions are not undone)
and skips the usual bulky folders; it stops at ``WALK_CAP`` files, so a session started in
a home folder still opens its picker quickly.
"""

from __future__ import annotations

import fnmatch
import heapq
import os
import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from ..util import safe_git

SKIP_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".tox"}
)
WALK_CAP = 20_000
TTL = 5.0  # seconds a listing is used again when the picker opens
GIT_TIMEOUT = 10.0


def in_git(worktree: Path) -> bool:
    """``worktree`` is a git repository's top (``.git`` is a folder, or a file in a linked
    worktree or submodule)."""
    return (worktree / ".git").exists()


def git_files(folder: Path) -> list[str] | None:
    """The files git would show under ``folder`` (relative to it, ``/``-separated), or None
    when git cannot say (not installed, not a repository, too slow). git runs with
    safe_git's hardening: the repository's config (``core.fsmonitor``…) runs nothing."""
    git = safe_git.executable("git", folder)
    if git is None:
        return None
    try:
        done = subprocess.run(
            safe_git.argv(git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"),
            cwd=folder,
            env=safe_git.environment(near=folder),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    names = done.stdout.decode("utf-8", errors="replace").split("\0")
    return list(dict.fromkeys(name for name in names if name))  # unmerged paths repeat


class _Ignore:
    """The rules of one ``.gitignore``, matched against paths relative to its folder."""

    def __init__(self, text: str) -> None:
        self.names: list[tuple[str, bool]] = []  # (pattern, folders only)
        self.paths: list[tuple[str, bool]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", "!")):
                continue
            only_dirs = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            if "/" in line:
                self.paths.append((line.lstrip("/").removeprefix("**/"), only_dirs))
            else:
                self.names.append((line, only_dirs))

    def ignores(self, relative: str, name: str, is_dir: bool) -> bool:
        for pattern, only_dirs in self.names:
            if (is_dir or not only_dirs) and fnmatch.fnmatchcase(name, pattern):
                return True
        for pattern, only_dirs in self.paths:
            if (is_dir or not only_dirs) and fnmatch.fnmatchcase(relative, pattern):
                return True
        return False


def _read_ignore(folder: Path) -> _Ignore | None:
    try:
        return _Ignore((folder / ".gitignore").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def _ignored(path: str, is_dir: bool, active: list[tuple[str, _Ignore]]) -> bool:
    """``path`` (relative to the walk's top) is ignored by a rule in force: each rule
    sees the path relative to the folder of its ``.gitignore``."""
    name = path.rsplit("/", 1)[-1]
    return any(
        rule.ignores(path[len(base) :], name, is_dir)
        for base, rule in active
        if path.startswith(base)
    )


def walk_files(folder: Path, cap: int = WALK_CAP) -> tuple[list[str], bool]:
    """Files under ``folder`` (relative, ``/``-separated) outside git: ``.gitignore`` files
    honoured minimally, ``SKIP_DIRS`` skipped, symlinked folders not followed; at most
    ``cap`` files. Returns the files and whether the walk stopped at the cap."""
    found: list[str] = []
    rules: dict[str, list[tuple[str, _Ignore]]] = {}  # folder -> (its path, rules) in force
    for current, dirs, names in os.walk(folder):
        here = Path(current)
        relative = here.relative_to(folder).as_posix()
        prefix = "" if relative == "." else relative + "/"
        active = rules.pop(current, [])
        own = _read_ignore(here)
        if own is not None:
            active = [*active, (prefix, own)]
        dirs[:] = sorted(
            d for d in dirs if d not in SKIP_DIRS and not _ignored(prefix + d, True, active)
        )
        for d in dirs:
            rules[os.path.join(current, d)] = active
        for name in sorted(names):
            if _ignored(prefix + name, False, active):
                continue
            found.append(prefix + name)
            if len(found) >= cap:
                return found, True
    return found, False


def with_folders(files: Sequence[str]) -> list[str]:
    """``files`` and every folder above them (``src/``, ``src/ui/``): the picker offers
    folders too (a folder attaches its listing)."""
    folders: dict[str, None] = {}
    for name in files:
        cut = name.rfind("/")
        while cut > 0:
            folder = name[: cut + 1]
            if folder in folders:
                break
            folders[folder] = None
            cut = name.rfind("/", 0, cut)
    return [*files, *folders]


class ProjectFiles:
    """The files and folders under ``directory`` the picker offers, relative to it, listed
    at most once per ``ttl`` seconds (``files(fresh=False)`` takes the last listing
    whatever its age: the picker lists once when it opens, not on every key)."""

    def __init__(self, directory: Path, worktree: Path, ttl: float = TTL) -> None:
        self.directory = directory
        self.worktree = worktree
        self.ttl = ttl
        self.capped = False  # the last walk stopped at WALK_CAP files
        self._listed: list[str] | None = None
        self._at = 0.0

    def files(self, fresh: bool = True) -> list[str]:
        now = time.monotonic()
        if self._listed is not None and (not fresh or now - self._at < self.ttl):
            return self._listed
        listed = git_files(self.directory) if in_git(self.worktree) else None
        if listed is None:
            listed, self.capped = walk_files(self.directory)
        self._listed, self._at = with_folders(listed), now
        return self._listed


def rank(query: str, paths: Sequence[str], limit: int = 50) -> list[str]:
    """The ``limit`` best of ``paths`` for ``query``, best first: the query's characters
    must appear in order (a subsequence, case ignored). Matches in the file's own name
    come before matches across its folders (an exact name, then a name starting with the
    query, containing it, holding its letters in order), and within each kind shorter
    paths come first. A query with a ``/`` is matched against the whole path. An empty
    query gives the top of the tree, shallow and short paths first."""
    if not query:
        return heapq.nsmallest(limit, paths, key=lambda p: (p.rstrip("/").count("/"), len(p), p))
    q = query.lower()
    pattern = re.compile(".*?".join(map(re.escape, q)), re.IGNORECASE)
    whole_path = "/" in q.rstrip("/")
    scored: list[tuple[int, int, str]] = []
    for path in paths:
        if pattern.search(path) is None:
            continue
        lower = path.lower()
        tier = 9
        if not whole_path:
            name = lower.rstrip("/").rsplit("/", 1)[-1]
            if name == q.rstrip("/") or name.rsplit(".", 1)[0] == q:
                tier = 0
            elif name.startswith(q):
                tier = 1
            elif q in name:
                tier = 2
            elif pattern.search(name) is not None:
                tier = 3
        if tier == 9:
            if lower.startswith(q):
                tier = 4
            elif q in lower:
                tier = 5
            else:
                tier = 6
        scored.append((tier, len(path), path))
    return [path for _, _, path in heapq.nsmallest(limit, scored)]
