"""Undo: the shadow-repository store (``store``) and the controller that ties its
snapshots to turns of the conversation (``controller``: ``Checkpoints``).

May import: ``conversation`` and below (it reads ``extensions.moments``' markers today:
phase B moves message origins into the messages).
"""
