"""``/cost``: what the session's tokens cost, by model (subagents included). The tally
starts at the first load, so every request counts (``tui_agent.pricing``)."""

from __future__ import annotations

import tui_agent
from tui_agent.pricing import Cost, dollars, tally


@tui_agent.setup("cost")
def cost(session: tui_agent.Session) -> None:
    counted = tally(session)

    @session.commands.register(
        "cost",
        description="What this session's tokens cost, by model (subagents included)",
    )
    def cost_command(args: str | None) -> None:
        session.output.say(itemised(counted.cost(session.config.settings)))


def itemised(found: Cost) -> str:
    """One line per model: tokens, who used them, its cost or why none; then the total."""
    if not found.lines:
        return "No tokens used yet in this session."
    lines = []
    for line in found.lines:
        tokens = line.tokens
        cached = f" ({tokens.cached:,} cached)" if tokens.cached else ""
        used = (
            f"{tokens.prompt:,} in{cached}, {tokens.completion:,} out — {', '.join(tokens.agents)}"
        )
        if line.cost is not None:
            what = dollars(line.cost)
        elif line.problem:
            what = f"no price: {line.problem}"
        else:
            what = f'no price known: set [models."{line.model}"] price = {{input = …, output = …}}'
        lines.append(f"{line.model}: {used}: {what}")
    if found.total is None:
        lines.append("Total: unknown (no model has a price)")
    else:
        lines.append(
            f"Total: {dollars(found.total)}"
            + ("" if found.complete else " for the models with a price (the others unknown)")
        )
    return "\n".join(lines)
