"""SPEC §4: custom tool files, the ``schema`` builder and ``tool(...)``.

Every tool file here is a real file in a real folder, loaded by ``create_session``; tools
run through ``session.toolbox.run`` exactly as the agent loop runs them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from tool_files_kit import CONTEXT_FIELDS, ECHO, baseline_names, definition, load, src, tools_folder

from tui_agent import ToolContext, ToolSpec, create_session, schema, tool

# -- the schema builder ---------------------------------------------------------------------

BUILDERS: list[Any] = [
    pytest.param(lambda: schema.string(), {"type": "string"}, id="string"),
    pytest.param(lambda: schema.number(), {"type": "number"}, id="number"),
    pytest.param(lambda: schema.integer(), {"type": "integer"}, id="integer"),
    pytest.param(lambda: schema.boolean(), {"type": "boolean"}, id="boolean"),
    pytest.param(
        lambda: schema.array(schema.string()),
        {"type": "array", "items": {"type": "string"}},
        id="array",
    ),
    pytest.param(
        lambda: schema.array(schema.integer().describe("An id")),
        {"type": "array", "items": {"type": "integer", "description": "An id"}},
        id="array-described-item",
    ),
    pytest.param(
        lambda: schema.array({"type": "number"}),
        {"type": "array", "items": {"type": "number"}},
        id="array-plain-dict-item",
    ),
    pytest.param(
        lambda: schema.array(schema.array(schema.boolean())),
        {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}},
        id="array-of-arrays",
    ),
    pytest.param(
        lambda: schema.object(
            {"name": schema.string(), "age": schema.integer().optional(), "n": schema.number()}
        ),
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer"},
                "n": {"type": "number"},
            },
            "required": ["name", "n"],
        },
        id="object",
    ),
    pytest.param(
        lambda: schema.object({"tag": schema.string().default("x"), "raw": {"type": "string"}}),
        {
            "type": "object",
            "properties": {"tag": {"type": "string", "default": "x"}, "raw": {"type": "string"}},
            "required": ["raw"],
        },
        id="object-default-and-plain-dict",
    ),
    pytest.param(
        lambda: schema.enum(["a", "b"]),
        {"type": "string", "enum": ["a", "b"]},
        id="enum",
    ),
    pytest.param(
        lambda: schema.string().describe("A path"),
        {"type": "string", "description": "A path"},
        id="describe",
    ),
    pytest.param(
        lambda: schema.integer().default(3),
        {"type": "integer", "default": 3},
        id="default",
    ),
    pytest.param(lambda: schema.boolean().optional(), {"type": "boolean"}, id="optional"),
    pytest.param(
        lambda: schema.string().describe("first").describe("second"),
        {"type": "string", "description": "second"},
        id="describe-twice",
    ),
    pytest.param(
        lambda: schema.string().min(1).max(5),
        {"type": "string", "minLength": 1, "maxLength": 5},
        id="string-min-max",
    ),
    pytest.param(
        lambda: schema.array(schema.string()).min(1).max(3),
        {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        id="array-min-max",
    ),
    pytest.param(
        lambda: schema.number().min(0).max(1.5),
        {"type": "number", "minimum": 0, "maximum": 1.5},
        id="number-min-max",
    ),
    pytest.param(
        lambda: schema.integer().min(1).max(10),
        {"type": "integer", "minimum": 1, "maximum": 10},
        id="integer-min-max",
    ),
    pytest.param(
        lambda: schema.string().nullable(),
        {"type": ["string", "null"]},
        id="nullable",
    ),
    pytest.param(
        lambda: schema.string().nullable().min(2),
        {"type": ["string", "null"], "minLength": 2},
        id="nullable-string-min",
    ),
    pytest.param(
        lambda: schema.array(schema.integer()).nullable().max(3),
        {"type": ["array", "null"], "items": {"type": "integer"}, "maxItems": 3},
        id="nullable-array-max",
    ),
    pytest.param(
        lambda: schema.integer().nullable().min(0),
        {"type": ["integer", "null"], "minimum": 0},
        id="nullable-integer-min",
    ),
]


@pytest.mark.parametrize("build, expected", BUILDERS)
def test_schema_builder_json(build: Callable[[], Any], expected: dict[str, Any]) -> None:
    assert build().to_json() == expected


@pytest.mark.parametrize(
    "make, required",
    [
        pytest.param(lambda: schema.string(), True, id="plain"),
        pytest.param(lambda: schema.string().describe("d"), True, id="described"),
        pytest.param(lambda: schema.string().optional(), False, id="optional"),
        pytest.param(lambda: schema.string().default("x"), False, id="default"),
        pytest.param(lambda: schema.string().optional().describe("d"), False, id="optional-then"),
        pytest.param(lambda: schema.string().nullable(), True, id="nullable-still-required"),
        pytest.param(lambda: {"type": "string"}, True, id="plain-dict"),
        pytest.param(lambda: {"type": "string", "default": "x"}, False, id="plain-dict-default"),
    ],
)
def test_schema_builder_required_or_optional(make: Callable[[], Any], required: bool) -> None:
    spec = tool(description="d", args={"value": make()}, execute=lambda args: args)
    assert spec.required == (["value"] if required else [])


STEPS: list[Any] = [
    pytest.param(lambda s: s.describe("d"), id="describe"),
    pytest.param(lambda s: s.optional(), id="optional"),
    pytest.param(lambda s: s.default("v"), id="default"),
    pytest.param(lambda s: s.nullable(), id="nullable"),
    pytest.param(lambda s: s.min(1), id="min"),
    pytest.param(lambda s: s.max(9), id="max"),
]


@pytest.mark.parametrize("step", STEPS)
def test_schema_builder_chained_calls_return_new_builders(step: Callable[[Any], Any]) -> None:
    base = schema.string().describe("base")
    derived = step(base)
    assert derived is not base
    assert base.to_json() == {"type": "string", "description": "base"}
    # the base builder is still required, whatever the derived one became
    spec = tool(description="d", args={"a": base, "b": derived}, execute=lambda args: args)
    assert "a" in spec.required
    assert spec.params["a"] == {"type": "string", "description": "base"}


def test_schema_builder_branches_do_not_share_state() -> None:
    number = schema.integer()
    described = number.describe("count")
    with_default = described.default(1)
    optional = described.optional()
    described.describe("other")
    assert number.to_json() == {"type": "integer"}
    assert described.to_json() == {"type": "integer", "description": "count"}
    assert with_default.to_json() == {"type": "integer", "description": "count", "default": 1}
    assert optional.to_json() == {"type": "integer", "description": "count"}
    spec = tool(
        description="d",
        args={"n": number, "d": described, "w": with_default, "o": optional},
        execute=lambda args: args,
    )
    assert spec.required == ["n", "d"]


def test_schema_builder_json_is_a_copy() -> None:
    item = schema.string()
    listing = schema.array(item)
    data = listing.to_json()
    data["items"]["type"] = "number"
    data["type"] = "object"
    assert listing.to_json() == {"type": "array", "items": {"type": "string"}}
    default_list = schema.array(schema.string()).default(["a"])
    default_list.to_json()["default"].append("b")
    assert default_list.to_json()["default"] == ["a"]


# -- tool(...) forms ------------------------------------------------------------------------


async def test_tool_decorator_with_description_and_args() -> None:
    @tool(description="Echo a query", args={"query": schema.string().describe("SQL")})
    async def database(args: dict[str, Any], context: ToolContext) -> str:
        return f"ran {args['query']} in {context.directory}"

    assert isinstance(database, ToolSpec)
    assert database.description == "Echo a query"
    assert database.params == {"query": {"type": "string", "description": "SQL"}}
    assert database.required == ["query"]
    # still callable like the function
    ctx = ToolContext(directory="/somewhere", worktree="/somewhere")
    assert await database({"query": "SELECT 1"}, ctx) == "ran SELECT 1 in /somewhere"


def test_bare_tool_takes_description_from_docstring() -> None:
    @tool
    def add(a: int, b: int = 2) -> int:
        """Add two integers.

        Second line."""
        return a + b

    assert isinstance(add, ToolSpec)
    assert add.description == "Add two integers.\n\nSecond line."
    assert add.params == {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}}
    assert add.required == ["a"]
    assert add(1, 2) == 3
    assert add(a=5) == 7


def test_tool_with_empty_parentheses_uses_docstring() -> None:
    @tool()
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    assert isinstance(shout, ToolSpec)
    assert shout.description == "Upper-case a text."
    assert shout("hi") == "HI"


def test_tool_with_execute_keyword() -> None:
    def run(args: dict[str, Any]) -> dict[str, Any]:
        return {"twice": args["n"] * 2}

    spec = tool(description="Double", args={"n": schema.integer()}, execute=run)
    assert isinstance(spec, ToolSpec)
    assert spec.description == "Double"
    assert spec.params == {"n": {"type": "integer"}}
    assert spec.required == ["n"]
    assert spec({"n": 4}) == {"twice": 8}


def test_explicit_description_beats_docstring() -> None:
    @tool(description="Explicit")
    def documented(x: str) -> str:
        """Docstring."""
        return x

    assert documented.description == "Explicit"


FORMS: list[Any] = [
    pytest.param(
        """
        from tui_agent import tool, schema

        @tool(description="Greets", args={"name": schema.string().describe("Who")})
        def greet(args):
            return "hello " + args["name"]
        """,
        "Greets",
        {"name": {"type": "string", "description": "Who"}},
        ["name"],
        id="decorator-args",
    ),
    pytest.param(
        """
        from tui_agent import tool, schema

        @tool(description="Greets", args={"name": schema.string().describe("Who")})
        async def greet(args, context):
            return "hello " + args["name"]
        """,
        "Greets",
        {"name": {"type": "string", "description": "Who"}},
        ["name"],
        id="decorator-args-async-context",
    ),
    pytest.param(
        """
        from tui_agent import tool

        @tool
        def greet(name: str) -> str:
            '''Greets someone.'''
            return "hello " + name
        """,
        "Greets someone.",
        {"name": {"type": "string"}},
        ["name"],
        id="bare",
    ),
    pytest.param(
        """
        from tui_agent import tool, schema

        def _run(args):
            return "hello " + args["name"]

        greet = tool(description="Greets", args={"name": {"type": "string"}}, execute=_run)
        """,
        "Greets",
        {"name": {"type": "string"}},
        ["name"],
        id="execute-keyword",
    ),
]


@pytest.mark.parametrize("source, description, params, required", FORMS)
async def test_tool_forms_in_a_tool_file(
    project: Path,
    user_config_dir: Path,
    source: str,
    description: str,
    params: dict[str, Any],
    required: list[str],
) -> None:
    session = load(user_config_dir / "tools", {"greet.py": source}, project)
    assert session.extensions.problems == []
    assert definition(session, "greet") == {
        "type": "function",
        "function": {
            "name": "greet",
            "description": description,
            "parameters": {"type": "object", "properties": params, "required": required},
        },
    }
    result = await session.toolbox.run("greet", {"name": "Ada"})
    assert result.to_dict() == {"output": "hello Ada", "ok": True}


# -- signature inference --------------------------------------------------------------------

PREAMBLE = """
import enum
from typing import Annotated, Literal, Optional
from tui_agent import tool, ToolContext


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"

"""

SIGNATURES: list[Any] = [
    pytest.param("x: str", {"type": "string"}, True, "hi", id="str"),
    pytest.param("x: int", {"type": "integer"}, True, 4, id="int"),
    pytest.param("x: float", {"type": "number"}, True, 1.5, id="float"),
    pytest.param("x: bool", {"type": "boolean"}, True, True, id="bool"),
    pytest.param(
        "x: list[str]", {"type": "array", "items": {"type": "string"}}, True, ["a"], id="list-str"
    ),
    pytest.param(
        "x: list[int]", {"type": "array", "items": {"type": "integer"}}, True, [1, 2], id="list-int"
    ),
    pytest.param("x: dict", {"type": "object"}, True, {"k": 1}, id="dict"),
    pytest.param(
        'x: Literal["a", "b"]', {"type": "string", "enum": ["a", "b"]}, True, "b", id="literal"
    ),
    pytest.param("x: Optional[int]", {"type": ["integer", "null"]}, True, 3, id="optional"),
    pytest.param("x: int | None", {"type": ["integer", "null"]}, True, None, id="pipe-none"),
    pytest.param(
        'x: Annotated[str, "The path"]',
        {"type": "string", "description": "The path"},
        True,
        "p",
        id="annotated",
    ),
    pytest.param(
        'x: Annotated[float | None, "Maybe a number"]',
        {"type": ["number", "null"], "description": "Maybe a number"},
        True,
        2.5,
        id="annotated-optional",
    ),
    pytest.param("x: int = 3", {"type": "integer", "default": 3}, False, 9, id="default-int"),
    pytest.param(
        'x: str = "hi"', {"type": "string", "default": "hi"}, False, "yo", id="default-str"
    ),
    pytest.param(
        'x: Annotated[int, "How many"] = 5',
        {"type": "integer", "description": "How many", "default": 5},
        False,
        1,
        id="annotated-default",
    ),
    pytest.param(
        "x: bool = False", {"type": "boolean", "default": False}, False, True, id="default-false"
    ),
]


@pytest.mark.parametrize("future", [False, True], ids=["eager", "future-annotations"])
@pytest.mark.parametrize("signature, expected, required, value", SIGNATURES)
async def test_signature_inference(
    project: Path,
    user_config_dir: Path,
    signature: str,
    expected: dict[str, Any],
    required: bool,
    value: Any,
    future: bool,
) -> None:
    header = "from __future__ import annotations\n" if future else ""
    source = header + PREAMBLE + f"@tool\ndef sig({signature}) -> dict:\n    return {{'x': x}}\n"
    write(user_config_dir / "tools" / "sig.py", source)
    session = create_session(project)
    assert session.extensions.problems == []
    found = session.toolbox.tools["sig"]
    assert found.params == {"x": expected}
    assert found.required == (["x"] if required else [])
    result = await session.toolbox.run("sig", {"x": value})
    assert result.to_dict() == {"x": value, "ok": True}


@pytest.mark.parametrize("future", [False, True], ids=["eager", "future-annotations"])
async def test_signature_inference_enum(project: Path, user_config_dir: Path, future: bool) -> None:
    header = "from __future__ import annotations\n" if future else ""
    source = (
        header
        + PREAMBLE
        + src(
            """
        @tool
        def paint(color: Color) -> str:
            '''Paint.'''
            return Color(color).value
        """
        )
    )
    write(user_config_dir / "tools" / "paint.py", source)
    session = create_session(project)
    prop = session.toolbox.tools["paint"].params["color"]
    assert prop["enum"] == ["red", "green"]
    assert prop.get("type", "string") == "string"
    assert session.toolbox.tools["paint"].required == ["color"]
    assert (await session.toolbox.run("paint", {"color": "green"})).to_dict() == {
        "output": "green",
        "ok": True,
    }
    bad = await session.toolbox.run("paint", {"color": "blue"})
    assert bad.error == 'value at `/color` is not one of: ["red", "green"]'


NULLABLE: list[Any] = [
    pytest.param("x: int | None = None", id="pipe-int"),
    pytest.param("x: Optional[str] = None", id="optional-str"),
    pytest.param("x: list[int] | None = None", id="pipe-list"),
    pytest.param('x: Literal["a", "b"] | None = None', id="pipe-literal"),
    pytest.param('x: Optional[Literal["a", "b"]] = None', id="optional-literal"),
    pytest.param("x: Optional[Color] = None", id="optional-enum"),
    pytest.param("x: Color | None = None", id="pipe-enum"),
    pytest.param('x: Annotated[int | None, "maybe"] = None', id="annotated"),
]


@pytest.mark.parametrize("signature", NULLABLE)
async def test_optional_parameter_accepts_null_and_absence(
    project: Path, user_config_dir: Path, signature: str
) -> None:
    source = PREAMBLE + f"@tool\ndef opt({signature}) -> dict:\n    return {{'x': x}}\n"
    write(user_config_dir / "tools" / "opt.py", source)
    session = create_session(project)
    assert session.toolbox.tools["opt"].required == []
    assert (await session.toolbox.run("opt", {})).to_dict() == {"x": None, "ok": True}
    assert (await session.toolbox.run("opt", {"x": None})).to_dict() == {"x": None, "ok": True}


NULLABLE_BUILDERS: list[Any] = [
    pytest.param("schema.string().nullable()", "text", id="string"),
    pytest.param("schema.integer().nullable()", 3, id="integer"),
    pytest.param("schema.array(schema.string()).nullable()", ["a"], id="array"),
    pytest.param('schema.enum(["a", "b"]).nullable()', "a", id="enum-strings"),
    pytest.param("schema.enum([1, 2]).nullable()", 2, id="enum-numbers"),
    pytest.param("schema.object({'k': schema.string()}).nullable()", {"k": "v"}, id="object"),
]


@pytest.mark.parametrize("builder, value", NULLABLE_BUILDERS)
async def test_nullable_builder_accepts_null_and_a_value(
    project: Path, user_config_dir: Path, builder: str, value: Any
) -> None:
    source = f"""
    from tui_agent import tool, schema

    @tool(description="d", args={{"v": {builder}}})
    def default(args):
        return {{"v": args["v"]}}
    """
    session = load(user_config_dir / "tools", {"nul.py": source}, project)
    assert session.extensions.problems == []
    assert session.toolbox.tools["nul"].required == ["v"]
    assert (await session.toolbox.run("nul", {"v": None})).to_dict() == {"v": None, "ok": True}
    assert (await session.toolbox.run("nul", {"v": value})).to_dict() == {"v": value, "ok": True}


CONTEXT_SIGNATURES: list[Any] = [
    pytest.param("", "def ctx_tool(path: str, context)", id="named-context"),
    pytest.param("", "def ctx_tool(path: str, ctx: ToolContext)", id="typed"),
    pytest.param("", "async def ctx_tool(context, path: str)", id="async-named-first"),
    pytest.param(
        "from __future__ import annotations\n",
        "def ctx_tool(path: str, ctx: ToolContext)",
        id="typed-future",
    ),
    pytest.param(
        "from __future__ import annotations\n",
        "async def ctx_tool(path: str, context: ToolContext | None = None)",
        id="optional-typed-future",
    ),
    pytest.param("", "def ctx_tool(path: str, ctx: ToolContext | None = None)", id="opt-typed"),
    pytest.param(
        "from __future__ import annotations\n",
        "def ctx_tool(ctx: Optional[ToolContext], path: str)",
        id="optional-typed-first-future",
    ),
]


@pytest.mark.parametrize("header, signature", CONTEXT_SIGNATURES)
async def test_context_parameter_gets_the_context_and_is_not_in_the_schema(
    project: Path, user_config_dir: Path, header: str, signature: str
) -> None:
    context_name = "ctx" if "ctx:" in signature else "context"
    source = (
        header
        + "from typing import Optional\nfrom tui_agent import tool, ToolContext\n\n@tool\n"
        + f"{signature} -> dict:\n"
        + "    '''Where am I.'''\n"
        + f"    c = {context_name}\n"
        + "    return {'path': path, 'cls': type(c).__name__, 'directory': c.directory}\n"
    )
    write(user_config_dir / "tools" / "ctx_tool.py", source)
    session = create_session(project)
    assert session.extensions.problems == []
    found = session.toolbox.tools["ctx_tool"]
    assert found.params == {"path": {"type": "string"}}
    assert found.required == ["path"]
    result = await session.toolbox.run("ctx_tool", {"path": "a.txt"})
    assert result.to_dict() == {
        "path": "a.txt",
        "cls": "ToolContext",
        "directory": str(project.resolve()),
        "ok": True,
    }


async def test_inferred_tool_gets_keyword_arguments_only_for_its_parameters(
    project: Path, user_config_dir: Path
) -> None:
    source = """
    from tui_agent import tool

    @tool
    def kw(*, name: str, times: int = 1) -> str:
        '''Repeat.'''
        return name * times
    """
    session = load(user_config_dir / "tools", {"kw.py": source}, project)
    # extra args are allowed by the toolbox and must not break a keyword-only function
    result = await session.toolbox.run("kw", {"name": "ab", "times": 2, "extra": True})
    assert result.to_dict() == {"output": "abab", "ok": True}


# -- names ----------------------------------------------------------------------------------

NAMES: list[Any] = [
    pytest.param("database", ["database"], {"database": "database"}, id="named-like-file"),
    pytest.param("database", ["default"], {"database": "default"}, id="default"),
    pytest.param(
        "math", ["add", "multiply"], {"math_add": "add", "math_multiply": "multiply"}, id="others"
    ),
    pytest.param("util", ["util", "extra"], {"util": "util", "util_extra": "extra"}, id="mixed"),
    pytest.param(
        "files",
        ["default", "list_all"],
        {"files": "default", "files_list_all": "list_all"},
        id="default-and-other",
    ),
    pytest.param("git_log", ["git_log"], {"git_log": "git_log"}, id="underscore-stem"),
]


@pytest.mark.parametrize("stem, attrs, expected", NAMES)
async def test_tool_names_follow_the_file_name(
    project: Path, user_config_dir: Path, stem: str, attrs: list[str], expected: dict[str, str]
) -> None:
    before = baseline_names(project)
    body = "from tui_agent import tool, schema\n\nHELPER = 1\n\ndef helper():\n    return 2\n\n"
    for attr in attrs:
        body += f"@tool(description='{attr} tool')\ndef {attr}() -> str:\n    return '{attr}'\n\n"
    write(user_config_dir / "tools" / f"{stem}.py", body)
    session = create_session(project)
    assert session.extensions.problems == []
    assert set(session.toolbox.tools) - before == set(expected)
    for name, attr in expected.items():
        assert (await session.toolbox.run(name, {}))["output"] == attr


DATABASE = """
from tui_agent import tool, schema

@tool(description="Query the project database",
      args={"query": schema.string().describe("SQL query to execute")})
async def database(args, context):
    return f"Executed query: {args['query']}"
"""

MATH = """
from typing import Annotated
from tui_agent import tool

@tool(description="Add two numbers")
def add(a: Annotated[float, "First number"], b: Annotated[float, "Second number"]) -> float:
    return a + b

@tool(description="Multiply two numbers")
def multiply(a: float, b: float) -> float:
    return a * b
"""


@pytest.mark.parametrize("where", ["global", "project", "project-tool"])
async def test_spec_examples(project: Path, user_config_dir: Path, where: str) -> None:
    before = baseline_names(project)
    folder = tools_folder(where, project, user_config_dir)
    session = load(folder, {"database.py": DATABASE, "math.py": MATH}, project)
    assert session.extensions.problems == []
    assert set(session.toolbox.tools) - before == {"database", "math_add", "math_multiply"}
    assert definition(session, "database") == {
        "type": "function",
        "function": {
            "name": "database",
            "description": "Query the project database",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "SQL query to execute"}},
                "required": ["query"],
            },
        },
    }
    assert definition(session, "math_add") == {
        "type": "function",
        "function": {
            "name": "math_add",
            "description": "Add two numbers",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "number", "description": "First number"},
                    "b": {"type": "number", "description": "Second number"},
                },
                "required": ["a", "b"],
            },
        },
    }
    assert definition(session, "math_multiply")["function"]["parameters"] == {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    }
    run = session.toolbox.run
    assert (await run("database", {"query": "SELECT 1"})).to_dict() == {
        "output": "Executed query: SELECT 1",
        "ok": True,
    }
    assert (await run("math_add", {"a": 2, "b": 3.5})).to_dict() == {"output": 5.5, "ok": True}
    assert (await run("math_multiply", {"a": 4, "b": 2.5})).to_dict() == {
        "output": 10.0,
        "ok": True,
    }


# -- folders, trust and precedence ----------------------------------------------------------


@pytest.mark.parametrize(
    "where, trust, loaded",
    [
        ("global", False, True),
        ("global", True, True),
        ("project", True, True),
        ("project", False, False),
        ("project-tool", True, True),
        ("project-tool", False, False),
    ],
)
async def test_tool_folders_and_trust(
    project: Path, user_config_dir: Path, where: str, trust: bool, loaded: bool
) -> None:
    folder = tools_folder(where, project, user_config_dir)
    file = write(folder / "here.py", src(ECHO.format(label=where)))
    session = create_session(project, trust=trust)
    assert ("here" in session.toolbox.tools) is loaded
    if loaded:
        assert (await session.toolbox.run("here", {}))["output"] == where
        assert file.resolve() not in [p.resolve() for p in session.extensions.skipped]
    else:
        assert file.resolve() in [p.resolve() for p in session.extensions.skipped]
        assert (await session.toolbox.run("here", {})).ok is False
        # trusting the folder later loads it
        session.workspace.trust(remember=False)
        session.reload()
        assert (await session.toolbox.run("here", {}))["output"] == where


@pytest.mark.parametrize(
    "project_where, trust, winner",
    [
        ("project", True, "project"),
        ("project-tool", True, "project-tool"),
        ("project", False, "global"),
    ],
)
async def test_project_tool_file_overrides_global_one(
    project: Path, user_config_dir: Path, project_where: str, trust: bool, winner: str
) -> None:
    write(user_config_dir / "tools" / "same.py", src(ECHO.format(label="global")))
    folder = tools_folder(project_where, project, user_config_dir)
    write(folder / "same.py", src(ECHO.format(label=project_where)))
    session = create_session(project, trust=trust)
    assert session.extensions.problems == []
    assert (await session.toolbox.run("same", {}))["output"] == winner
    assert "same.py" in session.toolbox.tools["same"].source


PLUGIN = """
import tui_agent

@tui_agent.setup("dup_plugin")
def dup_plugin(session):
    @session.toolbox.add("dup", description="from plugin")
    def dup(args):
        return {"from": "plugin"}

    @session.toolbox.add("plugin_only", description="only in the plugin")
    def only(args):
        return {"from": "plugin"}

    @session.toolbox.before("dup")
    def guard(args):
        if args.get("block"):
            raise RuntimeError("blocked by the plugin's hook")
"""

DUP = """
from tui_agent import tool

@tool(description="from tool file")
def dup(block: bool = False) -> dict:
    return {"from": "tool file"}
"""


@pytest.mark.parametrize("plugin_where", ["home", "project"])
@pytest.mark.parametrize("tool_where", ["global", "project"])
async def test_tool_file_overrides_plugin_tool(
    project: Path,
    user_config_dir: Path,
    isolated_home: Path,
    plugin_where: str,
    tool_where: str,
) -> None:
    plugin_folder = {
        "home": isolated_home / ".agents" / "plugins",
        "project": project / ".agents" / "plugins",
    }[plugin_where]
    write(plugin_folder / "dupplug.py", src(PLUGIN))
    write(tools_folder(tool_where, project, user_config_dir) / "dup.py", src(DUP))
    session = create_session(project, trust=True)
    assert session.extensions.problems == []
    tools = session.toolbox.tools
    assert "plugin_only" in tools  # the plugin did load
    assert "dupplug.py" in tools["plugin_only"].source
    assert "dup.py" in tools["dup"].source
    assert "dupplug.py" not in tools["dup"].source
    assert tools["dup"].source != tools["plugin_only"].source
    assert tools["dup"].description == "from tool file"
    assert (await session.toolbox.run("dup", {})).to_dict() == {"from": "tool file", "ok": True}
    # hooks follow the real name: the plugin's guard still applies to the override
    blocked = await session.toolbox.run("dup", {"block": True})
    assert blocked.ok is False
    assert blocked.error == "blocked by the plugin's hook"


async def test_reload_rereads_tool_files(project: Path, user_config_dir: Path) -> None:
    file = write(user_config_dir / "tools" / "live.py", src(ECHO.format(label="one")))
    session = create_session(project)
    assert (await session.toolbox.run("live", {}))["output"] == "one"
    write(file, src(ECHO.format(label="two")))
    session.reload()
    assert (await session.toolbox.run("live", {}))["output"] == "two"
    file.unlink()
    session.reload()
    assert "live" not in session.toolbox.tools


# -- defaults -------------------------------------------------------------------------------

DEFAULTS: list[Any] = [
    pytest.param('{"n": schema.integer().default(5)}', "args", 5, id="builder-default"),
    pytest.param(
        '{"n": schema.integer().describe("How many").default(5)}', "args", 5, id="described"
    ),
    pytest.param('{"n": {"type": "integer", "default": 7}}', "args", 7, id="plain-dict"),
    pytest.param(None, "n: int = 3", 3, id="signature"),
    pytest.param(None, 'n: Annotated[int, "How many"] = 4', 4, id="annotated-signature"),
]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("args, signature, default", DEFAULTS)
async def test_defaults_are_applied_before_execute(
    project: Path,
    user_config_dir: Path,
    args: str | None,
    signature: str,
    default: int,
    is_async: bool,
) -> None:
    prefix = "async def" if is_async else "def"
    header = "from typing import Annotated\nfrom tui_agent import tool, schema\n\n"
    if args is not None:
        body = f"@tool(description='d', args={args})\n{prefix} default(args):\n"
        body += "    return {'seen': dict(args)}\n"
    else:
        body = f"@tool(description='d')\n{prefix} default({signature}) -> dict:\n"
        body += "    return {'seen': {'n': n}}\n"
    write(user_config_dir / "tools" / "dflt.py", header + body)
    session = create_session(project)
    assert session.extensions.problems == []
    found = session.toolbox.tools["dflt"]
    assert found.required == []
    assert found.params["n"]["default"] == default
    assert (await session.toolbox.run("dflt", {})).to_dict() == {"seen": {"n": default}, "ok": True}
    assert (await session.toolbox.run("dflt", None)).to_dict() == {
        "seen": {"n": default},
        "ok": True,
    }
    assert (await session.toolbox.run("dflt", {"n": 11})).to_dict() == {
        "seen": {"n": 11},
        "ok": True,
    }


async def test_nested_defaults_and_other_args_together(
    project: Path, user_config_dir: Path
) -> None:
    source = """
    from tui_agent import tool, schema

    @tool(description="d", args={
        "query": schema.string(),
        "limit": schema.integer().default(10),
        "mode": schema.enum(["fast", "slow"]).default("fast"),
        "tags": schema.array(schema.string()).optional(),
    })
    def default(args):
        return {"seen": dict(args)}
    """
    session = load(user_config_dir / "tools", {"q.py": source}, project)
    assert session.toolbox.tools["q"].required == ["query"]
    result = await session.toolbox.run("q", {"query": "x", "mode": "slow"})
    assert result.to_dict() == {
        "seen": {"query": "x", "limit": 10, "mode": "slow"},
        "ok": True,
    }


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            """
            from tui_agent import tool, schema

            @tool(description="d", args={"items": schema.array(schema.string()).default([])})
            def default(args):
                args["items"].append("x")
                return {"items": args["items"]}
            """,
            id="builder-default",
        ),
        pytest.param(
            """
            from tui_agent import tool

            @tool(description="d")
            def default(items: list[str] = []) -> dict:  # noqa: B006
                items.append("x")
                return {"items": items}
            """,
            id="signature-default",
        ),
    ],
)
async def test_a_mutable_default_is_fresh_on_every_call(
    project: Path, user_config_dir: Path, source: str
) -> None:
    session = load(user_config_dir / "tools", {"acc.py": source}, project)
    advertised = definition(session, "acc")
    for _ in range(3):
        result = await session.toolbox.run("acc", {})
        assert result.to_dict() == {"items": ["x"], "ok": True}
    # what the model is told never changes because a tool touched its arguments
    assert definition(session, "acc") == advertised
    assert session.toolbox.tools["acc"].params["items"]["default"] == []


# -- ToolContext ----------------------------------------------------------------------------

CONTEXT_TOOLS: list[Any] = [
    pytest.param(
        """
        @tool(description="d", args={})
        def default(args, context):
            return fields(context)
        """,
        id="args-sync",
    ),
    pytest.param(
        """
        @tool(description="d", args={})
        async def default(args, context):
            return fields(context)
        """,
        id="args-async",
    ),
    pytest.param(
        """
        @tool
        def default(context) -> dict:
            '''d'''
            return fields(context)
        """,
        id="signature-context",
    ),
    pytest.param(
        """
        @tool
        async def default(ctx: ToolContext) -> dict:
            '''d'''
            return fields(ctx)
        """,
        id="signature-typed-async",
    ),
]

CONTEXT_HEADER = """
from __future__ import annotations
from tui_agent import tool, ToolContext

FIELDS = ("agent", "session_id", "message_id", "directory", "worktree", "call_id")

def fields(c):
    return {"cls": type(c).__name__, **{k: getattr(c, k) for k in FIELDS}}
"""


@pytest.mark.parametrize("body", CONTEXT_TOOLS)
async def test_tool_context_fields(project: Path, body: str) -> None:
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    write(project / ".tui-agent" / "tools" / "where.py", src(CONTEXT_HEADER) + src(body))
    session = create_session(sub, trust=True)
    assert session.extensions.problems == []
    assert session.toolbox.tools["where"].params == {}

    # without a context: the session's own
    result = await session.toolbox.run("where", {})
    assert result.ok, result
    seen = result.to_dict()
    assert seen["cls"] == "ToolContext"
    assert seen["session_id"] == session.id
    assert seen["directory"] == str(sub.resolve())
    assert seen["worktree"] == str(project.resolve())
    assert isinstance(seen["agent"], str) and seen["agent"]
    assert isinstance(seen["message_id"], str)
    assert isinstance(seen["call_id"], str)

    # with a context: exactly that one
    context = ToolContext(
        agent="reviewer",
        session_id=session.id,
        message_id="msg-7",
        directory=str(sub.resolve()),
        worktree=str(project.resolve()),
        call_id="call-3",
    )
    result = await session.toolbox.run("where", {}, context)
    assert result.to_dict() == {
        "cls": "ToolContext",
        "agent": "reviewer",
        "session_id": session.id,
        "message_id": "msg-7",
        "directory": str(sub.resolve()),
        "worktree": str(project.resolve()),
        "call_id": "call-3",
        "ok": True,
    }


def test_tool_context_has_the_spec_fields() -> None:
    context = ToolContext(
        agent="a", session_id="s", message_id="m", directory="/d", worktree="/w", call_id="c"
    )
    assert tuple(getattr(context, f) for f in CONTEXT_FIELDS) == ("a", "s", "m", "/d", "/w", "c")


# -- invalid arguments and load problems ----------------------------------------------------

INVALID: list[Any] = [
    pytest.param('{"a": schema.number()}', {"a": "x"}, "value at `/a` is not a number", id="num"),
    pytest.param(
        '{"a": schema.integer()}', {"a": 1.5}, "value at `/a` is not an integer", id="int"
    ),
    pytest.param('{"a": schema.string()}', {"a": 1}, "value at `/a` is not a string", id="str"),
    pytest.param(
        '{"a": schema.boolean()}', {"a": "yes"}, "value at `/a` is not a boolean", id="bool"
    ),
    pytest.param(
        '{"a": schema.array(schema.string())}',
        {"a": "x"},
        "value at `/a` is not an array",
        id="array",
    ),
    pytest.param(
        '{"a": schema.array(schema.integer())}',
        {"a": [1, "x"]},
        "value at `/a/1` is not an integer",
        id="array-item",
    ),
    pytest.param(
        '{"a": schema.object({"b": schema.string()})}',
        {"a": {"b": 2}},
        "value at `/a/b` is not a string",
        id="object-field",
    ),
    pytest.param(
        '{"a": schema.object({"b": schema.string()})}',
        {"a": {}},
        "object at `/a` is missing required properties: b",
        id="object-required",
    ),
    pytest.param(
        '{"a": schema.object({"b": schema.string()})}',
        {"a": []},
        "value at `/a` is not an object",
        id="object",
    ),
    pytest.param(
        '{"a": schema.number(), "b": schema.number()}',
        {},
        "object at root is missing required properties: a, b",
        id="required",
    ),
    pytest.param(
        '{"mode": schema.enum(["a", "b"])}',
        {"mode": "c"},
        'value at `/mode` is not one of: ["a", "b"]',
        id="enum",
    ),
    pytest.param(
        '{"s": schema.string().min(2)}',
        {"s": "x"},
        "string length at `/s` is less than: 2",
        id="min-length",
    ),
    pytest.param(
        '{"n": schema.integer().max(3)}',
        {"n": 4},
        "number at `/n` is greater than: 3",
        id="maximum",
    ),
    pytest.param(
        '{"xs": schema.array(schema.string()).min(1)}',
        {"xs": []},
        "array size at `/xs` is less than: 1",
        id="min-items",
    ),
    pytest.param(
        '{"n": schema.integer().default(1)}',
        {"n": "x"},
        "value at `/n` is not an integer",
        id="default-still-typed",
    ),
    pytest.param(
        '{"a": schema.number(), "b": schema.string()}',
        {"a": "x", "b": 2},
        "value at `/a` is not a number, value at `/b` is not a string",
        id="two-problems",
    ),
]


@pytest.mark.parametrize("args, call, message", INVALID)
async def test_invalid_args_get_json_schemer_errors(
    project: Path, user_config_dir: Path, args: str, call: dict[str, Any], message: str
) -> None:
    source = f"""
    from tui_agent import tool, schema

    @tool(description="d", args={args})
    def default(args):
        return {{"ran": True}}
    """
    session = load(user_config_dir / "tools", {"strict.py": source}, project)
    assert session.extensions.problems == []
    result = await session.toolbox.run("strict", call)
    assert result.to_dict() == {"error": message, "ok": False}


@pytest.mark.parametrize(
    "call, message",
    [
        ({"a": "two", "b": 3}, "value at `/a` is not a number"),
        ({"a": 1}, "object at root is missing required properties: b"),
        ({}, "object at root is missing required properties: a, b"),
    ],
)
async def test_invalid_args_for_an_inferred_tool(
    project: Path, user_config_dir: Path, call: dict[str, Any], message: str
) -> None:
    session = load(user_config_dir / "tools", {"math.py": MATH}, project)
    result = await session.toolbox.run("math_add", call)
    assert result.to_dict() == {"error": message, "ok": False}


@pytest.mark.parametrize("where", ["global", "project"])
async def test_broken_tool_files_are_reported_and_the_rest_loads(
    project: Path, user_config_dir: Path, where: str
) -> None:
    folder = tools_folder(where, project, user_config_dir)
    syntax = write(folder / "a_syntax.py", "from tui_agent import tool\n\ndef broken(:\n")
    raising = write(
        folder / "b_raises.py",
        src(
            """
            from tui_agent import tool

            @tool(description="never registered")
            def early() -> str:
                return "early"

            raise RuntimeError("boom at import")
            """
        ),
    )
    bad_schema = write(
        folder / "c_schema.py",
        src(
            """
            from tui_agent import tool

            ok = tool(description="fine", args={}, execute=lambda args: "fine")
            bad = tool(description="bad", args={"a": {"type": "nope"}}, execute=lambda args: 1)
            """
        ),
    )
    write(folder / "d_good.py", src(ECHO.format(label="good")))
    session = create_session(project, trust=True)

    problems = {Path(p.path).resolve(): p.error for p in session.extensions.problems}
    assert syntax.resolve() in problems
    assert "SyntaxError" in problems[syntax.resolve()]
    assert raising.resolve() in problems
    assert "boom at import" in problems[raising.resolve()]
    assert bad_schema.resolve() in problems
    assert "nope" in problems[bad_schema.resolve()]
    assert len(session.extensions.problems) == 3

    assert "b_raises" not in session.toolbox.tools
    assert "b_raises_early" not in session.toolbox.tools
    assert "c_schema_bad" not in session.toolbox.tools
    assert (await session.toolbox.run("c_schema_ok", {}))["output"] == "fine"
    assert (await session.toolbox.run("d_good", {}))["output"] == "good"


async def test_a_tool_that_raises_at_run_time_gives_an_error_result(
    project: Path, user_config_dir: Path
) -> None:
    source = """
    from tui_agent import tool

    @tool
    def default(n: int) -> int:
        '''Fails.'''
        raise ValueError(f"bad n: {n}")
    """
    session = load(user_config_dir / "tools", {"fails.py": source}, project)
    result = await session.toolbox.run("fails", {"n": 2})
    assert result.to_dict() == {"error": "bad n: 2", "name": "fails", "args": {"n": 2}, "ok": False}


# -- threads --------------------------------------------------------------------------------

THREADS: list[Any] = [
    pytest.param("@tool(description='d', args={})\ndef default(args):\n", False, id="args-sync"),
    pytest.param(
        "@tool(description='d', args={})\nasync def default(args):\n", True, id="args-async"
    ),
    pytest.param("@tool(description='d')\ndef default() -> dict:\n", False, id="signature-sync"),
    pytest.param(
        "@tool(description='d')\nasync def default(context) -> dict:\n",
        True,
        id="signature-async",
    ),
]


@pytest.mark.parametrize("head, on_loop", THREADS)
async def test_sync_tools_run_in_a_worker_thread_async_on_the_loop(
    project: Path, user_config_dir: Path, head: str, on_loop: bool
) -> None:
    source = (
        "import threading\nfrom tui_agent import tool\n\n"
        + head
        + "    return {'thread': threading.get_ident()}\n"
    )
    write(user_config_dir / "tools" / "where.py", source)
    session = create_session(project)
    result = await session.toolbox.run("where", {})
    assert result.ok, result
    assert (result["thread"] == threading.get_ident()) is on_loop


async def test_a_slow_sync_tool_does_not_block_the_loop(
    project: Path, user_config_dir: Path
) -> None:
    source = """
    import time
    from tui_agent import tool

    @tool
    def default(seconds: float) -> str:
        '''Sleep.'''
        time.sleep(seconds)
        return "slept"
    """
    session = load(user_config_dir / "tools", {"slow.py": source}, project)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        result = await session.toolbox.run("slow", {"seconds": 0.3})
    finally:
        task.cancel()
    assert result["output"] == "slept"
    assert ticks >= 5


# -- any language ---------------------------------------------------------------------------

SCRIPT = """
import sys

if __name__ == "__main__":
    print(float(sys.argv[1]) + float(sys.argv[2]))
"""

SHELL_TOOL = """
import asyncio, sys
from pathlib import Path
from tui_agent import tool, schema

@tool(description="Add two numbers using Python",
      args={"a": schema.number().describe("First number"),
            "b": schema.number().describe("Second number")})
async def add(args, context):
    script = Path(context.worktree) / ".tui-agent/tools/add_script.py"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(args["a"]), str(args["b"]),
        stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out.decode().strip()
"""


async def test_any_language_tool_shells_out(project: Path) -> None:
    folder = project / ".tui-agent" / "tools"
    write(folder / "add_script.py", src(SCRIPT))
    write(folder / "add.py", src(SHELL_TOOL))
    session = create_session(project, trust=True)
    # add_script.py defines no tool: it is just another file in the folder
    assert session.extensions.problems == []
    assert "add_script" not in session.toolbox.tools
    assert session.toolbox.tools["add"].required == ["a", "b"]
    result = await session.toolbox.run("add", {"a": 2, "b": 3.5})
    assert result.to_dict() == {"output": "5.5", "ok": True}
