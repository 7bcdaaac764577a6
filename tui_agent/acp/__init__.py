"""``tui-agent acp``: the third frontend, beside the app (``ui/``) and ``tui-agent run``
(``headless.py``): an ACP client (an editor) drives sessions over stdio with the
Agent Client Protocol (the ``agent-client-protocol`` package: ``pip install
'tui-agent[acp]'``).

It implements what the others do: the session's events mapped to updates
(``updates.py``, with ``tool_calls.py`` for kinds, titles, locations and diffs), the
frontend protocol (``frontend.py``: approval through ``session/request_permission``),
prompts from content blocks (``prompt.py``), files through the editor (``files.py``),
JSON-RPC lines (``transport.py``), the methods (``server.py``) and the process
(``serve.py``: stdio, logging). Importing this package imports nothing; only ``cmd_acp``
runs ``command.run``, so the app and ``run`` never load ``acp`` or pydantic.

May import the core and the public modules; never Textual or ``tui_agent.ui``."""
