"""URLs as the fetch tool and its permission rows see them: one parse for both, so the
host a rule is checked against is the host connected to.

``parse("https://Docs.Python.org/3/")`` → ``Target(scheme="https", host="docs.python.org",
port=443, ...)``; the permission subject is the host, ``host:port`` when the port is not
the scheme's own (``localhost:8000``), as the sandbox's host lists write it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")


class URLError(ValueError):
    """A URL the fetch tool will not open, with the reason."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # lower-case, IDNA-encoded, no brackets or trailing dot
    port: int
    path: str  # path and query, never empty ("/")
    url: str  # the URL as fetched (no fragment)

    @property
    def subject(self) -> str:
        return subject_of(self.host, self.port, self.scheme)

    @property
    def is_ip(self) -> bool:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True


def subject_of(host: str, port: int, scheme: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if DEFAULT_PORTS.get(scheme) == port else f"{shown}:{port}"


def normal_host(host: str) -> str:
    """``host`` lower-case, IDNA-encoded, without brackets or a trailing dot; raises
    ``URLError`` for anything that is not a DNS name or an IP literal."""
    name = host.strip()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    name = name.rstrip(".").lower()
    if not name:
        raise URLError("the URL has no host")
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise URLError(f"{host!r} is not a valid host name") from None
    if len(name) > 253 or not all(_LABEL.fullmatch(x) for x in name.split(".")):
        raise URLError(f"{host!r} is not a valid host name")
    if re.fullmatch(r"[0-9.]+|0x[0-9a-f.x]+", name):  # 2130706433, 0x7f.1: not a name
        raise URLError(f"{host!r} is not a valid host name or IP address")
    return name


def parse(url: str) -> Target:
    """The target of an http(s) URL, or ``URLError``: other schemes, credentials in the
    URL (``user:pass@``), a bad host or port."""
    text = url.strip()
    if any(ord(c) < 33 for c in text):
        raise URLError("the URL has spaces or control characters in it")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise URLError(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise URLError(f"only http and https URLs can be fetched, not {scheme or 'this'!r}")
    if "@" in parts.netloc:
        raise URLError(
            "the URL has credentials in it (user:password@): refused; fetch does not send "
            "credentials"
        )
    host = normal_host(parts.hostname or "")
    port = port if port is not None else DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        raise URLError(f"port {port} is out of range")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    netloc = subject_of(host, port, scheme)
    return Target(scheme, host, port, path, urlunsplit((scheme, netloc, path, "", "")))


def subject(url: object) -> str:
    """The permission subject of a fetch: the host, ``host:port`` off the scheme's port;
    ``*`` when the URL cannot be parsed (the tool refuses it anyway)."""
    if not isinstance(url, str):
        return "*"
    try:
        return parse(url).subject
    except URLError:
        return "*"
