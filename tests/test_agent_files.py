"""Issue 30: agents as Markdown files, read where each peer keeps them. The fixtures are
the peers' own published files (tests/fixtures/agents/SOURCES.md); what each must give is
written from the peers' documentation: Claude Code's ``tools`` is an allow-list of its
tool names, opencode's ``tools`` switches tools off over all of them, Gemini CLI's is a
list of its tool names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tui_agent.core.agents import AgentSet, load_agents
from tui_agent.core.project.workspace import project_code

FIXTURES = Path(__file__).parent / "fixtures" / "agents"
OUR_TOOLS = ["read", "write", "edit", "glob", "grep", "list", "execute", "git", "task", "todo"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "someone"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def put(folder: Path, name: str, text: str | None = None, *, fixture: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if fixture is not None:
        shutil.copyfile(FIXTURES / fixture, path)
    else:
        assert text is not None
        path.write_text(text, encoding="utf-8")
    return path


def load(project: Path, home: Path, *, trusted: bool = True) -> AgentSet:
    return load_agents(project, trusted=trusted, home=home)


def test_the_claude_code_docs_reviewer_gets_exactly_its_tools(project: Path, home: Path) -> None:
    path = put(project / ".claude" / "agents", "reviewer.md", fixture="claude/code-reviewer.md")
    found = load(project, home)
    assert found.problems == []
    agent = found.get("code-reviewer")  # its front matter's name, not the file's
    assert agent is not None and found.get("reviewer") is None
    # "tools: Read, Grep, Glob, Bash"
    assert agent.tools == ("read", "grep", "glob", "execute")
    assert agent.tool_names(OUR_TOOLS) == ["read", "glob", "grep", "execute"]
    assert (agent.model, agent.requested_model, agent.notes) == (None, "inherit", ())
    assert agent.description.startswith("Expert code review specialist.")
    assert agent.instructions.startswith("You are a senior code reviewer")
    assert agent.instructions.endswith("Include specific examples of how to fix issues.")
    assert (agent.source, agent.dialect, agent.path, agent.mode) == (
        "project",
        "claude",
        path,
        "subagent",
    )
    assert not agent.can_delegate


def test_a_published_claude_subagent_and_its_model_alias(project: Path, home: Path) -> None:
    put(home / ".claude" / "agents", "python-pro.md", fixture="claude/python-pro.md")
    found = load(project, home)
    agent = found.get("python-pro")
    assert agent is not None and found.problems == []
    # "tools: Read, Write, Edit, Bash, Glob, Grep"
    assert agent.tools == ("read", "write", "edit", "execute", "glob", "grep")
    assert agent.source == "user"
    # "model: sonnet": Anthropic's, not configured here
    assert agent.model is None
    assert agent.notes == (
        "model sonnet not configured here (anthropic): uses the session's model",
    )


def test_a_claude_tool_with_no_counterpart_is_a_problem_naming_file_and_line(
    project: Path, home: Path
) -> None:
    path = put(
        project / ".claude" / "agents", "design-bridge.md", fixture="claude/design-bridge.md"
    )
    found = load(project, home)
    agent = found.get("design-bridge")
    assert agent is not None  # loads with the tools it can have
    # "tools: Read, Write, Edit, Bash, Glob, Grep, WebFetch, WebSearch" on line 4
    assert found.problems == [
        f"{path}:4: Claude Code's WebSearch has no counterpart here: left out"
    ]
    assert agent.tools == ("read", "write", "edit", "execute", "glob", "grep", "fetch")
    assert "fetch is not a tool here" not in agent.notes  # the bundled fetch plugin's


def test_the_opencode_docs_review_agent_switches_tools_off(project: Path, home: Path) -> None:
    put(project / ".opencode" / "agent", "review.md", fixture="opencode/review.md")
    found = load(project, home)
    assert found.problems == []
    agent = found.get("review")  # the file name is the agent's name
    assert agent is not None
    # "tools: write: false, edit: false, bash: false": every other tool stays
    assert agent.tools is None
    assert agent.denied == ("write", "edit", "execute")
    assert agent.tool_names(OUR_TOOLS) == ["read", "glob", "grep", "list", "git", "task", "todo"]
    assert not agent.allows("execute", ["bash"]) and not agent.allows("other", ["write"])
    assert agent.allows("read", ["open"])
    assert (agent.mode, agent.temperature, agent.dialect) == ("subagent", 0.1, "opencode")
    assert agent.model is None
    assert agent.requested_model == "anthropic/claude-sonnet-4-20250514"
    assert agent.notes == (
        "model anthropic/claude-sonnet-4-20250514 not configured here (anthropic): "
        "uses the session's model",
    )
    assert agent.instructions.startswith("You are in code review mode.")


def test_the_opencode_docs_writer_loses_only_bash(project: Path, home: Path) -> None:
    put(
        home / ".config" / "opencode" / "agent", "docs-writer.md", fixture="opencode/docs-writer.md"
    )
    agent = load(project, home).get("docs-writer")
    assert agent is not None
    assert agent.tool_names(OUR_TOOLS) == [t for t in OUR_TOOLS if t != "execute"]
    assert agent.source == "user"


def test_the_gemini_docs_security_auditor(project: Path, home: Path) -> None:
    put(project / ".gemini" / "agents", "security-auditor.md", fixture="gemini/security-auditor.md")
    found = load(project, home)
    assert found.problems == []
    agent = found.get("security-auditor")
    assert agent is not None
    # "tools: [read_file, grep_search]", "temperature: 0.2", "max_turns: 10"
    assert agent.tools == ("read", "grep")
    assert (agent.temperature, agent.max_steps, agent.dialect) == (0.2, 10, "gemini")
    assert agent.model is None
    assert agent.notes == (
        "model gemini-3-flash-preview not configured here (google): uses the session's model",
    )


def test_an_unknown_tool_is_a_problem_and_the_agent_loads_without_it(
    project: Path, home: Path
) -> None:
    claude = put(
        project / ".claude" / "agents",
        "x.md",
        "---\nname: x\ndescription: X\ntools: Read, Frobnicate\n---\nBody\n",
    )
    gemini = put(
        project / ".gemini" / "agents",
        "y.md",
        "---\nname: y\ndescription: Y\ntools:\n  - read_file\n  - teleport\n---\nBody\n",
    )
    ours = put(
        project / ".tui-agent" / "agents",
        "z.md",
        "---\ndescription: Z\ntools: [read, bash, mcp__github__*, nonsense]\n---\nBody\n",
    )
    found = load(project, home)
    assert found.problems == [
        f"{gemini}:6: unknown Gemini CLI tool 'teleport': left out",
        f"{claude}:4: unknown Claude Code tool 'Frobnicate': left out",
        f"{ours}:3: unknown tool 'nonsense': left out",
    ]
    assert [found.agents[n].tools for n in "xyz"] == [
        ("read",),
        ("read",),
        ("read", "execute", "mcp__github__*"),
    ]
    z = found.agents["z"]
    tools = {"read": [], "github_issues": ["mcp__github__issues"], "jira_x": ["mcp__jira__x"]}
    assert z.tool_names(tools) == ["read", "github_issues"]


def test_a_claude_tool_limited_by_a_pattern_is_not_given(project: Path, home: Path) -> None:
    path = put(
        project / ".claude" / "agents",
        "reviewer.md",
        '---\nname: reviewer\ndescription: "Reviews"\ntools: Read, Bash(git diff:*)\n'
        "disallowedTools: Write\n---\nReview.\n",
    )
    found = load(project, home)
    agent = found.get("reviewer")
    assert agent is not None
    assert agent.tools == ("read",) and agent.denied == ("write",)
    assert found.problems == [
        f"{path}:4: Bash(git diff:*): a tool limited by a pattern is not supported here, so "
        "execute is not given (write Bash to give all of it)"
    ]


def test_bad_yaml_is_a_problem_and_the_other_files_still_load(project: Path, home: Path) -> None:
    folder = project / ".claude" / "agents"
    bad = put(folder, "bad.md", "---\nname: bad\ndescription: [unclosed\ntools: Read\n---\nx\n")
    none = put(folder, "plain.md", "Just a note, no front matter.\n")
    nameless = put(folder, "quiet.md", "---\nname: quiet\n---\nNo description.\n")
    put(folder, "README.md", "# Our agents\n")
    put(folder, "ok.md", fixture="claude/code-reviewer.md")
    found = load(project, home)
    assert list(found.agents) == ["general", "explore", "code-reviewer"]
    assert len(found.problems) == 3
    assert found.problems[0].startswith(f"{bad}:4: the front matter is not valid YAML: ")
    assert found.problems[1] == (
        f"{none}:1: no front matter: an agent file starts with a --- block"
    )
    assert found.problems[2] == (
        f"{nameless}:1: no description: the model could not know when to use it"
    )


def test_later_folders_replace_earlier_ones_and_say_so(project: Path, home: Path) -> None:
    text = "---\nname: explore\ndescription: {}\ntools: Read\n---\nBody\n"
    gemini = put(home / ".gemini" / "agents", "explore.md", text.format("user's gemini"))
    user = put(home / ".claude" / "agents", "explore.md", text.format("user's"))
    put(project / ".claude" / "agents", "explore.md", text.format("project's claude"))
    ours = put(project / ".tui-agent" / "agents", "explore.md", text.format("project's own"))
    put(project / ".gemini" / "agents", "explore.md", text.format("project's gemini"))
    found = load(project, home)
    explore = found.get("explore")
    assert explore is not None
    assert (explore.description, explore.path, explore.dialect) == (
        "project's own",
        ours,
        "tui-agent",
    )
    assert explore.notes == (
        f"replaces the explore agent of {project / '.claude/agents/explore.md'}",
    )
    alone = load_agents(None, trusted=True, home=home).get("explore")
    assert alone is not None and alone.path == user
    assert alone.notes == (f"replaces the explore agent of {gemini}",)


def test_an_untrusted_projects_agents_are_skipped_with_the_reason(
    project: Path, home: Path
) -> None:
    path = put(project / ".claude" / "agents", "reviewer.md", fixture="claude/code-reviewer.md")
    put(home / ".claude" / "agents", "python-pro.md", fixture="claude/python-pro.md")
    found = load(project, home, trusted=False)
    assert list(found.agents) == ["general", "explore", "python-pro"]
    assert found.skipped == [
        f"{path}: the project is not trusted (tui-agent trust): its agents are not loaded"
    ]
    assert path in project_code(project)  # the trust question lists them


def test_a_model_of_a_configured_provider_is_kept(project: Path, home: Path) -> None:
    folder = project / ".opencode" / "agents"
    put(folder, "a.md", "---\ndescription: A\nmodel: openai/gpt-5\n---\nx\n")
    put(folder, "b.md", "---\ndescription: B\nmodel: anthropic/claude-haiku-4-5\n---\nx\n")
    put(project / ".tui-agent" / "agents", "c.md", "---\ndescription: C\nmodel: qwen3\n---\nx\n")
    found = load_agents(project, trusted=True, home=home, providers=["openai"])
    models = {name: (a.model, a.notes) for name, a in found.agents.items() if name in "abc"}
    assert models == {
        "a": ("gpt-5", ()),
        "b": (
            None,
            (
                "model anthropic/claude-haiku-4-5 not configured here (anthropic): "
                "uses the session's model",
            ),
        ),
        "c": ("qwen3", ()),
    }
    assert found.agents["a"].mode == "all"  # opencode's default mode


def test_our_own_format(project: Path, home: Path) -> None:
    put(
        project / ".tui-agent" / "agents",
        "lead.md",
        "---\ndescription: Leads\nmode: primary\ndelegate: true\nmax_steps: 12\n"
        "tools: read, task, todowrite, ship\n---\nLead.\n",
    )
    found = load_agents(project, trusted=True, home=home, tools={"deploy": ["ship"]})
    lead = found.get("lead")
    assert lead is not None and found.problems == []
    assert lead.tools == ("read", "task", "todo", "deploy")  # a plugin's tool, by its alias
    assert (lead.mode, lead.can_delegate, lead.max_steps) == ("primary", True, 12)
    assert [a.name for a in found.primaries()] == ["lead"]
    assert "lead" not in [a.name for a in found.subagents()]


def test_opencode_star_false_keeps_only_what_is_switched_on(project: Path, home: Path) -> None:
    put(
        project / ".opencode" / "agent",
        "reader.md",
        '---\ndescription: R\nmode: subagent\ntools:\n  "*": false\n  read: true\n  task: true\n'
        'permission:\n  bash:\n    "*": deny\n    "git diff": allow\n---\nx\n',
    )
    reader = load(project, home).get("reader")
    assert reader is not None
    assert reader.tool_names(OUR_TOOLS) == ["read", "task"]
    assert reader.can_delegate  # task switched on
    assert reader.denied == ("execute",)


def test_the_bundled_agents(project: Path, home: Path) -> None:
    found = load(project, home)
    general, explore = found.get("general"), found.get("explore")
    assert general is not None and explore is not None
    assert general.tools is None and general.tool_names(OUR_TOOLS) == OUR_TOOLS
    assert "multi-step" in general.description.lower()
    assert explore.tools == ("read", "glob", "grep", "list")
    assert explore.tool_names(OUR_TOOLS) == ["read", "glob", "grep", "list"]
    assert (explore.source, explore.dialect, explore.path) == ("bundled", "bundled", None)
    assert [a.name for a in found.subagents()] == ["general", "explore"]


def test_a_folder_with_agents_is_the_project_from_its_subfolders(tmp_path: Path) -> None:
    from tui_agent.core.project.workspace import Workspace

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    put(root / ".gemini" / "agents", "a.md", fixture="gemini/security-auditor.md")
    workspace = Workspace(root / "src" / "deep")
    assert workspace.project == root
    assert workspace.project_code == [root / ".gemini" / "agents" / "a.md"]


def test_mcp_tools_by_each_peers_names(project: Path, home: Path) -> None:
    put(
        project / ".claude" / "agents",
        "c.md",
        "---\nname: c\ndescription: C\ntools: Read, mcp__github__create_issue, mcp__jira\n---\nx\n",
    )
    put(
        project / ".gemini" / "agents",
        "g.md",
        "---\nname: g\ndescription: G\ntools: [mcp_slack_*]\n---\nx\n",
    )
    put(
        project / ".opencode" / "agent",
        "o.md",
        '---\ndescription: O\ntools:\n  "mymcp_*": false\n---\nx\n',
    )
    found = load(project, home)
    assert found.problems == []
    session_tools = {  # MCP tools: <server>_<tool>, Claude Code's name as an alias
        "read": ["open"],
        "github_create_issue": ["mcp__github__create_issue"],
        "github_delete_repo": ["mcp__github__delete_repo"],
        "jira_search": ["mcp__jira__search"],
        "slack_post": ["mcp__slack__post"],
        "mymcp_x": ["mcp__mymcp__x"],
    }
    picked = {name: found.agents[name].tool_names(session_tools) for name in "cgo"}
    assert picked == {
        "c": ["read", "github_create_issue", "jira_search"],
        "g": ["slack_post"],
        "o": [t for t in session_tools if t != "mymcp_x"],
    }
