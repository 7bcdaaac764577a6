"""What extends a session: plugin loading, installed packages, the load lifecycle
(``Extensions``), commands, prompt commands and moments. Loaders see the session as a
``host.PluginHost``.

May import: anything of the core below ``session``.
"""
