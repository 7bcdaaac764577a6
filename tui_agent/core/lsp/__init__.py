"""Language servers for diagnostics after edits (issue 34): which server serves a file
(``settings``: the ``[lsp.NAME]`` tables and the built-in table), one running server
(``client``: pygls's client on lsprotocol's types, over the server's stdio), the servers
of a session (``servers``: started lazily, one per server and project root, stopped at
close) and what an edit introduced (``problems``: positions 1-based, the matching that
keeps a pre-existing problem from counting as new).

Language servers are the user's programs, like the editor's: they run outside the sandbox,
with the user's environment, in the project root, and never with the model's arguments
(their command comes only from the built-in table or the user's config).

May import: ``util``. pygls and lsprotocol are imported when the first server starts,
never at start-up.
"""
