"""File search for the bundled ``glob``, ``grep`` and ``list`` tools: ripgrep when it is
installed, ``git grep`` (with ``git ls-files``) inside a git repository, Python otherwise,
with the same results from each (tests/test_search_engines.py runs them against each
other). Listing alone (glob, list) goes from ripgrep to Python directly (see LISTERS).

The same results means: the same files (ignore_rules.py says which), the same lines (a
Python ``re`` pattern, rewritten for each engine by regex_dialects.py), the same order
(by path, folder by folder, then by line number) and the same text (decoded as UTF-8 with
replacement characters, cut to ``LINE_CUT`` characters, trailing space removed). A file
is binary, and skipped, when its first 8,000 bytes hold a NUL byte (git's test); every
engine searches all files as text and the binary ones are dropped afterwards, because
ripgrep's own test (a NUL anywhere, found buffer by buffer) cannot be reproduced.

How each engine gets there:

- **ripgrep** (``rg``, from PATH but not inside the worktree: safe_git) lists with
  ``rg --files`` and searches in two passes: ``--count`` over the tree (cheap to read
  however many lines match), then the lines themselves of the first files in order,
  just enough of them for the cap. Flags make it follow the shared rules: ``--hidden``,
  ``--no-require-git`` (ignore files honoured outside git too), ``--no-ignore-global``,
  ``-g '!.git'`` and ``-g '!node_modules/'``…, ``--text``, ``--encoding none``,
  ``--no-config`` (no user ``RIPGREP_CONFIG_PATH``).
- **git** lists with ``git ls-files --cached --others --exclude-standard`` minus tracked
  files an ignore rule matches (ripgrep skips those too), and searches with
  ``git grep --untracked -P`` (PCRE2, UTF-8 and Unicode classes). It is used only where it
  agrees: the searched folder and those between it and the top of the repository are
  not ignored themselves (git would list nothing inside), and no ``.ignore`` file takes
  anything back with ``!`` (git does not read ``.ignore`` files; their rules are applied
  afterwards). Nested repositories and submodules are searched by running it there.
  Every git run has safe_git's config and environment: no repository's config (a nested
  one's, a ``.git/commondir`` or ``.git`` file redirect, an include) runs a program.
- **python** walks the folder (ignore_rules.walk) and matches with ``re``.

A pattern an engine cannot express (lookaround or backreferences for ripgrep's Rust
regex, the verbose flag for PCRE2…) goes to the next engine that can, ending in Python.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ..util import safe_git
from .ignore_rules import SKIP_DIRS, Level, decide, glob_class, level_of, parent_levels, walk
from .regex_dialects import Untranslatable, check, translate

Engine = Literal["rg", "git", "python"]
ENGINES: tuple[Engine, ...] = ("rg", "git", "python")  # grep tries them in this order
# Listing (glob, list) goes from ripgrep straight to the Python walk: once git's listing is
# made to agree (a second ls-files for tracked files an ignore rule matches, a disk check
# for deleted files and symlinks) it was the slower of the two (20,000 files: ~100 ms
# against ~40 ms). It still gives git grep the files it may report.
LISTERS: tuple[Engine, ...] = ("rg", "python")
LINE_CUT = 500  # characters of a matching line shown
BINARY_PROBE = 8000  # bytes looked at for a NUL, as git does
TIMEOUT = 60.0
PREVIEW = 4096  # bytes of a long line ripgrep hands back (LINE_CUT characters fit)


class SearchError(RuntimeError):
    """The search could not run (it timed out); say so to the user."""


class EngineUnavailable(RuntimeError):
    """This engine cannot run this search here (not installed, not a repository, a
    pattern it cannot express, an engine failure); the next one is tried."""


@dataclass(frozen=True)
class Listing:
    paths: list[str]  # relative to the searched folder, "/"-separated, in order
    engine: Engine


@dataclass(frozen=True)
class Line:
    path: str  # relative to the searched folder ("" when a file was searched)
    number: int
    text: str


@dataclass(frozen=True)
class GrepResult:
    lines: list[Line]  # the first ``limit`` matching lines, in order
    count: int  # matching lines in all
    engine: Engine


def order(path: str) -> str:
    """The sort key of a path: folder by folder (``a/b`` before ``a-b/c``, ``a/`` before
    ``a/b``): ``/`` as the smallest character, NUL, which no path holds."""
    return path.replace("/", "\0")


def _shown_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")[:LINE_CUT].rstrip()


# -- engines that exist here ---------------------------------------------------------------


def rg_path(near: Path | None = None) -> str | None:
    """ripgrep from PATH, never from a folder inside ``near``'s worktree (safe_git)."""
    return safe_git.executable("rg", near)


def git_path(near: Path | None = None) -> str | None:
    return safe_git.executable("git", near)


def repo_top(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding ``.git``."""
    current = Path(os.path.abspath(folder))
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _environment(near: Path) -> dict[str, str]:
    # git grep -P matches UTF-8 only in a UTF-8 locale
    return safe_git.environment(near=near, LC_ALL="C.UTF-8")


# safe_git's hardening (no fsmonitor, hooks, drivers…: a nested repository's config runs
# nothing), then what makes git's output ours
GIT_CONFIG = [
    *safe_git.OPTIONS,
    "-c",
    "core.excludesFile=/dev/null",
    "-c",
    "grep.fullName=false",
    "-c",
    "grep.column=false",
    "-c",
    "grep.lineNumber=false",
    "-c",
    "core.quotePath=false",
]

# git grep probe: Überprüfung café
PROBE = r"(*UCP)^# git grep probe: \w+ \w+$"


@lru_cache(maxsize=4)
def _git_pcre_works(git: str) -> bool:
    """``git grep -P`` runs (git built with PCRE2) and reads UTF-8 with Unicode classes:
    checked once, on this very file (the comment line above: two words of letters with
    accents, which only Unicode classes take for ``\\w+``)."""
    here = Path(__file__)
    try:
        done = subprocess.run(
            [git, *safe_git.OPTIONS, "grep", "--no-index", "-c", "-P", PROBE, "--", here.name],
            cwd=here.parent,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=_environment(here.parent),
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip().endswith(b":1")


def _run(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> bytes:
    """Run a search process; exit 0 and 1 (nothing found) are fine, and 2 from ripgrep
    when it still printed something (a file it could not read)."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,  # ripgrep reads a piped stdin instead of the folder
            capture_output=True,
            timeout=TIMEOUT,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SearchError(f"the search took over {TIMEOUT:.0f} s; narrow it down") from exc
    except OSError as exc:
        raise EngineUnavailable(f"{argv[0]}: {exc}") from exc
    if done.returncode in (0, 1) or (done.returncode == 2 and done.stdout):
        return done.stdout
    message = done.stderr.decode(errors="replace").strip().splitlines()
    raise EngineUnavailable(f"{Path(argv[0]).name} failed: {message[-1] if message else '?'}")


class _Parallel:
    """A few search processes at once (two cores do twice the work); ``wait`` each."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> int:
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            self.close()
            raise EngineUnavailable(f"{argv[0]}: {exc}") from exc
        self.procs.append(proc)
        return len(self.procs) - 1

    def wait(self, index: int) -> bytes:
        proc = self.procs[index]
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            self.close()
            raise SearchError(f"the search took over {TIMEOUT:.0f} s; narrow it down") from exc
        if proc.returncode in (0, 1):
            return out
        self.close()
        message = err.decode(errors="replace").strip().splitlines()
        raise EngineUnavailable(f"git failed: {message[-1] if message else '?'}")

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _binary_or_not_regular(path: str) -> bool:
    """Skip this file: a NUL in its first 8,000 bytes, or not a regular file (a symlink
    git listed: ``O_NOFOLLOW`` refuses it), or gone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return True
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        return b"\0" in os.read(fd, BINARY_PROBE)
    except OSError:
        return True
    finally:
        os.close(fd)


def _regular_files(root: Path, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (under ``root``) that are regular files: not gone, no symlink."""
    prefix = os.path.join(root, "")
    found = []
    for path in paths:
        try:
            if stat.S_ISREG(os.lstat(prefix + path).st_mode):
                found.append(path)
        except OSError:
            continue
    return found


# -- glob patterns (the glob tool's pattern, grep's include) -------------------------------


def glob_regex(pattern: str) -> str:
    """A glob over paths relative to the searched folder: ``*`` and ``?`` within a name,
    ``**`` across folders (``**/`` also none), ``[a-z]``/``[!a-z]``, ``{a,b}``, ``\\``
    escapes. Case matters."""
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            i, text = glob_class(pattern, i)
            out.append(text)
        elif char == "{":
            depth += 1
            out.append("(?:")
            i += 1
        elif char == "}" and depth:
            depth -= 1
            out.append(")")
            i += 1
        elif char == "," and depth:
            out.append("|")
            i += 1
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    if depth:  # an unclosed "{": read the pattern again with braces as plain characters
        return glob_regex(pattern.replace("{", "\\{").replace("}", "\\}"))
    return "".join(out)


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a relative path matches ``pattern``; a pattern without ``/`` (and not
    starting with ``**``) is matched against the file's name, wherever it is."""
    pattern = pattern.removeprefix("./")
    regex = re.compile(glob_regex(pattern), re.DOTALL)
    if "/" not in pattern and not pattern.startswith("**"):
        return lambda path: regex.fullmatch(path[path.rfind("/") + 1 :]) is not None
    return lambda path: regex.fullmatch(path) is not None


PLAIN = r"[\w.*?+-]"  # characters every engine's globs read alike
SIMPLE_GLOB = re.compile(
    rf"(?:(?:\*\*|{PLAIN}+)/)*{PLAIN}*(?:\{{{PLAIN}*(?:,{PLAIN}*)+\}})?{PLAIN}*"
)


@dataclass(frozen=True)
class Pushdown:
    """A glob the engines can filter by themselves, so fewer names come back: ripgrep's
    ``--type-add`` takes a file name glob (and, unlike ``--glob``, keeps the ignore
    rules), git a ``:(glob)`` pathspec. Our own matcher still decides; these only narrow
    (so they may only be built where they take at least what ours takes)."""

    names: list[str] | None  # for ripgrep: name globs, when the glob is about names only
    pathspecs: list[str]  # for git


def pushdown(pattern: str | None) -> Pushdown | None:
    """The pushdown of a glob with plain characters, ``*``, ``?``, ``**`` as a whole
    folder and at most one ``{a,b}``; None for any other."""
    if not pattern:
        return None
    pattern = pattern.removeprefix("./")
    if not SIMPLE_GLOB.fullmatch(pattern) or "**" in pattern.replace("**/", ""):
        return None
    expanded = [pattern]
    if "{" in pattern:
        head, rest = pattern.split("{", 1)
        body, tail = rest.split("}", 1)
        expanded = [head + part + tail for part in body.split(",")]
    bare = [p.removeprefix("**/") for p in expanded]
    if not all(bare) or any(p.endswith("/") for p in expanded):
        return None
    names = bare if all("/" not in p for p in bare) else None
    specs = [f":(glob){p if '/' in p else '**/' + p}" for p in expanded]
    return Pushdown(names, specs)


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


# -- listings ------------------------------------------------------------------------------


def _ripgrep(near: Path) -> str:
    rg = rg_path(near)
    if rg is None:
        raise EngineUnavailable("ripgrep (rg) is not installed")
    return rg


def _rust_pattern(query: _Query) -> str:
    """The query's pattern as ripgrep's (Rust) regex; unavailable when it cannot be said
    the same way there."""
    try:
        return translate(query.pattern, "rust", query.ignore_case).pattern
    except Untranslatable as exc:
        raise EngineUnavailable(str(exc)) from exc


def _rg_base(rg: str) -> list[str]:
    skips = [f"--glob=!{name}/" for name in sorted(SKIP_DIRS)]
    return [
        rg,
        "--no-config",
        "--no-messages",
        "--hidden",
        "--no-require-git",
        "--no-ignore-global",
        "--glob=!.git",
        *skips,
    ]


def _rg_types(names: list[str] | None) -> list[str]:
    if not names:
        return []
    return [*(f"--type-add=wanted:{name}" for name in names), "--type=wanted"]


def _rg_files(root: Path, names: list[str] | None = None) -> list[str]:
    rg = _ripgrep(root)
    out = _run([*_rg_base(rg), *_rg_types(names), "--files", "--null", "."], root).replace(
        b"\0./", b"\0"
    )
    return out.removeprefix(b"./").decode("utf-8", "surrogateescape").split("\0")[:-1]


def _git_files(
    root: Path, keep: Callable[[str], bool] | None = None, specs: Sequence[str] = ()
) -> list[str]:
    """git's listing, filtered by ``keep`` first (cheap), then checked on disk."""
    listing = _git_listing(root, specs)
    chosen = [p for p in listing.paths if keep is None or keep(p)]
    found = _regular_files(root, chosen)
    for folder in listing.nested:
        try:
            inner = _git_files(root / folder, None, specs)
        except EngineUnavailable:
            inner = walk(root / folder)
        found.extend(f"{folder}/{p}" for p in inner if keep is None or keep(f"{folder}/{p}"))
    return found


def _files_in(root: Path, engine: Engine | None) -> list[str]:
    """Files under ``root`` (unsorted) from ``engine``, or from the first that can."""
    for name in [engine] if engine else LISTERS:
        try:
            if name == "rg":
                return _rg_files(root)
            if name == "git":
                return _git_files(root)
            return walk(root)
        except EngineUnavailable:
            if engine:
                raise
    raise AssertionError("python always lists")


def files(root: Path, engine: Engine | None = None) -> Listing:
    """Every file under ``root`` the shared rules let through, in order."""
    for name in [engine] if engine else LISTERS:
        try:
            return Listing(sorted(_files_in(root, name), key=order), name)
        except EngineUnavailable:
            if engine:
                raise
    raise AssertionError("python always lists")


def glob(root: Path, pattern: str, engine: Engine | None = None) -> Listing:
    """Files under ``root`` whose relative path matches ``pattern`` (see glob_matcher)."""
    keep = glob_matcher(pattern)
    narrow = pushdown(pattern)
    for name in [engine] if engine else LISTERS:
        try:
            if name == "git":
                found = _git_files(root, keep, narrow.pathspecs if narrow else ())
            elif name == "rg":
                found = [p for p in _rg_files(root, narrow.names if narrow else None) if keep(p)]
            else:
                found = [p for p in walk(root) if keep(p)]
            return Listing(sorted(found, key=order), name)
        except EngineUnavailable:
            if engine:
                raise
    raise AssertionError("python always lists")


# -- grep ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Query:
    pattern: str
    ignore_case: bool
    include: Callable[[str], bool] | None
    narrow: Pushdown | None  # the include, for the engines to filter by themselves

    def wanted(self, path: str) -> bool:
        return self.include is None or self.include(path)


def _counts_to_result(
    root: Path,
    counts: dict[str, int],
    limit: int,
    lines_of: Callable[[list[str]], list[Line]],
    engine: Engine,
) -> GrepResult:
    """From per-file counts: drop binary files, sort, and fetch the lines of just the
    first files, enough for ``limit`` lines."""
    paths = sorted(
        (p for p in counts if not _binary_or_not_regular(os.path.join(root, p))),
        key=order,
    )
    first: list[str] = []
    shown = 0
    for path in paths:
        if shown >= limit:
            break
        first.append(path)
        shown += counts[path]
    lines = lines_of(first) if first else []
    lines.sort(key=lambda line: (order(line.path), line.number))
    return GrepResult(lines[:limit], sum(counts[p] for p in paths), engine)


def _parse_lines(out: bytes, separator: bytes) -> list[Line]:
    """``path\\0number<separator>text`` lines (ripgrep: ``:``, git: ``\\0``)."""
    found = []
    for row in out.split(b"\n"):
        if not row:
            continue
        path, _, rest = row.partition(b"\0")
        number, _, text = rest.partition(separator)
        found.append(
            Line(
                path.decode("utf-8", "surrogateescape").removeprefix("./"),
                int(number),
                _shown_text(text),
            )
        )
    return found


def _parse_counts(out: bytes) -> dict[str, int]:
    counts = {}
    for row in out.split(b"\n"):
        path, _, count = row.rpartition(b"\0")
        if path:
            counts[path.decode("utf-8", "surrogateescape").removeprefix("./")] = int(count)
    return counts


def _rg_grep(root: Path, query: _Query, limit: int) -> GrepResult:
    rg, pattern = _ripgrep(root), _rust_pattern(query)
    common = ["--text", "--encoding=none", f"--regexp={pattern}"]
    types = _rg_types(query.narrow.names if query.narrow else None)
    out = _run([*_rg_base(rg), *common, *types, "--count", "--null", "."], root)
    counts = {p: n for p, n in _parse_counts(out).items() if query.wanted(p)}

    def lines_of(paths: list[str]) -> list[Line]:
        argv = [rg, "--no-config", "--no-messages", *common, "--line-number", "--null"]
        argv += ["--with-filename", f"--max-count={limit}"]  # a file's first lines suffice
        argv += [f"--max-columns={PREVIEW}", "--max-columns-preview", "--", *paths]
        return _parse_lines(_run(argv, root), b":")

    return _counts_to_result(root, counts, limit, lines_of, "rg")


def _git_pattern(query: _Query, near: Path) -> str:
    git = git_path(near)
    if git is None or not _git_pcre_works(git):
        raise EngineUnavailable("git grep -P cannot read UTF-8 here")
    try:
        pattern = translate(query.pattern, "pcre", query.ignore_case).pattern
    except Untranslatable as exc:
        raise EngineUnavailable(str(exc)) from exc
    # git first searches the whole file, then the line of a match: an empty match at the
    # very end, after the last newline, would report a line that is not there
    return f"(*UCP)(?!(?<=\\n)\\z){pattern}"


def _git_grep(root: Path, query: _Query, limit: int) -> GrepResult:
    pattern = _git_pattern(query, root)
    git = git_path(root) or "git"
    counts = _git_counts(root, query, pattern)
    env = _environment(root)

    def lines_of(paths: list[str]) -> list[Line]:
        argv = [git, "--literal-pathspecs", *GIT_CONFIG, "grep", "--no-index", "-a", "-n", "-z"]
        argv += ["-P", "-e", pattern, "--", *paths]
        return _parse_lines(_run(argv, root, env), b"\0")

    return _counts_to_result(root, counts, limit, lines_of, "git")


def _git_counts(root: Path, query: _Query, pattern: str) -> dict[str, int]:
    """Matching lines per file under ``root`` by ``git grep`` (nested repositories by
    their own run), restricted to the shared listing."""
    git = git_path(root) or "git"
    env = _environment(root)
    specs = query.narrow.pathspecs if query.narrow else []
    runs = _Parallel()
    searched = runs.start(
        [git, *GIT_CONFIG, "grep", "--untracked", "-a", "-c", "-z", "-P", "-e", pattern, "--"]
        + (specs or ["."])
        + SKIP_SPECS,
        root,
        env,
    )
    try:
        listing = _git_listing(root, specs)
    except EngineUnavailable:
        runs.close()
        raise
    allowed = set(listing.paths)
    counts = {p: n for p, n in _parse_counts(runs.wait(searched)).items() if p in allowed}
    counts = {p: n for p, n in counts.items() if query.wanted(p)}
    for folder in listing.nested:
        inner = _grep_counts_anywhere(root / folder, query)
        counts.update(
            {f"{folder}/{p}": n for p, n in inner.items() if query.wanted(f"{folder}/{p}")}
        )
    return counts


def _grep_counts_anywhere(root: Path, query: _Query) -> dict[str, int]:
    """Counts for a nested repository: git there if it can, else Python. The counts are
    not yet checked for binary files."""
    try:
        return _git_counts(root, query, _git_pattern(query, root))
    except EngineUnavailable:
        regex = _python_regex(query)
        counts = {
            p: len(_python_lines(root, p, regex, None)) for p in walk(root) if query.wanted(p)
        }
        return {p: n for p, n in counts.items() if n}


def _python_regex(query: _Query) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    """The line regex and, when it is safe, a whole-text one to skip files quickly."""
    translation = translate(query.pattern, "python", query.ignore_case)
    line = re.compile(translation.pattern)
    whole = None if translation.negative_lookaround else re.compile(translation.pattern, re.M)
    return line, whole


def _python_lines(
    root: Path,
    path: str,
    regex: tuple[re.Pattern[str], re.Pattern[str] | None],
    limit: int | None,
) -> list[Line]:
    """Matching lines of one file (none for a binary one), at most ``limit``."""
    full = os.path.join(root, path) if path else str(root)
    try:
        with open(full, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    if b"\0" in data[:BINARY_PROBE]:
        return []
    text = data.decode("utf-8", errors="surrogateescape")
    line_regex, whole = regex
    if whole is not None and whole.search(text) is None:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # after the last newline: not a line
    found = []
    for number, line in enumerate(lines, 1):
        if line_regex.search(line):
            raw = line.encode("utf-8", errors="surrogateescape")
            found.append(Line(path, number, _shown_text(raw)))
            if limit is not None and len(found) >= limit:
                break
    return found


def _python_grep(root: Path, query: _Query, limit: int, listing: list[str]) -> GrepResult:
    regex = _python_regex(query)
    lines: list[Line] = []
    count = 0
    for path in sorted((p for p in listing if query.wanted(p)), key=order):
        found = _python_lines(root, path, regex, None)
        count += len(found)
        if len(lines) < limit:
            lines.extend(found[: limit - len(lines)])
    return GrepResult(lines, count, "python")


def _single_file(path: Path, query: _Query, limit: int, engine: Engine | None) -> GrepResult:
    """A file named by the search: searched whatever the ignore rules say."""
    folder, name = path.parent, path.name
    for each in [engine] if engine else ENGINES:
        try:
            if each == "python":
                found = _python_lines(folder, name, _python_regex(query), None)
                engine_name: Engine = "python"
            elif each == "rg":
                result = _rg_grep_file(folder, name, query)
                found, engine_name = result, "rg"
            else:
                found, engine_name = _git_grep_file(folder, name, query), "git"
            found = [Line("", line.number, line.text) for line in found]
            return GrepResult(found[:limit], len(found), engine_name)
        except EngineUnavailable:
            if engine:
                raise
    raise AssertionError("python always searches")


def _rg_grep_file(folder: Path, name: str, query: _Query) -> list[Line]:
    rg, pattern = _ripgrep(folder), _rust_pattern(query)
    if _binary_or_not_regular(os.path.join(folder, name)):
        return []
    argv = [rg, "--no-config", "--no-messages", "--text", "--encoding=none", f"--regexp={pattern}"]
    argv += ["--line-number", "--null", "--with-filename"]
    argv += [f"--max-columns={PREVIEW}", "--max-columns-preview", "--", f"./{name}"]
    return _parse_lines(_run(argv, folder), b":")


def _git_grep_file(folder: Path, name: str, query: _Query) -> list[Line]:
    pattern = _git_pattern(query, folder)
    if _binary_or_not_regular(os.path.join(folder, name)):
        return []
    git = git_path(folder) or "git"
    argv = [git, "--literal-pathspecs", *GIT_CONFIG, "grep", "--no-index", "-a", "-n", "-z"]
    argv += ["-P", "-e", pattern, "--", name]
    return _parse_lines(_run(argv, folder, _environment(folder)), b"\0")


def grep(
    root: Path,
    pattern: str,
    *,
    include: str | None = None,
    ignore_case: bool = False,
    limit: int = 100,
    engine: Engine | None = None,
) -> GrepResult:
    """Lines matching the Python regular expression ``pattern`` in the files under
    ``root`` (or in the file ``root``), whose path matches ``include`` when given.
    ``engine`` forces one (EngineUnavailable if it cannot); by default the first of
    ripgrep, git, Python that can. Raises PatternError for an invalid pattern."""
    check(pattern, ignore_case)
    query = _Query(
        pattern,
        ignore_case,
        glob_matcher(include) if include else None,
        pushdown(include),
    )
    if root.is_file():
        return _single_file(root, query, limit, engine)
    for name in [engine] if engine else ENGINES:
        try:
            if name == "rg":
                return _rg_grep(root, query, limit)
            if name == "git":
                return _git_grep(root, query, limit)
            listing = walk(root) if engine == "python" else _files_in(root, None)
            return _python_grep(root, query, limit, listing)
        except EngineUnavailable:
            if engine:
                raise
    raise AssertionError("python always searches")
