"""What a failed sandboxed command's output says about the sandbox: ``caused`` names the
rule that looks to have got in the way, ``hint`` is the note for the model with the way
out (``Sandbox.note`` adds what only the session's sandbox knows).
"""

from __future__ import annotations

import re

_ESCAPE = (
    "If it must run outside, call execute again with the same command and "
    '"sandbox": false (the user is asked), or ask the user to run it with !!command.'
)
# output that says the sandbox got in the way (checked only when the command failed)
_CAUSES = (
    (
        re.compile(r"device or resource busy", re.I),
        "a protected file: .git/config, .git/hooks and the agents' config folders cannot be "
        "changed in the sandbox (git config, git remote add and git init over them write "
        "there)",
    ),
    (re.compile(r"read-only file system", re.I), "a write outside the writable folders"),
    (
        re.compile(r"permission denied", re.I),
        "permission denied (maybe a hidden or read-only path)",
    ),
    (
        re.compile(
            r"network is unreachable|could not resolve host|temporary failure in name "
            r"resolution|name or service not known|failed to establish a new connection|"
            r"no address associated with hostname|getaddrinfo",
            re.I,
        ),
        "no network",
    ),
    (
        re.compile(
            r"not an allowed host|CONNECT tunnel failed|Tunnel connection failed|"
            r"HTTP Error 403: Forbidden|status code 403|ProxyError",
            re.I,
        ),
        "a host the sandbox does not allow",
    ),
    (
        re.compile(r"connection refused|no server running|error connecting to", re.I),
        "no network, and Unix sockets outside the sandbox are masked (allowed ones: "
        "[sandbox] unix_sockets)",
    ),
)


def caused(output: str) -> str | None:
    """What in a failed sandboxed command's output looks like the sandbox's doing, or
    None."""
    for pattern, what in _CAUSES:
        if pattern.search(output):
            return what
    return None


def hint(output: str) -> str | None:
    """The note added to a failed sandboxed command's result when the sandbox may be why,
    telling the model the way out (``Sandbox.note`` also names hidden paths and the
    private /tmp)."""
    what = caused(output)
    if what is None:
        return None
    return (
        f"this ran in the sandbox and may have failed because of it ({what}): writes are "
        "allowed only in the worktree and /tmp, there is no network (or only to the hosts "
        f"the user allowed), and credentials are hidden. {_ESCAPE}"
    )
