"""One running language server: pygls's ``BaseLanguageClient`` (lsprotocol's types, its
JSON-RPC reader) over the server's stdio.

The process is started here rather than by ``client.start_io``: in the project root, in
its own session (a terminal's Ctrl+C is not its), and with its stderr read into a short
tail (pygls leaves the pipe unread, and a chatty server would block on it) that the
reasons quote. ``stop`` asks politely (``shutdown``, ``exit``) for a bounded time and then
kills: pygls's own ``stop`` waits for the process without a bound, and a hung server
would hang the session's close.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..util.processes import let_go
from .problems import Problem
from .settings import ServerSpec

if TYPE_CHECKING:
    from pygls.lsp._base_client import BaseLanguageClient

log = logging.getLogger("tui_agent.lsp")
STDERR_TAIL = 2000
STOP_WAIT = 1.0  # seconds for shutdown, and again for the process to exit after "exit"
_LIVE: set[asyncio.subprocess.Process] = set()  # killed at exit if a close never came


@atexit.register
def _kill_left() -> None:
    for process in list(_LIVE):
        with contextlib.suppress(ProcessLookupError):
            process.kill()


def _load() -> None:
    import lsprotocol.types  # noqa: F401
    import pygls.io_
    import pygls.lsp._base_client  # noqa: F401


def _converter() -> Any:
    """pygls's converter, but the ``initialize`` answer is kept as sent: we use none of
    it, and lsprotocol cannot read every server's (pylsp's notebook selector)."""
    from lsprotocol import types
    from pygls.protocol import default_converter

    converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook(types.InitializeResult, lambda obj, _: obj)
    return converter


class Unavailable(Exception):
    """Why a server gives no diagnostics (missing, exited, no answer)."""


@dataclass
class Document:
    version: int
    text: str


@dataclass
class Published:
    serial: int
    version: int | None
    problems: list[Problem]


class LanguageServer:
    """A server for one root. ``state``: starting, running, failed (never started),
    exited (died later) or stopped; ``error`` says why for the last three."""

    def __init__(self, spec: ServerSpec, root: Path, env: dict[str, str] | None = None) -> None:
        self.spec, self.root = spec, root
        self.env = {**(os.environ if env is None else env), **dict(spec.env)}
        self.state = "starting"
        self.error: str | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.documents: dict[str, Document] = {}
        self.published: dict[str, Published] = {}
        self.lock = asyncio.Lock()
        self.loop = asyncio.get_running_loop()
        self._client: BaseLanguageClient | None = None
        self._serial = 0
        self._signal = asyncio.Event()
        self._stderr = bytearray()
        self._tasks: list[asyncio.Task[Any]] = []

    @property
    def label(self) -> str:
        return f"{self.spec.name} ({self.root})"

    # -- start ----------------------------------------------------------------------------

    async def start(self, timeout: float) -> None:
        """Start the process and initialize; ``Unavailable`` (and state failed) when the
        command is missing, the process exits, or ``initialize`` gets no answer."""
        try:
            await asyncio.to_thread(_load)  # ~0.7 s of imports: not on the app's loop
            await self._start(timeout)
        except Unavailable as exc:
            self.state, self.error = "failed", str(exc)
            await self._kill()
            raise

    async def _start(self, timeout: float) -> None:
        from lsprotocol import types
        from pygls.io_ import run_async
        from pygls.lsp._base_client import BaseLanguageClient

        command = self.spec.command
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                cwd=self.root,
                env=self.env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise Unavailable(f"command not found: {command[0]} (not on the PATH)") from None
        except OSError as exc:
            raise Unavailable(f"{command[0]} could not start: {exc}") from None
        self.process = process
        _LIVE.add(process)
        client = BaseLanguageClient("tui-agent", "1", converter_factory=_converter)
        self._client = client
        client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(
            lambda params: self._on_diagnostics(params)
        )
        client.feature(types.WORKSPACE_CONFIGURATION)(
            lambda params: [self.spec.initialization_options for _ in params.items]
        )
        for method in (
            types.CLIENT_REGISTER_CAPABILITY,
            types.CLIENT_UNREGISTER_CAPABILITY,
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
        ):
            client.feature(method)(lambda params: None)
        assert process.stdin is not None and process.stdout is not None
        client.protocol.set_writer(process.stdin)
        stop = threading.Event()
        client._stop_event = stop
        self._tasks = [
            asyncio.create_task(
                run_async(
                    stop_event=stop, reader=process.stdout, protocol=client.protocol, logger=log
                )
            ),
            asyncio.create_task(self._read_stderr()),
            asyncio.create_task(self._watch()),
        ]
        uri = self.root.as_uri()
        params = types.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri,
            root_path=str(self.root),
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=self.root.name or "/")],
            initialization_options=self.spec.initialization_options,
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    configuration=True, workspace_folders=True
                ),
                text_document=types.TextDocumentClientCapabilities(
                    synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                        version_support=True
                    ),
                ),
            ),
        )
        request = asyncio.ensure_future(client.initialize_async(params))
        exited = asyncio.ensure_future(process.wait())
        done, _ = await asyncio.wait(
            {request, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if request not in done:
            request.cancel()
            if exited in done:
                exited.cancel()
                await asyncio.sleep(0.05)  # the last of stderr
                raise Unavailable(f"exited at once (code {process.returncode}){self._tail()}")
            exited.cancel()
            raise Unavailable(f"did not answer initialize within {timeout:g} s{self._tail()}")
        exited.cancel()
        try:
            request.result()
        except Exception as exc:
            raise Unavailable(f"initialize failed: {exc}{self._tail()}") from None
        client.initialized(types.InitializedParams())
        self.state = "running"

    def _tail(self) -> str:
        text = self._stderr.decode("utf-8", "replace").strip()
        if not text:
            return ""
        lines = text.splitlines()[-3:]
        return ": " + " / ".join(line.strip() for line in lines)[-300:]

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(4096):
            self._stderr += chunk
            del self._stderr[:-STDERR_TAIL]

    async def _watch(self) -> None:
        assert self.process is not None
        code = await self.process.wait()
        _LIVE.discard(self.process)
        if self.state == "running":
            await asyncio.sleep(0.05)
            self.state, self.error = "exited", f"exited (code {code}){self._tail()}"
        self._wake()

    def _on_diagnostics(self, params: Any) -> None:
        self._serial += 1
        problems = [Problem.from_lsp(d) for d in params.diagnostics]
        self.published[params.uri] = Published(self._serial, params.version, problems)
        self._wake()

    def _wake(self) -> None:
        self._signal.set()
        self._signal = asyncio.Event()

    # -- documents ------------------------------------------------------------------------

    def _gone(self) -> Unavailable | None:
        if self.state == "running":
            return None
        return Unavailable(self.error or self.state)

    async def sync(self, path: Path, text: str, language: str, wait: float, settle: float) -> bool:
        """Tell the server ``path`` now holds ``text`` (open, or a whole-text change and a
        save) and wait for its diagnostics of it: True when they came within ``wait``."""
        from lsprotocol import types

        if (gone := self._gone()) is not None:
            raise gone
        assert self._client is not None
        uri = path.as_uri()
        since = self._serial
        document = self.documents.get(uri)
        if document is None:
            version = 1
            self._client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri, language_id=language, version=version, text=text
                    )
                )
            )
        else:
            version = document.version + 1
            identifier = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
            change = types.TextDocumentContentChangeWholeDocument(text=text)
            self._client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=identifier, content_changes=[change]
                )
            )
            self._client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
        self.documents[uri] = Document(version, text)
        return await self._wait(uri, version, since, wait, settle)

    async def _wait(self, uri: str, version: int, since: int, wait: float, settle: float) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        got = False
        while True:
            remaining = deadline - loop.time()
            if got:
                remaining = min(remaining, settle)
            if remaining <= 0:
                return got
            signal = self._signal
            try:
                await asyncio.wait_for(signal.wait(), remaining)
            except TimeoutError:
                return got
            if (gone := self._gone()) is not None:
                raise gone
            published = self.published.get(uri)
            if published is not None and published.serial > since:
                got = published.version is None or published.version >= version

    def problems(self, path: Path) -> list[Problem]:
        published = self.published.get(path.as_uri())
        return list(published.problems) if published is not None else []

    # -- stop -----------------------------------------------------------------------------

    async def stop(self) -> None:
        """Shut the server down (bounded), then kill what is left; state stopped."""
        client, process = self._client, self.process
        if self.state == "running" and client is not None:
            self.state = "stopped"
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.shutdown_async(None), STOP_WAIT)
                client.exit(None)
                if process is not None:
                    await asyncio.wait_for(process.wait(), STOP_WAIT)
        elif self.state == "starting":
            self.state = "stopped"
        await self._kill()
        self._wake()

    async def _kill(self) -> None:
        process = self.process
        if self._client is not None:
            self._client._stop_event.set()
        if process is not None:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 9)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), STOP_WAIT)
            _LIVE.discard(process)
            let_go(process)
        for task in self._tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), STOP_WAIT)
        self._tasks = []
