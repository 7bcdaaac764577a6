"""``Session``: wires the parts and gives a frontend one object (``create_session``).
``session.py`` wires; ``conversation.py`` is the ``session.conversation`` part (the
transcript plus what a conversation does); ``parts.py`` the ``permissions`` part and the
guarded ``frontend``; ``legacy.py`` the names before issue 28, warning once.

May import: the whole core.
"""
