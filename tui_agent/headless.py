"""``tui-agent run``: the same session seam as the TUI, printed to stdout and stderr."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from .core.conversation.mentions import MentionError
from .core.conversation.todo import line, summary
from .core.extensions import prompt_commands
from .core.extensions.commands import parse_command
from .core.protocol import events as ev
from .core.protocol.frontend import Unattended
from .core.protocol.output import Note
from .core.session.session import Session

# what only a UI showing the registries needs: not printed, not even with --json
# a note says it; a checkpoint is taken after "done", which stays the last line of --json
UNPRINTED = (ev.ToolsChanged, ev.CommandsChanged, ev.Compacted, ev.CheckpointTaken)


def same_destination(out: TextIO, err: TextIO) -> bool:
    """``out`` and ``err`` end up in one place: one terminal, or one pipe or file
    (``2>&1``). Whoever reads it gets them interleaved, so a line on ``err`` must not
    continue the reply's open line on ``out``."""
    try:
        first, second = os.fstat(out.fileno()), os.fstat(err.fileno())
        terminals = out.isatty() and err.isatty()
    except (OSError, ValueError, AttributeError):  # no file under it (a StringIO)
        return False
    # a terminal opened twice is one device, whatever node it was opened through
    return os.path.samestat(first, second) or (terminals and first.st_rdev == second.st_rdev)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


class Printer:
    """Reply text on stdout; tool activity and notes on stderr.

    stdout holds the replies alone (a blank line between two, a newline at the end), so a
    pipe or a file of its own gets exactly them. On a terminal a reply streams as it
    arrives; into a pipe or a file (``hold``) each reply is written once it has finished,
    so a reply taken back for a retry (``ReplyWithdrawn``) never reaches it: on a terminal
    the taken-back text is marked so instead. When stdout and stderr end up in one place
    (``same_destination``: a terminal, ``2>&1``), the reply's open line is ended before a
    line goes to stderr, so a tool line never runs on from the reply's text."""

    WITHDRAWN = "↺ cut off before the model finished: taken back, the reply comes again"

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        as_json: bool,
        *,
        shared: bool = False,
        hold: bool | None = None,
    ) -> None:
        self.out, self.err, self.as_json = out, err, as_json
        self.shared = shared  # stdout and stderr end up in one place
        self.hold = not is_terminal(out) if hold is None else hold  # a reply waits to finish
        self._held: list[str] = []  # the streaming reply's text, while it is held
        self.failed: str | None = None
        self.command_output = False  # a command runs: what it says is its output (stdout)
        self.cost: Callable[[], dict[str, Any]] | None = None  # "done" lines carry it
        self._line_open = False  # stdout's last reply line has no newline yet
        self._replies = 0  # replies of this turn that printed text
        self._reply_ended = False  # the reply that printed last has finished
        self._handlers: dict[type, Callable[[Any], None]] = {  # the rest is not printed
            ev.TextChunk: self._text,
            ev.ToolCallStarted: self._call_started,
            ev.ToolCallFinished: self._call_finished,
            ev.ReplyFinished: self._reply_finished,
            ev.ReplyWithdrawn: self._withdrawn,
            ev.Retrying: self._retrying,
            ev.Steered: self._steered,
            ev.TurnFinished: self._turn_finished,
            ev.TodoChanged: self._todo,
            ev.SubagentStarted: self._subagent_started,
            ev.SubagentEvent: self._subagent_event,
            ev.SubagentFinished: self._subagent_finished,
            Note: self.note,
        }

    def _json(self, payload: dict[str, Any]) -> None:
        self.out.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")
        self.out.flush()

    def note(self, note: Note) -> None:
        if self.as_json:
            self._json({"type": "note", "kind": note.kind, "text": note.text})
        elif self.command_output and note.kind != "error":
            self._end_line()
            self.out.write(note.text.rstrip("\n") + "\n")
            self.out.flush()
        else:
            self._err(note.text)

    def event(self, event: Any) -> None:
        if isinstance(event, ev.TurnFinished) and event.error:
            self.failed = event.error
        if isinstance(event, UNPRINTED):
            return
        if self.as_json and not isinstance(event, Note):
            payload = _as_json(event)
            if isinstance(event, ev.TurnFinished) and self.cost is not None:
                payload["cost"] = self.cost()  # the session's so far; usd None: no price
            self._json(payload)
            return
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    def _text(self, event: ev.TextChunk) -> None:
        if self.hold:
            self._held.append(event.text)
        else:
            self._write(event.text)

    def _release(self) -> None:
        """The held reply, finished (or kept as it stopped), written out."""
        if self._held:
            text = "".join(self._held)
            self._held.clear()
            self._write(text)

    def _write(self, text: str) -> None:
        if self._reply_ended or not self._replies:  # a new reply: its own paragraph
            if self._replies:
                self._end_line()
                self.out.write("\n")
            self._replies += 1
            self._reply_ended = False
        self.out.write(text)
        self.out.flush()
        self._line_open = not text.endswith("\n")

    def _call_started(self, event: ev.ToolCallStarted) -> None:
        self._err(f"{self._by(event.agent, event.parent)}→ {event.name} {event.arguments}")

    def _call_finished(self, event: ev.ToolCallFinished) -> None:
        mark = "✔" if event.result.ok else f"✖ {event.result.error}"
        diagnostics = ""
        if "diagnostics" in event.result:  # a language server's word on an edit (plugins/lsp.py)
            from .core.lsp.problems import result_mark

            shown = result_mark(event.result)
            diagnostics = f" {shown[0]}" if shown else ""
        self._err(
            f"{self._by(event.agent, event.parent)}{mark} {event.name} ({event.elapsed:.2f}s)"
            f"{diagnostics}"
        )

    @staticmethod
    def _by(agent: str, parent: str) -> str:
        """A subagent's lines are indented and name it: ``  [explore] → grep …``."""
        return f"  [{agent}] " if parent else ""

    def _subagent_started(self, event: ev.SubagentStarted) -> None:
        what = f": {event.description}" if event.description else ""
        self._err(f"  [{event.agent}] started{what}")

    def _subagent_event(self, event: ev.SubagentEvent) -> None:
        inner = event.event
        if isinstance(inner, Note) and inner.kind == "error":
            self._err(f"  [{event.agent}] {inner.text}")
        elif isinstance(inner, ev.Retrying):
            self._err(f"  [{event.agent}] {inner.line()}")

    def _subagent_finished(self, event: ev.SubagentFinished) -> None:
        how = "cancelled" if event.cancelled else ("✖ " + event.error if event.error else "done")
        self._err(f"  [{event.agent}] {how} ({event.tokens:,} tokens, {event.seconds:.1f}s)")

    def _reply_finished(self, event: ev.ReplyFinished) -> None:
        self._release()
        self._reply_ended = True
        if event.finish_reason == "length":
            self._err(f"note: {ev.LENGTH_NOTE}")

    def _withdrawn(self, event: ev.ReplyWithdrawn) -> None:
        if self._held:  # never written: nothing to take back
            self._held.clear()
            return
        if self._replies and not self._reply_ended:  # streamed to a terminal: marked
            self._end_line()
            self.out.write(f"{self.WITHDRAWN}\n")
            self.out.flush()
            self._reply_ended = True

    def _retrying(self, event: ev.Retrying) -> None:
        self._err(event.line())

    def _steered(self, event: ev.Steered) -> None:
        where = "as the next turn" if event.next_turn else "into the turn"
        self._err(f"↳ steered {where}: {event.prompt}")

    def _todo(self, event: ev.TodoChanged) -> None:
        """The list, whenever it changes: its summary line and an indented line an item."""
        for text in [summary(event.todos), *(f"  {line(item)}" for item in event.todos)]:
            self._err(text)

    def _turn_finished(self, event: ev.TurnFinished) -> None:
        self._release()  # a turn cancelled mid-reply keeps the text it recorded
        self._end_line()

    def _err(self, line: str) -> None:
        if self.shared:
            self._end_line()
        self.err.write(line + "\n")
        self.err.flush()

    def _end_line(self) -> None:
        """Ends the reply's open line on stdout: before the next reply's paragraph, at the
        end of the turn, and before a line on stderr when both end up in one place."""
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False


def _as_json(event: Any) -> dict[str, Any]:
    name = {
        ev.TurnStarted: "turn_started",
        ev.TextChunk: "text",
        ev.ThinkingChunk: "thinking",
        ev.ToolCallStarted: "tool_call",
        ev.ToolCallFinished: "tool_result",
        ev.UsageUpdate: "usage",
        ev.TurnFinished: "done",
        ev.ReplyFinished: "reply_finished",
        ev.Retrying: "retrying",
        ev.ReplyWithdrawn: "reply_withdrawn",
        ev.Steered: "steered",
        ev.Rewound: "rewound",
        ev.TodoChanged: "todo",
        ev.SubagentStarted: "subagent_started",
        ev.SubagentEvent: "subagent_event",
        ev.SubagentFinished: "subagent_finished",
    }.get(type(event), type(event).__name__)
    payload: dict[str, Any] = {"type": name}
    if isinstance(event, ev.TodoChanged):  # its items as the tool's result has them
        return {**payload, **event.to_dict()}
    if isinstance(event, ev.SubagentEvent):  # the child's own event, as its own line would be
        inner = event.event
        wrapped = (
            {"type": "note", "kind": inner.kind, "text": inner.text}
            if isinstance(inner, Note)
            else _as_json(inner)
        )
        return {**payload, "call_id": event.call_id, "agent": event.agent, "event": wrapped}
    for key, value in vars(event).items():
        payload[key] = value.to_dict() if hasattr(value, "to_dict") else value
    return payload


def command_in(prompt: str) -> tuple[str, str | None] | None:
    """``(name, arguments)`` when ``prompt`` is a slash command line (``/name args``, the
    ``/`` first, as ``claude -p "/commit"`` takes it), else None: a prompt that starts
    with a space, ``//``, or a path (``/etc/hosts …``: a name holding a ``/``) is sent to
    the model as it is."""
    if not prompt.startswith("/"):
        return None
    parsed = parse_command(prompt)
    if parsed is None or "/" in parsed[0]:
        return None
    return parsed


@dataclass(frozen=True)
class Input:
    """One line of ``--input json``: a prompt (or ``/command``) to queue, or to steer into
    the running turn; or a cancel of the running turn."""

    text: str = ""
    steer: bool = False
    cancel: bool = False


INPUT_FORMAT = '{"type": "user", "text": "...", "steer": false} or {"type": "cancel"}'


def parse_input(line: str) -> Input | str:
    """One JSON line of ``--input json``, or what is wrong with it."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return f"not JSON ({exc}): expected {INPUT_FORMAT}"
    if not isinstance(data, dict):
        return f"not a JSON object: expected {INPUT_FORMAT}"
    kind = data.get("type", "user")
    if kind == "cancel":
        return Input(cancel=True)
    if kind != "user":
        return f"unknown type {kind!r}: expected {INPUT_FORMAT}"
    text, steer = data.get("text"), data.get("steer", False)
    if not isinstance(text, str) or not text.strip():
        return f'"text" must be a string with something in it: expected {INPUT_FORMAT}'
    if not isinstance(steer, bool):
        return f'"steer" must be true or false: expected {INPUT_FORMAT}'
    return Input(text, steer=steer)


def _read_lines(stream: TextIO, put: Callable[[str | None], None]) -> None:
    """``stream``'s lines as they come, then None (a daemon thread: a run that ends while
    stdin stays open does not wait for it)."""
    try:
        for line in stream:
            put(line)
    except (OSError, ValueError):
        pass
    put(None)


class Headless(Unattended):
    """The frontend of ``tui-agent run``: nobody to ask (``Unattended``: approvals follow
    ``--yes`` or the allow-all mode, nothing can be picked, ``/exit`` ends the run after
    the turn as it would anyway); ``/theme`` and ``/copy``, which need the app, say so on
    stderr."""

    def __init__(self, session: Session, err: TextIO) -> None:
        super().__init__(lambda: session.permissions.yes)
        self._err = err

    def theme(self, name: str) -> None:
        print(f"tui-agent: /theme {name} changes the app's look; a headless run has none",
              file=self._err)  # fmt: skip

    def copy(self, text: str) -> None:
        print("tui-agent: /copy needs the app (a headless run has no clipboard); the text "
              "is in the journal and the output above", file=self._err)  # fmt: skip


def run_headless(
    session: Session,
    prompt: str,
    *,
    as_json: bool = False,
    stdin: str = "",
    inputs: TextIO | None = None,
) -> int:
    """Run ``prompt`` (``stdin``: what was piped in, added at its end) as one turn, or, when
    it is a slash command line, run the command: a Markdown command's prompt goes to the
    model as a turn (``stdin`` added at the end of it), any other command prints what it
    says on stdout. Exit status: 0 ok, 1 model/API failure (or cancelled) or a command
    that failed, 2 an unknown command or a prompt that could not be made (nothing sent).

    ``inputs`` (``--input json``): JSON lines read as they come (``parse_input``), after
    ``prompt`` if there is one: each prompt is queued and run in order once the work
    before it ended; ``"steer": true`` sends it into the running turn instead
    (``session.steer``: the model gets it before its next request; with no turn running
    it is queued); ``{"type": "cancel"}`` cancels the running turn, and what was steered
    into it and not delivered runs next. The run ends when the input has ended and the
    queue is done; a bad line is said on stderr and skipped (exit status 2)."""
    printer = Printer(
        sys.stdout, sys.stderr, as_json, shared=same_destination(sys.stdout, sys.stderr)
    )
    session.events.listen(printer.event)
    if as_json:
        from .pricing import tally  # the session's cost on each "done" line

        printer.cost = lambda: tally(session).cost(session.config.settings).to_dict()
    session.frontend = Headless(session, sys.stderr)
    if session.extensions.provider_name == "stub":
        print(
            "tui-agent: no model configured; using the offline stub provider "
            "(set OPENAI_API_KEY or --base-url for a real one)",
            file=sys.stderr,
        )

    cancelling: list[str] = []  # "asked" once Ctrl+C cancelled the turn, "said" once told

    def say_cancelled() -> None:
        if "said" not in cancelling:
            cancelling.append("said")
            printer._err("tui-agent: cancelled")

    def interrupt() -> None:
        """Ctrl+C cancels the turn. Pressed again once nothing is left to cancel, it quits
        at once: a cancelled sync tool keeps running in its thread, and Python would wait.
        A turn cancelled but not yet said so (taking its last checkpoint, or just ended) is
        said cancelled first."""
        if session.cancel():
            cancelling.append("asked")
            return
        if "asked" in cancelling:
            say_cancelled()
        session.conversation.journal.close()
        sys.stdout.flush()
        print("tui-agent: interrupted", file=sys.stderr, flush=True)
        os._exit(1)

    async def work(prompt: str, stdin: str) -> int | None:
        """The turn, or the command; an exit status when it decides one."""
        line = command_in(prompt)
        if line is None:
            text = f"{prompt}\n\n{stdin}" if prompt and stdin else prompt or stdin
            await session.turn(text)
            return None
        name, arguments = line
        await session.extensions.settled()
        command = session.commands.get(name)
        if command is None:
            names = ", ".join(session.commands.names) or "(none)"
            printer._err(
                f"tui-agent: unknown command /{name}. Commands: {names} (to send a prompt "
                "that starts with /, put a space before it)"
            )
            return 2
        if as_json:
            printer._json({"type": "command", "name": name, "arguments": arguments or ""})
        template = prompt_commands.template_of(session, name)
        if template is not None:  # its prompt is a turn: its reply is the output
            await prompt_commands.run_template(session, template, arguments, extra=stdin)
            return None
        if stdin:
            printer._err(f"tui-agent: note: /{name} takes no input: what was piped in is unused")
        await session.extensions.ready()  # what a turn would start (MCP servers and the like)
        printer.command_output = True
        try:
            await session.commands.run(name, arguments)
        finally:
            printer.command_output = False
            printer._end_line()
        return None

    async def guarded(prompt: str) -> int | None:
        """``work`` for one line of ``--input json``: what stops it is said, as ``main``
        says it for a whole run."""
        try:
            return await work(prompt, "")
        except MentionError as exc:
            printer._err(f"tui-agent: {exc}")
            return 2
        except prompt_commands.TemplateError as exc:
            printer._err(f"tui-agent: error: {exc}")
            return 2
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            printer._err(f"tui-agent: error: {exc}")
            return 1

    async def fed(inputs: TextIO) -> int | None:
        """``prompt``, then the JSON lines of ``inputs`` (see ``run_headless``)."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        reader = threading.Thread(
            target=_read_lines,
            args=(inputs, lambda line: loop.call_soon_threadsafe(lines.put_nowait, line)),
            name="tui-agent input",
            daemon=True,
        )
        reader.start()
        queue = [prompt] if prompt.strip() else []
        statuses: list[int] = []
        number = 0  # of the input line
        cancelled = False  # the running turn was cancelled by a line, not by Ctrl+C
        running: asyncio.Task[int | None] | None = None
        reading: asyncio.Task[str | None] | None = None
        while True:
            if running is None and queue:
                running = asyncio.ensure_future(guarded(queue.pop(0)))
            if reading is None and number >= 0:
                reading = asyncio.ensure_future(lines.get())
            waiting = [task for task in (running, reading) if task is not None]
            if not waiting:
                break
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if running is not None and running.done():
                try:
                    status = running.result()
                except asyncio.CancelledError:
                    if not cancelled:  # Ctrl+C: the run ends
                        left = [
                            steer.prompt for steer in session.conversation.steering.take()
                        ] + queue
                        for text in left:
                            printer._err(f"tui-agent: not sent: {text}")
                        raise
                    say_cancelled()
                    cancelling.clear()
                    status = 1
                    queue[:0] = [steer.prompt for steer in session.conversation.steering.take()]
                running, cancelled = None, False
                if status is not None:
                    statuses.append(status)
            if reading is not None and reading.done():
                line = reading.result()
                reading = None
                if line is None:
                    number = -1  # the input ended: what is queued still runs
                    continue
                number += 1
                if not line.strip():
                    continue
                parsed = parse_input(line)
                if isinstance(parsed, str):
                    printer._err(f"tui-agent: input line {number}: {parsed}")
                    statuses.append(2)
                elif parsed.cancel:
                    cancelled = session.cancel() or cancelled
                elif not parsed.steer or not await steered(parsed.text):
                    queue.append(parsed.text)
        if 2 in statuses:
            return 2
        return 1 if 1 in statuses else None

    async def steered(text: str) -> bool:
        """``text`` sent into the running turn; False when it is to be queued instead (no
        turn runs, or it is a command). What stops it is said (True: nothing to queue)."""
        if command_in(text) is not None or not session.conversation.steering.open:
            return False
        try:
            return await session.steer(text)
        except MentionError as exc:
            printer._err(f"tui-agent: {exc}")
        except Exception as exc:  # an on_prompt function stopped it
            printer._err(f"tui-agent: error: {exc}")
        return True

    async def main() -> int:
        task = asyncio.ensure_future(work(prompt, stdin) if inputs is None else fed(inputs))
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, interrupt)
        except (NotImplementedError, RuntimeError):
            pass
        try:
            status = await task
        except asyncio.CancelledError:
            say_cancelled()
            return 1
        except MentionError as exc:  # a bad @path: nothing was sent
            printer._err(f"tui-agent: {exc}")
            return 2
        except prompt_commands.TemplateError as exc:  # a command's prompt: nothing was sent
            printer._err(f"tui-agent: error: {exc}")
            return 2
        except Exception as exc:  # provider construction, unknown provider, a command…
            printer._err(f"tui-agent: error: {exc}")
            return 1
        finally:
            await session.close()  # on_close hooks: MCP servers and the like stop here
        if status is not None:
            return status
        return 1 if printer.failed else 0

    try:
        return asyncio.run(main())
    finally:
        session.conversation.journal.close()
