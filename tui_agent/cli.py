"""Command line: ``tui-agent [flags] [tools [NAME] | plugins | agents | run PROMPT | trust]``;
flags go before or after. ``tui-agent --version`` prints the version."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:  # the core is imported when needed: the app's first frame goes without it
    import argparse  # and argparse with the parser: ``tui-agent`` alone needs neither

    from .core.conversation.transcript import Resumed
    from .core.protocol.output import Note
    from .core.session.session import Session

DENIED = "{name} is denied for every call ([permission] in the config): the model is not offered it"


# the commands whose session loads the plugins first (what they list or run needs them)
LOADING = ("tools", "run", "plugins", "agents", "skills")


def _add_common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    import argparse

    default = argparse.SUPPRESS if suppress else None
    flag_default = argparse.SUPPRESS if suppress else False
    group = parser.add_argument_group("session")
    group.add_argument(
        "--provider", default=default, help="LLM provider (openai, stub, or a plugin's)"
    )
    group.add_argument("--model", default=default, help="model name")
    group.add_argument(
        "--base-url", dest="base_url", default=default, help="OpenAI-compatible server URL"
    )
    group.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        default=flag_default,
        help="resume the last session of this folder",
    )
    group.add_argument(
        "--resume",
        metavar="ID",
        nargs="?",
        const="",  # no id: the app opens the picker of this folder's sessions
        default=default,
        help="resume a session by id; without one, pick it from a list",
    )
    group.add_argument(
        "--trust",
        action="store_true",
        default=flag_default,
        help="run this folder's plugins, tool files and config without asking",
    )
    group.add_argument(
        "--yes",
        action="store_true",
        default=flag_default,
        help="answer every permission question with allow",
    )
    group.add_argument("-C", "--directory", default=default, help="working folder (default: .)")


def version() -> str:
    """The installed package's version; from a source tree that is not installed (no
    package metadata), the one in its ``pyproject.toml``."""
    from importlib import metadata

    try:
        return metadata.version("tui-agent")
    except metadata.PackageNotFoundError:
        pass
    import re

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        found = re.search(r'(?m)^version\s*=\s*"([^"]+)"', pyproject.read_text("utf-8"))
    except OSError:
        found = None
    if found:
        return found.group(1)
    from . import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    import argparse

    class PrintVersion(argparse.Action):
        """``--version`` anywhere before the command: the version is looked up only when
        asked."""

        def __call__(
            self, parser: argparse.ArgumentParser, *args: object, **kwargs: object
        ) -> None:
            print(f"tui-agent {version()}")
            parser.exit()

    parser = argparse.ArgumentParser(
        prog="tui-agent",
        description="An extensible terminal coding agent.",
    )
    parser.add_argument(
        "-V",
        "--version",
        action=PrintVersion,
        nargs=0,
        default=argparse.SUPPRESS,
        help="print the version and exit",
    )
    _add_common(parser, suppress=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    tools = commands.add_parser("tools", help="list tools, or show one tool's parameters")
    tools.add_argument("name", nargs="?", help="a tool name or alias")
    tools.add_argument("--json", action="store_true", help="print the OpenAI function definitions")
    _add_common(tools, suppress=True)
    listed = commands.add_parser(
        "plugins",
        help="list plugin files, packages and Agent Plugins: where from, loaded or why not",
    )
    listed.add_argument("--json", action="store_true", help="print them as JSON")
    _add_common(listed, suppress=True)
    agents = commands.add_parser(
        "agents", help="list the agents (bundled, yours, the project's): tools, model, problems"
    )
    agents.add_argument("--json", action="store_true", help="print them as JSON")
    _add_common(agents, suppress=True)
    skills = commands.add_parser(
        "skills", help="list the skills (yours, the project's, Agent Plugins'): source, size"
    )
    skills.add_argument("--json", action="store_true", help="print them as JSON")
    _add_common(skills, suppress=True)
    run = commands.add_parser(
        "run", help='run one prompt headless: reply on stdout ("/name args" runs a command)'
    )
    run.add_argument(
        "prompt",
        nargs="*",
        help='the prompt (stdin is appended when piped); "/name args" runs the command',
    )
    run.add_argument("--json", action="store_true", help="print one JSON event per line")
    run.add_argument(
        "--input",
        choices=("text", "json"),
        default="text",
        help='stdin: "text" (added to the prompt) or "json": lines of {"type": "user", "text": '
        '"...", "steer": false}, each queued and run in order as they come ("steer": true '
        'sends it into the running turn), or {"type": "cancel"}',
    )
    _add_common(run, suppress=True)
    trusting = commands.add_parser(
        "trust", help="trust this folder's project code (remembered), or --revoke that"
    )
    trusting.add_argument(
        "--revoke", action="store_true", help="stop trusting it: its code no longer runs"
    )
    _add_common(trusting, suppress=True)
    undoing = commands.add_parser(
        "undo",
        help="take back the last turn of this folder's last session: its file changes and "
        "its messages",
    )
    undoing.add_argument("--session", metavar="ID", help="a session by id (see /sessions)")
    undoing.add_argument(
        "--force", action="store_true", help="overwrite files changed since that turn too"
    )
    _add_common(undoing, suppress=True)
    listing = commands.add_parser("sessions", help="list the saved sessions of this folder")
    listing.add_argument("--all", action="store_true", help="every folder's sessions")
    listing.add_argument("--json", action="store_true", help="print them as JSON")
    _add_common(listing, suppress=True)
    acp = commands.add_parser(
        "acp", help="serve an editor over stdio with the Agent Client Protocol (Zed, acpx)"
    )
    _add_common(acp, suppress=True)
    return parser


def report_problems(session: Session, stream: TextIO, *, notes: bool = False) -> None:
    """Load problems, errors plugins said while loading (an MCP server with a bad config)
    and skipped project code, on stderr for headless commands; with ``notes``, the quiet
    notes too (``tui-agent tools``: a file in a tools folder that gave no tools, and why).
    Nobody listened to ``session.output`` while the session loaded: its history holds
    what was said."""
    for problem in session.extensions.problems:
        kind = "config" if problem in session.extensions.config_problems else "plugin"
        print(f"tui-agent: {kind} problem: {problem}", file=stream)
    for note in session.output.history:
        if note.kind == "error" or notes:
            print(f"tui-agent: {note.text}", file=stream)
    if session.extensions.skipped:
        project = session.workspace.project
        files = ", ".join(str(p.relative_to(project)) for p in session.extensions.skipped)
        print(
            f"tui-agent: skipped untrusted project code in {session.workspace.project}: {files} "
            "(pass --trust to run it)",
            file=stream,
        )


def cmd_tools(session: Session, args: argparse.Namespace) -> int:
    import asyncio
    import json

    from rich.console import Console
    from rich.table import Table

    def said(note: Note) -> None:  # an MCP server that failed to start, and the like
        print(f"tui-agent: {note.text}", file=sys.stderr, flush=True)

    async def prepare() -> None:  # on_turn work first (MCP servers list their tools)
        unsubscribe = session.output.listen(said)
        try:
            await session.extensions.ready()
        finally:
            await session.close()
            unsubscribe()

    asyncio.run(prepare())

    from .core.tools.describe import first_line, hooks_label, parameter_rows

    toolbox = session.toolbox
    if args.json and not args.name:
        print(json.dumps(session.extensions.offered_tools(), indent=2))  # what the model is offered
        return 0
    console = Console(soft_wrap=False)
    if args.name:
        if toolbox.resolve(args.name) is None:
            offered = (n for n in toolbox.tools if not session.extensions.hidden(n))
            available = ", ".join(sorted(offered)) or "(none)"
            print(f'tui-agent: unknown tool "{args.name}". Available: {available}', file=sys.stderr)
            return 2
        tool = toolbox.tool_for(args.name)
        if session.extensions.hidden(tool.name):
            print(f"tui-agent: {DENIED.format(name=tool.name)}", file=sys.stderr)
        if args.json:
            print(json.dumps(tool.definition(), indent=2))
            return 0
        console.print(f"[bold]{tool.name}[/bold]  [dim]{tool.source}[/dim]")
        if tool.aliases:
            console.print(f"aliases: {', '.join(tool.aliases)}")
        console.print(tool.description or "(no description)", markup=False)
        table = Table("Parameter", "Type", "Required", "Default", "Enum", "Description")
        for row in parameter_rows(tool):
            table.add_row(
                row.name,
                row.type,
                "yes" if row.required else "no",
                row.default,
                row.enum,
                row.description,
            )
        console.print(table if tool.params else "No parameters.")
        return 0
    table = Table("Name", "Aliases", "Source", "Hooks", "Model", "Description", title="Tools")
    for name in sorted(toolbox.tools):
        tool = toolbox.tools[name]
        table.add_row(
            name,
            ", ".join(tool.aliases),
            tool.source,
            hooks_label(toolbox, name),
            "denied" if session.extensions.hidden(name) else "offered",
            first_line(tool.description),
        )
    console.print(table)
    return 0


def cmd_plugins(session: Session, args: argparse.Namespace) -> int:
    """Both kinds of plugins: every plugin file and package the load read or skipped, in
    load order (where it comes from, whether it loaded or why not, the tools and commands
    it gives), then the Agent Plugins (``plugin.json`` folders: name, version, scope, skills,
    MCP servers, problems; the ``--json`` rows with ``"kind": "agent-plugin"``)."""
    import asyncio
    import json

    from .agent_plugins import find_agent_plugins, project_files, read_plugin
    from .core.extensions.plugins import plugin_errors

    asyncio.run(session.close())
    commands = [session.commands.get(name) for name in session.commands.names]
    rows: list[dict[str, Any]] = []
    for plugin in session.extensions.plugins:
        errors = plugin_errors(plugin, session.extensions.problems)
        package = plugin.package
        rows.append(
            {
                "name": plugin.name,
                "scope": plugin.scope,
                "source": plugin.source,
                "version": package.version if package else None,
                "entry_point": package.value if package else None,
                "status": "skipped" if plugin.skipped else "error" if errors else "ok",
                "errors": errors,
                "tools": [n for n, t in session.toolbox.tools.items() if t.source == plugin.origin],
                "commands": [f"/{c.name}" for c in commands if c and c.source == plugin.origin],
            }
        )
    workspace = session.workspace
    found = find_agent_plugins(workspace.project if workspace.trusted else None)
    if not workspace.trusted:  # the project's are listed, and skipped
        manifests = [p for p in project_files(workspace.project) if p.name == "plugin.json"]
        found[:0] = [read_plugin(manifest.parent, "project") for manifest in manifests]
    agent_rows: list[dict[str, Any]] = []
    for agent_plugin in found:
        skipped = agent_plugin.scope == "project" and not workspace.trusted
        agent_rows.append(
            {
                "kind": "agent-plugin",
                "name": agent_plugin.name,
                "version": agent_plugin.version,
                "scope": agent_plugin.scope,
                "source": str(agent_plugin.root),
                "status": "skipped" if skipped else "ok" if agent_plugin.valid else "invalid",
                "skills": len(agent_plugin.skill_folders()),
                "mcp_servers": len(agent_plugin.servers),
                "declared_mcp_servers": agent_plugin.declared_servers,
                "problems": [str(problem) for problem in agent_plugin.problems],
            }
        )
    if args.json:
        print(json.dumps(rows + agent_rows, indent=2))
        return 0
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    home = str(Path.home())

    def shown(path: str) -> str:
        return "~" + path[len(home) :] if path.startswith(home + "/") else path

    table = Table(box=box.SIMPLE_HEAD, title="Plugins", pad_edge=False)
    table.add_column("Scope", no_wrap=True)
    for name, ratio in (("Source", 4), ("Status", 3), ("Gives", 3)):
        table.add_column(name, ratio=ratio)
    for row in rows:
        source = row["source"]
        if row["entry_point"]:
            source = f"{source} ({row['name']})"
        else:
            source = shown(source)
        status = "; ".join(row["errors"]) or row["status"]
        if row["status"] == "skipped":
            status = "skipped: untrusted folder (tui-agent trust)"
        gives = ", ".join(row["tools"] + row["commands"])
        table.add_row(row["scope"], Text(source, overflow="fold"), status, gives)
    console = Console(soft_wrap=False)
    console.print(table)
    if not agent_rows:
        return 0
    agents = Table(box=box.SIMPLE_HEAD, title="Agent Plugins", pad_edge=False)
    agents.add_column("Name", no_wrap=True)
    agents.add_column("Version", no_wrap=True)
    agents.add_column("Scope", no_wrap=True)
    agents.add_column("Skills", justify="right")
    agents.add_column("MCP", justify="right")
    for name, ratio in (("Folder", 3), ("Status", 4)):
        agents.add_column(name, ratio=ratio)
    below: list[str] = []  # each problem on a line of its own, under the table
    for row in agent_rows:
        status = row["status"]
        if status == "skipped":
            status = "skipped: untrusted folder (tui-agent trust)"
        elif row["problems"]:  # the plugin's own files named from its folder
            inside = row["source"] + "/"
            count = len(row["problems"])
            status = f"{status}, {count} problem{'s' * (count != 1)} (below)"
            below += [f"{row['name']}: {p.replace(inside, '')}" for p in row["problems"]]
        mcp = str(row["mcp_servers"])
        if row["declared_mcp_servers"] != row["mcp_servers"]:
            mcp += f" of {row['declared_mcp_servers']}"
        agents.add_row(
            row["name"],
            row["version"] or "",
            row["scope"],
            str(row["skills"]),
            mcp,
            Text(shown(row["source"]), overflow="fold"),
            Text(status, overflow="fold"),
        )
    console.print(agents)
    for line in below:
        console.print(Text(f"  {line}", overflow="fold"), soft_wrap=True)
    return 0


def cmd_agents(session: Session, args: argparse.Namespace) -> int:
    """The agents a session would have, where each comes from, its tools and model, and
    what loading their files found wrong (problems, files left out)."""
    import asyncio
    import json

    from .core.agents import load_agents
    from .core.agents.listing import as_data, model_text, shown_path, summary, tools_text

    asyncio.run(session.close())
    found = load_agents(
        session.workspace.project,
        trusted=session.workspace.trusted,
        tools={name: tool.aliases for name, tool in session.toolbox.tools.items()},
        providers=[session.provider.name],
    )
    if args.json:
        print(json.dumps(as_data(found), indent=2))
        return 0
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, title="Agents", pad_edge=False, expand=True)
    table.add_column("Name", no_wrap=True)
    for name, ratio in (("Source", 3), ("Tools", 3), ("Model", 2), ("Description", 5)):
        table.add_column(name, ratio=ratio)
    for agent in found.agents.values():
        mode = "" if agent.mode == "subagent" else f" ({agent.mode})"
        table.add_row(
            agent.name + mode,
            Text(shown_path(agent.path, session.workspace.project), overflow="fold"),
            tools_text(agent),
            model_text(agent),
            summary(agent),
        )
    console = Console(soft_wrap=False)
    console.print(table)
    lines = [f"note: {a.name}: {note}" for a in found.agents.values() for note in a.notes]
    lines += [f"problem: {problem}" for problem in found.problems]
    lines += [f"not loaded: {skipped}" for skipped in found.skipped]
    for line in lines:
        console.print(Text(line, overflow="fold"))
    return 0


def cmd_skills(session: Session, args: argparse.Namespace) -> int:
    """The skills the session loaded (the bundled skills plugin's find), where each comes
    from, its description and size; ``--json``: a list of them. Problems went to stderr
    with the load's."""
    import asyncio
    import json

    from .skills import SkillSet, as_data, catalog_tokens, how, shown_path, summary

    asyncio.run(session.close())
    found = session.extensions.kept("skills", dict).get("found") or SkillSet()
    if args.json:
        print(json.dumps(as_data(found), indent=2))
        return 0
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, title="Skills", pad_edge=False, expand=True)
    table.add_column("Name", no_wrap=True)
    for name, ratio in (("Description", 5), ("Source", 2), ("Size", 2), ("Used by", 2)):
        table.add_column(name, ratio=ratio)
    project = session.workspace.project
    folders: list[str] = []  # under the table: a long path in a cell squeezes the others
    for row in as_data(found):
        skill = found.skills[row["name"]]
        table.add_row(
            skill.name,
            summary(skill),
            Text(skill.source, overflow="fold"),
            f"{row['size'] / 1024:.1f} KB, {row['files']} files, ~{row['tokens']:,} tokens",
            how(skill),
        )
        folders.append(f"  {skill.name}: {shown_path(skill.folder, project)}")
    console = Console(soft_wrap=False)
    console.print(table)
    for line in folders:
        console.print(Text(line, overflow="fold"), soft_wrap=True)
    if found.skills:
        tokens = catalog_tokens(found.for_model())
        console.print(f"The catalog (the skill tool's description): ~{tokens:,} tokens a request.")
    lines = [f"note: {note}" for note in found.notes]
    lines += [f"note: {note}" for skill in found.skills.values() for note in skill.notes]
    lines += [f"not loaded: {skipped}" for skipped in found.skipped]
    for line in lines:
        console.print(Text(line, overflow="fold"))
    return 0


def cmd_trust(session: Session, args: argparse.Namespace) -> int:
    """Remember the project folder as trusted or, with ``--revoke``, as not trusted (the app
    then keeps its code off without asking). Runs none of the folder's code."""
    from .core.project import trust

    folder = session.workspace.project
    if args.revoke:
        session.workspace.distrust()
        print(
            f"no longer trusted: {folder}: its plugins, tool files and config stay off "
            "(`tui-agent trust` trusts it again)"
        )
        return 0
    trust.remember(folder, True)
    code = session.workspace.project_code
    files = ", ".join(str(p.relative_to(folder)) for p in code) or "none yet"
    print(f"trusted: {folder}: its project code runs from now on ({files})")
    return 0


def setup_logging() -> None:
    """Warnings and tracebacks go to a log file, never onto the screen."""
    from .core.util.paths import user_log_dir

    logger = logging.getLogger("tui_agent")
    if any(isinstance(h, logging.FileHandler) for h in logger.handlers):
        return
    try:
        folder = user_log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(folder / "tui-agent.log", encoding="utf-8")
    except OSError:
        return
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def new_session(args: argparse.Namespace, *, load: bool) -> Session:
    """The session the flags ask for (logging set up first, for what loading logs)."""
    from .core.session.session import create_session

    setup_logging()
    return create_session(
        args.directory or ".",
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        trust=args.trust,
        yes=args.yes,
        load=load,
    )


def read_resume(folder: Path, session_id: str | None) -> Resumed | None:
    """The journal ``--resume ID`` (``--continue``: ``folder``'s newest) names, its newest
    messages read for the app's first frame (the light part of the core only); None when
    there is none."""
    from .core.conversation.transcript import Transcript, read_resumed

    path = Transcript.find(folder, session_id)
    return None if path is None else read_resumed(path)


def start_app(args: argparse.Namespace) -> int:
    """The full-screen app. The app makes the session (and imports the core with it)
    after its first frame. A resume is looked up first, so a wrong id is said here and not
    in the app, and its journal's newest messages are read (``read_resumed``: the light
    part of the core) for the first frame to draw; the session takes them over. No
    garbage collection until the first frame (see ui/heap.py)."""
    from .ui.heap import hold_collections

    hold_collections()
    from .ui.app import TuiAgentApp, run_app

    folder = Path(args.directory or ".").expanduser().resolve()
    if not folder.is_dir():
        print(f"tui-agent: not a folder: {folder}", file=sys.stderr)
        return 2
    picking = args.resume == "" and not args.continue_  # no id: the picker opens once loaded
    args.resume = args.resume or None
    resumed: Resumed | None = None
    if args.continue_ or args.resume:  # its newest messages are read for the first frame
        resumed = read_resume(folder, args.resume)
        if resumed is None:
            what = f"session {args.resume}" if args.resume else f"a session for {folder}"
            print(f"tui-agent: could not find {what}", file=sys.stderr)
            return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "tui-agent: the app needs a terminal; for scripts use "
            '`tui-agent run "prompt"` (see --help)',
            file=sys.stderr,
        )
        return 2

    def make_session() -> Session:  # called by the app right after its first frame
        session = new_session(args, load=False)
        if resumed is not None:  # it takes over the messages the first frame drew
            session.conversation.resume(resumed.path, resumed)
        return session

    app = TuiAgentApp(make_session=make_session, directory=folder, resumed=resumed)
    app.start_line = "/resume" if picking else None
    return run_app(app)


def cmd_acp(args: argparse.Namespace) -> int:
    """Serve one ACP client on stdio; only this imports ``acp`` (and pydantic)."""
    from .acp.command import run

    return run(args)


def no_arguments() -> argparse.Namespace:
    """What ``build_parser().parse_args([])`` gives (tested equal), without building the
    parser or importing argparse: that takes ~9 ms, and ``tui-agent`` alone starts the app."""
    return cast(
        "argparse.Namespace",
        SimpleNamespace(
            provider=None,
            model=None,
            base_url=None,
            continue_=False,
            resume=None,
            trust=False,
            yes=False,
            directory=None,
            command=None,
        ),
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        return start_app(no_arguments())
    if argv in (["--version"], ["-V"]):  # no parser needed, and nothing of the app or core
        print(f"tui-agent {version()}")
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        return start_app(args)
    if args.command == "acp":  # its sessions are made per the client's folders
        return cmd_acp(args)
    try:
        session = new_session(args, load=args.command in LOADING)
    except (NotADirectoryError, FileNotFoundError) as exc:
        print(f"tui-agent: {exc}", file=sys.stderr)
        return 2
    report_problems(session, sys.stderr, notes=args.command == "tools")
    if args.command == "run" and session.extensions.config_problems:
        # a run must not go on without rules the user wrote (a deny dropped would let it run)
        print("tui-agent: not run: fix the config problem above first", file=sys.stderr)
        return 2
    if args.resume == "":
        print("tui-agent: --resume needs an id here (see `tui-agent sessions`)", file=sys.stderr)
        return 2
    if args.continue_ or args.resume:
        if not session.conversation.resume(args.resume):
            what = f"session {args.resume}" if args.resume else f"a session for {session.directory}"
            print(f"tui-agent: could not find {what}", file=sys.stderr)
            return 2
    if args.command == "tools":
        return cmd_tools(session, args)
    if args.command == "trust":
        return cmd_trust(session, args)
    if args.command == "plugins":
        return cmd_plugins(session, args)
    if args.command == "agents":
        return cmd_agents(session, args)
    if args.command == "skills":
        return cmd_skills(session, args)
    if args.command in ("undo", "sessions"):
        from .cli_sessions import cmd_sessions, cmd_undo

        return (cmd_undo if args.command == "undo" else cmd_sessions)(session, args)
    if args.command == "run":
        from .headless import run_headless

        prompt = " ".join(args.prompt)
        if args.input == "json":  # stdin is read line by line as the run goes
            return run_headless(session, prompt, as_json=args.json, inputs=sys.stdin)
        piped = ""
        if not sys.stdin.isatty():
            piped = sys.stdin.read()
            if not piped.strip():
                piped = ""
        if not prompt.strip() and not piped:
            print("tui-agent: run needs a prompt (as arguments or on stdin)", file=sys.stderr)
            return 2
        # "/name args" runs the command (a Markdown command's prompt goes to the model)
        return run_headless(session, prompt, as_json=args.json, stdin=piped)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
