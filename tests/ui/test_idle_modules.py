"""Idle memory (issue 29): what the app holds once its session has loaded, before the
first prompt. ``bench/run.py``'s ``idle_rss`` measures it (VmRSS 1 s after the first
frame); this pins, machine-independently, the libraries the load must leave for later,
each used only when something needs it: jsonschema (a tool's arguments that the fast
check cannot vouch for), ``html`` and its HTML5 entity table (an /export),
importlib.metadata (a distribution that names the plugin packages' group, an MCP server
over HTTP), Markdown (the first reply or a Markdown note). ``test_startup.py`` lists
what the first frame goes without; this is the state after the load.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_startup import run_fresh

# imported only when first used: never by the load, its bundled plugins and tools included
AFTER_LOAD = [
    "jsonschema",  # ArgsValidator makes jsonschema's validator when first asked
    "attrs",  # jsonschema's
    "referencing",  # jsonschema's
    "html",  # plugins/export.py escapes with it on an /export
    "importlib.metadata",  # plugin packages: only when a distribution names their group
    "zipfile",  # importlib.metadata's
    "html.entities",
    "markdown_it",  # a configured provider: no Markdown note after the load
    "textual.widgets._markdown",
]

LOADED = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path

    from tui_agent.core.session.session import create_session
    from tui_agent.ui.app import TuiAgentApp

    seen = {}

    async def main():
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(500):  # the session is made and loaded after the first frame
                if app._session_loaded.is_set():
                    break
                await pilot.pause(0.02)
            for _ in range(5):
                await pilot.pause(0.02)
            seen["loaded"] = app.session.extensions.loaded
            seen["tools"] = sorted(app.session.toolbox.tools)
            seen["provider"] = app.session.extensions.provider_name
            seen["modules"] = sorted(sys.modules)
        app.session.conversation.journal.close()

    project = Path(sys.argv[1])

    def make():
        return create_session(project, base_url="http://127.0.0.1:9/v1", load=False)

    app = TuiAgentApp(make_session=make, directory=project)
    asyncio.run(main())
    import json  # after the modules are listed

    print(json.dumps(seen))
    """
)


def test_the_loaded_app_has_not_imported_what_only_a_later_step_needs(project: Path) -> None:
    """A fresh process, a configured provider, the bundled plugins loaded (``execute``,
    ``export``, ``mcp``…, their tools registered): none of ``AFTER_LOAD`` is imported."""
    seen = run_fresh(LOADED, project)
    assert seen["loaded"] and seen["provider"] != "stub"
    assert {"read", "write", "execute", "grep"} <= set(seen["tools"])
    modules = set(seen["modules"])
    plugins = {  # tui_agent_plugins._7_export is plugins/export.py
        name.split(".")[-1].split("_", 2)[-1]
        for name in modules
        if name.startswith("tui_agent_plugins.")
    }
    assert {"export", "execute", "mcp"} <= plugins
    assert [name for name in AFTER_LOAD if name in modules] == []
