"""Memory files: the instructions a repository (and the user) keep for coding agents.

What is read, in this order (the more specific later, as Codex merges them):

- the user's ``AGENTS.md`` in tui-agent's config folder (``user_config_dir()``);
- in each folder from the git root down to the session's folder (outside git: the
  session's folder and the folders above it, up to the home folder), its ``AGENTS.md``,
  or where it has none its ``CLAUDE.md`` and ``.claude/CLAUDE.md`` (opencode's fallback;
  Claude Code's names), and its ``CLAUDE.local.md`` (personal: it copies nothing, so it
  is read beside an ``AGENTS.md`` too);
- a folder below those (a subfolder of the session's, or elsewhere in the repository)
  once a tool first reads, lists or changes a file in it (``touch``): Claude Code loads
  nested ``CLAUDE.md`` files "when Claude reads files in those subtrees", opencode
  "reading a file or listing a directory loads all AGENTS.md files between that target
  and the workspace".

``@path`` in a file imports another, as Claude Code's ``CLAUDE.md`` imports do: relative
to the file holding it (``~/`` the home folder, ``/`` absolute), not inside Markdown code
spans or code blocks, at most ``MAX_IMPORT_DEPTH`` hops, each file once. An import may
only reach into the repository (or the session's folder) and the user's config folder:
a repository's instructions cannot pull ``~/.ssh`` into the prompt. An imported file
follows the file importing it, under its own heading; a missing or refused one is listed
in ``Loaded.skipped`` (``/memory`` shows why).

Files are plain text, not code: they are read in untrusted folders too, as the other
agents read them. Each is capped at ``MAX_FILE_CHARS``, all of them together at
``MAX_TOTAL_CHARS`` (what passes it is skipped, and said). They are read again when they
change (a cache keyed on size and modification time), so an edit applies from the next
request on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..util import paths

MAX_FILE_CHARS = 64_000  # one file (about 16k tokens)
MAX_TOTAL_CHARS = 192_000  # every file together (about 48k tokens)
MAX_IMPORT_DEPTH = 5  # Claude Code: "a max-depth of 5 hops"

HEADER = (
    "The memory files below (AGENTS.md, CLAUDE.md) are the user's and this repository's "
    "instructions: follow them. Where two disagree, the later (more specific) one wins."
)
AGENTS = "AGENTS.md"
CLAUDE = ("CLAUDE.md", ".claude/CLAUDE.md")  # where a folder has no AGENTS.md
LOCAL = "CLAUDE.local.md"


@dataclass(frozen=True)
class MemoryFile:
    """One file read: ``scope`` is "user", "project" (the git root down to the session's
    folder), "local" (a ``CLAUDE.local.md``), "nested" (added when a tool touched its
    folder) or "import" (``imported_by`` the file holding the ``@path``)."""

    path: Path
    scope: str
    text: str
    imported_by: Path | None = None
    cut: bool = False  # longer than MAX_FILE_CHARS: the start is kept


@dataclass(frozen=True)
class Skipped:
    """A file left out, and why (an import outside the allowed folders, too deep, missing,
    or past the total cap)."""

    path: str
    reason: str
    wanted_by: Path | None = None


@dataclass
class Loaded:
    files: list[MemoryFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


# -- reading one file ------------------------------------------------------------------------

_cache: dict[Path, tuple[int, int, str, bool]] = {}


def read_text(path: Path) -> tuple[str, bool] | None:
    """The file's text (the start of a long one) and whether it was cut; None for a file
    that cannot be read as text. Read again only when its size or time changed."""
    try:
        stat = path.stat()
    except OSError:
        return None
    known = _cache.get(path)
    if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
        return known[2], known[3]
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_CHARS * 4 + 4)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary: not instructions
    text = data.decode("utf-8", errors="replace")
    cut = len(text) > MAX_FILE_CHARS or stat.st_size > len(data)
    text = text[:MAX_FILE_CHARS]
    _cache[path] = (stat.st_mtime_ns, stat.st_size, text, cut)
    return text, cut


# -- imports -----------------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_TRAILING = ".,;:!?)]}>'\"*_"


def _without_code(text: str) -> str:
    """``text`` with its fenced code blocks and inline code spans blanked out: Claude Code
    says "imports are not evaluated inside markdown code spans and code blocks"."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if fence is None and opening is not None:
            fence = opening.group(1)
            kept.append("")
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
            kept.append("")
            continue
        kept.append(re.sub(r"(`+)(?:(?!\1).)+?\1", " ", line))
    return "\n".join(kept)


def imports(text: str) -> list[str]:
    """The ``@path`` imports in ``text``, in order, as written (outside code; a ``@`` that
    starts a word: ``user@example.com`` is no import)."""
    found: list[str] = []
    for match in _IMPORT.finditer(_without_code(text)):
        target = match.group(1).replace("\\ ", " ")
        if target and target not in found:
            found.append(target)
    return found


def _resolve(target: str, holder: Path) -> list[Path]:
    """Where ``@target`` in ``holder`` may point: as written, then with trailing
    punctuation dropped ("see @README.md." ends a sentence)."""
    candidates: list[Path] = []
    text = target
    while text:
        if text.startswith("~/"):
            path = Path.home() / text[2:]
        elif text.startswith("/"):
            path = Path(text)
        else:
            path = holder.parent / text
        candidates.append(path)
        if text[-1] not in _TRAILING:
            break
        text = text.rstrip(_TRAILING)
    return candidates


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


# -- the folders -------------------------------------------------------------------------------


def folders_down(directory: Path, worktree: Path) -> list[Path]:
    """The folders whose memory files apply from the start, the top first: the git root
    down to ``directory``; outside git, ``directory`` and the folders above it up to (not
    including) the home folder or ``/``."""
    if worktree != directory and worktree in directory.parents:
        chain = [directory, *[p for p in directory.parents if worktree in p.parents]]
        return [worktree, *reversed(chain)]
    if worktree != directory or (directory / ".git").exists():
        return [directory]  # the git root itself
    home = Path.home().resolve()
    chain = [directory]
    for parent in directory.parents:
        if parent == home or parent == Path(parent.anchor):
            break
        chain.append(parent)
    return list(reversed(chain))


def folder_files(folder: Path) -> list[tuple[Path, str]]:
    """A folder's memory files and their scope: its ``AGENTS.md``, or where it has none
    its ``CLAUDE.md`` and ``.claude/CLAUDE.md``; then its ``CLAUDE.local.md``."""
    found: list[tuple[Path, str]] = []
    agents = folder / AGENTS
    if agents.is_file():
        found.append((agents, "project"))
    else:
        found += [(folder / name, "project") for name in CLAUDE if (folder / name).is_file()]
    local = folder / LOCAL
    if local.is_file():
        found.append((local, "local"))
    return found


# -- the memory of a workspace ---------------------------------------------------------------


class Memory:
    """The memory files of one workspace (``session.workspace.memory``): ``load()`` reads
    what applies now (the files, and what was skipped), ``prompt()`` is their part of the
    system prompt, ``touch(path)`` adds the folders a tool reached, ``forget()`` drops
    those again (a new conversation)."""

    def __init__(
        self,
        directory: Path,
        worktree: Path,
        user_folder: Callable[[], Path] = paths.user_config_dir,
    ) -> None:
        self.directory = directory
        self.worktree = worktree
        self.user_folder = user_folder
        self.nested: list[Path] = []  # folders added by touch(), in order

    # the folders whose files are read

    @property
    def roots(self) -> list[Path]:
        """Where imports may reach: the repository (or the session's folder, and the
        folders above it that ``folders_down`` reads outside git) and the user's config
        folder."""
        top = folders_down(self.directory, self.worktree)[0]
        return [top, self.worktree, self.directory, self.user_folder()]

    def _start(self) -> list[tuple[Path, str]]:
        found: list[tuple[Path, str]] = []
        user = self.user_folder() / AGENTS
        if user.is_file():
            found.append((user, "user"))
        for folder in folders_down(self.directory, self.worktree):
            found += folder_files(folder)
        return found

    def load(self) -> Loaded:
        """Every memory file that applies now, in prompt order, imports after the file
        holding them; and what was left out."""
        loaded = Loaded()
        seen: set[Path] = set()
        total = 0
        roots = [root.resolve() for root in self.roots]
        nested = [
            (path, "nested" if scope == "project" else scope)
            for folder in self.nested
            for path, scope in folder_files(folder)
        ]

        def add(path: Path, scope: str, by: Path | None, depth: int) -> None:
            nonlocal total
            real = path.resolve()
            if real in seen:
                return
            read = read_text(real)
            if read is None:
                if by is not None:
                    loaded.skipped.append(Skipped(str(path), "not a readable text file", by))
                return
            text, cut = read
            if total + len(text) > MAX_TOTAL_CHARS:
                reason = f"the memory files passed {MAX_TOTAL_CHARS:,} characters"
                loaded.skipped.append(Skipped(str(path), reason, by))
                return
            seen.add(real)
            total += len(text)
            loaded.files.append(MemoryFile(path, scope, text, by, cut))
            for target in imports(text):
                candidates = _resolve(target, path)
                wanted = next((c for c in candidates if c.is_file()), None)
                if wanted is None:
                    if "/" in target or target.rstrip(_TRAILING).endswith(".md"):
                        loaded.skipped.append(Skipped(target, "no such file", path))
                    continue
                if not _inside(wanted.resolve(), roots):
                    loaded.skipped.append(
                        Skipped(
                            target,
                            "outside the repository and the user's config folder",
                            path,
                        )
                    )
                elif depth + 1 > MAX_IMPORT_DEPTH:
                    loaded.skipped.append(
                        Skipped(target, f"more than {MAX_IMPORT_DEPTH} imports deep", path)
                    )
                else:
                    add(wanted, "import", path, depth + 1)

        for path, scope in [*self._start(), *nested]:
            add(path, scope, None, 0)
        return loaded

    def files(self) -> list[MemoryFile]:
        return self.load().files

    def prompt(self) -> str:
        """The memory files' part of the system prompt ("" when there are none)."""
        parts = []
        for file in self.load().files:
            text = file.text.strip()
            if not text:
                continue
            where = f"imported by {self.shown(file.imported_by)}" if file.imported_by else ""
            label = f"{file.path}" + (f" ({where})" if where else "")
            parts.append(f"Instructions from {label}:\n\n{text}")
        if not parts:
            return ""
        return "\n\n".join([HEADER, *parts])

    # nested folders

    def touch(self, path: str | Path) -> list[MemoryFile]:
        """A tool reached ``path`` (a file or folder): the folders from the repository's
        top down to it that have not applied yet are added (their files join the prompt
        from the next request on). Returns the files that now apply (imports included);
        empty when none (a folder outside the repository adds nothing)."""
        target = Path(os.path.expanduser(str(path)))
        if not target.is_absolute():
            target = self.directory / target
        target = Path(os.path.normpath(target))
        folder = target if target.is_dir() else target.parent
        top = folders_down(self.directory, self.worktree)[0]
        if not (folder == top or top in folder.parents):
            return []
        known = {*folders_down(self.directory, self.worktree), *self.nested}
        chain = [folder, *[p for p in folder.parents if top in p.parents]]
        added = [f for f in reversed(chain) if f not in known]
        if not added:
            return []
        before = {file.path for file in self.load().files}
        self.nested += added
        return [file for file in self.load().files if file.path not in before]

    def forget(self) -> None:
        """Drop the folders ``touch`` added (a new conversation starts with none)."""
        self.nested.clear()

    def shown(self, path: Path | None) -> str:
        """``path`` as the user knows it: relative to the repository, ``~`` for the home
        folder, else absolute."""
        if path is None:
            return ""
        top = folders_down(self.directory, self.worktree)[0]
        for base, prefix in ((top, ""), (Path.home(), "~/")):
            try:
                return prefix + path.relative_to(base).as_posix()
            except ValueError:
                continue
        return str(path)
