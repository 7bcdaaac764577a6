"""The chat's Markdown widgets, in their own module so that the first frame goes without
them: Textual's ``Markdown`` brings ``markdown_it``, ``pygments`` and the tree widget (about
60 ms of imports). ``ui.chat`` and ``blocks.reply`` import this on the first Markdown
they show (``ui.chat`` still exports both names)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.await_complete import AwaitComplete
from textual.content import Content
from textual.dom import DOMNode
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

if TYPE_CHECKING:
    from textual.css.styles import RenderStyles


class SharedStyles:
    """A Markdown block whose inline styles (``em``, ``strong``, ``s``, ``code_inline``:
    Textual's component classes) are worked out once for all blocks of its kind, not once
    per block.

    Textual gives every widget with component classes one virtual node per class, each
    matched against the whole stylesheet whenever the widget's styles are applied: four
    more style applications and four more nodes for every paragraph, heading and list item.
    A long reply is thousands of blocks; those nodes were over half of the chat's DOM
    nodes, and their styling about a tenth of the CPU a streamed reply costs (bench/
    README.md). The styles depend only on the block's kind, its pseudo-classes (dark,
    light, ansi…) and the stylesheet, so they are shared on those, and worked out again
    when the stylesheet is parsed again (a theme change)."""

    _SHARED: ClassVar[dict[tuple[Any, ...], tuple[object, dict[str, RenderStyles]]]] = {}
    _component_styles: dict[str, RenderStyles]

    @classmethod
    def _get_component_classes(cls) -> frozenset[str]:
        return frozenset()  # the stylesheet makes no virtual nodes for the block

    def get_component_styles(self, *names: str) -> RenderStyles:
        self._component_styles = self._shared_styles()
        return super().get_component_styles(*names)  # type: ignore[misc, no-any-return]

    def _shared_styles(self) -> dict[str, RenderStyles]:
        block: Any = self
        stylesheet = block.app.stylesheet
        key = (type(self), block._pseudo_classes_cache_key, type(block._markdown), stylesheet)
        rules = stylesheet.rules  # a new list when the stylesheet is parsed again
        shared = self._SHARED.get(key)
        if shared is not None and shared[0] is rules:
            return shared[1]
        styles: dict[str, RenderStyles] = {}
        for component in sorted(MarkdownBlock._get_component_classes()):
            node = DOMNode(classes=component)  # what Textual's stylesheet does per block
            node._attach(block)
            stylesheet.apply(node, animate=False)
            styles[component] = node.styles
        self._SHARED[key] = (rules, styles)
        return styles


class Fence(SharedStyles, MarkdownFence):  # type: ignore[misc]  # lru_cache classmethod
    """A code block coloured once the app's first frame is on screen: the first block of
    a language makes pygments build its lexer (~80 ms for Python), which a resumed
    conversation's first frame need not wait for. Until then the code shows plain."""

    AFTER = 0.05  # seconds after the first frame: after what the app does then (``_load``)

    def __init__(self, markdown: Markdown, token: Any, code: str) -> None:
        self._plain = not getattr(markdown.app, "first_frame_drawn", True)
        super().__init__(markdown, token, code)

    def highlight(  # type: ignore[override]
        self, code: str, language: str, ansi: bool = False, dark: bool = False
    ) -> Content:
        if self._plain:
            return Content(code)
        return super().highlight(code, language, ansi=ansi, dark=dark)

    def on_mount(self) -> None:
        if self._plain:
            self._colour()

    def _colour(self, rounds: int = 100) -> None:
        """Coloured ``AFTER`` seconds after the first frame (every ``AFTER`` seconds it is
        looked for, ``rounds`` times at most)."""
        if rounds > 0 and not getattr(self.app, "first_frame_drawn", True):
            self.set_timer(self.AFTER, lambda: self._colour(rounds - 1))
        else:
            self.set_timer(self.AFTER, self._coloured)

    def _coloured(self) -> None:
        self._plain = False
        self.notify_style_update()  # Textual's: highlight again and show it


def _shared(block: type[MarkdownBlock]) -> type[MarkdownBlock]:
    """``block`` with ``SharedStyles`` (same name: the stylesheet matches it as before)."""
    if issubclass(block, SharedStyles):
        return block
    made: type[MarkdownBlock] = type(
        block.__name__, (SharedStyles, block), {"__module__": __name__}
    )
    return made


_TEXTUAL: dict[str, type[MarkdownBlock]] = {**Markdown.BLOCKS, "fence": Fence, "code_block": Fence}
BLOCKS: dict[str, type[MarkdownBlock]] = {name: _shared(block) for name, block in _TEXTUAL.items()}


class NoteMarkdown(Markdown):
    BLOCKS = BLOCKS
    DEFAULT_CSS = """
    NoteMarkdown { margin: 0 0 0 1; }
    """


class ReplyMarkdown(Markdown):
    BLOCKS = BLOCKS
    DEFAULT_CSS = """
    ReplyMarkdown { margin: 0 0 0 1; padding: 0; }
    ReplyMarkdown.incomplete { margin: 0; border-left: outer $error 60%; }
    """

    _updating: AwaitComplete | None = None

    def update(self, markdown: str) -> AwaitComplete:
        """Textual's, made safe to ``append`` to (a streamed reply's first segment is made
        with its text, then appended to). Textual's update leaves the next append to
        re-parse from the document's last *line*, not from where its last block starts: a
        list or a paragraph over several lines was cut there, and its earlier lines lost
        (one bullet of two). Here the next append starts at the last block, and an append
        made while the update still parses waits for it."""
        done = super().update(markdown)

        async def settled() -> None:
            await done
            blocks = [child for child in self.children if isinstance(child, MarkdownBlock)]
            self._last_parsed_line = blocks[-1].source_range[0] if blocks else 0

        self._updating = AwaitComplete(settled())
        return self._updating

    def append(self, markdown: str) -> AwaitComplete:
        updating = self._updating
        if updating is None or updating.is_done:
            return super().append(markdown)

        async def after_the_update() -> None:
            await updating
            await super(ReplyMarkdown, self).append(markdown)

        return AwaitComplete(after_the_update())
