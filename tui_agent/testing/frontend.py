"""A person for tests: ``Person`` is a frontend (``tui_agent.Frontend``) that answers
approvals and pickers as scripted and remembers everything it was asked.

    person = Person(answers=["deny"], picks=["2. fix the bug"])
    session.frontend = person
    await session.turn("...")
    assert person.asked == ["approve execute"]
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence

from ..core.protocol.approval import ApprovalRequest, Choice, Decision


class Person:
    """Answers each approval with the next of ``answers`` ("once", "session", "always",
    "deny", or a ``Decision``; ``default`` when they run out) and each picker with the next
    of ``picks`` (None: dismissed). ``asked`` lists what happened, in order: ``"approve
    TOOL"``, ``"choose TITLE"``, ``"exit"``, ``"theme NAME"``, ``"copy TEXT"``;
    ``requests`` keeps the ``ApprovalRequest`` objects, ``copied`` the texts.

    ``decide``, a function of the request returning a ``Decision`` (sync or async),
    answers approvals instead of ``answers``: ``Person(decide=my_dialog)``."""

    interactive = True

    def __init__(
        self,
        answers: Iterable[Choice | Decision] = (),
        picks: Iterable[str | None] = (),
        *,
        decide: Callable[[ApprovalRequest], Decision | Awaitable[Decision]] | None = None,
        default: Choice = "once",
        themes: Sequence[str] = ("textual-dark", "textual-light"),
    ) -> None:
        self.decide = decide
        self.answers = list(answers)
        self.picks = list(picks)
        self.default = default
        self.themes = list(themes)
        self.asked: list[str] = []
        self.requests: list[ApprovalRequest] = []
        self.copied: list[str] = []
        self.theme_shown: str | None = None
        self.exit_requested = False

    async def approve(self, request: ApprovalRequest) -> Decision:
        self.asked.append(f"approve {request.called_as or request.tool}")
        self.requests.append(request)
        if self.decide is not None:
            decided = self.decide(request)
            return await decided if inspect.isawaitable(decided) else decided
        answer = self.answers.pop(0) if self.answers else self.default
        return answer if isinstance(answer, Decision) else Decision(answer)

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        self.asked.append(f"choose {title}")
        return self.picks.pop(0) if self.picks else None

    def exit(self) -> None:
        self.asked.append("exit")
        self.exit_requested = True

    def theme(self, name: str) -> None:
        self.asked.append(f"theme {name}")
        self.theme_shown = name

    def copy(self, text: str) -> None:
        self.asked.append(f"copy {text}")
        self.copied.append(text)
