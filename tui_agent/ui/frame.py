"""The app's frame around the chat and the prompt: its title bar (``AppHeader``), its
footer (``AppFooter``) and its main screen. Drawn in the first frame: nothing of the core."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual._compositor import Compositor, ReflowResult
from textual.events import Click
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer


class AppHeader(Widget):
    """The title bar as one widget (Textual's Header is four): the palette icon at the left
    (a click opens the command palette) and "title — folder" in the middle."""

    DEFAULT_CSS = """
    AppHeader { dock: top; width: 100%; height: 1; background: $panel; color: $foreground; }
    """

    ICON = " ⭘"
    SIDES = (8, 10)  # the icon's and the right-hand margin's widths, as in Textual's Header

    def on_mount(self) -> None:
        def changed() -> None:
            self.refresh()

        self.watch(self.app, "title", changed, init=False)
        self.watch(self.app, "sub_title", changed, init=False)

    def render(self) -> Text:
        left, right = self.SIDES
        middle = max(self.size.width - left - right, 0)
        title = Text(self.app.title, no_wrap=True)
        if self.app.sub_title:
            title.append(" — ").append(self.app.sub_title, style="dim")
        title.truncate(middle, overflow="ellipsis")
        title.align("center", middle)
        return Text.assemble(self.ICON.ljust(left), title, " " * right)

    async def on_click(self, event: Click) -> None:
        if event.x < self.SIDES[0]:
            event.stop()
            await self.run_action("app.command_palette")


class AppFooter(Footer):
    """The footer without the rebuilds that change nothing. Textual's re-creates all its
    keys on every bindings signal, and three come before the first frame (mount, focus,
    screen stack) with the same keys; each rebuild restyles every key several times."""

    def __init__(self) -> None:
        super().__init__()
        self._composed: tuple[Any, ...] | None = None

    def _shown(self) -> tuple[Any, ...]:
        """Everything ``Footer.compose`` reads."""
        bindings = tuple(
            (key, active.binding, active.enabled, active.tooltip)
            for key, active in self.screen.active_bindings.items()
        )
        flags = (self.compact, self.show_command_palette, self.combine_groups)
        return (bindings, flags, self.app.ENABLE_COMMAND_PALETTE)

    async def recompose(self) -> None:
        shown = self._shown()
        if self.children and shown == self._composed:
            return
        self._composed = shown
        await super().recompose()


class MainScreen(Screen[None]):
    """The default screen. The prompt takes the focus as the screen is composed: with the
    default (the first focusable widget, the chat) and then the prompt, the focus moved
    twice and the footer re-built its keys for each move before the first frame."""

    AUTO_FOCUS = "#prompt"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compositor = LayoutCompositor()


class LayoutCompositor(Compositor):
    """Textual's compositor, but a layout leaves the map of every widget it builds marked
    as current.

    A layout (``reflow``) arranges every widget, on screen or not, and keeps that map. Before
    it, Textual marks the map stale when a widget that is not on screen asks to be drawn
    again (``update_widgets``: a block just mounted, one folded away), and a scroll
    (``reflow_visible``) marks it stale too; ``reflow`` never marks its new map current. So
    the first question about a widget's place or size after such a layout (and the layout
    itself asks it of every widget whose size changed) arranged the whole screen a second
    time. A streamed reply mounts blocks on most updates and folds some away: most updates
    laid the screen out twice, and the more blocks the chat shows the more that cost
    (tests/ui/test_layout_compositor.py counts the arrangements)."""

    def reflow(self, parent: Widget, size: Size) -> ReflowResult:
        result = super().reflow(parent, size)
        self._full_map_invalidated = False  # the map reflow built covers every widget
        return result
