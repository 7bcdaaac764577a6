"""The command-line commands about journaled sessions: ``tui-agent sessions [--all]
[--json]`` (what ``--resume`` and ``/resume`` offer) and ``tui-agent undo``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from .core.session.session import Session


def cmd_sessions(session: Session, args: argparse.Namespace) -> int:
    """The sessions of this folder (every folder's with ``--all``), newest first: id,
    title, when, turns, model, size; ``--json``: a list of objects with the last exchange
    too. Nothing is loaded or written."""
    import json
    from datetime import datetime

    def when(modified: float) -> str:  # the year only when it is not this one
        moment = datetime.fromtimestamp(modified)
        shape = "%m-%d %H:%M" if moment.year == datetime.now().year else "%Y-%m-%d %H:%M"
        return moment.strftime(shape)

    found = session.conversation.sessions(everywhere=args.all)
    if args.json:
        print(json.dumps([summary.as_data() for summary in found], indent=2, ensure_ascii=False))
        return 0
    if not found:
        where = "" if args.all else f" for {session.directory}"
        print(f"No saved sessions{where} yet.", file=sys.stderr)
        return 0
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=True)
    table.add_column("Id", no_wrap=True)
    table.add_column("Title", ratio=1, min_width=12)
    table.add_column("When", no_wrap=True)
    table.add_column("Turns", justify="right")
    table.add_column("Model", no_wrap=True, max_width=20, overflow="ellipsis")
    table.add_column("Size", justify="right", no_wrap=True)
    if args.all:
        table.add_column("Folder", ratio=1)
    for summary in found:
        row = [
            summary.id,
            Text(summary.title or "(empty)", overflow="fold"),
            when(summary.modified),
            f"≥{summary.turns}" if summary.partial else str(summary.turns),
            summary.model or "?",
            summary.size_label,
        ]
        if args.all:
            row.append(Text(summary.directory, overflow="fold"))
        table.add_row(*row)
    Console(soft_wrap=False).print(table)
    return 0


def cmd_undo(session: Session, args: argparse.Namespace) -> int:
    """Undo the last turn of a journaled session (this folder's last, or ``--session``):
    the same as ``/undo`` in it, recorded in its journal (``--continue`` goes on without
    the turn)."""
    import asyncio

    from .core.checkpoints.store import CheckpointError

    if not (args.continue_ or args.resume) and not session.conversation.resume(args.session):
        what = f"session {args.session}" if args.session else f"a session for {session.directory}"
        print(f"tui-agent: could not find {what}", file=sys.stderr)
        return 2

    async def undo() -> int:
        try:
            done = await session.checkpoints.undo(force=args.force)
        except CheckpointError as exc:
            print(f"tui-agent: {exc}", file=sys.stderr)
            return 1
        finally:
            await session.close()
        files = "\n".join(f"  {path}" for path in done.files)
        print(
            f"Undid turn {done.turns[0]} of session {session.id}: "
            + (f"{len(done.files)} file(s) restored:\n{files}" if done.files else "no file changes")
        )
        if done.note:
            print(f"note: {done.note}")
        if done.prompt:
            print(f"Its prompt was: {done.prompt}")
        return 0

    return asyncio.run(undo())
