"""The ``[sandbox]`` settings: what config may say (``KEYS``, ``problems``), the
``Settings`` read from it with their defaults (``DEFAULT_HIDE``, the private /tmp's
``tmp_size``: ``parse_size``).

Imports nothing of tui-agent, so config can check a ``[sandbox]`` table cheaply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# what under HOME holds credentials or what a user typed (histories): hidden inside the
# sandbox; "*" in a name is a pattern (fnmatch, one level); "$XDG_CONFIG_HOME/..." follows
# that variable wherever it points (its default ~/.config is listed too)
DEFAULT_HIDE = (
    "~/.ssh",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.gnupg",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "~/.config/gh",
    "$XDG_CONFIG_HOME/gcloud",
    "$XDG_CONFIG_HOME/gh",
    "$XDG_CONFIG_HOME/*/credentials*",
    "~/.config/*/credentials*",
    "~/.npmrc",
    "~/.yarnrc",
    "~/.yarnrc.yml",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.claude/.credentials.json",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.histfile",
    "~/.sh_history",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.lesshst",
    "~/.local/share/fish/fish_history",
)
KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "enabled": (bool, "true or false"),
    "network": ((bool, list), "true, false or a list of hosts"),
    "auto_allow": (bool, "true or false"),
    "allow_write": (list, "a list of folders"),
    "hide": (list, "a list of paths"),
    "scrub_env": (list, "a list of variable name patterns"),
    "env": (list, "a list of variable names or patterns"),
    "unix_sockets": (list, "a list of socket paths"),
    "tmp_size": ((int, str), 'a size such as "512M" or "2G", or a number of bytes'),
}
DEFAULT_TMP_SIZE = 1 << 30  # the private /tmp: 1 GiB unless tmp_size says otherwise
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)
DEFAULT_ENABLED = True  # on where bwrap works (availability says why not elsewhere)


@dataclass(frozen=True)
class Settings:
    """``[sandbox]`` from config, with defaults."""

    enabled: bool = DEFAULT_ENABLED
    network: bool = False
    hosts: tuple[str, ...] = ()  # network = [hosts]: http(s) to these only, via the proxy
    auto_allow: bool = True
    allow_write: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    scrub_env: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # more variables passed (names or patterns)
    unix_sockets: tuple[str, ...] = ()  # sockets outside left reachable
    tmp_size: int = DEFAULT_TMP_SIZE  # bytes the private /tmp may hold

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> Settings:
        table = settings.get("sandbox")
        table = table if isinstance(table, Mapping) and not problems(table) else {}
        size = table.get("tmp_size")
        return cls(
            enabled=bool(table.get("enabled", DEFAULT_ENABLED)),
            network=table.get("network", False) is True,
            hosts=tuple(net) if isinstance(net := table.get("network"), list) else (),
            auto_allow=bool(table.get("auto_allow", True)),
            allow_write=tuple(table.get("allow_write", ())),
            hide=tuple(table.get("hide", ())),
            scrub_env=tuple(table.get("scrub_env", ())),
            env=tuple(table.get("env", ())),
            unix_sockets=tuple(table.get("unix_sockets", ())),
            tmp_size=DEFAULT_TMP_SIZE if size is None else parse_size(size) or DEFAULT_TMP_SIZE,
        )


def parse_size(value: Any) -> int | None:
    """Bytes from ``512M``, ``2G``, ``1.5GiB``, ``100k`` or a whole number; None if it is
    none of these (or not above zero)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    match = _SIZE.match(str(value))
    if match is None:
        return None
    power = " KMGT".index(match.group(2).upper() or " ")
    size = int(float(match.group(1)) * 1024**power)
    return size if size > 0 else None


def problems(table: Any) -> list[str]:
    """What is wrong with a ``[sandbox]`` table, said as config problems."""
    if not isinstance(table, Mapping):
        return ["sandbox must be a table ([sandbox])"]
    found = []
    for key, value in table.items():
        rule = KEYS.get(key)
        if rule is None:
            found.append(f"sandbox.{key} is not a sandbox setting ({', '.join(KEYS)})")
        elif (
            not isinstance(value, rule[0])
            or (isinstance(value, bool) and bool not in _types(rule[0]))
            or (isinstance(value, list) and not all(isinstance(i, str) and i for i in value))
            or (key == "tmp_size" and parse_size(value) is None)
        ):
            found.append(f"sandbox.{key} must be {rule[1]}")
    return found


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
