"""The chat's blocks: one widget (or streamer) per kind of thing the chat shows.

- ``message``: the user's message (with its ``@path`` chips) and a note;
- ``thinking``: the model's thinking, streamed then folded;
- ``reply``: a streamed reply as a chain of Markdown segments (``ReplyStream``);
- ``tool_call``: one tool call, live then with its result;
- ``task``: one ``task`` call, its subagent's steps live in it (tool lines, its text), folded;
- ``shell``: one ``!command``, live then with its output;
- ``markdown``: the Markdown widgets (imported on the first Markdown shown: the first
  frame goes without them);
- ``live``: what the live blocks share (the spinner, keys first while the user types).

May import: Textual, Rich, each other, and the core under ``TYPE_CHECKING`` only (for
annotations). Never the rest of the UI (``ui.chat``, ``ui.app``, ``ui.dialogs``,
``ui.connected``): the chat view (``ui.chat``) and the resumed conversation
(``ui.resumed``) build on the blocks, not the other way round. What a block needs of the
chat it holds is a Protocol here (``reply.ReplyHost``).

This package imports nothing at its top: ``ui.chat`` imports the blocks the first frame
needs, the others come when first shown."""
