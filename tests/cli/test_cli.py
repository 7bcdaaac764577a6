"""The real command line, run as a subprocess (SPEC §8), and the import boundaries."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, write

import tui_agent
from tui_agent import create_session

CORE = Path(tui_agent.__file__).parent / "core"

GREET = """\
import tui_agent

@tui_agent.setup("greet")
def greet(session):
    session.toolbox.add(
        "greet",
        description="Say hello to someone",
        params={
            "name": {"type": "string", "description": "Who to greet"},
            "loud": {"type": "boolean", "description": "Shout it"},
        },
        required=["name"],
        aliases=["hello"],
        handler=lambda args: {"output": "hello " + args["name"]},
    )
"""


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def cli_project(project: Path, user_config_dir: Path) -> Path:
    """A user plugin (runs without trust) and the seed's wc plugin in the project (needs trust)."""
    write(user_config_dir / "plugins" / "greet.py", GREET)
    target = project / ".agents" / "plugins" / "wc.py"
    target.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "wc.py", target)
    return project


def names(definitions: list[dict]) -> list[str]:
    return [definition["function"]["name"] for definition in definitions]


@pytest.mark.parametrize(
    ("argv", "present", "absent"),
    [
        (["tools"], ["greet", "hello", "Say hello to someone"], ["Count lines"]),
        (["--trust", "tools"], ["greet", "wc", "count", "Count lines, words, and bytes"], []),
    ],
    ids=["untrusted", "trusted"],
)
def test_tools_prints_a_table(
    cli_project: Path, argv: list[str], present: list[str], absent: list[str]
) -> None:
    done = run_cli(*argv, cwd=cli_project)

    assert done.returncode == 0, done.stderr
    for text in present:
        assert text in done.stdout
    for text in absent:
        assert text not in done.stdout


@pytest.mark.parametrize("name", ["greet", "hello"])
def test_tools_name_shows_the_parameters(cli_project: Path, name: str) -> None:
    done = run_cli("tools", name, cwd=cli_project)

    assert done.returncode == 0, done.stderr
    for text in [
        "greet",
        "Say hello to someone",
        "name",
        "string",
        "Who to greet",
        "loud",
        "boolean",
        "Shout it",
    ]:
        assert text in done.stdout


@pytest.mark.parametrize("trust", [False, True], ids=["untrusted", "trusted"])
def test_tools_json_prints_the_definitions(cli_project: Path, trust: bool) -> None:
    done = run_cli("tools", "--json", *(["--trust"] if trust else []), cwd=cli_project)

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == create_session(cli_project, trust=trust).extensions.offered_tools()
    assert "greet" in names(printed)
    assert ("wc" in names(printed)) is trust


DENYING = """\
[permission]
"*" = "allow"
write = "deny"
execute = { "*" = "deny" }
edit = { "*" = "allow", "secret/*" = "deny" }
"""


def test_tools_json_prints_what_the_model_is_offered(
    cli_project: Path, user_config_dir: Path
) -> None:
    """Tools denied for every call are never offered, so ``tools --json`` leaves them out;
    a tool denied for some paths only is offered."""
    write(user_config_dir / "config.toml", DENYING)

    done = run_cli("tools", "--json", cwd=cli_project)

    assert done.returncode == 0, done.stderr
    printed = names(json.loads(done.stdout))
    assert "write" not in printed and "execute" not in printed
    assert {"edit", "read", "greet"} <= set(printed)
    session = create_session(cli_project)
    assert json.loads(done.stdout) == session.extensions.offered_tools()
    assert len(printed) == len(session.toolbox.tools) - 2


def test_the_tools_table_marks_denied_tools(cli_project: Path, user_config_dir: Path) -> None:
    write(user_config_dir / "config.toml", DENYING)

    done = run_cli("tools", cwd=cli_project)

    assert done.returncode == 0, done.stderr
    rows = {
        line.split("│")[1].strip(): line
        for line in done.stdout.splitlines()
        if line.startswith("│") and line.split("│")[1].strip()
    }
    assert "┃ Model   ┃" in done.stdout.splitlines()[2]
    for name in ["write", "execute"]:
        assert "│ denied " in rows[name], rows[name]
    for name in ["edit", "read", "greet"]:
        assert "│ offered " in rows[name], rows[name]

    one = run_cli("tools", "write", cwd=cli_project)
    assert one.returncode == 0, one.stderr
    assert "write is denied for every call" in one.stderr
    assert "not offered" in one.stderr
    assert "Write a file" in one.stdout
    shown = run_cli("tools", "read", cwd=cli_project)
    assert shown.returncode == 0 and "denied" not in shown.stderr


def test_tools_with_an_unknown_name_lists_only_offered_tools(
    cli_project: Path, user_config_dir: Path
) -> None:
    write(user_config_dir / "config.toml", DENYING)

    done = run_cli("tools", "nosuchtool", cwd=cli_project)

    assert done.returncode == 2
    [line] = [line for line in done.stderr.splitlines() if "unknown tool" in line]
    available = line.split("Available: ", 1)[1].split(", ")
    assert "write" not in available and "execute" not in available
    assert {"edit", "read", "greet"} <= set(available)


@pytest.mark.parametrize("name", ["wc", "count"])
def test_tools_name_json_prints_one_definition(cli_project: Path, name: str) -> None:
    done = run_cli("--trust", "tools", name, "--json", cwd=cli_project)

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    expected = create_session(cli_project, trust=True).toolbox.tools["wc"].definition()
    assert printed == expected
    assert printed["function"]["name"] == "wc"
    assert printed["function"]["parameters"]["required"] == ["path"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--trust", "tools", "--json"],
        ["tools", "--trust", "--json"],
        ["tools", "--json", "--trust"],
        ["--model", "m", "tools", "--trust", "--json"],
        ["tools", "--json", "--provider", "stub", "--trust", "--yes"],
    ],
)
def test_flags_go_before_or_after_the_subcommand(cli_project: Path, argv: list[str]) -> None:
    done = run_cli(*argv, cwd=cli_project)

    assert done.returncode == 0, done.stderr
    assert "wc" in names(json.loads(done.stdout))
    assert "skipped" not in done.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_directory_flag(cli_project: Path, tmp_path: Path, where: str) -> None:
    flag = ["-C", str(cli_project)]
    argv = (
        [*flag, "tools", "--json", "--trust"]
        if where == "before"
        else ["tools", "--json", "--trust", *flag]
    )

    done = run_cli(*argv, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert "wc" in names(json.loads(done.stdout))


def test_an_unknown_tool_exits_2_with_the_available_names(cli_project: Path) -> None:
    done = run_cli("tools", "nope", cwd=cli_project)

    assert done.returncode == 2
    assert "nope" in done.stderr
    assert "greet" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n", "SyntaxError"),
        ("import sys\nsys.exit(7)\n", "7"),
        ("import tui_agent_no_such_module_xyz\n", "tui_agent_no_such_module_xyz"),
        (
            "import tui_agent\n\n@tui_agent.setup('bad')\n"
            "def bad(session):\n    raise RuntimeError('setup broke')\n",
            "setup broke",
        ),
    ],
    ids=["syntax-error", "sys-exit", "import-error", "raising-setup"],
)
def test_a_broken_plugin_is_reported_on_stderr(
    cli_project: Path, user_config_dir: Path, source: str, message: str
) -> None:
    broken = write(user_config_dir / "plugins" / "broken.py", source)

    done = run_cli("tools", cwd=cli_project)

    assert done.returncode == 0, done.stderr
    problems = [line for line in done.stderr.splitlines() if "plugin problem" in line]
    assert len(problems) == 1, done.stderr
    assert str(broken) in problems[0]
    assert message in problems[0]
    assert "greet" in done.stdout


def test_untrusted_project_code_is_noted_on_stderr(cli_project: Path) -> None:
    done = run_cli("tools", cwd=cli_project)

    assert done.returncode == 0
    assert "skipped" in done.stderr
    assert "wc.py" in done.stderr
    assert "--trust" in done.stderr
    assert "wc" not in names(json.loads(run_cli("tools", "--json", cwd=cli_project).stdout))


def test_trusted_run_prints_no_skipped_note(cli_project: Path) -> None:
    done = run_cli("--trust", "tools", cwd=cli_project)

    assert done.returncode == 0
    assert done.stderr == ""


@pytest.mark.parametrize(
    "argv", [[], ["--trust"], ["--model", "m"]], ids=["bare", "trust", "model"]
)
def test_the_app_without_a_terminal_exits_2_and_points_to_run(
    project: Path, argv: list[str]
) -> None:
    done = run_cli(*argv, cwd=project)

    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and "tui-agent run" in done.stderr


def test_importing_tui_agent_loads_neither_textual_nor_openai(tmp_path: Path) -> None:
    code = (
        "import sys, tui_agent\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
        "assert 'openai' not in sys.modules, 'openai imported'\n"
        "session = tui_agent.create_session('.')\n"
        "assert '/help' in session.commands.names\n"
        "assert 'textual' not in sys.modules, 'textual imported by create_session'\n"
        "print('clean')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "clean"


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and getattr(node.func, "id", getattr(node.func, "attr", ""))
            in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def test_no_core_module_imports_textual() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert len(files) >= 5
    offenders = {
        str(file.relative_to(CORE)): sorted(
            m for m in imported_modules(file) if m.split(".")[0] == "textual"
        )
        for file in files
    }
    assert {file: mods for file, mods in offenders.items() if mods} == {}


def test_the_import_scanner_sees_textual_imports(tmp_path: Path) -> None:
    sample = write(
        tmp_path / "sample.py",
        "import os\nfrom textual.app import App\nimport importlib\n"
        "importlib.import_module('textual.widgets')\n",
    )

    assert {"textual.app", "textual.widgets"} <= imported_modules(sample)


def test_tools_says_why_a_file_in_a_tools_folder_gave_no_tools(project: Path) -> None:
    """`tui-agent tools` is where one looks: a helper script beside the tool files is named
    with the reason (a quiet note, not a problem); `run` stays quiet about it."""
    write(project / ".tui-agent" / "tools" / "helper.py", "import sys\nprint(sys.argv)\n")
    done = run_cli("tools", "--trust", "--provider", "stub", cwd=project)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "helper.py" in line]
    assert line.startswith("tui-agent: No tools in .tui-agent/tools/helper.py: not imported")
    ran = run_cli("run", "hi", "--trust", "--provider", "stub", cwd=project)
    assert "helper.py" not in ran.stderr
