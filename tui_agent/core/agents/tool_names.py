"""The peers' tool names and the tool each means here, one table per agent, and the names
that have nothing to become (each says so in a load problem, never a silent drop).

Claude Code's table is also the command hooks' (``hooks.claude_names``): one table for
matchers, rules and agent files.
"""

from __future__ import annotations

# tui-agent's own tools (the bundled plugins'), the two the agent layer adds and ``skill``
# (offered when there are skills)
BUILT_IN = (
    "read", "write", "edit", "glob", "grep", "list", "execute", "git", "task", "todo", "skill",
    "fetch",
)  # fmt: skip
OUR_ALIASES = {
    "bash": "execute",
    "sh": "execute",
    "exec": "execute",
    "open": "read",
    "agent": "task",
    "todowrite": "todo",
    "todo_write": "todo",
    "write_todos": "todo",
    "webfetch": "fetch",
    "web_fetch": "fetch",
}

# Claude Code's tool names and the tool each means here (a matcher may use either)
CLAUDE_TOOLS = {
    "Bash": "execute",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Read": "read",
    "Glob": "glob",
    "Grep": "grep",
    "LS": "list",
    "WebFetch": "fetch",
    "Task": "task",
    "Agent": "task",
    "TodoWrite": "todo",
    "Skill": "skill",
}
CLAUDE_MISSING = (
    "NotebookEdit",
    "NotebookRead",
    "WebSearch",
    "BashOutput",
    "KillShell",
    "KillBash",
    "TodoRead",
    "SlashCommand",
    "AskUserQuestion",
    "ExitPlanMode",
    "EnterPlanMode",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "LSP",
)

# opencode's built-in tools (its docs' "Tools" page)
OPENCODE_TOOLS = {
    "bash": "execute",
    "edit": "edit",
    "write": "write",
    "read": "read",
    "grep": "grep",
    "glob": "glob",
    "list": "list",
    "task": "task",
    "todowrite": "todo",
    "todoread": "todo",
    "webfetch": "fetch",
    "skill": "skill",
}
OPENCODE_MISSING = ("lsp", "apply_patch", "patch", "multiedit", "websearch", "question")
# opencode's permission keys and the tools each governs here ("edit" covers every write)
OPENCODE_PERMISSIONS = {
    "edit": ("edit", "write"),
    "bash": ("execute",),
    "webfetch": ("fetch",),
    "task": ("task",),
    "read": ("read",),
    "grep": ("grep",),
    "glob": ("glob",),
    "list": ("list",),
    "todowrite": ("todo",),
}

# Gemini CLI's tool names (packages/core/src/tools/definitions/base-declarations.ts)
GEMINI_TOOLS = {
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "write",
    "replace": "edit",
    "run_shell_command": "execute",
    "glob": "glob",
    "grep_search": "grep",
    "search_file_content": "grep",  # its former name
    "list_directory": "list",
    "write_todos": "todo",
    "web_fetch": "fetch",
    "invoke_agent": "task",
}
GEMINI_MISSING = (
    "google_web_search",
    "save_memory",
    "ask_user",
    "activate_skill",
    "get_internal_docs",
    "enter_plan_mode",
    "exit_plan_mode",
    "complete_task",
    "update_topic",
    "read_mcp_resource",
    "list_mcp_resources",
)

MCP_PREFIX = "mcp__"
