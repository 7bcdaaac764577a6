"""``tui-agent acp`` from the command line (``cli.cmd_acp``): the ``acp`` package is
imported here, or what to install is said."""

from __future__ import annotations

import sys
from typing import Any


def run(args: Any) -> int:
    try:
        from .serve import serve
        from .server import Settings
    except ImportError as exc:
        print(
            f"tui-agent: acp needs the agent-client-protocol package ({exc.name or exc}): "
            "pip install 'tui-agent[acp]'",
            file=sys.stderr,
        )
        return 2
    settings = Settings(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        trust=args.trust,
        yes=args.yes,
    )
    return serve(settings)
