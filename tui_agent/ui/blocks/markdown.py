"""The chat's Markdown widgets, in their own module so that the first frame goes without
them: Textual's ``Markdown`` brings ``markdown_it``, ``pygments`` and the tree widget (about
60 ms of imports). ``ui.chat`` and ``blocks.reply`` import this on the first Markdown
they show (``ui.chat`` still exports both names)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from textual.await_complete import AwaitComplete
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownFence,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
)

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
        # a copy: Textual empties a widget's dict when it is removed (a list or heading
        # an append replaces), which emptied the shared one for every block of its kind
        self._component_styles = dict(self._shared_styles())
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


def _shape(block: object) -> tuple[Any, ...]:
    """What ``block`` (made by the parser, not mounted yet) draws: its kind, classes,
    text and styles, code, bullet, and the same of every block it holds. Two blocks of one
    shape draw the same; a block of a kind not known here has a shape of its own."""
    if not isinstance(block, MarkdownBlock):
        return (id(block),)
    content = block._content
    return (
        type(block),
        tuple(sorted(block.classes)),
        getattr(block, "bullet", None),
        getattr(block, "code", None),
        getattr(block, "lexer", None),
        content.plain,
        tuple(content.spans),
        tuple(_shape(child) for child in block._blocks),
    )


class StreamedList:
    """A list that grows in place while a reply streams into it, in fewer widgets.

    A streamed reply's ``append`` parses again from its last block and hands that block
    the new one (``_update_from_block``); Textual's lists remove themselves and mount the
    new one whole: every item of a list being written was made, styled, laid out and
    drawn again at every update (~10 a second). Here the rows whose items are unchanged
    (by ``_shape``, their bullet included) stay, and only the rest are replaced by the new
    list's rows. A list of another kind is replaced whole, as before.

    A row is Textual's: a ``Horizontal`` of the bullet and a ``Vertical`` of the item's
    blocks, numbered as Textual numbers them; an item that is one paragraph (most are)
    has the paragraph in the ``Vertical``'s place, which looks the same (list paragraphs
    have no margin) and is one widget fewer to make, style and lay out for each item
    (``tests/ui/test_markdown_styles.py`` compares them with Textual's)."""

    _shapes: list[tuple[Any, ...]] | None = None

    def _numbered(self) -> list[tuple[str, MarkdownListItem]]:
        """Each item of this (unmounted) list and its bullet, as Textual's ``compose``
        gives them."""
        blocks: list[Any] = self._blocks  # type: ignore[attr-defined]
        items = [(n, b) for n, b in enumerate(blocks) if isinstance(b, MarkdownListItem)]
        if not isinstance(self, MarkdownOrderedList):
            return [(item.bullet, item) for _, item in items]
        start = 1
        if blocks and isinstance(blocks[0], MarkdownOrderedListItem):
            with contextlib.suppress(ValueError):
                start = int(blocks[0].bullet)
        size = max((len(f"{start + n}. ") for n, _ in items), default=0)
        return [(f"{start + n}. ".rjust(size + 1), item) for n, item in items]

    @staticmethod
    def _row_shapes(numbered: list[tuple[str, MarkdownListItem]]) -> list[tuple[Any, ...]]:
        """What a row shows, to compare: its bullet and its item's shape."""
        return [(bullet, _shape(item)) for bullet, item in numbered]

    @staticmethod
    def _rows(numbered: list[tuple[str, MarkdownListItem]]) -> Iterator[Widget]:
        """A row for each item: its bullet, and its one paragraph or a ``Vertical``."""
        for symbol, item in numbered:
            bullet = MarkdownBullet()
            bullet.symbol = symbol
            blocks = item._blocks
            one = len(blocks) == 1 and isinstance(blocks[0], MarkdownParagraph)
            yield Horizontal(bullet, blocks[0] if one else Vertical(*blocks))

    def compose(self) -> Iterator[Widget]:
        numbered = self._numbered()
        self._shapes = self._row_shapes(numbered)
        yield from self._rows(numbered)
        self._blocks.clear()  # type: ignore[attr-defined]

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        mine: Any = self
        rows = list(mine.children)
        old = self._shapes
        if type(block) is not type(self) or old is None or len(old) != len(rows):
            return await super()._update_from_block(block)  # type: ignore[misc, no-any-return]
        assert isinstance(block, StreamedList)
        numbered = block._numbered()
        new = self._row_shapes(numbered)
        keep = 0
        while keep < min(len(old), len(new)) and old[keep] == new[keep]:
            keep += 1
        if keep == 0:  # nothing to keep: replaced whole, as Textual does
            return await super()._update_from_block(block)  # type: ignore[misc, no-any-return]
        made = list(self._rows(numbered[keep:]))  # rows only for the items not kept
        if keep < len(rows):
            await mine.remove_children(rows[keep:])
        if made:
            await mine.mount_all(made)
        self._shapes = new
        mine._copy_context(block)


def _shared(block: type[MarkdownBlock]) -> type[MarkdownBlock]:
    """``block`` with ``SharedStyles`` (same name: the stylesheet matches it as before)."""
    if issubclass(block, SharedStyles):
        return block
    made: type[MarkdownBlock] = type(
        block.__name__, (SharedStyles, block), {"__module__": __name__}
    )
    return made


class BulletList(StreamedList, MarkdownBulletList):  # type: ignore[misc]
    pass


class OrderedList(StreamedList, MarkdownOrderedList):  # type: ignore[misc]
    pass


BulletList.__name__ = "MarkdownBulletList"  # the stylesheet matches them as Textual's
OrderedList.__name__ = "MarkdownOrderedList"
_TEXTUAL: dict[str, type[MarkdownBlock]] = {
    **Markdown.BLOCKS,
    "fence": Fence,
    "code_block": Fence,
    "bullet_list_open": BulletList,
    "ordered_list_open": OrderedList,
}


class _Blocks(dict[str, type[MarkdownBlock]]):
    """Textual's block classes by token name, each with ``SharedStyles``, made the first
    time a Markdown asks for one (``get_block_class``): a resumed conversation's first
    frame needs five or six of the 21 (~0.15 ms each to make)."""

    def __missing__(self, name: str) -> type[MarkdownBlock]:
        made = self[name] = _shared(_TEXTUAL[name])
        return made


BLOCKS: dict[str, type[MarkdownBlock]] = _Blocks()


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
