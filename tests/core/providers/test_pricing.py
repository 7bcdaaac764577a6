"""Issue 35: the cost of a session. Prices per million input, output and cached tokens
(``[models."X"] price``, a shipped table for hosted models, none for a local server); the
tally by model from the real loop's usage (the real ``openai`` client against the testing
kit's server, a subagent included); ``/cost``; the status; headless ``--json``. Each
figure is computed by hand from the usage the fake server reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ALLOW_ALL, write

from tui_agent import create_session
from tui_agent.core.util.paths import user_config_dir
from tui_agent.pricing import SHIPPED, Price, price_for, tally
from tui_agent.testing import Call, FakeOpenAI, Reply

PRICE = '\n[models."m"]\nprice = { input = 3.0, output = 15.0, cached = 0.3 }\n'


def config(text: str) -> None:
    write(user_config_dir() / "config.toml", ALLOW_ALL + text)


@pytest.mark.parametrize(
    ("model", "settings", "expected"),
    [
        ("gpt-4o", {"base_url": "https://api.openai.com/v1"}, SHIPPED["gpt-4o"]),
        ("gpt-4o-2024-08-06", {}, SHIPPED["gpt-4o"]),  # a dated snapshot
        ("gpt-4o", {"base_url": "http://127.0.0.1:8080/v1"}, None),  # local: no price
        ("gpt-4o", {"base_url": "http://192.168.1.20:11434/v1"}, None),
        ("gpt-4o", {"base_url": "http://localhost:1234/v1"}, None),
        ("llama3", {"base_url": "https://api.example.com/v1"}, None),  # unknown: none
        (
            "llama3",
            {"base_url": "http://localhost:1234/v1",
             "models": {"llama3": {"price": {"input": 0.1, "output": 0.2}}}},
            Price(0.1, 0.2),  # configured wins, local or not
        ),
        (
            "gpt-4o",
            {"models": {"gpt-4o": {"price": {"input": 1, "output": 2, "cached": 0.5}}}},
            Price(1.0, 2.0, 0.5),
        ),
    ],
)  # fmt: skip
def test_a_models_price(model: str, settings: dict[str, object], expected: Price | None) -> None:
    assert price_for(model, settings) == (expected, None)


@pytest.mark.parametrize(
    ("price", "problem"),
    [
        ("cheap", 'must be a table of prices'),
        ({"input": 1}, "needs output = a number"),
        ({"input": -1, "output": 1}, "needs input = a number"),
        ({"input": 1, "output": 1, "cache": 1}, "has cache: only input, output and cached"),
        ({"input": 1, "output": 1, "cached": "x"}, ".cached must be a number"),
    ],
)  # fmt: skip
def test_a_wrong_price_is_a_clear_problem_and_no_price(price: object, problem: str) -> None:
    found, said = price_for("x", {"models": {"x": {"price": price}}})
    assert found is None and said is not None and problem in said and '[models."x"]' in said


def test_cached_tokens_cost_the_cached_price_or_the_input_price() -> None:
    assert Price(3.0, 15.0, 0.3).cost(1_000_000, 1_000_000, 400_000) == pytest.approx(
        0.6 * 3 + 0.4 * 0.3 + 15
    )
    assert Price(3.0, 15.0).cost(1_000_000, 0, 400_000) == pytest.approx(3.0)


async def test_the_tally_matches_a_hand_computation_subagent_included(project: Path) -> None:
    config(PRICE)
    parent = [
        Reply(calls=[Call("task", {"prompt": "look", "agent": "general"})], usage=(1000, 100),
              cached_tokens=400),
        Reply("ok", usage=(1500, 50), cached_tokens=1000),
    ]  # fmt: skip
    with FakeOpenAI(parent) as server:
        server.for_agent("general", [Reply("found", usage=(300, 30))])
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        await session.turn("go")
    cost = tally(session).cost(session.config.settings)
    (line,) = cost.lines
    assert (line.model, line.tokens.prompt, line.tokens.completion, line.tokens.cached) == (
        "m", 2800, 180, 1400,
    )  # fmt: skip
    assert line.tokens.agents == ["main", "general"]
    # (2800 - 1400) × $3 + 1400 × $0.30 + 180 × $15, per million
    assert cost.total == pytest.approx(7320 / 1_000_000)
    assert cost.complete and cost.label() == "$0.0073"
    assert await session.commands.run_line("/cost")
    said = session.output.history[-1].text
    assert "m: 2,800 in (1,400 cached), 180 out — main, general: $0.0073" in said
    assert said.endswith("Total: $0.0073")


async def test_an_unknown_model_shows_no_cost_not_zero(project: Path) -> None:
    with FakeOpenAI([Reply("hi")]) as server:
        session = create_session(project, base_url=server.base_url, model="llama3", trust=True)
        assert tally(session).cost(session.config.settings).label() == ""  # nothing used yet
        await session.turn("go")
    cost = tally(session).cost(session.config.settings)
    assert cost.total is None and cost.label() == ""
    assert cost.to_dict()["usd"] is None
    assert await session.commands.run_line("/cost")
    said = session.output.history[-1].text
    assert 'llama3: 10 in, 5 out — main: no price known: set [models."llama3"] price' in said
    assert "Total: unknown" in said and "$0" not in said


async def test_a_subagent_on_an_unpriced_model_makes_the_total_a_lower_bound(
    project: Path,
) -> None:
    config(PRICE)
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "scout.md").write_text(
        "---\nname: scout\ndescription: looks\nmodel: local-scout\n---\nLook around.\n"
    )
    parent = [Reply(calls=[Call("task", {"prompt": "look", "agent": "scout"})]), Reply("ok")]
    with FakeOpenAI(parent) as server:
        server.for_agent("scout", [Reply("seen", usage=(100, 10))])
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        await session.turn("go")
    cost = tally(session).cost(session.config.settings)
    assert {line.model: line.tokens.agents for line in cost.lines} == {
        "m": ["main"],
        "local-scout": ["scout"],
    }
    assert cost.total == pytest.approx((20 * 3 + 10 * 15) / 1_000_000)  # m's two replies
    assert not cost.complete and cost.label() == "≥ $0.0002"


def test_headless_json_reports_the_cost_on_done(project: Path, fake_openai: FakeOpenAI) -> None:
    config(PRICE)
    fake_openai.script += [Reply("hi", usage=(2000, 100), cached_tokens=1000)]
    run = subprocess.run(
        [sys.executable, "-m", "tui_agent", "run", "--json", "--base-url", fake_openai.base_url,
         "--model", "m", "hello"],
        cwd=project, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    done = [e for e in map(json.loads, run.stdout.splitlines()) if e["type"] == "done"]
    (last,) = done
    # 1000 × $3 + 1000 × $0.30 + 100 × $15, per million
    assert last["cost"]["usd"] == pytest.approx(0.0048)
    assert last["cost"]["models"]["m"]["cached_tokens"] == 1000
    assert last["cost"]["complete"] is True
