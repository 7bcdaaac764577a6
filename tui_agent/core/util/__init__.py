"""Small helpers with no knowledge of a session: atomic writes, listener lists, the user's
folders, process hand-off, output truncation, call signatures, git run safely.

May import: nothing else in the core.
"""
