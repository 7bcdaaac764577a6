"""Knowing the context window from the server: overflow errors in the servers' own words,
the windows their model descriptions state, and the openai provider asking them, through
the real ``openai`` client against the real fake server."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tui_agent import create_session
from tui_agent.core.providers import window_memory
from tui_agent.core.providers.base import ProviderError
from tui_agent.core.providers.openai import OpenAIProvider
from tui_agent.core.providers.stub import StubProvider
from tui_agent.core.providers.window import (
    error_overflow,
    overflow,
    server_kind,
    window_from_model,
    window_from_ollama,
    window_from_ollama_ps,
    window_from_props,
)
from tui_agent.core.util.paths import user_data_dir
from tui_agent.testing import FakeOpenAI, Reply

# (who says it, status, message, code, the window it states)
OVERFLOWS: list[tuple[str, int | None, str, str | None, int | None]] = [
    (
        "OpenAI",
        400,
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 8545 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
        8192,
    ),
    (
        "OpenAI, with the completion",
        400,
        "This model's maximum context length is 128000 tokens. However, you requested 130000 "
        "tokens (129000 in the messages, 1000 in the completion). Please reduce the length of "
        "the messages or completion.",
        "context_length_exceeded",
        128000,
    ),
    (
        "OpenAI Responses",
        400,
        "Your input exceeds the context window of this model. Please adjust your input and "
        "try again.",
        "context_length_exceeded",
        None,
    ),
    ("OpenAI code alone", 400, "Bad request.", "context_length_exceeded", None),
    (
        "vLLM",
        400,
        "This model's maximum context length is 32768 tokens. However, your request has 40000 "
        "input tokens. Please reduce the length of the input messages.",
        None,
        32768,
    ),
    (
        "vLLM, output reserved",
        400,
        "This model's maximum context length is 8192 tokens. However, you requested 2048 "
        "output tokens and your prompt contains at least 6145 input tokens, for a total of at "
        "least 8193 tokens. Please reduce the length of the input prompt or the number of "
        "requested output tokens.",
        None,
        8192,
    ),
    (
        "vLLM, max_tokens that a shorter prompt makes room for",
        400,
        "'max_tokens' or 'max_completion_tokens' is too large: 200. This model's maximum "
        "context length is 4096 tokens and your request has 4000 input tokens (200 > 4096 - "
        "4000).",
        None,
        4096,
    ),
    (
        "vLLM, decoder prompt",
        400,
        "The decoder prompt (length 12324) is longer than the maximum model length of 8192. "
        "Make sure that `max_model_len` is no smaller than the number of text tokens.",
        None,
        8192,
    ),
    (
        "vLLM v0",
        400,
        "Input prompt (5000 tokens) is too long and exceeds limit of 4096",
        None,
        4096,
    ),
    (
        "llama.cpp",
        400,
        "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "exceed_context_size_error",
        4096,
    ),
    (
        "llama.cpp, newer",
        400,
        "request (9000 tokens) exceeds context size (8192 tokens)",
        None,
        8192,
    ),
    (
        "llama.cpp, older",
        400,
        "the request exceeds the available context size, try increasing it",
        None,
        None,
    ),
    (
        "llama.cpp, oldest",
        400,
        "input (5000 tokens) is larger than the max context size (4096 tokens). skipping",
        None,
        4096,
    ),
    (
        "llama.cpp, type only",
        400,
        "something new",
        "exceed_context_size_error",
        None,
    ),
    (
        "LM Studio",
        400,
        "Trying to keep the first 9000 tokens when context the overflows. However, the model "
        "is loaded with context length of only 4096 tokens, which is not enough. Try to load "
        "the model with a larger context length, or provide a shorter input",
        None,
        4096,
    ),
    (
        "LM Studio, keep",
        400,
        "The number of tokens to keep from the initial prompt is greater than the context "
        "length. Try to load the model with a larger context length, or provide a shorter "
        "input",
        None,
        None,
    ),
    (
        "LM Studio, during the reply",
        None,
        "Reached context length of 4096 tokens with model (arch: gpt-oss) that does not "
        "currently support mid-generation context overflow",
        None,
        4096,
    ),
    (
        "Ollama",
        400,
        "prompt too long; exceeded max context length by 1503 tokens",
        None,
        None,
    ),
    (
        "Mistral",
        400,
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 "
        "maximum context length",
        None,
        32768,
    ),
    (
        "Anthropic-compatible",
        400,
        "prompt is too long: 213462 tokens > 200000 maximum",
        None,
        200000,
    ),
    (
        "Groq",
        400,
        "Please reduce the length of the messages or completion.",
        "context_length_exceeded",
        None,
    ),
    (
        "OpenRouter",
        400,
        "This endpoint's maximum context length is 131,072 tokens. However, you requested "
        "about 140,000 tokens (138,000 of text input, 2,000 in the output). Please reduce the "
        'length of either one, or use the "middle-out" transform to compress your prompt '
        "automatically.",
        None,
        131072,
    ),
    (
        "xAI",
        400,
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
        None,
        131072,
    ),
    (
        "Gemini",
        400,
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
        None,
        1048575,
    ),
    (
        "GitHub Copilot",
        400,
        "prompt token count of 130000 exceeds the limit of 128000",
        None,
        128000,
    ),
    (
        "Moonshot",
        400,
        "Your request exceeded model token limit: 262144 (requested: 300000)",
        None,
        262144,
    ),
    ("Bedrock", 400, "Input is too long for requested model.", None, None),
    ("a proxy's 413", 413, "prompt is too long", None, None),
]


@pytest.mark.parametrize(
    ("status", "message", "code", "limit"),
    [case[1:] for case in OVERFLOWS],
    ids=[case[0] for case in OVERFLOWS],
)
def test_each_servers_wording_is_an_overflow(
    status: int | None, message: str, code: str | None, limit: int | None
) -> None:
    assert overflow(status, message, code) == (True, limit)


NOT_OVERFLOWS: list[tuple[str, int | None, str, str | None]] = [
    (
        "max_tokens over the model's output limit",
        400,
        "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, "
        "whereas you provided 100000.",
        "invalid_value",
    ),
    (
        "vLLM: max_tokens alone fills the window",
        400,
        "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum "
        "context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - "
        "2778).",
        None,
    ),
    (
        "OpenAI: the completion alone fills the window",
        400,
        "This model's maximum context length is 8192 tokens. However, you requested 9100 "
        "tokens (100 in the messages, 9000 in the completion). Please reduce the length of the "
        "messages or completion.",
        None,
    ),
    (
        "vLLM: output tokens alone fill the window",
        400,
        "This model's maximum context length is 4096 tokens. However, you requested 4096 "
        "output tokens and your prompt contains at least 1 input tokens, for a total of at "
        "least 4097 tokens.",
        None,
    ),
    (
        "a rate limit",
        429,
        "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit "
        "30000, Requested 45000.",
        "rate_limit_exceeded",
    ),
    (
        "a rate limit said with 400",
        400,
        "Rate limit reached: too many tokens per min, reduce the length of the messages",
        None,
    ),
    ("a transcript problem", 400, "Invalid parameter: messages with role 'tool' must …", None),
    ("stream_options", 400, "Unrecognized request argument supplied: stream_options", None),
    ("model not found", 404, "The model `gpt-5` does not exist (maximum context length)", None),
    ("authentication", 401, "Incorrect API key provided", "invalid_api_key"),
    ("a server error", 500, "Internal server error", None),
    ("a context-free 413", 413, "Request Entity Too Large", None),
    (
        "LM Studio failed to load",
        400,
        'Failed to load model {"n_ctx": 1048576, "n_batch": 512}',
        None,
    ),
    ("nothing", None, "", None),
]


@pytest.mark.parametrize(
    ("status", "message", "code"),
    [case[1:] for case in NOT_OVERFLOWS],
    ids=[case[0] for case in NOT_OVERFLOWS],
)
def test_other_errors_are_not_overflows(status: int | None, message: str, code: str | None) -> None:
    assert overflow(status, message, code) == (False, None)


def test_error_bodies_as_servers_send_them() -> None:
    llama = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 4476,
        "n_ctx": 4096,
    }
    assert error_overflow(400, llama) == (True, 4096)
    assert error_overflow(400, {"error": llama}) == (True, 4096)
    odd = {**llama, "message": "odd"}  # the type says it
    assert error_overflow(400, odd) == (True, 4096)
    assert error_overflow(400, "prompt too long; exceeded max context length by 3 tokens") == (
        True,
        None,
    )
    groq = {"message": "Please try again.", "type": "invalid_request_error"}
    assert error_overflow(400, {**groq, "code": "context_length_exceeded"}) == (True, None)
    assert error_overflow(400, groq) == (False, None)
    assert error_overflow(400, None) == (False, None)
    assert error_overflow(400, ["not", "an", "error"]) == (False, None)


# -- the windows servers describe ------------------------------------------------------------

MODEL_ENTRIES: list[tuple[str, dict[str, Any], int | None, int | None]] = [
    # (server, entry, window_from_model, served_only)
    ("vLLM", {"id": "m", "owned_by": "vllm", "max_model_len": 32768}, 32768, 32768),
    (
        "OpenRouter",
        {"id": "m", "context_length": 200000, "top_provider": {"context_length": 128000}},
        128000,
        128000,
    ),
    (
        "OpenRouter, no top provider figure",
        {"id": "m", "context_length": 200000, "top_provider": {"context_length": None}},
        200000,
        200000,
    ),
    (
        "LM Studio, loaded",
        {"id": "m", "max_context_length": 131072, "loaded_context_length": 4096},
        4096,
        4096,
    ),
    ("LM Studio, not loaded", {"id": "m", "max_context_length": 131072}, 131072, None),
    ("llama.cpp", {"id": "m.gguf", "meta": {"n_ctx_train": 131072, "n_vocab": 1}}, 131072, None),
    (
        "llama.cpp, with n_ctx",
        {"id": "m", "meta": {"n_ctx_train": 131072, "n_ctx": 8192}},
        8192,
        8192,
    ),
    ("generic context_window", {"id": "m", "context_window": 65536}, 65536, 65536),
    ("generic context_length", {"id": "m", "context_length": "16384"}, 16384, 16384),
    ("OpenAI", {"id": "gpt-4o", "object": "model", "owned_by": "system"}, None, None),
    ("nonsense", {"id": "m", "max_model_len": -1, "context_length": True}, None, None),
]


@pytest.mark.parametrize(
    ("entry", "window", "served"),
    [case[1:] for case in MODEL_ENTRIES],
    ids=[case[0] for case in MODEL_ENTRIES],
)
def test_window_from_model_entries(
    entry: dict[str, Any], window: int | None, served: int | None
) -> None:
    assert window_from_model(entry) == window
    assert window_from_model(entry, served_only=True) == served


def test_window_from_llama_props_and_ollama_show() -> None:
    props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}
    assert window_from_props(props) == 8192
    assert window_from_props({"n_ctx": 4096}) == 4096
    assert window_from_props({"default_generation_settings": {}}) is None
    info = {"general.architecture": "qwen3", "qwen3.context_length": 40960, "qwen3.x": 36}
    # Trained for 40960, no num_ctx: Ollama's smallest default (its own is not known).
    assert window_from_ollama({"model_info": info, "parameters": "stop <|im_end|>"}) == 4096
    with_ctx = {"model_info": info, "parameters": 'stop "<|im_end|>"\nnum_ctx        8192'}
    assert window_from_ollama(with_ctx) == 8192  # what the server actually uses wins
    assert window_from_ollama({"model_info": {"llama.context_length": 131072}}) == 4096
    assert window_from_ollama({"model_info": {"llama.context_length": 2048}}) == 2048
    assert window_from_ollama({"parameters": {"num_ctx": 2048}}) == 2048
    assert window_from_ollama({"license": "x"}) is None
    running = {
        "models": [
            {"name": "a:1", "context_length": 2048},
            {"model": "qwen3:latest", "context_length": 4096},
        ]
    }
    assert window_from_ollama_ps(running, "qwen3") == 4096
    assert window_from_ollama_ps(running, "a:1") == 2048
    assert window_from_ollama_ps(running, "other") is None  # not loaded
    assert window_from_ollama_ps({"models": None}, "a:1") is None


# -- the openai provider, through the real client ----------------------------------------------

MESSAGES = [{"role": "user", "content": "x " * 4000}]


async def _drain(provider: OpenAIProvider) -> None:
    async for _ in provider.stream(MESSAGES, []):
        pass


async def test_an_overflow_error_is_said_with_its_window_and_never_retried() -> None:
    async with FakeOpenAI([Reply("never")], context_limit=1000) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "fake-model"})
        with pytest.raises(ProviderError) as info:
            await _drain(provider)
    error = info.value
    assert (error.overflow, error.limit, error.retryable) == (True, 1000, False)
    assert not error.partial
    assert "context window (1,000 tokens)" in str(error) and "fake-model" in str(error)
    assert server.overflowed and server.overflowed[0] > 1000
    assert server.script  # the scripted reply was not used


async def test_an_overflow_teaches_the_window_a_later_session_starts_from() -> None:
    """A remembered window (here llama.cpp's /props 8192) that an overflow error contradicts
    (the server was restarted with 1000): the stated window is remembered instead."""
    entry, answers, _window = KINDS["llama.cpp"]
    asked: list[str] = []
    routes = {**counted(answers, asked), "GET /v1/models": listing(entry)}
    async with FakeOpenAI([Reply("never")], context_limit=1000, extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        assert await provider.context_window() == 8192
        with pytest.raises(ProviderError):
            await _drain(provider)
        later = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        assert await later.context_window() == 1000
    assert asked == ["GET /props"]


@pytest.mark.parametrize(
    ("status", "message", "limit"),
    [
        (413, "prompt is too long: 9000 tokens > 8192 maximum", 8192),
        (500, "request (9000 tokens) exceeds the available context size (4096 tokens)", 4096),
        (400, "prompt too long; exceeded max context length by 20 tokens", None),
    ],
)
async def test_overflows_in_other_statuses(status: int, message: str, limit: int | None) -> None:
    async with FakeOpenAI([Reply(status=status, error=message)]) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        with pytest.raises(ProviderError) as info:
            await _drain(provider)
    assert (info.value.overflow, info.value.limit, info.value.retryable) == (True, limit, False)


async def test_llama_cpps_n_ctx_beside_the_message_gives_the_window() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 9000,
            "n_ctx": 4096,
        }
    }
    routes = {"POST /v1/chat/completions": lambda _body: (400, body)}
    async with FakeOpenAI(extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        with pytest.raises(ProviderError) as info:
            await _drain(provider)
    assert (info.value.overflow, info.value.limit) == (True, 4096)


async def test_an_overflow_inside_the_stream() -> None:
    said = (
        "Reached context length of 4096 tokens with model (arch: gpt-oss) that does not "
        "currently support mid-generation context overflow"
    )
    async with FakeOpenAI([Reply(chunks=[{"error": {"message": said, "code": 400}}])]) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        with pytest.raises(ProviderError) as info:
            await _drain(provider)
    assert (info.value.overflow, info.value.limit, info.value.retryable) == (True, 4096, False)


async def test_other_errors_stay_what_they_were() -> None:
    script = [
        Reply(status=400, error="max_tokens is too large: 100000."),
        Reply(status=503, error="overloaded"),
    ]
    async with FakeOpenAI(script) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        with pytest.raises(ProviderError) as bad:
            await _drain(provider)
        with pytest.raises(ProviderError) as busy:
            await _drain(provider)
    assert (bad.value.overflow, bad.value.limit, bad.value.retryable) == (False, None, False)
    assert (busy.value.overflow, busy.value.retryable) == (False, True)


def test_provider_error_keeps_its_old_signature() -> None:
    old = ProviderError("x", retryable=True, partial=True, retry_after=1.0)
    assert (old.overflow, old.limit, old.retryable) == (False, None, True)
    assert ProviderError("y", retryable=True, overflow=True, limit=8).retryable is False


# -- the provider asks the server for the window ------------------------------------------------


async def test_context_window_from_an_advertised_limit_asked_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeOpenAI(context_limit=16_384, advertise_limit=True) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "fake-model"})
        assert await provider.context_window() == 16_384
        server.context_limit = 2048  # the answer is kept: no second question
        assert await provider.context_window() == 16_384
        fresh = OpenAIProvider({"base_url": server.base_url, "model": "fake-model"})
        assert await fresh.context_window() == 16_384  # remembered (a later session)
        monkeypatch.setattr(window_memory, "MAX_AGE", -1.0)  # the memory expired
        again = OpenAIProvider({"base_url": server.base_url, "model": "fake-model"})
        assert await again.context_window() == 2048


async def test_context_window_from_openrouter_models_counts_its_questions() -> None:
    asked: list[Any] = []

    def models(_body: Any) -> dict[str, Any]:
        asked.append(1)
        entry = {"id": "org/m", "context_length": 200000, "top_provider": {"context_length": 65536}}
        return {"object": "list", "data": [{"id": "other", "context_length": 8}, entry]}

    async with FakeOpenAI(extra_routes={"GET /v1/models": models}) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "org/m"})
        assert await provider.context_window() == 65536
        assert await provider.context_window() == 65536
    assert len(asked) == 1
    assert not [path for _method, path, _body in server.routed if path != "/v1/models"]


async def test_context_window_from_llama_cpps_props() -> None:
    trained = {"object": "list", "data": [{"id": "qwen.gguf", "meta": {"n_ctx_train": 131072}}]}
    props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}
    routes = {"GET /v1/models": trained, "GET /props": props}
    async with FakeOpenAI(extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "anything"})
        assert await provider.context_window() == 8192  # served, not trained
    async with FakeOpenAI(extra_routes={"GET /v1/models": trained}) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "anything"})
        assert await provider.context_window() == 131072  # no /props: the upper bound


def listing(*entries: dict[str, Any]) -> dict[str, Any]:
    """A ``/v1/models`` answer."""
    return {"object": "list", "data": [{"object": "model", "created": 0, **e} for e in entries]}


LMSTUDIO = listing({"id": "qwen/qwen3-8b", "owned_by": "organization_owner"})
OLLAMA = listing({"id": "qwen3:8b", "owned_by": "library"}, {"id": "qwen3", "owned_by": "library"})


async def test_context_window_from_lm_studios_api() -> None:
    entry = {"id": "qwen/qwen3-8b", "state": "loaded", "max_context_length": 40960}
    routes = {
        "GET /v1/models": LMSTUDIO,
        "GET /api/v0/models/qwen/qwen3-8b": {**entry, "loaded_context_length": 4096},
    }
    async with FakeOpenAI(extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "qwen/qwen3-8b"})
        assert await provider.context_window() == 4096
    assert ("GET", "/api/v0/models/qwen/qwen3-8b", None) in server.routed


async def test_context_window_from_ollamas_show() -> None:
    info = {"general.architecture": "qwen3", "qwen3.context_length": 40960}
    shown: list[Any] = []

    def show(body: Any) -> Any:
        shown.append(body)
        if body.get("model") != "qwen3:8b":
            return 404, {"error": f"model {body.get('model')!r} not found"}
        return {"parameters": "num_ctx 16384\ntemperature 0.6", "model_info": info}

    routes = {"GET /v1/models": OLLAMA, "POST /api/show": show}
    async with FakeOpenAI(extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "qwen3:8b"})
        assert await provider.context_window() == 16384  # num_ctx: what the server uses
    assert shown == [{"model": "qwen3:8b"}]
    assert provider.window_settled
    plain = {"POST /api/show": {"parameters": "stop x", "model_info": info}}
    running: list[dict[str, Any]] = []
    routes = {**plain, "GET /api/ps": lambda _body: {"models": running}, "GET /v1/models": OLLAMA}
    async with FakeOpenAI(extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "qwen3"})
        # Not loaded, no num_ctx: not the 40960 it was trained for (Ollama would cut a
        # longer prompt silently) but Ollama's smallest default, and asked again later.
        assert await provider.context_window() == 4096
        assert not provider.window_settled
        running.append({"name": "qwen3:latest", "model": "qwen3:latest", "context_length": 32768})
        assert await provider.context_window() == 32768  # what the loaded model was given
        assert provider.window_settled
        asked = len(server.routed)
        assert await provider.context_window() == 32768
        assert len(server.routed) == asked  # settled: not asked again


async def test_an_unknown_window_is_none_and_a_slow_server_is_not_waited_for() -> None:
    def slow(_body: Any) -> dict[str, Any]:
        time.sleep(1.5)
        return {"default_generation_settings": {"n_ctx": 8192}}

    async with FakeOpenAI() as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "fake-model"})
        assert await provider.context_window() is None
    async with FakeOpenAI(extra_routes={"GET /props": slow}) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "fake-model"})
        provider.probe_timeout = 0.2
        started = time.monotonic()
        assert await provider.context_window() is None
        assert time.monotonic() - started < 1.2
    provider = OpenAIProvider({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    provider.probe_timeout = 0.5
    assert await provider.context_window() is None  # nothing listens there


async def test_the_stub_knows_no_window() -> None:
    assert await StubProvider().context_window() is None


# -- learning the window costs one request or none (issue 27) -----------------------------------

PROBES = ("GET /props", "GET /api/v0/models/m", "GET /api/ps", "POST /api/show")


def counted(answers: dict[str, Any], asked: list[str]) -> dict[str, Any]:
    """Every server-specific window endpoint, each counted when asked: the ``answers`` given,
    404 for the rest (as a server without that endpoint says)."""

    def route(key: str) -> Any:
        def answer(_body: Any) -> Any:
            asked.append(key)
            if key in answers:
                return answers[key]
            return 404, {"error": {"message": "not found", "type": "not_found"}}

        return answer

    return {key: route(key) for key in PROBES}


# What each server's /v1/models says (their sources: llama.cpp's server answers owned_by
# "llamacpp" with a "meta" of n_ctx_train; vLLM owned_by "vllm" with max_model_len; LM Studio
# owned_by "organization_owner"; Ollama owned_by the name's namespace, "library"; OpenRouter
# context_length, top_provider, pricing and architecture, no owned_by).
KINDS: dict[str, tuple[dict[str, Any], dict[str, Any], int | None]] = {
    "llama.cpp": (
        {"id": "m", "owned_by": "llamacpp", "meta": {"n_ctx_train": 131072, "n_vocab": 1}},
        {"GET /props": {"default_generation_settings": {"n_ctx": 8192}}},
        8192,
    ),
    "vLLM": ({"id": "m", "owned_by": "vllm", "root": "m", "max_model_len": 32768}, {}, 32768),
    "LM Studio": (
        {"id": "m", "owned_by": "organization_owner"},
        {"GET /api/v0/models/m": {"id": "m", "loaded_context_length": 4096}},
        4096,
    ),
    "Ollama": (
        {"id": "m", "owned_by": "library"},
        {"POST /api/show": {"parameters": "num_ctx 16384", "model_info": {}}},
        16384,
    ),
    "OpenRouter": (
        {
            "id": "m",
            "context_length": 200000,
            "top_provider": {"context_length": 65536},
            "pricing": {"prompt": "0"},
            "architecture": {"modality": "text->text"},
        },
        {},
        65536,
    ),
}
EXPECTED_PROBE = {
    "llama.cpp": ["GET /props"],
    "vLLM": [],
    "LM Studio": ["GET /api/v0/models/m"],
    "Ollama": ["POST /api/show"],
    "OpenRouter": [],
}


@pytest.mark.parametrize("kind", list(KINDS))
async def test_each_server_kind_is_asked_only_its_own_endpoint(kind: str) -> None:
    entry, answers, window = KINDS[kind]
    asked: list[str] = []
    routes = {**counted(answers, asked), "GET /v1/models": listing(entry)}
    async with FakeOpenAI(extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        assert await provider.context_window() == window
    assert asked == EXPECTED_PROBE[kind]


async def test_a_hosted_provider_is_asked_no_window_endpoint(project: Path) -> None:
    """A server none of these (OpenAI's own /v1/models shape): no probe at all; the budget
    holds the default window (an overflow error would teach the real one)."""
    asked: list[str] = []
    hosted = listing({"id": "m", "owned_by": "system"}, {"id": "other", "owned_by": "openai"})
    routes = {**counted({}, asked), "GET /v1/models": hosted}
    async with FakeOpenAI(extra_routes=routes) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        await session.conversation.budget.discover()
        assert session.conversation.budget.window() == (32_768, "default")
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        assert await provider.context_window() is None
    assert asked == []


async def test_a_second_session_against_the_same_server_asks_nothing(project: Path) -> None:
    entry, answers, _window = KINDS["llama.cpp"]
    asked: list[str] = []
    routes = {**counted(answers, asked), "GET /v1/models": listing(entry)}
    async with FakeOpenAI(extra_routes=routes) as server:
        first = create_session(project, base_url=server.base_url, model="m")
        await first.conversation.budget.discover()
        assert first.conversation.budget.window() == (8192, "server")
        before = list(server.routed)
        second = create_session(project, base_url=server.base_url, model="m")
        await second.conversation.budget.discover()
        assert second.conversation.budget.window() == (8192, "server")
        assert server.routed == before  # not even /v1/models: remembered
        base_url = server.base_url
    assert asked == ["GET /props"]
    remembered = json.loads((user_data_dir() / "windows.json").read_text())
    [(key, value)] = remembered.items()
    assert key == f"{base_url.rstrip('/')} m" and value["window"] == 8192
    assert abs(value["learned"] - time.time()) < 60


async def test_a_404_is_asked_once() -> None:
    """A llama.cpp without /props: asked once, never again (nor by a later session); the
    entry's trained length is the upper bound used."""
    entry, _answers, _window = KINDS["llama.cpp"]
    asked: list[str] = []
    routes = {**counted({}, asked), "GET /v1/models": listing(entry)}
    async with FakeOpenAI(extra_routes=routes) as server:
        for _ in range(3):
            provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
            assert await provider.context_window() == 131072
            assert await provider.context_window() == 131072
    assert asked == ["GET /props"]


@pytest.mark.parametrize("status", [429, 500, 503])
@pytest.mark.parametrize("where", ["GET /v1/models", "GET /props"])
async def test_a_passing_error_is_not_remembered(where: str, status: int) -> None:
    """A 429 or a 5xx is no answer (llmock injects them into /v1/models too): the next
    session asks again, and learns the window once the server answers."""
    entry, answers, window = KINDS["llama.cpp"]
    failing = [True]

    def flaky(answer: Any) -> Any:
        def route(_body: Any) -> Any:
            if failing[0]:
                return status, {"error": {"message": "try later"}}
            return answer(_body) if callable(answer) else answer

        return route

    asked: list[str] = []
    routes = {**counted(answers, asked), "GET /v1/models": listing(entry)}
    routes[where] = flaky(routes[where])
    async with FakeOpenAI(extra_routes=routes) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        assert await provider.context_window() in (None, 131072)  # no window from a 429
        assert window_memory.recall(server.base_url, "m") == (False, None)
        failing[0] = False
        later = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        assert await later.context_window() == window
        assert window_memory.recall(server.base_url, "m") == (True, window)


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        ({"id": "m.gguf", "owned_by": "llamacpp", "meta": {"n_ctx_train": 4096}}, "llamacpp"),
        ({"id": "m", "owned_by": "vllm", "max_model_len": 4096}, "vllm"),
        ({"id": "qwen/qwen3-8b", "owned_by": "organization_owner"}, "lmstudio"),
        ({"id": "qwen3:8b", "owned_by": "library"}, "ollama"),
        ({"id": "someone/tiny:q4", "owned_by": "someone"}, "ollama"),  # a user's namespace
        ({"id": "a/b", "context_length": 8, "pricing": {}, "top_provider": {}}, "openrouter"),
        ({"id": "gpt-4o", "owned_by": "system"}, None),
        ({"id": "claude", "owned_by": "anthropic"}, None),
        (None, None),
    ],
)
def test_the_server_is_told_by_its_models_entry(entry: Any, kind: str | None) -> None:
    assert server_kind(entry) == kind


def test_a_remembered_window_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    window_memory.remember("http://h/v1/", "m", 4096)
    assert window_memory.recall("http://h/v1", "m") == (True, 4096)
    assert window_memory.recall("http://h/v1", "other") == (False, None)
    later = time.time() + window_memory.MAX_AGE + 1
    assert window_memory.recall("http://h/v1", "m", now=later) == (False, None)
    window_memory.remember("http://h/v1", "n", None)  # the server states none: also kept
    assert window_memory.recall("http://h/v1", "n") == (True, None)
    (user_data_dir() / "windows.json").write_text("{not json")
    assert window_memory.recall("http://h/v1", "m") == (False, None)
