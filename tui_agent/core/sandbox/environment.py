"""The environment a sandboxed command gets: an allow-list of variables (``ENV_PASSED``
and ``env = [...]``), minus secret-looking names (``DEFAULT_SCRUB``, ``scrub_env``) and
any variable whose value holds the provider's key (``passed_env``, ``scrubbed_env``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

# environment variable names (fnmatch, case-insensitive) a sandboxed command gets: an
# allow-list; ``env = [...]`` adds names or patterns. ``DEFAULT_SCRUB`` still drops names
# like these from what a pattern lets through (``env = ["*"]``), unless named exactly.
ENV_PASSED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "VIRTUAL_ENV",
    "VIRTUAL_ENV_PROMPT",
    "CONDA_*",
    "PYENV_*",
    "NVM_*",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GEM_HOME",
    "GEM_PATH",
)
DEFAULT_SCRUB = (
    "*_API_KEY",
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET",
    "*_SECRET_*",
    "*_PASSWORD",
    "*_PASSWD",
    "*_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
)
# a provider key this long is also looked for inside values (``AUTH="Bearer <key>"``);
# a shorter one (a local server's "ollama") only as a whole value
_SECRET_INSIDE = 12


def scrubbed_env(
    environ: Mapping[str, str], patterns: tuple[str, ...], secrets: tuple[str, ...] = ()
) -> dict[str, str]:
    """``environ`` without variables named like ``patterns`` (case-insensitive) or whose
    value is one of ``secrets`` (the provider's key, whatever the variable is called)."""
    upper = [p.upper() for p in patterns]
    values = {s for s in secrets if s}
    return {
        name: value
        for name, value in environ.items()
        if value not in values and not any(fnmatch.fnmatchcase(name.upper(), p) for p in upper)
    }


# passed_env's answers, keyed by everything it reads (the whole environment, names and
# values, and the settings): a variable added, removed or changed is a new key. Matching
# every variable against ~40 patterns costs ~0.4 ms, and the environment rarely changes
# between two commands.
_PASSED: dict[tuple[object, ...], dict[str, str]] = {}
_PASSED_KEPT = 8


def passed_env(
    environ: Mapping[str, str],
    names: tuple[str, ...] = (),
    scrub: tuple[str, ...] = (),
    secrets: tuple[str, ...] = (),
) -> dict[str, str]:
    """The variables of ``environ`` a sandboxed command gets: those ``ENV_PASSED`` or
    ``names`` name (case-insensitive patterns; ``DEFAULT_SCRUB`` names only when named
    exactly), minus ``scrub`` patterns, minus any whose value is a secret or, for a secret
    of 12 characters or more, holds one. Remembered for the same inputs (a copy each)."""
    key = (tuple(environ.items()), tuple(names), tuple(scrub), tuple(secrets))
    found = _PASSED.get(key)
    if found is None:
        found = _passed_env(environ, names, scrub, secrets)
        if len(_PASSED) >= _PASSED_KEPT:
            _PASSED.clear()
        _PASSED[key] = found
    return dict(found)


def _passed_env(
    environ: Mapping[str, str],
    names: tuple[str, ...],
    scrub: tuple[str, ...],
    secrets: tuple[str, ...],
) -> dict[str, str]:
    exact = {n.upper() for n in names if not any(c in n for c in "*?[")}
    allowed = [p.upper() for p in (*ENV_PASSED, *names)]
    secret = [p.upper() for p in DEFAULT_SCRUB]
    dropped = [p.upper() for p in scrub]
    long = [s for s in secrets if len(s) >= _SECRET_INSIDE]
    whole = {s for s in secrets if s}

    def passes(name: str, value: str) -> bool:
        upper = name.upper()
        if upper not in exact and (
            not any(fnmatch.fnmatchcase(upper, p) for p in allowed)
            or any(fnmatch.fnmatchcase(upper, p) for p in secret)
        ):
            return False
        if any(fnmatch.fnmatchcase(upper, p) for p in dropped):
            return False
        return value not in whole and not any(s in value for s in long)

    return {name: value for name, value in environ.items() if passes(name, value)}


# what setlocale() reads: passed to the command by bwrap's --setenv (``arguments``), so
# the programs that start it (bwrap, and nsenter where it does the hop) load no locale;
# locale names, not secrets (other LC_ names, which ssh passes along and nothing reads
# as a locale, stay variables)
LOCALE = (
    "LC_ALL",
    "LC_ADDRESS",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_IDENTIFICATION",
    "LC_MEASUREMENT",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NAME",
    "LC_NUMERIC",
    "LC_PAPER",
    "LC_TELEPHONE",
    "LC_TIME",
    "LANG",
)
