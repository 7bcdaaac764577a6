"""Command hooks: shell commands run at a session's moments, in Claude Code's hook protocol,
so hook scripts written for Claude Code work here unchanged.

Where they come from, read on every load in this order (each hook keeps its file):
``<user config dir>/config.toml`` (``[[hooks.PreToolUse]]`` tables), the Claude Code
plugins in the user's plugin folders (``<folder>/<plugin>/hooks/hooks.json``, by folder
name), and in a trusted project only its ``.tui-agent/config.toml``, ``.tui-agent/hooks.json``,
``.claude/settings.json`` and ``.claude/settings.local.json`` (their ``hooks`` section),
then the plugins in its ``.agents/plugins/``. Each file may use the flat shape
(``matcher``, ``command``, ``timeout`` in one table) or Claude's nested one (``matcher``
and a ``hooks`` array of ``{"type": "command", ...}``).

How they run: ``/bin/sh -c COMMAND`` in the session's folder, in a process group of its
own, with the event as JSON on stdin in Claude Code's names (``claude_names.py``;
``transcript_path``: ``claude_transcript.py``) and ``CLAUDE_PROJECT_DIR``,
``TUI_AGENT_PROJECT_DIR`` and ``CLAUDE_PLUGIN_ROOT`` (the plugin's folder, or the folder
of the file that declared the hook) set, so ``${CLAUDE_PLUGIN_ROOT}`` in a command
expands. Exit 0 is success (stdout is JSON when it starts with ``{``), exit 2 blocks (stderr
says why), any other exit, a timeout (the whole group is killed) or a failure to start is
an error shown to the user that blocks nothing.

The bundled plugin ``command_hooks`` (``plugins/command_hooks.py``) reads them on every
load and wires the engine in: the tool events are ordinary global toolbox hooks (one
before hook for ``PreToolUse``, one after hook for ``PostToolUse``); bundled plugins load
by file name, so they come before the ``permissions`` plugin's hook; the other events use
``session.on("prompt" | "stop" | "start" | "compact" | "subagent_stop" | "end", ...)``
(``moments.py``), and ``Notification`` follows the session's ``Attention`` events.

Exit 2 and JSON per event follow Claude Code's table: it blocks or keeps going
``PreToolUse``, ``PostToolUse`` (feedback), ``UserPromptSubmit``, ``Stop`` and
``SubagentStop``; for ``Notification``, ``SessionEnd``, ``PreCompact`` and
``SessionStart`` it blocks nothing and its stderr is shown to the user.

The parts: ``reading.py`` (the files and the ``hooks`` table), ``running.py`` (one
command), ``engine.py`` (the events); this module gathers what they offer.
"""

from .claude_names import CLAUDE_TOOL_NAMES as CLAUDE_TOOL_NAMES
from .engine import Engine as Engine
from .engine import HookHost as HookHost
from .engine import Loaded as Loaded
from .engine import PromptStopped as PromptStopped
from .engine import in_force as in_force
from .reading import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from .reading import EVENTS as EVENTS
from .reading import TOOL_EVENTS as TOOL_EVENTS
from .reading import CommandHook as CommandHook
from .reading import HookSet as HookSet
from .reading import load as load
from .reading import parse as parse
from .reading import project_files as project_files
from .running import Outcome as Outcome
from .running import run as run
