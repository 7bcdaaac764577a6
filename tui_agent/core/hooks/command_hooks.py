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

The tool events are ordinary global toolbox hooks (one before hook for ``PreToolUse``,
one after hook for ``PostToolUse``), registered before the plugins' setups, so they run
before the permission hook; the other events use ``session.on_prompt``, ``on_stop`` and
``on_start`` (``moments.py``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import os
import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..extensions.moments import PromptBlocked
from ..extensions.plugins import LoadProblem
from ..project import config as config_module
from ..protocol.approval import ApprovalRequest
from ..protocol.errors import PermissionDenied
from ..tools.toolbox import CallInfo, current_call
from ..util import paths
from ..util.processes import let_go
from .claude_names import (
    CLAUDE_TOOL_NAMES,
    claude_input,
    claude_name,
    claude_response,
    our_input,
    rule_matches,
    rule_problem,
)
from .claude_transcript import ClaudeTranscript

if TYPE_CHECKING:
    from ..extensions.plugins import LoadReport
    from ..project.workspace import Workspace
    from ..session.session import Session

log = logging.getLogger("tui_agent.command_hooks")

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT = 60.0
# our permission modes under Claude's names (the hooks' permission_mode)
PERMISSION_MODES = {
    "ask": "default",
    "auto-edit": "acceptEdits",
    "plan": "plan",
    "allow-all": "bypassPermissions",
}
SHAPE = (
    "a table of hook events, each an array of tables with a command and optional matcher "
    'and timeout ([[hooks.PreToolUse]] command = "./guard.sh")'
)
KEEP_STDERR = 2000  # characters of a failing hook's stderr shown to the user


@dataclass(frozen=True)
class CommandHook:
    """One command for one event. ``matcher``: a regex the whole tool name must match
    (our name or Claude's for it); empty or ``*`` matches every tool. For ``SessionStart``
    it matches the source (``startup``, ``resume``, ``clear``); other events have none.
    ``condition``: the hook's ``"if"`` (Claude's permission-rule syntax), tool events only.
    ``plugin_root``: ``CLAUDE_PLUGIN_ROOT`` for it (the plugin's folder, or the folder of
    the file that declared it)."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    source: str = ""  # the file it came from
    condition: str = ""
    plugin_root: str = ""

    def matches(self, name: str, claude: str = "") -> bool:
        """Whether the matcher takes the tool ``name`` (ours), its ``claude`` name
        (``Bash``, ``MultiEdit``, an MCP tool's ``mcp__server__tool``) or any Claude name
        that means it here."""
        if self.matcher in ("", "*"):
            return True
        pattern = _pattern(self.matcher)
        if pattern.fullmatch(name) or (claude and pattern.fullmatch(claude)):
            return True
        return any(ours == name and pattern.fullmatch(c) for c, ours in CLAUDE_TOOL_NAMES.items())


@functools.lru_cache(maxsize=256)
def _pattern(matcher: str) -> re.Pattern[str]:
    return re.compile(matcher)


@dataclass
class HookSet:
    """What one load found: the hooks in force, project files skipped as untrusted,
    events and hook types read but not run here, and files with a problem (none of
    their hooks run)."""

    hooks: list[CommandHook] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)

    def for_event(self, event: str) -> list[CommandHook]:
        return [hook for hook in self.hooks if hook.event == event]


# -- reading ----------------------------------------------------------------------------------


def _seconds(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def parse(
    table: Any, source: str = "", where: str = "hooks", root: str = ""
) -> tuple[list[CommandHook], list[str], list[str]]:
    """The hooks in a ``hooks`` table (TOML or JSON, flat or Claude's nested shape), the
    problems with its shape, and what is read but not run here (other events, hooks of
    another ``type``, an ``"if"`` on an event that has no tool). ``root``: their
    ``CLAUDE_PLUGIN_ROOT`` (by default the folder of ``source``)."""
    if not root and source:
        root = str(Path(source).parent)
    hooks: list[CommandHook] = []
    problems: list[str] = []
    ignored: list[str] = []
    if not isinstance(table, Mapping):
        return [], [f"{where} must be {SHAPE}"], []
    for event, entries in table.items():
        at = f"{where}.{event}"
        if not isinstance(entries, list):
            problems.append(f"{at} must be an array of tables ([[{at}]] in TOML, a list in JSON)")
            continue
        if event not in EVENTS:
            ignored.append(f"{event} (tui-agent runs {', '.join(EVENTS)})")
            continue
        for index, entry in enumerate(entries):
            place = f"{at}[{index}]"
            if not isinstance(entry, Mapping):
                problems.append(f"{place} must be a table with a command")
                continue
            matcher = entry.get("matcher", "")
            if not isinstance(matcher, str):
                problems.append(f"{place}.matcher must be a string (a tool-name regex)")
                continue
            try:
                re.compile(matcher if matcher != "*" else "")
            except re.error as exc:
                problems.append(f"{place}.matcher is not a valid regex: {exc}")
                continue
            if "hooks" in entry:  # Claude's shape: a matcher and its commands
                inner = entry["hooks"]
                if not isinstance(inner, list):
                    problems.append(f"{place}.hooks must be an array of tables")
                    continue
                commands = [(f"{place}.hooks[{i}]", item) for i, item in enumerate(inner)]
            else:
                commands = [(place, entry)]
            for spot, item in commands:
                if not isinstance(item, Mapping):
                    problems.append(f"{spot} must be a table with a command")
                    continue
                kind = item.get("type", "command")
                if kind != "command":
                    ignored.append(f'{event} hook of type "{kind}" (only "command" runs)')
                    continue
                command = item.get("command")
                if not isinstance(command, str) or not command.strip():
                    problems.append(f"{spot} needs command = a shell command (a string)")
                    continue
                timeout = item.get("timeout", DEFAULT_TIMEOUT)
                if not _seconds(timeout):
                    problems.append(f"{spot}.timeout must be a number of seconds above 0")
                    continue
                condition = item.get("if", "")
                if "if" in item:
                    problem = rule_problem(condition)
                    if problem is not None:
                        problems.append(f"{spot}.if {problem}")
                        continue
                    if event not in TOOL_EVENTS:
                        ignored.append(
                            f'{event} hook with "if" (Claude decides "if" on tool events '
                            f"only; such a hook never runs): {command}"
                        )
                        continue
                hooks.append(
                    CommandHook(
                        event, command, matcher, float(timeout), source, condition.strip(), root
                    )
                )
    return hooks, problems, ignored


def valid_table(value: Any) -> bool:
    """The config setting's check (``SETTING_RULES["hooks"]``)."""
    return not parse(value)[1]


def plugin_files(folder: Path) -> list[Path]:
    """The Claude Code plugins in a plugin folder: ``<folder>/<plugin>/hooks/hooks.json``,
    sorted by the plugin's folder name."""
    try:
        plugins = sorted(p for p in folder.iterdir() if p.is_dir() and p.name[0] not in "._")
    except OSError:
        return []
    return [p / "hooks" / "hooks.json" for p in plugins if (p / "hooks" / "hooks.json").is_file()]


def _project_plugins(project: Path) -> Path | None:
    """The project's plugin folder, unless the project is HOME (loaded as the user's)."""
    if project.resolve() == Path.home().resolve():
        return None
    return project / ".agents" / "plugins"


def _user_plugins() -> list[Path]:
    return [paths.home_plugins_dir(), paths.user_config_dir() / "plugins"]


def _root(file: Path) -> str:
    """``CLAUDE_PLUGIN_ROOT`` for the hooks of ``file``: a plugin's folder for its
    ``hooks/hooks.json``, else the folder the file is in."""
    if file.name == "hooks.json" and file.parent.name == "hooks":
        return str(file.parent.parent)
    return str(file.parent)


def project_files(project: Path) -> list[Path]:
    """The project's files that hold command hooks: project code, run only when trusted."""
    found = []
    for path in (
        project / ".tui-agent" / "hooks.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeError):
            continue
        if path.name == "hooks.json" or '"hooks"' in text:
            found.append(path)
    plugins = _project_plugins(project)
    if plugins is not None:
        found += plugin_files(plugins)
    return found


def _json_hooks(path: Path) -> tuple[Any, str | None]:
    """The hooks table of a JSON file: its ``hooks`` section (settings.json), or the whole
    object (hooks.json may leave the wrapper out)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as exc:
        return None, f"not valid JSON: {exc}"
    if not isinstance(data, dict):
        return None, "must hold a JSON object"
    if path.name == "hooks.json" and "hooks" not in data:
        return data, None
    return data.get("hooks", {}), None


def load(workspace: Workspace) -> HookSet:
    """Every hook in force for this workspace (see the module's docstring for where)."""
    found = HookSet()
    files = [config_module.user_config_file()]
    for folder in _user_plugins():
        files += plugin_files(folder)
    project = project_files(workspace.project)
    if workspace.trusted:
        files += [workspace.config_file, *project]
    else:
        found.skipped = project
    for file in files:
        if file.suffix == ".toml":
            if not file.is_file():
                continue
            try:
                data = config_module.read_toml(file)
            except (OSError, ValueError):
                continue  # the load reports the file already
            if "hooks" not in data or not valid_table(data["hooks"]):
                continue  # none, or reported as a setting
            table = data["hooks"]
        else:
            table, problem = _json_hooks(file)
            if problem is not None:
                found.problems.append(LoadProblem(str(file), problem))
                continue
        hooks, problems, ignored = parse(table, str(file), root=_root(file))
        if problems:  # a file with a mistake runs none of its hooks
            found.problems += [LoadProblem(str(file), text) for text in problems]
            continue
        found.hooks += hooks
        found.ignored += [f"{text} in {file}" for text in ignored]
    return found


# -- running ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """How one run went: ``code`` None when it did not finish (``problem`` says why)."""

    hook: CommandHook
    code: int | None
    stdout: str = ""
    stderr: str = ""
    problem: str = ""
    data: dict[str, Any] | None = None  # stdout as JSON, when exit 0 and it starts with {

    @property
    def reason(self) -> str:
        """What exit 2 says: its stderr."""
        return self.stderr.strip()


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run(hook: CommandHook, payload: Mapping[str, Any], cwd: Path, project: Path) -> Outcome:
    """Run ``hook`` with ``payload`` as JSON on stdin; never raises but for a cancel, which
    kills the hook's process group first."""
    env = dict(os.environ)
    env["CLAUDE_PROJECT_DIR"] = env["TUI_AGENT_PROJECT_DIR"] = str(project)
    env["CLAUDE_PLUGIN_ROOT"] = hook.plugin_root or (
        str(Path(hook.source).parent) if hook.source else str(project)
    )
    data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return Outcome(hook, None, problem=f"could not start: {exc}")
    try:
        out, err = await asyncio.wait_for(process.communicate(data), hook.timeout)
    except TimeoutError:
        _kill(process)
        let_go(process)  # first: the wait waits for the pipes, which an escaped process holds
        await process.wait()
        return Outcome(hook, None, problem=f"timed out after {hook.timeout:g} s and was stopped")
    except asyncio.CancelledError:
        _kill(process)
        let_go(process)
        raise
    outcome = Outcome(
        hook, process.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    )
    text = outcome.stdout.strip()
    if outcome.code == 0 and text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            outcome.problem = f"printed output that starts with {{ but is not JSON ({exc})"
        else:
            outcome.data = parsed if isinstance(parsed, dict) else None
    return outcome


def _specific(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    value = (data or {}).get("hookSpecificOutput")
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


class Engine:
    """The hooks of one load, wired into one session."""

    def __init__(self, session: Session, hooks: HookSet) -> None:
        self.session = session
        self.hooks = hooks

    def register(self) -> None:
        session = self.session
        if self.hooks.for_event("PreToolUse"):
            session.toolbox.before(self.pre_tool_use)
        if self.hooks.for_event("PostToolUse"):
            session.toolbox.after(self.post_tool_use)
        if self.hooks.for_event("UserPromptSubmit"):
            session.on_prompt(self.prompt_submitted)
        if self.hooks.for_event("Stop"):
            session.on_stop(self.stopping)
        if self.hooks.for_event("SessionStart"):
            session.on_start(self.session_started)

    # -- running one event ------------------------------------------------------------------

    def _payload(self, event: str, **fields: Any) -> dict[str, Any]:
        session = self.session
        return {
            "session_id": session.id,
            "transcript_path": str(self._transcript()),
            "cwd": str(session.directory),
            "permission_mode": PERMISSION_MODES.get(session.mode, session.mode),
            "hook_event_name": event,
            **fields,
        }

    def _transcript(self) -> Path:
        """The Claude-format transcript, brought in step with the conversation now."""
        session = self.session
        return session.kept("claude_transcript", ClaudeTranscript).sync(
            session.id, session.conversation.messages, session.directory, self._aliases
        )

    def _aliases(self, tool_name: str) -> list[str]:
        tool = self.session.toolbox.tools.get(tool_name)
        return list(tool.aliases) if tool is not None else []

    def _tool_hooks(
        self, event: str, tool_name: str, args: Mapping[str, Any]
    ) -> tuple[list[CommandHook], str]:
        """The hooks of ``event`` whose matcher and ``"if"`` take this call, and the
        tool's Claude name."""
        claude = claude_name(tool_name, args, self._aliases(tool_name))
        hooks = [h for h in self.hooks.for_event(event) if h.matches(tool_name, claude)]
        if any(h.condition for h in hooks):
            sent = claude_input(tool_name, args, self.session.directory)
            hooks = [
                h
                for h in hooks
                if not h.condition
                or rule_matches(h.condition, tool_name, claude, sent, self.session.directory)
            ]
        return hooks, claude

    async def _run(self, hook: CommandHook, payload: Mapping[str, Any]) -> Outcome | None:
        """The hook's outcome, or None when it failed without blocking (said to the user).
        Its ``systemMessage`` is said too."""
        outcome = await run(hook, payload, self.session.directory, self.session.workspace.project)
        say = self.session.output.say
        if outcome.problem:
            say(f"{hook.event} hook {outcome.problem}: {hook.command}", kind="error")
            return None
        if outcome.code not in (0, 2):
            detail = outcome.stderr.strip()[-KEEP_STDERR:]
            say(
                f"{hook.event} hook failed (exit {outcome.code}): {hook.command}"
                + (f"\n{detail}" if detail else ""),
                kind="error",
            )
            return None
        message = _text((outcome.data or {}).get("systemMessage"))
        if message:
            say(f"{hook.event} hook: {message}")
        return outcome

    def _stops(self, outcome: Outcome) -> str | None:
        """``continue: false``: the reason to stop (its ``stopReason``), said to the user."""
        data = outcome.data or {}
        if data.get("continue") is not False:
            return None
        reason = _text(data.get("stopReason")) or f"{outcome.hook.event} hook stopped the turn"
        self.session.output.say(f"{reason} ({outcome.hook.command})", kind="error")
        return reason

    def _tool_input(self, tool_name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the hook sees them: Claude's names (``claude_names``)."""
        return claude_input(tool_name, args, self.session.directory)

    def _replace_input(
        self,
        hook: CommandHook,
        tool_name: str,
        args: dict[str, Any],
        sent: Mapping[str, Any],
        updated: Any,
    ) -> None:
        """``updatedInput``: the call's arguments become it, checked against the tool's
        schema again; one that does not fit stops the call (its error says why)."""
        where = f"PreToolUse hook {hook.command!r} gave updatedInput"
        if not isinstance(updated, Mapping):
            raise ValueError(f"{where} that is not a JSON object: {updated!r}")
        new = our_input(tool_name, updated, args, sent)
        tool = self.session.toolbox.tools.get(tool_name)
        problem = tool.problem(new) if tool is not None else None
        if problem is not None:
            raise ValueError(f"{where} that does not fit {tool_name}: {problem}")
        args.clear()
        args.update(new)

    async def _end_turn(self) -> None:
        """``continue: false`` in a tool event: the turn ends here, as if Esc was pressed
        (the call's result says it was cancelled; the transcript stays valid)."""
        if self.session.cancel():
            await asyncio.sleep(0)  # the cancel arrives now, before anything else is asked

    # -- the events ---------------------------------------------------------------------------

    async def pre_tool_use(self, args: dict[str, Any], tool_name: str) -> None:
        """Before a call (and before the permission hook). Decisions: deny (or exit 2)
        refuses at once; ask puts the call to the user; allow spares the user the
        permission hook's question (its deny rules and plan mode still hold)."""
        hooks, claude = self._tool_hooks("PreToolUse", tool_name, args)
        if not hooks:
            return
        call = current_call()
        call_id = _call_id(call)
        allowed: list[CommandHook] = []
        asking: list[tuple[CommandHook, str]] = []
        for hook in hooks:
            sent = self._tool_input(tool_name, args)
            payload = self._payload(
                "PreToolUse", tool_name=claude, tool_input=sent, tool_use_id=call_id
            )
            outcome = await self._run(hook, payload)
            if outcome is None:
                continue
            if outcome.code == 2:
                raise PermissionDenied(
                    outcome.reason or f"blocked by the PreToolUse hook {hook.command!r}"
                )
            stop = self._stops(outcome)
            if stop is not None:
                await self._end_turn()
                raise PermissionDenied(stop)  # not in a turn: this call is refused
            data = outcome.data or {}
            specific = _specific(data)
            decision = specific.get("permissionDecision")
            reason = _text(specific.get("permissionDecisionReason"))
            legacy = {"approve": "allow", "block": "deny"}.get(str(data.get("decision")))
            if decision is None and legacy is not None:
                decision, reason = legacy, _text(data.get("reason"))
            if decision == "deny":
                raise PermissionDenied(
                    reason or f"Permission denied by the PreToolUse hook {hook.command!r}"
                )
            if "updatedInput" in specific:
                self._replace_input(hook, tool_name, args, sent, specific["updatedInput"])
            if decision == "allow":
                allowed.append(hook)
            elif decision == "ask":
                asking.append((hook, reason))
            elif decision is not None:
                self.session.output.say(
                    f"PreToolUse hook {hook.command!r}: unknown permissionDecision "
                    f"{decision!r} (allow, deny or ask); ignored",
                    kind="error",
                )
        if asking:
            await self._ask(tool_name, args, asking, call)
        elif allowed and call is not None:
            call.approvals.append(f"PreToolUse hook {allowed[0].command!r}")

    async def _ask(
        self,
        tool_name: str,
        args: Mapping[str, Any],
        asking: list[tuple[CommandHook, str]],
        call: CallInfo | None,
    ) -> None:
        """A hook's ``ask``: the user decides about this one call (for session and always
        allow it once: the hook is asked again next time)."""
        hook, reason = asking[0]
        request = ApprovalRequest(
            tool=tool_name,
            called_as=call.called_as if call is not None else tool_name,
            args=dict(args),
            subject=reason or f"the PreToolUse hook {hook.command!r} asks",
            rule=f"PreToolUse hook {hook.command!r}: ask",
            session_pattern="",
        )
        decision = await self.session.ask(request)
        if not decision.allowed and decision.unasked:
            raise PermissionDenied(
                f"Permission denied: {tool_name}: a PreToolUse hook asks ({reason or hook.command})"
                " and nobody was asked (a headless run): run with --yes to allow what hooks ask"
            )
        if not decision.allowed:
            message = f"User denied permission: {tool_name}"
            if decision.choice == "feedback" and decision.feedback.strip():
                message += f": {decision.feedback.strip()}"
            raise PermissionDenied(message)
        if call is not None:
            call.approvals.append(f"the user, asked by the PreToolUse hook {hook.command!r}")

    async def post_tool_use(
        self, args: dict[str, Any], result: dict[str, Any], tool_name: str
    ) -> None:
        """After a call: ``decision: "block"`` (or exit 2) puts its reason in the result as
        ``hook_feedback``; ``additionalContext`` goes in as ``additional_context``. The
        tool has run: its result stays as it is otherwise."""
        hooks, claude = self._tool_hooks("PostToolUse", tool_name, args)
        if not hooks:
            return
        call_id = _call_id(current_call())
        feedback: list[str] = []
        context: list[str] = []
        for hook in hooks:
            payload = self._payload(
                "PostToolUse",
                tool_name=claude,
                tool_input=self._tool_input(tool_name, args),
                tool_response=claude_response(tool_name, args, result, self.session.directory),
                tool_use_id=call_id,
            )
            outcome = await self._run(hook, payload)
            if outcome is None:
                continue
            if outcome.code == 2:
                feedback.append(outcome.reason or f"the PostToolUse hook {hook.command!r} objects")
                continue
            data = outcome.data or {}
            if data.get("decision") == "block":
                reason = _text(data.get("reason"))
                feedback.append(reason or f"the PostToolUse hook {hook.command!r} objects")
            extra = _text(_specific(data).get("additionalContext"))
            if extra:
                context.append(extra)
            if self._stops(outcome) is not None:
                await self._end_turn()
                break
        if feedback:
            result["hook_feedback"] = "\n\n".join(feedback)
        if context:
            result["additional_context"] = "\n\n".join(context)

    async def prompt_submitted(self, prompt: str) -> str | None:
        """Before a prompt is recorded: exit 2, ``decision: "block"`` or ``continue:
        false`` stop it (nothing is sent); ``additionalContext``, or plain stdout, is
        added to what the model gets."""
        texts: list[str] = []
        for hook in self.hooks.for_event("UserPromptSubmit"):
            outcome = await self._run(hook, self._payload("UserPromptSubmit", prompt=prompt))
            if outcome is None:
                continue
            if outcome.code == 2:
                raise PromptBlocked(self._blocked(hook, outcome.reason))
            stop = self._stops(outcome)
            if stop is not None:
                raise PromptBlocked(self._blocked(hook, stop))
            if outcome.data is not None:
                if outcome.data.get("decision") == "block":
                    raise PromptBlocked(self._blocked(hook, _text(outcome.data.get("reason"))))
                text = _text(_specific(outcome.data).get("additionalContext"))
            else:
                text = outcome.stdout.strip()
            if text:
                texts.append(text)
        return "\n\n".join(texts) or None

    @staticmethod
    def _blocked(hook: CommandHook, reason: str) -> str:
        reason = reason or "blocked"
        return f"the prompt was not sent: {reason} (UserPromptSubmit hook {hook.command!r})"

    async def stopping(self, reply: str, continued: int) -> str | None:
        """When the model has finished a turn: exit 2 or ``decision: "block"`` with a
        ``reason`` keeps the turn going with that reason (``stop_hook_active`` is true on
        the turns it kept going; the session allows a few)."""
        reasons: list[str] = []
        for hook in self.hooks.for_event("Stop"):
            payload = self._payload(
                "Stop", stop_hook_active=continued > 0, last_assistant_message=reply
            )
            outcome = await self._run(hook, payload)
            if outcome is None:
                continue
            if outcome.code == 2:
                reason = outcome.reason
            elif outcome.data is not None and outcome.data.get("decision") == "block":
                reason = _text(outcome.data.get("reason"))
            else:
                continue
            if self._stops(outcome) is not None:
                return None
            reasons.append(reason or f"the Stop hook {hook.command!r} asks to go on")
        if reasons:
            self.session.output.say("Stop hook: " + "\n\n".join(reasons) + " (the turn goes on)")
        return "\n\n".join(reasons) or None

    async def session_started(self, source: str) -> str | None:
        """Before the first turn of a conversation (``source``: startup, resume, clear):
        ``additionalContext``, or plain stdout, becomes part of the system prompt."""
        texts: list[str] = []
        for hook in self.hooks.for_event("SessionStart"):
            if not hook.matches(source):
                continue
            outcome = await self._run(hook, self._payload("SessionStart", source=source))
            if outcome is None:
                continue
            if outcome.code == 2:
                if outcome.reason:
                    self.session.output.say(
                        f"SessionStart hook {hook.command!r}: {outcome.reason}", kind="error"
                    )
                continue
            if outcome.data is not None:
                text = _text(_specific(outcome.data).get("additionalContext"))
            else:
                text = outcome.stdout.strip()
            if text:
                texts.append(text)
        return "\n\n".join(texts) or None


# -- one load -----------------------------------------------------------------------------------


class Loaded:
    """The hooks of the session's current load (``in_force``)."""

    def __init__(self) -> None:
        self.hooks = HookSet()


def in_force(session: Session) -> HookSet:
    """The command hooks the session's current load runs (``/hooks`` lists them)."""
    return session.kept("command_hooks", Loaded).hooks


def register(session: Session, report: LoadReport) -> HookSet:
    """Read the hooks for this load and wire them into ``session``. Problems go to the
    load's report as config problems (``tui-agent run`` then stops: it never runs without
    hooks the user wrote); events and types not run here are said once."""
    found = load(session.workspace)
    session.kept("command_hooks", Loaded).hooks = found
    report.problems += found.problems
    session.extensions.config_problems += found.problems
    if found.ignored:
        session.output.say("command hooks not run here: " + "; ".join(found.ignored))
    Engine(session, found).register()
    return found


def _call_id(call: CallInfo | None) -> str:
    """The running tool call's id (the hooks' ``tool_use_id``), "" outside a call."""
    return call.context.call_id if call is not None and call.context is not None else ""
