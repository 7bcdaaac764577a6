"""Claude-style command hooks: parse the settings, run the commands, map Claude's names
and write the transcript they read. Wired into a session by the bundled plugin
``command_hooks`` (``plugins/command_hooks.py``).

May import: ``conversation`` and below (``tools``, ``project``, ``protocol``, ``util``).
"""
