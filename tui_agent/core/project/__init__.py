"""The folder being worked on: the workspace (its git root, its tool context, its system
prompt, its project code), trust, and the settings (config files, ``setup``/``configure``,
the registry of table checks the other parts fill: ``config.register_validator``).

May import: ``protocol``, ``util``.
"""
