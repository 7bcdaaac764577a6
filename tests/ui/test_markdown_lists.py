"""A list a reply streams into grows in place (``blocks.markdown.StreamedList``): the rows
of the items already written stay mounted, and after every append the reply shows exactly
what the same text shows when drawn at once."""

from __future__ import annotations

from typing import Any

from test_markdown_styles import lines
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets._markdown import MarkdownList

from tui_agent.ui.blocks.markdown import ReplyMarkdown

TEXT = """\
Some lists follow.

- first item with `code` and **bold**
- second item
  - nested one
  - nested two
- third item, long enough to wrap more than once in the narrow column this test draws in

7. seventh
8. eighth
9. ninth
10. tenth, where the numbers grow a column
11. eleventh

1. a
2. b

   b's second paragraph: the list is loose now

3. c

* another marker, so another list
* its second item

- an item with a fence:

  ```python
  print("hi")
  ```
- the item after it

A closing paragraph.
"""


class Side(App[None]):
    """The streamed reply and the same text drawn at once, side by side."""

    CSS = "Horizontal { height: auto; } ReplyMarkdown { width: 1fr; }"

    def __init__(self, first: str) -> None:
        super().__init__()
        self.first = first

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ReplyMarkdown(self.first, id="streamed")
            yield ReplyMarkdown(self.first, id="whole")


def rows(widget: ReplyMarkdown) -> list[Any]:
    return [row for block in widget.query(MarkdownList) for row in block.children]


async def test_a_streamed_list_shows_what_the_whole_text_shows_after_every_append() -> None:
    step = 9
    app = Side(TEXT[:step])
    async with app.run_test(size=(90, 160)) as pilot:
        streamed = app.query_one("#streamed", ReplyMarkdown)
        whole = app.query_one("#whole", ReplyMarkdown)
        await pilot.pause()
        made = {id(row): row for row in rows(streamed)}  # every row the stream mounted
        for end in range(2 * step, len(TEXT) + step, step):
            await streamed.append(TEXT[end - step : end])
            await whole.update(TEXT[:end])
            await pilot.pause()
            made.update({id(row): row for row in rows(streamed)})
            assert streamed.source == TEXT[:end]
            assert streamed.region.height == whole.region.height, TEXT[:end]
            assert lines(streamed) == lines(whole), TEXT[:end]
        shown = "\n".join("".join(text for text, _ in line) for line in lines(streamed))
        for words in ("10. tenth", "11. eleventh", " 7. seventh", "b's second", 'print("hi")'):
            assert words in shown
        # an append makes again at most the row being written (and new ones), and once a
        # whole list whose numbers grew a column: 69 here; Textual's lists made all their
        # rows again at every append: 190
        appends = len(range(2 * step, len(TEXT) + step, step))
        assert len(made) <= len(rows(streamed)) + appends


async def test_a_long_list_streamed_an_item_at_a_time_mounts_each_row_about_once() -> None:
    items = [f"- item number {n} of the list\n" for n in range(40)]
    app = Side(items[0])
    async with app.run_test(size=(90, 160)) as pilot:
        streamed = app.query_one("#streamed", ReplyMarkdown)
        await pilot.pause()
        made = {id(row): row for row in rows(streamed)}
        for item in items[1:]:
            await streamed.append(item)
            await pilot.pause()
            made.update({id(row): row for row in rows(streamed)})
        assert len(rows(streamed)) == 40
        # each append makes the changed last row and the new one: ~2 a step (Textual's
        # list made all of its rows again at every append: 820 here)
        assert len(made) <= 2 * len(items)
