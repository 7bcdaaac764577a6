"""What the tokens cost: a price per million input, output and cached input tokens per
model, and the tally of one session's tokens by model (its subagents' included).

A model's price is its ``[models."X"] price = {input = 3.0, output = 15.0, cached = 0.3}``
(US dollars per million tokens; ``cached`` defaults to ``input``), else the shipped table
below for a few well-known hosted models, and only when the server is not on this machine
or the local network: a local model costs nothing anyone can know, so it has no price, and
no price means no cost shown (never a cost of 0).

Cached tokens are the part of the prompt the server read from its cache (OpenAI's
``usage.prompt_tokens_details.cached_tokens``): billed at ``cached`` instead of ``input``.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from ..protocol import events as ev

MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cached: float | None = None  # None: cached input costs what input does

    def cost(self, prompt: int, completion: int, cached: int = 0) -> float:
        cached = min(cached, prompt)
        cached_price = self.input if self.cached is None else self.cached
        return (
            (prompt - cached) * self.input + cached * cached_price + completion * self.output
        ) / MILLION


# The vendors' list prices (USD per million tokens: input, output, cached input) as
# published on their pricing pages in 2025; a [models."X"] price overrides them.
SHIPPED: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "o3": Price(2.00, 8.00, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "claude-opus-4-1": Price(15.00, 75.00, 1.50),
    "claude-sonnet-4-5": Price(3.00, 15.00, 0.30),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10),
}
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")  # gpt-4o-2024-08-06, claude-…-20250929
PRICE_SHAPE = "a table of prices in US dollars per million tokens: {input = 3.0, output = 15.0}"


def is_local(base_url: str | None) -> bool:
    """The server runs on this machine or the local network (llama.cpp, Ollama, vLLM…)."""
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    if host in ("localhost", "") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def configured(model: str, settings: Mapping[str, Any]) -> tuple[Price | None, str | None]:
    """The ``[models."model"] price`` setting, and what is wrong with it (then no price)."""
    models = settings.get("models")
    table = models.get(model) if isinstance(models, Mapping) else None
    if not isinstance(table, Mapping) or "price" not in table:
        return None, None
    value = table["price"]
    where = f'[models."{model}"] price'
    if not isinstance(value, Mapping):
        return None, f"{where} must be {PRICE_SHAPE}"
    unknown = sorted(set(value) - {"input", "output", "cached"})
    if unknown:
        return None, f"{where} has {', '.join(unknown)}: only input, output and cached"
    for key in ("input", "output"):
        if not _number(value.get(key)):
            return None, f"{where} needs {key} = a number of dollars per million tokens, 0 or more"
    cached = value.get("cached")
    if cached is not None and not _number(cached):
        return None, f"{where}.cached must be a number of dollars per million tokens, 0 or more"
    return Price(float(value["input"]), float(value["output"]), cached), None


def price_for(model: str, settings: Mapping[str, Any]) -> tuple[Price | None, str | None]:
    """The price of ``model`` (configured, else shipped unless the server is local), and a
    problem with its setting, if any."""
    price, problem = configured(model, settings)
    if price is not None or problem is not None:
        return price, problem
    if is_local(settings.get("base_url")):
        return None, None
    found = SHIPPED.get(model) or SHIPPED.get(_SNAPSHOT.sub("", model))
    return found, None


@dataclass
class Tokens:
    """One model's tokens in a session, and who used them ("main", subagents' names)."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0
    agents: list[str] = field(default_factory=list)

    def add(self, prompt: int, completion: int, cached: int, agent: str) -> None:
        self.prompt += prompt
        self.completion += completion
        self.cached += cached
        if agent not in self.agents:
            self.agents.append(agent)


@dataclass(frozen=True)
class Line:
    """One model's row of ``/cost``: its tokens and cost (None: no price known)."""

    model: str
    tokens: Tokens
    cost: float | None
    problem: str | None = None


@dataclass(frozen=True)
class Cost:
    """The session's cost: ``total`` of the priced models (None when none is priced),
    ``complete`` when every model that used tokens has a price."""

    lines: list[Line]
    total: float | None
    complete: bool

    def label(self) -> str:
        """For the status: "$0.0123", "≥ $0.0123" when some model has no price, "" when
        none has (never "$0")."""
        if self.total is None:
            return ""
        return ("" if self.complete else "≥ ") + dollars(self.total)

    def to_dict(self) -> dict[str, Any]:
        return {
            "usd": None if self.total is None else round(self.total, 6),
            "complete": self.complete,
            "models": {
                line.model: {
                    "prompt_tokens": line.tokens.prompt,
                    "completion_tokens": line.tokens.completion,
                    "cached_tokens": line.tokens.cached,
                    "agents": list(line.tokens.agents),
                    "usd": None if line.cost is None else round(line.cost, 6),
                }
                for line in self.lines
            },
        }


def dollars(amount: float) -> str:
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"


class Tally:
    """The session's tokens by model, from its events: the main agent's ``UsageUpdate``
    (a running sum: the increase counts) and each subagent's, wrapped in ``SubagentEvent``
    (its model from its ``SubagentStarted``), grandchildren included."""

    def __init__(self, model: Callable[[], str]) -> None:
        self.model = model  # the session's own agent's model now
        self.by_model: dict[str, Tokens] = {}
        self._last: dict[tuple[str, ...], ev.UsageUpdate] = {}
        self._models: dict[tuple[str, ...], tuple[str, str]] = {}  # scope -> (model, agent)

    def heard(self, event: object, scope: tuple[str, ...] = ()) -> None:
        if isinstance(event, ev.SubagentEvent):
            self.heard(event.event, (*scope, event.call_id))
        elif isinstance(event, ev.SubagentStarted):
            self._models[(*scope, event.call_id)] = (event.model or self.model(), event.agent)
        elif isinstance(event, ev.UsageUpdate):
            before = self._last.get(scope, ev.UsageUpdate(0, 0, 0))
            self._last[scope] = event
            model, agent = (
                self._models.get(scope, (self.model(), "main"))
                if scope
                else (
                    self.model(),
                    "main",
                )
            )
            self.by_model.setdefault(model or "(unnamed model)", Tokens()).add(
                max(0, event.prompt_tokens - before.prompt_tokens),
                max(0, event.completion_tokens - before.completion_tokens),
                max(0, event.cached_tokens - before.cached_tokens),
                agent,
            )

    def cost(self, settings: Mapping[str, Any]) -> Cost:
        lines = []
        for model, tokens in self.by_model.items():
            price, problem = price_for(model, settings)
            amount = (
                None
                if price is None
                else price.cost(tokens.prompt, tokens.completion, tokens.cached)
            )
            lines.append(Line(model, tokens, amount, problem))
        priced = [line.cost for line in lines if line.cost is not None]
        return Cost(lines, sum(priced) if priced else None, len(priced) == len(lines))
