"""Where commands run: the bubblewrap sandbox and its settings, the network proxy, and the
user's ``!`` shell.

May import: ``protocol``, ``util``, ``project`` (trust).
"""
