"""SPEC §3: the command registry, the line parser and Tab completion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tui_agent import Commands, complete, parse_command


async def test_register_decorator_and_run_sync_and_async() -> None:
    commands = Commands()
    got: list[Any] = []

    @commands.register("echo", description="Echo")
    def echo(args: str | None) -> None:
        got.append(("echo", args))

    @commands.register("later", description="Async")
    async def later(args: str | None) -> None:
        got.append(("later", args))

    commands.register("direct", handler=lambda args: got.append(("direct", args)))
    assert await commands.run("echo", "a b  c") is True
    assert await commands.run("/later") is True
    assert await commands.run("direct", None) is True
    assert await commands.run("nope") is False
    assert got == [("echo", "a b  c"), ("later", None), ("direct", None)]


async def test_same_name_replaces() -> None:
    commands = Commands()
    got: list[str] = []
    commands.register("x", description="old", handler=lambda a: got.append("old"))
    commands.register("/x", description="new", handler=lambda a: got.append("new"))
    await commands.run("x")
    assert got == ["new"] and list(commands) == [("/x", "new")]


async def test_zero_argument_handler_is_allowed() -> None:
    commands = Commands()
    got: list[str] = []
    commands.register("exit", handler=lambda: got.append("bye"))
    assert await commands.run("exit", "ignored")
    assert got == ["bye"]


async def test_exceptions_propagate_from_run() -> None:
    commands = Commands()

    def boom(args: str | None) -> None:
        raise RuntimeError("broken command")

    commands.register("boom", handler=boom)
    with pytest.raises(RuntimeError, match="broken command"):
        await commands.run("boom")


def test_names_iteration_and_clear() -> None:
    commands = Commands()
    for name in ["help", "exit", "compact"]:
        commands.register(name, description=f"{name} desc", handler=lambda a: None)
    assert commands.names == ["/compact", "/exit", "/help"]
    assert list(commands) == [
        ("/compact", "compact desc"),
        ("/exit", "exit desc"),
        ("/help", "help desc"),
    ]
    commands.clear()
    assert commands.names == [] and list(commands) == []


@pytest.mark.parametrize(
    ("completions", "partial", "expected"),
    [
        (["alpha", "beta", "alps"], "", ["alpha", "beta", "alps"]),
        (["alpha", "beta", "alps"], "al", ["alpha", "alps"]),
        (lambda: ["one", "two"], "t", ["two"]),
        (lambda: [], "", []),
        (None, "", []),
        ([1, 2, 10], "1", ["1", "10"]),
    ],
)
def test_completions_for(completions: Any, partial: str, expected: list[str]) -> None:
    commands = Commands()
    commands.register("c", completions=completions, handler=lambda a: None)
    assert commands.completions_for("c", partial) == expected
    assert commands.completions_for("/c", partial) == expected


def test_completions_callable_is_called_each_time_and_failures_give_nothing() -> None:
    commands = Commands()
    items = ["a"]
    commands.register("c", completions=lambda: list(items), handler=lambda a: None)
    assert commands.completions_for("c") == ["a"]
    items.append("b")
    assert commands.completions_for("c") == ["a", "b"]
    commands.register("bad", completions=lambda: 1 / 0, handler=lambda a: None)
    assert commands.completions_for("bad") == []
    assert commands.completions_for("unknown") == []


def test_listeners_hear_registry_changes() -> None:
    commands = Commands()
    heard: list[int] = []
    unsubscribe = commands.listen(lambda: heard.append(len(commands)))
    commands.register("a", handler=lambda a: None)
    commands.register("b", handler=lambda a: None)
    commands.clear()
    unsubscribe()
    commands.register("c", handler=lambda a: None)
    assert heard == [1, 2, 0]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/help", ("help", None)),
        ("/context 3", ("context", "3")),
        ("/skills fetch example.com", ("skills", "fetch example.com")),
        ("  /model   gpt-4o  ", ("model", "gpt-4o")),
        ("/x ", ("x", None)),
        ("hello /help", None),
        ("plain text", None),
        ("/", None),
        ("", None),
        ("//not a command", None),
    ],
)
def test_parse_command(line: str, expected: tuple[str, str | None] | None) -> None:
    assert parse_command(line) == expected


@pytest.fixture
def registry() -> Commands:
    commands = Commands()
    commands.register("help", handler=lambda a: None)
    commands.register("history", handler=lambda a: None)
    commands.register(
        "model", completions=["gpt-4o", "gpt-4o-mini", "llama3"], handler=lambda a: None
    )
    commands.register("skills", completions=["fetch a", "fetch b", "list"], handler=lambda a: None)
    return commands


@pytest.mark.parametrize(
    ("line", "start", "candidates"),
    [
        ("/h", 0, ["/help", "/history"]),
        ("/", 0, ["/help", "/history", "/model", "/skills"]),
        ("/z", 0, []),
        ("/model ", 7, ["gpt-4o", "gpt-4o-mini", "llama3"]),
        ("/model gpt", 7, ["gpt-4o", "gpt-4o-mini"]),
        ("/skills fetch ", 8, ["fetch a", "fetch b"]),
        ("/help ", 6, []),
    ],
)
def test_complete_commands(
    registry: Commands, line: str, start: int, candidates: list[str]
) -> None:
    result = complete(line, registry, ".")
    assert (result.start, result.candidates) == (start, candidates)


def test_complete_file_names(registry: Commands, tmp_path: Path) -> None:
    for name in ["main.py", "make.sh", "readme.md", ".hidden"]:
        (tmp_path / name).write_text("x")
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "inner.txt").write_text("x")
    assert complete("open ma", registry, tmp_path).candidates == ["main.py", "make.sh"]
    assert complete("open ma", registry, tmp_path).start == 5
    assert complete("m", registry, tmp_path).candidates == ["main.py", "make.sh", "mod/"]
    assert complete("see mod/in", registry, tmp_path).candidates == ["mod/inner.txt"]
    assert complete("see @rea", registry, tmp_path).candidates == ["readme.md"]
    assert complete("see @rea", registry, tmp_path).start == 5
    assert complete("x .h", registry, tmp_path).candidates == [".hidden"]
    assert ".hidden" not in complete("x ", registry, tmp_path).candidates
    assert complete("x nothing", registry, tmp_path).candidates == []
    assert complete("x missing/dir", registry, tmp_path).candidates == []


def test_complete_file_names_caps_at_twenty(registry: Commands, tmp_path: Path) -> None:
    for index in range(35):
        (tmp_path / f"file{index:02}.txt").write_text("x")
    candidates = complete("look file", registry, tmp_path).candidates
    assert len(candidates) == 20
    assert candidates == sorted(candidates)
    assert candidates[0] == "file00.txt"
