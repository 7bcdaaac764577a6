"""Which server serves a file ([lsp.NAME] over the built-in table) and the [diagnostics]
settings (core/lsp/settings.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tui_agent.core.lsp.settings import find_root
from tui_agent.lsp import BUILTINS, read_settings


def on_path(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        script = folder / name
        script.write_text("#!/bin/sh\nexit 0\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def path_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only the commands a test puts there."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def test_the_built_in_table() -> None:
    names = [spec.name for spec in BUILTINS]
    assert names == [
        "basedpyright",
        "pyright",
        "pylsp",
        "typescript",
        "gopls",
        "rust-analyzer",
        "clangd",
    ]


def test_python_files_go_to_the_first_built_in_on_the_path(path_of: Path) -> None:
    settings = read_settings({})
    assert settings.server_for(Path("a.py")) is None  # none installed
    on_path(path_of, "pylsp")
    assert settings.server_for(Path("a.py")).name == "pylsp"  # type: ignore[union-attr]
    on_path(path_of, "pyright-langserver")
    assert settings.server_for(Path("a.pyi")).name == "pyright"  # type: ignore[union-attr]
    on_path(path_of, "basedpyright-langserver", "gopls")
    assert settings.server_for(Path("a.py")).name == "basedpyright"  # type: ignore[union-attr]
    assert settings.server_for(Path("main.go")).name == "gopls"  # type: ignore[union-attr]
    assert settings.server_for(Path("README.md")) is None


def test_user_tables_come_first_and_a_missing_command_is_still_theirs(path_of: Path) -> None:
    on_path(path_of, "pylsp")
    config = {
        "lsp": {
            "mine": {"command": ["no-such-server", "--stdio"], "extensions": [".py"]},
            "basedpyright": {"enabled": False},
        }
    }
    settings = read_settings(config)
    assert settings.problems == []
    spec = settings.server_for(Path("x.py"))
    assert spec is not None and spec.name == "mine" and spec.command[0] == "no-such-server"
    config["lsp"]["mine"]["enabled"] = False
    assert read_settings(config).server_for(Path("x.py")).name == "pylsp"  # type: ignore[union-attr]
    off = read_settings({"lsp": {"pylsp": {"enabled": False}}})
    assert off.server_for(Path("x.py")) is None


def test_a_built_in_given_a_command_is_the_users(path_of: Path) -> None:
    settings = read_settings({"lsp": {"pylsp": {"command": ["pylsp", "-v"]}}})
    spec = settings.server_for(Path("x.py"))
    assert spec is not None and spec.command == ("pylsp", "-v") and spec.configured
    assert spec.extensions == (".py", ".pyi")  # kept from the built-in


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"lsp": {"x": {"command": "pylsp", "extensions": [".py"]}}}, "lsp.x.command must be"),
        ({"lsp": {"x": {"command": ["a"], "extensions": ["py"]}}}, "lsp.x.extensions must be"),
        ({"lsp": {"x": {"command": ["a"]}}}, "lsp.x needs command and extensions"),
        ({"lsp": {"x": {"cmd": ["a"]}}}, "lsp.x.cmd is not a setting"),
        ({"lsp": {"pylsp": {"enabled": "no"}}}, "lsp.pylsp.enabled must be true or false"),
        ({"lsp": {"x": 1}}, "lsp.x must be a table"),
        ({"diagnostics": {"wait": 0}}, "diagnostics.wait must be a number of seconds above 0"),
        ({"diagnostics": {"max": 0}}, "diagnostics.max must be a whole number"),
        ({"diagnostics": {"warning": True}}, "diagnostics.warning is not a setting"),
    ],
)
def test_mistakes_are_said_and_left_out(config: dict[str, object], problem: str) -> None:
    settings = read_settings(config)
    assert len(settings.problems) == 1 and settings.problems[0].startswith(problem)


def test_diagnostics_settings() -> None:
    settings = read_settings({"diagnostics": {"wait": 0.5, "warnings": True, "max": 3}})
    d = settings.diagnostics
    assert (d.on, d.wait, d.warnings, d.max, d.startup_timeout) == (True, 0.5, True, 3, 10.0)


def test_the_root_is_the_nearest_folder_with_a_marker_up_to_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pkg" / "pyproject.toml").write_text("")
    (tmp_path / "pyproject.toml").write_text("")  # above the project: never reached
    file = project / "pkg" / "sub" / "m.py"
    assert find_root(file, ("pyproject.toml",), project) == project / "pkg"
    assert find_root(project / "top.py", ("pyproject.toml",), project) == project
    outside = tmp_path / "elsewhere" / "m.py"
    assert find_root(outside, ("nothing",), project) == outside.parent
    assert os.sep in str(find_root(file, (), project))
