"""Which tool calls ask first: the permission rules and shell-command splitting.

May import: ``protocol``, ``util``.
"""
