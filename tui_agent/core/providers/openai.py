"""The ``openai`` provider: Chat Completions over any OpenAI-compatible server.

``openai`` is imported on the first request, never at start-up (it costs ~0.7 s).
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .base import ProviderError, StreamEvent, Text, Thinking, ToolCall, Usage

DEFAULT_MODEL = "gpt-4o-mini"
KEY_HELP = "set OPENAI_API_KEY, or api_key in ~/.config/tui-agent/config.toml"


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") or (body.get("error") or {}).get("message")
        if message:
            return str(message)
    return str(getattr(exc, "message", "") or exc)


_NOT_OBJECTS = (str, bytes, int, float, list, dict)


def _text(value: Any, what: str) -> str:
    """A streamed text field: missing is empty; any other type is a malformed chunk."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{what} should be a string, not {type(value).__name__}")
    return value


def _count(value: Any) -> int:
    """A token count; usage is informative, so a malformed one counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class OpenAIProvider:
    name = "openai"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.model = str(settings.get("model") or DEFAULT_MODEL)
        self.base_url = settings.get("base_url") or None
        self._api_key = settings.get("api_key") or None
        self.timeout = float(settings.get("timeout") or 600)
        self._client: Any = None
        self._include_usage = True

    @property
    def where(self) -> str:
        return str(self.base_url or "https://api.openai.com/v1")

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            key = self._api_key or ("not-needed" if self.base_url else None)
            if key is None:
                raise ProviderError(f"authentication failed: no API key; {KEY_HELP}")
            self._client = openai.AsyncOpenAI(
                api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout
            )
        return self._client

    def translate(
        self, exc: BaseException, *, partial: bool = False, streaming: bool = False
    ) -> ProviderError:
        """``streaming``: the server answered and the reply was under way (a connection
        error then means the stream broke, not that the server could not be reached)."""
        import openai

        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return ProviderError(
                f"authentication failed (HTTP {exc.status_code}) at {self.where}: {KEY_HELP}"
            )
        if isinstance(exc, openai.NotFoundError):
            return ProviderError(
                f"model {self.model!r} was not found at {self.where} (HTTP 404): choose another "
                "with --model, TUI_AGENT_MODEL or /model (it lists the server's models)"
            )
        if isinstance(exc, openai.RateLimitError):
            return ProviderError(
                f"rate limited by {self.where} (HTTP 429): {_detail(exc)}",
                retryable=not partial,
                retry_after=_retry_after(exc),
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retryable = status >= 500 and not partial
            return ProviderError(
                f"the server at {self.where} answered HTTP {status}: {_detail(exc)}",
                retryable=retryable,
                retry_after=_retry_after(exc),
            )
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(f"timed out waiting for {self.where}", retryable=not partial)
        if streaming and isinstance(exc, openai.APIConnectionError | ValueError):
            what = "was cut off" if partial else "broke before the reply began"
            if isinstance(exc, ValueError):  # a chunk that is not JSON
                reason = f"the server sent a malformed chunk ({type(exc).__name__}: {exc})"
            else:
                reason = str(exc.__cause__ or exc)
            return ProviderError(
                f"the stream from {self.where} {what}: {reason}",
                retryable=not partial,
                partial=partial,
            )
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(
                f"could not reach {self.where}: {exc.__cause__ or exc}", retryable=not partial
            )
        if partial:
            return ProviderError(
                f"the stream from {self.where} was cut off: {type(exc).__name__}: {exc}",
                partial=True,
            )
        return ProviderError(
            f"the stream from {self.where} failed: {type(exc).__name__}: {exc}", retryable=True
        )

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        import openai

        client = self._get_client()
        try:
            return await client.chat.completions.create(**kwargs)
        except openai.BadRequestError as exc:
            if "stream_options" in kwargs and "stream_options" in str(exc):
                self._include_usage = False
                kwargs.pop("stream_options")
                return await self._create(kwargs)
            raise ProviderError(
                f"the server rejected the request (HTTP 400): {_detail(exc)}"
            ) from None
        except Exception as exc:
            raise self.translate(exc) from None

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamEvent]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        if tools:
            kwargs["tools"] = tools
        if self._include_usage:
            kwargs["stream_options"] = {"include_usage": True}
        response = await self._create(kwargs)
        calls: dict[int, dict[str, str]] = {}
        last = 0
        started = False
        try:
            async for chunk in response:
                if isinstance(chunk, _NOT_OBJECTS) or chunk is None:
                    raise ValueError(f"a chunk is {type(chunk).__name__}, not an object")
                usage = getattr(chunk, "usage", None)
                if usage is not None:
                    yield Usage(
                        _count(getattr(usage, "prompt_tokens", None)),
                        _count(getattr(usage, "completion_tokens", None)),
                        _count(getattr(usage, "total_tokens", None)),
                    )
                choices = getattr(chunk, "choices", None) or []
                if not isinstance(choices, list):
                    raise ValueError(f"choices is {type(choices).__name__}, not a list")
                for choice in choices:
                    delta = getattr(choice, "delta", None)
                    if delta is None:
                        continue
                    reasoning = getattr(delta, "reasoning_content", None) or getattr(
                        delta, "reasoning", None
                    )
                    if reasoning:
                        started = True
                        yield Thinking(str(reasoning))
                    content = _text(getattr(delta, "content", None), "content")
                    if content:
                        started = True
                        yield Text(content)
                    for part in getattr(delta, "tool_calls", None) or []:
                        started = True
                        if isinstance(part, _NOT_OBJECTS) or part is None:
                            raise ValueError(f"a tool call is {type(part).__name__}")
                        call_id = _text(getattr(part, "id", None), "a tool call id")
                        index = getattr(part, "index", None)
                        if not isinstance(index, int) or isinstance(index, bool):
                            # no index (some servers): a new id starts a call, else the last
                            # call goes on
                            known = {slot["id"] for slot in calls.values()}
                            fresh = not calls or (call_id and call_id not in known)
                            index = max(calls) + 1 if fresh and calls else last
                        last = index
                        slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                        if call_id:
                            slot["id"] = call_id
                        function = getattr(part, "function", None)
                        slot["name"] += _text(getattr(function, "name", None), "a tool name")
                        slot["arguments"] += _text(
                            getattr(function, "arguments", None), "tool arguments"
                        )
        except ProviderError:
            raise
        except Exception as exc:
            raise self.translate(exc, partial=started or bool(calls), streaming=True) from None
        finally:
            await response.close()
        seen: set[str] = set()
        for index in sorted(calls):
            slot = calls[index]
            call_id = slot["id"] or f"call_{index}"
            while call_id in seen:  # the API wants each call answered by its own id
                call_id += f"_{index}"
            seen.add(call_id)
            yield ToolCall(call_id, slot["name"], slot["arguments"])

    async def models(self) -> list[str]:
        try:
            page = await self._get_client().models.list()
        except Exception:
            return []
        return sorted(model.id for model in page.data)


def factory(settings: Mapping[str, Any]) -> OpenAIProvider:
    return OpenAIProvider(settings)
