"""The session's public surface is the documented one (issues 14 and 28): the README's
"The session" table names every public attribute, at most 26 (issue 30 added the agents),
and each part has what its row says; the names before issue 28 warn once, naming their
new home, and still work; the frontend is the one way the session asks the person; the
public facades export what plugin authors use (their ``__all__`` pinned here), not engine
internals."""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path

import pytest

import tui_agent
from tui_agent import ApprovalRequest, Decision, Frontend, create_session
from tui_agent.core.session import legacy
from tui_agent.testing import Person

README = Path(__file__).resolve().parents[1] / "README.md"


def documented_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("### The session")
    return text[start : text.index("\n### ", start + 1)]


def table_rows() -> list[str]:
    return [line for line in documented_section().splitlines() if line.startswith("| `")]


def documented_names() -> set[str]:
    """The session names the table's first column gives (``session.name``)."""
    names: set[str] = set()
    for row in table_rows():
        first = row.split("|")[1]
        names |= set(re.findall(r"session\.([a-z_]+)", first))
    return names


def row(part: str) -> str:
    return next(line for line in table_rows() if line.split("|")[1].strip() == f"`session.{part}`")


# What each part's row documents (and the part must have).
PARTS = {
    "conversation": {"messages", "tail", "record", "expand", "clear", "resume", "sessions",
                     "journal", "system_prompt", "complete", "usage", "steering", "budget"},
    "permissions": {"mode", "set_mode", "yes", "ask"},
    "frontend": {"approve", "choose", "exit", "theme", "copy", "themes", "interactive"},
    "workspace": {"directory", "worktree", "project", "trusted", "needs_trust", "trust",
                  "distrust", "config_file", "system_prompt"},
    "extensions": {"problems", "skipped", "plugins", "loaded", "offered_tools", "hide_tools",
                   "kept", "ready", "provider_name", "model", "set_model", "provider_names"},
    "checkpoints": {"list", "undo", "redo", "rewind", "restore", "diff", "store"},
    "agents": {"definitions", "run", "running", "tool_names", "describe"},
}  # fmt: skip


def public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


@pytest.fixture
def session(project: Path) -> tui_agent.Session:
    legacy._warned.clear()  # each old name warns once per process: again for each test here
    return create_session(project)


def test_every_public_session_name_is_documented_and_nothing_else(
    session: tui_agent.Session,
) -> None:
    assert public(session) == documented_names()
    assert len(public(session)) <= 26


@pytest.mark.parametrize("part", sorted(PARTS))
def test_each_part_has_what_its_row_says(session: tui_agent.Session, part: str) -> None:
    described = row(part).split("|")[2]
    for name in PARTS[part]:
        assert re.search(rf"`(?:await )?{name}[`(]", described), f"{part}.{name} not in its row"
    assert PARTS[part] <= public(getattr(session, part)), PARTS[part] - public(
        getattr(session, part)
    )


def test_the_spec_names_are_there(session: tui_agent.Session) -> None:
    """SPEC §5: toolbox, commands, output, conversation, config, provider, directory,
    worktree, id, turn, reload."""
    assert session.workspace.directory == session.directory
    assert session.extensions.config is session.config
    assert session.conversation.messages == []
    assert session.id == session.conversation.journal.id
    for name in ("toolbox", "commands", "output", "provider", "worktree", "turn", "reload"):
        assert hasattr(session, name)


def test_clear_gives_a_new_id_and_resume_the_old_one(session: tui_agent.Session) -> None:
    session.conversation.record({"role": "user", "content": "hello"})
    first = session.id
    session.conversation.clear()
    assert session.id != first
    assert session.conversation.messages == []
    assert session.conversation.resume(first)
    assert session.id == first
    assert [m.text for m in session.conversation] == ["hello"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("mode", "permissions.mode"),
        ("yes", "permissions.yes"),
        ("provider_name", "extensions.provider_name"),
        ("steering", "conversation.steering"),
        ("budget", "conversation.budget"),
        ("transcript", "conversation"),
        ("exit_requested", "frontend.exit_requested"),
    ],
)
def test_an_old_name_warns_once_with_its_new_home_and_gives_the_same(
    session: tui_agent.Session, old: str, new: str
) -> None:
    with pytest.warns(DeprecationWarning, match=re.escape(f"session.{old} is now session.{new}")):
        value = getattr(session, old)
    expected: object = session
    for part in new.split("."):
        expected = getattr(expected, part)
    assert value == expected
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second use is quiet
        getattr(session, old)


def test_old_actions_still_act(session: tui_agent.Session) -> None:
    seen: list[str] = []
    with pytest.warns(DeprecationWarning):
        session.on_turn(lambda: seen.append("turn"))  # type: ignore[attr-defined]
        session.set_mode("plan")  # type: ignore[attr-defined]
        session.record({"role": "user", "content": "hi"})  # type: ignore[attr-defined]
    assert session.permissions.mode == "plan"
    assert [m.text for m in session.conversation] == ["hi"]
    assert session.extensions._turn_hooks  # the turn function is this load's


def test_an_unknown_name_is_still_an_attribute_error(session: tui_agent.Session) -> None:
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        session.nonsense  # type: ignore[attr-defined]  # noqa: B018


async def test_a_frontend_answers_for_the_person(session: tui_agent.Session) -> None:
    person = Person(answers=["deny"], picks=["b"], themes=["dark", "light"])
    assert isinstance(person, Frontend)
    session.frontend = person
    request = ApprovalRequest("write", "write", {"path": "a"})
    assert (await session.permissions.ask(request)).choice == "deny"
    assert await session.frontend.choose("Pick", ["a", "b"]) == "b"
    await session.commands.run_line("/exit")
    await session.commands.run_line("/theme light")
    assert person.asked == ["approve write", "choose Pick", "exit", "theme light"]
    assert list(session.frontend.themes) == ["dark", "light"]


async def test_without_a_person_the_policy_answers(project: Path) -> None:
    asked = create_session(project)
    request = ApprovalRequest("write", "write", {"path": "a"})
    decision = await asked.permissions.ask(request)
    assert (decision.choice, decision.unasked) == ("deny", True)
    assert await asked.frontend.choose("Pick", ["a"]) is None  # nobody to pick
    allowed = create_session(project, yes=True)
    assert (await allowed.permissions.ask(request)).choice == "once"
    await allowed.commands.run_line("/exit")
    assert allowed.frontend.exit_requested


async def test_an_old_style_approver_still_answers(session: tui_agent.Session) -> None:
    asked: list[str] = []

    async def approver(request: ApprovalRequest) -> Decision:
        asked.append(request.tool)
        return Decision("once")

    with pytest.warns(DeprecationWarning):
        session.approver = approver  # type: ignore[attr-defined]
    assert (await session.permissions.ask(ApprovalRequest("edit", "edit"))).allowed
    assert asked == ["edit"]


# What each public facade exports: what plugins and their authors use (the README and the
# bundled plugins), not the engines' internals (those stay importable from tui_agent.core).
FACADES = {
    "agent_plugins": {
        "AgentPlugin",
        "MCP_SCHEMA",
        "PLUGIN_SCHEMA",
        "PluginServer",
        "VERSION",
        "data_dir_for",
        "expand",
        "find_agent_plugins",
        "plugin_folders",
        "project_files",
        "read_plugin",
        "schema_file",
    },
    "agents": {"AgentDefinition", "AgentSet", "agents_markdown", "as_data", "load_agents"},
    "budget": {"Budget", "Summariser", "Use", "estimate", "text_tokens"},
    "checkpoints": {
        "Change",
        "Checkpoint",
        "CheckpointError",
        "CheckpointStore",
        "Checkpoints",
        "HandEdited",
        "Restored",
        "Snapshot",
    },
    "describe": {"tool_markdown", "tools_markdown"},
    "edits": {
        "MATCHERS",
        "Applied",
        "Edit",
        "EditError",
        "apply_edit",
        "apply_edits",
        "unified_diff",
    },
    "images": {
        "MAX_BYTES",
        "MAX_INPUT",
        "MAX_SIDE",
        "MIME_TYPES",
        "ImageError",
        "NotAnImage",
        "Prepared",
        "dimensions",
        "folder",
        "image_part",
        "prepare",
        "read",
        "save",
        "size_text",
        "sniff",
    },
    "lsp": {
        "BUILTINS",
        "DEFAULT_SCRUB",
        "Check",
        "DiagnosticSettings",
        "Holder",
        "Problem",
        "ServerSpec",
        "Servers",
        "Settings",
        "read_settings",
        "result_mark",
        "scrubbed_env",
        "servers_of",
    },
    "paths": {
        "bundled_plugins_dir",
        "home_plugins_dir",
        "user_cache_dir",
        "user_config_dir",
        "user_data_dir",
        "user_log_dir",
    },
    "permissions": {
        "MODES",
        "Rules",
        "Subject",
        "add_rule",
        "matches",
        "session_pattern",
        "strictest",
        "subjects_for",
        "with_rule",
    },
    "pricing": {
        "SHIPPED",
        "Cost",
        "Line",
        "Price",
        "Tally",
        "Tokens",
        "dollars",
        "price_for",
        "tally",
    },
    "safe_git": {
        "CONFIG",
        "DIFF_OPTIONS",
        "USER_VARIABLES",
        "argv",
        "driver_overrides",
        "environment",
        "executable",
        "with_config",
    },
    "sandbox": {"Sandbox", "availability", "caused", "hint", "problems"},
    "search": {
        "LINE_CUT",
        "GrepResult",
        "Line",
        "Listing",
        "PatternError",
        "SearchError",
        "files",
        "glob",
        "grep",
    },
    "skills": {
        "ALIASES",
        "Part",
        "Place",
        "Rule",
        "Skill",
        "SkillSet",
        "TOOL",
        "already_loaded",
        "as_data",
        "carry",
        "catalog_tokens",
        "content",
        "find_skills",
        "held",
        "how",
        "loaded_names",
        "parameters",
        "plugin_place",
        "project_files",
        "prompt",
        "read_rules",
        "read_skill",
        "result",
        "shown_path",
        "skills_markdown",
        "summary",
        "tool_description",
    },
    "todo": {
        "ALIASES",
        "MARKS",
        "STATUSES",
        "TOOL",
        "TodoError",
        "TodoItem",
        "TodoList",
        "carry",
        "line",
        "parse",
        "read_back",
        "record",
        "result",
        "summary",
        "text",
    },
    "truncation": {"MAX_BYTES", "MAX_LINES", "keep_tail", "output_dir", "save_output"},
    "web": {
        "BACKENDS",
        "FORMATS",
        "Converted",
        "FetchError",
        "FetchSettings",
        "Page",
        "Redirect",
        "SearchError",
        "SearchResult",
        "SearchSettings",
        "URLError",
        "Unreadable",
        "convert",
        "fetch",
        "parse",
        "register_backend",
        "search",
        "subject",
    },
}


@pytest.mark.parametrize("name", sorted(FACADES))
def test_a_facade_exports_what_plugin_authors_use(name: str) -> None:
    module = importlib.import_module(f"tui_agent.{name}")
    assert set(module.__all__) == FACADES[name]
    for exported in module.__all__:
        assert getattr(module, exported) is not None
    # nothing else public but modules and typing helpers
    extra = {
        n
        for n in public(module) - set(module.__all__)
        if not isinstance(getattr(module, n), type(importlib)) and n not in {"Path", "annotations"}
    }
    assert not extra, extra


def test_the_events_carry_facts_not_requests() -> None:
    import tui_agent.events as events

    assert not [n for n in events.__all__ if n.endswith("Requested")]
