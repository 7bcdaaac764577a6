"""Which language server serves a file: the built-in table, the user's ``[lsp.NAME]``
tables over it, and the ``[diagnostics]`` settings.

A file is served by the first enabled server whose ``extensions`` hold its suffix: the
user's tables first (in the config's order; a user's server is used even when its
command is missing, so the result can say so), then the built-in ones whose command is
on the PATH, in the table's order (for Python: basedpyright, pyright, pylsp).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

LANGUAGE_IDS = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".jsx": "javascriptreact",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
}


@dataclass(frozen=True)
class ServerSpec:
    """One language server: how to run it and which files it serves."""

    name: str
    command: tuple[str, ...]
    extensions: tuple[str, ...]
    root_markers: tuple[str, ...] = ()
    initialization_options: Any = None
    enabled: bool = True
    configured: bool = False  # from the user's config: used (and reported) even if missing
    env: tuple[tuple[str, str], ...] = ()  # set for the server (built-in: safer defaults)

    def serves(self, path: Path) -> bool:
        return path.suffix.lower() in self.extensions

    def available(self) -> bool:
        """A built-in server is used only when its command is on the PATH."""
        return self.configured or shutil.which(self.command[0]) is not None


PY_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", ".git")
PY = (".py", ".pyi")
JS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs")
C = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh")
BUILTINS: tuple[ServerSpec, ...] = (
    ServerSpec("basedpyright", ("basedpyright-langserver", "--stdio"), PY, PY_MARKERS),
    ServerSpec("pyright", ("pyright-langserver", "--stdio"), PY, PY_MARKERS),
    ServerSpec("pylsp", ("pylsp",), PY, PY_MARKERS),
    ServerSpec(
        "typescript",
        ("typescript-language-server", "--stdio"),
        JS,
        ("tsconfig.json", "jsconfig.json", "package.json", ".git"),
    ),
    # never a toolchain that a go.mod asks for (GOTOOLCHAIN=auto downloads and runs it)
    ServerSpec(
        "gopls",
        ("gopls",),
        (".go",),
        ("go.work", "go.mod", ".git"),
        env=(("GOTOOLCHAIN", "local"),),
    ),
    # build scripts, proc macros and cargo check run the project's code outside the sandbox:
    # off unless the user's [lsp.rust-analyzer] initialization_options say otherwise
    ServerSpec(
        "rust-analyzer",
        ("rust-analyzer",),
        (".rs",),
        ("Cargo.toml", ".git"),
        initialization_options={
            "cargo": {"buildScripts": {"enable": False}},
            "procMacro": {"enable": False},
            "checkOnSave": False,
        },
    ),
    ServerSpec(
        "clangd", ("clangd",), C, ("compile_commands.json", "compile_flags.txt", ".clangd", ".git")
    ),
)


@dataclass(frozen=True)
class DiagnosticSettings:
    """``[diagnostics]``: ``on``, ``wait`` (seconds for a server's diagnostics after a
    change), ``warnings`` (report new warnings too), ``max`` (problems listed in a
    result), ``startup_timeout`` (seconds for a server to answer ``initialize``)."""

    on: bool = True
    wait: float = 2.0
    warnings: bool = False
    max: int = 10
    startup_timeout: float = 10.0
    settle: float = 0.1  # after a server's first publish, how long a second may follow


@dataclass
class Settings:
    servers: list[ServerSpec] = field(default_factory=list)
    diagnostics: DiagnosticSettings = field(default_factory=DiagnosticSettings)
    problems: list[str] = field(default_factory=list)

    def server_for(self, path: Path) -> ServerSpec | None:
        for spec in self.servers:
            if spec.enabled and spec.serves(path) and spec.available():
                return spec
        return None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def _seconds(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


SERVER_KEYS = ("command", "extensions", "root_markers", "initialization_options", "enabled")


def _server(name: str, table: Mapping[str, Any], base: ServerSpec | None) -> ServerSpec | str:
    where = f"lsp.{name}"
    for key in table:
        if key not in SERVER_KEYS:
            return f"{where}.{key} is not a setting ({', '.join(SERVER_KEYS)})"
    command = table.get("command")
    if command is not None and (not _strings(command) or not command):
        return f'{where}.command must be a list of strings, e.g. ["pylsp"]'
    extensions = table.get("extensions")
    if extensions is not None and (
        not _strings(extensions) or not all(e.startswith(".") for e in extensions)
    ):
        return f'{where}.extensions must be a list of suffixes with the dot, e.g. [".py"]'
    markers = table.get("root_markers")
    if markers is not None and not _strings(markers):
        return f'{where}.root_markers must be a list of file names, e.g. ["pyproject.toml"]'
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        return f"{where}.enabled must be true or false"
    if base is None:
        if command is None or extensions is None:
            return f"{where} needs command and extensions (or enabled = false)"
        base = ServerSpec(name, tuple(command), ())
    return replace(
        base,
        command=tuple(command) if command is not None else base.command,
        extensions=tuple(e.lower() for e in extensions) if extensions else base.extensions,
        root_markers=tuple(markers) if markers is not None else base.root_markers,
        initialization_options=table.get("initialization_options", base.initialization_options),
        enabled=enabled,
        configured=command is not None or base.configured,
    )


def _diagnostics(table: Any, problems: list[str]) -> DiagnosticSettings:
    found = DiagnosticSettings()
    if table is None:
        return found
    if not isinstance(table, Mapping):
        problems.append("diagnostics must be a table")
        return found
    checks: dict[str, tuple[Any, str]] = {
        "on": (lambda v: isinstance(v, bool), "true or false"),
        "warnings": (lambda v: isinstance(v, bool), "true or false"),
        "wait": (_seconds, "a number of seconds above 0"),
        "startup_timeout": (_seconds, "a number of seconds above 0"),
        "max": (
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
            "a whole number, 1 or more",
        ),
    }
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in checks:
            problems.append(f"diagnostics.{key} is not a setting ({', '.join(checks)})")
        elif not checks[key][0](value):
            problems.append(f"diagnostics.{key} must be {checks[key][1]}, not {value!r}")
        else:
            values[key] = value
    return replace(found, **values)


def read_settings(config: Mapping[str, Any]) -> Settings:
    """The servers and settings of a config (its ``lsp`` and ``diagnostics`` tables); a
    table with a mistake is left out and said in ``problems``."""
    settings = Settings()
    settings.diagnostics = _diagnostics(config.get("diagnostics"), settings.problems)
    builtins = {spec.name: spec for spec in BUILTINS}
    tables = config.get("lsp", {})
    if not isinstance(tables, Mapping):
        settings.problems.append("lsp must be a table of servers ([lsp.NAME])")
        tables = {}
    users: list[ServerSpec] = []
    for name, table in tables.items():
        if not isinstance(table, Mapping):
            settings.problems.append(f"lsp.{name} must be a table (command, extensions, …)")
            continue
        spec = _server(str(name), table, builtins.get(str(name)))
        if isinstance(spec, str):
            settings.problems.append(spec)
            continue
        if spec.name in builtins:
            builtins[spec.name] = spec
            if not spec.configured:
                continue  # a built-in turned off or given other extensions keeps its place
        users.append(spec)
    settings.servers = users + [s for s in builtins.values() if not s.configured]
    return settings


def find_root(path: Path, markers: tuple[str, ...], project: Path) -> Path:
    """The nearest folder from ``path`` up to ``project`` holding one of ``markers``;
    ``project`` when none does (or the file's folder, for a file outside it)."""
    folder = path.parent
    inside = folder == project or project in folder.parents
    while True:
        if any((folder / marker).exists() for marker in markers):
            return folder
        if folder == project or folder.parent == folder or not inside:
            break
        folder = folder.parent
    return project if inside else path.parent


def language_id(path: Path) -> str:
    return LANGUAGE_IDS.get(path.suffix.lower(), path.suffix.lower().lstrip("."))
