"""Deterministic Markdown replies of an exact token count.

A "token" is one streamed chunk of the testing kit with ``chunk_words=1``: the kit splits a
reply on single spaces, so the token count of ``text`` is ``len(text.split(" "))``.
"""

from __future__ import annotations

import random

WORDS = (
    "the agent reads a file and then edits the function so that tests pass while the user "
    "watches every tool call stream into the chat with its arguments result and timing "
    "before the model explains what changed and why it matters for the next step of work"
).split()

CODE = [
    "def {name}(items, limit=10):",
    '    """Return the first {n} items that pass the check."""',
    "    found = []",
    "    for index, item in enumerate(items):",
    "        if check(item) and index < limit:",
    "            found.append(item)",
    "    return found",
]


def count_tokens(text: str) -> int:
    return len(text.split(" "))


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 18))]
    words[0] = words[0].capitalize()
    if rng.random() < 0.3:
        i = rng.randrange(len(words))
        words[i] = f"`{words[i]}`"
    if rng.random() < 0.3:
        i = rng.randrange(len(words))
        words[i] = f"**{words[i]}**"
    return " ".join(words) + "."


def _block(rng: random.Random, number: int) -> str:
    kind = number % 5
    if kind == 0:
        return f"## Step {number // 5 + 1}\n\n" + " ".join(_sentence(rng) for _ in range(3))
    if kind == 1:
        return "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(3, 6)))
    if kind == 2:
        lines = [line.format(name=f"pick_{number}", n=rng.randint(2, 9)) for line in CODE]
        return "```python\n" + "\n".join(lines) + "\n```"
    if kind == 3:
        return "\n".join(f"{i}. {_sentence(rng)}" for i in range(1, rng.randint(3, 5) + 1))
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 5)))


def markdown_reply(tokens: int, seed: int = 6) -> str:
    """Prose, headings, bullet and numbered lists and code fences; exactly ``tokens`` tokens."""
    rng = random.Random(seed)
    blocks: list[str] = []
    used = 0
    number = 0
    while True:
        block = _block(rng, number)
        # "\n\n" between blocks glues a block's last token to the next one's first
        cost = count_tokens(block) - (1 if blocks else 0)
        if used + cost > tokens - 20:
            break
        blocks.append(block)
        used += cost
        number += 1
    text = "\n\n".join(blocks)
    missing = tokens - count_tokens(text)
    if missing > 0:
        tail = [rng.choice(WORDS) for _ in range(missing + 1)]
        text += "\n\n" + " ".join(tail) + "."
    assert count_tokens(text) == tokens, (count_tokens(text), tokens)
    return text
