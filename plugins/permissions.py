"""The permission hook (SPEC §6): one global before hook over every tool call.

Rules come from ``[permission]`` in config; ``ask`` goes to the session's approver (the
app's dialog, or the headless policy: deny unless ``--yes``). The hook sees the real tool
name, so aliases, tool-to-tool calls, overrides and ``/reload`` cannot get around it; a rule
may name the tool by any of its names (``bash``, an MCP tool's ``mcp__server__tool``) or by
a pattern of names (``mcp__git__*``, Claude's ``mcp__git``).

The session's permission mode (``session.permissions.mode``) changes what ``ask`` does, never what
``deny`` does: allow-all allows every ask; auto-edit allows write and edit inside the
worktree (not its protected folders); plan offers only read-only tools and refuses the
others if the model calls them anyway. A call an earlier hook approved
(``current_call().approvals``: a ``PreToolUse`` command hook's "allow") is not asked about;
deny rules and plan mode still hold for it.

With the sandbox on (``session.sandbox.active``) and ``auto_allow`` (the default), an
``execute`` call that runs inside it is not asked about; deny rules and plan mode still
hold. ``"sandbox": false`` (run outside) is always asked, in every mode but plan (refused).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import tui_agent
from tui_agent.permissions import (
    MODES,
    Rules,
    add_rule,
    session_pattern,
    subjects_for,
    with_rule,
)

OUTSIDE = "sandbox: false — runs OUTSIDE the sandbox (always asked)"
MODE_HELP = {
    "ask": "the rules as configured.",
    "auto-edit": "write and edit inside the worktree need no asking; the rest as configured.",
    "plan": "read-only: only tools that change nothing are offered; the model plans.",
    "allow-all": "every ask is allowed (deny rules still hold).",
}


def unasked(tool: str, rule: str) -> str:
    """Why a call was refused when no one could be asked (a headless run without --yes)."""
    return (
        f"Permission denied: {tool} needs approval and nobody was asked (a headless run): "
        f'run with --yes, or allow it in [permission] in the config (e.g. {tool} = "allow", '
        f"or a pattern). The rule: {rule}"
    )


@tui_agent.setup("permissions")
def permissions(session: tui_agent.Session) -> None:
    kept: dict[str, dict[str, list[str]]] = session.extensions.kept(
        "permissions", lambda: {"session": {}}
    )
    session_allows = kept["session"]
    saved: list[tuple[str, str]] = []  # "always allow" rules written this load

    def rules() -> Rules:
        table = session.config.get("permission")
        table = table if isinstance(table, dict) else {}
        for tool, pattern in saved:  # the config file has them too: the next load reads them
            table = with_rule(table, tool, pattern, "allow")
        return Rules(table, session_allows)

    for problem in rules().problems():
        session.output.say(f"config: {problem}", kind="error")

    def aliases(name: str) -> list[str]:
        """The tool's other names (``bash``; an MCP tool's ``mcp__server__tool``): a rule
        keyed by any of them applies to it."""
        tool = session.toolbox.tools.get(name)
        return list(tool.aliases) if tool is not None else []

    def changes_things(name: str) -> bool:
        tool = session.toolbox.tools.get(name)
        return tool is None or not tool.read_only

    session.extensions.hide_tools(
        lambda name: (
            rules().hidden(name, aliases(name))
            or (session.permissions.mode == "plan" and changes_things(name))
        )
    )

    one_question = asyncio.Lock()  # one at a time: subagents run side by side

    @session.toolbox.before()
    async def guard(args: dict[str, Any], tool_name: str) -> None:
        call = tui_agent.current_call()
        called_as = call.called_as if call is not None else tool_name
        subjects = subjects_for(tool_name, args, session.directory, session.worktree)
        verdicts = rules().check_all(tool_name, subjects, aliases(tool_name))
        denied = next((v for v in verdicts if v.action == "deny"), None)
        if denied is not None:
            raise tui_agent.PermissionDenied(f"Permission denied: {tool_name}")
        if session.permissions.mode == "plan" and changes_things(tool_name):
            raise tui_agent.PermissionDenied(
                f"Permission denied: {tool_name} can change things and the session is in "
                "plan mode (read-only tools only): give the plan; the user switches modes "
                "to carry it out"
            )
        asking = [v for v in verdicts if v.action == "ask"]
        sandbox = session.sandbox if tool_name == "execute" else None
        if sandbox is not None and sandbox.active:
            if args.get("sandbox") is False:  # the escape hatch: always the user's call
                asking = asking or verdicts
            elif sandbox.settings.auto_allow:
                return  # inside the sandbox: no asking
            else:
                sandbox = None
        else:
            sandbox = None
        if sandbox is None and (not asking or session.permissions.mode == "allow-all"):
            return
        if sandbox is None and call is not None and call.approvals:  # a PreToolUse hook
            return
        if (
            session.permissions.mode == "auto-edit"
            and tool_name in ("write", "edit")
            and not any(s.outside or s.protected for s in subjects)
        ):
            return
        patterns = tuple(dict.fromkeys(session_pattern(tool_name, v.subject) for v in asking))
        agent = call.context.agent if call is not None and call.context is not None else "main"
        definition = session.agents.definitions.get(agent) if agent != "main" else None
        request = tui_agent.ApprovalRequest(
            tool=tool_name,
            called_as=called_as,
            args=dict(args),
            subject=" ; ".join(v.subject for v in asking),
            rule=OUTSIDE if sandbox is not None else asking[0].rule,
            session_pattern=", ".join(patterns),
            patterns=patterns,
            agent="" if agent == "main" else agent,
            agent_description=definition.description if definition is not None else "",
        )
        async with one_question:
            now = rules().check_all(tool_name, subjects, aliases(tool_name))
            if sandbox is None and not any(v.action == "ask" for v in now):
                return  # allowed for the session by the question answered while this waited
            decision = await session.permissions.ask(request)
        if decision.choice == "session":
            for pattern in patterns:
                allowed = session_allows.setdefault(tool_name, [])
                if pattern not in allowed:
                    allowed.append(pattern)
        elif decision.choice == "always":
            path = session.workspace.config_file
            for pattern in patterns:
                try:
                    add_rule(path, tool_name, pattern, "allow")
                except (OSError, ValueError) as exc:
                    session.output.say(f"could not save the rule: {exc}", kind="error")
                saved.append((tool_name, pattern))
        elif not decision.allowed and decision.unasked:
            raise tui_agent.PermissionDenied(unasked(tool_name, request.rule))
        elif not decision.allowed:
            message = f"User denied permission: {tool_name}"
            if decision.choice == "feedback" and decision.feedback.strip():
                message += f": {decision.feedback.strip()}"
            raise tui_agent.PermissionDenied(message)

    def describe() -> str:
        current = rules()
        lines = [f"**Mode: {session.permissions.mode}**: {MODE_HELP[session.permissions.mode]}", ""]
        sandbox = session.sandbox
        if sandbox.active or sandbox.settings.enabled:
            lines += [sandbox.describe(), ""]
        if sandbox.active:
            passed = ", ".join(sorted(n for n in sandbox.env() if n != "TMPDIR"))
            lines += [
                f"Environment passed to commands: {passed or '(none)'} (more with "
                "[sandbox] env = [...]); TMPDIR is the private /tmp.",
                "",
            ]
        lines += ["**Permission rules** (last matching pattern wins)", ""]
        lines += ["| Tool | Rule |", "|---|---|"]
        shown = dict(current.table)
        for name in sorted(session.toolbox.tools):
            if name not in shown:
                action, where = current.rule_for(name, aliases(name))
                rule = json.dumps(action) if isinstance(action, str) else f"`{json.dumps(action)}`"
                lines.append(f"| {name} | {rule} ({where}) |")
        for name, rule in shown.items():
            lines.append(f"| {name} | `{json.dumps(rule)}` (config) |")
        lines += ["", "**Allowed for this session**", ""]
        pairs = [(t, p) for t, ps in session_allows.items() for p in ps]
        lines += [f"- `{t}`: `{p}`" for t, p in pairs] or ["- (none)"]
        if pairs:
            lines += [
                "",
                "Revoke with `/permissions revoke TOOL PATTERN` or `/permissions revoke all`.",
            ]
        return "\n".join(lines)

    def revoke_completions() -> list[str]:
        items = [f"mode {mode}" for mode in MODES]
        items += ["revoke all"]
        items += [f"revoke {t} {p}" for t, ps in session_allows.items() for p in ps]
        return items

    @session.commands.register(
        "permissions",
        description="Show permission rules and session allows; /permissions mode MODE; "
        "/permissions revoke TOOL PATTERN",
        completions=revoke_completions,
    )
    def permissions_command(args: str | None) -> None:
        if not args:
            session.output.say(describe(), kind="markdown")
            return
        verb, _, rest = args.partition(" ")
        if verb == "mode":
            if not rest.strip():
                session.output.say(f"Mode: {session.permissions.mode} (one of {', '.join(MODES)})")
                return
            session.permissions.set_mode(rest.strip())
            session.output.say(
                f"Mode: {session.permissions.mode}. {MODE_HELP[session.permissions.mode]}"
            )
            return
        if verb != "revoke":
            raise ValueError("usage: /permissions [mode MODE | revoke all | revoke TOOL PATTERN]")
        if rest.strip() == "all":
            session_allows.clear()
            session.output.say("Revoked every session allow.")
            return
        tool, _, pattern = rest.strip().partition(" ")
        if pattern not in session_allows.get(tool, []):
            raise ValueError(f"no session allow for {tool} {pattern!r}")
        session_allows[tool].remove(pattern)
        session.output.say(f"Revoked: {tool} {pattern}")
