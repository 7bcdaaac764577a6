"""The tools panel: a live table of the toolbox and the selected tool's parameters."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.syntax import Syntax
from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Label, Static

from .connected import hooks_label, parameter_rows

if TYPE_CHECKING:
    from ..core.toolbox import Toolbox


def _last(result: Any) -> Text:
    if result is None:
        return Text("")
    if result.ok:
        return Text("✔ ok", style="green")
    error = result.error or ""
    return Text(f"✖ {error[:40]}", style="red")


class ToolsPanel(Vertical):
    """A table of the toolbox. It does not listen to the toolbox itself: the app's event
    handlers (``event_handlers.py``) tell it what changed on ``session.events``
    (``tools_changed`` for adds, replacements, hooks and reloads; ``call_finished`` for
    every call, whoever made it).

    Imported, and built, when first shown (``show``): the first frame goes without the
    tables, Syntax (pygments) and the core."""

    DEFAULT_CSS = """
    ToolsPanel {
        dock: right; width: 60%; min-width: 40; border-left: solid $primary; padding: 0 1;
        margin: 1 0 0 0;  /* below the header (see fit) */
    }
    ToolsPanel #tools-table { height: 1fr; }
    ToolsPanel #params { height: 1fr; }
    ToolsPanel #params-table { height: auto; max-height: 12; }
    ToolsPanel .title { text-style: bold; color: $accent; }
    """

    def __init__(self, toolbox: Toolbox, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.toolbox = toolbox
        self.selected: str | None = None
        self.built = False

    def on_mount(self) -> None:
        self.fit(self.screen.size.height)

    def fit(self, screen_height: int) -> None:
        """Docked at the screen's right, the panel would overlap the header and the footer
        (docks do not make room for each other, and a docked ``1fr`` is the whole height):
        it starts below the header (its margin) and is as tall as what lies between."""
        self.styles.height = max(screen_height - self.HEADER - self.FOOTER, 1)

    HEADER = FOOTER = 1  # lines: the app's header and footer

    async def show(self) -> None:
        """Build the panel the first time, and bring the table up to date."""
        if self.built:
            self.refresh_table()
            return
        self.built = True
        table: DataTable[Any] = DataTable(id="tools-table", cursor_type="row", zebra_stripes=True)
        params_box = VerticalScroll(
            Label("", id="params-title", classes="title", markup=False),
            Static("", id="params-description", markup=False),
            DataTable(id="params-table", show_cursor=False),
            Static("", id="params-schema"),
            id="params",
        )
        await self.mount_all([Label("Tools", classes="title"), table, params_box])
        for key, label in [
            ("name", "Name"),
            ("aliases", "Aliases"),
            ("source", "Source"),
            ("hooks", "Hooks b/a"),
            ("calls", "Calls"),
            ("last", "Last result"),
        ]:
            table.add_column(label, key=key)
        params = self._table("#params-table")
        for label in ["Parameter", "Type", "Required", "Default", "Enum", "Description"]:
            params.add_column(label)
        self.refresh_table()

    def _table(self, selector: str) -> DataTable[Any]:
        return self.query_one(selector, DataTable)

    def tools_changed(self) -> None:
        """Tools or hooks changed: the table is listed again (when built: ``show`` lists
        everything the first time)."""
        self.refresh_table()

    def call_finished(self, called_as: str) -> None:
        """A call ended: its tool's Calls and Last result cells (an unknown name has no
        row; an alias counts for its tool)."""
        name = self.toolbox.resolve(called_as)
        if self.built and name is not None:
            self._update_row(name)

    def _row(self, name: str) -> tuple[Any, ...]:
        tool = self.toolbox.tools[name]
        stats = self.toolbox.stats.get(name)
        return (
            name,
            ", ".join(tool.aliases),
            tool.source,
            hooks_label(self.toolbox, name),
            str(stats.calls if stats else 0),
            _last(stats.last_result if stats else None),
        )

    def _update_row(self, name: str) -> None:
        table = self._table("#tools-table")
        if name not in table.rows:
            self.refresh_table()
            return
        for key, value in zip(
            ["name", "aliases", "source", "hooks", "calls", "last"], self._row(name), strict=True
        ):
            table.update_cell(name, key, value)

    def refresh_table(self) -> None:
        if not self.built:
            return
        table = self._table("#tools-table")
        table.clear()
        for name in sorted(self.toolbox.tools):
            table.add_row(*self._row(name), key=name)
        if self.selected in self.toolbox.tools:
            table.move_cursor(row=table.get_row_index(self.selected))
            self.show_params(self.selected)
        elif self.toolbox.tools:
            self.show_params(sorted(self.toolbox.tools)[0])
        else:
            self.show_params(None)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "tools-table" and event.row_key.value is not None:
            self.show_params(str(event.row_key.value))

    def show_params(self, name: str | None) -> None:
        self.selected = name
        title = self.query_one("#params-title", Label)
        description = self.query_one("#params-description", Static)
        params = self._table("#params-table")
        schema = self.query_one("#params-schema", Static)
        params.clear()
        if name is None or name not in self.toolbox.tools:
            title.update("")
            description.update("")
            schema.update("")
            return
        tool = self.toolbox.tools[name]
        title.update(f"{name} — parameters")
        description.update(tool.description)
        for row in parameter_rows(tool):
            params.add_row(
                row.name,
                row.type,
                "yes" if row.required else "no",
                row.default,
                row.enum,
                row.description,
            )
        schema.update(
            Syntax(json.dumps(tool.schema, indent=2), "json", word_wrap=True, theme="ansi_dark")
        )
