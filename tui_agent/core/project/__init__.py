"""The folder being worked on: the workspace (its git root, its tool context, its system
prompt), trust, and the settings (config files, ``setup``/``configure``).

May import: ``protocol``, ``util``. Today also, inside functions or to check a table:
``sandbox`` and ``hooks`` (config), ``extensions.plugins`` (workspace): the circle
config -> plugins -> command_hooks -> config, which phase B of issue 28 breaks.
"""
