"""The chat's Markdown blocks share their inline styles (``blocks.markdown.SharedStyles``):
they must look exactly as Textual's own blocks do, in a dark theme and in a light one, the
theme changed while they are on screen, and make none of Textual's per-block virtual
style nodes."""

from __future__ import annotations

import gc
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock

from tui_agent.ui.blocks.markdown import BLOCKS, SharedStyles

TEXT = """\
# Title with `code` and **bold**

A paragraph with *emphasis*, **strong**, ~~struck~~ and `inline code` in it.

- an item with `code`
- an item with **bold** and *italic*

1. first `one`
2. second **two**

> a quote with `code` and *emphasis*

| name | value |
|------|-------|
| `a`  | **b** |
"""


class Theirs(Markdown):
    DEFAULT_CSS = "Theirs { height: auto; }"


class Ours(Markdown):
    BLOCKS = BLOCKS
    DEFAULT_CSS = "Ours { height: auto; }"


class Both(App[None]):
    def compose(self) -> ComposeResult:
        yield Theirs(TEXT)
        yield Ours(TEXT)


def lines(widget: Markdown) -> list[list[tuple[str, str]]]:
    """What each line of the widget shows: text and style, segment by segment."""
    region = widget.region
    strips = widget.app.screen._compositor.render_strips()
    out = []
    for y in range(region.y, region.bottom):
        line = strips[y].crop(region.x, region.right)
        out.append([(segment.text, str(segment.style)) for segment in line if segment.text])
    return out


async def same_look(pilot: Any) -> list[list[tuple[str, str]]]:
    await pilot.pause()
    theirs, ours = pilot.app.query_one(Theirs), pilot.app.query_one(Ours)
    assert theirs.region.height > 10
    assert theirs.region.size == ours.region.size
    expected = lines(theirs)
    assert lines(ours) == expected
    return expected


async def test_shared_styles_look_like_textuals_in_dark_light_and_after_a_switch() -> None:
    app = Both()
    async with app.run_test(size=(70, 60)) as pilot:
        app.theme = "textual-dark"
        dark = await same_look(pilot)
        styled = {style for line in dark for _, style in line}
        assert any("bold" in style for style in styled)
        assert any("italic" in style for style in styled)
        assert any("strike" in style for style in styled)
        app.theme = "textual-light"  # the stylesheet is parsed again while they are shown
        light = await same_look(pilot)
        assert light != dark
        app.theme = "textual-dark"
        assert await same_look(pilot) == dark


async def test_our_blocks_make_no_virtual_style_nodes() -> None:
    class OnlyOurs(App[None]):
        def compose(self) -> ComposeResult:
            yield Ours(TEXT * 5)

    app = OnlyOurs()
    async with app.run_test(size=(70, 60)) as pilot:
        await pilot.pause()
        blocks = list(app.query(MarkdownBlock))
        assert len(blocks) > 30
        assert all(isinstance(block, SharedStyles) for block in blocks)
        gc.collect()
        virtual = [
            node
            for node in gc.get_objects()
            if type(node) is DOMNode and isinstance(node._parent, MarkdownBlock)
        ]
        # one set of four (em, strong, s, code_inline) per kind of block and pseudo-classes
        kinds = {(type(block), block._pseudo_classes_cache_key) for block in blocks}
        assert len(virtual) <= 4 * len(kinds) < len(blocks)


async def test_a_block_removed_leaves_the_styles_of_the_others() -> None:
    """Textual empties a widget's component styles when it is removed; the shared ones
    were emptied with them, and every block drawn after showed no bold, italic or code."""
    app = Both()
    async with app.run_test(size=(70, 60)) as pilot:
        app.theme = "textual-dark"
        await same_look(pilot)
        ours = app.query_one(Ours)
        for block in list(ours.query(MarkdownBlock)):  # as an append replaces a list
            await block.remove()
        await ours.update(TEXT)  # blocks made and styled anew
        styled = {style for line in await same_look(pilot) for _, style in line}
        assert any("bold" in style for style in styled)


async def test_our_lists_look_like_textuals() -> None:
    """Our lists' rows hold a one-paragraph item without Textual's ``Vertical`` around it
    (``StreamedList``): nested, numbered past 9, loose, with a fence, after a heading."""
    from test_markdown_lists import TEXT as LISTS

    class BothLists(App[None]):
        def compose(self) -> ComposeResult:
            yield Theirs(LISTS)
            yield Ours(LISTS)

    app = BothLists()
    async with app.run_test(size=(70, 120)) as pilot:
        shown = await same_look(pilot)
        text = "\n".join("".join(part for part, _ in line) for line in shown)
        assert "10. tenth" in text and "print(" in text and "nested two" in text
        theirs, ours = app.query_one(Theirs), app.query_one(Ours)
        # a Vertical only for the items of more than one block (three of 17 here)
        assert len(ours.query(Vertical)) == 3 < len(theirs.query(Vertical)) == 17
