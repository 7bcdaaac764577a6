"""Memory files in use: ``/memory`` lists the ``AGENTS.md`` / ``CLAUDE.md`` files (and
their ``@path`` imports) in the system prompt, ``/memory N`` or ``/memory PATH`` opens one
in the editor; a subfolder's files join once a tool reaches it.

What is read and in which order is ``session.workspace.memory``'s (core/project/memory.py).
Subfolders: after ``read``, ``list``, ``write`` and ``edit`` (one edit or ``edits``) the
folders from the repository's top down to the file reached are added; their files are in
the system prompt from the next request on (so compaction never drops them) and the tool's
result says ``instructions``: "Instructions from pkg/AGENTS.md now apply". ``grep`` and
``glob`` search whole trees: what they find is not taken as reached. A new conversation
(``/clear``, ``/resume``) starts without the subfolders' files.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import tui_agent
from tui_agent.budget import text_tokens

REACHING = ("read", "list", "write", "edit")  # the tools whose path a memory folder applies to
NAMES = ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


@tui_agent.setup("memory")
def memory(session: tui_agent.Session) -> None:
    say = session.output.say
    memory = session.workspace.memory

    def reached(args: Any, result: dict[str, Any]) -> None:
        """After a file tool: the folders down to what it reached apply from now on."""
        if not isinstance(args, dict) or "error" in result:
            return
        path = args.get("path")
        if not isinstance(path, str) or not path:
            return
        added = memory.touch(path)
        if added:
            names = ", ".join(memory.shown(file.path) for file in added)
            result["instructions"] = (
                f"Instructions from {names} now apply (they are in the system prompt from "
                "the next request on): follow them for files there."
            )

    for name in REACHING:
        session.toolbox.after(name, reached)

    def forget(source: str) -> None:
        if source in ("clear", "resume"):  # a new conversation: no subfolder reached yet
            memory.forget()

    session.on("start", forget)

    def table() -> str:
        loaded = memory.load()
        if not loaded.files:
            lines = [
                "No memory files. Put instructions for the agent in `AGENTS.md` at the "
                "repository's top (or in a subfolder, for its files), or in "
                f"`{memory.shown(memory.user_folder() / 'AGENTS.md')}` for every project; "
                "`/init` writes one."
            ]
        else:
            tokens = [text_tokens(file.text) for file in loaded.files]
            lines = [
                f"**Memory files** in the system prompt, in this order: {sum(tokens):,} "
                "tokens (estimated)",
                "",
                "| # | File | Scope | Tokens |",
                "|---|---|---|---|",
            ]
            for number, (file, count) in enumerate(zip(loaded.files, tokens, strict=True), 1):
                scope = file.scope
                if file.imported_by is not None:
                    scope = f"import (from {memory.shown(file.imported_by)})"
                if file.cut:
                    scope += ", cut"
                lines.append(
                    f"| {number} | {_cell(memory.shown(file.path))} | {_cell(scope)} | {count:,} |"
                )
        if loaded.skipped:
            lines += ["", "Not loaded:"]
            for skipped in loaded.skipped:
                where = f" in {memory.shown(skipped.wanted_by)}" if skipped.wanted_by else ""
                lines.append(f"- `@{skipped.path}`{where}: {skipped.reason}")
        lines += [
            "",
            "Open one in your editor: `/memory N` or `/memory PATH`. A subfolder's files "
            "join when a tool first reads or changes a file there.",
        ]
        return "\n".join(lines)

    def chosen(args: str) -> Path:
        files = memory.files()
        if args.isdigit():
            number = int(args)
            if not 1 <= number <= len(files):
                raise ValueError(f"no memory file {number}: /memory lists {len(files)}")
            return files[number - 1].path
        target = Path(os.path.expanduser(args))
        if not target.is_absolute():
            target = session.directory / target
        target = Path(os.path.normpath(target))
        if any(file.path == target for file in files) or target.name in NAMES:
            return target
        raise ValueError(
            f"{args} is not a memory file: give a number from /memory, or a path to an "
            f"{', '.join(NAMES)} file"
        )

    def editor() -> str:
        return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"

    async def open_file(path: Path) -> None:
        """In the editor where the frontend can open one; else say how to."""
        edit = getattr(session.frontend, "edit", None)
        if callable(edit) and session.frontend.interactive:
            outcome = await edit(path)
            if outcome:
                say(f"Edited {memory.shown(path)}: it applies from the next request on.")
                return
        command = f"{editor()} {shlex.quote(str(path))}"
        say(
            f"Memory file {memory.shown(path)}: edit it in your editor (`{command}`); the "
            "change applies from the next request on.",
            kind="markdown",
        )

    @session.commands.register(
        "memory",
        description="Memory files in use (AGENTS.md, CLAUDE.md, imports); /memory N|PATH "
        "opens one in the editor",
        completions=lambda: [str(n) for n in range(1, len(memory.files()) + 1)],
    )
    async def memory_command(args: str | None) -> None:
        if not args:
            say(table(), kind="markdown")
            return
        await open_file(chosen(args.strip()))
