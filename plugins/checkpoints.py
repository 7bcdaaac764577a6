"""Built-in checkpoint commands: /undo, /redo, /rewind, /diff (``session.checkpoints``)."""

from __future__ import annotations

import shlex

import tui_agent
from tui_agent.checkpoints import Checkpoint, Restored

MODES = {
    "code and conversation": (True, True),
    "conversation only": (False, True),
    "code only": (True, False),
}
WORDS = {"both": (True, True), "conversation": (False, True), "code": (True, False)}


@tui_agent.setup("checkpoints")
def checkpoints(session: tui_agent.Session) -> None:
    say = session.output.say
    points = session.checkpoints

    def not_while_busy(what: str) -> None:
        if session.busy:
            raise ValueError(f"/{what} waits for the turn to end: press Esc to cancel it first")

    def flags(args: str | None, allowed: set[str]) -> tuple[list[str], bool]:
        words = shlex.split(args or "")
        force = "--force" in words
        words = [w for w in words if w != "--force"]
        unknown = [w for w in words if w.startswith("-") or (allowed and w not in allowed)]
        if unknown:
            raise ValueError(f"unknown argument {unknown[0]!r}")
        return words, force

    def report(done: Restored) -> None:
        files = ", ".join(done.files[:12]) + (
            f" and {len(done.files) - 12} more" if len(done.files) > 12 else ""
        )
        what = {"undo": "Undid", "redo": "Redid", "rewind": "Rewound"}[done.kind]
        turns = ", ".join(str(t) for t in done.turns)
        parts = [f"{what} turn{'s' * (len(done.turns) != 1)} {turns}"]
        parts.append(f"files restored: {files}" if done.files else "no file to restore")
        if done.kind != "redo" and done.conversation:
            parts.append("its messages are out of the conversation")
        if done.kind == "redo" and done.conversation:
            parts.append("its messages are back in the conversation")
        say("; ".join(parts) + "." + (f" Note: {done.note}." if done.note else ""))

    @session.commands.register(
        "undo",
        description="Take the last turn back: its file changes and its messages "
        "(/undo --force overwrites files changed since)",
        completions=lambda: ["--force"],
    )
    async def undo_command(args: str | None) -> None:
        not_while_busy("undo")
        _, force = flags(args, set())
        report(await points.undo(force=force))

    @session.commands.register(
        "redo",
        description="Re-apply the turn /undo took back",
        completions=lambda: ["--force"],
    )
    async def redo_command(args: str | None) -> None:
        not_while_busy("redo")
        _, force = flags(args, set())
        report(await points.redo(force=force))

    def label(checkpoint: Checkpoint) -> str:
        prompt = " ".join(checkpoint.prompt.split())
        prompt = prompt if len(prompt) <= 70 else prompt[:69] + "…"
        files = "" if checkpoint.snapshots else " (no file changes)"
        return f"{checkpoint.turn}. {prompt}{files}"

    def turns() -> list[Checkpoint]:
        return [c for c in points.list() if c.ended and not c.undone]

    @session.commands.register(
        "rewind",
        description="Go back to before a turn: /rewind [TURN] [both|conversation|code]",
        completions=lambda: [str(c.turn) for c in turns()],
    )
    async def rewind_command(args: str | None) -> None:
        not_while_busy("rewind")
        words, force = flags(args, set())
        listed = turns()
        if not listed:
            raise ValueError("nothing to rewind: this session has no turn yet")
        turn: int | None = None
        mode: tuple[bool, bool] | None = None
        for word in words:
            if word.isdigit():
                turn = int(word)
            elif word in WORDS:
                mode = WORDS[word]
            else:
                raise ValueError(
                    f"unknown argument {word!r}: a turn number, or both, conversation or code"
                )
        if turn is None:
            picked = await session.frontend.choose(
                "Rewind to before which prompt?", [label(c) for c in reversed(listed)]
            )
            if picked is None:
                if not session.frontend.interactive:  # headless: say what to type
                    lines = ["| Turn | Prompt |", "|---|---|"]
                    lines += [
                        f"| {c.turn} | {label(c).split('. ', 1)[1].replace('|', '/')} |"
                        for c in listed
                    ]
                    lines.append("\n`/rewind TURN [both|conversation|code]` goes back before it.")
                    say("\n".join(lines), kind="markdown")
                return
            turn = int(picked.split(".", 1)[0])
        if mode is None:
            chosen = await session.frontend.choose(
                f"Rewind to before turn {turn}: what?", list(MODES)
            )
            if chosen is None and session.frontend.interactive:
                return  # dismissed
            mode = MODES.get(chosen or "", (True, True))
        code, conversation = mode
        report(await points.rewind(turn, code=code, conversation=conversation, force=force))

    @session.commands.register(
        "diff",
        description="The session's file changes as a diff (/diff last: the last turn's)",
        completions=lambda: ["last"],
    )
    async def diff_command(args: str | None) -> None:
        words, _ = flags(args, {"last"})
        text = await points.diff(last="last" in words)
        if not text.strip():
            say("No changes." if "last" not in words else "The last turn changed no file.")
            return
        fence = "````" if "```" in text else "```"
        say(f"{fence}diff\n{text.rstrip()}\n{fence}", kind="markdown")
