"""One fetch: each hop's URL parsed and its host checked (``addresses``), the connection
made to the checked address (TLS still verified against the name), the body read up to a
byte cap within one deadline for the whole fetch, redirects followed hop by hop.

Proxy variables (``HTTPS_PROXY``, ``HTTP_PROXY``, ``NO_PROXY``, either case) are honoured:
through a proxy the name is still checked here when it resolves here (a name that does not
is left to the proxy, which resolves it itself).

A ``cancelled`` event (set from another thread: Esc) is checked before each hop and in the
read loop, and a watcher shuts the open socket as soon as it is set, so a cancelled fetch
waiting on a slow or silent server lets go of it at once, not at the fetch's ``timeout``.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..util.urls import Target, URLError, parse
from .addresses import ResolveError, Resolver, local_name, resolve
from .settings import FetchSettings

if TYPE_CHECKING:
    import http.client


class FetchError(Exception):
    """A fetch that failed or was refused, said so the model (and the person) can act."""


@dataclass
class Page:
    url: str  # after redirects
    status: int
    reason: str
    content_type: str  # media type, lower-case, no parameters
    charset: str | None
    body: bytes
    truncated: bool  # more than max_bytes were on offer
    redirects: list[str] = field(default_factory=list)
    via_proxy: bool = False


@dataclass
class Redirect:
    """A redirect not followed (to a host the rules do not allow): the model fetches it
    itself, which asks about that host."""

    url: str
    to: str
    redirects: list[str] = field(default_factory=list)


def proxy_for(target: Target) -> Target | None:
    """The proxy the environment names for this URL, if any (``NO_PROXY`` honoured)."""
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    if not proxies:
        return None
    bypass = getattr(urllib.request, "proxy_bypass_environment")(target.host, proxies)  # noqa: B009
    url = proxies.get(target.scheme) or proxies.get("all")
    if not url or bypass:
        return None
    if "://" not in url:
        url = "http://" + url
    try:
        return parse(url)
    except URLError:
        return None


def _connection(
    target: Target, address: str, proxy: Target | None, timeout: float
) -> http.client.HTTPConnection:
    import http.client
    import socket
    import ssl

    if proxy is not None:
        if target.scheme == "https":
            tunnel = http.client.HTTPSConnection(
                proxy.host, proxy.port, timeout=timeout, context=ssl.create_default_context()
            )
            tunnel.set_tunnel(target.host, target.port)
            return tunnel
        return http.client.HTTPConnection(proxy.host, proxy.port, timeout=timeout)

    def connect_checked(connection: http.client.HTTPConnection) -> socket.socket:
        return socket.create_connection((address, target.port), timeout=timeout)

    if target.scheme == "https":
        context = ssl.create_default_context()

        class Pinned(http.client.HTTPSConnection):
            def connect(self) -> None:
                self.sock = context.wrap_socket(connect_checked(self), server_hostname=target.host)

        return Pinned(target.host, target.port, timeout=timeout, context=context)

    class PinnedPlain(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = connect_checked(self)

    return PinnedPlain(target.host, target.port, timeout=timeout)


def fetch(
    url: str,
    settings: FetchSettings,
    *,
    opened: Callable[[str], bool] = lambda subject: False,
    may_follow: Callable[[str], bool] = lambda subject: False,
    resolver: Resolver | None = None,
    cancelled: threading.Event | None = None,
) -> Page | Redirect:
    """GET ``url``. ``opened(subject)``: a rule names this host itself, so a private
    address is allowed for it. ``may_follow(subject)``: the rules allow a redirect to this
    other host without asking. ``cancelled``: once set, the fetch stops (its socket shut at
    once) with a ``FetchError``. Raises ``FetchError``."""
    deadline = time.monotonic() + settings.timeout
    redirects: list[str] = []
    current = url
    first: Target | None = None
    while True:
        if cancelled is not None and cancelled.is_set():
            raise FetchError(f"{current}: cancelled")
        try:
            target = parse(current)
        except URLError as exc:
            raise FetchError(f"{current}: {exc}") from None
        if first is None:
            first = target
        elif target.host != first.host and not may_follow(target.subject):
            return Redirect(url, target.url, redirects)
        page = _one(target, settings, deadline, opened, resolver, cancelled)
        if isinstance(page, str):  # a redirect's Location
            if len(redirects) >= settings.max_redirects:
                raise FetchError(f"{url}: more than {settings.max_redirects} redirects")
            from urllib.parse import urljoin

            redirects.append(target.url)
            current = urljoin(target.url, page)
            continue
        page.redirects = redirects
        return page


def _refuse_private(target: Target, addresses: tuple[str, ...]) -> FetchError:
    where = ", ".join(addresses)
    verb = "is" if target.is_ip else "resolves to"
    return FetchError(
        f"{target.url}: {target.host} {verb} a private, loopback or link-local address "
        f"({where}); "
        f"fetch does not open those unless a permission rule names the host itself: "
        f'[permission] fetch = {{ "{target.subject}" = "allow" }} (a "*" rule does not)'
    )


def _one(
    target: Target,
    settings: FetchSettings,
    deadline: float,
    opened: Callable[[str], bool],
    resolver: Resolver | None,
    cancelled: threading.Event | None = None,
) -> Page | str:
    if local_name(target.host) and not opened(target.subject):  # even if it does not resolve
        raise _refuse_private(target, ("a local name",))
    proxy = proxy_for(target)
    address = target.host
    try:
        resolved = resolve(target, resolver)
    except ResolveError as exc:
        if proxy is None:
            raise FetchError(f"{target.url}: {exc}") from None
    else:
        if resolved.private and not opened(target.subject):
            raise _refuse_private(target, resolved.addresses)
        address = resolved.address
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchError(f"{target.url}: timed out after {settings.timeout:g} s")
    connection = _connection(target, address, proxy, left)
    try:
        connection.connect()
    except TimeoutError:
        connection.close()
        raise FetchError(f"{target.url}: timed out after {settings.timeout:g} s") from None
    except OSError as exc:
        connection.close()
        raise FetchError(f"{target.url}: {exc.strerror or exc}") from None
    with _watch(connection, cancelled):
        return _exchange(connection, target, proxy, settings, deadline, cancelled)


@contextmanager
def _watch(
    connection: http.client.HTTPConnection, cancelled: threading.Event | None
) -> Iterator[None]:
    """While the exchange runs, a daemon thread shuts the socket the moment ``cancelled``
    is set (a read blocked on a silent server returns at once); closed in any case after."""
    if cancelled is None:
        try:
            yield
        finally:
            connection.close()
        return
    over = threading.Event()

    def watcher() -> None:
        import socket

        while not over.is_set():
            if cancelled.wait(0.1):
                sock = connection.sock
                if sock is not None and not over.is_set():
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return

    threading.Thread(target=watcher, name="tui-agent-fetch-cancel", daemon=True).start()
    try:
        yield
    finally:
        over.set()
        connection.close()


def _exchange(
    connection: http.client.HTTPConnection,
    target: Target,
    proxy: Target | None,
    settings: FetchSettings,
    deadline: float,
    cancelled: threading.Event | None,
) -> Page | str:
    try:
        path = target.url if proxy is not None and target.scheme == "http" else target.path
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", target.subject)
        connection.putheader("User-Agent", settings.user_agent)
        connection.putheader("Accept", settings.accept)
        connection.putheader("Accept-Encoding", "gzip, deflate")
        connection.putheader("Connection", "close")
        connection.endheaders()
        response = connection.getresponse()
        if response.status in (301, 302, 303, 307, 308) and response.getheader("Location"):
            return str(response.getheader("Location"))
        body, truncated = _read(response, connection, settings, deadline, target, cancelled)
    except FetchError:
        raise
    except Exception as exc:  # OSError, http.client's HTTPException and friends
        if cancelled is not None and cancelled.is_set():
            raise FetchError(f"{target.url}: cancelled") from None
        if isinstance(exc, TimeoutError):
            raise FetchError(f"{target.url}: timed out after {settings.timeout:g} s") from None
        if isinstance(exc, OSError):
            raise FetchError(f"{target.url}: {exc.strerror or exc}") from None
        raise FetchError(f"{target.url}: {type(exc).__name__}: {exc}") from None
    media, _, params = (response.getheader("Content-Type") or "").partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip("\"' ").lower()
    return Page(
        url=target.url,
        status=response.status,
        reason=response.reason,
        content_type=media.strip().lower(),
        charset=charset,
        body=body,
        truncated=truncated,
        via_proxy=proxy is not None,
    )


def _read(
    response: Any,
    connection: http.client.HTTPConnection,
    settings: FetchSettings,
    deadline: float,
    target: Target,
    cancelled: threading.Event | None = None,
) -> tuple[bytes, bool]:
    """The body, at most ``max_bytes`` (decompressed), before the deadline: a server that
    sends a byte a second is cut off at the deadline, not waited for."""
    encoding = (response.getheader("Content-Encoding") or "").strip().lower()
    inflate: Any = None
    if encoding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflate = zlib.decompressobj()
    elif encoding not in ("", "identity"):
        raise FetchError(f"{target.url}: content encoded as {encoding!r}, which fetch cannot read")
    chunks: list[bytes] = []
    size = 0
    cap = settings.max_bytes
    while size <= cap:
        if cancelled is not None and cancelled.is_set():
            raise FetchError(f"{target.url}: cancelled ({size} bytes read)")
        left = deadline - time.monotonic()
        if left <= 0:
            raise FetchError(
                f"{target.url}: timed out after {settings.timeout:g} s ({size} bytes read)"
            )
        if connection.sock is not None:
            connection.sock.settimeout(left)
        data = response.read1(65536)
        if not data:
            break
        if inflate is not None:
            data = inflate.decompress(data, cap + 1 - size)
        chunks.append(data)
        size += len(data)
    if cancelled is not None and cancelled.is_set():  # the watcher's shutdown reads as an end
        raise FetchError(f"{target.url}: cancelled ({size} bytes read)")
    body = b"".join(chunks)
    return body[:cap], size > cap
