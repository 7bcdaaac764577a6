"""Markdown commands: prompt templates kept as ``.md`` files, run as slash commands.

Users of other agents keep libraries of these (``~/.claude/commands/*.md``,
``.claude/commands/*.md``, ``~/.config/opencode/command(s)/*.md``,
``.opencode/command(s)/*.md``); tui-agent reads them where they are, unchanged::

    ---
    description: Review a file for bugs
    argument-hint: FILE [FOCUS]
    ---
    Review @$0 for bugs, focusing on $1. The current diff:
    !`git diff -- $0`

The file name is the command's name (``review.md`` → ``/review``; a sub-folder gives
``git/commit.md`` → ``/git:commit``). Front matter is optional; ``description`` and
``argument-hint`` are read, every other key (Claude's ``allowed-tools``, ``model``) is
ignored. A file may take the name of a bundled command (``help.md``, or ``init.md`` in
place of the bundled Markdown command ``/init``: ``bundled_places``), as opencode lets
it; a plugin's command keeps its name. The body is the prompt, with the arguments put in
by the rules of the agent whose folder it is in (``Place.dialect``):

- Claude Code's (its folders and ours): ``$ARGUMENTS`` everything typed; ``$ARGUMENTS[N]``
  and ``$N`` the word at index N from 0, split as a shell would (``shlex``); a ``$N`` past
  the last word is kept as written; with no placeholder, ``ARGUMENTS: …`` is added.
- opencode's: ``$1``… the words from 1, the highest one used taking the rest;
  ``$ARGUMENTS`` everything typed; with neither, the arguments follow a blank line.

In a command every argument is quoted for the shell (``$ARGUMENTS`` as its words, each
quoted), so nothing typed ever becomes shell syntax, and the commands are found in the
file before any argument goes in.

- ``@path``: the file attached as a typed prompt's ``@path`` is (``mentions.py``: the
  same rules, caps and errors), the user's own ``@path`` arguments too.
- ``!`command```: the command's standard output, from ``bash -c`` in the session's
  folder (``COMMAND_TIMEOUT`` seconds at most; long output keeps its end, as ``execute``
  does). It is a command only outside inline code, at the start of a line or after a
  space or punctuation (`` `!` `` in prose is text). A ```` ```! ```` fenced block is one
  script run so; nothing in another fenced block runs. No approval is asked: these are
  the user's own files, and a project's are read only when the project is trusted.

Anything that goes wrong while expanding (a missing file, a command that fails or times
out) raises ``TemplateError`` naming the file; nothing is sent then. In an opencode
folder a command that fails puts in what it printed, as opencode does.
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
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conversation import mentions
from ..conversation.mentions import Expanded
from ..project.workspace import register_project_code
from ..util.processes import let_go
from ..util.truncation import keep_tail
from .command_places import (
    Place,
    bundled_places,
    command_files,
    project_places,
    user_places,
)
from .plugins import LoadProblem, LoadReport

if TYPE_CHECKING:
    from .host import PluginHost

log = logging.getLogger("tui_agent.prompt_commands")

COMMAND_TIMEOUT = 30.0  # seconds a template's !`command` may run
KILL_GRACE = 2.0
MAX_FILE_BYTES = 256 * 1024  # a command file larger than this is not a prompt


class TemplateError(Exception):
    """A Markdown command could not be expanded: the message names the file and the
    problem; nothing was sent."""


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
    replaces: str = ""  # the bundled command whose name it took, if it took one

    @property
    def help(self) -> str:
        """The description in ``/help``, the palette and the completion menu: what the
        command does, how to call it, and where it comes from (and the bundled command it
        replaces, when it does)."""
        text = self.description or _first_line(self.body) or "Markdown command"
        usage = f" — /{self.name} {self.argument_hint}" if self.argument_hint else ""
        instead = f"; replaces the bundled /{self.replaces}" if self.replaces else ""
        return f"{text}{usage} ({self.place.label}{instead})"


def project_files(project: Path) -> list[Path]:
    """The project's command files: project code that waits for trust (their ``!``
    commands run), so listed with it (``Workspace.project_code``)."""
    return [file for place in project_places(project) for file in command_files(place.path)]


register_project_code(project_files, order=20)


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

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_CLAUDE_PLACEHOLDER = re.compile(r"\$(?:ARGUMENTS\[(\d+)\]|(ARGUMENTS)\b|(\d+))")
_OPENCODE_POSITION = re.compile(r"\$(\d+)")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Piece:
    """A part of a template's body: prose (``command`` false) or one of its own shell
    commands (an inline ``!`…``` or the script of a ```` ```! ```` block)."""

    text: str
    command: bool = False


def _inline(text: str) -> list[Piece]:
    """Prose with its ``!`command``` spans taken out. Inline code is read as Markdown
    reads it (a run of backticks up to the next run of as many, within a paragraph): a
    ``!`` inside code is code (`` `!` ``, `` `!!` ``, `` `ship !` ``), and a command is a
    ``!`` outside code, at the start of a line or after a space or punctuation, followed by
    a code span of one backtick on one line."""
    pieces: list[Piece] = []
    start = index = 0
    while True:
        tick = text.find("`", index)
        if tick < 0:
            break
        run = len(text) - tick - len(text[tick:].lstrip("`"))
        paragraph = _BLANK_LINE.search(text, tick)
        limit = paragraph.start() if paragraph else len(text)
        close = tick + run
        while True:  # the next run of exactly `run` backticks in this paragraph
            close = text.find("`" * run, close, limit)
            if close < 0:
                break
            end = close + run
            if (end >= len(text) or text[end] != "`") and text[close - 1] != "`":
                break
            close = end + len(text[end:]) - len(text[end:].lstrip("`"))
        if close < 0:  # no closing run: the backticks are text
            index = tick + run
            continue
        content = text[tick + run : close]
        before = text[tick - 2] if tick >= 2 else ""
        if (
            run == 1
            and tick >= 1
            and text[tick - 1] == "!"
            and not (before.isalnum() or (before != "" and before in "`\\!"))
            and content.strip()
            and "\n" not in content
        ):
            pieces.append(Piece(text[start : tick - 1]))
            pieces.append(Piece(content, command=True))
            start = close + run
        index = close + run
    pieces.append(Piece(text[start:]))
    return pieces


def split(body: str) -> list[Piece]:
    """The body's prose and its own commands, in order: ``!`command``` spans (see
    ``_inline``) and ```` ```! ```` fenced blocks, whose lines are one script. Nothing in
    another fenced block is a command. Found before any argument goes in, so typed text
    never becomes a command."""
    pieces: list[Piece] = []
    prose: list[str] = []
    lines = body.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index].rstrip("\n"))
        if opening is None:
            prose.append(lines[index])
            index += 1
            continue
        fence, info = opening.group(1), opening.group(2).strip()
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = next(
            (i for i in range(index + 1, len(lines)) if closing.match(lines[i].rstrip("\n"))),
            len(lines),
        )
        block = lines[index : end + 1]
        if fence[0] == "`" and info == "!":
            pieces += _inline("".join(prose))
            prose = []
            script = "".join(lines[index + 1 : end]).rstrip("\n")
            if script.strip():
                pieces.append(Piece(script, command=True))
            if end + 1 < len(lines) or (block and block[-1].endswith("\n")):
                pieces.append(Piece("\n"))  # the line break after the block stays
        else:
            pieces += _inline("".join(prose))
            prose = []
            pieces.append(Piece("".join(block)))
        index = end + 1
    pieces += _inline("".join(prose))
    merged: list[Piece] = []
    for piece in pieces:  # neighbouring prose in one piece
        if merged and not piece.command and not merged[-1].command:
            merged[-1] = Piece(merged[-1].text + piece.text)
        else:
            merged.append(piece)
    return merged or [Piece("")]


def _split_words(template: Template, arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError as exc:
        raise TemplateError(
            f"{where(template)}: the arguments cannot be split into words ({exc}); "
            "close the quote. Nothing was sent."
        ) from exc


def _trim_end(pieces: list[Piece]) -> None:
    """The body's trailing blank space dropped, before something is added at its end."""
    if pieces and not pieces[-1].command:
        pieces[-1] = Piece(pieces[-1].text.rstrip())


def _claude(template: Template, pieces: list[Piece], arguments: str) -> list[Piece]:
    """Claude Code's rules: ``$ARGUMENTS`` everything typed; ``$ARGUMENTS[N]`` and its
    shorthand ``$N`` the word at index N from 0 (``$0`` the first), split as a shell
    would; an ``$ARGUMENTS[N]`` past the last word is empty, a ``$N`` past it is kept as
    written; with no placeholder at all, ``ARGUMENTS: …`` is added at the end."""
    used = [m for piece in pieces for m in _CLAUDE_PLACEHOLDER.finditer(piece.text)]
    needs_words = any(m.group(2) is None for m in used) or any(
        piece.command and "$ARGUMENTS" in piece.text for piece in pieces
    )
    words = _split_words(template, arguments) if needs_words else []

    def value(match: re.Match[str], quote: bool) -> str:
        indexed, whole, short = match.groups()
        if whole:
            return shlex.join(words) if quote else arguments
        position = int(indexed or short)
        if position >= len(words):
            return match.group(0) if short else ""
        return shlex.quote(words[position]) if quote else words[position]

    done = [
        Piece(_CLAUDE_PLACEHOLDER.sub(partial(value, quote=p.command), p.text), p.command)
        for p in pieces
    ]
    if arguments and not used:
        _trim_end(done)
        done.append(Piece(f"\n\nARGUMENTS: {arguments}"))
    return done


def _opencode(template: Template, pieces: list[Piece], arguments: str) -> list[Piece]:
    """opencode's rules: ``$1``, ``$2``… the words from 1, the highest one used taking
    every word left; one past the last word is empty; ``$ARGUMENTS`` everything typed;
    with neither, the arguments are added at the end after a blank line."""
    numbers = [int(m.group(1)) for piece in pieces for m in _OPENCODE_POSITION.finditer(piece.text)]
    numbers = [n for n in numbers if n > 0]
    whole = any("$ARGUMENTS" in piece.text for piece in pieces)
    needs_words = bool(numbers) or any(p.command and "$ARGUMENTS" in p.text for p in pieces)
    words = _split_words(template, arguments) if needs_words else []
    last = max(numbers, default=0)

    def value(match: re.Match[str], quote: bool) -> str:
        position = int(match.group(1))
        if position == 0:
            return match.group(0)
        chosen = words[position - 1 :] if position == last else words[position - 1 : position]
        if quote:
            return shlex.join(chosen) if chosen else "''"
        return " ".join(chosen)

    done = []
    for piece in pieces:
        text = _OPENCODE_POSITION.sub(partial(value, quote=piece.command), piece.text)
        text = text.replace("$ARGUMENTS", shlex.join(words) if piece.command else arguments)
        done.append(Piece(text, piece.command))
    if arguments and not numbers and not whole:
        _trim_end(done)
        done.append(Piece(f"\n\n{arguments}"))
    return done


def substitute(template: Template, arguments: str) -> list[Piece]:
    """The body's pieces with ``arguments`` put in by the rules of the template's folder
    (``Place.dialect``). In a command every argument is quoted for the shell: a word as
    one word, ``$ARGUMENTS`` as its words each quoted, so nothing typed becomes shell
    syntax. Raises ``TemplateError`` when the arguments cannot be split into words."""
    pieces = split(template.body)
    if template.place.dialect == "opencode":
        return _opencode(template, pieces, arguments)
    return _claude(template, pieces, arguments)


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


async def run_shell(
    command: str,
    directory: Path,
    timeout: float | None = None,
    *,
    check: bool = True,
    keep_end: bool = False,
) -> str:
    """``bash -c command`` in ``directory``: its standard output (the end of a long one,
    as ``execute`` keeps it). Raises ``TemplateError`` when it takes longer than
    ``timeout`` seconds (``COMMAND_TIMEOUT``), and with ``check`` when it exits with a
    status other than 0; it and everything it started are killed on a timeout, and when
    the task running it is cancelled. The output's last line break is dropped unless
    ``keep_end`` (opencode puts a command's output in as it is)."""
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
    if process.returncode != 0 and check:
        said = (
            err.decode("utf-8", errors="replace").strip()
            or out.decode("utf-8", errors="replace").strip()
        )
        said = said.splitlines()[-1] if said else "it printed nothing"
        raise TemplateError(f"!`{command}` failed with exit status {process.returncode}: {said}")
    text = out.decode("utf-8", errors="replace")
    kept = str(keep_tail(text, "command")["output"])
    return kept if keep_end else kept.rstrip("\n")


async def expand(
    template: Template,
    arguments: str,
    directory: Path,
    worktree: Path,
    *,
    allow_commands: bool = True,
    extra: str = "",
) -> Expanded:
    """The prompt ``template`` makes with ``arguments``: ``.prompt`` the text (arguments
    and command output in place, then ``extra`` after a blank line: what ``tui-agent
    run`` got on stdin), ``.content`` what the model gets (the text, then the ``@path``
    attachments). The ``@path`` files are read before any command runs, so a missing one
    stops everything; ``@`` in a command's output is text. A command that fails stops
    everything too (Claude Code's rule), except in an opencode folder, where its output is
    used as opencode uses it. Raises ``TemplateError``."""
    arguments = arguments.strip()
    pieces = substitute(template, arguments)
    commands = [piece.text for piece in pieces if piece.command]
    if commands and not allow_commands:
        raise TemplateError(
            f"{where(template)}: its !`…` commands run only in a trusted project. Nothing was sent."
        )
    # the @path search sees the prose alone: a command's text and output are not searched
    sketch = " ".join(piece.text for piece in pieces if not piece.command)
    try:
        attached = await asyncio.to_thread(mentions.expand, sketch, directory, worktree)
    except mentions.MentionError as exc:
        raise TemplateError(f"{where(template)}: {exc}") from exc
    check = template.place.dialect != "opencode"
    parts: list[str] = []
    for piece in pieces:
        if not piece.command:
            parts.append(piece.text)
            continue
        try:
            parts.append(await run_shell(piece.text, directory, check=check, keep_end=not check))
        except TemplateError as exc:
            raise TemplateError(f"{where(template)}: {exc}. Nothing was sent.") from exc
        except OSError as exc:
            raise TemplateError(
                f"{where(template)}: !`{piece.text}` could not start ({exc}). Nothing was sent."
            ) from exc
    text = "".join(parts).strip()
    if extra.strip():
        text = f"{text}\n\n{extra.strip()}" if text else extra.strip()
    if not text:
        raise TemplateError(f"{where(template)}: the prompt is empty. Nothing was sent.")
    blocks = attached.content[len(attached.prompt) :]
    return Expanded(text, text + blocks, attached.attachments)


# -- loading ------------------------------------------------------------------------------


async def run_template(
    session: PluginHost, template: Template, arguments: str | None, *, extra: str = ""
) -> None:
    """Expand ``template`` with ``arguments`` and send it as a turn (``extra``: text added
    at the end of the prompt, as ``tui-agent run`` adds what it got on stdin)."""
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
            extra=extra,
        )
        await session.turn(expanded)


def _handler(session: PluginHost, template: Template) -> Any:
    async def run(arguments: str | None) -> None:
        await run_template(session, template, arguments)

    run.__doc__ = f"Send the prompt of {template.path}."
    run.template = template  # type: ignore[attr-defined]
    return run


def template_of(session: PluginHost, name: str) -> Template | None:
    """The Markdown command registered as ``/name``, or None (no such command, or not a
    Markdown one)."""
    command = session.commands.get(name)
    if command is None or command.source != "markdown":
        return None
    found = getattr(command.handler, "template", None)
    return found if isinstance(found, Template) else None


def _bundled(source: str) -> bool:
    """A command source that is tui-agent's own (``bundled:commands.py``): a Markdown
    command may take its name, as opencode lets a command file replace a built-in one."""
    return source.startswith("bundled:")


def load(session: PluginHost, report: LoadReport, project: Path | None) -> list[Template]:
    """Register the Markdown commands of the user's folders and, when ``project`` is given
    (a trusted project), the project's folders. Runs after the plugins' setups: a file
    named like a bundled command replaces it (said once in a note, and marked in its
    description, so ``/help`` shows it); a command a plugin registered keeps its name, and
    the file is reported as a problem (rename it). Between files, the project's win over
    the user's (``.tui-agent``, then ``.claude``, then ``.opencode``; the user's own
    folder, then ``~/.claude``, then opencode's), said in a note."""
    places = [
        *(project_places(project) if project is not None else []),
        *user_places(),
        *bundled_places(),  # last: every other file of the same name wins
    ]
    chosen: dict[str, Template] = {}
    hidden: list[tuple[Template, Template]] = []
    seen: set[Path] = set()  # a project in the home folder: ~/.claude is both
    for place in places:
        for file in command_files(place.path):
            real = file.resolve()
            if real in seen:
                continue
            seen.add(real)
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
    bundled = {loser.name for loser, _ in hidden if loser.place.label == "bundled"}
    hidden = [(loser, winner) for loser, winner in hidden if loser.place.label != "bundled"]
    registered: list[Template] = []
    replacing: list[Template] = []
    commands = session.commands
    previous, commands.source = commands.source, "markdown"
    try:
        for name, template in sorted(chosen.items()):
            existing = commands.get(name)
            if template.place.label == "bundled" and existing is not None:
                continue  # a plugin's command of that name wins over a bundled file
            if name in bundled:  # a user's or project's file in place of a bundled one
                template = replace(template, replaces=name)
                replacing.append(template)
            elif existing is not None and _bundled(existing.source):
                template = replace(template, replaces=name)
                replacing.append(template)
            elif existing is not None:
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
    said: set[tuple[str, Path]] = session.extensions.kept("prompt_commands.replacing", set)
    for template in replacing:
        if (template.name, template.path) in said:
            continue  # once a session, not at every /reload
        said.add((template.name, template.path))
        note = f"Markdown command {where(template)} replaces the bundled /{template.name}."
        report.notes.append(note)
        log.info("%s", note)
        session.output.say(note)
    for loser, winner in hidden:
        note = f"Markdown command {where(winner)} is used; {where(loser)} has the same name."
        report.notes.append(note)
        log.info("%s", note)
        session.output.say(note)
    return registered
