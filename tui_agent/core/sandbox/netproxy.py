"""The sandbox's allowed hosts (``[sandbox] network = ["pypi.org", "*.github.com"]``).

A sandboxed command has a network namespace of its own with only loopback in it. To let
it reach some hosts and no others, the agent runs a small HTTP proxy *outside* the
sandbox (``HostProxy``), listening on a Unix socket (in a short folder of its own: socket
paths have a 108-byte limit) that is bound into the sandbox's /tmp; inside,
a forwarder (``FORWARDER``, started in front of the command) listens on
``127.0.0.1:PORT`` and passes each connection to that socket, and ``HTTP_PROXY`` /
``HTTPS_PROXY`` (and their lower-case forms) point there. So every program that honours
those variables (curl, pip, git over https, npm, Python's urllib and requests) gets out
through the proxy, which allows ``CONNECT host:port`` (https) and plain ``http://``
requests to the listed hosts only and answers the rest with ``403``. A program that opens
its own sockets gets nowhere: there is no route out.

Patterns: ``pypi.org`` is that host; ``*.github.com`` is any host under it (not
``github.com`` itself), on ports 80 and 443; ``host:8080`` names another port, ``host:*``
any. Names are compared lower-case without a trailing dot; a name that is not a plain
DNS name or an IP literal (a NUL byte, spaces, a stray ``@``) is refused before any check,
so the name checked is the name connected to.

Plain http requests are sent on with ``Connection: close``, so a kept-alive connection
cannot carry a second request to another host past the check. Nothing here imports
Textual; the proxy runs in daemon threads, not on the app's event loop.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger("tui_agent.sandbox")

PORT = 47311  # the forwarder's port inside the sandbox (its own loopback, not the host's)
SOCKET_NAME = ".tui-agent-proxy.sock"
HEAD_LIMIT = 65536  # bytes of request head read at most
CONNECT_TIMEOUT = 15.0

# Runs inside the sandbox as ``python -I -S -c FORWARDER PORT SOCKET -- COMMAND...``: binds
# 127.0.0.1:PORT (so connections queue before the command starts), forks a forwarder and
# execs the command; the forwarder dies with the sandbox when the command ends.
FORWARDER = r"""
import os, socket, sys, threading
port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(128)
if os.fork():
    server.close()
    os.execvp(argv[0], argv)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve(client):
    upstream = socket.socket(socket.AF_UNIX)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        return
    back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
    back.start()
    pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()
while True:
    client, _ = server.accept()
    threading.Thread(target=serve, args=(client,), daemon=True).start()
"""


_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
WEB_PORTS = (80, 443)
MAX_CONNECTIONS = 256  # open at once through one proxy; more wait for a free one
IDLE_SECONDS = 600.0  # a connection with nothing either way for this long is closed
HEAD_SECONDS = 30.0  # to send the request head


def normal_host(host: str) -> str | None:
    """``host`` lower-case without brackets or a trailing dot, if it is a DNS name or an
    IP literal; else None."""
    name = host.strip("[]").rstrip(".").lower()
    if not name or not name.isascii():
        return None
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    labels = name.split(".")
    return name if len(name) <= 253 and all(_LABEL.fullmatch(x) for x in labels) else None


def allowed(host: str, patterns: tuple[str, ...], port: int = 443) -> bool:
    """Whether ``host:port`` is one of ``patterns`` (``*.x.org``: any host under x.org;
    ports 80 and 443 unless the pattern says ``:PORT`` or ``:*``)."""
    name = normal_host(host)
    if name is None:
        return False
    for pattern in patterns:
        wanted, ports = _split_pattern(pattern)
        if port not in ports and ports != ("*",):
            continue
        if wanted.startswith("*."):
            base = normal_host(wanted[2:])
            if base is not None and name.endswith("." + base):
                return True
        elif normal_host(wanted) == name:
            return True
    return False


def _split_pattern(pattern: str) -> tuple[str, tuple[Any, ...]]:
    """``host`` → (host, web ports); ``host:8080`` → (host, (8080,)); ``host:*`` → any."""
    head, colon, tail = pattern.strip().rpartition(":")
    if colon and "]" not in tail and (tail == "*" or tail.isdigit()):
        if head.count(":") == 0 or head.startswith("["):  # not a bare IPv6 address
            return head, ("*",) if tail == "*" else (int(tail),)
    return pattern.strip(), WEB_PORTS


def proxy_env(port: int = PORT) -> dict[str, str]:
    """The variables that send a sandboxed command's http(s) through the forwarder."""
    url = f"http://127.0.0.1:{port}"
    env = {name: url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}
    env |= {name.lower(): url for name in env}
    env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    return env


def _target(line: str) -> tuple[str, str, int, str] | None:
    """(method, host, port, origin-form path) of a request line, None if unusable."""
    parts = line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    method, target = parts[0].upper(), parts[1]
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not _port_ok(port):
            return None
        return method, host, int(port), ""
    if not target.lower().startswith("http://"):
        return None  # only absolute http URLs: https goes through CONNECT
    rest = target[len("http://") :]
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2]  # no user:password@ in the host
    host, colon, port = authority.rpartition(":") if "]" not in authority[-1:] else ("", "", "")
    if not colon or not port:
        host, port = authority, "80"
    if not _port_ok(port):
        return None
    return method, host, int(port), slash + path if slash else "/"


def _port_ok(port: str) -> bool:
    return port.isascii() and port.isdigit() and 0 < int(port) < 65536


def _answer(client: socket.socket, status: str, text: str) -> None:
    body = text.encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        client.sendall(head.encode() + body)


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Both ways until both ends are done; an error or ``IDLE_SECONDS`` of silence on
    either end closes both (a client gone while the server stays silent is not kept)."""

    def pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:  # a reset, or idle too long: end both ways
            for end in (src, dst):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
            return
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    a.settimeout(IDLE_SECONDS)
    b.settimeout(IDLE_SECONDS)
    back = threading.Thread(target=pipe, args=(b, a), daemon=True)
    back.start()
    pipe(a, b)
    back.join()


class HostProxy:
    """A proxy for ``hosts``: ``start()`` listens on ``path`` (in a folder of its own),
    ``close()`` stops it and removes the folder. At most ``MAX_CONNECTIONS`` at once (more
    wait); allowed and refused requests are logged."""

    def __init__(self, hosts: tuple[str, ...]) -> None:
        self.hosts = hosts
        self.path = Path(tempfile.mkdtemp(prefix="tui-agent-proxy-")) / "proxy.sock"
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._server is not None and self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(self.path))
        server.listen(128)
        self._server = server
        self._thread = threading.Thread(target=self._accept, args=(server,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop listening and end every connection still open."""
        server, self._server = self._server, None
        if server is not None:
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)
            server.close()
        with self._lock:
            still = list(self._open)
        for conn in still:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        shutil.rmtree(self.path.parent, ignore_errors=True)

    def _accept(self, server: socket.socket) -> None:
        while self._server is server:
            self._slots.acquire()
            try:
                client, _ = server.accept()
            except OSError as exc:
                self._slots.release()
                if self._server is not server:
                    return  # closed
                log.warning("sandbox proxy: accept failed: %s", exc)
                threading.Event().wait(0.1)  # out of file descriptors: wait, go on
                continue
            try:
                threading.Thread(target=self._serve, args=(client,), daemon=True).start()
            except RuntimeError:  # no thread to be had: refuse this one
                client.close()
                self._slots.release()

    def _serve(self, client: socket.socket) -> None:
        with self._lock:
            self._open.add(client)
        try:
            self._handle(client)
        except Exception:
            log.warning("sandbox proxy: a connection failed", exc_info=True)
        finally:
            with self._lock:
                self._open.discard(client)
            client.close()
            self._slots.release()

    def _handle(self, client: socket.socket) -> None:
        client.settimeout(HEAD_SECONDS)
        head = b""
        while b"\r\n\r\n" not in head and len(head) < HEAD_LIMIT:
            try:
                data = client.recv(65536)
            except OSError:
                return
            if not data:
                return
            head += data
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        target = _target(lines[0])
        if target is None:
            _answer(client, "400 Bad Request", "tui-agent sandbox: not a proxy request\n")
            return
        method, host, port, path = target
        name = normal_host(host)
        if name is None or not allowed(name, self.hosts, port):
            log.info("sandbox proxy refused %s %r:%d", method, host, port)
            _answer(
                client,
                "403 Forbidden",
                f"tui-agent sandbox: {host!r} port {port} is not an allowed host "
                f"([sandbox] network allows {', '.join(self.hosts)})\n",
            )
            return
        try:
            upstream = socket.create_connection((name, port), timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            _answer(client, "502 Bad Gateway", f"tui-agent sandbox: {name}:{port}: {exc}\n")
            return
        log.info("sandbox proxy allowed %s %s:%d", method, name, port)
        with self._lock:
            self._open.add(upstream)
        try:
            with upstream:
                if method == "CONNECT":
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    if rest:
                        upstream.sendall(rest)
                else:
                    upstream.sendall(_forwarded(lines, method, path, name, port) + rest)
                _relay(client, upstream)
        except OSError:
            return
        finally:
            with self._lock:
                self._open.discard(upstream)


def _forwarded(lines: list[str], method: str, path: str, host: str, port: int) -> bytes:
    """A plain http request as the origin server wants it: origin-form, ``Host`` the host
    that was checked, no proxy or keep-alive headers, ``Connection: close``."""
    version = lines[0].split()[2]
    dropped = ("proxy-connection", "proxy-authorization", "connection", "keep-alive", "host")
    headers = [h for h in lines[1:] if h and h.split(":", 1)[0].strip().lower() not in dropped]
    where = f"[{host}]" if ":" in host else host
    where += "" if port == 80 else f":{port}"
    head = [f"{method} {path} {version}", f"Host: {where}", *headers, "Connection: close"]
    return "\r\n".join([*head, "", ""]).encode("latin-1")


_RUNNING: dict[Path, HostProxy] = {}
_LOCK = threading.Lock()


def ensure(key: Path, hosts: tuple[str, ...]) -> HostProxy:
    """The proxy of ``key`` (a sandbox's /tmp folder) for these ``hosts``, started if it
    is not running (or ran with other hosts: after a /reload)."""
    with _LOCK:
        proxy = _RUNNING.get(key)
        if proxy is not None and proxy.hosts == hosts and proxy.running and proxy.path.exists():
            return proxy
        if proxy is not None:
            proxy.close()
        proxy = HostProxy(hosts)
        proxy.start()
        _RUNNING[key] = proxy
        return proxy


def stop(key: Path) -> None:
    """Stop the proxy of ``key`` (a session's /tmp when it closes), if one runs."""
    with _LOCK:
        proxy = _RUNNING.pop(key, None)
    if proxy is not None:
        proxy.close()


INSIDE = f"/tmp/{SOCKET_NAME}"  # where the proxy's socket is bound inside the sandbox


def forwarder_argv(python: str, argv: list[str], port: int = PORT) -> list[str]:
    """``argv`` behind the forwarder, which passes 127.0.0.1:``port`` to ``INSIDE``."""
    return [python, "-I", "-S", "-c", FORWARDER, str(port), INSIDE, "--", *argv]


def interpreter() -> str:
    """The Python that runs the forwarder: the real file behind ``sys.executable`` (a venv
    under /tmp would be hidden by the sandbox's private /tmp; -I -S need no venv)."""
    import sys

    return os.path.realpath(sys.executable)
