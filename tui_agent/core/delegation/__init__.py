"""Subagents: a ``task`` call runs an agent (``agents``' definitions) as a child loop with
a fresh transcript, its own tools and model, on the session's toolbox (so permissions,
the sandbox and hooks hold as for the session's own calls). ``Delegation`` is the
session's part (``session.agents``); ``ChildTranscript`` the child's record, journaled
into the session's journal as ``subagent`` records.

May import: ``agent`` (the loop), ``agents``, ``conversation``, ``tools``, ``providers``,
``protocol``, ``util``.
"""

from .child import ChildTranscript, child_records
from .delegation import MAX_DEPTH, Delegation

__all__ = ["MAX_DEPTH", "ChildTranscript", "Delegation", "child_records"]
