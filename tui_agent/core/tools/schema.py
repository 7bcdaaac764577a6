"""``tui_agent.schema``: a small builder for argument schemas (the role Zod plays in opencode).

Every builder is immutable: ``.describe()``, ``.optional()`` and ``.default()`` return a
new one. ``to_json()`` gives the JSON-schema property dict sent to the model.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Mapping, Sequence
from typing import Any

_MISSING: Any = object()


class Schema:
    """One argument's schema. Required unless ``.optional()`` or ``.default(v)`` was called."""

    __slots__ = ("_json", "_optional")

    def __init__(self, json_schema: Mapping[str, Any], optional: bool = False) -> None:
        self._json = dict(json_schema)
        self._optional = optional

    def _with(self, keys: Mapping[str, Any], optional: bool | None = None) -> Schema:
        data = copy.deepcopy(self._json)
        data.update(keys)
        return Schema(data, self._optional if optional is None else optional)

    def describe(self, text: str) -> Schema:
        return self._with({"description": text})

    def optional(self) -> Schema:
        return self._with({}, optional=True)

    def default(self, value: Any) -> Schema:
        return self._with({"default": value}, optional=True)

    def nullable(self) -> Schema:
        """Also accept ``null`` (added to ``type`` and to ``enum`` when present)."""
        return Schema(make_nullable(self._json), self._optional)

    def min(self, value: float) -> Schema:
        return self._with({_bound(self._json, "min"): value})

    def max(self, value: float) -> Schema:
        return self._with({_bound(self._json, "max"): value})

    @property
    def is_optional(self) -> bool:
        return self._optional

    def to_json(self) -> dict[str, Any]:
        return copy.deepcopy(self._json)

    def __repr__(self) -> str:
        flag = ", optional" if self._optional else ""
        return f"Schema({self._json!r}{flag})"

    def __eq__(self, other: builtins.object) -> bool:
        return (
            isinstance(other, Schema)
            and self._json == other._json
            and self._optional == other._optional
        )

    __hash__ = None  # type: ignore[assignment]


def make_nullable(data: Mapping[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(dict(data))
    kind = result.get("type")
    if isinstance(kind, str) and kind != "null":
        result["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        result["type"] = [*kind, "null"]
    if isinstance(result.get("enum"), list) and None not in result["enum"]:
        result["enum"] = [*result["enum"], None]
    return result


def _bound(data: Mapping[str, Any], side: str) -> str:
    kind = data.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" in kinds:
        return f"{side}Length"
    if "array" in kinds:
        return f"{side}Items"
    return "minimum" if side == "min" else "maximum"


def property_json(value: Schema | Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """``(property dict, required?)`` for a builder or a plain JSON-schema dict.

    A plain dict is required unless it carries a ``default``.
    """
    if isinstance(value, Schema):
        return value.to_json(), not value.is_optional
    if isinstance(value, Mapping):
        data = dict(value)
        return data, "default" not in data
    raise TypeError(f"expected a schema builder or a JSON-schema dict, not {type(value).__name__}")


def string() -> Schema:
    return Schema({"type": "string"})


def number() -> Schema:
    return Schema({"type": "number"})


def integer() -> Schema:
    return Schema({"type": "integer"})


def boolean() -> Schema:
    return Schema({"type": "boolean"})


def array(item: Schema | Mapping[str, Any] | None = None) -> Schema:
    if item is None:
        return Schema({"type": "array"})
    return Schema({"type": "array", "items": property_json(item)[0]})


def object(fields: Mapping[str, Schema | Mapping[str, Any]] | None = None) -> Schema:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, value in (fields or {}).items():
        properties[key], needed = property_json(value)
        if needed:
            required.append(key)
    data: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        data["required"] = required
    return Schema(data)


def enum(values: Sequence[Any]) -> Schema:
    items = list(values)
    if items and all(isinstance(v, str) for v in items):
        return Schema({"type": "string", "enum": items})
    return Schema({"enum": items})


def any_() -> Schema:
    return Schema({})


__all__ = [
    "Schema",
    "any_",
    "array",
    "boolean",
    "enum",
    "integer",
    "number",
    "object",
    "property_json",
    "string",
]
