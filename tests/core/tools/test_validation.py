"""Validation messages use json_schemer's wording, one per problem, joined by ", "."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_agent import Toolbox
from tui_agent.core.tools.validation import compile_validator, object_schema

CASES: list[tuple[str, dict[str, Any], list[str], Any, str]] = [
    ("string", {"path": {"type": "string"}}, [], {"path": 1}, "value at `/path` is not a string"),
    ("integer", {"n": {"type": "integer"}}, [], {"n": "1"}, "value at `/n` is not an integer"),
    (
        "integer float",
        {"n": {"type": "integer"}},
        [],
        {"n": 1.5},
        "value at `/n` is not an integer",
    ),
    ("number", {"n": {"type": "number"}}, [], {"n": "x"}, "value at `/n` is not a number"),
    ("boolean", {"b": {"type": "boolean"}}, [], {"b": 0}, "value at `/b` is not a boolean"),
    ("array", {"a": {"type": "array"}}, [], {"a": "x"}, "value at `/a` is not an array"),
    ("object", {"o": {"type": "object"}}, [], {"o": []}, "value at `/o` is not an object"),
    ("null", {"z": {"type": "null"}}, [], {"z": 0}, "value at `/z` is not null"),
    (
        "type list",
        {"v": {"type": ["string", "null"]}},
        [],
        {"v": 1},
        'value at `/v` is not one of the types: ["string", "null"]',
    ),
    (
        "required",
        {"path": {"type": "string"}, "mode": {"type": "string"}},
        ["path", "mode"],
        {},
        "object at root is missing required properties: path, mode",
    ),
    (
        "required one",
        {"path": {"type": "string"}, "mode": {"type": "string"}},
        ["path", "mode"],
        {"path": "x"},
        "object at root is missing required properties: mode",
    ),
    (
        "enum",
        {"mode": {"type": "string", "enum": ["a", "b"]}},
        [],
        {"mode": "c"},
        'value at `/mode` is not one of: ["a", "b"]',
    ),
    ("const", {"c": {"const": "a"}}, [], {"c": "b"}, "value at `/c` is not: a"),
    ("minimum", {"n": {"minimum": 1}}, [], {"n": 0}, "number at `/n` is less than: 1"),
    ("maximum", {"n": {"maximum": 10}}, [], {"n": 11}, "number at `/n` is greater than: 10"),
    (
        "exclusiveMinimum",
        {"n": {"exclusiveMinimum": 1}},
        [],
        {"n": 1},
        "number at `/n` is less than or equal to: 1",
    ),
    (
        "exclusiveMaximum",
        {"n": {"exclusiveMaximum": 5}},
        [],
        {"n": 5},
        "number at `/n` is greater than or equal to: 5",
    ),
    (
        "multipleOf",
        {"n": {"multipleOf": 2}},
        [],
        {"n": 3},
        "number at `/n` is not a multiple of: 2",
    ),
    (
        "minLength",
        {"s": {"minLength": 3}},
        [],
        {"s": "ab"},
        "string length at `/s` is less than: 3",
    ),
    (
        "maxLength",
        {"s": {"maxLength": 1}},
        [],
        {"s": "ab"},
        "string length at `/s` is greater than: 1",
    ),
    (
        "pattern",
        {"s": {"pattern": "^a"}},
        [],
        {"s": "b"},
        "string at `/s` does not match pattern: ^a",
    ),
    ("minItems", {"a": {"minItems": 1}}, [], {"a": []}, "array size at `/a` is less than: 1"),
    (
        "maxItems",
        {"a": {"maxItems": 1}},
        [],
        {"a": [1, 2]},
        "array size at `/a` is greater than: 1",
    ),
    (
        "uniqueItems",
        {"a": {"uniqueItems": True}},
        [],
        {"a": [1, 1]},
        "array items at `/a` are not unique",
    ),
    (
        "items",
        {"a": {"type": "array", "items": {"type": "string"}}},
        [],
        {"a": ["x", 2]},
        "value at `/a/1` is not a string",
    ),
    (
        "nested required",
        {"o": {"type": "object", "required": ["k"]}},
        [],
        {"o": {}},
        "object at `/o` is missing required properties: k",
    ),
    (
        "nested property",
        {"o": {"type": "object", "properties": {"k": {"type": "integer"}}}},
        [],
        {"o": {"k": "x"}},
        "value at `/o/k` is not an integer",
    ),
    (
        "minProperties",
        {"o": {"minProperties": 1}},
        [],
        {"o": {}},
        "object size at `/o` is less than: 1",
    ),
    (
        "anyOf",
        {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        [],
        {"v": 1.5},
        "value at `/v` does not match any `anyOf` schemas",
    ),
    (
        "oneOf",
        {"v": {"oneOf": [{"type": "number"}, {"type": "integer"}]}},
        [],
        {"v": 1},
        "value at `/v` does not match exactly one `oneOf` schema",
    ),
    (
        "not",
        {"v": {"not": {"type": "string"}}},
        [],
        {"v": "x"},
        "value at `/v` matches `not` schema",
    ),
    (
        "additionalProperties false",
        {"o": {"type": "object", "properties": {}, "additionalProperties": False}},
        [],
        {"o": {"x": 1}},
        "object property at `/o/x` is not defined and schema does not allow additional properties",
    ),
    (
        "format",
        {"e": {"format": "email"}},
        [],
        {"e": "nope"},
        "value at `/e` does not match format: email",
    ),
    (
        "pointer escaping",
        {"a/b": {"type": "string"}},
        [],
        {"a/b": 1},
        "value at `/a~1b` is not a string",
    ),
    ("args not an object", {}, [], ["x"], "value at root is not an object"),
    (
        "several joined",
        {"path": {"type": "string"}, "n": {"type": "integer"}},
        ["path", "n"],
        {"n": "x"},
        "value at `/n` is not an integer, object at root is missing required properties: path",
    ),
]


@pytest.mark.parametrize(
    ("label", "params", "required", "args", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_message_wording(
    label: str, params: dict[str, Any], required: list[str], args: Any, message: str
) -> None:
    validator = compile_validator("t", object_schema(params, required))
    assert validator.error(args) == message


@pytest.mark.parametrize(
    "args",
    [{}, {"path": "x"}, {"path": "x", "extra": [1, 2]}, {"n": 3, "path": "p", "unknown": None}],
)
def test_valid_args_and_extras_pass(args: dict[str, Any]) -> None:
    validator = compile_validator(
        "t", object_schema({"path": {"type": "string"}, "n": {"type": "integer"}}, [])
    )
    assert validator.error(args) is None


async def test_toolbox_returns_validation_error_without_running_anything() -> None:
    toolbox = Toolbox()
    ran: list[str] = []
    toolbox.add(
        "wc",
        params={"path": {"type": "string"}},
        required=["path"],
        handler=lambda a: ran.append("h"),
    )
    toolbox.before(None, lambda a, tool_name: ran.append("global"))
    toolbox.before("wc", lambda a: ran.append("before"))
    toolbox.after("wc", lambda a, r: ran.append("after"))
    result = await toolbox.run("wc", {"path": 3})
    assert result.to_dict() == {"error": "value at `/path` is not a string", "ok": False}
    assert ran == []


async def test_none_args_count_as_empty_object() -> None:
    toolbox = Toolbox()
    toolbox.add("t", params={"x": {"type": "string"}}, required=["x"], handler=lambda a: a)
    result = await toolbox.run("t", None)
    assert result.error == "object at root is missing required properties: x"
    toolbox.add("free", handler=lambda a: {"got": a})
    assert (await toolbox.run("free", None)).to_dict() == {"got": {}, "ok": True}


@pytest.mark.parametrize(
    ("params", "required", "fragment"),
    [
        ({"path": {"type": "strin"}}, [], "properties/path"),
        ({"n": {"minimum": "one"}}, [], "minimum"),
        ({"path": "string"}, [], "properties/path"),
        ({"path": {"type": "string"}}, [3], "required"),
    ],
)
def test_invalid_schema_raises_value_error_naming_tool(
    params: dict[str, Any], required: list[Any], fragment: str
) -> None:
    toolbox = Toolbox()
    with pytest.raises(ValueError) as info:
        toolbox.add("broken_tool", params=params, required=required, handler=lambda a: a)
    assert "broken_tool" in str(info.value)
    assert fragment in str(info.value)
    assert "broken_tool" not in toolbox.tools


def test_validator_compiled_once_per_tool() -> None:
    toolbox = Toolbox()
    tool = toolbox.add("t", params={"x": {"type": "string"}}, handler=lambda a: a)
    first = tool._validator
    assert first is not None
    assert toolbox.tools["t"]._validator is first


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, width=32),
    st.text(max_size=5),
    st.lists(st.integers(0, 3), max_size=3),
)
_keys = st.sampled_from(
    [
        "type",
        "description",
        "enum",
        "default",
        "minimum",
        "maxLength",
        "items",
        "additionalProperties",
        "required",
        "pattern",
        "format",
        "title",
    ]
)
_types = st.one_of(
    st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null", "strin"]),
    st.lists(st.sampled_from(["string", "null", "integer", "bogus"]), max_size=3),
)
_props = st.recursive(
    st.dictionaries(_keys, st.one_of(_values, _types), max_size=4),
    lambda inner: st.dictionaries(_keys, st.one_of(_values, _types, inner), max_size=4),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=4), _props, max_size=3),
    st.lists(st.text(max_size=3), max_size=3),
)
def test_the_fast_schema_check_never_accepts_what_the_metaschema_rejects(
    params: dict[str, Any], required: list[str]
) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from tui_agent.core.tools.validation import plainly_valid

    schema = object_schema(params, required)
    if plainly_valid(schema):
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:  # pragma: no cover - this is the failure being looked for
            raise AssertionError(f"fast path accepted an invalid schema: {exc.message}") from exc


# -- the compiled fast check: never "valid" where jsonschema finds a problem ------------------

_plain_types = st.sampled_from(
    ["string", "number", "integer", "boolean", "array", "object", "null"]
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, -2.0, 1.5, float("inf"), float("nan"), 2**53 + 0.0]),
    st.sampled_from(["", "a", "b", "ab", "abc"]),
)


def _plain_node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A property of at most three keywords, usually with a "type", so that arguments pass
    it often enough to test the fast check's "valid"."""
    bound = st.one_of(st.integers(-2, 2), st.sampled_from([0.5, -1.5, 1.0]))
    count = st.integers(0, 3)
    names = st.sampled_from(["a", "b", "c"])
    keywords: dict[str, st.SearchStrategy[Any]] = {
        "description": st.just("d"),
        "default": _scalars,
        "enum": st.lists(_scalars, min_size=1, max_size=3),
        "minimum": bound,
        "maximum": bound,
        "exclusiveMinimum": bound,
        "exclusiveMaximum": bound,
        "minLength": count,
        "maxLength": count,
        "minItems": count,
        "maxItems": count,
        "items": children,
        "properties": st.dictionaries(names, children, max_size=2),
        "required": st.lists(names, unique=True, max_size=2),
        "additionalProperties": st.booleans(),
    }
    kinds = st.one_of(_plain_types, st.lists(_plain_types, min_size=1, max_size=3, unique=True))
    return st.tuples(
        st.one_of(st.none(), kinds, kinds, kinds),
        st.lists(st.sampled_from(sorted(keywords)), unique=True, max_size=2).flatmap(
            lambda chosen: st.fixed_dictionaries({k: keywords[k] for k in chosen})
        ),
    ).map(lambda pair: pair[1] if pair[0] is None else {"type": pair[0], **pair[1]})


_plain_nodes = st.recursive(_plain_node(st.just({})), _plain_node, max_leaves=4)


class _Str(str):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


_instances = st.recursive(
    st.one_of(
        _scalars,
        st.sampled_from([_Str("a"), __import__("decimal").Decimal("1.5"), 2**70, b"a"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2).map(_Dict),
    ),
    max_leaves=6,
)


def _reference_messages(schema: dict[str, Any], args: Any) -> list[str]:
    """What the validator said before it had a fast path: jsonschema, every call."""
    from jsonschema import Draft202012Validator, FormatChecker

    from tui_agent.core.tools.validation import _message

    messages: list[str] = []
    for error in Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(args):
        text = _message(error)
        if text not in messages:
            messages.append(text)
    return messages


_TRICKY: list[Any] = [
    None, True, False, 0, 1, -1, 2**70, 0.0, 1.0, 1.5, -1.5, float("inf"), float("nan"),
    "", "a", "b", "abcd", _Str("a"), b"a", __import__("decimal").Decimal("1"),
    [], [1], ["a"], [1.5], [True], [None, "a"], [[]], {}, {"a": 1}, {"a": "a", "d": 0},
    _Dict(a=1), {"a": [1]},
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), _plain_nodes, min_size=1, max_size=3),
    st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=2),
    st.one_of(_instances, st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _instances)),
)
def test_the_fast_check_agrees_with_jsonschema(
    params: dict[str, Any], required: list[str], random_args: Any
) -> None:
    from jsonschema import Draft202012Validator, FormatChecker

    from tui_agent.core.tools.validation import ArgsValidator, plainly_valid

    schema = object_schema(params, required)
    if not plainly_valid(schema):
        return
    validator = ArgsValidator(schema)
    assert validator._fast is not None
    reference = Draft202012Validator(schema, format_checker=FormatChecker())
    base = dict.fromkeys(required, 0)
    tried = [random_args, base]
    for name in params:
        for value in _TRICKY:
            tried += [{**base, name: value}, {**base, name: {"a": value}}, {**base, name: [value]}]
    for args in tried:
        if validator._fast[0](args):
            assert reference.is_valid(args), f"the fast check accepted {args!r} for {schema!r}"
        assert validator.errors(args) == _reference_messages(schema, args)


def test_the_fast_check_takes_plain_values_without_jsonschema() -> None:
    from tui_agent.core.tools.validation import ArgsValidator

    validator = ArgsValidator(
        object_schema(
            {
                "n": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "opt": {"type": ["string", "null"]},
            },
            ["n"],
        )
    )
    assert validator._fast is not None
    fast = validator._fast[0]
    assert fast({"n": 1, "tags": ["x"], "mode": "a", "opt": None, "extra": object()})
    assert fast({"n": 2.0})  # an integral float is an integer to jsonschema
    for bad in ({"n": -1}, {"n": True}, {"n": 1.5}, {"tags": [1]}, {"n": 1, "mode": "c"}, {}):
        assert not fast(bad)
        assert validator.error(bad) is not None


def test_jsonschema_is_asked_only_when_the_fast_check_cannot_answer() -> None:
    """A plain schema makes no jsonschema validator when the tool is registered, nor while
    its arguments pass the fast check (jsonschema stays out of memory after the load,
    test_idle_modules.py); the first arguments it cannot vouch for make it, once."""
    from tui_agent.core.tools.validation import ArgsValidator

    validator = ArgsValidator(object_schema({"n": {"type": "integer"}}, ["n"]))
    assert validator._validator is None
    assert validator.error({"n": 1}) is None and validator.errors({"n": 2}) == []
    assert validator._validator is None
    assert validator.error({"n": "x"}) == "value at `/n` is not an integer"
    made = validator._validator
    assert made is not None
    assert validator.errors({}) == ["object at root is missing required properties: n"]
    assert validator._validator is made
    # a schema that is not plain is checked against the metaschema and compiled at once
    pattern = ArgsValidator(object_schema({"s": {"type": "string", "pattern": "^a"}}, []))
    assert pattern._validator is not None


def test_a_schema_changed_in_place_is_followed_on_the_next_call() -> None:
    toolbox = Toolbox()
    tool = toolbox.add("t", params={"x": {"type": "integer"}}, required=["x"], handler=lambda a: a)
    assert tool._validator is not None
    assert tool._validator.error({"x": 1}) is None
    tool.params["x"]["type"] = "string"  # params is the schema's "properties"
    assert tool._validator.error({"x": 1}) == "value at `/x` is not a string"
    assert tool._validator.error({"x": "a"}) is None
    tool.schema["required"].append("y")
    assert tool._validator.error({"x": "a"}) == "object at root is missing required properties: y"
    tool.params["x"]["pattern"] = "^b"  # no longer a plain schema: jsonschema alone
    assert tool._validator.error({"x": "a", "y": 0}) == "string at `/x` does not match pattern: ^b"
    assert tool._validator.error({"x": "b", "y": 0}) is None


async def test_a_tool_registered_again_is_checked_against_its_new_schema() -> None:
    toolbox = Toolbox()
    toolbox.add("t", params={"x": {"type": "integer"}}, required=["x"], handler=lambda a: a)
    assert (await toolbox.run("t", {"x": 1})).ok
    first = toolbox.tools["t"]._validator
    toolbox.add("t", params={"x": {"type": "string"}}, required=["x"], handler=lambda a: a)
    assert toolbox.tools["t"]._validator is not first
    assert (await toolbox.run("t", {"x": 1})).error == "value at `/x` is not a string"
    assert (await toolbox.run("t", {"x": "a"})).ok


@pytest.mark.parametrize("default", [threading.Lock(), object()], ids=["uncopyable", "unequal"])
def test_a_default_that_cannot_be_copied_or_compared_only_costs_the_fast_path(
    default: Any,
) -> None:
    from tui_agent.core.tools.validation import ArgsValidator

    validator = ArgsValidator(object_schema({"x": {"type": "integer", "default": default}}, []))
    assert validator._fast is None
    assert validator.error({"x": 1}) is None
    assert validator.error({"x": "a"}) == "value at `/x` is not an integer"
