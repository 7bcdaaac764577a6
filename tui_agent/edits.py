"""Public: the tolerant text replacement behind the bundled ``edit`` tool.

``apply_edit(text, old, new)`` finds ``old`` exactly or by one of ``MATCHERS`` (at one
place only) and returns an ``Applied`` with the new text; ``apply_edits`` applies several
in order, all or nothing. Failures raise ``EditError`` with a message for the model.
``unified_diff(old, new, path)`` is the diff the tool returns (``patch -p1`` applies it).
"""

from .core.engines.edits import (
    MATCHERS,
    Applied,
    Edit,
    EditError,
    apply_edit,
    apply_edits,
    unified_diff,
)

__all__ = [
    "MATCHERS",
    "Applied",
    "Edit",
    "EditError",
    "apply_edit",
    "apply_edits",
    "unified_diff",
]
