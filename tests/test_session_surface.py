"""The session's public surface is the documented one: the README's "The session" table
names every public attribute, and everything it names exists (issue 14)."""

from __future__ import annotations

import re
from pathlib import Path

from tui_agent import create_session

README = Path(__file__).resolve().parents[1] / "README.md"


def documented_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("### The session")
    return text[start : text.index("\n### ", start + 1)]


def documented(prefix: str) -> set[str]:
    """``prefix.name`` written in the section (``session.`` or ``workspace.``…), and names
    listed in a part's row as ``name`` or ``name()``."""
    return set(re.findall(rf"`(?:await )?{re.escape(prefix)}\.([a-z_]+)", documented_section()))


def row_names(part: str) -> set[str]:
    row = next(line for line in documented_section().splitlines() if f"`session.{part}`" in line)
    described = row.split("|")[2]
    return set(re.findall(r"`([a-z_]+)(?:\(\))?`", described))


def public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_every_public_session_name_is_documented_and_nothing_else(project: Path) -> None:
    session = create_session(project)
    names = documented("session")
    assert public(session) == names


def test_the_parts_have_what_the_table_says(project: Path) -> None:
    session = create_session(project)
    for part in ("workspace", "extensions"):
        listed = row_names(part)
        assert listed, part
        assert listed <= public(getattr(session, part)), part
    assert "journal" in public(session.transcript)
    assert "tokens" in public(session.agent)
    assert session.workspace.directory == session.directory
    assert session.extensions.config is session.config
