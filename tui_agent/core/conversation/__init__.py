"""The conversation: typed messages kept in step with the journal (``transcript``), resume
and repair, ``@`` mentions, compaction, the token budget, steering.

May import: ``protocol``, ``util``, ``engines``, ``providers``.
"""
