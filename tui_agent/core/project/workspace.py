"""The workspace: the folder a session works in, its git root, and whether its code may run.

Project-local code (plugins, tool files, a project ``config.toml``) runs only in a trusted
folder; the answer is remembered per folder (``trust``). Nothing here loads anything: the
session's ``extensions`` ask the workspace which folders they may read.

Where project code lives is each part's knowledge: the parts that read project files
(plugins and tool files, Markdown commands, agent files, command hooks) register a finder
(``register_project_code``) when imported; the session's extensions import them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..protocol.context import ToolContext, find_worktree
from . import config as config_module
from . import trust
from .memory import Memory
from .prompt import system_prompt

# what makes a folder a project: its own code (Markdown command and agent folders included)
PROJECT_MARKERS = (
    ".tui-agent",
    ".agents/plugins",
    ".claude/commands",
    ".opencode/command",
    ".opencode/commands",
    ".claude/agents",
    ".opencode/agent",
    ".opencode/agents",
    ".gemini/agents",
    ".agents/skills",
    ".claude/skills",
    ".opencode/skill",
    ".opencode/skills",
)

CodeFinder = Callable[[Path], list[Path]]
# the parts' finders of project code, by their place in the list (``order``)
_CODE_FINDERS: dict[CodeFinder, int] = {}


def register_project_code(finder: CodeFinder, order: int = 50) -> CodeFinder:
    """``finder(project)`` lists project code files of one part (they need trust);
    ``order`` places them in ``project_code`` (plugin and tool files 10, Agent Plugins 12,
    Markdown commands 20, agent files 25, skills 27, command hooks 30)."""
    _CODE_FINDERS[finder] = order
    return finder


def project_root(directory: Path, worktree: Path) -> Path:
    """The nearest folder from ``directory`` up to the git root holding project-local code."""
    home = Path.home().resolve()
    if worktree != directory and worktree in directory.parents:
        candidates = [
            directory,
            *[p for p in directory.parents if p == worktree or worktree in p.parents],
        ]
    else:
        candidates = [directory]
    for candidate in candidates:
        if candidate == home:
            continue
        if any((candidate / marker).is_dir() for marker in PROJECT_MARKERS):
            return candidate
        if (candidate / ".mcp.json").is_file():  # Claude Code's project MCP servers
            return candidate
    return directory


def project_code(project: Path) -> list[Path]:
    """Project-local code that needs the folder to be trusted: the registered parts'
    files, the project's ``config.toml`` and its ``.mcp.json``."""
    found: list[Path] = []
    for finder in sorted(_CODE_FINDERS, key=_CODE_FINDERS.__getitem__):
        found.extend(finder(project))
    config_file = config_module.project_config_file(project)
    if config_file.is_file():
        found.append(config_file)
    mcp_servers = project / ".mcp.json"  # Claude Code's project MCP servers: commands to run
    if mcp_servers.is_file():
        found.append(mcp_servers)
    return found


class Workspace:
    """``directory`` (where the session works), ``worktree`` (its git root, or the
    directory), ``project`` (the nearest folder up to the git root holding project code:
    ``.agents/plugins``, ``.tui-agent/tools``, ``.tui-agent/config.toml``) and ``memory``
    (its ``AGENTS.md`` / ``CLAUDE.md`` files: ``memory.py``)."""

    def __init__(self, directory: str | Path = ".", *, trusted: bool = False) -> None:
        self.directory = Path(directory).expanduser().resolve()
        if not self.directory.is_dir():
            raise NotADirectoryError(f"not a folder: {self.directory}")
        self.worktree = find_worktree(self.directory)
        self.project = project_root(self.directory, self.worktree)
        self._trusted = trusted  # --trust, or trusted in this session
        # the AGENTS.md / CLAUDE.md files that apply (read as text, trusted or not)
        self.memory = Memory(self.directory, self.worktree)

    @property
    def project_code(self) -> list[Path]:
        """The project's own code files (empty when it has none)."""
        return project_code(self.project)

    @property
    def trusted(self) -> bool:
        """The project's code may run (``--trust``, or remembered for this folder)."""
        return self._trusted or trust.decision(self.project) is True

    @property
    def needs_trust(self) -> bool:
        """Project code exists and nobody has said yes or no for this folder yet."""
        return not self.trusted and trust.decision(self.project) is None and bool(self.project_code)

    def trust(self, remember: bool = True) -> None:
        """Let the project's code run (remembered for the folder unless ``remember=False``).
        ``session.reload()`` then loads the code."""
        if remember:
            trust.remember(self.project, True)
        self._trusted = True

    def distrust(self) -> None:
        """Remember that this folder's code must not run."""
        trust.remember(self.project, False)
        self._trusted = False

    @property
    def config_file(self) -> Path:
        """The project's ``.tui-agent/config.toml`` (read only when trusted)."""
        return config_module.project_config_file(self.project)

    def system_prompt(self) -> str:
        """The system prompt for this folder, with the memory files that apply now
        (``memory``: ``AGENTS.md`` and ``CLAUDE.md`` from the repository's top down, the
        user's, and the subfolders' a tool has reached)."""
        return system_prompt(self.directory, self.worktree, self.memory)

    def tool_context(self, session_id: str, call_id: str = "", message_id: str = "") -> ToolContext:
        """What a tool handler's ``context`` holds for a call in this workspace."""
        return ToolContext(
            agent="main",
            session_id=session_id,
            message_id=message_id,
            directory=str(self.directory),
            worktree=str(self.worktree),
            call_id=call_id,
        )

    def __repr__(self) -> str:
        return f"Workspace({str(self.directory)!r})"
