"""What extends a session: plugin loading, installed packages, the load lifecycle
(``Extensions``), commands, prompt commands and moments.

May import: anything of the core below ``session`` (``session`` under TYPE_CHECKING today).
"""
