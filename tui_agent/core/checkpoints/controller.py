"""The session's checkpoints: undo, redo and rewind the file changes of a turn, and the
turn itself.

Each user turn gets a ``Checkpoint``. A turn that runs a tool gets a snapshot of the
worktree (the ``CheckpointStore``'s shadow repository, never the user's own) before its
first tool call and one at its end; a turn without tool calls changed no file and gets no
snapshot (a chat costs nothing), but it can still be undone (its messages). The journal
records each checkpoint, undo and redo, so ``--continue`` and ``--resume`` carry them, and
``tui-agent undo`` reads them.

Undo restores only the files the turn changed (``changes(before, after)``) and only when
each still holds what the turn left: a file changed since (by hand, or by something that
was not a turn) is never overwritten without ``force``. The conversation loses the turn's
messages (found from the end by the turn's prompt; a turn compacted or cleared away keeps
its messages and only its files are restored), and the prompt comes back for editing.
"""

from __future__ import annotations

import builtins
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..conversation import journal
from ..conversation.transcript import Transcript
from ..protocol import events as ev
from ..protocol.messages import Message, UserMessage, adopt
from ..protocol.output import Output
from ..protocol.records import Checkpoint as Checkpoint  # re-exported
from ..protocol.records import Restored as Restored  # re-exported
from .store import CheckpointError, CheckpointStore

log = logging.getLogger("tui_agent.undo")

RECORD_TYPES = ("checkpoint", "undo", "redo")


class HandEdited(CheckpointError):
    """Files changed since the agent's turn left them; nothing was restored."""

    def __init__(self, message: str, files: Sequence[str]) -> None:
        super().__init__(message)
        self.files = tuple(files)


@dataclass
class _Undone:
    turn: int
    removed: list[Message] = field(default_factory=list)
    code: bool = True  # its files were restored (redo re-applies them)


class Checkpoints:
    """``session.checkpoints``: ``list()``, ``undo()``, ``redo()``, ``rewind(turn, …)``,
    ``diff()``; the agent calls ``before_tools()`` and the session ``start()``/``end()``."""

    def __init__(
        self,
        *,
        worktree: Callable[[], Path],
        transcript: Transcript,
        events: ev.EventBus,
        output: Output,
        settings: Callable[[], Mapping[str, Any]],
        forget: Callable[[], None] = lambda: None,
    ) -> None:
        self._worktree = worktree
        self.transcript = transcript
        self.events = events
        self.output = output
        self.settings = settings
        self._forget = forget  # the budget's count starts again after the conversation changed
        self._store: CheckpointStore | None = None
        self._items: builtins.list[Checkpoint] = []
        self._undone: builtins.list[_Undone] = []  # newest last: what /redo re-applies
        self._current: int | None = None  # the running turn
        self._snapshotted = False  # the running turn has its first snapshot
        self._journaled = False  # the running turn has a journal record
        self._said_off = False

    # -- state ------------------------------------------------------------------------------

    @property
    def store(self) -> CheckpointStore:
        worktree = Path(self._worktree()).resolve()
        if self._store is None or self._store.worktree != worktree:
            self._store = CheckpointStore(worktree)
        return self._store

    @property
    def enabled(self) -> bool:
        """On unless ``checkpoints = false`` in the settings, and git is there."""
        return self.settings().get("checkpoints", True) is not False and self.store.available

    def list(self) -> builtins.list[Checkpoint]:
        """This session's checkpoints, oldest first (undone ones marked ``undone``)."""
        return list(self._items)

    def _active(self) -> builtins.list[Checkpoint]:
        return [c for c in self._items if not c.undone and c.ended]

    def _get(self, turn: int) -> Checkpoint:
        return next(c for c in self._items if c.turn == turn)

    def _replace(self, checkpoint: Checkpoint) -> None:
        self._items = [checkpoint if c.turn == checkpoint.turn else c for c in self._items]

    def reset(self) -> None:
        """A new conversation (``/clear``): no checkpoints, nothing to redo."""
        self._items, self._undone, self._current = [], [], None

    # -- taking them ----------------------------------------------------------------------

    def start(self, prompt: str) -> None:
        """A user turn begins (its snapshot waits for its first tool call). What was undone
        can no longer be redone: the new turn goes on from here."""
        self._items = [c for c in self._items if not c.undone]
        self._undone = []
        turn = max((c.turn for c in self._items), default=0) + 1
        self._items.append(Checkpoint(turn, prompt, time=_now()))
        self._current, self._snapshotted = turn, False
        self._journaled = False  # the turn's first record carries its prompt

    async def before_tools(self) -> None:
        """Before a reply's tool calls run: the turn's first snapshot, once per turn. A
        failure is said once and the turn goes on (undo then takes back its messages only)."""
        if self._current is None or self._snapshotted:
            return
        self._snapshotted = True
        if not self._usable():
            return
        try:
            snapshot = await self.store.snapshot()
        except CheckpointError as exc:
            self._say_off(str(exc))
            return
        turn = self._current
        checkpoint = replace(self._get(turn), before=snapshot.tree, skipped=snapshot.skipped)
        self._replace(checkpoint)
        self._journal_turn(checkpoint, before=snapshot.tree, skipped=list(snapshot.skipped))

    async def end(self) -> Checkpoint | None:
        """The turn ended (finished, failed or cancelled): its last snapshot, if it had a
        first one."""
        turn, self._current = self._current, None
        if turn is None:
            return None
        checkpoint = self._get(turn)
        after: str | None = None
        skipped = checkpoint.skipped
        if checkpoint.before is not None:
            try:
                snapshot = await self.store.snapshot()
                after, skipped = snapshot.tree, _union(checkpoint, snapshot.skipped)
            except CheckpointError as exc:
                self._say_off(str(exc))
        done = replace(checkpoint, after=after, skipped=skipped, ended=True)
        if after is None:  # without its end a before alone restores nothing safely
            done = replace(done, before=None)
        self._replace(done)
        self._journal_turn(done, after=after, skipped=list(skipped), ended=True)
        self.events.emit(ev.CheckpointTaken(done))
        return done

    def _usable(self) -> bool:
        try:
            if self.enabled:
                return True
        except Exception as exc:  # a worktree that cannot be used: say it, go on
            self._say_off(str(exc))
            return False
        if self.settings().get("checkpoints", True) is not False:
            self._say_off(self.store.reason)
        return False

    def _say_off(self, reason: str) -> None:
        log.warning("checkpoints: %s", reason)
        if not self._said_off:
            self._said_off = True
            self.output.say(f"note: no checkpoint for this turn (/undo cannot undo it): {reason}")

    def _journal_turn(self, checkpoint: Checkpoint, **fields: Any) -> None:
        """A turn's record: the first one (its first snapshot, or its end for a turn
        without tools) carries the prompt and the time too."""
        record: dict[str, Any] = {"type": "checkpoint", "turn": checkpoint.turn}
        if not self._journaled:
            record.update(prompt=checkpoint.prompt, time=checkpoint.time)
            self._journaled = True
        self._journal({**record, **fields})

    def _journal(self, record: dict[str, Any]) -> None:
        self.transcript.journal.write_record(record)

    # -- undo, redo, rewind -----------------------------------------------------------------

    async def undo(self, *, force: bool = False) -> Restored:
        """Take the last turn back: its files as they were before it, its messages out of
        the conversation, its prompt returned for editing."""
        active = self._active()
        if not active:
            raise CheckpointError(self._nothing("undo"))
        return await self._rewind(
            active[-1], code=True, conversation=True, force=force, kind="undo"
        )

    async def rewind(
        self, turn: int, *, code: bool = True, conversation: bool = True, force: bool = False
    ) -> Restored:
        """Back to before ``turn`` (and every later one): the files (``code``), the
        messages (``conversation``), or both. Repeated ``undo`` is ``rewind`` one turn at a
        time; ``redo`` re-applies what ``undo`` and ``rewind`` took back."""
        if not (code or conversation):
            raise CheckpointError("rewind what? choose code, conversation or both")
        active = self._active()
        target = next((c for c in active if c.turn == turn), None)
        if target is None:
            turns = ", ".join(str(c.turn) for c in active) or "none"
            raise CheckpointError(f"no turn {turn} to rewind to (turns with checkpoints: {turns})")
        return await self._rewind(
            target, code=code, conversation=conversation, force=force, kind="rewind"
        )

    restore = rewind

    async def _rewind(
        self, target: Checkpoint, *, code: bool, conversation: bool, force: bool, kind: str
    ) -> Restored:
        active = self._active()
        turns = [c for c in active if c.turn >= target.turn]  # oldest first
        files: tuple[str, ...] = ()
        if code:
            files = await self._restore_before(turns, force=force)
        removed: builtins.list[Message] = []
        note = ""
        if conversation:
            removed, note = self._cut(turns)
        # each turn goes on the redo stack, newest first, so /redo brings back the oldest
        prompts = [c.prompt for c in turns]
        groups = _share(removed, prompts) if removed else [[] for _ in turns]
        for checkpoint, messages in zip(reversed(turns), reversed(groups), strict=True):
            self._replace(replace(checkpoint, undone=True))
            self._undone.append(_Undone(checkpoint.turn, messages, code))
        self._journal(
            {
                "type": "undo",
                "turns": [c.turn for c in turns],
                "code": code,
                "conversation": bool(removed),
                "removed": [journal.written(m) for m in removed],
            }
        )
        restored = Restored(
            kind,
            tuple(c.turn for c in turns),
            files,
            bool(removed),
            prompt=target.prompt,
            note=note,
        )
        self.events.emit(ev.Rewound(restored))
        return restored

    async def redo(self, *, force: bool = False) -> Restored:
        """Re-apply the turn ``undo`` took back last: its files as it left them, and its
        messages back in the conversation."""
        if not self._undone:
            raise CheckpointError(self._nothing("redo"))
        entry = self._undone[-1]
        checkpoint = self._get(entry.turn)
        files = await self._restore_after(checkpoint, force=force) if entry.code else ()
        if entry.removed:
            messages = [*self.transcript.conversation.messages, *entry.removed]
            self.transcript.replace(messages, info={"reason": "redo", "turn": checkpoint.turn})
            self._forget()
        self._undone.pop()
        self._replace(replace(checkpoint, undone=False))
        self._journal({"type": "redo", "turn": checkpoint.turn})
        restored = Restored("redo", (checkpoint.turn,), files, bool(entry.removed))
        self.events.emit(ev.Rewound(restored))
        return restored

    def _nothing(self, what: str) -> str:
        if what == "redo":
            return "nothing to redo: /redo re-applies what /undo or /rewind took back"
        if what == "diff" and self._active():
            return "no changes: no turn of this session ran a tool with a checkpoint yet"
        return f"nothing to {what}: this session has no turn yet"

    def _off_reason(self) -> str:
        if self.settings().get("checkpoints", True) is False:
            return "checkpoints = false in config.toml"
        return self.store.reason

    async def _restore_before(self, turns: Sequence[Checkpoint], *, force: bool) -> tuple[str, ...]:
        """The files of ``turns`` (oldest first) as they were before the oldest; refused
        when one holds something else than the turns left it (changed by hand since)."""
        if not any(c.snapshots for c in turns):
            return ()
        store = self.store
        state: dict[str, str | None] = dict(await store.files((await store.snapshot()).tree))
        targets: dict[str, str | None] = {}
        edited: builtins.list[str] = []
        for checkpoint in reversed(turns):  # newest first, as if undone one by one
            if checkpoint.snapshots is None:
                continue
            first, last = checkpoint.snapshots
            before = await store.files(first)
            after = await store.files(last)
            for change in await store.changes(first, last):
                path = change.path
                if path in checkpoint.skipped:
                    continue
                if state.get(path) != after.get(path) and path not in edited:
                    edited.append(path)
                state[path] = before.get(path)
                targets[path] = first
        if edited and not force:
            raise _hand_edited(edited, "undo")
        return await self._apply(targets)

    async def _restore_after(self, checkpoint: Checkpoint, *, force: bool) -> tuple[str, ...]:
        if checkpoint.snapshots is None:
            return ()
        first, last = checkpoint.snapshots
        store = self.store
        now = await store.files((await store.snapshot()).tree)
        before = await store.files(first)
        paths = [c.path for c in await store.changes(first, last)]
        paths = [p for p in paths if p not in checkpoint.skipped]
        edited = [p for p in paths if now.get(p) != before.get(p)]
        if edited and not force:
            raise _hand_edited(edited, "redo")
        return await self._apply(dict.fromkeys(paths, last))

    async def _apply(self, targets: Mapping[str, str | None]) -> tuple[str, ...]:
        by_tree: dict[str, builtins.list[str]] = {}
        for path, tree in targets.items():
            if tree is not None:
                by_tree.setdefault(tree, []).append(path)
        for tree, paths in by_tree.items():
            await self.store.restore(tree, sorted(paths))
        return tuple(sorted(targets))

    def _cut(self, turns: Sequence[Checkpoint]) -> tuple[builtins.list[Message], str]:
        """Take ``turns``' messages (oldest first) out of the conversation: everything
        from the oldest one's prompt on. Found from the end, one prompt per turn; a turn
        not found (compacted or cleared away) leaves the conversation as it is."""
        messages = list(self.transcript.conversation.messages)
        cut = len(messages)
        for checkpoint in reversed(turns):
            found = _last_prompt(messages[:cut], checkpoint.prompt)
            if found is None:
                return [], (
                    "the conversation was kept: the turn's messages are no longer in it "
                    "(compacted or cleared); only its files were restored"
                )
            cut = found
        removed = messages[cut:]
        self.transcript.replace(
            messages[:cut], info={"reason": "undo", "turns": [c.turn for c in turns]}
        )
        self._forget()
        return removed, ""

    # -- diff -------------------------------------------------------------------------------

    async def diff(self, *, last: bool = False) -> str:
        """The session's changes (or ``last``: the last turn's that ran a tool) as a
        unified diff: from before the first snapshot of the session (of that turn) to now
        (to that turn's end). "" when nothing changed."""
        taken = [c.snapshots for c in self._active() if c.snapshots is not None]
        if not taken:
            raise CheckpointError("no changes to show: no turn of this session has run a tool")
        if last:
            return await self.store.diff(*taken[-1])
        now = await self.store.snapshot()
        return await self.store.diff(taken[0][0], now.tree)

    # -- the journal ------------------------------------------------------------------------

    def load(self, records: Sequence[Mapping[str, Any]]) -> None:
        """The checkpoints, undos and redos a journal recorded (``--continue``, ``undo``).
        Records of one turn add up (its start, its first snapshot, its end)."""
        self.reset()
        for record in records:
            kind = record.get("type")
            turn = record.get("turn")
            if kind == "checkpoint" and isinstance(turn, int):
                self._load_checkpoint(turn, record)
            elif kind == "undo" and isinstance(record.get("turns"), list):
                turns = [t for t in record["turns"] if isinstance(t, int)]
                removed = record.get("removed")
                messages = [
                    adopt(m)
                    for m in (removed if isinstance(removed, list) else [])
                    if isinstance(m, dict)
                ]
                prompts = [
                    next((c.prompt for c in self._items if c.turn == number), "")
                    for number in turns
                ]
                groups = _share(messages, prompts) if messages else [[] for _ in turns]
                code = record.get("code") is not False
                for number, group in zip(reversed(turns), reversed(groups), strict=True):
                    found = next((c for c in self._items if c.turn == number), None)
                    if found is not None:
                        self._replace(replace(found, undone=True))
                        self._undone.append(_Undone(number, list(group), code))
            elif kind == "redo" and isinstance(turn, int):
                self._undone = [u for u in self._undone if u.turn != turn]
                found = next((c for c in self._items if c.turn == turn), None)
                if found is not None:
                    self._replace(replace(found, undone=False))
        # a turn the journal left without its end (a crash): its messages can be undone,
        # its files not (what it changed is unknown)
        self._items = [
            c if c.ended else replace(c, ended=True, before=None, after=None) for c in self._items
        ]

    def _load_checkpoint(self, turn: int, record: Mapping[str, Any]) -> None:
        found = next((c for c in self._items if c.turn == turn), None)
        if found is None:  # a turn's first record: a new turn, so nothing to redo
            self._items = [c for c in self._items if not c.undone]
            self._undone = []
            found = Checkpoint(
                turn, str(record.get("prompt", "")), time=str(record.get("time", ""))
            )
            self._items.append(found)
        changes: dict[str, Any] = {}
        for key in ("before", "after"):
            if key in record:
                value = record[key]
                changes[key] = value if isinstance(value, str) else None
        skipped = record.get("skipped")
        if isinstance(skipped, list):
            changes["skipped"] = tuple(str(s) for s in skipped)
        if record.get("ended") is True:
            changes["ended"] = True
        updated = replace(found, **changes)
        if updated.ended and updated.after is None:
            updated = replace(updated, before=None)
        self._replace(updated)


def _union(checkpoint: Checkpoint, skipped: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted({*checkpoint.skipped, *skipped}))


def _typed(message: Message) -> str | None:
    """The prompt a turn's first message was typed as (``UserMessage.prompt``: without its
    ``@path`` attachments and the prompt functions' context), or None for any other message
    (a ``!command``'s output, a steer, a stop function's continuation are no turn's
    start): read from its origin, never from its text."""
    if not isinstance(message, UserMessage) or message.origin != "prompt":
        return None
    return message.prompt


def _last_prompt(messages: Sequence[Message], prompt: str) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage) and _typed(message) == prompt:
            return index
    return None


def _share(messages: Sequence[Message], prompts: Sequence[str]) -> list[list[Message]]:
    """``messages`` (several turns', oldest first) split into one group per turn, each
    starting at its turn's own prompt (``prompts``, oldest first), found from the end as
    ``_cut`` finds them: a prompt steered into a turn (``session.steer``) starts no group.
    What cannot be split so goes to the first group."""
    bounds = [len(messages)]
    for prompt in reversed(prompts[1:]):
        found = _last_prompt(messages[: bounds[0]], prompt)
        if found is None:
            return [list(messages), *[[] for _ in prompts[1:]]]
        bounds.insert(0, found)
    bounds.insert(0, 0)
    return [list(messages[a:b]) for a, b in itertools.pairwise(bounds)]


def _hand_edited(files: Sequence[str], what: str) -> HandEdited:
    shown = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
    return HandEdited(
        f"not done: {len(files)} file{'s' * (len(files) != 1)} changed since the agent's turn "
        f"({shown}). /{what} --force overwrites them; otherwise they stay as they are "
        "(nothing was changed).",
        files,
    )


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")


def records_of(lines: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """The journal lines of checkpoints, undos and redos (found by prefix, unparsed)."""
    prefixes = tuple(f'{{"type": "{kind}"' for kind in RECORD_TYPES)
    return [(number, line) for number, line in lines if line.startswith(prefixes)]


def load_from(path: Path, checkpoints: Checkpoints) -> None:
    """``checkpoints.load`` with the records of the journal at ``path``."""
    lines = records_of(journal.read_lines(path))
    checkpoints.load(journal.parse_records(path, lines))
