"""The approval dialog: the answer to the permission hook's question, by key or by mouse.
Imported at the first dialog, after the first frame; its core names come from ``connected``."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static
from textual.widgets.button import ButtonVariant

from ..connected import ApprovalRequest, Decision

GUARD_SECONDS = 0.3


def key_label(key: str, text: str) -> Content:
    """A button's label with its key first, drawn as a key cap (``y Allow once``), as the
    footer puts keys before what they do. Content, not markup: ``"Allow once [y]"`` as
    markup is a style tag and the key vanished from the button."""
    return Content.assemble((key, "reverse"), " ", text)


async def ask_approval(app: App[Any], request: ApprovalRequest) -> Decision:
    """Show the dialog for ``request`` and wait for the answer: a denial when the dialog
    closes without one, and when the wait is cancelled (the turn stopped; the dialog goes)."""
    future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

    def done(decision: Decision | None) -> None:
        if not future.done():
            future.set_result(decision or Decision("deny"))

    app.push_screen(ApprovalScreen(request), done)
    try:
        return await future
    except asyncio.CancelledError:
        if app.screen_stack and isinstance(app.screen, ApprovalScreen):  # not at exit
            app.screen.dismiss(Decision("deny"))
        raise


def preview(request: ApprovalRequest) -> RenderableType:
    """The command highlighted, a diff for write/edit, else the arguments as JSON."""
    from rich.syntax import Syntax  # pygments: not before the first dialog

    args = request.args
    if request.tool == "execute" and isinstance(args.get("command"), str):
        return Syntax(args["command"], "bash", word_wrap=True, theme="ansi_dark")
    if request.tool == "edit" and (
        isinstance(args.get("old"), str) or isinstance(args.get("edits"), list)
    ):
        edits = args["edits"] if isinstance(args.get("edits"), list) else [args]
        hunks = []
        for number, one in enumerate(edits, 1):
            one = one if isinstance(one, dict) else {}
            old = "".join(f"-{line}\n" for line in str(one.get("old", "")).splitlines())
            new = "".join(f"+{line}\n" for line in str(one.get("new", "")).splitlines())
            head = f"@@ edit {number} of {len(edits)} @@\n" if len(edits) > 1 else ""
            hunks.append(f"{head}{old}{new}")
        diff = f"--- {args.get('path')}\n+++ {args.get('path')}\n" + "".join(hunks)
        return Syntax(diff, "diff", word_wrap=True, theme="ansi_dark")
    if request.tool == "write" and isinstance(args.get("content"), str):
        lines = str(args["content"]).splitlines()
        shown = "".join(f"+{line}\n" for line in lines[:200])
        more = f"\n… {len(lines) - 200} more lines" if len(lines) > 200 else ""
        return Group(
            Text(f"new content of {args.get('path')}", style="bold"),
            Syntax(shown + more, "diff", word_wrap=True, theme="ansi_dark"),
        )
    return Syntax(json.dumps(args, indent=2, ensure_ascii=False), "json", word_wrap=True)


AGENT_DESCRIPTION = 32  # characters of a subagent's description in the dialog's title


def title(request: ApprovalRequest) -> str:
    """ "Allow execute", or who asks when a subagent does: "code-reviewer (Expert code
    review…) wants to run execute" (two children's dialogs come one after the other: the
    title tells them apart)."""
    if not request.agent:
        return f"Allow {request.tool}"
    about = " ".join(request.agent_description.split())
    if len(about) > AGENT_DESCRIPTION:
        about = about[: AGENT_DESCRIPTION - 1].rstrip() + "…"
    return f"{request.agent}{f' ({about})' if about else ''} wants to run {request.tool}"


BUTTONS: list[tuple[str, str, str, ButtonVariant]] = [  # key, label, id, variant
    ("y", "Allow once", "once", "success"),
    ("s", "For session", "session", "primary"),
    ("a", "Always", "always", "default"),
    ("n", "Deny", "deny", "error"),
    ("f", "Feedback", "feedback-button", "warning"),
]


class ApprovalScreen(ModalScreen[Decision]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('once')", "Allow once", id="approve.once"),
        Binding("s", "choose('session')", "Allow for session", id="approve.session"),
        Binding("a", "choose('always')", "Always allow", id="approve.always"),
        Binding("n", "choose('deny')", "Deny", id="approve.deny"),
        Binding("f", "feedback", "Deny with feedback", id="approve.feedback"),
        Binding("escape", "choose('deny')", "Deny", show=False, id="approve.escape"),
    ]

    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    ApprovalScreen #approval-title { text-style: bold; color: $warning; }
    ApprovalScreen #approval-preview { height: auto; max-height: 16; margin: 1 0; }
    ApprovalScreen .meta { color: $text-muted; }
    ApprovalScreen Horizontal { height: auto; }
    ApprovalScreen Button { margin: 0 1 0 0; min-width: 10; }
    ApprovalScreen Button:disabled { tint: $background 60%; }
    ApprovalScreen #feedback { display: none; }
    ApprovalScreen #feedback.visible { display: block; }
    """

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self.opened = float("inf")  # armed once the dialog is actually on screen
        self.armed = False  # the guard is over and the buttons are enabled

    def compose(self) -> ComposeResult:
        r = self.request
        alias = f" (called as {r.called_as})" if r.called_as and r.called_as != r.tool else ""
        with Vertical():
            yield Label(
                title(r) + alias + ("" if r.agent else "?"), id="approval-title", markup=False
            )
            if r.tool == "execute" and r.args.get("sandbox") is False:
                yield Static(
                    Text(
                        "This command runs OUTSIDE the sandbox: it can write anywhere you "
                        "can, use the network and read your secrets.",
                        style="bold",
                    ),
                    id="approval-outside",
                )
            with VerticalScroll(id="approval-preview"):
                yield Static(preview(r))
            yield Static(Text(f"subject: {r.subject}", style="dim"), classes="meta")
            yield Static(Text(f"asked by: {r.rule}", style="dim"), classes="meta")
            yield Static(
                Text(f"allow for session adds: {r.tool} {r.session_pattern}", style="dim"),
                classes="meta",
            )
            yield Input(placeholder="Tell the model why (Enter sends, Esc cancels)", id="feedback")
            with Horizontal(id="approval-buttons"):
                # disabled (dimmed) until armed: keys and clicks in the guard do nothing
                for key, text, button_id, variant in BUTTONS:
                    yield Button(key_label(key, text), id=button_id, variant=variant, disabled=True)

    def on_mount(self) -> None:
        self.call_after_refresh(self._arm)

    @staticmethod
    def _now() -> float:
        """Now, on the clock Textual stamps its events with."""
        return Message().time

    def _arm(self) -> None:
        """The dialog is drawn: keys pressed from ``GUARD_SECONDS`` on answer it, and the
        buttons light up then, so the guard is seen, not only felt as swallowed keys."""
        self.opened = self._now()
        self.set_timer(GUARD_SECONDS, self._enable_buttons)

    def _enable_buttons(self) -> None:
        for button in self.query("#approval-buttons Button").results(Button):
            button.disabled = False
        self.armed = True

    def _too_soon(self) -> bool:
        return self._now() - self.opened < GUARD_SECONDS

    async def on_key(self, event: events.Key) -> None:
        # Judged by when the key was pressed, not when it is handled: a key typed before
        # the dialog was drawn (or in its first 0.3 s) never answers it, however busy we were.
        if (
            event.time < self.opened + GUARD_SECONDS
            and not self.query_one("#feedback", Input).has_focus
        ):
            event.stop()
            event.prevent_default()

    def action_choose(self, choice: str) -> None:
        feedback = self.query_one("#feedback", Input)
        if feedback.has_focus and choice == "deny":
            feedback.remove_class("visible")
            feedback.value = ""
            self.set_focus(None)
            return
        if self._too_soon():
            return
        self.dismiss(Decision(choice))  # type: ignore[arg-type]

    def action_feedback(self) -> None:
        if self._too_soon():
            return
        feedback = self.query_one("#feedback", Input)
        feedback.add_class("visible")
        feedback.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "feedback-button":
            self.action_feedback()
        elif event.button.id:
            self.action_choose(event.button.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(Decision("feedback", event.value))


class TrustScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Trust", id="trust.yes"),
        Binding("n", "answer(False)", "Don't trust", id="trust.no"),
        Binding("escape", "answer(False)", "Don't trust", show=False, id="trust.escape"),
    ]
    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen > Vertical {
        width: 80%; max-width: 100; height: auto; border: thick $accent;
        background: $surface; padding: 1 2;
    }
    TrustScreen Horizontal { height: auto; margin-top: 1; }
    TrustScreen Button { margin-right: 1; }
    """

    def __init__(self, folder: str, files: list[str]) -> None:
        super().__init__()
        self.folder = folder
        self.files = files

    def compose(self) -> ComposeResult:
        shown = "\n".join(f"  {f}" for f in self.files[:15])
        more = f"\n  … and {len(self.files) - 15} more" if len(self.files) > 15 else ""
        with Vertical():
            yield Label("Trust this folder?", classes="title")
            yield Static(
                f"{self.folder} has its own code, which runs with your permissions:\n"
                f"{shown}{more}\n\nTrust it only if you know where this code comes from. "
                "The answer is remembered for this folder.",
                markup=False,  # file names with [brackets] show as they are
            )
            with Horizontal():
                yield Button(key_label("y", "Trust"), id="yes", variant="warning")
                yield Button(key_label("n", "Don't trust"), id="no", variant="primary")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")
