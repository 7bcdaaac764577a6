"""`Result`: what `Toolbox.run` returns, a read-only mapping of the handler's dict plus `ok`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any


def is_failure(data: Mapping[str, Any]) -> bool:
    """A dict that carries a non-null ``error`` is a failure."""
    return data.get("error") is not None


MAX_DEPTH = 100


def _plain(value: Any, depth: int = 0) -> Any:
    """Turn anything a handler returned into JSON-compatible data (str() as the last resort).
    Containers nested deeper than ``MAX_DEPTH`` (or holding themselves) are cut, so the
    result can always be sent back to the model."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else str(value)
        )
    if isinstance(value, Mapping | list | tuple | set | frozenset) and depth >= MAX_DEPTH:
        return f"[cut: nested deeper than {MAX_DEPTH} levels]"
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


class Result(Mapping[str, Any]):
    """The outcome of one tool call.

    ``Result`` never raises for tool-level failures: ``result.ok`` is False and
    ``result.error`` says why.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None, /, **extra: Any) -> None:
        merged: dict[str, Any] = dict(data) if data else {}
        if extra:
            merged.update(extra)
        merged.pop("ok", None)
        merged["ok"] = not is_failure(merged)
        self._data = merged

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Result({self._data!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Result):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @property
    def ok(self) -> bool:
        return bool(self._data["ok"])

    @property
    def error(self) -> str | None:
        error = self._data.get("error")
        return None if error is None else str(error)

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-serializable copy."""
        plain: dict[str, Any] = _plain(self._data)
        return plain

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)
