"""The testing kit's fake OpenAI server, run in a process of its own for stream_render.

Its CPU then never counts against the app. A reply can be *gated*: once it has sent
``n`` text tokens, for each ``n`` in ``gates``, the server sets ``arrived[n]`` and holds
the rest until the bench process sets ``gates[n]``. The bench lets the UI catch up and
reads the CPU clock at exactly 0, 1,000, 19,000 and 20,000 tokens (the last gate holds
the finish chunk); between gates the reply streams at full speed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

GATE_TIMEOUT = 300.0


def serve(
    replies: list[tuple[str, bool]],
    gates: dict[int, Any],
    arrived: dict[int, Any],
    conn: Any,
    stop: Any,
) -> None:
    """``replies``: (text, gated) in request order. Sends ``base_url`` on ``conn``."""
    from tui_agent.testing import FakeOpenAI, Reply

    script = [Reply(text, chunk_words=1, usage=(10, len(text.split(" ")))) for text, _ in replies]

    class GatedFake(FakeOpenAI):
        def chunks(self, reply: Reply, model: str) -> Iterator[dict[str, Any]]:
            sent = 0  # text tokens sent so far
            held: set[int] = set()
            # the request it answers (1-based): the script is answered in order
            gated = reply.serial is not None and replies[reply.serial - 1][1]
            for chunk in super().chunks(reply, model):
                if gated and sent in gates and sent not in held:
                    held.add(sent)
                    arrived[sent].set()
                    gates[sent].wait(GATE_TIMEOUT)
                yield chunk
                choices = chunk.get("choices") or [{}]
                if choices[0].get("delta", {}).get("content"):
                    sent += 1

    with GatedFake(script) as server:
        conn.send(server.base_url)
        stop.wait()
