"""The ``openai`` provider: Chat Completions over any OpenAI-compatible server.

``openai`` is imported on the first request, never at start-up (it costs ~0.7 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from ..protocol.messages import openai_dict
from . import image_parts, window_memory
from .base import ProviderError, StreamEvent
from .chunks import ReplyReader, ShapeError, StreamErrorChunk
from .window import (
    error_overflow,
    overflow,
    server_kind,
    window_from_model,
    window_from_ollama,
    window_from_ollama_ps,
    window_from_props,
)

log = logging.getLogger("tui_agent.providers")

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_IDLE = 120.0  # stream_idle_timeout: seconds without a byte before a stream is broken
PROBE_TIMEOUT = 2.0  # seconds for each of a server's own endpoints asked for the window
MODELS_TIMEOUT = 10.0  # seconds for /v1/models when asked for the window (OpenRouter's is long)
KEY_HELP = "set OPENAI_API_KEY, or api_key in ~/.config/tui-agent/config.toml"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _unencodable(exc: BaseException) -> bool:
    """``exc`` is (or was caused by) text that UTF-8 cannot carry."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, UnicodeEncodeError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _lone(value) else value
    if isinstance(value, dict):
        return {_scrub(key): _scrub(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(item) for item in value]
    return value


def _lone(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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


class OpenAIProvider:
    name = "openai"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.model = str(settings.get("model") or DEFAULT_MODEL)
        self.base_url = settings.get("base_url") or None
        self._api_key = settings.get("api_key") or None
        self.timeout = float(settings.get("timeout") or 600)
        self.idle_timeout = float(settings.get("stream_idle_timeout") or DEFAULT_IDLE)
        self._client: Any = None
        self._include_usage = True
        self.probe_timeout = PROBE_TIMEOUT
        self._window: int | None = None
        self.window_settled = False  # context_window(): False until an answer is kept
        self._window_lock = asyncio.Lock()
        self._ollama_entry: dict[str, Any] | None = None  # an Ollama model not loaded yet
        self.images = image_parts.takes_images(settings, self.model)  # [models."X"] images
        self.images_refused: str | None = None  # why the server refused them this session

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

    def translate(self, exc: BaseException) -> ProviderError:
        """An error raised before the reply began, said so the user can act on it."""
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
                retryable=True,
                retry_after=_retry_after(exc),
            )
        if isinstance(exc, openai.APIStatusError):
            too_long = self._overflow(exc)
            if too_long is not None:
                return too_long
            status = exc.status_code
            return ProviderError(
                f"the server at {self.where} answered HTTP {status}: {_detail(exc)}",
                retryable=status >= 500,
                retry_after=_retry_after(exc),
            )
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(f"timed out waiting for {self.where}", retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(
                f"could not reach {self.where}: {exc.__cause__ or exc}", retryable=True
            )
        return ProviderError(
            f"the request to {self.where} failed: {type(exc).__name__}: {exc}", retryable=True
        )

    async def _open(self, stack: contextlib.AsyncExitStack, kwargs: dict[str, Any]) -> Any:
        """The streaming response, its status checked; its body not read yet."""
        import openai

        client = self._get_client()
        try:
            sent = {key: value for key, value in kwargs.items() if not key.startswith("_")}
            manager = client.chat.completions.with_streaming_response.create(**sent)
            return await stack.enter_async_context(manager)
        except openai.BadRequestError as exc:
            if "stream_options" in kwargs and "stream_options" in str(exc):
                self._include_usage = False
                kwargs.pop("stream_options")
                return await self._open(stack, kwargs)
            too_long = self._overflow(exc)
            if too_long is not None:
                raise too_long from None
            if kwargs.get("_images") and self.images is None:
                raise self._refused_images(exc) from None
            raise ProviderError(
                f"the server rejected the request (HTTP 400): {_detail(exc)}"
            ) from None
        except Exception as exc:
            if _unencodable(exc) and not kwargs.get("_scrubbed"):
                # a lone surrogate (a file name that is not UTF-8, read with
                # surrogateescape) cannot be sent as UTF-8: nothing left this process, so
                # it is no network failure to retry; the request goes again with U+FFFD
                # in its place (checked only after a failure: the usual request costs
                # nothing more)
                kwargs["extra_body"] = _scrub(kwargs["extra_body"])
                kwargs["_scrubbed"] = True
                return await self._open(stack, kwargs)
            raise self.translate(exc) from None

    async def _data(self, response: Any) -> AsyncGenerator[str, None]:
        """The ``data`` of each server-sent event. A read that fails or waits longer than
        ``stream_idle_timeout`` (any line counts, keep-alive comments included) raises.

        The wait is watched by one timer for the whole stream, not an ``asyncio.timeout``
        around each read: that made and cancelled a timer per line, two per token, about
        3 % of the CPU a long reply costs in the app (bench/README.md)."""
        lines = response.iter_lines().__aiter__()
        data: list[str] = []
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        idle = self.idle_timeout
        reading = False  # waiting for a line (the watch ignores time spent in the consumer)
        since = loop.time()  # when that wait began
        expired = False
        timer: asyncio.TimerHandle

        def watch() -> None:
            nonlocal expired, timer
            now = loop.time()
            if reading and now - since >= idle and task is not None:
                expired = True
                task.cancel()
            else:
                timer = loop.call_at((since if reading else now) + idle, watch)

        timer = loop.call_at(since + idle, watch)
        try:
            while True:
                try:
                    since, reading = loop.time(), True
                    line = await lines.__anext__()
                    reading = False
                except StopAsyncIteration:
                    break
                except asyncio.CancelledError:
                    if not expired or task is None or task.uncancel() > 0:
                        raise  # cancelled from outside (Esc), not by the watch
                    raise _Broken(
                        f"timed out: no data from {self.where} for {idle:g} s (stream_idle_timeout)"
                    ) from None
                except Exception as exc:
                    if type(exc).__name__.endswith("Timeout"):  # httpx's read timeout
                        raise _Broken(
                            f"timed out: no data from {self.where} for {self.timeout:g} s (timeout)"
                        ) from None
                    raise _Broken(
                        f"the stream from {self.where} broke: {type(exc).__name__}: "
                        f"{exc.__cause__ or exc}"
                    ) from None
                if line:
                    field, _, value = line.partition(":")
                    if field == "data":
                        data.append(value[1:] if value.startswith(" ") else value)
                    elif field == "event" and value.strip() == "error":
                        data.append("")  # Groq: `event: error` before the error object
                elif data:
                    yield "\n".join(data).strip()
                    data = []
        finally:
            timer.cancel()
        if data:
            yield "\n".join(data).strip()

    async def stream(
        self, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamEvent]:
        """A reply counts as finished only when the server says so: a ``finish_reason`` or
        ``[DONE]`` (which servers write only after the last chunk; a cut connection cannot
        produce it). Anything else raises: its tool calls are never handed on."""
        wire = [openai_dict(message) for message in messages]  # the typed messages' dicts
        wire = image_parts.prepare_wire(wire, self._why_no_images())
        # messages and tools go in ``extra_body``, sent as they are: given as parameters,
        # the client walks every message and every field against its TypedDicts first, a
        # cost that grows with the conversation (~20 ms a request at 250 messages), and
        # these plain dicts need no transform
        body: dict[str, Any] = {"messages": wire}
        if tools:
            body["tools"] = tools
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [],
            "stream": True,
            "extra_body": body,
        }
        if self._include_usage:
            kwargs["stream_options"] = {"include_usage": True}
        if self.images is None and self.images_refused is None:
            kwargs["_images"] = image_parts.has_images(wire)
        reader = ReplyReader()
        async with contextlib.AsyncExitStack() as stack:
            response = await self._open(stack, kwargs)
            done = False
            try:
                async with contextlib.aclosing(self._data(response)) as events:
                    async for data in events:
                        if data == "[DONE]":
                            done = True
                            break
                        if not data:
                            continue
                        try:
                            chunk = json.loads(data)
                        except (ValueError, RecursionError):
                            raise _Broken(
                                f"the server at {self.where} sent a malformed chunk: {data[:80]!r}"
                            ) from None
                        for event in reader.feed(chunk):
                            yield event
            except _Broken as exc:
                if reader.finish_reason is None:
                    raise self._cut(str(exc), reader, retryable=True) from None
                # the server had said the reply was complete (the usage chunk that follows
                # a finish_reason, or [DONE], is what went missing): the reply stands
                log.info("the stream broke after its finish_reason: %s", exc)
            except ShapeError as exc:
                raise self._cut(
                    f"the server at {self.where} sent a chunk tui-agent cannot read: {exc}",
                    reader,
                    retryable=False,
                ) from None
            except StreamErrorChunk as exc:
                code = exc.code if isinstance(exc.code, int) else 0
                too_long, limit = overflow(
                    code or None, str(exc), exc.code if isinstance(exc.code, str) else None
                )
                raise self._cut(
                    f"the server at {self.where} reported an error: {exc}",
                    reader,
                    retryable=code == 429 or code >= 500,
                    overflow=too_long,
                    limit=limit,
                ) from None
            if not done and reader.finish_reason is None:
                raise self._cut(
                    f"the stream from {self.where} ended without a finish_reason or [DONE]",
                    reader,
                    retryable=True,
                )
        for event in reader.end():
            yield event

    def _why_no_images(self) -> str | None:
        """Why this request's images are left out, or None when they are sent."""
        if self.images is False:
            return f'this model does not take images ([models."{self.model}"] images = false)'
        return self.images_refused

    def _refused_images(self, exc: Any) -> ProviderError:
        """A request with images answered HTTP 400: the images are taken for the cause
        (a model that takes them accepts a request a text model would), left out from
        now on, and the request goes again at once (``retryable``, no delay). If the
        400 had another cause, the next request says it."""
        self.images_refused = f"the server at {self.where} refused images"
        return ProviderError(
            f"the server at {self.where} refused the request with images (HTTP 400: "
            f"{_detail(exc)}). Model {self.model!r} may not take images: this session sends "
            f'it none from now on, and the turn goes on without them. Set [models."{self.model}"] '
            "images = false to say so for good (true to always send them).",
            retryable=True,
            retry_after=0.0,
        )

    def _cut(
        self,
        message: str,
        reader: ReplyReader,
        *,
        retryable: bool,
        overflow: bool = False,
        limit: int | None = None,
    ) -> ProviderError:
        """A reply that stopped before the model finished. Retryable even when some of it
        was shown (``partial``): no tool call of it was handed on (they are, at the end),
        so the agent takes the shown part back and asks again."""
        return ProviderError(
            message,
            retryable=retryable,
            partial=reader.shown,
            overflow=overflow,
            limit=limit,
        )

    def _overflow(self, exc: Any) -> ProviderError | None:
        """The error, said so, if the server rejected the request as longer than the
        model's context window (never retried as it is: the conversation must get shorter)."""
        status = getattr(exc, "status_code", None)
        found, limit = error_overflow(status, getattr(exc, "body", None))
        if not found:
            found, limit = overflow(status, _detail(exc), getattr(exc, "code", None))
        if not found:
            return None
        if limit:  # the real window: a later session starts from it
            window_memory.remember(self.base_url, self.model, limit)
        window = f" ({limit:,} tokens)" if limit else ""
        return ProviderError(
            f"the conversation is longer than the context window{window} of {self.model!r} "
            f"at {self.where} (HTTP {status}): {_detail(exc)}",
            overflow=True,
            limit=limit,
        )

    async def models(self) -> list[str]:
        try:
            page = await self._get_client().models.list()
        except Exception:
            return []
        return sorted(model.id for model in page.data)

    async def context_window(self) -> int | None:
        """The model's context window as the server states it (None: unknown; never
        raises), for one request at most, or none. First what an earlier session learned
        from this base URL for this model (``window_memory``, trusted for a day); then this
        model's ``/v1/models`` entry: a window it states (vLLM's ``max_model_len``,
        OpenRouter's ``context_length``: ``window.window_from_model``) is the answer; where
        it states none, the entry's marks tell the server (``window.server_kind``) and only
        that server's own endpoint is asked, with ``probe_timeout``: llama.cpp ``GET
        /props``, LM Studio ``GET /api/v0/models/{model}``, Ollama ``POST /api/show`` (and,
        asked again later while the model was not loaded, ``GET /api/ps``). A server that
        is none of these (a hosted provider) is asked nothing more: the configured or
        default window holds until an overflow error states the real one. A 404 is an
        answer (never asked again); what the entry says the model could take is used then.

        A settled answer is kept for the provider's life and remembered on disk. Ollama's
        guess for a model not loaded yet (``window.OLLAMA_DEFAULT`` at most) is not:
        ``window_settled`` stays False and the next call asks ``/api/ps``, so the window is
        right once the first request has loaded the model."""
        async with self._window_lock:
            if not self.window_settled:
                known, window = window_memory.recall(self.base_url, self.model)
                if known:
                    self._window, self.window_settled = window, True
                    return self._window
                try:
                    self._window, self.window_settled, answered = await self._ask_window()
                except Exception:
                    log.info("no context window from %s", self.where, exc_info=True)
                    self._window, self.window_settled, answered = None, True, False
                if self.window_settled and answered:
                    window_memory.remember(self.base_url, self.model, self._window)
        return self._window

    async def _ask_window(self) -> tuple[int | None, bool, bool]:
        """(window, settled, answered): answered is False when a server did not answer
        (unreachable, too slow), so nothing is remembered."""
        client = self._get_client()
        if self._ollama_entry is not None:  # a guess before: is the model loaded now?
            model = str(self._ollama_entry.get("id") or self.model)
            ok, running = await self._fetch(client, f"{self._root()}/api/ps")
            loaded = window_from_ollama_ps(running, model)
            if loaded is not None:
                return loaded, True, True
            return self._window, False, ok
        listed, entry = await self._model_entry(client)
        if not listed:
            return None, True, False
        served = window_from_model(entry, served_only=True) if entry else None
        if served is not None:
            return served, True, True
        kind = server_kind(entry) if self.base_url else None
        model = str(entry.get("id")) if entry else self.model
        upper = window_from_model(entry) if entry else None
        if kind is None or kind in ("vllm", "openrouter"):
            return upper, True, True
        root = self._root()
        if kind == "llamacpp":
            ok, props = await self._fetch(client, f"{root}/props")
            return window_from_props(props) or upper, True, ok
        if kind == "lmstudio":
            ok, said = await self._fetch(client, f"{root}/api/v0/models/{quote(model, safe='/:@')}")
            return window_from_model(said) or upper, True, ok
        ok, show = await self._fetch(client, f"{root}/api/show", {"model": model})
        shown = window_from_ollama(show)
        if shown is None:
            return upper, True, ok
        # A num_ctx in the Modelfile is what the server uses; otherwise a guess until loaded.
        if window_from_ollama({"parameters": show.get("parameters")}) is not None:
            return shown, True, ok
        assert entry is not None
        self._ollama_entry = entry
        return shown, False, ok

    def _root(self) -> str:
        return str(self.base_url).rstrip("/").removesuffix("/v1")

    async def _model_entry(self, client: Any) -> tuple[bool, dict[str, Any] | None]:
        """(listed, entry): whether ``/v1/models`` answered, and this model's entry, extra
        fields included; the only entry of a one-model server (llama.cpp answers whatever
        the model is called)."""
        try:
            async with asyncio.timeout(MODELS_TIMEOUT):
                page = await client.models.list()
            entries = [model.to_dict() for model in page.data]
        except Exception as exc:
            return _answered(exc), None
        by_id = {str(entry.get("id")): entry for entry in entries if isinstance(entry, dict)}
        for name in (self.model, f"{self.model}:latest", self.model.removesuffix(":latest")):
            if name in by_id:
                return True, by_id[name]
        only = entries[0] if len(entries) == 1 and isinstance(entries[0], dict) else None
        return True, only

    async def _fetch(
        self, client: Any, url: str, body: dict[str, Any] | None = None
    ) -> tuple[bool, Any]:
        """(answered, the JSON at ``url``, POSTed ``body`` if any, or None). Asked once:
        the client never retries, and an HTTP error (a 404) is an answer, remembered; only
        no answer at all (unreachable, past ``probe_timeout``) is not."""
        options = {"timeout": self.probe_timeout, "max_retries": 0}
        try:
            async with asyncio.timeout(self.probe_timeout + 0.5):
                if body is None:
                    return True, await client.get(url, cast_to=object, options=options)
                return True, await client.post(url, cast_to=object, body=body, options=options)
        except Exception as exc:
            return _answered(exc), None


def _answered(exc: BaseException) -> bool:
    """An HTTP error that is the server's answer (a 404: it has no such endpoint), not a
    passing trouble (408, 409, 429, 5xx), which is never remembered."""
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and status not in (408, 409, 429) and status < 500


class _Broken(Exception):
    """The stream broke: a failed read, a stall or a chunk that is not JSON."""


def factory(settings: Mapping[str, Any]) -> OpenAIProvider:
    return OpenAIProvider(settings)
