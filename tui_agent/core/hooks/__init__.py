"""Claude-style command hooks: parse the settings, run the commands, map Claude's names
and write the transcript they read.

May import: ``conversation`` and below (``tools``, ``project``, ``protocol``, ``util``).
Today also ``extensions`` (plugins, moments) and ``session`` (TYPE_CHECKING): the
config -> plugins -> command_hooks circle.
"""
