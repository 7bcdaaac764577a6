"""The tools panel: a live table of the toolbox and the selected tool's parameters."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import events
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Label, Static

from .connected import hooks_label, parameter_rows, servers_of

if TYPE_CHECKING:
    from ..core.tools.describe import ParamRow
    from ..core.tools.toolbox import Toolbox

LAST_WIDTH = 20  # cells of an error in the table's Last column (the detail line has it all)
ALIASES_WIDTH = 13  # cells of the Aliases column: todo's four would crowd it out (detail line)


def _last(result: Any, width: int | None = LAST_WIDTH) -> Text:
    if result is None:
        return Text("")
    if result.ok:
        return Text("✔ ok", style="green")
    error = " ".join((result.error or "").split())
    text = Text(f"✖ {error}", style="red")
    if width is not None:
        text.truncate(width, overflow="ellipsis")
    return text


class Column(NamedTuple):
    key: str
    label: str
    keep: int  # the narrower the panel, the fewer columns: the lowest ``keep`` goes first


# In the order shown. Name always stays; what a column left out says is in the detail
# line under the table, so a narrow panel loses no information.
COLUMNS = [
    Column("name", "Name", 9),
    Column("aliases", "Aliases", 2),
    Column("source", "Source", 3),
    Column("hooks", "Hooks", 1),
    Column("calls", "Calls", 5),
    Column("last", "Last", 6),
]
CELL_PADDING = 1  # DataTable's default, each side of a cell


def fit_columns(widths: dict[str, int], available: int) -> list[str]:
    """The columns that fit in ``available`` cells, by ``keep``: each column is taken if it
    still fits (a narrow one may fit where a wider, more important one did not)."""
    chosen: set[str] = set()
    used = 0
    for column in sorted(COLUMNS, key=lambda c: -c.keep):
        need = widths[column.key] + 2 * CELL_PADDING
        if column.key == "name" or used + need <= available:
            chosen.add(column.key)
            used += need
    return [c.key for c in COLUMNS if c.key in chosen]


class ParameterTable:
    """A tool's parameters with their whole descriptions, at any width: a table while its
    Description column gets room to be read (``MIN_DESCRIPTION`` cells, or its longest
    description), else one block per parameter. A Rich renderable, so the choice is made
    at the width it is drawn at, after every resize."""

    MIN_DESCRIPTION = 20
    GAP = 2  # cells between two columns

    def __init__(self, rows: list[ParamRow]) -> None:
        self.rows = rows

    def _columns(self) -> list[tuple[str, list[str]]]:
        """Label and cells of each column shown (Default, Enum and Description only when a
        parameter has one)."""
        rows = self.rows
        columns = [
            ("Parameter", [r.name for r in rows]),
            ("Type", [r.type for r in rows]),
            ("Required", ["yes" if r.required else "no" for r in rows]),
            ("Default", [r.default for r in rows]),
            ("Enum", [r.enum for r in rows]),
            ("Description", [r.description for r in rows]),
        ]
        return [(label, cells) for label, cells in columns[:3]] + [
            (label, cells) for label, cells in columns[3:] if any(cells)
        ]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.rows:
            yield Text("No parameters.", style="dim")
            return
        columns = self._columns()
        fixed = [c for c in columns if c[0] != "Description"]
        described = len(fixed) < len(columns)
        used = sum(max(cell_len(v) for v in [label, *cells]) for label, cells in fixed)
        used += self.GAP * (len(columns) - 1)
        longest = max((cell_len(r.description) for r in self.rows), default=0)
        room = options.max_width - used
        if room >= (min(self.MIN_DESCRIPTION, longest) if described else 0):
            yield self._table(columns)
        else:
            yield from self._blocks()

    def _table(self, columns: list[tuple[str, list[str]]]) -> Table:
        table = Table(
            box=None, padding=(0, self.GAP // 2), pad_edge=False, header_style="bold", expand=False
        )
        for label, _ in columns:
            wraps = label == "Description"
            table.add_column(label, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis")
        for n in range(len(self.rows)):
            table.add_row(*(Text(cells[n]) for _, cells in columns))
        return table

    def _blocks(self) -> Iterator[Padding | Text]:
        for row in self.rows:
            meta = [row.type, "required" if row.required else ""]
            meta += [f"default {row.default}" if row.default else ""]
            meta += [f"one of {row.enum}" if row.enum else ""]
            yield Text.assemble((row.name, "bold"), "  ", (" · ".join(m for m in meta if m), "dim"))
            if row.description:
                yield Padding(Text(row.description, overflow="fold"), (0, 0, 0, 2))


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
    ToolsPanel #tools-table {
        height: auto; max-height: 50%; overflow-x: hidden; scrollbar-size-vertical: 1;
    }
    ToolsPanel #params { height: 1fr; margin: 1 0 0 0; scrollbar-size-vertical: 1; }
    ToolsPanel #tool-detail { color: $text-muted; }
    ToolsPanel #params-description, ToolsPanel #params-table { margin: 1 0 0 0; }
    ToolsPanel #params-schema { margin: 1 0 0 0; }
    ToolsPanel #lsp-servers { color: $text-muted; margin: 1 0 0 0; }
    ToolsPanel .title { text-style: bold; color: $accent; }
    """

    def __init__(self, toolbox: Toolbox, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.toolbox = toolbox
        self.selected: str | None = None
        self.built = False  # its children are mounted (until then, nothing to list into)
        self._building = False
        self.columns: list[str] = []  # the tools table's columns now (fit to its width)

    def on_mount(self) -> None:
        self.fit(self.screen.size.height)

    def on_resize(self, event: events.Resize) -> None:
        if self.built and self._fitting_columns() != self.columns:
            self.refresh_table()

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
        if self._building:  # shown again while its children mount: the first show lists
            return
        self._building = True
        table: DataTable[Any] = DataTable(id="tools-table", cursor_type="row", zebra_stripes=True)
        params_box = VerticalScroll(
            Label("", id="params-title", classes="title", markup=False),
            Static("", id="tool-detail", markup=False),
            Static("", id="params-description", markup=False),
            Static("", id="params-table"),
            Static("", id="params-schema"),
            id="params",
        )
        servers = Static("", id="lsp-servers", markup=False)
        servers.display = False
        await self.mount_all([Label("Tools", classes="title"), table, servers, params_box])
        self.built = True  # a resize or a tools change while they mounted waited for this
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
            self.show_servers()

    def show_servers(self) -> None:
        """The language servers started (plugins/lsp.py): name, root, state; none, no line."""
        session = getattr(self.app, "session", None)
        servers = servers_of(session) if session is not None else None
        rows = servers.rows(started=True) if servers is not None else []
        line = self.query_one("#lsp-servers", Static)
        line.display = bool(rows)
        lines = [f"{name} · {root} · {state} · {details}" for name, root, state, details in rows]
        line.update(Text("Language servers: " + "; ".join(lines)) if rows else "")

    def _row(self, name: str) -> dict[str, Text]:
        """Every column's cell for ``name`` (Text, not markup: ``[x]`` in a name stays)."""
        tool = self.toolbox.tools[name]
        stats = self.toolbox.stats.get(name)
        aliases = Text(", ".join(tool.aliases))
        aliases.truncate(ALIASES_WIDTH, overflow="ellipsis")
        return {
            "name": Text(name),
            "aliases": aliases,
            "source": Text(tool.source),
            "hooks": Text(hooks_label(self.toolbox, name)),
            "calls": Text(str(stats.calls if stats else 0)),
            "last": _last(stats.last_result if stats else None),
        }

    def _fitting_columns(self) -> list[str]:
        """The columns that fit the panel's width now, for the rows the toolbox has now (a
        cell of the vertical scrollbar kept free)."""
        widths = {c.key: cell_len(c.label) for c in COLUMNS}
        for name in self.toolbox.tools:
            for key, cell in self._row(name).items():
                widths[key] = max(widths[key], cell.cell_len)
        return fit_columns(widths, self.content_size.width - 1)

    def _update_row(self, name: str) -> None:
        table = self._table("#tools-table")
        if name not in table.rows or self._fitting_columns() != self.columns:
            self.refresh_table()
            return
        row = self._row(name)
        for key in self.columns:
            table.update_cell(name, key, row[key], update_width=True)
        if name == self.selected:
            self.show_params(name)

    def refresh_table(self) -> None:
        """List every tool again, with the columns that fit the panel's width."""
        if not self.built:
            return
        table = self._table("#tools-table")
        columns = self._fitting_columns()
        if columns != self.columns:
            table.clear(columns=True)
            labels = {c.key: c.label for c in COLUMNS}
            for key in columns:
                table.add_column(labels[key], key=key)
            self.columns = columns
        else:
            table.clear()
        for name in sorted(self.toolbox.tools):
            row = self._row(name)
            table.add_row(*(row[key] for key in columns), key=name)
        if self.selected in self.toolbox.tools:
            table.move_cursor(row=table.get_row_index(self.selected))
            self.show_params(self.selected)
        elif self.toolbox.tools:
            self.show_params(sorted(self.toolbox.tools)[0])
        else:
            self.show_params(None)
        self.show_servers()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "tools-table" and event.row_key.value is not None:
            self.show_params(str(event.row_key.value))

    def detail(self, name: str) -> str:
        """Everything the table says about ``name``, whichever columns fit: under its title."""
        tool = self.toolbox.tools[name]
        stats = self.toolbox.stats.get(name)
        before, after = self.toolbox.hooks_for(name)
        parts = [f"aliases: {', '.join(tool.aliases)}"] if tool.aliases else []
        parts += [f"source: {tool.source}", f"hooks: {before} before, {after} after"]
        parts += [f"calls: {stats.calls if stats else 0}"]
        last = _last(stats.last_result if stats else None, width=None).plain
        parts += [f"last: {last}"] if last else []
        return " · ".join(parts)

    def show_params(self, name: str | None) -> None:
        self.selected = name
        title = self.query_one("#params-title", Label)
        detail = self.query_one("#tool-detail", Static)
        description = self.query_one("#params-description", Static)
        params = self.query_one("#params-table", Static)
        schema = self.query_one("#params-schema", Static)
        if name is None or name not in self.toolbox.tools:
            for widget in (title, detail, description, params, schema):
                widget.update("")
            return
        tool = self.toolbox.tools[name]
        title.update(f"{name} — parameters")
        detail.update(self.detail(name))
        description.update(tool.description)
        params.update(ParameterTable(parameter_rows(tool)))
        schema.update(
            Syntax(json.dumps(tool.schema, indent=2), "json", word_wrap=True, theme="ansi_dark")
        )
