"""Which files a search looks at: ignore files read as ripgrep reads them, and a walk of
a folder that follows them (the Python engine; ripgrep and ``git ls-files`` do the same
natively and must agree with it).

The rules, the same inside and outside a git repository:

- ``.gitignore``, ``.ignore`` and ``.rgignore`` files apply to their folder and every
  folder below it; those in the folders above the searched one apply too (``.gitignore``
  only up to the top of the repository, when there is one). ``.git/info/exclude`` applies
  to its repository. The user's global excludes file does not (results do not depend on
  whose machine runs the agent).
- Pattern syntax is git's: ``#`` comments, ``!`` negation, ``dir/`` for folders only,
  ``/x`` and ``a/b`` anchored to the ignore file's folder, ``*``, ``?``, ``[a-z]``, ``**/``,
  ``/**``, ``/**/``, ``\\`` escapes. Within one file the last matching line wins; of two
  files of one kind the deeper one wins; ``.rgignore`` beats ``.ignore`` beats
  ``.gitignore`` beats ``info/exclude``. A folder that is ignored is not entered (nothing
  inside it can be taken back with ``!``).
- ``.git`` (folder or file) is never listed; ``node_modules``, ``__pycache__``, ``.venv``,
  ``venv``, ``.mypy_cache`` and ``.ruff_cache`` folders are skipped below the searched
  folder (searching inside one, by naming it, works).
- Hidden files are included; symlinks are neither listed nor followed (a link's target
  is found where it lies in the tree, never outside it); only regular files are listed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".ruff_cache"}
)
KINDS = (".rgignore", ".ignore", ".gitignore")  # strongest first


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


class RuleFile:
    """The rules of one ignore file, matched against paths relative to its folder."""

    def __init__(self, text: str) -> None:
        self.rules: list[Rule] = []
        for raw in text.split("\n"):
            rule = _parse(raw.removesuffix("\r"))
            if rule is not None:
                self.rules.append(rule)
        self.rules.reverse()  # the last matching line decides
        joined = "|".join(f"(?:{r.regex.pattern})" for r in self.rules)
        self.any = re.compile(joined, re.DOTALL) if self.rules else None
        self.negates = any(r.negated for r in self.rules)

    def match(self, relative: str, is_dir: bool) -> bool | None:
        """True: ignored, False: taken back by ``!``, None: no rule says."""
        if self.any is None or self.any.fullmatch(relative) is None:
            return None
        for rule in self.rules:
            if (is_dir or not rule.dir_only) and rule.regex.fullmatch(relative):
                return not rule.negated
        return None


def _parse(line: str) -> Rule | None:
    if not line or line.startswith("#"):
        return None
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    body = glob_to_regex(line)
    pattern = body if anchored else "(?:.*/)?" + body
    return Rule(re.compile(pattern, re.DOTALL), negated, dir_only)


def glob_to_regex(glob: str) -> str:
    """A gitignore glob as a regular expression over ``/``-separated paths."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if char == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            at_start = i == 0 or glob[i - 1] == "/"
            if j - i == 2 and at_start and j == n:
                out.append(".*")
            elif j - i == 2 and at_start and glob[j] == "/":
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append("[^/]*")
            i = j
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end, text = glob_class(glob, i)
            out.append(text)
            i = end
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def glob_class(glob: str, start: int) -> tuple[int, str]:
    """``[...]`` at ``start``: (index after it, regex); a ``[`` never closed is literal, a
    range the wrong way round (``[z-a]``) holds nothing."""
    i = start + 1
    negated = i < len(glob) and glob[i] in "!^"
    if negated:
        i += 1
    chars: list[str] = []
    ranges: list[tuple[str, str]] = []
    first = True
    while i < len(glob):
        char = glob[i]
        if char == "]" and not first:
            body = "".join(re.escape(c) for c in chars)
            body += "".join(f"{re.escape(a)}-{re.escape(b)}" for a, b in ranges if a <= b)
            if negated:
                return i + 1, f"[^/{body}]"
            return i + 1, f"[{body}]" if body else "(?!)"
        first = False
        if char == "\\" and i + 1 < len(glob):
            i += 1
            char = glob[i]
        if char == "-" and chars and i + 1 < len(glob) and glob[i + 1] != "]":
            high = glob[i + 1]
            if high == "\\" and i + 2 < len(glob):
                i += 1
                high = glob[i + 1]
            ranges.append((chars.pop(), high))
            i += 2
            continue
        chars.append(char)
        i += 1
    return start + 1, re.escape("[")


Plan = tuple[RuleFile, str]  # a rule file and the judged folder's path relative to it


@dataclass
class Level:
    """The ignore files of one folder (``path`` absolute, no trailing ``/`` but for ``/``)."""

    path: str
    kinds: dict[str, RuleFile] = field(default_factory=dict)
    exclude: RuleFile | None = None  # .git/info/exclude, in a repository's top folder
    has_git: bool = False

    def relative(self, path: str) -> str:
        return path[len(self.path) + (0 if self.path.endswith("/") else 1) :]

    def useful(self) -> bool:
        return bool(self.kinds) or self.exclude is not None or self.has_git


def _read(path: str) -> RuleFile | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return RuleFile(handle.read())
    except OSError:
        return None


def _exclude_file(git: str) -> str:
    """``info/exclude`` of the repository whose ``.git`` is at ``git`` (a folder, or a
    file pointing at one, as in linked worktrees and submodules)."""
    if os.path.isfile(git):
        try:
            with open(git, encoding="utf-8") as handle:
                line = handle.readline().strip()
        except OSError:
            return ""
        if not line.startswith("gitdir:"):
            return ""
        git = os.path.join(os.path.dirname(git), line.removeprefix("gitdir:").strip())
        try:
            with open(os.path.join(git, "commondir"), encoding="utf-8") as handle:
                git = os.path.join(git, handle.read().strip())
        except OSError:
            pass
    return os.path.join(git, "info", "exclude")


def level_of(folder: str, names: set[str] | None = None) -> Level:
    """The ignore files of ``folder``; ``names`` (the folder's entries), when known,
    saves looking for files that are not there."""
    level = Level(folder)
    for kind in KINDS:
        if names is None or kind in names:
            rules = _read(os.path.join(folder, kind))
            if rules is not None and rules.rules:
                level.kinds[kind] = rules
    git = os.path.join(folder, ".git")
    if (".git" in names) if names is not None else os.path.lexists(git):
        level.has_git = True
        exclude = _read(_exclude_file(git))
        if exclude is not None and exclude.rules:
            level.exclude = exclude
    return level


def parent_levels(folder: Path) -> list[Level]:
    """The folders above ``folder`` up to ``/``, nearest first, those with anything to say."""
    levels: list[Level] = []
    current = os.path.abspath(folder)
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return levels
        level = level_of(parent)
        if level.useful():
            levels.append(level)
        current = parent


def plan(chain: list[Level], folder: str, kinds: tuple[str, ...] = KINDS) -> list[Plan]:
    """The rule files that judge the entries of ``folder`` (absolute), strongest first,
    each with the folder's path relative to the rule file's own: by kind (``.rgignore``,
    ``.ignore``, ``.gitignore``, then ``info/exclude``), deeper first within a kind,
    ``.gitignore`` and ``info/exclude`` only up to the nearest folder holding ``.git``.
    ``chain`` is the folder's level first, then each folder above."""
    by_kind: dict[str, list[Plan]] = {kind: [] for kind in KINDS}
    exclude: list[Plan] = []
    saw_git = False
    for level in chain:
        prefix = "" if folder == level.path else level.relative(folder) + "/"
        for kind, rules in level.kinds.items():
            if kind in kinds and not (kind == ".gitignore" and saw_git):
                by_kind[kind].append((rules, prefix))
        if level.exclude is not None and not saw_git and ".gitignore" in kinds:
            exclude.append((level.exclude, prefix))
        saw_git = saw_git or level.has_git
    return [*by_kind[".rgignore"], *by_kind[".ignore"], *by_kind[".gitignore"], *exclude[:1]]


def ignored(rules: list[Plan], name: str, is_dir: bool) -> bool:
    """Whether the entry ``name`` of a folder is ignored by the folder's ``plan``: the
    first rule file with a verdict decides (ripgrep's precedence)."""
    for rule_file, prefix in rules:
        verdict = rule_file.match(prefix + name, is_dir)
        if verdict is not None:
            return verdict
    return False


def decide(chain: list[Level], path: str, is_dir: bool, kinds: tuple[str, ...] = KINDS) -> bool:
    """Whether ``path`` (absolute) is ignored by ``chain`` (the level of its folder first,
    then each folder above)."""
    folder, name = os.path.split(path)
    return ignored(plan(chain, folder, kinds), name, is_dir)


def walk(root: Path) -> list[str]:
    """Regular files under ``root`` that no rule hides, relative and ``/``-separated,
    in no particular order."""
    top = os.path.abspath(root)
    found: list[str] = []
    stack: list[tuple[str, str, list[Level]]] = [(top, "", parent_levels(root))]
    while stack:
        folder, prefix, above = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        level = level_of(folder, {e.name for e in entries})
        chain = [level, *above] if level.useful() else above
        rules = plan(chain, folder)
        for entry in entries:
            name = entry.name
            if name == ".git":
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name in SKIP_DIRS or (rules and ignored(rules, name, True)):
                        continue
                    stack.append((entry.path, prefix + name + "/", chain))
                elif entry.is_file(follow_symlinks=False):
                    if not rules or not ignored(rules, name, False):
                        found.append(prefix + name)
            except OSError:
                continue
    return found
