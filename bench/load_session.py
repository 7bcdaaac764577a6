"""One timed ``create_session(folder)``; run in a fresh process per measurement by load.py.

Imports are done before the clock starts, so both the baseline and the 250-file run time
the same thing: reading config and every plugin and tool file (plugin and tool files are
compiled from source on every load, as the app does; the OS file cache is warm after
load.py's warm-up run). Prints the milliseconds, and the tool count as a sanity check.
"""

from __future__ import annotations

import json
import sys
import time

import tui_agent


def main() -> None:
    folder = sys.argv[1]
    started = time.perf_counter()
    session = tui_agent.create_session(folder)
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {
                "ms": elapsed * 1000,
                "tools": len(session.toolbox.tools),
                "problems": [str(p) for p in session.extensions.problems],
            }
        )
    )


if __name__ == "__main__":
    main()
