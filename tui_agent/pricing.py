"""Public: what a session's tokens cost. ``tally(session)`` is the session's tally of
tokens by model (its subagents' included), following its events from the first load;
``tally(session).cost(session.config.settings)`` prices it (``Cost``: ``total`` None when
no model has a price, never 0 for an unknown one). Prices: ``[models."X"] price``, else
the shipped table for hosted models (``SHIPPED``), none for a local server."""

from __future__ import annotations

import typing

from .core.providers.pricing import SHIPPED, Cost, Line, Price, Tally, Tokens, dollars, price_for

if typing.TYPE_CHECKING:
    from .core.session.session import Session

__all__ = ["SHIPPED", "Cost", "Line", "Price", "Tally", "Tokens", "dollars", "price_for", "tally"]


def _model(session: Session) -> str:
    primary = session.agents.primary
    if primary is not None and primary.model:
        return primary.model
    return session.extensions.model or session.provider.model or ""


def tally(session: Session) -> Tally:
    """The session's tally, made (and set listening) the first time it is asked for: the
    bundled ``cost`` plugin asks at the first load, before any request."""

    def make() -> Tally:
        made = Tally(lambda: _model(session))
        session.events.listen(made.heard)
        return made

    return session.extensions.kept("cost", make)
