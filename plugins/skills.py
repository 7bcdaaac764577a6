"""Agent Skills (``tui_agent.skills``): folders with a ``SKILL.md`` found where Claude Code,
Codex, opencode and tui-agent keep them, and in Agent Plugins, wired into the session.

- The model sees each skill's name and description in the ``skill`` tool's description
  (the catalog; no skill for the model, no tool) and loads one with it: the instructions,
  the skill's folder and its files listed (``read`` and ``execute`` use them). Loading one
  the conversation already holds says so. The tool only reads what the user installed (or
  a trusted project holds), so it is not asked about (a deny rule still holds), and
  ``read``, ``glob``, ``grep`` and ``list`` inside a skill's folder are not either (the
  client guide's "allowlist skill directories").
- ``/name ARGS`` runs a skill the user may invoke: its content with the arguments goes to
  the model as the prompt. A command of that name registered before (bundled or a
  plugin's) keeps it (a load problem says so); a Markdown command file of that name is
  reported by the Markdown commands (a skill wins, as in Claude Code).
- ``allowed-tools``: while a skill is in use (from its loading to the end of that turn),
  a call one of its rules fits is not asked about (``current_call().approvals``, as a
  ``PreToolUse`` hook's "allow"): deny rules, plan mode and the sandbox still hold. That
  hook goes first among the global before hooks (bundled plugins load by file name, and
  ``permissions`` comes before ``skills``), put there in the toolbox's public table.
- A compaction keeps every loaded skill (``budget.carry``): a pruned ``skill`` result gets
  its content back, one summarised away follows the summary.
- ``/skills`` lists them (source, description, size, who may use them) with the problems.

Project skills follow the trust rule: an untrusted project's are skipped project code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tui_agent
from tui_agent import skills as sk
from tui_agent.agent_plugins import find_agent_plugins
from tui_agent.command_hooks import CLAUDE_TOOL_NAMES
from tui_agent.events import Event, TurnFinished
from tui_agent.permissions import matches, subjects_for

READ_ONLY = ("read", "glob", "grep", "list")


def plugin_places(session: tui_agent.Session) -> list[sk.Place]:
    """The ``skills/`` folders of the valid Agent Plugins (a trusted project's, and the
    user's); their problems are the ``mcp`` plugin's to report."""
    project = session.workspace.project if session.workspace.trusted else None
    return [
        sk.plugin_place(plugin.name, plugin.skills_folder, plugin.root)
        for plugin in find_agent_plugins(project)
        if plugin.valid and plugin.skills_folder is not None
    ]


def find(session: tui_agent.Session) -> sk.SkillSet:
    """The skills this session has (the same the bundled plugin loads)."""
    return sk.find_skills(
        session.workspace.project,
        trusted=session.workspace.trusted,
        plugins=plugin_places(session),
    )


def _inside(path: str, folder: Path, base: Path) -> bool:
    try:
        return (base / Path(path).expanduser()).resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


@tui_agent.setup("skills")
def skills_plugin(session: tui_agent.Session) -> None:
    found = find(session)
    kept: dict[str, Any] = session.extensions.kept(
        "skills", lambda: {"found": sk.SkillSet(), "said": set(), "active": {}}
    )
    kept["found"] = found
    active: dict[str, set[str]] = kept["active"]  # agent -> skills in use this turn
    session.extensions.problems.extend(found.problems)
    if not session.workspace.trusted:  # skipped project code (the first load listed it
        skipped = session.extensions.skipped  # before this module registered its finder)
        skipped += [f for f in sk.project_files(session.workspace.project) if f not in skipped]
    said: set[str] = kept["said"]
    for note in found.notes:
        if note not in said:  # once a session, not at every /reload
            said.add(note)
            session.output.say(f"skills: {note}")

    rules: dict[str, list[sk.Rule]] = {}

    def read_rules() -> dict[str, list[sk.Rule]]:
        """The skills' ``allowed-tools``, read once a load, when every plugin has added its
        tools (at the first turn, or the first call before it)."""
        if rules or not found.skills:
            return rules
        known = [*session.toolbox.tools, *session.toolbox.aliases]
        for skill in found.skills.values():
            rules[skill.name], notes = sk.read_rules(skill.allowed_tools, CLAUDE_TOOL_NAMES, known)
            for note in notes:
                message = f"skill {skill.name}: allowed-tools {note}: not pre-approved"
                if message not in said:
                    said.add(message)
                    session.output.say(message)
        return rules

    session.on("turn", read_rules)

    # -- the model: the skill tool ---------------------------------------------------------

    for_model = found.for_model()
    if for_model:

        @session.toolbox.add(
            sk.TOOL,
            description=sk.tool_description(for_model),
            params=sk.parameters(for_model),
            required=["name"],
            aliases=list(sk.ALIASES),
            read_only=True,
        )
        def skill_tool(args: dict[str, Any], context: tui_agent.ToolContext) -> dict[str, Any]:
            skill = found.get(str(args.get("name")))
            if skill is None or not skill.model_invocable:
                return {"error": f"no skill {args.get('name')!r}: one of the tool's names"}
            agent = context.agent if context is not None else "main"
            active.setdefault(agent, set()).add(skill.name)
            if agent == "main" and sk.held(session.conversation.messages, skill.name):
                return sk.already_loaded(skill)
            return sk.result(skill)

    # -- pre-approvals: the skill tool, skill folders, allowed-tools ---------------------------

    def aliases(name: str) -> list[str]:
        tool = session.toolbox.tools.get(name)
        return list(tool.aliases) if tool is not None else []

    def why_approved(args: dict[str, Any], tool_name: str, agent: str) -> str | None:
        if tool_name == sk.TOOL and for_model:
            return "loading a skill reads what the user installed"
        if tool_name in READ_ONLY and isinstance(args.get("path", "."), str):
            path = str(args.get("path") or ".")
            for skill in found.skills.values():
                if _inside(path, skill.folder, session.directory):
                    return f"reading the folder of the skill {skill.name}"
        using = active.get(agent)
        if not using:
            return None
        subjects = subjects_for(tool_name, args, session.directory, session.worktree)
        parts = [sk.Part(s.text, s.opaque) for s in subjects]
        for name in sorted(using):
            for rule in read_rules().get(name, ()):
                if rule.fits(tool_name, aliases(tool_name), parts, matches):
                    return f"the skill {name}'s allowed-tools {rule.word}"
        return None

    def pre_approve(args: dict[str, Any], tool_name: str) -> None:
        call = tui_agent.current_call()
        if call is None:
            return
        agent = call.context.agent if call.context is not None else "main"
        reason = why_approved(args, tool_name, agent)
        if reason is not None:
            call.approvals.append(reason)

    if found.skills:  # without skills, nothing to approve: no hook in the tools panel
        session.toolbox.before(pre_approve)
        first = session.toolbox.hooks["before"]["*"]
        first.insert(0, first.pop())  # before the permission hook (see the docstring)

    def turn_over(event: Event) -> None:
        if isinstance(event, TurnFinished):
            active.clear()

    session.on("close", session.events.listen(turn_over))

    # -- compaction -----------------------------------------------------------------------------

    carry = session.conversation.budget.carry

    def keep(messages: list[tui_agent.Message]) -> list[tui_agent.Message]:
        names = sk.loaded_names(session.conversation.messages)
        loaded = [found.skills[n] for n in names if n in found.skills]
        return sk.carry(messages, loaded)

    carry.append(keep)
    session.on("close", lambda: carry.remove(keep) if keep in carry else None)

    # -- the user: /name ARGS and /skills ---------------------------------------------------------

    def runner(skill: sk.Skill) -> Any:
        async def run(arguments: str | None) -> None:
            if session.busy:
                raise RuntimeError(f"/{skill.name}: still working on a turn; press Esc first")
            active.setdefault("main", set()).add(skill.name)
            typed = f"/{skill.name} {arguments or ''}".strip()
            await session.turn(tui_agent.Expanded(typed, sk.prompt(skill, arguments or "")))

        run.__doc__ = f"Run the skill {skill.name} ({skill.path})."
        return run

    taken: dict[str, str] = {}
    previous = session.commands.source
    try:
        for skill in found.for_user():
            existing = session.commands.get(skill.name)
            if existing is not None:
                taken[skill.name] = existing.source
                session.extensions.problems.append(
                    tui_agent.LoadProblem(
                        str(skill.path),
                        f"/{skill.name} is already a command (from {existing.source}), which "
                        "keeps the name; the model can still load the skill",
                    )
                )
                continue
            session.commands.source = f"skill:{skill.source}"
            hint = f" — /{skill.name} {skill.argument_hint}" if skill.argument_hint else ""
            session.commands.register(
                skill.name,
                description=f"{sk.summary(skill, 100)}{hint} (skill, {skill.source})",
                handler=runner(skill),
            )
    finally:
        session.commands.source = previous

    @session.commands.register(
        "skills", description="List the skills: source, description, size, who may use them"
    )
    def skills_command(args: str | None) -> None:
        for skill in found.for_user():  # a later plugin may have taken the name since
            command = session.commands.get(skill.name)
            if command is not None and not command.source.startswith("skill:"):
                taken[skill.name] = command.source
        text = sk.skills_markdown(
            found,
            session.workspace.project,
            catalog_tokens=sk.catalog_tokens(for_model),
            taken=taken,
        )
        session.output.say(text, kind="markdown")
