"""Write SVG screenshots of the real app, driven against the testing kit's fake server.

    python -m tui_agent.screenshots [OUTPUT_DIR]     # default: ./screenshots

Runs in a throwaway HOME and project folder, so nothing of yours is read or changed.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from .testing import Call, FakeOpenAI, Reply, wait_for_prompt

SIZE = (110, 34)
README = "# demo\n\nA small project used for screenshots.\n"


async def _wait_for(pilot, condition, seconds: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("the app did not reach the expected state")
        await pilot.pause(0.05)


async def shoot(out: Path, work: Path) -> list[Path]:
    from .core.session.session import create_session
    from .ui.app import TuiAgentApp
    from .ui.dialogs.approval import ApprovalScreen

    project = work / "home" / "demo"  # under HOME: shown as ~/demo, the same every run
    project.mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "README.md").write_text(README)
    (project / "app.py").write_text("def main():\n    print('hello')\n")
    written: list[Path] = []
    script = [
        Reply(
            "Let me look at the project first.",
            thinking="The user wants an overview. Reading the README is the quickest start.",
            calls=[Call("read", {"path": "README.md"})],
        ),
        Reply(
            "This is a **small demo project**:\n\n- `README.md` describes it\n"
            "- `app.py` has a `main()` that prints a greeting\n\n"
            "Shall I add a test for `main()`?"
        ),
        Reply(  # pip must reach PyPI and your environment: outside the sandbox, so it asks
            "Installing needs the network and your environment, so outside the sandbox.",
            calls=[Call("execute", {"command": "pip install -e .", "sandbox": False})],
        ),
        Reply("Understood: I will not install it. Tell me when I may."),
    ]
    async with FakeOpenAI(script, models=["demo-model"], context_limit=32_768) as server:
        session = create_session(project, base_url=server.base_url, model="demo-model")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            prompt = await wait_for_prompt(pilot)  # right after the first frame
            prompt.text = "What is in this project?"
            await pilot.press("enter")
            await _wait_for(pilot, lambda: len(server.requests) >= 2 and not session.busy)
            await pilot.pause(0.3)
            written.append(Path(app.save_screenshot("chat.svg", str(out))))

            prompt.text = "Install it in my environment"
            await pilot.press("enter")
            await _wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await _wait_for(pilot, lambda: app.screen.armed)  # type: ignore[attr-defined]
            await pilot.pause(0.1)
            written.append(Path(app.save_screenshot("approval.svg", str(out))))
            await pilot.press("n")
            await _wait_for(pilot, lambda: len(server.requests) >= 4 and not session.busy)

            await pilot.press("ctrl+t")
            await pilot.pause(0.2)
            app.query_one("#tools-table").move_cursor(row=6)  # type: ignore[attr-defined]
            await pilot.pause(0.3)
            written.append(Path(app.save_screenshot("tools.svg", str(out))))
            await pilot.press("ctrl+t")

            await pilot.press("ctrl+p")
            await pilot.pause(0.2)
            await pilot.press(*"/tools re")
            await pilot.pause(0.6)
            written.append(Path(app.save_screenshot("palette.svg", str(out))))
            await pilot.press("escape")
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tui-agent-shots-") as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        os.environ["HOME"] = str(home)
        for var, sub in [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_CACHE_HOME", ".cache"),
        ]:
            os.environ[var] = str(home / sub)
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TUI_AGENT_MODEL"):
            os.environ.pop(var, None)
        written = asyncio.run(shoot(out, work))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
