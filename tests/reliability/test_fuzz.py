"""Fuzzing with hypothesis (issue 7): whatever the model, the server, a config file or a
journal throws at tui-agent, it answers with a `Result`, a clear message or a skipped line,
never a traceback, and the next request is still a transcript the API accepts.

Budget: ``TUI_AGENT_FUZZ_EXAMPLES`` examples per property (60 by default, for CI); the SSE
property, where every example is a whole turn through the openai client, runs a third of it.
``TUI_AGENT_FUZZ_EXAMPLES=2000 pytest tests/reliability/test_fuzz.py`` is the long run.
Hypothesis keeps no example database (``database=None``); its ``.hypothesis/`` cache folder
carries its own ``.gitignore``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from datetime import date, datetime, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import pytest
from conftest import write
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError

from tui_agent import Result, Toolbox, create_session
from tui_agent.core.conversation import journal
from tui_agent.core.protocol import events as ev
from tui_agent.core.providers import ProviderError
from tui_agent.core.session.session import Session
from tui_agent.testing import FakeOpenAI, Reply, transcript_problem

EXAMPLES = max(1, int(os.environ.get("TUI_AGENT_FUZZ_EXAMPLES", "60")))
SLOW_EXAMPLES = max(1, EXAMPLES // 3)

# Each property is an inner function given the objects its test built once (a session, a
# server, an event loop), so no fixture is reset between examples. No deadline: the machine
# may be busy, and a slow example is not a wrong one.
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None)
SLOW_FUZZ = settings(max_examples=SLOW_EXAMPLES, deadline=None, database=None)

T = TypeVar("T")

# -- shared strategies ----------------------------------------------------------------------

# What json.loads can hand the toolbox: NaN and Infinity included (Python accepts them).
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


class Deep(list[Any]):
    """A list nested ``depth`` deep (deeper than Python can walk recursively), shown short
    when hypothesis reports a failing example."""

    def __init__(self, depth: int) -> None:
        inner: list[Any] = []
        for _ in range(depth - 1):
            inner = [inner]
        super().__init__([inner])
        self.depth = depth

    def __repr__(self) -> str:
        return f"Deep({self.depth})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


DEEP = Deep(900)  # still parses as JSON
DEEPER = Deep(3000)  # only as Python objects: no recursive walk survives it


class Loop:
    """One event loop for every example of a property (examples run synchronously)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def close(self) -> None:
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


@pytest.fixture
def loop() -> Iterator[Loop]:
    runner = Loop()
    yield runner
    runner.close()


@pytest.fixture
def repo(project: Path) -> Path:
    """A real git worktree with a few files, so git and `git ls-files` have something."""
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    write(project / "a.txt", "hello\nworld\n")
    write(project / "sub" / "b.py", "print('b')\n")
    write(project / ".gitignore", "ignored/\n")
    write(project / "ignored" / "c.txt", "hidden\n")
    return project


def pointer(path: Any) -> str:
    """How the toolbox names a place in the arguments (SPEC §2: value at `/a/0`)."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "root" if not parts else "`/" + "/".join(parts) + "`"


def assert_names_the_problem(error: str, schema: dict[str, Any], args: Any) -> None:
    """The error names each missing property, or the place of at least one problem."""
    problems = list(Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(args))
    assert problems, "the arguments are valid"
    for problem in problems:
        if problem.validator == "required" and isinstance(problem.instance, dict):
            missing = [k for k in problem.validator_value if k not in problem.instance]
            assert all(key in error for key in missing), (error, missing)
    # an extra property is named by its own place (`/a/extra`), inside its object's (`/a`)
    places = [pointer(p.absolute_path).rstrip("`") for p in problems]
    assert any(place in error for place in places), (error, places)


def assert_sendable(result: Any) -> dict[str, Any]:
    """A `Result` whose JSON (what the model gets back) says ok or why not."""
    assert isinstance(result, Result), result
    sent = json.loads(result.to_json())
    assert sent["ok"] is result.ok
    if result.ok:
        assert result.error is None
    else:
        assert isinstance(result.error, str) and result.error.strip(), result
    return sent


# -- 1. every bundled tool, random arguments --------------------------------------------------

BUNDLED = {
    "read": ["path", "offset", "limit"],
    "write": ["path", "content"],
    "edit": ["path", "old", "new", "replace_all", "edits"],
    "glob": ["pattern", "path"],
    "grep": ["pattern", "path", "include", "ignore_case"],
    "list": ["path", "depth"],
    "execute": ["command", "timeout", "workdir", "sandbox"],
    "git": ["args"],
    "todo": ["todos"],
    "task": ["description", "prompt", "agent"],
    "fetch": ["url", "format", "max_length", "offset"],
    "diagnostics": ["path"],  # a language server only where one is on the PATH
}
# URLs refused before any connection (a private address, a scheme, credentials, no URL):
# the fuzz never reaches the network
NO_NETWORK_URLS = [
    "http://127.0.0.1:9/",
    "http://localhost/x",
    "http://[::1]/",
    "http://10.0.0.1/",
    "http://169.254.169.254/latest",
    "ftp://example.com/",
    "https://user:pw@example.com/",
    "not a url",
    "",
]
HARMLESS_COMMANDS = ["true", ":", "echo fuzz", "exit 3", "printf '%s' ok", "echo err >&2"]
READ_ONLY_GIT = ["status", "diff", "log", "show", "branch"]

# Paths stay inside the project: relative, no `..`, no `~` (the fuzz writes files).
path_segments = st.text(
    st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), min_size=1, max_size=8
).filter(lambda s: s not in ("..",))
EXISTING = [".", "a.txt", "sub", "sub/b.py", "ignored/c.txt"]
safe_paths = st.one_of(
    st.sampled_from(EXISTING),
    st.sampled_from([*EXISTING, "missing.txt", "new/x", "a.txt/x"]),
    st.lists(path_segments, min_size=1, max_size=3).map("/".join),
)


def outside(path: str) -> bool:
    return path.startswith(("/", "~")) or ".." in PurePosixPath(path).parts


def mostly(good: st.SearchStrategy[Any], *edges: Any) -> st.SearchStrategy[Any]:
    """Values the schema accepts, twice as often as the edge cases beside them."""
    return st.one_of(good, good, st.sampled_from(edges))


NAN, INF = float("nan"), float("inf")
well_typed: dict[str, st.SearchStrategy[Any]] = {
    "path": safe_paths,
    "workdir": mostly(st.sampled_from([".", "sub"]), "missing", "a.txt", "x\0y"),
    "offset": mostly(st.integers(1, 5) | st.integers(1, 10**6), 0, -1, 10**30, 1.0),
    "limit": mostly(st.integers(1, 5) | st.integers(1, 10**6), 0, -3, 2.5, 10**30),
    "depth": mostly(st.integers(1, 50), 0, -3, 10**6),
    "content": st.text(max_size=40),
    "old": st.text(max_size=6) | st.sampled_from(["hello", "world", "\n", "print"]),
    "new": st.text(max_size=6),
    "replace_all": st.booleans(),
    "edits": st.lists(
        st.fixed_dictionaries(
            {
                "old": st.text(max_size=6) | st.sampled_from(["hello", "world", "\n"]),
                "new": st.text(max_size=6),
            },
            optional={"replace_all": st.booleans()},
        ),
        max_size=3,
    ),
    "pattern": st.text(max_size=10) | st.sampled_from(["**/*.py", "*", "sub/*", "h.l+", "("]),
    "include": st.text(max_size=6) | st.sampled_from(["*.py", "*.txt", "*.{py,txt}"]),
    "ignore_case": st.booleans(),
    "url": st.sampled_from(NO_NETWORK_URLS),
    "format": mostly(st.sampled_from(["markdown", "text", "html"]), "pdf", ""),
    "max_length": mostly(st.integers(1, 10**6), 0, -1, 10**30),
    "timeout": mostly(st.floats(0.5, 600) | st.integers(1, 600), 0, -1, NAN, INF, 1e-9, 601),
    "command": st.sampled_from(HARMLESS_COMMANDS),
    "sandbox": mostly(st.just(True), False),  # false: asked, and denied headless
    "args": st.text(max_size=16) | st.lists(st.text(max_size=8), max_size=4),
    "description": st.text(max_size=12),
    "prompt": st.text(max_size=20),
    "agent": st.text(max_size=8),
    "todos": st.lists(
        st.fixed_dictionaries(
            {
                "content": st.text(max_size=12),
                "status": st.sampled_from(["pending", "in_progress", "completed", "cancelled"]),
            },
            optional={
                "activeForm": st.text(max_size=8),
                "id": st.text(max_size=3),
                "priority": st.sampled_from(["high", "medium", "low"]),
            },
        ),
        max_size=4,
    ),
}


@st.composite
def tool_args(draw: st.DrawFn, tool: str) -> Any:
    """Anything at all, or objects with the tool's own parameter names and random or
    well-typed values; strings that would reach the disk or a shell are made harmless."""
    names = BUNDLED[tool]
    keys = st.sampled_from(names) | st.text(max_size=6)
    well_formed = st.fixed_dictionaries({name: well_typed[name] for name in names})
    args = draw(
        st.one_of(
            json_values,
            st.dictionaries(keys, json_values, max_size=5),
            st.fixed_dictionaries(
                {},
                optional={name: well_typed[name] | json_values for name in names},
            ),
            well_formed,
            well_formed,  # twice: the handlers get their share of the examples
        )
    )
    if not isinstance(args, dict):
        return args
    for key in ("path", "workdir"):
        if isinstance(args.get(key), str) and outside(args[key]):
            args[key] = draw(safe_paths)
    if tool == "execute" and isinstance(args.get("command"), str):
        args["command"] = draw(st.sampled_from(HARMLESS_COMMANDS))
    if tool == "fetch" and isinstance(args.get("url"), str):
        args["url"] = draw(st.sampled_from(NO_NETWORK_URLS))
    if tool == "task":  # no subagent that would call a model: none is served here
        args["agent"] = draw(st.sampled_from(["nobody", "reviewer"]) | st.text(max_size=4))
        if args["agent"] in ("", "general", "explore"):
            args["agent"] = "nobody"
    if tool == "git":
        sub = draw(st.sampled_from(READ_ONLY_GIT))
        words = args.get("args")
        if isinstance(words, str):
            args["args"] = f"{sub} {words}"
        elif isinstance(words, list) and all(isinstance(w, str) for w in words):
            args["args"] = [sub, *words]
    return args


def tool_call_names(session: Session) -> list[tuple[str, str]]:
    """(name called, real tool) for every bundled tool and alias."""
    pairs = [(name, name) for name in session.toolbox.tools]
    pairs += list(session.toolbox.aliases.items())
    return sorted(pairs)


@pytest.fixture
def tool_session(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    monkeypatch.setenv("GIT_EDITOR", "true")  # nothing the fuzz runs may wait for an editor
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo.parent))
    session = create_session(repo)
    assert not session.extensions.problems
    yield session
    session.conversation.journal.close()


def test_the_fuzz_covers_every_bundled_tool(tool_session: Session) -> None:
    tools = tool_session.toolbox.tools
    assert set(tools) == set(BUNDLED), "a new bundled tool needs a strategy in BUNDLED"
    for name, params in BUNDLED.items():
        assert set(tools[name].params) == set(params), name


def run_tool(loop: Loop, toolbox: Toolbox, name: str, args: Any) -> tuple[Result, list[str]]:
    """The result, and the tools whose hooks ran (a global before hook put first records
    them; the toolbox announces every call, invalid ones too, so its events cannot tell)."""
    started: list[str] = []

    def first_hook(args: Any, tool_name: str) -> None:
        started.append(tool_name)

    hooks = toolbox.hooks["before"].setdefault("*", [])
    hooks.insert(0, first_hook)
    try:
        result = loop.run(toolbox.run(name, args))
    finally:
        hooks.remove(first_hook)
    return result, started


@pytest.mark.parametrize("tool", sorted(BUNDLED))
def test_random_arguments_to_a_bundled_tool_give_a_result(
    tool: str, tool_session: Session, loop: Loop, repo: Path
) -> None:
    toolbox = tool_session.toolbox
    names = [called for called, real in tool_call_names(tool_session) if real == tool]
    schema = toolbox.tools[tool].schema
    checker = Draft202012Validator(schema, format_checker=FormatChecker())
    outside_before = sorted(p.name for p in repo.parent.iterdir())

    @FUZZ
    @given(name=st.sampled_from(names), args=tool_args(tool))
    @example(name=tool, args=None)
    @example(name=tool, args=[])
    @example(name=tool, args={"path": DEEPER, "args": DEEP, "command": DEEP, "pattern": DEEP})
    @example(name=tool, args={"extra": DEEPER, "path": "x\0y", "args": "status", "command": "true"})
    @example(name=tool, args={"path": "\udcff", "pattern": "\ud800", "command": "true"})
    @example(name=tool, args={"path": "x\0y", "content": "", "old": "a", "new": "", "x": DEEPER})
    @example(name=tool, args={"timeout": float("nan"), "command": "true", "depth": 1e300})
    def check(name: str, args: Any) -> None:
        result, started = run_tool(loop, toolbox, name, args)
        assert_sendable(result)
        args = {} if args is None else args  # SPEC §2: None counts as {}
        valid = checker.is_valid(args)
        event(f"valid arguments, {'ok' if result.ok else 'error'}" if valid else "invalid")
        if valid:
            assert started == [tool], "valid arguments reach the hooks and the handler"
        else:
            assert not result.ok and started == [], "invalid arguments stop before any hook"
            assert result.error is not None
            assert_names_the_problem(result.error, schema, args)

    check()
    assert sorted(p.name for p in repo.parent.iterdir()) == outside_before


# -- 2. toolbox.run for random schemas --------------------------------------------------------

property_names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=5)
plain_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4), st.floats(-2, 2)
)
scalar_schemas = st.one_of(
    st.just({"type": "string"}),
    st.builds(
        lambda low, span: {"type": "string", "minLength": low, "maxLength": low + span},
        st.integers(0, 3),
        st.integers(0, 5),
    ),
    st.lists(st.text(max_size=4), min_size=1, max_size=4, unique=True).map(
        lambda items: {"type": "string", "enum": items}
    ),
    st.builds(
        lambda low, span: {"type": "integer", "minimum": low, "maximum": low + span},
        st.integers(-10, 10),
        st.integers(0, 20),
    ),
    st.just({"type": "number"}),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.just({"type": ["string", "null"], "description": "text or nothing"}),
    st.lists(plain_scalars, min_size=1, max_size=3).map(lambda items: {"enum": items}),
)


def object_of(props: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    required = st.lists(st.sampled_from(sorted(props)), unique=True) if props else st.just([])
    return st.builds(
        lambda req, extra: {
            "type": "object",
            "properties": props,
            "required": req,
            "additionalProperties": extra,
        },
        required,
        st.booleans(),
    )


property_schemas = st.recursive(
    scalar_schemas,
    lambda inner: st.one_of(
        st.builds(
            lambda item, most: {"type": "array", "items": item, "maxItems": most},
            inner,
            st.integers(0, 4),
        ),
        st.dictionaries(property_names, inner, max_size=3).flatmap(object_of),
    ),
    max_leaves=6,
)


@st.composite
def instance_of(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """A value that matches one of the schemas generated above."""
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from(kind))
    if kind == "string":
        low = schema.get("minLength", 0)
        return draw(st.text(min_size=low, max_size=schema.get("maxLength", low + 6)))
    if kind == "integer":
        return draw(st.integers(schema.get("minimum", -100), schema.get("maximum", 100)))
    if kind == "number":
        return draw(st.floats(allow_nan=False, allow_infinity=False) | st.integers())
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "null":
        return None
    if kind == "array":
        return draw(st.lists(instance_of(schema["items"]), max_size=schema["maxItems"]))
    assert kind == "object", schema
    value: dict[str, Any] = {}
    for name, sub in schema["properties"].items():
        if name in schema["required"] or draw(st.booleans()):
            value[name] = draw(instance_of(sub))
    if schema.get("additionalProperties", True):
        extra = draw(st.dictionaries(st.text(max_size=4), json_values, max_size=2))
        value.update({k: v for k, v in extra.items() if k not in schema["properties"]})
    return value


@st.composite
def schema_and_args(draw: st.DrawFn) -> tuple[dict[str, Any], list[str], Any]:
    params = draw(st.dictionaries(property_names, property_schemas, max_size=4))
    required = draw(st.lists(st.sampled_from(sorted(params)), unique=True)) if params else []
    root = {"type": "object", "properties": params, "required": required}
    args = draw(instance_of(root))
    how = draw(st.sampled_from(["as is", "drop", "replace", "anything"]))
    if how == "drop" and args:
        args.pop(draw(st.sampled_from(sorted(args))))
    elif how == "replace" and args:
        args[draw(st.sampled_from(sorted(args)))] = draw(json_values)
    elif how == "anything":
        args = draw(json_values)
    return params, required, args


def test_random_schemas_validate_or_run_never_raise(loop: Loop) -> None:
    @FUZZ
    @given(schema_and_args())
    @example(({"n": {"type": "integer"}}, ["n"], {"n": 1.0}))
    @example(({"n": {"type": "integer"}}, ["n"], {"n": True}))
    @example(({"s": {"type": "string"}}, [], {"s": DEEPER}))
    @example(({"a": {"type": "array", "items": {"type": "null"}, "maxItems": 1}}, [], {"a": DEEP}))
    def check(case: tuple[dict[str, Any], list[str], Any]) -> None:
        params, required, args = case
        toolbox = Toolbox()
        ran: list[Any] = []

        def handler(given_args: dict[str, Any]) -> dict[str, Any]:
            ran.append(given_args)
            return {"got": given_args}

        tool = toolbox.add("fuzzed", params=params, required=required, handler=handler)
        result = loop.run(toolbox.run("fuzzed", args))
        assert_sendable(result)
        args = {} if args is None else args  # SPEC §2: None counts as {}
        valid = Draft202012Validator(tool.schema, format_checker=FormatChecker()).is_valid(args)
        event("valid" if valid else "invalid")
        if valid:
            assert result.ok, result
            assert len(ran) == 1
            assert json.dumps(result["got"], sort_keys=True) == json.dumps(args, sort_keys=True)
        else:
            assert not result.ok and ran == []
            assert result.error is not None
            assert_names_the_problem(result.error, tool.schema, args)

    check()


schema_keys = st.sampled_from(
    [
        "type",
        "description",
        "enum",
        "minimum",
        "maxLength",
        "items",
        "properties",
        "required",
        "additionalProperties",
        "pattern",
        "format",
        "$ref",
        "const",
        "anyOf",
    ]
)
schema_values = st.one_of(
    json_scalars,
    st.sampled_from(["string", "integer", "strin", "#", "#/properties", "#/nope", "(", "[a-"]),
    st.lists(st.sampled_from(["string", "null", "bogus"]), max_size=3),
)
random_props = st.recursive(
    st.dictionaries(schema_keys, schema_values, max_size=4),
    lambda inner: st.dictionaries(schema_keys, st.one_of(schema_values, inner), max_size=4),
    max_leaves=8,
)


def test_random_schemas_are_refused_at_registration_or_never_raise_at_run_time(
    loop: Loop,
) -> None:
    @FUZZ
    @given(
        params=st.dictionaries(st.text(max_size=4), random_props, max_size=3) | json_values,
        required=st.lists(st.text(max_size=3), max_size=3) | json_values,
        args=json_values | st.dictionaries(st.text(max_size=4), json_values, max_size=3),
    )
    @example(params={"a": {"$ref": "#/nope"}}, required=[], args={"a": 1})
    @example(params={"a": {"$ref": "#/$defs/x"}}, required=["a"], args={"a": 1})
    @example(params={"a": {"type": "string", "pattern": "("}}, required=[], args={"a": "x"})
    @example(params=[1, 2], required=[], args={})
    @example(params={}, required=None, args={})
    @example(params={}, required=5, args={})
    @example(params={"a": 5}, required=[], args={})
    def check(params: Any, required: Any, args: Any) -> None:
        toolbox = Toolbox()
        try:
            toolbox.add("t_fuzz", params=params, required=required, handler=lambda a: {"got": a})
        except ValueError as exc:
            assert "t_fuzz" in str(exc), exc
            assert "t_fuzz" not in toolbox.tools
            return
        result = loop.run(toolbox.run("t_fuzz", args))
        assert_sendable(result)
        try:
            Draft202012Validator.check_schema(toolbox.tools["t_fuzz"].schema)
        except SchemaError as exc:  # pragma: no cover - the failure being looked for
            raise AssertionError(f"an invalid schema was registered: {exc.message}") from exc

    check()


# -- 3. random SSE streams through the openai provider ---------------------------------------


class SSEServer:
    """An OpenAI-compatible endpoint that streams whatever ``script`` holds, byte for byte.

    Each POST pops one body (``bytes``, and ``cut`` to drop the connection after that many
    bytes); once the script is empty it streams a plain "done" reply. Every request's
    transcript is checked as the OpenAI API would (``rejected``).
    """

    DONE = b'data: {"choices": [{"index": 0, "delta": {"content": "done"}}]}\n\ndata: [DONE]\n\n'

    def __init__(self) -> None:
        self.script: list[tuple[bytes, int | None]] = []
        self.rejected: list[str] = []
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    # another endpoint (the budget asks local servers' own, such as
                    # Ollama's /api/show, for the window): not found, as a real server says
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.loads(raw or b"{}")
                server.requests += 1
                problem = transcript_problem(body.get("messages"))
                if problem is not None:
                    server.rejected.append(problem)
                    data = json.dumps({"error": {"message": problem}}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                data, cut = server.script.pop(0) if server.script else (server.DONE, None)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if cut is not None:
                    data = data[:cut]
                if data:
                    self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                if cut is not None:
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chunk(delta: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": None}]
    return {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": choices, **extra}


def call_delta(index: Any, call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    function = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    part = {"index": index, "function": function, "type": "function"}
    if call_id is not None:
        part["id"] = call_id
    return chunk({"tool_calls": [part]})


tool_names = st.sampled_from(["echo", "nope", "", "read", "execute"]) | st.text(max_size=6)
call_ids = st.one_of(
    st.none(), st.sampled_from(["call_a", "call_b", ""]), st.text(max_size=4), st.integers()
)
argument_pieces = st.one_of(
    st.none(),
    st.sampled_from(['{"text": ', '"hi"}', "{}", "{", "}", "null", "[1]", '{"text": 5}']),
    st.text(max_size=6),
    json_values,
)
valid_events = st.one_of(
    st.builds(lambda t: chunk({"content": t}), st.text(max_size=8)),
    st.builds(lambda t: chunk({"reasoning_content": t}), st.text(max_size=8)),
    st.builds(lambda: chunk({"role": "assistant", "content": ""})),
    st.builds(call_delta, st.integers(0, 3) | json_scalars, call_ids, tool_names, argument_pieces),
    st.builds(
        lambda p, c: chunk(usage={"prompt_tokens": p, "completion_tokens": c}),
        st.integers(0, 50) | json_scalars,
        st.integers(0, 50) | json_scalars,
    ),
    st.builds(
        lambda r: {**chunk({}), "choices": [{"index": 0, "delta": {}, "finish_reason": r}]},
        st.sampled_from(["stop", "tool_calls", "length", None]),
    ),
    st.builds(lambda: chunk()),
)


def mutate(value: Any, replacement: Any, seed: int) -> Any:
    """Replace one leaf of a chunk (chosen by ``seed``) with ``replacement``."""
    leaves: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, dict | list) and child:
                walk(child)
            else:
                leaves.append((node, key))

    copy = json.loads(json.dumps(value))
    walk(copy)
    if leaves:
        node, key = leaves[seed % len(leaves)]
        node[key] = replacement
    return copy


sse_lines = st.one_of(
    valid_events.map(lambda c: "data: " + json.dumps(c)),
    st.builds(mutate, valid_events, json_values, st.integers(0, 50)).map(
        lambda c: "data: " + json.dumps(c)
    ),
    json_values.map(lambda v: "data: " + json.dumps(v)),
    st.sampled_from(
        [
            "data: {bad json",
            "data: [DONE]",
            ": keep-alive",
            "event: error",
            'data: {"error": {"message": "overloaded"}}',
            "data:",
            "retry: 10",
        ]
    ),
    st.text(max_size=20).map(lambda t: t.replace("\n", " ").replace("\r", " ")),
)


@st.composite
def sse_bodies(draw: st.DrawFn) -> tuple[bytes, int | None]:
    lines = draw(st.lists(sse_lines, max_size=12))
    if draw(st.booleans()):
        lines.append("data: [DONE]")
    data = "".join(f"{line}\n\n" for line in lines).encode("utf-8", errors="surrogatepass")
    cut = draw(st.none() | st.integers(0, max(0, len(data) - 1)))
    return data, cut


def encode(*events: dict[str, Any] | str, done: bool = True) -> tuple[bytes, None]:
    lines = [e if isinstance(e, str) else "data: " + json.dumps(e) for e in events]
    if done:
        lines.append("data: [DONE]")
    return "".join(f"{line}\n\n" for line in lines).encode(), None


@pytest.fixture
def sse_server() -> Iterator[SSEServer]:
    server = SSEServer()
    yield server
    server.stop()


def test_random_sse_streams_end_the_turn_cleanly_with_a_valid_transcript(
    project: Path, sse_server: SSEServer, loop: Loop, user_config_dir: Path
) -> None:
    # no retries (each body is served once); only the harmless `echo` tool may run
    write(
        user_config_dir / "config.toml",
        'retry_attempts = 1\n[permission]\n"*" = "deny"\necho = "allow"\n',
    )
    session = create_session(project, base_url=sse_server.base_url, model="fuzz-model")
    session.toolbox.add(
        "echo",
        params={"text": {"type": "string"}},
        handler=lambda args: {"output": args.get("text", "")},
    )
    finished: list[ev.TurnFinished] = []
    session.events.listen(lambda e: finished.append(e) if isinstance(e, ev.TurnFinished) else None)

    @SLOW_FUZZ
    @given(sse_bodies())
    @example(encode(call_delta(0, 5, "echo", "{}")))
    @example(encode(call_delta(0, "a", "echo", "{}"), call_delta(1, "a", "echo", "{}")))
    @example(encode(call_delta(0, "", "echo", "{}"), call_delta(1, "call_0", "echo", "{}")))
    @example(encode(call_delta(0, "a", "echo", "{}"), call_delta(None, "b", "echo", "{}")))
    @example(encode(call_delta("x", "a", "echo", "{}"), call_delta(0, "b", "echo", "{}")))
    @example(encode(call_delta([1], "a", "echo", "{}")))
    @example(encode(call_delta(0, "a", 5, "{}"), call_delta(0, None, None, ["x"])))
    @example(encode(chunk({"content": 5}), chunk({"reasoning_content": {"a": 1}})))
    @example(encode(chunk(usage={"prompt_tokens": "many", "completion_tokens": None})))
    @example(encode(call_delta(0, "a", "echo", '{"text": ' + "[" * 5000 + "]" * 5000 + "}")))
    @example(encode(call_delta(0, "a", "echo", json.dumps({"text": DEEP}))))
    @example(encode('data: {"choices": "abc"}', "data: null", done=False))
    @example(encode(chunk({"content": "partial"}), "data: {bad json", done=False))
    def check(body: tuple[bytes, int | None]) -> None:
        session.conversation.clear()
        finished.clear()
        sse_server.script[:] = [body]
        reply = loop.run(session.turn("fuzz prompt"))
        assert isinstance(reply, str)
        assert len(finished) == 1
        error = finished[0].error
        if error is not None:
            assert error.strip() and "Traceback" not in error
        messages = session.conversation.messages
        assert messages[0] == {"role": "user", "content": "fuzz prompt"}
        request = session.conversation.request(session.workspace.system_prompt())
        assert transcript_problem(request) is None
        assert sse_server.rejected == []

    try:
        check()
    finally:
        loop.run(session.close())
        session.conversation.journal.close()
    assert sse_server.requests >= SLOW_EXAMPLES


# -- 4. random config files ----------------------------------------------------------------

KNOWN_KEYS = [
    "provider",
    "model",
    "base_url",
    "api_key",
    "timeout",
    "max_steps",
    "retry_attempts",
    "retry_base_delay",
    "permission",
    "mcp",
]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


toml_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=10),
    st.datetimes(),
    st.dates(),
    st.times(),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def without_mcp_servers(doc: dict[str, Any]) -> dict[str, Any]:
    """Random MCP servers would be random programs started: keep them, but disabled."""
    section = doc.get("mcp")
    if isinstance(section, dict) and isinstance(section.get("servers"), dict):
        section["servers"] = {
            name: {**spec, "enabled": False} if isinstance(spec, dict) else spec
            for name, spec in section["servers"].items()
        }
    return doc


def toml_text(doc: dict[str, Any]) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in doc.items())


toml_documents = (
    st.dictionaries(
        st.sampled_from(KNOWN_KEYS) | st.text(max_size=6),
        toml_values
        | st.sampled_from([1, 50, "openai", "stub", "fuzz-model"])
        | st.dictionaries(
            st.sampled_from(["*", "read", "execute", "servers"]),
            st.sampled_from(["allow", "ask", "deny", "maybe", 5]) | toml_values,
            max_size=3,
        ),
        max_size=6,
    )
    .map(without_mcp_servers)
    .map(toml_text)
)
config_files = st.one_of(
    toml_documents.map(lambda text: text.encode()),
    st.text(max_size=60).map(lambda text: text.encode("utf-8", errors="surrogatepass")),
    st.binary(max_size=60),
    st.builds(
        lambda doc, garbage, at: doc[:at] + garbage + doc[at:],
        toml_documents.map(str.encode),
        st.binary(min_size=1, max_size=4),
        st.integers(0, 40),
    ),
)

SETTING_TYPES: dict[str, Callable[[Any], bool]] = {
    "provider": lambda v: isinstance(v, str),
    "model": lambda v: isinstance(v, str),
    "base_url": lambda v: isinstance(v, str),
    "api_key": lambda v: isinstance(v, str),
    "timeout": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v > 0,
    "max_steps": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "retry_attempts": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "retry_base_delay": lambda v: (
        isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < float("inf")
    ),
    "permission": lambda v: isinstance(v, dict),
    "mcp": lambda v: isinstance(v, dict),
}


def test_random_config_files_load_or_are_reported_and_the_turn_still_runs(
    project: Path, user_config_dir: Path, loop: Loop
) -> None:
    config = user_config_dir / "config.toml"
    with FakeOpenAI() as server:

        @FUZZ
        @given(config_files)
        @example(b'max_steps = "x"\ntimeout = "slow"\nretry_attempts = [1]')
        @example(b"max_steps = inf\nretry_base_delay = nan\ntimeout = -1")
        @example(b"a = " + b"[" * 3000 + b"]" * 3000)
        @example(b"model = 1979-05-27\nprovider = 5\nbase_url = 5\napi_key = {a = 1}")
        @example(b"permission = 5\nmcp = 5")
        @example(b"\xff\xfe = 1")
        @example(b"[[permission]]\n[[mcp]]")
        def check(data: bytes) -> None:
            config.write_bytes(data)
            session = create_session(project)
            try:
                for problem in session.extensions.problems:
                    assert problem.path == str(config), problem
                    assert problem.error.strip() and "Traceback" not in problem.error
                settings = session.config.settings
                for key, good in SETTING_TYPES.items():
                    if key in settings:
                        assert good(settings[key]), f"{key} = {settings[key]!r} was kept"
                if session.extensions.provider_name == "stub":
                    reply = loop.run(session.turn("hi"))
                    assert isinstance(reply, str)
                elif session.extensions.provider_name == "openai":
                    # never the real API: point whatever the file says at the fake server
                    session.extensions.set_model(model="fake-model")
                    session.config.settings["base_url"] = server.base_url
                    server.script[:] = [Reply("fine")]
                    assert loop.run(session.turn("hi")) == "fine"
                    assert server.rejected == []
                else:
                    with pytest.raises(ProviderError, match="unknown provider"):
                        loop.run(session.turn("hi"))
            finally:
                session.conversation.journal.close()

        check()


BROKEN_CONFIGS = {
    "not TOML": b"model = = 'x'\n",
    "not UTF-8": b"model = '\xff\xfe'\n",
    "wrong type": b'max_steps = "many"\n',
    "nested too deep": b"a = " + b"[" * 3000 + b"]" * 3000 + b"\n",
}


@pytest.mark.parametrize("name", sorted(BROKEN_CONFIGS))
def test_run_with_a_broken_config_says_which_file_in_one_line_and_exits_2(
    name: str, project: Path, user_config_dir: Path
) -> None:
    config = user_config_dir / "config.toml"
    config.write_bytes(BROKEN_CONFIGS[name])
    with FakeOpenAI([Reply("should not be asked")]) as server:
        done = subprocess.run(
            [sys.executable, "-m", "tui_agent", "--base-url", server.base_url, "run", "hi"],
            cwd=project,
            env=dict(os.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
        )
        assert server.requests == [], "a broken config must stop the run before the model"
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if str(config) in line]
    assert len(lines) == 1, done.stderr
    assert done.stdout == ""


# -- 5. random journal lines ---------------------------------------------------------------

garbage_lines = st.one_of(
    st.text(max_size=30).map(lambda t: t.encode("utf-8", errors="surrogatepass")),
    st.binary(max_size=30),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(lambda m: json.dumps({"type": "message", "message": m}).encode(), json_values),
    st.builds(
        lambda role, content, extra: json.dumps(
            {"type": "message", "message": {"role": role, "content": content, **extra}}
        ).encode(),
        st.sampled_from(["user", "assistant", "tool", "system", "bogus"]) | json_scalars,
        json_values,
        st.dictionaries(
            st.sampled_from(["tool_calls", "tool_call_id", "name"]), json_values, max_size=2
        ),
    ),
    st.sampled_from(
        [
            b'{"type": "message"}',
            b'{"type": "session"}',
            b'{"type": "message", "message": {"role": "tool", "tool_call_id": "call_1", '
            b'"content": "{}"}}',
            b'{"type": "message", "message": {"role": "assistant", "content": null, '
            b'"tool_calls": [{"id": "x", "type": "function", '
            b'"function": {"name": "read", "arguments": "{}"}}]}}',
            b'{"type": "message", "message": {"role": "assistant", "tool_calls": "abc"}}',
            b"[" * 5000,
        ]
    ),
)


def base_messages(texts: list[str]) -> list[dict[str, Any]]:
    """A journaled conversation: user prompts, a tool call with its result, replies."""
    messages: list[dict[str, Any]] = []
    for number, text in enumerate(texts):
        call_id = f"call_{number}"
        messages += [
            {"role": "user", "content": text},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"ok": True})},
            {"role": "assistant", "content": f"reply {number}"},
        ]
    return messages


def test_random_journal_lines_are_skipped_and_resume_gives_a_valid_transcript(
    project: Path, loop: Loop
) -> None:
    with FakeOpenAI() as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        counter = iter(range(10**9))

        @FUZZ
        @given(
            texts=st.lists(st.text(max_size=12), min_size=1, max_size=3),
            garbage=st.lists(st.tuples(st.integers(0, 30), garbage_lines), max_size=6),
            torn=st.booleans(),
        )
        @example(texts=["a\u2028b", "c\x85d\x1ce"], garbage=[], torn=False)
        @example(texts=["x"], garbage=[(0, b'{"type": "message", "message": 5}')], torn=False)
        @example(texts=["x"], garbage=[(1, b'{"type": "message"}')], torn=True)
        @example(texts=["x"], garbage=[(2, b"[" * 5000)], torn=False)
        @example(
            texts=["x"],
            garbage=[
                (1, b'{"type": "message", "message": {"role": "assistant", "tool_calls": 1}}'),
                (1, b'{"type": "message", "message": {"role": "assistant", "tool_calls": [null]}}'),
                (1, b'{"type": "message", "message": {"role": "assistant", "tool_calls": [{}]}}'),
            ],
            torn=False,
        )
        @example(
            texts=["x"],
            garbage=[
                (2, b'{"type": "message", "message": {"role": "user", "content": "nan", '),
                (
                    2,
                    b'{"type": "message", "message": {"role": "user", "content": "s", '
                    b'"tool_calls": [NaN]}}',
                ),
                (
                    2,
                    b'{"type": "message", "message": {"role": "user", '
                    b'"content": [{"type": "text", "text": "t", "n": Infinity}]}}',
                ),
            ],
            torn=False,
        )
        @example(texts=["x", "y"], garbage=[(3, b'{"type": "message", "message": {}}')], torn=False)
        @example(
            texts=["x"],
            garbage=[
                (3, b'{"type": "message", "message": {"role": "user", "content": "in between"}}')
            ],
            torn=False,
        )
        def check(texts: list[str], garbage: list[tuple[int, bytes]], torn: bool) -> None:
            session_id = f"fuzz-{next(counter)}"
            path = journal.sessions_dir() / f"{session_id}.jsonl"
            header = {"type": "session", "id": session_id, "directory": str(project)}
            lines = [json.dumps(header, ensure_ascii=False).encode()]
            lines += [
                json.dumps({"type": "message", "message": m}, ensure_ascii=False).encode()
                for m in base_messages(texts)
            ]
            for at, line in sorted(garbage, key=lambda pair: pair[0]):
                lines.insert(min(at, len(lines)), line.replace(b"\n", b" "))
            data = b"\n".join(lines) + b"\n"
            if torn:
                data = data[:-7]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

            assert isinstance(journal.read_messages(path), list)
            assert isinstance(journal.list_sessions(project), list)
            assert session.conversation.resume(session_id) is True
            messages = session.conversation.messages
            assert transcript_problem([{"role": "system", "content": "s"}, *messages]) is None
            said = [m["content"] for m in messages if m["role"] == "user"]
            assert all(text in said for text in texts), (texts, said)
            server.script[:] = [Reply("resumed")]
            assert loop.run(session.turn("go on")) == "resumed"
            assert server.rejected == []

        try:
            check()
        finally:
            session.conversation.journal.close()


def test_continue_survives_journal_lines_of_the_wrong_shape(project: Path) -> None:
    """`--continue` lists the folder's sessions first: lines of the wrong shape in a journal
    neither break the listing nor the resume."""
    session = create_session(project)
    session.conversation.record({"role": "user", "content": "first"})
    session.conversation.journal.close()
    with session.conversation.journal.path.open("ab") as handle:
        handle.write(b'{"type": "message", "message": 7}\n{"type": "message"}\n\xff\xfe\n')
    found = journal.list_sessions(project)
    assert [info.id for info in found] == [session.id]
    assert found[0].title == "first"
    again = create_session(project)
    assert again.conversation.resume() is True
    assert again.conversation.messages == [{"role": "user", "content": "first"}]
    again.conversation.journal.close()
