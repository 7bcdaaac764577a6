"""Issue 19: the search engines behind glob, grep and list (tui_agent/core/engines/search.py).

ripgrep, git and Python run on the same generated tree, inside a git repository and
outside one, and must give the same files, the same lines, in the same order, with the
same cap. Then each rule on its own: ignore files (nested, negation, folders only,
anchored, ``**``, ``.ignore``), skipped folders and a path naming one, binary files,
symlinks, case, include filters, regex features and a pattern an engine cannot take.

The tests need ripgrep. Without it they fail, saying how to install it (.ci/run installs
it when it runs as root with apt-get). Outside CI (neither ``CI`` nor ``TUI_AGENT_CI``
set), ``TUI_AGENT_TESTS_WITHOUT_RG=1`` leaves ripgrep out instead: git and Python are
still compared, and the few tests about ripgrep itself fail (never skip).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.engines import search_base
from tui_agent.core.engines.search import EngineUnavailable, glob_matcher
from tui_agent.search import LINE_CUT, PatternError, files, glob, grep

STRICT = bool(os.environ.get("CI") or os.environ.get("TUI_AGENT_CI"))
WITHOUT_RG = "TUI_AGENT_TESTS_WITHOUT_RG"
WORDS = "alpha beta gamma delta needle haystack return import value".split()


def git(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")  # no user settings
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return done.stdout


def require_rg() -> None:
    if shutil.which("rg") is not None:
        return
    pytest.fail(
        "ripgrep (rg) is not installed, and these tests check the rg engine: install it "
        "(apt-get install ripgrep, brew install ripgrep; .ci/run does as root)"
    )


def engines(in_git: bool) -> list[str]:
    """The engines to compare: ripgrep (required, see the top), git in a repository,
    Python."""
    if STRICT or not os.environ.get(WITHOUT_RG):
        require_rg()
    rg = ["rg"] if shutil.which("rg") else []
    return [*rg, "git", "python"] if in_git else [*rg, "python"]


# -- the generated tree ----------------------------------------------------------------------

CORPUS = [
    "import os",
    "  import sys  ",
    "def main(x):",
    "def helper(x, y):",
    "    return x  # TODO: fix",
    "café au lait",
    "Straße und Grüße",
    "日本語のテキスト needle",
    "emoji 🎉 party",
    "[[:alpha:]] literally",
    "a{,2}b and ab and aab",
    "x{} braces",
    "tab\there",
    'quoted "twice" and "again"',
    "quoted 'once\" mixed",
    "aa doubled bb",
    "user@example.com",
    "path\\to\\file",
    ".* stars",
    "trailing spaces   ",
    "",
    "NEEDLE upper",
    "needle lower",
    "x",
    "end with x",
]

PATTERNS = [
    "needle",
    r"\bdef \w+\(",
    r"TODO|FIXME",
    r"^\s*return",
    r"^\s*import\s+\w+\s*$",
    "café",
    r"caf.\b",
    r"x$",
    r"\Ax\Z",
    r"[[:alpha:]]",
    r"a{,2}b",
    r"x{}",
    r"\t",
    r"[^\x00-\x7f]",
    r"\d{2,}",
    r"needle.*needle",
    r"^$",
    r"\S\s+$",
    r"[\w.]+@[\w.]+",
    r"\.\*",
    r"\\to\\",
    r"[]a]a",
    r"[a-]{3}",
    r"(?i)straße",
    r"(?:ab|ba)\b",
    r"\w+ \w+ \w+ \w+ \w+",
    r"\x41|\u00e9",
    r"gr\wße",
    r"^(?!def).*\(x",
    r"(?<=def )main",
    r"(\w)\1",
    r"(?P<q>['\"]).*?(?P=q)",
    r"(?x) needle \s lower",
    r"\B",  # Python's \B alone never matches an empty line; Rust's and PCRE's do
    r"$^",  # ripgrep reads this multi-line form as never matching
    r"\Z\A",
]
RUST_CANNOT = {r"^(?!def).*\(x", r"(?<=def )main", r"(\w)\1", r"(?P<q>['\"]).*?(?P=q)"}
PCRE_CANNOT = {r"(?x) needle \s lower"}


def make_tree(root: Path, outside: Path) -> None:
    """A project with every case the shared rules name, and ~240 generated source files
    (enough matches for the 100-line cap)."""
    rng = random.Random(19)
    for i in range(240):
        lines = []
        for _ in range(rng.randint(1, 12)):
            kind = rng.random()
            if kind < 0.2:
                lines.append(rng.choice(CORPUS))
            elif kind < 0.3:
                lines.append(f"def f_{rng.randrange(99)}(x):")
            else:
                lines.append(" ".join(rng.choices(WORDS, k=rng.randint(1, 8))))
        folder = root / "src" / f"mod_{i % 7}" / ("deep" if i % 3 == 0 else "")
        ext = ["py", "txt", "md", "ts", "tsx"][i % 5]
        write(folder / f"file_{i:03}.{ext}", "\n".join(lines) + ("\n" if i % 4 else ""))
    write(root / "corpus.txt", "\n".join(CORPUS) + "\n")
    write(
        root / ".gitignore",
        "# comment\n*.log\n!keep.log\nbuild/\n/anchored.txt\ndocs/**/secret*\n**/gen/\n"
        "\\#hash.txt\ntrailing.txt   \nonly_dir/\n",
    )
    write(root / ".ignore", "dot_ignored/\n*.tmp\n")
    for name in ["keep.log", "drop.log", "anchored.txt", "#hash.txt", "trailing.txt"]:
        write(root / name, f"needle in {name}\n")
    write(root / "sub" / "anchored.txt", "needle anchored only at the top\n")
    write(root / "sub" / "drop.log", "needle in a nested log\n")
    write(root / "build" / "out.txt", "needle built\n")
    write(root / "sub" / "build" / "out.txt", "needle built deeper\n")
    write(root / "docs" / "a" / "b" / "secret_plan.md", "needle secret\n")
    write(root / "docs" / "a" / "public.md", "needle public\n")
    write(root / "lib" / "gen" / "made.py", "needle generated\n")
    write(root / "only_dir", "needle: a file named like a folder-only rule\n")
    write(root / "dot_ignored" / "x.txt", "needle dot ignored\n")
    write(root / "scratch.tmp", "needle tmp\n")
    write(root / "pkg" / ".gitignore", "*.py\n!keep.py\n")
    write(root / "pkg" / "a.py", "needle a\n")
    write(root / "pkg" / "keep.py", "needle keep\n")
    write(root / "pkg" / "inner" / "b.py", "needle b\n")
    write(root / "pkg" / "inner" / "c.txt", "needle c\n")
    write(root / "pkg" / "inner" / ".ignore", "c.txt\n")
    for folder in ["node_modules/m", "sub/node_modules", ".venv/lib", "__pycache__", "venv"]:
        write(root / folder / "skipped.py", "needle skipped\n")
    write(root / ".hidden" / "h.txt", "needle hidden\n")
    write(root / ".env", "needle=1\n")
    (root / "bin").mkdir()
    (root / "bin" / "blob.bin").write_bytes(b"needle\0\x01\x02 needle\n")
    (root / "bin" / "late_nul.txt").write_bytes(b"needle early\n" + b"x" * 9000 + b"\0\nneedle\n")
    (root / "enc").mkdir()
    (root / "enc" / "latin1.txt").write_bytes(b"caf\xe9 needle\nbad \xff\xfe x\n")
    (root / "enc" / "crlf.txt").write_bytes(b"needle\r\nx\r\nend with x\r\n")
    (root / "enc" / "nonl.txt").write_bytes(b"x")
    (root / "enc" / "empty.txt").write_bytes(b"")
    (root / "enc" / "bom.txt").write_bytes(b"\xef\xbb\xbfneedle after a bom\n")
    (root / "enc" / "long.txt").write_bytes(b"needle " + "é".encode() * 6000 + b" x\n")
    write(outside / "secret.txt", "needle outside\n")
    (root / "link_in.txt").symlink_to("corpus.txt")
    (root / "link_out").symlink_to(outside)
    (root / "dirlink").symlink_to("src")
    (root / "link_out_file.txt").symlink_to(outside / "secret.txt")


def build_tree(base: Path, in_git: bool) -> tuple[Path, bool]:
    root = base / "project"
    make_tree(root, base / "outside")
    if in_git:
        git(root, "init", "-q")
        (root / ".git" / "info" / "exclude").write_text("excluded_by_info.txt\n")
        write(root / "excluded_by_info.txt", "needle excluded\n")
        git(root, "add", "-A")
        git(root, "add", "-f", "drop.log")  # tracked, yet ignored: left out, as rg does
        git(root, "commit", "-qm", "tree")
        write(root / "untracked.txt", "needle untracked\n")
        write(root / "node_modules" / "late" / "x.js", "needle, untracked, not ignored\n")
        inner = root / "vendor" / "inner"  # a repository inside, not a submodule
        write(inner / "x.log", "needle: the outer *.log does not reach in here\n")
        write(inner / "y.txt", "needle y\n")
        write(inner / ".gitignore", "y.txt\n")
        git(inner, "init", "-q")
    return root, in_git


@pytest.fixture(scope="module", params=["git", "plain"])
def shared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tree, built once for the tests that only read it."""
    return build_tree(tmp_path_factory.mktemp("shared"), request.param == "git")


@pytest.fixture(params=["git", "plain"])
def tree(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, bool]:
    """A tree of the test's own, for the tests that add to it."""
    return build_tree(tmp_path, request.param == "git")


# -- the same from each ----------------------------------------------------------------------


def test_listing_is_the_same_from_each_engine(shared: tuple[Path, bool]) -> None:
    root, in_git = shared
    results = {engine: files(root, engine) for engine in engines(in_git)}  # type: ignore[arg-type]
    for engine, listing in results.items():
        assert listing.engine == engine
    python = results["python"].paths
    for engine, listing in results.items():
        assert listing.paths == python, engine
    assert python == sorted(python, key=lambda p: p.split("/"))
    expected_in = {
        "keep.log",
        "sub/anchored.txt",
        "docs/a/public.md",
        "pkg/keep.py",
        ".hidden/h.txt",
        ".env",
        ".gitignore",
        "bin/blob.bin",  # listed: only grep skips binary files
        "bin/late_nul.txt",
        "corpus.txt",
    }
    expected_out = {
        "drop.log",
        "sub/drop.log",
        "anchored.txt",
        "#hash.txt",
        "trailing.txt",
        "build/out.txt",
        "sub/build/out.txt",
        "docs/a/b/secret_plan.md",
        "lib/gen/made.py",
        "dot_ignored/x.txt",
        "scratch.tmp",
        "pkg/a.py",
        "pkg/inner/b.py",
        "pkg/inner/c.txt",
        "node_modules/m/skipped.py",
        "sub/node_modules/skipped.py",
        ".venv/lib/skipped.py",
        "__pycache__/skipped.py",
        "venv/skipped.py",
        "link_in.txt",
        "link_out/secret.txt",
        "dirlink/mod_0/file_000.py",
        "link_out_file.txt",
    }
    assert expected_in <= set(python)
    assert not expected_out & set(python)
    assert "only_dir" in python  # a folder-only rule leaves a file of that name alone
    assert not any(p.startswith(".git/") for p in python)
    if in_git:
        assert "untracked.txt" in python and "excluded_by_info.txt" not in python
        assert "node_modules/late/x.js" not in python
        assert {"vendor/inner/x.log"} <= set(python)
        assert "vendor/inner/y.txt" not in python


@pytest.mark.parametrize(
    "pattern",
    [
        "**/*.py",
        "*.txt",
        "*.log",
        "src/**",
        "src/mod_1/*.md",
        "*.{md,tsx}",
        "[a-c]*",
        ".*",
        "**/deep/*",
    ],
)
def test_glob_is_the_same_from_each_engine(shared: tuple[Path, bool], pattern: str) -> None:
    root, in_git = shared
    results = {e: glob(root, pattern, e).paths for e in engines(in_git)}  # type: ignore[arg-type]
    for engine, paths in results.items():
        assert paths == results["python"], engine
    assert results["python"], pattern


@pytest.mark.parametrize("pattern", ["**/", "src/", "*.{py,}", "{,file_00}*.py", "a**b", "[z-a]"])
def test_odd_globs_are_the_same_from_each_engine(shared: tuple[Path, bool], pattern: str) -> None:
    """Globs the engines are not handed (ours decides alone) and empty alternatives."""
    root, in_git = shared
    results = {e: glob(root, pattern, e).paths for e in engines(in_git)}  # type: ignore[arg-type]
    for engine, paths in results.items():
        assert paths == results["python"], engine
    found = grep(root, "needle", include=pattern, engine="python")
    for engine, result in run_everywhere(root, in_git, pattern="needle", include=pattern).items():
        assert (result.lines, result.count) == (found.lines, found.count), engine


def run_everywhere(root: Path, in_git: bool, **kwargs: Any) -> dict[str, Any]:
    """grep by each engine that can take the pattern: {engine: result}."""
    results = {}
    for engine in engines(in_git):
        try:
            results[engine] = grep(root, engine=engine, **kwargs)  # type: ignore[arg-type]
        except EngineUnavailable:
            assert engine != "python"
            continue
        assert results[engine].engine == engine
    return results


@pytest.mark.parametrize("pattern", PATTERNS)
def test_grep_is_the_same_from_each_engine(shared: tuple[Path, bool], pattern: str) -> None:
    root, in_git = shared
    results = run_everywhere(root, in_git, pattern=pattern, limit=10_000)
    python = results["python"]
    assert python.count == len(python.lines)
    for engine, result in results.items():
        assert result.lines == python.lines, engine
        assert result.count == python.count, engine
    keys = [(line.path.split("/"), line.number) for line in python.lines]
    assert keys == sorted(keys)
    expected = {"python"}
    if pattern not in PCRE_CANNOT:
        expected |= {"git"} if in_git else set()
        expected |= set() if pattern in RUST_CANNOT else {"rg"} & set(engines(in_git))
    assert set(results) == expected


PIECES = [
    "a", "e", "x", r"\d", r"\w", r"\W", r"\s", r"\S", ".", "[a-z]", "[^a-z]", r"\b", r"\B",
    "^", "$", "é", "ß", "日", r"\.", "(", ")", "|", "*", "+", "?", "*?", "{1,3}", "{,2}",
    "[[:alpha:]]", " ", "needle", r"\\", "[]a]", r"\x41", r"\Z", r"\A", "(?:", "(?=x)",
    "(?<!e)", r"(\w)\1", r"\D", "🎉",
]  # fmt: skip


def test_random_patterns_are_the_same_from_each_engine(shared: tuple[Path, bool]) -> None:
    """Patterns put together from the pieces above (fixed seed): every engine that takes
    one finds what Python finds (a search found the \\B, $^ and git end-of-file cases)."""
    root, in_git = shared
    rng = random.Random(1919)
    tried = 0
    while tried < 40:
        pattern = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 5)))
        ignore_case = rng.random() < 0.2
        try:
            reference = grep(root, pattern, engine="python", limit=10_000, ignore_case=ignore_case)
        except PatternError:
            continue
        tried += 1
        for engine, result in run_everywhere(
            root, in_git, pattern=pattern, limit=10_000, ignore_case=ignore_case
        ).items():
            assert (result.lines, result.count) == (reference.lines, reference.count), (
                engine,
                pattern,
            )


@pytest.mark.parametrize(
    ("pattern", "options"),
    [
        ("needle", {"ignore_case": True}),
        ("NEEDLE", {}),
        ("needle", {"include": "*.py"}),
        ("needle", {"include": "*.{txt,md}"}),
        ("needle", {"include": "src/**/deep/*.ts*"}),
        ("needle", {"include": "[kp]*"}),
        (r"\w+", {"limit": 100}),
        ("needle", {"limit": 7}),
        (r"(?<=def )\w+", {"limit": 10, "include": "*.py"}),
    ],
)
def test_grep_options_are_the_same_from_each_engine(
    shared: tuple[Path, bool], pattern: str, options: dict[str, Any]
) -> None:
    root, in_git = shared
    results = run_everywhere(root, in_git, pattern=pattern, **options)
    python = results["python"]
    for engine, result in results.items():
        assert (result.lines, result.count) == (python.lines, python.count), engine
    limit = options.get("limit", 100)
    assert len(python.lines) == min(limit, python.count)
    if "limit" in options:
        assert python.count > limit  # the cap is reached, and the count goes on
    if "include" in options:
        wanted = glob_matcher(options["include"])
        assert python.lines and all(wanted(line.path) for line in python.lines)


# -- each rule on its own --------------------------------------------------------------------


def paths_of(result: Any) -> set[str]:
    return {line.path for line in result.lines}


def test_binary_symlinks_encodings_and_long_lines(shared: tuple[Path, bool]) -> None:
    root, in_git = shared
    for engine, result in run_everywhere(root, in_git, pattern="needle", limit=10_000).items():
        found = paths_of(result)
        assert "bin/blob.bin" not in found, engine  # a NUL in the first 8,000 bytes
        assert "bin/late_nul.txt" in found, engine  # a NUL only later: text
        assert not {"link_in.txt", "link_out/secret.txt", "link_out_file.txt"} & found, engine
        assert not any(p.startswith("dirlink/") for p in found), engine
        by_path = {line.path: line for line in result.lines}
        assert by_path["enc/latin1.txt"].text == "caf\ufffd needle", engine
        assert by_path["enc/bom.txt"].text == "\ufeffneedle after a bom", engine
        long = by_path["enc/long.txt"].text
        assert len(long) == LINE_CUT and long.startswith("needle éé"), engine
        crlf = [line for line in result.lines if line.path == "enc/crlf.txt"]
        assert [(c.number, c.text) for c in crlf] == [(1, "needle")], engine
    x_end = run_everywhere(root, in_git, pattern="x$", include="enc/*")
    for engine, result in x_end.items():
        # "x\r" does not end in x; a last line without newline is a line; invalid
        # UTF-8 does not stop the line from matching
        assert [(line.path, line.number) for line in result.lines] == [
            ("enc/latin1.txt", 2),
            ("enc/long.txt", 1),
            ("enc/nonl.txt", 1),
        ], engine


def test_undecodable_bytes_match_nothing(shared: tuple[Path, bool]) -> None:
    root, in_git = shared
    for pattern in [r"bad .. x", r"bad [^a][^a] x", r"bad \W\W x", r"bad \S+ x", "bad .*x"]:
        for engine, result in run_everywhere(root, in_git, pattern=pattern).items():
            assert result.count == 0, (engine, pattern)
    for engine, result in run_everywhere(root, in_git, pattern=r"^bad \S*").items():
        assert paths_of(result) == {"enc/latin1.txt"}, engine


def test_case_sensitivity(shared: tuple[Path, bool]) -> None:
    root, in_git = shared
    for engine, result in run_everywhere(root, in_git, pattern="NEEDLE").items():
        assert {line.text for line in result.lines} == {"NEEDLE upper"}, engine
    for engine, result in run_everywhere(
        root, in_git, pattern="NEEDLE upper|needle lower", ignore_case=True
    ).items():
        assert {line.text for line in result.lines} == {"NEEDLE upper", "needle lower"}, engine


def test_a_pattern_an_engine_cannot_take_falls_back(shared: tuple[Path, bool]) -> None:
    root, in_git = shared
    require_rg()
    lookbehind = r"(?<=def )main"
    with pytest.raises(EngineUnavailable, match="lookaround"):
        grep(root, lookbehind, engine="rg")
    auto = grep(root, lookbehind)
    assert auto.engine == ("git" if in_git else "python")
    reference = grep(root, lookbehind, engine="python")
    assert (auto.lines, auto.count) == (reference.lines, reference.count)
    assert auto.count > 0
    verbose = grep(root, r"(?x) needle \s lower")
    assert verbose.engine == "python" and verbose.count > 0
    assert grep(root, "needle").engine == "rg"


def test_an_invalid_pattern_is_an_error_whatever_the_engine(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "x\n")
    for engine in ["rg", "python"]:
        with pytest.raises(PatternError):
            grep(tmp_path, "def (unclosed", engine=engine)  # type: ignore[arg-type]
    with pytest.raises(PatternError):
        grep(tmp_path, r"\p{L}")  # Rust would take it; Python (the reference) does not


def test_auto_picks_rg_then_git_then_python(
    shared: tuple[Path, bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """grep: ripgrep, git, Python; listing (glob, list): ripgrep, then the Python walk
    (faster than git's listing once that is made to agree)."""
    root, in_git = shared
    require_rg()
    assert files(root).engine == "rg" and grep(root, "needle").engine == "rg"
    assert glob(root, "*.py").engine == "rg"
    only_git = tmp_path / "bin_without_rg"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "git")
    monkeypatch.setenv("PATH", str(only_git))
    monkeypatch.setattr(search_base, "_bundled_folders", lambda: ())  # nor the wheel's
    assert files(root).engine == "python"
    assert glob(root, "*.py").engine == "python"
    assert grep(root, "needle").engine == ("git" if in_git else "python")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert grep(root, "needle").engine == "python"


def test_a_path_naming_a_skipped_folder_is_searched(tree: tuple[Path, bool]) -> None:
    root, in_git = tree
    write(root / "node_modules" / "m" / "lib" / "deep.js", "needle deep\n")
    write(root / "node_modules" / "m" / "node_modules" / "n" / "x.js", "needle nested\n")
    folder = root / "node_modules" / "m"
    for engine in engines(in_git):
        listed = files(folder, engine).paths  # type: ignore[arg-type]
        assert listed == ["lib/deep.js", "skipped.py"], engine
        found = grep(folder, "needle", engine=engine)  # type: ignore[arg-type]
        assert paths_of(found) == {"lib/deep.js", "skipped.py"}, engine


def test_a_path_inside_an_ignored_folder_is_searched(tree: tuple[Path, bool]) -> None:
    """git lists nothing inside an ignored folder; the git engine steps aside there."""
    root, in_git = tree
    write(root / "build" / "more" / "x.log", "needle log\n")
    write(root / "build" / "more" / "y.txt", "needle y\n")
    folder = root / "build"
    expected = ["more/y.txt", "out.txt"]
    assert files(folder, "python").paths == expected
    require_rg()
    assert files(folder, "rg").paths == expected
    if in_git:
        with pytest.raises(EngineUnavailable, match="ignored"):
            files(folder, "git")
    else:
        with pytest.raises(EngineUnavailable, match="not inside a git repository"):
            files(folder, "git")


def test_a_dot_ignore_that_takes_back_a_gitignored_file(tmp_path: Path) -> None:
    """``.ignore`` is stronger than ``.gitignore``; git cannot know, so it steps aside."""
    root = tmp_path / "repo"
    write(root / ".gitignore", "*.gen\n")
    write(root / ".ignore", "!wanted.gen\n")
    write(root / "wanted.gen", "x\n")
    write(root / "other.gen", "x\n")
    git(root, "init", "-q")
    assert files(root, "python").paths == [".gitignore", ".ignore", "wanted.gen"]
    require_rg()
    assert files(root, "rg").paths == [".gitignore", ".ignore", "wanted.gen"]
    with pytest.raises(EngineUnavailable, match="takes something back"):
        files(root, "git")
    assert files(root).paths == [".gitignore", ".ignore", "wanted.gen"]


def test_gitignore_files_above_the_searched_folder_apply(shared: tuple[Path, bool]) -> None:
    root, in_git = shared
    folder = root / "pkg"
    for engine in engines(in_git):
        assert files(folder, engine).paths == [".gitignore", "inner/.ignore", "keep.py"], engine
        sub = files(root / "sub", engine).paths  # type: ignore[arg-type]
        assert sub == ["anchored.txt"], engine  # sub/drop.log: the top's *.log; build/: too


def test_a_file_named_by_the_search_is_searched(shared: tuple[Path, bool]) -> None:
    """A file given as the path: searched though ignored; still not if binary."""
    root, in_git = shared
    for engine in engines(in_git):
        found = grep(root / "drop.log", "needle", engine=engine)  # type: ignore[arg-type]
        assert [(line.path, line.number, line.text) for line in found.lines] == [
            ("", 1, "needle in drop.log")
        ], engine
        assert grep(root / "bin" / "blob.bin", "needle", engine=engine).count == 0  # type: ignore[arg-type]


# -- through the tools -----------------------------------------------------------------------


async def run(session: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return (await session.toolbox.run(name, args)).to_dict()


async def test_the_tools_outside_git_honour_ignore_files(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root / ".gitignore", "dist/\n*.log\n")
    write(root / ".ignore", "fixtures/\n")
    write(root / "src" / "app.ts", "export const needle = 1\n")
    write(root / "src" / "view.tsx", "const needle = <b/>\n")
    write(root / "dist" / "app.js", "needle\n")
    write(root / "debug.log", "needle\n")
    write(root / "fixtures" / "big.json", '{"needle": 1}\n')
    write(root / "node_modules" / "pkg" / "index.js", "needle\n")
    session = create_session(root)
    grepped = await run(session, "grep", {"pattern": "needle"})
    assert grepped["matches"] == [
        "src/app.ts:1: export const needle = 1",
        "src/view.tsx:1: const needle = <b/>",
    ]
    typed = await run(
        session, "grep", {"pattern": "NEEDLE", "ignore_case": True, "include": "*.{ts,js}"}
    )
    assert typed["matches"] == ["src/app.ts:1: export const needle = 1"]
    globbed = await run(session, "glob", {"pattern": "**/*.js"})
    assert globbed["files"] == [] and globbed["count"] == 0
    inside = await run(session, "glob", {"pattern": "**/*.js", "path": "node_modules/pkg"})
    assert inside["files"] == ["node_modules/pkg/index.js"]
    listed = await run(session, "list", {"depth": 3})
    assert listed["entries"] == [".gitignore", ".ignore", "src/", "src/app.ts", "src/view.tsx"]


# -- the ignore rules against git itself -----------------------------------------------------

IGNORE_PATHS = [
    "top.txt",
    "a/top.txt",
    "x.log",
    "keep.log",
    "a/keep.log",
    "a/b.txt",
    "a/x/b.txt",
    "a/x/y/b.txt",
    "a/c.txt",
    "b/c.txt",
    "deep/f.txt",
    "a/deep/f.txt",
    "docs/r.md",
    "docs/sub/r.md",
    "xyz",
    "xz",
    "a.c",
    "c.c",
    "#x",
    "trailing.txt",
    "foo/bar/baz.txt",
    "build/o.txt",
    "a/build/o.txt",
    "build.txt",
]
IGNORE_RULES = [
    "*.log\n!keep.log",
    "build/",
    "/top.txt",
    "a/**/b.txt",
    "**/deep",
    "docs/*.md",
    "x?z",
    "[ab]*.c",
    "[!ab]*.c",
    "\\#x",
    "trailing.txt   ",
    "foo/**",
    "*/c.txt",
    "a/x/",
    "*.txt\n!a/*.txt",
    "a/\n!a/keep.log",
    "**",
    "# only a comment\n\n",
]


@pytest.mark.parametrize("rules", IGNORE_RULES)
def test_gitignore_rules_read_as_git_reads_them(tmp_path: Path, rules: str) -> None:
    """Our walk against ``git ls-files --others --exclude-standard`` on the same files."""
    root = tmp_path / "repo"
    for path in IGNORE_PATHS:
        write(root / path, "x\n")
    write(root / ".gitignore", rules + "\n")
    git(root, "init", "-q")
    listed = git(root, "ls-files", "-z", "--others", "--exclude-standard").split("\0")
    expected = sorted((p for p in listed if p), key=lambda p: p.replace("/", "\0"))
    assert files(root, "python").paths == expected
    if shutil.which("rg"):
        assert files(root, "rg").paths == expected
