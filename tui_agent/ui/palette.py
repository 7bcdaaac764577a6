"""Command palette provider: every registered slash command, and its completions."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from ..core.session.session import Session


class PaletteApp(Protocol):
    """What the palette needs of the app (``TuiAgentApp``, which imports this module)."""

    def run_line(self, line: str) -> None: ...

    async def wait_for_session(self) -> Session: ...


def _help(description: str) -> str | None:
    """The palette reads help as markup: a description's ``[FILE]`` is text, not a tag
    (``textual.markup.escape`` leaves upper-case ``[FILE]`` as it is, so every ``[``)."""
    return description.replace("[", "\\[") if description else None


class SlashCommands(Provider):
    """Reads the registry at every search, so it follows ``/reload`` and new plugins. A
    palette opened before the app has made its session waits for it (``wait_for_session``)."""

    @property
    def agent_app(self) -> PaletteApp:
        return cast("PaletteApp", self.app)

    def _run(self, line: str) -> None:
        self.agent_app.run_line(line)

    async def discover(self) -> Hits:
        session = await self.agent_app.wait_for_session()
        for name, description in session.commands:
            yield DiscoveryHit(name, partial(self._run, name), help=_help(description))

    async def search(self, query: str) -> Hits:
        commands = (await self.agent_app.wait_for_session()).commands
        text = query.lstrip()
        exact = text.startswith("/") and commands.get(text[1:].strip()) is not None
        if text.startswith("/") and (" " in text or exact):
            name, _, partial_arg = text[1:].partition(" ")
            name = name.strip()
            command = commands.get(name)
            if command is None:
                return
            for completion in commands.completions_for(name, partial_arg):
                line = f"/{name} {completion}"
                yield Hit(
                    100.0 if " " in text else 0.01,  # "/tools" itself stays the first hit
                    self.matcher(query).highlight(line),
                    partial(self._run, line),
                    text=line,
                    help=_help(command.description),
                )
            if " " in text:
                return
        matcher = self.matcher(query)
        for name, description in commands:
            score = matcher.match(f"{name} {description}")
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(name),
                    partial(self._run, name),
                    text=name,
                    help=_help(description),
                )
