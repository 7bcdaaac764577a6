"""Which addresses a fetch may reach on its own: none that is private, loopback,
link-local, unspecified, reserved or a cloud metadata address, and no name that resolves
to one, unless a permission rule names that host itself.

The name is resolved once, every address it gives is checked, and the connection goes to
an address that was checked (``Resolved.address``), never to the name again: a DNS answer
that changes between the check and the connect (rebinding) cannot reach anything new.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..util.urls import Target

Resolver = Callable[..., Sequence[tuple[Any, ...]]]

# not covered by ipaddress's is_private & co.: the cloud metadata services' own addresses
# (AWS/GCP/Azure 169.254.169.254 is link-local already; these are not), carrier-grade NAT
METADATA = (
    ipaddress.ip_network("100.64.0.0/10"),  # shared address space (Alibaba's 100.100.100.200)
    ipaddress.ip_network("fd00:ec2::/32"),  # AWS's IPv6 metadata (fd00:ec2::254)
    ipaddress.ip_network("192.0.0.0/24"),  # IETF protocol assignments (192.0.0.192: Oracle)
)
LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def private(address: str) -> bool:
    """Not a public unicast address: private, loopback, link-local, unspecified,
    multicast, reserved, metadata; IPv4 inside IPv6 (``::ffff:127.0.0.1``, 6to4, NAT64)
    judged by the IPv4 address it carries."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is None and ip in ipaddress.ip_network("64:ff9b::/96"):
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            return private(str(inner))
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
        or not ip.is_global
        or any(ip in net for net in METADATA)
    )


def local_name(host: str) -> bool:
    return host in LOCAL_NAMES or host.endswith(".localhost")


@dataclass(frozen=True)
class Resolved:
    address: str  # the one connected to
    addresses: tuple[str, ...]  # every one the name gave
    private: bool  # any of them is not public


class ResolveError(OSError):
    pass


def resolve(target: Target, resolver: Resolver | None = None) -> Resolved:
    """The addresses of ``target.host`` (an IP literal is its own), resolved once."""
    if target.is_ip:
        return Resolved(target.host, (target.host,), private(target.host))
    lookup = resolver or socket.getaddrinfo
    try:
        infos = lookup(target.host, target.port, 0, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ResolveError(f"could not resolve {target.host}: {exc}") from None
    found = [str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)]
    found = list(dict.fromkeys(found))
    if not found:
        raise ResolveError(f"could not resolve {target.host}: no address")
    hidden = local_name(target.host) or any(private(a) for a in found)
    return Resolved(found[0], tuple(found), hidden)
