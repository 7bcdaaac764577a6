"""Memory files (core/project/memory.py): which ``AGENTS.md`` / ``CLAUDE.md`` files apply,
in which order, and their ``@path`` imports, as the agents whose files they are read them.

The real files in tests/fixtures/memory/ (SOURCES.md) are used where the rule is about a
real file; the import chains are made here (said in each test)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import write

from tui_agent.core.project import memory as memory_module
from tui_agent.core.project.memory import (
    MAX_FILE_CHARS,
    MAX_IMPORT_DEPTH,
    Memory,
    imports,
)
from tui_agent.core.project.workspace import Workspace
from tui_agent.core.util.paths import user_config_dir

FIXTURES = Path(__file__).parents[2] / "fixtures" / "memory"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The fixture repository (top AGENTS.md, pkg/AGENTS.md, docs/CLAUDE.md) as a git
    worktree outside HOME."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "repo", root)
    (root / ".git").mkdir()
    return root


def order(memory: Memory) -> list[str]:
    return [memory.shown(file.path) for file in memory.files()]


def test_agents_md_from_the_git_root_down_to_the_folder_nearest_last(tmp_path: Path) -> None:
    """Codex: "Starting at the project root (typically the Git root), Codex walks down to
    your current working directory ... Codex concatenates files from the root down ...
    Files closer to your current directory override earlier guidance because they appear
    later in the combined prompt." The user's own file comes first (Codex's global scope;
    ours is tui-agent's config folder). A sibling folder's file does not apply."""
    root = tmp_path / "mono"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "TOP")
    write(root / "services" / "AGENTS.md", "SERVICES")
    write(root / "services" / "api" / "AGENTS.md", "API")
    write(root / "web" / "AGENTS.md", "SIBLING")
    write(user_config_dir() / "AGENTS.md", "GLOBAL")
    workspace = Workspace(root / "services" / "api")
    prompt = workspace.system_prompt()
    assert order(workspace.memory) == [
        "~/.config/tui-agent/AGENTS.md",
        "AGENTS.md",
        "services/AGENTS.md",
        "services/api/AGENTS.md",
    ]
    assert [scope.scope for scope in workspace.memory.files()] == ["user", *["project"] * 3]
    positions = [prompt.index(text) for text in ("GLOBAL", "TOP", "SERVICES", "API")]
    assert positions == sorted(positions)
    assert "SIBLING" not in prompt


def test_a_folder_without_agents_md_gives_its_claude_md(tmp_path: Path) -> None:
    """opencode: "In any directory without an AGENTS.md, OpenCode reads CLAUDE.md instead
    ... An AGENTS.md in a directory always takes precedence over its CLAUDE.md". Claude
    Code's project memory is "./CLAUDE.md or ./.claude/CLAUDE.md"; its
    "./CLAUDE.local.md" holds "personal project-specific preferences", read beside either
    (it copies neither)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "AGENTS-TOP")
    write(root / "CLAUDE.md", "CLAUDE-TOP (a copy of AGENTS.md)")
    write(root / "CLAUDE.local.md", "LOCAL-TOP")
    write(root / "app" / "CLAUDE.md", "CLAUDE-APP")
    write(root / "app" / ".claude" / "CLAUDE.md", "DOT-CLAUDE-APP")
    workspace = Workspace(root / "app")
    assert order(workspace.memory) == [
        "AGENTS.md",
        "CLAUDE.local.md",
        "app/CLAUDE.md",
        "app/.claude/CLAUDE.md",
    ]
    assert workspace.memory.files()[1].scope == "local"
    assert "CLAUDE-TOP" not in workspace.system_prompt()


def test_a_claude_md_symlinked_to_agents_md_is_read_once(tmp_path: Path) -> None:
    """The agentskills repository's CLAUDE.md is a symlink to its AGENTS.md (SOURCES.md):
    opencode "a symlink between the two only loads once"."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    shutil.copy(FIXTURES / "repo" / "AGENTS.md", root / "AGENTS.md")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    (root / "sub").mkdir()
    (root / "sub" / "CLAUDE.md").symlink_to("../AGENTS.md")  # one file, two names
    workspace = Workspace(root / "sub")
    assert order(workspace.memory) == ["AGENTS.md"]
    assert workspace.system_prompt().count("# Agent Instructions") == 1


def test_the_fixture_repository_starts_with_its_top_file_only(repo: Path) -> None:
    """The issue's repository: at the start the top AGENTS.md (and the global one)
    applies; pkg/AGENTS.md and docs/CLAUDE.md wait until a tool reaches their folder."""
    shutil.copy(FIXTURES / "user" / "AGENTS.md", user_config_dir() / "AGENTS.md")
    workspace = Workspace(repo)
    prompt = workspace.system_prompt()
    assert order(workspace.memory) == ["~/.config/tui-agent/AGENTS.md", "AGENTS.md"]
    assert "Agent Skills is a small, portable, client-neutral format." in prompt
    assert "Define the smallest genuinely portable interoperability floor" in prompt
    assert "toolsets/ Guidelines" not in prompt and "pydantic_ai_slim" not in prompt


def test_touch_adds_a_subfolder_once_and_forget_drops_it(repo: Path) -> None:
    """Claude Code: nested CLAUDE.md files "are not loaded at launch, but only included
    when Claude reads files in those subtrees"; opencode: "Reading a file or listing a
    directory loads all AGENTS.md files between that target and the workspace"."""
    memory = Workspace(repo).memory
    added = memory.touch("pkg/x.py")
    assert [memory.shown(file.path) for file in added] == ["pkg/AGENTS.md"]
    assert added[0].scope == "nested"
    assert memory.touch("pkg/y.py") == []  # once
    assert memory.touch(repo / "pkg") == []
    assert memory.touch("README.md") == []  # the top folder applies already
    assert memory.touch(repo.parent / "elsewhere" / "x.py") == []  # outside the repository
    assert order(memory) == ["AGENTS.md", "pkg/AGENTS.md"]
    docs = memory.touch("docs/guide.md")
    assert [memory.shown(file.path) for file in docs] == ["docs/CLAUDE.md"]
    memory.forget()
    assert order(memory) == ["AGENTS.md"]


def test_a_folder_reached_from_a_subfolder_session_adds_the_folders_down_to_it(
    repo: Path,
) -> None:
    """A session in pkg/ that reads docs/: docs is no subfolder of the session's, but it is
    in the repository: its file applies from then on (the folders between the top and it,
    as opencode loads "all AGENTS.md files between that target and the workspace")."""
    write(repo / "docs" / "api" / "AGENTS.md", "API-DOCS")
    memory = Workspace(repo / "pkg").memory
    assert order(memory) == ["AGENTS.md", "pkg/AGENTS.md"]
    added = memory.touch(repo / "docs" / "api" / "index.md")
    assert [memory.shown(file.path) for file in added] == [
        "docs/CLAUDE.md",
        "docs/api/AGENTS.md",
    ]


def test_outside_git_the_folders_above_up_to_home_apply(tmp_path: Path) -> None:
    """Outside a git repository Claude Code "recurses up to (but not including) the root
    directory /"; the home folder's own files are not a project's (opencode stops there
    too), so the walk stops below it."""
    home = Path.home()
    write(home / "AGENTS.md", "HOME-FILE")
    write(home / "work" / "AGENTS.md", "WORK")
    write(home / "work" / "notes" / "CLAUDE.md", "NOTES")
    workspace = Workspace(home / "work" / "notes")
    assert [file.path for file in workspace.memory.files()] == [
        home / "work" / "AGENTS.md",
        home / "work" / "notes" / "CLAUDE.md",
    ]
    assert "HOME-FILE" not in workspace.system_prompt()


# -- imports ---------------------------------------------------------------------------------


def test_the_real_claude_md_has_no_imports_in_its_code() -> None:
    """Claude Code: "imports are not evaluated inside markdown code spans and code blocks".
    pydantic-ai's CLAUDE.md holds `@agent.tool` in a code span and @dataclass,
    @agent.tool, @deprecated(...) in fenced blocks: none is an import."""
    text = (FIXTURES / "repo" / "docs" / "CLAUDE.md").read_text()
    assert "`@agent.tool`" in text and "@dataclass" in text and "@deprecated(" in text
    assert imports(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See @README.md for project overview and @package.json for commands.",
         ["README.md", "package.json"]),
        ("- Git workflow: @docs/git-instructions.md", ["docs/git-instructions.md"]),
        ("- Personal overrides: @~/.claude/my-project-instructions.md",
         ["~/.claude/my-project-instructions.md"]),
        ("@AGENTS.md", ["AGENTS.md"]),
        ("Mail me at user@example.com", []),
        ("Use `@inline.md` here", []),
        ("```\n@fenced.md\n```\n@after.md", ["after.md"]),
        ("~~~md\n@tilde.md\n~~~", []),
        ("A path with a space: @my\\ notes.md", ["my notes.md"]),
    ],
)  # fmt: skip
def test_import_syntax(text: str, expected: list[str]) -> None:
    """Claude Code: "CLAUDE.md files can import additional files using @path/to/import
    syntax" (the docs' own examples above), "not evaluated inside markdown code spans and
    code blocks"; an ``@`` inside a word (an e-mail address) starts no import."""
    assert imports(text) == expected


def test_imports_are_relative_to_the_file_holding_them(tmp_path: Path) -> None:
    """Claude Code: "Both relative and absolute paths are allowed"; a relative one is taken
    from the file that holds it (made files: sub/CLAUDE.md imports @style.md, which is
    sub/style.md, not the top's style.md). Imported files come right after the file
    importing them."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "TOP see @docs/guide.md.")
    write(root / "docs" / "guide.md", "GUIDE")
    write(root / "style.md", "WRONG STYLE")
    write(root / "sub" / "CLAUDE.md", "SUB uses @style.md and @/" + str(root / "abs.md")[1:])
    write(root / "sub" / "style.md", "SUB STYLE")
    write(root / "abs.md", "ABSOLUTE")
    memory = Workspace(root / "sub").memory
    assert order(memory) == [
        "AGENTS.md",
        "docs/guide.md",
        "sub/CLAUDE.md",
        "sub/style.md",
        "abs.md",
    ]
    files = memory.files()
    assert files[1].scope == "import" and files[1].imported_by == root / "AGENTS.md"
    prompt = Workspace(root / "sub").system_prompt()
    assert "SUB STYLE" in prompt and "WRONG STYLE" not in prompt
    assert "(imported by sub/CLAUDE.md)" in prompt


def test_imports_go_at_most_five_hops_and_each_file_once(tmp_path: Path) -> None:
    """Claude Code: "Imported files can recursively import additional files, with a
    max-depth of 5 hops." A chain of made files hop0 → hop1 → … → hop6: hop1 to hop5 are
    imported, hop6 (six hops) is not and is listed as skipped; a cycle back to the first
    file reads nothing twice."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "HOP0 @hop1.md")
    for hop in range(1, 7):
        write(root / f"hop{hop}.md", f"HOP{hop} @hop{hop + 1}.md @AGENTS.md")
    memory = Workspace(root).memory
    assert MAX_IMPORT_DEPTH == 5
    assert order(memory) == ["AGENTS.md", *[f"hop{n}.md" for n in range(1, 6)]]
    skipped = memory.load().skipped
    assert [(s.path, s.reason) for s in skipped if s.path == "hop6.md"] == [
        ("hop6.md", "more than 5 imports deep")
    ]


def test_imports_never_reach_outside_the_repository_or_the_user_config_folder(
    tmp_path: Path,
) -> None:
    """The issue: imports "never outside the project or the user's config folder". A made
    AGENTS.md asks for ~/.ssh/id_rsa, a file beside the repository and one through a
    symlink out of it: all refused and listed; one in the user's config folder is read."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(Path.home() / ".ssh" / "id_rsa", "PRIVATE KEY")
    write(tmp_path / "beside.md", "BESIDE")
    write(user_config_dir() / "shared.md", "SHARED RULES")
    (root / "link.md").symlink_to(tmp_path / "beside.md")
    write(
        root / "AGENTS.md",
        "TOP @~/.ssh/id_rsa @../beside.md @link.md @~/.config/tui-agent/shared.md",
    )
    workspace = Workspace(root)
    prompt = workspace.system_prompt()
    assert "PRIVATE KEY" not in prompt and "BESIDE" not in prompt
    assert "SHARED RULES" in prompt
    refused = {s.path: s.reason for s in workspace.memory.load().skipped}
    assert set(refused) == {"~/.ssh/id_rsa", "../beside.md", "link.md"}
    assert all("outside the repository" in reason for reason in refused.values())


def test_a_missing_import_is_listed_and_the_rest_loads(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "TOP @docs/missing.md @README.md")
    write(root / "README.md", "README TEXT")
    memory = Workspace(root).memory
    assert order(memory) == ["AGENTS.md", "README.md"]
    assert [(s.path, s.reason) for s in memory.load().skipped] == [
        ("docs/missing.md", "no such file")
    ]


# -- caps and changes ------------------------------------------------------------------------


def test_a_long_file_is_cut_and_the_total_is_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "A" * (MAX_FILE_CHARS + 100))
    write(root / "sub" / "AGENTS.md", "B" * 1000)
    memory = Workspace(root / "sub").memory
    first = memory.files()[0]
    assert first.cut and len(first.text) == MAX_FILE_CHARS
    monkeypatch.setattr(memory_module, "MAX_TOTAL_CHARS", MAX_FILE_CHARS + 500)
    loaded = memory.load()
    assert [memory.shown(f.path) for f in loaded.files] == ["AGENTS.md"]
    assert loaded.skipped[0].path.endswith("sub/AGENTS.md")
    assert "passed" in loaded.skipped[0].reason


def test_an_edited_file_applies_from_the_next_prompt(tmp_path: Path) -> None:
    """``/memory`` opens a file in the editor: what is saved is in the next request."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "FIRST VERSION")
    workspace = Workspace(root)
    assert "FIRST VERSION" in workspace.system_prompt()
    write(root / "AGENTS.md", "SECOND VERSION, longer")
    assert "SECOND VERSION" in workspace.system_prompt()
    (root / "AGENTS.md").unlink()
    assert "Instructions from" not in workspace.system_prompt()
