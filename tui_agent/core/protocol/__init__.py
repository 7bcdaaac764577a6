"""The vocabulary every part speaks: the events on the bus, the typed messages, tool
results, errors, the approval request and decision, the tool context, the notes
(``Output``) and the records events carry (``records.py``).

May import: ``core.util`` only. Everything else in the core may import this.
"""
