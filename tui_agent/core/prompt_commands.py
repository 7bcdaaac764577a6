"""Markdown commands: prompt templates kept as ``.md`` files, run as slash commands.

Users of other agents keep libraries of these (``.claude/commands/*.md``,
``.opencode/command/*.md``); tui-agent reads them where they are, unchanged::

    ---
    description: Review a file for bugs
    argument-hint: FILE [FOCUS]
    ---
    Review @$1 for bugs, focusing on $2. The current diff:
    !`git diff -- $1`

The file name is the command's name (``review.md`` → ``/review``; a sub-folder gives
``git/commit.md`` → ``/git:commit``). Front matter is optional; ``description`` and
``argument-hint`` are read, every other key (Claude's ``allowed-tools``, ``model``) is
ignored. The body is the prompt, with:

- ``$ARGUMENTS``: everything typed after the command; ``$1`` … ``$9``: its words, split as
  a shell would (``shlex``). In a ``!`` command ``$1`` … ``$9`` are quoted for the shell,
  ``$ARGUMENTS`` is put in as typed. Arguments given to a template that uses neither are
  added at its end, so nothing typed is lost.
- ``@path``: the file attached as a typed prompt's ``@path`` is (``mentions.py``: the
  same rules, caps and errors), the user's own ``@path`` arguments too.
- ``!`command```: the command's standard output, from ``bash -c`` in the session's
  folder (``COMMAND_TIMEOUT`` seconds at most; long output keeps its end, as ``execute``
  does). No approval is asked: these are the user's own files, and a project's are read
  only when the project is trusted.

Anything that goes wrong while expanding (a missing file, a command that fails or times
out) raises ``TemplateError`` naming the file; nothing is sent then.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shlex
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import mentions, paths
from .mentions import Expanded
from .plugins import LoadProblem, LoadReport
from .processes import let_go
from .truncation import keep_tail

if TYPE_CHECKING:
    from .session import Session

log = logging.getLogger("tui_agent.prompt_commands")

COMMAND_TIMEOUT = 30.0  # seconds a template's !`command` may run
KILL_GRACE = 2.0
MAX_FILE_BYTES = 256 * 1024  # a command file larger than this is not a prompt
_SHELL = re.compile(r"!`([^`\n]+)`")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS\b|[1-9])")


class TemplateError(Exception):
    """A Markdown command could not be expanded: the message names the file and the
    problem; nothing was sent."""


@dataclass(frozen=True)
class Place:
    """A folder of command files: ``label`` as shown beside a command's description
    ("user", ".claude"…), and whether it is the project's (trusted folders only)."""

    label: str
    path: Path
    project: bool


@dataclass(frozen=True)
class Template:
    """One command file, read: its command ``name``, the ``body`` to expand, and what its
    front matter says."""

    name: str
    path: Path
    place: Place
    body: str
    description: str = ""
    argument_hint: str = ""

    @property
    def help(self) -> str:
        """The description in ``/help``, the palette and the completion menu: what the
        command does, how to call it, and where it comes from."""
        text = self.description or _first_line(self.body) or "Markdown command"
        usage = f" — /{self.name} {self.argument_hint}" if self.argument_hint else ""
        return f"{text}{usage} ({self.place.label})"


def user_places() -> list[Place]:
    return [Place("user", paths.user_config_dir() / "commands", False)]


def project_places(project: Path) -> list[Place]:
    """The project's folders, the one that wins a name clash first."""
    return [
        Place(".tui-agent", project / ".tui-agent" / "commands", True),
        Place(".claude", project / ".claude" / "commands", True),
        Place(".opencode", project / ".opencode" / "command", True),
        Place(".opencode", project / ".opencode" / "commands", True),
    ]


def command_files(folder: Path) -> list[Path]:
    """``*.md`` under ``folder`` (sub-folders too), sorted; dot files and folders skipped."""
    try:
        found = [
            path
            for path in folder.rglob("*.md")
            if path.is_file()
            and not any(part.startswith(".") for part in path.relative_to(folder).parts)
        ]
    except OSError:
        return []
    return sorted(found)


def project_files(project: Path) -> list[Path]:
    """The project's command files: project code that waits for trust (their ``!``
    commands run), so listed with it (``plugins.project_code``)."""
    return [file for place in project_places(project) for file in command_files(place.path)]


def command_name(folder: Path, file: Path) -> str:
    """``review.md`` → ``review``; ``git/commit.md`` → ``git:commit``."""
    return ":".join(file.relative_to(folder).with_suffix("").parts)


# -- reading ------------------------------------------------------------------------------


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text if len(text) <= 80 else text[:79] + "…"
    return ""


def _scalar(value: str) -> str:
    """A YAML-ish scalar: quoted ("…" with JSON escapes, '…' with '' for '), or plain;
    a `` #`` comment after it dropped."""
    value = value.strip()
    double = re.match(r'"((?:[^"\\]|\\.)*)"\s*(?:#.*)?$', value)
    if double:
        try:
            return str(json.loads(f'"{double.group(1)}"'))
        except ValueError:
            return double.group(1)
    single = re.match(r"'((?:[^']|'')*)'\s*(?:#.*)?$", value)
    if single:
        return single.group(1).replace("''", "'")
    comment = value.find(" #")
    return value[:comment].rstrip() if comment >= 0 else value


def parse(text: str) -> tuple[dict[str, str], str]:
    """Front matter and body. Front matter is ``---`` on the first line, ``key: value``
    lines and ``---``: keys lower-cased; quoted values unquoted; a ``|`` or ``>`` value
    takes the indented lines under it; nested YAML (lists, maps) is skipped, not parsed.
    Raises ``ValueError`` when the front matter is never closed."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise ValueError("the front matter (--- on line 1) is never closed by a --- line")
    meta: dict[str, str] = {}
    index = 1
    while index < end:
        line = lines[index]
        index += 1
        if not line.strip() or line[0] in " \t-#":
            continue
        key, colon, value = line.partition(":")
        if not colon:
            continue
        value = value.strip()
        if value[:1] in ("|", ">"):  # a block: the indented lines under it
            block: list[str] = []
            while index < end and (not lines[index].strip() or lines[index][0] in " \t"):
                block.append(lines[index].strip())
                index += 1
            joiner = "\n" if value.startswith("|") else " "
            meta[key.strip().lower()] = joiner.join(block).strip()
        else:
            meta[key.strip().lower()] = _scalar(value)
    body = "\n".join(lines[end + 1 :])
    if text.endswith("\n") and body:
        body += "\n"
    return meta, body.lstrip("\n")


def read(place: Place, file: Path) -> Template:
    """The command in ``file``. Raises ``OSError`` or ``ValueError`` (reported by ``load``)."""
    name = command_name(place.path, file)
    if not name or any(char.isspace() for char in name):
        raise ValueError(f"/{name}: a command name cannot hold spaces; rename the file")
    if file.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES // 1024} KB: not read as a command")
    meta, body = parse(file.read_text(encoding="utf-8"))
    return Template(
        name,
        file,
        place,
        body,
        description=meta.get("description", ""),
        argument_hint=meta.get("argument-hint", ""),
    )


# -- expanding ----------------------------------------------------------------------------


def _substitute(text: str, arguments: str, words: list[str], quote: bool) -> str:
    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        word = words[int(key) - 1] if int(key) <= len(words) else ""
        return shlex.quote(word) if quote else word

    return _PLACEHOLDER.sub(value, text)


def _words(template: Template, arguments: str) -> list[str]:
    if not re.search(r"\$[1-9]", template.body):
        return []
    try:
        return shlex.split(arguments)
    except ValueError as exc:
        raise TemplateError(
            f"{where(template)}: the arguments cannot be split into words ({exc}); "
            "close the quote. Nothing was sent."
        ) from exc


def where(template: Template) -> str:
    """``/name (path)``, the path as the user knows it: relative to the project for a
    project's file, with ``~`` for the home folder otherwise."""
    path = template.path
    if template.place.project:
        shown = str(path.relative_to(template.place.path.parent.parent))
    else:
        home = str(Path.home())
        shown = str(path)
        if shown.startswith(home + os.sep):
            shown = "~" + shown[len(home) :]
    return f"/{template.name} ({shown})"


async def run_shell(command: str, directory: Path, timeout: float | None = None) -> str:
    """``bash -c command`` in ``directory``: its standard output (the end of a long one,
    as ``execute`` keeps it). Raises ``TemplateError`` when it exits with a status other
    than 0 or takes longer than ``timeout`` seconds (``COMMAND_TIMEOUT``); it and
    everything it started are killed then, and when the task running it is cancelled."""
    if timeout is None:
        timeout = COMMAND_TIMEOUT
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        cwd=str(directory),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    output = asyncio.ensure_future(process.communicate())
    try:
        out, err = await asyncio.wait_for(asyncio.shield(output), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        # a process that left the group may hold the pipes open: ours are closed first,
        # or the wait (which waits for the pipes too) would last as long as it runs
        output.cancel()
        let_go(process)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), KILL_GRACE)
        if isinstance(exc, TimeoutError):
            raise TemplateError(
                f"!`{command}` did not finish in {timeout:g} s and was stopped"
            ) from None
        raise
    if process.returncode != 0:
        said = (
            err.decode("utf-8", errors="replace").strip()
            or out.decode("utf-8", errors="replace").strip()
        )
        said = said.splitlines()[-1] if said else "it printed nothing"
        raise TemplateError(f"!`{command}` failed with exit status {process.returncode}: {said}")
    text = out.decode("utf-8", errors="replace")
    kept = keep_tail(text, "command")
    return str(kept["output"]).rstrip("\n")


async def expand(
    template: Template,
    arguments: str,
    directory: Path,
    worktree: Path,
    *,
    allow_commands: bool = True,
) -> Expanded:
    """The prompt ``template`` makes with ``arguments``: ``.prompt`` the text (arguments
    and command output in place), ``.content`` what the model gets (the text, then the
    ``@path`` attachments). The ``@path`` files are read before any command runs, so a
    missing one stops everything; ``@`` in a command's output is text. Raises
    ``TemplateError``."""
    arguments = arguments.strip()
    words = _words(template, arguments)
    body = template.body
    if arguments and not _PLACEHOLDER.search(body):
        body = f"{body.rstrip()}\n\n{arguments}"
    # the template's own !`…` spans, found before arguments go in: typed text never runs
    pieces = _SHELL.split(body)  # text, command, text, command, …, text
    texts = [_substitute(piece, arguments, words, False) for piece in pieces[::2]]
    commands = [_substitute(piece, arguments, words, True) for piece in pieces[1::2]]
    if commands and not allow_commands:
        raise TemplateError(
            f"{where(template)}: its !`…` commands run only in a trusted project. Nothing was sent."
        )
    # for the @path search the commands stay `code`, which mentions never look into
    sketch = texts[0] + "".join(f"`{c}`{t}" for c, t in zip(commands, texts[1:], strict=True))
    try:
        attached = await asyncio.to_thread(mentions.expand, sketch, directory, worktree)
    except mentions.MentionError as exc:
        raise TemplateError(f"{where(template)}: {exc}") from exc
    outputs: list[str] = []
    for command in commands:
        try:
            outputs.append(await run_shell(command, directory))
        except TemplateError as exc:
            raise TemplateError(f"{where(template)}: {exc}. Nothing was sent.") from exc
        except OSError as exc:
            raise TemplateError(
                f"{where(template)}: !`{command}` could not start ({exc}). Nothing was sent."
            ) from exc
    text = texts[0] + "".join(o + t for o, t in zip(outputs, texts[1:], strict=True))
    text = text.strip()
    if not text:
        raise TemplateError(f"{where(template)}: the prompt is empty. Nothing was sent.")
    blocks = attached.content[len(attached.prompt) :]
    return Expanded(text, text + blocks, attached.attachments)


# -- loading ------------------------------------------------------------------------------


def _handler(session: Session, template: Template) -> Any:
    async def run(arguments: str | None) -> None:
        if session.busy:
            raise TemplateError(
                f"/{template.name}: still working on a turn; press Esc to cancel it first"
            )
        allowed = not template.place.project or session.workspace.trusted
        with session.running():  # Esc stops its !`commands` too
            expanded = await expand(
                template,
                arguments or "",
                session.directory,
                session.worktree,
                allow_commands=allowed,
            )
            await session.turn(expanded)

    run.__doc__ = f"Send the prompt of {template.path}."
    return run


def load(session: Session, report: LoadReport, project: Path | None) -> list[Template]:
    """Register the Markdown commands of the user's folder and, when ``project`` is given
    (a trusted project), the project's folders. Runs after the plugins' setups: a
    command a plugin or the bundled ones registered keeps its name, and the file is
    reported as a problem (rename it). Between files, the project's win over the
    user's (``.tui-agent``, then ``.claude``, then ``.opencode``), said in a note."""
    places = [*(project_places(project) if project is not None else []), *user_places()]
    chosen: dict[str, Template] = {}
    hidden: list[tuple[Template, Template]] = []
    for place in places:
        for file in command_files(place.path):
            try:
                template = read(place, file)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                report.problems.append(LoadProblem(str(file), str(exc)))
                continue
            winner = chosen.get(template.name)
            if winner is None:
                chosen[template.name] = template
            else:
                hidden.append((template, winner))
    registered: list[Template] = []
    commands = session.commands
    previous, commands.source = commands.source, "markdown"
    try:
        for name, template in sorted(chosen.items()):
            existing = commands.get(name)
            if existing is not None:
                report.problems.append(
                    LoadProblem(
                        str(template.path),
                        f"/{name} is already a command (from {existing.source}), which "
                        "keeps the name; rename the file to use it",
                    )
                )
                continue
            commands.register(name, description=template.help, handler=_handler(session, template))
            registered.append(template)
    finally:
        commands.source = previous
    for loser, winner in hidden:
        note = f"Markdown command {where(winner)} is used; {where(loser)} has the same name."
        report.notes.append(note)
        log.info("%s", note)
        session.output.say(note)
    return registered
