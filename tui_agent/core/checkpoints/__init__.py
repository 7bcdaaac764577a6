"""Undo: the shadow-repository store (``store``) and the controller that ties its
snapshots to turns of the conversation (``controller``: ``Checkpoints``).

May import: ``conversation`` and below (a message's ``origin`` says which user messages
began a turn: nothing here reads message text to find out).
"""
