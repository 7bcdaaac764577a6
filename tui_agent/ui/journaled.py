"""The UI's second door to the core, a narrow one: the names a journaled conversation is
drawn with (``resumed.py``), and nothing else.

A resume draws the newest messages of its journal in its first frame, before the session
is made (``cli.start_app`` reads them with ``core.conversation.transcript.read_resumed``
and the session takes them over once made): what that drawing needs of the core comes
through here, and it is the light part that reads a journal (the typed messages, the
conversation, the journal's reader, a ``!command``'s record), never the session, the
agent or what ``connected`` brings (``tests/ui/test_ui_imports.py`` lists what this may
import; ``tests/ui/test_startup.py`` what a resume imports before its first frame).
"""

from __future__ import annotations

from ..core.conversation.conversation import Conversation
from ..core.conversation.journal import child_records
from ..core.protocol import messages
from ..core.sandbox import user_shell

__all__ = ["Conversation", "child_records", "messages", "user_shell"]
