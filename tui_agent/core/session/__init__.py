"""``Session``: wires the parts and gives a frontend one object (``create_session``).

May import: the whole core.
"""
