"""The app's dialogs: modal screens that ask the person something and give the answer
back to whoever asked (the session, through the app).

- ``approval``: may this tool call run? (``ask_approval``), and may this folder's own code
  run? (``TrustScreen``);
- ``choice``: pick one of a list (``ask_choice``: ``session.frontend.choose``, ``/rewind``).

May import: Textual, Rich, each other, and the core's names through ``ui.connected``
only (the dialogs come after the app has connected its session; ``approval`` imports it
at its top). Never ``ui.app``, ``ui.chat`` or the blocks: a dialog gets the app as a
plain ``textual.app.App`` and answers through a future or a callback.

Nothing is imported at the package's top: the first frame goes without the dialogs."""
