"""The shared ignore rules, applied where an engine does not: the skipped folders
(``SKIPPED``, ``SKIP_SPECS``), ``.ignore``/``.rgignore`` files git knows nothing of
(``_DotIgnores``), and the git listing that holds to them (``_git_listing``, submodules
included).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .ignore_rules import SKIP_DIRS, Level, decide, level_of, parent_levels
from .search_base import GIT_CONFIG, EngineUnavailable, _environment, _Parallel, git_path, repo_top

# -- the shared rules, applied where an engine does not ------------------------------------


SKIPPED = re.compile(
    "(?:^|[/\0])(?:" + "|".join(map(re.escape, sorted(SKIP_DIRS | {".git"}))) + ")/"
)


# for git: leave the skipped folders below the searched one out (it then does not walk them)
SKIP_SPECS = [f":(exclude,glob)**/{name}/**" for name in sorted(SKIP_DIRS)]


def _skipped(path: str, is_dir: bool = False) -> bool:
    """A path inside a folder skipped by name (never the searched folder itself)."""
    return SKIPPED.search(path + "/" if is_dir else path) is not None


class _DotIgnores:
    """The ``.ignore``/``.rgignore`` files git does not read: those above the searched
    folder and those inside it (found in git's listing), applied to each path."""

    KINDS = (".rgignore", ".ignore")

    def __init__(self, root: Path, listed: Iterable[str]) -> None:
        self.root = os.path.abspath(root)
        self.above = [lv for lv in parent_levels(root) if self._kinds(lv)]
        self.inside: dict[str, Level] = {}
        for path in listed:
            name = path[path.rfind("/") + 1 :]
            if name in self.KINDS:
                folder = path[: -len(name) - 1] if "/" in path else ""
                if folder not in self.inside:
                    absolute = os.path.join(self.root, folder) if folder else self.root
                    level = level_of(absolute)
                    level.kinds.pop(".gitignore", None)
                    level.has_git = False
                    level.exclude = None
                    self.inside[folder] = level

    @classmethod
    def _kinds(cls, level: Level) -> bool:
        return any(kind in level.kinds for kind in cls.KINDS)

    def active(self) -> bool:
        return bool(self.above or self.inside)

    def negates(self) -> bool:
        levels = [*self.above, *self.inside.values()]
        return any(
            rules.negates for lv in levels for kind, rules in lv.kinds.items() if kind in self.KINDS
        )

    def hides(self, path: str, is_dir: bool = False) -> bool:
        parts = path.split("/")
        chain = list(self.above)
        if "" in self.inside:
            chain.insert(0, self.inside[""])
        for depth in range(1, len(parts) + 1):
            sub = "/".join(parts[:depth])
            is_dir = is_dir or depth < len(parts)
            if decide(chain, os.path.join(self.root, sub), is_dir, self.KINDS):
                return True
            if is_dir and sub in self.inside:
                chain.insert(0, self.inside[sub])
        return False


def _git_usable(root: Path) -> Path:
    """The repository's top when the git engine may search ``root``; else raises."""
    git = git_path(root)
    if git is None:
        raise EngineUnavailable("git is not installed")
    top = repo_top(root)
    if top is None:
        raise EngineUnavailable("not inside a git repository")
    root_abs = Path(os.path.abspath(root))
    between = [p for p in (root_abs, *root_abs.parents) if p != top and p.is_relative_to(top)]
    for folder in between:  # git lists nothing inside an ignored folder
        chain = [lv for lv in [level_of(str(folder.parent)), *parent_levels(folder.parent)]]
        if decide(chain, str(folder), True):
            raise EngineUnavailable(f"{folder} is ignored; git would list nothing in it")
    return top


def _submodules(top: Path, root: Path) -> list[str]:
    """Submodule folders under ``root`` (from the top's ``.gitmodules``), relative to it."""
    try:
        text = (top / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    root_abs = Path(os.path.abspath(root))
    for match in re.finditer(r"^\s*path\s*=\s*(.+?)\s*$", text, re.MULTILINE):
        folder = top / match.group(1)
        if folder != root_abs and folder.is_relative_to(root_abs) and folder.is_dir():
            found.append(folder.relative_to(root_abs).as_posix())
    return found


@dataclass
class _GitListing:
    paths: list[str]  # not yet checked on disk (deleted, symlinks, other file types)
    nested: list[str]  # folders holding another repository, relative, to search alone


def _git_listing(root: Path, specs: Sequence[str] = ()) -> _GitListing:
    """git's files under ``root`` by the shared rules, but for the disk check; tracked
    ones narrowed to ``specs`` (pathspecs) when given (the ``.ignore`` files are always
    listed: their rules are needed)."""
    top = _git_usable(root)
    git = git_path(root) or "git"
    env = _environment(root)
    ls = [git, *GIT_CONFIG, "ls-files", "-z", "--exclude-standard"]
    wanted = [*specs, *(f":(glob)**/{kind}" for kind in _DotIgnores.KINDS)] if specs else ["."]
    narrow = ["--", *wanted, *SKIP_SPECS]
    runs = _Parallel()
    if specs:  # untracked files unnarrowed: a repository inside shows as its folder
        tracked = runs.start([*ls, "--cached", *narrow], root, env)
        untracked = runs.start([*ls, "--others", "--", ".", *SKIP_SPECS], root, env)
    else:
        tracked = runs.start([*ls, "--cached", "--others", *narrow], root, env)
    tracked_ignored = runs.start([*ls, "--cached", "--ignored", *narrow], root, env)
    text = runs.wait(tracked).decode("utf-8", errors="surrogateescape")
    if specs:
        text += runs.wait(untracked).decode("utf-8", errors="surrogateescape")
    names = list(dict.fromkeys(text.split("\0")))  # unmerged paths repeat
    hidden = set(runs.wait(tracked_ignored).decode("utf-8", errors="surrogateescape").split("\0"))
    hidden.discard("")
    nested = _submodules(top, root)  # listed as paths
    hidden.update(nested)
    if "/\0" in text:  # repositories inside (not submodules), listed as folders
        inside = [n for n in names if n.endswith("/")]
        nested += [n.rstrip("/") for n in inside]
        hidden.update(inside)
    if hidden:
        names = [n for n in names if n not in hidden]
    if any(f"{name}/" in text for name in (*SKIP_DIRS, ".git")):  # a quick look first
        names = [n for n in names if not _skipped(n)]
    paths = [n for n in names if n]
    dots = _DotIgnores(root, paths if "ignore\0" in text else [])
    if dots.negates():
        raise EngineUnavailable("an .ignore file takes something back with '!'")
    if dots.active():
        paths = [p for p in paths if not dots.hides(p)]
        nested = [p for p in nested if not dots.hides(p, is_dir=True)]
    nested = [n for n in nested if not _skipped(n, is_dir=True) and os.path.isdir(root / n)]
    return _GitListing(paths, nested)
