"""The app, driven by Textual's ``Pilot`` (Textual is imported only when these are used)."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.pilot import Pilot
    from textual.widget import Widget

    from ..core.session.session import Session
    from ..ui.app import TuiAgentApp
    from ..ui.prompt import PromptArea

# -- the app, driven by Pilot -----------------------------------------------------------------


@contextlib.asynccontextmanager
async def run_app(
    session: Session, *, size: tuple[int, int] = (120, 40)
) -> AsyncIterator[Pilot[Any]]:
    """The real app on ``session``, headless: ``async with run_app(s) as pilot``
    (``pilot.app`` is the app). The session's plugins load after the first frame, as in a
    terminal; ``wait_for(pilot, lambda: session.extensions.loaded)`` waits for them."""
    from ..ui.app import TuiAgentApp

    app = TuiAgentApp(session)
    async with app.run_test(size=size) as pilot:
        yield pilot


async def wait_for(pilot: Pilot[Any], condition: Callable[[], Any], timeout: float = 5.0) -> None:
    """Let the app run until ``condition()`` is true; ``AssertionError`` after ``timeout``
    seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {condition}")
        await pilot.pause(0.02)


async def wait_for_prompt(pilot: Pilot[Any], timeout: float = 5.0) -> PromptArea:
    """The app's prompt, once it is there: the first frame shows a stand-in (it keeps the
    keys pressed meanwhile) and the prompt takes its place right after."""
    app: Any = pilot.app
    await wait_for(pilot, lambda: app.prompt_ready, timeout)
    prompt: PromptArea = app.prompt
    return prompt


async def type_keys(pilot: Pilot[Any], text: str) -> None:
    """Type ``text`` into the focused widget one key at a time, as a user would."""
    names = {" ": "space", "\n": "ctrl+j", "\t": "tab"}
    await pilot.press(*(names.get(char, char) for char in text))


async def send(pilot: Pilot[Any], text: str) -> None:
    """Put ``text`` in the prompt and press Enter, the way a user sends a message or a
    ``/command`` (faster than typing it key by key; ``type_keys`` does that)."""
    prompt = await wait_for_prompt(pilot)
    prompt.focus()
    prompt.text = text
    prompt.move_cursor(prompt.document.end)
    await pilot.pause()
    await pilot.press("enter")


def _shown(widget: Widget) -> Iterator[str]:
    """What a widget of the chat and its children show as text, in order."""
    from textual.widgets import Markdown, Static

    if isinstance(widget, Markdown):  # its source, not its blocks one by one
        yield widget.source
        return
    if isinstance(widget, Static):
        plain = getattr(widget.visual, "plain", None)
        if not isinstance(plain, str):  # a Rich renderable (a result's JSON)
            from rich.console import Console

            console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
            console.print(widget.content)
            plain = console.export_text()
        yield plain
    for child in widget.children:
        yield from _shown(child)


def chat_text(app: TuiAgentApp) -> str:
    """Everything the chat holds as text, in order: user messages, replies, thinking,
    tool calls and their results, notes (folded parts included)."""
    return "\n".join(_shown(app.chat))


async def wait_for_text(pilot: Pilot[Any], text: str, timeout: float = 5.0) -> str:
    """Wait until the chat shows ``text``; returns the chat's text."""
    app: Any = pilot.app
    await wait_for(pilot, lambda: text in chat_text(app), timeout)
    return chat_text(app)


async def turn_over(pilot: Pilot[Any], timeout: float = 10.0) -> None:
    """Wait until the running turn (if any) has ended, what was queued meanwhile has been
    sent and answered, and the app is idle."""
    app: Any = pilot.app
    await wait_for(pilot, lambda: not app.session.busy, timeout)
    await app.workers.wait_for_complete()
    await wait_for(pilot, lambda: not (app.queued or app.working or app.session.busy), timeout)
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _working(pilot: Pilot[Any], what: str) -> Any:
    app: Any = pilot.app
    if not app.working:
        raise AssertionError(f"{what}() is for while a turn runs; nothing runs (use send())")
    return app


async def queue(pilot: Pilot[Any], text: str) -> None:
    """While a turn runs: send ``text`` as Enter does then. It waits in ``app.queued``
    (shown dimmed above the prompt) and is sent when the turn ends, after what was queued
    before it. ``AssertionError`` when no turn runs (``send`` sends at once)."""
    await _working(pilot, "queue")
    await send(pilot, text)


async def steer(pilot: Pilot[Any], text: str) -> None:
    """While a turn runs: send ``text`` into it as Ctrl+S does. The model gets it at the
    turn's next step (after the tool results, before the next request), or, when the reply
    streaming now has no tool calls, as the next turn's prompt. Returns once the session
    holds it (``session.conversation.steering``) or has delivered it. ``AssertionError``
    when no turn runs."""
    app = await _working(pilot, "steer")
    prompt = await wait_for_prompt(pilot)
    prompt.focus()
    prompt.text = text
    prompt.move_cursor(prompt.document.end)
    await pilot.pause()
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: text not in app._steering)  # expanded, then handed over
