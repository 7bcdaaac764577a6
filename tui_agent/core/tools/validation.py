"""Argument validation with json_schemer's wording.

The model reads these messages, so they follow elelem (which uses Ruby's json_schemer):
``value at `/path` is not a string``, ``object at root is missing required properties: a, b``.
A validator is compiled once per tool; ``validate`` only walks the arguments.
"""

from __future__ import annotations

import copy
import json
import operator
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema is imported when a tool's arguments or schema need it
    from jsonschema import Draft202012Validator, FormatChecker
    from jsonschema.exceptions import ValidationError


@cache
def _format_checker() -> FormatChecker:
    from jsonschema import FormatChecker

    return FormatChecker()


_TYPE_WORDS = {
    "null": "null",
    "boolean": "a boolean",
    "number": "a number",
    "integer": "an integer",
    "string": "a string",
    "array": "an array",
    "object": "an object",
}


def object_schema(params: dict[str, Any], required: Iterable[str]) -> dict[str, Any]:
    return {"type": "object", "properties": params, "required": list(required)}


def _pointer(path: Iterable[Any]) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "root" if not parts else "`/" + "/".join(parts) + "`"


def _inspect(value: Any) -> str:
    """Ruby's ``Array#inspect``-like rendering used inside messages (``["a", "b"]``)."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _to_s(value: Any) -> str:
    """Ruby's interpolation of a scalar: strings bare, containers inspected."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return repr(value)
    return _inspect(value)


def _message(error: ValidationError) -> str:
    at = _pointer(error.absolute_path)
    kind: Any = error.validator
    value: Any = error.validator_value
    simple: dict[str, Callable[[], str]] = {
        "enum": lambda: f"value at {at} is not one of: {_inspect(value)}",
        "const": lambda: f"value at {at} is not: {_to_s(value)}",
        "multipleOf": lambda: f"number at {at} is not a multiple of: {_to_s(value)}",
        "maximum": lambda: f"number at {at} is greater than: {_to_s(value)}",
        "exclusiveMaximum": lambda: f"number at {at} is greater than or equal to: {_to_s(value)}",
        "minimum": lambda: f"number at {at} is less than: {_to_s(value)}",
        "exclusiveMinimum": lambda: f"number at {at} is less than or equal to: {_to_s(value)}",
        "maxLength": lambda: f"string length at {at} is greater than: {_to_s(value)}",
        "minLength": lambda: f"string length at {at} is less than: {_to_s(value)}",
        "pattern": lambda: f"string at {at} does not match pattern: {_to_s(value)}",
        "format": lambda: f"value at {at} does not match format: {_to_s(value)}",
        "maxItems": lambda: f"array size at {at} is greater than: {_to_s(value)}",
        "minItems": lambda: f"array size at {at} is less than: {_to_s(value)}",
        "uniqueItems": lambda: f"array items at {at} are not unique",
        "maxProperties": lambda: f"object size at {at} is greater than: {_to_s(value)}",
        "minProperties": lambda: f"object size at {at} is less than: {_to_s(value)}",
        "allOf": lambda: f"value at {at} does not match all `allOf` schemas",
        "anyOf": lambda: f"value at {at} does not match any `anyOf` schemas",
        "oneOf": lambda: f"value at {at} does not match exactly one `oneOf` schema",
        "not": lambda: f"value at {at} matches `not` schema",
        "contains": lambda: (
            f"array at {at} does not contain enough items that match `contains` schema"
        ),
        "dependentRequired": lambda: (
            f"object at {at} is missing required `dependentRequired` properties"
        ),
        "propertyNames": lambda: (
            f"object property names at {at} do not match `propertyNames` schema"
        ),
        "unevaluatedProperties": lambda: (
            f"object properties at {at} do not match `unevaluatedProperties` schema"
        ),
        "unevaluatedItems": lambda: f"array items at {at} do not match `unevaluatedItems` schema",
    }
    if kind == "type":
        if isinstance(value, str) and value in _TYPE_WORDS:
            return f"value at {at} is not {_TYPE_WORDS[value]}"
        return f"value at {at} is not one of the types: {_inspect(value)}"
    if kind == "required":
        instance = error.instance if isinstance(error.instance, dict) else {}
        missing = [key for key in value if key not in instance]
        return f"object at {at} is missing required properties: {', '.join(missing)}"
    if kind == "additionalProperties" and value is False:
        return (
            f"object property at {_pointer([*error.absolute_path, _extra_key(error)])} "
            "is not defined and schema does not allow additional properties"
        )
    if kind in simple:
        return simple[kind]()
    if not isinstance(kind, str):
        return f"value at {at} does not match schema"
    return f"value at {at} does not match `{kind}` schema"


def _extra_key(error: ValidationError) -> str:
    instance = error.instance if isinstance(error.instance, dict) else {}
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = set(schema.get("properties", {}))
    extras = [key for key in instance if key not in known]
    return str(extras[0]) if extras else ""


_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_TEXT_KEYS = frozenset({"description", "title", "$comment"})
_NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT_KEYS = frozenset({"minLength", "maxLength", "minItems", "maxItems"})


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _plain_property(prop: Any, depth: int = 0) -> bool:
    """True only for the common, obviously valid property shapes; anything else (including
    every invalid schema) goes through the full metaschema check."""
    if not isinstance(prop, dict) or depth > 8:
        return False
    for key, value in prop.items():
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            if not kinds or len(set(map(str, kinds))) != len(kinds):
                return False
            if not all(isinstance(k, str) and k in _TYPES for k in kinds):
                return False
        elif key in _TEXT_KEYS:
            if not isinstance(value, str):
                return False
        elif key == "default":
            continue
        elif key == "enum":
            if not isinstance(value, list) or not value:
                return False
        elif key in _NUMBER_KEYS:
            if not _is_number(value):
                return False
        elif key in _COUNT_KEYS:
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                return False
        elif key == "items":
            if not _plain_property(value, depth + 1):
                return False
        elif key == "properties":
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and _plain_property(v, depth + 1) for k, v in value.items()
            ):
                return False
        elif key == "required":
            if not _plain_required(value):
                return False
        elif key == "additionalProperties":
            if not isinstance(value, bool):
                return False
        else:
            return False
    return True


def _plain_required(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


def plainly_valid(schema: dict[str, Any]) -> bool:
    """A fast path for ``{"type": "object", "properties": …, "required": […]}`` built from
    simple properties; ``False`` means "check it fully", never "invalid"."""
    return set(schema) == {"type", "properties", "required"} and _plain_property(schema)


# -- the fast path ----------------------------------------------------------------------------
# jsonschema walks even a one-property schema through ~40 Python calls (~15 µs a call on the
# 2-core test machine, half the cost of a call to a trivial async tool). For the plain schemas
# above, a check compiled from the schema answers "surely valid" in about 1 µs. It only ever
# says "valid" when jsonschema would find no error; ``False`` means "ask jsonschema" (which then
# writes the messages), never "invalid". Values of any type other than these exact ones
# (subclasses, Decimal, …) are left to jsonschema.

Check = Callable[[Any], bool]
_KNOWN_TYPES = frozenset({type(None), bool, int, float, str, list, dict})
_NO_TYPES: frozenset[type] = frozenset()

# jsonschema's Draft 2020-12 type checker, for values of the exact types above.
_TYPE_CHECKS: dict[str, Check] = {
    "object": lambda x: type(x) is dict,
    "string": lambda x: type(x) is str,
    "integer": lambda x: type(x) is int or (type(x) is float and x.is_integer()),
    "number": lambda x: type(x) is int or type(x) is float,
    "boolean": lambda x: type(x) is bool,
    "array": lambda x: type(x) is list,
    "null": lambda x: x is None,
}
# The exact types whose every value has that JSON type (1.0 is an integer too, but not every
# float is), so a property that is only a "type" needs no call for them.
_SURE_TYPES: dict[str, frozenset[type]] = {
    "object": frozenset({dict}),
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "array": frozenset({list}),
    "null": frozenset({type(None)}),
}
_NUMBER_FAILS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": operator.lt,
    "maximum": operator.gt,
    "exclusiveMinimum": operator.le,
    "exclusiveMaximum": operator.ge,
}
_ABSENT = object()


def _keyword_check(key: str, value: Any) -> Check | None:
    """The check for one keyword of a plain property other than the object keywords
    (``properties``, ``required``, ``additionalProperties``); None when it constrains
    nothing."""
    if key == "type":
        if not isinstance(value, list):
            return _TYPE_CHECKS[value]
        kinds = tuple(_TYPE_CHECKS[kind] for kind in value)
        return lambda x: any(kind(x) for kind in kinds)
    if key == "enum":  # jsonschema's equality differs from Python's for bools and numbers
        strings = frozenset(v for v in value if type(v) is str)
        return lambda x: type(x) is str and x in strings
    if key in _NUMBER_FAILS:
        fails, bound = _NUMBER_FAILS[key], value
        return lambda x: (type(x) is not int and type(x) is not float) or not fails(x, bound)
    if key in _COUNT_KEYS:
        sized: Any = str if key.endswith("Length") else list
        limit = value
        if key.startswith("min"):
            return lambda x: type(x) is not sized or not len(x) < limit
        return lambda x: type(x) is not sized or not len(x) > limit
    if key == "items":
        item, sure = _compile_plain(value)
        return lambda x: type(x) is not list or all(type(v) in sure or item(v) for v in x)
    return None  # description, title, $comment, default: no constraint


_OBJECT_KEYS = frozenset({"properties", "required", "additionalProperties"})


def _object_check(node: dict[str, Any], first: Check, others: tuple[Check, ...]) -> Check:
    """properties, required and additionalProperties: false in one pass over a dict."""
    props: dict[str, Any] = node.get("properties", {})
    subs = tuple((name, *_compile_plain(sub)) for name, sub in props.items())
    names = tuple(node.get("required", ()))
    closed = None if node.get("additionalProperties", True) else frozenset(props)
    exact_dict = first is _TYPE_CHECKS["object"]

    def valid(x: Any) -> bool:
        if not exact_dict and not first(x):
            return False
        if type(x) is dict:
            for name, sub, sure in subs:
                value = x.get(name, _ABSENT)
                if value is not _ABSENT and type(value) not in sure and not sub(value):
                    return False
            for name in names:
                if name not in x:
                    return False
            if closed is not None:
                for key in x:
                    if key not in closed:
                        return False
        elif exact_dict:
            return False
        for check in others:
            if not check(x):
                return False
        return True

    return valid


def _compile_plain(node: dict[str, Any]) -> tuple[Check, frozenset[type]]:
    """A plain node's check, and the exact types for which it needs no call (the node is only
    a "type")."""
    kinds = node.get("type")
    # A value that passes a type check is of a known exact type, so the guard against
    # other types is only needed for nodes without "type".
    first = _keyword_check("type", kinds) if kinds is not None else None
    others = tuple(
        check
        for key, value in node.items()
        if key != "type"
        and key not in _OBJECT_KEYS
        and (check := _keyword_check(key, value)) is not None
    )
    if first is None:
        first = lambda x: type(x) in _KNOWN_TYPES  # noqa: E731
    if not _OBJECT_KEYS.isdisjoint(node):
        return _object_check(node, first, others), _NO_TYPES
    if kinds is not None and not others:
        listed = kinds if isinstance(kinds, list) else [kinds]
        return first, frozenset().union(*(_SURE_TYPES[kind] for kind in listed))

    def valid(x: Any) -> bool:
        if not first(x):
            return False
        for check in others:
            if not check(x):
                return False
        return True

    return valid, _NO_TYPES


def _fast_path(schema: dict[str, Any]) -> tuple[Check, dict[str, Any]] | None:
    """The fast check for a plain schema and the copy it was built from, or None."""
    if not plainly_valid(schema):
        return None
    try:  # a `default` may hold anything; if it cannot be copied and compared, no fast path
        copied = copy.deepcopy(schema)
        if copied != schema:
            return None
    except Exception:
        return None
    return _compile_plain(copied)[0], copied


class ArgsValidator:
    """A compiled validator for one tool's ``{"type": "object", ...}`` schema.

    Like jsonschema's own validator it follows the schema dict it was given: if that dict is
    changed in place, the fast check is rebuilt on the next call (comparing it with the copy
    the check was built from costs far less than one jsonschema walk).
    """

    __slots__ = ("_fast", "_validator", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator: Draft202012Validator | None = None
        if not plainly_valid(schema):  # the metaschema check costs ~1.4 ms a schema
            from jsonschema import Draft202012Validator

            Draft202012Validator.check_schema(schema)
            self._full()  # compiled now: its schema's errors come at registration
        self._fast = _fast_path(schema)

    def _full(self) -> Draft202012Validator:
        """jsonschema's validator: made when first asked (a plain schema whose arguments
        pass the fast check never needs it, nor jsonschema in memory)."""
        validator = self._validator
        if validator is None:
            from jsonschema import Draft202012Validator

            validator = Draft202012Validator(self.schema, format_checker=_format_checker())
            self._validator = validator
        return validator

    def _fast_check(self) -> Check | None:
        fast = self._fast
        if fast is None:
            return None
        try:
            same = self.schema == fast[1]
        except Exception:
            same = False
        if not same:  # changed in place since the check was built
            fast = self._fast = _fast_path(self.schema)
            if fast is None:
                return None
        return fast[0]

    def errors(self, args: Any) -> list[str]:
        """Every problem with ``args``, in schema order, one message each."""
        fast = self._fast_check()
        if fast is not None and fast(args):
            return []
        return self._schema_errors(args)

    def _schema_errors(self, args: Any) -> list[str]:
        messages: list[str] = []
        seen: set[str] = set()
        try:
            for error in self._full().iter_errors(args):
                text = _message(error)
                if text not in seen:
                    seen.add(text)
                    messages.append(text)
        except Exception as exc:  # e.g. a `$ref` to nowhere: the schema cannot vouch for args
            detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return [f"the tool's schema cannot check these arguments: {detail}"]
        return messages

    def error(self, args: Any) -> str | None:
        """All messages joined by ", " (as the model sees them), or None when valid."""
        fast = self._fast_check()
        if fast is not None and fast(args):
            return None
        messages = self._schema_errors(args)
        return ", ".join(messages) if messages else None


def compile_validator(name: str, schema: dict[str, Any]) -> ArgsValidator:
    """Compile, or raise ``ValueError`` naming the tool and what is wrong with its schema."""
    try:
        return ArgsValidator(schema)
    except Exception as exc:
        from jsonschema.exceptions import SchemaError

        if not isinstance(exc, SchemaError):
            raise
        where = "/".join(str(p) for p in exc.absolute_path) or "params"
        raise ValueError(f"tool {name!r}: invalid JSON schema at {where}: {exc.message}") from None
