"""The language servers of a session: started lazily, on the first file one serves, one
per server and project root, kept until ``close``; what an edit introduced.

A server that cannot serve (missing command, exit, no answer) never fails an edit: the
check says why diagnostics are missing the first time, and the later checks of files it
would serve say nothing more until ``restart`` (``/lsp restart``) or a reload.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .client import LanguageServer, Unavailable
from .problems import Problem, introduced, listing, plural, summary, wanted
from .settings import ServerSpec, Settings, find_root, language_id


@dataclass
class Check:
    """What diagnostics say about one change: ``text`` for the tool result (empty when
    there is nothing to say), ``new`` (the problems introduced) when the server answered,
    ``unavailable`` (why not) when it did not."""

    text: str = ""
    new: list[Problem] | None = None
    unavailable: str | None = None
    server: str = ""

    @property
    def count(self) -> int | None:
        return None if self.new is None else len(self.new)


@dataclass
class Servers:
    settings: Settings
    project: Path
    env: dict[str, str] | None = None  # what servers get (None: this process's environment)
    limit: int = 8  # servers at once: a model editing files in 50 roots starts no 50 servers
    running: dict[tuple[str, Path], LanguageServer] = field(default_factory=dict)
    said: set[tuple[str, Path]] = field(default_factory=set)  # unavailable, said once
    _starting: dict[tuple[str, Path], asyncio.Task[LanguageServer]] = field(default_factory=dict)
    closed: bool = False

    def spec_for(self, path: Path) -> ServerSpec | None:
        if not self.settings.diagnostics.on:
            return None
        return self.settings.server_for(path)

    async def server_for(self, spec: ServerSpec, path: Path) -> LanguageServer:
        """The running server for ``path`` (started now if need be); ``Unavailable``."""
        key = (spec.name, find_root(path, spec.root_markers, self.project))
        server = self.running.get(key)
        loop = asyncio.get_running_loop()
        if server is not None and server.loop is not loop:  # an earlier event loop's
            await _forget(server)
            self.running.pop(key, None)
            self._starting.pop(key, None)
            server = None
        if server is not None and server.state in ("failed", "exited"):
            raise Unavailable(server.error or server.state)
        if server is None:
            if len(self.running) >= self.limit:
                raise Unavailable(
                    f"{self.limit} language servers run already (one per server and root); "
                    "/lsp restart stops them"
                )
            server = LanguageServer(spec, key[1], self.env)
            self.running[key] = server
            timeout = self.settings.diagnostics.startup_timeout
            starting = asyncio.ensure_future(_started(server, timeout))
            starting.add_done_callback(_retrieved)  # a caller cancelled (Esc): no warning
            self._starting[key] = starting
        task = self._starting.get(key)
        if task is not None:
            server = await asyncio.shield(task)
            self._starting.pop(key, None)
        return server

    async def check(self, path: Path, old_text: str | None, new_text: str) -> Check:
        """Diagnostics after ``path`` changed from ``old_text`` (None: a new file) to
        ``new_text``; an empty ``Check`` when no server serves the file."""
        spec = self.spec_for(path)
        if spec is None or self.closed:
            return Check()
        diagnostics = self.settings.diagnostics
        key = (spec.name, find_root(path, spec.root_markers, self.project))
        language = language_id(path)
        try:
            server = await self.server_for(spec, path)
            async with server.lock:
                uri = path.as_uri()
                document = server.documents.get(uri)
                if old_text is None:
                    before: list[Problem] = []
                    old_text = ""
                elif document is None or document.text != old_text:
                    await server.sync(
                        path, old_text, language, diagnostics.wait, diagnostics.settle
                    )
                    before = server.problems(path)
                else:
                    before = server.problems(path)
                got = await server.sync(
                    path, new_text, language, diagnostics.wait, diagnostics.settle
                )
                if not got:
                    wait = f"{diagnostics.wait:g}"
                    return Check(
                        f"unavailable: {spec.name} sent no diagnostics within {wait} s",
                        unavailable=f"no diagnostics within {wait} s",
                        server=spec.name,
                    )
                after = server.problems(path)
        except Unavailable as exc:
            if key in self.said:
                return Check(unavailable=str(exc), server=spec.name)
            self.said.add(key)
            return Check(
                f"unavailable: {spec.name} {exc} (the edit itself is done; /lsp restart "
                "tries again)",
                unavailable=str(exc),
                server=spec.name,
            )
        new = wanted(introduced(before, old_text, after, new_text), diagnostics.warnings)
        if not new:
            return Check("no new problems", new=[], server=spec.name)
        text = f"{summary(new)} ({spec.name}):\n{listing(new, diagnostics.max)}"
        return Check(text, new=new, server=spec.name)

    async def current(self, path: Path | None, read: bool = True) -> str:
        """The problems a server sees now in ``path`` (opened if need be), or in every
        open file; errors and warnings, whatever ``warnings`` says."""
        limit = self.settings.diagnostics.max
        if path is not None:
            spec = self.spec_for(path)
            if spec is None:
                return f"no language server serves {path.name} (see /lsp)"
            try:
                server = await self.server_for(spec, path)
                async with server.lock:
                    text = path.read_text("utf-8") if read else ""
                    document = server.documents.get(path.as_uri())
                    if document is None or document.text != text:
                        d = self.settings.diagnostics
                        got = await server.sync(path, text, language_id(path), d.wait, d.settle)
                        if not got:
                            return (
                                f"unavailable: {spec.name} sent no diagnostics within {d.wait:g} s"
                            )
            except Unavailable as exc:
                return f"unavailable: {spec.name} {exc}"
            found = wanted(server.problems(path), True)
            if not found:
                return "no problems"
            return f"{summary(found, new=False)} ({spec.name}):\n{listing(found, limit)}"
        parts = []
        for server in self.running.values():
            for uri in server.documents:
                found = wanted(
                    server.published[uri].problems if uri in server.published else [], True
                )
                if found:
                    name = uri.removeprefix("file://")
                    parts.append(f"{name}: {summary(found, new=False)}\n{listing(found, limit)}")
        if not parts:
            opened = sum(len(s.documents) for s in self.running.values())
            return (
                f"no problems in the {plural(opened, 'open file')}"
                if opened
                else "no file is open in a language server yet; give a path"
            )
        return "\n\n".join(parts)

    def rows(self, started: bool = False) -> list[tuple[str, str, str, str]]:
        """(server, root, state, details) for every server started, then (unless
        ``started``) the ones that would start for their files."""
        rows = []
        names = set()
        for (name, root), server in self.running.items():
            names.add(name)
            details = server.error or f"{plural(len(server.documents), 'file')} open"
            rows.append((name, str(root), server.state, details))
        for spec in [] if started else self.settings.servers:
            if spec.name in names:
                continue
            if not spec.enabled:
                state = "disabled"
            elif not spec.available():
                continue  # a built-in whose command is not on the PATH
            else:
                state = "not started"
            rows.append((spec.name, "", state, " ".join(spec.extensions)))
        return rows

    def closing(self) -> Awaitable[None] | None:
        """For ``session.on("close")``: nothing to await when no server ever started, so
        a reload stays synchronous (it runs to the end at once)."""
        if self.running or self._starting:
            return self.close()
        self.closed = True
        return None

    async def close(self) -> None:
        """Stop every server (a reload's close too): no process is left."""
        self.closed = True
        for task in list(self._starting.values()):
            task.cancel()
        servers = list(self.running.values())
        self.running.clear()
        self._starting.clear()
        await asyncio.gather(*(_forget(s) for s in servers), return_exceptions=True)

    async def restart(self) -> None:
        await self.close()
        self.closed = False
        self.said.clear()


def _retrieved(task: asyncio.Task[LanguageServer]) -> None:
    if not task.cancelled():
        task.exception()


async def _started(server: LanguageServer, timeout: float) -> LanguageServer:
    await server.start(timeout)
    return server


async def _forget(server: LanguageServer) -> None:
    with contextlib.suppress(Exception):
        if server.loop is asyncio.get_running_loop():
            await server.stop()
        elif server.process is not None and server.process.returncode is None:
            server.process.kill()


@dataclass
class Holder:
    """What a session keeps across loads (``extensions.kept("lsp", Holder)``): the servers
    of the current load, for the app's tools panel."""

    servers: Servers | None = None


def servers_of(session: Any) -> Servers | None:
    """The language servers of ``session``'s current load (None before the plugin ran)."""
    holder: Holder = session.extensions.kept("lsp", Holder)
    return holder.servers
