"""Desktop notifications through the terminal, while it is not focused: when an approval
waits and when a turn ended (the core's ``Attention`` events).

Which sequence: OSC 777 (``ESC ] 777 ; notify ; title ; body BEL``) where the terminal
takes it (foot, urxvt, VTE terminals such as GNOME Terminal), OSC 9 (``ESC ] 9 ; body
BEL``) where it shows one (iTerm2, WezTerm, Ghostty, kitty, Windows Terminal), else the
bell. Inside tmux the sequence goes through as a passthrough (``ESC P tmux ; … ESC \\``,
ESC doubled; tmux needs ``set -g allow-passthrough on``). Focus: Textual's focus
reporting (``AppFocus``/``AppBlur`` set ``App.app_focus``): a focused terminal gets
nothing.

``[notify] on = ["approval", "done"]`` (the default) says when; ``on = []`` turns them
off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

KINDS = ("approval", "done")
TITLE = "tui-agent"
OSC777_TERMS = ("foot", "rxvt")
OSC9_PROGRAMS = ("iTerm.app", "WezTerm", "ghostty")


def wanted(settings: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """The kinds ``[notify] on`` asks for, and what is wrong with the setting (then the
    default applies)."""
    table = settings.get("notify")
    if table is None:
        return KINDS, None
    shape = f"[notify] on must be a list of {' and '.join(map(repr, KINDS))} (on = [] for none)"
    if not isinstance(table, Mapping):
        return KINDS, "[notify] must be a table: " + shape
    unknown = sorted(set(table) - {"on"})
    if unknown:
        return KINDS, f"[notify] has {', '.join(unknown)}: only on"
    on = table.get("on", list(KINDS))
    if not isinstance(on, list) or not all(kind in KINDS for kind in on):
        return KINDS, shape
    return tuple(on), None


def method(environ: Mapping[str, str]) -> str:
    """ "osc777", "osc9" or "bell", for the terminal the environment names."""
    term = environ.get("TERM", "")
    if term.startswith(OSC777_TERMS) or environ.get("VTE_VERSION"):
        return "osc777"
    if (
        environ.get("TERM_PROGRAM") in OSC9_PROGRAMS
        or term == "xterm-kitty"
        or environ.get("WT_SESSION")
    ):
        return "osc9"
    return "bell"


def _clean(text: str) -> str:
    """No control characters (an ESC or BEL would end the sequence early) nor ``;``
    (OSC 777's separator)."""
    return "".join(c for c in text if c.isprintable()).replace(";", ",")


def sequence(message: str, how: str, *, tmux: bool = False) -> str:
    """The bytes that make the terminal show ``message``."""
    if how == "osc777":
        seq = f"\x1b]777;notify;{TITLE};{_clean(message)}\x07"
    elif how == "osc9":
        seq = f"\x1b]9;{TITLE}: {_clean(message)}\x07"
    else:
        return "\x07"  # the bell goes through tmux as it is
    if tmux:
        return "\x1bPtmux;" + seq.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return seq


def terminal_of(app: App[Any]) -> Callable[[str], None] | None:
    """Where the app's output goes: its driver (Textual's own ``bell()`` writes there too;
    it offers no public way to write other bytes), or None without a terminal."""
    driver = getattr(app, "_driver", None)
    if app.is_headless or driver is None:
        return None
    write: Callable[[str], None] = driver.write
    return write


def attention(app: App[Any], kind: str, message: str, settings: Mapping[str, Any]) -> str | None:
    """Notify for ``kind`` if ``[notify] on`` asks for it and the terminal is not focused:
    what was written (None: nothing), and a problem with the setting is returned first
    by ``wanted``."""
    on, _ = wanted(settings)
    if kind not in on or app.app_focus:
        return None
    environ = os.environ
    data = sequence(message, method(environ), tmux=bool(environ.get("TMUX")))
    write = terminal_of(app)
    if write is None:
        return None
    write(data)
    return data
