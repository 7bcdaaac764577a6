"""What servers say about a model's context window: in the error that rejects a request as
too long (``overflow``, ``error_overflow``) and in the descriptions they serve
(``window_from_model`` for a ``/v1/models`` entry, ``window_from_props`` for llama.cpp's
``/props``, ``window_from_ollama_ps`` and ``window_from_ollama`` for Ollama's ``/api/ps`` and
``/api/show``). Pure functions, no I/O.

An overflow is a prompt that does not fit: making the conversation shorter is the fix. A
request whose *output* reservation alone fills the window (``max_tokens`` as large as the
window or larger) is not one: no compaction makes it fit, the setting must change, so
``overflow`` says False for it. Where the output reservation is smaller than the window, a
shorter prompt does make room, and it is an overflow.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_N = r"(\d{1,3}(?:,\d{3})+|\d+)"  # 8192 or 131,072

# Wordings that say the prompt did not fit and state the window (the group).
_STATING = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # OpenAI, vLLM, DeepSeek, Together: "This model's maximum context length is 8192
        # tokens. However, your messages resulted in 9000 tokens."; OpenRouter: "This
        # endpoint's maximum context length is 8192 tokens. However, you requested about …"
        rf"maximum context length is {_N}",
        # vLLM: "The decoder prompt (length 5000) is longer than the maximum model length of
        # 4096."
        rf"maximum model length of {_N}",
        # vLLM (v0): "Input prompt (5000 tokens) is too long and exceeds limit of 4096"
        rf"too long and exceeds (?:the )?limit of {_N}",
        # LM Studio: "… However, the model is loaded with context length of only 4096
        # tokens, which is not enough."
        rf"context length of only {_N}",
        # LM Studio, during the reply: "Reached context length of 4096 tokens with model
        # (arch: gpt-oss) that does not currently support mid-generation context overflow"
        rf"reached context length of {_N}",
        # llama.cpp: "request (5000 tokens) exceeds the available context size (4096
        # tokens), try increasing it", "… exceeds context size (4096 tokens)", "input (5000
        # tokens) is larger than the max context size (4096 tokens). skipping"
        rf"(?:exceeds|larger than) (?:the )?(?:available |max )?context size \({_N} tokens\)",
        # Mistral: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with
        # 32768 maximum context length"
        rf"too large for model with {_N} maximum context length",
        # Anthropic(-compatible): "prompt is too long: 213462 tokens > 200000 maximum"
        rf"prompt is too long: {_N} tokens > {_N} maximum",
        # xAI: "This model's maximum prompt length is 131072 but the request contains …"
        rf"maximum prompt length is {_N}",
        # Gemini: "The input token count (1196265) exceeds the maximum number of tokens
        # allowed (1048575)."
        rf"input token count \(?{_N}\)? exceeds the maximum number of tokens allowed \(?{_N}",
        # GitHub Copilot: "prompt token count of 130000 exceeds the limit of 128000"
        rf"token count of {_N} exceeds the limit of {_N}",
        # Moonshot / Kimi: "Your request exceeded model token limit: 262144 (requested: …)"
        rf"exceeded model token limit:? {_N}",
    )
)

# Wordings that say it without stating the window.
_SAYING = re.compile(
    "|".join(
        (
            r"context[_ ]length[_ ]exceeded",  # OpenAI's code, also said in words
            r"exceed_context_size_error",  # llama.cpp's type
            r"exceeds? the (?:available )?context (?:size|window)",  # llama.cpp, OpenAI
            r"exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context length",  # Ollama (embed)
            r"greater than the context length",  # LM Studio: "tokens to keep … is greater …"
            r"exceeded max context length",  # Ollama: "prompt too long; exceeded max …"
            r"prompt too long",  # Ollama
            r"prompt is too long",  # Anthropic, without the numbers
            r"reduce the length of the messages",  # OpenAI, Groq
            r"input is too long for (?:the )?requested model",  # Bedrock
            r"context window exceeds limit",  # MiniMax
            r"input token count.{0,40}exceeds the maximum",  # Gemini
            r"context[_ ]window[_ ](?:is )?(?:full|exceeded)",  # z.ai and others
            r"maximum model length",  # vLLM, without the number
        )
    ),
    re.IGNORECASE,
)

# Where the server states the window only beside its own words (llama.cpp's error object,
# quoted in a message): a window, never by itself a sign of overflow.
_BESIDE = re.compile(rf"""["']?n_ctx["']?\s*[:=]\s*{_N}""", re.IGNORECASE)

# The output tokens the request reserved, where the wording states them.
_OUTPUT = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's …"
        rf"max_(?:completion_)?tokens\W.{{0,60}}?is too large:\s*{_N}",
        # vLLM: "However, you requested 1024 output tokens and your prompt contains …"
        rf"requested {_N} output tokens",
        # OpenAI, DeepSeek: "(7000 in the messages, 2000 in the completion)"
        rf"{_N} (?:in|for) the completion",
        # OpenRouter: "(10000 of text input, 2000 in the output)"
        rf"{_N} in the output",
    )
)

# A per-minute or per-day quota is not a window, whatever else the message says.
_RATE = re.compile(r"rate.?limit|per min|per day|\bTPM\b|\bTPD\b|quota", re.IGNORECASE)

CODES = frozenset(
    {
        "context_length_exceeded",  # OpenAI, Groq, OpenRouter
        "exceed_context_size_error",  # llama.cpp (its error ``type``)
        "model_context_window_exceeded",  # z.ai
        "context_window_exceeded",
    }
)

# Statuses that mean something else whatever the words: authentication, payment, a missing
# model or route, a timeout, a conflict, a rate limit.
NOT_OVERFLOW = frozenset({401, 402, 403, 404, 405, 408, 409, 429})


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def overflow(status: int | None, message: str, code: str | None = None) -> tuple[bool, int | None]:
    """Whether an API error says the request is larger than the model's context window, and
    the window it states (None where it states none). ``status`` is the HTTP status (None
    for an error that came inside a stream), ``code`` the error's ``code`` or ``type``."""
    if status in NOT_OVERFLOW:
        return False, None
    text = message or ""
    coded = isinstance(code, str) and code.strip().lower() in CODES
    if not coded and _RATE.search(text):
        return False, None
    limit: int | None = None
    for pattern in _STATING:
        found = pattern.search(text)
        if found:
            limit = _number(found.groups()[-1])
            break
    if limit is None and not coded and not _SAYING.search(text):
        return False, None
    if limit is None:
        beside = _BESIDE.search(text)
        limit = _number(beside.group(1)) if beside else None
    if limit is not None:
        for pattern in _OUTPUT:
            found = pattern.search(text)
            if found and _number(found.group(1)) >= limit:
                return False, None  # max_tokens alone fills the window: not the prompt's fault
    return True, (limit if limit is not None and limit > 0 else None)


def error_overflow(status: int | None, error: Any) -> tuple[bool, int | None]:
    """``overflow`` for an error as servers send it: the ``error`` object (``{"message",
    "code", "type", …}``), the whole body (``{"error": {…}}``), or a bare string (Ollama
    sends ``{"error": "prompt too long; …"}``). llama.cpp's ``n_ctx`` beside the message
    gives the window where the words do not."""
    if isinstance(error, Mapping) and "error" in error and "message" not in error:
        error = error["error"]
    if isinstance(error, str):
        return overflow(status, error)
    if not isinstance(error, Mapping):
        return False, None
    message = str(error.get("message") or "")
    names = [value for value in (error.get("code"), error.get("type")) if isinstance(value, str)]
    code = next((name for name in names if name.strip().lower() in CODES), None)
    found, limit = overflow(status, message, code)
    if found and limit is None:
        limit = _count(error.get("n_ctx"))
    return found, limit


def _count(value: Any) -> int | None:
    """A positive whole number of tokens (an int, an integral float or digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value > 0 else None


def _path(info: Mapping[str, Any], *keys: str) -> int | None:
    value: Any = info
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return _count(value)


def window_from_model(info: Mapping[str, Any], *, served_only: bool = False) -> int | None:
    """The window a ``/v1/models`` entry (or LM Studio's ``/api/v0/models/{id}``) states.

    What the server serves, first found wins: vLLM's ``max_model_len``, LM Studio's
    ``loaded_context_length``, llama.cpp's ``meta.n_ctx``, OpenRouter's ``context_length``
    and ``top_provider.context_length`` (the smaller: a request may go to that provider),
    then a generic ``context_window`` / ``context_length``. Otherwise, unless
    ``served_only``, what the model could take, an upper bound the server may not serve:
    LM Studio's ``max_context_length`` (a model not loaded yet), llama.cpp's
    ``meta.n_ctx_train``."""
    if not isinstance(info, Mapping):
        return None
    for keys in (("max_model_len",), ("loaded_context_length",), ("meta", "n_ctx")):
        found = _path(info, *keys)
        if found is not None:
            return found
    stated = [
        n
        for n in (_path(info, "context_length"), _path(info, "top_provider", "context_length"))
        if n is not None
    ]
    if stated:
        return min(stated)
    for keys in (("context_window",), ("max_context_window",), ("max_input_tokens",)):
        found = _path(info, *keys)
        if found is not None:
            return found
    if served_only:
        return None
    return _path(info, "max_context_length") or _path(info, "meta", "n_ctx_train")


def window_from_props(props: Mapping[str, Any]) -> int | None:
    """The window llama.cpp's ``GET /props`` states: ``default_generation_settings.n_ctx``
    (a slot's context, what one request gets), or a top-level ``n_ctx``."""
    if not isinstance(props, Mapping):
        return None
    return _path(props, "default_generation_settings", "n_ctx") or _path(props, "n_ctx")


def window_from_ollama_ps(ps: Mapping[str, Any], model: str) -> int | None:
    """The context Ollama's ``GET /api/ps`` says it allocated to ``model``, if it is loaded
    (``context_length``): what its OpenAI endpoint actually serves, which neither the model's
    description nor a request's ``num_ctx`` need match."""
    if not isinstance(ps, Mapping) or not isinstance(ps.get("models"), list):
        return None
    names = {model, f"{model}:latest", model.removesuffix(":latest")}
    for entry in ps["models"]:
        if isinstance(entry, Mapping) and names & {entry.get("name"), entry.get("model")}:
            return _count(entry.get("context_length"))
    return None


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def window_from_ollama(show: Mapping[str, Any]) -> int | None:
    """The window Ollama's ``POST /api/show`` states: a ``num_ctx`` in ``parameters`` (the
    Modelfile's, what the server uses), else the smaller of what the model was trained for
    (``model_info["<arch>.context_length"]``) and ``OLLAMA_DEFAULT``: without ``num_ctx``
    the server runs with its own default, often much smaller than the trained length, and
    Ollama cuts a longer prompt silently instead of answering with an error, so a guess too
    large loses the start of the conversation without a word."""
    if not isinstance(show, Mapping):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        found = _NUM_CTX.search(parameters)
        if found:
            return _count(found.group(1))
    elif isinstance(parameters, Mapping):
        found_ctx = _count(parameters.get("num_ctx"))
        if found_ctx is not None:
            return found_ctx
    trained = ollama_trained(show)
    return min(trained, OLLAMA_DEFAULT) if trained is not None else None


# Ollama's smallest default context (its default depends on the GPU's memory: 4k under
# 24 GiB, 32k under 48 GiB, 256k above, or OLLAMA_CONTEXT_LENGTH), used for a model that
# is not loaded and whose Modelfile sets no num_ctx, until the loaded model says more.
OLLAMA_DEFAULT = 4096


def ollama_trained(show: Mapping[str, Any]) -> int | None:
    """What ``/api/show`` says the model was trained for (``model_info``): an upper bound."""
    info = show.get("model_info")
    if not isinstance(info, Mapping):
        return None
    arch = info.get("general.architecture")
    if isinstance(arch, str):
        found_arch = _count(info.get(f"{arch}.context_length"))
        if found_arch is not None:
            return found_arch
    lengths = [_count(v) for k, v in info.items() if str(k).endswith(".context_length")]
    return next((n for n in lengths if n is not None), None)


def server_kind(entry: Mapping[str, Any] | None) -> str | None:
    """Which server a ``/v1/models`` entry comes from, by the marks each puts on it: vLLM
    (``owned_by: "vllm"``, ``max_model_len``), OpenRouter (``context_length`` beside
    ``top_provider``/``pricing``/``architecture``), llama.cpp (``owned_by: "llamacpp"``, a
    ``meta`` with ``n_ctx_train``), LM Studio (``owned_by: "organization_owner"``), Ollama
    (``owned_by`` is the name's namespace: ``"library"`` for a plain ``qwen3:8b``). None: a
    server that is none of these (a hosted provider), asked nothing more."""
    if not isinstance(entry, Mapping):
        return None
    owner = str(entry.get("owned_by") or "").lower()
    ident = str(entry.get("id") or "")
    if owner == "vllm" or "max_model_len" in entry:
        return "vllm"
    if owner == "llamacpp" or isinstance(entry.get("meta"), Mapping):
        return "llamacpp"
    if owner == "organization_owner":
        return "lmstudio"
    if any(key in entry for key in ("top_provider", "pricing", "architecture", "canonical_slug")):
        return "openrouter"
    namespace = ident.rsplit("/", 2)[-2] if ident.count("/") >= 1 else "library"
    if owner in ("library", "ollama") or (":" in ident and owner and owner == namespace):
        return "ollama"
    return None
