"""SPEC §4, custom tool files (continued from ``test_tool_files.py``): which files of a
tools folder are imported, files shaped like a tool without ``tool()``, and the seed pages'
examples typed literally (issue 26).

Every tool file here is a real file in a real folder, loaded by ``create_session``; tools
run through ``session.toolbox.run`` exactly as the agent loop runs them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write
from tool_files_kit import ECHO, load, src, tools_folder

from tui_agent import Session, ToolContext, create_session

# -- which files are imported: helper scripts beside the tools (issue 14) -------------------

README = Path(__file__).parents[3] / "README.md"

# the Dropstone page's Python script, as typed: it reads sys.argv at its top level
SEED_SCRIPT = """
import sys

a = int(sys.argv[1])
b = int(sys.argv[2])
print(a + b)
"""


def readme_block(first_line: str) -> str:
    """The README's Python block that starts with ``first_line``."""
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n" + first_line) + len("```python\n")
    return text[start : text.index("```", start)]


def notes(session: Session) -> list[str]:
    return [note.text for note in session.output.history]


def helper_script(marker: Path) -> str:
    """A script that must never be imported: it leaves a marker, prints and exits."""
    return src(
        f"""
        import sys
        from pathlib import Path

        Path({str(marker)!r}).write_text(" ".join(sys.argv))
        print("the helper ran")
        sys.exit(3)
        """
    )


async def test_readme_helper_script_example(project: Path, tmp_path: Path) -> None:
    """The README's example exactly: .tui-agent/tools/add.py runs .tui-agent/scripts/add.py;
    a second helper placed in the tools folder itself is not imported."""
    marker = tmp_path / "imported"
    tools = project / ".tui-agent" / "tools"
    write(project / ".tui-agent" / "scripts" / "add.py", src(SEED_SCRIPT))
    write(tools / "add.py", readme_block("# .tui-agent/tools/add.py"))
    write(tools / "cleanup.py", helper_script(marker))
    session = create_session(project, trust=True)

    assert session.extensions.problems == []
    assert not marker.exists(), "the helper script in the tools folder was imported"
    assert "cleanup" not in session.toolbox.tools
    result = await session.toolbox.run("add", {"a": 2, "b": 3})
    assert result.to_dict() == {"output": "5", "ok": True}
    [note] = [n for n in session.output.history if "cleanup.py" in n.text]
    assert note.kind is None  # a plain note, not an error
    assert note.text.startswith("No tools in .tui-agent/tools/cleanup.py: not imported")
    assert "does not import tui_agent" in note.text


async def test_seed_layout_script_in_the_tools_folder(project: Path) -> None:
    """The Dropstone page keeps its script at .dropstone/tools/add.py, beside the tool that
    runs it; imported, it would fail at load time on tui-agent's own sys.argv."""
    tools = project / ".tui-agent" / "tools"
    write(tools / "add.py", src(SEED_SCRIPT))
    tool_file = readme_block("# .tui-agent/tools/add.py").replace(
        ".tui-agent/scripts/add.py", ".tui-agent/tools/add.py"
    )
    write(tools / "python_add.py", tool_file)
    session = create_session(project, trust=True)
    report = session.reload()

    assert session.extensions.problems == [] and report.problems == []
    assert "add" not in session.toolbox.tools
    assert report.no_tools == [tools / "add.py"]
    assert report.tool_files == [tools / "python_add.py"]
    assert any(n.startswith("No tools in .tui-agent/tools/add.py") for n in report.notes)
    result = await session.toolbox.run("python_add_add", {"a": 20, "b": 22})
    assert result.to_dict() == {"output": "42", "ok": True}


NOT_TOOL_FILES: list[Any] = [
    pytest.param("", id="plain"),
    pytest.param("# uses tui_agent.tool? no: this only mentions tui_agent\n", id="comment"),
    pytest.param('HELP = "run me, not from tui_agent import tool"\n', id="string"),
    pytest.param("import tui_agentx\n", id="other-package"),
    pytest.param("def cleanup(a, b):\n    return a + b\n", id="function-named-like-file"),
    pytest.param("def default(args):\n    return 1\n", id="function-named-default"),
    pytest.param('default = {"description": "d", "execute": "yes"}\n', id="dict-no-callable"),
    pytest.param('DISPATCH = {"execute": print}\n', id="dict-no-description"),
    pytest.param('_spec = {"description": "d", "execute": print}\n', id="private-dict"),
]


@pytest.mark.parametrize("where", ["global", "project", "project-tool"])
@pytest.mark.parametrize("extra", NOT_TOOL_FILES)
def test_a_file_that_does_not_import_tui_agent_is_not_imported(
    project: Path, user_config_dir: Path, tmp_path: Path, where: str, extra: str
) -> None:
    marker = tmp_path / "imported"
    folder = tools_folder(where, project, user_config_dir)
    helper = write(folder / "cleanup.py", extra + helper_script(marker))
    write(folder / "echo.py", src(ECHO.format(label="here")))
    session = create_session(project, trust=True)

    assert not marker.exists(), "the helper script was imported"
    assert session.extensions.problems == []
    assert "echo" in session.toolbox.tools
    assert not any(name.startswith("cleanup") for name in session.toolbox.tools)
    [note] = [n for n in session.output.history if n.text.startswith("No tools in")]
    assert note.kind is None
    shown = str(helper.relative_to(project)) if where != "global" else str(helper)
    assert note.text.startswith(f"No tools in {shown}: not imported, as it does not import")


IMPORT_FORMS: list[Any] = [
    pytest.param(
        "from tui_agent import tool\n\n@tool(description='d')\ndef default() -> str:\n",
        id="from-import",
    ),
    pytest.param(
        "from tui_agent import tool as t\n\n@t(description='d')\ndef default() -> str:\n",
        id="from-import-as",
    ),
    pytest.param(
        "import tui_agent\n\n@tui_agent.tool(description='d')\ndef default() -> str:\n",
        id="import-package",
    ),
    pytest.param(
        "import tui_agent as ta\n\n@ta.tool(description='d')\ndef default() -> str:\n",
        id="import-package-as",
    ),
    pytest.param(
        "from tui_agent import *\n\n@tool(description='d')\ndef default() -> str:\n",
        id="star-import",
    ),
    pytest.param(
        "from tui_agent import schema, tool\n\n"
        "def _run(args):\n    return 'ok'\n\n"
        "default = tool(description='d', args={}, execute=_run)\n"
        "def _unused():\n",
        id="call-form",
    ),
    pytest.param(
        "import tui_agent.describe\n\n@tui_agent.tool(description='d')\ndef default() -> str:\n",
        id="import-submodule",
    ),
    pytest.param(
        "try:\n    from tui_agent import tool\nexcept ImportError:\n    tool = None\n\n"
        "@tool(description='d')\ndef default() -> str:\n",
        id="import-in-try",
    ),
    pytest.param(
        "def make():\n    from tui_agent import tool\n\n"
        "    @tool(description='d')\n    def run() -> str:\n        return 'ok'\n\n"
        "    return run\n\n"
        "default = make()\n"
        "def _unused():\n",
        id="import-in-function",
    ),
]


@pytest.mark.parametrize("head", IMPORT_FORMS)
async def test_every_way_of_importing_tui_agent_makes_a_tool_file(
    project: Path, user_config_dir: Path, head: str
) -> None:
    write(user_config_dir / "tools" / "form.py", head + "    return 'ok'\n")
    session = create_session(project)
    assert session.extensions.problems == []
    assert not [n for n in notes(session) if n.startswith("No tools")]
    assert (await session.toolbox.run("form", {}))["output"] == "ok"


async def test_a_tool_file_is_parsed_once_and_still_sees_its_future_imports(
    project: Path, user_config_dir: Path
) -> None:
    """Compiled from the checked syntax tree: ``from __future__`` and line numbers hold."""
    source = """
    from __future__ import annotations
    from tui_agent import tool

    @tool
    def default(n: int) -> str:
        '''Where am I.'''
        raise ValueError(f"line {__import__('inspect').currentframe().f_lineno}")
    """
    session = load(user_config_dir / "tools", {"where_am_i.py": source}, project)
    assert session.toolbox.tools["where_am_i"].params == {"n": {"type": "integer"}}
    result = await session.toolbox.run("where_am_i", {"n": 1})
    assert result["error"] == "line 7"


@pytest.mark.parametrize(
    "source, error",
    [
        pytest.param("from tui_agent import tool\n\ndef broken(:\n", "SyntaxError", id="parse"),
        pytest.param(
            "from tui_agent import tool\n\nreturn 1\n", "'return' outside function", id="compile"
        ),
        pytest.param("import sys\n\nprint(\n", "SyntaxError", id="helper-that-does-not-parse"),
    ],
)
def test_a_file_that_is_not_python_is_still_a_problem(
    project: Path, user_config_dir: Path, source: str, error: str
) -> None:
    broken = write(user_config_dir / "tools" / "broken.py", source)
    session = create_session(project)
    [problem] = session.extensions.problems
    assert problem.path == str(broken)
    assert problem.error.startswith("SyntaxError") and error in problem.error


async def test_a_file_importing_tui_agent_without_tools_gets_a_note(
    project: Path, user_config_dir: Path
) -> None:
    folder = user_config_dir / "tools"
    write(folder / "shared.py", "from tui_agent import schema\n\nQUERY = schema.string()\n")
    write(folder / "echo.py", src(ECHO.format(label="x")))
    session = create_session(project)
    report = session.reload()
    assert report.problems == []
    assert report.no_tools == [folder / "shared.py"]
    assert folder / "shared.py" in report.tool_files  # it was imported
    nothing = "nothing made with tui_agent.tool(...) at the top level."
    assert report.notes == [f"No tools in {folder / 'shared.py'}: {nothing}"]


# -- shaped like a tool, not made with tool() (issue 14) ------------------------------------

# the Dropstone page's plain-object export ("import { z } from 'zod'; export default {...}"),
# with our schema in zod's place
DICT_EXPORT = """
from tui_agent import schema

async def execute(args, context):
    return "result"

default = {
    "description": "Tool description",
    "args": {
        "param": schema.string().describe("Parameter description"),
    },
    "execute": execute,
}
"""

# issue 26: a plain dict shaped like a tool is a tool (the seed says so), whether or not the
# file imports tui_agent (a dict literal shaped like one makes the file a tool file)
PLAIN_DICT_TOOLS: list[Any] = [
    pytest.param(DICT_EXPORT, "database", {"param": "p"}, "result", id="seed-plain-object"),
    pytest.param(
        """
        import json

        def run(args):
            return json.dumps(args)

        default = {"description": "Echo as JSON", "args": {"x": {"type": "string"}},
                   "execute": run}
        """,
        "database",
        {"x": "y"},
        '{"x": "y"}',
        id="plain-object-without-tui-agent",
    ),
    pytest.param(
        """
        from tui_agent import schema

        search = dict(description="Search", args={"q": schema.string()},
                      execute=lambda args: args["q"])
        """,
        "database_search",
        {"q": "found"},
        "found",
        id="dict-call-named-export",
    ),
    pytest.param(
        """
        search = dict(description="Search", handler=lambda args: args["q"])
        """,
        "database_search",
        {"q": "found"},
        "found",
        id="dict-call-handler-without-tui-agent",
    ),
    pytest.param(
        """
        from tui_agent import ToolContext

        TOOL: dict = {"description": "Search", "handler": lambda args, context: context.agent}
        """,
        "database_TOOL",
        {},
        "main",
        id="handler-key",
    ),
]


@pytest.mark.parametrize("source, name, args, output", PLAIN_DICT_TOOLS)
async def test_a_plain_dict_shaped_like_a_tool_is_a_tool(
    project: Path, tmp_path: Path, source: str, name: str, args: dict[str, Any], output: str
) -> None:
    marker = tmp_path / "imported"
    body = src(source) + f"\nfrom pathlib import Path\nPath({str(marker)!r}).touch()\n"
    write(project / ".tui-agent" / "tools" / "database.py", body)
    session = create_session(project, trust=True)

    assert marker.exists()
    assert session.extensions.problems == []
    assert [n for n in session.toolbox.tools if n.startswith("database")] == [name]
    result = await session.toolbox.run(name, args)
    assert result.ok, result
    assert result["output"] == output
    assert not [n for n in notes(session) if n.startswith("No tools")]


async def test_a_plain_dict_tool_with_unreadable_args_is_a_load_problem(project: Path) -> None:
    path = write(
        project / ".tui-agent" / "tools" / "bad.py",
        'default = {"description": "Bad", "args": ["q"], "execute": print}\n',
    )
    session = create_session(project, trust=True)
    [problem] = session.extensions.problems
    assert problem.path == str(path)
    assert problem.error == "`default`: args must be a dict, not list"
    assert "bad" not in session.toolbox.tools


# a forgotten @tool: still ignored, and reported
FUNCTION_LOOKALIKE = """
from tui_agent import schema, tool

async def database(args, context):
    return "result"
"""

LOOKALIKES: list[Any] = [
    pytest.param(
        """
        from tui_agent import tool

        async def database(args, context):
            return f"Executed query: {args['query']}"
        """,
        "database",
        "a plain function",
        True,
        id="function-named-like-the-file",
    ),
    pytest.param(
        """
        import tui_agent

        def default(query: str) -> str:
            return query
        """,
        "default",
        "a plain function",
        True,
        id="function-named-default",
    ),
]


@pytest.mark.parametrize("source, attr, what, imported", LOOKALIKES)
def test_an_attribute_shaped_like_a_tool_is_a_load_problem(
    project: Path, tmp_path: Path, source: str, attr: str, what: str, imported: bool
) -> None:
    marker = tmp_path / "imported"
    body = src(source) + f"\nfrom pathlib import Path\nPath({str(marker)!r}).touch()\n"
    path = write(project / ".tui-agent" / "tools" / "database.py", body)
    session = create_session(project, trust=True)

    assert marker.exists() is imported
    [problem] = session.extensions.problems
    assert problem.path == str(path)
    assert problem.error.startswith(f"`{attr}` is {what}, not a tool, so it was ignored: ")
    assert "wrap it with tui_agent.tool(...)" in problem.error
    assert ("not imported" not in problem.error) is imported
    assert not any(name.startswith("database") for name in session.toolbox.tools)
    assert not [n for n in notes(session) if n.startswith("No tools")]  # the problem says it


def test_lookalikes_are_reported_on_stderr_by_headless_commands(project: Path) -> None:
    """``cli.report_problems`` is what headless commands print: the lookalike is a plugin
    problem there; the helper script is not an error."""
    import io

    from tui_agent.cli import report_problems

    tools = project / ".tui-agent" / "tools"
    write(tools / "database.py", src(FUNCTION_LOOKALIKE))
    write(tools / "add.py", src(SEED_SCRIPT))
    session = create_session(project, trust=True)
    stream = io.StringIO()
    report_problems(session, stream)
    [line] = stream.getvalue().splitlines()
    assert line.startswith(f"tui-agent: plugin problem: {tools / 'database.py'}: `database` is")
    assert "wrap it with tui_agent.tool(...)" in line


HELPERS_KEPT_QUIET = """
import os
from collections import OrderedDict
from os.path import join
from tui_agent import tool, schema

HELP = {"description": "not a tool", "usage": "x"}
COMMANDS = {"description": "dispatch", "execute": "yes"}
DISPATCH = {"execute": print, "handler": print}
ROUTES = OrderedDict(list=print)
_private = {"description": "hidden", "execute": print}
LIMIT = 10
NAMES = ["a", "b"]

def helper(args):
    return args

async def fetch(url):
    return url

class Client:
    description = "a client"

    def execute(self, query):
        return query

def default(args):
    return "not a tool: the tool below takes the file's name"

@tool(description="The tool", args={"q": schema.string()})
def quiet(args):
    return helper(args["q"])
"""


async def test_helpers_and_constants_in_a_tool_file_are_not_reported(
    project: Path, user_config_dir: Path
) -> None:
    session = load(user_config_dir / "tools", {"quiet.py": HELPERS_KEPT_QUIET}, project)
    assert session.extensions.problems == []
    assert not [n for n in notes(session) if n.startswith("No tools")]
    assert [n for n in session.toolbox.tools if n.startswith("quiet")] == ["quiet"]
    assert (await session.toolbox.run("quiet", {"q": "hi"}))["output"] == "hi"


async def test_a_fixed_lookalike_loads_after_reload(project: Path, user_config_dir: Path) -> None:
    """The message's advice, followed: with @tool(...) above it, the function is the tool."""
    folder = user_config_dir / "tools"
    write(folder / "database.py", src(FUNCTION_LOOKALIKE))
    session = create_session(project)
    assert len(session.extensions.problems) == 1
    fixed = src(FUNCTION_LOOKALIKE).replace(
        "async def database",
        '@tool(description="Query", args={"param": schema.string()})\nasync def database',
    )
    write(folder / "database.py", fixed)
    report = session.reload()
    assert report.problems == [] and session.extensions.problems == []
    assert (await session.toolbox.run("database", {"param": "p"}))["output"] == "result"


async def test_the_app_shows_the_note_plainly_and_the_lookalike_in_red(project: Path) -> None:
    from tui_agent.testing import run_app, wait_for, wait_for_text
    from tui_agent.ui.chat import Note

    tools = project / ".tui-agent" / "tools"
    write(tools / "add.py", src(SEED_SCRIPT))
    write(tools / "database.py", src(FUNCTION_LOOKALIKE))
    session = create_session(project, trust=True, load=False)  # the app loads, as in a terminal
    async with run_app(session) as pilot:
        await wait_for(pilot, lambda: session.extensions.loaded)
        await wait_for_text(pilot, "`database` is a plain function")
        await wait_for_text(pilot, "No tools in .tui-agent/tools/add.py")
        shown = {str(note.content): note.has_class("error") for note in pilot.app.query(Note)}
        [(helper, red)] = [(t, e) for t, e in shown.items() if "add.py" in t]
        assert not red, helper
        [(lookalike, red)] = [(t, e) for t, e in shown.items() if "database.py" in t]
        assert red and lookalike.startswith("plugin problem: "), lookalike


# -- issue 26: the Dropstone page's examples, typed literally, through the real agent --------

# "Ad esempio, questo file sostituisce lo strumento integrato bash" (.dropstone/tools/bash.ts)
SEED_BASH = """
from tui_agent import tool

async def execute(args):
    return f"blocked: {args['command']}"

default = tool(
    description="Restricted bash wrapper",
    args={
        "command": tool.schema.string(),
    },
    execute=execute,
)
"""

# "Puoi anche importare Zod direttamente e restituire un oggetto semplice"
SEED_PLAIN_OBJECT = """
from tui_agent import schema

async def execute(args, context):
    # Tool implementation
    return "result"

default = {
    "description": "Tool description",
    "args": {
        "param": schema.string().describe("Parameter description"),
    },
    "execute": execute,
}
"""

# "Gli strumenti ricevono il contesto della sessione corrente" (project.ts)
SEED_CONTEXT = """
from tui_agent import tool

@tool(description="Get project information", args={})
async def default(args, context):
    # Access context information
    agent, sessionID, messageID, directory, worktree = (
        context.agent, context.sessionID, context.messageID, context.directory, context.worktree
    )
    return (
        f"Agent: {agent}, Session: {sessionID}, Message: {messageID}, "
        f"Directory: {directory}, Worktree: {worktree}"
    )
"""


def agent_session(project: Path, server: Any) -> Session:
    return create_session(
        project, base_url=server.base_url, model="fake-model", trust=True, yes=True
    )


def offered(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in request.get("tools", [])}


def tool_outputs(session: Session) -> list[Any]:
    import json

    return [
        json.loads(m["content"]).get("output", json.loads(m["content"]))
        for m in session.conversation.messages
        if m["role"] == "tool"
    ]


async def test_seed_bash_wrapper_replaces_the_builtin_bash(project: Path) -> None:
    """bash.py is named like the built-in execute's alias: it replaces execute, which is no
    longer offered, and every name of the old tool leads to the wrapper, so nothing runs."""
    from tui_agent.testing import Call, FakeOpenAI, Reply

    write(project / ".tui-agent" / "tools" / "bash.py", src(SEED_BASH))
    marker = project / "ran"
    script = [
        Reply(
            calls=[
                Call("bash", {"command": f"touch {marker}"}),
                Call("execute", {"command": f"touch {marker}"}),
                Call("sh", {"command": "rm -rf /"}),
            ]
        ),
        Reply("done"),
    ]
    async with FakeOpenAI(script) as server:
        session = agent_session(project, server)
        assert await session.turn("go") == "done"
    assert session.extensions.problems == []
    assert not marker.exists()
    assert tool_outputs(session) == [
        f"blocked: touch {marker}",
        f"blocked: touch {marker}",
        "blocked: rm -rf /",
    ]
    tools = offered(server.requests[0])
    assert "execute" not in tools
    assert tools["bash"]["description"] == "Restricted bash wrapper"
    assert tools["bash"]["parameters"]["required"] == ["command"]
    assert session.toolbox.tool_for("execute").name == "bash"
    assert {session.toolbox.aliases[a] for a in ("execute", "sh", "exec")} == {"bash"}
    [note] = [n for n in notes(session) if "replaces" in n]
    assert note.startswith(".tui-agent/tools/bash.py: the tool bash replaces execute")


async def test_seed_plain_object_export_is_a_tool(project: Path) -> None:
    from tui_agent.testing import Call, FakeOpenAI, Reply

    write(project / ".tui-agent" / "tools" / "example.py", src(SEED_PLAIN_OBJECT))
    script = [Reply(calls=[Call("example", {"param": "p"})]), Reply("done")]
    async with FakeOpenAI(script) as server:
        session = agent_session(project, server)
        await session.turn("go")
    assert session.extensions.problems == []
    assert tool_outputs(session) == ["result"]
    assert offered(server.requests[0])["example"] == {
        "name": "example",
        "description": "Tool description",
        "parameters": {
            "type": "object",
            "properties": {"param": {"type": "string", "description": "Parameter description"}},
            "required": ["param"],
        },
    }


async def test_seed_context_message_id_is_the_assistant_messages(project: Path) -> None:
    """The calls of one reply share the message id (not their call ids); the next reply's
    calls get another. sessionID and messageID are the page's spellings."""
    from tui_agent.testing import Call, FakeOpenAI, Reply

    write(project / ".tui-agent" / "tools" / "project.py", src(SEED_CONTEXT))
    script = [
        Reply(calls=[Call("project", id="call_a"), Call("project", id="call_b")]),
        Reply(calls=[Call("project", id="call_c")]),
        Reply("done"),
    ]
    async with FakeOpenAI(script) as server:
        session = agent_session(project, server)
        await session.turn("go")
    assert session.extensions.problems == []
    outputs = tool_outputs(session)
    assert len(outputs) == 3
    ids = [text.split("Message: ")[1].split(",")[0] for text in outputs]
    assert ids[0] == ids[1] != ids[2]
    assert all(i.startswith("msg_") and i not in ("call_a", "call_b", "call_c") for i in ids)
    root = str(project.resolve())
    assert outputs[0] == (
        f"Agent: main, Session: {session.id}, Message: {ids[0]}, Directory: {root}, "
        f"Worktree: {root}"
    )


def test_tool_context_answers_the_pages_camel_case_names() -> None:
    context = ToolContext(session_id="s", message_id="m", call_id="c", directory="/d")
    assert (context.sessionID, context.messageID, context.callID) == ("s", "m", "c")


# -- issue 26: tool files written for opencode are named, with where the porting table is ---

OPENCODE_TOOL = """import { tool } from "@opencode-ai/plugin"

export default tool({
  description: "Query the project database",
  args: {
    query: tool.schema.string().describe("SQL query to execute"),
  },
  async execute(args) {
    return `Executed query: ${args.query}`
  },
})
"""


@pytest.mark.parametrize(
    "where",
    [
        ".opencode/tool",
        ".opencode/tools",
        ".dropstone/tools",
        ".tui-agent/tools",
        ".tui-agent/tool",
    ],
)
async def test_typescript_tool_files_say_once_that_tools_here_are_python(
    project: Path, where: str
) -> None:
    write(project / where / "database.ts", OPENCODE_TOOL)
    write(project / where / "math.js", "export const add = {}\n")
    session = create_session(project, trust=True)
    said = [n for n in notes(session) if "database.ts" in n]
    assert said == [
        f"Not loaded: {where}/database.ts, {where}/math.js (they were written for opencode "
        "or Dropstone). Tool files here are Python: .tui-agent/tools/NAME.py with "
        "`from tui_agent import tool`; each opencode construct has its Python form in the "
        "README, Custom tool files: Porting an opencode tool."
    ]
    assert session.extensions.problems == []
    session.reload()
    assert len([n for n in notes(session) if "database.ts" in n]) == 2  # once per load


async def test_a_typescript_file_in_the_global_tool_folder_is_named(
    project: Path, user_config_dir: Path
) -> None:
    path = write(user_config_dir / "tools" / "database.ts", OPENCODE_TOOL)
    session = create_session(project)
    [said] = [n for n in notes(session) if "database.ts" in n]
    assert said.startswith(f"Not loaded: {path} (it was written for opencode or Dropstone).")
