"""The user's own editor (``$VISUAL``, ``$EDITOR``, else ``vi``) on a file, the app
stepping aside for it (``suspend``; where it cannot, in tests, the editor runs beside it).
Ctrl+G edits the prompt with it; ``/memory N`` a memory file (``AppFrontend.edit``)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from textual.app import App, SuspendNotSupported


def editor_command() -> str:
    """``$VISUAL``, else ``$EDITOR``, else ``vi`` when there is one; "" for none."""
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or ""
    if not command.strip() and shutil.which("vi"):
        command = "vi"
    return command.strip()


def run_editor(app: App[object], path: Path | str) -> int | str:
    """The editor's exit status on ``path``, or why it did not start (a sentence)."""
    command = editor_command()
    if not command:
        return "No editor: set $VISUAL or $EDITOR."
    argv = [*shlex.split(command), str(path)]

    def run() -> int | str:  # never raises: the app must come back
        try:
            return subprocess.run(argv).returncode
        except OSError as exc:
            return f"could not start the editor ({command}): {exc.strerror or exc}"

    try:
        with app.suspend():
            return run()
    except SuspendNotSupported:
        return run()
