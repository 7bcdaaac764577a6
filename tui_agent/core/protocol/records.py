"""The records events carry, defined here so that ``protocol`` needs nothing above it:
a turn's ``Checkpoint`` and what an undo ``Restored`` (used by ``checkpoints``), a
``ShellRun`` (used by ``sandbox.user_shell``) and a ``TodoItem`` (``conversation.todo``).
Their old homes re-export them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Checkpoint:
    """One turn: its prompt and its snapshots, ``before`` its first tool call and
    ``after`` its end (both None for a turn that ran no tool, or when a snapshot failed:
    then undo takes back its messages only). ``ended``: the turn is over. ``skipped``:
    files over the size limit, not in the snapshots (never restored or deleted)."""

    turn: int
    prompt: str
    before: str | None = None
    after: str | None = None
    skipped: tuple[str, ...] = ()
    time: str = ""
    ended: bool = False
    undone: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def snapshots(self) -> tuple[str, str] | None:
        """``(before, after)`` when the turn has both, else None (no file to restore)."""
        if self.before is None or self.after is None:
            return None
        return self.before, self.after


@dataclass(frozen=True)
class Restored:
    """What ``undo``, ``redo`` or ``rewind`` did: ``files`` restored (posix paths relative
    to the worktree), ``conversation``: whether the turns' messages were taken out (or put
    back), ``prompt``: the prompt to edit again (undo and rewind; "" for redo)."""

    kind: str
    turns: tuple[int, ...]
    files: tuple[str, ...]
    conversation: bool
    prompt: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ShellRun:
    """A ``!command`` that ran: its ``output`` as kept (the end of a long one, with a note
    saying where the whole text is: ``full_output``), ``exit_status`` (None when killed
    before it ended), and whether the user ``cancelled`` it."""

    command: str
    output: str
    exit_status: int | None
    cancelled: bool = False
    elapsed: float = 0.0
    full_output: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.cancelled

    @property
    def status(self) -> str:
        """``exit status 0``, ``killed by signal 9``, ``cancelled after 2.1 s``."""
        if self.cancelled:
            return f"cancelled after {self.elapsed:.1f} s"
        if self.exit_status is None:
            return "no exit status"
        if self.exit_status < 0:
            return f"killed by signal {-self.exit_status}"
        return f"exit status {self.exit_status}"


TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled")


@dataclass(frozen=True)
class TodoItem:
    """One item of the todo list (``conversation/todo.py``): ``content`` (what to do),
    ``status`` (one of ``TODO_STATUSES``), and what the peers' tools also send: ``id`` and
    ``priority`` (opencode), ``active_form`` (Claude Code's ``activeForm``: "Running the
    tests")."""

    content: str
    status: str = "pending"
    id: str | None = None
    priority: str | None = None
    active_form: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The item as the tool's result and the journal write it (only the fields set;
        ``activeForm`` as Claude spells it)."""
        data: dict[str, Any] = {"content": self.content, "status": self.status}
        if self.id is not None:
            data["id"] = self.id
        if self.priority is not None:
            data["priority"] = self.priority
        if self.active_form is not None:
            data["activeForm"] = self.active_form
        return data
