"""Plugin files, setups, load order, broken plugins, reload, trust and config (SPEC §1, §3, §8)."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, write

import tui_agent
from tui_agent import create_session
from tui_agent.core.util import paths
from tui_agent.core.util.paths import bundled_plugins_dir

# -- helpers ------------------------------------------------------------------------------


def texts(session: tui_agent.Session) -> list[str]:
    return [note.text for note in session.output.history]


def said(session: tui_agent.Session, prefix: str) -> list[str]:
    return [text for text in texts(session) if text.startswith(prefix)]


# Three ways to register a setup from a plugin file; each says ``label`` when it runs.
FORMS = {
    "decorator": (
        "import tui_agent\n\n"
        "@tui_agent.setup({name!r})\n"
        "def _setup(session):\n"
        "    session.output.say({label!r})\n"
    ),
    "direct": (
        "import tui_agent\n\n"
        "def _setup(session):\n"
        "    session.output.say({label!r})\n\n"
        "tui_agent.setup({name!r}, _setup)\n"
    ),
    "configure": (
        "import tui_agent\n\n"
        "def _setup(session):\n"
        "    session.output.say({label!r})\n\n"
        "tui_agent.configure(lambda config: config.setup({name!r}, _setup))\n"
    ),
}


def plugin(name: str, label: str, form: str = "decorator") -> str:
    return FORMS[form].format(name=name, label=label)


def tool_plugin(setup_name: str, tool: str, description: str = "a tool") -> str:
    return (
        "import tui_agent\n\n"
        f"@tui_agent.setup({setup_name!r})\n"
        "def _setup(session):\n"
        f"    session.toolbox.add({tool!r}, description={description!r},\n"
        f"                        handler=lambda args: {{'said': {description!r}}})\n"
    )


@pytest.fixture
def folders(isolated_home: Path, user_config_dir: Path, project: Path) -> dict[str, Path]:
    """The plugin folders a test may write into (the bundled one is the repo's own)."""
    return {
        "home": isolated_home / ".agents" / "plugins",
        "user": user_config_dir / "plugins",
        "project": project / ".agents" / "plugins",
    }


def bundled_only(scratch: Path) -> tui_agent.Session:
    """A session that sees only the bundled plugins (an empty HOME and XDG config)."""
    empty = scratch / "empty-home"
    (empty / "project").mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(empty))
        patch.setenv("XDG_CONFIG_HOME", str(empty / ".config"))
        patch.setenv("XDG_DATA_HOME", str(empty / ".local" / "share"))
        return create_session(empty / "project")


# -- the seed's wc plugin -----------------------------------------------------------------


@pytest.fixture
def wc_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = project / ".agents" / "plugins" / "wc.py"
    target.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "wc.py", target)
    assert target.read_bytes() == (FIXTURES / "wc.py").read_bytes()
    write(project / "a.txt", "one two\nthree\n")
    monkeypatch.chdir(project)
    return project


def test_wc_plugin_registers_tool_alias_hook_and_command(wc_project: Path) -> None:
    session = create_session(wc_project, trust=True)

    assert session.extensions.problems == []
    tool = session.toolbox.tools["wc"]
    assert tool.aliases == ["count"]
    assert session.toolbox.aliases["count"] == "wc"
    assert [a for a, name in session.toolbox.aliases.items() if name == "wc"] == ["count"]
    assert tool.required == ["path"]
    assert tool.params == {"path": {"type": "string", "description": "File to count"}}
    assert len(session.toolbox.hooks["before"]["execute"]) == 1
    assert "/wc" in session.commands.names
    assert dict(session.commands)["/wc"] == "Count a file"


def test_wc_command_completions_come_from_the_working_folder(wc_project: Path) -> None:
    session = create_session(wc_project, trust=True)

    assert session.commands.completions_for("wc") == sorted(os.listdir())
    assert "a.txt" in session.commands.completions_for("wc")
    assert session.commands.completions_for("wc", "a") == ["a.txt"]
    assert session.commands.completions_for("wc", "zzz") == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/wc a.txt", {"lines": 2, "words": 3, "bytes": 14, "ok": True}),
        ("/wc missing.txt", {"error": "not found: missing.txt", "ok": False}),
    ],
)
async def test_wc_command_says_the_result_dict(wc_project: Path, line: str, expected: dict) -> None:
    session = create_session(wc_project, trust=True)
    before = len(session.output.history)

    assert await session.commands.run_line(line) is True

    notes = list(session.output.history)[before:]
    assert len(notes) == 1
    assert notes[0].text == repr(expected)
    assert ast.literal_eval(notes[0].text) == expected
    assert notes[0].kind is None


async def test_wc_tool_answers_to_its_alias_and_its_hook_guards_execute(wc_project: Path) -> None:
    session = create_session(wc_project, trust=True)

    result = await session.toolbox.run("count", {"path": "a.txt"})
    assert result.to_dict() == {"lines": 2, "words": 3, "bytes": 14, "ok": True}

    ran: list[str] = []
    session.toolbox.add(
        "execute",
        description="run a command",
        params={"command": {"type": "string"}},
        required=["command"],
        handler=lambda args: ran.append(args["command"]) or {"output": "done"},
    )
    refused = await session.toolbox.run("execute", {"command": "rm -rf build"})
    assert refused.ok is False
    assert refused.error == "refusing to run rm"
    allowed = await session.toolbox.run("execute", {"command": "ls -l"})
    assert allowed.ok is True
    assert ran == ["ls -l"]


# -- load order ---------------------------------------------------------------------------


def test_setups_run_in_folder_order_then_file_name_order(
    folders: dict[str, Path], project: Path
) -> None:
    # Written in an order that is neither the expected order, nor its reverse, nor the
    # alphabet across folders, so creation order or inode order cannot pass for it.
    write(folders["project"] / "a.py", plugin("project-a", "order: project/a.py"))
    write(folders["user"] / "m.py", plugin("user-m", "order: user/m.py", "direct"))
    write(folders["home"] / "b.py", plugin("home-b", "order: home/b.py"))
    write(folders["home"] / "a.py", plugin("home-a", "order: home/a.py"))
    write(folders["user"] / "c.py", plugin("user-c", "order: user/c.py"))
    write(folders["home"] / "z.py", plugin("home-z", "order: home/z.py", "configure"))
    write(folders["user"] / "x.py", plugin("user-x", "order: user/x.py"))

    session = create_session(project, trust=True)

    assert session.extensions.problems == []
    assert said(session, "order: ") == [
        "order: home/a.py",
        "order: home/b.py",
        "order: home/z.py",
        "order: user/c.py",
        "order: user/m.py",
        "order: user/x.py",
        "order: project/a.py",
    ]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (("home", "b.py", "decorator"), ("home", "c.py", "direct")),
        (("home", "z.py", "direct"), ("user", "a.py", "configure")),
        (("home", "z.py", "configure"), ("project", "a.py", "decorator")),
        (("user", "z.py", "decorator"), ("project", "a.py", "configure")),
        (("project", "a.py", "direct"), ("project", "b.py", "decorator")),
    ],
    ids=lambda case: "/".join(case[:2]),
)
def test_a_later_registration_under_the_same_name_replaces_the_earlier(
    folders: dict[str, Path], project: Path, earlier: tuple, later: tuple
) -> None:
    (early_folder, early_file, early_form), (late_folder, late_file, late_form) = earlier, later
    # The later file is written first, so creation order cannot stand in for the real order.
    write(
        folders[late_folder] / late_file,
        plugin("same", f"same: {late_folder}/{late_file}", late_form),
    )
    write(
        folders[early_folder] / early_file,
        plugin("same", f"same: {early_folder}/{early_file}", early_form),
    )

    session = create_session(project, trust=True)

    assert session.extensions.problems == []
    assert said(session, "same: ") == [f"same: {late_folder}/{late_file}"]


@pytest.mark.parametrize("folder", ["home", "user", "project"])
def test_every_plugin_folder_loads_after_the_bundled_one(
    folders: dict[str, Path], project: Path, folder: str
) -> None:
    # The bundled plugin registers its commands under the setup name "commands".
    baseline = create_session(project, trust=True)
    assert {"/help", "/reload", "/tools"} <= set(baseline.commands.names)

    write(
        folders[folder] / "commands.py",
        "import tui_agent\n\n"
        "@tui_agent.setup('commands')\n"
        "def mine(session):\n"
        "    session.commands.register('mine', handler=lambda args: None)\n",
    )
    session = create_session(project, trust=True)

    replaced = {"/help", "/reload", "/tools"}
    assert set(session.commands.names) == (set(baseline.commands.names) - replaced) | {"/mine"}


def test_programmatic_configure_setup_and_provider(project: Path) -> None:
    ran: list[object] = []
    seen: list[object] = []

    def my_setup(session: tui_agent.Session) -> None:
        ran.append(session)

    def factory(**kwargs: object) -> object:
        return object()

    returned = tui_agent.configure(
        lambda config: seen.append(config) or config.setup("x", my_setup)
    )
    tui_agent.configure(lambda config: config.provider("mine", factory))
    assert callable(returned)
    assert len(seen) == 1 and isinstance(seen[0], tui_agent.Config)  # called at once

    session = create_session(project)

    assert ran == [session]
    assert "mine" in session.extensions.providers
    assert session.extensions.problems == []


def test_programmatic_setup_direct_and_decorator_forms(project: Path) -> None:
    calls: list[str] = []

    def direct(session: tui_agent.Session) -> None:
        calls.append("direct")
        session.toolbox.add("direct_tool", description="d", handler=lambda args: {})

    assert tui_agent.setup("direct", direct) is direct

    @tui_agent.setup("decorated")
    def decorated(session: tui_agent.Session) -> None:
        calls.append("decorated")

    assert callable(decorated)
    session = create_session(project)

    assert calls == ["direct", "decorated"]
    assert "direct_tool" in session.toolbox.tools
    session.reload()
    assert calls == ["direct", "decorated", "direct", "decorated"]


def test_programmatic_registration_replaces_a_plugin_file_one(
    folders: dict[str, Path], project: Path
) -> None:
    write(folders["user"] / "same.py", plugin("same", "same: file"))
    tui_agent.setup("same", lambda session: session.output.say("same: program"))

    session = create_session(project)

    assert said(session, "same: ") == ["same: program"]


@pytest.mark.parametrize("folder", ["home", "user", "project"])
def test_a_plugin_file_registers_a_provider(
    folders: dict[str, Path], project: Path, folder: str
) -> None:
    write(
        folders[folder] / "provider.py",
        "import tui_agent\n\n"
        "def factory(**kwargs):\n"
        "    return None\n\n"
        "tui_agent.configure(lambda config: config.provider('from-file', factory))\n",
    )

    session = create_session(project, trust=True)

    assert session.extensions.problems == []
    assert "from-file" in session.extensions.providers


# -- broken plugins -----------------------------------------------------------------------

GOOD = tool_plugin("good", "good_tool")

BROKEN = [
    pytest.param("def broken(:\n    pass\n", "SyntaxError", "", id="syntax-error"),
    pytest.param(
        "import tui_agent_no_such_module_xyz\n",
        "No module named 'tui_agent_no_such_module_xyz'",
        "",
        id="import-error",
    ),
    pytest.param("import sys\nsys.exit('plugin gave up')\n", "plugin gave up", "", id="sys-exit"),
    pytest.param(
        "import tui_agent\n\n"
        "@tui_agent.setup('kaboom')\n"
        "def kaboom(session):\n"
        "    raise ValueError('setup exploded')\n",
        "setup exploded",
        "kaboom",
        id="raising-setup",
    ),
]


@pytest.mark.parametrize("folder", ["home", "user", "project"])
@pytest.mark.parametrize(("source", "message", "setup_name"), BROKEN)
def test_a_broken_plugin_is_reported_and_the_others_still_load(
    folders: dict[str, Path], project: Path, folder: str, source: str, message: str, setup_name: str
) -> None:
    bad = write(folders[folder] / "b_bad.py", source)
    write(folders[folder] / "a_good.py", tool_plugin("good-a", "good_a"))
    write(folders[folder] / "c_good.py", tool_plugin("good-c", "good_c"))

    session = create_session(project, trust=True)

    assert len(session.extensions.problems) == 1
    problem = session.extensions.problems[0]
    assert str(bad) in str(problem)
    assert message in str(problem)
    if setup_name:
        assert setup_name in str(problem)
    assert {"good_a", "good_c"} <= set(session.toolbox.tools)
    assert "/help" in session.commands.names


def test_every_kind_of_broken_plugin_at_once(folders: dict[str, Path], project: Path) -> None:
    broken = {
        write(folders["home"] / "syntax.py", "def broken(:\n"): "SyntaxError",
        write(
            folders["user"] / "imports.py", "from os import no_such_name_xyz\n"
        ): "no_such_name_xyz",
        write(folders["user"] / "exits.py", "raise SystemExit(3)\n"): "3",
        write(folders["project"] / "raises.py", BROKEN[3].values[0]): "setup exploded",
    }
    write(folders["home"] / "good.py", tool_plugin("good-home", "home_tool"))
    write(folders["project"] / "good.py", tool_plugin("good-project", "project_tool"))

    session = create_session(project, trust=True)

    reported = {problem.path: str(problem) for problem in session.extensions.problems}
    assert set(reported) == {str(path) for path in broken}
    for path, message in broken.items():
        assert message in reported[str(path)]
    assert {"home_tool", "project_tool"} <= set(session.toolbox.tools)


def test_a_raising_setup_is_rolled_back(folders: dict[str, Path], project: Path) -> None:
    write(
        folders["user"] / "a.py",
        "import tui_agent\n\n"
        "@tui_agent.setup('early')\n"
        "def early(session):\n"
        "    session.toolbox.add('early', description='original', handler=lambda args: {})\n",
    )
    bad = write(
        folders["user"] / "b.py",
        "import tui_agent\n\n"
        "@tui_agent.setup('half')\n"
        "def half(session):\n"
        "    session.toolbox.add('half', description='half made', aliases=['half_alias'],\n"
        "                        handler=lambda args: {})\n"
        "    session.toolbox.add('early', description='replaced', handler=lambda args: {})\n"
        "    session.toolbox.before('half', lambda args: None)\n"
        "    session.toolbox.after(lambda args, result, tool_name: None)\n"
        "    session.commands.register('half', handler=lambda args: None)\n"
        "    raise RuntimeError('half way')\n",
    )
    write(folders["user"] / "c.py", tool_plugin("late", "late"))

    bundled = bundled_only(project.parent)
    session = create_session(project)

    assert [(p.path, p.setup) for p in session.extensions.problems] == [(str(bad), "half")]
    assert "half way" in str(session.extensions.problems[0])
    assert set(session.toolbox.tools) - set(bundled.toolbox.tools) == {"early", "late"}
    assert session.toolbox.tools["early"].description == "original"
    assert "half_alias" not in session.toolbox.aliases

    def shape(hooks: dict[str, dict[str, list[object]]]) -> dict[str, dict[str, int]]:
        return {when: {k: len(v) for k, v in table.items()} for when, table in hooks.items()}

    assert shape(session.toolbox.hooks) == shape(bundled.toolbox.hooks)
    assert "/half" not in session.commands.names


@pytest.mark.parametrize("name", ["_helper.py", "_private.py", ".hidden.py"])
def test_private_files_are_skipped(folders: dict[str, Path], project: Path, name: str) -> None:
    write(
        folders["user"] / name, plugin("private", "private ran") + "raise RuntimeError('loaded')\n"
    )
    write(folders["user"] / "public.py", plugin("public", "public ran"))

    session = create_session(project)

    assert session.extensions.problems == []
    assert "private ran" not in texts(session)
    assert "public ran" in texts(session)


# -- reload -------------------------------------------------------------------------------


def test_reload_sees_an_edit_made_within_the_same_second(
    folders: dict[str, Path], project: Path
) -> None:
    file = write(folders["user"] / "edit.py", tool_plugin("edit", "edited", "AAA"))
    session = create_session(project)
    assert session.toolbox.tools["edited"].description == "AAA"
    stat = file.stat()

    file.write_text(tool_plugin("edit", "edited", "BBB"), encoding="utf-8")
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file.stat().st_size == stat.st_size
    assert file.stat().st_mtime_ns == stat.st_mtime_ns

    session.reload()

    assert session.toolbox.tools["edited"].description == "BBB"


async def test_reload_runs_the_edited_handler(folders: dict[str, Path], project: Path) -> None:
    file = write(folders["user"] / "edit.py", tool_plugin("edit", "edited", "AAA"))
    session = create_session(project)
    assert (await session.toolbox.run("edited", {})).to_dict() == {"said": "AAA", "ok": True}
    stat = file.stat()
    file.write_text(tool_plugin("edit", "edited", "BBB"), encoding="utf-8")
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    session.reload()

    assert (await session.toolbox.run("edited", {})).to_dict() == {"said": "BBB", "ok": True}


def test_reload_picks_up_new_and_deleted_files_in_place(
    folders: dict[str, Path], project: Path
) -> None:
    old = write(folders["user"] / "old.py", tool_plugin("old", "old_tool"))
    session = create_session(project)
    toolbox, commands = session.toolbox, session.commands
    assert "old_tool" in toolbox.tools

    old.unlink()
    write(folders["home"] / "new.py", tool_plugin("new", "new_tool"))
    report = session.reload()

    assert session.toolbox is toolbox
    assert session.commands is commands
    assert "old_tool" not in toolbox.tools
    assert "new_tool" in toolbox.tools
    assert "/help" in commands.names
    assert folders["home"] / "new.py" in report.plugin_files


def test_reload_rereads_the_user_config(project: Path, user_config_dir: Path) -> None:
    config = write(user_config_dir / "config.toml", 'model = "first"\n')
    session = create_session(project)
    assert session.extensions.model == "first"

    config.write_text('model = "second"\n', encoding="utf-8")
    session.reload()

    assert session.extensions.model == "second"


async def test_reload_command_reloads_and_reports_counts(
    folders: dict[str, Path], project: Path
) -> None:
    write(folders["user"] / "one.py", tool_plugin("one", "one_tool"))
    session = create_session(project)
    write(folders["home"] / "two.py", tool_plugin("two", "two_tool"))
    toolbox = session.toolbox
    before = len(session.output.history)

    assert await session.commands.run_line("/reload") is True

    assert session.toolbox is toolbox
    assert {"one_tool", "two_tool"} <= set(toolbox.tools)
    notes = list(session.output.history)[before:]
    assert notes and all(note.kind != "error" for note in notes)
    report = notes[0].text
    bundled = bundled_only(project.parent)
    files = len(list(bundled_plugins_dir().glob("[!_]*.py")))
    # the bundled files + one.py + two.py; the bundled tools + 2; the bundled commands
    assert re.search(rf"\b{files + 2} plugin files?\b", report), report
    assert re.search(rf"\b{len(bundled.toolbox.tools) + 2} tools?\b", report), report
    assert re.search(rf"\b{len(bundled.commands)} commands?\b", report), report


async def test_reload_command_reports_a_new_problem(
    folders: dict[str, Path], project: Path
) -> None:
    session = create_session(project)
    bad = write(folders["user"] / "bad.py", "def broken(:\n")

    await session.commands.run_line("/reload")

    errors = [note.text for note in session.output.history if note.kind == "error"]
    assert any(str(bad) in text and "SyntaxError" in text for text in errors), errors
    assert [problem.path for problem in session.extensions.problems] == [str(bad)]


# -- trust --------------------------------------------------------------------------------


@pytest.fixture
def local_code(project: Path) -> list[Path]:
    """A project with a plugin, a tool file and a config file: all need trust."""
    return [
        write(project / ".agents" / "plugins" / "local.py", tool_plugin("local", "local_tool")),
        write(
            project / ".tui-agent" / "tools" / "filed.py",
            "from tui_agent import tool\n\n"
            "@tool(description='a tool file')\n"
            "def filed(x: int) -> int:\n"
            "    return x\n",
        ),
        write(project / ".tui-agent" / "config.toml", 'model = "project-model"\n'),
    ]


def resolved(files: list[Path]) -> set[Path]:
    return {Path(file).resolve() for file in files}


def test_untrusted_project_code_is_skipped(project: Path, local_code: list[Path]) -> None:
    session = create_session(project)

    assert "local_tool" not in session.toolbox.tools
    assert "filed" not in session.toolbox.tools
    assert session.extensions.model is None  # project config.toml not read
    assert resolved(session.extensions.skipped) == resolved(local_code)
    assert session.workspace.needs_trust is True
    assert session.extensions.problems == []
    assert "/help" in session.commands.names  # bundled code still runs


def test_trust_flag_loads_project_code(project: Path, local_code: list[Path]) -> None:
    session = create_session(project, trust=True)

    assert {"local_tool", "filed"} <= set(session.toolbox.tools)
    assert session.extensions.model == "project-model"
    assert session.extensions.skipped == []
    assert session.workspace.needs_trust is False
    assert not paths.user_data_dir().joinpath("trust.json").exists()  # the flag is not remembered


def test_trust_is_remembered_in_the_user_data_dir(
    project: Path, local_code: list[Path], isolated_home: Path
) -> None:
    session = create_session(project)
    assert "local_tool" not in session.toolbox.tools

    session.workspace.trust()

    session.reload()

    assert {"local_tool", "filed"} <= set(session.toolbox.tools)
    assert session.extensions.model == "project-model"
    assert session.workspace.needs_trust is False
    trust_file = paths.user_data_dir() / "trust.json"
    assert trust_file.is_file()
    assert trust_file.is_relative_to(isolated_home)
    json.loads(trust_file.read_text(encoding="utf-8"))

    again = create_session(project)
    assert {"local_tool", "filed"} <= set(again.toolbox.tools)
    assert again.extensions.skipped == []
    assert again.workspace.needs_trust is False


def test_trust_applies_to_sessions_started_in_a_subfolder(
    project: Path, local_code: list[Path]
) -> None:
    create_session(project).workspace.trust()
    (project / "src" / "deep").mkdir(parents=True)

    session = create_session(project / "src" / "deep")

    assert "local_tool" in session.toolbox.tools
    assert session.extensions.model == "project-model"


def test_trust_does_not_leak_to_another_folder(
    project: Path, local_code: list[Path], tmp_path: Path
) -> None:
    create_session(project).workspace.trust()
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    write(other / ".agents" / "plugins" / "other.py", tool_plugin("other", "other_tool"))

    session = create_session(other)

    assert "other_tool" not in session.toolbox.tools
    assert session.workspace.needs_trust is True


@pytest.mark.parametrize("config_text", ["", 'model = "m"\n'], ids=["no-settings", "settings"])
def test_trusted_code_does_not_run_in_a_later_untrusted_session(
    project: Path, user_config_dir: Path, config_text: str
) -> None:
    # Registrations from one session's files must not outlive it (process-wide state).
    if config_text:
        write(user_config_dir / "config.toml", config_text)
    write(project / ".agents" / "plugins" / "local.py", tool_plugin("local", "local_tool"))
    assert "local_tool" in create_session(project, trust=True).toolbox.tools

    session = create_session(project)

    assert "local_tool" not in session.toolbox.tools
    assert session.workspace.needs_trust is True


def test_distrust_is_remembered_and_code_stays_skipped(
    project: Path, local_code: list[Path]
) -> None:
    session = create_session(project)
    assert session.workspace.needs_trust is True

    session.workspace.distrust()

    assert session.workspace.needs_trust is False
    session.reload()
    assert "local_tool" not in session.toolbox.tools
    assert resolved(session.extensions.skipped) == resolved(local_code)

    again = create_session(project)
    assert again.workspace.needs_trust is False
    assert "local_tool" not in again.toolbox.tools
    assert again.extensions.model is None
    assert resolved(again.extensions.skipped) == resolved(local_code)


def test_a_folder_without_project_code_needs_no_trust(project: Path) -> None:
    session = create_session(project)

    assert session.workspace.needs_trust is False
    assert session.extensions.skipped == []


# -- configuration ------------------------------------------------------------------------

MODEL_CASES = [
    # user config, project config, TUI_AGENT_MODEL, --model, trusted → model
    pytest.param(None, None, None, None, True, None, id="nothing"),
    pytest.param("user", None, None, None, True, "user", id="user"),
    pytest.param("user", "project", None, None, True, "project", id="project-over-user"),
    pytest.param("user", "project", None, None, False, "user", id="untrusted-project-ignored"),
    pytest.param(None, "project", None, None, False, None, id="untrusted-project-only"),
    pytest.param("user", "project", "env", None, True, "env", id="env-over-project"),
    pytest.param("user", None, "env", None, False, "env", id="env-over-user"),
    pytest.param("user", "project", "env", "flag", True, "flag", id="flag-over-env"),
    pytest.param(None, None, None, "flag", False, "flag", id="flag"),
]


@pytest.mark.parametrize(("user", "local", "env", "flag", "trusted", "expected"), MODEL_CASES)
def test_model_precedence(
    project: Path,
    user_config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    user: str | None,
    local: str | None,
    env: str | None,
    flag: str | None,
    trusted: bool,
    expected: str | None,
) -> None:
    if user:
        write(user_config_dir / "config.toml", f'model = "{user}"\n')
    if local:
        write(project / ".tui-agent" / "config.toml", f'model = "{local}"\n')
    if env:
        monkeypatch.setenv("TUI_AGENT_MODEL", env)

    session = create_session(project, model=flag, trust=trusted)

    assert session.extensions.model == expected


BASE_URL_CASES = [
    # user config, project config, OPENAI_BASE_URL, --base-url → base_url
    pytest.param("http://user/v1", None, None, None, "http://user/v1", id="user"),
    pytest.param(
        "http://user/v1", "http://project/v1", None, None, "http://project/v1", id="project"
    ),
    pytest.param(
        "http://user/v1", "http://project/v1", "http://env/v1", None, "http://env/v1", id="env"
    ),
    pytest.param(
        "http://user/v1",
        "http://project/v1",
        "http://env/v1",
        "http://flag/v1",
        "http://flag/v1",
        id="flag",
    ),
]


@pytest.mark.parametrize(("user", "local", "env", "flag", "expected"), BASE_URL_CASES)
def test_base_url_precedence(
    project: Path,
    user_config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    user: str | None,
    local: str | None,
    env: str | None,
    flag: str | None,
    expected: str,
) -> None:
    if user:
        write(user_config_dir / "config.toml", f'base_url = "{user}"\n')
    if local:
        write(project / ".tui-agent" / "config.toml", f'base_url = "{local}"\n')
    if env:
        monkeypatch.setenv("OPENAI_BASE_URL", env)

    session = create_session(project, base_url=flag, trust=True)

    assert session.config["base_url"] == expected
    assert session.extensions.provider_name == "openai"


PROVIDER_CASES = [
    # environment, user config.toml, project config.toml, create_session kwargs → provider
    pytest.param({}, "", "", {}, "stub", id="nothing-is-stub"),
    pytest.param({"OPENAI_API_KEY": "sk-test"}, "", "", {}, "openai", id="env-key"),
    pytest.param(
        {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "", "", {}, "openai", id="env-base-url"
    ),
    pytest.param({}, 'api_key = "sk-test"\n', "", {}, "openai", id="user-config-key"),
    pytest.param(
        {}, 'base_url = "http://localhost:11434/v1"\n', "", {}, "openai", id="user-config-url"
    ),
    pytest.param(
        {}, "", 'base_url = "http://localhost:1/v1"\n', {}, "stub", id="untrusted-project-url"
    ),
    pytest.param({}, "", "", {"base_url": "http://127.0.0.1:9/v1"}, "openai", id="base-url-flag"),
    pytest.param(
        {"OPENAI_API_KEY": "sk-test"}, "", "", {"provider": "stub"}, "stub", id="provider-flag"
    ),
]


@pytest.mark.parametrize(("env", "user", "local", "kwargs", "expected"), PROVIDER_CASES)
def test_default_provider(
    project: Path,
    user_config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    user: str,
    local: str,
    kwargs: dict[str, str],
    expected: str,
) -> None:
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    if user:
        write(user_config_dir / "config.toml", user)
    if local:
        write(project / ".tui-agent" / "config.toml", local)

    session = create_session(project, **kwargs)

    assert session.extensions.provider_name == expected


def test_config_tables_merge_key_by_key(project: Path, user_config_dir: Path) -> None:
    write(user_config_dir / "config.toml", '[permission]\n"*" = "ask"\nread = "allow"\n')
    write(project / ".tui-agent" / "config.toml", '[permission]\n"*" = "deny"\n')

    session = create_session(project, trust=True)

    assert session.config["permission"] == {"*": "deny", "read": "allow"}


# -- run_command_line ---------------------------------------------------------------------


async def test_unknown_command_lists_every_command(folders: dict[str, Path], project: Path) -> None:
    write(
        folders["user"] / "cmds.py",
        "import tui_agent\n\n"
        "@tui_agent.setup('cmds')\n"
        "def cmds(session):\n"
        "    session.commands.register('zeta', handler=lambda args: None)\n"
        "    session.commands.register('alpha', handler=lambda args: None)\n",
    )
    session = create_session(project)
    before = len(session.output.history)

    assert await session.commands.run_line("/nope some args") is True

    notes = list(session.output.history)[before:]
    assert len(notes) == 1
    assert "nope" in notes[0].text
    bundled = bundled_only(project.parent)
    assert set(session.commands.names) == set(bundled.commands.names) | {"/alpha", "/zeta"}
    for name in session.commands.names:
        assert name in notes[0].text


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        ("def handler(args):\n    raise ValueError('bad value: ' + str(args))\n", "bad value: x y"),
        ("async def handler(args):\n    raise RuntimeError('async boom')\n", "async boom"),
    ],
    ids=["sync", "async"],
)
async def test_a_raising_command_becomes_an_error_note(
    folders: dict[str, Path], project: Path, handler: str, message: str
) -> None:
    write(
        folders["user"] / "boom.py",
        "import tui_agent\n\n"
        f"{handler}\n"
        "@tui_agent.setup('boom')\n"
        "def boom(session):\n"
        "    session.commands.register('boom', handler=handler)\n"
        "    session.commands.register(\n"
        "        'fine', handler=lambda args: session.output.say('fine ran'))\n",
    )
    session = create_session(project)
    before = len(session.output.history)

    assert await session.commands.run_line("/boom x y") is True

    notes = list(session.output.history)[before:]
    assert [(note.text, note.kind) for note in notes] == [(f"error: {message}", "error")]
    assert await session.commands.run_line("/fine") is True
    assert session.output.history[-1].text == "fine ran"


@pytest.mark.parametrize("line", ["hello", "", "   ", "what about /help", "explain a/b"])
async def test_a_non_command_line_returns_false(project: Path, line: str) -> None:
    session = create_session(project)
    before = len(session.output.history)

    assert await session.commands.run_line(line) is False
    assert len(session.output.history) == before


async def test_command_gets_everything_after_the_first_space(
    folders: dict[str, Path], project: Path
) -> None:
    write(
        folders["user"] / "echo.py",
        "import tui_agent\n\n"
        "@tui_agent.setup('echo')\n"
        "def echo(session):\n"
        "    session.commands.register(\n"
        "        'echo', handler=lambda args: session.output.say(repr(args)))\n",
    )
    session = create_session(project)

    await session.commands.run_line("/echo one  two three")
    await session.commands.run_line("/echo")

    assert texts(session)[-2:] == [repr("one  two three"), repr(None)]


def test_a_file_that_fails_after_registering_keeps_none_of_its_setups(project: Path) -> None:
    from tui_agent.core.util.paths import home_plugins_dir

    write(
        home_plugins_dir() / "half.py",
        "import tui_agent\n"
        "tui_agent.setup('half', lambda s: s.output.say('half: ran'))\n"
        "tui_agent.configure(lambda c: c.provider('halfprov', lambda settings: None))\n"
        "import does_not_exist_anywhere\n",
    )
    session = tui_agent.create_session(project)
    assert said(session, "half: ") == []
    assert "halfprov" not in session.extensions.providers
    assert [p.path for p in session.extensions.problems] == [str(home_plugins_dir() / "half.py")]
    assert "ModuleNotFoundError" in session.extensions.problems[0].error


def test_kept_state_and_hidden_tools_through_a_reload(project: Path) -> None:
    """A plugin's typed state outlives /reload; its tool filter belongs to one load."""
    plugin = project / ".agents" / "plugins" / "keeper.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(
        "from dataclasses import dataclass, field\n"
        "import tui_agent\n\n"
        "@dataclass\n"
        "class Counter:\n"
        "    loads: int = 0\n"
        "    seen: list = field(default_factory=list)\n\n"
        "@tui_agent.setup('keeper')\n"
        "def keeper(session):\n"
        "    counter = session.extensions.kept('keeper', Counter)\n"
        "    counter.loads += 1\n"
        "    session.toolbox.add('secret', description='Hidden', handler=lambda a: {})\n"
        "    session.toolbox.add('plain', description='Shown', handler=lambda a: {})\n"
        "    if counter.loads == 1:\n"
        "        session.extensions.hide_tools(lambda name: name == 'secret')\n"
    )
    from tui_agent import create_session

    session = create_session(project, trust=True)
    counter = session.extensions.kept("keeper", dict)
    assert type(counter).__name__ == "Counter" and counter.loads == 1
    offered = [d["function"]["name"] for d in session.extensions.offered_tools()]
    assert "plain" in offered and "secret" not in offered
    unknown = asyncio.run(session.toolbox.run("nope", {}))
    assert "plain" in str(unknown.error) and "secret" not in str(unknown.error)
    session.reload()
    assert session.extensions.kept("keeper", dict) is counter and counter.loads == 2
    assert "secret" in [d["function"]["name"] for d in session.extensions.offered_tools()]


ON_CLOSE_PLUGIN = """\
import asyncio
import tui_agent

LOADS = []

@tui_agent.setup("closer")
def closer(session):
    log = session.extensions.kept("closer", list)
    load = len([e for e in log if e.startswith("setup")]) + 1
    log.append(f"setup {load}")
    session.on("close", lambda: log.append(f"closed sync {load}"))

    async def later():
        await asyncio.sleep(0.01)
        log.append(f"closed async {load}")

    session.on("close", later)
"""


def test_reload_runs_the_replaced_loads_on_close_functions(project: Path) -> None:
    """A plugin that starts something in its setup and stops it in on_close is not left
    running by /reload (the replaced load's functions run, newest first)."""
    from tui_agent import create_session

    plugin = project / ".agents" / "plugins" / "closer.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(ON_CLOSE_PLUGIN)
    session = create_session(project, trust=True)
    log: list[str] = session.extensions.kept("closer", list)
    session.reload()  # no event loop: they run at once
    assert log == ["setup 1", "closed async 1", "closed sync 1", "setup 2"]

    async def in_the_app() -> None:
        report = session.reload()  # a loop runs: the async close work, then the setups
        assert log[-1] == "setup 2"  # nothing waited for yet
        assert await report is report
        assert log[-3:] == ["closed async 2", "closed sync 2", "setup 3"]
        session.reload()
        await session.extensions.ready()  # the next turn waits for the load too
        assert log[-3:] == ["closed async 3", "closed sync 3", "setup 4"]
        await session.close()
        assert log[-2:] == ["closed async 4", "closed sync 4"]

    asyncio.run(in_the_app())
    assert log[-2:] == ["closed async 4", "closed sync 4"]  # once: closing again runs none
    asyncio.run(session.close())
    assert log[-2:] == ["closed async 4", "closed sync 4"]


ASYNC_SETUP_PLUGIN = """
import asyncio
import tui_agent

@tui_agent.setup("slow")
async def slow(session):
    await asyncio.sleep(0.01)  # e.g. asking a server what it offers

    @session.toolbox.add("slow_tool", description="made after an await")
    def slow_tool(args):
        return {"ok_from": "async setup"}

    @session.toolbox.add("execute", description="an async setup's execute")
    def execute(args):
        return {"from": "plugin"}

@tui_agent.setup("broken_async")
async def broken(session):
    session.toolbox.add("half_made", description="rolled back", handler=lambda args: {})
    await asyncio.sleep(0)
    raise RuntimeError("the server said no")
"""

EXECUTE_TOOL_FILE = """
from tui_agent import tool

@tool(description="the tool file's execute")
def execute(command: str) -> str:
    return "from the tool file"
"""


def async_setup_project(project: Path) -> None:
    write(project / ".agents" / "plugins" / "slow.py", ASYNC_SETUP_PLUGIN)
    write(project / ".tui-agent" / "tools" / "execute.py", EXECUTE_TOOL_FILE)


def check_async_setups(session: Any) -> None:
    assert "slow_tool" in session.toolbox.tools
    assert "half_made" not in session.toolbox.tools  # rolled back like a sync setup
    [problem] = [p for p in session.extensions.problems if p.setup == "broken_async"]
    assert problem.error == "RuntimeError: the server said no"
    assert problem.path.endswith("slow.py")
    # tool files still come after every setup: the tool file's execute wins
    assert session.toolbox.tools["execute"].description == "the tool file's execute"


def test_async_setups_run_to_the_end_without_an_event_loop(project: Path) -> None:
    async_setup_project(project)
    session = create_session(project, trust=True)
    check_async_setups(session)


async def test_awaiting_reload_waits_for_async_setups(project: Path) -> None:
    async_setup_project(project)
    session = create_session(project, trust=True, load=False)
    report = session.reload()
    assert "slow_tool" not in session.toolbox.tools  # still awaiting its setup
    assert await report is report
    check_async_setups(session)
    assert report.problems == session.extensions.problems
    assert (await session.toolbox.run("slow_tool", {})).to_dict() == {
        "ok_from": "async setup",
        "ok": True,
    }
    session.reload()
    await session.extensions.ready()  # what a turn does first
    check_async_setups(session)
    await session.close()
